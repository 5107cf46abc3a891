//! The two-phase GPU mergesort: block sort of each tile, then merge passes split by merge path.

use std::mem::size_of;

use cudarc::driver::CudaSlice;

use crate::compare::DeviceComparator;
use crate::error::check_len;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::primitive::value_bytes;
use crate::primitive::ProgramTuning;
use crate::runtime::device::Gpu;
use crate::runtime::launch::ParamLayout;
use crate::runtime::program::{
    entry_points, ValueLayout, CTA_MERGE_CUH, PARTITION_CUH, SERIAL_CUH,
};
use crate::runtime::staging::SortAddresses;
use crate::runtime::status::{messages, InputCheck, StatusNames, STATUS_ORDER_INCONSISTENT};

pub mod buffers;
mod launch;
pub mod tuning;

pub use buffers::{DeviceSortBuffers, SortArgs, SortBuffers, SortValueBuffers, SortValues};
pub use tuning::{merge_passes, MergesortTuning};

entry_points! {
    /// Every entry point of a mergesort program: the block sort and the two-way pass's kernels,
    /// then the four-way pass's.
    MERGESORT_ENTRIES = [
        /// Entry point of the mergesort's block sort.
        MERGESORT_ENTRY_BLOCKSORT = "twophase_blocksort",
        /// Entry point of a mergesort pass's partition kernel.
        MERGESORT_ENTRY_PARTITION = "twophase_mergesort_partition",
        /// Entry point of a mergesort pass's tile kernel.
        MERGESORT_ENTRY_TILE = "twophase_mergesort_tile",
        /// Entry point of the four-way merge pass's partition kernel (one cut per quad tile).
        MERGESORT_ENTRY_QUAD_PARTITION = "twophase_mergesort_quad_partition",
        /// Entry point of the four-way merge pass's tile kernel (two merge levels per tile).
        MERGESORT_ENTRY_QUAD_TILE = "twophase_mergesort_quad_tile",
    ];
}

/// The mergesort's kernel sources, in the order they follow the prelude.
pub const MERGESORT_SOURCES: [&str; 10] = [
    PARTITION_CUH,
    SERIAL_CUH,
    CTA_MERGE_CUH,
    // The block sort of one tile per CTA.
    include_str!("../../kernels/cta_mergesort.cuh"),
    // The mergesort's common definitions and block-sort kernel.
    include_str!("../../kernels/mergesort_blocksort.cu"),
    // The search for a merge pass's boundaries.
    include_str!("../../kernels/mergesort_partition.cuh"),
    // The two-way pass's partition and tile kernels.
    include_str!("../../kernels/mergesort_pass.cu"),
    // The search for a four-way pass's cuts.
    include_str!("../../kernels/mergesort_quad_partition.cuh"),
    // The four-way pass's partition kernel.
    include_str!("../../kernels/mergesort_quad_partition.cu"),
    // The four-way pass's tile kernel.
    include_str!("../../kernels/mergesort_quad_tile.cu"),
];

/// Device scratch of the mergesort: the pass partitions and the ping-pong key and value buffers.
/// They only grow, so repeated sorts of the same or smaller size allocate nothing.
///
/// It also holds the order check of the sorts that use it: a sort whose comparator answers
/// inconsistently (not a strict weak order) still leaves a permutation of its keys, and raises a
/// status here that [`check`](Self::check) reports.
#[derive(Debug, Default)]
pub struct MergesortScratch {
    partitions: Option<CudaSlice<u64>>,
    /// Four-way cuts: three counts per quad-tile boundary.
    cuts: Option<CudaSlice<u64>>,
    keys: Option<CudaSlice<u8>>,
    values: Option<CudaSlice<u8>>,
    input_check: InputCheck,
}

/// What the mergesort's status bits say.
const MERGESORT_STATUS: StatusNames = &[(STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT)];

impl MergesortScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for this handle's stream, then report whether a device-buffer sort that used this
    /// scratch since the last check saw its comparator answer inconsistently:
    /// `Err(InvalidInput)` naming the comparator. The status is cleared. Such a sort leaves a
    /// permutation of its keys (and pairs) in unspecified order.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.input_check.check(gpu, MERGESORT_STATUS)
    }
}

