//! GPU merge API of the root crate (over twophase-gpu) and the backend-neutral calls.

use std::sync::OnceLock;

pub use twophase_gpu::merge::{MergeProgram, MergeTuning, ValueLayout};
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

/// Backend-neutral merge: on the GPU when one is present (and the call succeeds), else on the CPU
/// backend with the comparator's Rust predicate.
pub fn merge_any<K: DeviceKey, C: DeviceComparator<K>>(a: &[K], b: &[K], comp: &C) -> Vec<K> {
    if let Some(gpu) = default_gpu() {
        if let Ok(out) = gpu.merge(a, b, comp) {
            return out;
        }
    }
    crate::cpu::merge_by(a, b, |x: &K, y: &K| comp.is_less(x, y))
}

/// Backend-neutral key-value merge: GPU when present, else the CPU backend.
pub fn merge_pairs_any<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    a_keys: &[K],
    a_vals: &[V],
    b_keys: &[K],
    b_vals: &[V],
    comp: &C,
) -> (Vec<K>, Vec<V>) {
    if let Some(gpu) = default_gpu() {
        if let Ok(out) = gpu.merge_pairs(a_keys, a_vals, b_keys, b_vals, comp) {
            return out;
        }
    }
    crate::cpu::merge_pairs_by(a_keys, a_vals, b_keys, b_vals, |x: &K, y: &K| {
        comp.is_less(x, y)
    })
}
