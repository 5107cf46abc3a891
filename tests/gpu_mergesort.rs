//! GPU mergesort tests (need a CUDA GPU; run with --include-ignored): against std's stable sort.

mod common;

use common::{
    gpu, key_type_tests, rec_key_descending, rng, same_bits, setup, special_f32, special_f64,
    splitmix_u32, stable_sorted_pairs, u32_pattern_keys, KeyCase, Rec, PATTERNS, REC_POISON,
};
use rand::rngs::StdRng;
use rand::Rng;
use rayon::prelude::*;
use twophase::gpu::{
    DeviceComparator, DeviceKey, FloatKey, Gpu, Greater, Less, MergesortScratch, MergesortTuning,
    SortBuffers, TotalOrder, TotalOrderDesc, TrustedComparator,
};
use twophase_gpu::cudarc::driver::DeviceRepr;

/// Sizes 0, 1, around one tile, powers of two ± 1 and many tiles.
fn sizes(tuning: MergesortTuning) -> Vec<usize> {
    let tile = tuning.tile();
    let mut v = vec![0, 1, 2, tile - 1, tile, tile + 1, 3 * tile + 7];
    for p in [10, 16, 20] {
        v.extend([(1 << p) - 1, 1 << p, (1 << p) + 1]);
    }
    v
}

/// Sort on the device through the cudarc-buffer API. The scratch is poisoned first by sorting
/// `n` poison keys with it, so an output the sort forgot to write shows up as poison.
fn device_sort<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(
    gpu: &Gpu,
    scratch: &mut MergesortScratch,
    host: &[K],
    comp: &C,
    poison: K,
) -> Vec<K> {
    if host.is_empty() {
        let mut empty = gpu.stream().clone_htod(&[poison]).expect("upload");
        gpu.sort_device(
            SortBuffers::keys(&mut empty.slice_mut(..0)),
            comp,
            None,
            scratch,
        )
        .expect("empty sort");
        return Vec::new();
    }
    let mut poisoned = gpu
        .stream()
        .clone_htod(&vec![poison; host.len()])
        .expect("upload poison");
    gpu.sort_device(SortBuffers::keys(&mut poisoned), comp, None, scratch)
        .expect("poison sort");
    let mut keys = gpu.stream().clone_htod(host).expect("upload");
    gpu.sort_device(SortBuffers::keys(&mut keys), comp, None, scratch)
        .expect("sort_device");
    gpu.stream().clone_dtoh(&keys).expect("download")
}

/// The device sort (scratch poisoned) and the CPU backend against std's stable sort, for every
/// size and pattern of `case`'s keys.
fn differential<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(case: &KeyCase<K, C>) {
    let (gpu, mut scratch) = (gpu(), MergesortScratch::new());
    let key_bytes = std::mem::size_of::<K>();
    let mut sizes = sizes(MergesortTuning::for_types(key_bytes, 0));
    // Where the type's two-way tile takes register bounds (4- and 8-byte keys alone), a sort past
    // the small sorts' four blocks an SM (u32 at 2^21 takes 64 registers, u64 80).
    if MergesortTuning::for_small_sorts_bounded::<64>(key_bytes, 0)
        != MergesortTuning::for_small_sorts(key_bytes, 0)
    {
        sizes.push((1 << 21) + 1);
    }
    case.for_each_sort(&sizes, |input, expected, _, what| {
        let mut cpu = input.to_vec();
        twophase::cpu::mergesort_by(&mut cpu, |x: &K, y: &K| case.comp.is_less(x, y));
        assert!(same_bits(&cpu, expected), "{what}: CPU backend differs");
        let got = device_sort(&gpu, &mut scratch, input, case.comp, case.poison);
        assert!(same_bits(&got, expected), "{what}: GPU differs from std");
    });
}

key_type_tests!(differential {
    mergesort_u32: u32, "u32", Less, 0xDEAD_BEEF, |r| r.gen(), |r| r.gen_range(0..4);
    mergesort_u32_descending: u32, "u32 desc", Greater, 0xDEAD_BEEF,
        |r| r.gen(), |r| r.gen_range(0..4);
    mergesort_u64: u64, "u64", Less, u64::MAX - 3, |r| r.gen(), |r| r.gen_range(0..4);
    mergesort_i32: i32, "i32", Less, i32::MIN + 5, |r| r.gen(), |r| r.gen_range(-2..2);
    mergesort_f32_total_order_with_nan_and_signed_zero: f32, "f32", TotalOrder, 1.2345e-7,
        special_f32, |r| [f32::NAN, -0.0, 0.0, 1.0][r.gen_range(0..4)];
    mergesort_f64: f64, "f64", TotalOrder, -7.5e300,
        |r| if r.gen_range(0..20) == 0 { f64::NAN } else { r.gen() },
        |r| [-0.0, 0.0, 2.5][r.gen_range(0..3)];
    // Equivalent keys that differ (a user order on the top 8 bits): only a stable block sort
    // (stable_slot_sort in full tiles) gives std's order.
    mergesort_u32_top_bits_user_comparator: u32, "u32 top 8 bits", top_bits_less(), 0xDEAD_BEEF,
        |r| r.gen(), |r| (r.gen_range(0..4u32) << 24) | r.gen_range(0..1024u32);
});

