//! The front door: backend-neutral calls in std's vocabulary, on the GPU when one is present.
//!
//! Each call runs on the default GPU (device 0, [`crate::gpu::default_gpu`]) when this machine has
//! one, and on the CPU backend ([`crate::cpu`]) otherwise. A GPU that is present but fails (a
//! compile error, out of memory, a lost context) returns its error: there is no silent fallback.
//! Both backends give the same results (bit-identical to std's stable sort on valid input) and
//! the same errors, naming the argument.

use twophase_gpu::compare::is_trusted;
use twophase_gpu::error::check_len;
use twophase_gpu::load_balance::IntervalMove;
use twophase_gpu::runtime::status::messages;
use twophase_gpu::search::check_values_per_segment;
use twophase_gpu::segmented_sort::{segments_problem, Segments};
use twophase_gpu::{DeviceComparator, DeviceKey, DeviceValue, PrimitiveKey};

use crate::cpu::sort::RunSort;
use crate::gpu::Gpu;
use crate::Error;
use crate::SearchBound;

/// The GPU the calls run on: `None` only when this machine has no usable GPU (no driver library,
/// no device). Any other failure to open it (a lost context the driver will not reopen, out of
/// memory) is returned: the calls never fall back to the CPU after a GPU error.
fn present_gpu() -> Result<Option<&'static Gpu>, Error> {
    match crate::gpu::gpu() {
        Ok(gpu) => Ok(Some(gpu)),
        Err(Error::NoDriver | Error::NoDevice(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Stable sort in place in the keys' natural order (floats by the IEEE total order, NaN last, as
/// `sort_by(f32::total_cmp)`): [`sort_by`] with [`PrimitiveKey::Ascending`].
pub fn sort<K: PrimitiveKey>(keys: &mut [K]) -> Result<(), Error> {
    sort_by(keys, &K::Ascending::default())
}

/// Stable sort of key-value pairs in place in the keys' natural order: [`sort_pairs_by`] with
/// [`PrimitiveKey::Ascending`].
pub fn sort_pairs<K: PrimitiveKey, V: DeviceValue>(
    keys: &mut [K],
    values: &mut [V],
) -> Result<(), Error> {
    sort_pairs_by(keys, values, &K::Ascending::default())
}

/// Stable merge of two slices ascending in the keys' natural order: [`merge_by`] with
/// [`PrimitiveKey::Ascending`].
pub fn merge<K: PrimitiveKey>(a: &[K], b: &[K]) -> Result<Vec<K>, Error> {
    merge_by(a, b, &K::Ascending::default())
}

/// Each needle's lower or upper bound in the haystack, both ascending in the keys' natural order:
/// [`sorted_search_by`] with [`PrimitiveKey::Ascending`].
pub fn sorted_search<K: PrimitiveKey>(
    needles: &[K],
    haystack: &[K],
    bound: SearchBound,
) -> Result<Vec<usize>, Error> {
    sorted_search_by(needles, haystack, bound, &K::Ascending::default())
}

/// Which backend the backend-neutral calls at the crate root run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The default GPU (device 0).
    Gpu,
    /// The CPU backend (`twophase::cpu`), used when this machine has no usable GPU.
    Cpu,
}

/// The backend the crate-root calls use here: the GPU when one is present, else the CPU.
pub fn backend() -> Backend {
    match present_gpu() {
        Ok(None) => Backend::Cpu,
        // A GPU that is present but failed still answers here: the calls return its error.
        Ok(Some(_)) | Err(_) => Backend::Gpu,
    }
}

/// Backend-neutral merge: on the GPU when one is present, else on the CPU backend with the
/// comparator's Rust predicate. A GPU that is present but fails (a compile error, out of memory)
/// returns its error: there is no silent fallback.
///
/// Both backends return the same errors: `a` or `b` not sorted under `comp` gives
/// [`Error::InvalidInput`] with [`messages::A_UNSORTED`] / [`messages::B_UNSORTED`] (both,
/// joined by "; ", when both are). The CPU checks every adjacent pair first, in O(n).
pub fn merge_by<K: DeviceKey, C: DeviceComparator<K>>(
    a: &[K],
    b: &[K],
    comp: &C,
) -> Result<Vec<K>, Error> {
    match present_gpu()? {
        Some(gpu) => gpu.merge(a, b, comp),
        None => {
            let inputs = [(a, messages::A_UNSORTED), (b, messages::B_UNSORTED)];
            let is_less = cpu_predicate_of_sorted(comp, inputs)?;
            Ok(crate::cpu::merge_by(a, b, is_less))
        }
    }
}

/// Backend-neutral key-value merge: GPU when present, else the CPU backend. Errors as
/// [`merge_by`] ([`messages::A_KEYS_UNSORTED`], [`messages::B_KEYS_UNSORTED`]), and
/// [`Error::SizeMismatch`] when a key slice and its value slice differ in length.
pub fn merge_pairs_by<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    a_keys: &[K],
    a_vals: &[V],
    b_keys: &[K],
    b_vals: &[V],
    comp: &C,
) -> Result<(Vec<K>, Vec<V>), Error> {
    match present_gpu()? {
        Some(gpu) => gpu.merge_pairs(a_keys, a_vals, b_keys, b_vals, comp),
        None => {
            check_len("A values", a_keys.len(), a_vals.len())?;
            check_len("B values", b_keys.len(), b_vals.len())?;
            let inputs = [
                (a_keys, messages::A_KEYS_UNSORTED),
                (b_keys, messages::B_KEYS_UNSORTED),
            ];
            let is_less = cpu_predicate_of_sorted(comp, inputs)?;
            Ok(crate::cpu::merge_pairs_by(
                a_keys, a_vals, b_keys, b_vals, is_less,
            ))
        }
    }
}

/// The sort the CPU backend may run on `comp`'s order: std's sorts only for a trusted order
/// ([`is_trusted`]: the built-in comparators, or one the caller vouched for), which they cannot
/// panic on; its unstable sort only where equivalent keys are identical as well.
fn cpu_run_sort<K: DeviceKey, C: DeviceComparator<K>>(comp: &C) -> RunSort {
    match (is_trusted(comp), comp.equivalents_identical()) {
        (false, _) => RunSort::BlockSort,
        (true, false) => RunSort::StdStable,
        (true, true) => RunSort::StdUnstable,
    }
}

/// Backend-neutral stable sort in place: GPU when present, else the CPU backend.
///
/// A comparator that is not a strict weak order leaves `keys` a permutation of its input in
/// unspecified order, on both backends; where the sort detects it (its merges find their own
/// sorted runs out of order), the call returns [`Error::InvalidInput`] with
/// [`messages::ORDER_INCONSISTENT`]. Detection is best effort: `Ok` does not prove the order
/// consistent.
pub fn sort_by<K: DeviceKey, C: DeviceComparator<K>>(
    keys: &mut [K],
    comp: &C,
) -> Result<(), Error> {
    match present_gpu()? {
        Some(gpu) => gpu.mergesort(keys, comp),
        None => {
            let consistent = crate::cpu::sort::mergesort_runs_checked(
                keys,
                &|x: &K, y: &K| comp.is_less(x, y),
                cpu_run_sort(comp),
            );
            check_cpu_consistent(consistent)
        }
    }
}

/// Backend-neutral stable sort of key-value pairs in place: GPU when present, else the CPU.
/// Errors as [`sort_by`], and [`Error::SizeMismatch`] (nothing moved) when `keys` and
/// `values` differ in length.
pub fn sort_pairs_by<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    keys: &mut [K],
    values: &mut [V],
    comp: &C,
) -> Result<(), Error> {
    match present_gpu()? {
        Some(gpu) => gpu.mergesort_pairs(keys, values, comp),
        None => {
            check_len("mergesort values", keys.len(), values.len())?;
            let consistent = crate::cpu::sort::mergesort_pairs_runs_checked(
                keys,
                values,
                &|x: &K, y: &K| comp.is_less(x, y),
                cpu_run_sort(comp),
            );
            check_cpu_consistent(consistent)
        }
    }
}

