//! Adversarial GPU tests (need a CUDA GPU; run with --include-ignored): bad input gives a permutation, in-range indices or a named error, and the handle keeps working.
//!
//! Every primitive, host-slice and device-buffer forms, the free functions on the default GPU
//! and the backend-neutral crate-root calls, at sizes from 0 past 2^22 and at each kernel's tile
//! boundaries (bounded by `TWOPHASE_TEST_SCALE`, see `common::checks::test_scale`), with: floats
//! holding NaN under a partial order, unsorted merge inputs and needles, comparators that are
//! not strict weak orders, bad scans, out-of-range positions, mismatched lengths, user keys whose
//! CUDA layout differs from Rust's, and comparator snippets that do not compile. Device buffers
//! carry guards ([`Guarded`]), so a write out of range fails the test even without
//! compute-sanitizer. The tests named `tiles_*` and `staging_*` are small and fixed: the device
//! script runs them under racecheck/synccheck and initcheck.

mod common;

use std::mem::size_of;
use std::sync::atomic::{AtomicU32, Ordering};

use common::bounds::reference_bounds;
use common::checks::{
    assert_pairs_permutation, assert_permutation, boundary_sizes, test_scale, Guarded,
};
use common::{gpu, rng, same_bits, splitmix_u32, U32Comparator, CLOCK_COIN_BODY};
use rand::rngs::StdRng;
use rand::Rng;
use twophase::gpu::{
    CudaComparator, DeviceComparator, DeviceIndex, DeviceKey, FloatKey, Gpu, GpuError, Less,
    LoadBalanceOp, LoadBalanceTuning, MergeAlgorithm, MergeBuffers, MergeScratch, MergeSlices,
    MergeTuning, MergesortScratch, MergesortTuning, SearchScratch, SortBuffers, SortedSearchTuning,
    TotalOrder,
};
use twophase::gpu::{Interval, IntervalMove};
use twophase::variants::{
    BatcherTuning, MergeVariant, SortScratch, SortVariant, TextbookMergeTuning,
};
use twophase_gpu::cudarc::driver::{DevicePtrMut, DeviceRepr};
use twophase_gpu::SearchBound;

// ---- What a failure must say ----

/// A sort or merge whose comparator answered inconsistently names the comparator.
const COMPARATOR: &str = "comparator";
/// A merge's unsorted first input (keys-only and key-value merges).
const NAMES_A: &[&str] = &["`a`", "`a_keys`"];
/// A merge's unsorted second input.
const NAMES_B: &[&str] = &["`b`", "`b_keys`"];
/// A sorted search's unsorted needles.
const NAMES_NEEDLES: &[&str] = &["`needles`"];
/// A sorted search's unsorted haystack.
const NAMES_HAYSTACK: &[&str] = &["`haystack`"];
/// A bad segment scan.
const NAMES_SCAN: &[&str] = &["`scan`"];
/// A gather position past the input.
const NAMES_GATHER: &[&str] = &["`gather`"];
/// A scatter position past the output.
const NAMES_SCATTER: &[&str] = &["`scatter`"];
/// What a merge under a comparator that is not a strict weak order may name.
const NAMES_MERGE_ANY: &[&str] = &["`a`", "`b`", "`a_keys`", "`b_keys`", COMPARATOR];
/// What a sorted search under a comparator that is not a strict weak order may name.
const NAMES_SEARCH_ANY: &[&str] = &["`needles`", "`haystack`", COMPARATOR];
/// What a sort may name.
const NAMES_SORT: &[&str] = &[COMPARATOR];

// ---- Inputs ----

/// Poison in guards and outputs that a call must not write.
const POISON_U32: u32 = 0xDEAD_BEEF;
/// Half of the random u32 keys are drawn below this, so that equal keys are common.
const DUPLICATE_RANGE: u32 = 64;
/// Shares of NaN (in percent) among the float keys.
const NAN_PERCENTS: [u32; 2] = [1, 30];
/// NaN bit patterns of f32: quiet, negative quiet, signalling, quiet with a payload.
const F32_NANS: [u32; 4] = [0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0x7fc1_2345];
/// NaN bit patterns of f64, as for f32.
const F64_NANS: [u64; 4] = [
    0x7ff8_0000_0000_0000,
    0xfff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0x7ff8_0000_0012_3456,
];
/// Ordinary float keys are drawn from (-FLOAT_RANGE, FLOAT_RANGE), some of them small integers.
const FLOAT_RANGE: f32 = 1.0e6;
/// Large sizes of every scaled test: past 2^20 and past 2^22.
const LARGE_SIZES: [usize; 2] = [(1 << 20) + 3, (1 << 22) + 13];
/// An 8-byte key sort past the small sorts whose passes are all two-way, with more two-way tiles
/// than two an SM on any device: its tile is bound to fewer registers
/// (`MergesortTuning::for_many_pass_tiles`).
const WIDE_TWO_WAY_KEYS: usize = (1 << 21) + 5;
/// Most keys of one `tiles_*` sort (these run under racecheck).
const TILES_MAX_KEYS: usize = 1 << 17;
/// Keys of the small valid sort that follows every failure.
const NEXT_CALL_KEYS: usize = 3001;
/// Multiplier of the first key in the hash comparator (Knuth's multiplicative hash).
const HASH_A: u32 = 2_654_435_761;
/// Multiplier of the second key in the hash comparator.
const HASH_B: u32 = 40_503;
/// The bit the xor comparator answers with.
const XOR_BIT: u32 = 4;

/// The host side of the clock comparator: a shared counter, hashed (Knuth's multiplier; the top
/// bit).
static CLOCK_COIN: AtomicU32 = AtomicU32::new(0);

/// Comparators on u32 that are not strict weak orders: not irreflexive (`<=`, always true),
/// answers that are a hash of both keys (inconsistent between `(a, b)` and `(b, a)`, and not
/// transitive), and answers read off the clock (not even a function: asking twice may differ).
fn inconsistent_comparators() -> Vec<U32Comparator> {
    let hash = format!("return ((a * {HASH_A}u) ^ (b * {HASH_B}u)) & 1;");
    let xor = format!("return (a ^ b) & {XOR_BIT};");
    vec![
        U32Comparator::new("adv_less_equal", "return a <= b;", |a, b| a <= b),
        U32Comparator::new("adv_hash", &hash, |a, b| {
            (a.wrapping_mul(HASH_A) ^ b.wrapping_mul(HASH_B)) & 1 != 0
        }),
        U32Comparator::new("adv_xor_bit", &xor, |a, b| (a ^ b) & XOR_BIT != 0),
        U32Comparator::new("adv_always", "return true;", |_, _| true),
        U32Comparator::new("adv_clock", CLOCK_COIN_BODY, |_, _| {
            CLOCK_COIN
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_mul(HASH_A)
                >> 31
                != 0
        }),
    ]
}

/// `<` on floats: a partial order, not a strict weak order once a NaN is present (`Less` on
/// floats does not compile: floats have `TotalOrder`).
fn partial_less<K: FloatKey + PartialOrd>() -> CudaComparator<K, fn(&K, &K) -> bool> {
    CudaComparator::new("partial_less", "return a < b;", |a, b| a < b)
}

/// `n` random u32 keys, half of them below [`DUPLICATE_RANGE`].
fn u32_keys(rng: &mut StdRng, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| {
            if rng.gen_bool(0.5) {
                rng.gen()
            } else {
                rng.gen_range(0..DUPLICATE_RANGE)
            }
        })
        .collect()
}

/// `n` ascending u32 keys with duplicates.
fn sorted_u32(rng: &mut StdRng, n: usize) -> Vec<u32> {
    let mut v = u32_keys(rng, n);
    v.sort_unstable();
    v
}

/// A value per key: its input position, so that every (key, value) pair is distinct.
fn positions(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

/// An ordinary f32 key: a value, a small integer (many equal keys), a signed zero or an infinity.
fn ordinary_f32(rng: &mut StdRng) -> f32 {
    match rng.gen_range(0..16) {
        0 => 0.0,
        1 => -0.0,
        2 => f32::INFINITY,
        3 => f32::NEG_INFINITY,
        4..=7 => rng.gen_range(-4..4) as f32,
        _ => rng.gen_range(-FLOAT_RANGE..FLOAT_RANGE),
    }
}

/// `n` f32 keys of which about `nan_percent` percent are NaNs of several signs and payloads.
fn f32_keys(rng: &mut StdRng, n: usize, nan_percent: u32) -> Vec<f32> {
    float_keys(rng, n, nan_percent, &F32_NANS.map(f32::from_bits), |x| x)
}

/// `n` f64 keys of which about `nan_percent` percent are NaNs, as [`f32_keys`].
fn f64_keys(rng: &mut StdRng, n: usize, nan_percent: u32) -> Vec<f64> {
    float_keys(
        rng,
        n,
        nan_percent,
        &F64_NANS.map(f64::from_bits),
        f64::from,
    )
}

/// `n` keys of which about `nan_percent` percent are drawn from `nans`, the others
/// [`ordinary_f32`] keys converted by `ordinary`.
fn float_keys<K: Copy>(
    rng: &mut StdRng,
    n: usize,
    nan_percent: u32,
    nans: &[K],
    ordinary: impl Fn(f32) -> K,
) -> Vec<K> {
    (0..n)
        .map(|_| {
            if rng.gen_range(0..100) < nan_percent {
                nans[rng.gen_range(0..nans.len())]
            } else {
                ordinary(ordinary_f32(rng))
            }
        })
        .collect()
}

/// The two halves of `keys`, each sorted by `sort`.
fn sorted_halves<K: Copy>(keys: &[K], sort: impl Fn(&mut Vec<K>)) -> (Vec<K>, Vec<K>) {
    let (a, b) = keys.split_at(keys.len() / 2);
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    sort(&mut a);
    sort(&mut b);
    (a, b)
}

/// `a ++ b`.
fn concat<T: Copy>(a: &[T], b: &[T]) -> Vec<T> {
    let mut v = a.to_vec();
    v.extend_from_slice(b);
    v
}

// ---- Outcomes ----

/// Where a failing call ran, so that the next valid call goes to the same handle.
#[derive(Clone, Copy)]
enum Handle<'g> {
    /// A handle of the test's own.
    Own(&'g Gpu),
    /// The process-wide default GPU of the free functions and the crate-root calls.
    Default,
}

impl Handle<'_> {
    /// Assert that a valid sort and merge on this handle succeed and are correct (`after`
    /// names the failure before).
    fn assert_next_call_works(self, after: &str) {
        let seed = NEXT_CALL_KEYS as u64 ^ after.len() as u64;
        let input: Vec<u32> = (0..NEXT_CALL_KEYS).map(|i| splitmix_u32(seed, i)).collect();
        let mut expected = input.clone();
        expected.sort_unstable();
        let (a, b) = sorted_halves(&input, |v| v.sort_unstable());
        let mut sorted = input.clone();
        let (sort, merged) = match self {
            Handle::Own(gpu) => (gpu.mergesort(&mut sorted, &Less), gpu.merge(&a, &b, &Less)),
            Handle::Default => (twophase::sort(&mut sorted), twophase::merge(&a, &b)),
        };
        sort.unwrap_or_else(|e| panic!("after {after}: the next valid sort failed: {e}"));
        assert!(sorted == expected, "after {after}: the next sort is wrong");
        let merged = merged.unwrap_or_else(|e| panic!("after {after}: the next merge failed: {e}"));
        assert!(merged == expected, "after {after}: the next merge is wrong");
    }
}

/// Whether `e` says that the device context was lost (a sticky fault: illegal address or
/// instruction), which no input may cause.
// needs: `GpuError::ContextLost` from the runtime's context recovery. Its message is expected to
// say "context" and "lost", which the last line matches; once the variant exists, matching it
// (`GpuError::ContextLost { .. } => true,`) is the sharper check.
fn is_context_lost(e: &GpuError) -> bool {
    const STICKY: [&str; 5] = [
        "ILLEGAL_ADDRESS",
        "ILLEGAL_INSTRUCTION",
        "LAUNCH_FAILED",
        "MISALIGNED_ADDRESS",
        "CONTEXT_IS_DESTROYED",
    ];
    let debug = format!("{e:?}");
    let message = e.to_string().to_lowercase();
    STICKY.iter().any(|code| debug.contains(code))
        || (message.contains("context") && message.contains("lost"))
}

