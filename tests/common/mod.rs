//! Shared support of the GPU integration tests: the GPU under test, a seeded RNG, inputs, drivers.
#![allow(dead_code)] // Each test file uses the part it needs.

use std::cmp::Ordering;
use std::fmt::Debug;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use twophase::cpu;
use twophase::gpu::{CudaComparator, DeviceComparator, DeviceKey, Gpu, GpuError, MergeBuffers};
use twophase_gpu::cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};
use twophase_gpu::merge::MergeValues;

pub mod bounds;
pub mod checks;

/// The GPU under test. A missing GPU is a failure, never a silent pass.
pub fn gpu() -> Gpu {
    match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("these tests need a CUDA GPU and found none: {e}"),
    }
}

/// The GPU under test, a fresh [`rng`] and a fresh scratch made by `scratch`.
pub fn setup<S>(scratch: fn() -> S) -> (Gpu, StdRng, S) {
    (gpu(), rng(), scratch())
}

/// A fresh random generator whose seed is printed, so a failure can be replayed.
pub fn rng() -> StdRng {
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    StdRng::seed_from_u64(seed)
}

/// A user key: compared by `key` only, `tag` rides along and proves stability.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rec {
    pub key: u32,
    pub tag: u32,
}

// SAFETY: `Rec` is `#[repr(C)]` plain data (two u32, no padding: bytemuck::Pod), valid for any
// bits the device writes, as cudarc's DeviceRepr asks.
unsafe impl DeviceRepr for Rec {}

/// A [`Rec`] with a tag no test input carries: what an output holds where a run forgot to write.
pub const REC_POISON: Rec = Rec {
    key: 0xDEAD_BEEF,
    tag: 0xDEAD_BEEF,
};

impl DeviceKey for Rec {
    const CUDA_TYPE: &'static str = "rec";
    const CUDA_DEFINITION: &'static str = "struct rec { unsigned int key; unsigned int tag; };";
}

/// A user comparator on [`Rec`]: descending by key, as a CUDA snippet and the same Rust predicate.
pub fn rec_key_descending() -> CudaComparator<Rec, fn(&Rec, &Rec) -> bool> {
    CudaComparator::new(
        "rec_key_desc",
        "return a.key > b.key;",
        |a: &Rec, b: &Rec| a.key > b.key,
    )
}

/// The keys of a differential test: `label` names them in messages, `comp` orders them,
/// `poison` fills outputs before a run, `draw` draws a random key and `few` one of a few
/// distinct keys.
pub struct KeyCase<'a, K, C> {
    pub label: &'a str,
    pub comp: &'a C,
    pub poison: K,
    pub draw: &'a dyn Fn(&mut StdRng) -> K,
    pub few: &'a dyn Fn(&mut StdRng) -> K,
}

impl<K: DeviceKey, C: DeviceComparator<K>> KeyCase<'_, K, C> {
    /// Two sorted inputs of every [`MergeShape`] at every size of `sizes`, passed with the CPU
    /// backend's merge of them to `check(a, b, expected, shape, what)` (`what` names the case in
    /// messages); returns the number of cases.
    pub fn for_each_merge(
        &self,
        sizes: &[usize],
        mut check: impl FnMut(&[K], &[K], &[K], MergeShape, &str),
    ) -> usize {
        let make = |rng: &mut StdRng, n, shape| {
            let (a, b) = merge_inputs(rng, (n, shape), self.comp, (self.draw, self.few));
            let expected = cpu::merge_by(&a, &b, |x: &K, y: &K| self.comp.is_less(x, y));
            (a, b, expected)
        };
        for_each_input(sizes, &MERGE_SHAPES, make, |(a, b, expected), shape, n| {
            let what = format!("{}, n = {n}, {shape:?}, |a| = {}", self.label, a.len());
            check(&a, &b, &expected, shape, &what);
        })
    }

    /// Keys of every [`Pattern`] at every size of `sizes`, passed with std's stable sort of them
    /// to `check(input, expected, pattern, what)` (`what` names the case in messages); returns
    /// the number of cases.
    pub fn for_each_sort(
        &self,
        sizes: &[usize],
        mut check: impl FnMut(&[K], &[K], Pattern, &str),
    ) -> usize {
        let make = |rng: &mut StdRng, n, pattern| {
            let input = keys(rng, n, pattern, self.comp, (self.draw, self.few));
            let mut expected = input.clone();
            expected.sort_by(order(self.comp));
            (input, expected)
        };
        for_each_input(sizes, &PATTERNS, make, |(input, expected), pattern, n| {
            let what = format!("{}, n = {n}, {pattern:?}", self.label);
            check(&input, &expected, pattern, &what);
        })
    }
}