/// Backend-neutral stable sort of each segment of `keys` in the keys' natural order:
/// [`segmented_sort_by`] with [`PrimitiveKey::Ascending`].
pub fn segmented_sort<K: PrimitiveKey>(
    keys: &mut [K],
    segments: Segments<'_>,
) -> Result<(), Error> {
    segmented_sort_by(keys, segments, &K::Ascending::default())
}

/// Backend-neutral stable sort of each segment of `keys` in place under `comp`, all segments at
/// once: GPU when present, else the CPU backend. Keys outside every segment (only with
/// [`Segments::Ranges`]) stay where they are.
///
/// Invalid `segments` give [`Error::InvalidInput`] naming the fault, with no key moved. A
/// comparator that is not a strict weak order leaves each segment a permutation of its keys, and
/// where the sort detects it, [`Error::InvalidInput`] with [`messages::ORDER_INCONSISTENT`], as
/// [`sort_by`].
pub fn segmented_sort_by<K: DeviceKey, C: DeviceComparator<K>>(
    keys: &mut [K],
    segments: Segments<'_>,
    comp: &C,
) -> Result<(), Error> {
    match present_gpu()? {
        Some(gpu) => gpu.segmented_sort(keys, segments, comp),
        None => {
            check_cpu_segments(keys.len(), segments)?;
            let consistent = crate::cpu::segmented::segmented_sort_checked(
                keys,
                segments,
                &|x: &K, y: &K| comp.is_less(x, y),
                cpu_run_sort(comp),
            );
            check_cpu_consistent(consistent)
        }
    }
}

