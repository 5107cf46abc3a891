//! Sorted search kernels: merge path partitions of needles against haystack, then serial_search per tile.
// The host prepends the prelude of program() (key_type, key_compare, TP_NT, TP_VT, ...), a line
// defining index_type and TP_UPPER, then partition.cuh, serial.cuh and cta_merge.cuh.
//
// Any needles, haystack and comparator keep every read and write in bounds: the partitions are
// checked pairwise and repaired to a monotone path (partition.cuh, repaired_boundary), so the
// tiles cover the needles and the haystack exactly; each needle's bound is written once and lies
// within [0, haystack_count]. Each tile checks its adjacent needles and haystack keys (the pair
// across its start included) and raises STATUS_FIRST_UNSORTED (needles) or
// STATUS_SECOND_UNSORTED (haystack); partitions out of order on inputs that passed those checks
// mean the comparator is inconsistent (STATUS_ORDER_INCONSISTENT, raised by the partition kernel).

using twophase::size_type;

namespace twophase {
// The kernels' parameter blocks, twins of SearchPartitionParams and SearchTileParams in
// crates/gpu/src/sorted_search/mod.rs (the generated program static_asserts
// the layouts equal and that each kernel's parameters are these fields in order).
// Both blocks start with the needles and the haystack.
struct search_inputs {
  const key_type* needles;
  size_type needle_count;
  const key_type* haystack;
  size_type haystack_count;
};
typedef partition_params<search_inputs> search_partition_params;

struct search_tile_fields : search_inputs {
  const size_type* partitions;
  index_type* out;
};
typedef checked_params<search_tile_fields> search_tile_params;
}  // namespace twophase

constexpr twophase::bounds_t SEARCH_BOUNDS = TP_UPPER ? twophase::bounds_upper : twophase::bounds_lower;

// Output diagonal of boundary p: min(p * spacing, total).
__device__ __forceinline__ size_type search_diagonal(size_type p, size_type spacing, size_type total) {
  const size_type diag = p * spacing;
  return diag < total ? diag : total;
}

// Phase 1: partitions[p] = needles before output diagonal min(p * spacing, needles + haystack),
// searched by groups of `lanes` lanes (twophase::search_partitions). Each boundary after the
// block's first is checked against the one before it; the first pair out of order is reported to
// the repair slot.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_search_partition(const key_type* __restrict__ needles, size_type needle_count,
                              const key_type* __restrict__ haystack, size_type haystack_count, size_type spacing,
                              size_type num_partitions, size_type* __restrict__ partitions, size_type lanes,
                              unsigned* arrivals, unsigned long long* status, unsigned long long* repair,
                              unsigned generation) {
  twophase::pdl_launch_dependents();
  const twophase::input_check check = {status, repair, generation};
  const size_type total = needle_count + haystack_count;
  twophase::search_partitions<TP_PARTITION_NT>(
      num_partitions, partitions, (int)lanes, arrivals, check, twophase::STATUS_ORDER_INCONSISTENT,
      [&](size_type p) { return search_diagonal(p, spacing, total); },
      [&](size_type diag) {
        return twophase::group_merge_path<SEARCH_BOUNDS>(needles, needle_count, haystack, haystack_count, diag,
                                                         key_compare(), (int)lanes);
      });
}

// Phase 2: tile t covers merge outputs [t * NV, min((t + 1) * NV, total)); each of its needles gets
// its bound in the haystack (global index) in out[needle].
// The tile's dynamic shared memory (SortedSearchTuning::shared_bytes, past 48 KiB by opt-in):
// NV + 1 keys (16-byte aligned), then NV bounds.
constexpr int SEARCH_KEY_BYTES = ((TP_NT * TP_VT + 1) * (int)sizeof(key_type) + 15) / 16 * 16;
constexpr int SEARCH_SHARED_BYTES = SEARCH_KEY_BYTES + TP_NT * TP_VT * (int)sizeof(int);
// The tile kernel's launch bound: the blocks shared memory holds (twophase::blocks_by_shared),
// but at most the blocks that leave SEARCH_TILE_REGISTERS a thread. Unbounded, the order and walk
// checks took 79 registers for 4-byte keys: 3 blocks of 256 threads where shared memory holds 4;
// bounded by shared memory alone, 1-byte keys (8 blocks, 32 registers) spilled 152 bytes.
constexpr int SEARCH_TILE_REGISTERS = 64;
constexpr int SEARCH_BLOCKS_BY_SHARED = twophase::blocks_by_shared(SEARCH_SHARED_BYTES, TP_NT);
constexpr int SEARCH_BLOCKS_BY_REGISTERS = twophase::blocks_by_registers(SEARCH_TILE_REGISTERS, TP_NT);
constexpr int SEARCH_TILE_MIN_BLOCKS =
    SEARCH_BLOCKS_BY_SHARED < SEARCH_BLOCKS_BY_REGISTERS ? SEARCH_BLOCKS_BY_SHARED : SEARCH_BLOCKS_BY_REGISTERS;

