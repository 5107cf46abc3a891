//! Batcher's odd-even merge sort for any n: block sort in shared memory, global stages, fused short strides.
// The host prepends a prelude defining key_type, key_compare, value_type, TP_NT, TP_VT,
// TP_HAS_VALUES (program.rs), TP_STAGE_NT and TP_FUSED_DIVISOR (batcher.rs), then partition.cuh
// (for size_type).
// A tile is TP_NT * TP_VT keys, a power of two.
//
// The network (iterative form): for p = 1, 2, 4, ... while p < n (merge sorted runs of p into
// runs of 2p), for k = p, p/2, ..., 1 (one stage each): compare-exchange (x, x + k) for every x
// with
//   k == p: x mod 2p < p;
//   k <  p: x mod 2k >= k, and x and x + k in the same run of 2p (x / 2p == (x + k) / 2p).
// Positions at or past n act as +infinity: a comparator whose partner x + k is at or past n would
// never move anything, so it is skipped; nothing is padded. This is the network of the next power
// of two above n with its padding never touched. Not stable: equal keys may be reordered.
//
// Launches, for a tile of T keys and the fused stride K = T / TP_FUSED_DIVISOR (8):
// - twophase_batcher_block: every level p < T runs inside each tile (its runs of 2p fit), all in
//   shared memory, one launch.
// - for each level p >= T: twophase_batcher_stage for each stride k = p .. 2K (one launch per
//   stage, in place: each comparator touches only its own two keys), then
//   twophase_batcher_fused for the strides K .. 1 of that level in one launch.
// The strides k < p of a level do not stay inside aligned tiles (the comparator (x, x + k) with
// x mod 2k >= k crosses a multiple of 2k, so every tile boundary is crossed by some stage), so
// the fused launch uses overlapping windows: each block loads T keys around the T - 4K keys it
// writes (a halo of 2K on each side), runs the stages K .. 1 on the whole window, skipping
// comparators with an end outside it, and writes only the middle. A skipped comparator can make a
// key wrong only within k of the window's edge, and a wrong key spreads by at most k per stage
// after that, so after the strides K + K/2 + ... + 1 = 2K - 1 every key of the middle is right.
// The windows overlap, so the fused launch reads one buffer and writes the other. The halo's
// compare-exchanges are run again by the neighbouring window, which is right only if they are
// answered the same there: the host fuses only under twophase's own orders, and runs every
// stride of a user comparator's levels as a global stage (one compare-exchange, one answer).
//
// Any keys and any comparator: every compare-exchange leaves its two keys in place or swaps
// them, and each is run once, so the output is a permutation of the input; every position touched is
// checked against n (global) and against the tile or window (shared), so nothing outside the
// buffers is read or written. An inconsistent comparator only leaves the order unspecified.

using twophase::size_type;

namespace twophase {
// The kernels' parameter blocks, twins of BatcherBlockParams, BatcherStageParams and
// BatcherFusedParams in crates/gpu/src/variants/batcher/mod.rs (the generated program
// static_asserts the layouts equal and that each kernel's parameters are these fields in order).
struct batcher_block_params {
  const key_type* src;
  const value_type* src_vals;
  size_type n;
  key_type* dst;
  value_type* dst_vals;
};

struct batcher_stage_params {
  key_type* keys;
  value_type* vals;
  size_type n;
  size_type p;
  size_type k;
};

struct batcher_fused_params {
  const key_type* src;
  const value_type* src_vals;
  size_type n;
  size_type p;
  key_type* dst;
  value_type* dst_vals;
};
}  // namespace twophase

