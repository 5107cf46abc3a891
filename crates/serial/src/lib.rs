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

/// The one serial merge loop behind [`serial_merge`] and [`serial_merge_checked`]: up to VT
/// merge steps of `range` into the output registers (the keys, and the position in `keys` each
/// came from), advancing `range`. With `CHECKED` it stops after `min(VT, range.total())`
/// outputs; without, the caller guarantees VT outputs and the loop has no output check at all.
///
/// Each step is branch-free: both candidate keys are read (an exhausted side's index is clamped
/// to a valid position and its key ignored), compared once, and the winner selected with
/// [`select_unpredictable`], so random inputs cost no branch mispredictions. The result is
/// [`merge_predicate`]'s, step by step.
#[inline(always)]
fn merge_steps<B: Bounds, const VT: usize, const CHECKED: bool, T: Copy, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    range: &mut MergeRange,
    is_less: &F,
    (keys_out, indices_out): (&mut [T; VT], &mut [usize; VT]),
) -> usize {
    let count = if CHECKED { VT.min(range.total()) } else { VT };
    let Some(last) = keys.len().checked_sub(1) else {
        return 0;
    };
    let (mut a, mut b) = (range.a_begin, range.b_begin);
    for i in 0..VT {
        if !CHECKED || i < count {
            let a_key = keys[a.min(last)];
            let b_key = keys[b.min(last)];
            let take_a = (b >= range.b_end)
                | ((a < range.a_end) & takes_a::<B, T, F>(&a_key, &b_key, is_less));
            keys_out[i] = select_unpredictable(take_a, a_key, b_key);
            indices_out[i] = select_unpredictable(take_a, a, b);
            a += usize::from(take_a);
            b += usize::from(!take_a);
        }
    }
    range.a_begin = a;
    range.b_begin = b;
    count
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
    merge_steps::<B, VT, true, T, F>(keys, range, is_less, (keys_out, indices_out))
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
    assert!(
        range.total() >= VT,
        "serial_merge: a full piece needs VT outputs"
    );
    let first = if range.a_begin < range.a_end {
        range.a_begin
    } else {
        range.b_begin
    };
    let mut out = ([keys[first]; VT], [0; VT]);
    merge_steps::<B, VT, false, T, F>(keys, range, is_less, (&mut out.0, &mut out.1));
    out
}

/// The walk behind [`serial_search`] and [`serial_load_balance`]: `min(VT, range.total())` steps
/// of the merge of `range`, advancing it. A step takes A when B is exhausted, or when A is not and
/// `a_wins(range)` says so (both sides then have an element at their begin); `on_a(range)` sees
/// each A taken before `range.a_begin` moves past it.
#[inline(always)]
fn walk_steps<const VT: usize>(
    range: &mut MergeRange,
    a_wins: impl Fn(&MergeRange) -> bool,
    mut on_a: impl FnMut(&MergeRange),
) {
    let steps = VT.min(range.total());
    for _ in 0..steps {
        let take_a = range.b_begin >= range.b_end || (range.a_begin < range.a_end && a_wins(range));
        if take_a {
            on_a(range);
            range.a_begin += 1;
        } else {
            range.b_begin += 1;
        }
    }
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
    let mut out = SearchResults {
        found: 0,
        needles: [0; VT],
        bounds: [0; VT],
    };
    walk_steps::<VT>(
        range,
        |at| takes_a::<B, T, F>(&needles[at.a_begin], &haystack[at.b_begin], is_less),
        |at| {
            out.needles[out.found] = at.a_begin;
            out.bounds[out.found] = at.b_begin;
            out.found += 1;
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
    let mut out = LoadBalanced {
        first_item: range.a_begin,
        count: 0,
        segments: [0; VT],
        ranks: [0; VT],
    };
    walk_steps::<VT>(
        range,
        |at| at.a_begin < scan[at.b_begin],
        |at| {
            let segment = at.b_begin.saturating_sub(1);
            let start = scan.get(segment).copied().unwrap_or(0);
            out.segments[out.count] = segment;
            out.ranks[out.count] = at.a_begin.saturating_sub(start);
            out.count += 1;
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
    for round in 0..VT {
        let mut i = round & 1;
        while i + 1 < VT {
            // Branch-free compare-exchange: random keys would mispredict a branch half the time.
            let swap = (i + 1 < count) & is_less(&keys[i + 1], &keys[i]);
            let (k0, k1) = (keys[i], keys[i + 1]);
            keys[i] = select_unpredictable(swap, k1, k0);
            keys[i + 1] = select_unpredictable(swap, k0, k1);
            let (v0, v1) = (values[i], values[i + 1]);
            values[i] = select_unpredictable(swap, v1, v0);
            values[i + 1] = select_unpredictable(swap, v0, v1);
            i += 2;
        }
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
