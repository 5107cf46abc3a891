//! GPU merge benchmark: two-phase merge vs the device copy rate and cub::DeviceMerge, on the device.
//!
//! Run on a GPU machine (see scripts/device.sh). Set TWOPHASE_CUB_RESULTS to the file written by
//! benches/peers/cub_merge.cu to print the ratio to CUB. Prints markdown table rows.

mod common;
use common::{copy_rate_gbs, load_results, median, sorted_halves, time_events};

use std::collections::HashMap;
use std::time::Instant;

use rand::Rng;
use twophase::cpu;
use twophase::gpu::{Gpu, Less, MergeBuffers, MergeScratch, MergeTuning, PrimitiveKey};
use twophase_gpu::cudarc::driver::{sys, CudaSlice, DeviceRepr};

/// Untimed runs before timing: module load, first-touch and clock ramp stay out of the numbers.
const WARMUP: usize = 10;
/// Timed runs per measurement; the median is reported.
const REPS: usize = 100;
/// Inputs are rotated among enough sets to exceed this many times the L2 size, so that repeated
/// runs do not measure the cache.
const L2_MULTIPLE: usize = 4;
/// At most this many rotated input sets.
const MAX_SETS: usize = 16;
/// Sizes (log2 of total outputs) measured.
const SIZES: [u32; 3] = [20, 24, 27];

struct Row {
    kind: String,
    log2n: u32,
    ms: f64,
    bytes: f64,
}

fn load_cub() -> HashMap<(String, u32), f64> {
    load_results("TWOPHASE_CUB_RESULTS")
}

fn print_row(row: &Row, copy_gbs: f64, cub: &HashMap<(String, u32), f64>) {
    let n = (1u64 << row.log2n) as f64;
    let gbs = row.bytes / (row.ms * 1e-3) / 1e9;
    let vs = cub
        .get(&(row.kind.clone(), row.log2n))
        .map_or("n/a".to_owned(), |c| {
            format!("{:.3} ms = {:.2}x", c, c / row.ms)
        });
    println!(
        "| twophase | {} | 2^{} | {:.4} | {:.1} | {:.1}% | {} |",
        row.kind,
        row.log2n,
        row.ms,
        n / (row.ms * 1e-3) / 1e9,
        100.0 * gbs / copy_gbs,
        vs
    );
}

/// Correctness first, then time the shipped tuning (and, at the largest size, a tuning sweep).
#[allow(clippy::too_many_arguments)] // A bench driver: each argument is one knob of the run.
fn bench_keys<K: PrimitiveKey + DeviceRepr + Ord + Send + std::fmt::Debug>(
    gpu: &Gpu,
    kind: &str,
    draw: fn(&mut rand::rngs::StdRng) -> K,
    poison: K,
    sweep: &[(u32, u32, u32)],
    sizes: &[u32],
    rows: &mut Vec<Row>,
    l2: usize,
) {
    let stream = gpu.stream();
    let mut scratch = MergeScratch::new();
    let key_bytes = std::mem::size_of::<K>();
    for &log2n in sizes {
        let n = 1usize << log2n;
        let set_bytes = 2 * n * key_bytes;
        let sets = (L2_MULTIPLE * l2).div_ceil(set_bytes).clamp(1, MAX_SETS);
        let mut inputs = Vec::new();
        let mut expected = Vec::new();
        for s in 0..sets {
            let (a, b) = sorted_halves(
                n,
                u64::from(log2n) * 100 + s as u64 + rand::random::<u32>() as u64,
                draw,
            );
            if s == 0 {
                expected = cpu::merge_by(&a, &b, twophase::order::less);
            }
            let da = stream.clone_htod(&a).expect("upload");
            let db = stream.clone_htod(&b).expect("upload");
            inputs.push((da, db));
        }
        let mut outs: Vec<CudaSlice<K>> = (0..sets)
            .map(|_| stream.clone_htod(&vec![poison; n]).expect("alloc"))
            .collect();
        // Correctness first: fresh random inputs, poisoned output.
        gpu.merge_device(
            MergeBuffers::keys(&inputs[0].0, &inputs[0].1, &mut outs[0]),
            &Less,
            None,
            &mut scratch,
        )
        .expect("merge");
        let got = stream.clone_dtoh(&outs[0]).expect("download");
        assert!(
            got == expected,
            "{kind} 2^{log2n}: GPU merge differs from the CPU merge"
        );
        let ms = time_events(gpu, WARMUP, REPS, |i| {
            let (a, b) = &inputs[i % sets];
            gpu.merge_device(
                MergeBuffers::keys(a, b, &mut outs[i % sets]),
                &Less,
                None,
                &mut scratch,
            )
            .expect("merge");
        });
        rows.push(Row {
            kind: kind.to_owned(),
            log2n,
            ms,
            bytes: (2 * n * key_bytes) as f64,
        });
        if log2n == SIZES[SIZES.len() - 1] {
            for &(threads, vt, blocks_per_sm) in sweep {
                let tuning = MergeTuning {
                    threads,
                    vt,
                    blocks_per_sm,
                };
                stream
                    .memcpy_htod(&vec![poison; n], &mut outs[0])
                    .expect("poison");
                gpu.merge_device(
                    MergeBuffers::keys(&inputs[0].0, &inputs[0].1, &mut outs[0]),
                    &Less,
                    Some(tuning),
                    &mut scratch,
                )
                .expect("merge");
                let ok = stream.clone_dtoh(&outs[0]).expect("download") == expected;
                let ms = time_events(gpu, WARMUP, REPS, |i| {
                    let (a, b) = &inputs[i % sets];
                    gpu.merge_device(
                        MergeBuffers::keys(a, b, &mut outs[i % sets]),
                        &Less,
                        Some(tuning),
                        &mut scratch,
                    )
                    .expect("merge");
                });
                println!("sweep {kind} 2^{log2n} nt={threads} vt={vt} blocks={blocks_per_sm}: {ms:.4} ms (correct: {ok})");
            }
        }
    }
}

