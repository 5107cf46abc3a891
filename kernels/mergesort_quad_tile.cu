//! The mergesort's four-way pass tile kernel: two merge levels per read and write of the keys.
// Part of the mergesort program, after mergesort_quad_partition.cu and cta_quad_merge.cuh (quad_tile).

#if TP_QUAD_NT > 0
// The four-way tile's launch bounds: with MergesortTuning::quad_registers, the blocks that must
// fit on an SM by registers (ptxas uses as many registers as the bounds allow); without, the
// threads alone, as the two-way tile's PASS_LAUNCH_BOUNDS.
#if TP_QUAD_REGISTERS > 0
#define QUAD_LAUNCH_BOUNDS \
  __launch_bounds__(TP_QUAD_NT, twophase::blocks_by_registers(TP_QUAD_REGISTERS, TP_QUAD_NT))
#else
#define QUAD_LAUNCH_BOUNDS __launch_bounds__(TP_QUAD_NT)
#endif

extern "C" __global__ void QUAD_LAUNCH_BOUNDS
    twophase_mergesort_quad_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                 const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                 const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                 unsigned long long* status, const unsigned* guard,
                                 unsigned long long* cuts_repair, unsigned generation, unsigned image_out,
                                 size_type first_tile) {
  constexpr int NV = TP_QUAD_NT * TP_VT;
  // Dynamic: quad_smem<NV, TP_VT>::BYTES (MergesortTuning::quad_shared_bytes), past 48 KiB for
  // the larger tiles.
  extern __shared__ __align__(16) unsigned char smem[];
  if (!follow_previous_kernel(guard)) return;
  const twophase::input_check check = {status, cuts_repair, generation};
  const key_image_out map_out = {image_out != 0};
  // A launch may merge a range of the pass's tiles (the last pass split by output range); its
  // partial last tile goes first.
  const size_type tile = twophase::last_tile_first(first_tile);
  if ((tile + 1) * NV <= count) {
    quad_tile<TP_QUAD_NT, false>(src, count, run, cuts, dst, vals_src, vals_dst, smem, check, map_out, tile);
  } else {
    quad_tile<TP_QUAD_NT, true>(src, count, run, cuts, dst, vals_src, vals_dst, smem, check, map_out, tile);
  }
}
#endif  // TP_QUAD_NT > 0
