//! One tile of a merge per CTA: load to shared, per-thread merge path, serial merge, coalesced store.
#pragma once

namespace twophase {

// Load the tile's inputs to shared memory, the A range then the B range, in strided order so that
// consecutive threads read consecutive addresses. All VT loads are issued before any store to
// shared memory, to keep VT loads in flight per thread. With `predecessors` (two slots of shared
// memory), thread 0 also loads the key before the tile's start of each input there (A's to slot 0,
// B's to slot 1; left alone where the input starts at the tile), in the same batch, for
// tile_start_unsorted: the order check of the pairs across the tile's start costs no load
// latency of its own. Ends with a barrier. REBASED: each load selects one of two per-thread
// addresses (fewer instructions; the sorted search's tile, whose indexed loads spilled at its 64
// registers), else it indexes its input (two fewer live registers: the merge tile at 40
// registers spilled 48 bytes with the rebased addresses).
template <int NT, int VT, bool checked, bool REBASED = false, typename key_t>
__device__ __forceinline__ void load_tile(const key_t* __restrict__ a, size_type a0, int a_cnt,
                                          const key_t* __restrict__ b, size_type b0, int tile_cnt,
                                          key_t* keys_shared, int tid, key_t* predecessors = nullptr) {
  const bool a_before = predecessors != nullptr && tid == 0 && a_cnt > 0 && a0 > 0;
  const bool b_before = predecessors != nullptr && tid == 0 && tile_cnt > a_cnt && b0 > 0;
  key_t a_prev, b_prev;
  if (a_before) a_prev = a[a0 - 1];
  if (b_before) b_prev = b[b0 - 1];
  key_t x[VT];
  if constexpr (REBASED) {
    // Each input's address of this thread's first slot, so that slot NT * i + tid reads that
    // address plus NT * i keys (an immediate offset): a select of two addresses a load, where
    // indexing each input takes two 64-bit address computations (moderngpu rebases B the same
    // way). B's is rebased by -a_cnt keys and may point before `b`: it is only read from at slots
    // past a_cnt, which lie inside B's range. The two addresses stay live through the loads.
    const key_t* a_slot = a + a0 + tid;
    const key_t* b_slot = b + ((long long)(b0 + tid) - a_cnt);
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) x[i] = (idx < a_cnt ? a_slot : b_slot)[NT * i];
    }
  } else {
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) x[i] = idx < a_cnt ? a[a0 + idx] : b[b0 + (idx - a_cnt)];
    }
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) keys_shared[idx] = x[i];
  }
  if (a_before) predecessors[0] = a_prev;
  if (b_before) predecessors[1] = b_prev;
  __syncthreads();
}

// The statuses of the pairs across the tile's start: each input's first key in the tile against
// the key before it (load_tile's `predecessors`), checked by thread 0: STATUS_FIRST_UNSORTED /
// STATUS_SECOND_UNSORTED.
template <typename key_t, typename comp_t>
__device__ __forceinline__ unsigned tile_start_unsorted(const key_t* keys_shared, const key_t* predecessors,
                                                        size_type a0, int a_cnt, size_type b0, int tile_cnt,
                                                        comp_t comp) {
  unsigned bits = 0;
  if (threadIdx.x == 0) {
    if (a_cnt > 0 && a0 > 0 && comp(keys_shared[0], predecessors[0])) bits |= STATUS_FIRST_UNSORTED;
    if (tile_cnt > a_cnt && b0 > 0 && comp(keys_shared[a_cnt], predecessors[1])) bits |= STATUS_SECOND_UNSORTED;
  }
  return bits;
}

// Write VT register items per thread (thread order: thread t holds outputs VT*t .. VT*t+VT-1) to
// global memory through shared memory, so that the global writes are strided and coalesced.
// Starts and ends with a barrier so that `shared` may be reused around it; `after_barrier` (the
// same in every thread) skips the first where every thread's last read of `shared` is already
// behind a barrier.
template <int NT, int VT, bool checked, typename T>
__device__ __forceinline__ void store_through_shared(const T (&x)[VT], T* shared, T* __restrict__ out, int count,
                                                     int tid, bool after_barrier = false) {
  if (!after_barrier) __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) shared[VT * tid + i] = x[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < count) out[idx] = shared[idx];
  }
}

// A tile's inputs in global memory, indexed by tile position as the tile holds them in shared
// memory: A's a_cnt keys from `a`, then B's from `b` (both already offset to the tile's start).
template <typename T>
struct tile_inputs {
  const T* a;
  const T* b;
  int a_cnt;
  __device__ __forceinline__ T operator[](int i) const { return i < a_cnt ? a[i] : b[i - a_cnt]; }
};

