//! GPU segmented sort tests (need a CUDA GPU; run with --include-ignored): each segment against std's stable sort.

mod common;
#[path = "../benches/common/segments.rs"]
mod segments;

use std::cmp::Ordering;

use common::checks::{
    assert_pairs_permutation, assert_permutation, boundary_sizes, test_scale, Guarded,
};
use common::{
    assert_invalid_input, gpu, order, rec_key_descending, rng, same_bits, special_f32, special_f64,
    Rec, U32Comparator, CLOCK_COIN_BODY,
};
use rand::rngs::StdRng;
use rand::Rng;
use rayon::prelude::*;
use segments::{segment_starts, SEGMENT_DISTRIBUTIONS};
use twophase::gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceSegments, Gpu, Greater, Less,
    SegmentedSortScratch, SegmentedSortTuning, Segments, SortBuffers, TotalOrder, TotalOrderDesc,
};
use twophase_gpu::cudarc::driver::DeviceRepr;
use twophase_gpu::segmented_sort::SHORT_MAX;

/// The segmentations of the differential tests: the benchmark's five, one-key segments, and
/// uniform 0..=40 with many empty segments (a CSR with a trailing end offset).
const TEST_DISTRIBUTIONS: [&str; 2] = ["ones", "with-empties"];

/// Segment starts of `dist` over `n` keys.
fn starts_of(dist: &str, n: usize, rng: &mut StdRng) -> Vec<usize> {
    match dist {
        "ones" => (0..n).collect(),
        "with-empties" => {
            let mut starts = vec![0];
            let mut at = 0;
            while at < n {
                at = (at + rng.gen_range(0..=40)).min(n);
                starts.push(at);
            }
            starts
        }
        _ => segment_starts(dist, n),
    }
}

/// `keys` with each segment sorted by std's stable sort under `cmp`: what the sort must return.
fn reference<K: Copy + Send, F: Fn(&K, &K) -> Ordering + Sync>(
    keys: &[K],
    segments: Segments<'_>,
    cmp: F,
) -> Vec<K> {
    let mut out = keys.to_vec();
    let ranges: Vec<_> = (0..segments.len())
        .map(|i| segments.segment(i, keys.len()))
        .collect();
    let mut rest: &mut [K] = &mut out;
    let mut consumed = 0;
    let mut pieces = Vec::with_capacity(ranges.len());
    for range in &ranges {
        let (_, tail) = rest.split_at_mut(range.start - consumed);
        let (piece, tail) = tail.split_at_mut(range.len());
        pieces.push(piece);
        rest = tail;
        consumed = range.end;
    }
    pieces.into_par_iter().for_each(|piece| piece.sort_by(&cmp));
    out
}

/// The sizes of the differential tests: 0, 1, around one and three tiles, 2^16 + 1, 2^20 and
/// 2^24 + 3, within the test scale.
fn sizes() -> Vec<usize> {
    let tile = SegmentedSortTuning::for_types(4, 0).tile();
    boundary_sizes(&[tile], &[(1 << 16) + 1, 1 << 20, (1 << 24) + 3])
}

/// A device sort (`sort`, with the scratch) that must succeed and leave the scratch's check clean
/// (`case` names it in the panic).
fn sort_clean(
    gpu: &Gpu,
    scratch: &mut SegmentedSortScratch,
    case: &str,
    sort: impl FnOnce(&mut SegmentedSortScratch) -> Result<(), twophase::gpu::GpuError>,
) {
    sort(scratch).unwrap_or_else(|e| panic!("{case}: {e}"));
    scratch
        .check(gpu)
        .unwrap_or_else(|e| panic!("{case}: the check after the sort: {e}"));
}

