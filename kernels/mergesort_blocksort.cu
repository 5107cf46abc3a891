//! The mergesort's common definitions and its block sort: each tile sorted by one CTA.
// The mergesort is one program: the host prepends the same prelude as for the merge (key_type,
// key_compare, value_type, TP_NT, TP_VT, TP_HAS_VALUES, TP_PARTITION_NT), TP_BLOCK_REGISTERS (the
// block sort's register bound; TP_NT is its threads), TP_PASS_NT, TP_PASS_REGISTERS, TP_QUAD_NT,
// TP_QUAD_REGISTERS, TP_OCT_NT and TP_OCT_REGISTERS (threads and register bounds of the two-way,
// four-way and eight-way merge passes), then partition.cuh, serial.cuh,
// cta_merge.cuh and cta_mergesort.cuh, then this file, mergesort_partition.cuh,
// mergesort_pass.cu, mergesort_quad_partition.cuh, mergesort_quad_partition.cu, cta_quad_merge.cuh,
// mergesort_quad_tile.cu, mergesort_oct_partition.cu and mergesort_oct_tile.cu, in that order.
// The definitions here (size_type, follow_previous_kernel, align16, CHECK_ORDER and the
// shared-memory layouts of the block sort and the two-way pass tile) serve all of them.

using twophase::size_type;

namespace twophase {
// The kernels' parameter blocks, twins of the param_block! structs of
// crates/gpu/src/mergesort/launch.rs (the generated program static_asserts
// the layouts equal and that each kernel's parameters are these fields in order).
struct blocksort_params {
  const key_type* keys_in;
  const value_type* vals_in;
  size_type count;
  key_type* keys_out;
  value_type* vals_out;
  unsigned long long* status;
  const unsigned* guard;
  unsigned image_out;
};

struct mergesort_partition_params {
  const key_type* keys;
  size_type count;
  size_type run;
  size_type spacing;
  size_type num_partitions;
  int lanes;
  size_type* partitions;
  unsigned* arrivals;
  unsigned long long* status;
  const unsigned* guard;
  unsigned long long* repair;
  unsigned generation;
};

struct mergesort_tile_params {
  const key_type* src;
  size_type count;
  size_type run;
  const size_type* partitions;
  key_type* dst;
  const value_type* vals_src;
  value_type* vals_dst;
  unsigned long long* status;
  const unsigned* guard;
  unsigned long long* repair;
  unsigned generation;
  unsigned image_out;
  size_type first_tile;
  unsigned* ends;
  const unsigned* prior_ends;
};

struct mergesort_quad_partition_params {
  const key_type* keys;
  size_type count;
  size_type run;
  const size_type* partitions;
  size_type spacing;
  size_type num_cuts;
  int lanes;
  size_type* cuts;
  unsigned* arrivals;
  unsigned long long* status;
  const unsigned* guard;
  unsigned long long* samples_repair;
  unsigned long long* cuts_repair;
  unsigned generation;
};

struct mergesort_quad_tile_params {
  const key_type* src;
  size_type count;
  size_type run;
  const size_type* cuts;
  key_type* dst;
  const value_type* vals_src;
  value_type* vals_dst;
  unsigned long long* status;
  const unsigned* guard;
  unsigned long long* cuts_repair;
  unsigned generation;
  unsigned image_out;
  size_type first_tile;
};

struct mergesort_oct_partition_params {
  const key_type* keys;
  size_type count;
  size_type run;
  const size_type* quad_cuts;
  size_type spacing;
  size_type num_cuts;
  int lanes;
  size_type* cuts;
  const unsigned* guard;
};

struct mergesort_oct_tile_params {
  const key_type* src;
  size_type count;
  size_type run;
  const size_type* cuts;
  key_type* dst;
  const value_type* vals_src;
  value_type* vals_dst;
  const unsigned* guard;
  unsigned image_out;
  size_type first_tile;
};
}  // namespace twophase

