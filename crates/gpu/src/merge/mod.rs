//! The two-phase GPU merge: tuning, scratch, program instantiation and the launches.

use std::mem::size_of;

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::primitive::{value_bytes, ProgramTuning};
use crate::runtime::device::Gpu;
use crate::runtime::launch::{check_words, param_block, param_group, KernelParams, ParamLayout};
use crate::runtime::phases::{partition_params, PhaseScratch};
use crate::runtime::program::{ValueLayout, CTA_MERGE_CUH, PARTITION_CUH, SERIAL_CUH};
use crate::runtime::status::{
    messages, StatusNames, STATUS_FIRST_UNSORTED, STATUS_ORDER_INCONSISTENT, STATUS_SECOND_UNSORTED,
};

pub mod buffers;
pub mod device;
pub mod host;
pub mod tuning;
mod window;

pub use buffers::{
    DeviceMergeBuffers, KeysOnly, MergeArgs, MergeBuffers, MergeValueBuffers, MergeValues,
};
pub use device::MergeAlgorithm;
pub use host::{HostMergeSlices, MergeSlices, SliceValues};
pub use tuning::{
    MergeTuning, FAST_MEMORY_BYTES_PER_SM, FAST_WIDE_KEYS_BLOCKS_PER_SM, KEYS_BLOCKS_PER_SM,
    NARROW_KEYS_BLOCKS_PER_SM, NARROW_PAIRS_BLOCKS_PER_SM, PAIRS_BLOCKS_PER_SM,
};

/// Entry point of the merge's partition kernel.
pub const MERGE_ENTRY_PARTITION: &str = "twophase_merge_partition";
/// Entry point of the merge's tile kernel.
pub const MERGE_ENTRY_TILE: &str = "twophase_merge_tile";
/// Entry point of a streamed merge's window cuts (crates/gpu/src/sharded/stream.rs).
pub const MERGE_ENTRY_WINDOW_CUTS: &str = "twophase_merge_window_cuts";
/// Entry point of a cut's strided samples across devices (crates/gpu/src/sharded/cuts.rs).
pub const MERGE_ENTRY_GATHER: &str = "twophase_merge_gather";

/// Device scratch of the merge (the partitions), reusable across calls: it only grows, so a loop
/// of calls of the same or smaller size allocates nothing.
///
/// It also holds the input check of the calls that use it: a merge whose inputs turn out not to be
/// sorted under the comparator (or whose comparator answers inconsistently) still writes a
/// permutation of its inputs and stays inside its buffers, and raises a status here, which
/// [`check`](Self::check) reports.
#[derive(Debug, Default)]
pub struct MergeScratch {
    pub(crate) phases: PhaseScratch,
}

/// What the merge's status bits say, for a keys merge.
const MERGE_STATUS: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::A_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::B_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT),
];

/// What the merge's status bits say, for a key-value merge.
const MERGE_PAIRS_STATUS: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::A_KEYS_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::B_KEYS_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT),
];

impl MergeScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for this handle's stream, then report whether a device-buffer merge that used this
    /// scratch since the last check found its input out of order: `Err(InvalidInput)` naming
    /// `a` or `b` (or the comparator, when it answered inconsistently). The status is cleared.
    /// Such a merge's output is a permutation of its inputs in unspecified order.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.phases.input_check.check(gpu, MERGE_STATUS)
    }
}

/// The merge's kernel sources, in the order they follow the prelude: the shared ones, then
/// `kernels/merge.cu` (the partition and tile kernels of the merge).
pub const MERGE_SOURCES: [&str; 4] = [
    PARTITION_CUH,
    SERIAL_CUH,
    CTA_MERGE_CUH,
    include_str!("../../kernels/merge.cu"),
];

partition_params! {
    /// The parameter block of `twophase_merge_partition` (kernels/merge.cu).
    struct MergePartitionParams as "merge_partition_params" {
        a: u64,
        a_count: u64,
        b: u64,
        b_count: u64,
    }
}

param_group! {
    /// A merge's inputs in its kernels' parameter blocks (`..merge_inputs`): `a` and `b` and
    /// their counts.
    merge_inputs { a: u64, a_count: u64, b: u64, b_count: u64 }
}
pub(crate) use merge_inputs;

param_group! {
    /// A merge's outputs in its kernels' parameter blocks (`..merge_outputs`): the merged keys,
    /// then the addresses of A's, B's and the output's values (zeros for keys only).
    merge_outputs { out: u64, a_vals: u64, b_vals: u64, out_vals: u64 }
}
pub(crate) use merge_outputs;

