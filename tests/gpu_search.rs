//! GPU load-balancing search, interval expand/move, user snippet and sorted search tests (need a CUDA GPU): differential vs the CPU backend and brute force.

mod common;

use common::{gpu, rng};
use rand::rngs::StdRng;
use rand::Rng;
use rayon::prelude::*;
use twophase::cpu;
use twophase::gpu::{
    Gpu, GpuError, Greater, Less, LoadBalanceOp, LoadBalanceTuning, SearchScratch,
};
use twophase_gpu::cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};
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

fn upload<T: DeviceRepr + Copy>(gpu: &Gpu, host: &[T], filler: T) -> CudaSlice<T> {
    let data: Vec<T> = if host.is_empty() {
        vec![filler]
    } else {
        host.to_vec()
    };
    gpu.stream().clone_htod(&data).expect("upload")
}

fn sizes() -> Vec<usize> {
    let tile = LoadBalanceTuning::SHIPPED.tile();
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn load_balance_search_matches_cpu_and_brute_force() {
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let mut rng = rng();
    let mut cases = 0;
    for total in sizes() {
        for dist in DISTS {
            let counts = counts(&mut rng, total, dist);
            let scan = exclusive_scan(&counts);
            let expected = brute_lbs(&counts);
            assert_eq!(
                cpu::load_balance_search_with_ranks(&scan, total),
                expected,
                "CPU backend vs brute force, total {total}, {dist:?}"
            );
            // Host form, usize, with ranks.
            let (segs, ranks) = gpu
                .load_balance_search_with_ranks(&scan, total)
                .expect("host lbs");
            let got: Vec<(usize, usize)> = segs.into_iter().zip(ranks).collect();
            assert!(got == expected, "host with ranks, total {total}, {dist:?}");
            // Device form, u32, poisoned output.
            let scan32: Vec<u32> = scan.iter().map(|&s| s as u32).collect();
            let dscan = upload(&gpu, &scan32, 0);
            let mut dseg = upload(&gpu, &vec![POISON32; total], POISON32);
            let mut drank = upload(&gpu, &vec![POISON32; total], POISON32);
            gpu.load_balance_search_with_ranks_device(
                &dscan.slice(..scan32.len()),
                total,
                &mut dseg.slice_mut(..total),
                &mut drank.slice_mut(..total),
                &mut scratch,
            )
            .expect("device lbs");
            let seg32 = gpu.stream().clone_dtoh(&dseg).expect("download");
            let rank32 = gpu.stream().clone_dtoh(&drank).expect("download");
            for (i, &(s, r)) in expected.iter().enumerate() {
                assert!(
                    seg32[i] as usize == s && rank32[i] as usize == r,
                    "device u32, total {total}, {dist:?}: item {i} got ({}, {}), want ({s}, {r})",
                    seg32[i],
                    rank32[i]
                );
            }
            // Device form, u64 segments only.
            let scan64: Vec<u64> = scan.iter().map(|&s| s as u64).collect();
            let dscan = upload(&gpu, &scan64, 0);
            let mut dseg = upload(&gpu, &vec![u64::MAX - 3; total], 0);
            gpu.load_balance_search_device(
                &dscan.slice(..scan64.len()),
                total,
                &mut dseg.slice_mut(..total),
                &mut scratch,
            )
            .expect("device lbs u64");
            let seg64 = gpu.stream().clone_dtoh(&dseg).expect("download");
            for (i, &(s, _)) in expected.iter().enumerate() {
                assert_eq!(seg64[i], s as u64, "device u64, total {total}, {dist:?}");
            }
            cases += 1;
        }
    }
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
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let mut rng = rng();
    let total = 1usize << 27;
    for dist in [Dist::Random, Dist::PowerLawGiant, Dist::ManyEmpty] {
        let counts = counts(&mut rng, total, dist);
        let scan = exclusive_scan(&counts);
        let scan32: Vec<u32> = scan.iter().map(|&s| s as u32).collect();
        let dscan = gpu.stream().clone_htod(&scan32).expect("upload");
        let mut dseg = gpu
            .stream()
            .clone_htod(&vec![POISON32; total])
            .expect("alloc");
        gpu.load_balance_search_device(&dscan, total, &mut dseg, &mut scratch)
            .expect("lbs");
        let got = gpu.stream().clone_dtoh(&dseg).expect("download");
        check_runs(&got, &scan, total, &format!("2^27 {dist:?}"));
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
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let mut rng = rng();
    let total = (1usize << 31) + 1000;
    let mut counts: Vec<usize> = (0..1000).map(|_| rng.gen_range(0..1 << 20)).collect();
    let used: usize = counts.iter().sum();
    counts.insert(500, total - used);
    let scan = exclusive_scan(&counts);
    let scan32: Vec<u32> = scan.iter().map(|&s| s as u32).collect();
    let dscan = gpu.stream().clone_htod(&scan32).expect("upload");
    // SAFETY-free poison: fill on the device with a memset-like copy of a poison vector.
    let mut dseg = gpu
        .stream()
        .clone_htod(&vec![POISON32; total])
        .expect("alloc");
    gpu.load_balance_search_device(&dscan, total, &mut dseg, &mut scratch)
        .expect("lbs");
    let got = gpu.stream().clone_dtoh(&dseg).expect("download");
    check_runs(&got, &scan, total, "2^31 + 1000");
    eprintln!("2^31 + 1000 items over {} segments: ok", scan.len());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn interval_expand_move_and_snippet_match_brute_force() {
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let mut rng = rng();
    let op = LoadBalanceOp::new(
        "segment_rank_item",
        "((unsigned int*)args.p[0])[item] = (unsigned int)segment;\n\
         ((unsigned int*)args.p[1])[item] = (unsigned int)rank ^ (unsigned int)args.p[2];",
    );
    let mut cases = 0;
    for total in sizes() {
        for dist in DISTS {
            let counts = counts(&mut rng, total, dist);
            let scan = exclusive_scan(&counts);
            let pairs = brute_lbs(&counts);
            let nseg = counts.len();
            // Expand: u64 values per segment.
            let values: Vec<u64> = (0..nseg).map(|_| rng.gen()).collect();
            let got = gpu.interval_expand(&scan, &values, total).expect("expand");
            let want: Vec<u64> = pairs.iter().map(|&(s, _)| values[s]).collect();
            assert!(got == want, "expand, total {total}, {dist:?}");
            // Gather: segment s reads from a random place of a larger input.
            let input: Vec<u32> = (0..total + 4096).map(|_| rng.gen()).collect();
            let gather: Vec<usize> = counts
                .iter()
                .map(|&c| rng.gen_range(0..=input.len() - c))
                .collect();
            let mut out = vec![POISON32; total];
            gpu.interval_move(&scan, total, Some(&gather), None, &input, &mut out)
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
            gpu.interval_move(&scan, total, None, Some(&scatter), &sources, &mut out)
                .expect("scatter");
            let mut want = vec![POISON32; total];
            for (i, &(s, r)) in pairs.iter().enumerate() {
                want[scatter[s] + r] = sources[i];
            }
            assert!(out == want, "scatter, total {total}, {dist:?}");
            // Move: gather and scatter, unwritten outputs keep their poison.
            let mut out = vec![POISON32; total + 100];
            gpu.interval_move(
                &scan,
                total,
                Some(&gather),
                Some(&scatter),
                &input,
                &mut out,
            )
            .expect("move");
            let mut want = vec![POISON32; total + 100];
            for &(s, r) in &pairs {
                want[scatter[s] + r] = input[gather[s] + r];
            }
            assert!(out == want, "move, total {total}, {dist:?}");
            let mut cpu_out = vec![POISON32; total + 100];
            twophase::gpu::interval_move_any(
                &scan,
                total,
                Some(&gather),
                Some(&scatter),
                &input,
                &mut cpu_out,
            )
            .expect("move any");
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
                gpu.load_balance_for_each_device(
                    &dscan.slice(..scan32.len()),
                    total,
                    &op,
                    &[seg_ptr, rank_ptr, u64::from(key)],
                    &mut scratch,
                )
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
            cases += 1;
        }
    }
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

fn brute_search(
    needles: &[u32],
    haystack: &[u32],
    bound: SearchBound,
    less: &dyn Fn(&u32, &u32) -> bool,
) -> Vec<usize> {
    needles
        .iter()
        .map(|x| match bound {
            SearchBound::Lower => haystack.partition_point(|h| less(h, x)),
            SearchBound::Upper => haystack.partition_point(|h| !less(x, h)),
        })
        .collect()
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
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let mut rng = rng();
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
                    let want = brute_search(&needles, &haystack, bound, &less);
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
                        let dn = upload(&gpu, &needles, 0);
                        let dh = upload(&gpu, &haystack, 0);
                        let mut dout = upload(&gpu, &vec![POISON32; needles.len()], POISON32);
                        gpu.sorted_search_device(
                            &dn.slice(..needles.len()),
                            &dh.slice(..haystack.len()),
                            &mut dout.slice_mut(..needles.len()),
                            bound,
                            &Less,
                            &mut scratch,
                        )
                        .expect("device search");
                        let out = gpu.stream().clone_dtoh(&dout).expect("download");
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
        let got = twophase::gpu::sorted_search(&a, &b, cpu_bound(bound)).expect("i64 search");
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
    let gpu = gpu();
    let mut scratch = SearchScratch::new();
    let mut rng = rng();
    let n = 1usize << 26;
    let mut needles: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let mut haystack: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    needles.par_sort_unstable();
    haystack.par_sort_unstable();
    let dn = gpu.stream().clone_htod(&needles).expect("upload");
    let dh = gpu.stream().clone_htod(&haystack).expect("upload");
    for bound in [SearchBound::Lower, SearchBound::Upper] {
        let mut dout = gpu.stream().clone_htod(&vec![POISON32; n]).expect("alloc");
        gpu.sorted_search_device(&dn, &dh, &mut dout, bound, &Less, &mut scratch)
            .expect("search");
        let out = gpu.stream().clone_dtoh(&dout).expect("download");
        let want = cpu::sorted_search(&needles, &haystack, cpu_bound(bound));
        assert!(
            out.par_iter().zip(&want).all(|(&g, &w)| g as usize == w),
            "2^26 {bound:?}: GPU differs from the CPU backend"
        );
    }
}
