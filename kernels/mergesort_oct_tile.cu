//! The mergesort's eight-way pass tile kernel: three merge levels per read and write of the keys.
// Part of the mergesort program, after mergesort_oct_partition.cu. Only for twophase's own
// orders (see there): it runs no walk checks and takes the cuts as exact.

#if TP_QUAD_NT > 0 && TP_OCT_NT > 0
// Merges of each level below the last: four at level one (R0 with R1, ..., R6 with R7), two at
// level two.
constexpr int OCT_FIRST_GROUPS = OCT_RUNS / 2;

// Shared memory of one eight-way tile: one key buffer holds the tile's input (NV keys, the slices
// of R0..R7 in order), then, each overwritten after a barrier, level one's four outputs and level
// two's two, every output from a multiple of PIECE (quad_piece): at most NV + 3 (PIECE - 1) keys.
// The unchecked PIECE-step merges of a part's last piece read up to PIECE slots past the part, so
// the buffer holds NV + (OCT_FIRST_GROUPS + 1) PIECE + 1 keys; with values, as many source
// positions, then the tile's NV input values (copied in while the keys are merged).
template <int NV, int VT>
struct oct_smem {
  static constexpr int KEYS = NV + (OCT_FIRST_GROUPS + 1) * quad_piece<VT>::PIECE + 1;
  static constexpr int KEY_BYTES = align16(KEYS * (int)sizeof(key_type));
  static constexpr int SOURCE_BYTES = TP_HAS_VALUES ? align16(KEYS * (int)sizeof(int)) : 0;
  static constexpr int VALUE_BYTES = TP_HAS_VALUES ? NV * (int)sizeof(value_type) : 0;
  static constexpr int BYTES = KEY_BYTES + SOURCE_BYTES + VALUE_BYTES;
};

// One level of an eight-way tile below the last: GROUPS merges, group g of parts 2g and 2g + 1
// (part j at keys_shared[begin[j] ..] of len[j] keys), cut into pieces of PIECE outputs, one a
// thread; thread t's piece lands at keys_shared[PIECE * t ..], so group g's output starts at
// PIECE times the pieces before it, and `begin`/`len`'s first GROUPS entries become the outputs.
// With values, `sources` maps the level's input positions to tile input positions (level one,
// `compose` false, merges the tile input itself) and is rewritten for its output.
template <int NT, int PIECE, int GROUPS>
__device__ __forceinline__ void oct_level(key_type* keys_shared, int* sources, int (&begin)[OCT_RUNS],
                                          int (&len)[OCT_RUNS], bool compose, int tid) {
  int prefix = 0, a_begin = 0, a_cnt = 0, b_begin = 0, b_cnt = 0, diag = 0;
  bool mine = false;
  int out_begin[GROUPS], out_len[GROUPS];
#pragma unroll
  for (int g = 0; g < GROUPS; ++g) {
    const int n = len[2 * g] + len[2 * g + 1];
    const int pieces = (n + PIECE - 1) / PIECE;
    if (tid >= prefix && tid < prefix + pieces) {
      mine = true;
      a_begin = begin[2 * g];
      a_cnt = len[2 * g];
      b_begin = begin[2 * g + 1];
      b_cnt = len[2 * g + 1];
      diag = PIECE * (tid - prefix);
    }
    out_begin[g] = PIECE * prefix;
    out_len[g] = n;
    prefix += pieces;
  }
  key_type piece_keys[PIECE];
  int piece_sources[PIECE];
  int produced = 0;
  if (mine) {
    const int mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared + a_begin, a_cnt,
                                                                     keys_shared + b_begin, b_cnt, diag, key_compare());
    twophase::merge_range range = {a_begin + mp, a_begin + a_cnt, b_begin + diag - mp, b_begin + b_cnt};
    produced = min(PIECE, range.total());
    // Unchecked: PIECE steps even for a part's last piece; the steps past `produced` read at most
    // PIECE slots past the part (oct_smem::KEYS) and are not stored.
    twophase::serial_merge<twophase::bounds_lower, PIECE, false>(keys_shared, range, key_compare(), piece_keys,
                                                                 piece_sources);
    if (TP_HAS_VALUES && compose) {
#pragma unroll
      for (int i = 0; i < PIECE; ++i) {
        if (i < produced) piece_sources[i] = sources[piece_sources[i]];
      }
    }
  }
  // Every read of the level's input before the stores over it.
  __syncthreads();
#pragma unroll
  for (int i = 0; i < PIECE; ++i) {
    if (i < produced) {
      keys_shared[PIECE * tid + i] = piece_keys[i];
      if (TP_HAS_VALUES) sources[PIECE * tid + i] = piece_sources[i];
    }
  }
#pragma unroll
  for (int g = 0; g < GROUPS; ++g) {
    begin[g] = out_begin[g];
    len[g] = out_len[g];
  }
  __syncthreads();
}

