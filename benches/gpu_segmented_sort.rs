//! GPU segmented sort benchmark: twophase's segmented sort vs cub::DeviceSegmentedSort / DeviceSegmentedRadixSort, on the same segmentations.
//!
//! Run on a GPU machine (see scripts/device.sh). Set TWOPHASE_CUB_SEGMENTED_RESULTS to the file
//! written by benches/peers/cub_segmented_sort.cu to print the ratios to CUB. Each sort is in
//! place, so every timed run first restores the keys with a device-to-device copy whose own
//! median is subtracted. Correctness first: every configuration is checked against std's sort of
//! each segment before it is timed.

mod common;
#[path = "common/segments.rs"]
mod segments;

use common::{copy_rate_gbs, device_name, load_results, open_gpu, random_keys, time_events, SIZES};
use segments::{segment_starts, SEGMENT_DISTRIBUTIONS};

use std::collections::HashMap;

use rayon::prelude::*;
use twophase::gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceSegments, Gpu, Less, MergesortScratch,
    SegmentedSortScratch, SegmentedSortTuning, SortBuffers,
};
use twophase_gpu::cudarc::driver::{CudaSlice, DeviceRepr};
use twophase_gpu::segmented_sort::SHORT_MAX;

/// Untimed runs before timing (module load, first touch, clock ramp).
const WARMUP: usize = 5;
/// Timed runs per measurement; the median is reported.
const REPS: usize = 25;
/// Set to one row kind (`all32` ... `one`, `pairs`, `u64`, `user`) to run only its rows, for a
/// profiler.
const ROW_ENV: &str = "TWOPHASE_BENCH_ROW";
/// The u32 rows' first four-way merge level (`none`: two-way levels only).
const FOUR_WAY_ENV: &str = "TWOPHASE_BENCH_FOUR_WAY_FROM";
/// Set to a size (log2 of the keys, any, not only the table's 2^20, 2^24 and 2^27) to run only that
/// size.
const LOG2N_ENV: &str = "TWOPHASE_BENCH_LOG2N";
/// How the launches of small sorts are chained, where not as shipped: `none` (each launch after
/// the one before it, a partition launch at every level) or `pdl` (programmatic dependent
/// launches, a partition launch at every level).
const CHAIN_ENV: &str = "TWOPHASE_BENCH_CHAIN";
/// Set to a number of keys: the merge levels search their own partitions below it
/// (`own_partitions_below_keys`), where the chain is as shipped.
const OWN_BELOW_ENV: &str = "TWOPHASE_BENCH_OWN_BELOW";

/// Set to run the tile-shape sweep (u32 keys at 2^27, three segmentations) instead of the table.
const SWEEP_ENV: &str = "TWOPHASE_BENCH_SWEEP";

/// Set to time long segments among short ones instead of the table (`long_rows`); set to one
/// row's share (`7/8`, `1/2`, `1/8`) to time that row alone, without the references beside it,
/// for a profiler.
const LONG_ENV: &str = "TWOPHASE_BENCH_LONG";

/// One long segment of `len` keys from `from`, the starts of `uniform` elsewhere: CSR starts over
/// `n` keys.
fn with_long(uniform: &[usize], n: usize, from: usize, len: usize) -> Vec<usize> {
    let end = from + len;
    let mut starts: Vec<usize> = uniform.iter().copied().filter(|&s| s < from).collect();
    starts.push(from);
    if end < n {
        starts.push(end);
        starts.extend(uniform.iter().copied().filter(|&s| s > end));
    }
    starts
}

