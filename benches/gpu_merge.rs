//! GPU merge benchmark: two-phase merge vs the device copy rate and cub::DeviceMerge, on the device.
//!
//! Run on a GPU machine (see scripts/device.sh). Set TWOPHASE_CUB_RESULTS to the file written by
//! benches/peers/cub_merge.cu to print the ratio to CUB. Prints markdown table rows.

mod common;
use common::{
    copy_rate_gbs, device_name, env_sizes, key_merge_sets, kind_selected, l2_bytes, load_results,
    median, open_gpu, rotated_sets, sorted_halves, DeviceOutput, Rotated, LARGEST_LOG2N,
    POISON_U32, SIZES,
};

use std::collections::HashMap;
use std::time::Instant;

use rand::Rng;
use twophase::cpu;
use twophase::gpu::{
    Gpu, Less, MergeAlgorithm, MergeBuffers, MergeScratch, MergeTuning, PrimitiveKey,
};
use twophase_gpu::cudarc::driver::{CudaSlice, DeviceRepr};

/// Untimed runs before timing: module load, first-touch and clock ramp stay out of the numbers.
const WARMUP: usize = 10;
/// Timed runs per measurement; the median is reported.
const REPS: usize = 100;
/// Lanes per partition search timed at the shipped tuning besides the automatic choice.
const LANES_SWEEP: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Poison of the u64 outputs.
const POISON_U64: u64 = 0xDEAD_BEEF_DEAD_BEEF;

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

/// One size of one kind: what is merged, and where its results go.
struct Case<'a> {
    gpu: &'a Gpu,
    /// The kind of the table row and of the sweep lines.
    kind: &'a str,
    /// What the correctness message calls the kind.
    checked: &'a str,
    log2n: u32,
    /// Bytes read and written by one merge.
    bytes: f64,
    /// (threads, vt, blocks_per_sm) timed besides the shipped tuning at the largest size (at
    /// every size of [`SIZES_ENV`](common::SIZES_ENV) when it is set).
    sweep: &'a [(u32, u32, u32)],
}

impl Case<'_> {
    /// Correctness first (fresh random inputs, poisoned output), then time the shipped tuning
    /// (and, at the largest size or at every size set by the environment, the sweep) with
    /// `merge(inputs, output, tuning)`.
    fn run<I, O: DeviceOutput>(
        &self,
        sets: &mut Rotated<I, O>,
        rows: &mut Vec<Row>,
        mut merge: impl FnMut(&I, &mut O, Option<MergeTuning>),
    ) {
        let (gpu, kind, log2n) = (self.gpu, self.kind, self.log2n);
        let stream = gpu.stream();
        let mut shipped = |i: &I, o: &mut O| merge(i, o, None);
        assert!(
            sets.check(stream, &mut shipped),
            "{} 2^{log2n}: GPU merge differs from the CPU merge",
            self.checked
        );
        let ms = sets.time(gpu, WARMUP, REPS, &mut shipped);
        rows.push(Row {
            kind: kind.to_owned(),
            log2n,
            ms,
            bytes: self.bytes,
        });
        for lanes in LANES_SWEEP {
            gpu.set_partition_lanes(Some(lanes)).expect("lanes");
            let correct = sets.check(stream, &mut shipped);
            let ms = sets.time(gpu, WARMUP, REPS, &mut shipped);
            println!(
                "lanes {kind} 2^{log2n} partition lanes={lanes}: {ms:.4} ms (correct: {correct})"
            );
        }
        gpu.set_partition_lanes(None).expect("lanes");
        if log2n != LARGEST_LOG2N && env_sizes().is_none() {
            return;
        }
        for &(threads, vt, blocks_per_sm) in self.sweep {
            let tuning = MergeTuning {
                threads,
                vt,
                blocks_per_sm,
            };
            let mut tuned = |i: &I, o: &mut O| merge(i, o, Some(tuning));
            let correct = sets.check(stream, &mut tuned);
            let ms = sets.time(gpu, WARMUP, REPS, &mut tuned);
            println!("sweep {kind} 2^{log2n} nt={threads} vt={vt} blocks={blocks_per_sm}: {ms:.4} ms (correct: {correct})");
        }
    }
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
    if !kind_selected(kind) {
        return;
    }
    let stream = gpu.stream();
    let mut scratch = MergeScratch::new();
    let key_bytes = std::mem::size_of::<K>();
    for &log2n in sizes {
        let n = 1usize << log2n;
        let set_bytes = 2 * n * key_bytes;
        let seed = |s: usize| u64::from(log2n) * 100 + s as u64 + rand::random::<u32>() as u64;
        let mut sets = key_merge_sets(stream, n, rotated_sets(l2, set_bytes), seed, draw, poison);
        let case = Case {
            gpu,
            kind,
            checked: kind,
            log2n,
            bytes: set_bytes as f64,
            sweep,
        };
        case.run(&mut sets, rows, |(a, b), out, tuning| {
            gpu.merge_device(
                MergeBuffers::keys(a, b, out),
                &Less,
                MergeAlgorithm::TwoPhase(tuning),
                &mut scratch,
            )
            .expect("merge");
        });
    }
}

