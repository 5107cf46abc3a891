//! The segmented sort's merge levels: per level, the merge of each listed tile's straddle.
// Part of the segmented-sort program, after kernels/segmented_sort_partitions.cu.

// A tile's straddle inputs: A's keys and values, then B's, each range in at most two tiles.
struct straddle_inputs {
  span_reader<key_type> a_keys, b_keys;
  span_reader<value_type> a_vals, b_vals;
  int a_cnt;
};

// Positions a thread of a merge-level tile moves through registers a round (keys and values):
// with VT, the pairs of 2-byte keys or 8-byte values spilled at MERGE_REGISTERS.
constexpr int COPY_BATCH = 8;
// Whether values move in batches through registers: wider ones (a byte array of a user layout
// can take a register a byte) move one at a time.
constexpr bool BATCH_VALUES = sizeof(value_type) <= 8;

// Start moving the value at `val` to shared position `idx` of a load round: by cp.async where the
// type allows it, else into the round's register `held` (stored to shared memory once the
// round's loads are issued), or, too wide for a register, straight to shared memory.
__device__ __forceinline__ void load_value(value_type* vals_shared, int idx, const value_type* val,
                                           value_type& held) {
  if constexpr (copies_async<value_type>()) {
    segsort_copy_async(vals_shared + idx, val);
  } else if constexpr (BATCH_VALUES) {
    held = *val;
  } else {
    vals_shared[idx] = *val;
  }
}

// Load a tile's straddle inputs (`cnt` in all) to shared memory in tile order, strided so that
// neighbouring threads read neighbouring positions, each position's address found once for its
// key and its value: by cp.async where the type allows it (finished by segsort_copy_wait, so
// that the loads stay in flight while the block copies the rest of its tile), else through
// registers in rounds of COPY_BATCH, every load of a round issued before its first store.
template <int NT, int VT>
__device__ __forceinline__ void load_straddle(key_type* keys_shared, value_type* vals_shared,
                                              const straddle_inputs& in, int cnt, int tid) {
  constexpr bool KEYS_ASYNC = copies_async<key_type>();
  constexpr bool VALS_ASYNC = copies_async<value_type>();
#pragma unroll
  for (int round = 0; round < VT; round += COPY_BATCH) {
    // (Every register array of the merge tile starts defined: elements left unassigned under a
    // predicate were carried from one tile of the grid-stride loop to the next, and spilled.)
    key_type k[COPY_BATCH] = {};
    value_type v[COPY_BATCH] = {};
#pragma unroll
    for (int i = 0; i < COPY_BATCH; ++i) {
      const int idx = NT * (round + i) + tid;
      if (round + i >= VT || idx >= cnt) continue;
      const bool from_a = idx < in.a_cnt;
      const int offset = from_a ? idx : idx - in.a_cnt;
      const bool second = offset >= (from_a ? in.a_keys.split : in.b_keys.split);
      // (Selects of pointers: a reference to the chosen reader put the readers in local memory.)
      const key_type* key = (from_a ? (second ? in.a_keys.second : in.a_keys.first)
                                    : (second ? in.b_keys.second : in.b_keys.first)) +
                            offset;
      if constexpr (KEYS_ASYNC) {
        segsort_copy_async(keys_shared + idx, key);
      } else {
        k[i] = *key;
      }
      if constexpr (TP_HAS_VALUES) {
        const value_type* val = (from_a ? (second ? in.a_vals.second : in.a_vals.first)
                                        : (second ? in.b_vals.second : in.b_vals.first)) +
                                offset;
        load_value(vals_shared, idx, val, v[i]);
      }
    }
#pragma unroll
    for (int i = 0; i < COPY_BATCH; ++i) {
      const int idx = NT * (round + i) + tid;
      if (round + i >= VT || idx >= cnt) continue;
      if (!KEYS_ASYNC) keys_shared[idx] = k[i];
      if (TP_HAS_VALUES && !VALS_ASYNC && BATCH_VALUES) vals_shared[idx] = v[i];
    }
  }
}

// Whether a merge level loads its whole tiles by load_whole_straddle: keys that cp.async copies
// (4, 8 or 16 bytes). Narrower keys keep load_straddle, whose register rounds beside the
// whole tiles' made their programs spill 24-48 bytes.
constexpr bool WHOLE_TILE_LOADS = copies_async<key_type>();

