//! Phase 2 of the two-phase strategy: the serial work of one thread on VT items, fully unrolled.
//!
//! Each function takes the [`MergeRange`] that phase 1 ([`twophase_partition`]) assigned to one
//! thread and does the simplest sequential thing on it, VT outputs at a time, into `[T; VT]`
//! arrays (registers, on a GPU). The CUDA twins in `kernels/serial.cuh` have the same names and
//! the same tie rules.
#![no_std]
#![forbid(unsafe_code)]

use core::hint::select_unpredictable;
use twophase_partition::takes_a;
pub use twophase_partition::{Bounds, Lower, MergeRange, Upper};

/// Whether the next output of the merge of `range` (over one buffer `keys`, A at
/// `[a_begin, a_end)` and B at `[b_begin, b_end)`) comes from A. An exhausted side never wins.
#[inline(always)]
pub fn merge_predicate<B: Bounds, T, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    range: &MergeRange,
    is_less: &F,
) -> bool {
    if range.a_begin >= range.a_end {
        false
    } else if range.b_begin >= range.b_end {
        true
    } else {
        takes_a::<B, T, F>(&keys[range.a_begin], &keys[range.b_begin], is_less)
    }
}

/// How a run of merge steps may index its inputs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StepBounds {
    /// Every lane has at least VT keys left on each side: no side can run out within VT steps,
    /// so each step reads both heads and compares, nothing else (the shortest dependency chain).
    Ample,
    /// Every lane has at least VT outputs left, but a side may run out: an exhausted side's index
    /// is clamped to a valid position and its key ignored.
    Clamped,
    /// As `Clamped`, but each lane stops after `min(VT, total)` outputs (a partial last piece).
    Counted,
}

/// The one serial merge loop behind [`serial_merge`], [`serial_merge_lanes`] and
/// [`serial_merge_checked`]: up to VT merge steps of each of L independent ranges (lanes) into
/// the output registers (the keys, and the position in `keys` each came from), advancing the
/// ranges. The lanes step in turn, one step each, so that their dependency chains (load, compare,
/// advance) overlap in an out-of-order core; on a GPU, L is 1. Returns each lane's outputs.
///
/// Each step is branch-free: the winner is selected with [`select_unpredictable`], so random
/// inputs cost no branch mispredictions. The result is [`merge_predicate`]'s, step by step. Under
/// any comparator the reads stay inside each lane's range: `Ample` steps take at most VT from a
/// side that holds VT, and the other forms never read past a side's end.
#[inline(always)]
fn merge_steps<B: Bounds, const VT: usize, const L: usize, T: Copy, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    ranges: &mut [MergeRange; L],
    bounds: StepBounds,
    is_less: &F,
    (keys_out, mut indices_out): (&mut [[T; VT]; L], Option<&mut [[usize; VT]; L]>),
) -> [usize; L] {
    let counts = ranges.map(|range| match bounds {
        StepBounds::Counted => VT.min(range.total()),
        _ => VT,
    });
    let Some(last) = keys.len().checked_sub(1) else {
        return [0; L];
    };
    let mut a = ranges.map(|range| range.a_begin);
    let mut b = ranges.map(|range| range.b_begin);
    for i in 0..VT {
        for l in 0..L {
            if bounds != StepBounds::Counted || i < counts[l] {
                let (a_key, b_key, take_a) = if bounds == StepBounds::Ample {
                    let (a_key, b_key) = (keys[a[l]], keys[b[l]]);
                    (a_key, b_key, takes_a::<B, T, F>(&a_key, &b_key, is_less))
                } else {
                    let (a_key, b_key) = (keys[a[l].min(last)], keys[b[l].min(last)]);
                    let take_a = (b[l] >= ranges[l].b_end)
                        | ((a[l] < ranges[l].a_end) & takes_a::<B, T, F>(&a_key, &b_key, is_less));
                    (a_key, b_key, take_a)
                };
                keys_out[l][i] = select_unpredictable(take_a, a_key, b_key);
                if let Some(indices) = indices_out.as_deref_mut() {
                    indices[l][i] = select_unpredictable(take_a, a[l], b[l]);
                }
                a[l] += usize::from(take_a);
                b[l] += usize::from(!take_a);
            }
        }
    }
    for l in 0..L {
        ranges[l].a_begin = a[l];
        ranges[l].b_begin = b[l];
    }
    counts
}

