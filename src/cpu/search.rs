//! CPU sorted search and load-balancing search (with interval expand), partitioned by merge path.

use rayon::prelude::*;
use twophase_partition::{load_balance_path, merge_path, partition_diag, Lower, MergeRange, Upper};
use twophase_serial::{serial_load_balance_lanes, serial_search_lanes};

use super::{cut_lanes, split_by_bounds, tile_partitions, SearchTuning, LANES};
use crate::order::NaturalOrder;

const VT: usize = SearchTuning::VT;
const TILE: usize = SearchTuning::TILE;

/// Which bound of each needle a sorted search returns: one enum for both backends.
pub use twophase_gpu::SearchBound;

/// Tile ranges of a merge of `a_count` items against `b_count` items, from partitions.
fn tile_ranges(
    partitions: &[usize],
    count: usize,
) -> impl IndexedParallelIterator<Item = MergeRange> + '_ {
    (0..partitions.len() - 1).into_par_iter().map(move |t| {
        MergeRange::between(
            partitions[t],
            partition_diag(t, TILE, count),
            partitions[t + 1],
            partition_diag(t + 1, TILE, count),
        )
    })
}

/// Both phases of a search over the merge of `a_len` items (A, one output each) with `b_len`
/// (B), whose sum must not overflow. Phase 1: `path` splits the merge at each tile's diagonal, and
/// the partitions are repaired. Phase 2, a tile per task, cut again by `path` into [`LANES`]
/// lanes ([`cut_lanes`]): `step` walks the lanes together (advancing them, until all are empty) and writes the
/// outputs of the A items they take into the tile's piece of the output, which starts at A item
/// `first`.
fn two_phase<U, P, S>(a_len: usize, b_len: usize, path: P, step: S) -> Vec<U>
where
    U: Copy + Send + Default,
    P: Fn(usize) -> usize + Sync,
    S: Fn(&mut [MergeRange; LANES], &mut [U], usize) + Sync,
{
    let count = a_len + b_len;
    let partitions = tile_partitions(count, TILE, (a_len, b_len), &path);
    let mut out = vec![U::default(); a_len];
    let pieces = split_by_bounds(&mut out, &partitions[1..]);
    tile_ranges(&partitions, count)
        .zip(pieces)
        .for_each(|(range, piece)| {
            let first = range.a_begin;
            // The tile's lanes, cut where `path` (global) puts their first outputs.
            let (a0, d0) = (range.a_begin, range.a_begin + range.b_begin);
            let (mut lanes, _, _) = cut_lanes(range, range.total().div_ceil(LANES), |d| {
                path(d0 + d).saturating_sub(a0)
            });
            while lanes.iter().any(|lane| !lane.is_empty()) {
                step(&mut lanes, piece, first);
            }
        });
    out
}

/// For each needle of the sorted `needles`, its lower or upper bound in the sorted `haystack`
/// under `is_less`: one merge of the two arrays, split by merge path — no binary search per
/// needle.
///
/// If `needles` or `haystack` is not sorted, or `is_less` is not a strict weak order, every
/// needle still gets a bound in `[0, haystack.len()]` (which one is unspecified) and nothing
/// panics. `twophase::sorted_search_by` checks both inputs and returns an error instead.
///
/// # Panics
/// If `needles.len() + haystack.len()` overflows `usize` (possible only for zero-sized keys).
pub fn sorted_search_by<T, F>(
    needles: &[T],
    haystack: &[T],
    bound: SearchBound,
    is_less: F,
) -> Vec<usize>
where
    T: Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    needles
        .len()
        .checked_add(haystack.len())
        .expect("a sorted search's merge length overflows usize");
    two_phase(
        needles.len(),
        haystack.len(),
        |diag| match bound {
            SearchBound::Lower => merge_path::<Lower, T, &F>(needles, haystack, diag, &is_less),
            SearchBound::Upper => merge_path::<Upper, T, &F>(needles, haystack, diag, &is_less),
        },
        |lanes, piece, first| {
            let found = match bound {
                SearchBound::Lower => serial_search_lanes::<Lower, VT, LANES, T, F>(
                    needles, haystack, lanes, &is_less,
                ),
                SearchBound::Upper => serial_search_lanes::<Upper, VT, LANES, T, F>(
                    needles, haystack, lanes, &is_less,
                ),
            };
            for lane in &found {
                for i in 0..lane.found {
                    piece[lane.needles[i] - first] = lane.bounds[i];
                }
            }
        },
    )
}