/// Sort `keys` by segments on the GPU and compare with std per segment, bit for bit.
fn check<K: DeviceKey + Send + Sync, C: DeviceComparator<K> + Sync>(
    gpu: &Gpu,
    keys: &[K],
    segments: Segments<'_>,
    comp: &C,
    case: &str,
) {
    let expected = reference(keys, segments, order(comp));
    let mut got = keys.to_vec();
    gpu.segmented_sort(&mut got, segments, comp)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    if !same_bits(&got, &expected) {
        let first = (0..got.len())
            .find(|&i| !same_bits(&got[i..=i], &expected[i..=i]))
            .unwrap_or(0);
        panic!(
            "{case}: differs from std per segment first at {first} of {}",
            got.len()
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_matches_std_on_every_distribution() {
    let gpu = gpu();
    let mut rng = rng();
    for n in sizes() {
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let few: Vec<u32> = (0..n).map(|_| rng.gen_range(0..4)).collect();
        for dist in SEGMENT_DISTRIBUTIONS.iter().chain(&TEST_DISTRIBUTIONS) {
            let starts = starts_of(dist, n, &mut rng);
            let segments = Segments::Starts(&starts);
            check(&gpu, &keys, segments, &Less, &format!("u32 {dist} n={n}"));
            check(
                &gpu,
                &few,
                segments,
                &Greater,
                &format!("few u32 desc {dist} n={n}"),
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_every_key_type() {
    let gpu = gpu();
    let mut rng = rng();
    let scale = test_scale();
    for n in [4099, (1 << 20) + 5].into_iter().filter(|&n| n <= scale) {
        for dist in ["uniform200", "powerlaw", "one"] {
            let starts = segment_starts(dist, n);
            let segments = Segments::Starts(&starts);
            let case = |t: &str| format!("{t} {dist} n={n}");
            let u8s: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            check(&gpu, &u8s, segments, &Less, &case("u8"));
            let u64s: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            check(&gpu, &u64s, segments, &Greater, &case("u64 desc"));
            let f32s: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
            check(&gpu, &f32s, segments, &TotalOrder, &case("f32 total"));
            let f64s: Vec<f64> = (0..n).map(|_| special_f64(&mut rng)).collect();
            check(
                &gpu,
                &f64s,
                segments,
                &TotalOrderDesc,
                &case("f64 total desc"),
            );
            // A user struct under a user comparator: equal keys keep their tags' order.
            let recs: Vec<Rec> = (0..n)
                .map(|i| Rec {
                    key: rng.gen_range(0..16),
                    tag: i as u32,
                })
                .collect();
            check(
                &gpu,
                &recs,
                segments,
                &rec_key_descending(),
                &case("rec desc"),
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_pairs_prove_stability() {
    let gpu = gpu();
    let mut rng = rng();
    for n in sizes() {
        for dist in ["all32", "uniform2000", "powerlaw", "one", "with-empties"] {
            let starts = starts_of(dist, n, &mut rng);
            let segments = Segments::Starts(&starts);
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..8)).collect();
            check_pairs(&gpu, &keys, segments, &Less, &format!("pairs {dist} n={n}"));
        }
    }
}

/// Starts of short segments (uniform 1..=2000 keys, a few empty or of one key) over `[from, to)`,
/// appended to `starts`.
fn short_starts(rng: &mut StdRng, from: usize, to: usize, starts: &mut Vec<usize>) {
    let mut at = from;
    while at < to {
        starts.push(at);
        at += match rng.gen_range(0..100) {
            0 => 0,
            1 => 1,
            _ => rng.gen_range(1..=2000),
        };
    }
}

/// Segments of `long` keys each (in that order) among short ones, as CSR starts over the keys
/// they make: short, long, short, long, ..., short.
fn long_among_short(rng: &mut StdRng, long: &[usize]) -> (Vec<usize>, usize) {
    const SHORT_KEYS: usize = 1 << 18;
    let mut starts = Vec::new();
    let mut at = 0;
    for &len in long {
        short_starts(rng, at, at + SHORT_KEYS, &mut starts);
        starts.push(at + SHORT_KEYS);
        at += SHORT_KEYS + len;
    }
    short_starts(rng, at, at + SHORT_KEYS, &mut starts);
    (starts, at + SHORT_KEYS)
}

/// CSR `starts` over `n` keys as ranges (starts, ends) that keep every segment of `long` keys
/// or more and every other shorter one: the others become gaps.
fn every_other_short(starts: &[usize], n: usize, long: usize) -> (Vec<usize>, Vec<usize>) {
    let ends: Vec<usize> = (0..starts.len())
        .map(|i| starts.get(i + 1).copied().unwrap_or(n))
        .collect();
    (0..starts.len())
        .filter(|&i| i % 2 == 0 || ends[i] - starts[i] >= long)
        .map(|i| (starts[i], ends[i]))
        .unzip()
}

/// Segments of `alone_min_keys` keys or more in a host-slice call sort alone through the plain
/// mergesort, the others through the segmented kernels around them: CSR starts and ranges, keys
/// and pairs (the second long segment the longer, so the plain sort's scratch meets a longer
/// one second), ties, and a comparator that is no order (each segment stays a permutation).
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_long_segments_sort_alone() {
    let gpu = gpu();
    let mut rng = rng();
    let alone = SegmentedSortTuning::for_types(4, 0).alone_min_keys;
    for long in [vec![alone], vec![alone + 5, alone + 1000], vec![alone - 1]] {
        let (starts, n) = long_among_short(&mut rng, &long);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let few: Vec<u32> = (0..n).map(|_| rng.gen_range(0..4)).collect();
        let case = format!("long {long:?}, n={n}");
        check(&gpu, &keys, Segments::Starts(&starts), &Less, &case);
        check(
            &gpu,
            &few,
            Segments::Starts(&starts),
            &Greater,
            &format!("few, {case}"),
        );
        // The same segments as ranges, every other short one left out (a gap kept as it is).
        let (range_starts, range_ends) = every_other_short(&starts, n, alone);
        let ranges = Segments::Ranges {
            starts: &range_starts,
            ends: &range_ends,
        };
        check(&gpu, &keys, ranges, &Less, &format!("ranges, {case}"));
    }
    // Pairs: u32 keys with u64 values, whose threshold counts 12 bytes a pair.
    let alone = SegmentedSortTuning::for_types(4, 8).alone_min_keys;
    let (starts, n) = long_among_short(&mut rng, &[alone + 3, alone + 77]);
    let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..8)).collect();
    check_pairs(
        &gpu,
        &keys,
        Segments::Starts(&starts),
        &Less,
        &format!("pairs, n={n}"),
    );
    // A comparator that is no order, on a long segment: an error names it or the sort stands,
    // and each segment is a permutation of its keys either way.
    let alone = SegmentedSortTuning::for_types(4, 0).alone_min_keys;
    let (starts, n) = long_among_short(&mut rng, &[alone]);
    let segments = Segments::Starts(&starts);
    for comp in &inconsistent_comparators() {
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
        check_no_order(&gpu, &keys, segments, comp, "long segment");
    }
}

/// How a test chains a sort's launches: as shipped for the tests' sizes (programmatic dependent
/// launches, the merge levels searching their own partitions), or as the largest sorts do.
#[derive(Clone, Copy, PartialEq)]
enum Chain {
    Small,
    Large,
}

/// The device-buffer call on guarded buffers at the shipped tuning, its launches chained as
/// `chain` says: keys (and `values`, when given), `segments` uploaded as 64-bit offsets. Returns
/// the call's outcome (the call, then the scratch's check) and the keys and values as the call
/// left them, error or not.
#[allow(clippy::too_many_arguments)]
fn sort_device_guarded<K: DeviceKey + DeviceRepr, C: DeviceComparator<K>>(
    gpu: &Gpu,
    scratch: &mut SegmentedSortScratch,
    keys: &[K],
    values: Option<&[u64]>,
    segments: Segments<'_>,
    comp: &C,
    case: &str,
    chain: Chain,
) -> (Result<(), twophase::gpu::GpuError>, Vec<K>, Vec<u64>) {
    let starts64: Vec<u64> = segments.starts().iter().map(|&s| s as u64).collect();
    let ends64: Vec<u64> = segments
        .ends()
        .unwrap_or(&[])
        .iter()
        .map(|&e| e as u64)
        .collect();
    let d_starts = Guarded::new(gpu, &starts64, u64::MAX);
    let d_ends = Guarded::new(gpu, &ends64, u64::MAX);
    let (starts_view, ends_view) = (d_starts.view(), d_ends.view());
    let device_segments = match segments {
        Segments::Starts(_) => DeviceSegments::Starts(&starts_view),
        Segments::Ranges { .. } => DeviceSegments::Ranges {
            starts: &starts_view,
            ends: &ends_view,
        },
    };
    let poison = bytemuck::Zeroable::zeroed();
    let mut d_keys = Guarded::new(gpu, keys, poison);
    let mut d_values = Guarded::new(gpu, values.unwrap_or(&[]), 0xDEAD_BEEF);
    // The shipped tuning, with its four-way levels (where the types have them) at any size: the
    // tests' sorts are smaller than the shipped size threshold.
    let value_bytes = values.map_or(0, |_| std::mem::size_of::<u64>());
    let shipped = SegmentedSortTuning::for_types(std::mem::size_of::<K>(), value_bytes);
    let (pdl_below_keys, own_partitions_below_keys) = match chain {
        Chain::Small => (shipped.pdl_below_keys, shipped.own_partitions_below_keys),
        Chain::Large => (0, 0),
    };
    let tuning = Some(SegmentedSortTuning {
        four_way_min_keys: 0,
        pdl_below_keys,
        own_partitions_below_keys,
        ..shipped
    });
    let sorted = match values {
        Some(_) => gpu.segmented_sort_device(
            SortBuffers::pairs(&mut d_keys.view_mut(), &mut d_values.view_mut()),
            device_segments,
            comp,
            tuning,
            scratch,
        ),
        None => gpu.segmented_sort_device(
            SortBuffers::keys(&mut d_keys.view_mut()),
            device_segments,
            comp,
            tuning,
            scratch,
        ),
    }
    .and_then(|()| scratch.check(gpu));
    let (got_keys, got_values) = (d_keys.download(gpu, case), d_values.download(gpu, case));
    d_starts.download(gpu, case);
    d_ends.download(gpu, case);
    (sorted, got_keys, got_values)
}

/// The device-buffer call on guarded `keys` under `comp` (keys alone), checked bit for bit
/// against std's stable sort per segment.
fn check_device<K, C>(
    gpu: &Gpu,
    scratch: &mut SegmentedSortScratch,
    keys: &[K],
    segments: Segments<'_>,
    comp: &C,
    case: &str,
) where
    K: DeviceKey + DeviceRepr + Send + Sync,
    C: DeviceComparator<K> + Sync,
{
    let (sorted, got, _) =
        sort_device_guarded(gpu, scratch, keys, None, segments, comp, case, Chain::Small);
    sorted.unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(
        same_bits(&got, &reference(keys, segments, order(comp))),
        "{case}: differs from std per segment"
    );
}

/// The device-buffer call on guarded u32 `keys` with u64 `values` under `Greater`, checked against
/// std's stable sort of the pairs per segment by key, descending: the values prove stability.
fn check_device_pairs_descending(
    gpu: &Gpu,
    scratch: &mut SegmentedSortScratch,
    keys: &[u32],
    values: &[u64],
    segments: Segments<'_>,
    case: &str,
) {
    let (sorted, got_keys, got_values) = sort_device_guarded(
        gpu,
        scratch,
        keys,
        Some(values),
        segments,
        &Greater,
        case,
        Chain::Small,
    );
    sorted.unwrap_or_else(|e| panic!("{case}: {e}"));
    let pairs: Vec<(u32, u64)> = keys.iter().copied().zip(values.iter().copied()).collect();
    let expected = reference(&pairs, segments, |a, b| b.0.cmp(&a.0));
    let got: Vec<(u32, u64)> = got_keys.into_iter().zip(got_values).collect();
    assert!(
        got == expected,
        "{case}: not std's stable order per segment"
    );
}

/// The device-buffer call (whose offsets the host never sees: its merge levels sort a long
/// segment) on long segments among short ones: one, two of different and of equal lengths,
/// long segments first and last, a segment of all but one key, ranges with gaps, pairs, floats
/// under the total order, a user comparator, comparators that are no order; and a segment of
/// the host-slice call's threshold for sorting alone. Guarded buffers: nothing written outside
/// them.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_device_long_segments_match_std() {
    let gpu = gpu();
    let mut rng = rng();
    let mut scratch = SegmentedSortScratch::new();
    // Keys of a long segment: dozens of the tile path's tiles, a few merge levels.
    const LONG: usize = 50_000;
    let mut layouts: Vec<(String, Vec<usize>, usize)> = Vec::new();
    for long in [
        vec![1 << 19],
        vec![300_000, 400_000],
        vec![300_000, 300_000],
        vec![LONG, LONG - 1],
        vec![LONG - 1],
        vec![LONG + 1],
    ] {
        let (starts, n) = long_among_short(&mut rng, &long);
        layouts.push((format!("long {long:?}"), starts, n));
    }
    let n = 700_000;
    layouts.push(("long first".into(), vec![0, 600_000, 600_100], n));
    layouts.push(("long last".into(), vec![0, 17, 40_000], n));
    layouts.push(("all but one key".into(), vec![0, 1], n));
    layouts.push(("all but one key, last".into(), vec![0, n - 1], n));
    for (name, starts, n) in &layouts {
        let n = *n;
        let segments = Segments::Starts(starts);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let case = format!("{name}, n={n}");
        check_device(&gpu, &mut scratch, &keys, segments, &Less, &case);
        // Pairs of few distinct keys: the values prove stability.
        let few: Vec<u32> = (0..n).map(|_| rng.gen_range(0..4)).collect();
        let values: Vec<u64> = (0..n as u64).collect();
        check_device_pairs_descending(
            &gpu,
            &mut scratch,
            &few,
            &values,
            segments,
            &format!("pairs, {case}"),
        );
    }
    // The launches as the largest sorts chain them: one after another, a partition launch at
    // every level.
    for (name, starts, n) in layouts.iter().take(2) {
        let segments = Segments::Starts(starts);
        let keys: Vec<u32> = (0..*n).map(|_| rng.gen_range(0..4)).collect();
        let values: Vec<u64> = (0..*n as u64).collect();
        for with_values in [false, true] {
            let case = format!("{name}, n={n}, values {with_values}, unchained");
            let pairs = with_values.then_some(values.as_slice());
            let (sorted, got_keys, got_values) = sort_device_guarded(
                &gpu,
                &mut scratch,
                &keys,
                pairs,
                segments,
                &Greater,
                &case,
                Chain::Large,
            );
            sorted.unwrap_or_else(|e| panic!("{case}: {e}"));
            if with_values {
                let pairs: Vec<(u32, u64)> =
                    keys.iter().copied().zip(values.iter().copied()).collect();
                let got: Vec<(u32, u64)> = got_keys.into_iter().zip(got_values).collect();
                let expected = reference(&pairs, segments, |a, b| b.0.cmp(&a.0));
                assert!(
                    got == expected,
                    "{case}: not std's stable order per segment"
                );
            } else {
                let expected = reference(&keys, segments, |a, b| b.cmp(a));
                assert!(got_keys == expected, "{case}: differs from std per segment");
            }
        }
    }
    // Ranges: the long ones kept, every other short one left out (gaps kept as they are).
    let (starts, n) = long_among_short(&mut rng, &[200_000, 90_000]);
    let (range_starts, range_ends) = every_other_short(&starts, n, LONG);
    let ranges = Segments::Ranges {
        starts: &range_starts,
        ends: &range_ends,
    };
    let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    check_device(&gpu, &mut scratch, &keys, ranges, &Less, "ranges");
    // Floats as their integer image, 8-byte keys alone (whole tiles' keys by 8-byte cp.async),
    // and a user struct under a user comparator.
    let (starts, n) = long_among_short(&mut rng, &[160_000]);
    let segments = Segments::Starts(&starts);
    let wide: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    check_device(&gpu, &mut scratch, &wide, segments, &Greater, "u64 desc");
    let floats: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
    // Checked against f32::total_cmp itself, not the comparator's own predicate.
    let (sorted, got, _) = sort_device_guarded(
        &gpu,
        &mut scratch,
        &floats,
        None,
        segments,
        &TotalOrder,
        "f32",
        Chain::Small,
    );
    sorted.unwrap_or_else(|e| panic!("f32: {e}"));
    let expected = reference(&floats, segments, f32::total_cmp);
    assert!(
        same_bits(&got, &expected),
        "f32 total: differs from std per segment"
    );
    let recs: Vec<Rec> = (0..n)
        .map(|i| Rec {
            key: rng.gen_range(0..16),
            tag: i as u32,
        })
        .collect();
    check_device(
        &gpu,
        &mut scratch,
        &recs,
        segments,
        &rec_key_descending(),
        "rec desc",
    );
    // Comparators that are no order: an error names the comparator or the sort stands, and each
    // segment is a permutation of its keys either way.
    for comp in &inconsistent_comparators() {
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
        let case = "no order, long segment";
        let (sorted, got, _) = sort_device_guarded(
            &gpu,
            &mut scratch,
            &keys,
            None,
            segments,
            comp,
            case,
            Chain::Small,
        );
        if let Err(e) = sorted {
            assert!(e.to_string().contains("strict weak order"), "{case}: {e}");
        }
        for i in 0..segments.len() {
            let range = segments.segment(i, n);
            assert_permutation(
                &got[range.clone()],
                &keys[range],
                &format!("{case}, segment {i}"),
            );
        }
    }
    // The host-slice call's threshold for sorting alone (32 MiB of keys): one segment of it.
    let alone = SegmentedSortTuning::for_types(4, 0).alone_min_keys;
    if alone + (1 << 19) <= test_scale() {
        let (starts, n) = long_among_short(&mut rng, &[alone + 3]);
        let segments = Segments::Starts(&starts);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let case = format!("shipped threshold, n={n}");
        check_device(&gpu, &mut scratch, &keys, segments, &Less, &case);
    }
}

/// The host-slice sort of `keys` under `comp`, a comparator that is no order: an error, if any,
/// names the comparator, and every segment is a permutation of its keys.
fn check_no_order(
    gpu: &Gpu,
    keys: &[u32],
    segments: Segments<'_>,
    comp: &U32Comparator,
    case: &str,
) {
    let mut got = keys.to_vec();
    if let Err(e) = gpu.segmented_sort(&mut got, segments, comp) {
        let message = e.to_string();
        assert!(message.contains("strict weak order"), "{case}: {message}");
    }
    for i in 0..segments.len() {
        let range = segments.segment(i, keys.len());
        assert_permutation(
            &got[range.clone()],
            &keys[range],
            &format!("{case}, segment {i}"),
        );
    }
}

/// Ranges that leave keys between segments: those stay where they are.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_ranges_leave_gaps_in_place() {
    let gpu = gpu();
    let mut rng = rng();
    for n in sizes() {
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        let mut at = 0;
        while at < n {
            let start = (at + rng.gen_range(0..50)).min(n);
            let len = if rng.gen_ratio(1, 200) {
                rng.gen_range(0..20_000)
            } else {
                rng.gen_range(0..300)
            };
            let end = (start + len).min(n);
            starts.push(start);
            ends.push(end);
            at = end;
        }
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let segments = Segments::Ranges {
            starts: &starts,
            ends: &ends,
        };
        check(&gpu, &keys, segments, &Less, &format!("ranges n={n}"));
    }
}

/// The device-buffer call on guarded buffers, keys and pairs, CSR starts and ranges: no write
/// outside the buffers, the same result as the host call.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_device_buffers_stay_in_bounds() {
    let gpu = gpu();
    let mut rng = rng();
    let mut scratch = SegmentedSortScratch::new();
    for n in sizes().into_iter().filter(|&n| n <= 1 << 20) {
        let starts = segment_starts("uniform200", n);
        let ends: Vec<usize> = starts
            .iter()
            .skip(1)
            .copied()
            .chain([n])
            .map(|e| e.saturating_sub(3))
            .collect();
        let ends: Vec<usize> = ends.iter().zip(&starts).map(|(&e, &s)| e.max(s)).collect();
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let values: Vec<u32> = (0..n as u32).collect();
        for ranges in [false, true] {
            let segments = if ranges {
                Segments::Ranges {
                    starts: &starts,
                    ends: &ends,
                }
            } else {
                Segments::Starts(&starts)
            };
            let case = format!("device n={n} ranges={ranges}");
            let starts64: Vec<u64> = starts.iter().map(|&s| s as u64).collect();
            let ends64: Vec<u64> = ends.iter().map(|&e| e as u64).collect();
            let d_starts = Guarded::new(&gpu, &starts64, u64::MAX);
            let d_ends = Guarded::new(&gpu, &ends64, u64::MAX);
            let (starts_view, ends_view) = (d_starts.view(), d_ends.view());
            let device_segments = if ranges {
                DeviceSegments::Ranges {
                    starts: &starts_view,
                    ends: &ends_view,
                }
            } else {
                DeviceSegments::Starts(&starts_view)
            };
            let mut d_keys = Guarded::new(&gpu, &keys, 0xDEAD_BEEF);
            let mut d_values = Guarded::new(&gpu, &values, 0xDEAD_BEEF);
            sort_clean(&gpu, &mut scratch, &case, |scratch| {
                gpu.segmented_sort_device(
                    SortBuffers::pairs(&mut d_keys.view_mut(), &mut d_values.view_mut()),
                    device_segments,
                    &Less,
                    None,
                    scratch,
                )
            });
            let got_keys = d_keys.download(&gpu, &case);
            let got_values = d_values.download(&gpu, &case);
            d_starts.download(&gpu, &case);
            d_ends.download(&gpu, &case);
            let pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
            let expected = reference(&pairs, segments, |a, b| a.0.cmp(&b.0));
            let got: Vec<(u32, u32)> = got_keys.into_iter().zip(got_values).collect();
            assert!(got == expected, "{case}: differs from std per segment");
        }
    }
}

/// Invalid segments: the host call names the fault before any copy; the device call touches no
/// key and its scratch check reports them; each leaves the keys as they were.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_rejects_invalid_segments() {
    let gpu = gpu();
    let keys: Vec<u32> = (0..10_000u32).rev().collect();
    let bad: [(Segments<'_>, &str); 6] = [
        (
            Segments::Starts(&[]),
            "`starts` must hold at least one segment",
        ),
        (Segments::Starts(&[1, 30]), "`starts` must begin at 0"),
        (
            Segments::Starts(&[0, 300, 200]),
            "`starts` must not decrease",
        ),
        (
            Segments::Starts(&[0, 10_001]),
            "`starts` must not pass the keys' length",
        ),
        (
            Segments::Ranges {
                starts: &[0, 50],
                ends: &[60, 70],
            },
            "must not overlap",
        ),
        (
            Segments::Ranges {
                starts: &[0],
                ends: &[10_001],
            },
            "`ends` must not pass",
        ),
    ];
    for (segments, expected) in bad {
        let mut got = keys.clone();
        assert_invalid_input(
            gpu.segmented_sort(&mut got, segments, &Less),
            expected,
            expected,
        );
        assert!(got == keys, "{expected}: keys moved");
    }
    // On the device only the kernels see the offsets.
    let mut scratch = SegmentedSortScratch::new();
    // (One CSR segment is the plain mergesort's sort, whose kernels read the check's verdict:
    // a start past 0 must leave the keys as they were there too.)
    let device_bad: [(&[u64], Option<&[u64]>); 6] = [
        (&[1], None),
        (&[1, 30], None),
        (&[0, 5000, 4000], None),
        (&[0, 20_000], None),
        (&[0, 50], Some(&[60, 70])),
        (&[10, 5], Some(&[5, 10_001])),
    ];
    for (starts, ends) in device_bad {
        let case = format!("device starts {starts:?} ends {ends:?}");
        let mut d_keys = Guarded::new(&gpu, &keys, 7);
        let d_starts = Guarded::new(&gpu, starts, 0);
        let d_ends = Guarded::new(&gpu, ends.unwrap_or(&[]), 0);
        let (s, e) = (d_starts.view(), d_ends.view());
        let segments = match ends {
            Some(_) => DeviceSegments::Ranges {
                starts: &s,
                ends: &e,
            },
            None => DeviceSegments::Starts(&s),
        };
        gpu.segmented_sort_device(
            SortBuffers::keys(&mut d_keys.view_mut()),
            segments,
            &Less,
            None,
            &mut scratch,
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_invalid_input(scratch.check(&gpu), &case, "the segments are invalid");
        assert!(d_keys.download(&gpu, &case) == keys, "{case}: keys moved");
    }
    // The scratch is clean again: valid sorts after the faults check out (one segment, and two).
    for starts in [&[0u64][..], &[0, 5000]] {
        let case = format!("valid device starts {starts:?}");
        let mut d_keys = Guarded::new(&gpu, &keys, 7);
        let d_starts = Guarded::new(&gpu, starts, 0);
        let s = d_starts.view();
        sort_clean(&gpu, &mut scratch, &case, |scratch| {
            gpu.segmented_sort_device(
                SortBuffers::keys(&mut d_keys.view_mut()),
                DeviceSegments::Starts(&s),
                &Less,
                None,
                scratch,
            )
        });
        let host_starts: Vec<usize> = starts.iter().map(|&s| s as usize).collect();
        let expected = reference(&keys, Segments::Starts(&host_starts), u32::cmp);
        assert!(d_keys.download(&gpu, &case) == expected, "{case}: differs");
    }
}

/// Comparators on u32 that are not strict weak orders: `<=`, an order that flips with the keys'
/// parity, and an answer read off the clock (not even a function; the host side answers `<=`,
/// never asked on the device).
fn inconsistent_comparators() -> [U32Comparator; 3] {
    [
        CudaComparator::new(
            "le",
            "return a <= b;",
            (|a: &u32, b: &u32| a <= b) as fn(&u32, &u32) -> bool,
        ),
        CudaComparator::new(
            "parity_flip",
            "return ((a ^ b) & 1) ? a < b : a > b;",
            (|a: &u32, b: &u32| if (a ^ b) & 1 == 1 { a < b } else { a > b })
                as fn(&u32, &u32) -> bool,
        ),
        // Not even a function: the same two keys may be answered differently each time (the
        // host side answers `<=`, never asked on the device).
        CudaComparator::new(
            "clock_coin",
            CLOCK_COIN_BODY,
            (|a: &u32, b: &u32| a <= b) as fn(&u32, &u32) -> bool,
        ),
    ]
}

/// Comparators that are not strict weak orders (one not even a function): every segment stays a
/// permutation of its keys, and a detected inconsistency is an `InvalidInput` naming the
/// comparator.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_inconsistent_comparator_keeps_segments_permutations() {
    let gpu = gpu();
    let mut rng = rng();
    let comparators = inconsistent_comparators();
    for n in sizes().into_iter().filter(|&n| n <= 1 << 20) {
        for dist in ["all32", "uniform2000", "one"] {
            let starts = segment_starts(dist, n);
            let segments = Segments::Starts(&starts);
            for comp in &comparators {
                let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
                check_no_order(&gpu, &keys, segments, comp, &format!("{dist} n={n}"));
            }
        }
    }
}

/// More than 2^32 keys, offsets past u32::MAX: u8 keys in short segments around one segment of
/// about 2^31 keys that crosses 2^32.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_past_u32_max() {
    const N: usize = (1 << 32) + (1 << 20) + 7;
    if test_scale() < N {
        eprintln!("skipped under the test scale");
        return;
    }
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    let keys: Vec<u8> = (0..N)
        .into_par_iter()
        .map(|i| common::splitmix_u32(seed, i) as u8)
        .collect();
    let (big_start, big_end) = ((1usize << 31) - 12_345, (1usize << 32) + 99_999);
    let mut starts: Vec<usize> = segment_starts("uniform2000", big_start);
    starts.push(big_start);
    starts.extend(
        segment_starts("uniform2000", N - big_end)
            .into_iter()
            .map(|s| s + big_end),
    );
    let mut got = keys.clone();
    gpu()
        .segmented_sort(&mut got, Segments::Starts(&starts), &Less)
        .expect("segmented sort past u32::MAX");
    let segments = Segments::Starts(&starts);
    (0..segments.len()).into_par_iter().for_each(|i| {
        let range = segments.segment(i, N);
        let (mut want, mut have) = ([0usize; 256], [0usize; 256]);
        for &k in &keys[range.clone()] {
            want[k as usize] += 1;
        }
        for &k in &got[range.clone()] {
            have[k as usize] += 1;
        }
        assert!(want == have, "segment {i} ({range:?}) lost keys");
        assert!(
            got[range.clone()].windows(2).all(|w| w[0] <= w[1]),
            "segment {i} ({range:?}) not sorted"
        );
    });
}

/// The crate-root call runs on the GPU here and agrees with the CPU backend.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_front_door_matches_cpu() {
    assert_eq!(twophase::backend(), twophase::Backend::Gpu);
    let mut rng = rng();
    let n = (1 << 20) + 77;
    let starts = segment_starts("powerlaw", n);
    let keys: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
    let mut got = keys.clone();
    twophase::segmented_sort(&mut got, Segments::Starts(&starts)).expect("front door");
    let mut expected = keys.clone();
    twophase::cpu::segmented_sort_by(
        &mut expected,
        Segments::Starts(&starts),
        |a: &f32, b: &f32| a.total_cmp(b).is_lt(),
    );
    assert!(
        same_bits(&got, &expected),
        "front door differs from the CPU backend"
    );
    let values: Vec<u32> = (0..n as u32).collect();
    let (mut k, mut v) = (keys.clone(), values.clone());
    twophase::segmented_sort_pairs(&mut k, &mut v, Segments::Starts(&starts))
        .expect("front door pairs");
    let (mut ck, mut cv) = (keys, values);
    twophase::cpu::segmented_sort_pairs_by(
        &mut ck,
        &mut cv,
        Segments::Starts(&starts),
        |a: &f32, b: &f32| a.total_cmp(b).is_lt(),
    );
    assert!(
        same_bits(&k, &ck) && v == cv,
        "front door pairs differ from the CPU backend"
    );
}

/// Small sorts that reach every kernel of the segmented sort (a partial tile, a few merge levels,
/// the checked kernels of a user comparator, pairs, ranges): the racecheck and synccheck rows of
/// the sanitizer run (`tiles` in the name).
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_tiles_under_sanitizers() {
    let gpu = gpu();
    let mut rng = rng();
    let tile = SegmentedSortTuning::for_types(4, 0).tile();
    let mut scratch = SegmentedSortScratch::new();
    for n in [1, 100, tile + 1, 5 * tile + 7, 13 * tile + 5] {
        for dist in ["all32", "uniform200", "one", "ones"] {
            let starts = starts_of(dist, n, &mut rng);
            let segments = Segments::Starts(&starts);
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..64)).collect();
            check(
                &gpu,
                &keys,
                segments,
                &Less,
                &format!("tiles u32 {dist} n={n}"),
            );
            let recs: Vec<Rec> = (0..n)
                .map(|i| Rec {
                    key: rng.gen_range(0..16),
                    tag: i as u32,
                })
                .collect();
            check(
                &gpu,
                &recs,
                segments,
                &rec_key_descending(),
                &format!("tiles rec {dist} n={n}"),
            );
            let values: Vec<u32> = (0..n as u32).collect();
            let case = format!("tiles pairs {dist} n={n}");
            check_pairs_with(&gpu, &keys, &values, segments, &Less, &case);
        }
        let ends: Vec<usize> = (0..n).step_by(50).map(|s| (s + 30).min(n)).collect();
        let starts: Vec<usize> = (0..n).step_by(50).collect();
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        check(
            &gpu,
            &keys,
            Segments::Ranges {
                starts: &starts,
                ends: &ends,
            },
            &Less,
            &format!("tiles ranges n={n}"),
        );
        // One range of all the keys, and one segment of all but the last, through the
        // device-buffer call with four-way levels at any size: quads of runs wholly in one
        // segment, merged four-way (a short last quad at 13 tiles); pairs stay two-way.
        let whole: Vec<u32> = (0..n).map(|_| rng.gen_range(0..64)).collect();
        let values: Vec<u64> = (0..n as u64).collect();
        let all_but_last = [0, n - 1];
        for (name, segments) in [
            (
                "one range",
                Segments::Ranges {
                    starts: &[0],
                    ends: &[n],
                },
            ),
            ("all but the last", Segments::Starts(&all_but_last)),
        ] {
            let case = format!("tiles {name} n={n}");
            check_device(&gpu, &mut scratch, &whole, segments, &Less, &case);
            let case = format!("tiles pairs {name} n={n}");
            check_device_pairs_descending(&gpu, &mut scratch, &whole, &values, segments, &case);
        }
    }
}

