//! GPU merge tests (need a CUDA GPU; run with --include-ignored): differential against the CPU backend.

mod common;

use common::{
    device_merge_pairs, gpu, key_type_tests, large_u32_merges, rec_key_descending, rng, same_bits,
    setup, side_tags, special_f32, special_f64, tagged_rec_inputs, KeyCase, Rec, REC_POISON,
};
use rand::rngs::StdRng;
use rand::Rng;
use twophase::cpu;
use twophase::gpu::{
    DeviceComparator, DeviceKey, Gpu, Greater, Less, MergeAlgorithm, MergeBuffers, MergeScratch,
    MergeTuning, TotalOrder, TotalOrderDesc,
};
use twophase_gpu::cudarc::driver::DeviceRepr;
use twophase_gpu::ProgramTuning;

/// Sizes around the tile of `tuning`: 0, 1, tile - 1, tile, tile + 1, many tiles.
fn sizes(tuning: MergeTuning) -> Vec<usize> {
    let tile = tuning.tile();
    vec![
        0,
        1,
        2,
        tile - 1,
        tile,
        tile + 1,
        2 * tile + 1,
        37 * tile + 5,
        (1 << 20) + 3,
    ]
}

/// Merge on the device through the cudarc-buffer API at `tuning` (`None`: the shipped one),
/// output poisoned first.
fn device_merge<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    a: &[K],
    b: &[K],
    comp: &C,
    poison: K,
    tuning: Option<MergeTuning>,
) -> Vec<K> {
    common::device_merge(gpu, a, b, poison, |da, db, out| {
        gpu.merge_device(
            MergeBuffers::keys(da, db, out),
            comp,
            MergeAlgorithm::TwoPhase(tuning),
            scratch,
        )
        .expect("merge_device")
    })
}

/// The device merge (output poisoned) and the host-slice merge against the CPU backend, for
/// every size and shape of `case`'s keys.
fn differential<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(case: &KeyCase<K, C>) {
    let (gpu, mut scratch) = (gpu(), MergeScratch::new());
    let sizes = sizes(gpu.merge_tuning::<K>(None, 0));
    let cases = case.for_each_merge(&sizes, |a, b, expected, _, what| {
        let got = device_merge(&gpu, &mut scratch, a, b, case.comp, case.poison, None);
        assert!(same_bits(&got, expected), "{what}: device merge differs");
        let host = gpu.merge(a, b, case.comp).expect("merge");
        assert!(same_bits(&host, expected), "{what}: host merge differs");
    });
    eprintln!("{}: {cases} cases agree with the CPU backend", case.label);
}

/// Special floats: NaNs of both signs, signed zeros, infinities and two ordinary values.
const F32_SPECIALS: [f32; 8] = [
    f32::NAN,
    -f32::NAN,
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    1.5,
    -1.5,
];

/// One of [`F32_SPECIALS`], as `f32` or widened to `f64`.
fn few_special<F: From<f32>>(r: &mut StdRng) -> F {
    F::from(F32_SPECIALS[r.gen_range(0..F32_SPECIALS.len())])
}

