//! GPU merge API of the root crate (over twophase-gpu) and the backend-neutral calls.

use std::sync::{Mutex, PoisonError};

pub use twophase_gpu::merge::MergeTuning;
pub use twophase_gpu::mergesort::{MergesortScratch, MergesortTuning};
pub use twophase_gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceValue, FloatKey, Gpu, GpuError, Greater,
    Less, MergeScratch, PrimitiveKey, TotalOrder, TotalOrderDesc,
};

/// The process-wide GPU used by the free functions here: device 0, opened on first use, `None`
/// when this machine has no usable GPU. After a fault lost its context
/// ([`GpuError::ContextLost`]), the next use opens it again (resetting the device), so later calls
/// work where the driver allows it; where it refuses every new context in the process, each use
/// returns [`GpuError::DeviceLostForProcess`]. A handle taken before the fault keeps reporting the
/// loss.
pub fn default_gpu() -> Option<&'static Gpu> {
    gpu().ok()
}

/// The default GPU as last opened: `None` before the first use, the reason when this machine has
/// no usable GPU (kept: absent drivers and devices do not appear later in a process).
static DEFAULT_GPU: Mutex<Option<Result<&'static Gpu, String>>> = Mutex::new(None);

/// The default GPU, or why there is none ([`GpuError::NoDriver`] on the first call, then
/// [`GpuError::NoDevice`] with the first call's reason). A handle replaced after a loss is leaked
/// rather than dropped (callers may still hold it); it holds nothing on the device any more.
pub(crate) fn gpu() -> Result<&'static Gpu, GpuError> {
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

/// Stable merge of two ascending host slices on the default GPU, in the keys' natural order
/// ([`PrimitiveKey::Ascending`]: floats by the IEEE total order, see [`crate::order`]).
pub fn merge<K: PrimitiveKey>(a: &[K], b: &[K]) -> Result<Vec<K>, GpuError> {
    gpu()?.merge(a, b, &K::Ascending::default())
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

/// Stable sort of host keys in place on the default GPU, ascending in the keys' natural order
/// ([`PrimitiveKey::Ascending`]: floats by the IEEE total order, NaN last; see [`crate::order`]).
pub fn mergesort<K: PrimitiveKey>(keys: &mut [K]) -> Result<(), GpuError> {
    gpu()?.mergesort(keys, &K::Ascending::default())
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

// ---- Load-balancing search, interval expand/move and sorted search (docs/search.md) ----

pub use twophase_gpu::search::{
    DeviceIndex, HostIndex, LoadBalanceOp, LoadBalanceTuning, OpArgs, SearchBound, SearchScratch,
    SortedSearchTuning,
};

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
/// ascending haystack, in the keys' natural order ([`PrimitiveKey::Ascending`]).
pub fn sorted_search<K: PrimitiveKey>(
    needles: &[K],
    haystack: &[K],
    bound: SearchBound,
) -> Result<Vec<usize>, GpuError> {
    gpu()?.sorted_search(needles, haystack, bound, &K::Ascending::default())
}

/// Sorted search under `comp` on the default GPU.
pub fn sorted_search_by<K: DeviceKey, C: DeviceComparator<K>>(
    needles: &[K],
    haystack: &[K],
    bound: SearchBound,
    comp: &C,
) -> Result<Vec<usize>, GpuError> {
    gpu()?.sorted_search(needles, haystack, bound, comp)
}