/// Merge the first `min(VT, range.total())` outputs of `range` into `keys_out` / `indices_out`
/// (the position in `keys` each output came from, so payloads can be gathered after), advancing
/// `range` past what was consumed. Returns the number of outputs written; entries past it are
/// left as they were. This is the range-checked form, for the last, partial piece of a tile.
#[inline(always)]
pub fn serial_merge_checked<B: Bounds, const VT: usize, T: Copy, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    range: &mut MergeRange,
    is_less: &F,
    keys_out: &mut [T; VT],
    indices_out: &mut [usize; VT],
) -> usize {
    let mut ranges = [*range];
    let mut outs = ([*keys_out], [*indices_out]);
    let [count] = merge_steps::<B, VT, 1, T, F>(
        keys,
        &mut ranges,
        StepBounds::Counted,
        is_less,
        (&mut outs.0, Some(&mut outs.1)),
    );
    *range = ranges[0];
    [*keys_out] = outs.0;
    [*indices_out] = outs.1;
    count
}

/// Merge exactly VT outputs of each of L ranges, every one holding at least VT, into registers:
/// lane `l`'s keys, returned, and where `sources` is given the position in `keys` each came from
/// (leave it out where no payload follows the keys: the positions then cost nothing). Advances
/// the ranges past what was consumed. The lanes' steps interleave, so on a CPU L independent merges run in about the time
/// of one (their chains overlap); a lane's outputs are exactly [`serial_merge`]'s on its range.
///
/// # Panics
/// If any `range.total() < VT` (use [`serial_merge_checked`] for partial pieces).
#[inline(always)]
pub fn serial_merge_lanes<
    B: Bounds,
    const VT: usize,
    const L: usize,
    T: Copy,
    F: Fn(&T, &T) -> bool,
>(
    keys: &[T],
    ranges: &mut [MergeRange; L],
    is_less: &F,
    sources: Option<&mut [[usize; VT]; L]>,
) -> [[T; VT]; L] {
    assert!(
        ranges.iter().all(|range| range.total() >= VT),
        "serial_merge: a full piece needs VT outputs"
    );
    let ample = ranges
        .iter()
        .all(|range| range.a_end - range.a_begin >= VT && range.b_end - range.b_begin >= VT);
    let first = ranges.map(|range| {
        if range.a_begin < range.a_end {
            range.a_begin
        } else {
            range.b_begin
        }
    });
    let mut out = first.map(|at| [keys[at]; VT]);
    // Two call sites, so that each inlined loop is compiled for its constant bounds.
    if ample {
        merge_steps::<B, VT, L, T, F>(
            keys,
            ranges,
            StepBounds::Ample,
            is_less,
            (&mut out, sources),
        );
    } else {
        merge_steps::<B, VT, L, T, F>(
            keys,
            ranges,
            StepBounds::Clamped,
            is_less,
            (&mut out, sources),
        );
    }
    out
}

/// Merge exactly VT outputs of `range`, which must hold at least VT, into registers: the keys and
/// the position in `keys` each came from. Advances `range` past what was consumed.
///
/// # Panics
/// If `range.total() < VT` (use [`serial_merge_checked`] for partial pieces).
#[inline(always)]
pub fn serial_merge<B: Bounds, const VT: usize, T: Copy, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    range: &mut MergeRange,
    is_less: &F,
) -> ([T; VT], [usize; VT]) {
    let mut ranges = [*range];
    let mut sources = [[0; VT]];
    let [keys_out] =
        serial_merge_lanes::<B, VT, 1, T, F>(keys, &mut ranges, is_less, Some(&mut sources));
    *range = ranges[0];
    (keys_out, sources[0])
}

/// The walk behind [`serial_search_lanes`] and [`serial_load_balance_lanes`]: `min(VT,
/// range.total())` steps of the merge of each of L ranges (lanes), the lanes stepping in turn as
/// in [`serial_merge_lanes`], advancing them. A step takes A when B is exhausted, or when A is not
/// and `a_wins(range)` says so (both sides then have an element at their begin);
/// `on_step(lane, range, took_a)` sees every step before the range moves. The comparison's answer
/// is data, not a branch: callers record each step unconditionally and count the ones that took
/// A, so random inputs cost no branch mispredictions.
#[inline(always)]
fn walk_steps<const VT: usize, const L: usize>(
    ranges: &mut [MergeRange; L],
    a_wins: impl Fn(&MergeRange) -> bool,
    mut on_step: impl FnMut(usize, &MergeRange, bool),
) {
    let steps = ranges.map(|range| VT.min(range.total()));
    // Stepped on a copy, so that the ranges stay in registers rather than in `*ranges`.
    let mut walked = *ranges;
    for i in 0..VT {
        for (l, range) in walked.iter_mut().enumerate() {
            if i < steps[l] {
                let take_a = if range.a_begin < range.a_end && range.b_begin < range.b_end {
                    a_wins(range)
                } else {
                    range.b_begin >= range.b_end
                };
                on_step(l, range, take_a);
                range.a_begin += usize::from(take_a);
                range.b_begin += usize::from(!take_a);
            }
        }
    }
    *ranges = walked;
}

