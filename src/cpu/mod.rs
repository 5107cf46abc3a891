//! CPU backend: the two phases on rayon threads — merge-path partitions, then serial tile work.
//!
//! Every primitive here is built from exactly the two lower crates: phase 1 finds tile
//! boundaries with [`twophase_partition`] (one binary search per tile, in parallel), phase 2 runs
//! the register-unrolled serial functions of [`twophase_serial`] over each tile, one rayon task a
//! tile. Sizes are `usize` throughout. Comparators are "is less" closures (see [`crate::order`]).
//!
//! # Any input
//!
//! Like the GPU backend and like std's sorts, no input makes these functions read out of bounds,
//! lose or duplicate a key, or panic inside a worker: merges of unsorted inputs and sorts or
//! merges under a comparator that is not a strict weak order (`<=`, `<` on floats with NaN, one
//! that answers at random) return a permutation of their input in unspecified order, and
//! searches return bounds within `[0, haystack.len()]`. Every partition boundary (per tile and
//! per lane) is clamped into a valid staircase ([`twophase_partition::clamp_boundary`]), which
//! costs O(1) per boundary and changes nothing on valid input. The functions that panic on bad
//! input (mismatched lengths, a bad scan) say so in a `# Panics` section; the backend-neutral
//! crate-root calls (`twophase::sort`, ...) return the GPU's errors instead.

mod merge;
pub(crate) mod search;
pub(crate) mod segmented;
mod sharded;
pub(crate) mod sort;

pub use merge::{merge, merge_by, merge_into_by, merge_pairs, merge_pairs_by};
pub use search::{
    interval_expand, load_balance_search, load_balance_search_with_ranks, sorted_search,
    sorted_search_by, SearchBound,
};
pub use segmented::{
    segmented_sort, segmented_sort_by, segmented_sort_pairs, segmented_sort_pairs_by, Segments,
};
pub use sharded::{
    sharded_merge, sharded_merge_by, sharded_merge_pairs, sharded_merge_pairs_by, sharded_sort,
    sharded_sort_by, sharded_sort_pairs, sharded_sort_pairs_by,
};
pub use sort::{
    mergesort, mergesort_by, mergesort_pairs, mergesort_pairs_by, sort_by, sort_pairs_by,
};

use rayon::prelude::*;
use twophase_partition::{
    clamp_boundary, merge_path, partition_count, partition_diag, repair_partitions, Lower,
    MergeRange,
};
use twophase_serial::{serial_merge_checked, serial_merge_lanes};

/// Tuning of the CPU merge.
pub struct MergeTuning;

impl MergeTuning {
    /// Outputs per serial step. 16 keeps the unrolled step's arrays (16 keys + 16 indices) in
    /// registers/L1 and amortises the per-step bookkeeping; larger values measured no faster.
    pub const VT: usize = 16;
    /// Outputs per rayon task. 16 Ki outputs (64 KiB of u32) make one binary search per task
    /// negligible and give hundreds of tasks at 1M keys for load balance across cores, while the
    /// tile copy of A and B stays inside L2.
    pub const TILE: usize = 16 * 1024;
}

/// Tuning of the CPU mergesort.
pub struct MergesortTuning;

impl MergesortTuning {
    /// Keys sorted by one odd-even transposition sort. The network costs VT/2 compare-swaps per
    /// key, so 8 keeps it cheaper than the merge levels it replaces (log2 8 = 3 levels).
    pub const VT: usize = 8;
    /// Keys per block-sort tile and per merge-pass task. 32 Ki keys (128 KiB of u32, 256 KiB of
    /// u64, plus as much scratch) keep the block sort's merge levels inside a core's L2, two
    /// passes over the whole array fewer than 8 Ki tiles (docs/tuning.md). 2 * run stays a
    /// multiple of the tile at every pass since runs start at one tile and double.
    pub const TILE: usize = 32 * 1024;
}

/// Tuning of sorted search and load-balancing search.
pub struct SearchTuning;

impl SearchTuning {
    /// Merge steps per serial call (needles + haystack keys, or items + segment offsets).
    pub const VT: usize = 16;
    /// Merge steps per rayon task: as for [`MergeTuning::TILE`].
    pub const TILE: usize = 16 * 1024;
}

/// Independent merges one CPU task steps together, the CPU analogue of a CTA's threads: each
/// lane is a dependency chain (load → compare → advance), and four chains in flight hide the
/// latency that one chain stalls on; two or eight measured slower (docs/tuning.md).
pub const LANES: usize = 4;