key_type_tests!(differential {
    merge_u32_less: u32, "u32 less", Less, 0xDEAD_BEEF, |r| r.gen(), |r| r.gen_range(0..16);
    merge_u64_less: u64, "u64 less", Less, 0xDEAD_BEEF_DEAD_BEEF,
        |r| r.gen(), |r| r.gen_range(0..16);
    merge_i32_greater: i32, "i32 greater", Greater, 0x7EAD_BEEF,
        |r| r.gen(), |r| r.gen_range(-8..8);
    merge_f32_total_order: f32, "f32 total order", TotalOrder, f32::from_bits(0x7fc0_dead),
        special_f32, few_special;
    merge_f32_total_order_no_nan: f32, "f32 total order", TotalOrder, f32::from_bits(0x7fc0_dead),
        |r| r.gen_range(-1e9..1e9), |r| r.gen_range(0..8) as f32;
    merge_f64_total_order_desc: f64, "f64 total order desc", TotalOrderDesc,
        f64::from_bits(0x7ff8_dead_dead_dead), special_f64, few_special;
});

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_user_struct_custom_comparator_is_stable() {
    let (gpu, mut rng) = (gpu(), rng());
    let comp = rec_key_descending();
    let tile = gpu.merge_tuning::<Rec>(None, 0).tile();
    let poison = REC_POISON;
    for n in [0, 1, tile - 1, tile, tile + 1, 53 * tile + 7, (1 << 20) + 1] {
        for distinct in [1u32, 13, u32::MAX] {
            let (a, b) = tagged_rec_inputs(&mut rng, n, distinct, &comp);
            // Poison the handle's reused output buffer: merge all-poison inputs of the same size.
            let poisoned = gpu
                .merge(&vec![poison; a.len()], &vec![poison; b.len()], &comp)
                .expect("poison run");
            assert!(poisoned.iter().all(|r| *r == poison));
            let got = gpu.merge(&a, &b, &comp).expect("merge");
            let expected = cpu::merge_by(&a, &b, |x: &Rec, y: &Rec| comp.is_less(x, y));
            assert_eq!(
                got, expected,
                "user struct merge differs, n = {n}, distinct = {distinct}"
            );
            // Stability: within equal keys, all of A (in order) then all of B (in order).
            for w in got.windows(2) {
                if w[0].key == w[1].key {
                    assert!(w[0].tag < w[1].tag, "unstable at {w:?}");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_pairs_u32_are_stable() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    let tile = gpu.merge_tuning::<u32>(Some((4, 4)), 0).tile();
    for n in [0, 1, tile - 1, tile, tile + 1, 41 * tile + 3, (1 << 22) + 5] {
        for distinct in [1u32, 5, 1000, u32::MAX] {
            let split = rng.gen_range(0..=n);
            let draw = |rng: &mut StdRng, count: usize| {
                let mut v: Vec<u32> = (0..count)
                    .map(|_| rng.gen_range(0..=distinct - 1))
                    .collect();
                v.sort_unstable();
                v
            };
            let a = draw(&mut rng, split);
            let b = draw(&mut rng, n - split);
            let (a_vals, b_vals) = side_tags(a.len(), b.len());
            let (ek, ev) = cpu::merge_pairs_by(&a, &a_vals, &b, &b_vals, |x: &u32, y: &u32| x < y);
            // Device API with poisoned outputs.
            let poison = (0xDEAD_BEEF, 0xDEAD_BEEF);
            let (gk, gv) =
                device_merge_pairs(&gpu, (&a, &a_vals), (&b, &b_vals), poison, |buffers| {
                    gpu.merge_device(buffers, &Less, MergeAlgorithm::TwoPhase(None), &mut scratch)
                        .expect("merge_device pairs")
                });
            assert_eq!(gk, ek, "pair keys differ, n = {n}, distinct = {distinct}");
            assert_eq!(
                gv, ev,
                "pair values differ (stability), n = {n}, distinct = {distinct}"
            );
            for i in 1..n {
                if gk[i - 1] == gk[i] {
                    assert!(gv[i - 1] < gv[i], "unstable at {i}");
                }
            }
            let (hk, hv) = gpu
                .merge_pairs(&a, &a_vals, &b, &b_vals, &Less)
                .expect("merge_pairs");
            assert_eq!((hk, hv), (ek, ev), "host pairs differ, n = {n}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_pairs_u64_keys_f64_values() {
    let (gpu, mut rng) = (gpu(), rng());
    for n in [1usize, 1409, 100_003, 1 << 21] {
        let split = rng.gen_range(0..=n);
        let mut a: Vec<u64> = (0..split).map(|_| rng.gen_range(0..64)).collect();
        let mut b: Vec<u64> = (0..n - split).map(|_| rng.gen_range(0..64)).collect();
        a.sort_unstable();
        b.sort_unstable();
        let a_vals: Vec<f64> = (0..a.len()).map(|i| i as f64).collect();
        let b_vals: Vec<f64> = (0..b.len()).map(|i| -(i as f64) - 1.0).collect();
        let expected = cpu::merge_pairs_by(&a, &a_vals, &b, &b_vals, |x: &u64, y: &u64| x < y);
        let got = gpu
            .merge_pairs(&a, &a_vals, &b, &b_vals, &Less)
            .expect("merge_pairs");
        assert_eq!(got, expected, "n = {n}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_u32_2_pow_27() {
    let (gpu, mut rng, mut scratch) = setup(MergeScratch::new);
    for (shape, a, b, expected) in large_u32_merges(&mut rng) {
        let got = device_merge(&gpu, &mut scratch, &a, &b, &Less, 0xDEAD_BEEF, None);
        assert!(got == expected, "2^27 merge differs ({shape:?})");
    }
}

/// The large merges' tiles on fast memory (`MergeTuning::for_large_fast_memory`), which the
/// differential sizes of small merges never launch: set explicitly, on every merge shape at the
/// sizes around their tile, against the CPU backend.
#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_u32_large_merge_tiles_at_their_edges() {
    let (gpu, mut scratch) = (gpu(), MergeScratch::new());
    let tuning = MergeTuning::for_large_fast_memory(4, 0);
    let case = KeyCase {
        label: "u32, large-merge tiles",
        comp: &Less,
        poison: 0xDEAD_BEEF_u32,
        draw: &|r: &mut StdRng| r.gen::<u32>(),
        few: &|r: &mut StdRng| r.gen_range(0..4u32),
    };
    case.for_each_merge(&sizes(tuning), |a, b, expected, _, what| {
        let got = device_merge(&gpu, &mut scratch, a, b, &Less, case.poison, Some(tuning));
        assert!(got == expected, "{what}: device merge differs");
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn root_api_and_backend_neutral_call() {
    assert!(
        twophase::gpu::default_gpu().is_some(),
        "a CUDA GPU is required"
    );
    let a: Vec<u32> = (0..10_000).map(|i| i * 2).collect();
    let b: Vec<u32> = (0..7_000).map(|i| i * 3).collect();
    let expected = cpu::merge(&a, &b);
    assert_eq!(twophase::merge(&a, &b).expect("merge"), expected);
    assert_eq!(
        twophase::merge_by(&a, &b, &Less).expect("merge_by"),
        expected
    );
    assert_eq!(
        twophase::merge_by(&a, &b, &Less).expect("merge_by"),
        expected
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn second_handle_hits_the_disk_cache() {
    let dir = std::env::temp_dir().join(format!("twophase-cache-test-{}", std::process::id()));
    let program = MergeTuning::for_types(4, 0).program::<u32, Less>(&Less, None);
    let arch = gpu().arch();
    std::env::set_var(twophase_gpu::runtime::module_cache::CACHE_DIR_ENV, &dir);
    let first =
        twophase_gpu::runtime::module_cache::compile_cached(&program.source, &program.name, arch)
            .expect("compile");
    let cached = std::fs::read_dir(&dir)
        .expect("cache dir")
        .filter_map(Result::ok)
        .any(|f| f.file_name().to_string_lossy().starts_with(&program.name));
    assert!(cached, "the cubin is in the disk cache");
    let second =
        twophase_gpu::runtime::module_cache::compile_cached(&program.source, &program.name, arch)
            .expect("cached");
    assert_eq!(first, second);
    let _ = std::fs::remove_dir_all(&dir);
}
