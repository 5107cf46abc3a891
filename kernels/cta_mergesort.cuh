//! Block sort for the mergesort: VT-register sorts, then in-tile merge levels through shared memory.
#pragma once

namespace twophase {

// Sort one tile of `count` keys (count <= NT * VT) held in registers in thread order (thread t
// holds tile positions VT*t .. VT*t + VT - 1), carrying each key's tile position in `ids`:
// a stable sort of each thread's VT keys (for keys alone whose equivalents are identical, a
// sorting network; for other keys alone, stable_slot_sort through the thread's slots of
// `keys_shared`; else, and in a partial tile, the odd-even transposition sort), then log2(NT)
// merge levels, each
// doubling the sorted runs by merging pairs of runs in `keys_shared` (NT * VT + 1 keys) and
// permuting `ids` through `ids_shared` (NT * VT ints; unused when !TRACK_IDS).
// Positions past `count` act as +infinity: they never move before a real key.
// With CHECK_WALKS (a comparator that is not trusted), each merge level checks that the threads'
// walks tiled every pair of runs exactly (twophase::walks_tile_exactly; each walk's end against
// the next walk's start, passed down the warp and, once pairs span warps, through a shared slot a
// warp); where they did not, that level concatenates each pair instead and raises
// STATUS_ORDER_INCONSISTENT: the tile stays a permutation of its keys whatever `comp` answers.
// (The register sorts only exchange keys, so they are permutations by construction.)
template <int NT, int VT, bool checked, bool TRACK_IDS, bool CHECK_WALKS, typename key_t, typename comp_t>
__device__ __forceinline__ void cta_sort(key_t (&keys)[VT], int (&ids)[VT], int count, key_t* keys_shared,
                                         int* ids_shared, const input_check& check, comp_t comp) {
  const int tid = threadIdx.x;
  const int first = VT * tid;
  const int valid = checked ? max(0, min(VT, count - first)) : VT;
  // With CHECK_WALKS: each warp's first walk start of the current merge level (publish_walk_start).
  __shared__ int warp_walk_starts[CHECK_WALKS ? NT / WARP_THREADS : 1];
  // Full tiles of keys alone whose equivalents are identical: stability is unobservable, so the
  // cheaper unstable network does (the merge levels below stay stable either way).
  if constexpr (!checked && !TRACK_IDS && comp_t::equivalents_identical) {
    network_sort<VT>(keys, comp);
  } else if constexpr (!checked && !TRACK_IDS) {
    // Keys alone whose equivalents may differ: stable, through the thread's own slots (no other
    // thread reads them before the first level's barrier).
    stable_slot_sort<VT>(keys, keys_shared + first, comp);
  } else {
    serial_sort<VT>(keys, ids, valid, comp);
  }

#pragma unroll 1
  for (int coop = 2; coop <= NT; coop *= 2) {
    // Runs of VT * coop / 2 keys are sorted; merge each pair of them.
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      keys_shared[first + i] = keys[i];
      if (TRACK_IDS) ids_shared[first + i] = ids[i];
    }
    __syncthreads();
    const int run = VT * coop / 2;
    // The pair's first thread is this thread rounded down to a multiple of coop (a power of
    // two); the run length VT * coop / 2 itself need not be one.
    const int a_begin = VT * (tid & ~(coop - 1));
    const int a_end = checked ? min(a_begin + run, count) : a_begin + run;
    const int b_end = checked ? min(a_begin + 2 * run, count) : a_begin + 2 * run;
    const int pair_count = b_end - a_begin;
    const int diag = min(first - a_begin, max(pair_count, 0));
    const int a_cnt = max(a_end - a_begin, 0);
    const int b_cnt = max(b_end - a_end, 0);
    const int mp = merge_path<bounds_lower, int>(keys_shared + a_begin, a_cnt, keys_shared + a_begin + a_cnt, b_cnt,
                                                 diag, comp);
    merge_range range = {a_begin + mp, a_begin + a_cnt, a_begin + a_cnt + diag - mp, a_begin + a_cnt + b_cnt};
    // Where this walk starts (tile position), for the walk check of the thread before it.
    const int start = a_begin + mp;
    if (CHECK_WALKS) publish_walk_start(warp_walk_starts, start);
    int sources[VT];
    if (checked) {
      // Threads past the end keep their (+infinity) registers as they are.
      if (range.total() > 0) serial_merge<bounds_lower, VT, true>(keys_shared, range, comp, keys, sources);
    } else {
      serial_merge<bounds_lower, VT, false>(keys_shared, range, comp, keys, sources);
    }
    if constexpr (CHECK_WALKS) {
      // The next thread walks the same pair when it is not the first of a pair, and has outputs.
      // Its start: from the next lane, or, for lane 31 (whose next thread shares its pair only
      // once pairs span warps), from the next warp's slot, visible after one more barrier.
      const bool has_next = ((tid + 1) & (coop - 1)) != 0 && first + VT < a_begin + pair_count;
      if (!walks_tile_exactly(warp_walk_starts, start, range.a_begin, has_next, coop > WARP_THREADS)) {
        if (!checked || diag < pair_count) {
          concatenate<VT, checked>(keys_shared, a_begin, a_cnt, a_begin + a_cnt, diag, pair_count - diag, keys,
                                   sources);
        }
        if (tid == 0) raise_status(check, STATUS_ORDER_INCONSISTENT);
      }
    }
    if (TRACK_IDS) {
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        if (!checked || first + i < count) ids[i] = ids_shared[sources[i]];
      }
    }
  }
}

}  // namespace twophase
