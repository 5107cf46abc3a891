//! CPU sharded sort and merge: p sorted shards re-cut by multiway co-rank into p output shards of exact ranks.
//!
//! The CPU twin of a sort across p devices, in the four steps the devices take:
//! 1. each shard is sorted on its own ([`super::mergesort_by`]);
//! 2. a multiway co-rank finds, at every boundary `shard_boundary(i, p, n)` between output
//!    shards, the cut of every sorted shard, the `p - 1` searches in parallel, searched as the
//!    GPUs search it: two shards by the strided merge path
//!    ([`twophase_partition::strided_merge_path`]), more by the exact selection inside windows
//!    bounded by every stride-th key of every shard ([`twophase_partition::sampled_cut_bounds`]);
//! 3. an exchange gathers, for each output shard, the `p` pieces between its two cuts (one piece
//!    from every input shard, in shard order), moving every key once;
//! 4. each output shard merges its `p` pieces by a tree of the two-way stable merge
//!    ([`super::merge_into_by`]), earlier shards as A, so that ties keep shard order.
//!
//! Output shard `i` then holds exactly ranks `[i n / p, (i + 1) n / p)` of the stable order of
//! the concatenated input (ties by shard, then position): the concatenated output is std's stable
//! sort of the concatenated input.
//!
//! Any input, as the rest of the backend: a comparator that is not a strict weak order, or
//! unsorted shards given to a merge, still give a permutation of the input with every output
//! shard of its exact size, since the cuts are clamped into a staircase
//! ([`twophase_partition::clamp_multiway_cut`]) and the two-way merges keep every key.

use rayon::prelude::*;
use twophase_partition::{
    clamp_multiway_cut, multiway_co_rank, sampled_cut_bounds, select_indexed_runs, shard_boundary,
    strided_merge_path,
};

use super::merge::{merge_count, merge_into_by};
use super::{assert_paired, mergesort_by, mergesort_pairs_by};
use crate::order::NaturalOrder;

/// The cuts of `runs` at every output shard boundary, one shard a run: row `i` holds the count
/// taken from each run before output shard `i` starts (row 0 all zeros, row `p` the runs'
/// lengths), the `p - 1` inner rows found in parallel and then clamped in order, so that every
/// column is non-decreasing and row `i` sums to `shard_boundary(i, p, n)` on any input.
fn shard_cuts<T, F>(runs: &[&[T]], is_less: &F) -> Vec<Vec<usize>>
where
    T: Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let p = runs.len();
    let lens: Vec<usize> = runs.iter().map(|run| run.len()).collect();
    let total = lens.iter().fold(0, |sum, &len| merge_count(sum, len));
    let samples = (p > 2).then(|| RunSamples::of(runs));
    let mut cuts: Vec<Vec<usize>> = (0..=p)
        .into_par_iter()
        .map(|shard| match shard {
            0 => vec![0; p],
            s if s == p => lens.clone(),
            s => {
                let diag = shard_boundary(s, p, total);
                cut_at(runs, samples.as_ref(), diag, is_less)
            }
        })
        .collect();
    for shard in 1..p {
        let (before, after) = cuts.split_at_mut(shard);
        let diag = shard_boundary(shard, p, total);
        clamp_multiway_cut(&before[shard - 1], &mut after[0], diag, &lens);
    }
    cuts
}

/// Probes a round of the two-shard cut's strided search, as the GPUs' default (on the CPU a
/// read costs nothing; the same search runs so that CI tests it).
const CUT_PROBES: usize = 256;

/// Samples a run that bound a cut among three or more shards. Far fewer than the GPUs' 2^16, so
/// that the samples skip keys (and the windows span several) even in the property tests'
/// shards of up to 60 keys; on the CPU a window is a view, and its width costs only a few
/// rounds of the search inside it.
const CUT_SAMPLES: usize = 16;

/// Every `stride`-th key of each run (references to them), as the GPUs gather them.
struct RunSamples<'a, T> {
    samples: Vec<Vec<&'a T>>,
    stride: usize,
}