/// A user comparator on u32 keys' top 8 bits alone: distinct keys are equivalent.
fn top_bits_less() -> twophase::gpu::CudaComparator<u32, fn(&u32, &u32) -> bool> {
    twophase::gpu::CudaComparator::new(
        "top8_less",
        "return (a >> 24) < (b >> 24);",
        |a: &u32, b: &u32| (a >> 24) < (b >> 24),
    )
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_user_struct_custom_comparator_is_stable() {
    let (gpu, mut rng) = (gpu(), rng());
    let comp = rec_key_descending();
    let tuning = MergesortTuning::for_types(std::mem::size_of::<Rec>(), 0);
    // The shipped tuning's first size with four-way passes, where each quad cut resolves ties
    // between four runs under the user comparator.
    let four_way = tuning.four_way_min_keys + 3;
    assert!(
        tuning.pass_plan(four_way, false).four_way > 0,
        "{four_way} keys take no four-way pass"
    );
    // SAFETY: descending by `key` is a strict weak order on every `Rec`, in CUDA and Rust alike.
    let vouched = unsafe { TrustedComparator::new(rec_key_descending()) };
    // The checked kernels (a user comparator), then the unchecked ones (vouched for).
    let comps: [&dyn DeviceComparator<Rec>; 2] = [&comp, &vouched];
    for (n, comp) in sizes(tuning)
        .into_iter()
        .chain([four_way])
        .flat_map(|n| comps.map(|comp| (n, comp)))
    {
        for distinct in [1u32, 5, u32::MAX] {
            let input: Vec<Rec> = (0..n as u32)
                .map(|tag| Rec {
                    key: rng.gen_range(0..=distinct.saturating_sub(1)),
                    tag,
                })
                .collect();
            let mut expected = input.clone();
            expected.sort_by_key(|r| std::cmp::Reverse(r.key)); // std's sort is stable
            let poison = REC_POISON;
            // Through the host-slice call: poison its reused device buffers with a sort of
            // poison keys first.
            gpu.mergesort(&mut vec![poison; n], &comp)
                .expect("poison sort");
            let mut got = input.clone();
            gpu.mergesort(&mut got, &comp).expect("user struct sort");
            let trusted = twophase_gpu::compare::is_trusted(&comp);
            assert_eq!(
                got, expected,
                "n = {n}, distinct = {distinct}, trusted {trusted}"
            );
        }
    }
}

/// A 24-byte user record: the wide keys that take four-way passes.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Wide {
    time: u64,
    user: u32,
    tag: u32,
    value: f64,
}

twophase::device_key!(Wide => "wide", "struct wide { unsigned long long time; unsigned int user; unsigned int tag; double value; };");
// SAFETY: `Wide` is `#[repr(C)]` plain old data (bytemuck::Pod): every bit pattern is a valid
// value and it holds no pointers, so the device may hold and copy it as bytes.
unsafe impl DeviceRepr for Wide {}

/// Records of `users` users at `times` distinct times, tagged with their input positions.
fn wide_records(rng: &mut StdRng, n: usize, users: u32, times: u64) -> Vec<Wide> {
    (0..n as u32)
        .map(|tag| Wide {
            time: rng.gen_range(0..times),
            user: rng.gen_range(0..users),
            tag,
            value: rng.gen(),
        })
        .collect()
}

