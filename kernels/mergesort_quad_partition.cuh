//! The mergesort's four-way cut search: where an output position cuts the four runs of its quad.
#pragma once
// Part of the mergesort and segmented-sort programs, after mergesort_blocksort.cu (size_type,
// CHECK_ORDER) and mergesort_partition.cuh (repaired_pass_boundary); used by
// mergesort_quad_partition.cu, cta_quad_merge.cuh and segmented_sort_quads.cu.

#if TP_QUAD_NT > 0
// ---- Four-way merge passes: two merge levels per read and write of the keys. ----
// A four-way pass with run length `run` merges each quad of runs R0..R3 into one run of 4 * run:
// the merge of X = merge(R0, R1) with Y = merge(R2, R3), X first on ties, exactly what two
// two-way passes would produce (twophase_partition::MergeQuad). The two-way partitions of the
// same input (twophase_mergesort_partition with the same run, cut every quad tile) serve as
// samples of X and Y, so that any element of X or Y costs one merge path search inside a window
// of one tile (twophase_partition::quad_cut).

// The four runs of the quad holding output `pos`: run k is [starts[k], starts[k + 1]).
struct mergesort_quad {
  size_type starts[5];
  __device__ __forceinline__ mergesort_quad(size_type count, size_type run, size_type pos) {
    const size_type width = 4 * run;
    starts[0] = pos / width * width;
#pragma unroll
    for (int k = 1; k < 5; ++k) starts[k] = min(starts[0] + k * run, count);
  }
};

// One half of a quad (X: runs 0 and 1, Y: runs 2 and 3) as the pair of a two-way pass.
struct run_pair {
  size_type a_begin, a_end, b_end;
  __device__ __forceinline__ size_type total() const { return b_end - a_begin; }
};

// The two-way partitions of a four-way pass's input at every `spacing`-th output (the samples of X
// and Y), and, with CHECK_ORDER, the first bad one of them (twophase::first_bad_boundary), past
// which they are read repaired (repaired_pass_boundary), as the two-way tiles would.
struct quad_samples {
  const size_type* __restrict__ partitions;
  size_type spacing, count, run;
  size_type bad, bad_path, bad_pos;
  __device__ __forceinline__ quad_samples(const size_type* __restrict__ partitions, size_type spacing,
                                          size_type count, size_type run, const twophase::input_check& check)
      : partitions(partitions), spacing(spacing), count(count), run(run), bad(twophase::NO_BAD_BOUNDARY),
        bad_path(0), bad_pos(0) {
    if constexpr (CHECK_ORDER) {
      bad = twophase::first_bad_boundary(check);
      if (bad != twophase::NO_BAD_BOUNDARY) {
        bad_path = partitions[bad];
        bad_pos = min(bad * spacing, count);
      }
    }
  }
};

// The A count of `pair`'s merge path at pair-local diagonal `diag` (a multiple of `spacing`, or
// the pair's end), read off the two-way partitions; the pair's end is stored as the next pair's
// start, so it is answered from the pair itself.
__device__ __forceinline__ size_type sampled_path(const run_pair& pair, const quad_samples& samples, size_type diag) {
  const size_type pos = pair.a_begin + diag;
  if (pos == pair.b_end) return pair.a_end - pair.a_begin;
  const size_type q = pos / samples.spacing;
  size_type path = samples.partitions[q];
  if (CHECK_ORDER && q > samples.bad) {
    path = repaired_pass_boundary(samples.count, samples.run, q, path, pos, samples.bad, samples.bad_path,
                                  samples.bad_pos);
  }
  return path - pair.a_begin;
}

