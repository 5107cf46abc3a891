//! A four-way merge tile: two merge levels per read and write of the keys, in shared memory.
#pragma once
// Part of the mergesort program (its four-way and eight-way pass tiles) and the segmented-sort
// program (its four-way levels), after mergesort_quad_partition.cuh (mergesort_quad, repaired_cut).

#if TP_QUAD_NT > 0
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

// Where a four-way (N = 4) or eight-way (N = 8) tile's input lies in global memory: the slices of
// runs 0..N-1 in order, slice k from tile position ends[k - 1] (0 for k = 0) to ends[k], as
// offsets from the group's first key:
// tile position `pos` of slice k is at offset delta[k] + pos. With 32-bit offsets (a quad of at
// most 2^32 - 1 keys, so every sort of fewer keys) an element costs three compares, three selects,
// an add and a wide multiply-add for its address; a 64-bit global index built per element cost
// about 17 instructions a key. Selects on constant indices only: an array indexed by a computed
// run number is placed in local memory (one local load per key and value).
template <typename offset_t, int N>
struct run_slices {
  offset_t delta[N];
  int ends[N];
  __device__ __forceinline__ run_slices(size_type quad_first, const size_type (&first)[N], const int (&tile_ends)[N]) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      ends[k] = tile_ends[k];
      // Modulo 2^32 for 32-bit offsets: the sum with pos is the offset itself, which fits.
      delta[k] = (offset_t)(first[k] - quad_first - (size_type)(k == 0 ? 0 : tile_ends[k - 1]));
    }
  }
  __device__ __forceinline__ offset_t offset(int pos) const {
    offset_t d = delta[0];
#pragma unroll
    for (int k = 1; k < N; ++k) {
      if (pos >= ends[k - 1]) d = delta[k];
    }
    return d + (offset_t)pos;
  }
};

// Load a four-way or eight-way tile's input keys to shared memory in tile order (all VT loads in
// flight before the stores), and start copying its values there (copy_async) to be gathered after
// the merges.
template <bool checked, int NT, int VT, typename offset_t, int N>
__device__ __forceinline__ void load_quad_input(const key_type* __restrict__ src,
                                                const value_type* __restrict__ vals_src, size_type quad_first,
                                                const size_type (&first)[N], const int (&ends)[N], int tile_cnt,
                                                key_type* keys_shared, value_type* vals_shared, int tid) {
  const run_slices<offset_t, N> slices(quad_first, first, ends);
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

// Phase 2 of a four-way pass: tile `tile` (NT threads) merges outputs [tile * NV, min((tile + 1) *
// NV, count)) of its quad, from its cut and the next one (cuts[3 tile ..]), in two levels through
// shared memory: R0 with R1 and R2 with R3 (one piece of up to PIECE outputs a thread), then the
// two results (VT outputs a thread).
template <int NT, bool checked>
__device__ __forceinline__ void quad_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                          const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                          const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                          unsigned char* smem, const twophase::input_check& check,
                                          key_image_out image_out, size_type tile) {
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
#pragma unroll
  for (int i = 0; i < VT; ++i) keys[i] = image_out(keys[i]);
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
#endif  // TP_QUAD_NT > 0
