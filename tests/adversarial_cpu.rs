//! Adversarial inputs for every CPU primitive and `*_any` call: a permutation or the named error.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use common::bounds::reference_bounds;
use proptest::prelude::*;
use twophase::cpu::{self, MergeTuning, MergesortTuning, SearchBound, SearchTuning};
use twophase::{
    CudaComparator, DeviceComparator, DeviceKey, Error as GpuError, IntervalMove, Less, TotalOrder,
};
use twophase_gpu::runtime::status::messages;

/// The size of the input that checks a primitive at 2^22 keys (release CI runs debug tests, so
/// only merge and sort get one).
const LARGE: usize = 1 << 22;

/// Sizes 0 and 1, each side of `tile`, and several tiles.
fn sizes(tile: usize) -> [usize; 6] {
    [0, 1, tile - 1, tile, tile + 1, 3 * tile + 5]
}

/// Percentages of NaN among the random floats: a few, and many.
const NAN_PERCENTS: [u64; 2] = [1, 30];

/// Random floats at each of [`NAN_PERCENTS`] and each size around `tile`, as `(size, floats)`.
fn float_inputs(rng: &mut XorShift, tile: usize) -> Vec<(usize, Vec<f32>)> {
    let mut inputs = Vec::new();
    for nan in NAN_PERCENTS {
        for n in sizes(tile) {
            inputs.push((n, rng.floats(n, nan)));
        }
    }
    inputs
}

/// A small xorshift generator: fast enough for millions of keys in a debug build.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        XorShift(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn keys(&mut self, n: usize, modulo: u32) -> Vec<u32> {
        (0..n)
            .map(|_| (self.next() % u64::from(modulo)) as u32)
            .collect()
    }
    /// Floats in [-1000, 1000) with `nan_percent` % NaNs of both signs, and signed zeros.
    fn floats(&mut self, n: usize, nan_percent: u64) -> Vec<f32> {
        (0..n)
            .map(|_| {
                let r = self.next();
                match r % 100 {
                    p if p < nan_percent => {
                        if r & (1 << 20) == 0 {
                            f32::NAN
                        } else {
                            -f32::NAN
                        }
                    }
                    99 => -0.0,
                    98 => 0.0,
                    _ => ((r >> 32) % 2000) as f32 - 1000.0 + 0.5,
                }
            })
            .collect()
    }
}

/// A mixing hash of one word.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The comparators that are not strict weak orders, on u32: `<=`, an answer at random, and an
/// answer by a hash of both keys.
#[derive(Clone, Copy, Debug)]
enum Bad {
    LessEqual,
    Random,
    Hash,
}

const BAD: [Bad; 3] = [Bad::LessEqual, Bad::Random, Bad::Hash];

/// The answers of the random comparator: a shared counter, hashed.
static COIN: AtomicU64 = AtomicU64::new(0);

impl Bad {
    fn is_less(self, a: &u32, b: &u32) -> bool {
        match self {
            Bad::LessEqual => a <= b,
            Bad::Random => mix(COIN.fetch_add(1, Ordering::Relaxed)) & 1 == 0,
            Bad::Hash => mix(u64::from(*a) << 32 | u64::from(*b)) & 1 == 0,
        }
    }
    fn comparator(self) -> impl DeviceComparator<u32> {
        CudaComparator::new("bad", "return a < b;", move |a: &u32, b: &u32| {
            self.is_less(a, b)
        })
    }
}

/// A user comparator `a < b` on floats: a partial order once NaN is present.
fn partial_f32() -> impl DeviceComparator<f32> {
    CudaComparator::new("partial", "return a < b;", |a: &f32, b: &f32| a < b)
}

/// Bit patterns, sorted: equal exactly when the inputs are permutations of each other.
trait Bits: Copy {
    fn bits(self) -> u64;
}

/// [`Bits`] of each type the tests compare, one a line: the type, then its bits as a `u64`.
macro_rules! bits {
    ($($t:ty => |$x:ident| $bits:expr;)+) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                let $x = self;
                $bits
            }
        }
    )+};
}

bits! {
    u32 => |x| u64::from(x);
    f32 => |x| u64::from(x.to_bits());
    (u32, u32) => |x| u64::from(x.0) << 32 | u64::from(x.1);
}

fn multiset<T: Bits>(items: impl IntoIterator<Item = T>) -> Vec<u64> {
    let mut bits: Vec<u64> = items.into_iter().map(Bits::bits).collect();
    bits.sort_unstable();
    bits
}