impl<'a, T> RunSamples<'a, T> {
    fn of(runs: &[&'a [T]]) -> Self {
        let longest = runs.iter().map(|run| run.len()).max().unwrap_or(0);
        let stride = longest.div_ceil(CUT_SAMPLES).max(1);
        let samples = runs
            .iter()
            .map(|run| run.iter().step_by(stride).collect())
            .collect();
        RunSamples { samples, stride }
    }
}

/// The counts taken from each run before output rank `diag`, as the GPUs search them: two runs
/// by the strided merge path; more by the exact selection inside the windows that the samples
/// bound, or over the whole runs where the samples contradict each other (unsorted runs, or a
/// comparator that is not a strict weak order).
fn cut_at<T, F>(
    runs: &[&[T]],
    samples: Option<&RunSamples<'_, T>>,
    diag: usize,
    is_less: &F,
) -> Vec<usize>
where
    F: Fn(&T, &T) -> bool,
{
    let p = runs.len();
    if let [a, b] = runs {
        let cut = strided_merge_path(a, b, diag, CUT_PROBES, is_less);
        return vec![cut, diag - cut];
    }
    let (mut counts, mut upper) = (vec![0; p], vec![0; p]);
    let lens: Vec<usize> = runs.iter().map(|run| run.len()).collect();
    let by_ref = |a: &&T, b: &&T| is_less(a, b);
    let bounded = samples.is_some_and(|s| {
        let sample_runs: Vec<&[&T]> = s.samples.iter().map(Vec::as_slice).collect();
        sampled_cut_bounds(
            &sample_runs,
            s.stride,
            &lens,
            diag,
            &by_ref,
            &mut counts,
            &mut upper,
        )
    });
    if bounded {
        select_indexed_runs(runs, &mut counts, &mut upper, diag, &by_ref);
    } else {
        multiway_co_rank(runs, diag, is_less, &mut counts, &mut upper);
    }
    counts
}

/// Stable merge of the consecutive sorted runs of `keys` that `bounds` delimits (run `r` is
/// `bounds[r]..bounds[r + 1]`; the first bound 0, the last `keys.len()`), in place: levels of
/// the two-way merge, run `2m` (as A) with run `2m + 1` (an odd last run merged with nothing),
/// ping-ponging with a scratch copy, so that ties keep run order: `ceil(log2(runs))` levels.
fn merge_consecutive_runs<T, F>(keys: &mut [T], mut bounds: Vec<usize>, is_less: &F)
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    if bounds.len() <= 2 {
        return;
    }
    let mut scratch = keys.to_vec();
    let mut in_keys = true;
    while bounds.len() > 2 {
        let (src, dst): (&[T], &mut [T]) = if in_keys {
            (keys, &mut scratch)
        } else {
            (&scratch, keys)
        };
        let runs = bounds.len() - 1;
        let mut merged_bounds = vec![0];
        for a in (0..runs).step_by(2) {
            let (begin, mid, end) = (bounds[a], bounds[a + 1], bounds[(a + 2).min(runs)]);
            merge_into_by(
                &src[begin..mid],
                &src[mid..end],
                &mut dst[begin..end],
                is_less,
            );
            merged_bounds.push(end);
        }
        bounds = merged_bounds;
        in_keys = !in_keys;
    }
    if !in_keys {
        keys.copy_from_slice(&scratch);
    }
}

/// Steps 2 to 4 on sorted `runs` (one input shard a run): the cuts, the exchange into one buffer
/// per output shard (its pieces in shard order) and the merge of each output shard's pieces.
fn merge_shards<T, F>(runs: &[&[T]], is_less: &F) -> Vec<Vec<T>>
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let cuts = shard_cuts(runs, is_less);
    cuts.par_windows(2)
        .map(|cut| {
            let (from, to) = (&cut[0], &cut[1]);
            let size = from.iter().zip(to).map(|(f, t)| t - f).sum();
            let mut keys = Vec::with_capacity(size);
            let mut bounds = vec![0];
            for (k, run) in runs.iter().enumerate() {
                keys.extend_from_slice(&run[from[k]..to[k]]);
                bounds.push(keys.len());
            }
            merge_consecutive_runs(&mut keys, bounds, is_less);
            keys
        })
        .collect()
}

/// Panics with the message the `# Panics` sections quote unless `keys` and `values` hold as
/// many shards and every shard's keys and values have the same length.
fn assert_shards_paired<K, V>(keys: &[Vec<K>], values: &[Vec<V>]) {
    assert_paired(keys, values, "keys", "values");
    for (shard, (k, v)) in keys.iter().zip(values).enumerate() {
        assert_paired(k, v, &format!("keys[{shard}]"), &format!("values[{shard}]"));
    }
}

