//! GPU tests of every merge variant (basic, tiled, circular, two-phase) and sort variant (Batcher, two-phase) against the CPU backend and std.
//!
//! Need a CUDA GPU: run with --include-ignored (a missing GPU fails every test). Outputs and
//! scratch are poisoned before each run; inputs are fresh random draws whose seed is printed.
//! Batcher's sort is not stable, so for keys that compare equal without being identical (the
//! user struct, pairs) it is checked for order and for the multiset of its output, not against
//! std's stable order; where equal keys are identical (primitive keys under a total order) its
//! output must equal std's bit for bit.

mod common;

use std::fmt::Debug;
use std::mem::size_of;

use common::{
    assert_invalid_input, broken_u32_comparators, device_merge, device_merge_pairs, gpu,
    key_type_tests, large_u32_merges, merge_inputs, multiset, rec_key_descending, rng, same_bits,
    setup, side_tags, special_f32, special_f64, splitmix_u32, stable_sorted_pairs,
    tagged_rec_inputs, u32_merge_inputs, u32_pattern_keys, upload, KeyCase, MergeShape, Pattern,
    Rec, LARGE_MERGE_KEYS, MERGE_SHAPES, PATTERNS, REC_POISON,
};
use rand::rngs::StdRng;
use rand::Rng;
use rayon::prelude::*;
use twophase::cpu;
use twophase::gpu::{
    DeviceComparator, DeviceKey, Gpu, GpuError, Greater, Less, MergeAlgorithm, MergeBuffers,
    MergeScratch, MergeSlices, MergeTuning, MergesortTuning, SortBuffers, TotalOrder,
    TotalOrderDesc,
};
use twophase::variants::{
    BatcherScratch, BatcherTuning, MergeVariant, SortScratch, SortVariant, TextbookMergeTuning,
};
use twophase_gpu::cudarc::driver::DeviceRepr;

/// Sizes 0, 1, 2, around the textbook tile, the textbook block and the two-phase tile, and
/// powers of two +- 1.
fn merge_sizes(key_bytes: usize) -> Vec<usize> {
    let textbook = TextbookMergeTuning::for_types(key_bytes, 0);
    let twophase = MergeTuning::for_types(key_bytes, 0).tile();
    let mut sizes = vec![0, 1, 2];
    for edge in [textbook.tile(), textbook.block_outputs(), twophase] {
        sizes.extend([edge - 1, edge, edge + 1]);
    }
    for p in [16, 20] {
        sizes.extend([(1 << p) - 1, (1 << p) + 1]);
    }
    sizes
}

/// Merge `a` and `b` on the device with `variant` (and `tuning`, or the shipped one) into a
/// poisoned output, and return the output.
fn device_merge_variant<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    variant: MergeVariant,
    tuning: Option<TextbookMergeTuning>,
    (a, b): (&[K], &[K]),
    comp: &C,
    poison: K,
) -> Vec<K> {
    device_merge(gpu, a, b, poison, |da, db, out| {
        gpu.merge_device(
            MergeBuffers::keys(da, db, out),
            comp,
            MergeAlgorithm::Variant(variant, tuning),
            scratch,
        )
        .expect("merge_device")
    })
}

/// Merge `a` and `b` with `variant` through the host-slice call, after a merge of poison of the
/// same sizes through the same handle (which fills its reused output buffer with poison).
fn host_merge_variant<K: DeviceKey, C: DeviceComparator<K>>(
    gpu: &Gpu,
    variant: MergeVariant,
    (a, b): (&[K], &[K]),
    comp: &C,
    poison: K,
) -> Vec<K> {
    let poisoned = gpu
        .merge_variant(
            variant,
            MergeSlices::keys(&vec![poison; a.len()], &vec![poison; b.len()]),
            comp,
        )
        .expect("poison merge");
    assert!(same_bits(&poisoned, &vec![poison; a.len() + b.len()]));
    gpu.merge_variant(variant, MergeSlices::keys(a, b), comp)
        .expect("merge")
}

/// Every merge variant through the device API (output poisoned) against the CPU backend, for
/// every size and shape of `case`'s keys; the host-slice API for the random shape.
fn merge_differential<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(case: &KeyCase<K, C>) {
    let (gpu, mut scratch) = (gpu(), MergeScratch::new());
    let (comp, poison) = (case.comp, case.poison);
    let sizes = merge_sizes(size_of::<K>());
    let cases = case.for_each_merge(&sizes, |a, b, expected, shape, what| {
        for variant in MergeVariant::ALL {
            let got = device_merge_variant(&gpu, &mut scratch, variant, None, (a, b), comp, poison);
            assert!(
                same_bits(&got, expected),
                "{what}, {variant:?}: device merge differs"
            );
            if matches!(shape, MergeShape::Random) {
                let host = host_merge_variant(&gpu, variant, (a, b), comp, poison);
                assert!(
                    same_bits(&host, expected),
                    "{what}, {variant:?}: host merge differs"
                );
            }
        }
    });
    eprintln!(
        "{}: {} variant merges agree with the CPU backend",
        case.label,
        cases * MergeVariant::ALL.len()
    );
}

