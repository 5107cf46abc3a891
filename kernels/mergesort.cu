//! The two-phase mergesort kernels: block sort of each tile, then merge passes split by merge path.
// The host prepends the same prelude as for the merge (key_type, key_compare, value_type, TP_NT,
// TP_VT, TP_HAS_VALUES, TP_PARTITION_NT), TP_PASS_NT and TP_QUAD_NT (threads of the two-way and
// four-way merge passes; TP_NT is the block sort's), then partition.cuh, serial.cuh,
// cta_merge.cuh and cta_mergesort.cuh.

using twophase::size_type;

// Programmatic dependent launch (sm_90+): every kernel of the sort after the block sort is launched
// as a programmatic dependent of the one before, so that its blocks are scheduled while the
// previous kernel's last blocks run. Each kernel first waits for the previous one to complete
// and its writes to be visible (before touching global memory: a pass's partition kernel writes
// the partitions the previous tile kernel reads), then lets its own dependent be scheduled.
// Both are no-ops for a kernel launched normally.
__device__ __forceinline__ void follow_previous_kernel() {
  twophase::pdl_wait();
  twophase::pdl_launch_dependents();
}

// Shared memory of one block-sort tile (dynamic: the host passes BYTES, MergesortTuning::
// blocksort_shared_bytes): NV + 1 keys (the serial merge reads one slot past a run's end), then,
// with values, the NV tile positions that follow the keys through the sort. Once the sorted keys
// are stored, the same memory holds the tile's NV values and then the NV tile positions in output
// order, so that the values are permuted inside shared memory: gathered from global memory by
// sorted position they would touch a different 32-byte sector for nearly every lane of a warp.
// (Sorting 8-byte (key, position) entries instead, one shared-memory access per key and level,
// measured slower on the H100: 2.74 against 2.66 ms for 2^27 u32 pairs.)
// `bytes` rounded up to 16, where each shared-memory region starts (so that any key or value
// type is aligned in it); MergesortTuning's shared_aligned on the host.
constexpr int align16(int bytes) { return (bytes + 15) / 16 * 16; }

template <int NV>
struct blocksort_smem {
  static constexpr int KEY_BYTES = align16((NV + 1) * (int)sizeof(key_type));
  static constexpr int SORT_BYTES = KEY_BYTES + (TP_HAS_VALUES ? NV * (int)sizeof(int) : 0);
  static constexpr int VALUE_BYTES = align16(NV * (int)sizeof(value_type));
  static constexpr int PERMUTE_BYTES = TP_HAS_VALUES ? VALUE_BYTES + NV * (int)sizeof(int) : 0;
  static constexpr int BYTES = SORT_BYTES > PERMUTE_BYTES ? SORT_BYTES : PERMUTE_BYTES;
};

// Whether this sort checks that its comparator behaves: a user comparator may answer
// inconsistently, and then merge paths stop tiling their merges; twophase's own orders cannot.
constexpr bool CHECK_ORDER = !key_compare::trusted_order;

// Shared memory of one merge-pass tile: the NV + 1 keys, later reused for the NV source indices
// of the value gather. Kept as small as the merge's so that as many blocks fit on an SM.
template <int NV>
struct pass_smem {
  static constexpr int KEY_BYTES = (NV + 1) * (int)sizeof(key_type);
  static constexpr int INDEX_BYTES = NV * (int)sizeof(int);
  static constexpr int BYTES = KEY_BYTES > INDEX_BYTES ? KEY_BYTES : INDEX_BYTES;
};

