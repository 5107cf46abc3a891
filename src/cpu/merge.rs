//! CPU merge of two sorted slices, keys or key-value pairs, stable (A's equal keys first).

use rayon::prelude::*;
use twophase_partition::{merge_path, merge_path_tile, Lower, MergeRange};

use super::{assert_paired, merge_range, KeysOnly, MergeTuning, Payload};
use crate::order::NaturalOrder;

/// `a.len() + b.len()`, the outputs of a merge.
///
/// # Panics
/// If the sum overflows `usize` (only possible for zero-sized keys).
pub(crate) fn merge_count(a_len: usize, b_len: usize) -> usize {
    a_len
        .checked_add(b_len)
        .expect("a merge's output length overflows usize")
}

/// Phase 1 of a merge of `a` and `b` ([`super::tile_partitions`]) by the merge path.
fn tile_partitions<T: Sync, F: Fn(&T, &T) -> bool + Sync>(
    a: &[T],
    b: &[T],
    is_less: &F,
) -> Vec<usize> {
    let count = merge_count(a.len(), b.len());
    super::tile_partitions(count, MergeTuning::TILE, (a.len(), b.len()), |diag| {
        merge_path::<Lower, T, &F>(a, b, diag, is_less)
    })
}

/// Load one tile's pieces of A and B into `tile` (A then B, as into shared memory on the GPU) and
/// return the tile-local range.
fn load_tile<T: Copy>(a: &[T], b: &[T], range: &MergeRange, tile: &mut Vec<T>) -> MergeRange {
    tile.clear();
    tile.extend_from_slice(&a[range.a_begin..range.a_end]);
    tile.extend_from_slice(&b[range.b_begin..range.b_end]);
    range.to_local()
}

/// Stable merge of sorted `a` and `b` into `out` (`out.len() == a.len() + b.len()`).
///
/// If `a` or `b` is not sorted under `is_less`, or `is_less` is not a strict weak order, `out`
/// still holds a permutation of `a` and `b`, in unspecified order (no panic, no lost key).
///
/// # Panics
/// If `out.len()` is not `a.len() + b.len()`, or that sum overflows `usize`.
pub fn merge_into_by<T, F>(a: &[T], b: &[T], out: &mut [T], is_less: F)
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let count = merge_count(a.len(), b.len());
    assert_eq!(
        out.len(),
        count,
        "the merge output must hold a.len() + b.len() keys"
    );
    let partitions = tile_partitions(a, b, &is_less);
    out.par_chunks_mut(MergeTuning::TILE)
        .enumerate()
        .for_each_init(
            || Vec::with_capacity(MergeTuning::TILE),
            |tile, (t, chunk)| {
                let range = merge_path_tile(&partitions, t, MergeTuning::TILE, count);
                let local = load_tile(a, b, &range, tile);
                merge_range::<{ MergeTuning::VT }, T, F, _>(tile, local, &is_less, chunk, KeysOnly);
            },
        );
}

/// Stable merge of sorted `a` and `b` under `is_less`.
///
/// If `a` or `b` is not sorted under `is_less`, or `is_less` is not a strict weak order, the
/// result is still a permutation of `a` and `b`, in unspecified order (no panic, no lost key).
/// `twophase::merge_by` checks both inputs and returns an error instead.
///
/// # Panics
/// If `a.len() + b.len()` overflows `usize` (possible only for zero-sized keys).
pub fn merge_by<T, F>(a: &[T], b: &[T], is_less: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let Some(&fill) = a.first().or(b.first()) else {
        return Vec::new();
    };
    let mut out = vec![fill; merge_count(a.len(), b.len())];
    merge_into_by(a, b, &mut out, is_less);
    out
}

/// Stable merge of sorted `a` and `b` in their natural order ([`NaturalOrder`]: floats by the
/// IEEE 754 total order, NaN last).
pub fn merge<T: NaturalOrder + Copy + Send + Sync>(a: &[T], b: &[T]) -> Vec<T> {
    merge_by(a, b, T::natural_less)
}

/// Stable merge of key-value pairs sorted by key: values travel with their keys, and for equal
/// keys A's pairs come first, each side in its own order. Unsorted keys or an inconsistent
/// `is_less` give a permutation of the pairs (each value still with its key), as [`merge_by`].
///
/// # Panics
/// If a key slice and its value slice differ in length.
pub fn merge_pairs_by<K, V, F>(
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
    is_less: F,
) -> (Vec<K>, Vec<V>)
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    assert_paired(a_keys, a_values, "a_keys", "a_values");
    assert_paired(b_keys, b_values, "b_keys", "b_values");
    let count = merge_count(a_keys.len(), b_keys.len());
    let (Some(&key_fill), Some(&value_fill)) = (
        a_keys.first().or(b_keys.first()),
        a_values.first().or(b_values.first()),
    ) else {
        return (Vec::new(), Vec::new());
    };
    let partitions = tile_partitions(a_keys, b_keys, &is_less);
    let mut keys = vec![key_fill; count];
    let mut values = vec![value_fill; count];
    keys.par_chunks_mut(MergeTuning::TILE)
        .zip(values.par_chunks_mut(MergeTuning::TILE))
        .enumerate()
        .for_each_init(
            || Vec::with_capacity(MergeTuning::TILE),
            |tile, (t, (key_chunk, value_chunk))| {
                let range = merge_path_tile(&partitions, t, MergeTuning::TILE, count);
                let local = load_tile(a_keys, b_keys, &range, tile);
                let a_count = range.a_count();
                merge_range::<{ MergeTuning::VT }, K, F, _>(
                    tile,
                    local,
                    &is_less,
                    key_chunk,
                    Payload(|k, source| {
                        value_chunk[k] = if source < a_count {
                            a_values[range.a_begin + source]
                        } else {
                            b_values[range.b_begin + source - a_count]
                        };
                    }),
                );
            },
        );
    (keys, values)
}

/// Stable merge of key-value pairs sorted by key in the keys' natural order ([`NaturalOrder`]).
///
/// # Panics
/// If a key slice and its value slice differ in length.
pub fn merge_pairs<K, V>(
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
) -> (Vec<K>, Vec<V>)
where
    K: NaturalOrder + Copy + Send + Sync,
    V: Copy + Send + Sync,
{
    merge_pairs_by(a_keys, a_values, b_keys, b_values, K::natural_less)
}
