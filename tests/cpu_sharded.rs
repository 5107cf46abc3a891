//! CPU sharded sort and merge against std's stable sort of the concatenated shards.

use std::hash::{DefaultHasher, Hash, Hasher};

use proptest::prelude::*;
use twophase::cpu::{self, MergeTuning, MergesortTuning};

/// Most shards a property test draws (the machines of a multi-device sort).
const MAX_SHARDS: usize = 8;

/// Most keys in one shard of a property test.
const MAX_SHARD_LEN: usize = 60;

/// Distinct key values of a property test: few, so that ties cross shard boundaries.
const KEY_VALUES: u32 = 6;

/// 1 to [`MAX_SHARDS`] shards of unequal lengths (some empty) of duplicate-heavy keys.
fn shards() -> impl Strategy<Value = Vec<Vec<u32>>> {
    let shard = prop::collection::vec(0..KEY_VALUES, 0..MAX_SHARD_LEN);
    let empty_or_not = prop_oneof![1 => Just(Vec::new()), 3 => shard];
    prop::collection::vec(empty_or_not, 1..=MAX_SHARDS)
}

/// The size of each of `shards` output shards of `total` keys: ranks `[i n / p, (i + 1) n / p)`.
fn split_sizes(total: usize, shards: usize) -> Vec<usize> {
    (0..shards)
        .map(|i| (i + 1) * total / shards - i * total / shards)
        .collect()
}

/// Each shard's keys tagged with their global position in the concatenated input.
fn tags(shards: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut next = 0u32;
    shards
        .iter()
        .map(|shard| {
            let tagged = (next..next + shard.len() as u32).collect();
            next += shard.len() as u32;
            tagged
        })
        .collect()
}

/// The output shards' sizes and their concatenation.
fn sizes_and_concat<T: Copy>(out: &[Vec<T>]) -> (Vec<usize>, Vec<T>) {
    (out.iter().map(Vec::len).collect(), out.concat())
}

/// Every shard sorted (std's stable sort), as a merge takes its input.
fn sorted_each(shards: &[Vec<u32>]) -> Vec<Vec<u32>> {
    shards
        .iter()
        .map(|shard| {
            let mut sorted = shard.clone();
            sorted.sort();
            sorted
        })
        .collect()
}

/// A comparator that is not a strict weak order: std's (fixed-key) hash of a seed and both keys.
fn hash_less(seed: u64) -> impl Fn(&u32, &u32) -> bool + Sync {
    move |a: &u32, b: &u32| {
        let mut hasher = DefaultHasher::new();
        (seed, a, b).hash(&mut hasher);
        hasher.finish() & 1 == 0
    }
}

/// What a sharded sort or merge of pairs must return: the output shards' sizes and std's stable
/// sort by key of the concatenated pairs, as keys and values.
struct Expected {
    sizes: Vec<usize>,
    keys: Vec<u32>,
    values: Vec<u32>,
}

impl Expected {
    /// For key shards `keys` with value shards `values`.
    fn of_pairs(keys: &[Vec<u32>], values: &[Vec<u32>]) -> Self {
        let mut pairs: Vec<(u32, u32)> = keys.concat().into_iter().zip(values.concat()).collect();
        pairs.sort_by_key(|&(key, _)| key);
        let (keys_out, values_out): (Vec<u32>, Vec<u32>) = pairs.into_iter().unzip();
        let sizes = split_sizes(keys_out.len(), keys.len());
        Expected {
            sizes,
            keys: keys_out,
            values: values_out,
        }
    }

    /// Whether `out` (key shards, value shards) is exactly this.
    fn check(&self, out: &(Vec<Vec<u32>>, Vec<Vec<u32>>)) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            sizes_and_concat(&out.0),
            (self.sizes.clone(), self.keys.clone())
        );
        prop_assert_eq!(
            sizes_and_concat(&out.1),
            (self.sizes.clone(), self.values.clone())
        );
        Ok(())
    }
}

