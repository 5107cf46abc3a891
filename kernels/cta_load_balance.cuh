//! One tile of a load-balancing search per CTA: segment starts to shared, serial_load_balance, strided hand-out.
#pragma once

namespace twophase {

// Load-balancing merge path (twophase_partition::load_balance_path): at output diagonal `diag` of
// the merge of the work items 0..total (A) with the segment starts scan[0, num_segments) (B), how
// many items precede it, searched by a group of `lanes` lanes (first_untaken). Upper bound: a
// start equal to an item index comes first.
template <typename index_t>
__device__ __forceinline__ size_type load_balance_path(size_type total, const index_t* __restrict__ scan,
                                                       size_type num_segments, size_type diag, int lanes) {
  const size_type begin = diag > num_segments ? diag - num_segments : 0;
  const size_type end = diag < total ? diag : total;
  return first_untaken(begin, end, lanes, [&](size_type mid) { return mid < (size_type)scan[diag - 1 - mid]; });
}

// A tile-local value in a load-balancing tile's shared memory: a start relative to the tile's
// first item or a segment slot, both at most NV for a valid scan. A start past the tile wraps
// when stored; the tile has flagged it and calls no op, and the walk stays in bounds for any
// stored values. 16 bits, so that a tile takes half the shared memory and eight blocks of
// 256 x 15 fit an SM where seven did.
typedef short tile_short;

// Shared memory of one load-balancing tile of NV = NT * VT merge outputs: the tile's segment
// starts relative to its first item (NV + 2 values: 0 for the segment open at the tile start, up
// to NV starts, a sentinel) and each item's segment slot (NV values).
template <int NV>
struct load_balance_shared {
  // After the tile's starts: larger than every tile-local item, so that the walk never takes it.
  static constexpr tile_short START_SENTINEL = 0x7fff;
  static_assert(NV < START_SENTINEL, "a tile's items and slots must fit tile_short below the sentinel");
  tile_short starts[NV + 2];
  tile_short segments[NV];
};

// The unsigned type of a tile's start offsets: 32-bit for 32-bit indices, else 64-bit.
template <int INDEX_BYTES>
struct tile_offset {
  typedef size_type type;
};
template <>
struct tile_offset<4> {
  typedef unsigned type;
};

// Rounds of starts a tile thread keeps in flight (cta_load_balance), a register each for 4-byte
// starts, two for 8-byte ones. All VT rounds of 4-byte starts spilled the interval kernels at
// VT = 23; a typical tile (several items a segment) holds fewer than 8 rounds of starts anyway.
constexpr int START_ROUNDS_IN_FLIGHT = 8;
constexpr int WIDE_START_ROUNDS_IN_FLIGHT = 4;

// The load-balancing merge path of boundary p: min(p * spacing, total + num_segments).
__device__ __forceinline__ size_type load_balance_diagonal(size_type p, size_type spacing, size_type count) {
  const size_type diag = p * spacing;
  return diag < count ? diag : count;
}

// A tile's walk as its op sees it (tile-local, so that the op's hand-out loop runs on 32-bit
// offsets): item a0 + idx, for idx < a_cnt, lies in the segment of slot slots[idx]. Slot 0 is
// segment b0 - 1, open at the tile's start, which began open_rank items before a0; slot k >= 1
// is segment b0 - 1 + k, from a0 + starts[k] (0 <= starts[k] <= idx for its items). starts[0]
// is 0, slot 0's start clamped to the tile.
struct load_balance_tile {
  size_type a0;
  size_type b0;
  size_type open_rank;
  int a_cnt;
  const tile_short* starts;
  const tile_short* slots;

  __device__ __forceinline__ size_type item(int idx) const { return a0 + (size_type)idx; }
  __device__ __forceinline__ size_type segment(int slot) const { return b0 - 1 + (size_type)slot; }
  // Item a0 + idx's rank in its segment: its distance from the segment's start.
  __device__ __forceinline__ size_type rank(int idx, int slot) const {
    return (size_type)(idx - starts[slot]) + (slot > 0 ? 0 : open_rank);
  }
  // The rank modulo 2^32: exact when ranks are below 2^32, as with 32-bit indices (rank <= item <
  // total <= 2^32 - 1).
  __device__ __forceinline__ unsigned rank32(int idx, int slot) const {
    return (unsigned)(idx - starts[slot]) + (slot > 0 ? 0u : (unsigned)open_rank);
  }
};

// The rank of item a0 + idx as an index_t: 32-bit arithmetic for 32-bit indices, else 64-bit.
template <typename index_t>
__device__ __forceinline__ index_t tile_rank(const load_balance_tile& tile, int idx, int slot) {
  if constexpr (sizeof(index_t) == 4) {
    return (index_t)tile.rank32(idx, slot);
  } else {
    return (index_t)tile.rank(idx, slot);
  }
}

// Calls f(idx, slot) for each item of the tile in strided order: thread `tid` takes the tile's
// items tid, tid + NT, ..., so that item-indexed accesses of consecutive threads are coalesced.
// Each round tests the items left to the thread against a constant (one compare a round).
template <int NT, int VT, typename f_t>
__device__ __forceinline__ void for_each_tile_item(const load_balance_tile& tile, f_t f) {
  const int tid = threadIdx.x;
  const int left = tile.a_cnt - tid;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (NT * i < left) f(NT * i + tid, tile.slots[NT * i + tid]);
  }
}