/// Step 1 of a sharded sort: every shard sorted in place by `sort`, the shards in parallel.
fn sort_each_shard<T: Send>(shards: &mut [Vec<T>], sort: impl Fn(&mut [T]) + Sync) {
    shards.par_iter_mut().for_each(|shard| sort(shard));
}

/// Step 1 of a sharded sort of pairs: every shard's keys and values sorted in place by `sort`,
/// the shards in parallel, after checking that they pair up.
fn sort_each_pair_shard<K: Send, V: Send>(
    keys: &mut [Vec<K>],
    values: &mut [Vec<V>],
    sort: impl Fn(&mut [K], &mut [V]) + Sync,
) {
    assert_shards_paired(keys, values);
    keys.par_iter_mut()
        .zip(values.par_iter_mut())
        .for_each(|(k, v)| sort(k, v));
}

/// Each shard's keys and values as one shard of `(key, value)` tuples.
///
/// # Panics
/// If `keys` and `values` hold different numbers of shards, or a shard's keys and values differ
/// in length.
fn zip_shards<K: Copy + Send + Sync, V: Copy + Send + Sync>(
    keys: &[Vec<K>],
    values: &[Vec<V>],
) -> Vec<Vec<(K, V)>> {
    assert_shards_paired(keys, values);
    keys.par_iter()
        .zip(values)
        .map(|(k, v)| k.iter().copied().zip(v.iter().copied()).collect())
        .collect()
}

/// Shards of `(key, value)` tuples split back into key shards and value shards.
fn unzip_shards<K: Send, V: Send>(pairs: Vec<Vec<(K, V)>>) -> (Vec<Vec<K>>, Vec<Vec<V>>) {
    pairs
        .into_par_iter()
        .map(|shard| shard.into_iter().unzip())
        .unzip()
}

/// Stable merge of `shards`, each sorted under `is_less`, into as many output shards: output
/// shard `i` holds exactly ranks `[i n / p, (i + 1) n / p)`
/// ([`twophase_partition::shard_boundary`]) of the stable merge, ties taken from earlier shards
/// first, so that the concatenated output equals std's stable sort of the concatenated input.
/// Shards may differ in length or be empty; no shards give no output shards.
///
/// Cost for `n` keys in `p` shards: `p - 1` multiway co-rank searches in parallel (two shards:
/// the strided merge path, about log(n) / log(257) rounds; more: a selection inside windows of
/// about `(p + 1) n / (16 p)` keys a shard that 16 samples a shard bound, about `p * log2` of
/// that in rounds of `2p` comparisons); the exchange moves every key once; each output shard
/// then runs `ceil(log2(p))` levels of two-way merges over its `n / p` keys.
///
/// If a shard is not sorted under `is_less`, or `is_less` is not a strict weak order, the output
/// is still a permutation of the input with every output shard of its exact size, in
/// unspecified order (no panic, no lost key).
///
/// # Panics
/// If the total length overflows `usize` (possible only for zero-sized keys).
pub fn sharded_merge_by<T, F>(shards: &[Vec<T>], is_less: F) -> Vec<Vec<T>>
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    let runs: Vec<&[T]> = shards.iter().map(Vec::as_slice).collect();
    merge_shards(&runs, &is_less)
}

/// [`sharded_merge_by`] in the keys' natural order ([`NaturalOrder`]).
pub fn sharded_merge<T: NaturalOrder + Copy + Send + Sync>(shards: &[Vec<T>]) -> Vec<Vec<T>> {
    sharded_merge_by(shards, T::natural_less)
}

/// [`sharded_merge_by`] of key-value pairs sorted by key: shard `s` is `keys[s]` with
/// `values[s]`; values travel with their keys, and equal keys keep shard order, then their
/// order within a shard. Unsorted keys or an inconsistent `is_less` give a permutation of the
/// pairs (each value still with its key).
///
/// # Panics
/// If `keys` and `values` hold different numbers of shards, a shard's keys and values differ in
/// length, or the total length overflows `usize`.
pub fn sharded_merge_pairs_by<K, V, F>(
    keys: &[Vec<K>],
    values: &[Vec<V>],
    is_less: F,
) -> (Vec<Vec<K>>, Vec<Vec<V>>)
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    let pairs = zip_shards(keys, values);
    let merged = sharded_merge_by(&pairs, |x: &(K, V), y: &(K, V)| is_less(&x.0, &y.0));
    unzip_shards(merged)
}

