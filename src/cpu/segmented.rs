//! CPU segmented sort: many independent stable sorts at once, segments grouped into tiles of work.

use rayon::prelude::*;

use super::sort::{
    block_sort, mergesort_runs_checked, sort_as_tuples, std_sort_run, RunSort, TILE,
};
use super::{assert_paired, split_by_bounds};
use crate::order::{sealed::OrderToken, NaturalOrder};
use twophase_gpu::segmented_sort::segments_problem;
pub use twophase_gpu::segmented_sort::Segments;

/// Segments longer than this are sorted one at a time by the parallel sort; shorter ones by one
/// thread each, many per task. A tile: the length past which the parallel sort's runs and
/// merge passes start to pay.
const SERIAL_SEGMENT_MAX: usize = TILE;

/// Sort `segment` alone on this thread as `run_sort` allows, ping-ponging with `scratch` for the
/// block sort. Returns `false` when the block sort saw an inconsistent `is_less`.
fn sort_segment<T, F>(
    segment: &mut [T],
    scratch: &mut Vec<T>,
    is_less: &F,
    run_sort: RunSort,
) -> bool
where
    T: Copy,
    F: Fn(&T, &T) -> bool,
{
    if run_sort == RunSort::BlockSort {
        return block_sort(segment, scratch, is_less);
    }
    std_sort_run(segment, is_less, run_sort);
    true
}

/// The segmented sort of valid `segments`, returning `false` when a sort saw that `is_less` is
/// not a strict weak order (the keys are a permutation of their input either way, each key
/// within its segment).
///
/// Phase 1 assigns every segment to the tile of [`TILE`] keys its start lies in (a binary search
/// of the starts per tile, as a load-balancing search does), and cuts the keys where each tile's
/// first segment starts, so that the tiles' pieces are disjoint. Phase 2 runs one task a tile,
/// sorting its segments of up to [`SERIAL_SEGMENT_MAX`] keys one after another; then the longer
/// segments, each by the parallel sort across all threads.
pub(crate) fn segmented_sort_checked<T, F>(
    keys: &mut [T],
    segments: Segments<'_>,
    is_less: &F,
    run_sort: RunSort,
) -> bool
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let n = keys.len();
    debug_assert!(segments_problem(n, segments).is_none());
    let starts = segments.starts();
    let tiles = n.div_ceil(TILE);
    // First segment of each tile, and one past the last tile.
    let first_segment: Vec<usize> = (0..=tiles)
        .into_par_iter()
        .map(|t| starts.partition_point(|&s| s < t.saturating_mul(TILE)))
        .collect();
    // Where each tile's piece of the keys begins: its first segment's start (the end of the
    // keys for a tile without segments), after a leading piece before every segment.
    let piece_start = |t: usize| starts.get(first_segment[t]).copied().unwrap_or(n);
    let bounds: Vec<usize> = (0..tiles).map(piece_start).chain([n]).collect();
    let mut pieces = split_by_bounds(keys, &bounds);
    let consistent = pieces
        .par_iter_mut()
        .skip(1)
        .enumerate()
        .map_init(Vec::new, |scratch, (t, piece)| {
            let base = bounds[t];
            let mut consistent = true;
            for i in first_segment[t]..first_segment[t + 1] {
                let range = segments.segment(i, n);
                if range.len() <= SERIAL_SEGMENT_MAX {
                    let local = range.start - base..range.end - base;
                    consistent &= sort_segment(&mut piece[local], scratch, is_less, run_sort);
                }
            }
            consistent
        })
        .reduce(|| true, |x, y| x & y);
    drop(pieces);
    (0..segments.len())
        .map(|i| segments.segment(i, n))
        .filter(|range| range.len() > SERIAL_SEGMENT_MAX)
        .fold(consistent, |consistent, range| {
            mergesort_runs_checked(&mut keys[range], is_less, run_sort) & consistent
        })
}

/// Panics with the segments' problem, if any (the `# Panics` sections).
fn assert_segments(count: usize, segments: Segments<'_>) {
    if let Some(problem) = segments_problem(count, segments) {
        panic!("{problem}");
    }
}

