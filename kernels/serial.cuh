//! Phase 2 on the GPU: the register-unrolled serial merge of VT items, twin of crates/serial.
#pragma once

namespace twophase {

// Whether the next output of `range` comes from A, given the current heads a_key / b_key
// (twophase_serial::merge_predicate). An exhausted side never wins.
// Branch-free: both heads are always readable (the slot past an exhausted run lies inside the
// buffer), so the comparison is evaluated every step and combined with the bounds by
// non-short-circuit operators. The early-return form compiled to a branch and a convergence
// barrier per output of the serial merge (about 20 instructions a step instead of about 12).
template <bounds_t bounds, typename key_t, typename comp_t>
__device__ __forceinline__ bool merge_predicate(const key_t& a_key, const key_t& b_key, const merge_range& range,
                                                comp_t comp) {
  const bool prefer_a = takes_a<bounds>(a_key, b_key, comp);
  return range.a_valid() & (!range.b_valid() | prefer_a);
}

// Merge VT outputs of `range` (over one buffer `keys_shared`, A then B) into registers:
// the keys and the tile-local position each came from, advancing `range`
// (twophase_serial::serial_merge / serial_merge_checked). With `checked`, only the first
// min(VT, range.total()) outputs are produced: the range-checked form for a partial tile.
// The unchecked form needs range.total() >= VT and keys_shared readable at range.b_end.
// `keys_it` is anything indexable by an int position that yields a key: a pointer into shared
// memory (the two-phase tiles), or the textbook merges' views of a ring buffer or of two global
// ranges (kernels/merge_textbook.cu), so that every merge kernel runs this one serial merge.
template <bounds_t bounds, int VT, bool checked, typename keys_it, typename key_t, typename comp_t>
__device__ __forceinline__ void serial_merge(keys_it keys_shared, merge_range& range, comp_t comp,
                                             key_t (&keys)[VT], int (&indices)[VT]) {
  const int count = checked ? min(VT, range.total()) : VT;
  key_t a_key = keys_shared[range.a_begin];
  key_t b_key = keys_shared[range.b_begin];
  // After step i, a_begin + b_begin = diag + i + 1: only a_begin is advanced, b_begin follows
  // from it, and the next head is read at the advanced side. (Selecting the taken index, then
  // both new indices, gave about as many instructions a step but made the four-way tile spill
  // at its 64-80 register budgets; this form did not.)
  const int diag = range.a_begin + range.b_begin;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (checked && i >= count) break;
    const bool p = merge_predicate<bounds>(a_key, b_key, range, comp);
    keys[i] = p ? a_key : b_key;
    indices[i] = p ? range.a_begin : range.b_begin;
    range.a_begin += p;
    range.b_begin = diag + i + 1 - range.a_begin;
    // The next head of the side just consumed. Reading one past the last consumed element stays
    // inside the tile buffer (it holds tile + 1 slots), and in the checked form only happens
    // while outputs remain.
    const key_t next = keys_shared[p ? range.a_begin : range.b_begin];
    if (p) {
      a_key = next;
    } else {
      b_key = next;
    }
  }
}

// Stable odd-even transposition sort of the first `count` of VT register keys, carrying a
// payload (twophase_serial::serial_sort_pairs): VT rounds of compare-and-swap on neighbours, a
// swap only when the right key is strictly less, so equal keys never pass each other. Entries
// past `count` stay in place, as if they were +infinity. With GROUP < VT, each GROUP consecutive
// keys (the last group possibly shorter) are sorted on their own, in GROUP rounds
// (twophase_serial::serial_sort_groups). Fully unrolled: registers only.
template <int VT, int GROUP = VT, typename key_t, typename value_t, typename comp_t>
__device__ __forceinline__ void serial_sort(key_t (&keys)[VT], value_t (&values)[VT], int count, comp_t comp) {
#pragma unroll
  for (int round = 0; round < GROUP; ++round) {
#pragma unroll
    for (int i = 0; i + 1 < VT; ++i) {
      // Neighbours i, i + 1 of one group, exchanged in the rounds of i's parity within it.
      const bool in_round = (i % GROUP) % 2 == round % 2 && (i + 1) % GROUP != 0;
      if (in_round && i + 1 < count && comp(keys[i + 1], keys[i])) {
        const key_t k = keys[i];
        keys[i] = keys[i + 1];
        keys[i + 1] = k;
        const value_t v = values[i];
        values[i] = values[i + 1];
        values[i + 1] = v;
      }
    }
  }
}


// ceil(log2(n)) for n >= 1, at compile time.
constexpr int ceil_log2(int n) { return n <= 1 ? 0 : 1 + ceil_log2((n + 1) / 2); }

