//! GPU mergesort benchmark: two-phase mergesort vs cub::DeviceMergeSort / DeviceRadixSort, on the device.
//!
//! Run on a GPU machine (see scripts/device.sh). Set TWOPHASE_CUB_SORT_RESULTS to the file written
//! by benches/peers/cub_mergesort.cu to print the ratios to CUB. Prints markdown table rows.
//!
//! The sort is in place, so every timed run first restores the unsorted keys with a
//! device-to-device copy, and the copy's own median is subtracted (the CUB peer does the same).

mod common;
use common::{
    copy_rate_gbs, device_name, env_numbers, env_sizes, kind_selected, load_results, median,
    open_gpu, random_keys, time_events, time_events_queued, SIZES,
};

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Instant;

use rayon::prelude::*;
use twophase::gpu::{
    CudaComparator, DeviceComparator, DeviceKey, FloatKey, Gpu, Less, MergesortScratch,
    MergesortTuning, PrimitiveKey, SortBuffers, TotalOrder, TrustedComparator,
};
use twophase_gpu::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};

/// Untimed runs before timing (module load, first touch, clock ramp).
const WARMUP: usize = 5;
/// Timed runs per measurement; the median is reported.
const REPS: usize = 41;
/// Alternations of the shipped sort with and without programmatic dependent launch.
const PDL_ALTERNATIONS: usize = 3;
/// Size (log2 of keys) of the profile mode (`--profile`): every configuration sorts once after
/// one untimed sort, so that a kernel profiler (scripts/ncu_mergesort.py) sees each sort's
/// kernels in a known order. `TWOPHASE_PROFILE_LOG2N` picks another size.
const PROFILE_LOG2N: u32 = 27;

/// The profile mode's size: `TWOPHASE_PROFILE_LOG2N`, else [`PROFILE_LOG2N`].
fn profile_log2n() -> u32 {
    std::env::var("TWOPHASE_PROFILE_LOG2N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PROFILE_LOG2N)
}

/// What to run: the timed table with its sweeps, or the profile mode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Time,
    Profile,
}

/// Reads and writes of all the keys: the block sort, then each merge pass (a trusted order's
/// plan: a user comparator's sorts take no eight-way passes, and their rows say so).
fn global_passes(n: usize, tuning: MergesortTuning) -> u32 {
    1 + tuning.pass_plan(n, true).passes()
}

/// A sweep entry (block sort threads, pass threads, four-way pass threads, lanes per four-way
/// cut, four-way tile registers, VT) as a tuning with four-way passes forced on at every size
/// when their threads are not 0.
type Sweep = (u32, u32, u32, u32, u32, u32);

// The sweeps: four-way passes are forced on at every size when their threads are not 0, and
// lanes per four-way cut 0 is chosen by the number of cuts, as shipped; four-way tile registers
// 0 are ptxas's choice. Block sorts over 48 KiB take dynamic shared memory. The last entry of the
// u32 sweep is the 2^20 sort as shipped (two-way passes only) but with its 32-lane boundary
// searches in a partition kernel of their own rather than in the tile blocks.

/// The sweep of the u32 keys: four-way tiles of 256 threads (the shipped ones below 2^25 keys),
/// one lane a four-way cut, the block sort's other widths, four-way tiles of 128 and 512 threads
/// (the 2^24 sort's four-way tiles fill under three waves), the 2^20 sort with a partition
/// kernel, and two-way-only sorts with 256-thread passes, behind the shipped 512 x 23 block sort
/// and behind a 1024 x 11 one (a shorter block sort where its tiles are fewer than the SMs).
const U32_SWEEP: [Sweep; 9] = [
    (1024, 128, 256, 0, 64, 45),
    (1024, 128, 256, 1, 64, 45),
    (1024, 128, 256, 0, 64, 37),
    (1024, 128, 256, 0, 64, 43),
    (1024, 128, 128, 0, 64, 45),
    (1024, 128, 512, 0, 64, 45),
    (512, 128, 0, 32, 0, 23),
    (512, 256, 0, 0, 0, 23),
    (1024, 256, 0, 0, 0, 11),
];
/// The sweep of the u32 keys under a user comparator (the stable block sort, checked kernels):
/// the 4-byte keys' two block-sort widths and two between them (VT 41 and 43: 409 and 381 tiles
/// at 2^24, four and three waves of one block an SM on 132 SMs, where VT 37 makes 443).
const USER_SWEEP: [Sweep; 4] = [
    (1024, 128, 256, 0, 64, 45),
    (1024, 128, 256, 0, 64, 37),
    (1024, 128, 256, 0, 64, 41),
    (1024, 128, 256, 0, 64, 43),
];
/// The sweep of the u64 keys: block sorts in dynamic shared memory (94 KB at 512 x 23, 155 KB at
/// 1024 x 19), each saving the two-way pass of the shipped 256 x 23 one at 2^27.
const U64_SWEEP: [Sweep; 3] = [
    (512, 256, 128, 0, 96, 23),
    (512, 128, 128, 0, 96, 23),
    (1024, 256, 128, 0, 96, 19),
];
/// The sweep of the u32 pairs: block sorts in dynamic shared memory (90 KB at 1024 x 11, 94 KB at
/// 512 x 23), each saving the two-way pass of the shipped 512 x 11 one at 2^27, and two-way-only
/// sorts behind a 1024 x 11 block sort (one pass fewer at 2^20, whose tiles are then fewer than
/// the SMs).
const PAIRS_SWEEP: [Sweep; 5] = [
    (1024, 256, 256, 0, 64, 11),
    (512, 256, 256, 0, 64, 23),
    (1024, 128, 256, 0, 64, 11),
    (1024, 256, 0, 0, 0, 11),
    (1024, 128, 0, 0, 0, 11),
];