// Phase 2 of the block sort: tile t sorts keys [t * NV, min((t + 1) * NV, count)) of `keys_in`
// into `keys_out` (and the values with them). In place when keys_in == keys_out.
template <bool checked>
__device__ __forceinline__ void blocksort_tile(const key_type* keys_in, const value_type* vals_in, size_type count,
                                               key_type* keys_out, value_type* vals_out, unsigned char* smem,
                                               const twophase::input_check& check) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  const int tid = threadIdx.x;
  const size_type tile_start = (size_type)blockIdx.x * NV;
  const int tile_cnt = (int)min((size_type)NV, count - tile_start);

  twophase::load_tile<NT, VT, checked>(keys_in, tile_start, tile_cnt, keys_in, tile_start, tile_cnt, keys_shared, tid);
  key_type keys[VT];
  int ids[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int pos = VT * tid + i;
    keys[i] = keys_shared[checked ? min(pos, tile_cnt - 1) : pos];
    ids[i] = pos;
  }
  int* sort_ids_shared = reinterpret_cast<int*>(smem + blocksort_smem<NV>::KEY_BYTES);
  twophase::cta_sort<NT, VT, checked, TP_HAS_VALUES, CHECK_ORDER>(keys, ids, tile_cnt, keys_shared, sort_ids_shared,
                                                                   check, key_compare());
  twophase::store_through_shared<NT, VT, checked>(keys, keys_shared, keys_out + tile_start, tile_cnt, tid);
  if (TP_HAS_VALUES) {
    // The tile's values, coalesced, and each output's tile position, strided, over the sort's
    // shared memory (free once every thread has stored its keys); then each output gathers its
    // value from shared memory. Every read of vals_in precedes the barrier, so in-place sorts
    // stay correct.
    value_type* vals_shared = reinterpret_cast<value_type*>(smem);
    int* ids_shared = reinterpret_cast<int*>(smem + blocksort_smem<NV>::VALUE_BYTES);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_shared[idx] = vals_in[tile_start + idx];
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) ids_shared[VT * tid + i] = ids[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_out[tile_start + idx] = vals_shared[ids_shared[idx]];
    }
  }
}

extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_blocksort(const key_type* keys_in, const value_type* vals_in, size_type count, key_type* keys_out,
                       value_type* vals_out, unsigned long long* status) {
  constexpr int NV = TP_NT * TP_VT;
  extern __shared__ __align__(16) unsigned char smem[];
  follow_previous_kernel();
  // Only the status word: the block sort has no partitions to repair.
  const twophase::input_check check = {status, nullptr, 0};
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    blocksort_tile<false>(keys_in, vals_in, count, keys_out, vals_out, smem, check);
  } else {
    blocksort_tile<true>(keys_in, vals_in, count, keys_out, vals_out, smem, check);
  }
}

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