// Output `i` (< pair.total()) of `pair`'s stable merge, given the A count `a_cnt` among its first
// i outputs: the earlier in merge order of the two heads.
__device__ __forceinline__ key_type element_at(const key_type* __restrict__ keys, const run_pair& pair, size_type a_cnt,
                                               size_type i) {
  const size_type a = pair.a_begin + a_cnt;
  const size_type b = pair.a_end + (i - a_cnt);
  if (a == pair.a_end) return keys[b];
  if (b == pair.b_end) return keys[a];
  const key_type a_key = keys[a];
  const key_type b_key = keys[b];
  return twophase::takes_a<twophase::bounds_lower>(a_key, b_key, key_compare()) ? a_key : b_key;
}

// Output `t - 1` (0 < t <= pair.total()) of `pair`'s stable merge, given the A count `a_cnt`
// among its first t outputs: the later in merge order of the last A and the last B taken
// (twophase_partition element_before).
__device__ __forceinline__ key_type element_before(const key_type* __restrict__ keys, const run_pair& pair,
                                                   size_type a_cnt, size_type t) {
  const size_type b_cnt = t - a_cnt;
  if (a_cnt == 0) return keys[pair.a_end + b_cnt - 1];
  if (b_cnt == 0) return keys[pair.a_begin + a_cnt - 1];
  const key_type a_key = keys[pair.a_begin + a_cnt - 1];
  const key_type b_key = keys[pair.a_end + b_cnt - 1];
  // The last B comes after the last A iff the A key is not after it (A first on ties).
  return twophase::takes_a<twophase::bounds_lower>(a_key, b_key, key_compare()) ? b_key : a_key;
}

// Stable selection among the N runs of a quad (N = 4) or of an octet (N = 8, the eight-way
// pass; twophase_partition::select_runs): the counts taken from each run among the group's first
// `diag` outputs, given bounds lo[k] <= count <= hi[k]
// that hold the answer (run-local; sum(lo) <= diag <= sum(hi)), returned in `lo`. Each round
// compares the middles of the runs still open: the last one in merge order is not taken when the
// open-range elements before the middles, plus the other open middles, make `t` (the outputs left
// to place) or more, and the first one is taken when the elements before the middles alone are
// fewer than `t`; one of the two always holds, so each round halves at least one run's range and
// loads only the new middles. The scan visits runs in order, so a later run's middle comes first
// only when strictly less (earlier runs first on ties).
// - The bounds span less than 2^31 in all (the four-way partition's span two windows of
//   samples), so a round works on 32-bit offsets from each run's lower bound: the rounds' last
//   loads hit lines already cached, and there the round's arithmetic is its latency.
// - Run numbers are compile-time indices throughout: an array indexed by a computed run would be
//   placed in local memory.
template <int N>
__device__ __forceinline__ void select_runs(const key_type* __restrict__ keys, const size_type (&starts)[N + 1],
                                            size_type (&lo)[N], const size_type (&hi)[N], size_type diag) {
  const key_type* base[N];
  int begin[N], end[N], mid[N];
  key_type key[N];
  size_type taken = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) taken += lo[k];
  int t = (int)(diag - taken);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    base[k] = keys + starts[k] + lo[k];
    begin[k] = 0;
    end[k] = (int)(hi[k] - lo[k]);
    mid[k] = end[k] >> 1;
    if (t > 0 && begin[k] < end[k]) key[k] = base[k][mid[k]];  // none once the rounds placed all
  }
  while (t > 0) {
    int first = -1, last = -1, open = 0, u = 0;
    key_type first_key, last_key;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (begin[k] < end[k]) {
        u += mid[k] - begin[k];
        ++open;
        if (first < 0 || key_compare()(key[k], first_key)) {
          first = k;
          first_key = key[k];
        }
        if (last < 0 || !key_compare()(key[k], last_key)) {
          last = k;
          last_key = key[k];
        }
      }
    }
    if (open <= 1) {  // open == 0 cannot happen with t > 0 and valid bounds
#pragma unroll
      for (int k = 0; k < N; ++k) {
        if (k == first) begin[k] += t;
      }
      break;
    }
    const bool drop_last = u + open > t;
    const bool take_first = u < t;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const bool lowers = drop_last && k == last;
      const bool raises = take_first && k == first;
      if (lowers) end[k] = mid[k];
      if (raises) {
        t -= mid[k] + 1 - begin[k];
        begin[k] = mid[k] + 1;
      }
      if (lowers || raises) {
        mid[k] = (begin[k] + end[k]) >> 1;  // both >= 0
        if (begin[k] < end[k]) key[k] = base[k][mid[k]];
      }
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) lo[k] += begin[k];
}

