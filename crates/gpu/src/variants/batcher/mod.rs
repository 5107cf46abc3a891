//! Batcher's odd-even merge sort as a sort variant beside the two-phase mergesort.
//!
//! The kernels are in `kernels/batcher.cu` (the network, its launches and why the short strides
//! of the large merge levels run on overlapping windows). The sort works for any n without
//! padding: positions past n act as +infinity. It is **not stable**: keys that compare equal
//! (and the values moving with them) may come out in any order.

use cudarc::driver::CudaSlice;

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};

use crate::merge::buffers::Sealed;
use crate::mergesort::{DeviceSort, DeviceSortBuffers, MergesortScratch, SortLaunch};
use crate::primitive::ProgramTuning;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{param_block, KernelParams, LaunchShape, ParamLayout};
use crate::runtime::program::{ValueLayout, PARTITION_CUH};
use crate::runtime::shape::MAX_GRID_X;

pub mod tuning;

pub use tuning::{
    BatcherTuning, BATCHER_COMPARATORS_PER_THREAD, BATCHER_FUSED_STRIDE_DIVISOR,
    BATCHER_STAGE_THREADS,
};

/// Entry point sorting every tile in shared memory (all levels whose runs fit in a tile).
pub const BATCHER_ENTRY_BLOCK: &str = "twophase_batcher_block";
/// Entry point of one stage of a large level on global memory.
pub const BATCHER_ENTRY_STAGE: &str = "twophase_batcher_stage";
/// Entry point of a large level's short strides, fused on overlapping windows.
pub const BATCHER_ENTRY_FUSED: &str = "twophase_batcher_fused";
/// Which sort a sort call runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortVariant {
    /// Batcher's odd-even merge sort: a fixed network of O(n log² n) compare-exchanges. Not
    /// stable.
    Batcher,
    /// The two-phase mergesort ([`MergesortScratch`] in [`Gpu::sort_device`]): stable,
    /// O(n log n). The faster of the two on the H100 at every size measured
    /// (docs/benchmarks.md), hence the default.
    #[default]
    TwoPhase,
}

impl SortVariant {
    /// Both variants.
    pub const ALL: [SortVariant; 2] = [SortVariant::Batcher, SortVariant::TwoPhase];

    /// The variant's name in benchmark tables and CSVs.
    pub const fn name(self) -> &'static str {
        match self {
            SortVariant::Batcher => "batcher",
            SortVariant::TwoPhase => "twophase",
        }
    }

    /// Whether equal keys keep their input order.
    pub const fn is_stable(self) -> bool {
        matches!(self, SortVariant::TwoPhase)
    }
}

/// Batcher's device scratch: the second buffer of keys (and values) the fused launches write
/// into. It only grows, so repeated sorts of the same or smaller size allocate nothing.
#[derive(Debug, Default)]
pub struct BatcherScratch {
    keys: Option<CudaSlice<u8>>,
    values: Option<CudaSlice<u8>>,
}

impl BatcherScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Device scratch of the sort variants: the two-phase mergesort's and Batcher's.
#[derive(Debug, Default)]
pub struct SortScratch {
    /// Used by [`SortVariant::TwoPhase`].
    pub mergesort: MergesortScratch,
    /// Used by [`SortVariant::Batcher`].
    pub batcher: BatcherScratch,
}

impl SortScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

