//! GPU load-balancing search and sorted search benchmark: time vs the device copy rate of the same run, with a tuning sweep.
//!
//! Run on a GPU machine (see scripts/device.sh). Prints markdown table rows; the last lines are
//! the summary against the targets (70% of the copy rate on the essential bytes).

mod common;

use common::{copy_rate_gbs, kind_selected, time_events, POISON_U32};
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
/// Segments of the dense load-balancing case: one item a segment on average (2^27).
const DENSE_SEGMENTS: usize = 1 << 27;
/// Multiplier of the expanded values (segment s holds s * EXPAND_HASH).
const EXPAND_HASH: u32 = 2_654_435_761;
/// Needles and haystack keys of the sorted search (2^26 each).
const SEARCH_N: usize = 1 << 26;
/// The performance issue's target: this fraction of the copy rate on the essential bytes.
const TARGET: f64 = 0.90;
/// Lanes per partition search tried at the shipped tuning besides the automatic choice.
const LANES_SWEEP: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Load-balancing tunings tried besides the shipped one (NT, VT), for the load-balancing search
/// and interval expand (the shipped shape among them is run once).
const LBS_SWEEP: [(u32, u32); 8] = [
    (128, 23),
    (256, 11),
    (256, 15),
    (256, 23),
    (256, 19),
    (256, 27),
    (256, 31),
    (384, 15),
];
/// Sorted-search tunings tried besides the shipped one (NT, VT); past 48 KiB of shared memory
/// (256 x 31 and up) the tile opts in to more.
const SEARCH_SWEEP: [(u32, u32); 10] = [
    (128, 19),
    (128, 23),
    (128, 27),
    (256, 15),
    (256, 19),
    (256, 31),
    (256, 39),
    (512, 23),
    (512, 31),
    (1024, 23),
];

fn row(what: &str, ms: f64, bytes: f64, copy_gbs: f64) -> f64 {
    let gbs = bytes / (ms * 1e-3) / 1e9;
    let ratio = gbs / copy_gbs;
    println!("| {what} | {ms:.4} | {gbs:.0} | {:.1}% |", 100.0 * ratio);
    ratio
}

/// Whether the device's u32 results are the CPU backend's indices.
fn same_indices(got: &[u32], want: &[usize]) -> bool {
    got.par_iter().zip(want).all(|(&g, &w)| g as usize == w)
}

/// A primitive's tuning of a launch shape (NT, VT).
trait Tuned: Copy {
    fn of(shape: (u32, u32)) -> Self;
}

/// Implements [`Tuned`] for a tuning of two fields, `threads` and `vt`.
macro_rules! tuned {
    ($tuning:ty) => {
        impl Tuned for $tuning {
            fn of((threads, vt): (u32, u32)) -> Self {
                Self { threads, vt }
            }
        }
    };
}

tuned!(LoadBalanceTuning);
tuned!(SortedSearchTuning);

/// The launch shape (NT, VT) of a tuning.
macro_rules! shape {
    ($tuning:expr) => {
        ($tuning.threads, $tuning.vt)
    };
}

/// A swept primitive: its name in the rows, messages and summary, the case measured, the rest
/// of its wrong-result message, its essential bytes per run, its shipped launch shape (NT, VT)
/// and the shapes tried besides it.
struct Swept {
    name: &'static str,
    case: &'static str,
    differs: &'static str,
    bytes: f64,
    shipped: (u32, u32),
    sweep: &'static [(u32, u32)],
}

impl Swept {
    /// The load-balancing search (`expand` false) or interval expand (one u32 value a segment)
    /// over [`LBS_ITEMS`] items in `segments` segments, the case named `case`, at the shipped
    /// tuning and `sweep`: it reads a u32 start a segment (and expand a value) and writes a u32
    /// an item.
    const fn load_balance(
        expand: bool,
        case: &'static str,
        segments: usize,
        sweep: &'static [(u32, u32)],
    ) -> Self {
        let (name, read_per_segment) = if expand {
            ("interval expand", 8)
        } else {
            ("load-balancing search", 4)
        };
        Swept {
            name,
            case,
            differs: "differs",
            bytes: (4 * LBS_ITEMS + read_per_segment * segments) as f64,
            shipped: shape!(LoadBalanceTuning::shipped()),
            sweep,
        }
    }
}