// Probes a run a round of group_select_runs: a warp of 32 lanes over the four runs of a quad.
constexpr int GROUP_SELECT_PROBES = 8;

// select_runs' bounds narrowed by the N * PROBES = 32 lanes of one warp (every lane calling with
// the same bounds and getting the same narrowed ones; twophase_partition::select_runs_by_probes).
// Each round every open run gets PROBES evenly spaced probes, one a lane, at offset
// (2i + 1) * width / (2 PROBES) of its open range. Each lane bounds the open-range elements before
// its probe in the merge: exactly its offset from its own run; from each other run at least one
// past the last probe of it that precedes, at most the first that does not (a binary search over
// that run's probes, read from their lanes by shuffles: log2(PROBES) + 1 a run, where comparing
// with every probe took about 470 instructions a round). With `t` outputs left, a probe with
// fewer than `t` at most is taken, one with `t` or more at least is not; two ballots move each
// run's bounds past its last taken probe and down to its first probe not taken. The first and
// the last probe in merge order cannot both stay undecided, so every round narrows a range;
// eight probes a run take the four-way cut's fine search from about 40 dependent loads to about
// 6 rounds. Rounds stop at the answer, at a round that decides nothing or contradicts itself (a
// taken probe at or after one not taken, or decisions that leave the outputs no room: unsorted
// runs, or a comparator that is not a strict weak order), or after MAX_ROUNDS, leaving bounds
// that still hold the answer for select_runs to finish.
// - The kernel's time is these rounds' instructions, one cut a warp and few warps an SM, so a
//   round works on 32-bit offsets from each run's entry bound and reads its probe through a base
//   pointer picked once, and each binary search asks the last probe beside the first three steps
//   (the same probes a four-step search asks, with one shuffle off the dependent chain).
template <int N, int PROBES>
__device__ __forceinline__ void group_select_runs(const key_type* __restrict__ keys, const size_type (&starts)[N + 1],
                                                  size_type (&lo)[N], size_type (&hi)[N], size_type diag, int lane) {
  static_assert(N * PROBES == 32 && PROBES == 8, "one probe a lane of a whole warp, three search steps a run");
  constexpr unsigned WARP = 0xffffffffu;
  constexpr int OFFSET_SHIFT = twophase::ceil_log2(2 * PROBES);
  constexpr unsigned RUN_LANES = (1u << PROBES) - 1;
  // A bound on the rounds: a strict weak order needs about log(width) / log(PROBES) of them, and
  // any decided probe narrows its range by at least 1 / (2 PROBES), so only a comparator that is
  // not one could make rounds crawl; select_runs finishes from wherever they stop.
  constexpr int MAX_ROUNDS = 64;
  const int run = lane / PROBES, slot = lane % PROBES;
  int width[N], raised_by[N];
  size_type placed = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    width[k] = (int)(hi[k] - lo[k]);
    raised_by[k] = 0;
    placed += lo[k];
  }
  const key_type* const own_base = keys + twophase::pick(starts, run) + twophase::pick(lo, run);
  int own_raised = 0;  // raised_by[run]
  int t = (int)(diag - placed);
  // Probe i's offset in an open range of `w` (32-bit: the bounds span less than 2^31 in all; one
  // 32 x 32 -> 64-bit multiply).
  const auto offset = [](int i, int w) {
    return (int)((unsigned long long)(unsigned)(2 * i + 1) * (unsigned)w >> OFFSET_SHIFT);
  };
  for (int round = 0; round < MAX_ROUNDS; ++round) {
    int open = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) open += width[k];
    if (t == 0 || t == open) {
#pragma unroll
      for (int k = 0; k < N; ++k) {
        lo[k] += (size_type)(t == open ? raised_by[k] + width[k] : raised_by[k]);
        hi[k] = lo[k] + (size_type)(t == open ? 0 : width[k]);
      }
      return;
    }
    const int own_width = twophase::pick(width, run);
    const int own = offset(slot, own_width);
    key_type key = {};
    if (own_width > 0) key = own_base[own_raised + own];
    int below = own, above = own;