impl Gpu {
    /// Stable sort of the device buffers `buffers` under `comp`, in place (the scratch holds the
    /// ping-pong buffers): [`SortBuffers::keys`], or [`SortBuffers::pairs`] where each value
    /// moves with its key and equal keys keep their order. At `tuning`, or (`None`) the shipped
    /// one for the types and the number of keys ([`shipped_mergesort_tuning`](Self::shipped_mergesort_tuning)).
    /// Asynchronous on this handle's stream.
    ///
    /// Whatever `comp` answers, `keys` ends as a permutation of itself. A user comparator is
    /// checked as the sort runs (twophase's own orders need not be); where it answered
    /// inconsistently (not a strict weak order) the order is unspecified and the scratch
    /// records it: [`MergesortScratch::check`] (which synchronizes) reports it as `InvalidInput`.
    pub fn mergesort_device<K, C, S>(
        &self,
        buffers: S,
        comp: &C,
        tuning: Option<MergesortTuning>,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DeviceSortBuffers<K>,
    {
        let tuning = tuning.unwrap_or_else(|| {
            self.shipped_mergesort_tuning(size_of::<K>(), value_bytes(S::VALUES), buffers.count())
        });
        buffers.with_args(self, MergesortScratch::VALUES_NAME, |args| {
            self.launch_mergesort::<K, C>(args.0, comp, tuning, scratch)
        })
    }

    /// The host-slice sort of scratch `X`'s algorithm, with the handle's pooled scratch, at its
    /// shipped tuning: `values` (if any) are checked to be as many as the keys first.
    pub(crate) fn sort_slices<K, V, C, X>(
        &self,
        keys: &mut [K],
        values: Option<&mut [V]>,
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        X: InPlaceSort,
    {
        if let Some(values) = &values {
            check_len(X::VALUES_NAME, keys.len(), values.len())?;
        }
        let mut scratch = self.pooled_scratch::<X>();
        self.sort_host(keys, values, &mut scratch, |buffers, scratch| {
            let tuning = X::shipped::<K>(self, buffers.layout, buffers.count);
            scratch.launch::<K, C>(self, buffers, comp, tuning)?;
            scratch.before_download(self)
        })
    }

    /// The shipped mergesort tuning for `count` keys of `key_bytes` (and values of
    /// `value_bytes`) on this device ([`MergesortTuning::for_launch`]).
    pub fn shipped_mergesort_tuning(
        &self,
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
    ) -> MergesortTuning {
        MergesortTuning::for_launch(
            key_bytes,
            value_bytes,
            count,
            self.max_shared_per_block_optin(),
            self.multiprocessors() as usize,
        )
    }

    /// Host convenience: sort `keys` in place on the GPU, stably under `comp`. Device buffers and
    /// scratch are kept in the handle and reused across calls.
    pub fn mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        comp: &C,
    ) -> Result<(), GpuError> {
        self.sort_slices::<K, u8, C, MergesortScratch>(keys, None, comp)
    }

    /// Host convenience: sort key-value pairs in place on the GPU, stably by key under `comp`.
    pub fn mergesort_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        comp: &C,
    ) -> Result<(), GpuError> {
        self.sort_slices::<K, V, C, MergesortScratch>(keys, Some(values), comp)
    }
}

/// An in-place sort, picked by its scratch: the mergesort ([`MergesortScratch`]) or Batcher's
/// sort (`BatcherScratch`). Their host-slice calls share one body ([`Gpu::sort_slices`]).
pub(crate) trait InPlaceSort: Default + Send + 'static {
    /// The sort's tuning.
    type Tuning: Copy;

    /// What a sort of pairs names when its values are not as many as its keys.
    const VALUES_NAME: &'static str;

    /// The tuning the sort ships for `count` keys `K` with values of `values`' layout on `gpu`.
    fn shipped<K: DeviceKey>(gpu: &Gpu, values: ValueLayout, count: usize) -> Self::Tuning;

    /// Sort `buffers` in place at `tuning`, with this scratch.
    fn launch<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &mut self,
        gpu: &Gpu,
        buffers: SortAddresses,
        comp: &C,
        tuning: Self::Tuning,
    ) -> Result<(), GpuError>;

    /// What a host-slice sort checks after its launches, before the download: nothing unless
    /// the sort says otherwise.
    fn before_download(&mut self, _gpu: &Gpu) -> Result<(), GpuError> {
        Ok(())
    }
}

impl InPlaceSort for MergesortScratch {
    type Tuning = MergesortTuning;

    const VALUES_NAME: &'static str = "mergesort values";

    fn shipped<K: DeviceKey>(gpu: &Gpu, values: ValueLayout, count: usize) -> MergesortTuning {
        gpu.shipped_mergesort_tuning(size_of::<K>(), value_bytes(values), count)
    }

    fn launch<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &mut self,
        gpu: &Gpu,
        buffers: SortAddresses,
        comp: &C,
        tuning: MergesortTuning,
    ) -> Result<(), GpuError> {
        gpu.launch_mergesort::<K, C>(buffers, comp, tuning, self)
    }

    /// On an inconsistent comparator the host slices keep their keys as they were (a
    /// permutation, and what the caller had).
    fn before_download(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.check(gpu)
    }
}

impl ProgramTuning for MergesortTuning {
    const SOURCES: &'static [&'static str] = &MERGESORT_SOURCES;

    /// The pass shape (the block-sort shape is in every program's name already).
    fn label(self) -> String {
        format!(
            "mergesort_pass{}_quad{}r{}",
            self.pass_threads, self.quad_threads, self.quad_registers
        )
    }

    fn shape(self) -> (u32, u32) {
        (self.threads, self.vt)
    }

    /// The four-way pass's kernels only when the tuning has them.
    fn entries(self) -> &'static [&'static str] {
        // The block sort and the two-way pass's kernels.
        const TWO_WAY: &[&str] = MERGESORT_ENTRIES.split_at(3).0;
        if self.quad_threads > 0 {
            &MERGESORT_ENTRIES
        } else {
            TWO_WAY
        }
    }

    /// `TP_NT` is the block sort's threads, `TP_PASS_NT` the merge passes'.
    fn defines(self) -> String {
        format!(
            "#define TP_PASS_NT {}\n#define TP_QUAD_NT {}\n#define TP_QUAD_REGISTERS {}\n",
            self.pass_threads, self.quad_threads, self.quad_registers
        )
    }

    fn params(self) -> Vec<&'static ParamLayout> {
        launch::param_layouts(self)
    }

    /// At its tuning for the H100 and within static shared memory (for devices with less
    /// opt-in shared memory; a handle picks by its device, [`Gpu::shipped_mergesort_tuning`]).
    const SHIPPED: &'static [fn(usize, usize) -> Self] =
        &[Self::for_types, Self::within_static_shared];
}
