//! CPU stable mergesort: sorted runs (block-sorted tiles, or std-sorted runs for this crate's own orders), then merge passes partitioned by merge path.

use rayon::prelude::*;
use twophase_partition::{
    mergesort_pair, mergesort_path, mergesort_tile, partition_count, partition_diag,
    repair_mergesort_partitions, MergeRange,
};
use twophase_serial::serial_sort;

use super::{
    assert_paired, merge_lanes, merge_range, KeysOnly, MergesortTuning, LANES, LANE_MIN_OUTPUTS,
};
use crate::order::{sealed::OrderToken, NaturalOrder};

const VT: usize = MergesortTuning::VT;
pub(crate) const TILE: usize = MergesortTuning::TILE;

/// Sort one tile in place: VT-key odd-even transposition sorts, then merge levels of doubling
/// runs inside the tile, ping-ponging with `scratch`. Returns `false` when a merge level saw
/// that `is_less` is not a strict weak order ([`merge_range`]).
pub(crate) fn block_sort<T: Copy, F: Fn(&T, &T) -> bool>(
    tile: &mut [T],
    scratch: &mut Vec<T>,
    is_less: &F,
) -> bool {
    for piece in tile.chunks_mut(VT) {
        let mut keys = [piece[0]; VT];
        keys[..piece.len()].copy_from_slice(piece);
        serial_sort::<VT, T, F>(&mut keys, piece.len(), is_less);
        piece.copy_from_slice(&keys[..piece.len()]);
    }
    let n = tile.len();
    if n <= VT {
        return true;
    }
    // Every level writes all of its destination, so the scratch only needs the length: it grows
    // (filled with any key) once for the longest tile, not copied in for every one.
    if scratch.len() < n {
        scratch.resize(n, tile[0]);
    }
    let scratch = &mut scratch[..n];
    let mut in_tile = true;
    let mut run = VT;
    let mut consistent = true;
    while run < n {
        let (src, dst): (&[T], &mut [T]) = if in_tile {
            (tile, scratch)
        } else {
            (scratch, tile)
        };
        consistent &= merge_level(src, dst, run, is_less);
        in_tile = !in_tile;
        run = run.saturating_mul(2);
    }
    if !in_tile {
        tile.copy_from_slice(scratch);
    }
    consistent
}

/// One serial merge level: every pair of runs of `run` keys in `src` merged into `dst`. Long
/// pairs are cut into lanes by [`merge_range`]; short ones are merged [`LANES`] pairs at a time,
/// one pair a lane, for the same overlap of dependency chains. Returns `false` when a long
/// pair's merge saw that `is_less` is not a strict weak order.
fn merge_level<T: Copy, F: Fn(&T, &T) -> bool>(
    src: &[T],
    dst: &mut [T],
    run: usize,
    is_less: &F,
) -> bool {
    let n = src.len();
    let width = run.saturating_mul(2);
    if width >= LANE_MIN_OUTPUTS {
        let mut pos = 0;
        let mut consistent = true;
        while pos < n {
            let pair = mergesort_pair(n, run, pos);
            consistent &= merge_range::<VT, T, F, _>(
                src,
                pair,
                is_less,
                &mut dst[pair.a_begin..pair.b_end],
                KeysOnly,
            );
            pos = pair.b_end;
        }
        return consistent;
    }
    let mut group = 0;
    while group < n {
        let group_end = (group + LANES * width).min(n);
        let mut lanes = [MergeRange {
            a_begin: group_end,
            a_end: group_end,
            b_begin: group_end,
            b_end: group_end,
        }; LANES];
        let mut positions = [group_end - group; LANES];
        for (l, (lane, position)) in lanes.iter_mut().zip(&mut positions).enumerate() {
            let start = group + l * width;
            if start < group_end {
                *lane = mergesort_pair(n, run, start);
                *position = start - group;
            }
        }
        merge_lanes::<VT, T, F, _>(
            src,
            lanes,
            positions,
            is_less,
            &mut dst[group..group_end],
            KeysOnly,
        );
        group = group_end;
    }
    true
}