key_type_tests!(merge_differential {
    merge_variants_u32: u32, "u32", Less, 0xDEAD_BEEF, |r| r.gen(), |r| r.gen_range(0..4);
    merge_variants_u64: u64, "u64", Less, u64::MAX - 3, |r| r.gen(), |r| r.gen_range(0..4) << 40;
    merge_variants_i32_descending: i32, "i32 greater", Greater, i32::MIN + 5,
        |r| r.gen(), |r| r.gen_range(-2..2);
    merge_variants_f32_total_order: f32, "f32 total order", TotalOrder,
        f32::from_bits(0x7fc0_dead), special_f32, |r| [f32::NAN, -0.0, 0.0, 1.0][r.gen_range(0..4)];
    merge_variants_f64_total_order_descending: f64, "f64 total order desc", TotalOrderDesc,
        f64::from_bits(0x7ff8_dead_dead_dead),
        special_f64, |r| [f64::NAN, -0.0, 0.0, 2.5][r.gen_range(0..4)];
});

/// A user struct under a custom CUDA comparator (descending by `key`); `tag` numbers each input
/// in order (B's with the top bit set), so the exact comparison with the CPU merge also proves
/// stability.
#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_variants_user_struct_are_stable() {
    let (gpu, mut rng) = (gpu(), rng());
    let comp = rec_key_descending();
    let poison = REC_POISON;
    for n in merge_sizes(size_of::<Rec>()) {
        for distinct in [1u32, 13, u32::MAX] {
            let (a, b) = tagged_rec_inputs(&mut rng, n, distinct, &comp);
            let expected = cpu::merge_by(&a, &b, |x: &Rec, y: &Rec| comp.is_less(x, y));
            for variant in MergeVariant::ALL {
                // Through the host-slice call (a user struct is not a cudarc DeviceRepr without
                // unsafe), after a merge of poison.
                let got = host_merge_variant(&gpu, variant, (&a, &b), &comp, poison);
                assert_eq!(got, expected, "{variant:?}: n = {n}, distinct = {distinct}");
            }
        }
    }
}

/// Merge `a` and `b` on the device with `variant`, as pairs whose values are the keys'
/// [`side_tags`], into poisoned outputs; returns the output keys and values.
fn device_merge_pairs_variant<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    variant: MergeVariant,
    (a, b): (&[u32], &[u32]),
    comp: &C,
) -> (Vec<u32>, Vec<u32>) {
    let (a_vals, b_vals) = side_tags(a.len(), b.len());
    let poison = (0xDEAD_BEEF, 0xDEAD_BEEF);
    device_merge_pairs(gpu, (a, &a_vals), (b, &b_vals), poison, |buffers| {
        gpu.merge_device(buffers, comp, variant.into(), scratch)
            .expect("merge_device pairs")
    })
}

/// Key-value merges of every variant: values number each input in order (B's with the top bit
/// set), so equal keys must come out A first, each side in order.
#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_pairs_variants_are_stable() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    let tile = TextbookMergeTuning::for_types(4, 4).block_outputs();
    for n in [0, 1, tile - 1, tile + 1, 41 * tile + 3, (1 << 20) + 5] {
        for distinct in [1u32, 5, 1000, u32::MAX] {
            let draw = |r: &mut StdRng| r.gen_range(0..=distinct - 1);
            let (a, b) = merge_inputs(&mut rng, (n, MergeShape::Random), &Less, (&draw, &draw));
            let (a_vals, b_vals) = side_tags(a.len(), b.len());
            let expected = cpu::merge_pairs_by(&a, &a_vals, &b, &b_vals, |x: &u32, y: &u32| x < y);
            let wide = |v: &[u32], shift: u32| -> Vec<u64> {
                v.iter().map(|&x| (u64::from(x) << shift) | 7).collect()
            };
            let (a64, b64) = (wide(&a, 20), wide(&b, 20));
            let (av64, bv64) = (wide(&a_vals, 4), wide(&b_vals, 4));
            let expected64 =
                cpu::merge_pairs_by(&a64, &av64, &b64, &bv64, |x: &u64, y: &u64| x < y);
            for variant in MergeVariant::ALL {
                let got = device_merge_pairs_variant(&gpu, &mut scratch, variant, (&a, &b), &Less);
                assert!(
                    got == expected,
                    "{variant:?}: u32 pairs differ (stability), n = {n}, distinct = {distinct}"
                );
                let host = gpu
                    .merge_variant(variant, MergeSlices::pairs(&a64, &av64, &b64, &bv64), &Less)
                    .expect("merge_variant pairs");
                assert!(
                    host == expected64,
                    "{variant:?}: u64 pairs differ (stability), n = {n}, distinct = {distinct}"
                );
            }
        }
    }
}

