//! The two-phase mergesort kernels: block sort of each tile, then merge passes split by merge path.
// The host prepends the same prelude as for the merge (key_type, key_compare, value_type, TP_NT,
// TP_VT, TP_HAS_VALUES, TP_PARTITION_NT) and TP_PASS_NT (threads of the merge passes; TP_NT is the
// block sort's), then partition.cuh, serial.cuh, cta_merge.cuh and cta_mergesort.cuh.

using twophase::size_type;

// Shared memory of one block-sort tile: NV + 1 keys (the serial merge reads one slot past a
// run's end), then, with values, the NV tile positions that follow the keys through the sort.
template <int NV>
struct blocksort_smem {
  static constexpr int KEY_BYTES = ((NV + 1) * (int)sizeof(key_type) + 15) / 16 * 16;
  static constexpr int BYTES = KEY_BYTES + (TP_HAS_VALUES ? NV * (int)sizeof(int) : 0);
};

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
                                               key_type* keys_out, value_type* vals_out, unsigned char* smem) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  int* ids_shared = reinterpret_cast<int*>(smem + blocksort_smem<NV>::KEY_BYTES);
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
  twophase::cta_sort<NT, VT, checked, TP_HAS_VALUES>(keys, ids, tile_cnt, keys_shared, ids_shared, key_compare());
  twophase::store_through_shared<NT, VT, checked>(keys, keys_shared, keys_out + tile_start, tile_cnt, tid);
  if (TP_HAS_VALUES) {
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) ids_shared[VT * tid + i] = ids[i];
    __syncthreads();
    value_type v[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) v[i] = vals_in[tile_start + ids_shared[idx]];
    }
    // All reads of vals_in by this tile happen before any write: in-place sorts stay correct.
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_out[tile_start + idx] = v[i];
    }
  }
}

extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_blocksort(const key_type* keys_in, const value_type* vals_in, size_type count, key_type* keys_out,
                       value_type* vals_out) {
  constexpr int NV = TP_NT * TP_VT;
  __shared__ __align__(16) unsigned char smem[blocksort_smem<NV>::BYTES];
  static_assert(blocksort_smem<NV>::BYTES <= 48 * 1024, "tile too large for static shared memory");
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    blocksort_tile<false>(keys_in, vals_in, count, keys_out, vals_out, smem);
  } else {
    blocksort_tile<true>(keys_in, vals_in, count, keys_out, vals_out, smem);
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

// Phase 1 of a merge pass: partitions[p] = global index of the A key at which output position
// min(p * spacing, count) cuts its pair's merge (twophase_partition::mergesort_path).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                 size_type spacing, size_type num_partitions, size_type* __restrict__ partitions) {
  const size_type p = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_partitions) return;
  const size_type pos = min(p * spacing, count);
  const mergesort_pair pair(count, run, pos);
  partitions[p] = pair.a_begin + twophase::merge_path<twophase::bounds_lower, size_type>(
                                     keys + pair.a_begin, pair.a_end - pair.a_begin, keys + pair.a_end,
                                     pair.b_end - pair.a_end, pos - pair.a_begin, key_compare());
}