/// Backend-neutral stable sort of each segment of key-value pairs in the keys' natural order:
/// [`segmented_sort_pairs_by`] with [`PrimitiveKey::Ascending`].
pub fn segmented_sort_pairs<K: PrimitiveKey, V: DeviceValue>(
    keys: &mut [K],
    values: &mut [V],
    segments: Segments<'_>,
) -> Result<(), Error> {
    segmented_sort_pairs_by(keys, values, segments, &K::Ascending::default())
}

/// Backend-neutral stable sort of each segment of key-value pairs by key under `comp`: values
/// move with their keys. Errors as [`segmented_sort_by`], and [`Error::SizeMismatch`] (nothing
/// moved) when `keys` and `values` differ in length.
pub fn segmented_sort_pairs_by<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    keys: &mut [K],
    values: &mut [V],
    segments: Segments<'_>,
    comp: &C,
) -> Result<(), Error> {
    match present_gpu()? {
        Some(gpu) => gpu.segmented_sort_pairs(keys, values, segments, comp),
        None => {
            check_len("segmented sort values", keys.len(), values.len())?;
            check_cpu_segments(keys.len(), segments)?;
            let consistent = crate::cpu::segmented::segmented_sort_pairs_checked(
                keys,
                values,
                segments,
                &|x: &K, y: &K| comp.is_less(x, y),
                cpu_run_sort(comp),
            );
            check_cpu_consistent(consistent)
        }
    }
}

/// `segments`' fault for `count` keys as [`Error::InvalidInput`], in the GPU's words.
fn check_cpu_segments(count: usize, segments: Segments<'_>) -> Result<(), Error> {
    match segments_problem(count, segments) {
        Some(problem) => Err(Error::InvalidInput(problem.into())),
        None => Ok(()),
    }
}

/// Backend-neutral load-balancing search: GPU when present (its error, if any, is returned), else
/// the CPU backend. A scan that does not start at 0, decreases or passes `total` gives
/// [`Error::InvalidInput`] with [`messages::SCAN_INVALID`] on the CPU.
pub fn load_balance_search(scan: &[usize], total: usize) -> Result<Vec<usize>, Error> {
    match present_gpu()? {
        Some(gpu) => gpu.load_balance_search(scan, total),
        None => {
            check_cpu_scan(scan, total)?;
            Ok(crate::cpu::load_balance_search(scan, total))
        }
    }
}