fn swept_tuning(
    &(threads, pass_threads, quad_threads, quad_cut_lanes, quad_registers, vt): &Sweep,
) -> MergesortTuning {
    MergesortTuning::forced_u32(
        threads,
        pass_threads,
        quad_threads,
        quad_cut_lanes,
        quad_registers,
        vt,
    )
}

/// A tuning's launch shapes as the sweep lines print them.
fn shape(t: MergesortTuning) -> String {
    format!(
        "nt={} r={} pass nt={} quad nt={} lanes={} quad regs={} vt={}",
        t.threads,
        t.block_registers,
        t.pass_threads,
        t.quad_threads,
        match t.quad_cut_lanes {
            0 => "auto".to_owned(),
            lanes => lanes.to_string(),
        },
        t.quad_registers,
        t.vt
    )
}

fn load_cub() -> HashMap<(String, u32), f64> {
    load_results("TWOPHASE_CUB_SORT_RESULTS")
}

/// A value type of the pair rows: each value is its key's input position, which proves the
/// order stable and the permutation whole.
trait Position:
    twophase::gpu::DeviceValue + DeviceRepr + ValidAsZeroBits + PartialOrd + Send + Sync + 'static
{
    /// The value of input position `i`.
    fn at(i: usize) -> Self;
    /// The input position this value names.
    fn index(self) -> usize;
    /// A value no input position has, for the poisoned scratch.
    const POISON: Self;
}

/// [`Position`] for unsigned integer types (positions of the benchmark's sizes fit each).
macro_rules! position {
    ($($t:ty),*) => {$(
        impl Position for $t {
            fn at(i: usize) -> Self {
                i as $t
            }
            fn index(self) -> usize {
                self as usize
            }
            const POISON: Self = <$t>::MAX;
        }
    )*};
}
position!(u32, u64);

/// Checks a sorted (keys, values = input positions) result in O(n): sorted under `comp`, each
/// value names its key's input position (same bits) exactly once, equivalent keys in input order.
fn check_stable<K: DeviceKey, V: Position, C: DeviceComparator<K>>(
    input: &[K],
    keys: &[K],
    values: &[V],
    comp: &C,
) -> bool {
    let same = |x: &K, y: &K| bytemuck::bytes_of(x) == bytemuck::bytes_of(y);
    let mut seen = vec![false; input.len()];
    keys.windows(2).all(|w| !comp.is_less(&w[1], &w[0]))
        && keys.iter().zip(values).all(|(k, &v)| {
            let v = v.index();
            let fresh = v < input.len() && !seen[v] && same(&input[v], k);
            if v < input.len() {
                seen[v] = true;
            }
            fresh
        })
        && keys
            .windows(2)
            .zip(values.windows(2))
            .all(|(k, v)| comp.is_less(&k[0], &k[1]) || v[0] < v[1])
}

/// `f32::total_cmp` compared as the floats themselves, through `FloatKey::CUDA_TOTAL_KEY` at
/// every compare: what `TotalOrder` compiled to before its keys were sorted as integers, with
/// identical equivalents as `TotalOrder`'s.
struct TotalCompared;

impl DeviceComparator<f32> for TotalCompared {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("total_compared")
    }
    fn cuda_helpers(&self) -> Cow<'_, str> {
        Cow::Owned(format!(
            "__device__ __forceinline__ auto total_compared_key(key_type x) {{ {} }}\n",
            <f32 as FloatKey>::CUDA_TOTAL_KEY
        ))
    }
    fn cuda_body(&self) -> Cow<'_, str> {
        Cow::Borrowed("return total_compared_key(a) < total_compared_key(b);")
    }
    fn is_less(&self, a: &f32, b: &f32) -> bool {
        a.total_cmp(b).is_lt()
    }
    fn equivalents_identical(&self) -> bool {
        true
    }
}

/// A 24-byte user record (the wide-key row): sorted by `user`, then `time`, by a user
/// comparator; equivalent records (same user and time) can differ in `value`.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Event {
    time: u64,
    user: u32,
    kind: u32,
    value: f64,
}

twophase::device_key!(Event => "event", "struct event { unsigned long long time; unsigned int user; unsigned int kind; double value; };");
// SAFETY: `Event` is `#[repr(C)]` plain old data (bytemuck::Pod): any bit pattern, all zeros
// included, is a valid value, and it holds no pointers.
unsafe impl DeviceRepr for Event {}
// SAFETY: as above, all-zero bits are a valid `Event`.
unsafe impl ValidAsZeroBits for Event {}

/// Users the records are spread over: a few hundred records a user at 2^24, so that the time
/// decides most compares.
const EVENT_USERS: u64 = 1 << 16;

/// The record comparator, in CUDA and in Rust (the same `(user, time)` order as the CUB peer's
/// functor).
fn event_comparator() -> impl DeviceComparator<Event> {
    CudaComparator::new(
        "event_by_user_time",
        "return a.user < b.user || (a.user == b.user && a.time < b.time);",
        |a: &Event, b: &Event| (a.user, a.time) < (b.user, b.time),
    )
}

