//! `twophase bench`: sort, merge, sorted search and load-balancing search from 2^16 keys up, on the GPU front door, the CPU backend, std and rayon; a table, a CSV and an SVG plot.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::error::CliError;
use super::output::PendingOutput;
use super::report::Reporter;
use super::{memory, plot, BenchArgs};

/// The smallest size, as log2 of the keys: below it every backend's time is call overhead.
pub const MIN_LOG2: u32 = 16;
/// The largest size by default: 2^27 u32 keys (512 MiB) fill a GPU's time well past its launch
/// overheads and fit every machine the project runs on.
pub const DEFAULT_MAX_LOG2: u32 = 27;
/// The largest size `--max` takes: 2^30 u32 keys are 4 GiB per buffer.
pub const MAX_MAX_LOG2: u32 = 30;
/// The largest size of `--quick`: 2^20 keys sort in tens of milliseconds on two cores.
const QUICK_MAX_LOG2: u32 = 20;

/// Repetitions stop once they add up to this much time (the median is reported)...
const MEASURE_TIME: Duration = Duration::from_millis(300);
/// ...or at this many, whichever comes first.
const MAX_REPS: usize = 15;
/// `--quick`'s measuring time and repetitions: a rough figure in seconds.
const QUICK_MEASURE_TIME: Duration = Duration::from_millis(30);
const QUICK_MAX_REPS: usize = 3;

/// Average items per segment of the load-balancing search's input: segments begin at random
/// positions, one every 16 items on average (the CSR rows of a sparse matrix with 16 nonzeros
/// a row).
const ITEMS_PER_SEGMENT: usize = 16;
/// Buffers of n words the largest size holds at once (the load-balancing search's: the reference
/// and a result of n `usize` each, the scan, and rayon's or the GPU's working copies), for the
/// memory check.
const BUFFERS_AT_ONCE: u64 = 6;

/// Seeds of the inputs (any fixed values: every run measures the same keys).
const KEY_SEED: u64 = 0x3c6e_f372_fe94_f82b;
const SEGMENT_SEED: u64 = 0xa54f_f53a_5f1d_36f1;

/// Seconds per millisecond and keys per billion, for the table and the CSV.
const MS_PER_S: f64 = 1e3;
const KEYS_PER_G: f64 = 1e9;
const KEYS_PER_M: f64 = 1e6;

/// The primitives measured, as the CSV's `group` names them.
const PRIMITIVES: [&str; 4] = ["sort", "merge", "sorted_search", "load_balance"];

/// One measurement: a primitive's time on one backend at one size.
#[derive(Clone, Debug)]
pub struct Row {
    pub primitive: &'static str,
    pub variant: &'static str,
    pub key: &'static str,
    pub n: usize,
    pub seconds: f64,
}

impl Row {
    /// Billions of keys (or items) per second.
    pub fn gkeys_per_s(&self) -> f64 {
        self.n as f64 / self.seconds / KEYS_PER_G
    }
}

/// The CSV header, as `twophase-plots` (scripts/plots.sh) reads it too.
pub const CSV_HEADER: &str = "group,variant,key,n,ms,gkeys_per_s";

/// `twophase bench`.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    let max_log2 = if args.quick {
        args.max.min(QUICK_MAX_LOG2)
    } else {
        args.max
    };
    let (measure_time, max_reps) = if args.quick {
        (QUICK_MEASURE_TIME, QUICK_MAX_REPS)
    } else {
        (MEASURE_TIME, MAX_REPS)
    };
    let largest = 1usize << max_log2;
    memory::check_needed(
        &format!("the benchmark up to 2^{max_log2} keys (try a smaller --max)"),
        largest as u64 * std::mem::size_of::<u64>() as u64 * BUFFERS_AT_ONCE,
    )?;
    let gpu = !args.cpu && twophase::backend() == twophase::Backend::Gpu;
    if let Some(device) = twophase::gpu::default_gpu().filter(|_| gpu) {
        println!(
            "gpu: {} (sm_{}); the gpu column times the crate-root calls, copies to and from \
             the device included",
            device.name().unwrap_or_default(),
            device.arch()
        );
    } else {
        println!("no gpu column: {}", no_gpu_reason(args.cpu));
    }
    println!(
        "cpu: twophase::cpu on {} threads; std: slice::sort, or a sequential loop for the \
         others; rayon: par_sort, or par_iter\n",
        rayon::current_num_threads()
    );
    let csv_path = args.out.join("bench.csv");
    let svg_path = args.out.join("bench.svg");
    std::fs::create_dir_all(&args.out).map_err(CliError::io(&args.out))?;
    let mut csv = PendingOutput::create(&csv_path)?;
    let mut svg = PendingOutput::create(&svg_path)?;

    let sizes: Vec<usize> = (MIN_LOG2..=max_log2).map(|log2| 1usize << log2).collect();
    let reporter = Reporter::new(args.quiet, false);
    let bar = reporter.count_bar("bench", (sizes.len() * PRIMITIVES.len()) as u64);
    let bench = Bench {
        gpu,
        measure_time,
        max_reps,
    };
    let mut rows = Vec::new();
    bar.suspend(|| print_header(gpu));
    for &n in &sizes {
        for primitive in PRIMITIVES {
            bar.set_message(format!("{primitive} at 2^{}", n.trailing_zeros()));
            let measured = match primitive {
                "sort" => bench.sort(n)?,
                "merge" => bench.merge(n)?,
                "sorted_search" => bench.sorted_search(n)?,
                _ => bench.load_balance(n)?,
            };
            bar.suspend(|| print_row(primitive, n, &measured, gpu));
            rows.extend(measured);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let mut text = String::from(CSV_HEADER);
    for row in &rows {
        text.push_str(&format!(
            "\n{},{},{},{},{:.4},{:.4}",
            row.primitive,
            row.variant,
            row.key,
            row.n,
            row.seconds * MS_PER_S,
            row.gkeys_per_s()
        ));
    }
    text.push('\n');
    csv.write_all(text.as_bytes())?;
    let drawing = plot::render(&rows).map_err(|message| CliError::Plot {
        path: svg_path.clone(),
        message,
    })?;
    svg.write_all(drawing.as_bytes())?;
    csv.commit()?;
    svg.commit()?;
    println!("\nwrote {} and {}", csv_path.display(), svg_path.display());
    Ok(())
}

/// Why the table has no gpu column.
fn no_gpu_reason(cpu_asked: bool) -> String {
    if cpu_asked {
        return "--cpu".to_owned();
    }
    twophase::gpu::diagnose::diagnose()
        .blockers()
        .into_iter()
        .next()
        .map_or_else(|| "no usable GPU".to_owned(), |b| b.reason)
}

/// The variants of a table row, in column order.
fn variants(gpu: bool) -> Vec<&'static str> {
    let mut variants = Vec::new();
    if gpu {
        variants.push("gpu");
    }
    variants.extend(["cpu", "std", "rayon"]);
    variants
}