/// A long segment among short ones (uniform 1..=2000), u32 keys at 2^24 and 2^27, event-timed as
/// the table's rows: the device-buffer call over all the segments (the merge levels sort the long
/// one), and the launches the host-slice call (`Gpu::segmented_sort`, what `twophase::segmented_sort`
/// runs) makes for them: the segmented kernels over the others as ranges, the long segment left
/// as a gap, then the plain mergesort of the long segment's keys in place. Beside them the plain
/// mergesort of all the keys and the uniform row alone.
fn long_rows(bench: &Bench) {
    let gpu = bench.gpu;
    let stream = gpu.stream();
    let only = std::env::var(LONG_ENV).ok().filter(|row| row.contains('/'));
    for log2n in long_sizes() {
        let n = 1usize << log2n;
        let keys: Vec<u32> = random_keys(n, rand::random());
        let uniform = segment_starts("uniform2000", n);
        let plain = bench.mergesort_ms(&keys);
        if only.is_none() {
            let alone_ms = bench.time(&keys, None, &uniform, &Less);
            println!(
                "long 2^{log2n}: plain mergesort {plain:.4} ms; uniform 1..2000 alone {alone_ms:.4} ms"
            );
        }
        for (name, from, len) in [
            ("7/8", n / 16, n / 8 * 7),
            ("1/2", n / 4, n / 2),
            ("1/8", n / 4, n / 8),
        ] {
            if only.as_deref().is_some_and(|row| row != name) {
                continue;
            }
            let starts = with_long(&uniform, n, from, len);
            let levels = bench.time(&keys, None, &starts, &Less);
            // The host-slice call's launches: the others as ranges, then the long one alone.
            let others: Vec<(u64, u64)> = (0..starts.len())
                .map(|i| (starts[i], starts.get(i + 1).copied().unwrap_or(n)))
                .filter(|&(start, end)| start != from && end - start > 1)
                .map(|(start, end)| (start as u64, end as u64))
                .collect();
            let (others_starts, others_ends): (Vec<u64>, Vec<u64>) = others.into_iter().unzip();
            let d_starts = stream.clone_htod(&others_starts).expect("upload");
            let d_ends = stream.clone_htod(&others_ends).expect("upload");
            let pristine = stream.clone_htod(&keys).expect("upload");
            let mut d_keys = stream.clone_htod(&keys).expect("upload");
            let mut scratch = SegmentedSortScratch::new();
            let mut sort_scratch = MergesortScratch::new();
            let mut routed = |d_keys: &mut CudaSlice<u32>| {
                stream.memcpy_dtod(&pristine, d_keys).expect("restore");
                let segments = DeviceSegments::Ranges {
                    starts: &d_starts,
                    ends: &d_ends,
                };
                gpu.segmented_sort_device(
                    SortBuffers::keys(d_keys),
                    segments,
                    &Less,
                    None,
                    &mut scratch,
                )
                .expect("segmented sort");
                let mut long = d_keys.slice_mut(from..from + len);
                gpu.sort_device(SortBuffers::keys(&mut long), &Less, None, &mut sort_scratch)
                    .expect("mergesort");
            };
            routed(&mut d_keys);
            let got = stream.clone_dtoh(&d_keys).expect("download");
            assert!(
                got == reference(&keys, &starts, &Less),
                "routed {name}: differs from std per segment"
            );
            let copy_ms = time_events(gpu, WARMUP, REPS, |_| {
                stream.memcpy_dtod(&pristine, &mut d_keys).expect("restore")
            });
            let routed_ms = time_events(gpu, WARMUP, REPS, |_| routed(&mut d_keys)) - copy_ms;
            scratch.check(gpu).expect("segmented check");
            println!(
                "long 2^{log2n}: one segment of {name} of the keys among uniform 1..2000 ({} segments): levels {levels:.4} ms ({:.2}x plain), alone {routed_ms:.4} ms ({:.2}x plain, {:.2}x the levels' speed)",
                starts.len(),
                levels / plain,
                routed_ms / plain,
                levels / routed_ms,
            );
        }
    }
}

/// The block shapes (threads, keys a thread) of the sweep.
const SWEEP_SHAPES: [(u32, u32); 7] = [
    (256, 15),
    (128, 15),
    (512, 15),
    (256, 11),
    (256, 23),
    (128, 23),
    (512, 7),
];

/// The sweep: each shape's time for segments of 1..=200 and 1..=2000 keys and one segment, 2^27
/// u32. (Segments of 32 keys take the short path, which has no tile shape.)
fn sweep(bench: &Bench) {
    const LOG2N: u32 = 27;
    let n = 1usize << LOG2N;
    let keys: Vec<u32> = random_keys(n, rand::random());
    for dist in ["uniform200", "uniform2000", "one"] {
        let starts = segment_starts(dist, n);
        for (threads, vt) in SWEEP_SHAPES {
            let shaped = Bench {
                tuning: Some(SegmentedSortTuning {
                    threads,
                    vt,
                    ..SegmentedSortTuning::for_types(4, 0)
                }),
                ..*bench
            };
            let ms = shaped.time(&keys, None, &starts, &Less);
            println!("sweep {dist} 2^{LOG2N} {threads} x {vt}: {ms:.4} ms (checked against std)");
        }
    }
}

/// With `TWOPHASE_BENCH_FOUR_WAY_FROM` set (a level, or `none`), the first four-way level of every
/// row's tuning (the shipped one of its types otherwise).
fn four_way_from() -> Option<u32> {
    let from = std::env::var(FOUR_WAY_ENV).ok()?;
    Some(if from == "none" {
        SegmentedSortTuning::NO_FOUR_WAY_LEVELS
    } else {
        from.parse()
            .expect("TWOPHASE_BENCH_FOUR_WAY_FROM: a level or `none`")
    })
}