/// Small textbook tunings, so that blocks of the tiled and circular kernels loop over many
/// tiles (full and partial, with one input running out mid-block), and the basic kernel runs
/// other thread shapes.
#[test]
#[ignore = "needs a CUDA GPU"]
fn textbook_merges_loop_over_many_tiles() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    let tunings = [(32, 3, 5), (64, 1, 3), (32, 8, 1), (96, 5, 11)];
    for (threads, vt, tiles_per_block) in tunings {
        let tuning = TextbookMergeTuning {
            threads,
            vt,
            tiles_per_block,
        };
        let (tile, block) = (tuning.tile(), tuning.block_outputs());
        for n in [
            1,
            tile - 1,
            tile + 1,
            block - 1,
            block + 1,
            7 * block + 3,
            50_003,
        ] {
            for shape in MERGE_SHAPES {
                let (a, b) = merge_inputs(
                    &mut rng,
                    (n, shape),
                    &Less,
                    (&|r| r.gen::<u32>(), &|r| r.gen_range(0..3)),
                );
                let expected = cpu::merge(&a, &b);
                for variant in [
                    MergeVariant::Basic,
                    MergeVariant::Tiled,
                    MergeVariant::Circular,
                ] {
                    let (inputs, poison) = ((&a[..], &b[..]), u32::MAX - 1);
                    let tuned = Some(tuning);
                    let got = device_merge_variant(
                        &gpu,
                        &mut scratch,
                        variant,
                        tuned,
                        inputs,
                        &Less,
                        poison,
                    );
                    assert!(
                        got == expected,
                        "{variant:?} {tuning:?}: n = {n}, {shape:?}, |a| = {}",
                        a.len()
                    );
                }
            }
        }
    }
}

/// Sizes 0, 1, 2, around Batcher's and the mergesort's tiles, powers of two +- 1 (2^16 and up
/// run Batcher's global stages and fused launches).
fn sort_sizes(key_bytes: usize) -> Vec<usize> {
    let batcher = BatcherTuning::for_types(key_bytes, 0).tile as usize;
    let mergesort = MergesortTuning::for_types(key_bytes, 0).tile();
    let mut sizes = vec![0, 1, 2, 3 * batcher + 7];
    for edge in [batcher, mergesort] {
        sizes.extend([edge - 1, edge, edge + 1]);
    }
    for p in [10, 16, 17, 20] {
        sizes.extend([(1 << p) - 1, 1 << p, (1 << p) + 1]);
    }
    sizes
}

/// Whether `got` is `input` sorted under `comp`: in order, and the same multiset of keys (bit
/// patterns). For a stable sort, or keys whose equal ones are identical, `exact` also demands
/// std's stable order bit for bit.
fn check_sorted<K: DeviceKey, C: DeviceComparator<K>>(
    input: &[K],
    got: &[K],
    comp: &C,
    exact: Option<&[K]>,
) -> bool {
    if let Some(expected) = exact {
        return same_bits(got, expected);
    }
    let in_order = got.windows(2).all(|w| !comp.is_less(&w[1], &w[0]));
    let by_bytes = |v: &[K]| {
        let mut v = v.to_vec();
        v.par_sort_unstable_by(|x, y| bytemuck::bytes_of(x).cmp(bytemuck::bytes_of(y)));
        v
    };
    in_order && got.len() == input.len() && same_bits(&by_bytes(got), &by_bytes(input))
}

/// Sort on the device with `variant`. The scratch is poisoned first by sorting `n` poison keys
/// with it, so a key a launch forgot to write shows as poison.
fn device_sort<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(
    gpu: &Gpu,
    scratch: &mut SortScratch,
    variant: SortVariant,
    host: &[K],
    comp: &C,
    poison: K,
) -> Vec<K> {
    let n = host.len();
    let mut keys = upload(gpu, &vec![poison; n], poison);
    gpu.sort_variant_device(
        variant,
        SortBuffers::keys(&mut keys.slice_mut(..n)),
        comp,
        scratch,
    )
    .expect("poison sort");
    let mut keys = upload(gpu, host, poison);
    gpu.sort_variant_device(
        variant,
        SortBuffers::keys(&mut keys.slice_mut(..n)),
        comp,
        scratch,
    )
    .expect("sort_variant_device");
    let mut got = gpu.stream().clone_dtoh(&keys).expect("download");
    got.truncate(n);
    got
}

