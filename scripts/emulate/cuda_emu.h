//! Minimal CUDA emulation on host threads: one std::thread per CUDA thread, blocks run one at a
// time, __shared__ as function statics, barriers with std::barrier. For ASan runs of kernels.
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <thread>
#include <vector>
#include <chrono>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3e { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3e threadIdx;
inline thread_local dim3e blockIdx;
inline dim3e blockDim, gridDim;

inline std::unique_ptr<std::barrier<>> g_block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> g_warp_barriers;

inline void __syncthreads() { g_block_barrier->arrive_and_wait(); }

inline std::atomic<int> g_or_slots[3], g_and_slots[3];
inline thread_local unsigned t_or_calls = 0, t_and_calls = 0;
inline int __syncthreads_or(int p) {
  const unsigned i = t_or_calls++ % 3;
  if (threadIdx.x == 0) g_or_slots[(i + 1) % 3] = 0;
  if (p) g_or_slots[i].fetch_or(1);
  __syncthreads();
  return g_or_slots[i].load();
}
inline int __syncthreads_and(int p) {
  const unsigned i = t_and_calls++ % 3;
  if (threadIdx.x == 0) g_and_slots[(i + 1) % 3] = 0;
  if (!p) g_and_slots[i].fetch_or(1);
  __syncthreads();
  return g_and_slots[i].load() == 0;
}

inline std::vector<int> g_shfl;
inline int __shfl_down_sync(unsigned, int v, int d) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  g_shfl[threadIdx.x] = v;
  g_warp_barriers[warp]->arrive_and_wait();
  const int r = lane + d < 32 ? g_shfl[warp * 32 + lane + d] : v;
  g_warp_barriers[warp]->arrive_and_wait();
  return r;
}

inline std::vector<unsigned> g_ballot;
// The barriers of the lane groups that vote with a mask narrower than the warp (a search group of
// a partition kernel), made on first use within a block: (warp, mask) -> barrier of its lanes.
inline std::mutex g_group_mutex;
inline std::map<std::pair<int, unsigned>, std::unique_ptr<std::barrier<>>> g_group_barriers;
inline std::barrier<>& group_barrier(int warp, unsigned mask) {
  std::lock_guard<std::mutex> lock(g_group_mutex);
  std::unique_ptr<std::barrier<>>& barrier = g_group_barriers[{warp, mask}];
  if (!barrier) barrier = std::make_unique<std::barrier<>>(__builtin_popcount(mask));
  return *barrier;
}
// Every lane of `mask` calls (as on the device); the bits of the lanes outside it are those of
// this lane's last vote of the warp and are ignored by the callers, which mask the answer.
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  g_ballot[threadIdx.x] = predicate ? 1u << lane : 0u;
  std::barrier<>* barrier = mask == 0xffffffffu ? g_warp_barriers[warp].get() : &group_barrier(warp, mask);
  barrier->arrive_and_wait();
  unsigned bits = 0;
  for (int l = 0; l < 32; ++l) {
    if (mask >> l & 1u) bits |= g_ballot[warp * 32 + l];
  }
  barrier->arrive_and_wait();
  return bits;
}
// Warp votes and the warp's maximum, over the full warp (every lane calls, as on the device).
inline int __any_sync(unsigned mask, int predicate) { return (__ballot_sync(mask, predicate) & mask) != 0; }
inline int __all_sync(unsigned mask, int predicate) { return (__ballot_sync(mask, !predicate) & mask) == 0; }
inline std::vector<unsigned> g_reduce;
inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  const int warp = threadIdx.x / 32;
  g_reduce[threadIdx.x] = value;
  std::barrier<>* barrier = mask == 0xffffffffu ? g_warp_barriers[warp].get() : &group_barrier(warp, mask);
  barrier->arrive_and_wait();
  unsigned best = 0;
  for (int l = 0; l < 32; ++l) {
    if (mask >> l & 1u) best = std::max(best, g_reduce[warp * 32 + l]);
  }
  barrier->arrive_and_wait();
  return best;
}
// Lane `src` of the caller's group of `width` lanes (a power of two up to 32), every lane of
// `mask` calling.
inline unsigned __shfl_sync(unsigned mask, unsigned value, int src, int width = 32) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  g_shfl[threadIdx.x] = (int)value;
  std::barrier<>* barrier = mask == 0xffffffffu ? g_warp_barriers[warp].get() : &group_barrier(warp, mask);
  barrier->arrive_and_wait();
  const unsigned r = (unsigned)g_shfl[warp * 32 + lane / width * width + src % width];
  barrier->arrive_and_wait();
  return r;
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)p; }
// Inline PTX (the run script renames `asm volatile(` to EMU_PTX(): only in kernels the harnesses
// do not run; reaching one aborts.
#define EMU_PTX(...) (fprintf(stderr, "inline PTX reached in the emulation\n"), abort())

inline unsigned atomicInc(unsigned* p, unsigned limit) {
  std::atomic_ref<unsigned> a(*p);
  unsigned old = a.load();
  while (!a.compare_exchange_weak(old, old >= limit ? 0u : old + 1)) {
  }
  return old;
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) {
  return std::atomic_ref<unsigned long long>(*p).fetch_or(v);
}
inline unsigned atomicOr(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_or(v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_add(v); }
inline unsigned atomicMax(unsigned* p, unsigned v) {
  std::atomic_ref<unsigned> a(*p);
  unsigned old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  std::atomic_ref<unsigned long long> a(*p);
  unsigned long long old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
inline long long clock64() {
  return std::chrono::steady_clock::now().time_since_epoch().count() ^ (long long)std::hash<std::thread::id>()(std::this_thread::get_id());
}
using std::max;
using std::min;

// Run kernel(args...) on a grid of `grid` blocks of `threads` threads, block by block.
template <typename F>
void launch(unsigned grid, unsigned threads, F kernel) {
  gridDim.x = grid;
  blockDim.x = threads;
  g_shfl.assign(threads, 0);
  g_ballot.assign(threads, 0);
  g_reduce.assign(threads, 0);
  for (unsigned b = 0; b < grid; ++b) {
    g_block_barrier = std::make_unique<std::barrier<>>(threads);
    g_warp_barriers.clear();
    g_group_barriers.clear();
    for (unsigned w = 0; w < (threads + 31) / 32; ++w) g_warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
    for (auto& s : g_or_slots) s = 0;
    for (auto& s : g_and_slots) s = 0;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([=] {
        threadIdx.x = t;
        blockIdx.x = b;
        t_or_calls = t_and_calls = 0;
        kernel();
        // An exited thread no longer counts at barriers, as on the device.
        g_warp_barriers[t / 32]->arrive_and_drop();
        g_block_barrier->arrive_and_drop();
      });
    }
    for (auto& th : pool) th.join();
  }
}