extern "C" __global__ void __launch_bounds__(TP_NT, SEARCH_TILE_MIN_BLOCKS)
    twophase_search_tile(const key_type* __restrict__ needles, size_type needle_count,
                         const key_type* __restrict__ haystack, size_type haystack_count,
                         const size_type* __restrict__ partitions, index_type* __restrict__ out,
                         unsigned long long* status, unsigned long long* repair, unsigned generation) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  extern __shared__ __align__(16) unsigned char smem[];
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  int* bounds_shared = reinterpret_cast<int*>(smem + SEARCH_KEY_BYTES);

  twophase::pdl_wait();  // the partitions
  const twophase::input_check check = {status, repair, generation};
  const int tid = threadIdx.x;
  const size_type tile = blockIdx.x;
  const size_type total = needle_count + haystack_count;
  const size_type diag0 = tile * NV;
  const size_type diag1 = diag0 + NV < total ? diag0 + NV : total;
  // The tile's boundaries on a monotone path whatever the partition kernel found.
  const size_type bad = twophase::first_bad_boundary(check);
  const bool repairing = bad != twophase::NO_BAD_BOUNDARY;
  const size_type bad_path = repairing ? partitions[bad] : 0;
  const size_type bad_diag = repairing ? search_diagonal(bad, NV, total) : 0;
  const size_type a0 =
      twophase::repaired_boundary(tile, partitions[tile], diag0, bad, bad_path, bad_diag, needle_count);
  const size_type a1 = twophase::clamped_tile_end(
      a0, twophase::repaired_boundary(tile + 1, partitions[tile + 1], diag1, bad, bad_path, bad_diag, needle_count),
      diag1 - diag0);
  const size_type b0 = diag0 - a0;
  const int a_cnt = (int)(a1 - a0);
  const int tile_cnt = (int)(diag1 - diag0);
  const int b_cnt = tile_cnt - a_cnt;
  __shared__ key_type predecessors[2];
  constexpr bool REBASED = true;  // the loads select per-thread addresses (load_tile)
  if (tile_cnt == NV) {
    twophase::load_tile<NT, VT, false, REBASED>(needles, a0, a_cnt, haystack, b0, tile_cnt, keys_shared, tid,
                                                predecessors);
  } else {
    twophase::load_tile<NT, VT, true, REBASED>(needles, a0, a_cnt, haystack, b0, tile_cnt, keys_shared, tid,
                                               predecessors);
  }
  // The pairs across the tile's start: the key before it of each input, loaded with the tile.
  unsigned bits =
      twophase::tile_start_unsorted(keys_shared, predecessors, a0, a_cnt, b0, tile_cnt, key_compare());

  // Phase 1 inside the tile, then VT serial search steps per thread, checking the order of the
  // keys they take. Each merge path lies within the tile's ranges and the walk never takes from an
  // exhausted side, for any comparator.
  __shared__ int warp_walk_starts[NT / 32];
  const int diag = min(VT * tid, tile_cnt);
  const int mp = twophase::merge_path<SEARCH_BOUNDS, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt, diag,
                                                          key_compare());
  twophase::publish_walk_start(warp_walk_starts, mp);
  const int b_start = a_cnt + diag - mp;
  twophase::merge_range range = {mp, a_cnt, b_start, tile_cnt};
  // Every thread of a full tile walks VT steps: the unchecked walk.
  bool inverted =
      tile_cnt == NV
          ? twophase::serial_search<SEARCH_BOUNDS, VT, false>(keys_shared, range, a_cnt, key_compare(), bounds_shared)
          : twophase::serial_search<SEARCH_BOUNDS, VT, true>(keys_shared, range, a_cnt, key_compare(), bounds_shared);
  // The pair of each input across this walk's start: with the walks' own pairs, every adjacent
  // pair of the tile when the walks tile it exactly.
  if (0 < mp && mp < a_cnt) inverted |= key_compare()(keys_shared[mp], keys_shared[mp - 1]);
  if (a_cnt < b_start && b_start < tile_cnt) inverted |= key_compare()(keys_shared[b_start], keys_shared[b_start - 1]);
  // Rare: name the input with a pair out of order around the keys this walk took, else the
  // comparator (as the merge does).
  if (inverted) {
    bits |= twophase::walk_inputs_unsorted(keys_shared, mp, range.a_begin, b_start, range.b_begin, a_cnt, tile_cnt,
                                           key_compare());
  }
  const int next_in_warp = twophase::walk_start_down_warp(mp);
  // One barrier: the bounds' stores before their loads, and each warp's first start before lane
  // 31 of the warp before reads it.
  __syncthreads();
  // Walks that ended where the next began covered every key of the tile, so together they
  // checked every adjacent pair. Where a walk did not (unsorted keys or an inconsistent
  // comparator), this thread checks, in each input, the pair across its walk's end (which the
  // next walk's start check no longer covers) and the pairs of the keys between its end and the
  // next walk's start, which no walk took.
  if (VT * (tid + 1) < tile_cnt) {
    const int next_a = twophase::next_walk_start(warp_walk_starts, next_in_warp);
    if (next_a != range.a_begin) {
      const int next_b = a_cnt + VT * (tid + 1) - next_a;
      bits |= twophase::STATUS_ORDER_INCONSISTENT |
              twophase::run_unsorted(keys_shared, range.a_begin, max(next_a, range.a_begin), 0, a_cnt,
                                     twophase::STATUS_FIRST_UNSORTED, key_compare()) |
              twophase::run_unsorted(keys_shared, range.b_begin, max(next_b, range.b_begin), a_cnt, tile_cnt,
                                     twophase::STATUS_SECOND_UNSORTED, key_compare());
    }
  }
  if (bits) twophase::raise_status(check, bits);

  // Strided, coalesced store of the tile's needles' bounds. Clamped into the tile's haystack
  // range: when the walks did not tile the merge (an inconsistent comparator), a needle's slot
  // may have been written by no walk.
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (idx < a_cnt) {
      // One unsigned min: a negative slot wraps past b_cnt and lands on it.
      const int bound = (int)min((unsigned)bounds_shared[idx], (unsigned)b_cnt);
      out[a0 + idx] = (index_type)(b0 + (size_type)bound);
    }
  }
}
