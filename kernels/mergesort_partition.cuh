//! The mergesort's pass-boundary search: where an output position cuts its pair of runs.
#pragma once
// Part of the mergesort and segmented-sort programs (after mergesort_blocksort.cu, whose size_type
// it uses, and the prelude's key_type and key_compare); the CUDA twin of twophase_partition's mergesort_pair and
// mergesort_path. Its lanes-ary rounds are partition.cuh's (twophase::first_untaken).

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
  return pair.a_begin + twophase::group_merge_path<twophase::bounds_lower>(
                            keys + pair.a_begin, pair.a_end - pair.a_begin, keys + pair.a_end,
                            pair.b_end - pair.a_end, pos - pair.a_begin, key_compare(), lanes);
}

// Boundary p (at output `pos`) of a merge pass, repaired past the first bad boundary `bad` (at
// `bad_pos`, merge path `bad_path`): as searched up to `bad`; past it, in bad's pair of runs, the
// pair's remaining A keys first from bad's path on, and in later pairs A first from the pair's
// start (twophase::repaired_boundary per pair): a valid path in every pair.
__device__ __forceinline__ size_type repaired_pass_boundary(size_type count, size_type run, size_type p,
                                                            size_type path, size_type pos, size_type bad,
                                                            size_type bad_path, size_type bad_pos) {
  if (p <= bad) return path;
  const mergesort_pair pair(count, run, pos);
  const bool bad_pair = mergesort_pair(count, run, bad_pos).a_begin == pair.a_begin;
  const size_type from = bad_pair ? bad_path : pair.a_begin, from_pos = bad_pair ? bad_pos : pair.a_begin;
  const size_type a_first = from + (pos - from_pos);
  return a_first < pair.a_end ? a_first : pair.a_end;
}