/// 24-byte records under a user comparator by (user, time), checked and vouched for, through
/// the shipped tuning's four-way passes (their first size) and a tuning forcing them on small
/// sorts: std's stable order, bit for bit. A non-strict order (`<=` on the time) through the
/// same passes gives a permutation of the records, or an error naming the inconsistent order.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_wide_records_through_four_way_passes() {
    let (gpu, mut rng) = (gpu(), rng());
    let by_user_time = || {
        twophase::gpu::CudaComparator::new(
            "wide_by_user_time",
            "return a.user < b.user || (a.user == b.user && a.time < b.time);",
            |a: &Wide, b: &Wide| (a.user, a.time) < (b.user, b.time),
        )
    };
    let checked = by_user_time();
    // SAFETY: (user, time) lexicographically is a strict weak order, in CUDA and in Rust.
    let vouched = unsafe { TrustedComparator::new(by_user_time()) };
    let record = std::mem::size_of::<Wide>();
    let shipped = MergesortTuning::for_types(record, 0);
    let four_way = shipped.four_way_min_keys + 3;
    assert!(
        shipped.pass_plan(four_way, false).four_way > 0,
        "{four_way} records take no four-way pass"
    );
    let forced = MergesortTuning {
        four_way_min_keys: 0,
        ..shipped
    };
    let comps: [&dyn DeviceComparator<Wide>; 2] = [&checked, &vouched];
    let mut scratch = MergesortScratch::new();
    let poison = Wide {
        time: u64::MAX,
        user: u32::MAX,
        tag: u32::MAX,
        value: f64::NAN,
    };
    let runs = [
        (four_way, None),
        (5 * shipped.tile() + 3, Some(forced)),
        ((1 << 16) + 1, Some(forced)),
    ];
    // Within TWOPHASE_TEST_SCALE: only the forced tunings' small sorts under compute-sanitizer.
    for (n, tuning) in runs
        .into_iter()
        .filter(|&(n, _)| n <= common::checks::test_scale())
    {
        for comp in comps {
            for (users, times) in [(1, 4), (16, 1 << 10), (u32::MAX, u64::MAX)] {
                let input = wide_records(&mut rng, n, users, times);
                let mut expected = input.clone();
                expected.par_sort_by_key(|r| (r.user, r.time));
                let mut keys = gpu.stream().clone_htod(&vec![poison; n]).expect("upload");
                gpu.sort_device(SortBuffers::keys(&mut keys), comp, tuning, &mut scratch)
                    .expect("poison sort");
                gpu.stream().memcpy_htod(&input, &mut keys).expect("upload");
                gpu.sort_device(SortBuffers::keys(&mut keys), comp, tuning, &mut scratch)
                    .expect("record sort");
                let got = gpu.stream().clone_dtoh(&keys).expect("download");
                let trusted = twophase_gpu::compare::is_trusted(comp);
                assert!(
                    got == expected,
                    "n = {n}, forced four-way {}, {users} users, trusted {trusted}",
                    tuning.is_some()
                );
            }
        }
        // Not a strict weak order: every record still there once.
        let non_strict = twophase::gpu::CudaComparator::new(
            "wide_time_le",
            "return a.time <= b.time;",
            |a: &Wide, b: &Wide| a.time <= b.time,
        );
        let input = wide_records(&mut rng, n, 4, 64);
        let mut keys = gpu.stream().clone_htod(&input).expect("upload");
        let result = gpu.sort_device(
            SortBuffers::keys(&mut keys),
            &non_strict,
            tuning,
            &mut scratch,
        );
        if let Err(error) = &result {
            assert!(
                error
                    .to_string()
                    .contains(twophase_gpu::runtime::status::messages::ORDER_INCONSISTENT),
                "n = {n}: a non-strict order failed with {error}"
            );
        }
        let mut tags: Vec<u32> = gpu
            .stream()
            .clone_dtoh(&keys)
            .expect("download")
            .iter()
            .map(|r| r.tag)
            .collect();
        tags.par_sort_unstable();
        assert!(
            tags.iter().enumerate().all(|(i, &t)| t == i as u32),
            "n = {n}: a non-strict order lost or duplicated records"
        );
    }
}