/// A 16-byte user key, wider than the short path takes: its short segments sort on the tile path.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Wide {
    key: u32,
    tag: u32,
    rest: u64,
}

impl DeviceKey for Wide {
    const CUDA_TYPE: &'static str = "wide";
    const CUDA_DEFINITION: &'static str =
        "struct wide { unsigned int key; unsigned int tag; unsigned long long rest; };";
}

/// Keys of one short-path block of full segments (its 128 threads sort a segment each): sizes
/// around it and its multiples cross blocks.
const SHORT_BLOCK_KEYS: usize = 128 * SHORT_MAX;

/// The sizes of the short-path tests: 0 to a few keys, around SHORT_MAX and a block, several
/// blocks, and 2^20 + 3, within the test scale.
fn short_sizes() -> Vec<usize> {
    boundary_sizes(&[SHORT_MAX, SHORT_BLOCK_KEYS], &[1 << 20 | 3])
}

/// A segmentation of a short-path test: its name, its starts, and the ends of ranges.
struct ShortSegments {
    name: &'static str,
    starts: Vec<usize>,
    ends: Option<Vec<usize>>,
}

impl ShortSegments {
    fn segments(&self) -> Segments<'_> {
        match &self.ends {
            Some(ends) => Segments::Ranges {
                starts: &self.starts,
                ends,
            },
            None => Segments::Starts(&self.starts),
        }
    }
}

