//! GPU merge API of the root crate (over twophase-gpu) and the backend-neutral calls.

use std::sync::OnceLock;

pub use twophase_gpu::merge::{MergeProgram, MergeTuning, ValueLayout};
pub use twophase_gpu::mergesort::{MergesortScratch, MergesortTuning};
pub use twophase_gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceValue, FloatKey, Gpu, GpuError, Greater,
    Less, MergeScratch, PrimitiveKey, TotalOrder, TotalOrderDesc,
};

/// The process-wide GPU used by the free functions here: device 0, opened on first use, `None`
/// when this machine has no usable GPU.
pub fn default_gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(Gpu::first).as_ref()
}

fn gpu() -> Result<&'static Gpu, GpuError> {
    default_gpu().ok_or(GpuError::NoDriver)
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
