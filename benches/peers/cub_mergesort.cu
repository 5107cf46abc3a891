//! CUB peer of benches/gpu_mergesort.rs: cub::DeviceMergeSort and DeviceRadixSort timed the same way.
// Build (on the device): nvcc -O3 -std=c++17 -arch=sm_90 benches/peers/cub_mergesort.cu -o cub_mergesort
// Run: ./cub_mergesort RESULTS_FILE   (writes "kind log2n ms" lines for the twophase bench)
//
// Merge sort sorts in place, so every timed run first restores the unsorted keys with a
// device-to-device copy; the copy's own median time is subtracted (the twophase bench does the
// same). Radix sort reads one buffer and writes another, so it is timed directly.
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "peer_common.cuh"

static const int WARMUP = 5;    // untimed runs first, as in the twophase bench
static const int REPS = 41;     // timed runs; the median is reported
static const size_t COPY_BYTES = size_t(1) << 30;
// The default sizes (log2); TWOPHASE_BENCH_SIZES sets others (bench_sizes).
static const std::vector<int> SIZES = {20, 24, 27};

static FILE* results = nullptr;

struct Less {
  template <typename T>
  __device__ __host__ bool operator()(const T& a, const T& b) const { return a < b; }
};

static void row(const char* impl, const char* kind, int log2n, double ms) {
  double n = double(size_t(1) << log2n);
  std::printf("| %s | %s | 2^%d | %.4f | %.2f |\n", impl, kind, log2n, ms, n / (ms * 1e-3) / 1e9);
  if (results) std::fprintf(results, "%s-%s %d %.6f\n", impl, kind, log2n, ms);
}

template <typename K>
static std::vector<K> random_keys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (auto& x : v) x = K(rng());
  return v;
}

