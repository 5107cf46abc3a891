//! The mergesort's two-way merge pass: the partition kernel (pass boundaries) and the tile kernel.
// Part of the mergesort program, after mergesort_blocksort.cu and mergesort_partition.cuh.

// Phase 1 of a merge pass: partitions[p] = pass_boundary at output min(p * spacing, count), one
// group of `lanes` lanes a boundary (the host picks them, MergesortTuning::boundary_search_lanes),
// each boundary searched once. With CHECK_ORDER every adjacent pair of stored boundaries inside
// one pair of runs is checked (inside a block from shared memory, across blocks by the block that
// arrives last, twophase::check_pairs_across_blocks): a pair out of order (the comparator answered
// inconsistently) goes to the repair slot, which the tile kernel follows.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                 size_type spacing, size_type num_partitions, int lanes,
                                 size_type* __restrict__ partitions, unsigned* arrivals, unsigned long long* status,
                                 const unsigned* guard, unsigned long long* repair, unsigned generation) {
  static_assert(TP_PARTITION_NT % 32 == 0, "search groups must not straddle warps");
  if (!follow_previous_kernel(guard)) return;
  const int shift = __ffs(lanes) - 1;  // lanes = 2^shift
  const int group = threadIdx.x >> shift, groups = blockDim.x >> shift;
  const bool leader = (threadIdx.x & (lanes - 1)) == 0;
  const size_type p = ((size_type)blockIdx.x * blockDim.x + threadIdx.x) >> shift;
  const size_type pos = min(p * spacing, count);
  size_type boundary = 0;
  if (p < num_partitions) {  // the whole group: its lanes share p
    boundary = pass_boundary(keys, count, run, pos, lanes);
    if (leader) partitions[p] = boundary;
  }
  if constexpr (CHECK_ORDER) {
    const twophase::input_check check = {status, repair, generation};
    // The pair (q - 1, q) of boundaries with paths `before` and `at`: reported when both lie in
    // one pair of runs and the step between them is not monotone.
    const auto check_step = [&](size_type q, size_type before, size_type at) {
      const size_type prev_pos = min((q - 1) * spacing, count), at_pos = min(q * spacing, count);
      const bool same_pair = mergesort_pair(count, run, prev_pos).a_begin == mergesort_pair(count, run, at_pos).a_begin;
      if (same_pair && !twophase::monotone_step(before, prev_pos, at, at_pos)) {
        twophase::report_bad_boundary(check, q - 1);
        twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
      }
    };
    __shared__ size_type boundaries[TP_PARTITION_NT];
    if (leader) boundaries[group] = boundary;
    __syncthreads();
    if (leader && group > 0 && p < num_partitions) check_step(p, boundaries[group - 1], boundary);
    twophase::check_pairs_across_blocks<TP_PARTITION_NT>(num_partitions, groups, arrivals, [&](size_type first) {
      check_step(first, *(volatile const size_type*)(partitions + first - 1),
                 *(volatile const size_type*)(partitions + first));
    });
  }
}

// A checked pass's records of the boundaries its tile blocks found themselves (the host records
// only small sorts, so 32-bit positions): tile t writes its start at slot 2t + 1 and its end at
// slot 2t + 2, so that the two sides of boundary b (tile b - 1's end, tile b's start) share the
// 8 bytes at slot 2b.
__device__ __forceinline__ void record_tile_ends(unsigned* ends, size_type tile, size_type a0, size_type a1) {
  ends[2 * tile + 1] = (unsigned)a0;
  ends[2 * tile + 2] = (unsigned)a1;
}

// Whether, among the records of the pass before (`prior_ends`, record_tile_ends), this thread's
// share shows two neighbours that disagree on the boundary they both searched, so that that
// pass's output is not a permutation of its input. That pass merged runs of run / 2, so its pairs
// are this pass's runs, run / NV tiles each; a tile that starts a pair has no neighbour to agree
// with. The threads from `first_thread` on read the records, all of them in every block (so the
// host records only passes of few tiles, CHECKED_OWN_MAX_TILES); the block combines the answers
// at its next barrier.
template <int NT, int NV>
__device__ __forceinline__ bool prior_tiles_disagree(const unsigned* prior_ends, size_type count, size_type run,
                                                     int first_thread) {
  if ((int)threadIdx.x < first_thread) return false;
  const unsigned long long* sides = reinterpret_cast<const unsigned long long*>(prior_ends);
  const unsigned tiles = (unsigned)((count + NV - 1) / NV);
  const unsigned tiles_per_pair = (unsigned)(run / NV);
  bool disagree = false;
  for (unsigned b = 1 + threadIdx.x - first_thread; b < tiles; b += NT - first_thread) {
    if (b % tiles_per_pair != 0) {
      const unsigned long long side = sides[b];  // one 8-byte load for both sides
      disagree |= (unsigned)side != (unsigned)(side >> 32);
    }
  }
  return disagree;
}