/// `keys` and `values` as sorted `(key, value)` tuples: equal for two inputs exactly when one is
/// a permutation of the other's pairs.
fn pair_multiset(keys: &[u32], values: &[u32]) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_unstable();
    pairs
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Natural order and a closure: the concatenated output is std's stable sort of the
    /// concatenated input, each output shard has exactly its split's size, and each input shard
    /// is left sorted.
    #[test]
    fn sharded_sort_equals_std_stable_sort(input in shards()) {
        let mut want = input.concat();
        want.sort();
        let sizes = split_sizes(want.len(), input.len());
        let mut natural = input.clone();
        let out = cpu::sharded_sort(&mut natural);
        prop_assert_eq!(sizes_and_concat(&out), (sizes.clone(), want.clone()));
        prop_assert!(natural.iter().all(|shard| shard.is_sorted()));
        let mut by = input.clone();
        let out = cpu::sharded_sort_by(&mut by, |a: &u32, b: &u32| a < b);
        prop_assert_eq!(sizes_and_concat(&out), (sizes, want));
    }

    /// Key-value pairs with values tagged by global input position: equal keys come out in input
    /// order (by shard, then position), as std's stable sort of the concatenation puts them.
    #[test]
    fn sharded_sort_pairs_is_stable(input in shards()) {
        let values = tags(&input);
        let want = Expected::of_pairs(&input, &values);
        let (mut keys, mut vals) = (input.clone(), values.clone());
        want.check(&cpu::sharded_sort_pairs(&mut keys, &mut vals))?;
        let (mut keys, mut vals) = (input, values);
        want.check(&cpu::sharded_sort_pairs_by(&mut keys, &mut vals, |a: &u32, b: &u32| a < b))?;
    }

    /// A user comparator, descending by the first field of a tuple whose second field tags the
    /// input position: the result is std's stable `sort_by` with the same order.
    #[test]
    fn sharded_sort_by_a_user_comparator_is_stable(input in shards()) {
        let tagged: Vec<Vec<(u32, u32)>> = input
            .iter()
            .zip(tags(&input))
            .map(|(keys, tags)| keys.iter().copied().zip(tags).collect())
            .collect();
        let mut want = tagged.concat();
        want.sort_by_key(|pair| std::cmp::Reverse(pair.0));
        let mut shards = tagged;
        let out = cpu::sharded_sort_by(&mut shards, |a: &(u32, u32), b: &(u32, u32)| a.0 > b.0);
        prop_assert_eq!(sizes_and_concat(&out), (split_sizes(want.len(), input.len()), want));
    }

    /// The merge of p sorted shards: keys in natural order and by a closure, and pairs with
    /// tagged values, each the stable merge (earlier shards first on ties) cut at the exact split.
    #[test]
    fn sharded_merge_of_sorted_shards_is_the_stable_merge(input in shards()) {
        let runs = sorted_each(&input);
        let values = tags(&runs);
        let want = Expected::of_pairs(&runs, &values);
        let want_keys = (want.sizes.clone(), want.keys.clone());
        prop_assert_eq!(sizes_and_concat(&cpu::sharded_merge(&runs)), want_keys.clone());
        let by = cpu::sharded_merge_by(&runs, |a: &u32, b: &u32| a < b);
        prop_assert_eq!(sizes_and_concat(&by), want_keys);
        want.check(&cpu::sharded_merge_pairs(&runs, &values))?;
        want.check(&cpu::sharded_merge_pairs_by(&runs, &values, |a: &u32, b: &u32| a < b))?;
    }

    /// A comparator answering by a hash (no strict weak order), and unsorted shards given to the
    /// merge: every call returns a permutation of its input (pairs still together) with each
    /// output shard of its exact size, and nothing panics.
    #[test]
    fn any_comparator_and_unsorted_merge_input_give_permutations(
        input in shards(),
        seed in any::<u64>(),
    ) {
        let is_less = hash_less(seed);
        let values = tags(&input);
        let (keys_in, values_in) = (input.concat(), values.concat());
        let want = pair_multiset(&keys_in, &values_in);
        let sizes = split_sizes(keys_in.len(), input.len());
        let mut sorted_keys = keys_in.clone();
        sorted_keys.sort_unstable();
        let key_multiset = |out: &[Vec<u32>]| {
            let (sizes, mut keys) = sizes_and_concat(out);
            keys.sort_unstable();
            (sizes, keys)
        };

        let mut shards = input.clone();
        let out = cpu::sharded_sort_by(&mut shards, &is_less);
        prop_assert_eq!(key_multiset(&out), (sizes.clone(), sorted_keys.clone()));
        for order in [&is_less as &(dyn Fn(&u32, &u32) -> bool + Sync), &|a: &u32, b: &u32| a < b] {
            let out = cpu::sharded_merge_by(&input, order);
            prop_assert_eq!(key_multiset(&out), (sizes.clone(), sorted_keys.clone()));
            let (k, v) = cpu::sharded_merge_pairs_by(&input, &values, order);
            prop_assert_eq!(pair_multiset(&k.concat(), &v.concat()), want.clone());
            prop_assert_eq!(k.iter().map(Vec::len).collect::<Vec<_>>(), sizes.clone());
        }
        let (mut keys, mut vals) = (input.clone(), values.clone());
        let (k, v) = cpu::sharded_sort_pairs_by(&mut keys, &mut vals, &is_less);
        prop_assert_eq!(pair_multiset(&k.concat(), &v.concat()), want);
        prop_assert_eq!(v.iter().map(Vec::len).collect::<Vec<_>>(), sizes);
    }
}