// Unstable sort of all VT register keys by Batcher's odd-even merge sort for any VT (Knuth's
// formulation: merges of sorted runs of p = 1, 2, 4, ... keys, each by compare-exchanges at
// distances k = p, p/2, ..., 1 between keys in the same run pair): 246 compare-exchanges for 33
// keys, where serial_sort's odd-even transposition needs 528. Only for keys whose equivalents are
// identical (key_compare::equivalents_identical) and that carry nothing, where stability cannot
// be observed. A partial tile keeps serial_sort, whose count check as a predicate on each
// exchange made ptxas spill here. Fully unrolled: constant indices, registers only.
template <int VT, typename key_t, typename comp_t>
__device__ __forceinline__ void network_sort(key_t (&keys)[VT], comp_t comp) {
  constexpr int LOG = ceil_log2(VT);
  // Stage (p = 2^lp, k = 2^lk) exchanges the disjoint pairs (lo, lo + k) with lo - j0 in the
  // first half of each 2k-block (j0 = k % p) and both ends in one 2p-run. Every loop has a
  // constant trip count, so that all of it unrolls (the textbook while-loops over j and i were
  // left rolled, with the keys in local memory).
#pragma unroll
  for (int lp = 0; lp < LOG; ++lp) {
#pragma unroll
    for (int lk = lp; lk >= 0; --lk) {
#pragma unroll
      for (int lo = 0; lo < VT; ++lo) {
        const int p = 1 << lp, k = 1 << lk, j0 = k % p, hi = lo + k;
        if (hi < VT && lo >= j0 && (lo - j0) % (2 * k) < k && lo / (2 * p) == hi / (2 * p)) {
          const key_t a = keys[lo];
          const key_t b = keys[hi];
          const bool swap = comp(b, a);
          keys[lo] = swap ? b : a;
          keys[hi] = swap ? a : b;
        }
      }
    }
  }
}

// Keys of a thread's shared-memory slots, read no further than slot `last`: a merge whose B run
// ends the thread's slots reads, once B is spent, one slot past it, which is the next thread's
// first slot, written by that thread meanwhile (stable_slot_sort).
template <typename key_t>
struct clamped_slots {
  const key_t* slots;
  int last;
  __device__ __forceinline__ key_t operator[](int i) const { return slots[min(i, last)]; }
};

// One merge level of stable_slot_sort: the pairs of sorted runs of RUN keys from slot FIRST on
// (the last run, or pair, possibly shorter) merged from `slots` into keys[FIRST, VT), stably
// (bounds_lower: a tie takes the earlier run's key).
template <int VT, int RUN, int FIRST, typename key_t, typename comp_t>
__device__ __forceinline__ void merge_slot_pairs(key_t (&keys)[VT], const key_t* slots, comp_t comp) {
  if constexpr (FIRST + RUN < VT) {
    constexpr int END = FIRST + 2 * RUN < VT ? FIRST + 2 * RUN : VT;
    constexpr int PAIR = END - FIRST;
    key_t merged[PAIR];
    int sources[PAIR];
    merge_range range = {FIRST, FIRST + RUN, FIRST + RUN, END};
    if constexpr (END < VT) {
      serial_merge<bounds_lower, PAIR, false>(slots, range, comp, merged, sources);
    } else {
      serial_merge<bounds_lower, PAIR, false>(clamped_slots<key_t>{slots, VT - 1}, range, comp, merged, sources);
    }
#pragma unroll
    for (int i = 0; i < PAIR; ++i) keys[FIRST + i] = merged[i];
    merge_slot_pairs<VT, RUN, END>(keys, slots, comp);
  }
}

// The merge levels of stable_slot_sort from runs of RUN keys: each stores the keys to the slots
// and merges them back in pairs of runs, until one run holds all VT.
template <int VT, int RUN, typename key_t, typename comp_t>
__device__ __forceinline__ void merge_slot_levels(key_t (&keys)[VT], key_t* slots, comp_t comp) {
  if constexpr (RUN < VT) {
#pragma unroll
    for (int i = 0; i < VT; ++i) slots[i] = keys[i];
    merge_slot_pairs<VT, RUN, 0>(keys, slots, comp);
    merge_slot_levels<VT, 2 * RUN>(keys, slots, comp);
  }
}