param_block! {
    /// The parameter block of `twophase_batcher_block` (kernels/batcher.cu).
    struct BatcherBlockParams as "batcher_block_params" {
        src: u64,
        src_vals: u64,
        n: u64,
        dst: u64,
        dst_vals: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_batcher_stage` (kernels/batcher.cu).
    struct BatcherStageParams as "batcher_stage_params" {
        keys: u64,
        vals: u64,
        n: u64,
        p: u64,
        k: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_batcher_fused` (kernels/batcher.cu).
    struct BatcherFusedParams as "batcher_fused_params" {
        src: u64,
        src_vals: u64,
        n: u64,
        p: u64,
        dst: u64,
        dst_vals: u64,
    }
}

/// Blocks of a grid covering `items` with `per_block` each, within CUDA's grid limit.
fn grid(items: usize, per_block: usize) -> Result<u32, GpuError> {
    let blocks = items.div_ceil(per_block);
    if blocks as u64 > MAX_GRID_X {
        return Err(GpuError::TooLarge(format!(
            "{items} items need {blocks} blocks"
        )));
    }
    Ok(blocks as u32)
}

impl BatcherScratch {
    /// Batcher's launches (at least two keys): the block sort, then for each larger level its
    /// global stages and one fused launch, ping-ponging with this scratch so that the last
    /// fused launch writes into the caller's buffers. Under a comparator that is not one of
    /// twophase's own orders every stride is a global stage, in place: the fused windows
    /// overlap, and a halo's compare-exchanges, run again by the next window, could be answered
    /// differently there by a comparator whose answers change from call to call (two windows
    /// would then write the same key twice and lose another).
    fn launch_network(&mut self, sort: SortLaunch, tuning: BatcherTuning) -> Result<(), GpuError> {
        let value_bytes = sort.value_bytes();
        let SortLaunch {
            gpu,
            kernels,
            key_bytes,
            buffers,
            trusted,
            ..
        } = sort;
        let (keys, values, count) = (buffers.keys, buffers.values, buffers.count);
        let [block, stage, fused] = kernels.functions([
            BATCHER_ENTRY_BLOCK,
            BATCHER_ENTRY_STAGE,
            BATCHER_ENTRY_FUSED,
        ])?;
        let tile = tuning.tile as usize;
        let block_shape = LaunchShape::new(grid(count, tile)?, tuning.threads);
        let stage_shape = LaunchShape::new(
            grid(count / 2, BATCHER_STAGE_THREADS as usize)?,
            BATCHER_STAGE_THREADS,
        );
        let fused_shape = LaunchShape::new(grid(count, tuning.fused_outputs())?, tuning.threads);
        // The levels p >= tile (p < count), each ending in one fused launch where the comparator
        // is trusted.
        let levels = (0..)
            .map(|level| (tile as u128) << level)
            .take_while(|&p| p < count as u128)
            .count();
        let fused_levels = if trusted { levels } else { 0 };
        let bytes = |size: usize| {
            count
                .checked_mul(size)
                .ok_or_else(|| GpuError::TooLarge(format!("{count} elements of {size} bytes")))
        };
        let fuse = fused_levels > 0;
        let other_keys = if fuse {
            gpu.grow_scratch_address(&mut self.keys, bytes(key_bytes)?)?
        } else {
            0
        };
        let other_values = if fuse && buffers.layout.is_some() {
            gpu.grow_scratch_address(&mut self.values, bytes(value_bytes)?)?
        } else {
            0
        };
        // An odd number of fused launches starts in the scratch, so that the last lands in `keys`.
        let (mut current, mut other) = ((keys, values), (other_keys, other_values));
        if fused_levels % 2 == 1 {
            std::mem::swap(&mut current, &mut other);
        }
        let n = count as u64;
        let block_params = BatcherBlockParams {
            src: keys,
            src_vals: values,
            n,
            dst: current.0,
            dst_vals: current.1,
        };
        // SAFETY: the block is twophase_batcher_block's (kernels/batcher.cu; the program asserts
        // the layouts equal); `keys` (and `values`) and the scratch hold `count` elements each,
        // valid on this stream (the callers hold the guards of `keys` and `values` across this
        // call, the scratch is borrowed for it); one block per tile; tiles are disjoint, so
        // reading and writing the same buffer is safe; values are touched only when the program
        // has them.
        unsafe { gpu.launch(block, block_shape, &block_params) }?;
        // The strides a level runs as global stages: all of them without fused launches.
        let last_stage = if fuse {
            tuning.fused_stride() as u64
        } else {
            0
        };
        let mut p = tile as u64;
        while p < n {
            let mut k = p;
            while k > last_stage {
                let stage_params = BatcherStageParams {
                    keys: current.0,
                    vals: current.1,
                    n,
                    p,
                    k,
                };
                // SAFETY: the block is twophase_batcher_stage's (the program asserts the layouts
                // equal); one thread per comparator (n / 2 of them at most), each touching only
                // its own two positions below n of the current buffers, which hold `count`
                // elements.
                unsafe { gpu.launch(stage, stage_shape, &stage_params) }?;
                k /= 2;
            }
            if !fuse {
                p *= 2;
                continue;
            }
            let fused_params = BatcherFusedParams {
                src: current.0,
                src_vals: current.1,
                n,
                p,
                dst: other.0,
                dst_vals: other.1,
            };
            // SAFETY: the block is twophase_batcher_fused's (the program asserts the layouts
            // equal); reads the current buffers and writes the other ones (distinct allocations
            // of `count` elements), each position below n written by exactly one block.
            unsafe { gpu.launch(fused, fused_shape, &fused_params) }?;
            std::mem::swap(&mut current, &mut other);
            p *= 2;
        }
        Ok(())
    }
}

impl Gpu {
    /// Sort the device buffers `buffers` ([`SortBuffers::keys`](crate::mergesort::SortBuffers::keys)
    /// or [`SortBuffers::pairs`](crate::mergesort::SortBuffers::pairs)) by
    /// key in place with `variant` under `comp`, at the shipped tunings (Batcher: not stable,
    /// equal keys' values in any order): [`sort_device`](Self::sort_device) with the variant's
    /// scratch. Asynchronous on this handle's stream.
    pub fn sort_variant_device<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        variant: SortVariant,
        buffers: impl DeviceSortBuffers<K>,
        comp: &C,
        scratch: &mut SortScratch,
    ) -> Result<(), GpuError> {
        match variant {
            SortVariant::TwoPhase => self.sort_device(buffers, comp, None, &mut scratch.mergesort),
            SortVariant::Batcher => self.sort_device(buffers, comp, None, &mut scratch.batcher),
        }
    }

    /// Host convenience: sort `keys` in place on the GPU with `variant` under `comp`.
    pub fn sort_variant<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        variant: SortVariant,
        keys: &mut [K],
        comp: &C,
    ) -> Result<(), GpuError> {
        match variant {
            SortVariant::TwoPhase => self.mergesort(keys, comp),
            SortVariant::Batcher => self.sort_slices::<K, u8, C, BatcherScratch>(keys, None, comp),
        }
    }

    /// Host convenience: sort key-value pairs in place on the GPU by key with `variant`.
    pub fn sort_pairs_variant<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        variant: SortVariant,
        keys: &mut [K],
        values: &mut [V],
        comp: &C,
    ) -> Result<(), GpuError> {
        match variant {
            SortVariant::TwoPhase => self.mergesort_pairs(keys, values, comp),
            SortVariant::Batcher => {
                self.sort_slices::<K, V, C, BatcherScratch>(keys, Some(values), comp)
            }
        }
    }
}