// Load a tile's straddle inputs where every output of the tile is merged and each of A's and
// B's spans lies in one buffer (`a_keys`, `b_keys`, ... offset to the spans' starts): the
// common tile of a long straddle. Each position's address is one select of two bases, where
// load_straddle chooses among two tiles' buffers for each (about a third of a level's
// instructions). Keys go by cp.async (finished by segsort_copy_wait): all VT keys of a thread
// held in registers made the 8-byte keys' program spill 88 bytes. Values go as load_straddle
// moves them.
template <int NT, int VT>
__device__ __forceinline__ void load_whole_straddle(key_type* keys_shared, value_type* vals_shared,
                                                    const key_type* a_keys, const key_type* b_keys,
                                                    const value_type* a_vals, const value_type* b_vals, int a_cnt,
                                                    int cnt, int tid) {
  constexpr bool VALS_ASYNC = copies_async<value_type>();
#pragma unroll
  for (int round = 0; round < VT; round += COPY_BATCH) {
    value_type v[COPY_BATCH] = {};
#pragma unroll
    for (int i = 0; i < COPY_BATCH; ++i) {
      const int idx = NT * (round + i) + tid;
      if (round + i >= VT || idx >= cnt) continue;
      const bool from_a = idx < a_cnt;
      segsort_copy_async(keys_shared + idx, from_a ? a_keys + idx : b_keys + (idx - a_cnt));
      if constexpr (TP_HAS_VALUES) {
        load_value(vals_shared, idx, from_a ? a_vals + idx : b_vals + (idx - a_cnt), v[i]);
      }
    }
    if constexpr (TP_HAS_VALUES && !VALS_ASYNC && BATCH_VALUES) {
#pragma unroll
      for (int i = 0; i < COPY_BATCH; ++i) {
        const int idx = NT * (round + i) + tid;
        if (round + i < VT && idx < cnt) vals_shared[idx] = v[i];
      }
    }
  }
}

// Copy the tile's positions [0, tile_cnt) outside [skip0, skip1) from the `in` buffers to the
// `out` ones (all four offset to the tile's start), keys mapped by `image_out`, values
// alongside: strided over the threads as the tile's other accesses, in rounds of COPY_BATCH
// positions a thread, every load of a round (keys and values) issued before its first store,
// where one element at a time left the copy bound by load latency.
template <int NT, int VT>
__device__ __forceinline__ void copy_unmerged(const key_type* in_keys, key_type* out_keys, const value_type* in_vals,
                                              value_type* out_vals, int tile_cnt, int skip0, int skip1, int tid,
                                              key_image_out image_out) {
#pragma unroll
  for (int round = 0; round < VT; round += COPY_BATCH) {
    key_type k[COPY_BATCH] = {};
    value_type v[COPY_BATCH] = {};
#pragma unroll
    for (int i = 0; i < COPY_BATCH; ++i) {
      const int idx = NT * (round + i) + tid;
      if (round + i < VT && idx < tile_cnt && (idx < skip0 || idx >= skip1)) {
        k[i] = in_keys[idx];
        if (TP_HAS_VALUES && BATCH_VALUES) v[i] = in_vals[idx];
      }
    }
#pragma unroll
    for (int i = 0; i < COPY_BATCH; ++i) {
      const int idx = NT * (round + i) + tid;
      if (round + i < VT && idx < tile_cnt && (idx < skip0 || idx >= skip1)) {
        out_keys[idx] = image_out(k[i]);
        if (TP_HAS_VALUES && BATCH_VALUES) out_vals[idx] = v[i];
      }
    }
  }
  if (TP_HAS_VALUES && !BATCH_VALUES) {
#pragma unroll 1
    for (int idx = tid; idx < tile_cnt; idx += NT) {
      if (idx < skip0 || idx >= skip1) out_vals[idx] = in_vals[idx];
    }
  }
}

// Shared memory of a merge-level tile (dynamic: SegmentedSortTuning::merge_shared_bytes): the
// straddle's keys (NV + 1 slots: the serial merge reads one past), the merged outputs' NV source
// positions and, with values, the straddle's NV values, each region its own: the straddle stays
// in place while the sources are stored, and both keys and values are gathered from it.
template <int NV>
struct merge_smem {
  static constexpr int KEY_BYTES = align16((NV + 1) * (int)sizeof(key_type));
  static constexpr int SOURCE_BYTES = align16(NV * (int)sizeof(int));
  static constexpr int VALUE_BYTES = TP_HAS_VALUES ? NV * (int)sizeof(value_type) : 0;
  static constexpr int BYTES = KEY_BYTES + SOURCE_BYTES + VALUE_BYTES;
};

