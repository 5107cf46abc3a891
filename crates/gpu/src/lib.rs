//! GPU backend of twophase: the runtime (device, NVRTC, module cache, one typed launch) and the primitives above it.
//!
//! Device code lives in `kernels/` (CUDA C++), is embedded with `include_str!`, instantiated for a
//! key type, value type, comparator and tuning, and compiled at run time by NVRTC for the device's
//! own architecture (see [`runtime::program`]). This is the only crate of the workspace with
//! `unsafe`.
//!
//! Layers, each importing only from those below it:
//! - vocabulary: [`error`], [`key`], [`compare`];
//! - [`runtime`]: the device handle, NVRTC, the module cache, the one typed launch, staging,
//!   scratch and the device-side input checks; it names no primitive;
//! - [`primitive`]: what every primitive's program has in common ([`ProgramTuning`]: its
//!   tuning names it, lists its kernels and builds its source; [`Gpu::prepare`]);
//! - primitives, one folder each with its dispatch and tuning: [`merge`], [`mergesort`],
//!   [`search`] (what the two searches share), [`load_balance`], [`sorted_search`],
//!   [`segmented_sort`], and [`sharded`] (sort and merge across the GPUs of one host);
//! - [`variants`]: the textbook merges and Batcher's sort, teaching material built on the
//!   primitives.

pub mod compare;
pub mod error;
pub mod key;
pub mod load_balance;
pub mod merge;
pub mod mergesort;
pub mod primitive;
pub mod runtime;
pub mod search;
pub mod segmented_sort;
pub mod sharded;
pub mod sorted_search;
pub mod variants;

pub use compare::PrimitiveKey;
pub use compare::{
    CudaComparator, DeviceComparator, Greater, Less, TotalOrder, TotalOrderDesc, TrustedComparator,
};
pub use error::GpuError;
pub use key::{DeviceKey, DeviceValue, FloatKey};
pub use load_balance::{LoadBalanceOp, LoadBalanceTuning, OpArgs};
pub use merge::{MergeAlgorithm, MergeBuffers, MergeScratch, MergeSlices, MergeTuning};
pub use mergesort::{DeviceSort, MergesortScratch, MergesortTuning, SortBuffers};
pub use primitive::ProgramTuning;
pub use runtime::device::Gpu;
pub use runtime::status::{CheckArgs, InputCheck};
pub use search::{DeviceIndex, HostIndex, SearchBound, SearchScratch};
pub use segmented_sort::{DeviceSegments, SegmentedSortScratch, SegmentedSortTuning, Segments};
pub use sharded::{GpuGroup, Phases};
pub use sorted_search::SortedSearchTuning;
pub use variants::batcher::{BatcherScratch, BatcherTuning, SortScratch, SortVariant};
pub use variants::textbook::{MergeVariant, TextbookMergeTuning};

/// The cudarc version this crate is built on, re-exported so that users pass matching types.
pub use cudarc;

/// The result type of every fallible call of this crate.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