/// Outputs under which a range is merged by one lane: below it, the lanes' merge path searches
/// cost more than the overlap saves (seen in the block sort's first levels, runs of 8 to 64).
pub(crate) const LANE_MIN_OUTPUTS: usize = 1024;

/// `range` cut into [`LANES`] lanes of `lane_outputs` outputs each (the last ones shorter or
/// empty), each cut where `path(d)` puts the `d`-th output (its A count, both counted from the
/// range's start), clamped against the cut before ([`clamp_boundary`]) so that the lanes cover
/// the range exactly whatever `path` answers. Returns the lanes, the output each starts at, and
/// whether no cut had to be clamped.
pub(crate) fn cut_lanes(
    range: MergeRange,
    lane_outputs: usize,
    path: impl Fn(usize) -> usize,
) -> ([MergeRange; LANES], [usize; LANES], bool) {
    let (a_len, b_len) = (range.a_end - range.a_begin, range.b_end - range.b_begin);
    let total = a_len + b_len;
    let mut lanes = [range; LANES];
    let mut positions = [0; LANES];
    let mut valid = true;
    let (mut mp0, mut diag0) = (0, 0);
    for (l, lane) in lanes.iter_mut().enumerate() {
        let diag1 = (l + 1).saturating_mul(lane_outputs).min(total);
        let found = if diag1 == total { a_len } else { path(diag1) };
        let mp1 = clamp_boundary(mp0, diag0, found, diag1, a_len, b_len);
        valid &= mp1 == found;
        *lane = MergeRange {
            a_begin: range.a_begin + mp0,
            a_end: range.a_begin + mp1,
            b_begin: range.b_begin + (diag0 - mp0),
            b_end: range.b_begin + (diag1 - mp1),
        };
        positions[l] = diag0;
        (mp0, diag0) = (mp1, diag1);
    }
    (lanes, positions, valid)
}

/// Phase 2 on one range of one buffer: merge `range` of `keys` (A then B, stable) into `out`,
/// telling `gather` each output position and the index in `keys` it came from.
/// `out.len()` must equal `range.total()`, and `range` must lie inside `keys` with
/// `a_begin <= a_end` and `b_begin <= b_end` (a tile of repaired partitions).
///
/// The range is cut by merge path into [`LANES`] pieces of equal output (whole multiples of VT),
/// and the lanes advance VT outputs each in turn, so their serial merges overlap in the core.
/// Each lane boundary is clamped against the one before ([`clamp_boundary`]), so the lanes
/// always cover the range exactly, whatever the keys and the comparator.
///
/// Returns `false` when the range's merge showed that its runs were not sorted under `is_less`
/// (a lane boundary had to be clamped, or two lanes' outputs meet out of order), `true`
/// otherwise; always `true` for sorted runs under a strict weak order.
#[inline]
pub(crate) fn merge_range<const VT: usize, T, F, G>(
    keys: &[T],
    range: MergeRange,
    is_less: &F,
    out: &mut [T],
    gather: G,
) -> bool
where
    T: Copy,
    F: Fn(&T, &T) -> bool,
    G: Gather,
{
    debug_assert_eq!(out.len(), range.total());
    let total = range.total();
    let lane_outputs = if total >= LANE_MIN_OUTPUTS {
        total.div_ceil(LANES).div_ceil(VT) * VT
    } else {
        total
    };
    let (a, b) = (
        &keys[range.a_begin..range.a_end],
        &keys[range.b_begin..range.b_end],
    );
    let (lanes, positions, valid) = cut_lanes(range, lane_outputs, |d| {
        merge_path::<Lower, T, &F>(a, b, d, is_less)
    });
    merge_lanes::<VT, T, F, G>(keys, lanes, positions, is_less, out, gather);
    // The seams between lanes: O(LANES) comparisons that catch most inconsistent comparators.
    valid
        && positions[1..]
            .iter()
            .all(|&seam| seam == 0 || seam >= total || !is_less(&out[seam], &out[seam - 1]))
}

/// What a merge does with the position in its input that each output came from: nothing, for
/// keys alone ([`KeysOnly`]: the merge then never computes them), or gather a payload by it
/// ([`Payload`]).
pub(crate) trait Gather {
    /// Whether the merge needs the source positions at all.
    const SOURCES: bool;
    /// Output `out` came from input position `source`.
    fn gather(&mut self, out: usize, source: usize);
}

/// Keys alone: no payload follows them.
pub(crate) struct KeysOnly;

impl Gather for KeysOnly {
    const SOURCES: bool = false;
    fn gather(&mut self, _: usize, _: usize) {}
}

