//! The textbook's parallel merge kernels (basic, tiled, circular buffer), corrected, on partition.cuh and serial.cuh.
// Part of the textbook merge program, after merge_textbook.cuh (its helpers, and what is common
// to all three kernels and where they differ from the published code).

namespace twophase {
// The kernels' parameter blocks, twins of TextbookMergeParams (the basic, tiled and circular
// kernels) and TextbookRepairParams in crates/gpu/src/variants/textbook.rs (the generated program
// static_asserts the layouts equal and that each kernel's parameters are these fields in order).
struct textbook_merge_fields : merge_inputs<key_type> {
  key_type* out;
  const value_type* a_vals;
  const value_type* b_vals;
  value_type* out_vals;
};
typedef checked_params<textbook_merge_fields> textbook_merge_params;

struct merge_repair_fields : textbook_merge_fields {
  size_type spacing;
};
typedef checked_params<merge_repair_fields> merge_repair_params;
}  // namespace twophase

// The parameters of the basic, tiled and circular kernels: the fields of textbook_merge_params.
#define TWOPHASE_TEXTBOOK_MERGE_PARAMS                                                                           \
  const key_type* __restrict__ a, size_type a_count, const key_type* __restrict__ b, size_type b_count,         \
      key_type* __restrict__ out, const value_type* __restrict__ a_vals, const value_type* __restrict__ b_vals, \
      value_type* __restrict__ out_vals, unsigned long long* status, unsigned long long* repair, unsigned generation

// Basic: thread t merges outputs [t * VT, (t + 1) * VT) after finding the co-ranks of both ends
// by binary search in global memory, then merges from global memory into global memory.
// Differs from the textbook: the published kernel gives each thread ceil(total / threads)
// outputs of a fixed grid; here each thread has VT outputs (a compile-time constant, so the
// merge loop unrolls) and the grid grows with the input. Indices are 64-bit. A thread whose
// co-ranks are out of order writes nothing and reports its piece (twophase_merge_repair
// rewrites it).
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_basic(TWOPHASE_TEXTBOOK_MERGE_PARAMS) {
  using namespace textbook;
  const twophase::input_check check = {status, repair, generation};
  const size_type total = a_count + b_count;
  const size_type piece = (size_type)blockIdx.x * NT + threadIdx.x;
  const size_type k0 = piece * VT;
  if (k0 >= total) return;
  const size_type k1 = k0 + VT < total ? k0 + VT : total;
  const size_type i0 = global_co_rank(a, a_count, b, b_count, k0);
  const size_type i1 = global_co_rank(a, a_count, b, b_count, k1);
  if (!twophase::monotone_step(i0, k0, i1, k1)) {
    twophase::report_bad_boundary(check, piece);
    twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
    return;
  }
  const size_type j0 = k0 - i0;
  const int a_cnt = (int)(i1 - i0);
  const int count = (int)(k1 - k0);
  const global_pair keys = {a + i0, b + j0, a_cnt, count};
  const merge_range range = {0, a_cnt, a_cnt, count};
  const key_before_t a_prev = key_before(a, i0);
  const key_before_t b_prev = key_before(b, j0);
  if (count == VT) {
    merge_to_global<true, true>(keys, range, a_cnt, out + k0, a_vals + i0, b_vals + j0, out_vals + k0, a_prev, b_prev,
                          check);
  } else {
    merge_to_global<false, true>(keys, range, a_cnt, out + k0, a_vals + i0, b_vals + j0, out_vals + k0, a_prev, b_prev,
                           check);
  }
}