/// [`sharded_merge_pairs_by`] in the keys' natural order ([`NaturalOrder`]).
///
/// # Panics
/// As [`sharded_merge_pairs_by`].
pub fn sharded_merge_pairs<K, V>(keys: &[Vec<K>], values: &[Vec<V>]) -> (Vec<Vec<K>>, Vec<Vec<V>>)
where
    K: NaturalOrder + Copy + Send + Sync,
    V: Copy + Send + Sync,
{
    sharded_merge_pairs_by(keys, values, K::natural_less)
}

/// Stable sort of the keys of all `shards` under `is_less` into as many output shards: each
/// shard is first sorted in place ([`mergesort_by`], the shards in parallel; `shards` stays
/// sorted that way), then [`sharded_merge_by`] re-cuts them. Output shard `i` holds exactly ranks
/// `[i n / p, (i + 1) n / p)`, and the concatenated output equals std's stable sort of the
/// concatenated input (ties by shard, then position).
///
/// Cost for `n` keys in `p` shards: the sorts of `n / p` keys each, then [`sharded_merge_by`]'s.
///
/// If `is_less` is not a strict weak order, each input shard ends a permutation of itself and
/// the output a permutation of the input with every output shard of its exact size (no panic,
/// no lost key).
///
/// ```
/// // Three shards of unequal lengths (one empty), sorted descending by the first field.
/// let mut shards = vec![vec![(1, 'a'), (3, 'b'), (1, 'c')], vec![], vec![(3, 'd'), (2, 'e')]];
/// let out = twophase::cpu::sharded_sort_by(&mut shards, |x: &(u32, char), y| x.0 > y.0);
/// // 5 keys in 3 shards: ranks [0, 1), [1, 3), [3, 5); ties keep shard, then position, order.
/// assert_eq!(out, [vec![(3, 'b')], vec![(3, 'd'), (2, 'e')], vec![(1, 'a'), (1, 'c')]]);
/// ```
///
/// # Panics
/// If the total length overflows `usize` (possible only for zero-sized keys).
pub fn sharded_sort_by<T, F>(shards: &mut [Vec<T>], is_less: F) -> Vec<Vec<T>>
where
    T: Copy + Send + Sync,
    F: Fn(&T, &T) -> bool + Sync,
{
    sort_each_shard(shards, |shard| mergesort_by(shard, &is_less));
    sharded_merge_by(shards, is_less)
}

/// [`sharded_sort_by`] in the keys' natural order ([`NaturalOrder`]), each shard sorted by
/// [`super::mergesort`] (std's sorts on the runs for the orders this crate knows).
pub fn sharded_sort<T: NaturalOrder + Copy + Send + Sync>(shards: &mut [Vec<T>]) -> Vec<Vec<T>> {
    sort_each_shard(shards, super::mergesort);
    sharded_merge(shards)
}

/// Stable sort of key-value pairs by key across shards: shard `s` is `keys[s]` with `values[s]`,
/// each sorted in place by [`mergesort_pairs_by`], then [`sharded_merge_pairs_by`]. Values move
/// with their keys, and equal keys keep their input order (by shard, then position).
///
/// # Panics
/// If `keys` and `values` hold different numbers of shards, a shard's keys and values differ in
/// length, or the total length overflows `usize`.
pub fn sharded_sort_pairs_by<K, V, F>(
    keys: &mut [Vec<K>],
    values: &mut [Vec<V>],
    is_less: F,
) -> (Vec<Vec<K>>, Vec<Vec<V>>)
where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    F: Fn(&K, &K) -> bool + Sync,
{
    sort_each_pair_shard(keys, values, |k, v| mergesort_pairs_by(k, v, &is_less));
    sharded_merge_pairs_by(keys, values, is_less)
}

/// [`sharded_sort_pairs_by`] in the keys' natural order ([`NaturalOrder`]), each shard sorted by
/// [`super::mergesort_pairs`].
///
/// # Panics
/// As [`sharded_sort_pairs_by`].
pub fn sharded_sort_pairs<K, V>(
    keys: &mut [Vec<K>],
    values: &mut [Vec<V>],
) -> (Vec<Vec<K>>, Vec<Vec<V>>)
where
    K: NaturalOrder + Copy + Send + Sync,
    V: Copy + Send + Sync,
{
    sort_each_pair_shard(keys, values, super::mergesort_pairs);
    sharded_merge_pairs(keys, values)
}
