//! Times block radix sorts of 1024 x 37 u32 tiles (the mergesort's block-sort tile) against a tile copy.
// Build and run on the GPU: nvcc -O3 -std=c++17 -arch=sm_90 radix_lab.cu -o radix_lab && ./radix_lab [LOG2N]
// Each variant sorts every full tile of 2^LOG2N random u32 keys, is checked (each tile sorted and
// the same multiset of keys: sum and xor of the keys), then timed: the median of REPS event-timed
// launches. Variants differ in how a warp ranks its keys by the current 8-bit digit. Without a
// GPU, NVRTC compiles the kernels alone (the host code is left out under __CUDACC_RTC__) for
// scripts/kernel_resources.py: python3 scripts/merge_lab/nvrtc_cubin.py radix_lab.cu lab.cubin.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#endif

constexpr int NT = 1024;
constexpr int VT = 37;
constexpr int NV = NT * VT;
constexpr int WARPS = NT / 32;
constexpr int WARP_KEYS = 32 * VT;
constexpr int DIGITS = 256;
constexpr int DIGIT_BITS = 8;
constexpr int ROW = DIGITS + 1;  // a warp's counter row, padded so rows start on different banks
constexpr int REPS = 21;

enum Match { NATIVE = 0, BALLOTS = 1 };

__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// Lanes of the warp whose digit equals this lane's.
template <int MATCH>
__device__ __forceinline__ unsigned peers_of(unsigned d) {
  if (MATCH == NATIVE) return __match_any_sync(0xffffffffu, d);
  unsigned peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < DIGIT_BITS; ++b) {
    const bool bit = (d >> b) & 1;
    const unsigned votes = __ballot_sync(0xffffffffu, bit);
    peers &= bit ? votes : ~votes;
  }
  return peers;
}

__global__ void __launch_bounds__(NT) tile_copy(const unsigned* in, unsigned* out) {
  extern __shared__ unsigned smem[];
  const size_t base = (size_t)blockIdx.x * NV;
  for (int i = 0; i < VT; ++i) smem[i * NT + threadIdx.x] = in[base + i * NT + threadIdx.x];
  __syncthreads();
  for (int i = 0; i < VT; ++i) out[base + i * NT + threadIdx.x] = smem[i * NT + threadIdx.x];
}

template <int MATCH>
__global__ void __launch_bounds__(NT, 1) tile_radix(const unsigned* in, unsigned* out) {
  extern __shared__ unsigned smem[];
  unsigned* keys_s = smem;
  unsigned* counts = smem + NV;  // WARPS rows of ROW
  __shared__ unsigned warp_sums[WARPS];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const size_t base = (size_t)blockIdx.x * NV;
  for (int i = 0; i < VT; ++i) keys_s[i * NT + tid] = in[base + i * NT + tid];
  __syncthreads();
  const unsigned* warp_keys = keys_s + warp * WARP_KEYS + lane;
  unsigned* row = counts + warp * ROW;
  const unsigned lt = lanemask_lt();
#pragma unroll 1
  for (int shift = 0; shift < 32; shift += DIGIT_BITS) {
    for (int d = lane; d < DIGITS; d += 32) row[d] = 0;
    __syncwarp();
    // Walk 1: the warp's count of each digit, added by the first lane of each digit's group.
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const unsigned d = (warp_keys[32 * i] >> shift) & (DIGITS - 1);
      const unsigned peers = peers_of<MATCH>(d);
      if ((peers & lt) == 0) atomicAdd(&row[d], __popc(peers));
    }
    __syncthreads();
    // Exclusive scan of the counts in (digit, warp) order: thread t takes digit t / 4 and warps
    // 8 (t % 4) .. 8 (t % 4) + 7.
    {
      const int d = tid >> 2, w0 = (tid & 3) * 8;
      unsigned c[8], sum = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) { c[j] = counts[(w0 + j) * ROW + d]; sum += c[j]; }
      unsigned incl = sum;
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const unsigned v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
      }
      if (lane == 31) warp_sums[warp] = incl;
      __syncthreads();
      if (warp == 0) {
        const unsigned v = warp_sums[lane];
        unsigned s = v;
#pragma unroll
        for (int o = 1; o < 32; o *= 2) {
          const unsigned u = __shfl_up_sync(0xffffffffu, s, o);
          if (lane >= o) s += u;
        }
        warp_sums[lane] = s - v;
      }
      __syncthreads();
      unsigned run = warp_sums[warp] + incl - sum;
