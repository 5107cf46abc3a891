//! CPU segmented sort against std's stable sort of each segment, on every segment-size mix.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use twophase::cpu::{self, MergesortTuning, Segments};

/// The segment-size mixes of the segmented-sort issue, at test sizes.
#[derive(Clone, Copy, Debug)]
enum Mix {
    /// Every segment 32 keys (the last one shorter).
    All32,
    /// Uniform 1..=200.
    Uniform200,
    /// Uniform 1..=2000.
    Uniform2000,
    /// Many tiny segments and a few long ones (lengths 2^k with probability 2^-k, up to 2^17).
    PowerLaw,
    /// One segment spanning every key.
    One,
    /// Empty segments and one-key segments mixed with short ones.
    EmptyAndSingle,
}

const MIXES: [Mix; 6] = [
    Mix::All32,
    Mix::Uniform200,
    Mix::Uniform2000,
    Mix::PowerLaw,
    Mix::One,
    Mix::EmptyAndSingle,
];

/// CSR starts of `n` keys in `mix` (beginning at 0, the last segment running to `n`).
fn starts(mix: Mix, n: usize, rng: &mut StdRng) -> Vec<usize> {
    let mut starts = vec![0];
    let mut at = 0;
    loop {
        let len = match mix {
            Mix::All32 => 32,
            Mix::Uniform200 => rng.gen_range(1..=200),
            Mix::Uniform2000 => rng.gen_range(1..=2000),
            Mix::PowerLaw => 1 << rng.gen_range(0u32..18).min(rng.gen_range(0u32..18)),
            Mix::One => n,
            Mix::EmptyAndSingle => [0, 1, 1, 5][rng.gen_range(0..4)],
        };
        at += len;
        if at >= n {
            break;
        }
        starts.push(at);
    }
    if rng.gen_bool(0.5) {
        // The rows + 1 convention: a trailing offset at the end, an empty last segment.
        starts.push(n);
    }
    starts
}

/// Sizes 0 and 1, around one and two CPU tiles, and several tiles.
fn sizes() -> [usize; 6] {
    let tile = MergesortTuning::TILE;
    [0, 1, 1000, tile - 1, 2 * tile + 1, 5 * tile + 77]
}

/// `keys` with each segment stable-sorted by std under `cmp`.
fn expected<T: Copy>(
    keys: &[T],
    segments: &[std::ops::Range<usize>],
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<T> {
    let mut out = keys.to_vec();
    for range in segments {
        out[range.clone()].sort_by(&cmp);
    }
    out
}

/// The segments of CSR `starts` over `n` keys as ranges.
fn ranges(starts: &[usize], n: usize) -> Vec<std::ops::Range<usize>> {
    (0..starts.len())
        .map(|i| starts[i]..starts.get(i + 1).copied().unwrap_or(n))
        .collect()
}

#[test]
fn segmented_sort_equals_std_per_segment_on_every_mix() {
    let mut rng = StdRng::seed_from_u64(0x5e9);
    for n in sizes() {
        for mix in MIXES {
            let starts = starts(mix, n, &mut rng);
            let segments = ranges(&starts, n);
            let case = format!("{n} keys, {mix:?}, {} segments", starts.len());

            let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
            let mut got = keys.clone();
            cpu::segmented_sort(&mut got, Segments::Starts(&starts));
            assert_eq!(got, expected(&keys, &segments, u32::cmp), "u32, {case}");

            // Few distinct keys under a closure (the block sort) and descending.
            let few: Vec<u8> = (0..n).map(|_| rng.gen_range(0..8)).collect();
            let mut got = few.clone();
            cpu::segmented_sort_by(&mut got, Segments::Starts(&starts), |a: &u8, b: &u8| a > b);
            assert_eq!(
                got,
                expected(&few, &segments, |a, b| b.cmp(a)),
                "u8 desc, {case}"
            );

            let wide: Vec<u64> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
            let mut got = wide.clone();
            cpu::segmented_sort(&mut got, Segments::Starts(&starts));
            assert_eq!(got, expected(&wide, &segments, u64::cmp), "u64, {case}");

            let floats: Vec<f32> = (0..n)
                .map(|_| match rng.gen_range(0..10) {
                    0 => f32::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    _ => rng.gen_range(-1.0..1.0),
                })
                .collect();
            let mut got = floats.clone();
            cpu::segmented_sort(&mut got, Segments::Starts(&starts));
            let want = expected(&floats, &segments, f32::total_cmp);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "f32 total order, {case}");
        }
    }
}

