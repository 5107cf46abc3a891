//! GPU runtime of twophase: cudarc context and stream, NVRTC program cache, kernel launches.
//!
//! Device code lives in `kernels/` (CUDA C++), is embedded with `include_str!`, instantiated for a
//! key type, value type, comparator and tuning, and compiled at run time by NVRTC for the device's
//! own architecture (see [`program`]). This is the only crate of the workspace with `unsafe`.

pub mod batcher;
pub mod compare;
pub mod context;
pub mod error;
pub mod fault;
pub mod key;
pub mod merge;
pub mod mergesort;
pub mod program;
pub mod search;
pub mod sorted_search;
pub mod status;
pub mod textbook;

pub use batcher::{BatcherScratch, BatcherTuning, SortScratch, SortVariant};
pub use compare::{CudaComparator, DeviceComparator, Greater, Less, TotalOrder, TotalOrderDesc};
pub use context::Gpu;
pub use error::GpuError;
pub use key::{DeviceKey, DeviceValue, FloatKey, PrimitiveKey};
pub use merge::{MergeScratch, MergeTuning};
pub use mergesort::{MergesortScratch, MergesortTuning};
pub use search::{
    DeviceIndex, HostIndex, LoadBalanceOp, LoadBalanceTuning, OpArgs, SearchBound, SearchScratch,
    SortedSearchTuning,
};
pub use status::{CheckArgs, InputCheck};
pub use textbook::{MergeVariant, TextbookMergeTuning};

/// The cudarc version this crate is built on, re-exported so that users pass matching types.
pub use cudarc;

/// The result type of every fallible call of this crate.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