// Phase 1 of a merge pass: partitions[p] = pass_boundary at output min(p * spacing, count), one
// group of `lanes` lanes a boundary (the host picks them, MergesortTuning::boundary_search_lanes).
// With CHECK_ORDER the blocks overlap by one boundary (twophase::overlapped_boundary) and each
// checks every adjacent pair of its boundaries inside one pair of runs: a pair out of order (the
// comparator answered inconsistently) goes to the repair slot, which the tile kernel follows.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                 size_type spacing, size_type num_partitions, int lanes,
                                 size_type* __restrict__ partitions, unsigned long long* status,
                                 unsigned long long* repair, unsigned generation) {
  static_assert(TP_PARTITION_NT % 32 == 0, "search groups must not straddle warps");
  follow_previous_kernel();
  const int shift = __ffs(lanes) - 1;  // lanes = 2^shift
  const int group = threadIdx.x >> shift, groups = blockDim.x >> shift;
  const bool leader = (threadIdx.x & (lanes - 1)) == 0;
  const size_type p = CHECK_ORDER ? twophase::overlapped_boundary(group, groups)
                                  : ((size_type)blockIdx.x * blockDim.x + threadIdx.x) >> shift;
  const size_type pos = min(p * spacing, count);
  size_type boundary = 0;
  if (p < num_partitions) {  // the whole group: its lanes share p
    boundary = pass_boundary(keys, count, run, pos, lanes);
    if (leader) partitions[p] = boundary;
  }
  if constexpr (CHECK_ORDER) {
    __shared__ size_type boundaries[TP_PARTITION_NT];
    if (leader) boundaries[group] = boundary;
    __syncthreads();
    if (leader && group > 0 && p < num_partitions) {
      const size_type prev_pos = min((p - 1) * spacing, count);
      const bool same_pair = mergesort_pair(count, run, prev_pos).a_begin == mergesort_pair(count, run, pos).a_begin;
      if (same_pair && !twophase::monotone_step(boundaries[group - 1], prev_pos, boundary, pos)) {
        const twophase::input_check check = {status, repair, generation};
        twophase::report_bad_boundary(check, p - 1);
        twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
      }
    }
  }
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

// Phase 2 of a merge pass: tile t merges outputs [t * NV, min((t + 1) * NV, count)) of its pair of
// runs from `src` into `dst` (twophase_partition::mergesort_tile), values gathered alongside.
// Without `partitions` (null) the block finds its own two boundaries first, a warp each by
// pass_boundary: in a small sort that saves the partition kernel's launch, the sort's
// bottleneck there, for one 32-ary search a block.
extern "C" __global__ void __launch_bounds__(TP_PASS_NT)
    twophase_mergesort_tile(const key_type* __restrict__ src, size_type count, size_type run,
                            const size_type* __restrict__ partitions, key_type* __restrict__ dst,
                            const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                            unsigned long long* status, unsigned long long* repair, unsigned generation) {
  constexpr int NT = TP_PASS_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  __shared__ __align__(16) unsigned char smem[pass_smem<NV>::BYTES];
  static_assert(pass_smem<NV>::BYTES <= 48 * 1024, "tile too large for static shared memory");
  follow_previous_kernel();
  const twophase::input_check check = {status, repair, generation};
  const size_type tile = blockIdx.x;
  const size_type diag0 = tile * NV;
  const size_type diag1 = min(diag0 + NV, count);
  const mergesort_pair pair(count, run, diag0);
  size_type a0, a1;
  if (partitions != nullptr) {
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
    // Only with a trusted comparator (the host's choice): boundaries searched here are never
    // checked against each other.
    static_assert(NT % 32 == 0, "the boundary searches take whole warps");
    size_type* bounds = reinterpret_cast<size_type*>(smem);
    for (int which = threadIdx.x / 32; which < 2; which += NT / 32) {
      const size_type boundary = pass_boundary(src, count, run, which == 0 ? diag0 : diag1, 32);
      if (threadIdx.x % 32 == 0) bounds[which] = boundary;
    }
    __syncthreads();
    a0 = bounds[0];
    a1 = bounds[1];
    __syncthreads();  // cta_merge reuses the shared memory
  }
  // A boundary at the end of a pair is stored as the next pair's start; this tile ends its pair.
  if (diag1 == pair.b_end) a1 = pair.a_end;
  if constexpr (CHECK_ORDER) a1 = twophase::clamped_tile_end(a0, a1, diag1 - diag0);
  const size_type b0 = pair.a_end + (diag0 - pair.a_begin) - (a0 - pair.a_begin);
  const int a_cnt = (int)(a1 - a0);
  const int tile_cnt = (int)(diag1 - diag0);
  constexpr unsigned WALK_STATUS = twophase::STATUS_ORDER_INCONSISTENT;
  if (tile_cnt == NV) {
    twophase::cta_merge<NT, VT, false, TP_HAS_VALUES, false, CHECK_ORDER, WALK_STATUS>(
        src, src, dst, vals_src, vals_src, vals_dst, a0, b0, diag0, a_cnt, tile_cnt, smem, check, key_compare());
  } else {
    twophase::cta_merge<NT, VT, true, TP_HAS_VALUES, false, CHECK_ORDER, WALK_STATUS>(
        src, src, dst, vals_src, vals_src, vals_dst, a0, b0, diag0, a_cnt, tile_cnt, smem, check, key_compare());
  }
}

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

// Stable selection among the four runs of a quad (twophase_partition::select_runs): the counts
// taken from each run among the quad's first `diag` outputs, given bounds lo[k] <= count <= hi[k]
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
__device__ __forceinline__ void select_runs(const key_type* __restrict__ keys, const size_type (&starts)[5],
                                            size_type (&lo)[4], const size_type (&hi)[4], size_type diag) {
  const key_type* base[4];
  int begin[4], end[4], mid[4];
  key_type key[4];
  int t = (int)(diag - (lo[0] + lo[1] + lo[2] + lo[3]));
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    base[k] = keys + starts[k] + lo[k];
    begin[k] = 0;
    end[k] = (int)(hi[k] - lo[k]);
    mid[k] = end[k] >> 1;
    if (begin[k] < end[k]) key[k] = base[k][mid[k]];
  }
  while (t > 0) {
    int first = -1, last = -1, open = 0, u = 0;
    key_type first_key, last_key;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
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
      for (int k = 0; k < 4; ++k) {
        if (k == first) begin[k] += t;
      }
      break;
    }
    const bool drop_last = u + open > t;
    const bool take_first = u < t;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
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
  for (int k = 0; k < 4; ++k) lo[k] += begin[k];
}

