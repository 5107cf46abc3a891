//! CUB peer of benches/gpu_merge.rs: cub::DeviceMerge::MergeKeys / MergePairs timed the same way.
// Build (on the device): nvcc -O3 -std=c++17 -arch=sm_90 benches/peers/cub_merge.cu -o cub_merge
// Run: ./cub_merge RESULTS_FILE   (writes "kind log2n ms" lines for the twophase bench to compare)
#include <cub/device/device_merge.cuh>
#include <thrust/device_ptr.h>
#include <thrust/sort.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "peer_common.cuh"

static const int WARMUP = 10;      // untimed runs first, as in the twophase bench
static const int REPS = 100;       // timed runs; the median is reported
static const int L2_MULTIPLE = 4;  // rotate inputs over more than 4x the L2 size
static const int MAX_SETS = 16;
static const size_t COPY_BYTES = size_t(1) << 30;
static const int SIZES[3] = {20, 24, 27};

static FILE* results = nullptr;
static double copy_gbs = 0;
static int l2_bytes = 0;

static void row(const char* kind, int log2n, double ms, double bytes) {
  double n = double(size_t(1) << log2n);
  std::printf("| cub | %s | 2^%d | %.4f | %.1f | %.1f%% | 1.00x |\n", kind, log2n, ms, n / (ms * 1e-3) / 1e9,
              100.0 * bytes / (ms * 1e-3) / 1e9 / copy_gbs);
  if (results) std::fprintf(results, "%s %d %.6f\n", kind, log2n, ms);
}

template <typename K>
static std::vector<K> random_keys(size_t n, std::mt19937_64& rng, uint64_t mask) {
  std::vector<K> v(n);
  for (auto& x : v) x = K(rng() & mask);
  return v;
}