/// `twophase::sort_pairs_by` of `input`, each key carrying its index, under `comp`: it sorts or
/// names the inconsistent order, and the (key bits, index) pairs stay a permutation of the input's.
#[track_caller]
fn assert_sort_pairs_permutes<K: DeviceKey, C: DeviceComparator<K>>(
    input: &[K],
    comp: &C,
    key_bits: fn(K) -> u32,
    what: &str,
) {
    let mut keys = input.to_vec();
    let mut values: Vec<u32> = (0..input.len() as u32).collect();
    assert_ok_or_inconsistent(twophase::sort_pairs_by(&mut keys, &mut values, comp));
    let pairs: Vec<(u32, u32)> = keys.into_iter().map(key_bits).zip(values).collect();
    let input_pairs: Vec<(u32, u32)> = input.iter().copied().map(key_bits).zip(0..).collect();
    assert_permutation(&pairs, &[&input_pairs], what);
}

#[track_caller]
fn assert_permutation<T: Bits>(got: &[T], inputs: &[&[T]], what: &str) {
    let expected = multiset(inputs.iter().flat_map(|s| s.iter().copied()));
    assert!(
        multiset(got.iter().copied()) == expected,
        "{what}: not a permutation of the input ({} keys)",
        got.len()
    );
}

#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(result: Result<T, GpuError>, message: &str) {
    match result {
        Err(GpuError::InvalidInput(got)) => assert_eq!(got, message),
        other => panic!("expected InvalidInput({message:?}), got {other:?}"),
    }
}

#[track_caller]
fn assert_size_mismatch<T: std::fmt::Debug>(result: Result<T, GpuError>, what: &str) {
    match result {
        Err(GpuError::SizeMismatch { what: got, .. }) => assert_eq!(got, what),
        other => panic!("expected SizeMismatch({what}), got {other:?}"),
    }
}

