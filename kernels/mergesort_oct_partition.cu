//! The mergesort's eight-way pass partition kernel: one cut per octet tile, on the four-way cuts.
// Part of the mergesort program, after mergesort_quad_tile.cu. Only for twophase's own orders
// (strict weak orders by construction): the host plans eight-way passes only where the program
// compiles no order checks, and in a program that does, these kernels return at once.

#if TP_QUAD_NT > 0 && TP_OCT_NT > 0
// ---- Eight-way merge passes: three merge levels per read and write of the keys. ----
// An eight-way pass with run length `run` merges each octet of runs R0..R7 into one run of
// 8 * run: the merge of P = merge4(R0..R3) with Q = merge4(R4..R7), P first on ties, exactly
// what three two-way passes would produce. The four-way cuts of the same input (one per octet
// tile, twophase_mergesort_quad_partition at the same run and spacing) are samples of P and Q,
// as the two-way partitions are samples of a four-way pass's X and Y.

// Runs of an octet.
constexpr int OCT_RUNS = 8;
// Runs of each half of an octet (a quad).
constexpr int OCT_HALF = OCT_RUNS / 2;

// The eight runs of the octet holding output `pos`: run k is [starts[k], starts[k + 1]).
struct mergesort_octet {
  size_type starts[OCT_RUNS + 1];
  __device__ __forceinline__ mergesort_octet(size_type count, size_type run, size_type pos) {
    const size_type width = OCT_RUNS * run;
    starts[0] = pos / width * width;
#pragma unroll
    for (int k = 1; k <= OCT_RUNS; ++k) starts[k] = min(starts[0] + k * run, count);
  }
};

// The counts taken from each run of octet half `half` (0: P, 1: Q) among its first `i` outputs,
// `i` a multiple of `spacing` or the half's length, read off the four-way cut stored for the
// quad position starts[4 * half] + i (cuts (x, a, c): a from the quad's R0, x - a from R1, c from
// R2, the rest from R3). The half's end is stored as the next quad's start, so it is answered
// from the half itself.
__device__ __forceinline__ void sampled_counts(const size_type* __restrict__ quad_cuts, const mergesort_octet& oct,
                                               int half, size_type spacing, size_type i,
                                               size_type (&counts)[OCT_HALF]) {
  const size_type begin = half == 0 ? oct.starts[0] : oct.starts[OCT_HALF];
  const size_type end = half == 0 ? oct.starts[OCT_HALF] : oct.starts[OCT_RUNS];
  if (begin + i == end) {
#pragma unroll
    for (int k = 0; k < OCT_HALF; ++k) {
      counts[k] = half == 0 ? oct.starts[k + 1] - oct.starts[k] : oct.starts[OCT_HALF + k + 1] - oct.starts[OCT_HALF + k];
    }
    return;
  }
  cut_counts(quad_cuts, (begin + i) / spacing, i, counts);
}

// Output `i` of a half's merge, given the counts taken from its runs among its first i outputs
// (not all of it): the first in merge order of the runs' heads (an earlier run first on ties).
__device__ __forceinline__ key_type half_element_at(const key_type* __restrict__ keys, const mergesort_octet& oct,
                                                    int half, const size_type (&counts)[OCT_HALF]) {
  key_type best;
  bool found = false;
#pragma unroll
  for (int k = 0; k < OCT_HALF; ++k) {
    const size_type at = oct.starts[OCT_HALF * half + k] + counts[k];
    if (at < oct.starts[OCT_HALF * half + k + 1]) {
      const key_type key = keys[at];
      if (!found || key_compare()(key, best)) best = key;
      found = true;
    }
  }
  return best;
}

// Output `t - 1` of a half's merge (t > 0), given the counts among its first t outputs: the last
// in merge order of the runs' last taken keys (a later run last on ties).
__device__ __forceinline__ key_type half_element_before(const key_type* __restrict__ keys, const mergesort_octet& oct,
                                                        int half, const size_type (&counts)[OCT_HALF]) {
  key_type best;
  bool found = false;
#pragma unroll
  for (int k = 0; k < OCT_HALF; ++k) {
    if (counts[k] > 0) {
      const key_type key = keys[oct.starts[OCT_HALF * half + k] + counts[k] - 1];
      if (!found || !key_compare()(key, best)) best = key;
      found = true;
    }
  }
  return best;
}