// Registers a thread of the merge-level tile is held to: left free, ptxas took 128 for u32
// pairs (four 128-thread blocks an SM); held to 64 with values (eight blocks) and to 56 for keys
// alone (nine, as before), of the shipped types only u16 keys alone spill, 24 bytes (six words
// once a tile; ptxas's stack frame as scripts/kernel_resources.py reads it), and 16-byte keys
// or 12-byte values none.
constexpr int MERGE_REGISTERS = TP_HAS_VALUES ? 64 : 56;
constexpr int MERGE_MIN_BLOCKS = twophase::blocks_by_registers(MERGE_REGISTERS, TP_NT);

// Phase 2 of level `level`: every tile of its work list rewritten into its other buffer: its
// outputs inside the straddle merged (NT threads, VT outputs each, through shared memory as the
// mergesort's pass tiles), the rest copied. The grid strides over the list. A tile's straddle
// keys and values go to shared memory by cp.async while its threads copy the rest of the tile;
// the merge leaves each output's source there, and the keys and values are gathered by source
// into coalesced stores.
extern "C" __global__ void __launch_bounds__(TP_NT, MERGE_MIN_BLOCKS)
    twophase_segsort_merge(key_type* keys, key_type* scratch_keys, value_type* vals, value_type* scratch_vals,
                           size_type count, const unsigned long long* masks, const size_type* straddles,
                           const unsigned* control, const unsigned* list, const size_type* partitions,
                           unsigned long long* status, unsigned level, unsigned own_partitions) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int warp_walk_starts[CHECK_ORDER ? NT / twophase::WARP_THREADS : 1];
  // With own_partitions (a trusted order's small sorts: no partition launch at this level), the
  // tile's partition and the next tile's, each searched by a warp (a 32-ary search: about a fifth
  // of a binary search's chain of dependent loads).
  __shared__ size_type searched[2];
  static_assert(NT >= 2 * twophase::WARP_THREADS, "two warps search a tile's partitions");
  follow_previous_launch();
  if (tile_path_off(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  const bool bad_level = CHECK_ORDER && control[control_bad(SEGSORT_MAX_LEVELS, level)] != 0;
  const twophase::input_check check = {status, nullptr, 0};
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  int* sources_shared = reinterpret_cast<int*>(smem + merge_smem<NV>::KEY_BYTES);
  value_type* vals_shared =
      reinterpret_cast<value_type*>(smem + merge_smem<NV>::KEY_BYTES + merge_smem<NV>::SOURCE_BYTES);
  const int tid = threadIdx.x;
  for (size_type e = blockIdx.x; e < listed; e += gridDim.x) {
    const size_type tile = list[e];
    const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
    const unsigned long long mask = masks[tile];
    if (four_way_at(mask, level)) continue;  // twophase_segsort_four_way_merge's
    const bool from_scratch = scratch_before(mask, level);
    key_type* out_keys = from_scratch ? keys : scratch_keys;
    value_type* out_vals = from_scratch ? vals : scratch_vals;
    const key_image_out image_out = {last_touch(mask, level)};
    const straddle s = tile_straddle(straddles, tile, level);
    if (own_partitions) {
      constexpr int WARP = twophase::WARP_THREADS;
      if (tid < 2 * WARP) {
        // Warp 1: the next tile's first output, where the straddle goes on past this tile.
        const size_type at = tid < WARP ? max(t0, s.lo) : t1;
        const size_type found =
            at < s.hi ? straddle_partition(keys, scratch_keys, masks, level, s, at, WARP) : s.mid;
        if (tid % WARP == 0) searched[tid / WARP] = found;
      }
      __syncthreads();  // (the previous tile read `searched` before its own barriers)
    }
    const auto partition_of = [&](size_type t) { return own_partitions ? searched[t != tile] : partitions[t]; };
    const tile_merge m(tile, count, s, partition_of);
    const int tile_cnt = (int)(m.m1 - m.m0);
    const int a_cnt = (int)(m.a1 - m.a0);
    const int b_cnt = tile_cnt - a_cnt;
    __syncthreads();  // the previous tile's last reads of shared memory
    // Every output of the tile merged: nothing of it to copy.
    const bool whole = !bad_level && m.m0 == t0 && m.m1 == t1;
    if (!bad_level) {
      const span_place a(masks, level, m.a0, m.a1), b(masks, level, m.b0, m.b0 + b_cnt);
      const straddle_inputs in = {{keys, scratch_keys, a, m.a0},
                                  {keys, scratch_keys, b, m.b0},
                                  {vals, scratch_vals, a, m.a0},
                                  {vals, scratch_vals, b, m.b0},
                                  a_cnt};
      bool loaded = false;
      if constexpr (WHOLE_TILE_LOADS) {
        // Each span in one buffer: the readers' first pointers hold all of it.
        const bool a_one = a.split >= a_cnt || a.first_scratch == a.second_scratch;
        const bool b_one = b.split >= b_cnt || b.first_scratch == b.second_scratch;
        if (whole && a_one && b_one) {
          load_whole_straddle<NT, VT>(keys_shared, vals_shared, in.a_keys.first, in.b_keys.first, in.a_vals.first,
                                      in.b_vals.first, a_cnt, tile_cnt, tid);
          loaded = true;
        }
      }
      if (!loaded) load_straddle<NT, VT>(keys_shared, vals_shared, in, tile_cnt, tid);
    }
    // The tile's outputs outside the straddle (all of them on a bad level) keep their keys and
    // values.
    if (!whole) {
      const int skip0 = bad_level ? 0 : (int)(m.m0 - t0), skip1 = bad_level ? 0 : (int)(m.m1 - t0);
      const key_type* in_keys = from_scratch ? scratch_keys : keys;
      const value_type* in_vals = from_scratch ? scratch_vals : vals;
      // (Keys alone have no value buffers to offset.)
      copy_unmerged<NT, VT>(in_keys + t0, out_keys + t0, TP_HAS_VALUES ? in_vals + t0 : nullptr,
                            TP_HAS_VALUES ? out_vals + t0 : nullptr, (int)(t1 - t0), skip0, skip1, tid, image_out);
    }
    if (bad_level) continue;
    segsort_copy_wait();
    __syncthreads();
    const int diag = min(VT * tid, tile_cnt);
    const int mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt,
                                                                      diag, key_compare());
    if (CHECK_ORDER) twophase::publish_walk_start(warp_walk_starts, mp);
    twophase::merge_range range = {mp, a_cnt, a_cnt + diag - mp, tile_cnt};
    key_type merged[VT];
    int sources[VT] = {};
    // A thread with VT outputs merges without a count test a step (keys_shared has a slot past
    // the straddle for the head it reads there).
    if (range.total() >= VT) {
      twophase::serial_merge<twophase::bounds_lower, VT, false>(keys_shared, range, key_compare(), merged, sources);
    } else if (range.total() > 0) {
      twophase::serial_merge<twophase::bounds_lower, VT, true>(keys_shared, range, key_compare(), merged, sources);
    }
    if (CHECK_ORDER) {
      const bool has_next = VT * (tid + 1) < tile_cnt;
      if (!twophase::walks_tile_exactly(warp_walk_starts, mp, range.a_begin, has_next)) {
        // The walks did not tile the merge (an inconsistent comparator): A then B as they are.
        if (diag < tile_cnt) {
          twophase::concatenate<VT, true>(keys_shared, 0, a_cnt, a_cnt, diag, tile_cnt - diag, merged, sources);
        }
        if (tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
      }
    }
    // Each output's source, in thread order (its own region: the straddle stays as it is, and
    // the merge's reads of it need no barrier before these stores).
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (VT * tid + i < tile_cnt) sources_shared[VT * tid + i] = sources[i];
    }
    __syncthreads();
    // The merged keys and values gathered by source, in strided order: coalesced stores.
    key_type* merged_keys = out_keys + m.m0;
    key_type k[VT] = {};
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (idx < tile_cnt) k[i] = keys_shared[sources_shared[idx]];
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (idx < tile_cnt) merged_keys[idx] = image_out(k[i]);
    }
    if (TP_HAS_VALUES && !BATCH_VALUES) {
      value_type* merged_vals = out_vals + m.m0;
#pragma unroll 1
      for (int idx = tid; idx < tile_cnt; idx += NT) merged_vals[idx] = vals_shared[sources_shared[idx]];
    } else if (TP_HAS_VALUES) {
      value_type* merged_vals = out_vals + m.m0;
      value_type v[VT] = {};
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) v[i] = vals_shared[sources_shared[idx]];
      }
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) merged_vals[idx] = v[i];
      }
    }
  }
}
