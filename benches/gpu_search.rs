//! GPU load-balancing search and sorted search benchmark: time vs the device copy rate of the same run, with a tuning sweep.
//!
//! Run on a GPU machine (see scripts/device.sh). Prints markdown table rows; the last lines are
//! the summary against the targets (70% of the copy rate on the essential bytes).

mod common;

use common::{copy_rate_gbs, time_events};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use twophase::cpu;
use twophase::gpu::Interval;
use twophase::gpu::{Gpu, Less, LoadBalanceTuning, SearchScratch, SortedSearchTuning};
use twophase_gpu::cudarc::driver::CudaSlice;
use twophase_gpu::SearchBound;

/// Untimed runs before timing.
const WARMUP: usize = 10;
/// Timed runs per measurement; the median is reported.
const REPS: usize = 100;
/// Work items of the load-balancing search (2^27).
const LBS_ITEMS: usize = 1 << 27;
/// Segments of the load-balancing search (2^25).
const LBS_SEGMENTS: usize = 1 << 25;
/// Needles and haystack keys of the sorted search (2^26 each).
const SEARCH_N: usize = 1 << 26;
/// The target: this fraction of the copy rate on the essential bytes.
const TARGET: f64 = 0.70;
/// Load-balancing tunings tried besides the shipped one (NT, VT).
const LBS_SWEEP: [(u32, u32); 6] = [
    (128, 23),
    (256, 7),
    (256, 11),
    (256, 19),
    (512, 7),
    (512, 11),
];
/// Sorted-search tunings tried besides the shipped one (NT, VT).
const SEARCH_SWEEP: [(u32, u32); 5] = [(128, 15), (256, 11), (256, 15), (256, 23), (512, 11)];

fn row(what: &str, ms: f64, bytes: f64, copy_gbs: f64) -> f64 {
    let gbs = bytes / (ms * 1e-3) / 1e9;
    let ratio = gbs / copy_gbs;
    println!("| {what} | {ms:.4} | {gbs:.0} | {:.1}% |", 100.0 * ratio);
    ratio
}