// Keys sorted as their integer image (an order-preserving bijection onto an unsigned integer,
// such as the IEEE total order of floats; the host's KeyImage): the comparator's helpers define
// TP_KEY_IMAGE with the map and its inverse, key_type is the unsigned integer and key_compare
// its `<`. The block sort maps the keys as it loads them, the sort's last kernel (its
// `image_out`) maps them back as it stores them; every key in between is an image. Without an
// image both maps are the identity and compile away.
#ifndef TP_KEY_IMAGE
#define TP_KEY_IMAGE 0
__device__ __forceinline__ key_type twophase_key_image(key_type x) { return x; }
__device__ __forceinline__ key_type twophase_key_from_image(key_type y) { return y; }
#endif

// The map of a kernel's stored keys: back from the image in the sort's last kernel.
struct key_image_out {
  bool last;
  __device__ __forceinline__ key_type operator()(key_type y) const {
    return TP_KEY_IMAGE && last ? twophase_key_from_image(y) : y;
  }
};

// Programmatic dependent launch (sm_90+): every kernel of the sort after the block sort is launched
// as a programmatic dependent of the one before, so that its blocks are scheduled while the
// previous kernel's last blocks run. Each kernel first waits for the previous one to complete
// and its writes to be visible (before touching global memory: a pass's partition kernel writes
// the partitions the previous tile kernel reads), then lets its own dependent be scheduled.
// Both are no-ops for a kernel launched normally.
// `guard` (null in a plain sort) is the word of a caller's check that ran before the sort (the
// segmented sort's check of its segments, when one CSR segment makes it the plain sort): where it
// is non-zero the input was refused, every kernel of the sort returns at once, and the keys stay
// as they were. Returns whether the kernel goes on.
__device__ __forceinline__ bool follow_previous_kernel(const unsigned* guard) {
  twophase::pdl_wait();
  twophase::pdl_launch_dependents();
  return guard == nullptr || *(volatile const unsigned*)guard == 0;
}

// Shared memory of one block-sort tile (dynamic: the host passes BYTES, MergesortTuning::
// blocksort_shared_bytes): NV + 1 keys (the serial merge reads one slot past a run's end), then,
// with values, the NV tile positions that follow the keys through the sort. Once the sorted keys
// are stored, the same memory holds the tile's NV values and then the NV tile positions in output
// order, so that the values are permuted inside shared memory: gathered from global memory by
// sorted position they would touch a different 32-byte sector for nearly every lane of a warp.
// (Sorting 8-byte (key, position) entries instead, one shared-memory access per key and level,
// measured slower on the H100: 2.74 against 2.66 ms for 2^27 u32 pairs.)
// `bytes` rounded up to 16, where each shared-memory region starts (so that any key or value
// type is aligned in it); MergesortTuning's shared_aligned on the host.
constexpr int align16(int bytes) { return (bytes + 15) / 16 * 16; }

template <int NV>
struct blocksort_smem {
  static constexpr int KEY_BYTES = align16((NV + 1) * (int)sizeof(key_type));
  static constexpr int SORT_BYTES = KEY_BYTES + (TP_HAS_VALUES ? NV * (int)sizeof(int) : 0);
  static constexpr int VALUE_BYTES = align16(NV * (int)sizeof(value_type));
  static constexpr int PERMUTE_BYTES = TP_HAS_VALUES ? VALUE_BYTES + NV * (int)sizeof(int) : 0;
  static constexpr int BYTES = SORT_BYTES > PERMUTE_BYTES ? SORT_BYTES : PERMUTE_BYTES;
};

// Whether this sort checks that its comparator behaves: a user comparator may answer
// inconsistently, and then merge paths stop tiling their merges; twophase's own orders cannot.
constexpr bool CHECK_ORDER = !key_compare::trusted_order;