/// `check(make(rng, n, kind), kind, n)` for every size `n` of `sizes` and every kind of input of
/// `kinds`, with one fresh [`rng`]; returns the number of cases.
fn for_each_input<S: Copy, I>(
    sizes: &[usize],
    kinds: &[S],
    mut make: impl FnMut(&mut StdRng, usize, S) -> I,
    mut check: impl FnMut(I, S, usize),
) -> usize {
    let mut rng = rng();
    for &n in sizes {
        for &kind in kinds {
            check(make(&mut rng, n, kind), kind, n);
        }
    }
    sizes.len() * kinds.len()
}

/// GPU tests, one per key type: `fn $name` runs `$check::<$key, _>` on the [`KeyCase`] of
/// `$label`, `$comp`, `$poison`, `$draw` and `$few`, where `$check` is a differential driver of
/// the test file.
#[allow(unused_macros)] // Each test file uses the part it needs.
macro_rules! key_type_tests {
    ($check:ident {
        $($name:ident: $key:ty, $label:literal, $comp:expr, $poison:expr, $draw:expr, $few:expr;)*
    }) => {$(
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $name() {
            $check::<$key, _>(&common::KeyCase {
                label: $label,
                comp: &$comp,
                poison: $poison,
                draw: &$draw,
                few: &$few,
            });
        }
    )*};
}
#[allow(unused_imports)] // Each test file uses the part it needs.
pub(crate) use key_type_tests;

/// Input patterns of the sort tests.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    Random,
    Sorted,
    Reversed,
    AllEqual,
    FewDistinct,
    OrganPipe,
}

pub const PATTERNS: [Pattern; 6] = [
    Pattern::Random,
    Pattern::Sorted,
    Pattern::Reversed,
    Pattern::AllEqual,
    Pattern::FewDistinct,
    Pattern::OrganPipe,
];

/// Shapes of the two sorted inputs of the merge tests.
#[derive(Clone, Copy, Debug)]
pub enum MergeShape {
    /// Random keys, split at a random point.
    Random,
    /// A few distinct keys: long runs of ties between A and B.
    FewDistinct,
    /// One key everywhere: every output is a tie.
    AllEqual,
    /// Every key of A at or below every key of B, and the other way round.
    ALow,
    AHigh,
    /// One side empty.
    AEmpty,
    BEmpty,
}

pub const MERGE_SHAPES: [MergeShape; 7] = [
    MergeShape::Random,
    MergeShape::FewDistinct,
    MergeShape::AllEqual,
    MergeShape::ALow,
    MergeShape::AHigh,
    MergeShape::AEmpty,
    MergeShape::BEmpty,
];

/// Two sorted inputs of `n` keys in all, of `shape`, from `draws`.
pub fn merge_inputs<K: DeviceKey, C: DeviceComparator<K>>(
    rng: &mut StdRng,
    (n, shape): (usize, MergeShape),
    comp: &C,
    draws: Draws<K>,
) -> (Vec<K>, Vec<K>) {
    let pattern = match shape {
        MergeShape::FewDistinct => Pattern::FewDistinct,
        MergeShape::AllEqual => Pattern::AllEqual,
        _ => Pattern::Random,
    };
    let mut all = keys(rng, n, pattern, comp, draws);
    let split = match shape {
        MergeShape::AEmpty => 0,
        MergeShape::BEmpty => n,
        _ => rng.gen_range(0..=n),
    };
    match shape {
        MergeShape::ALow => all.sort_by(order(comp)),
        MergeShape::AHigh => {
            all.sort_by(order(comp));
            all.rotate_left(n - split);
        }
        _ => {}
    }
    let mut b = all.split_off(split);
    all.sort_by(order(comp));
    b.sort_by(order(comp));
    (all, b)
}