/// The needles one thread of a sorted search resolves: `needles[i]` (a position in the needles
/// array) has its bound at haystack position `bounds[i]`, for `i < found`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchResults<const VT: usize> {
    pub found: usize,
    pub needles: [usize; VT],
    pub bounds: [usize; VT],
}

/// Sorted search: walk `min(VT, range.total())` steps of the merge of needles (A, in `needles`)
/// with the haystack (B, in `haystack`), advancing `range`. Each step that takes a needle records
/// its bound, the haystack position reached. With [`Lower`] that is the lower bound (first
/// haystack key not less than the needle), with [`Upper`] the upper bound.
#[inline(always)]
pub fn serial_search<B: Bounds, const VT: usize, T, F: Fn(&T, &T) -> bool>(
    needles: &[T],
    haystack: &[T],
    range: &mut MergeRange,
    is_less: &F,
) -> SearchResults<VT> {
    let mut ranges = [*range];
    let [out] = serial_search_lanes::<B, VT, 1, T, F>(needles, haystack, &mut ranges, is_less);
    *range = ranges[0];
    out
}

/// [`serial_search`] on L ranges at once, their steps interleaved (as [`serial_merge_lanes`]):
/// lane `l`'s results are exactly [`serial_search`]'s on `ranges[l]`.
#[inline(always)]
pub fn serial_search_lanes<B: Bounds, const VT: usize, const L: usize, T, F: Fn(&T, &T) -> bool>(
    needles: &[T],
    haystack: &[T],
    ranges: &mut [MergeRange; L],
    is_less: &F,
) -> [SearchResults<VT>; L] {
    let mut out = [SearchResults {
        found: 0,
        needles: [0; VT],
        bounds: [0; VT],
    }; L];
    walk_steps::<VT, L>(
        ranges,
        |at| takes_a::<B, T, F>(&needles[at.a_begin], &haystack[at.b_begin], is_less),
        |l, at, took_a| {
            // Written at every step, kept (counted) where a needle was taken; `found` is at most
            // the steps so far, under VT.
            let lane = &mut out[l];
            lane.needles[lane.found] = at.a_begin;
            lane.bounds[lane.found] = at.b_begin;
            lane.found += usize::from(took_a);
        },
    );
    out
}

/// The work items one thread of a load-balancing search assigns: items `first_item ..
/// first_item + count` belong to segments `segments[..count]` at ranks `ranks[..count]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadBalanced<const VT: usize> {
    pub first_item: usize,
    pub count: usize,
    pub segments: [usize; VT],
    pub ranks: [usize; VT],
}

/// Load-balancing search: walk `min(VT, range.total())` steps of the merge of the work items
/// `range.a_begin..range.a_end` (A, the counting sequence) with segment offsets
/// `scan[range.b_begin..range.b_end]` (B, the exclusive scan of segment sizes), upper bound. A
/// step that takes an offset enters the next segment; a step that takes an item assigns it to the
/// current segment (the last offset taken) with its rank inside it.
///
/// `range.b_begin` must be past at least one offset whenever items remain (an exclusive scan
/// starts at 0, so the merge takes `scan[0]` before item 0). On a scan that breaks this (not
/// starting at 0, or decreasing) the answers are unspecified but the walk stays inside `scan`
/// and never panics on arithmetic: such items get segment 0 and a saturated rank.
#[inline(always)]
pub fn serial_load_balance<const VT: usize>(
    scan: &[usize],
    range: &mut MergeRange,
) -> LoadBalanced<VT> {
    let mut ranges = [*range];
    let [out] = serial_load_balance_lanes::<VT, 1>(scan, &mut ranges);
    *range = ranges[0];
    out
}

/// [`serial_load_balance`] on L ranges at once, their steps interleaved (as
/// [`serial_merge_lanes`]): lane `l`'s items are exactly [`serial_load_balance`]'s on
/// `ranges[l]`.
#[inline(always)]
pub fn serial_load_balance_lanes<const VT: usize, const L: usize>(
    scan: &[usize],
    ranges: &mut [MergeRange; L],
) -> [LoadBalanced<VT>; L] {
    let mut out = ranges.map(|range| LoadBalanced {
        first_item: range.a_begin,
        count: 0,
        segments: [0; VT],
        ranks: [0; VT],
    });
    walk_steps::<VT, L>(
        ranges,
        |at| at.a_begin < scan[at.b_begin],
        |l, at, took_a| {
            // Written at every step, kept (counted) where an item was taken.
            let segment = at.b_begin.saturating_sub(1);
            let start = scan.get(segment).copied().unwrap_or(0);
            let lane = &mut out[l];
            lane.segments[lane.count] = segment;
            lane.ranks[lane.count] = at.a_begin.saturating_sub(start);
            lane.count += usize::from(took_a);
        },
    );
    out
}