/// Sort result of a `*_any` call under a comparator that may be inconsistent: `Ok`, or the
/// inconsistent-order error.
#[track_caller]
fn assert_ok_or_inconsistent(result: Result<(), GpuError>) {
    match result {
        Ok(()) => {}
        Err(GpuError::InvalidInput(message)) => {
            assert_eq!(message, messages::ORDER_INCONSISTENT)
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

/// The message of the panic `f` raises.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the call should panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// A valid call after a failed one: the backend is still healthy.
#[track_caller]
fn assert_next_valid_call_works() {
    let a: Vec<u32> = (0..100).map(|i| i * 2).collect();
    let b: Vec<u32> = (0..100).map(|i| i * 2 + 1).collect();
    let merged = twophase::merge_by(&a, &b, &Less).expect("a valid merge after a failed call");
    assert_eq!(merged, (0..200).collect::<Vec<u32>>());
    let mut keys: Vec<u32> = (0..300).rev().collect();
    twophase::sort_by(&mut keys, &Less).expect("a valid sort after a failed call");
    assert_eq!(keys, (0..300).collect::<Vec<u32>>());
}

fn total_sorted(mut v: Vec<f32>) -> Vec<f32> {
    v.sort_by(f32::total_cmp);
    v
}

fn bits_of(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn no_gpu_here_so_any_calls_run_on_the_cpu() {
    assert_eq!(twophase::backend(), twophase::Backend::Cpu);
}

#[test]
fn floats_with_nan_sort_in_total_order_without_a_comparator() {
    let mut rng = XorShift::new(11);
    for (n, input) in float_inputs(&mut rng, MergesortTuning::TILE) {
        let expected = total_sorted(input.clone());
        let mut keys = input.clone();
        cpu::mergesort(&mut keys);
        assert_eq!(bits_of(&keys), bits_of(&expected), "cpu::mergesort {n}");
        let mut keys = input.clone();
        twophase::sort_by(&mut keys, &TotalOrder).expect("total order is consistent");
        assert_eq!(bits_of(&keys), bits_of(&expected), "sort_by {n}");
        // Values travel with their keys: the sorted pairs are std's stable sort.
        let mut keys = input.clone();
        let mut values: Vec<u32> = (0..n as u32).collect();
        cpu::mergesort_pairs(&mut keys, &mut values);
        let mut pairs: Vec<(f32, u32)> = input.iter().copied().zip(0..).collect();
        pairs.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert_eq!(bits_of(&keys), bits_of(&expected), "mergesort_pairs {n}");
        assert!(values.iter().eq(pairs.iter().map(|p| &p.1)));
    }
}

#[test]
fn floats_with_nan_merge_and_search_in_total_order_without_a_comparator() {
    let mut rng = XorShift::new(12);
    for nan in NAN_PERCENTS {
        for n in sizes(MergeTuning::TILE) {
            let a = total_sorted(rng.floats(n, nan));
            let b = total_sorted(rng.floats(n / 2 + 3, nan));
            let expected = total_sorted(a.iter().chain(&b).copied().collect());
            assert_eq!(
                bits_of(&cpu::merge(&a, &b)),
                bits_of(&expected),
                "merge {n}"
            );
            let any = twophase::merge_by(&a, &b, &TotalOrder).expect("sorted by total order");
            assert_eq!(bits_of(&any), bits_of(&expected), "merge_by {n}");
            let av: Vec<u32> = (0..a.len() as u32).collect();
            let bv: Vec<u32> = (0..b.len() as u32).collect();
            let (keys, _) = cpu::merge_pairs(&a, &av, &b, &bv);
            assert_eq!(bits_of(&keys), bits_of(&expected), "merge_pairs {n}");
        }
        for n in sizes(SearchTuning::TILE) {
            let needles = total_sorted(rng.floats(n, nan));
            let haystack = total_sorted(rng.floats(n / 3 + 2, nan));
            for bound in [SearchBound::Lower, SearchBound::Upper] {
                let expected =
                    reference_bounds(&needles, &haystack, bound, |x, y| x.total_cmp(y).is_lt());
                assert_eq!(cpu::sorted_search(&needles, &haystack, bound), expected);
                let any = twophase::sorted_search_by(&needles, &haystack, bound, &TotalOrder);
                assert_eq!(any.expect("sorted by total order"), expected);
            }
        }
    }
}

#[test]
fn floats_with_nan_under_a_partial_order_stay_a_permutation() {
    let mut rng = XorShift::new(13);
    for (_, input) in float_inputs(&mut rng, MergesortTuning::TILE) {
        let mut keys = input.clone();
        cpu::mergesort_by(&mut keys, |a: &f32, b: &f32| a < b);
        assert_permutation(&keys, &[&input], "cpu::mergesort_by(<)");
        let mut keys = input.clone();
        assert_ok_or_inconsistent(twophase::sort_by(&mut keys, &partial_f32()));
        assert_permutation(&keys, &[&input], "sort_by(<)");
        assert_sort_pairs_permutes(&input, &partial_f32(), f32::to_bits, "sort_pairs_by(<)");
    }
    for nan in NAN_PERCENTS {
        for n in sizes(MergeTuning::TILE) {
            // Sorted by the total order: no adjacent pair is out of order under `<` either, so
            // the inputs pass the check and are merged under the partial order.
            let a = total_sorted(rng.floats(n, nan));
            let b = total_sorted(rng.floats(n + 7, nan));
            let merged = cpu::merge_by(&a, &b, |x: &f32, y: &f32| x < y);
            assert_permutation(&merged, &[&a, &b], "cpu::merge_by(<)");
            let merged = twophase::merge_by(&a, &b, &partial_f32()).expect("no pair out of order");
            assert_permutation(&merged, &[&a, &b], "merge_by(<)");
            // Unsorted floats with NaN under `<`: still a permutation from the CPU call.
            let (ua, ub) = (rng.floats(n, nan), rng.floats(n / 2, nan));
            let merged = cpu::merge_by(&ua, &ub, |x: &f32, y: &f32| x < y);
            assert_permutation(&merged, &[&ua, &ub], "cpu::merge_by(<) unsorted");
            let bounds = cpu::sorted_search_by(&ua, &ub, SearchBound::Lower, |x, y| x < y);
            assert!(bounds.iter().all(|&i| i <= ub.len()));
        }
    }
    assert_next_valid_call_works();
}

#[test]
fn comparators_that_are_not_strict_weak_orders_give_permutations() {
    let mut rng = XorShift::new(14);
    for bad in BAD {
        for n in sizes(MergesortTuning::TILE) {
            let input = rng.keys(n, if n % 2 == 0 { 50 } else { u32::MAX });
            let mut keys = input.clone();
            cpu::mergesort_by(&mut keys, |a, b| bad.is_less(a, b));
            assert_permutation(&keys, &[&input], &format!("cpu::mergesort_by {bad:?} {n}"));
            let mut keys = input.clone();
            assert_ok_or_inconsistent(twophase::sort_by(&mut keys, &bad.comparator()));
            assert_permutation(&keys, &[&input], &format!("sort_by {bad:?} {n}"));
            assert_next_valid_call_works();
            let mut keys = input.clone();
            let mut values: Vec<u32> = (0..n as u32).collect();
            cpu::mergesort_pairs_by(&mut keys, &mut values, |a, b| bad.is_less(a, b));
            let pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values).collect();
            let input_pairs: Vec<(u32, u32)> = input.iter().copied().zip(0..).collect();
            assert_permutation(&pairs, &[&input_pairs], "cpu::mergesort_pairs_by");
            assert_sort_pairs_permutes(&input, &bad.comparator(), |k| k, "sort_pairs_by");
        }
        for n in sizes(MergeTuning::TILE) {
            let mut a = rng.keys(n, 1000);
            let mut b = rng.keys(2 * n + 1, 1000);
            a.sort_unstable();
            b.sort_unstable();
            let merged = cpu::merge_by(&a, &b, |x, y| bad.is_less(x, y));
            assert_permutation(&merged, &[&a, &b], &format!("cpu::merge_by {bad:?} {n}"));
            match twophase::merge_by(&a, &b, &bad.comparator()) {
                Ok(merged) => assert_permutation(&merged, &[&a, &b], "merge_by"),
                Err(GpuError::InvalidInput(message)) => assert!(
                    [
                        messages::A_UNSORTED.to_owned(),
                        messages::B_UNSORTED.to_owned(),
                        format!("{}; {}", messages::A_UNSORTED, messages::B_UNSORTED)
                    ]
                    .contains(&message),
                    "{message}"
                ),
                Err(other) => panic!("{other:?}"),
            }
            let av: Vec<u32> = (0..a.len() as u32).collect();
            let bv: Vec<u32> = (0..b.len() as u32).map(|i| i | 1 << 31).collect();
            let (keys, values) = cpu::merge_pairs_by(&a, &av, &b, &bv, |x, y| bad.is_less(x, y));
            let pairs: Vec<(u32, u32)> = keys.into_iter().zip(values).collect();
            let ap: Vec<(u32, u32)> = a.iter().copied().zip(av.iter().copied()).collect();
            let bp: Vec<(u32, u32)> = b.iter().copied().zip(bv.iter().copied()).collect();
            assert_permutation(&pairs, &[&ap, &bp], "cpu::merge_pairs_by");
            for bound in [SearchBound::Lower, SearchBound::Upper] {
                let found = cpu::sorted_search_by(&a, &b, bound, |x, y| bad.is_less(x, y));
                assert_eq!(found.len(), a.len());
                assert!(
                    found.iter().all(|&i| i <= b.len()),
                    "search bound past the end"
                );
            }
        }
    }
    assert_next_valid_call_works();
}

#[test]
fn a_consistent_comparator_is_never_reported_inconsistent() {
    let mut rng = XorShift::new(15);
    let user_less = CudaComparator::new("user_less", "return a < b;", |a: &u32, b: &u32| a < b);
    for n in sizes(MergesortTuning::TILE) {
        for modulo in [7, u32::MAX] {
            let input = rng.keys(n, modulo);
            let mut expected = input.clone();
            expected.sort();
            for comp in [&user_less as &dyn DeviceComparator<u32>, &Less] {
                let mut keys = input.clone();
                twophase::sort_by(&mut keys, &comp).expect("a strict weak order");
                assert_eq!(keys, expected);
                let mut keys = input.clone();
                let mut values = input.clone();
                twophase::sort_pairs_by(&mut keys, &mut values, &comp).expect("consistent");
                assert_eq!(values, expected);
            }
        }
    }
}

#[test]
fn a_sort_detects_a_hash_comparator_and_still_returns_a_permutation() {
    let input = XorShift::new(21).keys(3 * MergesortTuning::TILE + 5, u32::MAX);
    let mut keys = input.clone();
    assert_invalid(
        twophase::sort_by(&mut keys, &Bad::Hash.comparator()),
        messages::ORDER_INCONSISTENT,
    );
    assert_permutation(&keys, &[&input], "sort_by(hash)");
    assert_next_valid_call_works();
}

#[test]
fn unsorted_merge_inputs_are_named_errors_on_any_and_permutations_on_cpu() {
    let mut rng = XorShift::new(16);
    for n in sizes(MergeTuning::TILE) {
        let sorted_a: Vec<u32> = (0..n as u32).collect();
        let unsorted_b: Vec<u32> = [100, 0].into_iter().chain(rng.keys(n, 100)).collect();
        let unsorted_a: Vec<u32> = (0..n as u32).rev().collect();
        let merged = cpu::merge(&unsorted_a, &unsorted_b);
        assert_permutation(&merged, &[&unsorted_a, &unsorted_b], "cpu::merge unsorted");
        let merged = cpu::merge_by(&sorted_a, &unsorted_b, |x, y| x < y);
        assert_permutation(&merged, &[&sorted_a, &unsorted_b], "cpu::merge_by unsorted");
        let mut out = vec![0; 2 * n + 2];
        cpu::merge_into_by(&unsorted_a, &unsorted_b, &mut out, |x, y| x < y);
        assert_permutation(&out, &[&unsorted_a, &unsorted_b], "cpu::merge_into_by");

        assert_invalid(
            twophase::merge_by(&sorted_a, &unsorted_b, &Less),
            messages::B_UNSORTED,
        );
        assert_next_valid_call_works();
        if n >= 2 {
            assert_invalid(
                twophase::merge_by(&unsorted_a, &sorted_a, &Less),
                messages::A_UNSORTED,
            );
            assert_invalid(
                twophase::merge_by(&unsorted_a, &unsorted_b, &Less),
                &format!("{}; {}", messages::A_UNSORTED, messages::B_UNSORTED),
            );
            let values = vec![0u64; n];
            assert_invalid(
                twophase::merge_pairs_by(&unsorted_a, &values, &sorted_a, &values, &Less),
                messages::A_KEYS_UNSORTED,
            );
            assert_next_valid_call_works();
            let (keys, vals) = cpu::merge_pairs(&unsorted_a, &sorted_a, &sorted_a, &unsorted_a);
            let pairs: Vec<(u32, u32)> = keys.into_iter().zip(vals).collect();
            let ap: Vec<(u32, u32)> = unsorted_a.iter().copied().zip(sorted_a.clone()).collect();
            let bp: Vec<(u32, u32)> = sorted_a.iter().copied().zip(unsorted_a.clone()).collect();
            assert_permutation(&pairs, &[&ap, &bp], "cpu::merge_pairs unsorted");
        }
        let values_b = vec![0u8; unsorted_b.len()];
        let values_a = vec![0u8; n];
        assert_invalid(
            twophase::merge_pairs_by(&sorted_a, &values_a, &unsorted_b, &values_b, &Less),
            messages::B_KEYS_UNSORTED,
        );
        assert_next_valid_call_works();
    }
}

#[test]
fn unsorted_needles_and_haystacks_are_named_errors_on_any_and_in_range_on_cpu() {
    let mut rng = XorShift::new(17);
    for n in sizes(SearchTuning::TILE) {
        // Each starts with a pair out of order, whatever the random keys after it.
        let needles: Vec<u32> = [1000, 0].into_iter().chain(rng.keys(n, 1000)).collect();
        let haystack: Vec<u32> = [1000, 0]
            .into_iter()
            .chain(rng.keys(n / 2 + 1, 1000))
            .collect();
        let mut sorted_needles = needles.clone();
        sorted_needles.sort();
        let mut sorted_haystack = haystack.clone();
        sorted_haystack.sort();
        for bound in [SearchBound::Lower, SearchBound::Upper] {
            let found = cpu::sorted_search(&needles, &haystack, bound);
            assert_eq!(found.len(), needles.len());
            assert!(found.iter().all(|&i| i <= haystack.len()));
            assert_invalid(
                twophase::sorted_search_by(&needles, &sorted_haystack, bound, &Less),
                messages::NEEDLES_UNSORTED,
            );
            assert_invalid(
                twophase::sorted_search_by(&sorted_needles, &haystack, bound, &Less),
                messages::HAYSTACK_UNSORTED,
            );
            assert_invalid(
                twophase::sorted_search_by(&needles, &haystack, bound, &Less),
                &format!(
                    "{}; {}",
                    messages::NEEDLES_UNSORTED,
                    messages::HAYSTACK_UNSORTED
                ),
            );
            let found = twophase::sorted_search_by(&sorted_needles, &sorted_haystack, bound, &Less)
                .expect("a valid search after failed ones");
            assert_eq!(
                found,
                cpu::sorted_search(&sorted_needles, &sorted_haystack, bound)
            );
        }
    }
}

/// Scans that are not exclusive scans of segment sizes within `total`.
fn bad_scans() -> Vec<(Vec<usize>, usize)> {
    vec![
        (vec![0, 5, 3, 8], 10),    // decreasing
        (vec![0, 2, 1], 2),        // decreasing at the end
        (vec![1, 2, 3], 10),       // not starting at 0
        (vec![7], 10),             // not starting at 0, one segment
        (vec![0, 4, 11], 10),      // past the total
        (vec![0, usize::MAX], 10), // far past the total
        (vec![], 3),               // no segment for the work items
        (
            (0..3 * SearchTuning::TILE).rev().collect(),
            3 * SearchTuning::TILE,
        ), // all decreasing
    ]
}

#[test]
fn bad_scans_panic_with_a_reason_on_cpu_and_are_named_errors_on_any() {
    for (scan, total) in bad_scans() {
        let message = panic_message(|| {
            cpu::load_balance_search(&scan, total);
        });
        assert!(
            message.contains("the scan must"),
            "{scan:?} {total}: {message}"
        );
        let message = panic_message(|| {
            cpu::load_balance_search_with_ranks(&scan, total);
        });
        assert!(message.contains("the scan must"), "{message}");
        let values = vec![1u32; scan.len()];
        let message = panic_message(|| {
            cpu::interval_expand(&scan, &values, total);
        });
        assert!(message.contains("the scan must"), "{message}");

        assert_invalid(
            twophase::load_balance_search(&scan, total),
            messages::SCAN_INVALID,
        );
        assert_invalid(
            twophase::load_balance_search_with_ranks(&scan, total),
            messages::SCAN_INVALID,
        );
        assert_invalid(
            twophase::interval_expand(&scan, &values, total),
            messages::SCAN_INVALID,
        );
        let input = vec![1u32; total];
        let mut output = vec![0u32; total];
        assert_invalid(
            twophase::interval_move(IntervalMove::new(&scan, total), &input, &mut output),
            messages::SCAN_INVALID,
        );
        assert!(output.iter().all(|&x| x == 0), "written before the check");
        assert_eq!(
            twophase::load_balance_search(&[0, 1, 1], 3).expect("a valid scan"),
            vec![0, 2, 2]
        );
    }
    let message = panic_message(|| {
        cpu::load_balance_search(&[0, 3, 2], 5);
    });
    assert_eq!(message, "the scan must start at 0 and not decrease");
}

#[test]
fn load_balance_at_tile_sizes_matches_brute_force() {
    for total in sizes(SearchTuning::TILE) {
        for segments in [1, 2, 1000] {
            let scan: Vec<usize> = (0..segments).map(|s| s * total / segments).collect();
            let expected: Vec<usize> = (0..total)
                .map(|i| scan.partition_point(|&start| start <= i) - 1)
                .collect();
            assert_eq!(cpu::load_balance_search(&scan, total), expected);
            assert_eq!(
                twophase::load_balance_search(&scan, total).expect("valid"),
                expected
            );
            let values: Vec<u64> = (0..segments as u64).collect();
            let expanded = twophase::interval_expand(&scan, &values, total).expect("valid");
            assert!(expanded.iter().zip(&expected).all(|(&v, &s)| v == s as u64));
        }
    }
}

#[test]
fn interval_move_rejects_every_bad_position_before_writing() {
    let scan = vec![0, 3, 3, 7];
    let total = 10;
    let input: Vec<u32> = (100..110).collect();
    let fresh = || vec![0u32; 12];
    let gather_ok = vec![0, 9, 2, 7];
    let scatter_ok = vec![9, 0, 0, 4];
    /// Gather positions, scatter positions, and the error they must give.
    type Case = (Option<Vec<usize>>, Option<Vec<usize>>, &'static str);
    let cases: Vec<Case> = vec![
        (Some(vec![0, 0, 0, 8]), None, messages::GATHER_INVALID), // 8 + 3 > 10
        (
            Some(vec![0, 0, 0, usize::MAX]),
            None,
            messages::GATHER_INVALID,
        ),
        (Some(vec![0, 11, 0, 0]), None, messages::GATHER_INVALID), // empty segment past the end
        (
            Some(vec![usize::MAX - 1, 0, 0, 0]),
            None,
            messages::GATHER_INVALID,
        ),
        (None, Some(vec![10, 0, 0, 0]), messages::SCATTER_INVALID), // 10 + 3 > 12
        (
            None,
            Some(vec![0, 0, 0, usize::MAX]),
            messages::SCATTER_INVALID,
        ),
        (
            None,
            Some(vec![0, 0, 0, usize::MAX - 2]),
            messages::SCATTER_INVALID,
        ),
        (
            Some(gather_ok.clone()),
            Some(vec![0, usize::MAX, 0, 0]),
            messages::SCATTER_INVALID,
        ),
    ];
    for (gather, scatter, message) in cases {
        let input_for = if gather.is_some() {
            &input[..]
        } else {
            &input[..total]
        };
        let mut output = fresh();
        let result = if scatter.is_some() {
            twophase::interval_move(
                IntervalMove {
                    gather: gather.as_deref(),
                    scatter: scatter.as_deref(),
                    ..IntervalMove::new(&scan, total)
                },
                input_for,
                &mut output,
            )
        } else {
            let mut exact = vec![0u32; total];
            let result = twophase::interval_move(
                IntervalMove {
                    gather: gather.as_deref(),
                    scatter: None,
                    ..IntervalMove::new(&scan, total)
                },
                input_for,
                &mut exact,
            );
            assert!(exact.iter().all(|&x| x == 0), "written before the check");
            result
        };
        assert_invalid(result, message);
        assert!(output.iter().all(|&x| x == 0), "written before the check");
    }
    // Lengths: one position per segment; without positions, exactly `total` elements.
    let mut output = fresh();
    assert_size_mismatch(
        twophase::interval_move(
            IntervalMove::new(&scan, total)
                .gather(&[0, 0])
                .scatter(&scatter_ok),
            &input,
            &mut output,
        ),
        "gather positions",
    );
    assert_size_mismatch(
        twophase::interval_move(
            IntervalMove::new(&scan, total)
                .gather(&gather_ok)
                .scatter(&[0; 5]),
            &input,
            &mut output,
        ),
        "scatter positions",
    );
    assert_size_mismatch(
        twophase::interval_move(
            IntervalMove::new(&scan, total).scatter(&scatter_ok),
            &input[..9],
            &mut output,
        ),
        "gather positions",
    );
    assert_size_mismatch(
        twophase::interval_move(
            IntervalMove::new(&scan, total).gather(&gather_ok),
            &input,
            &mut output,
        ),
        "scatter positions",
    );
    assert!(output.iter().all(|&x| x == 0), "written before the check");
    // And a valid move after the failures: segment s of size n moves input[gather[s]..+n] to
    // output[scatter[s]..+n].
    twophase::interval_move(
        IntervalMove::new(&scan, total)
            .gather(&gather_ok)
            .scatter(&scatter_ok),
        &input,
        &mut output,
    )
    .expect("a valid move");
    let mut expected = fresh();
    expected[9..12].copy_from_slice(&input[0..3]);
    expected[0..4].copy_from_slice(&input[2..6]);
    expected[4..7].copy_from_slice(&input[7..10]);
    assert_eq!(output, expected);
}

#[test]
fn interval_move_at_tile_sizes_matches_brute_force() {
    for total in sizes(SearchTuning::TILE) {
        let scan: Vec<usize> = (0..4).map(|s| s * total / 4).collect();
        let input: Vec<u32> = (0..total as u32).collect();
        // Reverse the order of the segments in the output.
        let size = |s: usize| scan.get(s + 1).copied().unwrap_or(total) - scan[s];
        let scatter: Vec<usize> = (0..4).map(|s| total - scan[s] - size(s)).collect();
        let mut output = vec![0u32; total];
        twophase::interval_move(
            IntervalMove::new(&scan, total).scatter(&scatter),
            &input,
            &mut output,
        )
        .expect("valid");
        let mut expected = vec![0u32; total];
        for s in 0..4 {
            expected[scatter[s]..scatter[s] + size(s)]
                .copy_from_slice(&input[scan[s]..scan[s] + size(s)]);
        }
        assert_eq!(output, expected);
    }
}

#[test]
fn mismatched_lengths_are_errors_on_any_and_panics_with_a_reason_on_cpu() {
    let keys: Vec<u32> = (0..10).collect();
    let short = vec![0u64; 9];
    let long = vec![0u64; 10];
    assert_size_mismatch(
        twophase::merge_pairs_by(&keys, &short, &keys, &long, &Less),
        "A values",
    );
    assert_size_mismatch(
        twophase::merge_pairs_by(&keys, &long, &keys, &short, &Less),
        "B values",
    );
    assert_next_valid_call_works();
    let mut unsorted: Vec<u32> = (0..10).rev().collect();
    let mut values = vec![0u64; 11];
    assert_size_mismatch(
        twophase::sort_pairs_by(&mut unsorted, &mut values, &Less),
        "mergesort values",
    );
    assert_eq!(
        unsorted,
        (0..10).rev().collect::<Vec<u32>>(),
        "moved on error"
    );
    assert_next_valid_call_works();
    assert_size_mismatch(
        twophase::interval_expand(&[0, 1, 2], &[1u32, 2], 5),
        "values (one per segment)",
    );

    let message = panic_message(|| {
        cpu::merge_pairs(&keys, &short, &keys, &long);
    });
    assert!(message.contains("`a_keys` and `a_values`"), "{message}");
    let message = panic_message(|| {
        cpu::merge_pairs_by(&keys, &long, &keys, &short, |a, b| a < b);
    });
    assert!(message.contains("`b_keys` and `b_values`"), "{message}");
    let message = panic_message(|| {
        cpu::mergesort_pairs(&mut unsorted, &mut values);
    });
    assert!(message.contains("`keys` and `values`"), "{message}");
    let message = panic_message(|| {
        cpu::merge_into_by(&keys, &keys, &mut [0; 19], |a, b| a < b);
    });
    assert!(message.contains("a.len() + b.len()"), "{message}");
    let message = panic_message(|| {
        cpu::interval_expand(&[0, 1, 2], &[1u32, 2], 5);
    });
    assert!(message.contains("one value per segment"), "{message}");
}

#[test]
fn large_sort_under_a_partial_order_stays_a_permutation() {
    // 2^22 floats with 1% NaN under `<`: the input that lost 99.8% of its NaNs on the GPU.
    let mut keys = XorShift::new(18).floats(LARGE, 1);
    let original = multiset(keys.iter().copied());
    assert_ok_or_inconsistent(twophase::sort_by(&mut keys, &partial_f32()));
    assert!(
        multiset(keys.iter().copied()) == original,
        "sort under < lost keys"
    );
    assert_next_valid_call_works();
}

#[test]
fn large_merge_of_unsorted_inputs_under_a_random_order_stays_a_permutation() {
    let mut rng = XorShift::new(19);
    let a = rng.keys(LARGE / 2, u32::MAX);
    let b = rng.keys(LARGE / 2, u32::MAX);
    let merged = cpu::merge_by(&a, &b, |x, y| Bad::Random.is_less(x, y));
    assert_permutation(&merged, &[&a, &b], "large random merge");
    assert_invalid(
        twophase::merge_by(&a, &b, &Less),
        &format!("{}; {}", messages::A_UNSORTED, messages::B_UNSORTED),
    );
    assert_next_valid_call_works();
}

#[test]
fn many_tiles_of_floats_sort_in_total_order_without_a_comparator() {
    let input = XorShift::new(20).floats(LARGE / 4, 30);
    let mut keys = input.clone();
    cpu::mergesort(&mut keys);
    assert_eq!(bits_of(&keys), bits_of(&total_sorted(input)));
}

/// A comparator that is not a strict weak order, drawn at random: which rule it follows and
/// the seed it hashes.
fn inconsistent() -> impl Strategy<Value = (u8, u64)> {
    (0u8..4, any::<u64>())
}

fn answer(rule: u8, seed: u64, a: u32, b: u32) -> bool {
    match rule {
        0 => a <= b,
        1 => mix(seed ^ (u64::from(a) << 32 | u64::from(b))) & 1 == 0,
        2 => mix(seed ^ COIN.fetch_add(1, Ordering::Relaxed)).is_multiple_of(3),
        _ => (a ^ seed as u32).count_ones() < (b ^ (seed >> 32) as u32).count_ones() + 1,
    }
}

fn input_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..64,
        1000usize..1100,
        Just(MergesortTuning::TILE + 1),
        (2 * MergeTuning::TILE - 3)..(2 * MergeTuning::TILE + 3),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_inconsistent_comparators_always_give_permutations(
        (rule, seed) in inconsistent(),
        n in input_len(),
        m in input_len(),
        sort_a in any::<bool>(),
    ) {
        let mut rng = XorShift::new(seed);
        let mut a = rng.keys(n, 1 + (seed % 1000) as u32);
        let b = rng.keys(m, u32::MAX);
        if sort_a {
            a.sort_unstable();
        }
        let is_less = |x: &u32, y: &u32| answer(rule, seed, *x, *y);

        let mut keys = a.clone();
        cpu::mergesort_by(&mut keys, is_less);
        prop_assert_eq!(multiset(keys.iter().copied()), multiset(a.iter().copied()));

        let mut keys = a.clone();
        let mut values: Vec<u32> = (0..n as u32).collect();
        cpu::mergesort_pairs_by(&mut keys, &mut values, is_less);
        let pairs: Vec<(u32, u32)> = keys.into_iter().zip(values).collect();
        let input_pairs: Vec<(u32, u32)> = a.iter().copied().zip(0..).collect();
        prop_assert_eq!(multiset(pairs), multiset(input_pairs));

        let merged = cpu::merge_by(&a, &b, is_less);
        prop_assert_eq!(multiset(merged), multiset(a.iter().chain(&b).copied()));

        let av: Vec<u32> = (0..n as u32).collect();
        let bv: Vec<u32> = (0..m as u32).map(|i| i | 1 << 31).collect();
        let (keys, values) = cpu::merge_pairs_by(&a, &av, &b, &bv, is_less);
        let pairs: Vec<(u32, u32)> = keys.into_iter().zip(values).collect();
        let expected: Vec<(u32, u32)> = a.iter().copied().zip(av).chain(b.iter().copied().zip(bv)).collect();
        prop_assert_eq!(multiset(pairs), multiset(expected));

        for bound in [SearchBound::Lower, SearchBound::Upper] {
            let found = cpu::sorted_search_by(&a, &b, bound, is_less);
            prop_assert_eq!(found.len(), a.len());
            prop_assert!(found.iter().all(|&i| i <= b.len()));
        }

        let comp = CudaComparator::new("random_rule", "return a < b;", is_less);
        let mut keys = a.clone();
        let result = twophase::sort_by(&mut keys, &comp);
        prop_assert!(match &result {
            Ok(()) => true,
            Err(GpuError::InvalidInput(message)) => message == messages::ORDER_INCONSISTENT,
            Err(_) => false,
        }, "{:?}", result);
        prop_assert_eq!(multiset(keys), multiset(a.iter().copied()));
    }
}