// The statuses of the adjacent pairs of A (tile positions [0, a_cnt)) and of B ([a_cnt, tile_cnt))
// out of order under `comp`, over this thread's strided share of the tile: STATUS_FIRST_UNSORTED /
// STATUS_SECOND_UNSORTED. `keys_it` is indexable by tile position (shared memory, or tile_inputs
// in global memory). Rolled: it only runs where a cheaper check already failed.
template <int NT, typename keys_it, typename comp_t>
__device__ __forceinline__ unsigned tile_unsorted_inputs(keys_it keys, int a_cnt, int tile_cnt, comp_t comp) {
  unsigned bits = 0;
#pragma unroll 1
  for (int idx = threadIdx.x + 1; idx < tile_cnt; idx += NT) {
    if (idx != a_cnt && comp(keys[idx], keys[idx - 1])) {
      bits |= idx < a_cnt ? STATUS_FIRST_UNSORTED : STATUS_SECOND_UNSORTED;
    }
  }
  return bits;
}

// The inputs a thread's walk found out of order, once its outputs or the pairs across its start
// were (the rare path of cta_merge's CHECK_SORTED and of the sorted search's order check; a
// search walk takes keys as a merge does): the walk took A at tile positions
// [a_first, a_last) and B at [b_first, b_last). Every pair of each input among those positions,
// the pair before each and the pair after each is checked. A strict weak order merges sorted runs
// into sorted outputs, and a serial merge never takes a key before a smaller one of the other
// input; so when neither input has a pair out of order, the comparator is inconsistent.
template <typename key_t, typename comp_t>
__device__ __forceinline__ unsigned walk_inputs_unsorted(const key_t* keys_shared, int a_first, int a_last,
                                                         int b_first, int b_last, int a_cnt, int tile_cnt,
                                                         comp_t comp) {
  const unsigned bits = run_unsorted(keys_shared, a_first, a_last, 0, a_cnt, STATUS_FIRST_UNSORTED, comp) |
                        run_unsorted(keys_shared, b_first, b_last, a_cnt, tile_cnt, STATUS_SECOND_UNSORTED, comp);
  return bits != 0 ? bits : (unsigned)STATUS_ORDER_INCONSISTENT;
}

// The identity map of stored keys (cta_merge's default `out_map`).
struct same_key {
  template <typename key_t>
  __device__ __forceinline__ key_t operator()(const key_t& k) const {
    return k;
  }
};

// Merge one tile: outputs [diag0, diag0 + tile_cnt) of the whole merge, from a[a0, a0 + a_cnt) and
// b[b0, b0 + tile_cnt - a_cnt) (0 <= a_cnt <= tile_cnt: the caller's ranges are valid). `checked`
// is the form for a partial (last) tile. With HAS_VALUES, values are gathered from global memory by
// each output's source index (stable: Lower bounds). `smem` holds max(NV + 1 keys, NV ints).
// What the tile verifies of its input, at no extra shared memory reads and no extra barrier:
// - CHECK_WALKS: the threads' serial walks tiled the merge exactly: each walk ends where the next
//   thread's merge path starts (passed down the warp; across warps through one shared slot per
//   warp, read after the store's first barrier; decided at its second). Where they did not, the
//   tile's output is A then B unmerged (a permutation), copied from global memory, and
//   WALK_STATUS is raised (skipped in a sort whose comparator is trusted: its runs are its own,
//   sorted).
// - CHECK_SORTED (with CHECK_WALKS; the user-facing merge, whose inputs nothing else sorted):
//   every adjacent pair of A and of B is in order, else STATUS_FIRST_UNSORTED /
//   STATUS_SECOND_UNSORTED. Each thread compares its VT outputs in registers (sorted outputs of
//   exact walks hold each input's pairs inside the walk in order, under a strict weak order) and
//   the pair of each input across its walk's start; thread 0 the pairs across the tile's start,
//   from global memory. Only a failed check reads the inputs again to name the culprit.
// `out_map` maps each key as it is stored (the mergesort's last pass: back from the keys' integer
// image); the identity by default.
template <int NT, int VT, bool checked, bool HAS_VALUES, bool CHECK_SORTED, bool CHECK_WALKS, unsigned WALK_STATUS,
          typename key_t, typename value_t, typename comp_t, typename out_map_t = same_key>