// Phase 2 of an eight-way pass: tile t merges outputs [t * NV, min((t + 1) * NV, count)) of its
// octet in three levels through shared memory: four merges of run pairs and two of their results
// (pieces of PIECE outputs a thread, oct_level), then the last (VT outputs a thread).
template <bool checked>
__device__ __forceinline__ void oct_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                         const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                         const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                         unsigned char* smem, key_image_out image_out, size_type tile) {
  constexpr int NT = TP_OCT_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  constexpr int PIECE = quad_piece<VT>::PIECE;
  static_assert(NT * (PIECE - VT) >= OCT_FIRST_GROUPS * PIECE, "eight-way tile: too few threads for one piece each");
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  int* sources = reinterpret_cast<int*>(smem + oct_smem<NV, VT>::KEY_BYTES);
  value_type* vals_shared =
      reinterpret_cast<value_type*>(smem + oct_smem<NV, VT>::KEY_BYTES + oct_smem<NV, VT>::SOURCE_BYTES);
  const int tid = threadIdx.x;
  const size_type diag0 = tile * NV;
  const size_type diag1 = min(diag0 + NV, count);
  const mergesort_octet oct(count, run, diag0);
  // A tile that ends its octet ends at the octet's full counts (the next entry is the next
  // octet's).
  const bool ends_octet = diag1 == oct.starts[OCT_RUNS];
  size_type first[OCT_RUNS];
  int begin[OCT_RUNS], len[OCT_RUNS], ends[OCT_RUNS];
  int tile_cnt = 0;
#pragma unroll
  for (int k = 0; k < OCT_RUNS; ++k) {
    const size_type c0 = cuts[OCT_RUNS * tile + k];
    const size_type c1 = ends_octet ? oct.starts[k + 1] - oct.starts[k] : cuts[OCT_RUNS * (tile + 1) + k];
    first[k] = oct.starts[k] + c0;
    len[k] = (int)(c1 - c0);
    begin[k] = tile_cnt;
    tile_cnt += len[k];
    ends[k] = tile_cnt;
  }

  constexpr size_type NARROW_OCT_KEYS = 0xffffffffull;  // octets whose offsets fit 32 bits
  if (oct.starts[OCT_RUNS] - oct.starts[0] <= NARROW_OCT_KEYS) {
    load_quad_input<checked, NT, VT, unsigned>(src, vals_src, oct.starts[0], first, ends, tile_cnt, keys_shared,
                                               vals_shared, tid);
  } else {
    load_quad_input<checked, NT, VT, size_type>(src, vals_src, oct.starts[0], first, ends, tile_cnt, keys_shared,
                                                vals_shared, tid);
  }
  __syncthreads();
  oct_level<NT, PIECE, OCT_FIRST_GROUPS>(keys_shared, sources, begin, len, false, tid);
  oct_level<NT, PIECE, OCT_FIRST_GROUPS / 2>(keys_shared, sources, begin, len, true, tid);

  // Level three: part 0 (from 0) with part 1.
  key_type keys[VT];
  int indices[VT];
  const int diag = min(VT * tid, tile_cnt);
  const int mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared, len[0], keys_shared + begin[1], len[1],
                                                                   diag, key_compare());
  twophase::merge_range range = {mp, len[0], begin[1] + diag - mp, begin[1] + len[1]};
  twophase::serial_merge<twophase::bounds_lower, VT, checked>(keys_shared, range, key_compare(), keys, indices);
  // From here as the four-way tile ends (quad_tile): one helper for both, taking the arrays by
  // reference, made ptxas spill in the u32 pairs tiles (7 -> 51 local accesses in the four-way
  // tile, 0 -> 24 here), so each keeps its own copy.
  if (TP_HAS_VALUES) {
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (!checked || diag + i < tile_cnt) indices[i] = sources[indices[i]];
    }
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) keys[i] = image_out(keys[i]);
  twophase::store_through_shared<NT, VT, checked>(keys, keys_shared, dst + diag0, tile_cnt, tid);
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

// The eight-way tile's launch bounds: with MergesortTuning::oct_registers, the blocks that must
// fit on an SM by registers; without, the threads alone (as the four-way tile's).
#if TP_OCT_REGISTERS > 0
#define OCT_LAUNCH_BOUNDS \
  __launch_bounds__(TP_OCT_NT, twophase::blocks_by_registers(TP_OCT_REGISTERS, TP_OCT_NT))
#else
#define OCT_LAUNCH_BOUNDS __launch_bounds__(TP_OCT_NT)
#endif

extern "C" __global__ void OCT_LAUNCH_BOUNDS
    twophase_mergesort_oct_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                const unsigned* guard, unsigned image_out, size_type first_tile) {
  constexpr int NV = TP_OCT_NT * TP_VT;
  // Dynamic: oct_smem<NV, TP_VT>::BYTES (MergesortTuning::oct_shared_bytes).
  extern __shared__ __align__(16) unsigned char smem[];
  if (!follow_previous_kernel(guard)) return;
  if constexpr (!CHECK_ORDER) {
    const key_image_out map_out = {image_out != 0};
    // A launch may merge a range of the pass's tiles (the last pass split by output range); its
    // partial last tile goes first.
    const size_type tile = twophase::last_tile_first(first_tile);
    if ((tile + 1) * NV <= count) {
      oct_tile<false>(src, count, run, cuts, dst, vals_src, vals_dst, smem, map_out, tile);
    } else {
      oct_tile<true>(src, count, run, cuts, dst, vals_src, vals_dst, smem, map_out, tile);
    }
  }
}
#endif  // TP_QUAD_NT > 0 && TP_OCT_NT > 0