// Phase 1 of a four-way pass: cuts[3p .. 3p + 3) = (x, a, c), the cut of output position
// min(p * spacing, count) inside its quad (twophase_partition::quad_cut): a keys from R0, x - a
// from R1, c from R2, the rest from R3. The cut is the merge path of X = merge(R0, R1) and
// Y = merge(R2, R3), whose elements are not stored; the two-way partitions of the same input
// (`partitions`, every `spacing` outputs) are samples of both.
// - Coarse search over X indices that are multiples of `spacing`: with the cut diagonal itself a
//   multiple of `spacing`, both X's element there and Y's element just before the matching Y
//   sample are read straight off the samples (two dependent loads a probe).
// - Fine selection inside the window left: the samples at its ends bound the count taken from
//   each run, and select_runs halves one run's bound a round (one dependent load a round, about
//   4 log2(spacing / 2) rounds; the nested search it replaced, a merge path search of X and of Y
//   inside every probe, was the square of log2(spacing)).
// The coarse search of each cut is run by a group of `lanes` lanes of one warp (a power of two
// up to 32): every round the lanes probe `lanes` candidates at once, so a search over n candidates
// takes log(n) / log(lanes + 1) rounds of dependent loads instead of log2(n). Where the cuts are
// too few to keep the memory system busy, the chain's length is the kernel's time and more lanes
// shorten it, while where they are many the kernel is bound by the scattered loads themselves and
// one lane is best (the host picks, MergesortTuning::quad_cut_lanes). The fine selection runs on
// the group's first lane.
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

extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_quad_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                      const size_type* __restrict__ partitions, size_type spacing,
                                      size_type num_cuts, int lanes, size_type* __restrict__ cuts,
                                      unsigned long long* status, unsigned long long* samples_repair,
                                      unsigned long long* cuts_repair, unsigned generation) {
  static_assert(TP_PARTITION_NT % 32 == 0, "cut groups must not straddle warps");
  follow_previous_kernel();
  const twophase::input_check samples_check = {status, samples_repair, generation};
  const quad_samples samples(partitions, spacing, count, run, samples_check);
  const int shift = __ffs(lanes) - 1;  // lanes = 2^shift
  const unsigned reciprocal = 0xffffffffu / (unsigned)(lanes + 1);
  const int group_index = threadIdx.x >> shift, groups = blockDim.x >> shift;
  // With CHECK_ORDER the blocks overlap by one cut (twophase::overlapped_boundary).
  const size_type p = CHECK_ORDER ? twophase::overlapped_boundary(group_index, groups)
                                  : ((size_type)blockIdx.x * blockDim.x + threadIdx.x) >> shift;
  const int lane = threadIdx.x & (lanes - 1);
  const size_type pos = min(p * spacing, count);
  const mergesort_quad quad(count, run, pos);
  const size_type diag = pos - quad.starts[0];
  size_type counts[4] = {0, 0, 0, 0};
  if (p < num_cuts) {  // the whole group: its lanes share p
    const unsigned group = cut_group_mask(lanes);
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
        const kary_round round = {j_lo, j_hi - j_lo, lanes, reciprocal};
        bool answer = false;
        if (lane < round.active_lanes()) {
          const size_type xi = round.probe(lane) * spacing, yt = diag - xi;
          const key_type x_key = element_at(keys, x_pair, sampled_path(x_pair, samples, xi), xi);
          const key_type y_key = element_before(keys, y_pair, sampled_path(y_pair, samples, yt), yt);
          answer = twophase::takes_a<twophase::bounds_lower>(x_key, y_key, key_compare());
        }
        const int t = group_trues(group, lanes, answer);
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
    // Fine, on one lane: X's count lies in [begin, end] and Y's in [diag - end, diag - begin];
    // widened to the samples around them, each half's merge path bounds the counts of both its
    // runs (monotone in the half's diagonal), and select_runs finds the four counts inside.
    if (lane == 0) {
      const size_type x0 = begin / spacing * spacing, x1 = min((end + spacing - 1) / spacing * spacing, nx);
      const size_type y0 = (diag - end) / spacing * spacing,
                      y1 = min((diag - begin + spacing - 1) / spacing * spacing, ny);
      const size_type a0 = sampled_path(x_pair, samples, x0), a1 = sampled_path(x_pair, samples, x1);
      const size_type c0 = sampled_path(y_pair, samples, y0), c1 = sampled_path(y_pair, samples, y1);
      const size_type lo[4] = {a0, x0 - a0, c0, y0 - c0};
      const size_type hi[4] = {a1, x1 - a1, c1, y1 - c1};
#pragma unroll
      for (int k = 0; k < 4; ++k) counts[k] = lo[k];
      select_runs(keys, quad.starts, counts, hi, diag);
      if (CHECK_ORDER && !valid_cut(counts, lo, hi, quad.starts, diag)) {
        twophase::raise_status(samples_check, twophase::STATUS_ORDER_INCONSISTENT);
      }
      cuts[3 * p] = counts[0] + counts[1];
      cuts[3 * p + 1] = counts[0];
      cuts[3 * p + 2] = counts[2];
    }
  }
  if constexpr (CHECK_ORDER) {
    // Each cut against the one before it in the same quad: every run's count must not decrease.
    __shared__ size_type block_counts[TP_PARTITION_NT][4];
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < 4; ++k) block_counts[group_index][k] = counts[k];
    }
    __syncthreads();
    if (lane == 0 && group_index > 0 && p < num_cuts) {
      const size_type prev_pos = min((p - 1) * spacing, count);
      bool monotone = mergesort_quad(count, run, prev_pos).starts[0] != quad.starts[0];
      if (!monotone) {
        monotone = true;
#pragma unroll
        for (int k = 0; k < 4; ++k) monotone &= block_counts[group_index - 1][k] <= counts[k];
      }
      if (!monotone) {
        const twophase::input_check cuts_check = {status, cuts_repair, generation};
        twophase::report_bad_boundary(cuts_check, p - 1);
        twophase::raise_status(cuts_check, twophase::STATUS_ORDER_INCONSISTENT);
      }
    }
  }
}

