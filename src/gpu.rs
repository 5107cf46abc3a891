//! GPU merge API of the root crate (over twophase-gpu) and the backend-neutral calls.

use std::sync::{Mutex, PoisonError};

pub use twophase_gpu::batcher::{BatcherScratch, BatcherTuning, SortScratch, SortVariant};
pub use twophase_gpu::merge::{MergeProgram, MergeTuning, ValueLayout};
pub use twophase_gpu::mergesort::{MergesortScratch, MergesortTuning};
pub use twophase_gpu::textbook::{MergeVariant, TextbookMergeTuning};
pub use twophase_gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceValue, FloatKey, Gpu, GpuError, Greater,
    Less, MergeScratch, PrimitiveKey, TotalOrder, TotalOrderDesc,
};

/// The process-wide GPU used by the free functions here: device 0, opened on first use, `None`
/// when this machine has no usable GPU. After a fault lost its context
/// ([`GpuError::ContextLost`]), the next use opens it again (resetting the device), so later calls
/// work; a handle taken before the fault keeps reporting the loss.
pub fn default_gpu() -> Option<&'static Gpu> {
    gpu().ok()
}

/// The default GPU as last opened: `None` before the first use, the reason when this machine has
/// no usable GPU (kept: absent drivers and devices do not appear later in a process).
static DEFAULT_GPU: Mutex<Option<Result<&'static Gpu, String>>> = Mutex::new(None);

/// The default GPU, or why there is none ([`GpuError::NoDriver`] on the first call, then
/// [`GpuError::NoDevice`] with the first call's reason). A handle replaced after a loss is leaked
/// rather than dropped (callers may still hold it); it holds nothing on the device any more.
fn gpu() -> Result<&'static Gpu, GpuError> {
    let mut slot = DEFAULT_GPU.lock().unwrap_or_else(PoisonError::into_inner);
    let reopening = match &*slot {
        Some(Ok(gpu)) if !gpu.is_lost() => return Ok(gpu),
        Some(Err(why)) => return Err(GpuError::NoDevice(why.clone())),
        Some(Ok(_)) => true,
        None => false,
    };
    match Gpu::first() {
        Ok(gpu) => {
            let gpu: &'static Gpu = Box::leak(Box::new(gpu));
            *slot = Some(Ok(gpu));
            Ok(gpu)
        }
        Err(error) => {
            if !reopening {
                *slot = Some(Err(error.to_string()));
            }
            Err(error)
        }
    }
}

/// Stable merge of two ascending host slices on the default GPU.
pub fn merge<K: PrimitiveKey>(a: &[K], b: &[K]) -> Result<Vec<K>, GpuError> {
    gpu()?.merge(a, b, &Less)
}

/// Stable merge of two host slices sorted by `comp`, on the default GPU.
pub fn merge_by<K: DeviceKey, C: DeviceComparator<K>>(
    a: &[K],
    b: &[K],
    comp: &C,
) -> Result<Vec<K>, GpuError> {
    gpu()?.merge(a, b, comp)
}

/// Stable merge of key-value host sequences sorted by `comp`, on the default GPU.
pub fn merge_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    a_keys: &[K],
    a_vals: &[V],
    b_keys: &[K],
    b_vals: &[V],
    comp: &C,
) -> Result<(Vec<K>, Vec<V>), GpuError> {
    gpu()?.merge_pairs(a_keys, a_vals, b_keys, b_vals, comp)
}

/// Stable sort of ascending host keys in place on the default GPU.
pub fn mergesort<K: PrimitiveKey>(keys: &mut [K]) -> Result<(), GpuError> {
    gpu()?.mergesort(keys, &Less)
}

/// Stable sort of host keys in place under `comp` on the default GPU.
pub fn mergesort_by<K: DeviceKey, C: DeviceComparator<K>>(
    keys: &mut [K],
    comp: &C,
) -> Result<(), GpuError> {
    gpu()?.mergesort(keys, comp)
}

/// Stable sort of host key-value pairs by key under `comp`, in place on the default GPU.
pub fn mergesort_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    keys: &mut [K],
    values: &mut [V],
    comp: &C,
) -> Result<(), GpuError> {
    gpu()?.mergesort_pairs(keys, values, comp)
}

/// Stable merge of two host slices sorted by `comp`, on the default GPU, with the merge kernel
/// `variant` (the textbook's basic, tiled or circular-buffer kernel, or the two-phase one).
pub fn merge_variant<K: DeviceKey, C: DeviceComparator<K>>(
    variant: MergeVariant,
    a: &[K],
    b: &[K],
    comp: &C,
) -> Result<Vec<K>, GpuError> {
    gpu()?.merge_variant(variant, a, b, comp)
}

/// Stable merge of key-value host sequences sorted by `comp` on the default GPU with `variant`.
pub fn merge_pairs_variant<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    variant: MergeVariant,
    a_keys: &[K],
    a_vals: &[V],
    b_keys: &[K],
    b_vals: &[V],
    comp: &C,
) -> Result<(Vec<K>, Vec<V>), GpuError> {
    gpu()?.merge_pairs_variant(variant, a_keys, a_vals, b_keys, b_vals, comp)
}

