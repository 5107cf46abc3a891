//! Property tests of the CPU backend against std on every input pattern and tile-edge size.

mod common;

use common::bounds::reference_bounds;
use proptest::prelude::*;
use twophase::cpu::{self, MergeTuning, MergesortTuning, SearchBound, SearchTuning};
use twophase::order::total_less_f32;

/// The input shapes every primitive is checked on.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    Random,
    Sorted,
    Reversed,
    AllEqual,
    FewDistinct,
}

fn pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        Just(Pattern::Random),
        Just(Pattern::Sorted),
        Just(Pattern::Reversed),
        Just(Pattern::AllEqual),
        Just(Pattern::FewDistinct),
    ]
}

/// Sizes 0 and 1, each side of a tile, and several tiles.
fn size(tile: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(tile - 1),
        Just(tile),
        Just(tile + 1),
        2..tile,
        (3 * tile - 5)..(5 * tile + 5),
    ]
}

/// Keys of `n` in `pattern`, from a seed (a small xorshift keeps generation fast at large sizes).
fn keys(pattern: Pattern, n: usize, seed: u64) -> Vec<u32> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    match pattern {
        Pattern::Random => (0..n).map(|_| next() as u32).collect(),
        Pattern::Sorted => (0..n as u32).collect(),
        Pattern::Reversed => (0..n as u32).rev().collect(),
        Pattern::AllEqual => vec![7; n],
        Pattern::FewDistinct => (0..n).map(|_| (next() % 4) as u32).collect(),
    }
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn merge_equals_std(pa in pattern(), pb in pattern(), na in size(MergeTuning::TILE), nb in size(MergeTuning::TILE), seed in any::<u64>()) {
        let a = sorted(keys(pa, na, seed));
        let b = sorted(keys(pb, nb, seed ^ 0x9e37));
        let got = cpu::merge(&a, &b);
        let mut expected: Vec<u32> = a.iter().chain(&b).copied().collect();
        expected.sort();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn merge_pairs_is_stable(pa in pattern(), pb in pattern(), na in size(MergeTuning::TILE), nb in size(MergeTuning::TILE), seed in any::<u64>()) {
        // Few distinct keys force ties across A and B; values record where each key came from.
        let a: Vec<u32> = sorted(keys(pa, na, seed)).into_iter().map(|k| k % 5).collect::<Vec<_>>();
        let a = sorted(a);
        let b = sorted(keys(pb, nb, seed ^ 1).into_iter().map(|k| k % 5).collect());
        let av: Vec<u64> = (0..a.len() as u64).collect();
        let bv: Vec<u64> = (0..b.len() as u64).map(|i| i + (1 << 40)).collect();
        let (k, v) = cpu::merge_pairs(&a, &av, &b, &bv);
        let mut expected: Vec<(u32, u64)> = a.iter().copied().zip(av.iter().copied()).chain(b.iter().copied().zip(bv.iter().copied())).collect();
        expected.sort_by_key(|p| p.0); // std's stable sort: A's pairs first, each in order
        let got: Vec<(u32, u64)> = k.into_iter().zip(v).collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn mergesort_equals_std(p in pattern(), n in size(MergesortTuning::TILE), seed in any::<u64>()) {
        let mut v = keys(p, n, seed);
        let expected = sorted(v.clone());
        cpu::mergesort(&mut v);
        prop_assert_eq!(v, expected);
    }

    #[test]
    fn mergesort_pairs_is_stable(p in pattern(), n in size(MergesortTuning::TILE), seed in any::<u64>()) {
        let mut k: Vec<u32> = keys(p, n, seed).into_iter().map(|x| x % 64).collect();
        let mut v: Vec<u32> = (0..n as u32).collect();
        let mut expected: Vec<(u32, u32)> = k.iter().copied().zip(v.iter().copied()).collect();
        expected.sort_by_key(|x| x.0);
        cpu::mergesort_pairs(&mut k, &mut v);
        let got: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn mergesort_by_descending_comparator(p in pattern(), n in size(MergesortTuning::TILE), seed in any::<u64>()) {
        let mut v = keys(p, n, seed);
        let mut expected = v.clone();
        expected.sort_by(|a, b| b.cmp(a));
        cpu::mergesort_by(&mut v, |a: &u32, b: &u32| a > b);
        prop_assert_eq!(v, expected);
    }

    #[test]
    fn sorted_search_equals_partition_point(pn in pattern(), ph in pattern(), nn in size(SearchTuning::TILE), nh in size(SearchTuning::TILE), seed in any::<u64>()) {
        let needles = sorted(keys(pn, nn, seed).into_iter().map(|x| x % 1000).collect());
        let haystack = sorted(keys(ph, nh, seed ^ 3).into_iter().map(|x| x % 1000).collect());
        let lower = cpu::sorted_search(&needles, &haystack, SearchBound::Lower);
        let upper = cpu::sorted_search(&needles, &haystack, SearchBound::Upper);
        let expected_lower = reference_bounds(&needles, &haystack, SearchBound::Lower, u32::lt);
        let expected_upper = reference_bounds(&needles, &haystack, SearchBound::Upper, u32::lt);
        prop_assert_eq!(lower, expected_lower);
        prop_assert_eq!(upper, expected_upper);
    }

    #[test]
    fn load_balance_search_matches_brute_force(
        sizes in prop_oneof![
            prop::collection::vec(0usize..4, 1..3000),           // many small, many empty
            prop::collection::vec(0usize..1, 1..100),            // all empty
            (1usize..50, 0usize..(3 * SearchTuning::TILE)).prop_map(|(n, giant)| {
                let mut v = vec![1; n]; v[n / 2] = giant; v   // one giant segment
            }),
        ]
    ) {
        let mut scan = Vec::new();
        let mut total = 0;
        for s in &sizes { scan.push(total); total += s; }
        let expected: Vec<(usize, usize)> = sizes.iter().enumerate().flat_map(|(s, &n)| (0..n).map(move |r| (s, r))).collect();
        prop_assert_eq!(cpu::load_balance_search_with_ranks(&scan, total), expected.clone());
        prop_assert_eq!(cpu::load_balance_search(&scan, total), expected.iter().map(|x| x.0).collect::<Vec<_>>());
        let values: Vec<u64> = (0..sizes.len() as u64).map(|s| s * 3 + 1).collect();
        prop_assert_eq!(cpu::interval_expand(&scan, &values, total), expected.iter().map(|x| values[x.0]).collect::<Vec<_>>());
    }
}

#[test]
fn floats_sort_in_total_order_with_nan_last() {
    let mut v = vec![
        3.0f32,
        f32::NAN,
        -0.0,
        0.0,
        -1.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
    ];
    let mut expected = v.clone();
    expected.sort_by(f32::total_cmp);
    cpu::mergesort_by(&mut v, total_less_f32);
    assert_eq!(
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert!(v.last().is_some_and(|x| x.is_nan()));
    assert!(v[3].is_sign_negative() && v[3] == 0.0 && v[5].is_sign_positive());
    // The call without a comparator sorts floats by the same total order.
    let mut plain = expected.clone();
    plain.reverse();
    cpu::mergesort(&mut plain);
    assert_eq!(
        plain.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn empty_inputs_everywhere() {
    assert!(cpu::merge::<u32>(&[], &[]).is_empty());
    let mut none: [u64; 0] = [];
    cpu::mergesort(&mut none);
    assert!(cpu::sorted_search::<u32>(&[], &[1, 2], SearchBound::Lower).is_empty());
    assert_eq!(
        cpu::sorted_search(&[5u32], &[], SearchBound::Upper),
        vec![0]
    );
    assert!(cpu::load_balance_search(&[], 0).is_empty());
    assert!(cpu::load_balance_search(&[0, 0, 0], 0).is_empty());
}

proptest! {
    /// A std-style `Ordering` comparator sorts exactly as `slice::sort_by` (stable: equal keys
    /// keep their order), keys alone and with values.
    #[test]
    fn sort_by_ordering_equals_std(keys in proptest::collection::vec(0u8..16, 0..3000)) {
        let tagged: Vec<(u8, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
        let mut got = tagged.clone();
        cpu::sort_by(&mut got, |a, b| b.0.cmp(&a.0));
        let mut want = tagged.clone();
        want.sort_by_key(|p| std::cmp::Reverse(p.0));
        prop_assert_eq!(&got, &want);
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..keys.len() as u32).collect();
        cpu::sort_pairs_by(&mut k, &mut v, |a, b| a.cmp(b));
        let mut pairs: Vec<(u8, u32)> = tagged;
        pairs.sort_by_key(|p| p.0);
        prop_assert_eq!(k, pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        prop_assert_eq!(v, pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    }
}

/// Rayon pool sizes for the sorts whose runs std sorts: one run per thread, so one thread (no
/// merge pass), two (one pass), three (two passes, a short last run), four and five.
const POOL_THREADS: [usize; 5] = [1, 2, 3, 4, 5];

/// Sizes around the tile-rounded run boundaries of the pools above, and below the size that
/// splits into runs at all.
fn std_run_sizes() -> Vec<usize> {
    let tile = MergesortTuning::TILE;
    vec![0, 1, 2 * tile - 1, 2 * tile + 1, 5 * tile + 3]
}

/// The natural-order sorts (std sorts the runs, merge passes join them) and the front door's
/// trusted comparators equal std's stable sort on every pool size, keys alone and with values.
#[test]
fn std_sorted_runs_merge_into_std_order_on_any_pool() {
    for threads in POOL_THREADS {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| {
            for n in std_run_sizes() {
                for p in [Pattern::Random, Pattern::Reversed, Pattern::FewDistinct] {
                    let input = keys(p, n, 0x5eed ^ n as u64);
                    let case = format!("{threads} threads, {n} keys, {p:?}");
                    let mut v = input.clone();
                    cpu::mergesort(&mut v);
                    assert_eq!(v, sorted(input.clone()), "cpu::mergesort, {case}");

                    let mut front = input.clone();
                    twophase::sort(&mut front).expect("twophase::sort on the CPU");
                    assert_eq!(front, v, "twophase::sort, {case}");

                    let floats: Vec<f32> = input
                        .iter()
                        .map(|&k| f32::from_bits(k.rotate_left(7)))
                        .collect();
                    let mut expected = floats.clone();
                    expected.sort_by(f32::total_cmp);
                    let bits = |f: &[f32]| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    let mut got = floats.clone();
                    cpu::mergesort(&mut got);
                    assert_eq!(bits(&got), bits(&expected), "cpu::mergesort f32, {case}");

                    // Few distinct keys so that stability shows in the values.
                    let mut k: Vec<u32> = input.iter().map(|x| x % 5).collect();
                    let mut values: Vec<u32> = (0..n as u32).collect();
                    let mut pairs: Vec<(u32, u32)> =
                        k.iter().copied().zip(values.iter().copied()).collect();
                    pairs.sort_by_key(|x| x.0);
                    let (mut k2, mut v2) = (k.clone(), values.clone());
                    cpu::mergesort_pairs(&mut k, &mut values);
                    let got: Vec<(u32, u32)> = k.into_iter().zip(values).collect();
                    assert_eq!(got, pairs, "cpu::mergesort_pairs, {case}");
                    twophase::sort_pairs_by(&mut k2, &mut v2, &twophase::gpu::Less)
                        .expect("twophase::sort_pairs_by on the CPU");
                    let got: Vec<(u32, u32)> = k2.into_iter().zip(v2).collect();
                    assert_eq!(got, pairs, "twophase::sort_pairs_by, {case}");
                }
            }
        });
    }
}