// Level-one pieces of a four-way tile: the X part (R0 with R1) and the Y part (R2 with R3) are
// each cut into pieces of PIECE outputs, one piece a thread. With pieces of VT outputs the two
// rounded-up parts need NT + 1 pieces whenever the X part is not a multiple of VT, and one thread
// would merge two pieces while the block waits at the barrier. PIECE > VT makes
// ceil(nx / PIECE) + ceil(ny / PIECE) <= NV / PIECE + 2 <= NT hold for NT >= 2 PIECE / (PIECE - VT);
// PIECE is odd so that the piece-strided shared-memory stores hit distinct banks.
template <int VT>
struct quad_piece {
  static constexpr int PIECE = VT % 2 == 1 ? VT + 2 : VT + 1;
};

// Shared memory of one four-way tile: one key buffer holds the tile's input (NV keys, the slices
// of R0..R3 in order) and then, overwritten after a barrier, the level-one output (X's part, then
// Y's part from the next multiple of PIECE: at most NV + PIECE - 1 keys), with one slot past the
// end that the serial merge may read; the input's NV keys are followed by PIECE + 1 readable
// slots, so that level one's last piece of a part may run all PIECE steps (below); with values,
// the level-one sources, then the tile's NV input values (copied in asynchronously while the keys
// are merged, then gathered from here).
template <int NV, int VT>
struct quad_smem {
  static constexpr int KEYS = NV + quad_piece<VT>::PIECE + 1;
  static constexpr int KEY_BYTES = align16(KEYS * (int)sizeof(key_type));
  static constexpr int SOURCE_BYTES = TP_HAS_VALUES ? align16(KEYS * (int)sizeof(int)) : 0;
  static constexpr int VALUE_BYTES = TP_HAS_VALUES ? NV * (int)sizeof(value_type) : 0;
  static constexpr int BYTES = KEY_BYTES + SOURCE_BYTES + VALUE_BYTES;
};

// Start copying `*src` to shared `*dst` without waiting for it (cp.async, sm_80+) where the
// value's size allows (4, 8 or 16 bytes), else copy it now; copy_async_wait() waits for this
// thread's copies. The four-way tile's value loads thus overlap its two merge levels instead of
// following them.
template <typename T>
__device__ __forceinline__ void copy_async(T* dst, const T* __restrict__ src) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16) {
    const unsigned shared_address = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared_address), "l"(src), "n"(sizeof(T))
                 : "memory");
  } else {
    *dst = *src;
  }
}

__device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}

// Where a four-way tile's input lies in global memory: the slices of runs 0..3 in order, slice k
// from tile position ends[k - 1] (0 for k = 0) to ends[k], as offsets from the quad's first key:
// tile position `pos` of slice k is at offset delta[k] + pos. With 32-bit offsets (a quad of at
// most 2^32 - 1 keys, so every sort of fewer keys) an element costs three compares, three selects,
// an add and a wide multiply-add for its address; a 64-bit global index built per element cost
// about 17 instructions a key. Selects on constant indices only: an array indexed by a computed
// run number is placed in local memory (one local load per key and value).
template <typename offset_t>
struct quad_slices {
  offset_t delta[4];
  int ends[4];
  __device__ __forceinline__ quad_slices(size_type quad_first, const size_type (&first)[4], const int (&tile_ends)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      ends[k] = tile_ends[k];
      // Modulo 2^32 for 32-bit offsets: the sum with pos is the offset itself, which fits.
      delta[k] = (offset_t)(first[k] - quad_first - (size_type)(k == 0 ? 0 : tile_ends[k - 1]));
    }
  }
  __device__ __forceinline__ offset_t offset(int pos) const {
    offset_t d = delta[0];
#pragma unroll
    for (int k = 1; k < 4; ++k) {
      if (pos >= ends[k - 1]) d = delta[k];
    }
    return d + (offset_t)pos;
  }
};