/// Starts of segments of 1 to SHORT_MAX keys from `at` up to `end`, the last cut at `end`.
fn short_starts_from(mut at: usize, end: usize, rng: &mut StdRng, starts: &mut Vec<usize>) {
    while at < end {
        starts.push(at);
        at = (at + rng.gen_range(1..=SHORT_MAX)).min(end);
    }
}

/// Ranges of 0 to SHORT_MAX keys over `n` keys with gaps of 0 to 3 keys between them, and, where
/// `far`, one gap in eight wider than a block's span (those blocks move each segment alone).
fn short_ranges(n: usize, far: bool, rng: &mut StdRng) -> (Vec<usize>, Vec<usize>) {
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    let mut at = rng.gen_range(0..3);
    while at < n {
        let end = (at + rng.gen_range(0..=SHORT_MAX)).min(n);
        starts.push(at);
        ends.push(end);
        let gap = if far && rng.gen_ratio(1, 8) {
            SHORT_BLOCK_KEYS + rng.gen_range(0..100)
        } else {
            rng.gen_range(0..4)
        };
        at = end + gap;
    }
    (starts, ends)
}

/// The segmentations of the short-path tests over `n` keys: every segment SHORT_MAX keys (CSR
/// starts); lengths 0 to SHORT_MAX (empty segments, a trailing end offset); one-key segments;
/// the threshold (every segment short but one of SHORT_MAX + 1 keys, which sends the call down
/// the tile path); ranges with small gaps; ranges with gaps wider than a block.
fn short_segmentations(n: usize, rng: &mut StdRng) -> Vec<ShortSegments> {
    let csr = |name, starts| ShortSegments {
        name,
        starts,
        ends: None,
    };
    let mut random = Vec::new();
    let mut at = 0;
    while at < n {
        random.push(at);
        at = (at + rng.gen_range(0..=SHORT_MAX)).min(n);
    }
    random.push(n);
    let mut out = vec![
        csr("full", (0..n).step_by(SHORT_MAX).collect()),
        csr("random", random),
        csr("ones", (0..n).collect()),
    ];
    if n > SHORT_MAX {
        let long_at = rng.gen_range(0..=n - (SHORT_MAX + 1));
        let mut starts = Vec::new();
        short_starts_from(0, long_at, rng, &mut starts);
        starts.push(long_at);
        short_starts_from(long_at + SHORT_MAX + 1, n, rng, &mut starts);
        out.push(csr("threshold", starts));
    }
    for (name, far) in [("ranges", false), ("far-ranges", true)] {
        let (starts, ends) = short_ranges(n, far, rng);
        out.push(ShortSegments {
            name,
            starts,
            ends: Some(ends),
        });
    }
    out
}