/// Sort host keys in place under `comp` on the default GPU with `variant` (Batcher's network is
/// not stable; the two-phase mergesort is).
pub fn sort_variant<K: DeviceKey, C: DeviceComparator<K>>(
    variant: SortVariant,
    keys: &mut [K],
    comp: &C,
) -> Result<(), GpuError> {
    gpu()?.sort_variant(variant, keys, comp)
}

/// Sort host key-value pairs by key in place on the default GPU with `variant`.
pub fn sort_pairs_variant<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    variant: SortVariant,
    keys: &mut [K],
    values: &mut [V],
    comp: &C,
) -> Result<(), GpuError> {
    gpu()?.sort_pairs_variant(variant, keys, values, comp)
}

/// Which backend the backend-neutral calls (`*_any`) run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The default GPU (device 0).
    Gpu,
    /// The CPU backend (`twophase::cpu`), used when this machine has no usable GPU.
    Cpu,
}

/// The backend the `*_any` calls use here: the GPU when one is present, else the CPU.
pub fn backend() -> Backend {
    if default_gpu().is_some() {
        Backend::Gpu
    } else {
        Backend::Cpu
    }
}

/// Backend-neutral merge: on the GPU when one is present, else on the CPU backend with the
/// comparator's Rust predicate. A GPU that is present but fails (a compile error, out of memory)
/// returns its error: there is no silent fallback.
pub fn merge_any<K: DeviceKey, C: DeviceComparator<K>>(
    a: &[K],
    b: &[K],
    comp: &C,
) -> Result<Vec<K>, GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.merge(a, b, comp),
        None => Ok(crate::cpu::merge_by(a, b, |x: &K, y: &K| {
            comp.is_less(x, y)
        })),
    }
}

/// Backend-neutral key-value merge: GPU when present, else the CPU backend.
pub fn merge_pairs_any<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    a_keys: &[K],
    a_vals: &[V],
    b_keys: &[K],
    b_vals: &[V],
    comp: &C,
) -> Result<(Vec<K>, Vec<V>), GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.merge_pairs(a_keys, a_vals, b_keys, b_vals, comp),
        None => Ok(crate::cpu::merge_pairs_by(
            a_keys,
            a_vals,
            b_keys,
            b_vals,
            |x: &K, y: &K| comp.is_less(x, y),
        )),
    }
}

/// Backend-neutral stable sort in place: GPU when present, else the CPU backend.
pub fn mergesort_any<K: DeviceKey, C: DeviceComparator<K>>(
    keys: &mut [K],
    comp: &C,
) -> Result<(), GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.mergesort(keys, comp),
        None => {
            crate::cpu::mergesort_by(keys, |x: &K, y: &K| comp.is_less(x, y));
            Ok(())
        }
    }
}

/// Backend-neutral stable sort of key-value pairs in place: GPU when present, else the CPU.
pub fn mergesort_pairs_any<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    keys: &mut [K],
    values: &mut [V],
    comp: &C,
) -> Result<(), GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.mergesort_pairs(keys, values, comp),
        None => {
            crate::cpu::mergesort_pairs_by(keys, values, |x: &K, y: &K| comp.is_less(x, y));
            Ok(())
        }
    }
}

// ---- Load-balancing search, interval expand/move and sorted search (docs/search.md) ----

pub use twophase_gpu::search::{
    DeviceIndex, HostIndex, LoadBalanceOp, LoadBalanceTuning, OpArgs, SearchScratch,
    SortedSearchTuning, OP_ARGS,
};

fn gpu_bound(bound: crate::cpu::SearchBound) -> twophase_gpu::SearchBound {
    match bound {
        crate::cpu::SearchBound::Lower => twophase_gpu::SearchBound::Lower,
        crate::cpu::SearchBound::Upper => twophase_gpu::SearchBound::Upper,
    }
}

/// Load-balancing search on the default GPU: the segment of each of `total` work items, given the
/// exclusive scan of the segment sizes (as `twophase::cpu::load_balance_search`).
pub fn load_balance_search(scan: &[usize], total: usize) -> Result<Vec<usize>, GpuError> {
    gpu()?.load_balance_search(scan, total)
}

/// Load-balancing search with ranks on the default GPU: `(segment, rank)` per work item.
pub fn load_balance_search_with_ranks(
    scan: &[usize],
    total: usize,
) -> Result<Vec<(usize, usize)>, GpuError> {
    let (segments, ranks) = gpu()?.load_balance_search_with_ranks(scan, total)?;
    Ok(segments.into_iter().zip(ranks).collect())
}

/// Interval expand on the default GPU: `values[s]` replicated once per item of segment `s`.
pub fn interval_expand<V: DeviceValue>(
    scan: &[usize],
    values: &[V],
    total: usize,
) -> Result<Vec<V>, GpuError> {
    gpu()?.interval_expand(scan, values, total)
}