// Load a four-way tile's input keys to shared memory in tile order (all VT loads in flight before
// the stores), and start copying its values there (copy_async) to be gathered after the merges.
template <bool checked, int NT, int VT, typename offset_t>
__device__ __forceinline__ void load_quad_input(const key_type* __restrict__ src,
                                                const value_type* __restrict__ vals_src, size_type quad_first,
                                                const size_type (&first)[4], const int (&ends)[4], int tile_cnt,
                                                key_type* keys_shared, value_type* vals_shared, int tid) {
  const quad_slices<offset_t> slices(quad_first, first, ends);
  if (TP_HAS_VALUES) {
    const value_type* vals_quad = vals_src + quad_first;
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) copy_async(vals_shared + idx, vals_quad + slices.offset(idx));
    }
  }
  const key_type* keys_quad = src + quad_first;
  key_type x[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) x[i] = keys_quad[slices.offset(idx)];
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) keys_shared[idx] = x[i];
  }
}

// Phase 2 of a four-way pass: tile t merges outputs [t * NV, min((t + 1) * NV, count)) of its
// quad in two levels through shared memory: R0 with R1 and R2 with R3 (one piece of up to PIECE
// outputs a thread), then the two results (VT outputs a thread).
template <bool checked>
__device__ __forceinline__ void quad_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                          const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                          const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                          unsigned char* smem, const twophase::input_check& check) {
  constexpr int NT = TP_QUAD_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  constexpr int PIECE = quad_piece<VT>::PIECE;
  static_assert(NT * (PIECE - VT) >= 2 * PIECE, "four-way tile: too few threads for one level-one piece each");
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  int* sources = reinterpret_cast<int*>(smem + quad_smem<NV, VT>::KEY_BYTES);
  // With CHECK_ORDER: each warp's first walk start of the current level (twophase::publish_walk_start).
  __shared__ int warp_walk_starts[CHECK_ORDER ? NT / twophase::WARP_THREADS : 1];
  value_type* vals_shared =
      reinterpret_cast<value_type*>(smem + quad_smem<NV, VT>::KEY_BYTES + quad_smem<NV, VT>::SOURCE_BYTES);
  const int tid = threadIdx.x;
  const size_type tile = blockIdx.x;
  const size_type diag0 = tile * NV;
  const size_type diag1 = min(diag0 + NV, count);
  const mergesort_quad quad(count, run, diag0);
  const size_type d0 = diag0 - quad.starts[0], d1 = diag1 - quad.starts[0];
  size_type x0 = cuts[3 * tile], a0 = cuts[3 * tile + 1], c0 = cuts[3 * tile + 2];
  // A tile that ends its quad ends at the quad's full counts (the next entry is the next quad's).
  const bool ends_quad = diag1 == quad.starts[4];
  size_type x1 = ends_quad ? quad.starts[2] - quad.starts[0] : cuts[3 * tile + 3];
  size_type a1 = ends_quad ? quad.starts[1] - quad.starts[0] : cuts[3 * tile + 4];
  size_type c1 = ends_quad ? quad.starts[3] - quad.starts[2] : cuts[3 * tile + 5];
  if constexpr (CHECK_ORDER) {
    // Past the first bad cut, both ends follow the repaired path (repaired_cut).
    const size_type bad = twophase::first_bad_boundary(check);
    if (bad != twophase::NO_BAD_BOUNDARY) {
      size_type counts[4];
      repaired_cut(cuts, count, run, NV, tile, bad, counts);
      x0 = counts[0] + counts[1];
      a0 = counts[0];
      c0 = counts[2];
      if (!ends_quad) {
        repaired_cut(cuts, count, run, NV, tile + 1, bad, counts);
        x1 = counts[0] + counts[1];
        a1 = counts[0];
        c1 = counts[2];
      }
    }
  }
  if constexpr (CHECK_ORDER) {
    // As clamped_tile_end for the four runs: the end cut taken from the start cut on, within
    // each run, where it does not add up (only two disagreeing searches of one cut can do that).
    const size_type start[4] = {a0, x0 - a0, c0, d0 - x0 - c0};
    size_type end[4] = {a1, x1 - a1, c1, d1 - x1 - c1};
    const size_type cap[4] = {quad.starts[1] - quad.starts[0], quad.starts[2] - quad.starts[1],
                              quad.starts[3] - quad.starts[2], quad.starts[4] - quad.starts[3]};
    bool valid = end[0] + end[1] + end[2] + end[3] == d1;
#pragma unroll
    for (int k = 0; k < 4; ++k) valid &= start[k] <= end[k] && end[k] <= cap[k];
    if (!valid) {
#pragma unroll
      for (int k = 0; k < 4; ++k) end[k] = start[k];
      fill_runs_in_order(end, cap, d1 - d0);
      x1 = end[0] + end[1];
      a1 = end[0];
      c1 = end[2];
    }
  }
  // This tile's slice of each run: global start and length; `ends[k]` = tile position past run k.
  const size_type first[4] = {quad.starts[0] + a0, quad.starts[1] + (x0 - a0), quad.starts[2] + c0,
                               quad.starts[3] + (d0 - x0 - c0)};
  const int n0 = (int)(a1 - a0), n1 = (int)((x1 - a1) - (x0 - a0)), n2 = (int)(c1 - c0);
  const int tile_cnt = (int)(d1 - d0);
  const int ends[4] = {n0, n0 + n1, n0 + n1 + n2, tile_cnt};

  constexpr size_type NARROW_QUAD_KEYS = 0xffffffffull;  // quads whose offsets fit 32 bits
  if (quad.starts[4] - quad.starts[0] <= NARROW_QUAD_KEYS) {
    load_quad_input<checked, NT, VT, unsigned>(src, vals_src, quad.starts[0], first, ends, tile_cnt, keys_shared,
                                               vals_shared, tid);
  } else {
    load_quad_input<checked, NT, VT, size_type>(src, vals_src, quad.starts[0], first, ends, tile_cnt, keys_shared,
                                                vals_shared, tid);
  }
  __syncthreads();

  // Level one: this thread's piece of X's part (R0 with R1) or of Y's part (R2 with R3), kept in
  // registers until every thread has read the input, then stored over it: piece v lands at
  // keys_shared[PIECE * v ..], Y's pieces from the multiple of PIECE past X's part.
  const int nx = ends[1], ny = tile_cnt - ends[1];
  const int x_pieces = (nx + PIECE - 1) / PIECE;
  const int pieces = x_pieces + (ny + PIECE - 1) / PIECE;
  const int y_offset = PIECE * x_pieces;
  int produced = 0;
  {
    key_type piece_keys[PIECE];
    int piece_sources[PIECE];
    const bool in_x = tid < x_pieces;
    const int base = in_x ? 0 : ends[1];
    const int a_cnt = in_x ? n0 : n2;
    const int b_cnt = in_x ? n1 : ny - n2;
    const int diag = PIECE * (in_x ? tid : tid - x_pieces);
    int mp = 0;
    twophase::merge_range range = {base, base, base, base};
    if (tid < pieces) {
      mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared + base, a_cnt, keys_shared + base + a_cnt,
                                                             b_cnt, diag, key_compare());
    }
    // With CHECK_ORDER, where the next piece starts (tile position; every lane publishes, past
    // the pieces too).
    if (CHECK_ORDER) twophase::publish_walk_start(warp_walk_starts, base + mp);
    if (tid < pieces) {
      range = {base + mp, base + a_cnt, base + a_cnt + diag - mp, base + a_cnt + b_cnt};
      produced = min(PIECE, range.total());
      // Unchecked, PIECE steps even for the last piece of a part, which has fewer outputs: once
      // both of its runs are exhausted every step takes B and reads one slot further, at most
      // b_end + PIECE <= NV + PIECE, which the buffer holds (quad_smem::KEYS); the steps past
      // `produced` are not stored. (A checked merge costs a compare and a branch a step; an
      // unchecked one for full pieces beside it made ptxas spill at 64 registers.)
      twophase::serial_merge<twophase::bounds_lower, PIECE, false>(keys_shared, range, key_compare(), piece_keys,
                                                                   piece_sources);
    }
    // Every read of the input behind a barrier before the stores over it: the walk check's,
    // where the walks were exact, else one more.
    bool exact = false;
    if constexpr (CHECK_ORDER) {
      const bool has_next = tid < pieces && (in_x ? tid + 1 < x_pieces : tid + 1 < pieces);
      exact = twophase::walks_tile_exactly(warp_walk_starts, base + mp, range.a_begin, has_next);
      if (!exact) {
        // Each part unmerged: its R0 (R2) slice, then its R1 (R3) slice.
        if (tid < pieces) {
          twophase::concatenate<PIECE, true>(keys_shared, base, a_cnt, base + a_cnt, diag, produced, piece_keys,
                                             piece_sources);
        }
        if (tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
      }
    }
    if (!exact) __syncthreads();
#pragma unroll
    for (int i = 0; i < PIECE; ++i) {
      if (i < produced) {
        keys_shared[PIECE * tid + i] = piece_keys[i];
        if (TP_HAS_VALUES) sources[PIECE * tid + i] = piece_sources[i];
      }
    }
  }
  __syncthreads();

  // Level two: X's part [0, nx) with Y's part [y_offset, y_offset + ny).
  key_type keys[VT];
  int indices[VT];
  const int diag = min(VT * tid, tile_cnt);
  const int mp =
      twophase::merge_path<twophase::bounds_lower, int>(keys_shared, nx, keys_shared + y_offset, ny, diag, key_compare());
  if (CHECK_ORDER) twophase::publish_walk_start(warp_walk_starts, mp);
  twophase::merge_range range = {mp, nx, y_offset + diag - mp, y_offset + ny};
  twophase::serial_merge<twophase::bounds_lower, VT, checked>(keys_shared, range, key_compare(), keys, indices);
  // Exact walks have read their input behind the walk check's barrier: the store needs no other.
  bool exact = false;
  if constexpr (CHECK_ORDER) {
    const bool has_next = VT * (tid + 1) < tile_cnt;
    exact = twophase::walks_tile_exactly(warp_walk_starts, mp, range.a_begin, has_next);
    if (!exact) {
      // The two parts unmerged: X's, then Y's.
      if (!checked || diag < tile_cnt) {
        twophase::concatenate<VT, checked>(keys_shared, 0, nx, y_offset, diag, tile_cnt - diag, keys, indices);
      }
      if (tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
    }
  }
  if (TP_HAS_VALUES) {
    // Compose: level-two sources index the level-one output, whose sources index the tile input.
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (!checked || diag + i < tile_cnt) indices[i] = sources[indices[i]];
    }
  }
  twophase::store_through_shared<NT, VT, checked>(keys, keys_shared, dst + diag0, tile_cnt, tid, exact);
  if (TP_HAS_VALUES) {
    // Every read of `sources` above happened before store_through_shared's last barrier.
#pragma unroll
    for (int i = 0; i < VT; ++i) sources[VT * tid + i] = indices[i];
    copy_async_wait();
    __syncthreads();
    value_type v[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) v[i] = vals_shared[sources[idx]];
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_dst[diag0 + idx] = v[i];
    }
  }
}