/// Assert that `err` is an `InvalidInput` whose message contains one of `names`.
fn assert_named(err: &GpuError, names: &[&str], case: &str) {
    assert!(!is_context_lost(err), "{case}: the context was lost: {err}");
    match err {
        GpuError::InvalidInput(message) => assert!(
            names.iter().any(|name| message.contains(name)),
            "{case}: InvalidInput should name one of {names:?}: {message}"
        ),
        other => panic!("{case}: expected InvalidInput naming one of {names:?}, got: {other}"),
    }
}

/// The call must fail with `InvalidInput` naming one of `names`; the next call on `on` works.
fn expect_named<T>(on: Handle, result: Result<T, GpuError>, names: &[&str], case: &str) {
    match result {
        Ok(_) => panic!("{case}: accepted; expected InvalidInput naming one of {names:?}"),
        Err(e) => assert_named(&e, names, case),
    }
    on.assert_next_call_works(case);
}

/// The call may succeed (`Some` of its result) or fail with `InvalidInput` naming one of
/// `names` (`None`, after checking that the next call on `on` works).
fn ok_or_named<T>(
    on: Handle,
    result: Result<T, GpuError>,
    names: &[&str],
    case: &str,
) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(e) => {
            assert_named(&e, names, case);
            on.assert_next_call_works(case);
            None
        }
    }
}

/// The call must fail with a size mismatch (or an `InvalidInput`); the next call on `on` works.
fn expect_mismatch<T>(on: Handle, result: Result<T, GpuError>, case: &str) {
    match result {
        Err(GpuError::SizeMismatch { .. } | GpuError::InvalidInput(_)) => {}
        Err(other) => panic!("{case}: expected SizeMismatch or InvalidInput, got: {other}"),
        Ok(_) => panic!("{case}: mismatched lengths accepted"),
    }
    on.assert_next_call_works(case);
}

/// The call must fail to compile, with NVRTC's log (which must not be empty) in the error.
/// Returns the program's name and the log.
fn expect_compile_error<T>(
    on: Handle,
    result: Result<T, GpuError>,
    case: &str,
) -> (String, String) {
    let (name, log) = match result {
        Err(GpuError::Compile { name, log, .. }) => (name, log),
        Err(other) => panic!("{case}: expected a compile error, got: {other}"),
        Ok(_) => panic!("{case}: compiled and ran"),
    };
    assert!(
        !log.trim().is_empty(),
        "{case}: the compile error has no log"
    );
    on.assert_next_call_works(case);
    (name, log)
}

/// Sort a copy of `input` with `sort` (a call on `on`) under a comparator that may not be a
/// strict weak order: `Ok`, or `InvalidInput` naming the comparator; either way the keys are a
/// permutation of `input`.
fn check_sort<K: bytemuck::Pod>(
    on: Handle,
    input: &[K],
    case: &str,
    sort: impl FnOnce(&mut [K]) -> Result<(), GpuError>,
) {
    let mut got = input.to_vec();
    let result = sort(&mut got);
    ok_or_named(on, result, NAMES_SORT, case);
    assert_permutation(&got, input, case);
}

/// As [`check_sort`] for a copy of the key-value pairs `input`: every input pair is in the
/// output.
fn check_pairs_sort<K: bytemuck::Pod + Sync, V: bytemuck::Pod + Sync>(
    on: Handle,
    (keys, values): (&[K], &[V]),
    case: &str,
    sort: impl FnOnce(&mut [K], &mut [V]) -> Result<(), GpuError>,
) {
    let (mut got_keys, mut got_vals) = (keys.to_vec(), values.to_vec());
    let result = sort(&mut got_keys, &mut got_vals);
    ok_or_named(on, result, NAMES_SORT, case);
    assert_pairs_permutation((&got_keys, &got_vals), (keys, values), case);
}

/// A merge that may be refused (naming `names`): when it is not, its output is a permutation of
/// `a ++ b`.
fn check_merge<K: bytemuck::Pod>(
    on: Handle,
    result: Result<Vec<K>, GpuError>,
    (a, b): (&[K], &[K]),
    names: &[&str],
    case: &str,
) {
    if let Some(out) = ok_or_named(on, result, names, case) {
        assert_permutation(&out, &concat(a, b), case);
    }
}

/// As [`check_merge`] for key-value merges.
#[allow(clippy::type_complexity)] // The result of a key-value merge, as the API returns it.
fn check_merge_pairs<K: bytemuck::Pod + Sync, V: bytemuck::Pod + Sync>(
    on: Handle,
    result: Result<(Vec<K>, Vec<V>), GpuError>,
    (a_keys, a_vals, b_keys, b_vals): (&[K], &[V], &[K], &[V]),
    names: &[&str],
    case: &str,
) {
    if let Some((keys, vals)) = ok_or_named(on, result, names, case) {
        let (in_keys, in_vals) = (concat(a_keys, b_keys), concat(a_vals, b_vals));
        assert_pairs_permutation((&keys, &vals), (&in_keys, &in_vals), case);
    }
}

/// A search that may be refused (naming `names`): when it is not, every index lies in
/// `[0, len]`.
fn check_indices<I: Copy + TryInto<u64>>(
    on: Handle,
    result: Result<Vec<I>, GpuError>,
    len: usize,
    names: &[&str],
    case: &str,
) {
    if let Some(indices) = ok_or_named(on, result, names, case) {
        assert_indices_within(&indices, len, case);
    }
}

/// Assert that every index lies in `[0, len]`.
fn assert_indices_within<I: Copy + TryInto<u64>>(indices: &[I], len: usize, case: &str) {
    let bad = indices
        .iter()
        .position(|&i| i.try_into().map_or(true, |i| i > len as u64));
    if let Some(at) = bad {
        panic!("{case}: index {at} of the result lies past {len}");
    }
}

/// Run `test` on the GPU under test, with the handle of its calls, a seeded generator and fresh
/// scratches: what every GPU test here starts from.
fn on_gpu(test: impl FnOnce(&Gpu, Handle, &mut StdRng, &mut Scratches)) {
    let gpu = gpu();
    let mut scratches = Scratches {
        merge: MergeScratch::new(),
        sort: MergesortScratch::new(),
        search: SearchScratch::new(),
        batcher: SortScratch::new(),
    };
    test(&gpu, Handle::Own(&gpu), &mut rng(), &mut scratches);
}

/// The scratches of the device-buffer calls, fresh for each test.
struct Scratches {
    /// Of the merges.
    merge: MergeScratch,
    /// Of the mergesorts.
    sort: MergesortScratch,
    /// Of the sorted searches and the load-balancing and interval calls.
    search: SearchScratch,
    /// Of Batcher's sort.
    batcher: SortScratch,
}

// ---- Device-buffer status checks ----

/// The scratches' status check until the runtime's lands: the device-buffer calls leave their
/// input-check status in the scratch, and `check` reads and clears it.
// needs: `MergeScratch::check`, `MergesortScratch::check` and `SearchScratch::check`
// (`pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError>`). Inherent methods take
// precedence over this trait's, so once they exist every `scratch.check(gpu)` below calls them
// and this trait can be deleted; until then a test that needs one fails here.
#[allow(dead_code)] // Unused once the scratches have their own `check`.
trait PendingStatusCheck {
    fn check(&mut self, _gpu: &Gpu) -> Result<(), GpuError> {
        panic!("needs the scratch's `check` (the device-side input status of device-buffer calls)")
    }
}

impl PendingStatusCheck for MergeScratch {}
impl PendingStatusCheck for MergesortScratch {}
impl PendingStatusCheck for SearchScratch {}

/// After a device-buffer failure: the scratch's status is clear, and a valid device sort with a
/// fresh scratch and a host sort on `gpu` both work.
fn assert_next_device_call_works(gpu: &Gpu, status: Result<(), GpuError>, case: &str) {
    status.unwrap_or_else(|e| panic!("{case}: the status was not cleared by the check: {e}"));
    let input: Vec<u32> = (0..NEXT_CALL_KEYS).map(|i| splitmix_u32(7, i)).collect();
    let mut expected = input.clone();
    expected.sort_unstable();
    let mut scratch = MergesortScratch::new();
    let mut keys = Guarded::new(gpu, &input, POISON_U32);
    gpu.sort_device(
        SortBuffers::keys(&mut keys.view_mut()),
        &Less,
        None,
        &mut scratch,
    )
    .and_then(|()| scratch.check(gpu))
    .unwrap_or_else(|e| panic!("after {case}: the next device sort failed: {e}"));
    assert!(
        keys.download(gpu, case) == expected,
        "after {case}: the next device sort is wrong"
    );
    Handle::Own(gpu).assert_next_call_works(case);
}

/// A device-buffer call and its scratch's check: `Ok`, or `InvalidInput` naming one of `names`;
/// on an error the scratch is clear after it and the next device call works.
fn device_ok_or_named(
    gpu: &Gpu,
    call: Result<(), GpuError>,
    check: impl FnMut() -> Result<(), GpuError>,
    names: &[&str],
    case: &str,
) -> bool {
    let mut check = check;
    match call.and_then(|()| check()) {
        Ok(()) => true,
        Err(e) => {
            assert_named(&e, names, case);
            assert_next_device_call_works(gpu, check(), case);
            false
        }
    }
}

/// A device-buffer call on `scratch` that must be refused, by the call or by the scratch's check.
fn device_expect_named(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    call: Result<(), GpuError>,
    names: &[&str],
    case: &str,
) {
    let accepted = device_ok_or_named(gpu, call, || scratch.check(gpu), names, case);
    assert!(
        !accepted,
        "{case}: accepted; expected InvalidInput naming one of {names:?}"
    );
}

// ---- Tunings and sizes ----

/// The sort tunings a host sort of u32 keys runs (the shipped one, the one within static
/// shared memory, and small sorts' at their VT, also as an order whose equivalents may differ
/// takes it), and their pass tiles.
fn sort_tiles_u32() -> Vec<usize> {
    let shipped = MergesortTuning::for_types(size_of::<u32>(), 0);
    let small = MergesortTuning::within_static_shared(size_of::<u32>(), 0);
    let shorter = MergesortTuning::for_small_sorts(size_of::<u32>(), 0);
    vec![
        shipped.tile(),
        small.tile(),
        small.pass_tile(),
        shorter.tile(),
        shorter.pass_tile(),
        shorter.for_order(false).tile(),
        BatcherTuning::for_types(size_of::<u32>(), 0).tile as usize,
    ]
}

/// Tiles of the merges of u32 keys (two-phase, keys and pairs; textbook tile and block).
fn merge_tiles_u32() -> Vec<usize> {
    let textbook = TextbookMergeTuning::for_types(size_of::<u32>(), 0);
    vec![
        MergeTuning::for_types(size_of::<u32>(), 0).tile(),
        MergeTuning::for_types(size_of::<u32>(), size_of::<u32>()).tile(),
        textbook.tile(),
        textbook.block_outputs(),
    ]
}

/// Mergesort tunings with four-way passes from the first pass, so that a few hundred thousand
/// keys run the block sort, two-way and four-way passes: small tiles (many passes), the tuning
/// within static shared memory and the shipped one (its 1024-thread block sort past 48 KiB).
/// And two with two-way passes alone and the lanes automatic, whose tile blocks find their own
/// boundaries: under a comparator that is not trusted each pass but the last records them and
/// the next checks them (passes of one warp, whose searching warp reads the records too, and of
/// four warps).
fn forced_sort_tunings() -> Vec<MergesortTuning> {
    // Block sort, pass and four-way threads, lanes per cut, registers (the compiler's), VT.
    let small = MergesortTuning::forced_u32(64, 32, 32, 1, 0, 3);
    let four_way_now = |t: MergesortTuning| MergesortTuning {
        four_way_min_keys: 0,
        ..t
    };
    // Eight-way tiles (for the trusted `Less` only: the others' plans have none) of 32 threads
    // on the small tiles, and of 512 (the fallback's four-way shape, at its registers).
    let static_u32 = four_way_now(MergesortTuning::within_static_shared(size_of::<u32>(), 0));
    let static_eight_way = MergesortTuning {
        oct_registers: static_u32.quad_registers,
        ..static_u32.with_eight_way(static_u32.quad_threads)
    };
    // Their programs are the small and static tunings' (the plan and lanes are the host's).
    let two_way_own = |t: MergesortTuning| MergesortTuning {
        four_way_min_keys: usize::MAX,
        quad_cut_lanes: 0,
        ..t
    };
    vec![
        small,
        small.with_eight_way(32),
        two_way_own(small),
        two_way_own(static_u32),
        static_u32,
        static_eight_way,
        four_way_now(MergesortTuning::for_types(size_of::<u32>(), 0)),
    ]
}

