//! CUB peer of benches/gpu_segmented_sort.rs: cub::DeviceSegmentedSort and DeviceSegmentedRadixSort on the same segmentations.
// Build (on the device): nvcc -O3 -std=c++17 -arch=sm_90 benches/peers/cub_segmented_sort.cu -o cub_segmented_sort
// Run: ./cub_segmented_sort RESULTS_FILE   (writes "kind log2n ms" lines for the twophase bench)
//
// Rows, at log2n = 20, 24 and 27 (n random u32 keys) for each segmentation <dist> of
// SEGMENT_DISTRIBUTIONS (all32, uniform200, uniform2000, powerlaw, one):
//   cub-segmented-stable-seg-<dist>            DeviceSegmentedSort::StableSortKeys
//   cub-segmented-radix-seg-<dist>             DeviceSegmentedRadixSort::SortKeys
//   cub-segmented-stable-segpairs-uniform2000  DeviceSegmentedSort::StableSortPairs, u32 values
// and with n random u64 keys, both sorts of uniform2000 and of one segment of 7/8 of the keys
// among those (`seg64-uniform2000`, `seg64-long7/8`; TWOPHASE_BENCH_ROW=u64).
// (impl "cub-segmented-stable" or "cub-segmented-radix", kind "seg-<dist>" or "segpairs-<dist>",
// joined by '-' as in cub_mergesort.cu.) Segments are given as int64 offsets: begin d_offsets,
// end d_offsets + 1.
//
// The segmentations are those of benches/common/segments.rs (segment_starts), bit for bit: the
// same splitmix64 draws, seeded 0x5E655E65 + the distribution's index. Every sort reads one buffer
// and writes another, so, as the radix sort of cub_mergesort.cu, it is timed directly (no
// restore). Each is first checked, into poisoned outputs, against std::stable_sort of every
// segment (pairs: keys and values, the values being input positions, so stability is checked).
// Runs slower than SLOW_MS (one huge segment is sorted by one thread block) get fewer repetitions.
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "peer_common.cuh"

static const int WARMUP = 5;    // untimed runs first, as in the twophase bench
static const int REPS = 41;     // timed runs; the median is reported
static const double SLOW_MS = 50;  // a first run slower than this gets SLOW_WARMUP and SLOW_REPS
static const int SLOW_WARMUP = 2;
static const int SLOW_REPS = 15;
static const size_t COPY_BYTES = size_t(1) << 30;
static const int SIZES[3] = {20, 24, 27};
static const uint32_t POISON = 0xDEADBEEF;  // as POISON_U32 of the twophase benches

static FILE* results = nullptr;

static void row(const char* impl, const char* kind, int log2n, size_t segments, double ms) {
  double n = double(size_t(1) << log2n);
  std::printf("| %s | %s | 2^%d | %zu | %.4f | %.2f |\n", impl, kind, log2n, segments, ms, n / (ms * 1e-3) / 1e9);
  std::fflush(stdout);
  if (results) std::fprintf(results, "%s-%s %d %.6f\n", impl, kind, log2n, ms);
}

template <typename K>
static std::vector<K> random_keys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (auto& x : v) x = K(rng());
  return v;
}

// ---- The segmentations: the generator of benches/common/segments.rs ----

static const int NUM_DISTRIBUTIONS = 5;
static const char* const SEGMENT_DISTRIBUTIONS[NUM_DISTRIBUTIONS] = {"all32", "uniform200", "uniform2000",
                                                                     "powerlaw", "one"};
static const int PAIRS_DISTRIBUTION = 2;  // uniform2000: the only one with a pairs row, and the u64 rows' base
static const uint64_t SEGMENT_SEED = 0x5E655E65;
static const uint64_t POWERLAW_CAP = uint64_t(1) << 20;
static const double POWERLAW_ALPHA = 1.2;

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in lo..=hi (by a modulo).
  uint64_t uniform(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  // Uniform in (0, 1]: the top 53 bits plus one, times 2^-53.
  double unit() { return double((next() >> 11) + 1) * (1.0 / double(uint64_t(1) << 53)); }
};