/// Interval move on the default GPU: for each segment `s` of size `n`,
/// `output[scatter[s] .. + n] = input[gather[s] .. + n]` (a missing `gather` or `scatter` means
/// the segment's own position `scan[s]`); entries no segment writes keep their values.
pub fn interval_move<V: DeviceValue>(
    scan: &[usize],
    total: usize,
    gather: Option<&[usize]>,
    scatter: Option<&[usize]>,
    input: &[V],
    output: &mut [V],
) -> Result<(), GpuError> {
    gpu()?.interval_move(scan, total, gather, scatter, input, output)
}

/// Sorted search on the default GPU: each ascending needle's lower or upper bound in the
/// ascending haystack.
pub fn sorted_search<K: PrimitiveKey>(
    needles: &[K],
    haystack: &[K],
    bound: crate::cpu::SearchBound,
) -> Result<Vec<usize>, GpuError> {
    gpu()?.sorted_search(needles, haystack, gpu_bound(bound), &Less)
}

/// Sorted search under `comp` on the default GPU.
pub fn sorted_search_by<K: DeviceKey, C: DeviceComparator<K>>(
    needles: &[K],
    haystack: &[K],
    bound: crate::cpu::SearchBound,
    comp: &C,
) -> Result<Vec<usize>, GpuError> {
    gpu()?.sorted_search(needles, haystack, gpu_bound(bound), comp)
}

/// Backend-neutral load-balancing search: GPU when present (its error, if any, is returned), else
/// the CPU backend.
pub fn load_balance_search_any(scan: &[usize], total: usize) -> Result<Vec<usize>, GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.load_balance_search(scan, total),
        None => {
            check_cpu_scan(scan, total)?;
            Ok(crate::cpu::load_balance_search(scan, total))
        }
    }
}

/// Backend-neutral load-balancing search with ranks: GPU when present, else the CPU backend.
pub fn load_balance_search_with_ranks_any(
    scan: &[usize],
    total: usize,
) -> Result<Vec<(usize, usize)>, GpuError> {
    match default_gpu() {
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
pub fn interval_expand_any<V: DeviceValue>(
    scan: &[usize],
    values: &[V],
    total: usize,
) -> Result<Vec<V>, GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.interval_expand(scan, values, total),
        None => {
            check_cpu_scan(scan, total)?;
            if values.len() < scan.len() {
                return Err(GpuError::SizeMismatch {
                    what: "values (one per segment)",
                    expected: scan.len(),
                    got: values.len(),
                });
            }
            let segments = crate::cpu::load_balance_search(scan, total);
            Ok(segments.into_iter().map(|s| values[s]).collect())
        }
    }
}

/// Backend-neutral interval move (see [`interval_move`]): GPU when present, else the CPU backend.
pub fn interval_move_any<V: DeviceValue>(
    scan: &[usize],
    total: usize,
    gather: Option<&[usize]>,
    scatter: Option<&[usize]>,
    input: &[V],
    output: &mut [V],
) -> Result<(), GpuError> {
    if let Some(gpu) = default_gpu() {
        return gpu.interval_move(scan, total, gather, scatter, input, output);
    }
    check_cpu_scan(scan, total)?;
    for (what, pos) in [("gather positions", gather), ("scatter positions", scatter)] {
        if let Some(pos) = pos {
            if pos.len() != scan.len() {
                return Err(GpuError::SizeMismatch {
                    what,
                    expected: scan.len(),
                    got: pos.len(),
                });
            }
        }
    }
    let pairs = crate::cpu::load_balance_search_with_ranks(scan, total);
    for (item, (segment, rank)) in pairs.into_iter().enumerate() {
        let from = gather.map_or(item, |g| g[segment] + rank);
        let to = scatter.map_or(item, |t| t[segment] + rank);
        let value = *input.get(from).ok_or_else(|| {
            GpuError::InvalidInput(format!("gather position {from} past the input"))
        })?;
        *output.get_mut(to).ok_or_else(|| {
            GpuError::InvalidInput(format!("scatter position {to} past the output"))
        })? = value;
    }
    Ok(())
}

/// Backend-neutral sorted search under `comp`: GPU when present, else the CPU backend.
pub fn sorted_search_any<K: DeviceKey, C: DeviceComparator<K>>(
    needles: &[K],
    haystack: &[K],
    bound: crate::cpu::SearchBound,
    comp: &C,
) -> Result<Vec<usize>, GpuError> {
    match default_gpu() {
        Some(gpu) => gpu.sorted_search(needles, haystack, gpu_bound(bound), comp),
        None => Ok(crate::cpu::sorted_search_by(
            needles,
            haystack,
            bound,
            |x: &K, y: &K| comp.is_less(x, y),
        )),
    }
}

/// The GPU host calls' checks of a segment scan, for the CPU path of the `*_any` calls (which
/// would otherwise panic): starts at 0, non-decreasing, at most `total`.
fn check_cpu_scan(scan: &[usize], total: usize) -> Result<(), GpuError> {
    let bad = (scan.is_empty() && total > 0)
        || scan.first().is_some_and(|&s| s != 0)
        || scan.windows(2).any(|w| w[0] > w[1])
        || scan.last().is_some_and(|&s| s > total);
    if bad {
        return Err(GpuError::InvalidInput(
            "segment starts must begin at 0, not decrease, and stay within the total".into(),
        ));
    }
    Ok(())
}