// Phase 1 of an eight-way pass (twophase_partition::oct_cut): cuts[8p .. 8p + 8) = the counts
// taken from R0..R7 among the first outputs of its octet up to output position
// min(p * spacing, count).
// - Coarse search over P counts that are multiples of `spacing` (the cut diagonal is one too, as
//   octets start at multiples of it): P's output there and Q's output just before the matching Q
//   sample are read off the four-way cuts (two cuts and up to eight keys a probe), by a group of
//   `lanes` lanes as in the four-way partition.
// - Fine selection inside the window left, on the group's first lane: the four-way cuts at the
//   window's ends bound each run's count, and select_runs finds the eight counts inside.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_oct_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                     const size_type* __restrict__ quad_cuts, size_type spacing, size_type num_cuts,
                                     int lanes, size_type* __restrict__ cuts, const unsigned* guard) {
  static_assert(TP_PARTITION_NT % 32 == 0, "cut groups must not straddle warps");
  if (!follow_previous_kernel(guard)) return;
  if constexpr (!CHECK_ORDER) {
    const int shift = __ffs(lanes) - 1;  // lanes = 2^shift
    const unsigned reciprocal = 0xffffffffu / (unsigned)(lanes + 1);
    const size_type p = ((size_type)blockIdx.x * blockDim.x + threadIdx.x) >> shift;
    const int lane = threadIdx.x & (lanes - 1);
    if (p >= num_cuts) return;  // the whole group: its lanes share p
    const size_type pos = min(p * spacing, count);
    const mergesort_octet oct(count, run, pos);
    const size_type diag = pos - oct.starts[0];
    const size_type np = oct.starts[OCT_HALF] - oct.starts[0], nq = oct.starts[OCT_RUNS] - oct.starts[OCT_HALF];
    const unsigned group = twophase::search_group_mask(lanes);
    // The cut's P count lies in [begin, end].
    size_type begin = diag > nq ? diag - nq : 0;
    size_type end = min(diag, np);
    if (diag % spacing == 0) {
      size_type j_lo = (begin + spacing - 1) / spacing, j_hi = (end + spacing - 1) / spacing;
      while (j_lo < j_hi) {
        const twophase::kary_round round = {j_lo, j_hi - j_lo, lanes, reciprocal};
        bool answer = false;
        if (lane < round.active_lanes()) {
          // Does P's output pi come before Q's output diag - 1 - pi? (pi < end <= np and
          // diag - pi >= 1, so both exist.)
          const size_type pi = round.probe(lane) * spacing, qt = diag - pi;
          size_type p_counts[OCT_HALF], q_counts[OCT_HALF];
          sampled_counts(quad_cuts, oct, 0, spacing, pi, p_counts);
          sampled_counts(quad_cuts, oct, 1, spacing, qt, q_counts);
          const key_type p_key = half_element_at(keys, oct, 0, p_counts);
          const key_type q_key = half_element_before(keys, oct, 1, q_counts);
          answer = twophase::takes_a<twophase::bounds_lower>(p_key, q_key, key_compare());
        }
        const int t = twophase::group_trues(group, lanes, answer);
        if (t > 0) {
          j_lo = round.probe(t - 1) + 1;
          begin = max(begin, (j_lo - 1) * spacing + 1);
        }
        if (t < round.active_lanes()) {
          j_hi = round.probe(t);
          end = min(end, j_hi * spacing);
        }
      }
    }
    if (lane != 0) return;
    // Fine: P's count lies in [begin, end] and Q's in [diag - end, diag - begin]; widened to the
    // samples around them, each half's four-way cuts bound the counts of its four runs.
    const size_type p0 = begin / spacing * spacing, p1 = min((end + spacing - 1) / spacing * spacing, np);
    const size_type q0 = (diag - end) / spacing * spacing, q1 = min((diag - begin + spacing - 1) / spacing * spacing, nq);
    size_type lo_p[OCT_HALF], hi_p[OCT_HALF], lo_q[OCT_HALF], hi_q[OCT_HALF];
    sampled_counts(quad_cuts, oct, 0, spacing, p0, lo_p);
    sampled_counts(quad_cuts, oct, 0, spacing, p1, hi_p);
    sampled_counts(quad_cuts, oct, 1, spacing, q0, lo_q);
    sampled_counts(quad_cuts, oct, 1, spacing, q1, hi_q);
    size_type counts[OCT_RUNS], hi[OCT_RUNS];
#pragma unroll
    for (int k = 0; k < OCT_HALF; ++k) {
      counts[k] = lo_p[k];
      counts[OCT_HALF + k] = lo_q[k];
      hi[k] = hi_p[k];
      hi[OCT_HALF + k] = hi_q[k];
    }
    select_runs(keys, oct.starts, counts, hi, diag);
#pragma unroll
    for (int k = 0; k < OCT_RUNS; ++k) cuts[OCT_RUNS * p + k] = counts[k];
  }
}
#endif  // TP_QUAD_NT > 0 && TP_OCT_NT > 0