/// Sizes for a forced tuning: an odd number of passes with a two-way one first, an even number,
/// and a last tile cut short.
fn forced_sizes(tuning: MergesortTuning) -> Vec<usize> {
    let tile = tuning.tile();
    let mut sizes = vec![2 * tile + 5, 5 * tile + 3, 9 * tile - 1];
    sizes.retain(|&n| n <= test_scale());
    sizes
}

// ---- Floats ----

/// The plain calls sort, merge and search floats by the IEEE total order (NaN last), bit for bit
/// as std's `sort_by(total_cmp)`, whatever their NaNs.
#[test]
#[ignore = "needs a CUDA GPU"]
fn floats_plain_calls_follow_the_total_order() {
    on_gpu(|gpu, _, rng, _| {
        for n in boundary_sizes(&sort_tiles_u32(), &LARGE_SIZES) {
            for nan_percent in NAN_PERCENTS {
                let case = |call: &str| format!("{call}, f32, n = {n}, {nan_percent}% NaN");
                let input = f32_keys(rng, n, nan_percent);
                let expected = total_sorted(&input);
                assert_sorts_as_std(&input, &expected, &case("sort"), twophase::sort);
                let sort_by = |k: &mut [f32]| twophase::sort_by(k, &TotalOrder);
                assert_sorts_as_std(&input, &expected, &case("sort_by"), sort_by);
                let mergesort = |k: &mut [f32]| gpu.mergesort(k, &TotalOrder);
                assert_sorts_as_std(&input, &expected, &case("Gpu::mergesort"), mergesort);

                let (a, b) = sorted_halves(&input, |v| v.sort_by(f32::total_cmp));
                let merged =
                    twophase::merge(&a, &b).unwrap_or_else(|e| panic!("{}: {e}", case("merge")));
                assert!(same_bits(&merged, &expected), "{}", case("merge"));
                for bound in [SearchBound::Lower, SearchBound::Upper] {
                    let want = reference_bounds(&a, &b, bound, |x, y| x.total_cmp(y).is_lt());
                    let got = twophase::sorted_search(&a, &b, bound).expect("sorted_search");
                    assert!(got == want, "{}", case(&format!("sorted_search {bound:?}")));
                    let got: Vec<u32> = gpu
                        .sorted_search(&a, &b, bound, &TotalOrder)
                        .expect("Gpu::sorted_search");
                    assert!(
                        got.iter().map(|&i| i as usize).eq(want),
                        "{}",
                        case(&format!("Gpu::sorted_search {bound:?}"))
                    );
                }
            }
        }
        let f64_tile = MergesortTuning::for_types(size_of::<f64>(), 0).tile();
        for n in boundary_sizes(&[f64_tile], &[]) {
            for nan_percent in NAN_PERCENTS {
                let input = f64_keys(rng, n, nan_percent);
                let case = format!("sort, f64, n = {n}, {nan_percent}% NaN");
                assert_sorts_as_std(&input, &total_sorted(&input), &case, twophase::sort);
            }
        }
    });
}

/// `keys` sorted by std's `sort_by(total_cmp)`.
fn total_sorted<K: FloatKey>(keys: &[K]) -> Vec<K> {
    let mut v = keys.to_vec();
    v.sort_by(K::total_cmp);
    v
}

/// Sort a copy of `input` with `sort`: it succeeds, with the bits of `expected`.
fn assert_sorts_as_std<K: DeviceKey>(
    input: &[K],
    expected: &[K],
    case: &str,
    sort: impl FnOnce(&mut [K]) -> Result<(), GpuError>,
) {
    let mut got = input.to_vec();
    sort(&mut got).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(same_bits(&got, expected), "{case}: differs from std");
}

/// The sorts every comparator test runs, under `comp`, on a copy of `keys` and of
/// `(keys, values)`: `Gpu::mergesort` and `Gpu::mergesort_pairs` on `gpu`, `sort_by` (under its
/// two names) and `sort_pairs_by` on the default GPU; each checked as [`check_sort`].
fn check_common_sorts<K: DeviceKey + Sync, C: DeviceComparator<K>>(
    gpu: &Gpu,
    (keys, values): (&[K], &[u32]),
    comp: &C,
    case: &dyn Fn(&str) -> String,
) {
    let own = Handle::Own(gpu);
    check_sort(own, keys, &case("Gpu::mergesort"), |k| {
        gpu.mergesort(k, comp)
    });
    check_sort(Handle::Default, keys, &case("sort_by"), |k| {
        twophase::sort_by(k, comp)
    });
    let pairs = (keys, values);
    let mergesort_pairs = |k: &mut [K], v: &mut [u32]| gpu.mergesort_pairs(k, v, comp);
    check_pairs_sort(own, pairs, &case("Gpu::mergesort_pairs"), mergesort_pairs);
    let sort_pairs_by = |k: &mut [K], v: &mut [u32]| twophase::sort_pairs_by(k, v, comp);
    check_pairs_sort(
        Handle::Default,
        pairs,
        &case("sort_pairs_by"),
        sort_pairs_by,
    );
}

/// Sorts under `<` on floats with NaN (not a strict weak order): `Ok` or `InvalidInput` naming
/// the comparator, and the keys (and pairs) are always a permutation of the input.
#[test]
#[ignore = "needs a CUDA GPU"]
fn floats_partial_order_sorts_keep_a_permutation() {
    on_gpu(|gpu, own, rng, _| {
        let less = partial_less::<f32>();
        for n in boundary_sizes(&sort_tiles_u32(), &LARGE_SIZES) {
            for nan_percent in NAN_PERCENTS {
                let input = f32_keys(rng, n, nan_percent);
                let values = positions(n);
                let case = |call: &str| format!("{call}, f32 `<`, n = {n}, {nan_percent}% NaN");
                check_common_sorts(gpu, (&input, &values), &less, &case);
                for variant in SortVariant::ALL {
                    let sort = |k: &mut [f32]| gpu.sort_variant(variant, k, &less);
                    check_sort(own, &input, &case(variant.name()), sort);
                }
                let batcher = |k: &mut [f32], v: &mut [u32]| {
                    gpu.sort_pairs_variant(SortVariant::Batcher, k, v, &less)
                };
                let c = case("sort_pairs_variant batcher");
                check_pairs_sort(own, (&input, &values), &c, batcher);
            }
        }
        let less = partial_less::<f64>();
        let f64_tile = MergesortTuning::for_types(size_of::<f64>(), 0).tile();
        for n in boundary_sizes(&[f64_tile], &[LARGE_SIZES[0], WIDE_TWO_WAY_KEYS]) {
            for nan_percent in NAN_PERCENTS {
                let input = f64_keys(rng, n, nan_percent);
                let case = format!("Gpu::mergesort, f64 `<`, n = {n}, {nan_percent}% NaN");
                check_sort(own, &input, &case, |k| gpu.mergesort(k, &less));
            }
        }
    });
}

/// Merges and searches of floats with NaN under `<`: a permutation of the inputs, indices within
/// the haystack, or `InvalidInput` naming an input or the comparator.
#[test]
#[ignore = "needs a CUDA GPU"]
fn floats_partial_order_merges_and_searches_stay_in_bounds() {
    on_gpu(|gpu, own, rng, _| {
        let less = partial_less::<f32>();
        let search_tile = SortedSearchTuning::for_key(size_of::<f32>()).tile();
        let mut tiles = merge_tiles_u32();
        tiles.push(search_tile);
        for n in boundary_sizes(&tiles, &LARGE_SIZES) {
            for nan_percent in NAN_PERCENTS {
                let input = f32_keys(rng, n, nan_percent);
                // Halves sorted by the total order (NaN at both ends), and halves whose NaNs sit
                // anywhere among ascending numbers: neither is sorted under `<` in a useful sense.
                let total = sorted_halves(&input, |v| v.sort_by(f32::total_cmp));
                let scattered = sorted_halves(&input, |v| {
                    v.sort_by(f32::total_cmp);
                    let nans = v.iter().filter(|x| x.is_nan()).count();
                    v.rotate_right(nans / 2);
                });
                for (layout, (a, b)) in [
                    ("total-order halves", total),
                    ("NaN-rotated halves", scattered),
                ] {
                    let case = |call: &str| {
                        format!("{call}, f32 `<`, {layout}, n = {n}, {nan_percent}% NaN")
                    };
                    let (av, bv) = (positions(a.len()), positions(b.len()));
                    check_common_merges(gpu, (&a, &b), &less, &case);
                    for variant in MergeVariant::ALL {
                        let merged = gpu.merge_variant(variant, MergeSlices::keys(&a, &b), &less);
                        let c = case(variant.name());
                        check_merge(own, merged, (&a, &b), NAMES_MERGE_ANY, &c);
                    }
                    let merged = gpu.merge_pairs(&a, &av, &b, &bv, &less);
                    let c = case("Gpu::merge_pairs");
                    check_merge_pairs(own, merged, (&a, &av, &b, &bv), NAMES_MERGE_ANY, &c);
                    for bound in [SearchBound::Lower, SearchBound::Upper] {
                        let found: Result<Vec<u32>, _> = gpu.sorted_search(&a, &b, bound, &less);
                        let c = case(&format!("Gpu::sorted_search {bound:?}"));
                        check_indices(own, found, b.len(), NAMES_SEARCH_ANY, &c);
                        let found = twophase::sorted_search_by(&a, &b, bound, &less);
                        let c = case("sorted_search_by");
                        check_indices(Handle::Default, found, b.len(), NAMES_SEARCH_ANY, &c);
                    }
                }
            }
        }
    });
}

/// The merges every comparator test runs on `(a, b)` under `comp`: `Gpu::merge` on `gpu` and
/// `merge_by` on the default GPU, each checked as [`check_merge`] (naming an input or the
/// comparator).
fn check_common_merges<K: DeviceKey, C: DeviceComparator<K>>(
    gpu: &Gpu,
    (a, b): (&[K], &[K]),
    comp: &C,
    case: &dyn Fn(&str) -> String,
) {
    let merged = gpu.merge(a, b, comp);
    check_merge(
        Handle::Own(gpu),
        merged,
        (a, b),
        NAMES_MERGE_ANY,
        &case("Gpu::merge"),
    );
    let merged = twophase::merge_by(a, b, comp);
    check_merge(
        Handle::Default,
        merged,
        (a, b),
        NAMES_MERGE_ANY,
        &case("merge_by"),
    );
}

// ---- Comparators that are not strict weak orders ----

/// Host sorts under comparators that are not strict weak orders: a permutation of the keys and
/// of the (key, value) pairs, or `InvalidInput` naming the comparator.
#[test]
#[ignore = "needs a CUDA GPU"]
fn inconsistent_comparators_sorts_keep_a_permutation() {
    on_gpu(|gpu, _, rng, _| {
        for comp in inconsistent_comparators() {
            let name = comp.name().into_owned();
            for n in boundary_sizes(&sort_tiles_u32(), &LARGE_SIZES) {
                let input = u32_keys(rng, n);
                let values = positions(n);
                let case = |call: &str| format!("{call}, {name}, n = {n}");
                check_common_sorts(gpu, (&input, &values), &comp, &case);
                let batcher = |k: &mut [u32]| {
                    twophase::variants::sort_variant(SortVariant::Batcher, k, &comp)
                };
                let c = case("twophase::variants::sort_variant batcher");
                check_sort(Handle::Default, &input, &c, batcher);
                for variant in SortVariant::ALL {
                    let sort = |k: &mut [u32], v: &mut [u32]| {
                        twophase::variants::sort_pairs_variant(variant, k, v, &comp)
                    };
                    let c = case(&format!(
                        "twophase::variants::sort_pairs_variant {}",
                        variant.name()
                    ));
                    check_pairs_sort(Handle::Default, (&input, &values), &c, sort);
                }
            }
        }
    });
}