// Phase 2 of a merge pass: tile t merges outputs [t * NV, min((t + 1) * NV, count)) of its pair of
// runs from `src` into `dst` (twophase_partition::mergesort_tile), values gathered alongside.
extern "C" __global__ void __launch_bounds__(TP_PASS_NT)
    twophase_mergesort_tile(const key_type* __restrict__ src, size_type count, size_type run,
                            const size_type* __restrict__ partitions, key_type* __restrict__ dst,
                            const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst) {
  constexpr int NT = TP_PASS_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  __shared__ __align__(16) unsigned char smem[pass_smem<NV>::BYTES];
  static_assert(pass_smem<NV>::BYTES <= 48 * 1024, "tile too large for static shared memory");
  const size_type tile = blockIdx.x;
  const size_type diag0 = tile * NV;
  const size_type diag1 = min(diag0 + NV, count);
  const mergesort_pair pair(count, run, diag0);
  const size_type a0 = partitions[tile];
  // A boundary at the end of a pair is stored as the next pair's start; this tile ends its pair.
  const size_type a1 = diag1 == pair.b_end ? pair.a_end : partitions[tile + 1];
  const size_type b0 = pair.a_end + (diag0 - pair.a_begin) - (a0 - pair.a_begin);
  const int a_cnt = (int)(a1 - a0);
  const int tile_cnt = (int)(diag1 - diag0);
  if (tile_cnt == NV) {
    twophase::cta_merge<NT, VT, false, TP_HAS_VALUES>(src, src, dst, vals_src, vals_src, vals_dst, a0, b0, diag0,
                                                      a_cnt, tile_cnt, smem, key_compare());
  } else {
    twophase::cta_merge<NT, VT, true, TP_HAS_VALUES>(src, src, dst, vals_src, vals_src, vals_dst, a0, b0, diag0,
                                                     a_cnt, tile_cnt, smem, key_compare());
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

// The A count of `pair`'s merge path at pair-local diagonal `diag` (a multiple of `spacing`, or
// the pair's end), read off the two-way partitions; the pair's end is stored as the next pair's
// start, so it is answered from the pair itself.
__device__ __forceinline__ size_type sampled_path(const run_pair& pair, const size_type* __restrict__ partitions,
                                                  size_type spacing, size_type diag) {
  return pair.a_begin + diag == pair.b_end ? pair.a_end - pair.a_begin
                                           : partitions[(pair.a_begin + diag) / spacing] - pair.a_begin;
}

// The A count among the first `diag` outputs of `pair`'s merge, searched only between the two
// neighbouring samples: at most log2(spacing) probes (twophase_partition windowed_path).
__device__ __forceinline__ size_type windowed_path(const key_type* __restrict__ keys, const run_pair& pair,
                                                   const size_type* __restrict__ partitions, size_type spacing,
                                                   size_type diag) {
  const size_type diag0 = diag / spacing * spacing;
  const size_type a0 = sampled_path(pair, partitions, spacing, diag0);
  if (diag0 == diag) return a0;
  const size_type diag1 = min(diag0 + spacing, pair.total());
  const size_type a1 = sampled_path(pair, partitions, spacing, diag1);
  const int a_cnt = (int)(a1 - a0);
  const int b_cnt = (int)((diag1 - a1) - (diag0 - a0));
  return a0 + twophase::merge_path<twophase::bounds_lower, int>(keys + pair.a_begin + a0, a_cnt,
                                                                keys + pair.a_end + (diag0 - a0), b_cnt,
                                                                (int)(diag - diag0), key_compare());
}

// Output `i` (< pair.total()) of `pair`'s stable merge.
__device__ __forceinline__ key_type windowed_element(const key_type* __restrict__ keys, const run_pair& pair,
                                                     const size_type* __restrict__ partitions, size_type spacing,
                                                     size_type i) {
  const size_type a = pair.a_begin + windowed_path(keys, pair, partitions, spacing, i);
  const size_type b = pair.a_end + (i - (a - pair.a_begin));
  if (a == pair.a_end) return keys[b];
  if (b == pair.b_end) return keys[a];
  const key_type a_key = keys[a];
  const key_type b_key = keys[b];
  return twophase::takes_a<twophase::bounds_lower>(a_key, b_key, key_compare()) ? a_key : b_key;
}

// Phase 1 of a four-way pass: cuts[3p .. 3p + 3) = (x, a, c), the cut of output position
// min(p * spacing, count) inside its quad (twophase_partition::quad_cut): a keys from R0, x - a
// from R1, c from R2, the rest from R3. A coarse search probes only multiples of `spacing`, where
// X's element is read straight off the samples; a fine search finishes inside one window.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_mergesort_quad_partition(const key_type* __restrict__ keys, size_type count, size_type run,
                                      const size_type* __restrict__ partitions, size_type spacing,
                                      size_type num_cuts, size_type* __restrict__ cuts) {
  const size_type p = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_cuts) return;
  const size_type pos = min(p * spacing, count);
  const mergesort_quad quad(count, run, pos);
  const run_pair x_pair = {quad.starts[0], quad.starts[1], quad.starts[2]};
  const run_pair y_pair = {quad.starts[2], quad.starts[3], quad.starts[4]};
  const size_type diag = pos - quad.starts[0];
  const size_type nx = x_pair.total(), ny = y_pair.total();
  size_type begin = diag > ny ? diag - ny : 0;
  size_type end = min(diag, nx);
  // X's output `mid` comes before Y's output `diag - 1 - mid`: the cut lies past `mid`.
  auto x_first = [&](size_type mid) {
    return twophase::takes_a<twophase::bounds_lower>(windowed_element(keys, x_pair, partitions, spacing, mid),
                                                     windowed_element(keys, y_pair, partitions, spacing, diag - 1 - mid),
                                                     key_compare());
  };
  size_type j_lo = (begin + spacing - 1) / spacing, j_hi = (end + spacing - 1) / spacing;
  while (j_lo < j_hi) {
    const size_type j = j_lo + (j_hi - j_lo) / 2;
    if (x_first(j * spacing)) {
      begin = j * spacing + 1;
      j_lo = j + 1;
    } else {
      end = j * spacing;
      j_hi = j;
    }
  }
  while (begin < end) {
    const size_type mid = begin + (end - begin) / 2;
    if (x_first(mid)) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  cuts[3 * p] = begin;
  cuts[3 * p + 1] = windowed_path(keys, x_pair, partitions, spacing, begin);
  cuts[3 * p + 2] = windowed_path(keys, y_pair, partitions, spacing, diag - begin);
}

// Shared memory of one four-way tile: the NV + 1 input keys (the tile's slices of R0..R3, in
// order), the level-one output (X's part, then Y's part from the next multiple of VT, so that no
// thread's VT outputs straddle the two: NV + VT + 1 keys), and with values the level-one sources.
template <int NV, int VT>
struct quad_smem {
  static constexpr int IN_KEYS = NV + 1;
  static constexpr int MID_KEYS = NV + VT + 1;
  static constexpr int KEY_BYTES = ((IN_KEYS + MID_KEYS) * (int)sizeof(key_type) + 15) / 16 * 16;
  static constexpr int BYTES = KEY_BYTES + (TP_HAS_VALUES ? (NV + VT) * (int)sizeof(int) : 0);
};

// The global index of tile position `pos` of a four-way tile whose input is the slices of runs
// 0..3 in order: slice k starts at global `first[k]` and ends at tile position `ends[k]`.
__device__ __forceinline__ size_type slice_global(const size_type (&first)[4], const int (&ends)[4], int pos) {
  const int k = (pos >= ends[0]) + (pos >= ends[1]) + (pos >= ends[2]);
  return first[k] + (pos - (k == 0 ? 0 : ends[k - 1]));
}

// Phase 2 of a four-way pass: tile t merges outputs [t * NV, min((t + 1) * NV, count)) of its
// quad in two levels through shared memory: R0 with R1 and R2 with R3 (each thread merges VT
// outputs of one of them, some threads two pieces), then the two results (VT per thread).
template <bool checked>
__device__ __forceinline__ void quad_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                          const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                          const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst,
                                          unsigned char* smem) {
  constexpr int NT = TP_QUAD_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  key_type* in = reinterpret_cast<key_type*>(smem);
  key_type* mid = in + quad_smem<NV, VT>::IN_KEYS;
  int* sources = reinterpret_cast<int*>(smem + quad_smem<NV, VT>::KEY_BYTES);
  const int tid = threadIdx.x;
  const size_type tile = blockIdx.x;
  const size_type diag0 = tile * NV;
  const size_type diag1 = min(diag0 + NV, count);
  const mergesort_quad quad(count, run, diag0);
  const size_type d0 = diag0 - quad.starts[0], d1 = diag1 - quad.starts[0];
  const size_type x0 = cuts[3 * tile], a0 = cuts[3 * tile + 1], c0 = cuts[3 * tile + 2];
  // A tile that ends its quad ends at the quad's full counts (the next entry is the next quad's).
  const bool ends_quad = diag1 == quad.starts[4];
  const size_type x1 = ends_quad ? quad.starts[2] - quad.starts[0] : cuts[3 * tile + 3];
  const size_type a1 = ends_quad ? quad.starts[1] - quad.starts[0] : cuts[3 * tile + 4];
  const size_type c1 = ends_quad ? quad.starts[3] - quad.starts[2] : cuts[3 * tile + 5];
  // This tile's slice of each run: global start and length; `ends[k]` = tile position past run k.
  const size_type first[4] = {quad.starts[0] + a0, quad.starts[1] + (x0 - a0), quad.starts[2] + c0,
                               quad.starts[3] + (d0 - x0 - c0)};
  const int n0 = (int)(a1 - a0), n1 = (int)((x1 - a1) - (x0 - a0)), n2 = (int)(c1 - c0);
  const int tile_cnt = (int)(d1 - d0);
  const int ends[4] = {n0, n0 + n1, n0 + n1 + n2, tile_cnt};

  {
    key_type x[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) {
        x[i] = src[slice_global(first, ends, idx)];
      }
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) in[idx] = x[i];
    }
  }
  __syncthreads();

  // Level one: pieces of VT outputs of X's part (R0 with R1) and of Y's part (R2 with R3);
  // piece v lands at mid[VT * v ..], Y's pieces starting at the multiple of VT past X's part.
  const int nx = ends[1], ny = tile_cnt - ends[1];
  const int x_pieces = (nx + VT - 1) / VT;
  const int pieces = x_pieces + (ny + VT - 1) / VT;
  const int y_offset = VT * x_pieces;
  key_type keys[VT];
  int indices[VT];