// Phase 2 of a merge pass: tile t merges outputs [t * NV, min((t + 1) * NV, count)) of its pair of
// runs from `src` into `dst` (twophase_partition::mergesort_tile), values gathered alongside.
// Without `partitions` (null) the block finds its own two boundaries first, a warp each by
// pass_boundary: in a small sort that saves the partition kernel's launch, the sort's
// bottleneck there, for one 32-ary search a block.
//
// With CHECK_ORDER each boundary so found is searched twice (by the tiles on both sides of it),
// and a comparator that is not a strict weak order can make the two searches differ, which would
// lose one key and repeat another. So such a pass records the boundaries each tile merged from in
// `ends`, and the pass after it (the host lets only a two-way pass follow one) checks them all in
// every block before it merges (`prior_ends`). Where two neighbours disagree, it raises
// STATUS_ORDER_INCONSISTENT and merges nothing: its output buffer is the failed pass's input, a
// permutation, and stays as it is; it records agreeing ends, so the pass after it goes on.
// RECORDS: whether `ends` and `prior_ends` are read at all (twophase_mergesort_tile_recorded).
template <bool RECORDS>
__device__ __forceinline__ void mergesort_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                               const size_type* __restrict__ partitions, key_type* __restrict__ dst,
                                               const value_type* __restrict__ vals_src,
                                               value_type* __restrict__ vals_dst, unsigned long long* status,
                                               const unsigned* guard, unsigned long long* repair, unsigned generation,
                                               unsigned image_out, size_type first_tile, unsigned* ends_arg,
                                               const unsigned* prior_ends_arg) {
  // Known null at compile time in the plain kernel, so that its code is the same as without records.
  unsigned* const ends = RECORDS ? ends_arg : nullptr;
  const unsigned* const prior_ends = RECORDS ? prior_ends_arg : nullptr;
  constexpr int NT = TP_PASS_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  __shared__ __align__(16) unsigned char smem[pass_smem<NV>::BYTES];
  static_assert(pass_smem<NV>::BYTES <= 48 * 1024, "tile too large for static shared memory");
  if (!follow_previous_kernel(guard)) return;
  const twophase::input_check check = {status, repair, generation};
  // A launch may merge a range of the pass's tiles (the last pass split by output range).
  const size_type tile = first_tile + blockIdx.x;
  const size_type diag0 = tile * NV;
  const size_type diag1 = min(diag0 + NV, count);
  const key_image_out map_out = {image_out != 0};
  const mergesort_pair pair(count, run, diag0);
  // Where the pass before recorded its boundaries and its tiles disagreed: STATUS_ORDER_INCONSISTENT,
  // and `dst` (the failed pass's input) stays as it is (only checked orders get here, and none of
  // them maps keys to images); agreeing ends recorded for the pass after.
  static_assert(!(CHECK_ORDER && TP_KEY_IMAGE), "key images are for trusted orders");
  const auto skip_failed_pass = [&] {
    if (tile == 0 && threadIdx.x == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
    if (ends != nullptr && threadIdx.x == 0) record_tile_ends(ends, tile, 0, 0);
  };
  size_type a0, a1;
  if (partitions != nullptr) {
    if (CHECK_ORDER && prior_ends != nullptr &&
        __syncthreads_or(prior_tiles_disagree<NT, NV>(prior_ends, count, run, 0))) {
      skip_failed_pass();
      return;
    }
    a0 = partitions[tile];
    a1 = partitions[tile + 1];
    if constexpr (CHECK_ORDER) {
      const size_type bad = twophase::first_bad_boundary(check);
      if (bad != twophase::NO_BAD_BOUNDARY) {
        const size_type bad_path = partitions[bad], bad_pos = min(bad * NV, count);
        a0 = repaired_pass_boundary(count, run, tile, a0, diag0, bad, bad_path, bad_pos);
        a1 = repaired_pass_boundary(count, run, tile + 1, a1, diag1, bad, bad_path, bad_pos);
      }
    }
  } else {
    // With a trusted comparator, or with one checked through `ends` (above). The warps that
    // search leave the pass before's records to the others, where there are others.
    static_assert(NT % 32 == 0, "the boundary searches take whole warps");
    constexpr int SEARCH_THREADS = 2 * 32;
    constexpr int CHECK_FROM = NT > SEARCH_THREADS ? SEARCH_THREADS : 0;
    const bool disagree =
        CHECK_ORDER && prior_ends != nullptr && prior_tiles_disagree<NT, NV>(prior_ends, count, run, CHECK_FROM);
    size_type* bounds = reinterpret_cast<size_type*>(smem);
    for (int which = threadIdx.x / 32; which < 2; which += NT / 32) {
      const size_type boundary = pass_boundary(src, count, run, which == 0 ? diag0 : diag1, 32);
      if (threadIdx.x % 32 == 0) bounds[which] = boundary;
    }
    if (__syncthreads_or(disagree)) {
      skip_failed_pass();
      return;
    }
    a0 = bounds[0];
    a1 = bounds[1];
    __syncthreads();  // cta_merge reuses the shared memory
  }
  // A boundary at the end of a pair is stored as the next pair's start; this tile ends its pair.
  if (diag1 == pair.b_end) a1 = pair.a_end;
  if constexpr (CHECK_ORDER) {
    a1 = twophase::clamped_tile_end(a0, a1, diag1 - diag0);
    if (ends != nullptr && threadIdx.x == 0) record_tile_ends(ends, tile, a0, a1);
  }
  const size_type b0 = pair.a_end + (diag0 - pair.a_begin) - (a0 - pair.a_begin);
  const int a_cnt = (int)(a1 - a0);
  const int tile_cnt = (int)(diag1 - diag0);
  constexpr unsigned WALK_STATUS = twophase::STATUS_ORDER_INCONSISTENT;
  if (tile_cnt == NV) {
    twophase::cta_merge<NT, VT, false, TP_HAS_VALUES, false, CHECK_ORDER, WALK_STATUS>(
        src, src, dst, vals_src, vals_src, vals_dst, a0, b0, diag0, a_cnt, tile_cnt, smem, check, key_compare(),
        map_out);
  } else {
    twophase::cta_merge<NT, VT, true, TP_HAS_VALUES, false, CHECK_ORDER, WALK_STATUS>(
        src, src, dst, vals_src, vals_src, vals_dst, a0, b0, diag0, a_cnt, tile_cnt, smem, check, key_compare(),
        map_out);
  }
}

// The two-way tile's launch bounds: with MergesortTuning::pass_registers, the blocks that must fit
// on an SM by registers (ptxas uses as many registers as the bounds allow); without, the threads
// alone, which leave ptxas its own choice (a minimum of one block would let it take 255).
#if TP_PASS_REGISTERS > 0
#define PASS_LAUNCH_BOUNDS \
  __launch_bounds__(TP_PASS_NT, twophase::blocks_by_registers(TP_PASS_REGISTERS, TP_PASS_NT))
#else
#define PASS_LAUNCH_BOUNDS __launch_bounds__(TP_PASS_NT)
#endif

// The tile kernel of every pass that neither records its boundaries nor checks the records of the
// pass before: the same code as before records existed, so that ptxas allocates its registers as
// it did (with the record paths in it the checked u32 tile took 96 registers against 64, five
// blocks an SM against eight, and sorts of 2^22 keys 5-10% longer; H200).
extern "C" __global__ void PASS_LAUNCH_BOUNDS
    twophase_mergesort_tile(const key_type* __restrict__ src, size_type count, size_type run,
                            const size_type* __restrict__ partitions, key_type* __restrict__ dst,
                            const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                            unsigned long long* status, const unsigned* guard, unsigned long long* repair,
                            unsigned generation, unsigned image_out, size_type first_tile, unsigned* ends,
                            const unsigned* prior_ends) {
  mergesort_tile<false>(src, count, run, partitions, dst, vals_src, vals_dst, status, guard, repair, generation,
                        image_out, first_tile, ends, prior_ends);
}

// The tile kernel of a checked pass that records its boundaries or checks the records of the pass
// before (small sorts only). Only checked programs use it; in the others it compiles to nothing.
extern "C" __global__ void PASS_LAUNCH_BOUNDS
    twophase_mergesort_tile_recorded(const key_type* __restrict__ src, size_type count, size_type run,
                                     const size_type* __restrict__ partitions, key_type* __restrict__ dst,
                                     const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                     unsigned long long* status, const unsigned* guard, unsigned long long* repair,
                                     unsigned generation, unsigned image_out, size_type first_tile, unsigned* ends,
                                     const unsigned* prior_ends) {
  if constexpr (CHECK_ORDER) {
    mergesort_tile<true>(src, count, run, partitions, dst, vals_src, vals_dst, status, guard, repair, generation,
                         image_out, first_tile, ends, prior_ends);
  }
}