/// Device-buffer sorts under comparators that are not strict weak orders, and under `Less` as a
/// control, with every pass kind (forced tunings): guards intact, a permutation (equal to std's
/// sort under `Less`), and a status that is clear or names the comparator.
#[test]
#[ignore = "needs a CUDA GPU"]
fn inconsistent_comparators_device_sorts_keep_a_permutation() {
    on_gpu(|gpu, _, rng, scratch| {
        for tuning in forced_sort_tunings() {
            for n in forced_sizes(tuning) {
                let input = u32_keys(rng, n);
                let mut expected = input.clone();
                expected.sort_unstable();
                let case = format!("Less, n = {n}, {tuning:?}");
                assert!(
                    device_sort(gpu, &mut scratch.sort, tuning, &input, &Less, &case) == expected,
                    "{case}: differs from std"
                );
                for comp in inconsistent_comparators() {
                    let case = format!("{}, n = {n}, {tuning:?}", comp.name());
                    let got = device_sort(gpu, &mut scratch.sort, tuning, &input, &comp, &case);
                    assert_permutation(&got, &input, &case);
                    device_batcher_sort(gpu, &mut scratch.batcher, &input, &comp, &case);
                }
            }
        }
    });
}

/// Batcher's sort of `input` (keys, then pairs) in guarded device buffers: `Ok` or a refusal
/// naming the comparator, and a permutation of the keys and of the pairs either way.
fn device_batcher_sort<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut SortScratch,
    input: &[u32],
    comp: &C,
    case: &str,
) {
    let case = format!("{case}, Batcher");
    let mut keys = Guarded::new(gpu, input, POISON_U32);
    let call = gpu.sort_variant_device(
        SortVariant::Batcher,
        SortBuffers::keys(&mut keys.view_mut()),
        comp,
        scratch,
    );
    ok_or_named(Handle::Own(gpu), call, NAMES_SORT, &case);
    assert_permutation(&keys.download(gpu, &case), input, &case);
    let values = positions(input.len());
    let mut keys = Guarded::new(gpu, input, POISON_U32);
    let mut vals = Guarded::new(gpu, &values, POISON_U32);
    let call = gpu.sort_variant_device(
        SortVariant::Batcher,
        SortBuffers::pairs(&mut keys.view_mut(), &mut vals.view_mut()),
        comp,
        scratch,
    );
    ok_or_named(Handle::Own(gpu), call, NAMES_SORT, &case);
    let (got_keys, got_vals) = (keys.download(gpu, &case), vals.download(gpu, &case));
    assert_pairs_permutation((&got_keys, &got_vals), (input, &values), &case);
}

/// Sort `input` on the device (keys, then key-value pairs with their positions as values) with
/// `tuning` in guarded buffers; assert the guards, the pairs and the status, and return the keys.
fn device_sort<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergesortScratch,
    tuning: MergesortTuning,
    input: &[u32],
    comp: &C,
    case: &str,
) -> Vec<u32> {
    let mut keys = Guarded::new(gpu, input, POISON_U32);
    let call = gpu.sort_device(
        SortBuffers::keys(&mut keys.view_mut()),
        comp,
        Some(tuning),
        scratch,
    );
    let sorted = device_ok_or_named(gpu, call, || scratch.check(gpu), NAMES_SORT, case);
    let got = keys.download(gpu, case);
    if sorted && twophase_gpu::compare::is_trusted(comp) {
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "{case}: not sorted");
    }
    let values = positions(input.len());
    let mut keys = Guarded::new(gpu, input, POISON_U32);
    let mut vals = Guarded::new(gpu, &values, POISON_U32);
    // The keys' tuning where its tiles of pairs fit this device, else the pairs' own (four-way
    // passes from the start all the same).
    let optin = gpu.max_shared_per_block_optin();
    let (key_bytes, value_bytes) = (size_of::<u32>(), size_of::<u32>());
    let fits = tuning.blocksort_shared_bytes(key_bytes, value_bytes) <= optin
        && tuning.quad_shared_bytes(key_bytes, value_bytes) <= optin;
    let pairs_tuning = if fits {
        tuning
    } else {
        MergesortTuning {
            four_way_min_keys: 0,
            ..MergesortTuning::for_device(key_bytes, value_bytes, optin)
        }
    };
    let call = gpu.sort_device(
        SortBuffers::pairs(&mut keys.view_mut(), &mut vals.view_mut()),
        comp,
        Some(pairs_tuning),
        scratch,
    );
    let case = format!("{case}, pairs");
    device_ok_or_named(gpu, call, || scratch.check(gpu), NAMES_SORT, &case);
    let (got_keys, got_vals) = (keys.download(gpu, &case), vals.download(gpu, &case));
    assert_pairs_permutation((&got_keys, &got_vals), (input, &values), &case);
    got
}

/// Merges and sorted searches under comparators that are not strict weak orders, of inputs
/// sorted ascending: a permutation of the inputs, indices within the haystack, or `InvalidInput`
/// naming an input or the comparator; device buffers keep their guards.
#[test]
#[ignore = "needs a CUDA GPU"]
fn inconsistent_comparators_merges_and_searches_stay_in_bounds() {
    on_gpu(|gpu, own, rng, scratch| {
        let mut tiles = merge_tiles_u32();
        tiles.push(SortedSearchTuning::for_key(size_of::<u32>()).tile());
        for comp in inconsistent_comparators() {
            let name = comp.name().into_owned();
            for n in boundary_sizes(&tiles, &LARGE_SIZES) {
                let (a, b) = sorted_halves(&u32_keys(rng, n), |v| v.sort_unstable());
                let (av, bv) = (positions(a.len()), positions(b.len()));
                let pairs = (a.as_slice(), av.as_slice(), b.as_slice(), bv.as_slice());
                let case = |call: &str| format!("{call}, {name}, n = {n}");

                check_common_merges(gpu, (&a, &b), &comp, &case);
                for variant in MergeVariant::ALL {
                    let merged = twophase::variants::merge_variant(
                        variant,
                        MergeSlices::keys(&a, &b),
                        &comp,
                    );
                    let c = case(&format!(
                        "twophase::variants::merge_variant {}",
                        variant.name()
                    ));
                    check_merge(Handle::Default, merged, (&a, &b), NAMES_MERGE_ANY, &c);
                    let merged =
                        gpu.merge_variant(variant, MergeSlices::pairs(&a, &av, &b, &bv), &comp);
                    let c = case(&format!("Gpu::merge_variant pairs {}", variant.name()));
                    check_merge_pairs(own, merged, pairs, NAMES_MERGE_ANY, &c);
                }
                let merged = twophase::merge_pairs_by(&a, &av, &b, &bv, &comp);
                let c = case("merge_pairs_by");
                check_merge_pairs(Handle::Default, merged, pairs, NAMES_MERGE_ANY, &c);

                let found: Result<Vec<u64>, _> =
                    gpu.sorted_search(&a, &b, SearchBound::Lower, &comp);
                let c = case("Gpu::sorted_search");
                check_indices(own, found, b.len(), NAMES_SEARCH_ANY, &c);
                let found = twophase::sorted_search_by(&a, &b, SearchBound::Upper, &comp);
                let c = case("sorted_search_by");
                check_indices(Handle::Default, found, b.len(), NAMES_SEARCH_ANY, &c);

                // The two-phase device merge, then the textbook ones.
                for variant in [
                    None,
                    Some(MergeVariant::Basic),
                    Some(MergeVariant::Tiled),
                    Some(MergeVariant::Circular),
                ] {
                    let c = match variant {
                        None => case("Gpu::merge_device"),
                        Some(variant) => format!(
                            "{}, Gpu::merge_device {}",
                            case("device merges"),
                            variant.name()
                        ),
                    };
                    let s = &mut scratch.merge;
                    let out = device_merge(gpu, s, variant, (&a, &b), &comp, NAMES_MERGE_ANY, &c);
                    if let Some(out) = out {
                        assert_permutation(&out, &concat(&a, &b), &c);
                    }
                }
                let c = format!("{}, Gpu::merge_device pairs", case("device merges"));
                device_merge_pairs(gpu, &mut scratch.merge, pairs, &comp, &c);
                let c = case("Gpu::sorted_search_device");
                let s = &mut scratch.search;
                device_search(gpu, s, (&a, &b), &comp, NAMES_SEARCH_ANY, &c);
            }
        }
    });
}

/// Guarded device copies of `a` and `b`, and a guarded output of `a.len() + b.len()` poisoned
/// elements.
fn guarded_merge_io(gpu: &Gpu, a: &[u32], b: &[u32]) -> [Guarded<u32>; 3] {
    let out = vec![POISON_U32; a.len() + b.len()];
    [a, b, &out].map(|host| Guarded::new(gpu, host, POISON_U32))
}

/// Merge the guarded `a` and `b` into `out` on the device: `Gpu::merge_device`, with the
/// two-phase merge or `variant`.
fn merge_keys_device<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    variant: Option<MergeVariant>,
    (a, b): (&Guarded<u32>, &Guarded<u32>),
    out: &mut Guarded<u32>,
    comp: &C,
) -> Result<(), GpuError> {
    let (a, b, mut out) = (a.view(), b.view(), out.view_mut());
    let buffers = MergeBuffers::keys(&a, &b, &mut out);
    let algorithm = variant.map_or(MergeAlgorithm::TwoPhase(None), MergeAlgorithm::from);
    gpu.merge_device(buffers, comp, algorithm, scratch)
}

/// Merge the guarded pairs `(a, a_vals)` and `(b, b_vals)` into `(out_keys, out_vals)` with
/// `Gpu::merge_device`.
fn merge_pairs_device<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    [a, a_vals, b, b_vals]: [&Guarded<u32>; 4],
    [out_keys, out_vals]: [&mut Guarded<u32>; 2],
    comp: &C,
) -> Result<(), GpuError> {
    let (a, a_vals, b, b_vals) = (a.view(), a_vals.view(), b.view(), b_vals.view());
    let (mut out_keys, mut out_vals) = (out_keys.view_mut(), out_vals.view_mut());
    let buffers = MergeBuffers::pairs(&a, &a_vals, &b, &b_vals, &mut out_keys, &mut out_vals);
    gpu.merge_device(buffers, comp, MergeAlgorithm::TwoPhase(None), scratch)
}

/// The key-value merge of `a` and `b` in guarded device buffers under a comparator that may not
/// be a strict weak order: `Ok` or a refusal naming an input or the comparator, and a
/// permutation of the input pairs when `Ok`.
fn device_merge_pairs<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    (a, av, b, bv): (&[u32], &[u32], &[u32], &[u32]),
    comp: &C,
    case: &str,
) {
    let [da, db, mut out_keys] = guarded_merge_io(gpu, a, b);
    let [dav, dbv, mut out_vals] = guarded_merge_io(gpu, av, bv);
    let inputs = [&da, &dav, &db, &dbv];
    let call = merge_pairs_device(gpu, scratch, inputs, [&mut out_keys, &mut out_vals], comp);
    let merged = device_ok_or_named(gpu, call, || scratch.check(gpu), NAMES_MERGE_ANY, case);
    let (keys, vals) = (out_keys.download(gpu, case), out_vals.download(gpu, case));
    if merged {
        let (in_keys, in_vals) = (concat(a, b), concat(av, bv));
        assert_pairs_permutation((&keys, &vals), (&in_keys, &in_vals), case);
    }
}

/// Merge `a` and `b` in guarded device buffers (the output poisoned first) with
/// [`merge_keys_device`]: `Some` of the output when the call and its status check pass, `None`
/// when one names one of `names`.
fn device_merge<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut MergeScratch,
    variant: Option<MergeVariant>,
    (a, b): (&[u32], &[u32]),
    comp: &C,
    names: &[&str],
    case: &str,
) -> Option<Vec<u32>> {
    let [da, db, mut out] = guarded_merge_io(gpu, a, b);
    let call = merge_keys_device(gpu, scratch, variant, (&da, &db), &mut out, comp);
    let merged = device_ok_or_named(gpu, call, || scratch.check(gpu), names, case);
    let out = out.download(gpu, case);
    merged.then_some(out)
}