/// One sort of a test: `run(gpu, variant, input)` returns the sorted keys.
type SortRun<'a, K> = dyn FnMut(&Gpu, SortVariant, &[K]) -> Vec<K> + 'a;

/// Every sort variant against std's stable sort for every size and pattern, each run by
/// `run(gpu, variant, input)`; `identical_ties`: keys that compare equal are identical, so
/// Batcher must match std exactly too. Then the host-slice call, after a sort of poison keys
/// through the same handle.
fn sort_differential<K, C>(case: &KeyCase<K, C>, identical_ties: bool, run: &mut SortRun<K>)
where
    K: DeviceKey + Debug,
    C: DeviceComparator<K>,
{
    let gpu = gpu();
    let (comp, poison) = (case.comp, case.poison);
    let sizes = sort_sizes(size_of::<K>());
    let cases = case.for_each_sort(&sizes, |input, expected, pattern, what| {
        for variant in SortVariant::ALL {
            let exact = (variant.is_stable() || identical_ties).then_some(expected);
            let got = run(&gpu, variant, input);
            assert!(
                check_sorted(input, &got, comp, exact),
                "{what}, {variant:?}: sort differs"
            );
            if matches!(pattern, Pattern::Random) {
                let got = host_sort(&gpu, variant, input, comp, poison);
                assert!(
                    check_sorted(input, &got, comp, exact),
                    "{what}, {variant:?}: host sort differs"
                );
            }
        }
    });
    eprintln!(
        "{}: {} variant sorts agree with std",
        case.label,
        cases * SortVariant::ALL.len()
    );
}

/// Sort through the host-slice call, after a sort of `n` poison keys through the same handle
/// (which fills its reused device buffers with poison).
fn host_sort<K: DeviceKey, C: DeviceComparator<K>>(
    gpu: &Gpu,
    variant: SortVariant,
    input: &[K],
    comp: &C,
    poison: K,
) -> Vec<K> {
    gpu.sort_variant(variant, &mut vec![poison; input.len()], comp)
        .expect("poison sort");
    let mut got = input.to_vec();
    gpu.sort_variant(variant, &mut got, comp)
        .expect("sort_variant");
    got
}

/// [`sort_differential`] through the device API, with one scratch for every run.
fn device_sort_differential<K, C>(case: &KeyCase<K, C>)
where
    K: DeviceKey + DeviceRepr + Debug,
    C: DeviceComparator<K>,
{
    let (comp, poison) = (case.comp, case.poison);
    let mut scratch = SortScratch::new();
    sort_differential(case, true, &mut |gpu, variant, input| {
        device_sort(gpu, &mut scratch, variant, input, comp, poison)
    });
}

key_type_tests!(device_sort_differential {
    sort_variants_u32: u32, "u32", Less, 0xDEAD_BEEF, |r| r.gen(), |r| r.gen_range(0..4);
    sort_variants_u64: u64, "u64", Less, u64::MAX - 3, |r| r.gen(), |r| r.gen_range(0..4);
    sort_variants_i32: i32, "i32 greater", Greater, i32::MIN + 5,
        |r| r.gen(), |r| r.gen_range(-2..2);
    sort_variants_f32_total_order: f32, "f32 total order", TotalOrder, 1.2345e-7, special_f32,
        |r| [f32::NAN, -0.0, 0.0, 1.0][r.gen_range(0..4)];
    sort_variants_f64_total_order_descending: f64, "f64 total order desc", TotalOrderDesc,
        -7.5e300, special_f64, |r| [f64::NAN, -0.0, 0.0, 2.5][r.gen_range(0..4)];
});

/// The user struct under its custom comparator (by key only), through the host-slice calls:
/// tags differ among equal keys, so Batcher is checked for order and multiset, the two-phase
/// sort against std exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn sort_variants_user_struct() {
    let comp = rec_key_descending();
    let poison = REC_POISON;
    for distinct in [5u32, u32::MAX] {
        let counter = std::sync::atomic::AtomicU32::new(0);
        let draw = |r: &mut StdRng| Rec {
            key: r.gen_range(0..=distinct - 1),
            tag: counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        let case = KeyCase {
            label: "rec",
            comp: &comp,
            poison,
            draw: &draw,
            few: &draw,
        };
        sort_differential(&case, false, &mut |gpu, variant, input| {
            host_sort(gpu, variant, input, &comp, poison)
        });
    }
}