/// The sizes (log2) of the table's rows: `TWOPHASE_BENCH_LOG2N` alone where set (any size,
/// 2^25 and 2^26 among them), else [`SIZES`].
fn sizes() -> Vec<u32> {
    std::env::var(LOG2N_ENV).map_or(SIZES.to_vec(), |l| {
        vec![l
            .parse()
            .expect("TWOPHASE_BENCH_LOG2N: a power of two's exponent")]
    })
}

/// The sizes of the long-segment rows: `TWOPHASE_BENCH_LOG2N` where set, else 2^24 and 2^27.
fn long_sizes() -> Vec<u32> {
    std::env::var(LOG2N_ENV).map_or(vec![24, 27], |_| sizes())
}

/// Whether the row `name` is selected by the environment (its size by [`sizes`]).
fn selected(name: &str) -> bool {
    std::env::var(ROW_ENV).map_or(true, |row| row == name)
}

/// The length of the longest CSR segment of `starts` over `n` keys: at most
/// [`SHORT_MAX`] takes the segmented sort's short path (one thread a segment).
fn longest_segment(starts: &[usize], n: usize) -> usize {
    starts
        .iter()
        .zip(starts.iter().skip(1).chain([&n]))
        .map(|(start, end)| end - start)
        .max()
        .unwrap_or(0)
}

/// A record sorted by a user comparator, descending by `score` (the row CUB cannot run).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Scored {
    score: u32,
    id: u32,
}

impl DeviceKey for Scored {
    const CUDA_TYPE: &'static str = "scored";
    const CUDA_DEFINITION: &'static str = "struct scored { unsigned int score; unsigned int id; };";
}

// SAFETY: `Scored` is two u32s, plain data with no padding.
unsafe impl DeviceRepr for Scored {}

/// `keys` with each CSR segment sorted by std's stable sort under `comp`.
fn reference<K: DeviceKey + Send + Sync, C: DeviceComparator<K> + Sync>(
    keys: &[K],
    starts: &[usize],
    comp: &C,
) -> Vec<K> {
    let mut out = keys.to_vec();
    let mut pieces = Vec::with_capacity(starts.len());
    let mut rest: &mut [K] = &mut out;
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(keys.len());
        let (piece, tail) = rest.split_at_mut(end - start);
        pieces.push(piece);
        rest = tail;
    }
    let ordering = twophase_gpu::compare::ordering(comp);
    pieces
        .into_par_iter()
        .for_each(|piece| piece.sort_by(&ordering));
    out
}

#[derive(Clone, Copy)]
struct Bench<'a> {
    gpu: &'a Gpu,
    copy_gbs: f64,
    cub: &'a HashMap<(String, u32), f64>,
    /// The tuning of the sorts (`None`: the shipped one of their types).
    tuning: Option<SegmentedSortTuning>,
    /// The first four-way level, where not the shipped one (`TWOPHASE_BENCH_FOUR_WAY_FROM`).
    four_way_from: Option<u32>,
    /// Programmatic dependent launches off (`TWOPHASE_BENCH_CHAIN=none`).
    no_pdl: bool,
    /// The merge levels' own partition searches off (`TWOPHASE_BENCH_CHAIN=none` or `pdl`).
    no_own_partitions: bool,
    /// The merge levels' own partition searches below this many keys
    /// (`TWOPHASE_BENCH_OWN_BELOW`), where not the shipped threshold.
    own_below: Option<usize>,
}

