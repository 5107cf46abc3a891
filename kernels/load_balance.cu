//! Load-balancing search kernels: partitions by load_balance_path, then one tile per CTA handing out (item, segment, rank).
// The host prepends a prelude defining index_type, value_type, TP_NT, TP_VT, TP_PARTITION_NT,
// twophase_op_args and load_balance_user_op, then partition.cuh, serial.cuh, cta_load_balance.cuh.

using twophase::size_type;

// Wait for the partition kernel when launched as its programmatic dependent (sm_90+); a no-op
// when launched normally.
__device__ __forceinline__ void twophase_wait_partitions() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Phase 1: partitions[p] = items before output diagonal min(p * spacing, total + num_segments).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_lbs_partition(const index_type* __restrict__ scan, size_type num_segments, size_type total,
                           size_type spacing, size_type num_partitions, size_type* __restrict__ partitions) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const size_type p = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_partitions) return;
  const size_type count = total + num_segments;
  size_type diag = p * spacing;
  if (diag > count) diag = count;
  partitions[p] = twophase::load_balance_path(total, scan, num_segments, diag);
}

// Writes each item's segment, and its rank when `ranks` is not null.
struct segments_op {
  index_type* __restrict__ segments;
  index_type* __restrict__ ranks;
  __device__ __forceinline__ void operator()(size_type item, size_type segment, size_type rank) const {
    segments[item] = (index_type)segment;
    if (ranks) ranks[item] = (index_type)rank;
  }
};

// Interval expand: out[item] = values[segment].
struct expand_op {
  const value_type* __restrict__ values;
  value_type* __restrict__ out;
  __device__ __forceinline__ void operator()(size_type item, size_type segment, size_type) const {
    out[item] = values[segment];
  }
};

// Interval move: output[scatter[s] + rank] = input[gather[s] + rank]; a null gather (scatter)
// reads (writes) at the item's own position scan[s] + rank.
struct move_op {
  const index_type* __restrict__ gather;
  const index_type* __restrict__ scatter;
  const value_type* __restrict__ input;
  value_type* __restrict__ output;
  __device__ __forceinline__ void operator()(size_type item, size_type segment, size_type rank) const {
    const size_type from = gather ? (size_type)gather[segment] + rank : item;
    const size_type to = scatter ? (size_type)scatter[segment] + rank : item;
    output[to] = input[from];
  }
};

// The user's snippet with its arguments.
struct user_op {
  twophase_op_args args;
  __device__ __forceinline__ void operator()(size_type item, size_type segment, size_type rank) const {
    load_balance_user_op()(item, segment, rank, args);
  }
};

#define TWOPHASE_LBS_TILE_SHARED __shared__ twophase::load_balance_shared<TP_NT * TP_VT> shared
static_assert(sizeof(twophase::load_balance_shared<TP_NT * TP_VT>) <= 48 * 1024,
              "tile too large for static shared memory");

// Phase 2, segments (and ranks) of every item.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_lbs_tile(const index_type* __restrict__ scan, size_type num_segments, size_type total,
                      const size_type* __restrict__ partitions, index_type* __restrict__ segments,
                      index_type* __restrict__ ranks) {
  TWOPHASE_LBS_TILE_SHARED;
  twophase_wait_partitions();
  segments_op op = {segments, ranks};
  twophase::cta_load_balance<TP_NT, TP_VT>(scan, num_segments, total, partitions, shared, op);
}

// Phase 2, interval expand.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_interval_expand(const index_type* __restrict__ scan, size_type num_segments, size_type total,
                             const size_type* __restrict__ partitions, const value_type* __restrict__ values,
                             value_type* __restrict__ out) {
  TWOPHASE_LBS_TILE_SHARED;
  twophase_wait_partitions();
  expand_op op = {values, out};
  twophase::cta_load_balance<TP_NT, TP_VT>(scan, num_segments, total, partitions, shared, op);
}

// Phase 2, interval move (gather, scatter or both).
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_interval_move(const index_type* __restrict__ scan, size_type num_segments, size_type total,
                           const size_type* __restrict__ partitions, const index_type* __restrict__ gather,
                           const index_type* __restrict__ scatter, const value_type* __restrict__ input,
                           value_type* __restrict__ output) {
  TWOPHASE_LBS_TILE_SHARED;
  twophase_wait_partitions();
  move_op op = {gather, scatter, input, output};
  twophase::cta_load_balance<TP_NT, TP_VT>(scan, num_segments, total, partitions, shared, op);
}

// Phase 2, the user's snippet for every (item, segment, rank).
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_lbs_for_each(const index_type* __restrict__ scan, size_type num_segments, size_type total,
                          const size_type* __restrict__ partitions, twophase_op_args args) {
  TWOPHASE_LBS_TILE_SHARED;
  twophase_wait_partitions();
  user_op op = {args};
  twophase::cta_load_balance<TP_NT, TP_VT>(scan, num_segments, total, partitions, shared, op);
}