// The offsets of distribution `dist` (an index into SEGMENT_DISTRIBUTIONS) over n keys: lengths
// drawn in order until they cover n, the last segment cut to end at n; the segment starts
// (starts[0] = 0), then n (num_segments + 1 offsets).
static std::vector<int64_t> segment_offsets(int dist, size_t n) {
  SplitMix64 rng{SEGMENT_SEED + uint64_t(dist)};
  std::vector<int64_t> offsets;
  size_t start = 0;
  while (start < n) {
    offsets.push_back(int64_t(start));
    uint64_t len;
    switch (dist) {
      case 0: len = 32; break;
      case 1: len = rng.uniform(1, 200); break;
      case 2: len = rng.uniform(1, 2000); break;
      case 3: {
        double u = rng.unit();
        len = std::min(POWERLAW_CAP, uint64_t(std::floor(std::pow(u, -1.0 / POWERLAW_ALPHA))));
        break;
      }
      default: len = n; break;
    }
    start += size_t(std::min<uint64_t>(len, n - start));
  }
  offsets.push_back(int64_t(n));
  return offsets;
}

// ---- The benchmark ----

__global__ void fill_kernel(uint32_t* p, size_t n, uint32_t v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}

// Fills the `n` keys at `p` with POISON words.
template <typename K>
static void poison(K* p, size_t n) {
  static_assert(sizeof(K) % sizeof(uint32_t) == 0, "keys of whole u32 words");
  fill_kernel<<<1024, 256>>>(reinterpret_cast<uint32_t*>(p), n * (sizeof(K) / sizeof(uint32_t)), POISON);
  CHECK(cudaGetLastError());
}

// Downloads `n` values of K from `d` and says whether they equal `expected`, naming the first
// difference.
template <typename K>
static bool same(const K* d, const std::vector<K>& expected, const char* what) {
  size_t n = expected.size();
  std::vector<K> got(n);
  CHECK(cudaMemcpy(got.data(), d, n * sizeof(K), cudaMemcpyDeviceToHost));
  if (std::memcmp(got.data(), expected.data(), n * sizeof(K)) == 0) return true;
  size_t i = 0;
  while (got[i] == expected[i]) ++i;
  std::fprintf(stderr, "%s: position %zu holds %llu, std::stable_sort gives %llu\n", what, i,
               (unsigned long long)got[i], (unsigned long long)expected[i]);
  return false;
}

// Times sort(): one run first, whose time picks the repetitions, then the median of the timed runs.
template <typename F>
static double time_sort(F sort) {
  double first = time_events(0, 1, [&](int) { sort(); });
  bool slow = first > SLOW_MS;
  return time_events(slow ? SLOW_WARMUP : WARMUP, slow ? SLOW_REPS : REPS, [&](int) { sort(); });
}

// The sizes (log2) of the rows: TWOPHASE_BENCH_LOG2N alone where set (any size), else SIZES.
static std::vector<int> sizes() {
  const char* size = std::getenv("TWOPHASE_BENCH_LOG2N");
  if (size != nullptr) return {std::atoi(size)};
  return std::vector<int>(SIZES, SIZES + 3);
}

// Whether a row runs: TWOPHASE_BENCH_ROW (a segmentation's name, or `u64`) picks one, as in
// benches/gpu_segmented_sort.rs (its size by sizes()); unset, every row runs.
static bool selected(const char* name) {
  const char* row = std::getenv("TWOPHASE_BENCH_ROW");
  return row == nullptr || std::string(row) == name;
}