/// How the runs that phase 2's merge passes start from are sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RunSort {
    /// Tiles of [`TILE`] keys by this crate's block sort: any `is_less`, checked as it goes.
    BlockSort,
    /// One run per thread by std's stable `sort_by`: only for an order known to be a strict
    /// weak order (std's sorts may panic on any other, and nothing here may panic).
    StdStable,
    /// One run per thread by std's `sort_unstable_by`: a strict weak order whose equivalent keys
    /// are bitwise identical, so that no arrangement of them differs from the stable one.
    StdUnstable,
}

impl RunSort {
    /// The sort two orders both allow (the variants go from fewest assumptions to most).
    pub(crate) fn weakest(self, other: RunSort) -> RunSort {
        self.min(other)
    }

    /// The sort a key-value sort may run: values tell equivalent keys apart, so std's stable
    /// sort at most.
    pub(crate) fn for_pairs(self) -> RunSort {
        self.min(RunSort::StdStable)
    }
}

/// Keys under which a sort by std's sorts runs on one thread: below it, splitting into runs and
/// merging them costs more than the second thread saves (a merge pass costs about a fifth of a
/// std sort of the same keys, and a run of 64 Ki u32 sorts in well under a millisecond).
const STD_PARALLEL_MIN: usize = 64 * 1024;

/// [`mergesort_by`], returning `false` when the sort saw that `is_less` is not a strict weak
/// order (a merge found its sorted runs out of order: a partition or lane boundary had to be
/// repaired, or merged pieces meet out of order). Detection is best effort: `true` does not
/// prove the order consistent, but `false` never happens under a strict weak order. Either way
/// `keys` ends as a permutation of its input.
pub(crate) fn mergesort_checked<T, F>(keys: &mut [T], is_less: &F) -> bool
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    mergesort_runs_checked(keys, is_less, RunSort::BlockSort)
}

/// Sort `run` on this thread with std's sort that `run_sort` names: `sort_unstable_by` for
/// [`RunSort::StdUnstable`], else the stable `sort_by`. Only for an `is_less` the caller vouches
/// is a strict weak order: std's sorts may panic on any other.
pub(crate) fn std_sort_run<T, F>(run: &mut [T], is_less: &F, run_sort: RunSort)
where
    F: Fn(&T, &T) -> bool,
{
    let compare = |a: &T, b: &T| {
        if is_less(a, b) {
            std::cmp::Ordering::Less
        } else if is_less(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    };
    if run_sort == RunSort::StdUnstable {
        run.sort_unstable_by(compare);
    } else {
        run.sort_by(compare);
    }
}

/// Sort key-value pairs through one slice of `(key, value)` tuples: `sort` sorts the tuples (by
/// key, under an order that sees only the key), and the result is written back to `keys` and
/// `values` (of one length). Returns what `sort` returns.
pub(crate) fn sort_as_tuples<K, V>(
    keys: &mut [K],
    values: &mut [V],
    sort: impl FnOnce(&mut [(K, V)]) -> bool,
) -> bool
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
{
    let mut pairs: Vec<(K, V)> = keys
        .par_iter()
        .copied()
        .zip(values.par_iter().copied())
        .collect();
    let consistent = sort(&mut pairs);
    keys.par_iter_mut()
        .zip(values.par_iter_mut())
        .zip(pairs.par_iter())
        .for_each(|((k, v), &(pk, pv))| {
            *k = pk;
            *v = pv;
        });
    consistent
}

/// [`mergesort_checked`] with phase 2 starting from runs sorted by `run_sort`. Under
/// [`RunSort::StdStable`] and [`RunSort::StdUnstable`] the caller vouches that `is_less` is a
/// strict weak order (and, for the latter, that its equivalents are identical): then the keys
/// are cut into one run per rayon thread (whole tiles), std sorts each, and merge passes
/// partitioned by merge path join them, `ceil(log2(threads))` passes in all.
pub(crate) fn mergesort_runs_checked<T, F>(keys: &mut [T], is_less: &F, run_sort: RunSort) -> bool
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let n = keys.len();
    let std_sort = |run: &mut [T]| std_sort_run(run, is_less, run_sort);
    if run_sort == RunSort::BlockSort {
        let consistent = keys
            .par_chunks_mut(TILE)
            .map_init(
                || Vec::with_capacity(TILE),
                |scratch, tile| block_sort(tile, scratch, is_less),
            )
            .reduce(|| true, |x, y| x & y);
        return merge_passes(keys, None, TILE, is_less) & consistent;
    }
    let threads = rayon::current_num_threads();
    if n < STD_PARALLEL_MIN || threads < 2 {
        std_sort(keys);
        return true;
    }
    // Whole tiles per run, so that every merge pass cuts into whole tiles as the block sort's do.
    let run = n.div_ceil(threads).div_ceil(TILE) * TILE;
    let passes = n.div_ceil(run).next_power_of_two().trailing_zeros();
    if passes.is_multiple_of(2) {
        keys.par_chunks_mut(run).for_each(std_sort);
        merge_passes(keys, None, run, is_less)
    } else {
        // An odd number of passes ends in the buffer: sort the runs there instead, so that the
        // last pass writes `keys` and no copy back is needed.
        let mut buffer = keys.to_vec();
        buffer.par_chunks_mut(run).for_each(std_sort);
        merge_passes(keys, Some(buffer), run, is_less)
    }
}