// Blocks of the four-way tile that must fit on an SM by registers (MergesortTuning::
// quad_registers): ptxas uses as many registers as the launch bounds allow.
constexpr int QUAD_MIN_BLOCKS_PER_SM =
    TP_QUAD_REGISTERS > 0 ? twophase::blocks_by_registers(TP_QUAD_REGISTERS, TP_QUAD_NT) : 1;

extern "C" __global__ void __launch_bounds__(TP_QUAD_NT, QUAD_MIN_BLOCKS_PER_SM)
    twophase_mergesort_quad_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                 const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                 const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                 unsigned long long* status, unsigned long long* cuts_repair, unsigned generation) {
  constexpr int NV = TP_QUAD_NT * TP_VT;
  // Dynamic: quad_smem<NV, TP_VT>::BYTES (MergesortTuning::quad_shared_bytes), past 48 KiB for
  // the larger tiles.
  extern __shared__ __align__(16) unsigned char smem[];
  follow_previous_kernel();
  const twophase::input_check check = {status, cuts_repair, generation};
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    quad_tile<false>(src, count, run, cuts, dst, vals_src, vals_dst, smem, check);
  } else {
    quad_tile<true>(src, count, run, cuts, dst, vals_src, vals_dst, smem, check);
  }
}
#endif  // TP_QUAD_NT > 0