/// Stable sort of each segment of `keys` under `is_less`, all segments at once: the keys of
/// segment `i` end sorted within that segment, equivalent keys in their input order.
///
/// Short segments are sorted many to a task, each on one thread; long ones by the parallel
/// mergesort ([`mergesort_by`](super::mergesort_by)). An `is_less` that is not a strict weak
/// order leaves each segment a permutation of its keys, in unspecified order, without a panic.
///
/// ```
/// use twophase::cpu::{segmented_sort_by, Segments};
/// // Three rows of a CSR matrix: column indices 0..3, 3..3 (empty) and 3..6.
/// let mut columns = vec![7u32, 2, 5, 9, 1, 4];
/// segmented_sort_by(&mut columns, Segments::Starts(&[0, 3, 3, 6]), |a: &u32, b: &u32| a < b);
/// assert_eq!(columns, [2, 5, 7, 1, 4, 9]);
/// ```
///
/// # Panics
/// If `segments` is not valid for `keys.len()` keys ([`Segments`] says what is).
pub fn segmented_sort_by<T, F>(keys: &mut [T], segments: Segments<'_>, is_less: F)
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    assert_segments(keys.len(), segments);
    segmented_sort_checked(keys, segments, &is_less, RunSort::BlockSort);
}

/// Stable sort of each segment of `keys` in the keys' natural order ([`NaturalOrder`]), as
/// [`segmented_sort_by`]; the orders this crate knows (the primitive types, tuples and arrays
/// of them) sort each segment with std's sorts, as [`mergesort`](super::mergesort) does.
///
/// # Panics
/// If `segments` is not valid for `keys.len()` keys.
pub fn segmented_sort<T: NaturalOrder + Copy + Send + Sync>(
    keys: &mut [T],
    segments: Segments<'_>,
) {
    assert_segments(keys.len(), segments);
    segmented_sort_checked(keys, segments, &T::natural_less, T::run_sort(OrderToken));
}

/// [`segmented_sort_pairs_by`] with the run sort given and the result of
/// [`segmented_sort_checked`]; `keys` and `values` of one length and valid `segments`.
pub(crate) fn segmented_sort_pairs_checked<K, V, F>(
    keys: &mut [K],
    values: &mut [V],
    segments: Segments<'_>,
    is_less: &F,
    run_sort: RunSort,
) -> bool
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    sort_as_tuples(keys, values, |pairs| {
        segmented_sort_checked(
            pairs,
            segments,
            &|x: &(K, V), y: &(K, V)| is_less(&x.0, &y.0),
            run_sort.for_pairs(),
        )
    })
}

/// Stable sort of each segment of key-value pairs by key under `is_less`, as
/// [`segmented_sort_by`]: values move with their keys, and equivalent keys keep their input
/// order within each segment.
///
/// # Panics
/// If `keys` and `values` differ in length, or `segments` is not valid for `keys.len()` keys.
pub fn segmented_sort_pairs_by<K, V, F>(
    keys: &mut [K],
    values: &mut [V],
    segments: Segments<'_>,
    is_less: F,
) where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    assert_paired(keys, values, "keys", "values");
    assert_segments(keys.len(), segments);
    segmented_sort_pairs_checked(keys, values, segments, &is_less, RunSort::BlockSort);
}

/// Stable sort of each segment of key-value pairs by key in the keys' natural order
/// ([`NaturalOrder`]), as [`segmented_sort_pairs_by`].
///
/// # Panics
/// If `keys` and `values` differ in length, or `segments` is not valid for `keys.len()` keys.
pub fn segmented_sort_pairs<K, V>(keys: &mut [K], values: &mut [V], segments: Segments<'_>)
where
    K: NaturalOrder + Copy + Send + Sync,
    V: Copy + Send + Sync,
{
    assert_paired(keys, values, "keys", "values");
    assert_segments(keys.len(), segments);
    segmented_sort_pairs_checked(
        keys,
        values,
        segments,
        &K::natural_less,
        K::run_sort(OrderToken),
    );
}