/// The parameter block `$block` of a merge kernel whose body is `..merge_inputs`,
/// `..merge_outputs` and `..check_words` besides its own `$field`s (`field: value` or `field`): the inputs and outputs from the
/// [`MergeArgs`] `$args`, the check words from `$check` (a
/// [`CheckArgs`](crate::runtime::status::CheckArgs) or a
/// [`PartitionArgs`](crate::runtime::phases::PartitionArgs)).
macro_rules! merge_block {
    ($block:ident { $args:expr, $check:expr $(, $field:ident $(: $value:expr)?)* $(,)? }) => {{
        let (args, check): (&$crate::merge::MergeArgs, _) = (&$args, $check);
        $block {
            a: args.a,
            a_count: args.a_count as u64,
            b: args.b,
            b_count: args.b_count as u64,
            out: args.out,
            a_vals: args.values.0,
            b_vals: args.values.1,
            out_vals: args.values.2,
            status: check.status,
            repair: check.repair,
            generation: check.generation,
            $($field $(: $value)?,)*
        }
    }};
}
pub(crate) use merge_block;

param_block! {
    /// The parameter block of `twophase_merge_tile` (kernels/merge.cu).
    struct MergeTileParams as "merge_tile_params" {
        ..merge_inputs,
        partitions: u64,
        ..merge_outputs,
        ..check_words,
    }
}

/// What a merge's count of outputs counts, in its too-large error.
pub(crate) const MERGE_OUTPUTS: &str = "outputs";

impl Gpu {
    /// The merge's shipped tuning on this device for `outputs` keys `K` with values of `values`'
    /// layout: [`MergeTuning::for_launch`] at the device memory's peak bandwidth per SM.
    pub fn merge_tuning<K: DeviceKey>(&self, values: ValueLayout, outputs: usize) -> MergeTuning {
        let per_sm = self.memory_bandwidth() / u64::from(self.multiprocessors().max(1));
        MergeTuning::for_launch(size_of::<K>(), value_bytes(values), per_sm, outputs)
    }

    pub(crate) fn launch_merge<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        args: MergeArgs,
        comp: &C,
        values: ValueLayout,
        tuning: MergeTuning,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError> {
        let total = args.a_count + args.b_count;
        tuning.validate(size_of::<K>())?;
        if total == 0 {
            return Ok(());
        }
        let kernels = self.program_kernels::<K, C, _>(comp, values, tuning)?;
        let [partition, tile_kernel] =
            kernels.functions([MERGE_ENTRY_PARTITION, MERGE_ENTRY_TILE])?;

        let (a_count, b_count) = (args.a_count as u64, args.b_count as u64);
        self.launch_phases(
            (total, MERGE_OUTPUTS),
            (tuning.tile(), tuning.threads),
            &mut scratch.phases,
            |shape, phase| {
                let params = MergePartitionParams::new(args.a, a_count, args.b, b_count, phase);
                // SAFETY: the block is twophase_merge_partition's (kernels/merge.cu; the program
                // asserts the layouts equal); `partitions` holds `num_partitions` entries, the
                // inputs `a_count` and `b_count` keys, the check's words live in the scratch, all
                // valid on this stream until the launches are made (launch_phases), as is the
                // arrival word (0 between launches). The shape's groups cover every boundary.
                unsafe { self.launch(partition, shape, &params) }
            },
            |shape, phase| {
                let params = merge_block!(MergeTileParams {
                    args,
                    phase,
                    partitions: phase.partitions
                });
                // SAFETY: the block is twophase_merge_tile's (kernels/merge.cu; the program
                // asserts the layouts equal); `out` (and `out_vals`) hold a_count + b_count
                // elements (checked by the callers), the value addresses are read only when the
                // program was instantiated with values; the grid has one block per tile. As a
                // programmatic dependent, the tile kernel waits (griddepcontrol.wait) for the
                // partition kernel before reading the partitions.
                unsafe { self.launch(tile_kernel, shape, &params) }
            },
        )
    }
}

impl ProgramTuning for MergeTuning {
    const SOURCES: &'static [&'static str] = &MERGE_SOURCES;

    /// The launch bound's block count is part of the program (and so of its cache key and name).
    fn label(self) -> String {
        format!("merge_b{}", self.blocks_per_sm)
    }

    fn shape(self) -> (u32, u32) {
        (self.threads, self.vt)
    }

    fn entries(self) -> &'static [&'static str] {
        &[
            MERGE_ENTRY_PARTITION,
            MERGE_ENTRY_TILE,
            MERGE_ENTRY_WINDOW_CUTS,
            MERGE_ENTRY_GATHER,
        ]
    }

    fn defines(self) -> String {
        format!("#define TP_MIN_BLOCKS {}\n", self.blocks_per_sm)
    }

    fn params(self) -> Vec<&'static ParamLayout> {
        vec![
            &MergePartitionParams::LAYOUT,
            &MergeTileParams::LAYOUT,
            &window::MergeWindowCutsParams::LAYOUT,
            &window::MergeGatherParams::LAYOUT,
        ]
    }

    const SHIPPED: &'static [fn(usize, usize) -> Self] = &[
        Self::for_types,
        Self::for_fast_memory,
        Self::for_large_fast_memory,
    ];
}