/// Backend-neutral load-balancing search with ranks: GPU when present, else the CPU backend.
pub fn load_balance_search_with_ranks(
    scan: &[usize],
    total: usize,
) -> Result<Vec<(usize, usize)>, Error> {
    match present_gpu()? {
        Some(gpu) => {
            let (segments, ranks) = gpu.load_balance_search_with_ranks(scan, total)?;
            Ok(segments.into_iter().zip(ranks).collect())
        }
        None => {
            check_cpu_scan(scan, total)?;
            Ok(crate::cpu::load_balance_search_with_ranks(scan, total))
        }
    }
}

/// Backend-neutral interval expand: GPU when present, else the CPU backend.
pub fn interval_expand<V: DeviceValue>(
    scan: &[usize],
    values: &[V],
    total: usize,
) -> Result<Vec<V>, Error> {
    match present_gpu()? {
        Some(gpu) => gpu.interval_expand(scan, values, total),
        None => {
            check_cpu_scan(scan, total)?;
            check_values_per_segment(scan.len(), values.len())?;
            let segments = crate::cpu::load_balance_search(scan, total);
            Ok(segments.into_iter().map(|s| values[s]).collect())
        }
    }
}

/// Backend-neutral interval move ([`IntervalMove`]), GPU when present, else the CPU backend: for
/// each segment `s` of size `n`, `output[scatter[s] .. + n] = input[gather[s] .. + n]` (a missing
/// `gather` or `scatter` means the segment's own position `scan[s]`); entries no segment writes
/// keep their values.
///
/// Everything is validated before anything is written, so an error leaves `output` untouched:
/// the scan ([`messages::SCAN_INVALID`]); the lengths ([`Error::SizeMismatch`]: `gather` and
/// `scatter` hold one position per segment, and without `gather` (`scatter`) the input (output)
/// holds exactly `total` elements); and every segment's `position + size` against its buffer,
/// in checked arithmetic, so that even a position of `usize::MAX` is refused
/// ([`messages::GATHER_INVALID`], [`messages::SCATTER_INVALID`]).
pub fn interval_move<V: DeviceValue>(
    moves: IntervalMove<'_, usize>,
    input: &[V],
    output: &mut [V],
) -> Result<(), Error> {
    if let Some(gpu) = present_gpu()? {
        return gpu.interval_move(moves, input, output);
    }
    let IntervalMove {
        scan,
        total,
        gather,
        scatter,
    } = moves;
    check_cpu_scan(scan, total)?;
    check_cpu_positions("gather positions", gather, scan, total, input.len())
        .map_err(|e| e.unwrap_or_else(|| invalid(messages::GATHER_INVALID)))?;
    check_cpu_positions("scatter positions", scatter, scan, total, output.len())
        .map_err(|e| e.unwrap_or_else(|| invalid(messages::SCATTER_INVALID)))?;
    // Every segment `s` of size `n` now has `gather[s] + n <= input.len()` and
    // `scatter[s] + n <= output.len()` (or exactly `total` elements where a side is missing), so
    // the moves below stay in bounds; segments are moved whole, not item by item.
    for (s, &start) in scan.iter().enumerate() {
        let end = scan.get(s + 1).copied().unwrap_or(total);
        let size = end - start;
        let from = gather.map_or(start, |g| g[s]);
        let to = scatter.map_or(start, |t| t[s]);
        output[to..to + size].copy_from_slice(&input[from..from + size]);
    }
    Ok(())
}

/// [`Error::InvalidInput`] with `message`.
fn invalid(message: &str) -> Error {
    Error::InvalidInput(message.to_owned())
}

