//! The explicit GPU choice: `Gpu` (device buffers, streams, scratch) and the default GPU the crate-root calls use.

use std::sync::{Mutex, PoisonError};

/// The cudarc version the GPU backend is built on, for device buffers of the key types
/// (`CudaSlice<K>`) that [`Gpu::sort_device`] and the other device calls take.
pub use twophase_gpu::cudarc;
pub use twophase_gpu::merge::{MergeAlgorithm, MergeBuffers, MergeSlices, MergeTuning};
pub use twophase_gpu::mergesort::{DeviceSort, MergesortScratch, MergesortTuning, SortBuffers};
/// What this machine offers the GPU backend (driver, NVRTC, devices, kernel cache) and why a part
/// is missing: [`diagnose::diagnose`], as `twophase info` prints it.
pub use twophase_gpu::runtime::diagnose;
pub use twophase_gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceValue, FloatKey, Gpu, GpuError, GpuGroup,
    Greater, Less, MergeScratch, PrimitiveKey, ProgramTuning, TotalOrder, TotalOrderDesc,
    TrustedComparator,
};

/// The process-wide GPU the crate-root calls (`twophase::sort`, ...) use: device 0, opened on
/// first use, `None` when this machine has no usable GPU. After a fault lost its context
/// ([`GpuError::ContextLost`]), the next use opens it again (resetting the device), so later calls
/// work where the driver allows it; where it refuses every new context in the process, this
/// returns `None` and each crate-root call returns [`GpuError::DeviceLostForProcess`] (never a CPU
/// fallback). A handle taken before the fault keeps reporting the loss.
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
            // Only a machine without a usable GPU is remembered; any other failure is tried
            // again on the next use.
            let absent = matches!(error, GpuError::NoDriver | GpuError::NoDevice(_));
            if !reopening && absent {
                *slot = Some(Err(error.to_string()));
            }
            Err(error)
        }
    }
}

// Load-balancing search, interval expand/move and sorted search (docs/search.md).
pub use twophase_gpu::load_balance::{
    Interval, IntervalMove, LoadBalanceOp, LoadBalanceTuning, OpArgs,
};
pub use twophase_gpu::search::{DeviceIndex, HostIndex, SearchBound, SearchScratch};
pub use twophase_gpu::sorted_search::SortedSearchTuning;
// The segmented sort.
pub use twophase_gpu::segmented_sort::{
    DeviceSegments, SegmentedSortScratch, SegmentedSortTuning, Segments,
};