/// [`sorted_search_by`] in the keys' natural order ([`NaturalOrder`]: floats by the IEEE 754
/// total order, NaN last).
pub fn sorted_search<T: NaturalOrder + Sync>(
    needles: &[T],
    haystack: &[T],
    bound: SearchBound,
) -> Vec<usize> {
    sorted_search_by(needles, haystack, bound, T::natural_less)
}

/// What is wrong with a segment scan for `total` work items, in the words of the `# Panics`
/// sections here, or `None` when it is a valid exclusive scan: it starts at 0, does not
/// decrease, and does not pass `total` (an empty scan only for no work items).
pub(crate) fn scan_problem(scan: &[usize], total: usize) -> Option<&'static str> {
    if scan.is_empty() {
        return (total > 0).then_some("the scan must hold at least one segment when `total > 0`");
    }
    if scan[0] != 0 || scan.windows(2).any(|w| w[0] > w[1]) {
        return Some("the scan must start at 0 and not decrease");
    }
    if scan.last().is_some_and(|&last| last > total) {
        return Some("the scan must not pass `total`");
    }
    if total.checked_add(scan.len()).is_none() {
        return Some("`total + scan.len()` overflows usize");
    }
    None
}

/// Phase 1 and 2 of a load-balancing search, handing each work item's (segment, rank) to `map`.
fn load_balance_map<U, M>(scan: &[usize], total: usize, map: M) -> Vec<U>
where
    U: Copy + Send + Default,
    M: Fn(usize, usize) -> U + Sync,
{
    if let Some(problem) = scan_problem(scan, total) {
        panic!("{problem}");
    }
    // The repair in `two_phase` is a no-op on the valid scan checked above; it keeps every tile
    // range valid regardless.
    two_phase(
        total,
        scan.len(),
        |diag| load_balance_path(total, scan, diag),
        |lanes, piece, first| {
            for items in &serial_load_balance_lanes::<VT, LANES>(scan, lanes) {
                for i in 0..items.count {
                    piece[items.first_item - first + i] = map(items.segments[i], items.ranks[i]);
                }
            }
        },
    )
}

/// Load-balancing search: for each of `total` work items, the segment it belongs to, given
/// `scan`, the exclusive scan of the segment sizes (`scan[s]` = first item of segment `s`).
/// Empty segments are skipped over; the last segment ends at `total`.
///
/// # Panics
/// If `scan` is not an exclusive scan of segment sizes within `total`: "the scan must start at
/// 0 and not decrease", "the scan must not pass `total`", or it is empty while `total > 0`.
/// `twophase::load_balance_search` returns an error instead.
pub fn load_balance_search(scan: &[usize], total: usize) -> Vec<usize> {
    load_balance_map(scan, total, |segment, _| segment)
}

/// [`load_balance_search`] with each item's rank inside its segment: `(segment, rank)`.
///
/// # Panics
/// As [`load_balance_search`].
pub fn load_balance_search_with_ranks(scan: &[usize], total: usize) -> Vec<(usize, usize)> {
    load_balance_map(scan, total, |segment, rank| (segment, rank))
}

/// Interval expand: replicate `values[s]` once per item of segment `s` (the segment sizes given
/// by their exclusive scan `scan` and `total`), built on the load-balancing search.
///
/// # Panics
/// As [`load_balance_search`], and if `values` is shorter than `scan`.
pub fn interval_expand<V: Copy + Send + Sync + Default>(
    scan: &[usize],
    values: &[V],
    total: usize,
) -> Vec<V> {
    assert!(
        values.len() >= scan.len(),
        "`values` must hold one value per segment of `scan`"
    );
    load_balance_map(scan, total, |segment, _| values[segment])
}
