//! What the CUB peers share: the CUDA error check, event and host-clock medians, the copy rate.
// Included by cub_merge.cu and cub_mergesort.cu (plain CUDA C++, built with nvcc on the device).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                    \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));       \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

// The median of `t` (sorted in place).
static double median_ms(std::vector<double>& t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The median of `reps` runs of f(i) timed by CUDA events on the default stream, after `warmup`
// untimed runs (f gets the run's index, warm-up runs included).
template <typename F>
static double time_events(int warmup, int reps, F f) {
  cudaEvent_t s, e;
  CHECK(cudaEventCreate(&s));
  CHECK(cudaEventCreate(&e));
  for (int i = 0; i < warmup; ++i) f(i);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(s));
    f(i);
    CHECK(cudaEventRecord(e));
    CHECK(cudaEventSynchronize(e));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, s, e));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(s));
  CHECK(cudaEventDestroy(e));
  return median_ms(t);
}

// Milliseconds since `start` on the host clock.
static double host_ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The median of `reps` results of call() (each its own time in ms), after `warmup` calls.
template <typename F>
static double median_of_calls(int warmup, int reps, F call) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(call());
  return median_ms(t);
}

// The median time of one device-to-device copy of `bytes` (read and written: 2 * bytes moved).
static double copy_ms(size_t bytes, int warmup, int reps) {
  void *src, *dst;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 0x5A, bytes));
  double ms = time_events(warmup, reps, [&](int) { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  return ms;
}

// The sizes (log2) of the rows: the comma-separated list of TWOPHASE_BENCH_SIZES where set (as the
// twophase benches read it), else `defaults`.
static std::vector<int> bench_sizes(std::vector<int> defaults) {
  const char* list = std::getenv("TWOPHASE_BENCH_SIZES");
  if (list == nullptr || *list == '\0') return defaults;
  std::vector<int> sizes;
  for (const char* at = list;;) {
    sizes.push_back(std::atoi(at));
    const char* comma = std::strchr(at, ',');
    if (comma == nullptr) return sizes;
    at = comma + 1;
  }
}