// Shared memory of one merge-pass tile: the NV + 1 keys, later reused for the NV source indices
// of the value gather. Kept as small as the merge's so that as many blocks fit on an SM.
template <int NV>
struct pass_smem {
  static constexpr int KEY_BYTES = (NV + 1) * (int)sizeof(key_type);
  static constexpr int INDEX_BYTES = NV * (int)sizeof(int);
  static constexpr int BYTES = KEY_BYTES > INDEX_BYTES ? KEY_BYTES : INDEX_BYTES;
};

// Phase 2 of the block sort: tile t sorts keys [t * NV, min((t + 1) * NV, count)) of `keys_in`
// into `keys_out` (and the values with them). In place when keys_in == keys_out.
template <bool checked>
__device__ __forceinline__ void blocksort_tile(const key_type* keys_in, const value_type* vals_in, size_type count,
                                               key_type* keys_out, value_type* vals_out, unsigned char* smem,
                                               const twophase::input_check& check, key_image_out image_out) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  const int tid = threadIdx.x;
  const size_type tile_start = (size_type)blockIdx.x * NV;
  const int tile_cnt = (int)min((size_type)NV, count - tile_start);

  twophase::load_tile<NT, VT, checked>(keys_in, tile_start, tile_cnt, keys_in, tile_start, tile_cnt, keys_shared, tid);
  key_type keys[VT];
  int ids[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int pos = VT * tid + i;
    keys[i] = twophase_key_image(keys_shared[checked ? min(pos, tile_cnt - 1) : pos]);
    ids[i] = pos;
  }
  int* sort_ids_shared = reinterpret_cast<int*>(smem + blocksort_smem<NV>::KEY_BYTES);
  twophase::cta_sort<NT, VT, checked, TP_HAS_VALUES, CHECK_ORDER>(keys, ids, tile_cnt, keys_shared, sort_ids_shared,
                                                                   check, key_compare());
#pragma unroll
  for (int i = 0; i < VT; ++i) keys[i] = image_out(keys[i]);
  twophase::store_through_shared<NT, VT, checked>(keys, keys_shared, keys_out + tile_start, tile_cnt, tid);
  if (TP_HAS_VALUES) {
    // The tile's values, coalesced, and each output's tile position, strided, over the sort's
    // shared memory (free once every thread has stored its keys); then each output gathers its
    // value from shared memory. Every read of vals_in precedes the barrier, so in-place sorts
    // stay correct.
    value_type* vals_shared = reinterpret_cast<value_type*>(smem);
    int* ids_shared = reinterpret_cast<int*>(smem + blocksort_smem<NV>::VALUE_BYTES);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_shared[idx] = vals_in[tile_start + idx];
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) ids_shared[VT * tid + i] = ids[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_out[tile_start + idx] = vals_shared[ids_shared[idx]];
    }
  }
}

// The block sort's launch bounds: with MergesortTuning::block_registers, the blocks that must fit
// on an SM by registers; without, the threads alone (as the pass tiles').
#if TP_BLOCK_REGISTERS > 0
#define BLOCKSORT_LAUNCH_BOUNDS __launch_bounds__(TP_NT, twophase::blocks_by_registers(TP_BLOCK_REGISTERS, TP_NT))
#else
#define BLOCKSORT_LAUNCH_BOUNDS __launch_bounds__(TP_NT)
#endif

extern "C" __global__ void BLOCKSORT_LAUNCH_BOUNDS
    twophase_blocksort(const key_type* keys_in, const value_type* vals_in, size_type count, key_type* keys_out,
                       value_type* vals_out, unsigned long long* status, const unsigned* guard,
                       unsigned image_out) {
  constexpr int NV = TP_NT * TP_VT;
  extern __shared__ __align__(16) unsigned char smem[];
  if (!follow_previous_kernel(guard)) return;
  // Only the status word: the block sort has no partitions to repair.
  const twophase::input_check check = {status, nullptr, 0};
  const key_image_out map_out = {image_out != 0};
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    blocksort_tile<false>(keys_in, vals_in, count, keys_out, vals_out, smem, check, map_out);
  } else {
    blocksort_tile<true>(keys_in, vals_in, count, keys_out, vals_out, smem, check, map_out);
  }
}