#pragma unroll
    for (int m = 0; m < N; ++m) {
      if (width[m] == 0) continue;  // the same in every lane
      // How many of run m's probes precede this lane's (earlier runs first on ties): all of them
      // if the last does, else a binary search over the first PROBES - 1 by their lanes.
      const bool earlier_run = m < run;
      const auto before = [&](int probe) {
        const key_type other = twophase::group_shuffle(WARP, key, m * PROBES + probe, 32);
        // takes_a<bounds_lower>(other, key), !key_compare()(key, other), for an earlier run, else
        // key_compare()(other, key): one comparison of operands picked by the lane's run.
        const key_type& first = earlier_run ? key : other;
        const key_type& second = earlier_run ? other : key;
        return key_compare()(first, second) != earlier_run;
      };
      const bool all = before(PROBES - 1);
      int preceding = 0;
#pragma unroll
      for (int step = PROBES / 2; step > 0; step >>= 1) {
        if (before(preceding + step - 1)) preceding += step;
      }
      if (all) preceding = PROBES;
      const int least = preceding > 0 ? offset(preceding - 1, width[m]) + 1 : 0;
      const int most = preceding < PROBES ? offset(preceding, width[m]) : width[m];
      if (m != run) {
        below += least;
        above += most;
      }
    }
    const unsigned taken = __ballot_sync(WARP, own_width > 0 && above < t);
    const unsigned not_taken = __ballot_sync(WARP, own_width > 0 && below >= t);
    int raise[N], drop[N], raised = 0, dropped = 0;
    bool contradicts = false;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      // Past run k's last taken probe, down to its first probe not taken.
      const unsigned run_taken = taken >> (k * PROBES) & RUN_LANES;
      const unsigned run_not_taken = not_taken >> (k * PROBES) & RUN_LANES;
      raise[k] = run_taken ? offset(31 - __clz(run_taken), width[k]) + 1 : 0;
      drop[k] = run_not_taken ? width[k] - offset(__ffs(run_not_taken) - 1, width[k]) : 0;
      raised += raise[k];
      dropped += drop[k];
      contradicts |= raise[k] + drop[k] > width[k];
    }
    // Also contradictions: more taken in all than the outputs left, or fewer kept open than they
    // need.
    contradicts |= raised > t || t + dropped > open;
    if (contradicts || raised + dropped == 0) break;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      raised_by[k] += raise[k];
      width[k] -= raise[k] + drop[k];
    }
    own_raised += twophase::pick(raise, run);
    t -= raised;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    lo[k] += (size_type)raised_by[k];
    hi[k] = lo[k] + (size_type)width[k];
  }
}

// Take `left` more outputs from the runs in order (R0 first), each up to its `cap`: the valid
// path that the four-way repairs fall back to.
__device__ __forceinline__ void fill_runs_in_order(size_type (&counts)[4], const size_type (&cap)[4],
                                                   size_type left) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const size_type take = min(left, cap[k] - counts[k]);
    counts[k] += take;
    left -= take;
  }
}