impl Bench<'_> {
    /// The CUB time of row `name` at 2^log2n over ours, as text.
    fn ratio(&self, name: &str, log2n: u32, ms: f64) -> String {
        match self.cub.get(&(name.to_owned(), log2n)) {
            Some(cub) => format!("{cub:.4} ({:.2}x)", cub / ms),
            None => "-".to_owned(),
        }
    }

    /// Check, then time the segmented sort of `keys` (with `values` when given) over CSR
    /// `starts` under `comp`; the median ms.
    fn time<K, C>(&self, keys: &[K], values: Option<&[u32]>, starts: &[usize], comp: &C) -> f64
    where
        K: DeviceKey + DeviceRepr + Send + Sync,
        C: DeviceComparator<K> + Sync,
    {
        let gpu = self.gpu;
        let stream = gpu.stream();
        let n = keys.len();
        let value_bytes = values.map_or(0, |_| std::mem::size_of::<u32>());
        let mut tuning = self
            .tuning
            .unwrap_or(SegmentedSortTuning::for_types(size_of::<K>(), value_bytes));
        if let Some(level) = self.four_way_from {
            tuning.four_way_from_level = level;
        }
        if self.no_pdl {
            tuning.pdl_below_keys = 0;
        }
        if let Some(keys) = self.own_below {
            tuning.own_partitions_below_keys = keys;
        }
        if self.no_own_partitions {
            tuning.own_partitions_below_keys = 0;
        }
        let tuning = Some(tuning);
        let pristine = stream.clone_htod(keys).expect("upload");
        let mut d_keys: CudaSlice<K> = stream.clone_htod(keys).expect("upload");
        let starts64: Vec<u64> = starts.iter().map(|&s| s as u64).collect();
        let d_starts = stream.clone_htod(&starts64).expect("upload");
        let values_pristine = values.map(|v| stream.clone_htod(v).expect("upload"));
        let mut d_values: CudaSlice<u32> =
            stream.clone_htod(values.unwrap_or(&[0])).expect("upload");
        let mut scratch = SegmentedSortScratch::new();
        let restore = |d_keys: &mut CudaSlice<K>, d_values: &mut CudaSlice<u32>| {
            stream.memcpy_dtod(&pristine, d_keys).expect("restore");
            if let Some(v) = &values_pristine {
                stream.memcpy_dtod(v, d_values).expect("restore");
            }
        };
        let mut sort = |d_keys: &mut CudaSlice<K>, d_values: &mut CudaSlice<u32>| {
            let segments = DeviceSegments::Starts(&d_starts);
            let result = if values.is_some() {
                gpu.segmented_sort_device(
                    SortBuffers::pairs(d_keys, d_values),
                    segments,
                    comp,
                    tuning,
                    &mut scratch,
                )
            } else {
                gpu.segmented_sort_device(
                    SortBuffers::keys(d_keys),
                    segments,
                    comp,
                    tuning,
                    &mut scratch,
                )
            };
            result.expect("segmented sort");
        };
        restore(&mut d_keys, &mut d_values);
        sort(&mut d_keys, &mut d_values);
        let got = stream.clone_dtoh(&d_keys).expect("download");
        match values {
            None => {
                let expected = reference(keys, starts, comp);
                assert!(
                    bytemuck::cast_slice::<K, u8>(&got) == bytemuck::cast_slice::<K, u8>(&expected),
                    "segmented sort of {n} keys differs from std per segment"
                );
            }
            Some(values) => {
                let got_values = stream.clone_dtoh(&d_values).expect("download");
                let order = twophase_gpu::compare::ordering(comp);
                let index: Vec<u32> = (0..n as u32).collect();
                let sorted_index = {
                    let mut out = index.clone();
                    let mut rest: &mut [u32] = &mut out;
                    for (i, &start) in starts.iter().enumerate() {
                        let end = starts.get(i + 1).copied().unwrap_or(n);
                        let (piece, tail) = rest.split_at_mut(end - start);
                        piece.sort_by(|&a, &b| order(&keys[a as usize], &keys[b as usize]));
                        rest = tail;
                    }
                    out
                };
                let expected_values: Vec<u32> =
                    sorted_index.iter().map(|&i| values[i as usize]).collect();
                assert!(
                    got_values == expected_values,
                    "segmented pairs of {n} keys: values differ"
                );
            }
        }
        let copy_ms = time_events(gpu, WARMUP, REPS, |_| restore(&mut d_keys, &mut d_values));
        time_events(gpu, WARMUP, REPS, |_| {
            restore(&mut d_keys, &mut d_values);
            sort(&mut d_keys, &mut d_values);
        }) - copy_ms
    }

    /// The plain mergesort of `keys`, timed the same way: the `one` row's reference.
    fn mergesort_ms(&self, keys: &[u32]) -> f64 {
        let stream = self.gpu.stream();
        let pristine = stream.clone_htod(keys).expect("upload");
        let mut d_keys = stream.clone_htod(keys).expect("upload");
        let mut scratch = MergesortScratch::new();
        let copy_ms = time_events(self.gpu, WARMUP, REPS, |_| {
            stream.memcpy_dtod(&pristine, &mut d_keys).expect("restore")
        });
        time_events(self.gpu, WARMUP, REPS, |_| {
            stream.memcpy_dtod(&pristine, &mut d_keys).expect("restore");
            self.gpu
                .sort_device(SortBuffers::keys(&mut d_keys), &Less, None, &mut scratch)
                .expect("mergesort");
        }) - copy_ms
    }

    /// Print row `kind-dist` at 2^log2n over `segments` segments: `ms`, moving `record_bytes` a
    /// key (key and value), and the note `extra`.
    fn row(
        &self,
        (kind, dist, log2n): (&str, &str, u32),
        segments: usize,
        ms: f64,
        record_bytes: usize,
        extra: &str,
    ) {
        let n = 1usize << log2n;
        let bytes = 2 * record_bytes * n;
        let copy_ms = bytes as f64 / (self.copy_gbs * 1e9) * 1e3;
        println!(
            "| {kind} | {dist} | 2^{log2n} | {segments} | {ms:.4} | {:.2} | {:.1}% | {} | {} | {extra} |",
            n as f64 / (ms * 1e-3) / 1e9,
            100.0 * copy_ms / ms,
            self.ratio(&format!("cub-segmented-stable-{kind}-{dist}"), log2n, ms),
            self.ratio(&format!("cub-segmented-radix-{kind}-{dist}"), log2n, ms),
        );
    }
}