fn bench_pairs(gpu: &Gpu, sweep: &[(u32, u32, u32)], rows: &mut Vec<Row>, l2: usize) {
    let stream = gpu.stream();
    let mut scratch = MergeScratch::new();
    for log2n in SIZES {
        let n = 1usize << log2n;
        let set_bytes = 4 * n * 4;
        let sets = (L2_MULTIPLE * l2).div_ceil(set_bytes).clamp(1, MAX_SETS);
        let mut inputs = Vec::new();
        let mut expected = (Vec::new(), Vec::new());
        for s in 0..sets {
            let (a, b) = sorted_halves(n, 7 + s as u64 + rand::random::<u32>() as u64, |r| {
                r.gen_range(0u32..1 << 20)
            });
            let av: Vec<u32> = (0..a.len() as u32).collect();
            let bv: Vec<u32> = (0..b.len() as u32).map(|i| i | 1 << 31).collect();
            if s == 0 {
                expected = cpu::merge_pairs_by(&a, &av, &b, &bv, |x: &u32, y: &u32| x < y);
            }
            let up = |v: &Vec<u32>| stream.clone_htod(v).expect("upload");
            inputs.push((up(&a), up(&av), up(&b), up(&bv)));
        }
        let mut outs: Vec<(CudaSlice<u32>, CudaSlice<u32>)> = (0..sets)
            .map(|_| {
                let p = vec![0xDEAD_BEEFu32; n];
                (
                    stream.clone_htod(&p).expect("alloc"),
                    stream.clone_htod(&p).expect("alloc"),
                )
            })
            .collect();
        {
            let (a, av, b, bv) = &inputs[0];
            let (ok, ov) = &mut outs[0];
            gpu.merge_device(
                MergeBuffers::pairs(a, av, b, bv, ok, ov),
                &Less,
                None,
                &mut scratch,
            )
            .expect("merge pairs");
            let got = (
                stream.clone_dtoh(ok).expect("dl"),
                stream.clone_dtoh(ov).expect("dl"),
            );
            assert!(
                got == expected,
                "u32 pairs 2^{log2n}: GPU merge differs from the CPU merge"
            );
        }
        let ms = time_events(gpu, WARMUP, REPS, |i| {
            let (a, av, b, bv) = &inputs[i % sets];
            let (ok, ov) = &mut outs[i % sets];
            gpu.merge_device(
                MergeBuffers::pairs(a, av, b, bv, ok, ov),
                &Less,
                None,
                &mut scratch,
            )
            .expect("merge pairs");
        });
        rows.push(Row {
            kind: "u32-pairs".into(),
            log2n,
            ms,
            bytes: (4 * n * 4) as f64,
        });
        if log2n == SIZES[SIZES.len() - 1] {
            for &(threads, vt, blocks_per_sm) in sweep {
                let tuning = MergeTuning {
                    threads,
                    vt,
                    blocks_per_sm,
                };
                let (a, av, b, bv) = &inputs[0];
                let (ok, ov) = &mut outs[0];
                stream
                    .memcpy_htod(&vec![0xDEAD_BEEFu32; n], ok)
                    .expect("poison");
                stream
                    .memcpy_htod(&vec![0xDEAD_BEEFu32; n], ov)
                    .expect("poison");
                gpu.merge_device(
                    MergeBuffers::pairs(a, av, b, bv, ok, ov),
                    &Less,
                    Some(tuning),
                    &mut scratch,
                )
                .expect("merge");
                let got = (
                    stream.clone_dtoh(ok).expect("dl"),
                    stream.clone_dtoh(ov).expect("dl"),
                );
                let correct = got == expected;
                let ms = time_events(gpu, WARMUP, REPS, |i| {
                    let (a, av, b, bv) = &inputs[i % sets];
                    let (ok, ov) = &mut outs[i % sets];
                    gpu.merge_device(
                        MergeBuffers::pairs(a, av, b, bv, ok, ov),
                        &Less,
                        Some(tuning),
                        &mut scratch,
                    )
                    .expect("merge");
                });
                println!("sweep u32-pairs 2^{log2n} nt={threads} vt={vt} blocks={blocks_per_sm}: {ms:.4} ms (correct: {correct})");
            }
        }
    }
}