/// A user record sorted by one field under a closure: equivalent records keep their order.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Event {
    time: u32,
    id: u32,
}

#[test]
fn segmented_sort_pairs_and_records_are_stable() {
    let mut rng = StdRng::seed_from_u64(0xe7e);
    for n in sizes() {
        for mix in MIXES {
            let starts = starts(mix, n, &mut rng);
            let segments = ranges(&starts, n);
            let case = format!("{n} keys, {mix:?}");
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..16)).collect();
            let values: Vec<u32> = (0..n as u32).collect();
            let pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
            let want = expected(&pairs, &segments, |a, b| a.0.cmp(&b.0));
            let (mut k, mut v) = (keys.clone(), values.clone());
            cpu::segmented_sort_pairs(&mut k, &mut v, Segments::Starts(&starts));
            let got: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
            assert_eq!(got, want, "pairs, natural order, {case}");
            let (mut k, mut v) = (keys.clone(), values.clone());
            cpu::segmented_sort_pairs_by(
                &mut k,
                &mut v,
                Segments::Starts(&starts),
                |a: &u32, b: &u32| a < b,
            );
            let got: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
            assert_eq!(got, want, "pairs, closure, {case}");

            let events: Vec<Event> = pairs.iter().map(|&(time, id)| Event { time, id }).collect();
            let mut got = events.clone();
            cpu::segmented_sort_by(
                &mut got,
                Segments::Starts(&starts),
                |a: &Event, b: &Event| a.time < b.time,
            );
            let want = expected(&events, &segments, |a, b| a.time.cmp(&b.time));
            assert_eq!(got, want, "records, {case}");
        }
    }
}

/// Segments that do not tile the keys: the keys between them stay where they are.
#[test]
fn ranges_with_gaps_leave_the_gaps_alone() {
    let mut rng = StdRng::seed_from_u64(0x6a9);
    let n = 3 * MergesortTuning::TILE + 11;
    let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    let mut at = rng.gen_range(0..50);
    while at < n {
        let len = [0, 1, 40, 3000, 70_000][rng.gen_range(0..5)].min(n - at);
        starts.push(at);
        ends.push(at + len);
        at += len + rng.gen_range(0..100);
    }
    let segments: Vec<_> = starts.iter().zip(&ends).map(|(&s, &e)| s..e).collect();
    let mut got = keys.clone();
    cpu::segmented_sort(
        &mut got,
        Segments::Ranges {
            starts: &starts,
            ends: &ends,
        },
    );
    assert_eq!(got, expected(&keys, &segments, u32::cmp));
}

/// One run per thread on pools of 1 to 4 threads: the long segments' parallel sorts and the
/// short segments' tasks agree with std.
#[test]
fn segmented_sort_on_any_pool() {
    let mut rng = StdRng::seed_from_u64(0x9001);
    let n = 6 * MergesortTuning::TILE + 5;
    for threads in 1..=4 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        for mix in [Mix::PowerLaw, Mix::One, Mix::Uniform2000] {
            let starts = starts(mix, n, &mut rng);
            let keys: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            let mut got = keys.clone();
            pool.install(|| cpu::segmented_sort(&mut got, Segments::Starts(&starts)));
            let want = expected(&keys, &ranges(&starts, n), u64::cmp);
            assert_eq!(got, want, "{threads} threads, {mix:?}");
        }
    }
}

