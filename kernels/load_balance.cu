//! Load-balancing search kernels: partitions by load_balance_path, then one tile per CTA handing out (item, segment, rank).
// The host prepends a prelude defining index_type, value_type, TP_NT, TP_VT, TP_PARTITION_NT,
// twophase_op_args and load_balance_user_op, then partition.cuh, serial.cuh, cta_load_balance.cuh.

using twophase::size_type;

namespace twophase {
// The kernels' parameter blocks, twins of LbsPartitionParams, LbsTileParams, IntervalExpandParams,
// IntervalMoveParams and LbsForEachParams in crates/gpu/src/load_balance/mod.rs (the generated
// program static_asserts the layouts equal and that each kernel's parameters are these fields in
// order).
// Every block starts with the scan and its sizes; the tile kernels' then with the partitions.
struct lbs_inputs {
  const index_type* scan;
  size_type num_segments;
  size_type total;
};
typedef partition_params<lbs_inputs> lbs_partition_params;

struct lbs_tile_inputs : lbs_inputs {
  const size_type* partitions;
};

struct lbs_tile_fields : lbs_tile_inputs {
  index_type* segments;
  index_type* ranks;
};
typedef checked_params<lbs_tile_fields> lbs_tile_params;

struct interval_expand_fields : lbs_tile_inputs {
  const value_type* values;
  value_type* out;
};
typedef checked_params<interval_expand_fields> interval_expand_params;

struct interval_move_fields : lbs_tile_inputs {
  const index_type* gather;
  const index_type* scatter;
  const value_type* input;
  size_type input_count;
  value_type* output;
  size_type output_count;
};
typedef checked_params<interval_move_fields> interval_move_params;

struct lbs_for_each_fields : lbs_tile_inputs {
  twophase_op_args args;
};
typedef checked_params<lbs_for_each_fields> lbs_for_each_params;
}  // namespace twophase

// Phase 1: partitions[p] = items before output diagonal min(p * spacing, total + num_segments),
// searched by groups of `lanes` lanes (twophase::search_partitions). Each boundary after the
// block's first is checked against the one before it: a pair out of order means the scan is not a
// valid exclusive scan (reported to the repair slot and as STATUS_SCAN_INVALID).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_lbs_partition(const index_type* __restrict__ scan, size_type num_segments, size_type total,
                           size_type spacing, size_type num_partitions, size_type* __restrict__ partitions,
                           size_type lanes, unsigned* arrivals, unsigned long long* status,
                           unsigned long long* repair, unsigned generation) {
  twophase::pdl_launch_dependents();
  const twophase::input_check check = {status, repair, generation};
  const size_type count = total + num_segments;
  twophase::search_partitions<TP_PARTITION_NT>(
      num_partitions, partitions, (int)lanes, arrivals, check, twophase::STATUS_SCAN_INVALID,
      [&](size_type p) { return twophase::load_balance_diagonal(p, spacing, count); },
      [&](size_type diag) { return twophase::load_balance_path(total, scan, num_segments, diag, (int)lanes); });
}

// Each op hands out a walked tile (twophase::load_balance_tile). The library's own ops work on
// the tile-local form: pointers rebased once a tile, 32-bit offsets inside it, index_type
// arithmetic for segments and ranks; the user's snippet and interval move take the global 64-bit
// (item, segment, rank).

// Writes each item's segment, and its rank when `ranks` is not null.
struct segments_op {
  index_type* __restrict__ segments;
  index_type* __restrict__ ranks;
  template <int NT, int VT>
  __device__ __forceinline__ void hand_out(const twophase::load_balance_tile& tile) const {
    index_type* tile_segments = segments + tile.a0;
    // Segment b0 - 1 + slot in index_type: for 32-bit indices the 32-bit sum is the 64-bit one
    // truncated, exact since every segment is below num_segments <= 2^32 - 1. (A tile whose
    // b0 is 0 hands out no slot 0: scan[0] == 0 puts slot 1 before its first item.)
    const index_type open_segment = (index_type)(tile.b0 - 1);
    if (ranks) {
      index_type* tile_ranks = ranks + tile.a0;
      twophase::for_each_tile_item<NT, VT>(tile, [&](int idx, int slot) {
        tile_segments[idx] = open_segment + (index_type)slot;
        tile_ranks[idx] = twophase::tile_rank<index_type>(tile, idx, slot);
      });
    } else {
      twophase::for_each_tile_item<NT, VT>(
          tile, [&](int idx, int slot) { tile_segments[idx] = open_segment + (index_type)slot; });
    }
  }
};

// Interval expand: out[item] = values[segment].
struct expand_op {
  const value_type* __restrict__ values;
  value_type* __restrict__ out;
  template <int NT, int VT>
  __device__ __forceinline__ void hand_out(const twophase::load_balance_tile& tile) const {
    value_type* tile_out = out + tile.a0;
    // The segment in index_type arithmetic, as segments_op's: a 32-bit index into values for
    // 32-bit indices.
    const index_type open_segment = (index_type)(tile.b0 - 1);
    twophase::for_each_tile_item<NT, VT>(
        tile, [&](int idx, int slot) { tile_out[idx] = values[open_segment + (index_type)slot]; });
  }
};

