//! GPU load-balancing search, interval expand/move, user snippet and sorted search tests (need a CUDA GPU): differential vs the CPU backend and brute force.

mod common;

use std::fmt::Debug;

use common::{
    assert_invalid_input, broken_u32_comparators, gpu, invalid_input, rng, setup, upload,
    U32Comparator, CLOCK_COIN_BODY,
};
use rand::rngs::StdRng;
use rand::Rng;
use rayon::prelude::*;
use twophase::cpu;
use twophase::gpu::{
    CudaComparator, DeviceComparator, DeviceIndex, DeviceValue, Gpu, GpuError, Greater, Less,
    LoadBalanceOp, LoadBalanceTuning, SearchScratch,
};
use twophase::gpu::{Interval, IntervalMove};
use twophase_gpu::cudarc::driver::{CudaSlice, CudaView, DevicePtr, DeviceRepr};
use twophase_gpu::runtime::status::messages;
use twophase_gpu::SearchBound;

/// Segment-size distributions of the load-balancing tests.
#[derive(Clone, Copy, Debug)]
enum Dist {
    /// Every segment the same size (the last takes the remainder).
    AllEqual,
    /// Nine segments of ten empty, the rest random.
    ManyEmpty,
    /// Power-law sizes, plus one segment holding half of the items.
    PowerLawGiant,
    /// Uniform random sizes.
    Random,
    /// A single segment with every item.
    OneSegment,
}

const DISTS: [Dist; 5] = [
    Dist::AllEqual,
    Dist::ManyEmpty,
    Dist::PowerLawGiant,
    Dist::Random,
    Dist::OneSegment,
];

/// Segment sizes summing to `total`, drawn from `dist`.
fn counts(rng: &mut StdRng, total: usize, dist: Dist) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = total;
    match dist {
        Dist::OneSegment => return vec![total],
        Dist::AllEqual => {
            let size = rng.gen_range(1..=8usize);
            while left > 0 {
                let s = size.min(left);
                out.push(s);
                left -= s;
            }
        }
        Dist::PowerLawGiant => {
            let giant = total / 2;
            left -= giant;
            let at = rng.gen_range(0..=8usize);
            while left > 0 || out.len() <= at {
                if out.len() == at {
                    out.push(giant);
                    continue;
                }
                let u: f64 = rng.gen_range(1e-6..1.0);
                let s = ((1.0 / u.powf(0.8)) as usize).min(left);
                out.push(s);
                left -= s;
            }
        }
        Dist::ManyEmpty | Dist::Random => {
            while left > 0 {
                let s = if matches!(dist, Dist::ManyEmpty) && rng.gen_range(0..10) != 0 {
                    0
                } else {
                    rng.gen_range(0..=16usize).min(left)
                };
                out.push(s);
                left -= s;
            }
            // Trailing and leading empty segments.
            out.push(0);
            out.insert(0, 0);
        }
    }
    if out.is_empty() {
        // total == 0: some empty segments.
        out = vec![0; rng.gen_range(1..5)];
    }
    out
}

fn exclusive_scan(counts: &[usize]) -> Vec<usize> {
    let mut acc = 0;
    counts
        .iter()
        .map(|&c| {
            let s = acc;
            acc += c;
            s
        })
        .collect()
}

/// Brute force: (segment, rank) of every item.
fn brute_lbs(counts: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (s, &c) in counts.iter().enumerate() {
        out.extend((0..c).map(|r| (s, r)));
    }
    out
}

/// `scan` with each entry as a device index `T`.
fn scan_as<T: TryFrom<usize>>(scan: &[usize]) -> Vec<T>
where
    T::Error: Debug,
{
    scan.iter()
        .map(|&s| T::try_from(s).expect("a scan entry of the index type"))
        .collect()
}

/// Load-balancing search of `scan` (as `T`) through the device API, into guarded outputs of
/// segments and, `with_ranks`, ranks, filled with `filler` first. Asserts that nothing is
/// written past them (`what` names the case) and returns the `total` segments and the ranks
/// (empty without them).
fn device_lbs<T>(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    scan: &[usize],
    total: usize,
    filler: T,
    with_ranks: bool,
    what: &str,
) -> (Vec<T>, Vec<T>)
where
    T: DeviceIndex + DeviceRepr + Copy + PartialEq + TryFrom<usize>,
    T::Error: Debug,
{
    let dscan = upload(gpu, &scan_as::<T>(scan), filler);
    let rank_len = if with_ranks { total } else { 0 };
    let mut dseg = upload_guarded(gpu, &vec![filler; total], filler);
    let mut dranks = upload_guarded(gpu, &vec![filler; rank_len], filler);
    let mut rank_view = dranks.slice_mut(..rank_len);
    gpu.load_balance_search_device(
        &dscan.slice(..scan.len()),
        total,
        &mut dseg.slice_mut(..total),
        with_ranks.then_some(&mut rank_view),
        None,
        scratch,
    )
    .unwrap_or_else(|e| panic!("{what}: device search: {e:?}"));
    let outputs = [
        (download(gpu, &dseg), total),
        (download(gpu, &dranks), rank_len),
    ];
    let [segments, ranks] = outputs.map(|(mut out, len)| {
        assert!(
            out[len..].iter().all(|&g| g == filler),
            "{what}: wrote past the output"
        );
        out.truncate(len);
        out
    });
    (segments, ranks)
}