/// One pair sort through the slice API against std's stable sort of the pairs: keys from
/// `keys32` (8-byte keys shifted, so that equal keys stay equal), values that name each input
/// position (a sort that is not stable, or loses a value, differs).
fn assert_pairs_sort<K, V>(
    gpu: &Gpu,
    keys32: &[u32],
    key: fn(u32) -> K,
    value: fn(usize) -> V,
    case: &str,
) where
    K: twophase::gpu::PrimitiveKey + DeviceRepr + Ord,
    V: twophase::gpu::DeviceValue + DeviceRepr + PartialEq + std::fmt::Debug,
{
    let mut k: Vec<K> = keys32.iter().map(|&x| key(x)).collect();
    let mut v: Vec<V> = (0..keys32.len()).map(value).collect();
    let expected = stable_sorted_pairs(&k, &v);
    gpu.mergesort_pairs(&mut k, &mut v, &Less).expect(case);
    let got: Vec<(K, V)> = k.into_iter().zip(v).collect();
    assert!(
        got == expected,
        "{case}: pairs differ from std's stable sort"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_pairs_prove_stability() {
    let (gpu, mut rng) = (gpu(), rng());
    // Every shipped pair layout: u32 keys with u32 and u64 values, u64 keys with u32 and u64.
    for (key_bytes, value_bytes) in [(4usize, 4usize), (4, 8), (8, 4), (8, 8)] {
        let shipped = MergesortTuning::for_types(key_bytes, value_bytes);
        let tile = shipped.tile();
        // Small sorts' tiles (u32 pairs at VT 9, pairs with an 8-byte key or value at 11) around
        // one and two of them.
        let short = MergesortTuning::for_small_sorts(key_bytes, value_bytes).tile();
        let sizes = [
            0,
            1,
            tile - 1,
            tile,
            tile + 1,
            short + 1,
            2 * short - 1,
            (1 << 20) + 5,
        ];
        // The first size with the shipped four-way passes, random keys only.
        let four_way = shipped.four_way_min_keys + 3;
        // Within TWOPHASE_TEST_SCALE (compute-sanitizer runs the smaller sizes alone).
        let cases = PATTERNS
            .iter()
            .flat_map(|&pattern| sizes.map(|n| (n, pattern)))
            .chain([(four_way, PATTERNS[0])])
            .filter(|&(n, _)| n <= common::checks::test_scale());
        for (n, pattern) in cases {
            let keys32: Vec<u32> = u32_pattern_keys(&mut rng, n, pattern, 8);
            let case =
                format!("keys of {key_bytes} bytes, values of {value_bytes}, n = {n}, {pattern:?}");
            let wide = |x: u32| u64::from(x) << 20;
            let marked = |i: usize| i as u64 ^ 0x5555_0000_0000;
            match (key_bytes, value_bytes) {
                (4, 4) => assert_pairs_sort(&gpu, &keys32, |x| x, |i| i as u32, &case),
                (4, _) => assert_pairs_sort(&gpu, &keys32, |x| x, marked, &case),
                (_, 4) => assert_pairs_sort(&gpu, &keys32, wide, |i| i as u32, &case),
                _ => assert_pairs_sort(&gpu, &keys32, wide, marked, &case),
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_u32_2_pow_27_and_backend_neutral_call() {
    let mut rng = rng();
    let n = 1usize << 27;
    let input: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let mut expected = input.clone();
    expected.par_sort_unstable();
    let mut got = input.clone();
    twophase::sort(&mut got).expect("mergesort");
    assert!(got == expected, "2^27 sort differs");
    let mut any = input;
    twophase::sort_by(&mut any, &Less).expect("sort_by");
    assert!(any == expected, "2^27 backend-neutral sort differs");
}

/// The shipped eight-way passes at 1 GiB of elements: 2^27 u64 keys with few distinct values
/// (ties across all eight runs of every octet) against std, and 2^27 u32 pairs whose values (input
/// positions) prove stability, each through the device-buffer call.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_eight_way_passes_at_2_pow_27() {
    let (gpu, mut rng, mut scratch) = setup(MergesortScratch::new);
    let n = 1usize << 27;
    if n > common::checks::test_scale() {
        return;
    }
    let u64_tuning = gpu.shipped_mergesort_tuning(8, 0, n);
    assert!(
        u64_tuning.pass_plan(n, true).eight_way > 0,
        "{u64_tuning:?}"
    );
    for distinct in [1u64 << 40, 1000] {
        let input: Vec<u64> = (0..n).map(|_| rng.gen_range(0..distinct)).collect();
        let mut expected = input.clone();
        expected.par_sort_unstable();
        let mut keys = gpu.stream().clone_htod(&input).expect("upload");
        gpu.sort_device(SortBuffers::keys(&mut keys), &Less, None, &mut scratch)
            .expect("u64 sort");
        let got = gpu.stream().clone_dtoh(&keys).expect("download");
        assert!(
            got == expected,
            "u64, {distinct} distinct: differs from std"
        );
    }
    let pairs_tuning = gpu.shipped_mergesort_tuning(4, 4, n);
    assert!(
        pairs_tuning.pass_plan(n, true).eight_way > 0,
        "{pairs_tuning:?}"
    );
    let input: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 12)).collect();
    let positions: Vec<u32> = (0..n as u32).collect();
    let mut keys = gpu.stream().clone_htod(&input).expect("upload");
    let mut values = gpu.stream().clone_htod(&positions).expect("upload");
    gpu.sort_device(
        SortBuffers::pairs(&mut keys, &mut values),
        &Less,
        None,
        &mut scratch,
    )
    .expect("pairs sort");
    let got: Vec<(u32, u32)> = gpu
        .stream()
        .clone_dtoh(&keys)
        .expect("download")
        .into_iter()
        .zip(gpu.stream().clone_dtoh(&values).expect("download"))
        .collect();
    let mut expected: Vec<(u32, u32)> = input.into_iter().zip(positions).collect();
    expected.par_sort_unstable();
    assert!(got == expected, "u32 pairs: not a stable sort");
}

/// Sizes past i32::MAX: 2^31 + 1000 keys (8 GiB on the device, twice with the scratch).
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_past_i32_max() {
    const N: usize = (1 << 31) + 1000;
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    let mut got: Vec<u32> = (0..N)
        .into_par_iter()
        .map(|i| splitmix_u32(seed, i))
        .collect();
    let mut expected = got.clone();
    gpu()
        .mergesort(&mut got, &Less)
        .expect("mergesort of 2^31 + 1000 keys");
    expected.par_sort_unstable();
    assert!(got == expected, "2^31 + 1000 sort differs");
}

/// Small tiles, so that a few thousand keys need many passes: every mix of two-way and four-way
/// passes (odd and even pass counts, quads cut short at the end), against std, for keys and for
/// pairs whose values prove stability; and the two-way-only tuning.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_two_four_and_eight_way_pass_plans() {
    let (gpu, mut rng, mut scratch) = setup(MergesortScratch::new);
    // (block sort threads, pass threads, four-way threads, lanes per partition search, VT,
    // eight-way threads): every search width, from the binary search of one lane to a warp's
    // 32-ary one, in the four-way and eight-way cuts and in the two-way boundaries (the
    // two-way-only tunings: 8 lanes in the partition kernel, and the automatic choice, where a
    // one-warp tile block searches both of its own boundaries). `Less` is trusted, so the
    // tunings with eight-way threads merge every three levels in one pass, after a two-way or
    // four-way pass for the levels left over.
    let tunings = [
        (64, 32, 32, 1, 3, 0),
        (64, 64, 32, 4, 5, 0),
        (128, 32, 64, 32, 7, 0),
        (64, 32, 32, 8, 3, 0),
        (64, 32, 0, 8, 3, 0),
        (64, 32, 0, 0, 3, 0),
        (64, 32, 32, 1, 3, 32),
        (64, 64, 32, 4, 5, 64),
        (128, 32, 64, 32, 7, 64),
        (64, 32, 32, 16, 3, 32),
        (128, 64, 64, 0, 9, 128),
    ];
    for (threads, pass_threads, quad_threads, quad_cut_lanes, vt, oct_threads) in tunings {
        // Four-way (and eight-way) passes at every size, with the compiler's register choice for
        // their tiles.
        let tuning =
            MergesortTuning::forced_u32(threads, pass_threads, quad_threads, quad_cut_lanes, 0, vt)
                .with_eight_way(oct_threads);
        let tile = tuning.tile();
        let mut sizes = vec![tile + 1, 2 * tile, 3 * tile - 1, 5 * tile + 3];
        sizes.extend((2..=9).map(|p| (tile << p) - 1));
        sizes.extend([(tile << 8) + 17, 100_003]);
        for n in sizes {
            for pattern in PATTERNS {
                let input: Vec<u32> = u32_pattern_keys(&mut rng, n, pattern, 5);
                let mut d_keys = gpu
                    .stream()
                    .clone_htod(&vec![u32::MAX - 7; n])
                    .expect("upload poison");
                gpu.sort_device(
                    SortBuffers::keys(&mut d_keys),
                    &Less,
                    Some(tuning),
                    &mut scratch,
                )
                .expect("poison sort");
                let case = format!("n = {n}, {pattern:?}, plan {:?}", tuning.pass_plan(n, true));
                assert_tuned_sorts(&gpu, &mut scratch, tuning, &input, true, &case);
            }
        }
    }
}

/// Floats under the total orders sort as their integer images (mapped on the block sort's load,
/// back on the last kernel's store): keys and pairs (values = input positions, proving
/// stability) against std's stable `sort_by(total_cmp)`, bit for bit, through plans whose last
/// kernel is the block sort, a two-way pass or a four-way pass, and the shipped tuning up to its
/// first four-way size.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_floats_sort_as_integer_images() {
    fn check<K: FloatKey + DeviceRepr, C: DeviceComparator<K>>(
        gpu: &Gpu,
        scratch: &mut MergesortScratch,
        tuning: Option<MergesortTuning>,
        input: &[K],
        comp: &C,
        case: &str,
    ) {
        let positions: Vec<u32> = (0..input.len() as u32).collect();
        let mut expected: Vec<(K, u32)> = input.iter().copied().zip(positions.clone()).collect();
        let order = twophase_gpu::compare::ordering(comp);
        expected.sort_by(|x, y| order(&x.0, &y.0));
        let expected_keys: Vec<K> = expected.iter().map(|p| p.0).collect();
        let expected_values: Vec<u32> = expected.iter().map(|p| p.1).collect();
        let plan = tuning.map(|t| t.pass_plan(input.len(), true));
        let mut d_keys = gpu.stream().clone_htod(input).expect("upload");
        gpu.sort_device(SortBuffers::keys(&mut d_keys), comp, tuning, scratch)
            .expect("keys sort");
        let got = gpu.stream().clone_dtoh(&d_keys).expect("download");
        assert!(
            same_bits(&got, &expected_keys),
            "{case}, plan {plan:?}: keys differ"
        );
        let mut d_keys = gpu.stream().clone_htod(input).expect("upload");
        let mut d_values = gpu.stream().clone_htod(&positions).expect("upload");
        gpu.sort_device(
            SortBuffers::pairs(&mut d_keys, &mut d_values),
            comp,
            tuning,
            scratch,
        )
        .expect("pairs sort");
        let got = gpu.stream().clone_dtoh(&d_keys).expect("download");
        let values = gpu.stream().clone_dtoh(&d_values).expect("download");
        assert!(
            same_bits(&got, &expected_keys) && values == expected_values,
            "{case}, plan {plan:?}: pairs not a stable sort"
        );
    }
    let (gpu, mut rng, mut scratch) = setup(MergesortScratch::new);
    let f32_comps: [&dyn DeviceComparator<f32>; 2] = [&TotalOrder, &TotalOrderDesc];
    // Small forced tiles: the last kernel an eight-way pass (the total orders are trusted), a
    // four-way pass, or (no four-way threads) a two-way one.
    for (quad_threads, lanes, oct_threads) in [(32, 1, 0), (0, 0, 0), (32, 1, 32)] {
        let tuning = MergesortTuning::forced_u32(64, 32, quad_threads, lanes, 0, 3)
            .with_eight_way(oct_threads);
        let tile = tuning.tile();
        for n in [
            2,
            tile - 1,
            tile,
            tile + 1,
            3 * tile - 1,
            (tile << 4) + 5,
            100_003,
        ] {
            let input: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
            for (comp, name) in f32_comps.iter().zip(["asc", "desc"]) {
                let case =
                    format!("f32 {name}, n = {n}, forced quad {quad_threads}, oct {oct_threads}");
                check(&gpu, &mut scratch, Some(tuning), &input, comp, &case);
            }
        }
    }
    // The shipped tunings (for keys, and for pairs), at one tile (the block sort alone), two-way
    // sizes and the first four-way size of keys alone, ascending and descending.
    fn shipped<K: FloatKey + DeviceRepr>(
        gpu: &Gpu,
        scratch: &mut MergesortScratch,
        rng: &mut StdRng,
        draw: fn(&mut StdRng) -> K,
        label: &str,
    ) where
        TotalOrder: DeviceComparator<K>,
        TotalOrderDesc: DeviceComparator<K>,
    {
        let comps: [&dyn DeviceComparator<K>; 2] = [&TotalOrder, &TotalOrderDesc];
        let key_bytes = std::mem::size_of::<K>();
        let four_way = gpu
            .shipped_mergesort_tuning(key_bytes, 0, 1 << 26)
            .four_way_min_keys;
        // 2^21 + 3: past the small sorts, every pass two-way.
        for n in [2, 1000, (1 << 20) + 1, (1 << 21) + 3, four_way + 3] {
            let input: Vec<K> = (0..n).map(|_| draw(rng)).collect();
            for (comp, name) in comps.iter().zip(["asc", "desc"]) {
                let case = format!("{label} {name}, n = {n}, shipped");
                check(gpu, scratch, None, &input, comp, &case);
            }
        }
    }
    shipped::<f32>(&gpu, &mut scratch, &mut rng, special_f32, "f32");
    shipped::<f64>(&gpu, &mut scratch, &mut rng, special_f64, "f64");
}

/// Sort `input` on the device with `tuning`, and, `with_pairs`, the pairs (key, input position)
/// too; assert that the keys equal std's sort and the pairs std's stable sort by key. `case`
/// names the input in the failure messages.
fn assert_tuned_sorts(
    gpu: &Gpu,
    scratch: &mut MergesortScratch,
    tuning: MergesortTuning,
    input: &[u32],
    with_pairs: bool,
    case: &str,
) {
    let mut expected = input.to_vec();
    expected.sort();
    let mut d_keys = gpu.stream().clone_htod(input).expect("upload");
    gpu.sort_device(SortBuffers::keys(&mut d_keys), &Less, Some(tuning), scratch)
        .expect("tuned sort");
    let got = gpu.stream().clone_dtoh(&d_keys).expect("download");
    assert!(got == expected, "{tuning:?}: keys differ, {case}");
    if !with_pairs {
        return;
    }
    let positions: Vec<u32> = (0..input.len() as u32).collect();
    let mut d_keys = gpu.stream().clone_htod(input).expect("upload");
    let mut d_values = gpu.stream().clone_htod(&positions).expect("upload");
    gpu.sort_device(
        SortBuffers::pairs(&mut d_keys, &mut d_values),
        &Less,
        Some(tuning),
        scratch,
    )
    .expect("tuned pairs sort");
    let got_keys = gpu.stream().clone_dtoh(&d_keys).expect("download");
    let got_values = gpu.stream().clone_dtoh(&d_values).expect("download");
    let expected_pairs = stable_sorted_pairs(input, &positions);
    let got_pairs: Vec<(u32, u32)> = got_keys.into_iter().zip(got_values).collect();
    assert!(
        got_pairs == expected_pairs,
        "{tuning:?}: pairs not a stable sort, {case}"
    );
}

/// Block sorts of 1024 threads need more than 48 KiB of dynamic shared memory (an opt-in the
/// sort sets once per kernel): keys and pairs, each tuning sorting every size twice (the second
/// time with the attribute already set), against std's stable sort.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_block_sort_past_48_kib_of_shared_memory() {
    let (gpu, mut rng, mut scratch) = setup(MergesortScratch::new);
    // (block sort threads, pass threads, four-way threads, VT, with pairs): block-sort shared
    // memory of 94 KiB for 1024 x 23 u32 keys, and of 90 KiB for 1024 x 11 u32 pairs (45 KiB for
    // that tuning's keys-only sorts). Keys only for the first (a 512 x 23 four-way tile of pairs
    // needs 138 KiB, past the 48 KiB this test was written within).
    let tunings = [(1024, 128, 512, 23, false), (1024, 256, 256, 11, true)];
    for (threads, pass_threads, quad_threads, vt, with_pairs) in tunings {
        let tuning = MergesortTuning::forced_u32(threads, pass_threads, quad_threads, 0, 0, vt);
        let value_bytes = if with_pairs { 4 } else { 0 };
        assert!(tuning.blocksort_shared_bytes(4, value_bytes) > 48 * 1024);
        let tile = tuning.tile();
        for n in [tile - 1, tile + 1, 3 * tile + 7, 1 << 20] {
            for pattern in PATTERNS {
                let input: Vec<u32> = u32_pattern_keys(&mut rng, n, pattern, 5);
                for _ in 0..2 {
                    let case = format!("n = {n}, {pattern:?}");
                    assert_tuned_sorts(&gpu, &mut scratch, tuning, &input, with_pairs, &case);
                }
            }
        }
    }
}

