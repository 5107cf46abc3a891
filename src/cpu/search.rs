//! CPU sorted search and load-balancing search (with interval expand), partitioned by merge path.

use rayon::prelude::*;
use twophase_partition::{
    load_balance_path, merge_path, partition_count, partition_diag, Lower, MergeRange, Upper,
};
use twophase_serial::{serial_load_balance, serial_search};

use super::{split_by_bounds, SearchTuning};

const VT: usize = SearchTuning::VT;
const TILE: usize = SearchTuning::TILE;

/// Which bound of each needle a sorted search returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SearchBound {
    /// The first haystack position whose key is not less than the needle.
    Lower,
    /// The first haystack position whose key is greater than the needle.
    Upper,
}

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

/// For each needle of the sorted `needles`, its lower or upper bound in the sorted `haystack`
/// under `is_less`: one merge of the two arrays, split by merge path — no binary search per
/// needle.
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
    let count = needles.len() + haystack.len();
    let mut partitions = vec![0; partition_count(count, TILE)];
    partitions.par_iter_mut().enumerate().for_each(|(p, mp)| {
        let diag = partition_diag(p, TILE, count);
        *mp = match bound {
            SearchBound::Lower => merge_path::<Lower, T, &F>(needles, haystack, diag, &is_less),
            SearchBound::Upper => merge_path::<Upper, T, &F>(needles, haystack, diag, &is_less),
        };
    });
    let mut out = vec![0; needles.len()];
    let pieces = split_by_bounds(&mut out, &partitions[1..]);
    tile_ranges(&partitions, count)
        .zip(pieces)
        .for_each(|(mut range, piece)| {
            let first = range.a_begin;
            while !range.is_empty() {
                let found = match bound {
                    SearchBound::Lower => {
                        serial_search::<Lower, VT, T, F>(needles, haystack, &mut range, &is_less)
                    }
                    SearchBound::Upper => {
                        serial_search::<Upper, VT, T, F>(needles, haystack, &mut range, &is_less)
                    }
                };
                for i in 0..found.found {
                    piece[found.needles[i] - first] = found.bounds[i];
                }
            }
        });
    out
}

/// [`sorted_search_by`] in the keys' natural order.
pub fn sorted_search<T: Ord + Sync>(
    needles: &[T],
    haystack: &[T],
    bound: SearchBound,
) -> Vec<usize> {
    sorted_search_by(needles, haystack, bound, |a: &T, b: &T| a < b)
}

/// Phase 1 and 2 of a load-balancing search, handing each work item's (segment, rank) to `map`.
fn load_balance_map<U, M>(scan: &[usize], total: usize, map: M) -> Vec<U>
where
    U: Copy + Send + Default,
    M: Fn(usize, usize) -> U + Sync,
{
    assert!(
        scan.first().is_none_or(|&s| s == 0),
        "an exclusive scan starts at 0"
    );
    assert!(
        !scan.is_empty() || total == 0,
        "work items need at least one segment"
    );
    assert!(
        scan.last().is_none_or(|&s| s <= total),
        "segment offsets past the total"
    );
    let count = total + scan.len();
    let mut partitions = vec![0; partition_count(count, TILE)];
    partitions.par_iter_mut().enumerate().for_each(|(p, mp)| {
        *mp = load_balance_path(total, scan, partition_diag(p, TILE, count));
    });
    let mut out = vec![U::default(); total];
    let pieces = split_by_bounds(&mut out, &partitions[1..]);
    tile_ranges(&partitions, count)
        .zip(pieces)
        .for_each(|(mut range, piece)| {
            let first = range.a_begin;
            while !range.is_empty() {
                let items = serial_load_balance::<VT>(scan, &mut range);
                for i in 0..items.count {
                    piece[items.first_item - first + i] = map(items.segments[i], items.ranks[i]);
                }
            }
        });
    out
}

/// Load-balancing search: for each of `total` work items, the segment it belongs to, given
/// `scan`, the exclusive scan of the segment sizes (`scan[s]` = first item of segment `s`).
/// Empty segments are skipped over; the last segment ends at `total`.
///
/// # Panics
/// If `scan` does not start at 0, exceeds `total`, or is empty while `total > 0`.
pub fn load_balance_search(scan: &[usize], total: usize) -> Vec<usize> {
    load_balance_map(scan, total, |segment, _| segment)
}

/// [`load_balance_search`] with each item's rank inside its segment: `(segment, rank)`.
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
    assert!(values.len() >= scan.len(), "one value per segment");
    load_balance_map(scan, total, |segment, _| values[segment])
}
