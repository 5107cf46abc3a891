//! The command line: clap's arguments of every subcommand, and the dispatch that turns an error into one line on stderr and an exit status.

mod array;
mod backend;
mod bench;
mod demo;
mod device;
mod dtype;
mod error;
mod info;
mod keys;
mod memory;
mod merge;
mod output;
mod plot;
mod report;
mod search;
mod sort;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use dtype::Dtype;

/// Exit status of a run that failed (bad input, a GPU error, a write error).
const EXIT_FAILURE: u8 = 1;

/// The `twophase` command.
#[derive(Debug, Parser)]
#[command(
    name = "twophase",
    version,
    about = "Two-phase merge, stable mergesort and sorted search on the GPU (or the CPU)",
    long_about = "Two-phase merge, stable mergesort and sorted search on the GPU when one is \
                  usable, else on the CPU.\n\nWithout a subcommand: sort and merge random keys, \
                  verify them against std and print the throughput. `twophase info` says which \
                  backend runs and why; `twophase bench` measures this machine.",
    after_help = "Files are .npy (1-D, u8..u64, i8..i64, f32, f64) or raw native-endian binary \
                  with --dtype. Output is written to a temporary file beside it and renamed \
                  when complete."
)]
struct Cli {
    /// Keys of the demo run without a subcommand.
    #[arg(short, long, default_value_t = demo::DEFAULT_KEYS)]
    n: usize,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The driver, NVRTC, the devices, the kernel cache, and which backend runs (and why).
    Info(InfoArgs),
    /// Stable sort of a file of keys (and of values or indices with them).
    Sort(SortArgs),
    /// Stable merge of two sorted files: A's keys first among equal keys.
    Merge(MergeArgs),
    /// The lower (or upper) bound of each sorted needle in a sorted haystack.
    Search(SearchArgs),
    /// Throughput of sort, merge, sorted search and load-balancing search, against std and rayon.
    Bench(BenchArgs),
}

/// `twophase info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Skip the end-to-end check (a small sort on the backend the calls use).
    #[arg(long)]
    no_check: bool,
}

/// Where a command runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when one is usable, else the CPU: the crate-root calls' choice.
    #[default]
    Auto,
    /// The CPU backend (`twophase::cpu`), GPU or not.
    Cpu,
    /// The GPU, or an error saying why it cannot be used.
    Gpu,
}

/// `--cpu` / `--gpu`.
#[derive(Debug, Args)]
pub struct BackendArgs {
    /// Run on the CPU backend even where a GPU is usable.
    #[arg(long, conflicts_with = "gpu")]
    cpu: bool,
    /// Run on the GPU, and fail (saying why) where none is usable.
    #[arg(long)]
    gpu: bool,
}

impl BackendArgs {
    fn choice(&self) -> BackendChoice {
        match (self.cpu, self.gpu) {
            (true, _) => BackendChoice::Cpu,
            (_, true) => BackendChoice::Gpu,
            _ => BackendChoice::Auto,
        }
    }
}

/// How floats are ordered (integers have one order and ignore this).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum FloatOrder {
    /// IEEE 754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, as Rust's
    /// `total_cmp` (the library's order for floats).
    #[default]
    Total,
    /// NumPy's `np.sort` order: every NaN last whatever its sign, -0.0 and +0.0 equal (kept in
    /// input order).
    Numpy,
}

/// The order of keys: direction and, for floats, which order.
#[derive(Debug, Args)]
pub struct OrderArgs {
    /// Descending order (a stable sort under the reversed order: equal keys keep their input
    /// order).
    #[arg(long)]
    descending: bool,
    /// How floats are ordered.
    #[arg(long, value_enum, default_value_t = FloatOrder::Total)]
    float_order: FloatOrder,
}

impl OrderArgs {
    fn order(&self) -> keys::Order {
        keys::Order {
            descending: self.descending,
            float_order: self.float_order,
        }
    }
}

/// `--quiet` / `--timings`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// No progress bars.
    #[arg(short, long)]
    quiet: bool,
    /// Print each phase's time (read, host to device, sort, device to host, write) on stderr.
    #[arg(long)]
    timings: bool,
}

/// `twophase sort`.
#[derive(Debug, Args)]
pub struct SortArgs {
    /// The keys: a .npy file, or raw binary with --dtype.
    input: PathBuf,
    /// Where the sorted keys go (default: IN with `.sorted` before its extension). `.npy` writes
    /// a .npy file, any other name raw binary.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The element type of raw input (a .npy file says its own; given, it must agree).
    #[arg(long, value_enum)]
    dtype: Option<Dtype>,
    /// Values to sort with the keys, one per key (.npy, or raw with --values-dtype); equal keys
    /// keep their values' input order.
    #[arg(long, conflicts_with = "argsort")]
    values: Option<PathBuf>,
    /// The element type of raw values (default: --dtype).
    #[arg(long, value_enum, requires = "values")]
    values_dtype: Option<Dtype>,
    /// Where the sorted values go (default: VALUES with `.sorted` before its extension).
    #[arg(long, requires = "values")]
    values_output: Option<PathBuf>,
    /// Write the stable sorting permutation (int64 indices into IN, as NumPy's
    /// `argsort(kind="stable")`) to the output instead of the sorted keys.
    #[arg(long)]
    argsort: bool,
    #[command(flatten)]
    order: OrderArgs,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// `twophase merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The first sorted file (its keys come first among equal keys).
    a: PathBuf,
    /// The second sorted file.
    b: PathBuf,
    /// Where the merged keys go (`.npy`: a .npy file; else raw binary).
    #[arg(short, long)]
    output: PathBuf,
    /// The element type of raw inputs.
    #[arg(long, value_enum)]
    dtype: Option<Dtype>,
    #[command(flatten)]
    order: OrderArgs,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// `twophase search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The sorted keys searched in.
    haystack: PathBuf,
    /// The sorted keys searched for.
    needles: PathBuf,
    /// Where the bounds go: int64, one per needle (`.npy`: a .npy file; else raw binary).
    #[arg(short, long)]
    output: PathBuf,
    /// Upper bounds (the first haystack key after the needle) instead of lower bounds (the
    /// first key not before it), as NumPy's `searchsorted(side="right")`.
    #[arg(long)]
    upper: bool,
    /// The element type of raw inputs.
    #[arg(long, value_enum)]
    dtype: Option<Dtype>,
    #[command(flatten)]
    order: OrderArgs,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// `twophase bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Largest size, as log2 of the keys (sizes run from 2^16 up by factors of 2).
    #[arg(long, default_value_t = bench::DEFAULT_MAX_LOG2, value_parser = clap::value_parser!(u32).range(bench::MIN_LOG2 as i64..=bench::MAX_MAX_LOG2 as i64))]
    max: u32,
    /// A short run (sizes up to 2^20, fewer repetitions): under a minute on two cores.
    #[arg(long)]
    quick: bool,
    /// Folder for bench.csv and bench.svg.
    #[arg(long, default_value = "twophase-bench")]
    out: PathBuf,
    /// Leave out the GPU even where one is usable.
    #[arg(long)]
    cpu: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

/// Parse the arguments, run the command, and turn its error into one line on stderr.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    output::remove_unfinished_on_interrupt();
    let result = match cli.command {
        None => demo::run(cli.n),
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Sort(args)) => sort::run(&args),
        Some(Command::Merge(args)) => merge::run(&args),
        Some(Command::Search(args)) => search::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("twophase: {error}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