/// A user order whose equivalent keys differ (the top 8 bits) at the block-sort width the
/// device's shipped tuning gives it for a large sort (1024 x 37 where the device holds its 148
/// KiB; the differential tests' sizes take the 48 KiB block sort): a few block tiles through
/// two-way passes, and one sort past the first four-way size, against std's stable sort (the
/// few-distinct pattern makes every key equivalent).
#[test]
#[ignore = "needs a CUDA GPU"]
fn mergesort_stable_block_sort_at_its_shipped_width() {
    let (gpu, mut rng, mut scratch) = setup(MergesortScratch::new);
    let comp = top_bits_less();
    let tuning = gpu.shipped_mergesort_tuning_for::<u32, _>(&comp, 0, 1 << 24);
    let tile = tuning.tile();
    let four_way = tuning.four_way_min_keys + 3;
    assert!(tuning.pass_plan(four_way, false).four_way > 0);
    let sizes = [tile - 1, tile + 1, 3 * tile + 7, 5 * tile + 3];
    // Within TWOPHASE_TEST_SCALE: the few-tile sorts alone under compute-sanitizer.
    let cases = PATTERNS
        .iter()
        .flat_map(|&pattern| sizes.map(|n| (n, pattern)))
        .chain([(four_way, common::Pattern::Random)])
        .filter(|&(n, _)| n <= common::checks::test_scale().max(5 * tile + 3));
    for (n, pattern) in cases {
        let input = u32_pattern_keys(&mut rng, n, pattern, 5);
        let mut expected = input.clone();
        expected.sort_by(twophase_gpu::compare::ordering(&comp));
        let mut d_keys = gpu.stream().clone_htod(&input).expect("upload");
        gpu.sort_device(
            SortBuffers::keys(&mut d_keys),
            &comp,
            Some(tuning),
            &mut scratch,
        )
        .expect("stable sort");
        let got = gpu.stream().clone_dtoh(&d_keys).expect("download");
        assert!(got == expected, "VT {}: n = {n}, {pattern:?}", tuning.vt);
    }
}

