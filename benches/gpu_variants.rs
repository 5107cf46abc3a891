//! GPU variant benchmark: the textbook merges and Batcher's sort beside the two-phase kernels, CUB and std, on the device.
//!
//! Run on a GPU machine (see scripts/device.sh). Reads the CUB peers' results from
//! TWOPHASE_CUB_RESULTS (benches/peers/cub_merge.cu) and TWOPHASE_CUB_SORT_RESULTS
//! (benches/peers/cub_mergesort.cu), writes one CSV row per measurement
//! (`group,variant,key,n,ms,gkeys_per_s`) to TWOPHASE_VARIANTS_CSV (default `variants.csv`),
//! and prints a markdown table. Every variant is checked correct on fresh random keys with a
//! poisoned output before it is timed; times are CUDA-event medians after warm-up runs. The
//! 2^30 sort also times the host's `slice::sort_unstable` on the same keys, once.
//! TWOPHASE_VARIANTS_GROUP=merge or =sort runs one group alone.

mod common;
use common::{
    copy_rate_gbs, device_name, key_merge_sets, l2_bytes, load_results, open_gpu, random_keys,
    rotated_sets, time_events, POISON_U32, SIZES,
};

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

use rand::Rng;
use rayon::prelude::*;
use twophase::gpu::{Gpu, Less, MergeBuffers, MergeScratch, SortBuffers};
use twophase::variants::{MergeVariant, SortScratch, SortVariant};
use twophase_gpu::cudarc::driver::CudaSlice;

/// Untimed runs before timing (module load, first touch, clock ramp).
const WARMUP: usize = 5;
/// Timed runs per merge measurement (the median is reported).
const MERGE_REPS: usize = 100;
/// Timed runs per sort measurement up to 2^27 keys.
const SORT_REPS: usize = 21;
/// Timed runs of the 2^30 sorts: Batcher takes most of a second per run there.
const BIG_SORT_REPS: usize = 5;
/// Size (log2 of keys) of the sort compared with std on the host.
const HOST_LOG2N: u32 = 30;

/// One measurement: a CSV row and a table row.
struct Row {
    group: &'static str,
    variant: String,
    log2n: u32,
    ms: f64,
}

impl Row {
    fn gkeys(&self) -> f64 {
        (1u64 << self.log2n) as f64 / (self.ms * 1e-3) / 1e9
    }
}

/// Every merge variant on two sorted halves of random u32 keys, checked against the CPU merge
/// (output poisoned) and timed.
fn bench_merges(gpu: &Gpu, l2: usize, cub: &HashMap<(String, u32), f64>, rows: &mut Vec<Row>) {
    let stream = gpu.stream();
    let mut scratch = MergeScratch::new();
    for log2n in SIZES {
        let n = 1usize << log2n;
        let sets = rotated_sets(l2, 2 * n * 4);
        let mut sets = key_merge_sets(stream, n, sets, |_| rand::random(), |r| r.gen(), POISON_U32);
        for variant in MergeVariant::ALL {
            let mut merge = |(a, b): &(CudaSlice<u32>, CudaSlice<u32>),
                             out: &mut CudaSlice<u32>| {
                gpu.merge_device(
                    MergeBuffers::keys(a, b, out),
                    &Less,
                    variant.into(),
                    &mut scratch,
                )
                .expect("merge");
            };
            assert!(
                sets.check(stream, &mut merge),
                "{variant:?} 2^{log2n}: merge differs from the CPU merge"
            );
            let ms = sets.time(gpu, WARMUP, MERGE_REPS, &mut merge);
            rows.push(Row {
                group: "merge",
                variant: variant.name().into(),
                log2n,
                ms,
            });
        }
        if let Some(&ms) = cub.get(&("u32".to_owned(), log2n)) {
            rows.push(Row {
                group: "merge",
                variant: "cub".into(),
                log2n,
                ms,
            });
        }
    }
}

/// Time both sort variants on the keys in `pristine` (device) and check them against
/// `expected`. The sorts are in place, so each timed run first restores the keys with a
/// device-to-device copy, whose own median is subtracted (as benches/gpu_mergesort.rs and the
/// CUB peer do). The scratch is poisoned by a sort of poison keys before the checked run.
fn bench_sorts(
    gpu: &Gpu,
    pristine: &CudaSlice<u32>,
    expected: &[u32],
    log2n: u32,
    reps: usize,
    rows: &mut Vec<Row>,
) {
    let stream = gpu.stream();
    let n = expected.len();
    let mut keys = stream.clone_htod(&vec![u32::MAX - 5; n]).expect("alloc");
    let mut scratch = SortScratch::new();
    for variant in SortVariant::ALL {
        stream
            .memcpy_htod(&vec![u32::MAX - 5; n], &mut keys)
            .expect("poison");
        gpu.sort_variant_device(variant, SortBuffers::keys(&mut keys), &Less, &mut scratch)
            .expect("poison sort");
        stream.memcpy_dtod(pristine, &mut keys).expect("restore");
        gpu.sort_variant_device(variant, SortBuffers::keys(&mut keys), &Less, &mut scratch)
            .expect("sort");
        let got = stream.clone_dtoh(&keys).expect("download");
        assert!(
            got == expected,
            "{variant:?} 2^{log2n}: sort differs from std"
        );
        let warmup = WARMUP.min(reps);
        let copy_ms = time_events(gpu, warmup, reps, |_| {
            stream.memcpy_dtod(pristine, &mut keys).expect("restore")
        });
        let ms = time_events(gpu, warmup, reps, |_| {
            stream.memcpy_dtod(pristine, &mut keys).expect("restore");
            gpu.sort_variant_device(variant, SortBuffers::keys(&mut keys), &Less, &mut scratch)
                .expect("sort");
        }) - copy_ms;
        rows.push(Row {
            group: "sort",
            variant: variant.name().into(),
            log2n,
            ms,
        });
    }
}