fn sizes() -> Vec<usize> {
    let tile = LoadBalanceTuning::shipped().tile();
    vec![
        0,
        1,
        2,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        37 * tile + 5,
        (1 << 20) + 3,
    ]
}

const POISON32: u32 = 0xDEAD_BEEF;

/// A load-balancing case's segment sizes, their exclusive scan and brute force's (segment,
/// rank) of every item.
type LbsCase<'a> = (&'a [usize], &'a [usize], &'a [(usize, usize)]);

/// `check(rng, total, dist, case)` for every size of [`sizes`] and every distribution; returns
/// the number of cases.
fn for_each_lbs_case(
    rng: &mut StdRng,
    mut check: impl FnMut(&mut StdRng, usize, Dist, LbsCase),
) -> usize {
    for total in sizes() {
        for dist in DISTS {
            let counts = counts(rng, total, dist);
            let scan = exclusive_scan(&counts);
            let pairs = brute_lbs(&counts);
            check(rng, total, dist, (&counts, &scan, &pairs));
        }
    }
    sizes().len() * DISTS.len()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn load_balance_search_matches_cpu_and_brute_force() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    let cases = for_each_lbs_case(&mut rng, |_, total, dist, (_, scan, expected)| {
        assert_eq!(
            cpu::load_balance_search_with_ranks(scan, total),
            expected,
            "CPU backend vs brute force, total {total}, {dist:?}"
        );
        // Host form, usize, with ranks.
        let (segs, ranks) = gpu
            .load_balance_search_with_ranks(scan, total)
            .expect("host lbs");
        let got: Vec<(usize, usize)> = segs.into_iter().zip(ranks).collect();
        assert!(got == expected, "host with ranks, total {total}, {dist:?}");
        // Device form, u32, poisoned output.
        let what = format!("total {total}, {dist:?}");
        let (seg32, rank32) = device_lbs(&gpu, &mut scratch, scan, total, POISON32, true, &what);
        for (i, &(s, r)) in expected.iter().enumerate() {
            assert!(
                seg32[i] as usize == s && rank32[i] as usize == r,
                "device u32, total {total}, {dist:?}: item {i} got ({}, {}), want ({s}, {r})",
                seg32[i],
                rank32[i]
            );
        }
        // Device form, u64 segments only.
        let (seg64, _) = device_lbs(&gpu, &mut scratch, scan, total, u64::MAX - 3, false, &what);
        for (i, &(s, _)) in expected.iter().enumerate() {
            assert_eq!(seg64[i], s as u64, "device u64, total {total}, {dist:?}");
        }
    });
    eprintln!("{cases} load-balancing cases agree with the CPU backend and brute force");
}

