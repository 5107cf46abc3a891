//! The mergesort's four-way pass partition kernel: one cut per quad tile, on the two-way samples.
// Part of the mergesort program, after mergesort_quad_partition.cuh.

#if TP_QUAD_NT > 0
// Phase 1 of a four-way pass: cuts[3p .. 3p + 3) = (x, a, c), the cut of output position
// min(p * spacing, count) inside its quad (twophase_partition::quad_cut): a keys from R0, x - a
// from R1, c from R2, the rest from R3, found by quad_cut_search on the two-way partitions of the
// same input (`partitions`, every `spacing` outputs). Each cut is searched by a group of `lanes`
// lanes of one warp (a power of two up to 32): where the cuts are too few to keep the memory
// system busy, the chain's length is the kernel's time and more lanes shorten it, while where
// they are many the kernel is bound by the scattered loads themselves and one lane is best (the
// host picks, MergesortTuning::quad_cut_lanes).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_quad_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                      const size_type* __restrict__ partitions, size_type spacing,
                                      size_type num_cuts, int lanes, size_type* __restrict__ cuts,
                                      unsigned* arrivals, unsigned long long* status, const unsigned* guard,
                                      unsigned long long* samples_repair, unsigned long long* cuts_repair,
                                      unsigned generation) {
  static_assert(TP_PARTITION_NT % 32 == 0, "cut groups must not straddle warps");
  if (!follow_previous_kernel(guard)) return;
  const twophase::input_check samples_check = {status, samples_repair, generation};
  const quad_samples samples(partitions, spacing, count, run, samples_check);
  const int shift = __ffs(lanes) - 1;  // lanes = 2^shift
  const unsigned reciprocal = 0xffffffffu / (unsigned)(lanes + 1);
  const int group_index = threadIdx.x >> shift, groups = blockDim.x >> shift;
  const size_type p = ((size_type)blockIdx.x * blockDim.x + threadIdx.x) >> shift;
  const int lane = threadIdx.x & (lanes - 1);
  const size_type pos = min(p * spacing, count);
  const mergesort_quad quad(count, run, pos);
  const size_type diag = pos - quad.starts[0];
  size_type counts[4] = {0, 0, 0, 0};
  if (p < num_cuts) {  // the whole group: its lanes share p
    quad_cut_search(keys, samples, quad, diag, lanes, lane, reciprocal, samples_check, counts);
    if (lane == 0) {
      cuts[3 * p] = counts[0] + counts[1];
      cuts[3 * p + 1] = counts[0];
      cuts[3 * p + 2] = counts[2];
    }
  }
  if constexpr (CHECK_ORDER) {
    // Each cut against the one before it in the same quad, every run's count not decreasing:
    // inside a block from shared memory, across blocks from the stored cuts.
    const twophase::input_check cuts_check = {status, cuts_repair, generation};
    const auto check_step = [&](size_type q, const size_type* before, const size_type* at) {
      const size_type prev_pos = min((q - 1) * spacing, count), at_pos = min(q * spacing, count);
      bool monotone = mergesort_quad(count, run, prev_pos).starts[0] != mergesort_quad(count, run, at_pos).starts[0];
      if (!monotone) {
        monotone = true;
#pragma unroll
        for (int k = 0; k < 4; ++k) monotone &= before[k] <= at[k];
      }
      if (!monotone) {
        twophase::report_bad_boundary(cuts_check, q - 1);
        twophase::raise_status(cuts_check, twophase::STATUS_ORDER_INCONSISTENT);
      }
    };
    __shared__ size_type block_counts[TP_PARTITION_NT][4];
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < 4; ++k) block_counts[group_index][k] = counts[k];
    }
    __syncthreads();
    if (lane == 0 && group_index > 0 && p < num_cuts) check_step(p, block_counts[group_index - 1], counts);
    twophase::check_pairs_across_blocks<TP_PARTITION_NT>(num_cuts, groups, arrivals, [&](size_type first) {
      size_type stored[2][4];
#pragma unroll
      for (int side = 0; side < 2; ++side) {
        // Cut q stores (x, a, c) of its quad's diagonal: counts a, x - a, c and the rest.
        const size_type q = first - 1 + side, q_pos = min(q * spacing, count);
        const volatile size_type* cut = cuts + 3 * q;
        const size_type diag_q = q_pos - mergesort_quad(count, run, q_pos).starts[0];
        stored[side][0] = cut[1];
        stored[side][1] = cut[0] - cut[1];
        stored[side][2] = cut[2];
        stored[side][3] = diag_q - cut[0] - cut[2];
      }
      check_step(first, stored[0], stored[1]);
    });
  }
}
#endif  // TP_QUAD_NT > 0