// The counts a cut takes from each run of its quad, `lo` (from bounds `lo`..`hi` of each), made
// valid whatever the comparator answered: select_runs' answer where each count stays within its
// bounds and they add up to `diag`, else the bounds' lower ends filled run by run (R0 first) up to
// `diag`, or, past those bounds, the runs' own lengths filled from zero. Returns whether the
// answer was kept.
__device__ __forceinline__ bool valid_cut(size_type (&counts)[4], const size_type (&lo)[4], const size_type (&hi)[4],
                                          const size_type (&starts)[5], size_type diag) {
  bool valid = counts[0] + counts[1] + counts[2] + counts[3] == diag;
#pragma unroll
  for (int k = 0; k < 4; ++k) valid &= lo[k] <= counts[k] && counts[k] <= hi[k];
  if (valid) return true;
  const bool bounded = lo[0] + lo[1] + lo[2] + lo[3] <= diag && diag <= hi[0] + hi[1] + hi[2] + hi[3];
  size_type cap[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    counts[k] = bounded ? lo[k] : 0;
    cap[k] = bounded ? hi[k] : starts[k + 1] - starts[k];
  }
  fill_runs_in_order(counts, cap, diag - (counts[0] + counts[1] + counts[2] + counts[3]));
  return false;
}

// The counts taken from each run of `quad` among its first `diag` outputs (quad-local), into
// `counts` on the group's first lane. The cut is the merge path of X = merge(R0, R1) and
// Y = merge(R2, R3), whose elements are not stored; `samples` (the two-way partitions of the same
// input every `spacing` outputs) are samples of both.
// - Coarse search over X indices that are multiples of `spacing`: with the cut diagonal itself a
//   multiple of `spacing`, both X's element there and Y's element just before the matching Y
//   sample are read straight off the samples (two dependent loads a probe).
// - Fine selection inside the window left: the samples at its ends bound the count taken from
//   each run, and select_runs halves one run's bound a round (one dependent load a round, about
//   4 log2(spacing / 2) rounds; the nested search it replaced, a merge path search of X and of Y
//   inside every probe, was the square of log2(spacing)).
// The coarse search runs on a group of `lanes` lanes of one warp (every lane of the group
// calling, `lane` its index, `reciprocal` 0xffffffff / (lanes + 1)): every round the lanes probe
// `lanes` candidates at once, so a search over n candidates takes log(n) / log(lanes + 1) rounds
// of dependent loads instead of log2(n). With CHECK_ORDER a cut that select_runs could not make
// valid is replaced by valid_cut's and raises STATUS_ORDER_INCONSISTENT through `check`.
__device__ __forceinline__ void quad_cut_search(const key_type* __restrict__ keys, const quad_samples& samples,
                                                const mergesort_quad& quad, size_type diag, int lanes, int lane,
                                                unsigned reciprocal, const twophase::input_check& check,
                                                size_type (&counts)[4]) {
  const size_type spacing = samples.spacing;
  const unsigned group = twophase::search_group_mask(lanes);
  const run_pair x_pair = {quad.starts[0], quad.starts[1], quad.starts[2]};
  const run_pair y_pair = {quad.starts[2], quad.starts[3], quad.starts[4]};
  const size_type nx = x_pair.total(), ny = y_pair.total();
  // The cut's X count lies in [begin, end].
  size_type begin = diag > ny ? diag - ny : 0;
  size_type end = min(diag, nx);
  if (diag % spacing == 0) {
    // Coarse: does X's output j*spacing come before Y's output diag-1-j*spacing, the last
    // before Y's sample at diag - j*spacing (a multiple of spacing: quads start at multiples
    // of it)?
    size_type j_lo = (begin + spacing - 1) / spacing, j_hi = (end + spacing - 1) / spacing;
    while (j_lo < j_hi) {
      const twophase::kary_round round = {j_lo, j_hi - j_lo, lanes, reciprocal};
      bool answer = false;
      if (lane < round.active_lanes()) {
        const size_type xi = round.probe(lane) * spacing, yt = diag - xi;
        const key_type x_key = element_at(keys, x_pair, sampled_path(x_pair, samples, xi), xi);
        const key_type y_key = element_before(keys, y_pair, sampled_path(y_pair, samples, yt), yt);
        answer = twophase::takes_a<twophase::bounds_lower>(x_key, y_key, key_compare());
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
  // Fine: X's count lies in [begin, end] and Y's in [diag - end, diag - begin]; widened to the
  // samples around them, each half's merge path bounds the counts of both its runs (monotone in
  // the half's diagonal). A group of lanes narrows those bounds by probe rounds
  // (group_select_runs, with a warp a cut: with fewer probes a run the rounds cost more than
  // they save); select_runs, on one lane, finds the four counts inside.
  const size_type x0 = begin / spacing * spacing, x1 = min((end + spacing - 1) / spacing * spacing, nx);
  const size_type y0 = (diag - end) / spacing * spacing, y1 = min((diag - begin + spacing - 1) / spacing * spacing, ny);
  const size_type a0 = sampled_path(x_pair, samples, x0), a1 = sampled_path(x_pair, samples, x1);
  const size_type c0 = sampled_path(y_pair, samples, y0), c1 = sampled_path(y_pair, samples, y1);
  const size_type lo[4] = {a0, x0 - a0, c0, y0 - c0};
  const size_type hi[4] = {a1, x1 - a1, c1, y1 - c1};
  size_type narrowed[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    counts[k] = lo[k];
    narrowed[k] = hi[k];
  }
  if (lanes == 4 * GROUP_SELECT_PROBES) {
    group_select_runs<4, GROUP_SELECT_PROBES>(keys, quad.starts, counts, narrowed, diag, lane);
  }
  if (lane != 0) return;
  select_runs(keys, quad.starts, counts, narrowed, diag);
  if (CHECK_ORDER && !valid_cut(counts, lo, hi, quad.starts, diag)) {
    twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
  }
}

// The counts from each run of the quad among its first `diag` outputs at cut `p`, read off
// cuts[3p .. 3p + 3) = (x, a, c).
__device__ __forceinline__ void cut_counts(const size_type* __restrict__ cuts, size_type p, size_type diag,
                                           size_type (&counts)[4]) {
  const size_type x = cuts[3 * p], a = cuts[3 * p + 1], c = cuts[3 * p + 2];
  counts[0] = a;
  counts[1] = x - a;
  counts[2] = c;
  counts[3] = diag - x - c;
}

// Cut p (at output `pos`) of a four-way pass, as counts from each run of its quad, repaired past
// the first bad cut `bad` (at `bad_pos`): as found up to `bad`; past it, in bad's quad, the runs
// filled in order (R0 first) from bad's counts on, and in later quads from the quad's start: a
// valid path in every quad.
__device__ __forceinline__ void repaired_cut(const size_type* __restrict__ cuts, size_type count, size_type run,
                                             size_type spacing, size_type p, size_type bad, size_type (&counts)[4]) {
  const size_type pos = min(p * spacing, count);
  const mergesort_quad quad(count, run, pos);
  const size_type diag = pos - quad.starts[0];
  if (p <= bad) {
    cut_counts(cuts, p, diag, counts);
    return;
  }
  const size_type bad_pos = min(bad * spacing, count);
  size_type from_diag = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) counts[k] = 0;
  if (mergesort_quad(count, run, bad_pos).starts[0] == quad.starts[0]) {
    from_diag = bad_pos - quad.starts[0];
    cut_counts(cuts, bad, from_diag, counts);
  }
  const size_type lengths[4] = {quad.starts[1] - quad.starts[0], quad.starts[2] - quad.starts[1],
                                 quad.starts[3] - quad.starts[2], quad.starts[4] - quad.starts[3]};
  fill_runs_in_order(counts, lengths, diag - from_diag);
}
#endif  // TP_QUAD_NT > 0
