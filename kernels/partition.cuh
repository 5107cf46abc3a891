//! Phase 1 on the GPU: merge path search, the CUDA twin of crates/partition (same names, same tie rule).
#pragma once

namespace twophase {

// Global sizes and offsets are 64-bit end to end (inputs past 2^31 elements must work).
typedef unsigned long long size_type;

// Tie policy of a merge path search. Lower: on ties take from A first (the stable merge rule).
// Upper: on ties take from B first.
enum bounds_t { bounds_lower, bounds_upper };

// Whether the merge under policy `bounds` emits a_key before b_key (twophase_partition::takes_a).
template <bounds_t bounds, typename key_t, typename comp_t>
__device__ __forceinline__ bool takes_a(const key_t& a_key, const key_t& b_key, comp_t comp) {
  return bounds == bounds_upper ? comp(a_key, b_key) : !comp(b_key, a_key);
}

// Merge path: binary search on cross-diagonal `diag` of the merge of a[0, a_count) and
// b[0, b_count) for the number of A elements among the first `diag` outputs
// (twophase_partition::merge_path). `int_t` is size_type for global arrays, int inside a tile.
template <bounds_t bounds, typename int_t, typename a_it, typename b_it, typename comp_t>
__device__ __forceinline__ int_t merge_path(a_it a, int_t a_count, b_it b, int_t b_count, int_t diag,
                                            comp_t comp) {
  int_t begin = diag > b_count ? diag - b_count : 0;
  int_t end = diag < a_count ? diag : a_count;
  while (begin < end) {
    int_t mid = begin + (end - begin) / 2;
    if (takes_a<bounds>(a[mid], b[diag - 1 - mid], comp)) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return begin;
}

// ---- Search groups: the lanes of a warp that search one boundary together. ----

// Most lanes of a search group: one warp.
enum : int { MAX_SEARCH_LANES = 32 };

// One round of a `lanes`-ary search for the first `false` of a monotone predicate (true then
// false) over candidates [lo, lo + n): lane `l` probes candidate `probe(l)`, all n when
// n <= lanes, else `lanes` evenly spread ones, about n * (l + 1) / (lanes + 1) past lo (with one
// lane, a binary search's middle). The lanes of a group then agree, from the ballot of their
// answers, on the candidates left: with `t` answers true (a prefix of the lanes, the predicate
// being monotone), the first false lies past probe(t - 1) and at or before probe(t).
struct kary_round {
  size_type lo, n;
  int lanes;
  // (2^32 - 1) / (lanes + 1), rounded down so that every probe stays below lo + n. (A 64-bit
  // division in every round would be a subroutine of dependent instructions on the search's chain.)
  unsigned reciprocal;
  __device__ __forceinline__ int active_lanes() const { return n < (size_type)lanes ? (int)n : lanes; }
  __device__ __forceinline__ size_type probe(int l) const {
    return n <= (size_type)lanes ? lo + l : lo + __umul64hi(n * (size_type)(l + 1), (size_type)reciprocal << 32);
  }
};

// The lanes of this thread's search group (`lanes` consecutive lanes of a warp, a power of two)
// as a mask of the warp, for the group's ballots.
__device__ __forceinline__ unsigned search_group_mask(int lanes) {
  const unsigned group_bits = lanes == MAX_SEARCH_LANES ? 0xffffffffu : (1u << lanes) - 1;
  return group_bits << (threadIdx.x % MAX_SEARCH_LANES / lanes * lanes);
}

// The `true` answers of a search group's lanes, as a count: the predicate is monotone over the
// lanes' probes, so the true answers are the first ones. A group of one lane skips the warp
// vote (`lanes` is the same in every thread, so the branch never diverges).
__device__ __forceinline__ int group_trues(unsigned group_mask, int lanes, bool answer) {
  return lanes == 1 ? (int)answer : __popc(__ballot_sync(group_mask, answer) & group_mask);
}

// Lane `src` (group-local) of the search group's `value`, for any trivially copyable type: moved
// as 4-byte words, every lane of the group calling (`lanes` its width).
template <typename T>
__device__ __forceinline__ T group_shuffle(unsigned group_mask, const T& value, int src, int lanes) {
  constexpr int WORDS = ((int)sizeof(T) + 3) / 4;
  unsigned words[WORDS] = {};
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < WORDS; ++w) words[w] = __shfl_sync(group_mask, words[w], src, lanes);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

// values[index] for an index known only at run time, as a chain of selects: an array indexed by
// a computed value would be placed in local memory.
template <typename T, int N>
__device__ __forceinline__ T pick(const T (&values)[N], int index) {
  T picked = values[0];
#pragma unroll
  for (int k = 1; k < N; ++k) {
    if (index == k) picked = values[k];
  }
  return picked;
}

// The first candidate in [begin, end) at which `taken` is false (end if none), for a predicate
// that is true and then false, searched by a group of `lanes` lanes of one warp (a power of two
// up to MAX_SEARCH_LANES; every lane of the group calls with the same bounds and gets the
// answer). One lane runs the binary search; more lanes probe `lanes` candidates a round and keep
// the span between the last true and the first false, so a chain of log2(n) dependent loads
// becomes one of log(n) / log(lanes + 1) rounds. Whatever `taken` answers, the result lies in
// [begin, end].
template <typename pred_t>
__device__ __forceinline__ size_type first_untaken(size_type begin, size_type end, int lanes, pred_t taken) {
  if (lanes == 1) {
    while (begin < end) {
      const size_type mid = begin + (end - begin) / 2;
      if (taken(mid)) {
        begin = mid + 1;
      } else {
        end = mid;
      }
    }
    return begin;
  }
  const int lane = threadIdx.x & (lanes - 1);
  const unsigned group = search_group_mask(lanes);
  const unsigned reciprocal = 0xffffffffu / (unsigned)(lanes + 1);
  while (begin < end) {
    const kary_round round = {begin, end - begin, lanes, reciprocal};
    bool answer = false;
    if (lane < round.active_lanes()) answer = taken(round.probe(lane));
    const int t = group_trues(group, lanes, answer);
    if (t > 0) begin = round.probe(t - 1) + 1;
    if (t < round.active_lanes()) end = round.probe(t);
  }
  return begin;
}

// merge_path on global arrays, searched by a group of `lanes` lanes (first_untaken).
template <bounds_t bounds, typename key_t, typename comp_t>
__device__ __forceinline__ size_type group_merge_path(const key_t* __restrict__ a, size_type a_count,
                                                      const key_t* __restrict__ b, size_type b_count, size_type diag,
                                                      comp_t comp, int lanes) {
  const size_type begin = diag > b_count ? diag - b_count : 0;
  const size_type end = diag < a_count ? diag : a_count;
  return first_untaken(begin, end, lanes,
                       [&](size_type mid) { return takes_a<bounds>(a[mid], b[diag - 1 - mid], comp); });
}

// The slices of A and B that produce one contiguous piece of a merge's output
// (twophase_partition::MergeRange), in 32-bit tile-local indices: B follows A in one buffer.
struct merge_range {
  int a_begin, a_end, b_begin, b_end;
  __device__ __forceinline__ int a_count() const { return a_end - a_begin; }
  __device__ __forceinline__ int b_count() const { return b_end - b_begin; }
  __device__ __forceinline__ int total() const { return a_count() + b_count(); }
  __device__ __forceinline__ bool a_valid() const { return a_begin < a_end; }
  __device__ __forceinline__ bool b_valid() const { return b_begin < b_end; }
};

// ---- Launch bounds: occupancy that the input checks must not cost. ----

// Blocks of a tile kernel with `shared_bytes` of static shared memory and `threads` threads that
// fit one SM (each block also takes 1 KiB of shared memory reserved by the system). A tile
// kernel's launch bound asks ptxas for registers that let that many blocks run, so that the
// input checks, whose values ptxas would otherwise keep in registers across the walk, do not
// cost a block an SM.
#if __CUDA_ARCH__ >= 900
constexpr int SHARED_PER_SM = 228 * 1024;
#else
constexpr int SHARED_PER_SM = 164 * 1024;
#endif
constexpr int RESERVED_SHARED_PER_BLOCK = 1024;
constexpr int MAX_THREADS_PER_SM = 2048;
constexpr int REGISTERS_PER_SM = 65536;  // sm_80 and sm_90

// Blocks of `threads` threads that fit one SM at `registers` registers a thread (at least 1).
constexpr int blocks_by_registers(int registers, int threads) {
  return REGISTERS_PER_SM / (registers * threads) > 1 ? REGISTERS_PER_SM / (registers * threads) : 1;
}
constexpr int blocks_by_shared(int shared_bytes, int threads) {
  const int by_shared = SHARED_PER_SM / (shared_bytes + RESERVED_SHARED_PER_BLOCK);
  const int by_threads = MAX_THREADS_PER_SM / threads;
  const int blocks = by_shared < by_threads ? by_shared : by_threads;
  return blocks > 0 ? blocks : 1;
}

// ---- Input checks (crates/gpu/src/status.rs): no input may move a tile outside its ranges. ----

// Status bits a kernel raises in the call's status word (twophase_gpu::status::STATUS_*).
// (Enumerators rather than constexpr variables: a program that uses only some of them compiles
// without NVRTC's "declared but never referenced" warning.)
enum status_bit : unsigned {
  STATUS_FIRST_UNSORTED = 1,
  STATUS_SECOND_UNSORTED = 2,
  STATUS_ORDER_INCONSISTENT = 4,
  STATUS_SCAN_INVALID = 8,
  STATUS_POSITION_INVALID = 16,
};

enum boundary_code : size_type {
  // No bad boundary in this launch.
  NO_BAD_BOUNDARY = ~0ull,
  // The largest boundary index the repair slot encodes (32 bits); a later bad one is recorded
  // as this one, which only repairs earlier than needed (still a valid path).
  MAX_ENCODED_BOUNDARY = 0xfffffffeull,
};

// The status word, the partition repair slot and this launch's generation (twophase_gpu::
// CheckArgs): the slot holds (generation << 32) | (0xffffffff - first bad boundary), raised by
// atomicMax, so that an older launch's value (smaller generation) never counts.
struct input_check {
  unsigned long long* status;
  unsigned long long* repair;
  unsigned generation;
};

// ---- Kernel parameter blocks: twins of the Rust param_block! structs (the generated program ----
// static_asserts each one's size, its fields' offsets and sizes, and that its kernel's parameters
// are its fields in order). Bases are laid out first, in order, so a block is composed front to
// back; every part before the input check is a whole number of 8-byte words, so composing adds
// no padding.

// A kernel's parameter block: its own fields (`fields_t`), then the input check's.
template <typename fields_t>
struct checked_params : fields_t, input_check {};

// The fields of a partition kernel's block: its inputs (`inputs_t`), then the boundaries' spacing
// and count and the partitions it writes.
template <typename inputs_t>
struct partition_fields : inputs_t {
  size_type spacing;
  size_type num_partitions;
  size_type* partitions;
  size_type lanes;      // lanes a boundary's search group (search_partitions)
  unsigned* arrivals;   // the blocks' arrival count (search_partitions), 0 between launches
};

template <typename inputs_t>
using partition_params = checked_params<partition_fields<inputs_t>>;

// The inputs of a merge of A and B, the first fields of the merges' blocks.
template <typename key_t>
struct merge_inputs {
  const key_t* a;
  size_type a_count;
  const key_t* b;
  size_type b_count;
};

__device__ __forceinline__ void raise_status(const input_check& check, unsigned bits) {
  atomicOr(check.status, (unsigned long long)bits);
}

// Record that boundaries p and p + 1 of this launch's partitions are out of order.
__device__ __forceinline__ void report_bad_boundary(const input_check& check, size_type p) {
  const size_type encoded = p < MAX_ENCODED_BOUNDARY ? p : MAX_ENCODED_BOUNDARY;
  atomicMax(check.repair, ((unsigned long long)check.generation << 32) | (0xffffffffull - encoded));
}

// The first bad boundary reported in this launch's partition kernel, or NO_BAD_BOUNDARY.
__device__ __forceinline__ size_type first_bad_boundary(const input_check& check) {
  const unsigned long long code = *check.repair;
  if ((unsigned)(code >> 32) != check.generation) return NO_BAD_BOUNDARY;
  return 0xffffffffull - (code & 0xffffffffull);
}

// Whether the merge path points (a0 at diagonal d0) and (a1 at d1 >= d0) make a valid step: both
// the A count and the B count do not decrease.
__device__ __forceinline__ bool monotone_step(size_type a0, size_type d0, size_type a1, size_type d1) {
  return a0 <= a1 && d0 - a0 <= d1 - a1;
}

// Boundary p of a merge of a_count A keys, repaired: its own merge path `path` up to the first bad
// boundary `bad`, then, from the path at `bad` (`bad_path`, at diagonal `bad_diag`), the
// remaining A keys first and then B: a valid monotone path whatever the comparator answered.
__device__ __forceinline__ size_type repaired_boundary(size_type p, size_type path, size_type diag, size_type bad,
                                                       size_type bad_path, size_type bad_diag, size_type a_count) {
  if (p <= bad) return path;
  const size_type a_first = bad_path + (diag - bad_diag);
  return a_first < a_count ? a_first : a_count;
}

// The end of a tile's A range, kept between the tile's start `a0` and a0 + tile_cnt: with both
// boundaries inside the inputs (each a merge path), the tile's A and B ranges are then valid. A
// no-op on repaired boundaries; it matters only where two searches of one boundary disagree (a
// partition block's first boundary is also the block before's last), which a comparator whose
// answers change from call to call can cause: its tiles still stay inside their buffers.
__device__ __forceinline__ size_type clamped_tile_end(size_type a0, size_type a1, size_type tile_cnt) {
  if (a1 < a0) return a0;
  return a1 - a0 > tile_cnt ? a0 + tile_cnt : a1;
}

// The pairs of boundaries across the blocks of a partition launch whose blocks each store
// `groups` boundaries ([b * groups, + groups) for block b, `num_partitions` in all), checked by
// the block that arrives last (`arrivals`, a word that is 0 between launches: atomicInc wraps it
// back): `check_pair(first)` for the first boundary of every block but block 0, which reads the
// stored boundaries `first - 1` and `first` (volatile: other blocks wrote them) and reports a
// pair out of order. Called by every thread of every block, after the block's boundaries are
// stored. Each boundary is searched once and the pairs checked are the pairs stored, so this
// holds for a comparator whose answers change from call to call too (blocks that overlapped by a
// boundary, each searching it, could store one search's answer and check another's).
template <int NT, typename pair_fn>
__device__ __forceinline__ void check_pairs_across_blocks(size_type num_partitions, int groups, unsigned* arrivals,
                                                          pair_fn check_pair) {
  __shared__ bool last_block;
  __threadfence();  // this thread's boundary before the block's arrival is counted
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicInc(arrivals, gridDim.x - 1) == gridDim.x - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();  // every block's boundaries before this block reads them
  for (size_type b = 1 + threadIdx.x; b < gridDim.x; b += NT) {
    const size_type first = b * groups;  // block b's first boundary, after block b - 1's last
    if (first >= num_partitions) break;
    check_pair(first);
  }
}

// The body of a partition kernel of NT threads: boundaries [0, num_partitions) at the diagonals
// `diagonal(p)`, each searched by a group of `lanes` lanes (a power of two dividing NT, up to
// MAX_SEARCH_LANES), `path_at(diag)` called by every lane of the group. The groups of block `b`
// search boundaries [b * groups, + groups), each once, and each group's first lane writes
// partitions[p] and checks it against the boundary before it in the block; the pairs across
// blocks are checked from the stored boundaries (check_pairs_across_blocks). A pair out of order
// is reported to the repair slot and raises `bad_bit`.
template <int NT, typename diagonal_fn, typename path_fn>
__device__ __forceinline__ void search_partitions(size_type num_partitions, size_type* __restrict__ partitions,
                                                  int lanes, unsigned* arrivals, const input_check& check,
                                                  unsigned bad_bit, diagonal_fn diagonal, path_fn path_at) {
  __shared__ size_type paths[NT];
  const int groups = NT / lanes;
  const int group = threadIdx.x / lanes;
  const bool leader = threadIdx.x % lanes == 0;
  const size_type p = (size_type)blockIdx.x * groups + group;
  const bool active = p < num_partitions;  // the whole group: its lanes share p
  const size_type diag = diagonal(p);
  size_type path = 0;
  if (active) {
    path = path_at(diag);
    if (leader) partitions[p] = path;
  }
  if (leader) paths[group] = path;
  __syncthreads();
  if (leader && active && group > 0 && !monotone_step(paths[group - 1], diagonal(p - 1), path, diag)) {
    report_bad_boundary(check, p - 1);
    raise_status(check, bad_bit);
  }
  check_pairs_across_blocks<NT>(num_partitions, groups, arrivals, [&](size_type first) {
    const size_type before = *(volatile const size_type*)(partitions + first - 1);
    const size_type at = *(volatile const size_type*)(partitions + first);
    if (!monotone_step(before, diagonal(first - 1), at, diagonal(first))) {
      report_bad_boundary(check, first - 1);
      raise_status(check, bad_bit);
    }
  });
}

// Phase 1 of a merge of A and B (the two-phase merge's and the textbook merges' partition
// kernels): partitions[p] = merge path (A elements before) at output min(p * spacing, total),
// each searched once by a group of `lanes` lanes and checked pair by pair as stored
// (search_partitions); a pair out of order goes to the repair slot as STATUS_ORDER_INCONSISTENT.
template <int NT, typename key_t, typename comp_t>
__device__ __forceinline__ void merge_partitions(const key_t* __restrict__ a, size_type a_count,
                                                 const key_t* __restrict__ b, size_type b_count, size_type spacing,
                                                 size_type num_partitions, size_type* __restrict__ partitions,
                                                 int lanes, unsigned* arrivals, const input_check& check, comp_t comp) {
  const size_type total = a_count + b_count;
  search_partitions<NT>(
      num_partitions, partitions, lanes, arrivals, check, STATUS_ORDER_INCONSISTENT,
      [&](size_type p) { return min(p * spacing, total); },
      [&](size_type diag) { return group_merge_path<bounds_lower>(a, a_count, b, b_count, diag, comp, lanes); });
}

// The statuses of the adjacent pairs out of order among positions [first - 1, last] of a run of
// the tile ending at `run_end` (pairs (i - 1, i) for max(first, run_begin + 1) <= i <= min(last,
// run_end - 1)), as `bit`. `keys_it` is indexable by tile position (shared memory, or the
// textbook merges' views). Rolled: the rare path of walk_inputs_unsorted, of the sorted search's
// walk check and of the textbook merges' order check.
template <typename keys_it, typename comp_t>
__device__ __forceinline__ unsigned run_unsorted(const keys_it& keys, int first, int last, int run_begin,
                                                 int run_end, unsigned bit, comp_t comp) {
  const int end = min(last + 1, run_end);
#pragma unroll 1
  for (int i = max(first, run_begin + 1); i < end; ++i) {
    if (comp(keys[i], keys[i - 1])) return bit;
  }
  return 0;
}

// ---- Programmatic dependent launch (sm_90+; both no-ops in a kernel launched normally). ----

// Let the next kernel's blocks be scheduled now: they wait in pdl_wait until this grid has
// completed and its writes are visible.
__device__ __forceinline__ void pdl_launch_dependents() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Wait for the kernel this one was launched as a programmatic dependent of.
__device__ __forceinline__ void pdl_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The tile this block merges, of a launch over tiles first_tile .. first_tile + gridDim.x - 1:
// the launch's last tile first, then the others in order. A pass's last tile is usually partial,
// and the four-way tile's range-checked path runs from its stack (local memory); blocks start in
// index order, so as the last block it kept one SM busy about 20 us after the others had finished
// (docs/tuning.md, "The partial tile first").
__device__ __forceinline__ size_type last_tile_first(size_type first_tile) {
  return first_tile + (blockIdx.x == 0 ? gridDim.x - 1 : blockIdx.x - 1);
}

// ---- In-tile walk check: thread merge paths that tile their merge exactly. ----

// Where each thread's serial walk of an in-tile merge starts, told to the thread before it, so
// that no thread searches a merge path twice: passed down the warp by a shuffle
// (walk_start_down_warp, every lane of the warp calling), and to lane 31 through one shared slot
// a warp (`slots`, NT / 32 ints), which lane 0 fills (publish_walk_start). next_walk_start reads it
// past a barrier that follows every publish. (The slots are taken as a shared array, not a
// pointer: a generic pointer cost the two-way pass of a user comparator 32 registers; the thread
// index is read as a signed int for the same reason.)

// The threads of a warp (an enumerator: a constant that a program does not use draws no warning).
enum : int { WARP_THREADS = 32 };

template <int WARPS>
__device__ __forceinline__ void publish_walk_start(int (&slots)[WARPS], int start) {
  const int tid = threadIdx.x;
  if (tid % WARP_THREADS == 0) slots[tid / WARP_THREADS] = start;
}

// The next lane's start.
__device__ __forceinline__ int walk_start_down_warp(int start) { return __shfl_down_sync(0xffffffffu, start, 1); }

// The next thread's start, from walk_start_down_warp's answer or, in lane 31, the next warp's slot.
// Only in a thread whose next thread walks the same merge (the block's last thread never does).
template <int WARPS>
__device__ __forceinline__ int next_walk_start(const int (&slots)[WARPS], int next_in_warp) {
  const int tid = threadIdx.x;
  return tid % WARP_THREADS != WARP_THREADS - 1 ? next_in_warp : slots[tid / WARP_THREADS + 1];
}

// Whether every thread's serial walk of its in-tile merge ended where the next thread's starts,
// so that the threads' outputs are a permutation of the merges' inputs: `start` is where this
// thread's walk started (published to `slots` before the walk, publish_walk_start), `end` its A
// position after the walk, in the same coordinates; `has_next` whether the next thread walks the
// same merge and has outputs. `spans_warps`: whether a next thread may lie in the next warp;
// where none does, no slot is read and its barrier is skipped. Every thread of the block calls
// (one or two barriers); the same answer in every thread.
template <int WARPS>
__device__ __forceinline__ bool walks_tile_exactly(const int (&slots)[WARPS], int start, int end, bool has_next,
                                                   bool spans_warps = true) {
  const int next_in_warp = walk_start_down_warp(start);
  if (spans_warps) __syncthreads();  // every publish before the slots are read
  const int next = has_next ? next_walk_start(slots, next_in_warp) : 0;
  return __syncthreads_or(has_next && next != end) == 0;
}

// The fallback of a merge whose walks were not exact: this thread's outputs are positions
// [diag, diag + count) of A then B unmerged (A at a_begin.. + a_count, B at b_begin..), a
// permutation whatever the comparator answered. `keys_it` as for serial_merge.
template <int VT, bool checked, typename keys_it, typename key_t>
__device__ __forceinline__ void concatenate(keys_it keys_shared, int a_begin, int a_count, int b_begin, int diag,
                                            int count, key_t (&keys)[VT], int (&indices)[VT]) {
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (checked && i >= count) break;
    const int pos = diag + i;
    const int index = pos < a_count ? a_begin + pos : b_begin + (pos - a_count);
    keys[i] = keys_shared[index];
    indices[i] = index;
  }
}

}  // namespace twophase