/// The launches' tuning falls back to one within static shared memory where the device cannot
/// give a block the shipped block sort's shared memory (no GPU needed).
#[test]
fn tuning_falls_back_within_static_shared_memory() {
    const H100_OPTIN: usize = 227 * 1024;
    const STATIC: usize = 48 * 1024;
    for (key, value) in [
        (4, 0),
        (8, 0),
        (4, 4),
        (8, 8),
        (16, 0),
        (24, 0),
        (32, 0),
        (48, 0),
    ] {
        let shipped = MergesortTuning::for_types(key, value);
        let within = MergesortTuning::within_static_shared(key, value);
        assert!(
            within.blocksort_shared_bytes(key, value) <= STATIC,
            "{key}+{value}"
        );
        assert_eq!(MergesortTuning::for_device(key, value, H100_OPTIN), shipped);
        assert_eq!(MergesortTuning::for_device(key, value, STATIC), within);
        within.validate(key, value).expect("valid fallback");
    }
    // Fewer block-sort tiles than SMs: the smaller tiles, at small sorts' VT where all of them
    // run at once.
    const H100_SMS: usize = 132;
    let big = MergesortTuning::for_types(4, 0);
    let small = MergesortTuning::within_static_shared(4, 0);
    let launch = |count| MergesortTuning::for_launch(4, 0, count, H100_OPTIN, H100_SMS);
    // (482 two-way tiles at 128 registers, four blocks an SM: all at once.)
    assert_eq!(
        launch(1 << 20),
        MergesortTuning::for_small_sorts_bounded::<128>(4, 0)
    );
    assert_eq!(launch(1 << 22), small);
    assert_eq!(launch(big.tile() * H100_SMS - 1), small);
    assert_eq!(launch(big.tile() * H100_SMS), big);
    assert_eq!(launch((1 << 25) - 1), big);
    // From 2^25 keys (128 MiB), four-way tiles of half the threads, the rest as shipped.
    let large = MergesortTuning {
        quad_threads: big.quad_threads / 2,
        ..big
    };
    assert_eq!(launch(1 << 25), large);
    assert_eq!(launch(1 << 27), large);
    large.validate(4, 0).expect("valid large-sort tuning");
    // u32 keys ship a block sort past 48 KiB; every other type fits already.
    assert!(MergesortTuning::for_types(4, 0).blocksort_shared_bytes(4, 0) > STATIC);
    assert_ne!(
        MergesortTuning::for_types(4, 0),
        MergesortTuning::within_static_shared(4, 0)
    );
}