/// The `Ordering` a comparator's Rust predicate defines (equal: neither is less).
pub fn order<K: DeviceKey, C: DeviceComparator<K>>(comp: &C) -> impl Fn(&K, &K) -> Ordering + '_ {
    twophase_gpu::compare::ordering(comp)
}

/// How a test draws keys: `(draw, few)`, a random key and one of a few distinct keys.
pub type Draws<'a, K> = (&'a dyn Fn(&mut StdRng) -> K, &'a dyn Fn(&mut StdRng) -> K);

/// `n` keys in `pattern`, from `draws`.
pub fn keys<K: DeviceKey, C: DeviceComparator<K>>(
    rng: &mut StdRng,
    n: usize,
    pattern: Pattern,
    comp: &C,
    (draw, few): Draws<K>,
) -> Vec<K> {
    let mut v: Vec<K> = match pattern {
        Pattern::FewDistinct => (0..n).map(|_| few(rng)).collect(),
        Pattern::AllEqual => {
            let k = draw(rng);
            vec![k; n]
        }
        _ => (0..n).map(|_| draw(rng)).collect(),
    };
    match pattern {
        Pattern::Sorted => v.sort_by(order(comp)),
        Pattern::Reversed => {
            v.sort_by(order(comp));
            v.reverse();
        }
        Pattern::OrganPipe => {
            v.sort_by(order(comp));
            let tail: Vec<K> = v[n / 2..].iter().rev().copied().collect();
            v.truncate(n / 2);
            v.extend(tail);
        }
        _ => {}
    }
    v
}

/// The pairs `(keys[i], values[i])` in std's stable sort by key: what a stable key-value sort
/// must return.
pub fn stable_sorted_pairs<K: Ord + Copy, V: Copy>(keys: &[K], values: &[V]) -> Vec<(K, V)> {
    let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    pairs
}

/// Whether two key slices are the same bytes (NaN payloads and signed zeros included).
pub fn same_bits<K: DeviceKey>(x: &[K], y: &[K]) -> bool {
    bytemuck::cast_slice::<K, u8>(x) == bytemuck::cast_slice::<K, u8>(y)
}

/// Upload at least one element (so that empty inputs still get a valid buffer).
pub fn upload<T: DeviceRepr + Clone>(gpu: &Gpu, host: &[T], filler: T) -> CudaSlice<T> {
    let data: Vec<T> = if host.is_empty() {
        vec![filler]
    } else {
        host.to_vec()
    };
    gpu.stream().clone_htod(&data).expect("upload")
}

