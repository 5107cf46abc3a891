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