// Tiled: the block walks its output range one tile of TILE outputs at a time. Each iteration
// loads the next min(TILE, left) keys of A and of B into shared memory (coalesced), every
// thread finds the co-ranks of its VT outputs inside the shared tile and merges them, and the
// co-rank of the tile's end says how much of A and B the tile consumed; the rest is loaded again.
// Differs from the textbook:
// - The consumed count is the co-rank at the tile's real output count min(TILE, left) over the
//   real loaded lengths; the published kernel searches at tile_size over tile_size-long inputs,
//   which is wrong for the last (partial) tile and when an input has fewer than tile_size keys
//   left (it then reads keys that were never loaded).
// - That co-rank is not searched again: it is the end co-rank of the last thread, whose output
//   range ends at the tile's end, and is passed on through shared memory.
// - B's keys follow A's directly in one shared buffer (A then B, as serial_merge expects) rather
//   than at a fixed offset of tile_size.
// - The threads' co-ranks are checked (one barrier per tile); a tile whose pieces are out of order
//   writes what it consumes concatenated.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_tiled(TWOPHASE_TEXTBOOK_MERGE_PARAMS) {
  using namespace textbook;
  // A's tile, then B's, and the slot serial_merge may read one past the end.
  __shared__ key_type keys_shared[2 * TILE + 1];
  __shared__ size_type cuts[2];
  __shared__ int a_used_shared;
  const twophase::input_check check = {status, repair, generation};
  size_type out_pos, out_end;
  if (!block_range(a, a_count, b, b_count, cuts, &out_pos, &out_end, check)) return;
  size_type a_pos = cuts[0], b_pos = out_pos - cuts[0];
  const size_type a_end = cuts[1], b_end = out_end - cuts[1];
  bool a_descends = false, b_descends = false;  // adjacent keys out of order among those loaded

  while (out_pos < out_end) {
    const int a_len = (int)(a_end - a_pos < TILE ? a_end - a_pos : TILE);
    const int b_len = (int)(b_end - b_pos < TILE ? b_end - b_pos : TILE);
    a_descends |= load_checked(a, a_pos, a_len, keys_shared, [](int i) { return i; });
    b_descends |= load_checked(b, b_pos, b_len, keys_shared, [a_len](int i) { return a_len + i; });
    __syncthreads();

    const int out_cnt = (int)(out_end - out_pos < TILE ? out_end - out_pos : TILE);
    const int a_used = merge_tile(keys_shared, a_len, keys_shared + a_len, b_len, keys_shared, out_cnt, out_pos, out,
                                  a_vals + a_pos, b_vals + b_pos, out_vals, a_used_shared, check);
    __syncthreads();  // every thread is done with the tile
    a_pos += a_used;
    b_pos += out_cnt - a_used;
    out_pos += out_cnt;
  }
  if (a_descends || b_descends) twophase::raise_status(check, descent_bits(a_descends, b_descends));
}

