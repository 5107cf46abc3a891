//! CPU stable mergesort: block sort of each tile, then merge passes partitioned by merge path.

use rayon::prelude::*;
use twophase_partition::{
    mergesort_pair, mergesort_path, mergesort_tile, partition_count, partition_diag,
};
use twophase_serial::serial_sort;

use twophase_partition::MergeRange;

use super::{merge_lanes, merge_range, MergesortTuning, LANES, LANE_MIN_OUTPUTS};

const VT: usize = MergesortTuning::VT;
const TILE: usize = MergesortTuning::TILE;

/// Sort one tile in place: VT-key odd-even transposition sorts, then merge levels of doubling
/// runs inside the tile, ping-ponging with `scratch`.
fn block_sort<T: Copy, F: Fn(&T, &T) -> bool>(tile: &mut [T], scratch: &mut Vec<T>, is_less: &F) {
    for piece in tile.chunks_mut(VT) {
        let mut keys = [piece[0]; VT];
        keys[..piece.len()].copy_from_slice(piece);
        serial_sort::<VT, T, F>(&mut keys, piece.len(), is_less);
        piece.copy_from_slice(&keys[..piece.len()]);
    }
    let n = tile.len();
    if n <= VT {
        return;
    }
    scratch.clear();
    scratch.extend_from_slice(tile);
    let mut in_tile = true;
    let mut run = VT;
    while run < n {
        let (src, dst): (&[T], &mut [T]) = if in_tile {
            (tile, scratch)
        } else {
            (scratch, tile)
        };
        merge_level(src, dst, run, is_less);
        in_tile = !in_tile;
        run *= 2;
    }
    if !in_tile {
        tile.copy_from_slice(scratch);
    }
}

/// One serial merge level: every pair of runs of `run` keys in `src` merged into `dst`. Long
/// pairs are cut into lanes by [`merge_range`]; short ones are merged [`LANES`] pairs at a time,
/// one pair a lane, for the same overlap of dependency chains.
fn merge_level<T: Copy, F: Fn(&T, &T) -> bool>(src: &[T], dst: &mut [T], run: usize, is_less: &F) {
    let n = src.len();
    let width = 2 * run;
    if width >= LANE_MIN_OUTPUTS {
        let mut pos = 0;
        while pos < n {
            let pair = mergesort_pair(n, run, pos);
            merge_range::<VT, T, F, _>(
                src,
                pair,
                is_less,
                &mut dst[pair.a_begin..pair.b_end],
                |_, _| {},
            );
            pos = pair.b_end;
        }
        return;
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
            |_, _| {},
        );
        group = group_end;
    }
}

/// Stable sort of `keys` under `is_less`, two-phase: block sort of each tile in parallel, then
/// `ceil(log2(n / TILE))` merge passes, each split into equal tiles by merge path.
pub fn mergesort_by<T, F>(keys: &mut [T], is_less: F)
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let n = keys.len();
    keys.par_chunks_mut(TILE).for_each_init(
        || Vec::with_capacity(TILE),
        |scratch, tile| block_sort(tile, scratch, &is_less),
    );
    if n <= TILE {
        return;
    }
    let mut buffer = keys.to_vec();
    let mut partitions = vec![0; partition_count(n, TILE)];
    let mut in_keys = true;
    let mut run = TILE;
    while run < n {
        let (src, dst): (&[T], &mut [T]) = if in_keys {
            (keys, &mut buffer)
        } else {
            (&buffer, keys)
        };
        partitions.par_iter_mut().enumerate().for_each(|(p, mp)| {
            *mp = mergesort_path(src, run, partition_diag(p, TILE, n), &is_less);
        });
        dst.par_chunks_mut(TILE).enumerate().for_each(|(t, chunk)| {
            let range = mergesort_tile(&partitions, t, TILE, run, n);
            merge_range::<VT, T, F, _>(src, range, &is_less, chunk, |_, _| {});
        });
        in_keys = !in_keys;
        run *= 2;
    }
    if !in_keys {
        keys.copy_from_slice(&buffer);
    }
}

/// Stable sort of `keys` in their natural order.
pub fn mergesort<T: Copy + Ord + Send + Sync>(keys: &mut [T]) {
    mergesort_by(keys, |a: &T, b: &T| a < b);
}

/// Stable sort of key-value pairs by key under `is_less`: values move with their keys and equal
/// keys keep their input order.
///
/// # Panics
/// If `keys` and `values` differ in length.
pub fn mergesort_pairs_by<K, V, F>(keys: &mut [K], values: &mut [V], is_less: F)
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    assert_eq!(keys.len(), values.len(), "keys and values differ in length");
    let mut pairs: Vec<(K, V)> = keys
        .par_iter()
        .copied()
        .zip(values.par_iter().copied())
        .collect();
    mergesort_by(&mut pairs, |x: &(K, V), y: &(K, V)| is_less(&x.0, &y.0));
    keys.par_iter_mut()
        .zip(values.par_iter_mut())
        .zip(pairs.par_iter())
        .for_each(|((k, v), &(pk, pv))| {
            *k = pk;
            *v = pv;
        });
}

/// Stable sort of key-value pairs by key in the keys' natural order.
pub fn mergesort_pairs<K: Copy + Ord + Send + Sync, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
) {
    mergesort_pairs_by(keys, values, |a: &K, b: &K| a < b);
}