// Stable sort of all VT register keys without a payload (twophase_serial::stable_slot_sort), in
// about VT log2(VT / GROUP) merge steps and VT (GROUP - 1) / 2 exchanges, where serial_sort's
// transposition takes VT (VT - 1) / 2 exchanges: transposition sorts of groups of GROUP keys,
// then merge levels through the thread's own VT slots of shared memory (`slots`, written and read
// by this thread alone, so no barrier). For keys whose equivalents may differ, which network_sort
// cannot keep in order. Every merge is a permutation of its runs whatever `comp` answers.
template <int VT, typename key_t, typename comp_t>
__device__ __forceinline__ void stable_slot_sort(key_t (&keys)[VT], key_t* slots, comp_t comp) {
  // Keys a transposition group: 28 exchanges each. Groups of 4 and 16 compiled to more
  // instructions at VT 37 (docs/tuning.md).
  constexpr int GROUP = 8;
  int no_payload[VT] = {};
  serial_sort<VT, GROUP>(keys, no_payload, VT, comp);
  merge_slot_levels<VT, GROUP>(keys, slots, comp);
}

// Load-balancing search (twophase_serial::serial_load_balance): walk min(VT, range.total()) steps of
// the merge of the tile's work items range.a_begin.. (A, the counting sequence) with the segment
// starts starts[range.b_begin .. range.b_end) (B), upper bound: an offset equal to an item comes
// first. Taking an offset enters the next segment; taking an item records range.b_begin in
// segments[item] (shared memory) instead of returning register arrays, so that the caller can
// hand items out in strided order. With `starts` the tile's starts from its first, that is the
// number of starts before the item: its segment's slot (slot 0, the segment open before them).
// `starts` must hold a sentinel larger than every item at starts[range.b_end], and no start may
// exceed range.a_end, so that an exhausted A never wins without a test of its own (the twin, for
// any scan, tests range.a_begin < range.a_end). A tile checks that of its starts before it uses
// the walk's result; for any start values the walk writes segments only below range.a_begin + VT
// and reads starts only up to the sentinel. With `checked`, only the first min(VT, range.total())
// steps are walked (as serial_merge's checked form), for the threads at a partial tile's end; the
// unchecked form needs range.total() >= VT and saves a compare and a branch a step. Starts and
// slots are slot_t, any integer type that holds every item and slot of the tile and the sentinel.
template <int VT, bool checked, typename slot_t>
__device__ __forceinline__ void serial_load_balance(const slot_t* starts, merge_range& range, slot_t* segments) {
  const int count = checked ? min(VT, range.total()) : VT;
  int b_key = starts[range.b_begin];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (checked && i >= count) break;
    const bool take_item = range.a_begin < b_key;
    if (take_item) {
      segments[range.a_begin] = (slot_t)range.b_begin;
      ++range.a_begin;
    } else {
      ++range.b_begin;
      b_key = starts[range.b_begin];
    }
  }
}

// Sorted search (twophase_serial::serial_search): walk min(VT, range.total()) steps of the merge of
// the needles keys_shared[range.a_begin .. a_end) with the haystack keys_shared[range.b_begin ..
// b_end) under policy `bounds` (Lower: lower bound, Upper: upper bound). Each needle taken records
// its bound, the haystack position reached (tile-local, counted from `haystack_first`), in
// bounds_out[needle] (shared memory). keys_shared must be readable at range.b_end (tile + 1 slots).
// Returns whether a key the walk took orders before the key it took just before (one compare a
// step, in registers): under a strict weak order, sorted inputs never do, and a pair out of order
// in either input with both keys inside the walk always makes some step do so. With `checked`,
// only the first min(VT, range.total()) steps are walked (a partial tile's threads); the unchecked
// form needs range.total() >= VT and saves a compare and a branch a step.
template <bounds_t bounds, int VT, bool checked, typename key_t, typename comp_t>
__device__ __forceinline__ bool serial_search(const key_t* keys_shared, merge_range& range, int haystack_first,
                                              comp_t comp, int* bounds_out) {
  const int count = checked ? min(VT, range.total()) : VT;
  key_t a_key = keys_shared[range.a_begin];
  key_t b_key = keys_shared[range.b_begin];
  key_t last_taken = a_key;
  bool inverted = false;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (checked && i >= count) break;
    const bool p = merge_predicate<bounds>(a_key, b_key, range, comp);
    if (p) bounds_out[range.a_begin] = range.b_begin - haystack_first;
    const key_t taken = p ? a_key : b_key;
    if (i > 0) inverted |= comp(taken, last_taken);
    last_taken = taken;
    const int index = (p ? range.a_begin : range.b_begin) + 1;
    const key_t next = keys_shared[index];
    if (p) {
      a_key = next;
      range.a_begin = index;
    } else {
      b_key = next;
      range.b_begin = index;
    }
  }
  return inverted;
}

}  // namespace twophase
