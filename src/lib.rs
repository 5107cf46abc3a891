//! twophase: merge, mergesort, load-balanced search and sorted search built the two-phase way.
//!
#![doc = include_str!("../README.md")]
mod comparator;
pub mod cpu;
mod front;
pub mod gpu;
pub mod order;
pub mod variants;

/// `bytemuck`, for `#[derive(Pod, Zeroable)]` on a user key or value type without a dependency of
/// its own: `#[derive(twophase::bytemuck::Pod, ...)]` with
/// `#[bytemuck(crate = "twophase::bytemuck")]`.
pub use bytemuck;
pub use front::{
    backend, interval_expand, interval_move, load_balance_search, load_balance_search_with_ranks,
    merge, merge_by, merge_pairs_by, segmented_sort, segmented_sort_by, segmented_sort_pairs,
    segmented_sort_pairs_by, sort, sort_by, sort_pairs, sort_pairs_by, sorted_search,
    sorted_search_by, Backend,
};
/// `device_key!(Type => "cuda_type", "CUDA definition")`: a user key's [`DeviceKey`] impl.
pub use twophase_gpu::device_key;
/// The segments and positions of an [`interval_move`] (both backends).
pub use twophase_gpu::load_balance::IntervalMove;
/// The one error type of every call, on both backends.
pub use twophase_gpu::GpuError as Error;
/// Which bound of each needle a sorted search returns (both backends).
pub use twophase_gpu::SearchBound;
/// Where the segments of a segmented sort lie (both backends).
pub use twophase_gpu::Segments;
/// The key, value and comparator vocabulary of both backends.
pub use twophase_gpu::{
    CudaComparator, DeviceComparator, DeviceKey, DeviceValue, Greater, Less, PrimitiveKey,
    TotalOrder, TotalOrderDesc, TrustedComparator,
};
#[doc = include_str!("../docs/search.md")]
pub mod search_guide {}
#[doc = include_str!("../docs/guide.md")]
pub mod guide {}