/// `keys` sorted per segment with their positions as u64 values under `comp` on the GPU, checked
/// against std's stable sort of (key, position) per segment: the values prove stability.
fn check_pairs<K: DeviceKey + Send + Sync + PartialEq, C: DeviceComparator<K> + Sync>(
    gpu: &Gpu,
    keys: &[K],
    segments: Segments<'_>,
    comp: &C,
    case: &str,
) {
    let values: Vec<u64> = (0..keys.len() as u64).collect();
    check_pairs_with(gpu, keys, &values, segments, comp, case);
}

/// `keys` with `values` (distinct, so that they prove stability) sorted per segment under `comp`
/// on the GPU, checked against std's stable sort of the pairs by key per segment.
fn check_pairs_with<K, V, C>(
    gpu: &Gpu,
    keys: &[K],
    values: &[V],
    segments: Segments<'_>,
    comp: &C,
    case: &str,
) where
    K: DeviceKey + Send + Sync + PartialEq,
    V: twophase::gpu::DeviceValue + Send + Sync + PartialEq,
    C: DeviceComparator<K> + Sync,
{
    let pairs: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
    let order = order(comp);
    let expected = reference(&pairs, segments, |a, b| order(&a.0, &b.0));
    let (mut k, mut v) = (keys.to_vec(), values.to_vec());
    gpu.segmented_sort_pairs(&mut k, &mut v, segments, comp)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let got: Vec<(K, V)> = k.into_iter().zip(v).collect();
    assert!(
        got == expected,
        "{case}: not std's stable order per segment"
    );
}