/// The load-balancing search: 2^25 segments with random boundaries over 2^27 items.
const LBS: Swept = Swept::load_balance(
    false,
    "u32, 2^27 items / 2^25 segments",
    LBS_SEGMENTS,
    &LBS_SWEEP,
);
/// Interval expand on the same segments.
const EXPAND: Swept = Swept::load_balance(
    true,
    "u32, 2^27 items / 2^25 segments",
    LBS_SEGMENTS,
    &LBS_SWEEP,
);
/// The load-balancing search with one item a segment on average, at the shipped tuning.
const DENSE_LBS: Swept = Swept::load_balance(
    false,
    "u32, 2^27 items / 2^27 segments",
    DENSE_SEGMENTS,
    &[],
);
/// Interval expand on the same segments, at the shipped tuning.
const DENSE_EXPAND: Swept =
    Swept::load_balance(true, "u32, 2^27 items / 2^27 segments", DENSE_SEGMENTS, &[]);

/// The sorted search: 2^26 needles in 2^26 keys, u32, lower bound.
const SEARCH: Swept = Swept {
    name: "sorted search",
    case: "u32 lower, 2^26 in 2^26",
    differs: "differs from the CPU backend",
    bytes: (3 * 4 * SEARCH_N) as f64,
    shipped: shape!(SortedSearchTuning::for_key(4)),
    sweep: &SEARCH_SWEEP,
};

/// The fastest run of a sweep: ms and launch shape.
type Best = (f64, (u32, u32));

/// What the rows are measured on and against: the device and its copy rate.
struct Meter<'a> {
    gpu: &'a Gpu,
    copy_gbs: f64,
}