/// No shards give no output shards; shards of no keys give as many empty output shards; one
/// shard is sorted on its own.
#[test]
fn empty_and_single_shards() {
    assert!(cpu::sharded_sort::<u32>(&mut []).is_empty());
    assert!(cpu::sharded_merge::<u32>(&[]).is_empty());
    let mut empty = vec![Vec::<u32>::new(); 3];
    assert_eq!(cpu::sharded_sort(&mut empty), vec![Vec::<u32>::new(); 3]);
    let mut one = vec![vec![3u32, 1, 2, 1]];
    assert_eq!(cpu::sharded_sort(&mut one), [[1, 1, 2, 3]]);
    let (k, v) = cpu::sharded_sort_pairs(&mut [vec![2u32, 1, 2]], &mut [vec!['a', 'b', 'c']]);
    assert_eq!((k, v), (vec![vec![1, 2, 2]], vec![vec!['b', 'a', 'c']]));
}

/// Shards of unequal sizes around and past the CPU tiles, with keys from a narrow range so that
/// long runs of ties span several tiles and output shards: the same as std's stable sort.
#[test]
fn shards_past_the_cpu_tiles_sort_as_std_does() {
    let lens = [
        MergesortTuning::TILE + 3,
        0,
        17,
        2 * MergeTuning::TILE + 1,
        MergeTuning::TILE - 1,
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next_key = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 1000) as u32
    };
    let input: Vec<Vec<u32>> = lens
        .iter()
        .map(|&len| (0..len).map(|_| next_key()).collect())
        .collect();
    let values = tags(&input);
    let want = Expected::of_pairs(&input, &values);
    let (mut keys, mut vals) = (input, values);
    let out = cpu::sharded_sort_pairs_by(&mut keys, &mut vals, |a, b| a < b);
    want.check(&out).unwrap();
}

/// Mismatched key and value shards are argument misuse, named in the panic.
#[test]
#[should_panic(expected = "`keys[1]` and `values[1]` must have the same length")]
fn pair_shards_of_different_lengths_panic() {
    let _ = cpu::sharded_merge_pairs(&[vec![1u32], vec![2]], &[vec![1u32], vec![]]);
}