/// Segments of at most SHORT_MAX keys (one thread's sort each), and the threshold where one
/// segment is longer: every key type, a user comparator and pairs against std per segment.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_short_segments_match_std() {
    let gpu = gpu();
    let mut rng = rng();
    for n in short_sizes() {
        for seg in short_segmentations(n, &mut rng) {
            let segments = seg.segments();
            let case = |t: &str| format!("short {t} {} n={n}", seg.name);
            let u32s: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
            check(&gpu, &u32s, segments, &Less, &case("u32"));
            let few: Vec<u32> = (0..n).map(|_| rng.gen_range(0..4)).collect();
            check(&gpu, &few, segments, &Greater, &case("few u32 desc"));
            let u8s: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            check(&gpu, &u8s, segments, &Less, &case("u8"));
            let u64s: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            check(&gpu, &u64s, segments, &Greater, &case("u64 desc"));
            let f32s: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
            check(&gpu, &f32s, segments, &TotalOrder, &case("f32 total"));
            // A user struct under a user comparator: equal keys keep their tags' order.
            let recs: Vec<Rec> = (0..n)
                .map(|i| Rec {
                    key: rng.gen_range(0..8),
                    tag: i as u32,
                })
                .collect();
            check(&gpu, &recs, segments, &rec_key_descending(), &case("rec"));
            check_pairs(&gpu, &few, segments, &Less, &case("u32 pairs"));
            let few_f32: Vec<f32> = few.iter().map(|&k| k as f32 - 1.5).collect();
            check_pairs(
                &gpu,
                &few_f32,
                segments,
                &TotalOrderDesc,
                &case("f32 pairs"),
            );
            // Types the short path does not take (16-byte keys, 16-byte values): the tile path.
            let wides: Vec<Wide> = (0..n)
                .map(|i| Wide {
                    key: rng.gen_range(0..8),
                    tag: i as u32,
                    rest: rng.gen(),
                })
                .collect();
            let wide_key = CudaComparator::new(
                "wide_key",
                "return a.key < b.key;",
                (|a: &Wide, b: &Wide| a.key < b.key) as fn(&Wide, &Wide) -> bool,
            );
            check(&gpu, &wides, segments, &wide_key, &case("16-byte keys"));
            let wide_values: Vec<[u32; 4]> = (0..n as u32).map(|i| [i, !i, i, !i]).collect();
            let case16 = case("16-byte values");
            check_pairs_with(&gpu, &few, &wide_values, segments, &Less, &case16);
        }
    }
}