// Keys (and, where PAIRS, values of type V: each key's input position) sorted by merge sort and
// radix sort.
template <typename K, bool PAIRS, typename V = uint32_t>
static void bench(const char* kind) {
  for (int log2n : bench_sizes(SIZES)) {
    size_t n = size_t(1) << log2n;
    std::vector<K> keys = random_keys<K>(n, 1000 * log2n + std::random_device{}());
    std::vector<V> vals(n);
    for (size_t i = 0; i < n; ++i) vals[i] = V(i);
    K *pristine, *dk, *dk_out;
    V *pristine_v, *dv, *dv_out;
    CHECK(cudaMalloc(&pristine, n * sizeof(K)));
    CHECK(cudaMalloc(&dk, n * sizeof(K)));
    CHECK(cudaMalloc(&dk_out, n * sizeof(K)));
    CHECK(cudaMalloc(&pristine_v, n * sizeof(V)));
    CHECK(cudaMalloc(&dv, n * sizeof(V)));
    CHECK(cudaMalloc(&dv_out, n * sizeof(V)));
    CHECK(cudaMemcpy(pristine, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(pristine_v, vals.data(), n * sizeof(V), cudaMemcpyHostToDevice));
    auto restore = [&]() {
      CHECK(cudaMemcpyAsync(dk, pristine, n * sizeof(K), cudaMemcpyDeviceToDevice));
      if (PAIRS) CHECK(cudaMemcpyAsync(dv, pristine_v, n * sizeof(V), cudaMemcpyDeviceToDevice));
    };
    size_t merge_bytes = 0, radix_bytes = 0;
    if (PAIRS) {
      CHECK(cub::DeviceMergeSort::SortPairs(nullptr, merge_bytes, dk, dv, (int64_t)n, Less()));
      CHECK(cub::DeviceRadixSort::SortPairs(nullptr, radix_bytes, pristine, dk_out, pristine_v, dv_out, (int64_t)n));
    } else {
      CHECK(cub::DeviceMergeSort::SortKeys(nullptr, merge_bytes, dk, (int64_t)n, Less()));
      CHECK(cub::DeviceRadixSort::SortKeys(nullptr, radix_bytes, pristine, dk_out, (int64_t)n));
    }
    void *merge_temp, *radix_temp;
    CHECK(cudaMalloc(&merge_temp, merge_bytes));
    CHECK(cudaMalloc(&radix_temp, radix_bytes));
    auto merge_sort = [&]() {
      if (PAIRS) CHECK(cub::DeviceMergeSort::SortPairs(merge_temp, merge_bytes, dk, dv, (int64_t)n, Less()));
      else CHECK(cub::DeviceMergeSort::SortKeys(merge_temp, merge_bytes, dk, (int64_t)n, Less()));
    };
    auto radix_sort = [&]() {
      if (PAIRS) CHECK(cub::DeviceRadixSort::SortPairs(radix_temp, radix_bytes, pristine, dk_out, pristine_v, dv_out, (int64_t)n));
      else CHECK(cub::DeviceRadixSort::SortKeys(radix_temp, radix_bytes, pristine, dk_out, (int64_t)n));
    };
    // Correctness first, in O(n): sorted; pairs: every value names its key's input position, each
    // position once, and equal keys keep their input order; keys only: same sum and xor.
    restore();
    merge_sort();
    std::vector<K> got(n);
    std::vector<V> got_v(n);
    CHECK(cudaMemcpy(got.data(), dk, n * sizeof(K), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got_v.data(), dv, n * sizeof(V), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (size_t i = 1; i < n; ++i) ok &= !(got[i] < got[i - 1]);
    if (PAIRS) {
      std::vector<bool> seen(n, false);
      for (size_t i = 0; i < n; ++i) {
        ok &= got_v[i] < n && !seen[got_v[i]] && got[i] == keys[got_v[i]];
        if (got_v[i] < n) seen[got_v[i]] = true;
        if (i > 0 && got[i] == got[i - 1]) ok &= got_v[i - 1] < got_v[i];
      }
    } else {
      K sum_in = 0, sum_out = 0, xor_in = 0, xor_out = 0;
      for (size_t i = 0; i < n; ++i) sum_in += keys[i], xor_in ^= keys[i], sum_out += got[i], xor_out ^= got[i];
      ok &= sum_in == sum_out && xor_in == xor_out;
    }
    if (!ok) {
      std::fprintf(stderr, "CUB merge sort %s 2^%d: wrong result\n", kind, log2n);
      std::exit(1);
    }
    double restore_ms = time_events(WARMUP, REPS, [&](int) { restore(); });
    double merge_ms = time_events(WARMUP, REPS, [&](int) { restore(); merge_sort(); }) - restore_ms;
    double radix_ms = time_events(WARMUP, REPS, [&](int) { radix_sort(); });
    row("cub-merge", kind, log2n, merge_ms);
    row("cub-radix", kind, log2n, radix_ms);
    // One call at 2^20, host clock: temp-storage query, allocation, sort, free, synchronize.
    if (log2n == 20) {
      double call_ms = median_of_calls(WARMUP, REPS, [&]() {
        restore();
        CHECK(cudaDeviceSynchronize());
        auto start = std::chrono::steady_clock::now();
        size_t bytes = 0;
        void* temp;
        if (PAIRS) CHECK(cub::DeviceMergeSort::SortPairs(nullptr, bytes, dk, dv, (int64_t)n, Less()));
        else CHECK(cub::DeviceMergeSort::SortKeys(nullptr, bytes, dk, (int64_t)n, Less()));
        CHECK(cudaMallocAsync(&temp, bytes, 0));
        if (PAIRS) CHECK(cub::DeviceMergeSort::SortPairs(temp, bytes, dk, dv, (int64_t)n, Less()));
        else CHECK(cub::DeviceMergeSort::SortKeys(temp, bytes, dk, (int64_t)n, Less()));
        CHECK(cudaFreeAsync(temp, 0));
        CHECK(cudaStreamSynchronize(0));
        return host_ms_since(start);
      });
      std::string call = std::string(kind) + "-call";
      row("cub-merge", call.c_str(), log2n, call_ms);
    }
    CHECK(cudaFree(pristine)); CHECK(cudaFree(dk)); CHECK(cudaFree(dk_out));
    CHECK(cudaFree(pristine_v)); CHECK(cudaFree(dv)); CHECK(cudaFree(dv_out));
    CHECK(cudaFree(merge_temp)); CHECK(cudaFree(radix_temp));
  }
}

// The IEEE total order (Rust's total_cmp), the order of twophase's float sorts: the bits as a
// signed integer, magnitude flipped for negatives.
struct TotalLess {
  __device__ __host__ static int64_t key(double x) {
    int64_t i;
    memcpy(&i, &x, sizeof i);
    return i ^ (int64_t)((uint64_t)(i >> 63) >> 1);
  }
  __device__ __host__ static int32_t key(float x) {
    int32_t i;
    memcpy(&i, &x, sizeof i);
    return i ^ (int32_t)((uint32_t)(i >> 31) >> 1);
  }
  template <typename F>
  __device__ __host__ bool operator()(const F& a, const F& b) const { return key(a) < key(b); }
};

// Float keys (uniform in [0, 1), as the twophase bench draws them): merge sort under the total
// order (the functor twophase's sort implements; row "cub-merge") and under `<` ("cub-merge-lt"),
// and radix sort. Checked first: sorted under the total order, and the same sum and xor of bits.
template <typename F, typename Bits>
static void bench_float(const char* kind) {
  for (int log2n : bench_sizes(SIZES)) {
    size_t n = size_t(1) << log2n;
    std::mt19937_64 rng(1000 * log2n + std::random_device{}());
    std::uniform_real_distribution<F> uniform(0, 1);
    std::vector<F> keys(n);
    for (auto& x : keys) x = uniform(rng);
    F *pristine, *dk, *dk_out;
    CHECK(cudaMalloc(&pristine, n * sizeof(F)));
    CHECK(cudaMalloc(&dk, n * sizeof(F)));
    CHECK(cudaMalloc(&dk_out, n * sizeof(F)));
    CHECK(cudaMemcpy(pristine, keys.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    auto restore = [&]() { CHECK(cudaMemcpyAsync(dk, pristine, n * sizeof(F), cudaMemcpyDeviceToDevice)); };
    size_t total_bytes = 0, lt_bytes = 0, radix_bytes = 0;
    CHECK(cub::DeviceMergeSort::SortKeys(nullptr, total_bytes, dk, (int64_t)n, TotalLess()));
    CHECK(cub::DeviceMergeSort::SortKeys(nullptr, lt_bytes, dk, (int64_t)n, Less()));
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, radix_bytes, pristine, dk_out, (int64_t)n));
    void *total_temp, *lt_temp, *radix_temp;
    CHECK(cudaMalloc(&total_temp, total_bytes));
    CHECK(cudaMalloc(&lt_temp, lt_bytes));
    CHECK(cudaMalloc(&radix_temp, radix_bytes));
    auto total_sort = [&]() { CHECK(cub::DeviceMergeSort::SortKeys(total_temp, total_bytes, dk, (int64_t)n, TotalLess())); };
    auto lt_sort = [&]() { CHECK(cub::DeviceMergeSort::SortKeys(lt_temp, lt_bytes, dk, (int64_t)n, Less())); };
    auto radix_sort = [&]() { CHECK(cub::DeviceRadixSort::SortKeys(radix_temp, radix_bytes, pristine, dk_out, (int64_t)n)); };
    restore();
    total_sort();
    std::vector<F> got(n);
    CHECK(cudaMemcpy(got.data(), dk, n * sizeof(F), cudaMemcpyDeviceToHost));
    bool ok = true;
    Bits sum_in = 0, sum_out = 0, xor_in = 0, xor_out = 0;
    for (size_t i = 0; i < n; ++i) {
      Bits in, out;
      memcpy(&in, &keys[i], sizeof in);
      memcpy(&out, &got[i], sizeof out);
      sum_in += in, xor_in ^= in, sum_out += out, xor_out ^= out;
      if (i > 0) ok &= !TotalLess()(got[i], got[i - 1]);
    }
    ok &= sum_in == sum_out && xor_in == xor_out;
    if (!ok) {
      std::fprintf(stderr, "CUB merge sort %s 2^%d: wrong result\n", kind, log2n);
      std::exit(1);
    }
    double restore_ms = time_events(WARMUP, REPS, [&](int) { restore(); });
    double total_ms = time_events(WARMUP, REPS, [&](int) { restore(); total_sort(); }) - restore_ms;
    double lt_ms = time_events(WARMUP, REPS, [&](int) { restore(); lt_sort(); }) - restore_ms;
    double radix_ms = time_events(WARMUP, REPS, [&](int) { radix_sort(); });
    row("cub-merge", kind, log2n, total_ms);
    row("cub-merge-lt", kind, log2n, lt_ms);
    row("cub-radix", kind, log2n, radix_ms);
    CHECK(cudaFree(pristine)); CHECK(cudaFree(dk)); CHECK(cudaFree(dk_out));
    CHECK(cudaFree(total_temp)); CHECK(cudaFree(lt_temp)); CHECK(cudaFree(radix_temp));
  }
}

// The 24-byte record of the twophase bench's "event24-user" rows, ordered by (user, time) by a
// functor, as the twophase comparator: distinct records can be equivalent.
struct Event {
  unsigned long long time;
  unsigned int user, kind;
  double value;
};
static_assert(sizeof(Event) == 24, "the record is 24 bytes, as in the twophase bench");

struct EventByUserTime {
  __device__ __host__ bool operator()(const Event& a, const Event& b) const {
    return a.user < b.user || (a.user == b.user && a.time < b.time);
  }
};

static const std::vector<int> EVENT_SIZES = {20, 24, 26};
static const unsigned long long EVENT_USERS = 1ull << 16;  // as the twophase bench's EVENT_USERS

// Keys made by `make(n, seed)` sorted by merge sort under `comp`, checked against
// std::stable_sort bit for bit (equivalent keys may differ), at each of bench_sizes(defaults).
template <typename K, typename Comp, typename Make>
static void bench_stable(const char* kind, const std::vector<int>& defaults, Comp comp, Make make) {
  for (int log2n : bench_sizes(defaults)) {
    size_t n = size_t(1) << log2n;
    std::vector<K> keys = make(n, 1000 * log2n + std::random_device{}());
    K *pristine, *dk;
    CHECK(cudaMalloc(&pristine, n * sizeof(K)));
    CHECK(cudaMalloc(&dk, n * sizeof(K)));
    CHECK(cudaMemcpy(pristine, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    auto restore = [&]() { CHECK(cudaMemcpyAsync(dk, pristine, n * sizeof(K), cudaMemcpyDeviceToDevice)); };
    size_t bytes = 0;
    CHECK(cub::DeviceMergeSort::SortKeys(nullptr, bytes, dk, (int64_t)n, comp));
    void* temp;
    CHECK(cudaMalloc(&temp, bytes));
    auto sort = [&]() { CHECK(cub::DeviceMergeSort::SortKeys(temp, bytes, dk, (int64_t)n, comp)); };
    restore();
    sort();
    std::vector<K> got(n);
    CHECK(cudaMemcpy(got.data(), dk, n * sizeof(K), cudaMemcpyDeviceToHost));
    std::stable_sort(keys.begin(), keys.end(), comp);
    if (std::memcmp(got.data(), keys.data(), n * sizeof(K)) != 0) {
      std::fprintf(stderr, "CUB merge sort %s 2^%d: not std::stable_sort's order\n", kind, log2n);
      std::exit(1);
    }
    double restore_ms = time_events(WARMUP, REPS, [&](int) { restore(); });
    double merge_ms = time_events(WARMUP, REPS, [&](int) { restore(); sort(); }) - restore_ms;
    row("cub-merge", kind, log2n, merge_ms);
    CHECK(cudaFree(pristine)); CHECK(cudaFree(dk)); CHECK(cudaFree(temp));
  }
}

// The records of the twophase bench's "event24-user" rows: times from 2^64, users from 2^16.
static std::vector<Event> random_events(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Event> events(n);
  for (auto& e : events) {
    unsigned long long w0 = rng(), w1 = rng(), w2 = rng();
    e.time = w0;
    e.user = (unsigned int)(w1 % EVENT_USERS);
    e.kind = (unsigned int)(w1 >> 32);
    e.value = (double)w2;
  }
  return events;
}

// u32 keys ordered by their top 8 bits alone, as the twophase bench's "u32-top8" comparator:
// distinct keys are equivalent, so only a stable sort gives std::stable_sort's order.
struct Top8Less {
  __device__ __host__ bool operator()(const uint32_t& a, const uint32_t& b) const { return (a >> 24) < (b >> 24); }
};

int main(int argc, char** argv) {
  if (argc > 1) results = std::fopen(argv[1], "w");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const double copy_gbs = 2.0 * COPY_BYTES / (copy_ms(COPY_BYTES, WARMUP, REPS) * 1e-3) / 1e9;
  std::printf("CUB %d on %s: copy rate %.0f GB/s\n", CUB_VERSION, prop.name, copy_gbs);
  std::printf("| impl | kind | n | ms | Gkeys/s |\n|---|---|---|---|---|\n");
  // TWOPHASE_BENCH_KIND names the kinds to run (comma-separated), as in the twophase bench.
  const char* only = std::getenv("TWOPHASE_BENCH_KIND");
  auto selected = [&](const char* kind) {
    if (only == nullptr) return true;
    // A comma-separated list of kinds.
    const size_t len = std::strlen(kind);
    for (const char* at = only; (at = std::strstr(at, kind)) != nullptr; at += len) {
      const bool starts = at == only || at[-1] == ',';
      const bool ends = at[len] == '\0' || at[len] == ',';
      if (starts && ends) return true;
    }
    return false;
  };
  if (selected("u32")) bench<uint32_t, false>("u32");
  if (selected("u64")) bench<uint64_t, false>("u64");
  if (selected("u32-pairs")) bench<uint32_t, true>("u32-pairs");
  if (selected("u32+u64")) bench<uint32_t, true, uint64_t>("u32+u64");
  if (selected("u64+u32")) bench<uint64_t, true, uint32_t>("u64+u32");
  if (selected("u64+u64")) bench<uint64_t, true, uint64_t>("u64+u64");
  if (selected("f32")) bench_float<float, uint32_t>("f32");
  if (selected("f64")) bench_float<double, uint64_t>("f64");
  if (selected("event24-user")) bench_stable<Event>("event24-user", EVENT_SIZES, EventByUserTime(), random_events);
  if (selected("u32-top8")) bench_stable<uint32_t>("u32-top8", SIZES, Top8Less(), random_keys<uint32_t>);
  if (results) std::fclose(results);
  return 0;
}
