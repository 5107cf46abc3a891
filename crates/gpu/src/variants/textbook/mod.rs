//! The textbook's merge kernels (basic, tiled, circular buffer) as merge variants beside the two-phase merge.
//!
//! The kernels are in `kernels/merge_textbook.cu` (see its comments for where they differ from
//! the published code); the two-phase merge is [`crate::merge`]. [`MergeVariant`] selects one
//! of the four in every merge call of this module, and on device buffers in
//! [`Gpu::merge_device`] ([`MergeAlgorithm::Variant`](crate::MergeAlgorithm::Variant)).

use std::mem::size_of;

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::merge::host::HostMergeSlices;
use crate::merge::{
    merge_block, merge_inputs, merge_outputs, MergeArgs, MergeScratch, MERGE_OUTPUTS,
};
use crate::primitive::ProgramTuning;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{check_words, param_block, KernelParams, ParamLayout};
use crate::runtime::phases::partition_params;
use crate::runtime::program::{ValueLayout, PARTITION_CUH, SERIAL_CUH};
use crate::runtime::status::{
    messages, status_error, InputCheck, StatusNames, STATUS_FIRST_UNSORTED,
    STATUS_ORDER_INCONSISTENT, STATUS_SECOND_UNSORTED,
};

pub mod tuning;

pub use tuning::{
    TextbookMergeTuning, TEXTBOOK_THREADS, TEXTBOOK_TILES_PER_BLOCK, TEXTBOOK_VT, TEXTBOOK_VT_WIDE,
};

/// Entry point of the partition launch before each textbook merge: the co-rank at every block's
/// cut, each searched once.
pub const TEXTBOOK_ENTRY_PARTITION: &str = "twophase_textbook_partition";
/// Entry point of the basic merge (co-ranks and merge on global memory).
pub const TEXTBOOK_ENTRY_BASIC: &str = "twophase_merge_basic";
/// Entry point of the tiled merge (shared-memory tiles, reloaded every iteration).
pub const TEXTBOOK_ENTRY_TILED: &str = "twophase_merge_tiled";
/// Entry point of the circular-buffer merge (shared-memory rings).
pub const TEXTBOOK_ENTRY_CIRCULAR: &str = "twophase_merge_circular";

/// What the status bits of a textbook merge mean. Co-ranks out of order come from unsorted
/// inputs as well as from an inconsistent comparator, so that bit names both; when an input is
/// found unsorted, only that input is named.
const TEXTBOOK_STATUS_NAMES: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::A_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::B_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, TEXTBOOK_ORDER_INCONSISTENT),
];

/// [`TEXTBOOK_STATUS_NAMES`] for a key-value merge, whose inputs are `a_keys` and `b_keys`.
const TEXTBOOK_PAIRS_STATUS_NAMES: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::A_KEYS_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::B_KEYS_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, TEXTBOOK_ORDER_INCONSISTENT),
];

/// The error of a textbook merge whose co-ranks or outputs came out of order with both inputs
/// found in order where the kernel looked.
pub const TEXTBOOK_ORDER_INCONSISTENT: &str =
    "`a` or `b` is not sorted under the comparator, or the comparator does not implement a strict weak order";

/// The error of a textbook merge's status `bits` under `names`, or `None`.
fn textbook_status_error(bits: u32, names: StatusNames) -> Option<GpuError> {
    let bits = if bits & (STATUS_FIRST_UNSORTED | STATUS_SECOND_UNSORTED) != 0 {
        bits & !STATUS_ORDER_INCONSISTENT
    } else {
        bits
    };
    status_error(bits, names)
}

/// Which merge kernel a merge call runs. All four merge stably (A first on ties), with any
/// [`DeviceKey`], [`DeviceComparator`] and value type, at any size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MergeVariant {
    /// The textbook's basic kernel: every thread finds the co-ranks of its output range by
    /// binary search in global memory and merges from global memory.
    Basic,
    /// The textbook's tiled kernel: blocks walk their output range in shared-memory tiles,
    /// loading both inputs' next tile each iteration (half of it is loaded again next time).
    Tiled,
    /// The textbook's circular-buffer kernel: as `Tiled`, but unconsumed input stays in shared
    /// ring buffers, so every input element is read once.
    Circular,
    /// The two-phase merge ([`MergeAlgorithm::TwoPhase`](crate::MergeAlgorithm::TwoPhase) in
    /// [`Gpu::merge_device`]): merge path partitions once per tile, then a
    /// register-unrolled serial merge and coalesced stores. The fastest of the four on the H100
    /// from 2^24 outputs on (1.39x the tiled kernel at 2^27), hence the default; at 2^20 the
    /// basic kernel measured 10% faster (docs/benchmarks.md), when it was one launch instead of
    /// two (its block cuts now come from a partition launch too; not measured since).
    #[default]
    TwoPhase,
}