// The sorts of `n` random keys of type K over `offsets` (rows "<key_kind>-<dist>"): checked
// into poisoned outputs against std::stable_sort of each segment, then timed. With `pairs`, also
// StableSortPairs with u32 values, the input positions (row "segpairs-<dist>"), so that the check
// covers stability.
template <typename K>
static void sort_rows(const char* key_kind, const char* dist, const std::vector<int64_t>& offsets, int log2n,
                      bool pairs, uint64_t seed) {
  const size_t n = size_t(1) << log2n;
  const size_t segments = offsets.size() - 1;
  const std::string kind = std::string(key_kind) + "-" + dist, pairs_kind = std::string("segpairs-") + dist;
  std::vector<K> keys = random_keys<K>(n, seed);
  // The expected output: std::stable_sort of each segment of (key, input position) by key.
  std::vector<std::pair<K, uint32_t>> tagged(n);
  for (size_t i = 0; i < n; ++i) tagged[i] = {keys[i], uint32_t(i)};
  const auto by_key = [](const std::pair<K, uint32_t>& a, const std::pair<K, uint32_t>& b) { return a.first < b.first; };
  for (size_t s = 0; s < segments; ++s) {
    std::stable_sort(tagged.begin() + offsets[s], tagged.begin() + offsets[s + 1], by_key);
  }
  std::vector<K> expected_keys(n);
  std::vector<uint32_t> expected_values(n);
  for (size_t i = 0; i < n; ++i) {
    expected_keys[i] = tagged[i].first;
    expected_values[i] = tagged[i].second;
  }
  std::vector<std::pair<K, uint32_t>>().swap(tagged);

  K *dk, *dk_out;
  uint32_t *dv = nullptr, *dv_out = nullptr;
  int64_t* d_offsets;
  CHECK(cudaMalloc(&dk, n * sizeof(K)));
  CHECK(cudaMalloc(&dk_out, n * sizeof(K)));
  CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(int64_t)));
  CHECK(cudaMemcpy(dk, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  if (pairs) {
    std::vector<uint32_t> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = uint32_t(i);
    CHECK(cudaMalloc(&dv, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&dv_out, n * sizeof(uint32_t)));
    CHECK(cudaMemcpy(dv, values.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  }

  // DeviceSegmentedSort takes int64 counts; DeviceSegmentedRadixSort takes int counts.
  const int64_t num_items = int64_t(n), num_segments = int64_t(segments);
  size_t stable_bytes = 0, radix_bytes = 0, pairs_bytes = 0;
  CHECK(cub::DeviceSegmentedSort::StableSortKeys(nullptr, stable_bytes, dk, dk_out, num_items, num_segments, d_offsets,
                                                  d_offsets + 1));
  CHECK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, radix_bytes, dk, dk_out, int(num_items), int(num_segments),
                                                d_offsets, d_offsets + 1));
  if (pairs) {
    CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, pairs_bytes, dk, dk_out, dv, dv_out, num_items,
                                                     num_segments, d_offsets, d_offsets + 1));
  }
  void *stable_temp, *radix_temp, *pairs_temp = nullptr;
  CHECK(cudaMalloc(&stable_temp, stable_bytes));
  CHECK(cudaMalloc(&radix_temp, radix_bytes));
  if (pairs) CHECK(cudaMalloc(&pairs_temp, pairs_bytes));
  auto stable_run = [&]() {
    CHECK(cub::DeviceSegmentedSort::StableSortKeys(stable_temp, stable_bytes, dk, dk_out, num_items, num_segments,
                                                    d_offsets, d_offsets + 1));
  };
  auto radix_run = [&]() {
    CHECK(cub::DeviceSegmentedRadixSort::SortKeys(radix_temp, radix_bytes, dk, dk_out, int(num_items),
                                                  int(num_segments), d_offsets, d_offsets + 1));
  };
  auto pairs_run = [&]() {
    CHECK(cub::DeviceSegmentedSort::StableSortPairs(pairs_temp, pairs_bytes, dk, dk_out, dv, dv_out, num_items,
                                                     num_segments, d_offsets, d_offsets + 1));
  };

  // Correctness first: each sort into poisoned outputs, against std::stable_sort.
  bool ok = true;
  std::string what = "cub-segmented-stable " + kind + " 2^" + std::to_string(log2n);
  poison(dk_out, n);
  stable_run();
  ok &= same(dk_out, expected_keys, what.c_str());
  what = "cub-segmented-radix " + kind + " 2^" + std::to_string(log2n);
  poison(dk_out, n);
  radix_run();
  ok &= same(dk_out, expected_keys, what.c_str());
  if (pairs) {
    what = "cub-segmented-stable " + pairs_kind + " 2^" + std::to_string(log2n);
    poison(dk_out, n);
    poison(dv_out, n);
    pairs_run();
    ok &= same(dk_out, expected_keys, (what + " keys").c_str());
    ok &= same(dv_out, expected_values, (what + " values").c_str());
  }
  if (!ok) {
    std::fprintf(stderr, "CUB segmented sort %s 2^%d: wrong result\n", kind.c_str(), log2n);
    std::exit(1);
  }

  row("cub-segmented-stable", kind.c_str(), log2n, segments, time_sort(stable_run));
  row("cub-segmented-radix", kind.c_str(), log2n, segments, time_sort(radix_run));
  if (pairs) row("cub-segmented-stable", pairs_kind.c_str(), log2n, segments, time_sort(pairs_run));

  CHECK(cudaFree(dk)); CHECK(cudaFree(dk_out)); CHECK(cudaFree(d_offsets));
  CHECK(cudaFree(stable_temp)); CHECK(cudaFree(radix_temp));
  if (pairs) {
    CHECK(cudaFree(dv)); CHECK(cudaFree(dv_out)); CHECK(cudaFree(pairs_temp));
  }
}