/// Sorted search of `needles` in `haystack` in guarded device buffers: the indices (when the
/// call and its status check pass; `None` when one names one of `names`), all within the
/// haystack either way.
fn device_search<C: DeviceComparator<u32>>(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    (needles, haystack): (&[u32], &[u32]),
    comp: &C,
    names: &[&str],
    case: &str,
) -> Option<Vec<u32>> {
    let dn = Guarded::new(gpu, needles, POISON_U32);
    let dh = Guarded::new(gpu, haystack, POISON_U32);
    let mut out = Guarded::new(gpu, &vec![0u32; needles.len()], POISON_U32);
    let call = gpu.sorted_search_device(
        &dn.view(),
        &dh.view(),
        &mut out.view_mut(),
        SearchBound::Lower,
        comp,
        None,
        scratch,
    );
    let found = device_ok_or_named(gpu, call, || scratch.check(gpu), names, case);
    let out = out.download(gpu, case);
    if found {
        assert_indices_within(&out, haystack.len(), case);
    }
    found.then_some(out)
}

// ---- Unsorted inputs ----

/// Ways an input can be unsorted: every pair out of order, or one adjacent pair swapped at the
/// start, at the end, in the middle or across a tile boundary, or the last key the smallest.
#[derive(Clone, Copy, Debug)]
enum Unsorted {
    Reversed,
    SwapFirst,
    SwapLast,
    SwapMiddle,
    SwapAcrossTile,
    LastSmallest,
}

const UNSORTED: [Unsorted; 6] = [
    Unsorted::Reversed,
    Unsorted::SwapFirst,
    Unsorted::SwapLast,
    Unsorted::SwapMiddle,
    Unsorted::SwapAcrossTile,
    Unsorted::LastSmallest,
];

/// `n >= 2` distinct ascending keys made unsorted by `how` (`tile`: where a tile boundary lies).
fn unsorted_u32(rng: &mut StdRng, n: usize, how: Unsorted, tile: usize) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).map(|i| 2 * i + 1).collect();
    let swap_at = |v: &mut Vec<u32>, i: usize| v.swap(i, i + 1);
    match how {
        Unsorted::Reversed => v.reverse(),
        Unsorted::SwapFirst => swap_at(&mut v, 0),
        Unsorted::SwapLast => swap_at(&mut v, n - 2),
        Unsorted::SwapMiddle => swap_at(&mut v, rng.gen_range(0..n - 1)),
        Unsorted::SwapAcrossTile => swap_at(&mut v, (tile - 1).min(n - 2)),
        Unsorted::LastSmallest => v[n - 1] = 0,
    }
    v
}

/// Run `check` on every unsorted case: each size of `boundary_sizes(tiles)` from 2 keys, each
/// way of being unsorted (`tile`: where a tile boundary lies), with the unsorted input as the
/// first operand and then as the second (`sides`: each operand's name and what a refusal of it
/// names); the other operand is sorted, of `n / 2 + 1` keys. `check` gets the label of a call
/// in the case, the names and both operands.
fn for_each_unsorted(
    rng: &mut StdRng,
    (tiles, tile): (&[usize], usize),
    sides: [(&str, &[&str]); 2],
    mut check: impl FnMut(&dyn Fn(&str) -> String, &[&str], &[u32], &[u32]),
) {
    for n in boundary_sizes(tiles, &LARGE_SIZES) {
        if n < 2 {
            continue;
        }
        for how in UNSORTED {
            let bad = unsorted_u32(rng, n, how, tile);
            let good = sorted_u32(rng, n / 2 + 1);
            for (first, (side, names)) in [true, false].into_iter().zip(sides) {
                let (x, y) = if first { (&bad, &good) } else { (&good, &bad) };
                let case = |call: &str| format!("{call}, `{side}` {how:?}, n = {n}");
                check(&case, names, x, y);
            }
        }
    }
}

/// A merge of an unsorted input is refused with `InvalidInput` naming that input, by every
/// merge call (the textbook kernels may instead return a permutation); device merges report it
/// through their scratch's check and keep their guards.
#[test]
#[ignore = "needs a CUDA GPU"]
fn unsorted_merge_inputs_are_named() {
    on_gpu(|gpu, own, rng, scratch| {
        let tiles = (
            &merge_tiles_u32()[..],
            MergeTuning::for_types(size_of::<u32>(), 0).tile(),
        );
        let sides = [("a", NAMES_A), ("b", NAMES_B)];
        for_each_unsorted(rng, tiles, sides, |case, names, a, b| {
            let (av, bv) = (positions(a.len()), positions(b.len()));
            expect_named(own, gpu.merge(a, b, &Less), names, &case("Gpu::merge"));
            expect_named(
                Handle::Default,
                twophase::merge(a, b),
                names,
                &case("merge"),
            );
            let merged = twophase::merge_by(a, b, &Less);
            expect_named(Handle::Default, merged, names, &case("merge_by"));
            let merged = gpu.merge_pairs(a, &av, b, &bv, &Less);
            expect_named(own, merged, names, &case("Gpu::merge_pairs"));
            let merged = twophase::merge_pairs_by(a, &av, b, &bv, &Less);
            expect_named(Handle::Default, merged, names, &case("merge_pairs_by"));
            for variant in MergeVariant::ALL {
                let c = case(&format!("Gpu::merge_variant {}", variant.name()));
                let merged = gpu.merge_variant(variant, MergeSlices::keys(a, b), &Less);
                if variant == MergeVariant::TwoPhase {
                    expect_named(own, merged, names, &c);
                } else {
                    check_merge(own, merged, (a, b), names, &c);
                }
            }
            let c = case("Gpu::merge_device");
            let merged = device_merge(gpu, &mut scratch.merge, None, (a, b), &Less, names, &c);
            assert!(merged.is_none(), "{c}: accepted");
        });
    });
}

/// A sorted search with unsorted needles or an unsorted haystack is refused with `InvalidInput`
/// naming it; device searches report it through their scratch's check, with every index within
/// the haystack and the guards intact.
#[test]
#[ignore = "needs a CUDA GPU"]
fn unsorted_search_inputs_are_named() {
    on_gpu(|gpu, own, rng, scratch| {
        let tile = SortedSearchTuning::for_key(size_of::<u32>()).tile();
        let sides = [("needles", NAMES_NEEDLES), ("haystack", NAMES_HAYSTACK)];
        for_each_unsorted(
            rng,
            (&[tile], tile),
            sides,
            |case, names, needles, haystack| {
                for bound in [SearchBound::Lower, SearchBound::Upper] {
                    let found: Result<Vec<u32>, _> =
                        gpu.sorted_search(needles, haystack, bound, &Less);
                    let c = case(&format!("Gpu::sorted_search {bound:?}"));
                    expect_named(own, found, names, &c);
                }
                let found = twophase::sorted_search(needles, haystack, SearchBound::Lower);
                expect_named(Handle::Default, found, names, &case("sorted_search"));
                for (call, bound) in [
                    ("sorted_search_by Upper", SearchBound::Upper),
                    ("sorted_search_by Lower", SearchBound::Lower),
                ] {
                    let found = twophase::sorted_search_by(needles, haystack, bound, &Less);
                    expect_named(Handle::Default, found, names, &case(call));
                }
                let c = case("Gpu::sorted_search_device");
                let found = device_search(
                    gpu,
                    &mut scratch.search,
                    (needles, haystack),
                    &Less,
                    names,
                    &c,
                );
                assert!(found.is_none(), "{c}: accepted");
            },
        );
    });
}

// ---- Scans and positions ----

/// Bad segment scans for `total` items: not starting at 0, decreasing, past the total, missing,
/// and with `usize::MAX`; large ones with the fault across a load-balancing tile boundary.
fn bad_scans() -> Vec<(&'static str, Vec<usize>, usize)> {
    let tile = LoadBalanceTuning::shipped().tile();
    let mut scans = vec![
        ("non-zero start", vec![1, 2], 4),
        ("decreasing", vec![0, 3, 2], 4),
        ("past the total", vec![0, 5], 4),
        ("no segment", vec![], 3),
        ("usize::MAX", vec![0, usize::MAX], 4),
        ("usize::MAX start", vec![usize::MAX], 4),
    ];
    for segments in boundary_sizes(&[tile], &LARGE_SIZES) {
        if segments < 3 {
            continue;
        }
        // Every segment of size 1 but one that steps back across a tile boundary; then the same
        // with the last start past the total.
        let mut decreasing: Vec<usize> = (0..segments).collect();
        let at = (tile + 1).min(segments - 1);
        decreasing[at] = decreasing[at - 1] - 1;
        scans.push(("large, one decrease", decreasing, segments));
        let past: Vec<usize> = (0..segments).collect();
        scans.push(("large, last start past the total", past, segments - 2));
        let shifted: Vec<usize> = (1..=segments).collect();
        scans.push(("large, starting at 1", shifted, segments + 1));
    }
    scans
}

/// The host load-balancing and interval calls, on a handle of the test's own (`Gpu::…`) or on
/// the default GPU (the crate-root calls), their results dropped: the tests here check errors.
impl Handle<'_> {
    /// The load-balancing search of `scan` (with ranks where `ranks`).
    fn load_balance_search(
        self,
        scan: &[usize],
        total: usize,
        ranks: bool,
    ) -> Result<(), GpuError> {
        match (self, ranks) {
            (Handle::Own(gpu), false) => gpu.load_balance_search::<usize>(scan, total).map(drop),
            (Handle::Own(gpu), true) => gpu
                .load_balance_search_with_ranks::<usize>(scan, total)
                .map(drop),
            (Handle::Default, false) => twophase::load_balance_search(scan, total).map(drop),
            (Handle::Default, true) => {
                twophase::load_balance_search_with_ranks(scan, total).map(drop)
            }
        }
    }

    /// The interval expand of `values` over `scan`.
    fn interval_expand(self, scan: &[usize], values: &[u32], total: usize) -> Result<(), GpuError> {
        match self {
            Handle::Own(gpu) => gpu.interval_expand(scan, values, total).map(drop),
            Handle::Default => twophase::interval_expand(scan, values, total).map(drop),
        }
    }

    /// The interval move of `input` into `out`.
    fn interval_move(
        self,
        moves: IntervalMove<'_, usize>,
        input: &[u32],
        out: &mut [u32],
    ) -> Result<(), GpuError> {
        match self {
            Handle::Own(gpu) => gpu.interval_move(moves, input, out),
            Handle::Default => twophase::interval_move(moves, input, out),
        }
    }
}

/// `Gpu::load_balance_search_device` of the guarded `scan` into the guarded `segments` (and
/// `ranks`, where given).
fn load_balance_device(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    (scan, total): (&Guarded<u32>, usize),
    segments: &mut Guarded<u32>,
    ranks: Option<&mut Guarded<u32>>,
) -> Result<(), GpuError> {
    let mut ranks = ranks.map(Guarded::view_mut);
    let ranks = ranks.as_mut().map(|r| -> &mut dyn DevicePtrMut<u32> { r });
    let segments = &mut segments.view_mut();
    gpu.load_balance_search_device(&scan.view(), total, segments, ranks, None, scratch)
}

/// `Gpu::interval_device` of `op` over the guarded `scan` into the guarded `out`.
fn interval_device<I: DeviceIndex + DeviceRepr>(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    (scan, total): (&Guarded<I>, usize),
    op: Interval<'_, I, u32>,
    out: &mut Guarded<u32>,
) -> Result<(), GpuError> {
    gpu.interval_device(&scan.view(), total, op, &mut out.view_mut(), None, scratch)
}

/// `Gpu::interval_device` of an `Interval::Move` of the guarded `input` by the guarded
/// `gather` and `scatter` positions.
fn interval_move_device<I: DeviceIndex + DeviceRepr>(
    gpu: &Gpu,
    scratch: &mut SearchScratch,
    scan: (&Guarded<I>, usize),
    (gather, scatter, input): (&Guarded<I>, &Guarded<I>, &Guarded<u32>),
    out: &mut Guarded<u32>,
) -> Result<(), GpuError> {
    let op = Interval::Move {
        gather: &gather.view(),
        scatter: &scatter.view(),
        input: &input.view(),
    };
    interval_device(gpu, scratch, scan, op, out)
}