/// Key-value sorts: the two-phase sort is stable (values = input positions, exactly std's
/// stable result); Batcher's keys must equal std's and its (key, value) pairs the input's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn sort_pairs_variants() {
    let (gpu, mut rng, mut scratch) = setup(SortScratch::new);
    let tile = BatcherTuning::for_types(4, 4).tile as usize;
    for n in [0, 1, tile - 1, tile + 1, 37 * tile + 3, (1 << 20) + 5] {
        for pattern in PATTERNS {
            let input: Vec<u32> = u32_pattern_keys(&mut rng, n, pattern, 8);
            let positions: Vec<u32> = (0..n as u32).collect();
            let expected = stable_sorted_pairs(&input, &positions);
            for variant in SortVariant::ALL {
                // Poison the scratch with a sort of poison pairs, then sort the real ones.
                let mut pk = upload(&gpu, &vec![u32::MAX - 9; n], 0);
                let mut pv = upload(&gpu, &vec![u32::MAX - 9; n], 0);
                gpu.sort_variant_device(
                    variant,
                    SortBuffers::pairs(&mut pk.slice_mut(..n), &mut pv.slice_mut(..n)),
                    &Less,
                    &mut scratch,
                )
                .expect("poison sort");
                let mut dk = upload(&gpu, &input, 0);
                let mut dv = upload(&gpu, &positions, 0);
                gpu.sort_variant_device(
                    variant,
                    SortBuffers::pairs(&mut dk.slice_mut(..n), &mut dv.slice_mut(..n)),
                    &Less,
                    &mut scratch,
                )
                .expect("sort_variant_device pairs");
                let s = gpu.stream();
                let mut got: Vec<(u32, u32)> = s
                    .clone_dtoh(&dk)
                    .expect("download")
                    .into_iter()
                    .zip(s.clone_dtoh(&dv).expect("download"))
                    .collect();
                got.truncate(n);
                if variant.is_stable() {
                    assert!(
                        got == expected,
                        "{variant:?}: pairs differ, n = {n}, {pattern:?}"
                    );
                } else {
                    let keys_match = got.iter().map(|p| p.0).eq(expected.iter().map(|p| p.0));
                    let mut multiset = got.clone();
                    multiset.par_sort_unstable();
                    let mut input_pairs = expected.clone();
                    input_pairs.par_sort_unstable();
                    assert!(
                        keys_match && multiset == input_pairs,
                        "{variant:?}: pairs are not a sort of the input, n = {n}, {pattern:?}"
                    );
                }
            }
            // The host-slice call with 8-byte keys and values.
            let wide_keys: Vec<u64> = input.iter().map(|&k| u64::from(k) << 24).collect();
            let wide_values: Vec<u64> = positions.iter().map(|&p| u64::from(p) * 3).collect();
            for variant in SortVariant::ALL {
                let (mut k, mut v) = (wide_keys.clone(), wide_values.clone());
                gpu.sort_pairs_variant(variant, &mut k, &mut v, &Less)
                    .expect("sort_pairs_variant");
                let mut got: Vec<(u64, u64)> = k.into_iter().zip(v).collect();
                let mut want = stable_sorted_pairs(&wide_keys, &wide_values);
                if !variant.is_stable() {
                    got.sort_unstable();
                    want.sort_unstable();
                }
                assert!(
                    got == want,
                    "{variant:?}: u64 pairs differ, n = {n}, {pattern:?}"
                );
            }
        }
    }
}

/// Batcher with small tiles, so that a few thousand keys run many levels of global stages and
/// fused launches (odd and even numbers of them), for keys and for pairs.
#[test]
#[ignore = "needs a CUDA GPU"]
fn batcher_small_tiles_run_every_launch_kind() {
    let (gpu, mut rng, mut scratch) = setup(BatcherScratch::new);
    let tunings = [(32, 64), (32, 128), (64, 1024), (32, 32)];
    for (threads, tile) in tunings {
        let tuning = BatcherTuning { threads, tile };
        let tile = tile as usize;
        let mut sizes = vec![tile - 1, tile + 1, 2 * tile, 3 * tile - 1, 100_003];
        sizes.extend((1..=8).flat_map(|p| [(tile << p) - 1, (tile << p) + 1]));
        for n in sizes {
            for pattern in PATTERNS {
                let input: Vec<u32> = u32_pattern_keys(&mut rng, n, pattern, 5);
                let mut expected = input.clone();
                expected.sort_unstable();
                let mut poisoned = upload(&gpu, &vec![u32::MAX - 7; n], 0);
                gpu.sort_device(
                    SortBuffers::keys(&mut poisoned),
                    &Less,
                    Some(tuning),
                    &mut scratch,
                )
                .expect("poison sort");
                let mut d_keys = upload(&gpu, &input, 0);
                gpu.sort_device(
                    SortBuffers::keys(&mut d_keys),
                    &Less,
                    Some(tuning),
                    &mut scratch,
                )
                .expect("batcher sort");
                let got = gpu.stream().clone_dtoh(&d_keys).expect("download");
                assert!(
                    got == expected,
                    "{tuning:?}: keys differ, n = {n}, {pattern:?}"
                );

                let positions: Vec<u32> = (0..n as u32).collect();
                let mut d_keys = upload(&gpu, &input, 0);
                let mut d_values = upload(&gpu, &positions, 0);
                gpu.sort_device(
                    SortBuffers::pairs(&mut d_keys, &mut d_values),
                    &Less,
                    Some(tuning),
                    &mut scratch,
                )
                .expect("batcher pairs");
                let got_keys = gpu.stream().clone_dtoh(&d_keys).expect("download");
                let got_values = gpu.stream().clone_dtoh(&d_values).expect("download");
                let values_follow = got_values
                    .iter()
                    .zip(&got_keys)
                    .all(|(&v, &k)| input.get(v as usize) == Some(&k));
                let mut seen = got_values.clone();
                seen.sort_unstable();
                assert!(
                    got_keys == expected && values_follow && seen == positions,
                    "{tuning:?}: pairs are not a sort of the input, n = {n}, {pattern:?}"
                );
            }
        }
    }
}