// Every u32 sort of segmentation `dist` at each of sizes().
static void bench(int dist) {
  const char* name = SEGMENT_DISTRIBUTIONS[dist];
  for (int log2n : sizes()) {
    if (!selected(name)) continue;
    const size_t n = size_t(1) << log2n;
    const uint64_t seed = 1000 * log2n + 10 * dist + std::random_device{}();
    sort_rows<uint32_t>("seg", name, segment_offsets(dist, n), log2n, dist == PAIRS_DISTRIBUTION, seed);
  }
}

// The offsets of `uniform` (num_segments + 1 of them, over n keys) with one segment
// [from, from + len) put in: benches/gpu_segmented_sort.rs's with_long.
static std::vector<int64_t> with_long(const std::vector<int64_t>& uniform, size_t n, size_t from, size_t len) {
  const int64_t begin = int64_t(from), end = int64_t(from + len), count = int64_t(n);
  std::vector<int64_t> offsets;
  for (int64_t s : uniform) {
    if (s < begin) offsets.push_back(s);
  }
  offsets.push_back(begin);
  if (end < count) {
    offsets.push_back(end);
    for (int64_t s : uniform) {
      if (s > end && s < count) offsets.push_back(s);
    }
  }
  offsets.push_back(count);
  return offsets;
}

// The u64 rows at each of sizes() (TWOPHASE_BENCH_ROW=u64): uniform 1..2000, and one segment of
// 7/8 of the keys among those (from n / 16), as the twophase bench's `seg64` rows.
static void bench_u64() {
  for (int log2n : sizes()) {
    if (!selected("u64")) continue;
    const size_t n = size_t(1) << log2n;
    const std::vector<int64_t> uniform = segment_offsets(PAIRS_DISTRIBUTION, n);
    const uint64_t seed = 1000 * log2n + 7 + std::random_device{}();
    sort_rows<uint64_t>("seg64", "uniform2000", uniform, log2n, false, seed);
    sort_rows<uint64_t>("seg64", "long7/8", with_long(uniform, n, n / 16, n / 8 * 7), log2n, false, seed + 1);
  }
}

int main(int argc, char** argv) {
  if (argc > 1) results = std::fopen(argv[1], "w");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const double copy_gbs = 2.0 * COPY_BYTES / (copy_ms(COPY_BYTES, WARMUP, REPS) * 1e-3) / 1e9;
  std::printf("CUB %d on %s: copy rate %.0f GB/s\n", CUB_VERSION, prop.name, copy_gbs);
  std::printf("| impl | kind | n | segments | ms | Gkeys/s |\n|---|---|---|---|---|---|\n");
  for (int dist = 0; dist < NUM_DISTRIBUTIONS; ++dist) bench(dist);
  bench_u64();
  if (results) std::fclose(results);
  return 0;
}