// Interval move: output[scatter[s] + rank] = input[gather[s] + rank]; a null gather (scatter)
// reads (writes) at the item's own position scan[s] + rank. A position outside input_count
// (output_count) moves nothing and raises STATUS_POSITION_INVALID (without overflow: a position
// near 2^64 plus a rank does not wrap into range).
struct move_op {
  const index_type* __restrict__ gather;
  const index_type* __restrict__ scatter;
  const value_type* __restrict__ input;
  value_type* __restrict__ output;
  size_type input_count;
  size_type output_count;
  twophase::input_check check;
  __device__ __forceinline__ void operator()(size_type item, size_type segment, size_type rank) const {
    const size_type from_base = gather ? (size_type)gather[segment] : item - rank;
    const size_type to_base = scatter ? (size_type)scatter[segment] : item - rank;
    if (from_base >= input_count || rank >= input_count - from_base || to_base >= output_count ||
        rank >= output_count - to_base) {
      twophase::raise_status(check, twophase::STATUS_POSITION_INVALID);
      return;
    }
    output[to_base + rank] = input[from_base + rank];
  }
  template <int NT, int VT>
  __device__ __forceinline__ void hand_out(const twophase::load_balance_tile& tile) const {
    twophase::for_each_global_item<NT, VT>(tile, *this);
  }
};

// The user's snippet with its arguments, given the global (item, segment, rank) (docs/search.md).
struct user_op {
  twophase_op_args args;
  __device__ __forceinline__ void operator()(size_type item, size_type segment, size_type rank) const {
    load_balance_user_op()(item, segment, rank, args);
  }
  template <int NT, int VT>
  __device__ __forceinline__ void hand_out(const twophase::load_balance_tile& tile) const {
    twophase::for_each_global_item<NT, VT>(tile, *this);
  }
};

static_assert(sizeof(twophase::load_balance_shared<TP_NT * TP_VT>) <= 48 * 1024,
              "tile too large for static shared memory");

// The tile kernels' launch bound (twophase::blocks_by_shared): the scan checks' values otherwise
// took 40-58 registers, 4-6 blocks of 256 threads on sm_90. At the shipped tuning: 8 blocks on
// sm_90 (the threads' limit; 16-bit starts and slots take 23 KB a tile), 32 registers. Not for
// the user snippet's kernel, whose registers are the snippet's.
constexpr int LBS_TILE_MIN_BLOCKS =
    twophase::blocks_by_shared((int)sizeof(twophase::load_balance_shared<TP_NT * TP_VT>), TP_NT);

// A tile kernel's parameters, the fields of its block: the scan, its sizes and the partitions
// (lbs_tile_inputs), the kernel's own (the arguments), then the input check's.
#define TWOPHASE_LBS_TILE_PARAMS(...)                                                                \
  const index_type* __restrict__ scan, size_type num_segments, size_type total,                      \
      const size_type* __restrict__ partitions, __VA_ARGS__, unsigned long long* status,            \
      unsigned long long* repair, unsigned generation

// A tile kernel's body: the tile's shared memory, the wait for the partitions and the input
// check, then the tile, each item handed to the op of type `op_t` built from the other arguments
// (which may name `check`).
#define TWOPHASE_LBS_TILE_BODY(op_t, ...)                                                           \
  __shared__ twophase::load_balance_shared<TP_NT * TP_VT> shared;                                   \
  twophase::pdl_wait();                                                                              \
  const twophase::input_check check = {status, repair, generation};                                 \
  op_t op = {__VA_ARGS__};                                                                          \
  twophase::cta_load_balance<TP_NT, TP_VT>(scan, num_segments, total, partitions, check, shared, op)

// Phase 2, segments (and ranks) of every item.
extern "C" __global__ void __launch_bounds__(TP_NT, LBS_TILE_MIN_BLOCKS)
    twophase_lbs_tile(TWOPHASE_LBS_TILE_PARAMS(index_type* __restrict__ segments, index_type* __restrict__ ranks)) {
  TWOPHASE_LBS_TILE_BODY(segments_op, segments, ranks);
}

// Phase 2, interval expand.
extern "C" __global__ void __launch_bounds__(TP_NT, LBS_TILE_MIN_BLOCKS)
    twophase_interval_expand(TWOPHASE_LBS_TILE_PARAMS(const value_type* __restrict__ values,
                                                      value_type* __restrict__ out)) {
  TWOPHASE_LBS_TILE_BODY(expand_op, values, out);
}

// Phase 2, interval move (gather, scatter or both), positions checked against input_count and
// output_count.
extern "C" __global__ void __launch_bounds__(TP_NT, LBS_TILE_MIN_BLOCKS)
    twophase_interval_move(TWOPHASE_LBS_TILE_PARAMS(const index_type* __restrict__ gather,
                                                    const index_type* __restrict__ scatter,
                                                    const value_type* __restrict__ input, size_type input_count,
                                                    value_type* __restrict__ output, size_type output_count)) {
  TWOPHASE_LBS_TILE_BODY(move_op, gather, scatter, input, output, input_count, output_count, check);
}

// Phase 2, the user's snippet for every (item, segment, rank).
extern "C" __global__ void __launch_bounds__(TP_NT) twophase_lbs_for_each(TWOPHASE_LBS_TILE_PARAMS(twophase_op_args args)) {
  TWOPHASE_LBS_TILE_BODY(user_op, args);
}