/// Key `i` of a fresh random sequence drawn by SplitMix64 from `seed`: independent per index,
/// so billions of keys are drawn in parallel without a serial generator.
pub fn splitmix_u32(seed: u64, i: usize) -> u32 {
    let mut z = seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

/// Run `merge(a, b, out)` on device copies of `a` and `b` with an output of `a.len() + b.len()`
/// keys poisoned first, and return the output: a key the merge forgot to write shows as poison.
pub fn device_merge<K: DeviceKey + DeviceRepr>(
    gpu: &Gpu,
    a: &[K],
    b: &[K],
    poison: K,
    merge: impl FnOnce(&CudaView<K>, &CudaView<K>, &mut CudaViewMut<K>),
) -> Vec<K> {
    let n = a.len() + b.len();
    let da = upload(gpu, a, poison);
    let db = upload(gpu, b, poison);
    let mut out = upload(gpu, &vec![poison; n], poison);
    merge(
        &da.slice(..a.len()),
        &db.slice(..b.len()),
        &mut out.slice_mut(..n),
    );
    let mut host = gpu.stream().clone_dtoh(&out).expect("download");
    host.truncate(n);
    host
}

/// The device buffers of a key-value merge of `K` keys and `V` values, as views.
pub type PairViews<'a, K, V> = MergeBuffers<
    'a,
    CudaView<'a, K>,
    CudaView<'a, K>,
    CudaViewMut<'a, K>,
    MergeValues<'a, V, CudaView<'a, V>, CudaView<'a, V>, CudaViewMut<'a, V>>,
>;

/// Run `merge` on device copies of the pairs (`a`, `a_vals`) and (`b`, `b_vals`) with output
/// keys and values of `a.len() + b.len()` elements poisoned first, and return both outputs.
pub fn device_merge_pairs<K: DeviceKey + DeviceRepr, V: DeviceRepr + Copy>(
    gpu: &Gpu,
    (a, a_vals): (&[K], &[V]),
    (b, b_vals): (&[K], &[V]),
    (key_poison, value_poison): (K, V),
    merge: impl FnOnce(PairViews<'_, K, V>),
) -> (Vec<K>, Vec<V>) {
    let n = a.len() + b.len();
    let (da, dav) = (
        upload(gpu, a, key_poison),
        upload(gpu, a_vals, value_poison),
    );
    let (db, dbv) = (
        upload(gpu, b, key_poison),
        upload(gpu, b_vals, value_poison),
    );
    let mut ok = upload(gpu, &vec![key_poison; n], key_poison);
    let mut ov = upload(gpu, &vec![value_poison; n], value_poison);
    let views = (da.slice(..a.len()), dav.slice(..a_vals.len()));
    let (b_views, mut out_keys, mut out_vals) = (
        (db.slice(..b.len()), dbv.slice(..b_vals.len())),
        ok.slice_mut(..n),
        ov.slice_mut(..n),
    );
    merge(MergeBuffers::pairs(
        &views.0,
        &views.1,
        &b_views.0,
        &b_views.1,
        &mut out_keys,
        &mut out_vals,
    ));
    let s = gpu.stream();
    let (mut keys, mut vals) = (
        s.clone_dtoh(&ok).expect("download"),
        s.clone_dtoh(&ov).expect("download"),
    );
    keys.truncate(n);
    vals.truncate(n);
    (keys, vals)
}

/// Values that number each side of a merge in order, B's with the top bit set: `(A's, B's)`.
/// Merged with their keys, equal keys must come out A first, each side in order.
pub fn side_tags(a_len: usize, b_len: usize) -> (Vec<u32>, Vec<u32>) {
    (
        (0..a_len as u32).collect(),
        (0..b_len as u32).map(|i| (1 << 31) | i).collect(),
    )
}

/// `n` u32 keys in `pattern`: random keys, or one of `few` (`0..few`).
pub fn u32_pattern_keys(rng: &mut StdRng, n: usize, pattern: Pattern, few: u32) -> Vec<u32> {
    let few = |r: &mut StdRng| r.gen_range(0..few);
    keys(rng, n, pattern, &twophase::gpu::Less, (&|r| r.gen(), &few))
}

/// Two sorted u32 inputs of `n` keys in all, of `shape`: random keys, or one of 16.
pub fn u32_merge_inputs(rng: &mut StdRng, n: usize, shape: MergeShape) -> (Vec<u32>, Vec<u32>) {
    let few = |r: &mut StdRng| r.gen_range(0..16);
    merge_inputs(rng, (n, shape), &twophase::gpu::Less, (&|r| r.gen(), &few))
}

/// Keys in all of the large merge tests.
pub const LARGE_MERGE_KEYS: usize = 1 << 27;

/// The large merge tests' inputs: random and few-distinct u32 inputs of [`LARGE_MERGE_KEYS`]
/// keys in all, each as `(shape, a, b, the CPU backend's merge)`.
pub fn large_u32_merges(
    rng: &mut StdRng,
) -> impl Iterator<Item = (MergeShape, Vec<u32>, Vec<u32>, Vec<u32>)> + '_ {
    [MergeShape::Random, MergeShape::FewDistinct]
        .into_iter()
        .map(move |shape| {
            let (a, b) = u32_merge_inputs(rng, LARGE_MERGE_KEYS, shape);
            let expected = cpu::merge(&a, &b);
            (shape, a, b, expected)
        })
}

/// Two sorted [`Rec`] inputs of `n` keys in all, of `distinct` keys at most, sorted under
/// `comp` and tagged by [`side_tags`]: an exact comparison with the CPU merge proves stability.
pub fn tagged_rec_inputs<C: DeviceComparator<Rec>>(
    rng: &mut StdRng,
    n: usize,
    distinct: u32,
    comp: &C,
) -> (Vec<Rec>, Vec<Rec>) {
    let draw = |r: &mut StdRng| Rec {
        key: r.gen_range(0..=distinct - 1),
        tag: 0,
    };
    let (mut a, mut b) = merge_inputs(rng, (n, MergeShape::Random), comp, (&draw, &draw));
    let (a_tags, b_tags) = side_tags(a.len(), b.len());
    for (r, tag) in a.iter_mut().zip(a_tags).chain(b.iter_mut().zip(b_tags)) {
        r.tag = tag;
    }
    (a, b)
}

/// Floats in the total order, with NaN, -NaN, -0.0, +0.0 and infinities among the keys.
pub fn special_f32(r: &mut StdRng) -> f32 {
    match r.gen_range(0..10) {
        0 => f32::NAN,
        1 => -f32::NAN,
        2 => -0.0,
        3 => 0.0,
        4 => f32::INFINITY,
        5 => f32::NEG_INFINITY,
        _ => r.gen_range(-1e6..1e6),
    }
}

/// [`special_f32`] widened, half of them scaled past the range of `f32`.
pub fn special_f64(r: &mut StdRng) -> f64 {
    f64::from(special_f32(r)) * if r.gen() { 1.0 } else { 1e200 }
}

/// The message of an `InvalidInput` error, or a panic naming `what` for anything else.
pub fn invalid_input<T: Debug>(result: Result<T, GpuError>, what: &str) -> String {
    match result {
        Err(GpuError::InvalidInput(message)) => message,
        other => panic!("{what}: expected InvalidInput, got {other:?}"),
    }
}

/// Assert that `result` is an `InvalidInput` error whose message contains `expected`.
pub fn assert_invalid_input<T: Debug>(result: Result<T, GpuError>, what: &str, expected: &str) {
    let message = invalid_input(result, what);
    assert!(message.contains(expected), "{what}: {message}");
}

/// `v` sorted by value: the multiset to compare outputs with.
pub fn multiset<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v
}