/// `n` random records from `seed` (the CUB peer draws its own with the same distribution).
fn random_events(n: usize, seed: u64) -> Vec<Event> {
    let words: Vec<u64> = random_keys(3 * n, seed);
    words
        .chunks_exact(3)
        .map(|w| Event {
            time: w[0],
            user: (w[1] % EVENT_USERS) as u32,
            kind: (w[1] >> 32) as u32,
            value: w[2] as f64,
        })
        .collect()
}

/// Sizes (log2 of records) of the record rows: 2^26 records are 1.5 GiB.
const EVENT_SIZES: [u32; 3] = [20, 24, 26];

/// The sweep of the 24-byte records: (block sort threads, pass threads, four-way threads, VT),
/// with four-way passes from 64 MiB as shipped for the other types.
const EVENT_SWEEP: [(u32, u32, u32, u32); 5] = [
    (128, 128, 128, 7),
    (256, 128, 128, 7),
    (512, 128, 128, 7),
    (256, 128, 128, 11),
    (256, 256, 256, 7),
];

/// A tuning of the record sweep: the shipped 24-byte tuning with these shapes.
fn event_tuning(
    (threads, pass_threads, quad_threads, vt): (u32, u32, u32, u32),
) -> MergesortTuning {
    MergesortTuning {
        threads,
        pass_threads,
        quad_threads,
        four_way_min_keys: (1 << 26) / std::mem::size_of::<Event>(),
        vt,
        ..MergesortTuning::for_types(std::mem::size_of::<Event>(), 0)
    }
}

/// Environment variable: when set, time the shipped tunings only (no sweeps, no alternation of
/// programmatic dependent launch), for before/after comparisons inside one device command.
const SHIPPED_ONLY_ENV: &str = "TWOPHASE_BENCH_SHIPPED_ONLY";

fn shipped_only() -> bool {
    std::env::var_os(SHIPPED_ONLY_ENV).is_some()
}

/// Environment variable: a comma-separated list of eight-way tile threads (0: four-way passes
/// only) to time beside each shipped row, with the four-way tile's registers and eight-way passes
/// from every size (also profiled in the profile mode).
const OCT_THREADS_ENV: &str = "TWOPHASE_BENCH_OCT_THREADS";

/// One tuning for each number of the comma-separated list in environment variable `var`.
fn env_variants<T: std::str::FromStr>(
    var: &str,
    variant: impl Fn(T) -> MergesortTuning,
) -> Vec<MergesortTuning> {
    env_numbers::<T>(var).into_iter().map(variant).collect()
}

/// The shipped tuning with each of [`OCT_THREADS_ENV`]'s eight-way tile threads.
fn oct_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(OCT_THREADS_ENV, |oct_threads: u32| MergesortTuning {
        oct_registers: if oct_threads > 0 {
            shipped.quad_registers
        } else {
            0
        },
        ..shipped.with_eight_way(oct_threads)
    })
}

/// Environment variable: a comma-separated list of four-way cut thread budgets an SM
/// (`quad_cut_threads_per_sm`) to time beside the shipped tuning at every size (e.g. `2048`, where
/// the cuts of a 2^24 sort of 8-byte elements get a warp each).
const CUT_BUDGETS_ENV: &str = "TWOPHASE_BENCH_CUT_BUDGETS";

/// The shipped tuning with each four-way cut budget of [`CUT_BUDGETS_ENV`].
fn cut_budget_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(CUT_BUDGETS_ENV, |budget: usize| MergesortTuning {
        quad_cut_threads_per_sm: budget,
        ..shipped
    })
}

/// Environment variable: a comma-separated list of thread budgets an SM up to which the four-way
/// cuts and the two-way samples get a warp a search (`quad_cut_warp_threads_per_sm` and
/// `boundary_search_threads_per_sm`), timed beside the shipped tuning and profiled in the profile
/// mode (e.g. `384`, where the 1772 cuts of a VT 37 sort at 2^24 get 16 lanes and its samples
/// one).
const SEARCH_BUDGETS_ENV: &str = "TWOPHASE_BENCH_SEARCH_BUDGETS";

/// The shipped tuning with each search budget of [`SEARCH_BUDGETS_ENV`].
fn search_budget_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(SEARCH_BUDGETS_ENV, |budget: usize| MergesortTuning {
        quad_cut_warp_threads_per_sm: budget,
        boundary_search_threads_per_sm: budget,
        ..shipped
    })
}

/// Environment variable: a comma-separated list of block-sort VTs (the four-way tiles' too) to
/// time beside the shipped tuning and profile in the profile mode, the rest as shipped (e.g.
/// `43` under a user comparator, whose shipped VT is 37).
const VTS_ENV: &str = "TWOPHASE_BENCH_VTS";

/// The shipped tuning with each VT of [`VTS_ENV`].
fn vt_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(VTS_ENV, |vt: u32| MergesortTuning { vt, ..shipped })
}

/// Environment variable: a comma-separated list of register bounds of the two-way pass tile
/// (`pass_registers`, 0: the compiler's choice) to time beside the shipped tuning and profile in
/// the profile mode, the rest as shipped (e.g. `80`: the u64 keys' 256-thread tile three blocks an
/// SM).
const PASS_REGISTERS_ENV: &str = "TWOPHASE_BENCH_PASS_REGISTERS";