__device__ __forceinline__ void cta_merge(const key_t* __restrict__ a, const key_t* __restrict__ b,
                                          key_t* __restrict__ out, const value_t* __restrict__ a_vals,
                                          const value_t* __restrict__ b_vals, value_t* __restrict__ out_vals,
                                          size_type a0, size_type b0, size_type diag0, int a_cnt, int tile_cnt,
                                          unsigned char* smem, const input_check& check, comp_t comp,
                                          out_map_t out_map = out_map_t()) {
  static_assert(!CHECK_SORTED || CHECK_WALKS, "the order check relies on exact walks");
  static_assert(NT % 32 == 0, "the walk check passes merge paths down whole warps");
  constexpr int WARPS = NT / 32;
  // The order check's compares of the outputs, in two independent chains: half the latency of
  // one chain; four made ptxas spill in the 512-thread pairs tile.
  constexpr int ORDER_CHAINS = 2;
  __shared__ int warp_walk_starts[CHECK_WALKS ? WARPS : 1];
  __shared__ key_t predecessors[2];
  const int tid = threadIdx.x;
  key_t* keys_shared = reinterpret_cast<key_t*>(smem);
  load_tile<NT, VT, checked>(a, a0, a_cnt, b, b0, tile_cnt, keys_shared, tid, CHECK_SORTED ? predecessors : nullptr);

  // Phase 1 inside the tile: this thread's merge path at its diagonal, 32-bit indices.
  const int diag = min(VT * tid, tile_cnt);
  const int b_cnt = tile_cnt - a_cnt;
  const int mp = merge_path<bounds_lower, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt, diag, comp);
  if (CHECK_WALKS) publish_walk_start(warp_walk_starts, mp);
  merge_range range = {mp, a_cnt, a_cnt + diag - mp, tile_cnt};

  // Phase 2: VT outputs in registers.
  key_t keys[VT];
  int indices[VT];
  serial_merge<bounds_lower, VT, checked>(keys_shared, range, comp, keys, indices);
  if (CHECK_SORTED) {
    const int produced = checked ? tile_cnt - diag : VT;
    // Independent chains of compares, so that they do not wait on each other.
    bool inverted[ORDER_CHAINS] = {};
#pragma unroll
    for (int i = 1; i < VT; ++i) {
      if (!checked || i < produced) inverted[i % ORDER_CHAINS] |= comp(keys[i], keys[i - 1]);
    }
    const int b_start = a_cnt + diag - mp;
    if (0 < mp && mp < a_cnt) inverted[0] |= comp(keys_shared[mp], keys_shared[mp - 1]);
    if (a_cnt < b_start && b_start < tile_cnt) inverted[1] |= comp(keys_shared[b_start], keys_shared[b_start - 1]);
    bool any_inverted = false;
#pragma unroll
    for (int c = 0; c < ORDER_CHAINS; ++c) any_inverted |= inverted[c];
    unsigned bits = tile_start_unsorted(keys_shared, predecessors, a0, a_cnt, b0, tile_cnt, comp);
    if (any_inverted) {
      bits |= walk_inputs_unsorted(keys_shared, mp, range.a_begin, b_start, range.b_begin, a_cnt, tile_cnt, comp);
    }
    if (bits) raise_status(check, bits);
  }
  const int next_in_warp = CHECK_WALKS ? walk_start_down_warp(mp) : 0;

  // Store through shared memory (thread order in, strided order out); its second barrier also
  // decides the walk check.
  __syncthreads();
  bool missed = false;
  if (CHECK_WALKS) {
    // The next thread walks the same merge and has outputs; the last thread never has a next.
    const bool has_next = VT * (tid + 1) < tile_cnt;
    if (has_next) missed = next_walk_start(warp_walk_starts, next_in_warp) != range.a_begin;
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) keys_shared[VT * tid + i] = out_map(keys[i]);
  bool unmerged = false;
  if (CHECK_WALKS) {
    unmerged = __syncthreads_or(missed) != 0;
  } else {
    __syncthreads();
  }

  if (unmerged) {
    // The walks did not tile the merge: A then B as they are, from global memory.
    const tile_inputs<key_t> inputs = {a + a0, b + b0, a_cnt};
#pragma unroll 1
    for (int idx = tid; idx < tile_cnt; idx += NT) out[diag0 + idx] = out_map(inputs[idx]);
    if (HAS_VALUES) {
      const tile_inputs<value_t> values = {a_vals + a0, b_vals + b0, a_cnt};
#pragma unroll 1
      for (int idx = tid; idx < tile_cnt; idx += NT) out_vals[diag0 + idx] = values[idx];
    }
    unsigned bits = tid == 0 ? (unsigned)WALK_STATUS : 0u;
    if (CHECK_SORTED) bits |= tile_unsorted_inputs<NT>(inputs, a_cnt, tile_cnt, comp);
    if (bits) raise_status(check, bits);
    return;
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) out[diag0 + idx] = keys_shared[idx];
  }

  if (HAS_VALUES) {
    int* indices_shared = reinterpret_cast<int*>(smem);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) indices_shared[VT * tid + i] = indices[i];
    __syncthreads();
    value_t v[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) {
        const int s = indices_shared[idx];
        v[i] = s < a_cnt ? a_vals[a0 + s] : b_vals[b0 + (s - a_cnt)];
      }
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) out_vals[diag0 + idx] = v[i];
    }
  }
}

}  // namespace twophase