/// The CUDA body of a comparator whose answer changes from call to call: the top bit of the clock
/// times a 64-bit odd constant. All 64 bits of the clock stay live: with only its low half used
/// (`(clock64() >> 3) & 1`), NVRTC 13.0's ptxas for sm_90 was seen to read the clock with a
/// 64-bit CS2R into an odd register, an illegal instruction that loses the context (a compiler
/// fault, docs/reliability.md "Known limits").
pub const CLOCK_COIN_BODY: &str =
    "return ((unsigned long long)clock64() * 0x9E3779B97F4A7C15ull) >> 63;";

/// A comparator on u32 given as a CUDA snippet and the same Rust predicate.
pub type U32Comparator = CudaComparator<u32, fn(&u32, &u32) -> bool>;

/// Comparators on u32 that are not strict weak orders: `<=` (not irreflexive) and a hash of both
/// keys (not transitive, not asymmetric). Deterministic: the textbook kernels and Batcher's fused
/// windows evaluate some comparisons more than once and rely on the same answer.
pub fn broken_u32_comparators() -> Vec<U32Comparator> {
    vec![
        CudaComparator::new("le", "return a <= b;", |a: &u32, b: &u32| a <= b),
        CudaComparator::new(
            "pair_hash",
            "return (((a * 2654435761u) ^ (b * 40503u)) >> 13) & 1;",
            |a: &u32, b: &u32| {
                ((a.wrapping_mul(2_654_435_761) ^ b.wrapping_mul(40503)) >> 13) & 1 == 1
            },
        ),
    ]
}