/// The short path through device buffers between guards: keys and pairs, CSR starts and
/// ranges, near and far apart; nothing is written outside the buffers, gaps keep their keys.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_short_device_buffers_stay_in_bounds() {
    let gpu = gpu();
    let mut rng = rng();
    let mut scratch = SegmentedSortScratch::new();
    for n in short_sizes().into_iter().filter(|&n| n > 0) {
        for seg in short_segmentations(n, &mut rng) {
            let case = format!("short device {} n={n}", seg.name);
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..16)).collect();
            let values: Vec<u32> = (0..n as u32).collect();
            let starts64: Vec<u64> = seg.starts.iter().map(|&s| s as u64).collect();
            let ends64: Vec<u64> = seg.ends.iter().flatten().map(|&e| e as u64).collect();
            let d_starts = Guarded::new(&gpu, &starts64, u64::MAX);
            let d_ends = Guarded::new(&gpu, &ends64, u64::MAX);
            let (starts_view, ends_view) = (d_starts.view(), d_ends.view());
            let device_segments = || match seg.ends {
                Some(_) => DeviceSegments::Ranges {
                    starts: &starts_view,
                    ends: &ends_view,
                },
                None => DeviceSegments::Starts(&starts_view),
            };
            let mut d_keys = Guarded::new(&gpu, &keys, 0xDEAD_BEEF);
            let mut d_values = Guarded::new(&gpu, &values, 0xDEAD_BEEF);
            sort_clean(&gpu, &mut scratch, &case, |scratch| {
                gpu.segmented_sort_device(
                    SortBuffers::pairs(&mut d_keys.view_mut(), &mut d_values.view_mut()),
                    device_segments(),
                    &Less,
                    None,
                    scratch,
                )
            });
            let got_keys = d_keys.download(&gpu, &case);
            let got_values = d_values.download(&gpu, &case);
            let pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
            let expected = reference(&pairs, seg.segments(), |a, b| a.0.cmp(&b.0));
            let got: Vec<(u32, u32)> = got_keys.into_iter().zip(got_values).collect();
            assert!(got == expected, "{case}: differs from std per segment");
            // Keys alone, on the same scratch.
            let mut d_keys = Guarded::new(&gpu, &keys, 0xDEAD_BEEF);
            sort_clean(&gpu, &mut scratch, &case, |scratch| {
                gpu.segmented_sort_device(
                    SortBuffers::keys(&mut d_keys.view_mut()),
                    device_segments(),
                    &Less,
                    None,
                    scratch,
                )
            });
            let expected_keys = reference(&keys, seg.segments(), u32::cmp);
            assert!(
                d_keys.download(&gpu, &case) == expected_keys,
                "{case}: keys alone differ from std per segment"
            );
            d_starts.download(&gpu, &case);
            d_ends.download(&gpu, &case);
        }
    }
}