/// The shipped tuning with each two-way tile register bound of [`PASS_REGISTERS_ENV`].
fn pass_register_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(PASS_REGISTERS_ENV, |pass_registers: u32| MergesortTuning {
        pass_registers,
        ..shipped
    })
}

/// One kernel's register bound in a tuning (the benchmark's register variants).
type RegisterBound = fn(&MergesortTuning) -> u32;

/// Environment variable: a comma-separated list of block-sort register bounds to time beside the
/// shipped tuning (0: the compiler's choice), the rest as shipped.
const BLOCK_REGISTERS_ENV: &str = "TWOPHASE_BENCH_BLOCK_REGISTERS";

/// The shipped tuning with each block-sort register bound of [`BLOCK_REGISTERS_ENV`].
fn block_register_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(BLOCK_REGISTERS_ENV, |block_registers: u32| {
        MergesortTuning {
            block_registers,
            ..shipped
        }
    })
}

/// Environment variable: a comma-separated list of four-way tile register bounds to time beside the
/// shipped tuning (0: the compiler's choice, under a threads-only launch bound), the rest as
/// shipped.
const QUAD_REGISTERS_ENV: &str = "TWOPHASE_BENCH_QUAD_REGISTERS";

/// The shipped tuning with each four-way tile register bound of [`QUAD_REGISTERS_ENV`].
fn quad_register_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(QUAD_REGISTERS_ENV, |quad_registers: u32| MergesortTuning {
        quad_registers,
        ..shipped
    })
}

/// Every register-bound variant of the environment's (two-way, four-way and block-sort bounds).
fn register_bound_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    let mut variants = pass_register_variants(shipped);
    variants.extend(quad_register_variants(shipped));
    variants.extend(block_register_variants(shipped));
    variants
}

/// Environment variable: a comma-separated list of block-sort threads to time beside the shipped
/// tuning and profile in the profile mode, the rest as shipped (e.g. `512`: a 512 x 45 block sort of
/// 4-byte keys in 90 KB, two blocks an SM, where the shipped 1024 x 45 one runs one).
const BLOCK_THREADS_ENV: &str = "TWOPHASE_BENCH_BLOCK_THREADS";

/// The shipped tuning with each block-sort width of [`BLOCK_THREADS_ENV`].
fn block_threads_variants(shipped: MergesortTuning) -> Vec<MergesortTuning> {
    env_variants(BLOCK_THREADS_ENV, |threads: u32| MergesortTuning {
        threads,
        ..shipped
    })
}

/// Environment variable: a comma-separated list of sizes in bytes of keys and values from which
/// four-way passes run (`four_way_min_keys` times the element size), each timed beside the
/// shipped tuning and profiled in the profile mode (e.g. `0`: four-way passes at every size).
const FOUR_WAY_BYTES_ENV: &str = "TWOPHASE_BENCH_FOUR_WAY_BYTES";

/// The shipped tuning with each four-way threshold of [`FOUR_WAY_BYTES_ENV`], for elements of
/// `element_bytes`.
fn four_way_variants(shipped: MergesortTuning, element_bytes: usize) -> Vec<MergesortTuning> {
    env_variants(FOUR_WAY_BYTES_ENV, |bytes: usize| MergesortTuning {
        four_way_min_keys: bytes / element_bytes,
        ..shipped
    })
}

/// Environment variable: a factor on the sorts' sizes (e.g. `1.3`: 2^21 stands for 1.3 * 2^21
/// keys), for sizes between powers of two; the rows then print the factor and no CUB ratios.
const SCALE_ENV: &str = "TWOPHASE_BENCH_SCALE";

/// [`SCALE_ENV`]'s factor, else 1.
fn size_scale() -> f64 {
    std::env::var(SCALE_ENV)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|&scale| scale > 0.0)
        .unwrap_or(1.0)
}

/// Keys of the sorts at size `log2n`: 2^log2n times [`size_scale`].
fn keys_at(log2n: u32) -> usize {
    ((1usize << log2n) as f64 * size_scale()).round() as usize
}

/// How a row names size `log2n`: `2^21`, or `2^21x1.30` when scaled.
fn size_label(log2n: u32) -> String {
    let scale = size_scale();
    if scale == 1.0 {
        format!("2^{log2n}")
    } else {
        format!("2^{log2n}x{scale:.2}")
    }
}

/// Environment variable: when set, time each shipped row also with its launches issued while a
/// copy keeps the GPU busy, so that the host's time before the first launch is hidden.
const QUEUED_ENV: &str = "TWOPHASE_BENCH_QUEUED";

fn queued_timing() -> bool {
    std::env::var_os(QUEUED_ENV).is_some()
}

/// Bytes of each buffer of the copy queued ahead of a timed call (about 0.13 ms on an H200:
/// longer than the host takes to issue a small sort).
const BUSY_COPY_BYTES: usize = 256 << 20;

/// A device-to-device copy that keeps the GPU busy while the host issues a call.
struct BusyCopy {
    src: CudaSlice<u8>,
    dst: CudaSlice<u8>,
}