/// The sort group: Batcher's and the two-phase sort at every size and CUB's from its peer, then
/// the 2^30 sort beside the host's `slice::sort_unstable` of `host_input` (`std_sort`, running).
fn bench_all_sorts(
    gpu: &Gpu,
    cub_sort: &HashMap<(String, u32), f64>,
    host_input: Vec<u32>,
    std_sort: std::thread::JoinHandle<(Vec<u32>, f64)>,
    rows: &mut Vec<Row>,
) {
    for log2n in SIZES {
        let input = random_keys::<u32>(1 << log2n, rand::random());
        let mut expected = input.clone();
        expected.par_sort_unstable();
        let pristine = gpu.stream().clone_htod(&input).expect("upload");
        bench_sorts(gpu, &pristine, &expected, log2n, SORT_REPS, rows);
        for (peer, variant) in [("cub-merge", "cub"), ("cub-radix", "cub-radix")] {
            if let Some(&ms) = cub_sort.get(&(format!("{peer}-u32"), log2n)) {
                rows.push(Row {
                    group: "sort",
                    variant: variant.into(),
                    log2n,
                    ms,
                });
            }
        }
    }
    let pristine = gpu.stream().clone_htod(&host_input).expect("upload");
    drop(host_input);
    let (expected, std_ms) = std_sort.join().expect("std sort thread");
    bench_sorts(gpu, &pristine, &expected, HOST_LOG2N, BIG_SORT_REPS, rows);
    rows.push(Row {
        group: "sort",
        variant: "std".into(),
        log2n: HOST_LOG2N,
        ms: std_ms,
    });
}

fn main() {
    let Some(gpu) = open_gpu() else {
        return;
    };
    let l2 = l2_bytes(&gpu);
    let cub_merge = load_results("TWOPHASE_CUB_RESULTS");
    let cub_sort = load_results("TWOPHASE_CUB_SORT_RESULTS");
    println!(
        "device: {}, L2 {} MB; host: {} threads",
        device_name(&gpu),
        l2 >> 20,
        rayon::current_num_threads()
    );
    println!(
        "device-to-device copy rate: {:.0} GB/s",
        copy_rate_gbs(&gpu, WARMUP, SORT_REPS)
    );

    // TWOPHASE_VARIANTS_GROUP: one group alone ("merge" or "sort"), else both.
    let group = std::env::var("TWOPHASE_VARIANTS_GROUP").unwrap_or_default();
    let (run_merges, run_sorts) = (group != "sort", group != "merge");

    // The host's std sort of the 2^30 keys runs on its own thread while the GPU is measured.
    let host_n = 1usize << HOST_LOG2N;
    let host_input: Vec<u32> = if run_sorts {
        random_keys(host_n, rand::random())
    } else {
        Vec::new()
    };
    let std_sort = {
        let mut keys = host_input.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            keys.sort_unstable();
            (keys, started.elapsed().as_secs_f64() * 1e3)
        })
    };

    let mut rows = Vec::new();
    if run_merges {
        bench_merges(&gpu, l2, &cub_merge, &mut rows);
    }
    if run_sorts {
        bench_all_sorts(&gpu, &cub_sort, host_input, std_sort, &mut rows);
    }

    let find = |group: &str, variant: &str, log2n: u32| {
        rows.iter()
            .find(|r| r.group == group && r.variant == variant && r.log2n == log2n)
            .map(|r| r.ms)
    };
    let ratio = |ms: f64, of: Option<f64>| of.map_or("-".to_owned(), |o| format!("{:.2}x", o / ms));
    println!();
    println!("| group | variant | n | ms | Gkeys/s | twophase/this | CUB merge/this | CUB radix/this | std/this |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut csv = String::from("group,variant,key,n,ms,gkeys_per_s\n");
    for row in &rows {
        let (cub, radix) = if row.group == "merge" {
            (find("merge", "cub", row.log2n), None)
        } else {
            (
                find("sort", "cub", row.log2n),
                find("sort", "cub-radix", row.log2n),
            )
        };
        println!(
            "| {} | {} | 2^{} | {:.4} | {:.3} | {} | {} | {} | {} |",
            row.group,
            row.variant,
            row.log2n,
            row.ms,
            row.gkeys(),
            ratio(row.ms, find(row.group, "twophase", row.log2n)),
            ratio(row.ms, cub),
            ratio(row.ms, radix),
            ratio(row.ms, find(row.group, "std", row.log2n)),
        );
        let _ = writeln!(
            csv,
            "{},{},u32,{},{:.6},{:.6}",
            row.group,
            row.variant,
            1u64 << row.log2n,
            row.ms,
            row.gkeys()
        );
    }
    let path = std::env::var("TWOPHASE_VARIANTS_CSV").unwrap_or_else(|_| "variants.csv".into());
    std::fs::write(&path, csv).expect("write the CSV");
    println!("\nCSV: {path}");
}