fn print_header(gpu: bool) {
    let mut line = format!("{:<14} {:>6}", "Mkeys/s", "n");
    for variant in variants(gpu) {
        line.push_str(&format!(" {variant:>10}"));
    }
    println!("{line}");
}

fn print_row(primitive: &str, n: usize, rows: &[Row], gpu: bool) {
    let mut line = format!("{primitive:<14} {:>6}", format!("2^{}", n.trailing_zeros()));
    for variant in variants(gpu) {
        match rows.iter().find(|r| r.variant == variant) {
            Some(row) => line.push_str(&format!(
                " {:>10.1}",
                row.n as f64 / row.seconds / KEYS_PER_M
            )),
            None => line.push_str(&format!(" {:>10}", "-")),
        }
    }
    println!("{line}");
}

/// Keys from a counter-based SplitMix64 (each key a function of its index, so generated in
/// parallel): `n` of them from `seed`.
fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| splitmix(seed.wrapping_add(i.wrapping_mul(SPLITMIX_GAMMA))) as u32)
        .collect()
}

/// SplitMix64's increment and finalizer (Steele, Lea and Flood, 2014).
const SPLITMIX_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How a benchmark run measures.
struct Bench {
    gpu: bool,
    measure_time: Duration,
    max_reps: usize,
}

impl Bench {
    /// One row per variant of `primitive` at `n`: the median time of the variant's run on a
    /// fresh `prepare()`d input (untimed), repeated until [`Bench::measure_time`] or
    /// [`Bench::max_reps`], its result checked equal to `expected`. The GPU's variant runs once
    /// untimed first: its first call compiles or loads its kernels.
    fn rows<P, T: PartialEq>(
        &self,
        (primitive, key, n): (&'static str, &'static str, usize),
        expected: &T,
        mut prepare: impl FnMut() -> P,
        mut variants: Vec<(&'static str, Measure<'_, P, T>)>,
    ) -> Result<Vec<Row>, CliError> {
        let mut rows = Vec::new();
        for (variant, run) in variants.iter_mut() {
            if *variant == "gpu" && !self.gpu {
                continue;
            }
            let mut result = if *variant == "gpu" {
                Some(run(prepare())?)
            } else {
                None
            };
            let mut times = Vec::new();
            let mut spent = Duration::ZERO;
            while times.is_empty() || (spent < self.measure_time && times.len() < self.max_reps) {
                let input = prepare();
                let start = Instant::now();
                let output = run(input)?;
                let elapsed = start.elapsed();
                result = Some(output);
                spent += elapsed;
                times.push(elapsed.as_secs_f64());
            }
            if result.as_ref() != Some(expected) {
                return Err(CliError::Mismatch(format!(
                    "bench: the {variant} {primitive} of {n} keys differs from the reference"
                )));
            }
            times.sort_by(f64::total_cmp);
            rows.push(Row {
                primitive,
                variant,
                key,
                n,
                seconds: times[times.len() / 2],
            });
        }
        Ok(rows)
    }