impl MergeVariant {
    /// All variants, textbook kernels first.
    pub const ALL: [MergeVariant; 4] = [
        MergeVariant::Basic,
        MergeVariant::Tiled,
        MergeVariant::Circular,
        MergeVariant::TwoPhase,
    ];

    /// The variant's name in benchmark tables and CSVs.
    pub const fn name(self) -> &'static str {
        match self {
            MergeVariant::Basic => "basic",
            MergeVariant::Tiled => "tiled",
            MergeVariant::Circular => "circular",
            MergeVariant::TwoPhase => "twophase",
        }
    }
}

partition_params! {
    /// The parameter block of `twophase_textbook_partition` (kernels/merge_textbook.cu).
    struct TextbookPartitionParams as "textbook_partition_params" {
        a: u64,
        a_count: u64,
        b: u64,
        b_count: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_merge_basic`, `twophase_merge_tiled` and
    /// `twophase_merge_circular` (kernels/merge_textbook.cu).
    struct TextbookMergeParams as "textbook_merge_params" for [
        "twophase_merge_basic",
        "twophase_merge_tiled",
        "twophase_merge_circular"
    ] {
        ..merge_inputs,
        partitions: u64,
        ..merge_outputs,
        ..check_words,
    }
}

impl Gpu {
    /// Run one merge of `args` with `variant`: the two-phase merge at its shipped tuning, or a
    /// textbook kernel at `tuning` after the partition launch of its block cuts (two launches
    /// through [`Gpu::launch_phases_checked`], on the scratch's partitions), checking its input
    /// into `check`, or into the scratch's own check when `None` (the device-buffer call, whose
    /// caller reads it through [`MergeScratch::check`]). The output is a permutation of the
    /// inputs whatever the keys and the comparator.
    #[allow(clippy::too_many_arguments)] // The call's shape: each argument is one part of it.
    pub(crate) fn launch_merge_variant<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        variant: MergeVariant,
        args: MergeArgs,
        comp: &C,
        values: ValueLayout,
        tuning: TextbookMergeTuning,
        scratch: &mut MergeScratch,
        check: Option<&mut InputCheck>,
    ) -> Result<(), GpuError> {
        let entry = match variant {
            MergeVariant::TwoPhase => {
                let shipped = self.merge_tuning::<K>(values, args.a_count + args.b_count);
                return self.launch_merge::<K, C>(args, comp, values, shipped, scratch);
            }
            MergeVariant::Basic => TEXTBOOK_ENTRY_BASIC,
            MergeVariant::Tiled => TEXTBOOK_ENTRY_TILED,
            MergeVariant::Circular => TEXTBOOK_ENTRY_CIRCULAR,
        };
        let total = args.a_count + args.b_count;
        tuning.validate(size_of::<K>())?;
        if total == 0 {
            return Ok(());
        }
        let kernels = self.program_kernels::<K, C, _>(comp, values, tuning)?;
        let [partition, merge] = kernels.functions([TEXTBOOK_ENTRY_PARTITION, entry])?;
        // Outputs of one block, the spacing of the block cuts: the kernels' TILE (basic) or
        // BLOCK_OUTPUTS (tiled, circular).
        let per_block = if variant == MergeVariant::Basic {
            tuning.tile()
        } else {
            tuning.block_outputs()
        };
        let (a_count, b_count) = (args.a_count as u64, args.b_count as u64);
        self.launch_phases_checked(
            (total, MERGE_OUTPUTS),
            (per_block, tuning.threads),
            &mut scratch.phases,
            check,
            |shape, phase| {
                let params = TextbookPartitionParams::new(args.a, a_count, args.b, b_count, phase);
                // SAFETY: the block is twophase_textbook_partition's (kernels/merge_textbook.cu;
                // the program asserts the layouts equal); `partitions` holds `num_partitions`
                // entries, the inputs `a_count` and `b_count` keys, the check's words live in the
                // scratch or the caller's check, all valid on this stream until the launches are
                // made (launch_phases_checked). The shape's blocks cover every boundary.
                unsafe { self.launch(partition, shape, &params) }
            },
            |shape, phase| {
                let params = merge_block!(TextbookMergeParams {
                    args,
                    phase,
                    partitions: phase.partitions
                });
                // SAFETY: the block is that of the three merge kernels of
                // kernels/merge_textbook.cu (the program asserts the layouts equal); the inputs
                // hold a_count and b_count keys, the output (and output values) a_count +
                // b_count, as checked by the callers; the value addresses are read only when the
                // program has values; the grid has one block per `per_block` outputs, the
                // spacing of the partitions it reads; every buffer stays valid on this stream
                // until the callers' guards drop after the launch. As a programmatic dependent,
                // each kernel waits (griddepcontrol.wait) for the partition kernel before
                // reading the partitions, and stays inside these ranges for any keys and
                // comparator (kernels/merge_textbook.cu).
                unsafe { self.launch(merge, shape, &params) }
            },
        )
    }

    /// Host convenience: merge sorted host slices on the GPU with `variant`:
    /// [`MergeSlices::keys`](crate::merge::MergeSlices::keys) returns the merged keys,
    /// [`MergeSlices::pairs`](crate::merge::MergeSlices::pairs) the merged keys and values (each
    /// value moving with its key). Inputs found unsorted under `comp` give
    /// [`GpuError::InvalidInput`] naming `a` or `b`.
    pub fn merge_variant<K, C, S>(
        &self,
        variant: MergeVariant,
        slices: S,
        comp: &C,
    ) -> Result<S::Output, GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: HostMergeSlices<K>,
    {
        let mut check = InputCheck::new();
        let merged = slices.merge_on(self, |args, scratch| {
            let tuning = TextbookMergeTuning::for_layout::<K>(S::VALUES);
            self.launch_merge_variant::<K, C>(
                variant,
                args,
                comp,
                S::VALUES,
                tuning,
                scratch,
                Some(&mut check),
            )
        })?;
        let names = if S::VALUES.is_some() {
            TEXTBOOK_PAIRS_STATUS_NAMES
        } else {
            TEXTBOOK_STATUS_NAMES
        };
        // What the textbook kernels found in the input (nothing for the two-phase merge, which
        // reports through its own scratch).
        match textbook_status_error(check.take_status(self)?, names) {
            Some(error) => Err(error),
            None => Ok(merged),
        }
    }
}

impl ProgramTuning for TextbookMergeTuning {
    /// The shared sources, then `kernels/merge_textbook.cuh` (the helpers the textbook merge
    /// kernels share) and `kernels/merge_textbook.cu` (the partition kernel of the block cuts and
    /// the basic, tiled and circular-buffer merge kernels).
    const SOURCES: &'static [&'static str] = &[
        PARTITION_CUH,
        SERIAL_CUH,
        include_str!("../../../kernels/merge_textbook.cuh"),
        include_str!("../../../kernels/merge_textbook.cu"),
    ];

    /// The tiles per block (threads and VT are in every program's name already).
    fn label(self) -> String {
        format!("merge_textbook_tpb{}", self.tiles_per_block)
    }

    fn shape(self) -> (u32, u32) {
        (self.threads, self.vt)
    }

    fn entries(self) -> &'static [&'static str] {
        &[
            TEXTBOOK_ENTRY_PARTITION,
            TEXTBOOK_ENTRY_BASIC,
            TEXTBOOK_ENTRY_TILED,
            TEXTBOOK_ENTRY_CIRCULAR,
        ]
    }

    fn defines(self) -> String {
        format!("#define TP_TILES_PER_BLOCK {}\n", self.tiles_per_block)
    }

    fn params(self) -> Vec<&'static ParamLayout> {
        vec![
            &TextbookPartitionParams::LAYOUT,
            &TextbookMergeParams::LAYOUT,
        ]
    }

    const SHIPPED: &'static [fn(usize, usize) -> Self] = &[Self::for_types];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsorted_input_is_named_instead_of_the_comparator() {
        assert!(textbook_status_error(0, TEXTBOOK_STATUS_NAMES).is_none());
        let a = textbook_status_error(
            STATUS_FIRST_UNSORTED | STATUS_ORDER_INCONSISTENT,
            TEXTBOOK_STATUS_NAMES,
        )
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(a.contains(messages::A_UNSORTED), "{a}");
        assert!(!a.contains("strict weak order"), "{a}");
        let b = textbook_status_error(STATUS_SECOND_UNSORTED, TEXTBOOK_PAIRS_STATUS_NAMES)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(b.contains(messages::B_KEYS_UNSORTED), "{b}");
        let either = textbook_status_error(STATUS_ORDER_INCONSISTENT, TEXTBOOK_STATUS_NAMES)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(either.contains(TEXTBOOK_ORDER_INCONSISTENT), "{either}");
    }
}
