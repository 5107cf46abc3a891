//! Sorted search kernels: merge path partitions of needles against haystack, then serial_search per tile.
// The host prepends the prelude of program() (key_type, key_compare, TP_NT, TP_VT, ...), a line
// defining index_type and TP_UPPER, then partition.cuh, serial.cuh and cta_merge.cuh.

using twophase::size_type;

constexpr twophase::bounds_t SEARCH_BOUNDS = TP_UPPER ? twophase::bounds_upper : twophase::bounds_lower;

// Phase 1: partitions[p] = needles before output diagonal min(p * spacing, needles + haystack).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_search_partition(const key_type* __restrict__ needles, size_type needle_count,
                              const key_type* __restrict__ haystack, size_type haystack_count, size_type spacing,
                              size_type num_partitions, size_type* __restrict__ partitions) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const size_type p = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_partitions) return;
  const size_type total = needle_count + haystack_count;
  size_type diag = p * spacing;
  if (diag > total) diag = total;
  partitions[p] =
      twophase::merge_path<SEARCH_BOUNDS, size_type>(needles, needle_count, haystack, haystack_count, diag,
                                                     key_compare());
}

// Phase 2: tile t covers merge outputs [t * NV, min((t + 1) * NV, total)); each of its needles gets
// its bound in the haystack (global index) in out[needle].
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_search_tile(const key_type* __restrict__ needles, size_type needle_count,
                         const key_type* __restrict__ haystack, size_type haystack_count,
                         const size_type* __restrict__ partitions, index_type* __restrict__ out) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  constexpr int KEY_BYTES = ((NV + 1) * (int)sizeof(key_type) + 15) / 16 * 16;
  static_assert(KEY_BYTES + NV * (int)sizeof(int) <= 48 * 1024, "tile too large for static shared memory");
  __shared__ __align__(16) unsigned char smem[KEY_BYTES + NV * sizeof(int)];
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  int* bounds_shared = reinterpret_cast<int*>(smem + KEY_BYTES);

#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  const int tid = threadIdx.x;
  const size_type tile = blockIdx.x;
  const size_type total = needle_count + haystack_count;
  const size_type diag0 = tile * NV;
  const size_type diag1 = diag0 + NV < total ? diag0 + NV : total;
  const size_type a0 = partitions[tile];
  const size_type a1 = partitions[tile + 1];
  const size_type b0 = diag0 - a0;
  const int a_cnt = (int)(a1 - a0);
  const int tile_cnt = (int)(diag1 - diag0);
  if (tile_cnt == NV) {
    twophase::load_tile<NT, VT, false>(needles, a0, a_cnt, haystack, b0, tile_cnt, keys_shared, tid);
  } else {
    twophase::load_tile<NT, VT, true>(needles, a0, a_cnt, haystack, b0, tile_cnt, keys_shared, tid);
  }

  // Phase 1 inside the tile, then VT serial search steps per thread.
  const int diag = min(VT * tid, tile_cnt);
  const int b_cnt = tile_cnt - a_cnt;
  const int mp = twophase::merge_path<SEARCH_BOUNDS, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt, diag,
                                                          key_compare());
  twophase::merge_range range = {mp, a_cnt, a_cnt + diag - mp, tile_cnt};
  twophase::serial_search<SEARCH_BOUNDS, VT>(keys_shared, range, a_cnt, key_compare(), bounds_shared);
  __syncthreads();

  // Strided, coalesced store of the tile's needles' bounds.
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (idx < a_cnt) out[a0 + idx] = (index_type)(b0 + (size_type)bounds_shared[idx]);
  }
}