#pragma unroll
      for (int j = 0; j < 8; ++j) { counts[(w0 + j) * ROW + d] = run; run += c[j]; }
    }
    // Every key in registers before any is scattered over the tile.
    unsigned k[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) k[i] = warp_keys[32 * i];
    __syncthreads();
    // Walk 2: each group's first lane takes the group's places from the digit's running offset
    // and hands the first to its peers; each key goes to that place plus its peers before it.
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const unsigned d = (k[i] >> shift) & (DIGITS - 1);
      const unsigned peers = peers_of<MATCH>(d);
      const unsigned before = peers & lt;
      unsigned place = 0;
      if (before == 0) place = atomicAdd(&row[d], __popc(peers));
      place = __shfl_sync(0xffffffffu, place, __ffs(peers) - 1);
      keys_s[place + __popc(before)] = k[i];
    }
    __syncthreads();
  }
  for (int i = 0; i < VT; ++i) out[base + i * NT + tid] = keys_s[i * NT + tid];
}

#ifndef __CUDACC_RTC__
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

int main(int argc, char** argv) {
  const int lg = argc > 1 ? atoi(argv[1]) : 27;
  const size_t n = (size_t)1 << lg;
  const size_t tiles = n / NV, used = tiles * NV;
  std::vector<unsigned> h(n), got(n);
  unsigned *in, *out;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMalloc(&out, n * 4));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, 2^%d keys, %zu tiles of %d\n", prop.name, lg, tiles, NV);
  const int copy_smem = NV * 4, radix_smem = NV * 4 + WARPS * ROW * 4;
  CHECK(cudaFuncSetAttribute(tile_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, copy_smem));
  CHECK(cudaFuncSetAttribute(tile_radix<NATIVE>, cudaFuncAttributeMaxDynamicSharedMemorySize, radix_smem));
  CHECK(cudaFuncSetAttribute(tile_radix<BALLOTS>, cudaFuncAttributeMaxDynamicSharedMemorySize, radix_smem));
  struct V { const char* name; void (*k)(const unsigned*, unsigned*); int smem; bool sorts; };
  V vs[] = {{"tile copy", tile_copy, copy_smem, false},
            {"radix, match.any", tile_radix<NATIVE>, radix_smem, true},
            {"radix, 8 ballots", tile_radix<BALLOTS>, radix_smem, true}};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const char* patterns[] = {"random", "sorted", "all equal"};
  for (int p = 0; p < 3; ++p) {
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; ++i) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      h[i] = p == 0 ? (unsigned)(s >> 11) : p == 1 ? (unsigned)i * 977u : 0x5EEDu;
    }
    if (p == 1) std::sort(h.begin(), h.end());
    CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
    for (auto& v : vs) {
      CHECK(cudaMemset(out, 0xAB, n * 4));
      v.k<<<tiles, NT, v.smem>>>(in, out);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(got.data(), out, used * 4, cudaMemcpyDeviceToHost));
      bool ok = true;
      for (size_t t = 0; t < tiles && ok; ++t) {
        uint64_t s0 = 0, s1 = 0;
        unsigned x0 = 0, x1 = 0;
        for (int i = 0; i < NV; ++i) {
          s0 += h[t * NV + i]; x0 ^= h[t * NV + i] * 2654435761u;
          s1 += got[t * NV + i]; x1 ^= got[t * NV + i] * 2654435761u;
          if (v.sorts && i > 0 && got[t * NV + i - 1] > got[t * NV + i]) ok = false;
        }
        if (s0 != s1 || x0 != x1) ok = false;
        if (!ok) printf("  %s: tile %zu WRONG\n", v.name, t);
      }
      std::vector<float> ms;
      for (int r = 0; r < REPS; ++r) {
        cudaEventRecord(a);
        v.k<<<tiles, NT, v.smem>>>(in, out);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float t;
        cudaEventElapsedTime(&t, a, b);
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      printf("%-10s %-20s %s median %.4f ms (min %.4f), %.1f GB/s\n", patterns[p], v.name, ok ? "ok" : "NO",
             ms[REPS / 2], ms[0], 2.0 * used * 4 / (ms[REPS / 2] * 1e6));
    }
  }
  return 0;
}
#else
// NVRTC: instantiate the kernels the host code would.
template __global__ void tile_radix<0>(const unsigned*, unsigned*);
template __global__ void tile_radix<1>(const unsigned*, unsigned*);
#endif