impl Meter<'_> {
    /// Poison `out`, run `run(out)` once and assert that it wrote `want` (`what` names the
    /// configuration in the message).
    fn check(
        &self,
        p: &Swept,
        want: &[usize],
        out: &mut CudaSlice<u32>,
        what: &str,
        run: impl FnOnce(&mut CudaSlice<u32>),
    ) {
        let stream = self.gpu.stream();
        stream
            .memcpy_htod(&vec![POISON_U32; want.len()], out)
            .expect("poison");
        run(out);
        let got = stream.clone_dtoh(out).expect("download");
        assert!(same_indices(&got, want), "{} {what} {}", p.name, p.differs);
    }

    /// The shipped tuning and then each of the primitive's sweep: poison `out`, run
    /// `run(tuning, out)` once and check it against `want`, then time it, a row each. Returns
    /// the fastest.
    fn sweep<T: Tuned>(
        &self,
        p: &Swept,
        want: &[usize],
        out: &mut CudaSlice<u32>,
        mut run: impl FnMut(T, &mut CudaSlice<u32>),
    ) -> Best {
        let shipped = p.shipped;
        let mut best = (f64::MAX, shipped);
        let others = p.sweep.iter().copied().filter(|&shape| shape != shipped);
        for (threads, vt) in std::iter::once(shipped).chain(others) {
            let tuning = T::of((threads, vt));
            self.check(p, want, out, &format!("{threads}x{vt}"), |out| {
                run(tuning, out)
            });
            let ms = time_events(self.gpu, WARMUP, REPS, |_| run(tuning, out));
            let tag = if (threads, vt) == shipped {
                " (shipped)"
            } else {
                ""
            };
            row(
                &format!("{} {}, {threads}x{vt}{tag}", p.name, p.case),
                ms,
                p.bytes,
                self.copy_gbs,
            );
            if ms < best.0 {
                best = (ms, (threads, vt));
            }
        }
        best
    }

    /// The shipped tuning with each partition lane count of [`LANES_SWEEP`]
    /// (`Gpu::set_partition_lanes`), checked and timed as in [`Meter::sweep`], a row each; the
    /// automatic choice is restored after.
    fn lanes<T: Tuned>(
        &self,
        p: &Swept,
        want: &[usize],
        out: &mut CudaSlice<u32>,
        mut run: impl FnMut(T, &mut CudaSlice<u32>),
    ) {
        for lanes in LANES_SWEEP {
            self.gpu.set_partition_lanes(Some(lanes)).expect("lanes");
            self.check(p, want, out, &format!("lanes={lanes}"), |out| {
                run(T::of(p.shipped), out)
            });
            let ms = time_events(self.gpu, WARMUP, REPS, |_| run(T::of(p.shipped), out));
            row(
                &format!("{} {}, shipped, partition lanes {lanes}", p.name, p.case),
                ms,
                p.bytes,
                self.copy_gbs,
            );
        }
        self.gpu.set_partition_lanes(None).expect("lanes");
    }

    /// The load-balancing search and interval expand (u32 values, one a segment) over
    /// `num_segments` segments with random boundaries over [`LBS_ITEMS`] items, each checked
    /// against the CPU backend and swept as `[search, expand]` say (the search's partition
    /// lanes too when it has a sweep). Returns the fastest of each.
    fn load_balance(
        &self,
        seed: u64,
        num_segments: usize,
        [search, expand]: [&Swept; 2],
        scratch: &mut SearchScratch,
    ) -> (Best, Best) {
        let (gpu, stream) = (self.gpu, self.gpu.stream());
        let mut cuts: Vec<u32> = (0..num_segments as u64 - 1)
            .into_par_iter()
            .map(|i| {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ (i * 0x9E37_79B9));
                rng.gen_range(0..=LBS_ITEMS as u32)
            })
            .collect();
        cuts.push(0);
        cuts.par_sort_unstable();
        let scan_host: Vec<usize> = cuts.par_iter().map(|&c| c as usize).collect();
        let expected = cpu::load_balance_search(&scan_host, LBS_ITEMS);
        let scan: CudaSlice<u32> = stream.clone_htod(&cuts).expect("upload");
        let mut out: CudaSlice<u32> = stream.alloc_zeros(LBS_ITEMS).expect("alloc");
        let mut lbs = |tuning, out: &mut CudaSlice<u32>| {
            gpu.load_balance_search_device(&scan, LBS_ITEMS, out, None, Some(tuning), scratch)
                .expect("lbs");
        };
        let best_lbs = self.sweep(search, &expected, &mut out, &mut lbs);
        if !search.sweep.is_empty() {
            self.lanes(search, &expected, &mut out, &mut lbs);
        }
        let values: CudaSlice<u32> = stream
            .clone_htod(
                &(0..num_segments as u32)
                    .map(|i| i.wrapping_mul(EXPAND_HASH))
                    .collect::<Vec<_>>(),
            )
            .expect("upload");
        let expanded: Vec<usize> = expected
            .par_iter()
            .map(|&e| (e as u32).wrapping_mul(EXPAND_HASH) as usize)
            .collect();
        let mut run_expand = |tuning, out: &mut CudaSlice<u32>| {
            gpu.interval_device(
                &scan,
                LBS_ITEMS,
                Interval::Expand { values: &values },
                out,
                Some(tuning),
                scratch,
            )
            .expect("expand");
        };
        let best_expand = self.sweep(expand, &expanded, &mut out, &mut run_expand);
        (best_lbs, best_expand)
    }

    /// The summary line of a primitive against the target.
    fn summary(&self, p: &Swept, (ms, (threads, vt)): Best) {
        let target_ms = p.bytes / (TARGET * self.copy_gbs * 1e9) * 1e3;
        println!(
            "summary: {} best {ms:.4} ms at {threads}x{vt} = {:.1}% of copy rate (target {:.0}%: <= {target_ms:.4} ms)",
            p.name,
            100.0 * p.bytes / (ms * 1e-3) / 1e9 / self.copy_gbs,
            100.0 * TARGET
        );
    }
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

    let meter = Meter {
        gpu: &gpu,
        copy_gbs,
    };
    // TWOPHASE_BENCH_KIND: `load-balance` or `sorted-search` runs only that part.
    if kind_selected("load-balance") {
        let (best_lbs, best_expand) =
            meter.load_balance(seed, LBS_SEGMENTS, [&LBS, &EXPAND], &mut scratch);
        meter.load_balance(
            seed,
            DENSE_SEGMENTS,
            [&DENSE_LBS, &DENSE_EXPAND],
            &mut scratch,
        );
        meter.summary(&LBS, best_lbs);
        meter.summary(&EXPAND, best_expand);
    }
    if !kind_selected("sorted-search") {
        return;
    }

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
        .clone_htod(&vec![POISON_U32; SEARCH_N])
        .expect("alloc");
    let mut search = |tuning, out: &mut CudaSlice<u32>| {
        gpu.sorted_search_device(
            &dn,
            &dh,
            out,
            SearchBound::Lower,
            &Less,
            Some(tuning),
            &mut scratch,
        )
        .expect("search");
    };
    let best_search = meter.sweep(&SEARCH, &want, &mut out, &mut search);
    meter.lanes(&SEARCH, &want, &mut out, &mut search);
    meter.summary(&SEARCH, best_search);
}