fn main() {
    let Some(gpu) = open_gpu() else {
        return;
    };
    let cub = load_results("TWOPHASE_CUB_SEGMENTED_RESULTS");
    let chain = std::env::var(CHAIN_ENV).unwrap_or_default();
    let copy = copy_rate_gbs(&gpu, WARMUP, REPS);
    println!(
        "device: {}; device-to-device copy rate: {copy:.0} GB/s (bytes read + written)",
        device_name(&gpu),
    );
    println!("| kind | segments | n | count | ms | Gkeys/s | one read + write of the data at the copy rate | CUB segmented stable sort = CUB/ours | CUB segmented radix sort = CUB/ours | note |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let bench = Bench {
        gpu: &gpu,
        copy_gbs: copy,
        cub: &cub,
        tuning: None,
        four_way_from: four_way_from(),
        no_pdl: chain == "none",
        no_own_partitions: chain == "none" || chain == "pdl",
        own_below: std::env::var(OWN_BELOW_ENV).ok().map(|keys| {
            keys.parse()
                .expect("TWOPHASE_BENCH_OWN_BELOW: a number of keys")
        }),
    };
    if std::env::var_os(SWEEP_ENV).is_some() {
        sweep(&bench);
        return;
    }
    if std::env::var_os(LONG_ENV).is_some() {
        long_rows(&bench);
        return;
    }
    let user = CudaComparator::new(
        "score_desc",
        "return a.score > b.score;",
        |a: &Scored, b: &Scored| a.score > b.score,
    );
    for log2n in sizes() {
        let n = 1usize << log2n;
        let keys: Vec<u32> = random_keys(n, rand::random());
        for dist in SEGMENT_DISTRIBUTIONS {
            if !selected(dist) {
                continue;
            }
            let starts = segment_starts(dist, n);
            let ms = bench.time(&keys, None, &starts, &Less);
            let extra = if dist == "one" {
                let plain = bench.mergesort_ms(&keys);
                format!("plain mergesort {plain:.4} ms ({:.2}x of it)", ms / plain)
            } else if longest_segment(&starts, n) <= SHORT_MAX {
                format!("short path (no segment over {SHORT_MAX} keys)")
            } else {
                String::new()
            };
            bench.row(("seg", dist, log2n), starts.len(), ms, 4, &extra);
        }
        let starts = segment_starts("uniform2000", n);
        if selected("pairs") {
            let values: Vec<u32> = (0..n as u32).collect();
            let ms = bench.time(&keys, Some(&values), &starts, &Less);
            bench.row(("segpairs", "uniform2000", log2n), starts.len(), ms, 8, "");
        }
        if selected("u64") {
            // 8-byte keys: uniform 1..=2000, then one segment of 7/8 of the keys among them
            // (the device-buffer call, whose merge levels sort the long one).
            let keys64: Vec<u64> = random_keys(n, rand::random());
            let ms = bench.time(&keys64, None, &starts, &Less);
            bench.row(("seg64", "uniform2000", log2n), starts.len(), ms, 8, "");
            let long = with_long(&starts, n, n / 16, n / 8 * 7);
            let ms = bench.time(&keys64, None, &long, &Less);
            let note = "7/8 of the keys in one segment";
            bench.row(("seg64", "long7/8", log2n), long.len(), ms, 8, note);
        }
        if !selected("user") {
            continue;
        }
        let scored: Vec<Scored> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| Scored {
                score: k % 1000,
                id: i as u32,
            })
            .collect();
        let ms = bench.time(&scored, None, &starts, &user);
        let note = "user comparator, descending by a field";
        bench.row(("seguser", "uniform2000", log2n), starts.len(), ms, 8, note);
    }
}