// Calls op(item, segment, rank) (64-bit global values) for each item of the tile, in strided order:
// the generic hand-out, for ops that need global values (the user's snippet, interval move).
template <int NT, int VT, typename op_t>
__device__ __forceinline__ void for_each_global_item(const load_balance_tile& tile, const op_t& op) {
  for_each_tile_item<NT, VT>(tile,
                             [&](int idx, int slot) { op(tile.item(idx), tile.segment(slot), tile.rank(idx, slot)); });
}

// Tile `blockIdx.x` of the load-balancing search: outputs [tile * NV, min((tile + 1) * NV, total +
// num_segments)) of the merge of items with segment starts. Hands the walked tile to
// op.hand_out<NT, VT>(load_balance_tile), which visits each work item once, in strided order
// (for_each_tile_item; for_each_global_item calls op(item, segment, rank) with 64-bit values).
// Inside the tile, items and starts are 32-bit and relative to the tile's first item a0; how far
// before a0 the segment open at the tile's beginning started stays 64-bit.
//
// Any scan keeps every access in bounds: the tile's boundaries follow the repaired monotone path
// (partition.cuh), and the tile checks what a valid scan guarantees of its part (every start
// taken lies in [a0, a1] and does not decrease, the start before the tile is at most a0, scan[0]
// is 0); a tile that finds its part invalid raises STATUS_SCAN_INVALID and calls no op. A tile
// whose part is valid calls op with item < total, segment < num_segments and rank <= item.
template <int NT, int VT, typename index_t, typename op_t>
__device__ __forceinline__ void cta_load_balance(const index_t* __restrict__ scan, size_type num_segments,
                                                 size_type total, const size_type* __restrict__ partitions,
                                                 const input_check& check, load_balance_shared<NT * VT>& shared,
                                                 op_t& op) {
  constexpr int NV = NT * VT;
  const int tid = threadIdx.x;
  const size_type tile = blockIdx.x;
  const size_type count = total + num_segments;
  const size_type diag0 = tile * NV;
  const size_type diag1 = diag0 + NV < count ? diag0 + NV : count;
  const size_type bad = first_bad_boundary(check);
  const bool repairing = bad != NO_BAD_BOUNDARY;
  const size_type bad_path = repairing ? partitions[bad] : 0;
  const size_type bad_diag = repairing ? load_balance_diagonal(bad, NV, count) : 0;
  const size_type a0 = repaired_boundary(tile, partitions[tile], diag0, bad, bad_path, bad_diag, total);
  const size_type a1 = repaired_boundary(tile + 1, partitions[tile + 1], diag1, bad, bad_path, bad_diag, total);
  const size_type b0 = diag0 - a0;
  const int a_cnt = (int)(a1 - a0);
  const int b_cnt = (int)((diag1 - diag0) - (a1 - a0));
  const int tile_cnt = a_cnt + b_cnt;

  // The tile's starts, relative to a0: every start taken inside the tile lies in [a0, a1] (the
  // merge takes a start only after the items before it, and before the items from it on).
  // Slot 0 is the segment open at the tile start; slot k >= 1 is segment b0 - 1 + k.
  // That, the start before the tile at most a0, and scan[0] == 0 (so a tile with items and
  // b0 == 0 holds starts) are what a valid scan guarantees of the tile's part; a tile that breaks
  // them still walks in bounds (the walk stays in the tile for any start values) but calls no op.
  // A thread's loads are issued a batch of rounds before any is checked and stored, to keep them
  // in flight together (checked as each arrived, the loads went out one at a time); a few rounds
  // a batch, as VT rounds of them did not fit the registers. The rounds stop at the first one
  // past the tile's starts, a block-uniform test: a tile of NV outputs holds b_cnt
  // starts, fewer than NV unless every segment is empty, and a predicated round past them cost as
  // many instructions as a live one. In the last live round, a thread past the last start loads
  // (and checks) that start again rather than branching around its load.
  // Each start is taken relative to a0, wrapping past a_cnt when below a0. With 32-bit indices
  // the arithmetic is 32-bit and as exact (every start and a1 are below 2^32, so a start below
  // a0 wraps to at least 2^32 - a0 > a_cnt); 64-bit compares cost about 19 instructions a start.
  // The bound is checked once, on the largest start (a max a start, not a compare and an or).
  const size_type open_start = b0 > 0 ? (size_type)scan[b0 - 1] : 0;
  bool bad_scan = open_start > a0 || (b0 == 0 && a_cnt > 0 && b_cnt == 0);
  using offset_t = typename tile_offset<sizeof(index_t)>::type;
  constexpr int ROUNDS_IN_FLIGHT =
      sizeof(index_t) == sizeof(unsigned) ? START_ROUNDS_IN_FLIGHT : WIDE_START_ROUNDS_IN_FLIGHT;
  const index_t* tile_scan = scan + b0;
  offset_t last_start = 0;
#pragma unroll
  for (int first = 0; first < VT; first += ROUNDS_IN_FLIGHT) {
    index_t loaded[ROUNDS_IN_FLIGHT];
#pragma unroll
    for (int r = 0; r < ROUNDS_IN_FLIGHT; ++r) {
      const int i = first + r;
      if (i >= VT || NT * i >= b_cnt) break;
      loaded[r] = tile_scan[(unsigned)min(NT * i + tid, b_cnt - 1)];
    }
#pragma unroll
    for (int r = 0; r < ROUNDS_IN_FLIGHT; ++r) {
      const int i = first + r;
      if (i >= VT || NT * i >= b_cnt) break;
      const int idx = NT * i + tid;
      const offset_t start = (offset_t)loaded[r] - (offset_t)a0;
      last_start = max(last_start, start);
      if (i == 0 && tid == 0) bad_scan |= b0 == 0 && start != 0;  // scan[0] == 0
      if (idx < b_cnt) shared.starts[1 + idx] = (tile_short)start;
    }
  }
  bad_scan |= last_start > (offset_t)a_cnt;
  if (tid == 0) {
    shared.starts[0] = 0;  // slot 0's start, clamped to the tile
    shared.starts[b_cnt + 1] = shared.START_SENTINEL;
  }
  __syncthreads();
  // Adjacent starts inside the tile must not decrease. Not unrolled: hoisting its loads cost
  // registers and occupancy.
#pragma unroll 1
  for (int idx = tid + 1; idx < b_cnt; idx += NT) bad_scan |= shared.starts[1 + idx] < shared.starts[idx];

  // Phase 1 inside the tile: this thread's merge path at diagonal VT * tid, upper bound, 32-bit:
  // the items before the diagonal, the first m in [lo, hi] with !(m < starts[diag - m]) (B
  // element diag - 1 - m is slot diag - m). Found by binary lifting: steps of fixed powers of two,
  // largest first, each moving `begin` past a probe that still precedes the path. Branch-free,
  // the same steps for every thread, 6 instructions a step against 10 an iteration of the
  // bisection loop it replaces (11 steps at NV = 3840, where bisection took about 10). A probe
  // past hi is clamped to hi, where a valid scan's predicate is false (starts[diag - a_cnt] is at
  // most a_cnt, and starts[0] = 0 at most diag), so the clamp never moves `begin` wrongly; on
  // another scan the final clamp keeps `begin` in [lo, hi]. Every probe reads starts[0, b_cnt].
  // hi - lo <= min(a_cnt, b_cnt) <= NV / 2, less than the sum of the steps.
  constexpr int SEARCH_STEP_MAX = 1 << (ceil_log2(NV / 2 + 1) - 1);
  const int diag = min(VT * tid, tile_cnt);
  const int lo = diag > b_cnt ? diag - b_cnt : 0;
  const int hi = diag < a_cnt ? diag : a_cnt;
  int begin = lo;
#pragma unroll
  for (int step = SEARCH_STEP_MAX; step > 0; step >>= 1) {
    const int probe = min(begin + step - 1, hi);
    if (probe < shared.starts[diag - probe]) begin = probe + 1;
  }
  begin = min(begin, hi);

  // Phase 2: VT merge steps per thread; each item's segment slot goes to shared memory. B is the
  // tile's starts from slot 1 on, indexed from 0, so that the number of starts taken before an
  // item, which the walk records, is its slot. Only the threads at the end of the last tile have
  // fewer than VT outputs left. The walk writes segments only below begin + VT <= VT * (tid + 1)
  // whatever the starts (serial_load_balance).
  merge_range range = {begin, a_cnt, diag - begin, b_cnt};
  if (range.total() >= VT) {
    serial_load_balance<VT, false>(shared.starts + 1, range, shared.segments);
  } else {
    serial_load_balance<VT, true>(shared.starts + 1, range, shared.segments);
  }
  if (__syncthreads_or(bad_scan)) {
    if (tid == 0) raise_status(check, STATUS_SCAN_INVALID);
    return;
  }
  const load_balance_tile walked = {a0, b0, a0 - open_start, a_cnt, shared.starts, shared.segments};
  op.template hand_out<NT, VT>(walked);
}

}  // namespace twophase