/// Each segment keeps its own keys whatever the comparator answers: `<=` and a comparator that
/// answers at random leave every segment a permutation of its keys, without a panic.
#[test]
fn inconsistent_comparators_keep_every_key_in_its_segment() {
    let mut rng = StdRng::seed_from_u64(0xbad);
    let n = 4 * MergesortTuning::TILE + 3;
    let starts = starts(Mix::PowerLaw, n, &mut rng);
    let segments = ranges(&starts, n);
    let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..100)).collect();
    let coin = std::sync::atomic::AtomicU64::new(0x1234_5678);
    let random = |_: &u32, _: &u32| {
        let x = coin.fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed);
        (x ^ (x >> 29)).count_ones().is_multiple_of(2)
    };
    let mut le = keys.clone();
    cpu::segmented_sort_by(&mut le, Segments::Starts(&starts), |a: &u32, b: &u32| {
        a <= b
    });
    let mut coin_flips = keys.clone();
    cpu::segmented_sort_by(&mut coin_flips, Segments::Starts(&starts), random);
    for got in [le, coin_flips] {
        for range in &segments {
            let mut a = got[range.clone()].to_vec();
            let mut b = keys[range.clone()].to_vec();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "segment {range:?} lost or gained keys");
        }
    }
}

/// The message a call panics with.
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn bad_segments_name_their_argument_and_touch_no_key() {
    let keys = vec![5u32, 4, 3, 2, 1];
    let cases: [(Segments<'_>, &str); 8] = [
        (
            Segments::Starts(&[]),
            "`starts` must hold at least one segment",
        ),
        (Segments::Starts(&[1, 3]), "`starts` must begin at 0"),
        (Segments::Starts(&[0, 3, 2]), "`starts` must not decrease"),
        (
            Segments::Starts(&[0, 6]),
            "`starts` must not pass the keys' length",
        ),
        (
            Segments::Ranges {
                starts: &[0, 2],
                ends: &[1],
            },
            "`starts` and `ends` must have the same length",
        ),
        (
            Segments::Ranges {
                starts: &[3],
                ends: &[2],
            },
            "each segment's end must not come before its start",
        ),
        (
            Segments::Ranges {
                starts: &[0],
                ends: &[usize::MAX],
            },
            "`ends` must not pass the keys' length",
        ),
        (
            Segments::Ranges {
                starts: &[0, 2],
                ends: &[3, 4],
            },
            "segments must be in order and must not overlap",
        ),
    ];
    for (segments, message) in cases {
        let mut k = keys.clone();
        let got = panic_message(std::panic::AssertUnwindSafe(|| {
            cpu::segmented_sort(&mut k, segments)
        }));
        assert!(got.contains(message), "{segments:?}: {got}");
        assert_eq!(k, keys, "{segments:?} moved keys");
    }
    let got = panic_message(|| {
        cpu::segmented_sort_pairs(&mut [1u32, 2], &mut [0u8], Segments::Starts(&[0]))
    });
    assert!(got.contains("same length"), "{got}");
    // Empty keys take no segments, or empty ones.
    cpu::segmented_sort::<u32>(&mut [], Segments::Starts(&[]));
    cpu::segmented_sort::<u32>(&mut [], Segments::Starts(&[0, 0]));
}

/// Segment lengths drawn up to `max_len` (0 allowed) until `n` keys are covered, from `seed`: the
/// CSR starts of `n` keys.
fn random_starts(n: usize, max_len: usize, seed: u64) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut starts = vec![0];
    let mut at = 0;
    while at < n {
        at += rng.gen_range(0..=max_len);
        if at < n {
            starts.push(at);
        }
    }
    starts
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Any segmentation of any size, natural order and a closure, equals std's stable sort of
    /// each segment (keys drawn from few values, so that stability shows in the pairs).
    #[test]
    fn segmented_sort_equals_std_on_any_segmentation(
        n in proptest::prop_oneof![
            proptest::strategy::Just(0usize),
            proptest::strategy::Just(1usize),
            proptest::strategy::Just(MergesortTuning::TILE - 1),
            proptest::strategy::Just(MergesortTuning::TILE + 1),
            2..MergesortTuning::TILE,
            (3 * MergesortTuning::TILE)..(5 * MergesortTuning::TILE),
        ],
        max_len in proptest::prop_oneof![
            proptest::strategy::Just(1usize),
            2usize..64,
            64usize..5000,
            proptest::strategy::Just(1usize << 17),
        ],
        seed in proptest::prelude::any::<u64>(),
    ) {
        let starts = random_starts(n, max_len, seed);
        let segments = ranges(&starts, n);
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..32)).collect();
        let mut got = keys.clone();
        cpu::segmented_sort(&mut got, Segments::Starts(&starts));
        proptest::prop_assert_eq!(&got, &expected(&keys, &segments, u32::cmp));
        let tagged: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
        let mut got = tagged.clone();
        cpu::segmented_sort_by(&mut got, Segments::Starts(&starts), |a: &(u32, u32), b: &(u32, u32)| a.0 > b.0);
        proptest::prop_assert_eq!(got, expected(&tagged, &segments, |a, b| b.0.cmp(&a.0)));
    }
}