impl Sealed for BatcherScratch {}

impl DeviceSort for BatcherScratch {
    type Tuning = BatcherTuning;

    fn shipped<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        _gpu: &Gpu,
        _comp: &C,
        values: ValueLayout,
        _count: usize,
    ) -> BatcherTuning {
        BatcherTuning::for_layout::<K>(values)
    }

    const VALUES_NAME: &'static str = "sort values";

    const VALIDATE: fn(&BatcherTuning, usize, usize) -> Result<(), GpuError> =
        BatcherTuning::validate;

    fn launch(&mut self, sort: SortLaunch, tuning: BatcherTuning) -> Result<(), GpuError> {
        self.launch_network(sort, tuning)
    }
}

impl ProgramTuning for BatcherTuning {
    /// The shared partition helpers, then `kernels/batcher.cu`: the block-sort, global-stage and
    /// fused-stride kernels of the network.
    const SOURCES: &'static [&'static str] =
        &[PARTITION_CUH, include_str!("../../../kernels/batcher.cu")];

    /// The stage kernel's block size (the tile's threads and VT are in every program's name).
    fn label(self) -> String {
        format!("batcher_snt{BATCHER_STAGE_THREADS}")
    }

    fn shape(self) -> (u32, u32) {
        (self.threads, self.vt())
    }

    fn entries(self) -> &'static [&'static str] {
        &[
            BATCHER_ENTRY_BLOCK,
            BATCHER_ENTRY_STAGE,
            BATCHER_ENTRY_FUSED,
        ]
    }

    fn defines(self) -> String {
        format!(
            "#define TP_STAGE_NT {BATCHER_STAGE_THREADS}\n#define TP_FUSED_DIVISOR {BATCHER_FUSED_STRIDE_DIVISOR}\n"
        )
    }

    fn params(self) -> Vec<&'static ParamLayout> {
        vec![
            &BatcherBlockParams::LAYOUT,
            &BatcherStageParams::LAYOUT,
            &BatcherFusedParams::LAYOUT,
        ]
    }

    const SHIPPED: &'static [fn(usize, usize) -> Self] = &[Self::for_types];
}