namespace batcher {

constexpr int NT = TP_NT;
constexpr int TILE = TP_NT * TP_VT;
static_assert((TILE & (TILE - 1)) == 0, "the Batcher tile must be a power of two");
// Largest stride of the fused launch (TP_FUSED_DIVISOR: batcher.rs explains the choice), and the
// halo on each side of its windows.
constexpr int FUSED_STRIDE = TILE / TP_FUSED_DIVISOR;
static_assert(FUSED_STRIDE >= 1 && TILE - 4 * FUSED_STRIDE > 0, "fused windows need a middle to write");
constexpr int HALO = 2 * FUSED_STRIDE;
// Keys a fused window writes: the tile less both halos.
constexpr int FUSED_OUTPUTS = TILE - 2 * HALO;
// Window starts (multiples of FUSED_OUTPUTS, less HALO) must be multiples of 2 * FUSED_STRIDE, so
// that window slots and global positions agree mod 2k for every fused stride k.
static_assert(FUSED_OUTPUTS % (2 * FUSED_STRIDE) == 0, "fused windows must start on a multiple of 2K");

// The left end of comparator `c` of a stage of stride k (a power of two): comparators are
// numbered in the order of their left ends; k == p takes the positions with bit k clear, k < p
// those with bit k set.
__device__ __forceinline__ long long left_end(long long c, long long k, bool first_stage) {
  return 2 * c - (c & (k - 1)) + (first_stage ? 0 : k);
}

// Whether x and x + k are in the same run of 2p (p a power of two, x >= 0).
__device__ __forceinline__ bool same_run(long long x, long long k, long long p) {
  return (x & ~(2 * p - 1)) == ((x + k) & ~(2 * p - 1));
}

// Compare-exchange two keys (and their values): the smaller under key_compare goes left.
__device__ __forceinline__ void compare_exchange(key_type& x, key_type& y, value_type& vx, value_type& vy) {
  if (key_compare()(y, x)) {
    const key_type k = x;
    x = y;
    y = k;
    if (TP_HAS_VALUES) {
      const value_type v = vx;
      vx = vy;
      vy = v;
    }
  }
}

// One stage (p, k) on a window of TILE keys in shared memory whose slot l holds global position
// base + l (base may be negative: slots before position 0 hold nothing). Comparators with an end
// outside the window or outside [0, n) are skipped. Ends with a barrier.
__device__ __forceinline__ void shared_stage(key_type* keys, value_type* vals, long long base, long long n,
                                             long long p, int k) {
  for (int c = threadIdx.x; c < TILE / 2; c += NT) {
    const int l = (int)left_end(c, k, k == p);
    const int r = l + k;
    const long long x = base + l;
    if (r >= TILE || x < 0 || x + k >= n) continue;
    if (k < p && !same_run(x, k, p)) continue;
    compare_exchange(keys[l], keys[r], vals[TP_HAS_VALUES ? l : 0], vals[TP_HAS_VALUES ? r : 0]);
  }
  __syncthreads();
}

// Copy the global positions [base + lo, base + hi) of `src` to window slots [lo, hi), skipping
// positions outside [0, n). Coalesced.
__device__ __forceinline__ void load_window(const key_type* src, const value_type* src_vals, key_type* keys,
                                            value_type* vals, long long base, long long n, int lo, int hi) {
  for (int l = lo + threadIdx.x; l < hi; l += NT) {
    const long long x = base + l;
    if (x < 0 || x >= n) continue;
    keys[l] = src[x];
    if (TP_HAS_VALUES) vals[l] = src_vals[x];
  }
  __syncthreads();
}

// Copy window slots [lo, hi) back to the global positions [base + lo, base + hi) of `dst`,
// skipping positions outside [0, n). Coalesced.
__device__ __forceinline__ void store_window(key_type* dst, value_type* dst_vals, const key_type* keys,
                                             const value_type* vals, long long base, long long n, int lo, int hi) {
  for (int l = lo + threadIdx.x; l < hi; l += NT) {
    const long long x = base + l;
    if (x < 0 || x >= n) continue;
    dst[x] = keys[l];
    if (TP_HAS_VALUES) dst_vals[x] = vals[l];
  }
}

}  // namespace batcher

// Every level p < TILE of the network (p < n) on each aligned tile, in shared memory: sorts each
// tile of TILE keys (the last one partial). Reads src, writes dst (the same buffer or another).
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_batcher_block(const key_type* src, const value_type* src_vals, size_type n, key_type* dst,
                           value_type* dst_vals) {
  using namespace batcher;
  __shared__ key_type keys[TILE];
  __shared__ value_type vals[TP_HAS_VALUES ? TILE : 1];
  const long long base = (long long)blockIdx.x * TILE;
  load_window(src, src_vals, keys, vals, base, (long long)n, 0, TILE);
  for (long long p = 1; p < TILE && p < (long long)n; p *= 2) {
    for (int k = (int)p; k >= 1; k /= 2) shared_stage(keys, vals, base, (long long)n, p, k);
  }
  store_window(dst, dst_vals, keys, vals, base, (long long)n, 0, TILE);
}

// One stage (p, k) of a level p >= TILE on global memory, in place: one thread per comparator
// (comparator c has left end left_end(c); all of them lie below n / 2 comparators).
extern "C" __global__ void __launch_bounds__(TP_STAGE_NT)
    twophase_batcher_stage(key_type* keys, value_type* vals, size_type n, size_type p, size_type k) {
  using namespace batcher;
  const long long c = (long long)blockIdx.x * TP_STAGE_NT + threadIdx.x;
  if (c >= (long long)(n / 2)) return;
  const long long x = left_end(c, (long long)k, k == p);
  const long long y = x + (long long)k;
  if (y >= (long long)n) return;
  if (k < p && !same_run(x, (long long)k, (long long)p)) return;
  key_type kx = keys[x], ky = keys[y];
  value_type vx, vy;
  if (TP_HAS_VALUES) {
    vx = vals[x];
    vy = vals[y];
  }
  if (key_compare()(ky, kx)) {
    keys[x] = ky;
    keys[y] = kx;
    if (TP_HAS_VALUES) {
      vals[x] = vy;
      vals[y] = vx;
    }
  }
}

// The strides FUSED_STRIDE .. 1 of a level p >= TILE, on overlapping windows (see the top of
// this file): block w writes positions [w * FUSED_OUTPUTS, (w + 1) * FUSED_OUTPUTS) of dst from
// the window starting HALO before them in src.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_batcher_fused(const key_type* src, const value_type* src_vals, size_type n, size_type p, key_type* dst,
                           value_type* dst_vals) {
  using namespace batcher;
  __shared__ key_type keys[TILE];
  __shared__ value_type vals[TP_HAS_VALUES ? TILE : 1];
  // A multiple of 2 * FUSED_STRIDE, so that window slots and global positions agree mod 2k.
  const long long base = (long long)blockIdx.x * FUSED_OUTPUTS - HALO;
  load_window(src, src_vals, keys, vals, base, (long long)n, 0, TILE);
  for (int k = FUSED_STRIDE; k >= 1; k /= 2) shared_stage(keys, vals, base, (long long)n, (long long)p, k);
  store_window(dst, dst_vals, keys, vals, base, (long long)n, HALO, HALO + FUSED_OUTPUTS);
}