/// The device inputs of a pairs merge: A's keys and values, B's keys and values.
type PairInputs = (
    CudaSlice<u32>,
    CudaSlice<u32>,
    CudaSlice<u32>,
    CudaSlice<u32>,
);

fn bench_pairs(
    gpu: &Gpu,
    sweep: &[(u32, u32, u32)],
    sizes: &[u32],
    rows: &mut Vec<Row>,
    l2: usize,
) {
    if !kind_selected("u32-pairs") {
        return;
    }
    let stream = gpu.stream();
    let mut scratch = MergeScratch::new();
    for &log2n in sizes {
        let n = 1usize << log2n;
        let set_bytes = 4 * n * 4;
        let mut inputs: Vec<PairInputs> = Vec::new();
        let mut expected = (Vec::new(), Vec::new());
        for s in 0..rotated_sets(l2, set_bytes) {
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
        let poison = (vec![POISON_U32; n], vec![POISON_U32; n]);
        let mut sets: Rotated<PairInputs, (CudaSlice<u32>, CudaSlice<u32>)> =
            Rotated::new(stream, inputs, expected, poison);
        let case = Case {
            gpu,
            kind: "u32-pairs",
            checked: "u32 pairs",
            log2n,
            bytes: set_bytes as f64,
            sweep,
        };
        case.run(&mut sets, rows, |(a, av, b, bv), (ok, ov), tuning| {
            gpu.merge_device(
                MergeBuffers::pairs(a, av, b, bv, ok, ov),
                &Less,
                MergeAlgorithm::TwoPhase(tuning),
                &mut scratch,
            )
            .expect("merge pairs");
        });
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
    let mut out = stream.clone_htod(&vec![POISON_U32; n]).expect("alloc");
    let mut scratch = MergeScratch::new();
    let mut device_call = || {
        let t = Instant::now();
        gpu.merge_device(
            MergeBuffers::keys(&da, &db, &mut out),
            &Less,
            MergeAlgorithm::TwoPhase(None),
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
    let Some(gpu) = open_gpu() else {
        return;
    };
    let l2 = l2_bytes(&gpu);
    let cub = load_cub();
    let copy = copy_rate_gbs(&gpu, WARMUP, REPS);
    println!("device: {}, L2 {} MB", device_name(&gpu), l2 >> 20);
    println!("device-to-device copy rate: {copy:.0} GB/s (bytes read + written)");
    let mut rows = Vec::new();
    // The sizes of TWOPHASE_BENCH_SIZES (the sweeps then run at each), else the shared ones.
    let sizes = env_sizes().unwrap_or(SIZES.to_vec());
    // (threads, vt, blocks_per_sm) beside the shipped tuning: the tuning shipped before, and
    // its nearest rivals in the sweeps of docs/tuning.md (for u32 keys on fast memory: the
    // small merges' shape, which large ones took before, and the large ones' rivals; for u64
    // keys and u32 pairs, 128-thread tiles, which did not pay).
    let u32_sweep = [(384, 21, 4), (128, 25, 12), (256, 25, 5)];
    let u64_sweep = [
        (256, 19, 3),
        (256, 17, 3),
        (128, 19, 8),
        (128, 23, 8),
        (128, 15, 10),
    ];
    let pairs_sweep = [
        (512, 15, 2),
        (256, 19, 4),
        (128, 17, 9),
        (128, 19, 8),
        (128, 21, 8),
    ];
    bench_keys::<u32>(
        &gpu,
        "u32",
        |r| r.gen(),
        POISON_U32,
        &u32_sweep,
        &sizes,
        &mut rows,
        l2,
    );
    bench_keys::<u64>(
        &gpu,
        "u64",
        |r| r.gen(),
        POISON_U64,
        &u64_sweep,
        &sizes,
        &mut rows,
        l2,
    );
    bench_pairs(&gpu, &pairs_sweep, &sizes, &mut rows, l2);
    // The same shipped tunings without programmatic dependent launch, for comparison.
    gpu.set_programmatic_launch(false);
    let largest = [LARGEST_LOG2N];
    bench_keys::<u32>(
        &gpu,
        "u32-no-pdl",
        |r| r.gen(),
        POISON_U32,
        &[],
        &largest,
        &mut rows,
        l2,
    );
    bench_keys::<u64>(
        &gpu,
        "u64-no-pdl",
        |r| r.gen(),
        POISON_U64,
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