/// The crate-root calls (the CPU backend wherever no GPU is present): the same order as the CPU
/// module, and errors instead of panics, naming the argument, with no key moved.
#[test]
fn front_door_segmented_sort_returns_errors_and_sorts() {
    if twophase::backend() != twophase::Backend::Cpu {
        eprintln!("skipped: a GPU is present (tests/gpu_segmented_sort.rs covers the GPU)");
        return;
    }
    let mut rng = StdRng::seed_from_u64(0x5E6);
    let n = 50_000;
    let starts = random_starts(n, 3000, 7);
    let keys: Vec<f64> = (0..n).map(|_| rng.gen_range(-1e3..1e3)).collect();
    let mut got = keys.clone();
    twophase::segmented_sort(&mut got, Segments::Starts(&starts)).expect("front door");
    let mut expected = keys.clone();
    cpu::segmented_sort(&mut expected, Segments::Starts(&starts));
    assert_eq!(got, expected);
    let values: Vec<u32> = (0..n as u32).collect();
    let (mut k, mut v) = (keys.clone(), values.clone());
    twophase::segmented_sort_pairs_by(
        &mut k,
        &mut v,
        Segments::Starts(&starts),
        &twophase::TotalOrderDesc,
    )
    .expect("front door pairs");
    let (mut ek, mut ev) = (keys.clone(), values);
    cpu::segmented_sort_pairs_by(
        &mut ek,
        &mut ev,
        Segments::Starts(&starts),
        |a: &f64, b: &f64| b.total_cmp(a).is_lt(),
    );
    assert!(
        k == ek && v == ev,
        "front door pairs differ from the CPU module"
    );
    let mut bad = keys.clone();
    let error = twophase::segmented_sort(&mut bad, Segments::Starts(&[0, 10, 5]));
    assert!(
        matches!(&error, Err(twophase::Error::InvalidInput(m)) if m.contains("`starts` must not decrease")),
        "{error:?}"
    );
    assert_eq!(bad, keys, "invalid segments moved keys");
    let error = twophase::segmented_sort_pairs(&mut bad, &mut [0u8; 3], Segments::Starts(&[0]));
    assert!(
        matches!(error, Err(twophase::Error::SizeMismatch { .. })),
        "{error:?}"
    );
    // A comparator that is not a strict weak order: each segment a permutation, and an error.
    let le = twophase::CudaComparator::new("le", "return a <= b;", |a: &u32, b: &u32| a <= b);
    let ints: Vec<u32> = (0..n).map(|_| rng.gen_range(0..100)).collect();
    let mut got = ints.clone();
    let result = twophase::segmented_sort_by(&mut got, Segments::Starts(&starts), &le);
    if let Err(e) = &result {
        assert!(e.to_string().contains("strict weak order"), "{e}");
    }
    let seg = Segments::Starts(&starts);
    for i in 0..seg.len() {
        let range = seg.segment(i, n);
        let (mut a, mut b) = (got[range.clone()].to_vec(), ints[range].to_vec());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "segment {i} is not a permutation");
    }
}