/// SMs of the H100 and the H200 the shipped lane choices were measured on.
const H100_SMS: u32 = 132;

/// The measured best lanes per four-way cut, as (keys, quad tile, lanes): on the H100 u32 keys
/// at 2^27 (512 x 23 quad tiles): 4 lanes; u32 pairs at 2^27 (256 x 11): 1 lane; u64 keys
/// (128 x 23) and u32 pairs at 2^24: 8 lanes; on the H200 u32 keys at 2^24 in 256 x 37 tiles
/// (a user comparator's): a warp, against 16 lanes; and u64 keys and u32 pairs at 2^23 (128 x 23
/// and 256 x 11): a warp, against 16 lanes.
const QUAD_CUT_LANES_MEASURED: [(usize, usize, u32); 7] = [
    (1 << 27, 512 * 23, 4),
    (1 << 27, 256 * 11, 1),
    (1 << 24, 128 * 23, 8),
    (1 << 24, 256 * 11, 8),
    (1 << 24, 256 * 37, 32),
    (1 << 23, 128 * 23, 32),
    (1 << 23, 256 * 11, 32),
];

/// The measured best lanes per two-way boundary search, as (keys, tile, lanes): the 2^24 row on
/// the H200, the others on the H100.
const BOUNDARY_LANES_MEASURED: [(usize, usize, u32); 3] = [
    (1 << 27, 256 * 37, 1),
    (1 << 24, 256 * 37, 32),
    (1 << 20, 128 * 23, 32),
];

