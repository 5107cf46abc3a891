//! The mergesort's pass-boundary search: where an output position cuts its pair of runs.
#pragma once
// Part of the mergesort program (after mergesort_blocksort.cu, whose size_type it uses, and the
// prelude's key_type and key_compare); the CUDA twin of twophase_partition's mergesort_pair and
// mergesort_path. The lanes-ary search rounds (kary_round, cut_group_mask, group_trues) also
// serve the four-way cuts of mergesort_quad_partition.cu.

// The pair of runs (each `run` keys, the last ones short) that output position `pos` of a merge
// pass belongs to (twophase_partition::mergesort_pair), in global indices.
struct mergesort_pair {
  size_type a_begin, a_end, b_end;
  __device__ __forceinline__ mergesort_pair(size_type count, size_type run, size_type pos) {
    const size_type width = 2 * run;
    a_begin = pos / width * width;
    a_end = min(a_begin + run, count);
    b_end = min(a_begin + width, count);
  }
};

// One round of a `lanes`-ary search for the first `false` of a monotone predicate (true then
// false) over candidates [lo, lo + n): lane `l` probes candidate `probe(l)`, all n when
// n <= lanes, else `lanes` evenly spread ones, about n * (l + 1) / (lanes + 1) past lo (with one
// lane, a binary search's middle). The lanes of a group then agree, from the ballot of their
// answers, on the candidates left: with `t` answers true (a prefix of the lanes, the predicate
// being monotone), the first false lies past probe(t - 1) and at or before probe(t).
struct kary_round {
  size_type lo, n;
  int lanes;
  // (2^32 - 1) / (lanes + 1), rounded down so that every probe stays below lo + n. (A 64-bit
  // division in every round would be a subroutine of dependent instructions on the cut's chain.)
  unsigned reciprocal;
  __device__ __forceinline__ int active_lanes() const { return n < (size_type)lanes ? (int)n : lanes; }
  __device__ __forceinline__ size_type probe(int l) const {
    return n <= (size_type)lanes ? lo + l : lo + __umul64hi(n * (size_type)(l + 1), (size_type)reciprocal << 32);
  }
};

// The lanes of this thread's search group (`lanes` consecutive lanes of a warp, a power of two:
// one two-way boundary or four-way cut) as a mask of the warp, for the group's ballots.
__device__ __forceinline__ unsigned cut_group_mask(int lanes) {
  const unsigned group_bits = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
  return group_bits << (threadIdx.x % 32 / lanes * lanes);
}

// The `true` answers of a search group's lanes, as a count: the predicate is monotone over the
// lanes' probes, so the true answers are the first ones. A group of one lane skips the warp
// vote (`lanes` is the same in every thread, so the branch never diverges).
__device__ __forceinline__ int group_trues(unsigned group_mask, int lanes, bool answer) {
  return lanes == 1 ? (int)answer : __popc(__ballot_sync(group_mask, answer) & group_mask);
}

// The global index of the A key at which output position `pos` (<= count) of a merge pass with
// runs of `run` cuts its pair's merge (twophase_partition::mergesort_path), searched by a group of
// `lanes` lanes of one warp (a power of two up to 32, every lane of the group calling), `lanes`-ary:
// each round the lanes probe `lanes` evenly spread candidates and a ballot keeps the span between
// the last true and the first false. A pass's boundaries are few (one a tile) and each is a chain
// of up to log2(run) dependent loads, so in a small sort the binary search of one lane leaves most
// of the machine idle for that chain's length. Every lane of the group returns the index.
__device__ __forceinline__ size_type pass_boundary(const key_type* __restrict__ keys, size_type count,
                                                   size_type run, size_type pos, int lanes) {
  const mergesort_pair pair(count, run, pos);
  const key_type* a = keys + pair.a_begin;
  const key_type* b = keys + pair.a_end;
  const size_type diag = pos - pair.a_begin, a_count = pair.a_end - pair.a_begin, b_count = pair.b_end - pair.a_end;
  if (lanes == 1) {
    // The plain binary search: a round of the lanes-ary one costs a wide multiply more on the
    // chain (at 2^27 u32 keys, 128 against 111 us a sort for the samples).
    return pair.a_begin +
           twophase::merge_path<twophase::bounds_lower, size_type>(a, a_count, b, b_count, diag, key_compare());
  }
  const int lane = threadIdx.x & (lanes - 1);
  const unsigned group = cut_group_mask(lanes);
  const unsigned reciprocal = 0xffffffffu / (unsigned)(lanes + 1);
  // Merge path (twophase::merge_path, Lower bounds): A's output `mid` is among the first `diag`
  // iff it comes before B's `diag - 1 - mid`; true for a prefix of the candidates.
  size_type begin = diag > b_count ? diag - b_count : 0;
  size_type end = min(diag, a_count);
  while (begin < end) {
    const kary_round round = {begin, end - begin, lanes, reciprocal};
    bool answer = false;
    if (lane < round.active_lanes()) {
      const size_type mid = round.probe(lane);
      answer = twophase::takes_a<twophase::bounds_lower>(a[mid], b[diag - 1 - mid], key_compare());
    }
    const int t = group_trues(group, lanes, answer);
    if (t > 0) begin = round.probe(t - 1) + 1;
    if (t < round.active_lanes()) end = round.probe(t);
  }
  return pair.a_begin + begin;
}
