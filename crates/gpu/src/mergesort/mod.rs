//! The two-phase GPU mergesort: block sort of each tile, then merge passes split by merge path.

use std::mem::size_of;

use cudarc::driver::CudaSlice;

use crate::compare::DeviceComparator;
use crate::error::check_len;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::buffers::Sealed;
use crate::primitive::value_bytes;
use crate::primitive::ProgramTuning;
use crate::runtime::device::Gpu;
use crate::runtime::launch::ParamLayout;
use crate::runtime::module_cache::Kernels;
use crate::runtime::program::{
    entry_points, ValueLayout, CTA_MERGE_CUH, PARTITION_CUH, SERIAL_CUH,
};
use crate::runtime::staging::SortAddresses;
use crate::runtime::status::{messages, InputCheck, StatusNames, STATUS_ORDER_INCONSISTENT};
use size_rules::ONE_ROUND_PASS_REGISTERS;

pub mod buffers;
mod held;
mod launch;
mod params;
mod plan;
mod search_lanes;
pub mod size_rules;
pub mod tuning;

pub use buffers::{DeviceSortBuffers, SortArgs, SortBuffers, SortValueBuffers, SortValues};
pub(crate) use held::HeldPass;
pub use plan::{merge_passes, PassPlan};
pub use tuning::MergesortTuning;

entry_points! {
    /// Every entry point of a mergesort program: the block sort and the two-way pass's kernels,
    /// then the four-way pass's, then the eight-way pass's.
    MERGESORT_ENTRIES = [
        /// Entry point of the mergesort's block sort.
        MERGESORT_ENTRY_BLOCKSORT = "twophase_blocksort",
        /// Entry point of a mergesort pass's partition kernel.
        MERGESORT_ENTRY_PARTITION = "twophase_mergesort_partition",
        /// Entry point of a mergesort pass's tile kernel.
        MERGESORT_ENTRY_TILE = "twophase_mergesort_tile",
        /// Entry point of a checked pass's tile kernel that records its own boundaries or checks
        /// the records of the pass before.
        MERGESORT_ENTRY_TILE_RECORDED = "twophase_mergesort_tile_recorded",
        /// Entry point of the four-way merge pass's partition kernel (one cut per quad tile).
        MERGESORT_ENTRY_QUAD_PARTITION = "twophase_mergesort_quad_partition",
        /// Entry point of the four-way merge pass's tile kernel (two merge levels per tile).
        MERGESORT_ENTRY_QUAD_TILE = "twophase_mergesort_quad_tile",
        /// Entry point of the eight-way merge pass's partition kernel (one cut per octet tile).
        MERGESORT_ENTRY_OCT_PARTITION = "twophase_mergesort_oct_partition",
        /// Entry point of the eight-way merge pass's tile kernel (three merge levels per tile).
        MERGESORT_ENTRY_OCT_TILE = "twophase_mergesort_oct_tile",
    ];
}

/// `kernels/cta_mergesort.cuh`: the block sort of one tile per CTA.
pub const CTA_MERGESORT_CUH: &str = include_str!("../../kernels/cta_mergesort.cuh");
/// `kernels/mergesort_blocksort.cu`: the mergesort's common definitions and block-sort kernel.
pub const MERGESORT_BLOCKSORT_CU: &str = include_str!("../../kernels/mergesort_blocksort.cu");

/// `kernels/mergesort_partition.cuh`: where an output position cuts its pair of runs.
pub const MERGESORT_PARTITION_CUH: &str = include_str!("../../kernels/mergesort_partition.cuh");
/// `kernels/mergesort_quad_partition.cuh`: where an output position cuts the four runs of its quad.
pub const MERGESORT_QUAD_PARTITION_CUH: &str =
    include_str!("../../kernels/mergesort_quad_partition.cuh");
/// `kernels/cta_quad_merge.cuh`: a four-way merge tile, two merge levels in shared memory.
pub const CTA_QUAD_MERGE_CUH: &str = include_str!("../../kernels/cta_quad_merge.cuh");