/// Phase 2 of a sort: merge passes over sorted runs of `run` keys (a whole number of tiles),
/// doubling the runs until one is left, each pass split into tiles of equal output by merge
/// path. The runs are in `keys`, or in `runs_in` when given (its length `keys.len()`); the
/// result is always in `keys`. Returns `false` when a merge saw that `is_less` is not a strict
/// weak order.
fn merge_passes<T, F>(keys: &mut [T], runs_in: Option<Vec<T>>, run: usize, is_less: &F) -> bool
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let n = keys.len();
    if n <= run {
        if let Some(runs) = runs_in {
            keys.copy_from_slice(&runs);
        }
        return true;
    }
    let mut in_keys = runs_in.is_none();
    let mut buffer = runs_in.unwrap_or_else(|| keys.to_vec());
    let mut partitions = vec![0; partition_count(n, TILE)];
    let mut consistent = true;
    let mut run = run;
    while run < n {
        let (src, dst): (&[T], &mut [T]) = if in_keys {
            (keys, &mut buffer)
        } else {
            (&buffer, keys)
        };
        partitions.par_iter_mut().enumerate().for_each(|(p, mp)| {
            *mp = mergesort_path(src, run, partition_diag(p, TILE, n), is_less);
        });
        consistent &= repair_mergesort_partitions(&mut partitions, TILE, run, n);
        consistent &= dst
            .par_chunks_mut(TILE)
            .enumerate()
            .map(|(t, chunk)| {
                let range = mergesort_tile(&partitions, t, TILE, run, n);
                merge_range::<VT, T, F, _>(src, range, is_less, chunk, KeysOnly)
            })
            .reduce(|| true, |x, y| x & y);
        // The seams between tiles of one pair: O(n / TILE) comparisons.
        let width = run.saturating_mul(2);
        let dst: &[T] = dst;
        consistent &= (1..n.div_ceil(TILE))
            .into_par_iter()
            .map(|t| t * TILE)
            .filter(|seam| !seam.is_multiple_of(width))
            .all(|seam| !is_less(&dst[seam], &dst[seam - 1]));
        in_keys = !in_keys;
        run = run.saturating_mul(2);
    }
    if !in_keys {
        keys.copy_from_slice(&buffer);
    }
    consistent
}

/// Stable sort of `keys` under `is_less`, two-phase: block sort of each tile in parallel, then
/// `ceil(log2(n / TILE))` merge passes, each split into equal tiles by merge path.
///
/// If `is_less` is not a strict weak order (`<=`, `<` on floats with NaN, an answer at random),
/// `keys` ends as a permutation of its input in unspecified order, as with std's `sort_by`: no
/// key is lost or duplicated and nothing panics. `twophase::sort_by` reports such a
/// comparator as an error where the sort detects it.
pub fn mergesort_by<T, F>(keys: &mut [T], is_less: F)
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    mergesort_checked(keys, &is_less);
}