/// Check `segments` (device u32 output) against the segment runs of `scan`, in parallel.
fn check_runs(segments: &[u32], scan: &[usize], total: usize, label: &str) {
    scan.par_iter().enumerate().for_each(|(s, &begin)| {
        let end = scan.get(s + 1).copied().unwrap_or(total);
        if let Some(i) = (begin..end).find(|&i| segments[i] as usize != s) {
            panic!("{label}: item {i} has segment {}, want {s}", segments[i]);
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn load_balance_search_2_pow_27_items() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    let total = 1usize << 27;
    for dist in [Dist::Random, Dist::PowerLawGiant, Dist::ManyEmpty] {
        let counts = counts(&mut rng, total, dist);
        let scan = exclusive_scan(&counts);
        let what = format!("2^27 {dist:?}");
        let (got, _) = device_lbs(&gpu, &mut scratch, &scan, total, POISON32, false, &what);
        check_runs(&got, &scan, total, &what);
        let cpu_segments = cpu::load_balance_search(&scan, total);
        assert!(
            got.par_iter()
                .zip(&cpu_segments)
                .all(|(&g, &c)| g as usize == c),
            "2^27 {dist:?}: GPU differs from the CPU backend"
        );
        eprintln!("2^27 items over {} segments ({dist:?}): ok", scan.len());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn load_balance_search_past_2_pow_31_items() {
    // 64-bit global offsets: 2^31 + 1000 items (u32 segment ids still fit).
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    let total = (1usize << 31) + 1000;
    let mut counts: Vec<usize> = (0..1000).map(|_| rng.gen_range(0..1 << 20)).collect();
    let used: usize = counts.iter().sum();
    counts.insert(500, total - used);
    let scan = exclusive_scan(&counts);
    let what = "2^31 + 1000";
    let (got, _) = device_lbs(&gpu, &mut scratch, &scan, total, POISON32, false, what);
    check_runs(&got, &scan, total, what);
    eprintln!("2^31 + 1000 items over {} segments: ok", scan.len());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn interval_expand_move_and_snippet_match_brute_force() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    let op = LoadBalanceOp::new(
        "segment_rank_item",
        "((unsigned int*)args.p[0])[item] = (unsigned int)segment;\n\
         ((unsigned int*)args.p[1])[item] = (unsigned int)rank ^ (unsigned int)args.p[2];",
    );
    let cases = for_each_lbs_case(&mut rng, |rng, total, dist, (counts, scan, pairs)| {
        let nseg = counts.len();
        // Expand: u64 values per segment.
        let values: Vec<u64> = (0..nseg).map(|_| rng.gen()).collect();
        let got = gpu.interval_expand(scan, &values, total).expect("expand");
        let want: Vec<u64> = pairs.iter().map(|&(s, _)| values[s]).collect();
        assert!(got == want, "expand, total {total}, {dist:?}");
        // Gather: segment s reads from a random place of a larger input.
        let input: Vec<u32> = (0..total + 4096).map(|_| rng.gen()).collect();
        let gather: Vec<usize> = counts
            .iter()
            .map(|&c| rng.gen_range(0..=input.len() - c))
            .collect();
        let mut out = vec![POISON32; total];
        let gathered = IntervalMove::new(scan, total).gather(&gather);
        gpu.interval_move(gathered, &input, &mut out)
            .expect("gather");
        let want: Vec<u32> = pairs.iter().map(|&(s, r)| input[gather[s] + r]).collect();
        assert!(out == want, "gather, total {total}, {dist:?}");
        // Scatter: segments reversed into the output.
        let sources: Vec<u32> = (0..total).map(|_| rng.gen()).collect();
        let mut scatter = vec![0usize; nseg];
        let mut at = 0;
        for s in (0..nseg).rev() {
            scatter[s] = at;
            at += counts[s];
        }
        let mut out = vec![POISON32; total];
        let scattered = IntervalMove::new(scan, total).scatter(&scatter);
        gpu.interval_move(scattered, &sources, &mut out)
            .expect("scatter");
        let mut want = vec![POISON32; total];
        for (i, &(s, r)) in pairs.iter().enumerate() {
            want[scatter[s] + r] = sources[i];
        }
        assert!(out == want, "scatter, total {total}, {dist:?}");
        // Move: gather and scatter, unwritten outputs keep their poison.
        let mut out = vec![POISON32; total + 100];
        let moves = IntervalMove::new(scan, total)
            .gather(&gather)
            .scatter(&scatter);
        gpu.interval_move(moves, &input, &mut out).expect("move");
        let mut want = vec![POISON32; total + 100];
        for &(s, r) in pairs {
            want[scatter[s] + r] = input[gather[s] + r];
        }
        assert!(out == want, "move, total {total}, {dist:?}");
        let mut cpu_out = vec![POISON32; total + 100];
        twophase::interval_move(moves, &input, &mut cpu_out).expect("move any");
        assert!(cpu_out == want, "move_any, total {total}, {dist:?}");
        // User snippet: segment and (rank ^ key) per item.
        let scan32: Vec<u32> = scan.iter().map(|&s| s as u32).collect();
        let dscan = upload(&gpu, &scan32, 0);
        let dseg = upload(&gpu, &vec![POISON32; total], POISON32);
        let drank = upload(&gpu, &vec![POISON32; total], POISON32);
        let key: u32 = rng.gen();
        {
            let stream = gpu.stream();
            let (seg_ptr, _a) = dseg.device_ptr(stream);
            let (rank_ptr, _b) = drank.device_ptr(stream);
            // SAFETY: the snippet writes `seg` and `rank` at `item`, which is below `total`, the
            // length of both buffers, and both outlive the download below, which waits for it.
            unsafe {
                gpu.load_balance_for_each_device(
                    &dscan.slice(..scan32.len()),
                    total,
                    &op,
                    &[seg_ptr, rank_ptr, u64::from(key)],
                    &mut scratch,
                )
            }
            .expect("for each");
        }
        let seg = gpu.stream().clone_dtoh(&dseg).expect("download");
        let rank = gpu.stream().clone_dtoh(&drank).expect("download");
        for (i, &(s, r)) in pairs.iter().enumerate() {
            assert!(
                seg[i] as usize == s && (rank[i] ^ key) as usize == r,
                "snippet, total {total}, {dist:?}, item {i}"
            );
        }
    });
    eprintln!("{cases} interval/snippet cases agree with brute force");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_scans_are_errors_not_crashes() {
    let gpu = gpu();
    let bad = [
        (vec![1usize, 2], 4),
        (vec![0, 3, 2], 4),
        (vec![0, 5], 4),
        (vec![], 3),
    ];
    for (scan, total) in bad {
        let err = gpu.load_balance_search(&scan, total).expect_err("bad scan");
        assert!(matches!(err, GpuError::InvalidInput(_)), "{err}");
    }
}

/// Search input shapes.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Random,
    DuplicateHeavy,
    AllEqual,
    NeedlesEmpty,
    HaystackEmpty,
}

const SHAPES: [Shape; 5] = [
    Shape::Random,
    Shape::DuplicateHeavy,
    Shape::AllEqual,
    Shape::NeedlesEmpty,
    Shape::HaystackEmpty,
];

fn search_inputs(
    rng: &mut StdRng,
    n: usize,
    shape: Shape,
    descending: bool,
) -> (Vec<u32>, Vec<u32>) {
    let split = match shape {
        Shape::NeedlesEmpty => 0,
        Shape::HaystackEmpty => n,
        _ => rng.gen_range(0..=n),
    };
    let draw = |rng: &mut StdRng| match shape {
        Shape::DuplicateHeavy => rng.gen_range(0..16u32),
        Shape::AllEqual => 7,
        _ => rng.gen(),
    };
    let mut a: Vec<u32> = (0..split).map(|_| draw(rng)).collect();
    let mut b: Vec<u32> = (0..n - split).map(|_| draw(rng)).collect();
    a.sort_unstable();
    b.sort_unstable();
    if descending {
        a.reverse();
        b.reverse();
    }
    (a, b)
}

fn cpu_bound(bound: SearchBound) -> cpu::SearchBound {
    match bound {
        SearchBound::Lower => cpu::SearchBound::Lower,
        SearchBound::Upper => cpu::SearchBound::Upper,
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorted_search_matches_cpu_and_brute_force() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    let tile = twophase::gpu::SortedSearchTuning::for_key(4).tile();
    let mut cases = 0;
    for n in [
        0,
        1,
        2,
        tile - 1,
        tile,
        tile + 1,
        37 * tile + 5,
        (1 << 20) + 3,
    ] {
        for shape in SHAPES {
            for bound in [SearchBound::Lower, SearchBound::Upper] {
                for descending in [false, true] {
                    let (needles, haystack) = search_inputs(&mut rng, n, shape, descending);
                    let less = |x: &u32, y: &u32| if descending { y < x } else { x < y };
                    let want = common::bounds::reference_bounds(&needles, &haystack, bound, less);
                    let cpu_got =
                        cpu::sorted_search_by(&needles, &haystack, cpu_bound(bound), less);
                    assert!(cpu_got == want, "CPU backend vs brute force");
                    let got: Vec<usize> = if descending {
                        gpu.sorted_search(&needles, &haystack, bound, &Greater)
                    } else {
                        gpu.sorted_search(&needles, &haystack, bound, &Less)
                    }
                    .expect("host search");
                    assert!(
                        got == want,
                        "host usize, n {n}, {shape:?}, {bound:?}, desc {descending}"
                    );
                    if !descending {
                        let what = format!("n {n}, {shape:?}, {bound:?}");
                        let inputs = (&needles[..], &haystack[..]);
                        let out =
                            guarded_device_search(&gpu, &mut scratch, inputs, bound, &Less, &what);
                        for (i, &w) in want.iter().enumerate() {
                            assert_eq!(
                                out[i] as usize, w,
                                "device u32, n {n}, {shape:?}, {bound:?}, needle {i}"
                            );
                        }
                    }
                    cases += 1;
                }
            }
        }
    }
    // 64-bit keys.
    let mut a: Vec<i64> = (0..100_003).map(|_| rng.gen_range(-1000..1000)).collect();
    let mut b: Vec<i64> = (0..77_777).map(|_| rng.gen()).collect();
    b.extend_from_slice(&a[..5000]);
    a.sort_unstable();
    b.sort_unstable();
    for bound in [SearchBound::Lower, SearchBound::Upper] {
        let got = twophase::sorted_search(&a, &b, cpu_bound(bound)).expect("i64 search");
        assert_eq!(
            got,
            cpu::sorted_search(&a, &b, cpu_bound(bound)),
            "i64 {bound:?}"
        );
    }
    eprintln!("{cases} sorted-search cases agree with the CPU backend and brute force");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorted_search_2_pow_26_in_2_pow_26() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    let n = 1usize << 26;
    let mut needles: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let mut haystack: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    needles.par_sort_unstable();
    haystack.par_sort_unstable();
    let dn = gpu.stream().clone_htod(&needles).expect("upload");
    let dh = gpu.stream().clone_htod(&haystack).expect("upload");
    for bound in [SearchBound::Lower, SearchBound::Upper] {
        let mut dout = gpu.stream().clone_htod(&vec![POISON32; n]).expect("alloc");
        gpu.sorted_search_device(&dn, &dh, &mut dout, bound, &Less, None, &mut scratch)
            .expect("search");
        let out = gpu.stream().clone_dtoh(&dout).expect("download");
        let want = cpu::sorted_search(&needles, &haystack, cpu_bound(bound));
        assert!(
            out.par_iter().zip(&want).all(|(&g, &w)| g as usize == w),
            "2^26 {bound:?}: GPU differs from the CPU backend"
        );
    }
}

// ---- Adversarial inputs: unsorted, inconsistent comparators, bad scans and positions. ----

/// Sizes of the adversarial search cases: empty, tiny, around the sorted search's and the
/// load-balancing search's tiles, many tiles.
fn adversarial_sizes() -> Vec<usize> {
    let search = twophase::gpu::SortedSearchTuning::for_key(4).tile();
    let lbs = LoadBalanceTuning::shipped().tile();
    let mut sizes = vec![0, 1, 2, 3];
    for edge in [search, lbs] {
        sizes.extend([edge - 1, edge, edge + 1, 3 * edge + 7]);
    }
    sizes.push((1 << 20) + 3);
    sizes
}

/// Guard elements past every device output: a kernel writing past its output changes them.
const GUARD: usize = 4096;

/// A device copy of `host` followed by GUARD elements of `filler` (so that writes past the end
/// are seen), and its length.
fn upload_guarded<T: DeviceRepr + Copy>(gpu: &Gpu, host: &[T], filler: T) -> CudaSlice<T> {
    let mut data = host.to_vec();
    data.extend(std::iter::repeat_n(filler, GUARD));
    gpu.stream().clone_htod(&data).expect("upload")
}

fn download<T: DeviceRepr + Copy>(gpu: &Gpu, dev: &CudaSlice<T>) -> Vec<T> {
    gpu.stream().clone_dtoh(dev).expect("download")
}

/// An interval call of `total` items of a device `scan` whose checks fail on the device: `op`
/// (named `label`) runs into a guarded output filled with `filler`, the scratch's check then
/// reports an `InvalidInput` containing `expected`, and nothing is written past the output
/// (`what` names the case). Returns the `total` outputs.
fn failing_interval<V: DeviceValue + DeviceRepr + Copy + PartialEq>(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    (scan, total): (&CudaView<u64>, usize),
    (label, op): (&str, Interval<'_, u64, V>),
    filler: V,
    (what, expected): (&str, &str),
) -> Vec<V> {
    let mut dout = upload_guarded(gpu, &vec![filler; total], filler);
    gpu.interval_device(scan, total, op, &mut dout.slice_mut(..total), None, scratch)
        .unwrap_or_else(|e| panic!("device {label}: {e:?}"));
    assert_invalid_input(scratch.check(gpu), what, expected);
    let mut out = download(gpu, &dout);
    assert!(
        out[total..].iter().all(|&g| g == filler),
        "{what}: wrote past {label}"
    );
    out.truncate(total);
    out
}

/// Comparators that are not strict weak orders: the shared deterministic ones (`<=`, a hash of
/// both keys) and an answer that changes from call to call.
fn broken_comparators() -> Vec<U32Comparator> {
    let mut comparators = broken_u32_comparators();
    comparators.push(CudaComparator::new(
        "clock_coin",
        CLOCK_COIN_BODY,
        |_: &u32, _: &u32| false,
    ));
    comparators
}

/// Sorted search of `needles` in `haystack` through the device API, into a guarded output:
/// asserts that nothing is written past it and that every result is at most the haystack's
/// length (so that every needle was written; `what` names the case), and returns the results.
fn guarded_device_search<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    (needles, haystack): (&[u32], &[u32]),
    bound: SearchBound,
    comp: &C,
    what: &str,
) -> Vec<u32> {
    let dn = upload(gpu, needles, 0);
    let dh = upload(gpu, haystack, 0);
    let mut out = upload_guarded(gpu, &vec![u32::MAX; needles.len()], u32::MAX);
    gpu.sorted_search_device(
        &dn.slice(..needles.len()),
        &dh.slice(..haystack.len()),
        &mut out.slice_mut(..needles.len()),
        bound,
        comp,
        None,
        scratch,
    )
    .unwrap_or_else(|e| panic!("{what}: device search (checked later, by the scratch): {e:?}"));
    let mut results = download(gpu, &out);
    let guard = results.split_off(needles.len());
    assert!(
        guard.iter().all(|&g| g == u32::MAX),
        "{what}: wrote past the output"
    );
    assert!(
        results.iter().all(|&r| r as usize <= haystack.len()),
        "{what}: a result past the haystack (or a needle never written)"
    );
    results
}

/// A valid sorted search on `gpu` after a failure: it must succeed and agree with brute force.
fn valid_search_after_failure(gpu: &Gpu, rng: &mut StdRng, what: &str) {
    let (needles, haystack) = search_inputs(rng, 3000, Shape::Random, false);
    let got: Vec<u32> = gpu
        .sorted_search(&needles, &haystack, SearchBound::Lower, &Less)
        .unwrap_or_else(|e| panic!("valid search after {what}: {e}"));
    let want =
        common::bounds::reference_bounds(&needles, &haystack, SearchBound::Lower, |a, b| a < b);
    assert!(
        got.iter().map(|&x| x as usize).eq(want),
        "valid search after {what} differs"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorted_search_unsorted_inputs_are_named_errors() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    for n in adversarial_sizes() {
        for bound in [SearchBound::Lower, SearchBound::Upper] {
            let (mut needles, mut haystack) =
                search_inputs(&mut rng, 2 * n + 4, Shape::Random, false);
            // Unsorted needles: a descent somewhere (at the end when the rest is sorted), sorted
            // haystack.
            let sorted_needles = needles.clone();
            let sorted_haystack = haystack.clone();
            needles.reverse();
            if needles.windows(2).any(|w| w[0] > w[1]) {
                let message = invalid_input(
                    gpu.sorted_search::<u32, u32, _>(&needles, &sorted_haystack, bound, &Less),
                    "unsorted needles",
                );
                assert!(message.contains(messages::NEEDLES_UNSORTED), "{message}");
                assert!(!message.contains("`haystack`"), "{message}");
                valid_search_after_failure(&gpu, &mut rng, "unsorted needles");
            }
            if haystack.len() >= 2 {
                let swap_at = rng.gen_range(0..haystack.len() - 1);
                haystack.swap(swap_at, swap_at + 1);
                if haystack[swap_at] != haystack[swap_at + 1] {
                    let message = invalid_input(
                        gpu.sorted_search::<u32, u64, _>(&sorted_needles, &haystack, bound, &Less),
                        "unsorted haystack",
                    );
                    assert!(message.contains(messages::HAYSTACK_UNSORTED), "{message}");
                    valid_search_after_failure(&gpu, &mut rng, "unsorted haystack");
                }
            }
            // Both unsorted through the device API: every result written and in range, the
            // scratch's check names both, and a second check is clean.
            let inputs = (&needles[..], &haystack[..]);
            let what = format!("n = {n}");
            guarded_device_search(&gpu, &mut scratch, inputs, bound, &Less, &what);
            let sorted = |v: &[u32]| v.windows(2).all(|w| w[0] <= w[1]);
            let checked = scratch.check(&gpu);
            if !sorted(&needles) || !sorted(&haystack) {
                let message = invalid_input(checked, "device search of unsorted inputs");
                if !sorted(&needles) {
                    assert!(message.contains(messages::NEEDLES_UNSORTED), "{message}");
                }
                if !sorted(&haystack) {
                    assert!(message.contains(messages::HAYSTACK_UNSORTED), "{message}");
                }
            } else {
                checked.expect("sorted inputs");
            }
            scratch
                .check(&gpu)
                .expect("the check clears what it reported");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorted_search_broken_comparators_stay_in_range() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    for comp in broken_comparators() {
        for n in adversarial_sizes() {
            for shape in [Shape::Random, Shape::DuplicateHeavy, Shape::AllEqual] {
                let (needles, haystack) = search_inputs(&mut rng, 2 * n + 2, shape, false);
                match gpu.sorted_search::<u32, u32, _>(
                    &needles,
                    &haystack,
                    SearchBound::Lower,
                    &comp,
                ) {
                    Ok(results) => assert!(
                        results.iter().all(|&r| r as usize <= haystack.len()),
                        "{}: host result past the haystack",
                        comp.name()
                    ),
                    Err(GpuError::InvalidInput(_)) => {}
                    Err(e) => panic!("{}: {e}", comp.name()),
                }
                valid_search_after_failure(&gpu, &mut rng, "a broken comparator");
                let inputs = (&needles[..], &haystack[..]);
                let what = format!("{}: n = {n}, {shape:?}", comp.name());
                let upper = SearchBound::Upper;
                guarded_device_search(&gpu, &mut scratch, inputs, upper, &comp, &what);
                match scratch.check(&gpu) {
                    Ok(()) | Err(GpuError::InvalidInput(_)) => {}
                    Err(e) => panic!("{}: {e}", comp.name()),
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorted_search_mismatched_lengths_are_errors() {
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let dn = upload(&gpu, &[1u32, 2, 3], 0);
    let dh = upload(&gpu, &[1u32, 2], 0);
    let mut out = upload(&gpu, &[0u32; 2], 0);
    let err = gpu
        .sorted_search_device(
            &dn.slice(..3),
            &dh.slice(..2),
            &mut out.slice_mut(..2),
            SearchBound::Lower,
            &Less,
            None,
            &mut scratch,
        )
        .expect_err("output shorter than the needles");
    assert!(matches!(err, GpuError::SizeMismatch { .. }), "{err}");
    let mut rng = rng();
    valid_search_after_failure(&gpu, &mut rng, "mismatched lengths");
}

/// Scans that break the exclusive-scan rules for `total` items: not starting at 0, decreasing
/// (inside a tile and across tiles), past the total, and huge entries.
fn bad_scans(rng: &mut StdRng, total: usize) -> Vec<(Vec<usize>, &'static str)> {
    let counts = counts(rng, total, Dist::Random);
    let scan = exclusive_scan(&counts);
    let mut out = Vec::new();
    let mut nonzero_start = scan.clone();
    nonzero_start[0] = 1 + total / 2;
    out.push((nonzero_start, "non-zero start"));
    if scan.len() >= 3 {
        let mut decreasing = scan.clone();
        let at = rng.gen_range(1..scan.len() - 1);
        decreasing[at] = decreasing[at + 1] + 1 + rng.gen_range(0..=total);
        out.push((decreasing, "decreasing"));
        let mut reversed = scan.clone();
        reversed[1..].reverse();
        if reversed.windows(2).any(|w| w[0] > w[1]) {
            out.push((reversed, "reversed"));
        }
    }
    let mut past = scan.clone();
    let last = past.len() - 1;
    past[last] = total + 1 + rng.gen_range(0..1000);
    out.push((past, "past the total"));
    let mut huge = scan.clone();
    huge[last] = usize::MAX - rng.gen_range(0..4usize);
    out.push((huge, "near usize::MAX"));
    out
}

/// A valid load-balancing search on `gpu` after a failure: it must succeed and be right.
fn valid_lbs_after_failure(gpu: &Gpu, rng: &mut StdRng, what: &str) {
    let counts = counts(rng, 5000, Dist::Random);
    let scan = exclusive_scan(&counts);
    let got = gpu
        .load_balance_search(&scan, 5000)
        .unwrap_or_else(|e| panic!("valid search after {what}: {e}"));
    let want: Vec<usize> = brute_lbs(&counts).into_iter().map(|(s, _)| s).collect();
    assert!(
        got == want,
        "valid load-balancing search after {what} differs"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_scans_are_named_errors_on_host_and_device() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    for total in adversarial_sizes().into_iter().filter(|&t| t > 0) {
        for (scan, label) in bad_scans(&mut rng, total) {
            let what = format!("{label} scan, total {total}");
            // Host-slice calls: checked before any launch.
            let invalid = messages::SCAN_INVALID;
            assert_invalid_input(gpu.load_balance_search(&scan, total), &what, invalid);
            let values: Vec<u64> = (0..scan.len() as u64).collect();
            let expand = gpu.interval_expand(&scan, &values, total);
            assert_invalid_input(expand, &what, invalid);
            let input = vec![7u32; total];
            let mut output = vec![POISON32; total];
            let moved = gpu.interval_move(IntervalMove::new(&scan, total), &input, &mut output);
            assert_invalid_input(moved, &what, invalid);
            assert!(
                output.iter().all(|&x| x == POISON32),
                "{what}: output written"
            );
            valid_lbs_after_failure(&gpu, &mut rng, &what);

            // Device-buffer calls: checked on the device, reported by the scratch's check;
            // nothing written out of range, every id written below the segment count.
            let nseg = scan.len();
            let (segs, ranks) = device_lbs(&gpu, &mut scratch, &scan, total, u64::MAX, true, &what);
            assert_invalid_input(scratch.check(&gpu), &what, invalid);
            for item in 0..total {
                let (s, r) = (segs[item], ranks[item]);
                assert!(
                    (s == u64::MAX && r == u64::MAX) || (s < nseg as u64 && r <= item as u64),
                    "{what}: item {item} got segment {s}, rank {r}"
                );
            }
            // Expand and move through the device: outputs untouched or in range.
            let dscan = upload(&gpu, &scan_as::<u64>(&scan), 0);
            let dscan = (&dscan.slice(..nseg), total);
            let (dvalues, dinput) = (
                upload(&gpu, &values, 0),
                upload(&gpu, &vec![5u64; total], 0),
            );
            // The values 0..nseg are the move's gather and scatter positions too.
            let positions = upload(&gpu, &values, 0);
            let dpos = positions.slice(..nseg);
            for (label, op) in [
                (
                    "expand",
                    Interval::Expand {
                        values: &dvalues.slice(..nseg),
                    },
                ),
                (
                    "move",
                    Interval::Move {
                        gather: &dpos,
                        scatter: &dpos,
                        input: &dinput.slice(..total),
                    },
                ),
            ] {
                let case = (what.as_str(), invalid);
                let out = failing_interval(&gpu, &mut scratch, dscan, (label, op), u64::MAX, case);
                assert!(
                    label != "expand" || out.iter().all(|&v| v == u64::MAX || v < nseg as u64),
                    "{what}: expand wrote a value of no segment"
                );
            }
            scratch
                .check(&gpu)
                .expect("the check clears what it reported");
            valid_lbs_after_failure(&gpu, &mut rng, &what);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_positions_are_named_errors_on_host_and_device() {
    let (gpu, mut rng, mut scratch) = setup(SearchScratch::new);
    for total in adversarial_sizes().into_iter().filter(|&t| t > 0) {
        let counts = counts(&mut rng, total, Dist::Random);
        let scan = exclusive_scan(&counts);
        let nseg = scan.len();
        let pairs = brute_lbs(&counts);
        let input: Vec<u32> = (0..total as u32).collect();
        // One segment with items gets a bad position: just past the buffer, far past it, and
        // positions whose sum with the size wraps.
        let Some(victim) = counts.iter().position(|&c| c > 0) else {
            continue;
        };
        for bad in [
            total - counts[victim] + 1,
            total + 12345,
            usize::MAX,
            usize::MAX - counts[victim] + 1,
        ] {
            let what = format!("position {bad}, total {total}");
            let mut positions = scan.clone();
            positions[victim] = bad;
            // Host: InvalidInput naming the argument, the output untouched.
            for gather in [true, false] {
                let mut output = vec![POISON32; total];
                let moves = IntervalMove::new(&scan, total);
                let moves = if gather {
                    moves.gather(&positions)
                } else {
                    moves.scatter(&positions)
                };
                let result = gpu.interval_move(moves, &input, &mut output);
                let name = if gather {
                    messages::GATHER_INVALID
                } else {
                    messages::SCATTER_INVALID
                };
                assert_invalid_input(result, &what, name);
                assert!(
                    output.iter().all(|&x| x == POISON32),
                    "{what}: output written"
                );
            }
            valid_lbs_after_failure(&gpu, &mut rng, &what);
            // Device: the bad segment's items whose own position passes the input are not moved;
            // every other item is; reported.
            let dscan = upload(&gpu, &scan_as::<u64>(&scan), 0);
            let dpos = upload(&gpu, &scan_as::<u64>(&positions), 0);
            let (dpos, dinput) = (dpos.slice(..nseg), upload(&gpu, &input, 0));
            let input_view = dinput.slice(..total);
            for (label, op, named) in [
                (
                    "gather",
                    Interval::Gather {
                        gather: &dpos,
                        input: &input_view,
                    },
                    "`gather`",
                ),
                (
                    "scatter",
                    Interval::Scatter {
                        scatter: &dpos,
                        input: &input_view,
                    },
                    "`scatter`",
                ),
            ] {
                let dscan = (&dscan.slice(..nseg), total);
                let case = (what.as_str(), named);
                let out = failing_interval(&gpu, &mut scratch, dscan, (label, op), POISON32, case);
                for (item, &(s, r)) in pairs.iter().enumerate().filter(|_| label == "gather") {
                    let want = match positions[s].checked_add(r) {
                        Some(from) if from < total => input[from],
                        _ => POISON32,
                    };
                    assert_eq!(out[item], want, "{what}: gather item {item}");
                }
            }
            scratch
                .check(&gpu)
                .expect("the check clears what it reported");
            valid_lbs_after_failure(&gpu, &mut rng, &what);
        }
        // Mismatched lengths: SizeMismatch before any launch.
        let mut output = vec![POISON32; total];
        let short = &scan[..nseg - 1];
        let in_place = IntervalMove::new(&scan, total);
        let err = gpu
            .interval_move(in_place.gather(short), &input, &mut output)
            .expect_err("gather positions shorter than the scan");
        assert!(matches!(err, GpuError::SizeMismatch { .. }), "{err}");
        let err = gpu
            .interval_move(in_place, &input[..total - 1], &mut output)
            .expect_err("input shorter than the total");
        assert!(matches!(err, GpuError::SizeMismatch { .. }), "{err}");
        valid_lbs_after_failure(&gpu, &mut rng, "mismatched lengths");
    }
}