/// Assert that `lanes(count)` picks the lanes each of `measured` expects, for the count of a
/// sort of `n` keys in tiles of `tile` (`n / tile` rounded up, plus one), and that every count
/// in a sweep gets lanes that `allowed` accepts (`counted` names the counts).
fn assert_lane_choice(
    counted: &str,
    lanes: impl Fn(usize) -> u32,
    measured: &[(usize, usize, u32)],
    allowed: impl Fn(u32) -> bool,
) {
    for &(n, tile, expected) in measured {
        let count = n.div_ceil(tile) + 1;
        assert_eq!(lanes(count), expected, "{n} keys in tiles of {tile}");
    }
    for count in (1..1 << 20).step_by(997) {
        let chosen = lanes(count);
        assert!(allowed(chosen), "{count} {counted}: {chosen} lanes");
    }
}

/// The four-way partition's lane choice (no GPU needed): the H100's measured best at each size
/// (docs/mergesort.md; for u32 keys at 2^27, 4 lanes measured within 0.3% of one lane's best),
/// always a power of two from 1 to 32.
#[test]
fn quad_cut_lanes_fill_the_partition_budget() {
    let shipped = twophase_gpu::MergesortTuning::for_types(4, 0);
    let power_of_two = |lanes: u32| lanes.is_power_of_two() && lanes <= 32;
    let quad_cut_lanes = |cuts| shipped.quad_cut_lanes(cuts, H100_SMS);
    assert_lane_choice(
        "cuts",
        quad_cut_lanes,
        &QUAD_CUT_LANES_MEASURED,
        power_of_two,
    );
    // Few cuts: a whole warp; very many: one lane.
    assert_eq!(quad_cut_lanes(2), 32);
    assert_eq!(quad_cut_lanes(0), 32);
    assert_eq!(quad_cut_lanes(usize::MAX / 1024), 1);
}

/// The two-way boundaries' lane choice (no GPU needed): one lane for the 14.2k samples of a u32
/// sort at 2^27 (256 x 37 four-way tiles), where fewer lanes than a warp measured slower or
/// within 2%; a whole warp for the 1.8k of one at 2^24 and the few boundaries of a 2^20 sort.
#[test]
fn boundary_search_lanes_follow_their_budget() {
    let shipped = twophase_gpu::MergesortTuning::for_types(4, 0);
    assert_lane_choice(
        "boundaries",
        |boundaries| shipped.boundary_search_lanes(boundaries, H100_SMS),
        &BOUNDARY_LANES_MEASURED,
        |lanes| lanes == 1 || lanes == 32,
    );
}