// Two sorted halves on the device (sorted by thrust), and their host copies.
template <typename K>
static void sorted_halves(size_t n, uint64_t seed, uint64_t mask, K** da, K** db, std::vector<K>& a,
                          std::vector<K>& b) {
  std::mt19937_64 rng(seed);
  size_t half = n / 2;
  a = random_keys<K>(half, rng, mask);
  b = random_keys<K>(n - half, rng, mask);
  CHECK(cudaMalloc(da, a.size() * sizeof(K)));
  CHECK(cudaMalloc(db, b.size() * sizeof(K)));
  CHECK(cudaMemcpy(*da, a.data(), a.size() * sizeof(K), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(*db, b.data(), b.size() * sizeof(K), cudaMemcpyHostToDevice));
  thrust::sort(thrust::device_ptr<K>(*da), thrust::device_ptr<K>(*da + a.size()));
  thrust::sort(thrust::device_ptr<K>(*db), thrust::device_ptr<K>(*db + b.size()));
  CHECK(cudaMemcpy(a.data(), *da, a.size() * sizeof(K), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b.data(), *db, b.size() * sizeof(K), cudaMemcpyDeviceToHost));
}

template <typename K>
static void bench_keys(const char* kind, uint64_t mask) {
  for (int log2n : SIZES) {
    size_t n = size_t(1) << log2n;
    size_t set_bytes = 2 * n * sizeof(K);
    int sets = int(std::min<size_t>(MAX_SETS, std::max<size_t>(1, (size_t(L2_MULTIPLE) * l2_bytes + set_bytes - 1) / set_bytes)));
    std::vector<K*> da(sets), db(sets), dout(sets);
    std::vector<K> a, b, a0, b0;
    for (int s = 0; s < sets; ++s) {
      sorted_halves<K>(n, 1000 * log2n + s + std::random_device{}(), mask, &da[s], &db[s], a, b);
      if (s == 0) a0 = a, b0 = b;
      CHECK(cudaMalloc(&dout[s], n * sizeof(K)));
      CHECK(cudaMemset(dout[s], 0xAB, n * sizeof(K)));  // poison
    }
    size_t temp_bytes = 0;
    CHECK(cub::DeviceMerge::MergeKeys(nullptr, temp_bytes, da[0], (int64_t)a0.size(), db[0], (int64_t)b0.size(), dout[0]));
    void* temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    CHECK(cub::DeviceMerge::MergeKeys(temp, temp_bytes, da[0], (int64_t)a0.size(), db[0], (int64_t)b0.size(), dout[0]));
    std::vector<K> got(n), expected(n);
    std::merge(a0.begin(), a0.end(), b0.begin(), b0.end(), expected.begin());
    CHECK(cudaMemcpy(got.data(), dout[0], n * sizeof(K), cudaMemcpyDeviceToHost));
    if (got != expected) {
      std::fprintf(stderr, "CUB %s 2^%d: wrong result\n", kind, log2n);
      std::exit(1);
    }
    double ms = time_events(WARMUP, REPS, [&](int i) {
      int s = i % sets;
      CHECK(cub::DeviceMerge::MergeKeys(temp, temp_bytes, da[s], (int64_t)(n / 2), db[s], (int64_t)(n - n / 2), dout[s]));
    });
    row(kind, log2n, ms, double(set_bytes));
    for (int s = 0; s < sets; ++s) {
      CHECK(cudaFree(da[s]));
      CHECK(cudaFree(db[s]));
      CHECK(cudaFree(dout[s]));
    }
    CHECK(cudaFree(temp));
  }
}

static void bench_pairs() {
  typedef uint32_t K;
  for (int log2n : SIZES) {
    size_t n = size_t(1) << log2n;
    size_t set_bytes = 4 * n * sizeof(K);
    int sets = int(std::min<size_t>(MAX_SETS, std::max<size_t>(1, (size_t(L2_MULTIPLE) * l2_bytes + set_bytes - 1) / set_bytes)));
    std::vector<K*> da(sets), db(sets), dav(sets), dbv(sets), dok(sets), dov(sets);
    std::vector<K> a, b;
    for (int s = 0; s < sets; ++s) {
      sorted_halves<K>(n, 7 + s + std::random_device{}(), (1u << 20) - 1, &da[s], &db[s], a, b);
      std::vector<K> av(a.size()), bv(b.size());
      for (size_t i = 0; i < av.size(); ++i) av[i] = K(i);
      for (size_t i = 0; i < bv.size(); ++i) bv[i] = K(i) | (1u << 31);
      CHECK(cudaMalloc(&dav[s], av.size() * sizeof(K)));
      CHECK(cudaMalloc(&dbv[s], bv.size() * sizeof(K)));
      CHECK(cudaMemcpy(dav[s], av.data(), av.size() * sizeof(K), cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(dbv[s], bv.data(), bv.size() * sizeof(K), cudaMemcpyHostToDevice));
      CHECK(cudaMalloc(&dok[s], n * sizeof(K)));
      CHECK(cudaMalloc(&dov[s], n * sizeof(K)));
      CHECK(cudaMemset(dok[s], 0xAB, n * sizeof(K)));
      CHECK(cudaMemset(dov[s], 0xAB, n * sizeof(K)));
    }
    size_t temp_bytes = 0;
    int64_t na = int64_t(n / 2), nb = int64_t(n - n / 2);
    CHECK(cub::DeviceMerge::MergePairs(nullptr, temp_bytes, da[0], dav[0], na, db[0], dbv[0], nb, dok[0], dov[0]));
    void* temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    double ms = time_events(WARMUP, REPS, [&](int i) {
      int s = i % sets;
      CHECK(cub::DeviceMerge::MergePairs(temp, temp_bytes, da[s], dav[s], na, db[s], dbv[s], nb, dok[s], dov[s]));
    });
    row("u32-pairs", log2n, ms, double(set_bytes));
    for (int s = 0; s < sets; ++s) {
      CHECK(cudaFree(da[s])); CHECK(cudaFree(db[s])); CHECK(cudaFree(dav[s]));
      CHECK(cudaFree(dbv[s])); CHECK(cudaFree(dok[s])); CHECK(cudaFree(dov[s]));
    }
    CHECK(cudaFree(temp));
  }
}

// One full call at 2^20, host side included: device buffers (temp-storage query, allocation,
// merge, free, synchronize), and host vectors (copies in, merge, copy out).
static void bench_calls() {
  typedef uint32_t K;
  size_t n = size_t(1) << 20;
  K *da, *db, *dout;
  std::vector<K> a, b;
  sorted_halves<K>(n, 99, ~0ull, &da, &db, a, b);
  CHECK(cudaMalloc(&dout, n * sizeof(K)));
  cudaStream_t stream = 0;
  // The whole call on device buffers: temp-storage query, allocation, merge, free.
  auto merge_keys = [&](const K* x, const K* y, K* out) {
    size_t temp_bytes = 0;
    CHECK(cub::DeviceMerge::MergeKeys(nullptr, temp_bytes, x, (int64_t)a.size(), y, (int64_t)b.size(), out));
    void* temp;
    CHECK(cudaMallocAsync(&temp, temp_bytes, stream));
    CHECK(cub::DeviceMerge::MergeKeys(temp, temp_bytes, x, (int64_t)a.size(), y, (int64_t)b.size(), out));
    CHECK(cudaFreeAsync(temp, stream));
  };
  auto device_call = [&]() {
    auto t = std::chrono::steady_clock::now();
    merge_keys(da, db, dout);
    CHECK(cudaStreamSynchronize(stream));
    return host_ms_since(t);
  };
  K *ha, *hb, *hout;  // staging device buffers kept across calls, as the twophase handle does
  CHECK(cudaMalloc(&ha, n * sizeof(K)));
  CHECK(cudaMalloc(&hb, n * sizeof(K)));
  CHECK(cudaMalloc(&hout, n * sizeof(K)));
  auto host_call = [&]() {
    auto t = std::chrono::steady_clock::now();
    std::vector<K> out(n);
    CHECK(cudaMemcpyAsync(ha, a.data(), a.size() * sizeof(K), cudaMemcpyHostToDevice, stream));
    CHECK(cudaMemcpyAsync(hb, b.data(), b.size() * sizeof(K), cudaMemcpyHostToDevice, stream));
    merge_keys(ha, hb, hout);
    CHECK(cudaMemcpyAsync(out.data(), hout, n * sizeof(K), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    return host_ms_since(t);
  };
  const char* kinds[2] = {"u32-call-device", "u32-call-host"};
  for (int k = 0; k < 2; ++k) {
    double ms = median_of_calls(WARMUP, REPS, [&]() { return k == 0 ? device_call() : host_call(); });
    std::printf("| cub | %s | 2^20 | %.4f | %.1f | - | 1.00x |\n", kinds[k], ms, n / (ms * 1e-3) / 1e9);
    if (results) std::fprintf(results, "%s 20 %.6f\n", kinds[k], ms);
  }
}

int main(int argc, char** argv) {
  if (argc > 1) results = std::fopen(argv[1], "w");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  l2_bytes = prop.l2CacheSize;
  copy_gbs = 2.0 * COPY_BYTES / (copy_ms(COPY_BYTES, WARMUP, REPS) * 1e-3) / 1e9;
  std::printf("CUB %d (CUB_VERSION) on %s: copy rate %.0f GB/s\n", CUB_VERSION, prop.name, copy_gbs);
  std::printf("| impl | kind | n | ms | Gkeys/s | %% of copy rate | vs CUB |\n|---|---|---|---|---|---|---|\n");
  bench_keys<uint32_t>("u32", 0xffffffffull);
  bench_keys<uint64_t>("u64", ~0ull);
  bench_pairs();
  bench_calls();
  if (results) std::fclose(results);
  return 0;
}
