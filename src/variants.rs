//! The textbook variants, kept as teaching material: basic, tiled and circular-buffer merges, and Batcher's sort.
//!
//! Each call runs on the default GPU ([`crate::gpu::default_gpu`]) with the kernel `variant`
//! names; `MergeVariant::TwoPhase` and `SortVariant::TwoPhase` are the shipped kernels, for side
//! by side comparison (docs/guide.md walks through them; `benches/gpu_variants.rs` measures
//! them). On device buffers: `Gpu::merge_device` with `MergeAlgorithm::Variant`, and
//! `Gpu::sort_variant_device`.

use twophase_gpu::{DeviceComparator, DeviceKey, DeviceValue};

pub use twophase_gpu::merge::{HostMergeSlices, MergeSlices};
pub use twophase_gpu::variants::batcher::{
    BatcherScratch, BatcherTuning, SortScratch, SortVariant,
};
pub use twophase_gpu::variants::textbook::{MergeVariant, TextbookMergeTuning};

use crate::gpu::gpu;
use crate::Error;

/// Stable merge of host slices sorted by `comp`, on the default GPU, with the merge kernel
/// `variant` (the textbook's basic, tiled or circular-buffer kernel, or the two-phase one):
/// [`MergeSlices::keys`] returns the merged keys, [`MergeSlices::pairs`] the merged keys and
/// values.
pub fn merge_variant<K, C, S>(
    variant: MergeVariant,
    slices: S,
    comp: &C,
) -> Result<S::Output, Error>
where
    K: DeviceKey,
    C: DeviceComparator<K>,
    S: HostMergeSlices<K>,
{
    gpu()?.merge_variant(variant, slices, comp)
}

/// Sort host keys in place under `comp` on the default GPU with `variant` (Batcher's network is
/// not stable; the two-phase mergesort is).
pub fn sort_variant<K: DeviceKey, C: DeviceComparator<K>>(
    variant: SortVariant,
    keys: &mut [K],
    comp: &C,
) -> Result<(), Error> {
    gpu()?.sort_variant(variant, keys, comp)
}

/// Sort host key-value pairs by key in place on the default GPU with `variant`.
pub fn sort_pairs_variant<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K>>(
    variant: SortVariant,
    keys: &mut [K],
    values: &mut [V],
    comp: &C,
) -> Result<(), Error> {
    gpu()?.sort_pairs_variant(variant, keys, values, comp)
}
