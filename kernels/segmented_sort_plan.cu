//! The segmented sort's plan: each pair's straddle at every level, then each tile's levels (two-way or four-way) and the levels' work lists.
// Part of the segmented-sort program, after kernels/segmented_sort.cu (its parameter blocks,
// control words, straddles and masks).

// Whether the program merges four-way levels: the four-way tile takes its cuts as exact, so
// only a trusted comparator's programs (no CHECK_ORDER) do.
constexpr bool FOUR_WAY_LEVELS = !CHECK_ORDER;

// The plan's first kernel: one thread an entry of the straddle table (every pair of runs at every
// level, level-major as straddle_offset lays them out), each searching its pair's straddle once.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_straddles(const size_type* starts, const size_type* ends, size_type num_segments,
                               size_type count, size_type num_tiles, unsigned long long* masks, size_type* straddles,
                               unsigned* control, unsigned* lists, unsigned levels, unsigned /*four_way*/) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  follow_previous_launch();
  if (tile_path_off(control)) return;
  const size_type entry = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  size_type pair = entry;
  unsigned level = 0;
  for (; level < levels; ++level) {
    const size_type pairs = pairs_at_level(num_tiles, level);
    if (pair < pairs) break;
    pair -= pairs;
  }
  if (level >= levels) return;
  const size_type run = NV << level;
  const straddle s = find_straddle(starts, ends, num_segments, count, pair * 2 * run, run);
  straddles[2 * entry] = s.empty() ? 0 : s.lo;
  straddles[2 * entry + 1] = s.empty() ? 0 : s.hi;
}

// The plan: one thread a tile, after twophase_segsort_straddles. Level k touches the tile where its
// pair's straddle overlaps it: the tile's mask of touching levels, and the tile appended to the
// work list of each. With FOUR_WAY_LEVELS, at levels k = four_way, four_way + 2, ... below the last,
// a tile whose quad (its level-(k + 1) pair: four runs of NV << k) lies wholly in one segment,
// every run of it holding keys, is merged four-way at level k: mask bit SEGSORT_MAX_LEVELS + k set
// and bit k + 1 cleared, listed at level k (whose partitions are the four-way cuts' samples) and
// in level k's four-way list, not at level k + 1. Every tile of such a quad is one, so no
// two-way merge reads a tile that a four-way merge writes. A block counts its tiles of each list
// by ballots and reserves their slots with one atomic a list (one a tile and level queues a
// million atomics on 16 words for one segment of 2^27 keys), so that a list holds each block's
// tiles in order: list j (j < levels: level j's, else level j - levels's four-way list) at
// lists[j * num_tiles ..].
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_plan(const size_type* starts, const size_type* ends, size_type num_segments, size_type count,
                          size_type num_tiles, unsigned long long* masks, size_type* straddles, unsigned* control,
                          unsigned* lists, unsigned levels, unsigned four_way) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  constexpr int WARPS = TP_PARTITION_NT / twophase::WARP_THREADS;
  constexpr unsigned MAX_LISTS = 2 * SEGSORT_MAX_LEVELS;
  static_assert(TP_PARTITION_NT % twophase::WARP_THREADS == 0, "whole warps");
  static_assert(TP_PARTITION_NT >= MAX_LISTS, "a thread a list reserves its slots");
  // Per warp and list: the warp's listed tiles (a ballot), then the tiles of the block's warps
  // before it plus the block's first slot.
  __shared__ unsigned listed_by_warp[WARPS][MAX_LISTS];
  __shared__ unsigned slot_of_warp[WARPS][MAX_LISTS];
  follow_previous_launch();
  if (tile_path_off(control)) return;  // the same verdict for every block
  const size_type tile = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  const bool live = tile < num_tiles;
  const int warp = threadIdx.x / twophase::WARP_THREADS;
  const unsigned lane = threadIdx.x % twophase::WARP_THREADS;
  const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
  unsigned long long mask = 0;
  size_type offset = 0;  // the level's first straddle entry
  for (unsigned level = 0; live && level < levels; ++level) {
    const size_type* entry = straddles + 2 * (offset + (tile >> (level + 1)));
    const size_type lo = entry[0], hi = entry[1];
    mask |= (unsigned long long)(lo < hi && lo < t1 && t0 < hi) << level;
    offset += pairs_at_level(num_tiles, level);
  }
  // (`level < levels` first: four_way may be past every level, where level + 1 would wrap.)
  for (unsigned level = four_way; FOUR_WAY_LEVELS && live && level < levels && level + 1 < levels; level += 2) {
    const size_type run = NV << level, quad_begin = t0 / (4 * run) * (4 * run);
    const size_type quad_end = min(quad_begin + 4 * run, count);
    const size_type* entry = straddles + 2 * (straddle_offset(num_tiles, level + 1) + (tile >> (level + 2)));
    if (entry[0] == quad_begin && entry[1] == quad_end && quad_end > quad_begin + 3 * run) {
      mask = (mask & ~(2ull << level)) | (1ull << level) | (1ull << (SEGSORT_MAX_LEVELS + level));
    }
  }
  const unsigned lists_used = 2 * levels;
  for (unsigned list = 0; list < lists_used; ++list) {
    const bool listed = list < levels ? ((mask >> list) & 1) != 0 : four_way_at(mask, list - levels);
    const unsigned ballot = __ballot_sync(0xffffffffu, listed);
    if (lane == 0) listed_by_warp[warp][list] = ballot;
  }
  __syncthreads();
  if (threadIdx.x < lists_used) {
    const unsigned list = threadIdx.x;
    unsigned block_tiles = 0;
    for (int w = 0; w < WARPS; ++w) {
      slot_of_warp[w][list] = block_tiles;
      block_tiles += __popc(listed_by_warp[w][list]);
    }
    const unsigned word = list < levels ? CONTROL_LIST_COUNTS + list : CONTROL_FOUR_WAY_COUNTS + (list - levels);
    const unsigned first = block_tiles > 0 ? atomicAdd(control + word, block_tiles) : 0;
    for (int w = 0; w < WARPS; ++w) slot_of_warp[w][list] += first;
  }
  __syncthreads();
  if (!live) return;
  const unsigned lanes_before = (1u << lane) - 1;
  for (unsigned list = 0; list < lists_used; ++list) {
    if (((listed_by_warp[warp][list] >> lane) & 1) == 0) continue;
    const unsigned slot = slot_of_warp[warp][list] + __popc(listed_by_warp[warp][list] & lanes_before);
    lists[(size_type)list * num_tiles + slot] = (unsigned)tile;
  }
  masks[tile] = mask;
}