    fn sort(&self, n: usize) -> Result<Vec<Row>, CliError> {
        let input = random_u32(n, KEY_SEED);
        let mut expected = input.clone();
        expected.par_sort_unstable();
        // Each repetition sorts a fresh copy of the input, made before its timing starts.
        let prepare = || input.clone();
        self.rows(
            ("sort", "u32", n),
            &expected,
            prepare,
            vec![
                (
                    "gpu",
                    Box::new(|mut keys: Vec<u32>| {
                        twophase::sort(&mut keys)?;
                        Ok(keys)
                    }) as Measure<'_, _, _>,
                ),
                (
                    "cpu",
                    Box::new(|mut keys| {
                        twophase::cpu::mergesort(&mut keys);
                        Ok(keys)
                    }),
                ),
                (
                    "std",
                    Box::new(|mut keys| {
                        keys.sort();
                        Ok(keys)
                    }),
                ),
                (
                    "rayon",
                    Box::new(|mut keys| {
                        keys.par_sort();
                        Ok(keys)
                    }),
                ),
            ],
        )
    }

    fn merge(&self, n: usize) -> Result<Vec<Row>, CliError> {
        let mut a = random_u32(n / 2, KEY_SEED);
        let mut b = random_u32(n - n / 2, !KEY_SEED);
        a.par_sort_unstable();
        b.par_sort_unstable();
        let expected = serial_merge(&a, &b);
        let (a, b) = (&a, &b);
        self.rows(
            ("merge", "u32", n),
            &expected,
            || (),
            vec![
                (
                    "gpu",
                    Box::new(move |()| Ok(twophase::merge(a, b)?)) as Measure<'_, _, _>,
                ),
                ("cpu", Box::new(move |()| Ok(twophase::cpu::merge(a, b)))),
                ("std", Box::new(move |()| Ok(serial_merge(a, b)))),
                (
                    "rayon",
                    Box::new(move |()| {
                        let mut both = [a.as_slice(), b.as_slice()].concat();
                        both.par_sort();
                        Ok(both)
                    }),
                ),
            ],
        )
    }

    fn sorted_search(&self, n: usize) -> Result<Vec<Row>, CliError> {
        let mut haystack = random_u32(n / 2, KEY_SEED);
        let mut needles = random_u32(n - n / 2, !KEY_SEED);
        haystack.par_sort_unstable();
        needles.par_sort_unstable();
        let (h, nd) = (&haystack, &needles);
        let expected: Vec<usize> = nd.iter().map(|x| h.partition_point(|y| y < x)).collect();
        let lower = twophase::SearchBound::Lower;
        self.rows(
            ("sorted_search", "u32", n),
            &expected,
            || (),
            vec![
                (
                    "gpu",
                    Box::new(move |()| Ok(twophase::sorted_search(nd, h, lower)?))
                        as Measure<'_, _, _>,
                ),
                (
                    "cpu",
                    Box::new(move |()| Ok(twophase::cpu::sorted_search(nd, h, lower))),
                ),
                (
                    "std",
                    Box::new(move |()| {
                        Ok(nd.iter().map(|x| h.partition_point(|y| y < x)).collect())
                    }),
                ),
                (
                    "rayon",
                    Box::new(move |()| {
                        Ok(nd
                            .par_iter()
                            .map(|x| h.partition_point(|y| y < x))
                            .collect())
                    }),
                ),
            ],
        )
    }

    fn load_balance(&self, n: usize) -> Result<Vec<Row>, CliError> {
        let segments = (n / ITEMS_PER_SEGMENT).max(1);
        // Segment starts: 0, then random positions in [0, n], sorted (empty segments allowed).
        let mut scan: Vec<usize> = random_u32(segments, SEGMENT_SEED)
            .into_par_iter()
            .map(|r| ((u64::from(r) * n as u64) >> u32::BITS) as usize)
            .collect();
        scan[0] = 0;
        scan.par_sort_unstable();
        let scan = &scan;
        let expected = serial_load_balance(scan, n);
        self.rows(
            ("load_balance", "usize", n),
            &expected,
            || (),
            vec![
                (
                    "gpu",
                    Box::new(move |()| Ok(twophase::load_balance_search(scan, n)?))
                        as Measure<'_, _, _>,
                ),
                (
                    "cpu",
                    Box::new(move |()| Ok(twophase::cpu::load_balance_search(scan, n))),
                ),
                ("std", Box::new(move |()| Ok(serial_load_balance(scan, n)))),
                (
                    "rayon",
                    Box::new(move |()| {
                        Ok((0..n)
                            .into_par_iter()
                            .map(|i| scan.partition_point(|&start| start <= i) - 1)
                            .collect())
                    }),
                ),
            ],
        )
    }
}

/// One variant's run on a prepared input, returning its result for the check.
type Measure<'a, P, T> = Box<dyn FnMut(P) -> Result<T, CliError> + 'a>;

/// The sequential merge a Rust program writes without a library: two cursors, A first on ties.
fn serial_merge(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The sequential load-balancing search: each segment's index, repeated over its items.
fn serial_load_balance(scan: &[usize], total: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(total);
    for (segment, &start) in scan.iter().enumerate() {
        let end = scan.get(segment + 1).copied().unwrap_or(total);
        out.extend(std::iter::repeat_n(segment, end - start));
    }
    out
}