/// Every load-balancing and interval call refuses a bad scan with `InvalidInput` naming
/// `scan`; host outputs are unchanged; device calls report it by their call or their scratch's
/// check, with every segment index within the scan and the guards intact.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_scans_are_named() {
    on_gpu(|gpu, _, _, scratch| {
        for (what, scan, total) in bad_scans() {
            let case = |call: &str| {
                format!(
                    "{call}, scan {what}, {} segments, total {total}",
                    scan.len()
                )
            };
            let values: Vec<u32> = (0..scan.len() as u32).map(|v| v ^ POISON_U32).collect();
            let input = positions(total);

            for (on, prefix) in [(Handle::Own(gpu), "Gpu::"), (Handle::Default, "")] {
                let call = |name: &str| case(&format!("{prefix}{name}"));
                for (name, ranks) in [
                    ("load_balance_search", false),
                    ("load_balance_search_with_ranks", true),
                ] {
                    let found = on.load_balance_search(&scan, total, ranks);
                    expect_named(on, found, NAMES_SCAN, &call(name));
                }
                let expanded = on.interval_expand(&scan, &values, total);
                expect_named(on, expanded, NAMES_SCAN, &call("interval_expand"));
                let mut out = vec![POISON_U32; total];
                let moved = on.interval_move(IntervalMove::new(&scan, total), &input, &mut out);
                expect_named(on, moved, NAMES_SCAN, &call("interval_move"));
                assert!(
                    out.iter().all(|&x| x == POISON_U32),
                    "{}: output written",
                    call("interval_move")
                );
            }

            // The device calls take u32 scans here: usize::MAX becomes u32::MAX.
            let scan32: Vec<u32> = scan
                .iter()
                .map(|&s| u32::try_from(s).unwrap_or(u32::MAX))
                .collect();
            let d_scan = Guarded::new(gpu, &scan32, POISON_U32);
            for with_ranks in [false, true] {
                let mut segments = Guarded::new(gpu, &vec![0u32; total], POISON_U32);
                let mut ranks = Guarded::new(gpu, &vec![0u32; total], POISON_U32);
                let c = case(if with_ranks {
                    "Gpu::load_balance_search_device with ranks"
                } else {
                    "Gpu::load_balance_search_device"
                });
                let s = &mut scratch.search;
                let ranks_out = with_ranks.then_some(&mut ranks);
                let call = load_balance_device(gpu, s, (&d_scan, total), &mut segments, ranks_out);
                device_expect_named(gpu, &mut scratch.search, call, NAMES_SCAN, &c);
                assert_indices_within(&segments.download(gpu, &c), scan.len(), &c);
                if with_ranks {
                    assert_indices_within(&ranks.download(gpu, &c), total, &c);
                }
            }

            let d_values = Guarded::new(gpu, &values, POISON_U32);
            let mut out = Guarded::new(gpu, &vec![POISON_U32; total], POISON_U32);
            let c = case("Gpu::interval_device, Expand");
            let op = Interval::Expand {
                values: &d_values.view(),
            };
            let call = interval_device(gpu, &mut scratch.search, (&d_scan, total), op, &mut out);
            device_expect_named(gpu, &mut scratch.search, call, NAMES_SCAN, &c);
            let expanded = out.download(gpu, &c);
            assert!(
                expanded
                    .iter()
                    .all(|&x| x == POISON_U32 || ((x ^ POISON_U32) as usize) < values.len()),
                "{c}: a value that is no segment's"
            );

            let d_input = Guarded::new(gpu, &input, POISON_U32);
            let identity: Vec<u32> = scan32.clone();
            let d_gather = Guarded::new(gpu, &identity, POISON_U32);
            let d_scatter = Guarded::new(gpu, &identity, POISON_U32);
            let mut out = Guarded::new(gpu, &vec![POISON_U32; total], POISON_U32);
            let c = case("Gpu::interval_device, Move");
            let positions = (&d_gather, &d_scatter, &d_input);
            let call = interval_move_device(
                gpu,
                &mut scratch.search,
                (&d_scan, total),
                positions,
                &mut out,
            );
            device_expect_named(gpu, &mut scratch.search, call, NAMES_SCAN, &c);
            out.download(gpu, &c);

            // A snippet that does nothing: the launch itself must refuse the scan.
            let c = case("Gpu::load_balance_for_each_device");
            // SAFETY: the snippet is empty: it touches no memory.
            let call = unsafe {
                gpu.load_balance_for_each_device(
                    &d_scan.view(),
                    total,
                    &LoadBalanceOp::none(),
                    &[],
                    &mut scratch.search,
                )
            };
            device_expect_named(gpu, &mut scratch.search, call, NAMES_SCAN, &c);
        }
    });
}

/// Positions that break an interval move of a segment of `size` items within `len` elements:
/// one past the end, the end itself, `usize::MAX`, and the one whose `pos + size` wraps to 0.
fn bad_positions(size: usize, len: usize) -> Vec<(&'static str, usize)> {
    vec![
        ("one past the end", len - size + 1),
        ("the end", len),
        ("usize::MAX", usize::MAX),
        ("wrapping pos + size", usize::MAX - size + 1),
    ]
}

/// Interval moves with gather or scatter positions out of range (past the buffer, `usize::MAX`,
/// wrapping) are refused with `InvalidInput` naming `gather` or `scatter`, and leave the output
/// as it was; device moves report them through their scratch's check and keep their guards.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_positions_leave_the_output_unchanged() {
    on_gpu(|gpu, _, rng, scratch| {
        let tile = LoadBalanceTuning::shipped().tile();
        for total in boundary_sizes(&[tile], &LARGE_SIZES) {
            if total < 2 {
                continue;
            }
            // Segments of one or two items; the bad position goes to a segment of two in the middle.
            let mut scan = Vec::new();
            let mut start = 0;
            while start < total {
                scan.push(start);
                start += rng.gen_range(1..=2);
            }
            let victim = scan.len() / 2;
            let size = scan.get(victim + 1).copied().unwrap_or(total) - scan[victim];
            let input: Vec<u32> = (0..total as u32).map(|x| x ^ 0x5555_5555).collect();
            let before: Vec<u32> = (0..total as u32).map(|x| x.wrapping_mul(HASH_A)).collect();
            for (side, names) in [("gather", NAMES_GATHER), ("scatter", NAMES_SCATTER)] {
                for (what, bad) in bad_positions(size, total) {
                    let case = |call: &str| format!("{call}, {side} {what}, total {total}");
                    let mut positions = scan.clone();
                    positions[victim] = bad;
                    let moves = IntervalMove::new(&scan, total);
                    let moves = if side == "gather" {
                        moves.gather(&positions)
                    } else {
                        moves.scatter(&positions)
                    };
                    for (on, call) in [
                        (Handle::Own(gpu), "Gpu::interval_move"),
                        (Handle::Default, "interval_move"),
                    ] {
                        let mut out = before.clone();
                        let moved = on.interval_move(moves, &input, &mut out);
                        expect_named(on, moved, names, &case(call));
                        assert!(out == before, "{}: output changed", case(call));
                    }

                    // Device calls with u64 positions, so that usize::MAX reaches the kernel as is.
                    let scan64: Vec<u64> = scan.iter().map(|&s| s as u64).collect();
                    let pos64: Vec<u64> = positions.iter().map(|&p| p as u64).collect();
                    let d_scan = Guarded::new(gpu, &scan64, u64::MAX);
                    let d_pos = Guarded::new(gpu, &pos64, u64::MAX);
                    let d_own = Guarded::new(gpu, &scan64, u64::MAX);
                    let d_input = Guarded::new(gpu, &input, POISON_U32);
                    let mut out = Guarded::new(gpu, &before, POISON_U32);
                    let c = case("Gpu::interval_device, Move");
                    let positions = if side == "gather" {
                        (&d_pos, &d_own, &d_input)
                    } else {
                        (&d_own, &d_pos, &d_input)
                    };
                    let d_scan = (&d_scan, total);
                    let call =
                        interval_move_device(gpu, &mut scratch.search, d_scan, positions, &mut out);
                    device_expect_named(gpu, &mut scratch.search, call, names, &c);
                    out.download(gpu, &c);
                    let mut out = Guarded::new(gpu, &before, POISON_U32);
                    let c = case("Gpu::interval_device, Gather / Scatter");
                    let (pos, input) = (&d_pos.view(), &d_input.view());
                    let op = if side == "gather" {
                        Interval::Gather { gather: pos, input }
                    } else {
                        Interval::Scatter {
                            scatter: pos,
                            input,
                        }
                    };
                    let call = interval_device(gpu, &mut scratch.search, d_scan, op, &mut out);
                    device_expect_named(gpu, &mut scratch.search, call, names, &c);
                    out.download(gpu, &c);
                }
            }
        }
    });
}

// ---- Mismatched lengths ----