/// A payload that `0(out, source)` moves with each output.
pub(crate) struct Payload<G>(pub G);

impl<G: FnMut(usize, usize)> Gather for Payload<G> {
    const SOURCES: bool = true;
    fn gather(&mut self, out: usize, source: usize) {
        (self.0)(out, source);
    }
}

/// Phase 2 on [`LANES`] independent ranges of one buffer at once: lane `l` merges `lanes[l]`
/// into `out` from `positions[l]` on, VT outputs per turn, the lanes' steps interleaved
/// ([`serial_merge_lanes`]) so that their dependency chains overlap in the core. `gather` sees
/// each output position and the index in `keys` it came from.
#[inline]
pub(crate) fn merge_lanes<const VT: usize, T, F, G>(
    keys: &[T],
    mut lanes: [MergeRange; LANES],
    mut positions: [usize; LANES],
    is_less: &F,
    out: &mut [T],
    mut gather: G,
) where
    T: Copy,
    F: Fn(&T, &T) -> bool,
    G: Gather,
{
    let mut sources = [[0; VT]; LANES];
    // Every lane with a full piece left: all of them step together.
    while lanes.iter().all(|lane| lane.total() >= VT) {
        let merged = serial_merge_lanes::<Lower, VT, LANES, T, F>(
            keys,
            &mut lanes,
            is_less,
            G::SOURCES.then_some(&mut sources),
        );
        for l in 0..LANES {
            let pos = positions[l];
            out[pos..pos + VT].copy_from_slice(&merged[l]);
            if G::SOURCES {
                for (i, &source) in sources[l].iter().enumerate() {
                    gather.gather(pos + i, source);
                }
            }
            positions[l] += VT;
        }
    }
    // The lanes' uneven ends: each full piece alone, then the partial ones.
    for l in 0..LANES {
        let mut one = [[0; VT]];
        while lanes[l].total() >= VT {
            let [merged] = serial_merge_lanes::<Lower, VT, 1, T, F>(
                keys,
                std::array::from_mut(&mut lanes[l]),
                is_less,
                G::SOURCES.then_some(&mut one),
            );
            let pos = positions[l];
            out[pos..pos + VT].copy_from_slice(&merged);
            if G::SOURCES {
                for (i, &source) in one[0].iter().enumerate() {
                    gather.gather(pos + i, source);
                }
            }
            positions[l] += VT;
        }
        while !lanes[l].is_empty() {
            let pos = positions[l];
            let mut merged = [out[pos]; VT];
            let count = serial_merge_checked::<Lower, VT, T, F>(
                keys,
                &mut lanes[l],
                is_less,
                &mut merged,
                &mut one[0],
            );
            out[pos..pos + count].copy_from_slice(&merged[..count]);
            for (i, &source) in one[0][..count].iter().enumerate() {
                gather.gather(pos + i, source);
            }
            positions[l] += count;
        }
    }
}

/// Panics with the message the `# Panics` sections quote unless the key slice named `keys_name`
/// and the value slice named `values_name` have the same length.
pub(crate) fn assert_paired<K, V>(keys: &[K], values: &[V], keys_name: &str, values_name: &str) {
    assert_eq!(
        keys.len(),
        values.len(),
        "`{keys_name}` and `{values_name}` must have the same length"
    );
}

/// Phase 1 of a merge-path split of `count` = `a_len + b_len` outputs in tiles of `tile`: `path`
/// gives the split at each tile boundary's diagonal, computed in parallel, then the partitions are
/// repaired into a valid staircase (a no-op on sorted inputs under a strict weak order).
pub(crate) fn tile_partitions(
    count: usize,
    tile: usize,
    (a_len, b_len): (usize, usize),
    path: impl Fn(usize) -> usize + Sync,
) -> Vec<usize> {
    let mut partitions = vec![0; partition_count(count, tile)];
    partitions.par_iter_mut().enumerate().for_each(|(p, mp)| {
        *mp = path(partition_diag(p, tile, count));
    });
    repair_partitions(&mut partitions, tile, a_len, b_len);
    partitions
}

/// Split `out` into the consecutive pieces whose ends are given by `bounds` (non-decreasing, last
/// equal to `out.len()`), so that tiles with variable output counts can be written in parallel.
pub(crate) fn split_by_bounds<'a, T>(mut out: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(bounds.len());
    let mut start = 0;
    for &end in bounds {
        let (piece, rest) = out.split_at_mut(end - start);
        pieces.push(piece);
        out = rest;
        start = end;
    }
    pieces
}