/// Stable odd-even transposition sort of the first `count` of VT register keys, carrying a payload
/// (`()` for keys only). VT rounds of compare-and-swap on neighbours; a swap only when the right
/// key is strictly less, so equal keys never pass each other. Entries past `count` are left in
/// place, as if they were +infinity.
#[inline(always)]
pub fn serial_sort_pairs<const VT: usize, T: Copy, V: Copy, F: Fn(&T, &T) -> bool>(
    keys: &mut [T; VT],
    values: &mut [V; VT],
    count: usize,
    is_less: &F,
) {
    serial_sort_groups::<VT, VT, T, V, F>(keys, values, count, is_less);
}

/// [`serial_sort_pairs`] within each group of GROUP consecutive keys (the last group possibly
/// shorter), in GROUP rounds: neighbours in different groups are never exchanged.
#[inline(always)]
pub fn serial_sort_groups<
    const VT: usize,
    const GROUP: usize,
    T: Copy,
    V: Copy,
    F: Fn(&T, &T) -> bool,
>(
    keys: &mut [T; VT],
    values: &mut [V; VT],
    count: usize,
    is_less: &F,
) {
    for round in 0..GROUP {
        for i in 0..VT.saturating_sub(1) {
            // Neighbours i, i + 1 of one group, exchanged in the rounds of i's parity within it.
            if (i % GROUP) % 2 != round % 2 || (i + 1) % GROUP == 0 {
                continue;
            }
            // Branch-free compare-exchange: random keys would mispredict a branch half the time.
            let swap = (i + 1 < count) & is_less(&keys[i + 1], &keys[i]);
            let (k0, k1) = (keys[i], keys[i + 1]);
            keys[i] = select_unpredictable(swap, k1, k0);
            keys[i + 1] = select_unpredictable(swap, k0, k1);
            let (v0, v1) = (values[i], values[i + 1]);
            values[i] = select_unpredictable(swap, v1, v0);
            values[i + 1] = select_unpredictable(swap, v0, v1);
        }
    }
}

/// Stable sort of all VT keys without a payload: [`serial_sort_groups`] of GROUP keys, then merge
/// levels through `slots` (on a GPU, the thread's own VT slots of shared memory), each storing
/// the keys and merging pairs of sorted runs of GROUP, 2 GROUP, ... keys back with
/// [`serial_merge_checked`] under [`Lower`] (a tie takes the earlier run's key), until one run
/// holds all VT. About VT log2(VT / GROUP) merge steps and VT (GROUP - 1) / 2 exchanges, where
/// one transposition sort of all VT keys takes VT (VT - 1) / 2 exchanges.
#[inline(always)]
pub fn stable_slot_sort<const VT: usize, const GROUP: usize, T: Copy, F: Fn(&T, &T) -> bool>(
    keys: &mut [T; VT],
    slots: &mut [T; VT],
    is_less: &F,
) {
    serial_sort_groups::<VT, GROUP, T, (), F>(keys, &mut [(); VT], VT, is_less);
    let mut run = GROUP.max(1);
    while run < VT {
        *slots = *keys;
        let mut first = 0;
        while first + run < VT {
            let end = VT.min(first + 2 * run);
            let mut range = MergeRange {
                a_begin: first,
                a_end: first + run,
                b_begin: first + run,
                b_end: end,
            };
            let (mut merged, mut sources) = (*keys, [0; VT]);
            let count = serial_merge_checked::<Lower, VT, T, F>(
                slots,
                &mut range,
                is_less,
                &mut merged,
                &mut sources,
            );
            keys[first..first + count].copy_from_slice(&merged[..count]);
            first = end;
        }
        run *= 2;
    }
}

/// Stable odd-even transposition sort of the first `count` of VT register keys.
#[inline(always)]
pub fn serial_sort<const VT: usize, T: Copy, F: Fn(&T, &T) -> bool>(
    keys: &mut [T; VT],
    count: usize,
    is_less: &F,
) {
    serial_sort_pairs::<VT, T, (), F>(keys, &mut [(); VT], count, is_less);
}