/// The mergesort's kernel sources, in the order they follow the prelude.
pub const MERGESORT_SOURCES: [&str; 13] = [
    PARTITION_CUH,
    SERIAL_CUH,
    CTA_MERGE_CUH,
    CTA_MERGESORT_CUH,
    MERGESORT_BLOCKSORT_CU,
    // The search for a merge pass's boundaries.
    MERGESORT_PARTITION_CUH,
    // The two-way pass's partition and tile kernels.
    include_str!("../../kernels/mergesort_pass.cu"),
    // The search for a four-way pass's cuts.
    MERGESORT_QUAD_PARTITION_CUH,
    // The four-way pass's partition kernel.
    include_str!("../../kernels/mergesort_quad_partition.cu"),
    // The four-way tile (also the segmented sort's four-way levels).
    CTA_QUAD_MERGE_CUH,
    // The four-way pass's tile kernel.
    include_str!("../../kernels/mergesort_quad_tile.cu"),
    // The eight-way pass's partition kernel.
    include_str!("../../kernels/mergesort_oct_partition.cu"),
    // The eight-way pass's tile kernel.
    include_str!("../../kernels/mergesort_oct_tile.cu"),
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
    /// Four-way cuts: three counts per quad-tile boundary (or octet-tile boundary, as the
    /// eight-way cuts' samples).
    cuts: Option<CudaSlice<u64>>,
    /// Eight-way cuts: eight counts per octet-tile boundary.
    oct_cuts: Option<CudaSlice<u64>>,
    /// The checked partition kernels' arrival count (0 between launches).
    arrivals: Option<CudaSlice<u32>>,
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

    /// Wait for this handle's stream, then return and clear the status bits the sorts that used
    /// this scratch raised since the last check (for a caller that reports them under its own
    /// names).
    pub(crate) fn take_status(&mut self, gpu: &Gpu) -> Result<u32, GpuError> {
        self.input_check.take_status(gpu)
    }

    /// The sort's second buffers of keys and values (bytes), which no call keeps anything in
    /// between calls: the in-place sort across GPUs lends them as the buffers its exchange
    /// receives into.
    pub(crate) fn buffers_mut(
        &mut self,
    ) -> (&mut Option<CudaSlice<u8>>, &mut Option<CudaSlice<u8>>) {
        (&mut self.keys, &mut self.values)
    }
}

impl Gpu {
    /// Sort the device buffers `buffers` by key under `comp`, in place, with the sort of
    /// `scratch` (which holds its device scratch): [`MergesortScratch`] for the two-phase
    /// mergesort (stable), [`BatcherScratch`](crate::BatcherScratch) for Batcher's network (not
    /// stable: equal keys' values in any order). `buffers` are [`SortBuffers::keys`], or
    /// [`SortBuffers::pairs`] where each value moves with its key. At `tuning`, or (`None`) the
    /// one the sort ships for the types and the number of keys ([`DeviceSort::shipped`]; the
    /// mergesort's is [`shipped_mergesort_tuning`](Self::shipped_mergesort_tuning)).
    /// Asynchronous on this handle's stream.
    ///
    /// Whatever `comp` answers, `keys` ends as a permutation of itself. The mergesort checks a
    /// user comparator as it runs (twophase's own orders need not be); where it answered
    /// inconsistently (not a strict weak order) the order is unspecified and the scratch
    /// records it: [`MergesortScratch::check`] (which synchronizes) reports it as `InvalidInput`.
    pub fn sort_device<K, C, S, X>(
        &self,
        buffers: S,
        comp: &C,
        tuning: Option<X::Tuning>,
        scratch: &mut X,
    ) -> Result<(), GpuError>
    where
        X: DeviceSort,
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DeviceSortBuffers<K>,
    {
        let tuning =
            tuning.unwrap_or_else(|| X::shipped::<K, C>(self, comp, S::VALUES, buffers.count()));
        buffers.with_args(self, X::VALUES_NAME, |args| {
            self.launch_sort::<K, C, X>(args.0, comp, tuning, scratch)
        })
    }

    /// [`sort_device`](Self::sort_device) with the mergesort at its shipped tuning, its last
    /// merge pass held ([`HeldPass`]): every kernel launched but that pass's tiles, which the
    /// caller launches by ranges (all of them) to finish the sort. `None` where no merge pass is
    /// left to hold (the sort is then complete, or the keys fewer than two).
    pub(crate) fn sort_device_held<K, C, S>(
        &self,
        buffers: S,
        comp: &C,
        scratch: &mut MergesortScratch,
    ) -> Result<Option<HeldPass>, GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DeviceSortBuffers<K>,
    {
        let tuning = MergesortScratch::shipped::<K, C>(self, comp, S::VALUES, buffers.count());
        let mut held = None;
        buffers.with_args(self, MergesortScratch::VALUES_NAME, |args| {
            held = self
                .with_sort_launch::<K, C, MergesortScratch, _>(args.0, comp, tuning, |sort| {
                    scratch.launch_passes(sort, tuning, true)
                })?
                .flatten();
            Ok(())
        })?;
        Ok(held)
    }

    /// Sort `buffers` in place at `tuning` with `scratch`'s sort
    /// ([`with_sort_launch`](Self::with_sort_launch)).
    fn launch_sort<K: DeviceKey, C: DeviceComparator<K> + ?Sized, X: DeviceSort>(
        &self,
        buffers: SortAddresses,
        comp: &C,
        tuning: X::Tuning,
        scratch: &mut X,
    ) -> Result<(), GpuError> {
        self.with_sort_launch::<K, C, X, _>(buffers, comp, tuning, |sort| {
            scratch.launch(sort, tuning)
        })
        .map(|_| ())
    }