/// Comparators that are not strict weak orders (`<=` and an answer read off the clock, not even
/// a function) on short segments: each segment stays a permutation of its keys, each value with
/// its key.
#[test]
#[ignore = "needs a CUDA GPU"]
fn segmented_sort_short_inconsistent_comparators_keep_permutations() {
    let gpu = gpu();
    let mut rng = rng();
    let comparators = inconsistent_comparators();
    for n in short_sizes().into_iter().filter(|&n| n <= 1 << 20) {
        for seg in short_segmentations(n, &mut rng) {
            let segments = seg.segments();
            for comp in &comparators {
                let case = format!("short {} {} n={n}", comp.name(), seg.name);
                let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..8)).collect();
                let values: Vec<u32> = (0..n as u32).collect();
                let mut got = keys.clone();
                let (mut k, mut v) = (keys.clone(), values.clone());
                for result in [
                    gpu.segmented_sort(&mut got, segments, comp),
                    gpu.segmented_sort_pairs(&mut k, &mut v, segments, comp),
                ] {
                    if let Err(e) = result {
                        let message = e.to_string();
                        assert!(message.contains("strict weak order"), "{case}: {message}");
                    }
                }
                for i in 0..segments.len() {
                    let range = segments.segment(i, n);
                    let what = format!("{case} segment {i}");
                    assert_permutation(&got[range.clone()], &keys[range.clone()], &what);
                    assert_pairs_permutation(
                        (&k[range.clone()], &v[range.clone()]),
                        (&keys[range.clone()], &values[range]),
                        &what,
                    );
                }
                // Keys outside every range stay where they are.
                let mut inside = vec![false; n];
                for i in 0..segments.len() {
                    inside[segments.segment(i, n)].fill(true);
                }
                for (p, _) in inside.iter().enumerate().filter(|(_, &inside)| !inside) {
                    assert!(
                        got[p] == keys[p] && k[p] == keys[p] && v[p] == values[p],
                        "{case}: gap key {p} moved"
                    );
                }
            }
        }
    }
}
