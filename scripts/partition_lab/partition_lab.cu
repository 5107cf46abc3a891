//! Lab: merge-path partitions of two 2^26-key sorted inputs, by binary search on the inputs against a search narrowed first on gathered samples.
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 -o partition_lab partition_lab.cu && ./partition_lab
// Every variant's partitions are checked equal to the plain binary search's before it is timed
// (CUDA events around the whole variant, gather included; median of REPS runs).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cuda_runtime.h>

typedef unsigned long long size_type;
constexpr size_type KEYS = 1ull << 26;  // keys of each input
constexpr size_type TILE = 256 * 23;    // outputs a tile (the sorted search's shipped NV)
constexpr int REPS = 51;
constexpr int BLOCK = 128;

#define CHECK(x)                                                          \
  do {                                                                    \
    cudaError_t e = (x);                                                  \
    if (e != cudaSuccess) {                                               \
      printf("%s: %s\n", #x, cudaGetErrorString(e));                      \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

// First index in [begin, end) whose `taken` is false (taken is true then false), by `lanes`
// lanes of a warp (a power of two up to 32, all calling).
template <typename pred_t>
__device__ size_type first_untaken(size_type begin, size_type end, int lanes, pred_t taken) {
  if (lanes == 1) {
    while (begin < end) {
      const size_type mid = begin + (end - begin) / 2;
      if (taken(mid)) begin = mid + 1; else end = mid;
    }
    return begin;
  }
  const int lane = threadIdx.x & (lanes - 1);
  const int shift = threadIdx.x & 31 & ~(lanes - 1);
  const unsigned group = (lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1)) << shift;
  while (begin < end) {
    const size_type width = end - begin;
    const int active = width < (size_type)lanes ? (int)width : lanes;
    const size_type base = begin;
    auto probe = [&](int i) { return base + (size_type)(i + 1) * width / (size_type)(active + 1); };
    const bool answer = lane < active ? taken(probe(lane)) : false;
    const int t = __popc(__ballot_sync(group, answer) >> shift);
    if (t > 0) begin = probe(t - 1) + 1;
    if (t < active) end = probe(t);
  }
  return begin;
}

// Lower bound merge path (A first on ties): A[m] is taken before B[d - 1 - m] when !(B < A).
__device__ __forceinline__ bool takes_a(unsigned a, unsigned b) { return !(b < a); }

__global__ void plain(const unsigned* a, const unsigned* b, size_type na, size_type nb, size_type parts,
                      size_type* out, int lanes) {
  const size_type p = ((size_type)blockIdx.x * blockDim.x + threadIdx.x) / lanes;
  if (p >= parts) return;
  const size_type d = min(p * TILE, na + nb);
  const size_type lo = d > nb ? d - nb : 0, hi = min(d, na);
  const size_type m = first_untaken(lo, hi, lanes, [&](size_type mid) { return takes_a(a[mid], b[d - 1 - mid]); });
  if ((threadIdx.x & (lanes - 1)) == 0) out[p] = m;
}

// Samples: sa[k] = A[(k + 1) S - 1], sb[j] = B[j S].
__global__ void gather(const unsigned* a, const unsigned* b, size_type na, size_type nb, size_type S, unsigned* sa,
                       unsigned* sb, size_type ka, size_type kb) {
  const size_type i = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ka) sa[i] = a[(i + 1) * S - 1];
  if (i < kb) sb[i] = b[i * S];
}

// The merge path at d (a multiple of S, else the plain search): the probes m = kS - 1 decided on
// the samples first (coarse_lanes lanes), which leave a window of at most S for the fine search.
__global__ void sampled(const unsigned* a, const unsigned* b, size_type na, size_type nb, size_type S,
                        const unsigned* sa, const unsigned* sb, size_type parts, size_type* out, int coarse_lanes,
                        int fine_lanes) {
  const size_type p = ((size_type)blockIdx.x * blockDim.x + threadIdx.x) / coarse_lanes;
  if (p >= parts) return;
  const size_type d = min(p * TILE, na + nb);
  size_type lo = d > nb ? d - nb : 0, hi = min(d, na);
  if (d % S == 0) {
    // Probes kS - 1 in [lo, hi): k in [k0, k1).
    const size_type k0 = (lo + 1 + S - 1) / S, k1 = hi / S + 1;
    if (k0 < k1) {
      const size_type kf = first_untaken(k0, k1, coarse_lanes, [&](size_type k) {
        return takes_a(sa[k - 1], sb[(d - k * S) / S]);
      });
      if (kf > k0) lo = max(lo, (kf - 1) * S);
      if (kf < k1) hi = min(hi, kf * S - 1);
    }
  }
  // The fine search on the group's first fine_lanes lanes.
  const int lane = threadIdx.x & (coarse_lanes - 1);
  size_type m = 0;
  if (lane < fine_lanes) {
    m = first_untaken(lo, hi, fine_lanes, [&](size_type mid) { return takes_a(a[mid], b[d - 1 - mid]); });
  }
  if (lane == 0) out[p] = m;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  std::mt19937_64 rng(12345);
  std::vector<unsigned> ha(KEYS), hb(KEYS);
  for (auto& x : ha) x = (unsigned)rng();
  for (auto& x : hb) x = (unsigned)rng();
  std::sort(ha.begin(), ha.end());
  std::sort(hb.begin(), hb.end());
  const size_type na = KEYS, nb = KEYS, parts = (na + nb + TILE - 1) / TILE + 1;
  unsigned *a, *b, *sa, *sb;
  size_type *want, *got;
  char* flush;
  const size_t flush_bytes = 256u << 20;
  CHECK(cudaMalloc(&a, KEYS * 4));
  CHECK(cudaMalloc(&b, KEYS * 4));
  CHECK(cudaMalloc(&sa, KEYS * 4));
  CHECK(cudaMalloc(&sb, KEYS * 4));
  CHECK(cudaMalloc(&want, parts * 8));
  CHECK(cudaMalloc(&got, parts * 8));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemcpy(a, ha.data(), KEYS * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb.data(), KEYS * 4, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<size_type> hw(parts), hg(parts);
  plain<<<(unsigned)((parts + BLOCK - 1) / BLOCK), BLOCK>>>(a, b, na, nb, parts, want, 1);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hw.data(), want, parts * 8, cudaMemcpyDeviceToHost));
  printf("device partitions: %llu boundaries, tile %llu, inputs 2^26 + 2^26 u32\n", parts, TILE);
  // Time f: the L2 flushed by a memset of 256 MiB before each run (as after a tile kernel).
  auto time = [&](const char* name, bool check, auto f) {
    CHECK(cudaMemset(got, 0xff, parts * 8));
    f();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hg.data(), got, parts * 8, cudaMemcpyDeviceToHost));
    const char* same = !check ? "-" : hg == hw ? "same" : "DIFFERENT";
    std::vector<float> ms;
    for (int r = 0; r < REPS; ++r) {
      CHECK(cudaMemset(flush, r, flush_bytes));
      cudaEventRecord(e0);
      f();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float t;
      cudaEventElapsedTime(&t, e0, e1);
      ms.push_back(t);
    }
    printf("| %s | %.1f us | %s |\n", name, 1000 * median(ms), same);
  };
  char name[128];
  for (int lanes : {1, 2, 4, 32}) {
    snprintf(name, sizeof name, "plain, %d lanes", lanes);
    time(name, true, [&] {
      plain<<<(unsigned)((parts * lanes + BLOCK - 1) / BLOCK), BLOCK>>>(a, b, na, nb, parts, got, lanes);
    });
  }
  for (size_type S : {128ull, 256ull}) {
    const size_type ka = na / S, kb = (nb - 1) / S + 1, kmax = std::max(ka, kb);
    for (int coarse : {1, 8, 32}) {
      for (int fine : {1, 4}) {
        if (fine > coarse) continue;
        snprintf(name, sizeof name, "gather S=%llu + sampled, coarse %d lanes, fine %d", S, coarse, fine);
        time(name, true, [&] {
          gather<<<(unsigned)((kmax + 255) / 256), 256>>>(a, b, na, nb, S, sa, sb, ka, kb);
          sampled<<<(unsigned)((parts * coarse + BLOCK - 1) / BLOCK), BLOCK>>>(a, b, na, nb, S, sa, sb, parts, got,
                                                                              coarse, fine);
        });
      }
    }
    snprintf(name, sizeof name, "gather S=%llu alone", S);
    time(name, false, [&] { gather<<<(unsigned)((kmax + 255) / 256), 256>>>(a, b, na, nb, S, sa, sb, ka, kb); });
  }
  return 0;
}