impl BusyCopy {
    fn new(stream: &std::sync::Arc<twophase_gpu::cudarc::driver::CudaStream>) -> Self {
        BusyCopy {
            src: stream.alloc_zeros(BUSY_COPY_BYTES).expect("alloc"),
            dst: stream.alloc_zeros(BUSY_COPY_BYTES).expect("alloc"),
        }
    }

    fn queue(&mut self, stream: &std::sync::Arc<twophase_gpu::cudarc::driver::CudaStream>) {
        stream
            .memcpy_dtod(&self.src, &mut self.dst)
            .expect("busy copy");
    }
}

/// What every measurement of a run shares: the device, the mode, and what the rows compare with.
struct Bench<'a> {
    gpu: &'a Gpu,
    mode: Mode,
    copy_gbs: f64,
    cub: &'a HashMap<(String, u32), f64>,
}

impl Bench<'_> {
    /// One result line: ms, Gkeys/s, passes, copy-equivalents, and the ratios to CUB.
    fn print_row(&self, kind: &str, log2n: u32, ms: f64, passes: u32, bytes_per_pass: f64) {
        let n = keys_at(log2n) as f64;
        let one_pass_ms = bytes_per_pass / (self.copy_gbs * 1e9) * 1e3;
        let scaled = size_scale() != 1.0;
        let ratio = |impl_: &str| {
            self.cub
                .get(&(format!("{impl_}-{kind}"), log2n))
                .filter(|_| !scaled)
                .map_or("n/a".to_owned(), |c| format!("{c:.4} ms = {:.2}x", c / ms))
        };
        println!(
            "| twophase | {kind} | {} | {ms:.4} | {:.2} | {} | {:.1} | {} | {} |",
            size_label(log2n),
            n / (ms * 1e-3) / 1e9,
            passes,
            ms / one_pass_ms,
            ratio("cub-merge"),
            ratio("cub-radix"),
        );
    }

    /// The 24-byte records under their user comparator: checked against std's stable sort, then
    /// the shipped tuning and the sweep timed at each of [`EVENT_SIZES`].
    fn run_events(&self) {
        const KIND: &str = "event24-user";
        if !kind_selected(KIND) {
            return;
        }
        let gpu = self.gpu;
        let stream = gpu.stream();
        let comp = event_comparator();
        let mut scratch = MergesortScratch::new();
        let record = std::mem::size_of::<Event>();
        for log2n in EVENT_SIZES {
            let n = keys_at(log2n);
            let input = random_events(n, rand::random::<u64>());
            let mut expected = input.clone();
            expected.par_sort_by(|a, b| (a.user, a.time).cmp(&(b.user, b.time)));
            let pristine = stream.clone_htod(&input).expect("upload");
            let mut keys: CudaSlice<Event> = stream.alloc_zeros(n).expect("alloc");
            let restore = |keys: &mut CudaSlice<Event>| {
                stream.memcpy_dtod(&pristine, keys).expect("restore");
            };
            let shipped = gpu.shipped_mergesort_tuning(record, 0, n);
            let sweep = if shipped_only() {
                &[][..]
            } else {
                &EVENT_SWEEP[..]
            };
            // The register bounds of the environment's variants (as for the other kinds).
            let bounds = register_bound_variants(shipped).into_iter();
            let tunings = std::iter::once((shipped, true))
                .chain(sweep.iter().map(|&shape| (event_tuning(shape), false)))
                .chain(bounds.map(|tuning| (tuning, false)));
            let copy_ms = time_events(gpu, WARMUP, REPS, |_| restore(&mut keys));
            for (tuning, is_shipped) in tunings {
                let mut sort = |keys: &mut CudaSlice<Event>| {
                    gpu.sort_device(SortBuffers::keys(keys), &comp, Some(tuning), &mut scratch)
                        .expect("record sort");
                };
                // Correctness first: the stable order std gives, bit for bit.
                restore(&mut keys);
                sort(&mut keys);
                let got = stream.clone_dtoh(&keys).expect("download");
                assert!(
                    bytemuck::cast_slice::<Event, u8>(&got)
                        == bytemuck::cast_slice::<Event, u8>(&expected),
                    "{KIND} 2^{log2n} {}: GPU sort differs from std's stable sort",
                    shape(tuning)
                );
                let ms = time_events(gpu, WARMUP, REPS, |_| {
                    restore(&mut keys);
                    sort(&mut keys);
                }) - copy_ms;
                if is_shipped {
                    self.print_row(
                        KIND,
                        log2n,
                        ms,
                        global_passes(n, tuning),
                        (2 * n * record) as f64,
                    );
                } else {
                    println!(
                        "sweep {KIND} 2^{log2n} {} pass r={}: {ms:.4} ms, {} passes (stable order checked)",
                        shape(tuning),
                        tuning.pass_registers,
                        global_passes(n, tuning)
                    );
                }
            }
        }
    }

    /// Correctness first, then the shipped sort of each size timed (with and without
    /// programmatic dependent launch), the sweep, and the host-clocked call at the smallest size;
    /// or, in the profile mode, each configuration sorted once for the profiler.
    fn run<K, C>(&self, kind: &str, pairs: bool, sweep: &[Sweep], comp: &C)
    where
        K: PrimitiveKey + DeviceRepr + ValidAsZeroBits + Send + Sync + std::fmt::Debug,
        C: DeviceComparator<K>,
        rand::distributions::Standard: rand::distributions::Distribution<K>,
    {
        self.run_valued::<K, u32, C>(kind, pairs, sweep, comp);
    }

    /// [`run`](Self::run) with values of type `V` where `pairs`.
    fn run_valued<K, V, C>(&self, kind: &str, pairs: bool, sweep: &[Sweep], comp: &C)
    where
        K: PrimitiveKey + DeviceRepr + ValidAsZeroBits + Send + Sync + std::fmt::Debug,
        V: Position,
        C: DeviceComparator<K>,
        rand::distributions::Standard: rand::distributions::Distribution<K>,
    {
        let (gpu, mode) = (self.gpu, self.mode);
        if !kind_selected(kind) {
            return;
        }
        let sweep: &[Sweep] = if shipped_only() { &[] } else { sweep };
        let alternations = if shipped_only() { 0 } else { PDL_ALTERNATIONS };
        let stream = gpu.stream();
        let mut scratch = MergesortScratch::new();
        let value_bytes = if pairs { std::mem::size_of::<V>() } else { 0 };
        let element_bytes = std::mem::size_of::<K>() + value_bytes;
        let profile_sizes = [profile_log2n()];
        let bench_sizes = env_sizes();
        let mut busy = queued_timing().then(|| BusyCopy::new(stream));
        let sizes: &[u32] = match (mode, &bench_sizes) {
            (Mode::Time, Some(sizes)) => sizes,
            (Mode::Time, None) => &SIZES,
            (Mode::Profile, _) => &profile_sizes,
        };
        for &log2n in sizes {
            let n = keys_at(log2n);
            // What the untuned calls use for this size on this device.
            let tuning = gpu.shipped_mergesort_tuning_for::<K, C>(comp, value_bytes, n);
            let seed = rand::random::<u64>();
            let input: Vec<K> = random_keys(n, seed);
            let positions: Vec<V> = (0..n).map(V::at).collect();
            let mut sorted_input = input.clone();
            // Stable: equivalent keys may differ (the u32-top8 row).
            sorted_input.par_sort_by(twophase_gpu::compare::ordering(comp));
            let pristine = stream.clone_htod(&input).expect("upload");
            let pristine_values = stream.clone_htod(&positions).expect("upload");
            let mut keys: CudaSlice<K> = stream.alloc_zeros(n).expect("alloc");
            let mut values: CudaSlice<V> = stream.alloc_zeros(n).expect("alloc");
            // Correctness first: scratch poisoned by a sort of all-poison keys, fresh random input.
            let poison: Vec<K> = vec![input[n / 3]; n];
            let mut poisoned = stream.clone_htod(&poison).expect("upload");
            if pairs {
                let mut pv = stream.clone_htod(&vec![V::POISON; n]).expect("upload");
                gpu.sort_device(
                    SortBuffers::pairs(&mut poisoned, &mut pv),
                    comp,
                    None,
                    &mut scratch,
                )
                .expect("poison sort");
            } else {
                gpu.sort_device(SortBuffers::keys(&mut poisoned), comp, None, &mut scratch)
                    .expect("poison sort");
            }
            drop(poisoned);
            let restore = |keys: &mut CudaSlice<K>, values: &mut CudaSlice<V>| {
                stream.memcpy_dtod(&pristine, keys).expect("restore");
                if pairs {
                    stream
                        .memcpy_dtod(&pristine_values, values)
                        .expect("restore");
                }
            };
            let mut sort_tuned =
                |keys: &mut CudaSlice<K>, values: &mut CudaSlice<V>, tuning: MergesortTuning| {
                    if pairs {
                        gpu.sort_device(
                            SortBuffers::pairs(keys, values),
                            comp,
                            Some(tuning),
                            &mut scratch,
                        )
                        .expect("mergesort pairs");
                    } else {
                        gpu.sort_device(SortBuffers::keys(keys), comp, Some(tuning), &mut scratch)
                            .expect("mergesort");
                    }
                };
            restore(&mut keys, &mut values);
            sort_tuned(&mut keys, &mut values, tuning);
            let got = stream.clone_dtoh(&keys).expect("download");
            if pairs {
                let got_values = stream.clone_dtoh(&values).expect("download");
                assert!(
                    check_stable(&input, &got, &got_values, comp),
                    "{kind} 2^{log2n}: GPU sort is not a stable sort of the input"
                );
            } else {
                // Keys alone: std's stable sort is the answer.
                assert!(
                    bytemuck::cast_slice::<K, u8>(&got)
                        == bytemuck::cast_slice::<K, u8>(&sorted_input),
                    "{kind} 2^{log2n}: GPU sort differs from std"
                );
            }
            if mode == Mode::Profile {
                // One untimed sort, then the profiled one, for the shipped tuning and each sweep.
                let shipped = std::iter::once(tuning)
                    .chain(oct_variants(tuning))
                    .chain(search_budget_variants(tuning))
                    .chain(vt_variants(tuning))
                    .chain(register_bound_variants(tuning))
                    .chain(block_threads_variants(tuning))
                    .chain(four_way_variants(tuning, element_bytes));
                let swept = sweep.iter().map(swept_tuning);
                for tuned in shipped.chain(swept) {
                    for _ in 0..2 {
                        restore(&mut keys, &mut values);
                        sort_tuned(&mut keys, &mut values, tuned);
                    }
                    stream.synchronize().expect("sync");
                    println!(
                        "profiled {kind} 2^{log2n} {} oct nt={} warp search threads/SM={}: {} passes",
                        shape(tuned),
                        tuned.oct_threads,
                        tuned.quad_cut_warp_threads_per_sm,
                        global_passes(n, tuned)
                    );
                }
                continue;
            }
            let copy_ms = time_events(gpu, WARMUP, REPS, |_| restore(&mut keys, &mut values));
            let ms = time_events(gpu, WARMUP, REPS, |_| {
                restore(&mut keys, &mut values);
                sort_tuned(&mut keys, &mut values, tuning);
            }) - copy_ms;
            let bytes_per_pass = (2 * n * (std::mem::size_of::<K>() + value_bytes)) as f64;
            self.print_row(kind, log2n, ms, global_passes(n, tuning), bytes_per_pass);
            if let Some(busy) = &mut busy {
                // The same sort with its launches issued while a copy keeps the GPU busy: the
                // GPU's time alone, without the host's time before the first launch.
                let mut queue_copy = || busy.queue(stream);
                let copy_queued = time_events_queued(gpu, WARMUP, REPS, &mut queue_copy, |_| {
                    restore(&mut keys, &mut values)
                });
                let ms_queued = time_events_queued(gpu, WARMUP, REPS, &mut queue_copy, |_| {
                    restore(&mut keys, &mut values);
                    sort_tuned(&mut keys, &mut values, tuning);
                }) - copy_queued;
                println!(
                    "queued {kind} {}: {ms_queued:.4} ms with the launches issued behind a copy, {ms:.4} ms as called ({:.4} ms of host time before the GPU starts)",
                    size_label(log2n),
                    ms - ms_queued
                );
                // The host's part that comes before any launch: the program's lookup.
                let layout = pairs.then_some((value_bytes, std::mem::align_of::<V>()));
                const LOOKUPS: u32 = 10_000;
                let t = Instant::now();
                for _ in 0..LOOKUPS {
                    gpu.prepare::<K, C, MergesortTuning>(comp, layout, tuning)
                        .expect("program");
                }
                println!(
                    "program lookup {kind}: {:.2} us a call",
                    t.elapsed().as_secs_f64() * 1e6 / f64::from(LOOKUPS)
                );
            }
            // The same sort with every kernel launched normally (no programmatic dependent launch),
            // alternating with it, so that a drift of the clocks does not pass for a difference.
            let mut with_pdl = Vec::new();
            let mut without_pdl = Vec::new();
            for _ in 0..alternations {
                for (on, times) in [(false, &mut without_pdl), (true, &mut with_pdl)] {
                    gpu.set_programmatic_launch(on);
                    times.push(
                        time_events(gpu, WARMUP, REPS, |_| {
                            restore(&mut keys, &mut values);
                            sort_tuned(&mut keys, &mut values, tuning);
                        }) - copy_ms,
                    );
                }
            }
            let show = |times: &[f64]| {
                times
                    .iter()
                    .map(|t| format!("{t:.4}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            if alternations > 0 {
                println!(
                    "programmatic dependent launch {kind} 2^{log2n}: on {} ms, off {} ms (alternating)",
                    show(&with_pdl),
                    show(&without_pdl)
                );
            }
            // A variant's line: its time, after checking its keys against std's sort, behind
            // `head`, with its passes where `passes`.
            let mut report = |tuned: MergesortTuning, head: String, passes: bool| {
                restore(&mut keys, &mut values);
                sort_tuned(&mut keys, &mut values, tuned);
                let correct = stream.clone_dtoh(&keys).expect("download") == sorted_input;
                let ms = time_events(gpu, WARMUP, REPS, |_| {
                    restore(&mut keys, &mut values);
                    sort_tuned(&mut keys, &mut values, tuned);
                }) - copy_ms;
                let passes = if passes {
                    format!(", {} passes", global_passes(n, tuned))
                } else {
                    String::new()
                };
                println!("{head}: {ms:.4} ms{passes} (keys correct: {correct})");
            };
            for t in oct_variants(tuning) {
                let head = format!(
                    "eight-way {kind} 2^{log2n} oct nt={} regs={}",
                    t.oct_threads, t.oct_registers
                );
                report(t, head, true);
            }
            for t in cut_budget_variants(tuning) {
                let head = format!(
                    "cut budget {kind} 2^{log2n} threads/SM={}",
                    t.quad_cut_threads_per_sm
                );
                report(t, head, false);
            }
            for t in search_budget_variants(tuning) {
                let head = format!(
                    "search budget {kind} 2^{log2n} warp threads/SM={}",
                    t.quad_cut_warp_threads_per_sm
                );
                report(t, head, false);
            }
            for t in vt_variants(tuning) {
                report(
                    t,
                    format!("vt {kind} {} {}", size_label(log2n), shape(t)),
                    false,
                );
            }
            // Each kernel's register bounds: the kernel, its variants, the bound of a variant.
            let register_bounds: [(&str, Vec<MergesortTuning>, RegisterBound); 3] = [
                ("pass", pass_register_variants(tuning), |t| t.pass_registers),
                ("quad", quad_register_variants(tuning), |t| t.quad_registers),
                ("block", block_register_variants(tuning), |t| {
                    t.block_registers
                }),
            ];
            for (kernel, variants, bound) in register_bounds {
                for t in variants {
                    let head = format!(
                        "{kernel} registers {kind} {} {} r={}",
                        size_label(log2n),
                        shape(t),
                        bound(&t)
                    );
                    report(t, head, false);
                }
            }
            for t in block_threads_variants(tuning) {
                let head = format!("block threads {kind} 2^{log2n} {}", shape(t));
                report(t, head, true);
            }
            for t in four_way_variants(tuning, element_bytes) {
                let head = format!(
                    "four-way from {} keys {kind} 2^{log2n}",
                    t.four_way_min_keys
                );
                report(t, head, true);
            }
            for t in sweep.iter().map(swept_tuning) {
                report(t, format!("sweep {kind} 2^{log2n} {}", shape(t)), true);
            }
            if log2n == SIZES[0] {
                // One call, host clock: launches + synchronize (restore untimed), and the host's
                // share of it, issuing the launches while the GPU is still busy. When that share
                // comes near the event-timed sort, small sorts are bound by the launches.
                let mut call = || {
                    restore(&mut keys, &mut values);
                    stream.synchronize().expect("sync");
                    let t = Instant::now();
                    sort_tuned(&mut keys, &mut values, tuning);
                    let issued = t.elapsed().as_secs_f64() * 1e3;
                    stream.synchronize().expect("sync");
                    (issued, t.elapsed().as_secs_f64() * 1e3)
                };
                for _ in 0..WARMUP {
                    call();
                }
                let (issued, called): (Vec<f64>, Vec<f64>) = (0..REPS).map(|_| call()).unzip();
                let (enqueue_ms, call_ms) = (median(issued), median(called));
                println!(
                    "host enqueue {kind} 2^{log2n}: {enqueue_ms:.4} ms to issue one sort's launches"
                );
                let call_kind = format!("{kind}-call");
                self.print_row(
                    &call_kind,
                    log2n,
                    call_ms,
                    global_passes(n, tuning),
                    bytes_per_pass,
                );
            }
        }
    }
}

fn main() {
    let mode = if std::env::args().any(|a| a == "--profile") {
        Mode::Profile
    } else {
        Mode::Time
    };
    let Some(gpu) = open_gpu() else {
        return;
    };
    let cub = load_cub();
    let copy = copy_rate_gbs(&gpu, WARMUP, REPS);
    println!(
        "device: {}; device-to-device copy rate: {copy:.0} GB/s (bytes read + written)",
        device_name(&gpu),
    );
    println!("| impl | kind | n | ms | Gkeys/s | passes (block sort + merge) | time in copies of the data | CUB merge sort = CUB/ours | CUB radix sort = CUB/ours |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let bench = Bench {
        gpu: &gpu,
        mode,
        copy_gbs: copy,
        cub: &cub,
    };
    bench.run::<u32, _>("u32", false, &U32_SWEEP, &Less);
    bench.run::<u64, _>("u64", false, &U64_SWEEP, &Less);
    bench.run::<u32, _>("u32-pairs", true, &PAIRS_SWEEP, &Less);
    // The other shipped pair layouts: 4-byte keys with 8-byte values, 8-byte keys with 4- and
    // 8-byte values.
    bench.run_valued::<u32, u64, _>("u32+u64", true, &[], &Less);
    bench.run_valued::<u64, u32, _>("u64+u32", true, &[], &Less);
    bench.run_valued::<u64, u64, _>("u64+u64", true, &[], &Less);
    // Floats under the IEEE total order (the calls without a comparator), sorted as their
    // integer images.
    bench.run::<f32, _>("f32", false, &[], &TotalOrder);
    bench.run::<f64, _>("f64", false, &[], &TotalOrder);
    // The same order compared as the floats themselves (both keys through the total-order
    // transform at every compare, the unchecked kernels and the network register sort): the
    // sort before integer images.
    // SAFETY: the total order is a strict weak order on every float, in CUDA and in Rust.
    let total_body = unsafe { TrustedComparator::new(TotalCompared) };
    bench.run::<f32, _>("f32-compared", false, &[], &total_body);
    // A user comparator with the same order as `Less`: the sort a user's own comparator gets
    // (never trusted: checked kernels).
    let user_less = CudaComparator::new("user_less", "return a < b;", |a: &u32, b: &u32| a < b);
    bench.run::<u32, _>("u32-user", false, &USER_SWEEP, &user_less);
    // The same comparator vouched for (`unsafe`) and with identical equivalents declared: the
    // unchecked kernels and register sort of twophase's own orders.
    // SAFETY: `a < b` on u32 is a strict weak order, in CUDA and in Rust.
    let vouched = unsafe {
        TrustedComparator::new(
            CudaComparator::new("user_less", "return a < b;", |a: &u32, b: &u32| a < b)
                .with_identical_equivalents(),
        )
    };
    bench.run::<u32, _>("u32-user-trusted", false, &[], &vouched);
    // A user comparator whose equivalent keys differ (the top 8 bits alone): only a stable sort
    // gives std's order, the row CUB's merge sort runs with the same functor.
    let top8 = CudaComparator::new(
        "top8_less",
        "return (a >> 24) < (b >> 24);",
        |a: &u32, b: &u32| (a >> 24) < (b >> 24),
    );
    bench.run::<u32, _>("u32-top8", false, &USER_SWEEP, &top8);
    // A 24-byte record under a user comparator: the wide-key row.
    bench.run_events();
}