fn main() {
    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("this benchmark needs a CUDA GPU: {e}"),
    };
    let stream = gpu.stream().clone();
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    let copy_gbs = copy_rate_gbs(&gpu, WARMUP, REPS);
    println!(
        "device {} | copy rate {copy_gbs:.0} GB/s (cuMemcpyDtoD, 1 GiB, read + write)",
        gpu.name().unwrap_or_default()
    );
    println!("| what | ms | GB/s (essential bytes) | % of copy rate |");
    println!("|---|---|---|---|");
    let mut scratch = SearchScratch::new();

    // Load-balancing search: 2^25 segments with random boundaries over 2^27 items.
    let mut cuts: Vec<u32> = (0..LBS_SEGMENTS as u64 - 1)
        .into_par_iter()
        .map(|i| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ (i * 0x9E37_79B9));
            rng.gen_range(0..=LBS_ITEMS as u32)
        })
        .collect();
    cuts.push(0);
    cuts.par_sort_unstable();
    let scan_host: Vec<usize> = cuts.iter().map(|&c| c as usize).collect();
    let expected = cpu::load_balance_search(&scan_host, LBS_ITEMS);
    let scan: CudaSlice<u32> = stream.clone_htod(&cuts).expect("upload");
    let mut segments: CudaSlice<u32> = stream
        .clone_htod(&vec![0xDEAD_BEEFu32; LBS_ITEMS])
        .expect("alloc");
    gpu.load_balance_search_device(&scan, LBS_ITEMS, &mut segments, None, None, &mut scratch)
        .expect("lbs");
    let got = stream.clone_dtoh(&segments).expect("download");
    assert!(
        got.par_iter()
            .zip(&expected)
            .all(|(&g, &e)| g as usize == e),
        "load-balancing search differs from the CPU backend"
    );
    let lbs_bytes = (4 * LBS_ITEMS + 4 * LBS_SEGMENTS) as f64;
    let mut best_lbs = (f64::MAX, LoadBalanceTuning::shipped());
    let shipped = LoadBalanceTuning::shipped();
    for (threads, vt) in std::iter::once((shipped.threads, shipped.vt)).chain(LBS_SWEEP) {
        let tuning = LoadBalanceTuning { threads, vt };
        stream
            .memcpy_htod(&vec![0xDEAD_BEEFu32; LBS_ITEMS], &mut segments)
            .expect("poison");
        gpu.load_balance_search_device(
            &scan,
            LBS_ITEMS,
            &mut segments,
            None,
            Some(tuning),
            &mut scratch,
        )
        .expect("lbs tuned");
        let got = stream.clone_dtoh(&segments).expect("download");
        assert!(
            got.par_iter()
                .zip(&expected)
                .all(|(&g, &e)| g as usize == e),
            "load-balancing search {threads}x{vt} differs"
        );
        let ms = time_events(&gpu, WARMUP, REPS, |_| {
            gpu.load_balance_search_device(
                &scan,
                LBS_ITEMS,
                &mut segments,
                None,
                Some(tuning),
                &mut scratch,
            )
            .expect("lbs");
        });
        let tag = if tuning == shipped { " (shipped)" } else { "" };
        row(
            &format!("load-balancing search u32, 2^27 items / 2^25 segments, {threads}x{vt}{tag}"),
            ms,
            lbs_bytes,
            copy_gbs,
        );
        if ms < best_lbs.0 {
            best_lbs = (ms, tuning);
        }
    }
    // Interval expand on the same segments: u32 values, one per segment.
    let values: CudaSlice<u32> = stream
        .clone_htod(
            &(0..LBS_SEGMENTS as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect::<Vec<_>>(),
        )
        .expect("upload");
    gpu.interval_device(
        &scan,
        LBS_ITEMS,
        Interval::Expand { values: &values },
        &mut segments,
        None,
        &mut scratch,
    )
    .expect("expand");
    let got = stream.clone_dtoh(&segments).expect("download");
    assert!(
        got.par_iter()
            .zip(&expected)
            .all(|(&g, &e)| g == (e as u32).wrapping_mul(2_654_435_761)),
        "interval expand differs"
    );
    let ms = time_events(&gpu, WARMUP, REPS, |_| {
        gpu.interval_device(
            &scan,
            LBS_ITEMS,
            Interval::Expand { values: &values },
            &mut segments,
            None,
            &mut scratch,
        )
        .expect("expand");
    });
    row(
        "interval expand u32, 2^27 items / 2^25 segments (shipped)",
        ms,
        (4 * LBS_ITEMS + 8 * LBS_SEGMENTS) as f64,
        copy_gbs,
    );
    drop(segments);
    drop(values);
    drop(scan);

    // Sorted search: 2^26 needles in 2^26 keys, u32, lower bound.
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut needles: Vec<u32> = (0..SEARCH_N).map(|_| rng.gen()).collect();
    let mut haystack: Vec<u32> = (0..SEARCH_N).map(|_| rng.gen()).collect();
    needles.par_sort_unstable();
    haystack.par_sort_unstable();
    let want = cpu::sorted_search(&needles, &haystack, cpu::SearchBound::Lower);
    let dn: CudaSlice<u32> = stream.clone_htod(&needles).expect("upload");
    let dh: CudaSlice<u32> = stream.clone_htod(&haystack).expect("upload");
    let mut out: CudaSlice<u32> = stream
        .clone_htod(&vec![0xDEAD_BEEFu32; SEARCH_N])
        .expect("alloc");
    let search_bytes = (3 * 4 * SEARCH_N) as f64;
    let shipped = SortedSearchTuning::for_key(4);
    let mut best_search = (f64::MAX, shipped);
    for (threads, vt) in std::iter::once((shipped.threads, shipped.vt)).chain(SEARCH_SWEEP) {
        let tuning = SortedSearchTuning { threads, vt };
        stream
            .memcpy_htod(&vec![0xDEAD_BEEFu32; SEARCH_N], &mut out)
            .expect("poison");
        gpu.sorted_search_device(
            &dn,
            &dh,
            &mut out,
            SearchBound::Lower,
            &Less,
            Some(tuning),
            &mut scratch,
        )
        .expect("search");
        let got = stream.clone_dtoh(&out).expect("download");
        assert!(
            got.par_iter().zip(&want).all(|(&g, &w)| g as usize == w),
            "sorted search {threads}x{vt} differs from the CPU backend"
        );
        let ms = time_events(&gpu, WARMUP, REPS, |_| {
            gpu.sorted_search_device(
                &dn,
                &dh,
                &mut out,
                SearchBound::Lower,
                &Less,
                Some(tuning),
                &mut scratch,
            )
            .expect("search");
        });
        let tag = if tuning == shipped { " (shipped)" } else { "" };
        row(
            &format!("sorted search u32 lower, 2^26 in 2^26, {threads}x{vt}{tag}"),
            ms,
            search_bytes,
            copy_gbs,
        );
        if ms < best_search.0 {
            best_search = (ms, tuning);
        }
    }
    let lbs_target_ms = lbs_bytes / (TARGET * copy_gbs * 1e9) * 1e3;
    let search_target_ms = search_bytes / (TARGET * copy_gbs * 1e9) * 1e3;
    println!(
        "summary: load-balancing search best {:.4} ms at {}x{} = {:.1}% of copy rate (target {:.0}%: <= {lbs_target_ms:.4} ms)",
        best_lbs.0,
        best_lbs.1.threads,
        best_lbs.1.vt,
        100.0 * lbs_bytes / (best_lbs.0 * 1e-3) / 1e9 / copy_gbs,
        100.0 * TARGET
    );
    println!(
        "summary: sorted search best {:.4} ms at {}x{} = {:.1}% of copy rate (target {:.0}%: <= {search_target_ms:.4} ms)",
        best_search.0,
        best_search.1.threads,
        best_search.1.vt,
        100.0 * search_bytes / (best_search.0 * 1e-3) / 1e9 / copy_gbs,
        100.0 * TARGET
    );
}
