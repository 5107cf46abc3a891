//! One tile of a merge per CTA: load to shared, per-thread merge path, serial merge, coalesced store.
#pragma once

namespace twophase {

// Load the tile's inputs to shared memory, the A range then the B range, in strided order so that
// consecutive threads read consecutive addresses. All VT loads are issued before any store to
// shared memory, to keep VT loads in flight per thread. Ends with a barrier.
template <int NT, int VT, bool checked, typename key_t>
__device__ __forceinline__ void load_tile(const key_t* __restrict__ a, size_type a0, int a_cnt,
                                          const key_t* __restrict__ b, size_type b0, int tile_cnt,
                                          key_t* keys_shared, int tid) {
  key_t x[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) x[i] = idx < a_cnt ? a[a0 + idx] : b[b0 + (idx - a_cnt)];
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) keys_shared[idx] = x[i];
  }
  __syncthreads();
}

// Write VT register items per thread (thread order: thread t holds outputs VT*t .. VT*t+VT-1) to
// global memory through shared memory, so that the global writes are strided and coalesced.
// Starts and ends with a barrier so that `shared` may be reused around it.
template <int NT, int VT, bool checked, typename T>
__device__ __forceinline__ void store_through_shared(const T (&x)[VT], T* shared, T* __restrict__ out, int count,
                                                     int tid) {
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) shared[VT * tid + i] = x[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < count) out[idx] = shared[idx];
  }
}

// Whether any adjacent pair of this thread's strided items of A (tile positions [0, a_cnt)) or of
// B ([a_cnt, tile_cnt)) is out of order under `comp`; thread 0 also checks each range's first key
// against the key before it in global memory. Raises the statuses in `check`.
template <int NT, int VT, bool checked, typename key_t, typename comp_t>
__device__ __forceinline__ void check_sorted_ranges(const key_t* keys_shared, const key_t* __restrict__ a,
                                                    size_type a0, int a_cnt, const key_t* __restrict__ b,
                                                    size_type b0, int tile_cnt, const input_check& check,
                                                    comp_t comp) {
  const int tid = threadIdx.x;
  bool a_bad = false, b_bad = false;
  // Rolled: unrolled, ptxas hoisted its 2 VT shared loads and spent 19 more registers on them,
  // a block less an SM (4-byte keys at 384 threads: 75 against 56 registers, 3 -> 2 blocks).
#pragma unroll 1
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if ((!checked || idx < tile_cnt) && idx > 0 && idx != a_cnt) {
      const bool inverted = comp(keys_shared[idx], keys_shared[idx - 1]);
      if (idx < a_cnt) {
        a_bad |= inverted;
      } else {
        b_bad |= inverted;
      }
    }
  }
  if (tid == 0) {
    if (a_cnt > 0 && a0 > 0) a_bad |= comp(keys_shared[0], a[a0 - 1]);
    if (tile_cnt > a_cnt && b0 > 0) b_bad |= comp(keys_shared[a_cnt], b[b0 - 1]);
  }
  if (a_bad) raise_status(check, STATUS_FIRST_UNSORTED);
  if (b_bad) raise_status(check, STATUS_SECOND_UNSORTED);
}

// Merge one tile: outputs [diag0, diag0 + tile_cnt) of the whole merge, from a[a0, a0 + a_cnt) and
// b[b0, b0 + tile_cnt - a_cnt) (0 <= a_cnt <= tile_cnt: the caller's ranges are valid). `checked`
// is the form for a partial (last) tile. With HAS_VALUES, values are gathered from global memory by
// each output's source index (stable: Lower bounds). `smem` holds max(NV + 1 keys, NV ints).
// What the tile verifies of its input:
// - CHECK_SORTED: every adjacent pair of A and of B in the tile (and the pair straddling the
//   tile's start) is in order, else STATUS_FIRST_UNSORTED / STATUS_SECOND_UNSORTED (the
//   user-facing merge, whose inputs nothing else sorted);
// - CHECK_WALKS: the threads' serial walks tiled the merge exactly, else the tile's output is A
//   then B unmerged (a permutation) and WALK_STATUS is raised (skipped in a sort whose
//   comparator is trusted: its runs are its own, sorted).
template <int NT, int VT, bool checked, bool HAS_VALUES, bool CHECK_SORTED, bool CHECK_WALKS, unsigned WALK_STATUS,
          typename key_t, typename value_t, typename comp_t>
__device__ __forceinline__ void cta_merge(const key_t* __restrict__ a, const key_t* __restrict__ b,
                                          key_t* __restrict__ out, const value_t* __restrict__ a_vals,
                                          const value_t* __restrict__ b_vals, value_t* __restrict__ out_vals,
                                          size_type a0, size_type b0, size_type diag0, int a_cnt, int tile_cnt,
                                          unsigned char* smem, const input_check& check, comp_t comp) {
  const int tid = threadIdx.x;
  key_t* keys_shared = reinterpret_cast<key_t*>(smem);
  load_tile<NT, VT, checked>(a, a0, a_cnt, b, b0, tile_cnt, keys_shared, tid);
  if (CHECK_SORTED) check_sorted_ranges<NT, VT, checked>(keys_shared, a, a0, a_cnt, b, b0, tile_cnt, check, comp);

  // Phase 1 inside the tile: this thread's merge path at its diagonal, 32-bit indices.
  const int diag = min(VT * tid, tile_cnt);
  const int b_cnt = tile_cnt - a_cnt;
  const int mp = merge_path<bounds_lower, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt, diag, comp);
  merge_range range = {mp, a_cnt, a_cnt + diag - mp, tile_cnt};
  const int next_start =
      CHECK_WALKS ? next_walk_start<VT>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt, diag, mp, comp) : 0;

  // Phase 2: VT outputs in registers.
  key_t keys[VT];
  int indices[VT];
  serial_merge<bounds_lower, VT, checked>(keys_shared, range, comp, keys, indices);
  if (CHECK_WALKS && !walks_tile_exactly(next_start, range.a_begin, VT * (tid + 1) < tile_cnt)) {
    concatenate<VT, checked>(keys_shared, 0, a_cnt, a_cnt, diag, tile_cnt - diag, keys, indices);
    if (tid == 0) raise_status(check, WALK_STATUS);
  }

  store_through_shared<NT, VT, checked>(keys, keys_shared, out + diag0, tile_cnt, tid);

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
