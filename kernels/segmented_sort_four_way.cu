//! The segmented sort's four-way levels: the cuts of a level's four-way tiles, then their merge, two levels in one pass.
// Part of the segmented-sort program, after segmented_sort_levels.cu, mergesort_quad_partition.cuh
// (quad_cut_search) and cta_quad_merge.cuh (quad_tile).
//
// A four-way tile of level k lies in a quad of four runs of NV << k keys, all in one segment
// (segmented_sort_plan.cu), so its merge is the mergesort's four-way pass over that quad: every
// tile of the quad is listed at level k, whose partitions (two-way merge paths at every tile's
// first output in its pair) are the cut search's samples, and all of them lie in one buffer
// (they are touched at the same levels). Only trusted comparators' programs merge four-way
// (FOUR_WAY_LEVELS): the cuts and the tile take each other as exact.

// Phase 1 of level `level`'s four-way merge: for every tile of its four-way list, the cut of the
// tile's first output in its quad, cuts[3 tile ..] = (x, a, c) as the mergesort's four-way
// partition stores them (one lane a cut: the tiles are many wherever there are four-way tiles).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_four_way_cuts(key_type* keys, key_type* scratch_keys, value_type* /*vals*/,
                                   value_type* /*scratch_vals*/, size_type count, const unsigned long long* masks,
                                   const unsigned* control, const unsigned* list, const size_type* partitions,
                                   size_type* cuts, unsigned long long* status, unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  constexpr int ONE_LANE = 1;
  constexpr unsigned ONE_LANE_RECIPROCAL = 0xffffffffu / (ONE_LANE + 1);
  follow_previous_launch();
  if (!FOUR_WAY_LEVELS || tile_path_off(control)) return;
  const unsigned listed = control[CONTROL_FOUR_WAY_COUNTS + level];
  const size_type run = NV << level;
  const twophase::input_check check = {status, nullptr, 0};
  const quad_samples samples(partitions, NV, count, run, check);
  for (size_type e = (size_type)blockIdx.x * blockDim.x + threadIdx.x; e < listed;
       e += (size_type)gridDim.x * blockDim.x) {
    const size_type tile = list[e];
    const size_type pos = tile * NV;
    const mergesort_quad quad(count, run, pos);
    const key_type* src = in_scratch(masks, tile, level) ? scratch_keys : keys;
    size_type counts[4] = {0, 0, 0, 0};
    quad_cut_search(src, samples, quad, pos - quad.starts[0], ONE_LANE, 0, ONE_LANE_RECIPROCAL, check, counts);
    cuts[3 * tile] = counts[0] + counts[1];
    cuts[3 * tile + 1] = counts[0];
    cuts[3 * tile + 2] = counts[2];
  }
}

// Registers a thread of the four-way tile is held to: as the mergesort's four-way tile for 4-byte
// keys (MergesortTuning::quad_registers).
constexpr int FOUR_WAY_REGISTERS = 64;
constexpr int FOUR_WAY_MIN_BLOCKS = twophase::blocks_by_registers(FOUR_WAY_REGISTERS, TP_NT);

// One four-way tile of level `level`: merged from its quad's buffer into the other (quad_tile,
// NT threads, VT outputs each), the keys mapped back from their image where this is the tile's
// last level; `checked` for the one tile that ends short of NV keys, at `count`.
template <bool checked>
__device__ __forceinline__ void four_way_tile(key_type* keys, key_type* scratch_keys, value_type* vals,
                                              value_type* scratch_vals, size_type count,
                                              const unsigned long long* masks, size_type* cuts,
                                              const twophase::input_check& check, unsigned char* smem,
                                              unsigned level, size_type tile) {
  const size_type run = ((size_type)TP_NT * TP_VT) << level;
  const unsigned long long mask = masks[tile];
  const bool from_scratch = scratch_before(mask, level);
  const key_type* src = from_scratch ? scratch_keys : keys;
  key_type* dst = from_scratch ? keys : scratch_keys;
  const value_type* vals_src = from_scratch ? scratch_vals : vals;
  value_type* vals_dst = from_scratch ? vals : scratch_vals;
  const key_image_out image_out = {last_touch(mask, level)};
  __syncthreads();  // the previous tile's last reads of shared memory
  quad_tile<TP_NT, checked>(src, count, run, cuts, dst, vals_src, vals_dst, smem, check, image_out, tile);
}

// Phase 2 of level `level`'s four-way merge: every tile of its four-way list (four_way_tile). The
// grid strides over the list; the one tile that ends short of NV keys, where a block meets it, is
// merged after its loop, so that the loop holds one tile's code (with both inside it, the loop's state
// and the two tiles' registers spilled: 88 bytes of stack against none).
extern "C" __global__ void __launch_bounds__(TP_NT, FOUR_WAY_MIN_BLOCKS)
    twophase_segsort_four_way_merge(key_type* keys, key_type* scratch_keys, value_type* vals,
                                    value_type* scratch_vals, size_type count, const unsigned long long* masks,
                                    const unsigned* control, const unsigned* list, const size_type* /*partitions*/,
                                    size_type* cuts, unsigned long long* status, unsigned level) {
  constexpr int NV = TP_NT * TP_VT;
  // Dynamic: quad_smem<NV, TP_VT>::BYTES (SegmentedSortTuning::four_way_shared_bytes).
  extern __shared__ __align__(16) unsigned char smem[];
  follow_previous_launch();
  if (!FOUR_WAY_LEVELS || tile_path_off(control)) return;
  const unsigned listed = control[CONTROL_FOUR_WAY_COUNTS + level];
  const twophase::input_check check = {status, nullptr, 0};
  bool met_partial = false;  // whether this block met the tile that ends short of NV, at count / NV
  for (size_type e = blockIdx.x; e < listed; e += gridDim.x) {
    const size_type tile = list[e];
    if ((tile + 1) * (size_type)NV > count) {
      met_partial = true;
      continue;
    }
    four_way_tile<false>(keys, scratch_keys, vals, scratch_vals, count, masks, cuts, check, smem, level, tile);
  }
  if (met_partial) {
    four_way_tile<true>(keys, scratch_keys, vals, scratch_vals, count, masks, cuts, check, smem, level, count / NV);
  }
}