// Circular buffer: as the tiled kernel, but the keys a tile did not consume stay in shared memory
// (one ring buffer of TILE slots per input) and each iteration loads only as many new keys as the
// last one consumed, so every input key is read from global memory once. The co-ranks and the
// serial merge index through the rings.
// Differs from the textbook:
// - Each thread searches the co-ranks of both ends of its own output range; the published kernel
//   computes a_next with c_curr, the same output index as a_curr, so every thread merges an empty
//   A range.
// - As in the tiled kernel, the consumed count is the last thread's end co-rank at the real
//   output count over the real ring fill levels, and a tile whose pieces are out of order writes
//   what it consumes concatenated.
// - The rings are read through ring_view / ring_pair (one subtraction instead of a modulo per
//   access), with the same merge_path and serial_merge as every other merge.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_circular(TWOPHASE_TEXTBOOK_MERGE_PARAMS) {
  using namespace textbook;
  __shared__ key_type a_ring[TILE];
  __shared__ key_type b_ring[TILE];
  __shared__ size_type cuts[2];
  __shared__ int a_used_shared;
  const twophase::input_check check = {status, repair, generation};
  size_type out_pos, out_end;
  if (!block_range(a, a_count, b, b_count, cuts, &out_pos, &out_end, check)) return;
  // Global positions of each ring's first unconsumed key and of the next key to load.
  size_type a_pos = cuts[0], b_pos = out_pos - cuts[0];
  size_type a_next = a_pos, b_next = b_pos;
  const size_type a_end = cuts[1], b_end = out_end - cuts[1];
  int a_head = 0, b_head = 0;  // ring slot of the first unconsumed key
  int a_have = 0, b_have = 0;  // unconsumed keys in each ring
  bool a_descends = false, b_descends = false;  // adjacent keys out of order among those loaded

  while (out_pos < out_end) {
    // Top both rings up to TILE keys (or what is left of the block's inputs).
    const int a_new = (int)(a_end - a_next < (size_type)(TILE - a_have) ? a_end - a_next : TILE - a_have);
    const int b_new = (int)(b_end - b_next < (size_type)(TILE - b_have) ? b_end - b_next : TILE - b_have);
    // The free slots follow the unconsumed keys: slot (head + have + i) mod TILE.
    const int a_free = ring_slot(a_head, a_have);
    const int b_free = ring_slot(b_head, b_have);
    a_descends |= load_checked(a, a_next, a_new, a_ring, [a_free](int i) { return ring_slot(a_free, i); });
    b_descends |= load_checked(b, b_next, b_new, b_ring, [b_free](int i) { return ring_slot(b_free, i); });
    a_have += a_new;
    b_have += b_new;
    a_next += a_new;
    b_next += b_new;
    __syncthreads();

    const ring_view a_view = {a_ring, a_head};
    const ring_view b_view = {b_ring, b_head};
    const int out_cnt = (int)(out_end - out_pos < TILE ? out_end - out_pos : TILE);
    const ring_pair keys = {a_view, a_have, b_view};
    int b_used;
    const int a_used = merge_tile(a_view, a_have, b_view, b_have, keys, out_cnt, out_pos, out, a_vals + a_pos,
                                  b_vals + b_pos, out_vals, a_used_shared, check, &b_used);
    __syncthreads();  // every thread is done reading the rings
    a_head = ring_slot(a_head, a_used);
    b_head = ring_slot(b_head, b_used);
    a_have -= a_used;
    b_have -= b_used;
    a_pos += a_used;
    b_pos += b_used;
    out_pos += out_cnt;
  }
  if (a_descends || b_descends) twophase::raise_status(check, descent_bits(a_descends, b_descends));
}

// Repair after any of the three kernels, on the same check: when a piece (a thread's outputs of
// the basic kernel, a block's of the others; `spacing` outputs each) had its co-ranks out of
// order, the first such piece p left outputs from k = min(p * spacing, total) on unwritten or
// unreliable. They become the A keys from the co-rank i of k on, then the B keys from k - i on:
// out[k'] = a[i + k' - k] while that is in A, else b[k' - a_count]. With the pieces before p
// (whose co-ranks were in order), the output is a permutation of the input. Does nothing (one
// load per block) when no piece was out of order. Grid-stride over the outputs.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_repair(const key_type* __restrict__ a, size_type a_count, const key_type* __restrict__ b,
                          size_type b_count, key_type* __restrict__ out, const value_type* __restrict__ a_vals,
                          const value_type* __restrict__ b_vals, value_type* __restrict__ out_vals,
                          size_type spacing, unsigned long long* status, unsigned long long* repair,
                          unsigned generation) {
  using namespace textbook;
  __shared__ size_type co_rank;
  const twophase::input_check check = {status, repair, generation};
  const size_type bad = twophase::first_bad_boundary(check);
  if (bad == twophase::NO_BAD_BOUNDARY) return;
  const size_type total = a_count + b_count;
  // bad < 2^32 and spacing < 2^31: the product does not overflow.
  const size_type k = bad * spacing < total ? bad * spacing : total;
  if (threadIdx.x == 0) co_rank = global_co_rank(a, a_count, b, b_count, k);
  __syncthreads();
  const size_type i = co_rank;
  const size_type stride = (size_type)gridDim.x * NT;
  for (size_type pos = k + (size_type)blockIdx.x * NT + threadIdx.x; pos < total; pos += stride) {
    const size_type from_a = i + (pos - k);
    if (from_a < a_count) {
      out[pos] = a[from_a];
      if (TP_HAS_VALUES) out_vals[pos] = a_vals[from_a];
    } else {
      out[pos] = b[pos - a_count];
      if (TP_HAS_VALUES) out_vals[pos] = b_vals[pos - a_count];
    }
  }
}