    /// `launch` of the in-place sort of `buffers` at `tuning` by sort `X`: the tuning checked,
    /// nothing to do below two keys (`None`), else `launch` given the sort's program for `K`
    /// and `comp`.
    fn with_sort_launch<K, C, X, R>(
        &self,
        buffers: SortAddresses,
        comp: &C,
        tuning: X::Tuning,
        launch: impl FnOnce(SortLaunch) -> Result<R, GpuError>,
    ) -> Result<Option<R>, GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        X: DeviceSort,
    {
        let value_bytes = value_bytes(buffers.layout);
        (X::VALIDATE)(&tuning, size_of::<K>(), value_bytes)?;
        if buffers.count < 2 {
            return Ok(None);
        }
        let kernels = self.program_kernels::<K, C, _>(comp, buffers.layout, tuning)?;
        launch(SortLaunch {
            gpu: self,
            kernels: &kernels,
            buffers,
            key_bytes: size_of::<K>(),
            trusted: crate::compare::is_trusted(comp),
            guard: 0,
        })
        .map(Some)
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
        X: DeviceSort,
    {
        if let Some(values) = &values {
            check_len(X::VALUES_NAME, keys.len(), values.len())?;
        }
        let mut scratch = self.pooled_scratch::<X>();
        self.sort_host(keys, values, &mut scratch, |buffers, scratch| {
            let tuning = X::shipped::<K, C>(self, comp, buffers.layout, buffers.count);
            self.launch_sort::<K, C, X>(buffers, comp, tuning, scratch)?;
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

    /// The shipped mergesort tuning for `count` keys `K` under `comp` (and values of
    /// `value_bytes`) on this device: [`shipped_mergesort_tuning`](Self::shipped_mergesort_tuning)
    /// for the order's equivalents ([`MergesortTuning::for_launch_ordered`]). The sorts use this.
    pub fn shipped_mergesort_tuning_for<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        comp: &C,
        value_bytes: usize,
        count: usize,
    ) -> MergesortTuning {
        MergesortTuning::for_launch_ordered(
            size_of::<K>(),
            value_bytes,
            count,
            self.max_shared_per_block_optin(),
            self.multiprocessors() as usize,
            comp.equivalents_identical(),
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

/// One in-place sort's launches as [`DeviceSort::launch`] makes them (made by
/// [`Gpu::sort_device`] and the host-slice sorts): the buffers, the sort's program for their key
/// type and comparator, and what the launches need of those.
pub struct SortLaunch<'a> {
    pub(crate) gpu: &'a Gpu,
    pub(crate) kernels: &'a Kernels,
    /// At least two keys.
    pub(crate) buffers: SortAddresses,
    pub(crate) key_bytes: usize,
    /// Whether the comparator is one of twophase's own orders, trusted to be a strict weak
    /// order ([`DeviceComparator::trusted_order`]).
    pub(crate) trusted: bool,
    /// The address of a caller's check word (a `u32` on the device) that the mergesort's
    /// kernels read before touching the keys, each returning at once where it is non-zero (the
    /// caller refused its input on the device); 0 for none. Batcher's sort takes no guard.
    pub(crate) guard: u64,
}

impl SortLaunch<'_> {
    /// The bytes of a value (0 for keys alone).
    pub(crate) fn value_bytes(&self) -> usize {
        value_bytes(self.buffers.layout)
    }
}

/// An in-place device sort, picked by its scratch: the two-phase mergesort
/// ([`MergesortScratch`]) or Batcher's sort ([`BatcherScratch`](crate::BatcherScratch)), run by
/// [`Gpu::sort_device`]. Sealed: implemented by those two only.
pub trait DeviceSort: Sealed + Default + Send + 'static {
    /// The sort's tuning.
    type Tuning: ProgramTuning;

    /// The tuning the sort ships for `count` keys `K` under `comp` with values of `values`'
    /// layout on `gpu`.
    fn shipped<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        gpu: &Gpu,
        comp: &C,
        values: ValueLayout,
        count: usize,
    ) -> Self::Tuning;

    /// What a sort of pairs names when its values are not as many as its keys.
    const VALUES_NAME: &'static str;

    /// The tuning's check against what the sort's kernels support for keys of `key_bytes` bytes
    /// and values of `value_bytes` (0: keys only): its `validate`.
    const VALIDATE: fn(&Self::Tuning, usize, usize) -> Result<(), GpuError>;

    /// Make the sort's launches at `tuning` (checked) with this scratch.
    fn launch(&mut self, sort: SortLaunch, tuning: Self::Tuning) -> Result<(), GpuError>;

    /// What a host-slice sort checks after its launches, before the download: nothing unless
    /// the sort says otherwise.
    fn before_download(&mut self, _gpu: &Gpu) -> Result<(), GpuError> {
        Ok(())
    }
}

impl Sealed for MergesortScratch {}

impl DeviceSort for MergesortScratch {
    type Tuning = MergesortTuning;

    fn shipped<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        gpu: &Gpu,
        comp: &C,
        values: ValueLayout,
        count: usize,
    ) -> MergesortTuning {
        gpu.shipped_mergesort_tuning_for::<K, C>(comp, value_bytes(values), count)
    }

    const VALUES_NAME: &'static str = "mergesort values";

    const VALIDATE: fn(&MergesortTuning, usize, usize) -> Result<(), GpuError> =
        MergesortTuning::validate;

    fn launch(&mut self, sort: SortLaunch, tuning: MergesortTuning) -> Result<(), GpuError> {
        self.launch_passes(sort, tuning, false).map(|_| ())
    }

    /// On an inconsistent comparator the host slices keep their keys as they were (a
    /// permutation, and what the caller had).
    fn before_download(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.check(gpu)
    }
}

impl ProgramTuning for MergesortTuning {
    const SOURCES: &'static [&'static str] = &MERGESORT_SOURCES;