/// Calls whose buffers disagree in length fail with `SizeMismatch` (or `InvalidInput`), host,
/// device and backend-neutral alike, and the handle keeps working.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mismatched_lengths_are_errors() {
    on_gpu(|gpu, own, rng, scratch| {
        let n = 1000;
        let (a, b) = (sorted_u32(rng, n), sorted_u32(rng, n + 1));
        let (av, bv) = (positions(n), positions(n + 1));
        for (what, short) in [("one short", n - 1), ("one long", n + 1), ("empty", 0)] {
            let a_vals = positions(short);
            // As far from `b`'s n + 1 keys as `a_vals` is from `a`'s n.
            let b_vals = positions(if short == 0 { 0 } else { short + 1 });
            let case = |call: &str| format!("{call}, values {what}");
            let merged = gpu.merge_pairs(&a, &a_vals, &b, &bv, &Less);
            expect_mismatch(own, merged, &case("Gpu::merge_pairs"));
            let merged = gpu.merge_pairs(&a, &av, &b, &b_vals, &Less);
            expect_mismatch(own, merged, &case("Gpu::merge_pairs (b)"));
            for variant in MergeVariant::ALL {
                let merged =
                    gpu.merge_variant(variant, MergeSlices::pairs(&a, &a_vals, &b, &bv), &Less);
                let c = case(&format!("Gpu::merge_variant pairs {}", variant.name()));
                expect_mismatch(own, merged, &c);
            }
            let merged = twophase::merge_pairs_by(&a, &a_vals, &b, &bv, &Less);
            expect_mismatch(Handle::Default, merged, &case("merge_pairs_by"));
            let merged = twophase::variants::merge_variant(
                MergeVariant::Basic,
                MergeSlices::pairs(&a, &a_vals, &b, &bv),
                &Less,
            );
            let c = case("twophase::variants::merge_variant pairs");
            expect_mismatch(Handle::Default, merged, &c);

            let (mut keys, mut vals) = (a.clone(), a_vals.clone());
            let sorted = gpu.mergesort_pairs(&mut keys, &mut vals, &Less);
            expect_mismatch(own, sorted, &case("Gpu::mergesort_pairs"));
            assert!(keys == a, "{}: keys changed", case("Gpu::mergesort_pairs"));
            for variant in SortVariant::ALL {
                let sorted = gpu.sort_pairs_variant(variant, &mut keys, &mut vals, &Less);
                let c = case(&format!("Gpu::sort_pairs_variant {}", variant.name()));
                expect_mismatch(own, sorted, &c);
                let sorted =
                    twophase::variants::sort_pairs_variant(variant, &mut keys, &mut vals, &Less);
                let c = case("twophase::variants::sort_pairs_variant");
                expect_mismatch(Handle::Default, sorted, &c);
            }
            let sorted = twophase::sort_pairs_by(&mut keys, &mut vals, &Less);
            expect_mismatch(Handle::Default, sorted, &case("sort_pairs_by"));
            assert!(keys == a, "{}: keys changed", case("free sorts"));
        }

        // Interval calls: values fewer than segments, positions not one per segment, an output
        // shorter than the items.
        let scan: Vec<usize> = (0..n).map(|i| 2 * i).collect();
        let total = 2 * n;
        let input = positions(total);
        let few_values = positions(n - 1);
        for (on, call) in [
            (own, "Gpu::interval_expand, values one short"),
            (Handle::Default, "interval_expand"),
        ] {
            expect_mismatch(on, on.interval_expand(&scan, &few_values, total), call);
        }
        let short_positions = &scan[..n - 1];
        let in_place = IntervalMove::new(&scan, total);
        for (what, moves) in [
            (
                "gather positions one short",
                in_place.gather(short_positions),
            ),
            (
                "scatter positions one short",
                in_place.scatter(short_positions),
            ),
        ] {
            for (on, call) in [
                (own, "Gpu::interval_move"),
                (Handle::Default, "interval_move"),
            ] {
                let mut out = vec![POISON_U32; total];
                let moved = on.interval_move(moves, &input, &mut out);
                expect_mismatch(on, moved, &format!("{call}, {what}"));
                assert!(
                    out.iter().all(|&x| x == POISON_U32),
                    "{call}, {what}: output written"
                );
            }
        }
        for (on, call) in [
            (own, "Gpu::interval_move"),
            (Handle::Default, "interval_move"),
        ] {
            let mut short_out = vec![POISON_U32; total - 1];
            let moved = on.interval_move(in_place, &input, &mut short_out);
            expect_mismatch(on, moved, &format!("{call}, output one short"));
        }

        // Device calls.
        let [da, db, dav, dbv] = [&a, &b, &av, &bv].map(|host| Guarded::new(gpu, host, POISON_U32));
        let short_vals = Guarded::new(gpu, &positions(n - 1), POISON_U32);
        let mut out = Guarded::new(gpu, &vec![0u32; 2 * n], POISON_U32);
        let mut out_vals = Guarded::new(gpu, &vec![0u32; 2 * n + 1], POISON_U32);
        let device_merges = std::iter::once(None).chain(MergeVariant::ALL.map(Some));
        for variant in device_merges {
            let s = &mut scratch.merge;
            let call = merge_keys_device(gpu, s, variant, (&da, &db), &mut out, &Less);
            let c = match variant {
                None => "Gpu::merge_device, output one short".to_owned(),
                Some(variant) => format!("Gpu::merge_device {}, output one short", variant.name()),
            };
            expect_mismatch(own, call, &c);
        }
        let mut out_keys = Guarded::new(gpu, &vec![0u32; 2 * n + 1], POISON_U32);
        let outs = [&mut out_keys, &mut out_vals];
        let s = &mut scratch.merge;
        let call = merge_pairs_device(gpu, s, [&da, &short_vals, &db, &dbv], outs, &Less);
        expect_mismatch(own, call, "Gpu::merge_device pairs, A values one short");
        let mut short_out_vals = Guarded::new(gpu, &vec![0u32; 2 * n], POISON_U32);
        let outs = [&mut out_keys, &mut short_out_vals];
        let s = &mut scratch.merge;
        let call = merge_pairs_device(gpu, s, [&da, &dav, &db, &dbv], outs, &Less);
        expect_mismatch(
            own,
            call,
            "Gpu::merge_device pairs, output values one short",
        );
        let mut keys = Guarded::new(gpu, &a, POISON_U32);
        let mut vals = Guarded::new(gpu, &positions(n - 1), POISON_U32);
        let call = gpu.sort_device(
            SortBuffers::pairs(&mut keys.view_mut(), &mut vals.view_mut()),
            &Less,
            None,
            &mut scratch.sort,
        );
        expect_mismatch(own, call, "Gpu::sort_device pairs, values one short");
        assert!(
            keys.download(gpu, "sort_device pairs") == a,
            "sort_device pairs: keys changed"
        );
        let mut found = Guarded::new(gpu, &vec![0u32; n - 1], POISON_U32);
        let call = gpu.sorted_search_device(
            &da.view(),
            &db.view(),
            &mut found.view_mut(),
            SearchBound::Lower,
            &Less,
            None,
            &mut scratch.search,
        );
        expect_mismatch(own, call, "Gpu::sorted_search_device, output one short");
        let scan32: Vec<u32> = scan.iter().map(|&s| s as u32).collect();
        let d_scan = Guarded::new(gpu, &scan32, POISON_U32);
        let d_scan = (&d_scan, total);
        let mut segments = Guarded::new(gpu, &vec![0u32; total - 1], POISON_U32);
        let s = &mut scratch.search;
        let call = load_balance_device(gpu, s, d_scan, &mut segments, None);
        expect_mismatch(
            own,
            call,
            "Gpu::load_balance_search_device, segments one short",
        );
        let mut segments = Guarded::new(gpu, &vec![0u32; total], POISON_U32);
        let mut ranks = Guarded::new(gpu, &vec![0u32; total + 1], POISON_U32);
        let s = &mut scratch.search;
        let call = load_balance_device(gpu, s, d_scan, &mut segments, Some(&mut ranks));
        expect_mismatch(
            own,
            call,
            "Gpu::load_balance_search_device with ranks, ranks one long",
        );
        let few = Guarded::new(gpu, &few_values, POISON_U32);
        let mut expanded = Guarded::new(gpu, &vec![0u32; total], POISON_U32);
        let op = Interval::Expand {
            values: &few.view(),
        };
        let call = interval_device(gpu, &mut scratch.search, d_scan, op, &mut expanded);
        expect_mismatch(own, call, "Gpu::interval_device, Expand, values one short");
        let d_input = Guarded::new(gpu, &input, POISON_U32);
        let short_gather = Guarded::new(gpu, &scan32[..n - 1], POISON_U32);
        let mut moved = Guarded::new(gpu, &vec![0u32; total], POISON_U32);
        let op = Interval::Gather {
            gather: &short_gather.view(),
            input: &d_input.view(),
        };
        let call = interval_device(gpu, &mut scratch.search, d_scan, op, &mut moved);
        expect_mismatch(
            own,
            call,
            "Gpu::interval_device, Gather, positions one short",
        );
        for (buffer, case) in [
            (&out, "merge output"),
            (&expanded, "expand output"),
            (&moved, "gather output"),
        ] {
            buffer.download(gpu, case);
        }
    });
}

// ---- User code checked at compile time ----
//
// The user keys below give `device_key!` a CUDA definition that does not match their Rust layout
// on purpose: the generated program's layout check must turn that into a compile error.

/// A 4-byte Rust key whose CUDA definition declares 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Narrow {
    key: u32,
}

twophase::device_key!(Narrow => "narrow", "struct narrow { unsigned int key; unsigned int pad[3]; };");

/// A 16-byte Rust key whose CUDA definition declares 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Wide {
    key: u32,
    rest: [u32; 3],
}

twophase::device_key!(Wide => "wide", "struct wide { unsigned int key; };");

/// An 8-byte Rust key aligned to 4 whose CUDA definition is aligned to 8 (same size).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Misaligned {
    key: u32,
    tag: u32,
}

twophase::device_key!(
    Misaligned => "misaligned",
    "struct __align__(8) misaligned { unsigned int key; unsigned int tag; };"
);

/// A call that returns nothing of interest here.
type Call<'a> = Box<dyn FnOnce() -> Result<(), GpuError> + 'a>;

/// Run every host primitive on `keys` under `comp` and assert that each is a compile error with
/// a log, which names `type_name` (besides in the program's own name) when one is given; after
/// each, the next valid call on the handle works.
fn expect_compile_errors<K, C>(
    gpu: &Gpu,
    keys: &[K],
    comp: &C,
    label: &str,
    type_name: Option<&str>,
) where
    K: DeviceKey,
    C: DeviceComparator<K>,
{
    let (a, b) = keys.split_at(keys.len() / 2);
    let values = positions(keys.len());
    let own = Handle::Own(gpu);
    let calls: Vec<(&str, Handle, Call)> = vec![
        (
            "Gpu::mergesort",
            own,
            Box::new(|| gpu.mergesort(&mut keys.to_vec(), comp)),
        ),
        (
            "Gpu::mergesort_pairs",
            own,
            Box::new(|| gpu.mergesort_pairs(&mut keys.to_vec(), &mut values.clone(), comp)),
        ),
        (
            "Gpu::sort_variant batcher",
            own,
            Box::new(|| gpu.sort_variant(SortVariant::Batcher, &mut keys.to_vec(), comp)),
        ),
        (
            "Gpu::merge",
            own,
            Box::new(|| gpu.merge(a, b, comp).map(drop)),
        ),
        (
            "Gpu::merge_pairs",
            own,
            Box::new(|| {
                let (av, bv) = values.split_at(a.len());
                gpu.merge_pairs(a, av, b, bv, comp).map(drop)
            }),
        ),
        (
            "Gpu::sorted_search",
            own,
            Box::new(|| {
                let found: Vec<u32> = gpu.sorted_search(a, b, SearchBound::Lower, comp)?;
                drop(found);
                Ok(())
            }),
        ),
        (
            "twophase::sort_by",
            Handle::Default,
            Box::new(|| twophase::sort_by(&mut keys.to_vec(), comp)),
        ),
    ];
    let textbook = [
        MergeVariant::Basic,
        MergeVariant::Tiled,
        MergeVariant::Circular,
    ];
    let textbook = textbook.map(|variant| {
        let merge: Call = Box::new(move || {
            gpu.merge_variant(variant, MergeSlices::keys(a, b), comp)
                .map(drop)
        });
        (format!("Gpu::merge_variant {}", variant.name()), own, merge)
    });
    let calls = calls
        .into_iter()
        .map(|(call, on, run)| (call.to_owned(), on, run))
        .chain(textbook);
    for (call, on, run) in calls {
        let case = format!("{label}, {call}");
        let (program, log) = expect_compile_error(on, run(), &case);
        if let Some(type_name) = type_name {
            let said = log.replace(&program, "").to_lowercase();
            assert!(
                said.contains(type_name),
                "{case}: the compile error should name `{type_name}`:\n{log}"
            );
        }
    }
}

/// A user key whose CUDA definition differs from the Rust layout (smaller, larger, or aligned
/// differently) is a compile error naming the type, for every primitive: never a fault.
#[test]
#[ignore = "needs a CUDA GPU"]
fn layout_mismatched_user_key_is_a_compile_error() {
    on_gpu(|gpu, _, _, _| {
        let n = MergeTuning::for_types(size_of::<Narrow>(), 0).tile() + 7;
        let label = "4-byte Rust key, 16-byte CUDA key";
        let narrow = |key| Narrow { key };
        expect_layout_errors(gpu, n, ("narrow", label), narrow, |a, b| a.key < b.key);
        let label = "16-byte Rust key, 4-byte CUDA key";
        let wide = |key| Wide {
            key,
            rest: [key; 3],
        };
        expect_layout_errors(gpu, n, ("wide", label), wide, |a, b| a.key < b.key);
        let label = "4-aligned Rust key, 8-aligned CUDA key";
        let misaligned = |key| Misaligned { key, tag: key };
        expect_layout_errors(gpu, n, ("misaligned", label), misaligned, |a, b| {
            a.key < b.key
        });
    });
}

/// [`expect_compile_errors`] of the keys `key(n - 1)` down to `key(0)` of a user type whose CUDA
/// name is `type_name` (the error must name it), under the comparator `is_less` (CUDA body
/// `return a.key < b.key;`).
fn expect_layout_errors<K: DeviceKey>(
    gpu: &Gpu,
    n: usize,
    (type_name, label): (&str, &str),
    key: impl Fn(u32) -> K,
    is_less: fn(&K, &K) -> bool,
) {
    let keys: Vec<K> = (0..n as u32).rev().map(key).collect();
    let name = format!("{type_name}_less");
    let comp = CudaComparator::new(&name, "return a.key < b.key;", is_less);
    expect_compile_errors(gpu, &keys, &comp, label, Some(type_name));
}

/// [`expect_compile_errors`] of `keys` random u32 keys under the comparator `name` whose CUDA
/// body is `body` (its Rust predicate `<`).
fn expect_snippet_errors(name: &str, body: &str, keys: usize) {
    let keys = u32_keys(&mut rng(), keys);
    let comp = U32Comparator::new(name, body, |a, b| a < b);
    expect_compile_errors(&gpu(), &keys, &comp, &format!("snippet `{body}`"), None);
}

/// A comparator snippet without `return` (NVRTC only warns) is a compile error carrying NVRTC's
/// log, for every primitive.
#[test]
#[ignore = "needs a CUDA GPU"]
fn snippet_without_return_is_a_compile_error() {
    let keys = MergeTuning::for_types(size_of::<u32>(), 0).tile() + 7;
    expect_snippet_errors("adv_no_return", "a < b;", keys);
}

/// A comparator snippet that does not compile is a compile error whose log is not empty.
#[test]
#[ignore = "needs a CUDA GPU"]
fn snippet_that_does_not_compile_carries_the_log() {
    let keys = SortedSearchTuning::for_key(size_of::<u32>()).tile() + 7;
    expect_snippet_errors("adv_syntax_error", "return a <<< b;", keys);
}