/// 2^27 keys: every merge variant on random and few-distinct u32 inputs, every sort variant on
/// random u32 keys; and the root crate's free functions and defaults.
#[test]
#[ignore = "needs a CUDA GPU"]
fn variants_u32_2_pow_27_and_root_api() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    for (shape, a, b, expected) in large_u32_merges(&mut rng) {
        for variant in MergeVariant::ALL {
            let inputs = (&a[..], &b[..]);
            let got = device_merge_variant(
                &gpu,
                &mut scratch,
                variant,
                None,
                inputs,
                &Less,
                0xDEAD_BEEF,
            );
            assert!(
                got == expected,
                "{variant:?}: 2^27 merge differs ({shape:?})"
            );
        }
    }
    let input: Vec<u32> = (0..LARGE_MERGE_KEYS).map(|_| rng.gen()).collect();
    let mut expected = input.clone();
    expected.par_sort_unstable();
    let mut sort_scratch = SortScratch::new();
    for variant in SortVariant::ALL {
        let got = device_sort(&gpu, &mut sort_scratch, variant, &input, &Less, 0xDEAD_BEEF);
        assert!(got == expected, "{variant:?}: 2^27 sort differs");
    }

    assert_eq!(MergeVariant::default(), MergeVariant::TwoPhase);
    assert_eq!(SortVariant::default(), SortVariant::TwoPhase);
    let a: Vec<u32> = (0..10_000).map(|i| i * 2).collect();
    let b: Vec<u32> = (0..7_000).map(|i| i * 3).collect();
    for variant in MergeVariant::ALL {
        let got = twophase::variants::merge_variant(variant, MergeSlices::keys(&a, &b), &Less)
            .expect("merge_variant");
        assert_eq!(got, cpu::merge(&a, &b), "{variant:?}");
    }
    for variant in SortVariant::ALL {
        let mut keys: Vec<u32> = (0..50_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let mut expected = keys.clone();
        expected.sort_unstable();
        twophase::variants::sort_variant(variant, &mut keys, &Less).expect("sort_variant");
        assert_eq!(keys, expected, "{variant:?}");
    }
}

/// Sizes past i32::MAX: every merge variant on 2^31 + 1000 u32 keys in all (8 GiB of inputs,
/// 8 GiB of output), and Batcher's sort of 2^31 + 1000 u32 keys (twice 8 GiB with its scratch).
#[test]
#[ignore = "needs a CUDA GPU"]
fn variants_past_i32_max() {
    const N: usize = (1 << 31) + 1000;
    let gpu = gpu();
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    // Sorted inputs without sorting: key i is 2i plus a random bit, so both sides are
    // non-decreasing, interleave, and tie across A and B.
    let split = N / 2 + (seed % 4096) as usize;
    let side = |count: usize, salt: u64| -> Vec<u32> {
        (0..count)
            .into_par_iter()
            .map(|i| 2 * i as u32 + (splitmix_u32(seed ^ salt, i) & 1))
            .collect()
    };
    let (a, b) = (side(split, 1), side(N - split, 2));
    let expected = cpu::merge(&a, &b);
    let mut scratch = MergeScratch::new();
    let stream = gpu.stream();
    let da = stream.clone_htod(&a).expect("upload a");
    let db = stream.clone_htod(&b).expect("upload b");
    let poison = vec![0xDEAD_BEEFu32; N];
    let mut out = stream.clone_htod(&poison).expect("upload poison");
    for variant in MergeVariant::ALL {
        stream.memcpy_htod(&poison, &mut out).expect("poison");
        gpu.merge_device(
            MergeBuffers::keys(&da, &db, &mut out),
            &Less,
            variant.into(),
            &mut scratch,
        )
        .expect("merge past i32::MAX");
        let got = stream.clone_dtoh(&out).expect("download");
        assert!(
            got == expected,
            "{variant:?}: merge of 2^31 + 1000 keys differs"
        );
        eprintln!("{variant:?}: merge of 2^31 + 1000 keys agrees");
    }
    drop((da, db, out, a, b, expected));

    let mut keys = stream.clone_htod(&poison).expect("upload poison");
    let mut sort_scratch = SortScratch::new();
    // Sorting the poison first fills the scratch with poison.
    gpu.sort_variant_device(
        SortVariant::Batcher,
        SortBuffers::keys(&mut keys),
        &Less,
        &mut sort_scratch,
    )
    .expect("poison sort");
    let input: Vec<u32> = (0..N)
        .into_par_iter()
        .map(|i| splitmix_u32(seed, i))
        .collect();
    stream.memcpy_htod(&input, &mut keys).expect("upload keys");
    let started = std::time::Instant::now();
    gpu.sort_variant_device(
        SortVariant::Batcher,
        SortBuffers::keys(&mut keys),
        &Less,
        &mut sort_scratch,
    )
    .expect("Batcher sort past i32::MAX");
    gpu.synchronize().expect("sync");
    eprintln!("Batcher sort of 2^31 + 1000 keys: {:?}", started.elapsed());
    let got = stream.clone_dtoh(&keys).expect("download");
    let mut expected = input;
    expected.par_sort_unstable();
    assert!(got == expected, "Batcher sort of 2^31 + 1000 keys differs");
}