#pragma unroll 1
  for (int piece = tid; piece < pieces; piece += NT) {
    const bool in_x = piece < x_pieces;
    const int base = in_x ? 0 : ends[1];
    const int a_cnt = in_x ? n0 : n2;
    const int b_cnt = in_x ? n1 : ny - n2;
    const int diag = VT * (in_x ? piece : piece - x_pieces);
    const int mp = twophase::merge_path<twophase::bounds_lower, int>(in + base, a_cnt, in + base + a_cnt, b_cnt, diag,
                                                                     key_compare());
    twophase::merge_range range = {base + mp, base + a_cnt, base + a_cnt + diag - mp, base + a_cnt + b_cnt};
    const int produced = min(VT, range.total());
    twophase::serial_merge<twophase::bounds_lower, VT, true>(in, range, key_compare(), keys, indices);
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (i < produced) {
        mid[VT * piece + i] = keys[i];
        if (TP_HAS_VALUES) sources[VT * piece + i] = indices[i];
      }
    }
  }
  __syncthreads();

  // Level two: X's part [0, nx) with Y's part [y_offset, y_offset + ny).
  const int diag = min(VT * tid, tile_cnt);
  const int mp = twophase::merge_path<twophase::bounds_lower, int>(mid, nx, mid + y_offset, ny, diag, key_compare());
  twophase::merge_range range = {mp, nx, y_offset + diag - mp, y_offset + ny};
  twophase::serial_merge<twophase::bounds_lower, VT, checked>(mid, range, key_compare(), keys, indices);
  if (TP_HAS_VALUES) {
    // Compose: level-two sources index `mid`, whose sources index the tile input.
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (!checked || diag + i < tile_cnt) indices[i] = sources[indices[i]];
    }
  }
  twophase::store_through_shared<NT, VT, checked>(keys, in, dst + diag0, tile_cnt, tid);
  if (TP_HAS_VALUES) {
    // Every read of `sources` above happened before store_through_shared's first barrier.
#pragma unroll
    for (int i = 0; i < VT; ++i) sources[VT * tid + i] = indices[i];
    __syncthreads();
    value_type v[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) {
        v[i] = vals_src[slice_global(first, ends, sources[idx])];
      }
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_dst[diag0 + idx] = v[i];
    }
  }
}

extern "C" __global__ void __launch_bounds__(TP_QUAD_NT)
    twophase_mergesort_quad_tile(const key_type* __restrict__ src, size_type count, size_type run,
                                 const size_type* __restrict__ cuts, key_type* __restrict__ dst,
                                 const value_type* __restrict__ vals_src, value_type* __restrict__ vals_dst) {
  constexpr int NV = TP_QUAD_NT * TP_VT;
  __shared__ __align__(16) unsigned char smem[quad_smem<NV, TP_VT>::BYTES];
  static_assert(quad_smem<NV, TP_VT>::BYTES <= 48 * 1024, "four-way tile too large for static shared memory");
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    quad_tile<false>(src, count, run, cuts, dst, vals_src, vals_dst, smem);
  } else {
    quad_tile<true>(src, count, run, cuts, dst, vals_src, vals_dst, smem);
  }
}
#endif  // TP_QUAD_NT > 0