    /// The block sort maps keys to their image as it loads them, the last kernel back as it
    /// stores them (kernels/mergesort_blocksort.cu `key_image_out`).
    const MAPS_KEY_IMAGES: bool = true;

    /// The pass shape (the block-sort shape is in every program's name already).
    fn label(self) -> String {
        format!(
            "mergesort_r{}_pass{}r{}_quad{}r{}_oct{}r{}",
            self.block_registers,
            self.pass_threads,
            self.pass_registers,
            self.quad_threads,
            self.quad_registers,
            self.oct_threads,
            self.oct_registers
        )
    }

    fn shape(self) -> (u32, u32) {
        (self.threads, self.vt)
    }

    /// The four-way and eight-way passes' kernels only when the tuning has them.
    fn entries(self) -> &'static [&'static str] {
        // The block sort and the two-way pass's kernels.
        const TWO_WAY: &[&str] = MERGESORT_ENTRIES.split_at(4).0;
        // And the four-way pass's.
        const FOUR_WAY: &[&str] = MERGESORT_ENTRIES.split_at(6).0;
        match (self.quad_threads, self.oct_threads) {
            (0, _) => TWO_WAY,
            (_, 0) => FOUR_WAY,
            _ => &MERGESORT_ENTRIES,
        }
    }

    /// `TP_NT` is the block sort's threads, `TP_PASS_NT` the merge passes'.
    fn defines(self) -> String {
        format!(
            "#define TP_BLOCK_REGISTERS {}\n#define TP_PASS_NT {}\n#define TP_PASS_REGISTERS {}\n#define TP_QUAD_NT {}\n#define TP_QUAD_REGISTERS {}\n#define TP_OCT_NT {}\n#define TP_OCT_REGISTERS {}\n",
            self.block_registers, self.pass_threads, self.pass_registers, self.quad_threads, self.quad_registers, self.oct_threads, self.oct_registers
        )
    }

    fn params(self) -> Vec<&'static ParamLayout> {
        params::param_layouts(self)
    }

    /// At its tuning for the H100, within static shared memory (for devices with less opt-in
    /// shared memory, and small sorts), at small sorts' VT, those two with each two-way tile
    /// register bound `for_launch` may take, and with large sorts' four-way tiles (a handle picks
    /// by its device and the sort's size, [`Gpu::shipped_mergesort_tuning`]).
    const SHIPPED: &'static [fn(usize, usize) -> Self] = &[
        Self::for_types,
        Self::within_static_shared,
        Self::for_small_sorts,
        Self::for_small_sorts_bounded::<{ ONE_ROUND_PASS_REGISTERS[0] }>,
        Self::for_small_sorts_bounded::<{ ONE_ROUND_PASS_REGISTERS[1] }>,
        Self::for_small_sorts_bounded::<{ ONE_ROUND_PASS_REGISTERS[2] }>,
        Self::within_static_shared_bounded::<{ ONE_ROUND_PASS_REGISTERS[0] }>,
        Self::within_static_shared_bounded::<{ ONE_ROUND_PASS_REGISTERS[1] }>,
        Self::within_static_shared_bounded::<{ ONE_ROUND_PASS_REGISTERS[2] }>,
        |key_bytes, value_bytes| Self::for_large_sorts(key_bytes, value_bytes, usize::MAX),
    ];
}