// ---- Adversarial inputs: unsorted merge inputs and comparators that are not strict weak orders.

/// A valid merge with `variant` on `gpu` after a failure: it must succeed and be right.
fn valid_merge_after_failure(gpu: &Gpu, rng: &mut StdRng, variant: MergeVariant, what: &str) {
    let (a, b) = u32_merge_inputs(rng, 5000, MergeShape::Random);
    let got = gpu
        .merge_variant(variant, MergeSlices::keys(&a, &b), &Less)
        .unwrap_or_else(|e| panic!("{variant:?}: valid merge after {what}: {e}"));
    assert!(
        got == cpu::merge_by(&a, &b, |x: &u32, y: &u32| x < y),
        "{variant:?}: valid merge after {what} differs"
    );
}

/// Merge `a` and `b` on the device with `variant` (keys, and pairs carrying each key's origin)
/// and assert both outputs are permutations of the inputs.
fn assert_device_merges_permute<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    variant: MergeVariant,
    a: &[u32],
    b: &[u32],
    comp: &C,
    what: &str,
) {
    let got = device_merge_variant(gpu, scratch, variant, None, (a, b), comp, 0xDEAD_BEEF);
    let all: Vec<u32> = a.iter().chain(b).copied().collect();
    assert!(
        multiset(&got) == multiset(&all),
        "{variant:?}: {what}: keys are not a permutation of the input"
    );
    let (a_vals, b_vals) = side_tags(a.len(), b.len());
    let (keys, vals) = device_merge_pairs_variant(gpu, scratch, variant, (a, b), comp);
    let got: Vec<(u32, u32)> = keys.into_iter().zip(vals).collect();
    let want: Vec<(u32, u32)> = a
        .iter()
        .zip(&a_vals)
        .chain(b.iter().zip(&b_vals))
        .map(|(&k, &v)| (k, v))
        .collect();
    assert!(
        multiset(&got) == multiset(&want),
        "{variant:?}: {what}: pairs are not a permutation of the input"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unsorted_merge_inputs_are_named_errors_and_permutations() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    for n in merge_sizes(4) {
        let (a, b) = u32_merge_inputs(&mut rng, n, MergeShape::Random);
        let mut shuffled_a = a.clone();
        shuffled_a.reverse();
        let mut shuffled_b = b.clone();
        shuffled_b.reverse();
        let unsorted = |v: &[u32]| v.windows(2).any(|w| w[0] > w[1]);
        for variant in MergeVariant::ALL {
            if unsorted(&shuffled_a) {
                let what = format!("unsorted a, n = {n}");
                let keys = gpu.merge_variant(variant, MergeSlices::keys(&shuffled_a, &b), &Less);
                assert_invalid_input(keys, &format!("{variant:?}: {what}"), "`a`");
                valid_merge_after_failure(&gpu, &mut rng, variant, &what);
                let (vals, b_vals) = (vec![0u64; shuffled_a.len()], vec![0u64; b.len()]);
                let pairs = MergeSlices::pairs(&shuffled_a, &vals, &b, &b_vals);
                let pairs = gpu.merge_variant(variant, pairs, &Less);
                assert_invalid_input(pairs, &format!("{variant:?}: pairs, {what}"), "`a");
                valid_merge_after_failure(&gpu, &mut rng, variant, &what);
            }
            if unsorted(&shuffled_b) {
                let what = format!("unsorted b, n = {n}");
                let keys = gpu.merge_variant(variant, MergeSlices::keys(&a, &shuffled_b), &Less);
                assert_invalid_input(keys, &format!("{variant:?}: {what}"), "`b`");
                valid_merge_after_failure(&gpu, &mut rng, variant, &what);
            }
            // Device-buffer calls: a permutation whatever the order of the inputs.
            let random_a: Vec<u32> = (0..a.len()).map(|_| rng.gen_range(0..64)).collect();
            let random_b: Vec<u32> = (0..b.len()).map(|_| rng.gen()).collect();
            for (x, y, what) in [
                (&shuffled_a, &shuffled_b, "both reversed"),
                (&random_a, &random_b, "both random"),
                (&a, &shuffled_b, "b reversed"),
            ] {
                let what = format!("{what}, n = {n}");
                assert_device_merges_permute(&gpu, &mut scratch, variant, x, y, &Less, &what);
            }
            valid_merge_after_failure(&gpu, &mut rng, variant, "device merges of unsorted input");
        }
    }
}

/// Under a broken comparator, a host call is `Ok` with output `got` a permutation of `input`, or
/// an `InvalidInput` error; anything else fails (`what` names the call).
fn assert_permutation_or_invalid<T: Ord + Clone>(
    got: Result<Vec<T>, GpuError>,
    input: &[T],
    what: &str,
) {
    match got {
        Ok(got) => assert!(
            multiset(&got) == multiset(input),
            "{what}: not a permutation"
        ),
        Err(GpuError::InvalidInput(_)) => {}
        Err(e) => panic!("{what}: {e}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merges_under_broken_comparators_are_permutations() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    for comp in broken_u32_comparators() {
        for n in merge_sizes(4) {
            let draw = |r: &mut StdRng| r.gen::<u32>();
            let few = |r: &mut StdRng| r.gen_range(0..4u32);
            for shape in [MergeShape::Random, MergeShape::FewDistinct] {
                let (a, b) = merge_inputs(&mut rng, (n, shape), &Less, (&draw, &few));
                let what = format!("{}, n = {n}, {shape:?}", comp.name());
                for variant in MergeVariant::ALL {
                    let got = gpu.merge_variant(variant, MergeSlices::keys(&a, &b), &comp);
                    let all: Vec<u32> = a.iter().chain(&b).copied().collect();
                    let case = format!("{variant:?}: {what}: host merge");
                    assert_permutation_or_invalid(got, &all, &case);
                    valid_merge_after_failure(&gpu, &mut rng, variant, &what);
                    assert_device_merges_permute(&gpu, &mut scratch, variant, &a, &b, &comp, &what);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batcher_under_broken_comparators_is_a_permutation() {
    let (gpu, mut rng) = (gpu(), rng());
    for comp in broken_u32_comparators() {
        for n in sort_sizes(4) {
            let input: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
            let what = format!("{}: n = {n}: Batcher's", comp.name());
            let mut keys = input.clone();
            let sorted = gpu.sort_variant(SortVariant::Batcher, &mut keys, &comp);
            assert_permutation_or_invalid(sorted.map(|()| keys), &input, &format!("{what} keys"));
            let mut keys = input.clone();
            let mut values: Vec<u32> = (0..n as u32).collect();
            let sorted =
                gpu.sort_pairs_variant(SortVariant::Batcher, &mut keys, &mut values, &comp);
            let got = sorted.map(|()| keys.into_iter().zip(values).collect());
            let want: Vec<(u32, u32)> = input.iter().copied().zip(0..n as u32).collect();
            assert_permutation_or_invalid(got, &want, &format!("{what} pairs"));
            let mut valid = input.clone();
            gpu.sort_variant(SortVariant::Batcher, &mut valid, &Less)
                .expect("a valid sort after a broken comparator");
            assert!(
                valid == multiset(&input),
                "n = {n}: valid sort after a broken comparator"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_and_batcher_mismatched_lengths_are_errors() {
    let (gpu, mut rng) = (gpu(), rng());
    for variant in MergeVariant::ALL {
        let err = gpu
            .merge_variant(
                variant,
                MergeSlices::pairs(&[1u32, 2], &[0u32], &[3u32], &[0u32]),
                &Less,
            )
            .expect_err("a values shorter than a keys");
        assert!(
            matches!(err, GpuError::SizeMismatch { .. }),
            "{variant:?}: {err}"
        );
        valid_merge_after_failure(&gpu, &mut rng, variant, "mismatched lengths");
    }
    let err = gpu
        .sort_pairs_variant(SortVariant::Batcher, &mut [3u32, 1], &mut [0u32], &Less)
        .expect_err("values shorter than keys");
    assert!(matches!(err, GpuError::SizeMismatch { .. }), "{err}");
}