/// Stable sort of `keys` with a std-style comparator returning [`std::cmp::Ordering`], as
/// `slice::sort_by`: [`mergesort_by`] with `compare(a, b) == Less` as the predicate.
///
/// ```
/// let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c')];
/// twophase::cpu::sort_by(&mut v, |x, y| x.0.cmp(&y.0));
/// assert_eq!(v, [(1, 'b'), (2, 'a'), (2, 'c')]);
/// ```
pub fn sort_by<T, F>(keys: &mut [T], compare: F)
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
{
    mergesort_by(keys, |a: &T, b: &T| {
        compare(a, b) == std::cmp::Ordering::Less
    });
}

/// Stable sort of key-value pairs by key with a std-style comparator returning
/// [`std::cmp::Ordering`]: [`mergesort_pairs_by`] with `compare(a, b) == Less`.
pub fn sort_pairs_by<K, V, F>(keys: &mut [K], values: &mut [V], compare: F)
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> std::cmp::Ordering + Sync,
{
    mergesort_pairs_by(keys, values, |a: &K, b: &K| {
        compare(a, b) == std::cmp::Ordering::Less
    });
}

/// Stable sort of `keys` in their natural order ([`NaturalOrder`]: floats by the IEEE 754 total
/// order, NaN last, as `sort_by(|a, b| a.total_cmp(b))`).
///
/// For the primitive types and tuples and arrays of them, whose orders this crate knows to be
/// total, phase 1 cuts the keys into one run per rayon thread and std's `sort_unstable` sorts
/// each (equal keys are identical, so the result is the stable one); merge-path passes then join
/// the runs. Other [`NaturalOrder`] impls take [`mergesort_by`]'s block sort, which no order can
/// make panic.
pub fn mergesort<T: NaturalOrder + Copy + Send + Sync>(keys: &mut [T]) {
    mergesort_runs_checked(keys, &T::natural_less, T::run_sort(OrderToken));
}

/// [`mergesort_pairs_by`] returning whether the order looked consistent, as
/// [`mergesort_checked`]. `keys` and `values` must have the same length.
pub(crate) fn mergesort_pairs_checked<K, V, F>(
    keys: &mut [K],
    values: &mut [V],
    is_less: &F,
) -> bool
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    mergesort_pairs_runs_checked(keys, values, is_less, RunSort::BlockSort)
}

/// [`mergesort_pairs_checked`] with its runs sorted by `run_sort` (at most
/// [`RunSort::StdStable`]: values tell equivalent keys apart), as [`mergesort_runs_checked`].
pub(crate) fn mergesort_pairs_runs_checked<K, V, F>(
    keys: &mut [K],
    values: &mut [V],
    is_less: &F,
    run_sort: RunSort,
) -> bool
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    assert_paired(keys, values, "keys", "values");
    sort_as_tuples(keys, values, |pairs| {
        mergesort_runs_checked(
            pairs,
            &|x: &(K, V), y: &(K, V)| is_less(&x.0, &y.0),
            run_sort.for_pairs(),
        )
    })
}

/// Stable sort of key-value pairs by key under `is_less`: values move with their keys and equal
/// keys keep their input order. An inconsistent `is_less` gives a permutation of the pairs (each
/// value still with its key) in unspecified order, as [`mergesort_by`].
///
/// # Panics
/// If `keys` and `values` differ in length.
pub fn mergesort_pairs_by<K, V, F>(keys: &mut [K], values: &mut [V], is_less: F)
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    mergesort_pairs_checked(keys, values, &is_less);
}

/// Stable sort of key-value pairs by key in the keys' natural order ([`NaturalOrder`]). As
/// [`mergesort`], with std's stable sort on each run for the orders this crate knows.
///
/// # Panics
/// If `keys` and `values` differ in length.
pub fn mergesort_pairs<K: NaturalOrder + Copy + Send + Sync, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
) {
    mergesort_pairs_runs_checked(keys, values, &K::natural_less, K::run_sort(OrderToken));
}