/// One full call at 2^20 with the host side included (kernels already compiled): the device-buffer
/// call with its launches and a synchronize, and the host-slice call with its copies.
fn bench_calls(gpu: &Gpu, cub: &HashMap<(String, u32), f64>) {
    let n = 1usize << 20;
    let stream = gpu.stream();
    let (a, b) = sorted_halves(n, 99, |r| r.gen::<u32>());
    let expected = cpu::merge(&a, &b);
    let da = stream.clone_htod(&a).expect("upload");
    let db = stream.clone_htod(&b).expect("upload");
    let mut out = stream.clone_htod(&vec![0xDEAD_BEEFu32; n]).expect("alloc");
    let mut scratch = MergeScratch::new();
    let mut device_call = || {
        let t = Instant::now();
        gpu.merge_device(
            MergeBuffers::keys(&da, &db, &mut out),
            &Less,
            None,
            &mut scratch,
        )
        .expect("merge");
        stream.synchronize().expect("sync");
        t.elapsed().as_secs_f64() * 1e3
    };
    for _ in 0..WARMUP {
        device_call();
    }
    let device_ms = median((0..REPS).map(|_| device_call()).collect());
    assert!(
        stream.clone_dtoh(&out).expect("dl") == expected,
        "call: wrong result"
    );
    let host_call = || {
        let t = Instant::now();
        let out = gpu.merge(&a, &b, &Less).expect("merge");
        (t.elapsed().as_secs_f64() * 1e3, out)
    };
    for _ in 0..WARMUP {
        assert!(host_call().1 == expected, "host call: wrong result");
    }
    let host_ms = median((0..REPS).map(|_| host_call().0).collect());
    for (kind, ms) in [("u32-call-device", device_ms), ("u32-call-host", host_ms)] {
        let vs = cub
            .get(&(kind.to_owned(), 20))
            .map_or("n/a".to_owned(), |c| format!("{c:.3} ms = {:.2}x", c / ms));
        println!(
            "| twophase | {kind} | 2^20 | {ms:.4} | {:.1} | - | {vs} |",
            n as f64 / (ms * 1e-3) / 1e9
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("the GPU benchmark needs a CUDA GPU: {e}"),
    };
    let l2 = gpu
        .context()
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .expect("L2 size") as usize;
    let cub = load_cub();
    let copy = copy_rate_gbs(&gpu, WARMUP, REPS);
    println!(
        "device: {} (sm_{}), L2 {} MB",
        gpu.name().unwrap_or_default(),
        gpu.arch(),
        l2 >> 20
    );
    println!("device-to-device copy rate: {copy:.0} GB/s (bytes read + written)");
    let mut rows = Vec::new();
    // (threads, vt, blocks_per_sm) beside the shipped tuning: the tuning shipped before, and
    // its nearest rivals in the sweeps of docs/tuning.md.
    let u32_sweep = [(384, 23, 3), (512, 21, 3), (256, 25, 5)];
    let u64_sweep = [(256, 19, 4), (256, 17, 3)];
    let pairs_sweep = [(512, 15, 2), (256, 19, 4)];
    bench_keys::<u32>(
        &gpu,
        "u32",
        |r| r.gen(),
        0xDEAD_BEEF,
        &u32_sweep,
        &SIZES,
        &mut rows,
        l2,
    );
    bench_keys::<u64>(
        &gpu,
        "u64",
        |r| r.gen(),
        0xDEAD_BEEF_DEAD_BEEF,
        &u64_sweep,
        &SIZES,
        &mut rows,
        l2,
    );
    bench_pairs(&gpu, &pairs_sweep, &mut rows, l2);
    // The same shipped tunings without programmatic dependent launch, for comparison.
    gpu.set_programmatic_launch(false);
    let largest = [SIZES[SIZES.len() - 1]];
    bench_keys::<u32>(
        &gpu,
        "u32-no-pdl",
        |r| r.gen(),
        0xDEAD_BEEF,
        &[],
        &largest,
        &mut rows,
        l2,
    );
    bench_keys::<u64>(
        &gpu,
        "u64-no-pdl",
        |r| r.gen(),
        0xDEAD_BEEF_DEAD_BEEF,
        &[],
        &largest,
        &mut rows,
        l2,
    );
    gpu.set_programmatic_launch(true);
    println!(
        "programmatic dependent launch: {}",
        gpu.programmatic_launch()
    );
    println!();
    println!("| impl | kind | n | ms | Gkeys/s | % of copy rate | CUB ms = CUB/ours |");
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        print_row(row, copy, &cub);
    }
    bench_calls(&gpu, &cub);
}