/// The interval move's checks of one side (`positions`, `None` for a segment's own position) on
/// the CPU: `Err(Some(error))` for a length mismatch, `Err(None)` when some segment's
/// `position + size` passes `len` (or overflows), `Ok` otherwise. `scan` must be valid.
fn check_cpu_positions(
    what: &'static str,
    positions: Option<&[usize]>,
    scan: &[usize],
    total: usize,
    len: usize,
) -> Result<(), Option<Error>> {
    let Some(positions) = positions else {
        return check_len(what, total, len).map_err(Some);
    };
    check_len(what, scan.len(), positions.len()).map_err(Some)?;
    let in_bounds = scan
        .iter()
        .zip(positions)
        .enumerate()
        .all(|(s, (&start, &pos))| {
            let end = scan.get(s + 1).copied().unwrap_or(total);
            end.checked_sub(start)
                .and_then(|size| pos.checked_add(size))
                .is_some_and(|stop| stop <= len)
        });
    if in_bounds {
        Ok(())
    } else {
        Err(None)
    }
}

/// Backend-neutral sorted search under `comp`: GPU when present, else the CPU backend.
/// `needles` or `haystack` not sorted under `comp` gives [`Error::InvalidInput`] with
/// [`messages::NEEDLES_UNSORTED`] / [`messages::HAYSTACK_UNSORTED`] on both backends.
pub fn sorted_search_by<K: DeviceKey, C: DeviceComparator<K>>(
    needles: &[K],
    haystack: &[K],
    bound: SearchBound,
    comp: &C,
) -> Result<Vec<usize>, Error> {
    match present_gpu()? {
        Some(gpu) => gpu.sorted_search(needles, haystack, bound, comp),
        None => {
            let inputs = [
                (needles, messages::NEEDLES_UNSORTED),
                (haystack, messages::HAYSTACK_UNSORTED),
            ];
            let is_less = cpu_predicate_of_sorted(comp, inputs)?;
            Ok(crate::cpu::sorted_search_by(
                needles, haystack, bound, is_less,
            ))
        }
    }
}

/// The GPU host calls' checks of a segment scan, for the CPU path of the crate-root calls (which
/// would otherwise panic): starts at 0, non-decreasing, at most `total`
/// ([`messages::SCAN_INVALID`]).
fn check_cpu_scan(scan: &[usize], total: usize) -> Result<(), Error> {
    match crate::cpu::search::scan_problem(scan, total) {
        Some(_) => Err(invalid(messages::SCAN_INVALID)),
        None => Ok(()),
    }
}

/// The CPU twin of the GPU's unsorted-input status bits: every input whose adjacent pairs are
/// out of order under `is_less` (the GPU checks every adjacent pair as well) is named by its
/// message, in order, joined by "; " as the GPU joins its status bits.
fn check_cpu_sorted<K: Sync, F: Fn(&K, &K) -> bool + Sync>(
    inputs: [(&[K], &'static str); 2],
    is_less: &F,
) -> Result<(), Error> {
    use rayon::prelude::*;
    let unsorted: Vec<&str> = inputs
        .iter()
        .filter(|(keys, _)| keys.par_windows(2).any(|w| is_less(&w[1], &w[0])))
        .map(|&(_, message)| message)
        .collect();
    if unsorted.is_empty() {
        Ok(())
    } else {
        Err(Error::InvalidInput(unsorted.join("; ")))
    }
}

/// `comp`'s Rust predicate for a CPU merge, once [`check_cpu_sorted`] found both `inputs` sorted
/// under it.
fn cpu_predicate_of_sorted<'c, K: DeviceKey, C: DeviceComparator<K>>(
    comp: &'c C,
    inputs: [(&[K], &'static str); 2],
) -> Result<impl Fn(&K, &K) -> bool + Sync + 'c, Error> {
    let is_less = move |x: &K, y: &K| comp.is_less(x, y);
    check_cpu_sorted(inputs, &is_less)?;
    Ok(is_less)
}

/// `Err(InvalidInput(ORDER_INCONSISTENT))` when a CPU sort saw its comparator answer
/// inconsistently.
fn check_cpu_consistent(consistent: bool) -> Result<(), Error> {
    if consistent {
        Ok(())
    } else {
        Err(invalid(messages::ORDER_INCONSISTENT))
    }
}
