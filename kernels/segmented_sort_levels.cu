//! The segmented sort's merge levels: per level, the partitions of its listed tiles, their check, and the merge of each tile's straddle.
// Part of the segmented-sort program, after kernels/segmented_sort.cu and cta_segmented_sort.cuh.

// Phase 1 of level `level`: for every tile of its work list, the merge path of the tile's first
// output inside its pair's straddle (A = [lo, mid), B = [mid, hi)), as a global A position.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_partition(const key_type* keys, const key_type* scratch_keys, size_type count,
                               size_type num_tiles, const unsigned long long* masks, const size_type* straddles,
                               const unsigned* control, const unsigned* list, size_type* partitions,
                               unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  if (segments_invalid(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  const size_type run = NV << level;
  const located<key_type> all = {keys, scratch_keys, masks, level};
  for (size_type e = (size_type)blockIdx.x * blockDim.x + threadIdx.x; e < listed;
       e += (size_type)gridDim.x * blockDim.x) {
    const size_type tile = list[e];
    const size_type t0 = tile * NV;
    const size_type pair = t0 / (2 * run);
    const size_type lo = straddles[2 * pair], hi = straddles[2 * pair + 1], mid = pair * 2 * run + run;
    const size_type diag = max(t0, lo) - lo;
    const located_from<key_type> a = {all, lo}, b = {all, mid};
    partitions[tile] =
        lo + twophase::merge_path<twophase::bounds_lower, size_type>(a, mid - lo, b, hi - mid, diag, key_compare());
  }
}

// The A range [a0, a1) of the merged outputs of `tile` at a level: from the tile's partition to the
// next tile's, or to mid where the straddle ends in this tile.
struct tile_merge {
  size_type m0, m1, a0, a1, b0;
  __device__ __forceinline__ tile_merge(size_type tile, size_type count, const straddle& s,
                                        const size_type* partitions) {
    constexpr size_type NV = (size_type)TP_NT * TP_VT;
    const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
    m0 = max(t0, s.lo);
    m1 = min(t1, s.hi);
    a0 = partitions[tile];
    a1 = m1 < s.hi ? partitions[tile + 1] : s.mid;
    b0 = s.mid + (m0 - s.lo) - (a0 - s.lo);
  }
  // Whether the boundaries tile this tile's outputs: A and B each advance, by no more than the
  // outputs, within their runs.
  __device__ __forceinline__ bool valid(const straddle& s) const {
    return s.lo <= a0 && a0 <= a1 && a1 <= s.mid && a1 - a0 <= m1 - m0 && s.mid <= b0 &&
           b0 + (m1 - m0) - (a1 - a0) <= s.hi;
  }
};

// The level's straddle of the pair `tile` belongs to.
__device__ __forceinline__ straddle tile_straddle(const size_type* straddles, size_type tile, unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  const size_type run = NV << level;
  const size_type pair = tile * NV / (2 * run);
  return {straddles[2 * pair], straddles[2 * pair + 1], pair * 2 * run + run};
}

// With a comparator that is not trusted: the partitions of every listed tile checked against
// the next one's; where any pair is out of order the level is marked bad (its merge leaves every
// straddle as it is) and STATUS_ORDER_INCONSISTENT is raised.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_verify(size_type count, const size_type* straddles, const unsigned* list,
                            const size_type* partitions, unsigned* control, unsigned long long* status,
                            unsigned level) {
  if (segments_invalid(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  for (size_type e = (size_type)blockIdx.x * blockDim.x + threadIdx.x; e < listed;
       e += (size_type)gridDim.x * blockDim.x) {
    const size_type tile = list[e];
    const straddle s = tile_straddle(straddles, tile, level);
    if (!tile_merge(tile, count, s, partitions).valid(s)) {
      atomicOr(control + control_bad(SEGSORT_MAX_LEVELS, level), 1u);
      atomicOr(status, (unsigned long long)twophase::STATUS_ORDER_INCONSISTENT);
    }
  }
}

// Phase 2 of level `level`: every tile of its work list rewritten into its other buffer: its
// outputs inside the straddle merged (NT threads, VT outputs each, through shared memory as the
// mergesort's pass tiles), the rest copied. The grid strides over the list.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_segsort_merge(key_type* keys, key_type* scratch_keys, value_type* vals, value_type* scratch_vals,
                           size_type count, const unsigned long long* masks, const size_type* straddles,
                           const unsigned* control, const unsigned* list, const size_type* partitions,
                           unsigned long long* status, unsigned level) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int warp_walk_starts[CHECK_ORDER ? NT / twophase::WARP_THREADS : 1];
  if (segments_invalid(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  const bool bad_level = CHECK_ORDER && control[control_bad(SEGSORT_MAX_LEVELS, level)] != 0;
  const twophase::input_check check = {status, nullptr, 0};
  const located<key_type> all_keys = {keys, scratch_keys, masks, level};
  const located<value_type> all_vals = {vals, scratch_vals, masks, level};
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  const int tid = threadIdx.x;
  for (size_type e = blockIdx.x; e < listed; e += gridDim.x) {
    const size_type tile = list[e];
    const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
    const unsigned long long mask = masks[tile];
    const bool from_scratch = (__popcll(mask >> level) & 1) != 0;
    key_type* out_keys = from_scratch ? keys : scratch_keys;
    value_type* out_vals = from_scratch ? vals : scratch_vals;
    const key_image_out image_out = {(mask >> level) == 1};
    const straddle s = tile_straddle(straddles, tile, level);
    const tile_merge m(tile, count, s, partitions);
    // The tile's outputs outside the straddle keep their keys (and values).
    const key_type* in_keys = from_scratch ? scratch_keys : keys;
    const value_type* in_vals = from_scratch ? scratch_vals : vals;
    for (size_type pos = t0 + tid; pos < t1; pos += NT) {
      if (pos < m.m0 || pos >= m.m1 || bad_level) {
        out_keys[pos] = image_out(in_keys[pos]);
        if (TP_HAS_VALUES) out_vals[pos] = in_vals[pos];
      }
    }
    if (bad_level) continue;
    const int tile_cnt = (int)(m.m1 - m.m0);
    const int a_cnt = (int)(m.a1 - m.a0);
    const int b_cnt = tile_cnt - a_cnt;
    __syncthreads();  // the previous tile's last reads of shared memory
    const span_reader<key_type> a_keys(all_keys, m.a0, m.a1), b_keys(all_keys, m.b0, m.b0 + b_cnt);
    if constexpr (TP_HAS_VALUES) {
      // Pairs: one key at a time (the registers of VT keys in flight cost the pairs tile half its
      // blocks: 128 registers a thread).
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) keys_shared[idx] = idx < a_cnt ? a_keys[m.a0 + idx] : b_keys[m.b0 + (idx - a_cnt)];
      }
    } else {
      // Every load issued before any store to shared memory, to keep VT loads in flight a thread.
      key_type loaded[VT];
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) loaded[i] = idx < a_cnt ? a_keys[m.a0 + idx] : b_keys[m.b0 + (idx - a_cnt)];
      }
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) keys_shared[idx] = loaded[i];
      }
    }
    __syncthreads();
    const int diag = min(VT * tid, tile_cnt);
    const int mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt,
                                                                      diag, key_compare());
    if (CHECK_ORDER) twophase::publish_walk_start(warp_walk_starts, mp);
    twophase::merge_range range = {mp, a_cnt, a_cnt + diag - mp, tile_cnt};
    key_type merged[VT];
    int sources[VT];
    if (range.total() > 0) {
      twophase::serial_merge<twophase::bounds_lower, VT, true>(keys_shared, range, key_compare(), merged, sources);
    }
    bool unmerged = false;
    if (CHECK_ORDER) {
      const bool has_next = VT * (tid + 1) < tile_cnt;
      unmerged = !twophase::walks_tile_exactly(warp_walk_starts, mp, range.a_begin, has_next);
    }
    if (unmerged) {
      // The walks did not tile the merge (an inconsistent comparator): A then B as they are.
      if (tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
      for (int idx = tid; idx < tile_cnt; idx += NT) {
        const size_type src = idx < a_cnt ? m.a0 + idx : m.b0 + (idx - a_cnt);
        out_keys[m.m0 + idx] = image_out(all_keys[src]);
        if (TP_HAS_VALUES) out_vals[m.m0 + idx] = all_vals[src];
      }
      continue;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (VT * tid + i < tile_cnt) keys_shared[VT * tid + i] = image_out(merged[i]);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (idx < tile_cnt) out_keys[m.m0 + idx] = keys_shared[idx];
    }
    if (TP_HAS_VALUES) {
      int* sources_shared = reinterpret_cast<int*>(smem);
      const span_reader<value_type> a_vals(all_vals, m.a0, m.a1), b_vals(all_vals, m.b0, m.b0 + b_cnt);
      __syncthreads();
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        if (VT * tid + i < tile_cnt) sources_shared[VT * tid + i] = sources[i];
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) {
          const int src = sources_shared[idx];
          out_vals[m.m0 + idx] = src < a_cnt ? a_vals[m.a0 + src] : b_vals[m.b0 + (src - a_cnt)];
        }
      }
    }
  }
}