/// Zero-sized values (`()`) are carried (the keys sorted and merged as without values) or
/// refused with `InvalidInput`: never a fault.
#[test]
#[ignore = "needs a CUDA GPU"]
fn zero_sized_values_are_handled_or_refused() {
    on_gpu(|gpu, own, rng, _| {
        let zero_sized: &[&str] = &["zero-sized", "value"];
        for n in boundary_sizes(
            &[MergesortTuning::within_static_shared(size_of::<u32>(), 0).tile()],
            &[],
        ) {
            let input = u32_keys(rng, n);
            let mut expected = input.clone();
            expected.sort_unstable();
            let (mut keys, mut units) = (input.clone(), vec![(); n]);
            let sorted = gpu.mergesort_pairs(&mut keys, &mut units, &Less);
            let case = format!("Gpu::mergesort_pairs with () values, n = {n}");
            if ok_or_named(own, sorted, zero_sized, &case).is_some() {
                assert!(keys == expected, "{case}: keys not sorted");
            } else {
                assert_permutation(&keys, &input, &case);
            }
            let (a, b) = sorted_halves(&input, |v| v.sort_unstable());
            let (au, bu) = (vec![(); a.len()], vec![(); b.len()]);
            let merged = gpu.merge_pairs(&a, &au, &b, &bu, &Less);
            let case = format!("Gpu::merge_pairs with () values, n = {n}");
            if let Some((keys, units)) = ok_or_named(own, merged, zero_sized, &case) {
                assert!(keys == expected && units.len() == n, "{case}: wrong merge");
            }
            let expanded = gpu.interval_expand(&[0usize], &[()], n);
            let case = format!("Gpu::interval_expand of () values, n = {n}");
            if let Some(units) = ok_or_named(own, expanded, zero_sized, &case) {
                assert_eq!(units.len(), n, "{case}");
            }
        }
    });
}

// ---- Small fixed runs for racecheck, synccheck and initcheck ----

/// The mergesort block sort and every pass kind (two-way, four-way, and eight-way under the
/// trusted `Less`), keys and pairs, under
/// `Less`, `<=` and a hash comparator (whose fallback paths have barriers of their own), at
/// fixed sizes small enough for racecheck: equal to std's sort under `Less`, else a permutation.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tiles_block_sort_and_both_pass_kinds() {
    on_gpu(|gpu, _, rng, scratch| {
        let comps = inconsistent_comparators();
        for tuning in forced_sort_tunings() {
            // Five tiles: a two-way pass, then a four-way one (or, for `Less` with eight-way
            // tiles, one eight-way pass); two tiles (one four-way pass) where five would be too
            // many keys for racecheck.
            let tile = tuning.tile();
            let n = if 4 * tile + 5 <= TILES_MAX_KEYS {
                4 * tile + 5
            } else {
                2 * tile + 5
            };
            let plan = tuning.pass_plan(n, true);
            let input = u32_keys(rng, n);
            let mut expected = input.clone();
            expected.sort_unstable();
            let case = format!("Less, n = {n}, {plan:?}, {tuning:?}");
            assert!(
                device_sort(gpu, &mut scratch.sort, tuning, &input, &Less, &case) == expected,
                "{case}: differs from std"
            );
            for comp in &comps[..2] {
                let case = format!("{}, n = {n}, {tuning:?}", comp.name());
                let got = device_sort(gpu, &mut scratch.sort, tuning, &input, comp, &case);
                assert_permutation(&got, &input, &case);
            }
        }
    });
}

/// The sorted search's partition and tile kernels at tile boundaries, both bounds, valid and
/// unsorted needles, small enough for racecheck.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tiles_sorted_search() {
    on_gpu(|gpu, _, rng, scratch| {
        let tile = SortedSearchTuning::for_key(size_of::<u32>()).tile();
        for (needles_len, haystack_len) in [
            (tile - 1, tile + 1),
            (3 * tile + 7, 2 * tile + 1),
            (1, 3 * tile),
        ] {
            let needles = sorted_u32(rng, needles_len);
            let haystack = sorted_u32(rng, haystack_len);
            for bound in [SearchBound::Lower, SearchBound::Upper] {
                let want = reference_bounds(&needles, &haystack, bound, u32::lt);
                let found: Vec<u32> = gpu
                    .sorted_search(&needles, &haystack, bound, &Less)
                    .expect("sorted_search");
                assert!(
                    found.iter().map(|&i| i as usize).eq(want),
                    "{needles_len} in {haystack_len}, {bound:?}: differs"
                );
            }
            let bad = unsorted_u32(rng, needles_len.max(2), Unsorted::Reversed, tile);
            for (what, needles, names) in [
                ("", &needles, &[][..]),
                ("reversed needles, ", &bad, NAMES_NEEDLES),
            ] {
                let case = format!("device, {what}{needles_len} in {haystack_len}");
                let s = &mut scratch.search;
                let found = device_search(gpu, s, (needles, &haystack), &Less, names, &case);
                let (valid, wrong) = match names {
                    [] => (true, "valid search refused"),
                    _ => (false, "accepted"),
                };
                assert!(found.is_some() == valid, "{case}: {wrong}");
            }
        }
    });
}

/// The load-balancing tiles (search, with ranks, expand, move) at tile boundaries with empty
/// segments, small enough for racecheck, against brute force.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tiles_load_balance() {
    on_gpu(|gpu, _, rng, _| {
        let tile = LoadBalanceTuning::shipped().tile();
        for total in [tile - 1, tile + 1, 3 * tile + 7] {
            // Sizes 0 to 3: many empty segments, tiles made mostly of segment starts.
            let mut scan = Vec::new();
            let mut start = 0;
            while start < total {
                scan.push(start);
                start += rng.gen_range(0..=3);
            }
            let mut want = Vec::with_capacity(total);
            for (s, &begin) in scan.iter().enumerate() {
                let end = scan.get(s + 1).copied().unwrap_or(total);
                want.extend((begin..end).map(|i| (s, i - begin)));
            }
            let pairs = twophase::load_balance_search_with_ranks(&scan, total).expect("with ranks");
            assert!(
                pairs == want,
                "total {total}: load-balancing search with ranks differs"
            );
            let segments = gpu
                .load_balance_search(&scan, total)
                .expect("load_balance_search");
            assert!(
                segments.iter().copied().eq(want.iter().map(|p| p.0)),
                "total {total}: segments differ"
            );
            let values: Vec<u32> = (0..scan.len() as u32)
                .map(|v| v.wrapping_mul(HASH_A))
                .collect();
            let expanded = gpu
                .interval_expand(&scan, &values, total)
                .expect("interval_expand");
            assert!(
                expanded
                    .iter()
                    .copied()
                    .eq(want.iter().map(|p| values[p.0])),
                "total {total}: expand differs"
            );
            let input = positions(total);
            let mut out = vec![POISON_U32; total];
            gpu.interval_move(
                IntervalMove::new(&scan, total).gather(&scan).scatter(&scan),
                &input,
                &mut out,
            )
            .expect("interval_move");
            assert!(out == input, "total {total}: identity move differs");
        }
    });
}

/// Host-slice calls of every primitive, from large to small and back, so that the staging
/// buffers are reused partly filled: for initcheck (no read of device memory never written).
#[test]
#[ignore = "needs a CUDA GPU"]
fn staging_host_slice_calls() {
    on_gpu(|gpu, _, rng, _| {
        for n in [100_003, 7, 50_001, 1, 12_345] {
            let n = n.min(test_scale());
            let input = u32_keys(rng, n);
            let mut expected = input.clone();
            expected.sort_unstable();
            let mut keys = input.clone();
            gpu.mergesort(&mut keys, &Less).expect("mergesort");
            assert!(keys == expected, "n = {n}: mergesort");
            let (mut keys, mut vals) = (input.clone(), positions(n));
            gpu.mergesort_pairs(&mut keys, &mut vals, &Less)
                .expect("mergesort_pairs");
            assert!(keys == expected, "n = {n}: mergesort_pairs");
            let mut keys = input.clone();
            gpu.sort_variant(SortVariant::Batcher, &mut keys, &Less)
                .expect("batcher");
            assert!(keys == expected, "n = {n}: batcher");
            let (a, b) = sorted_halves(&input, |v| v.sort_unstable());
            assert!(
                gpu.merge(&a, &b, &Less).expect("merge") == expected,
                "n = {n}: merge"
            );
            let (av, bv) = (positions(a.len()), positions(b.len()));
            let (merged, _) = gpu
                .merge_pairs(&a, &av, &b, &bv, &Less)
                .expect("merge_pairs");
            assert!(merged == expected, "n = {n}: merge_pairs");
            for variant in MergeVariant::ALL {
                let merged = gpu
                    .merge_variant(variant, MergeSlices::keys(&a, &b), &Less)
                    .expect("merge_variant");
                assert!(merged == expected, "n = {n}: {}", variant.name());
            }
            let found: Vec<u32> = gpu
                .sorted_search(&a, &b, SearchBound::Upper, &Less)
                .expect("sorted_search");
            assert_indices_within(&found, b.len(), "sorted_search");
            let scan: Vec<usize> = (0..n).step_by(3).collect();
            let segments = gpu
                .load_balance_search(&scan, n)
                .expect("load_balance_search");
            assert!(
                segments.iter().enumerate().all(|(i, &s)| s == i / 3),
                "n = {n}: segments"
            );
            let mut out = vec![POISON_U32; n];
            gpu.interval_move(IntervalMove::new(&scan, n), &input, &mut out)
                .expect("interval_move");
            assert!(out == input, "n = {n}: interval_move");
        }
    });
}

// ---- The checks themselves (no GPU needed) ----

/// The multiset checks catch a lost or duplicated key and a value moved to another key, and the
/// adversarial inputs are what their names say: unsorted inputs are unsorted, bad scans and
/// positions break the rules, the comparators are not strict weak orders.
#[test]
fn checks_catch_lost_keys_and_inputs_are_adversarial() {
    let lost = std::panic::catch_unwind(|| assert_permutation(&[1u32, 2, 2], &[1, 2, 3], "lost"));
    assert!(lost.is_err(), "a duplicated key over a lost one passed");
    let nan = f32::from_bits(F32_NANS[1]);
    let nans = std::panic::catch_unwind(|| assert_permutation(&[f32::NAN], &[nan], "nan"));
    assert!(nans.is_err(), "two NaN payloads compared equal");
    let moved = std::panic::catch_unwind(|| {
        assert_pairs_permutation((&[1u32, 2], &[20u32, 10]), (&[1, 2], &[10, 20]), "moved")
    });
    assert!(moved.is_err(), "values swapped between keys passed");
    assert_pairs_permutation(
        (&[2u32, 1], &[20u32, 10]),
        (&[1, 2], &[10, 20]),
        "reordered",
    );

    let mut rng = rng();
    for n in [2, 3, 100, 10_000] {
        for how in UNSORTED {
            let v = unsorted_u32(&mut rng, n, how, 64);
            assert!(
                v.windows(2).any(|w| w[0] > w[1]),
                "{how:?}, n = {n}: sorted"
            );
        }
    }
    for (what, scan, total) in bad_scans() {
        let bad = (scan.is_empty() && total > 0)
            || scan.first().is_some_and(|&s| s != 0)
            || scan.windows(2).any(|w| w[0] > w[1])
            || scan.last().is_some_and(|&s| s > total);
        assert!(bad, "scan {what} is valid");
    }
    for size in [1, 2] {
        for (what, pos) in bad_positions(size, 10) {
            let end = pos.checked_add(size);
            assert!(end.is_none_or(|e| e > 10), "position {what} fits");
        }
    }
    let keys: Vec<u32> = (0..16).collect();
    for comp in inconsistent_comparators() {
        let less = |a: &u32, b: &u32| comp.is_less(a, b);
        let broken = keys.iter().any(|a| less(a, a))
            || keys
                .iter()
                .any(|a| keys.iter().any(|b| less(a, b) && less(b, a)))
            || keys.iter().any(|a| {
                keys.iter()
                    .any(|b| keys.iter().any(|c| less(a, b) && less(b, c) && !less(a, c)))
            });
        assert!(broken, "{} is a strict weak order on 0..16", comp.name());
    }
}
