//! The segmented sort's parameter blocks, one per kernel (their CUDA twins in kernels/segmented_sort.cu).

use super::short::ShortParams;
use crate::runtime::launch::{param_block, KernelParams, ParamLayout};

param_block! {
    /// The parameter block of `twophase_segsort_check` (kernels/segmented_sort.cu).
    pub(super) struct CheckParams as "segsort_check_params" {
        starts: u64,
        ends: u64,
        num_segments: u64,
        count: u64,
        control: u64,
        status: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_segsort_straddles` and `twophase_segsort_plan`.
    pub(super) struct PlanParams as "segsort_plan_params" for ["twophase_segsort_straddles", "twophase_segsort_plan"] {
        starts: u64,
        ends: u64,
        num_segments: u64,
        count: u64,
        num_tiles: u64,
        masks: u64,
        straddles: u64,
        control: u64,
        lists: u64,
        levels: u32,
        four_way: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_segsort_blocksort`.
    pub(super) struct BlocksortParams as "segsort_blocksort_params" {
        keys: u64,
        vals: u64,
        scratch_keys: u64,
        scratch_vals: u64,
        starts: u64,
        ends: u64,
        num_segments: u64,
        count: u64,
        masks: u64,
        control: u64,
        status: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_segsort_partition`.
    pub(super) struct PartitionParams as "segsort_partition_params" {
        keys: u64,
        scratch_keys: u64,
        count: u64,
        num_tiles: u64,
        masks: u64,
        straddles: u64,
        control: u64,
        list: u64,
        partitions: u64,
        level: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_segsort_verify`.
    pub(super) struct VerifyParams as "segsort_verify_params" {
        count: u64,
        straddles: u64,
        list: u64,
        partitions: u64,
        control: u64,
        status: u64,
        level: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_segsort_merge` (`own_partitions` non-zero: the merge
    /// searches its tiles' partitions, with no partition launch at its level).
    pub(super) struct MergeParams as "segsort_merge_params" {
        keys: u64,
        scratch_keys: u64,
        vals: u64,
        scratch_vals: u64,
        count: u64,
        masks: u64,
        straddles: u64,
        control: u64,
        list: u64,
        partitions: u64,
        status: u64,
        level: u32,
        own_partitions: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_segsort_four_way_cuts` and `twophase_segsort_four_way_merge`
    /// (kernels/segmented_sort_four_way.cu).
    pub(super) struct FourWayParams as "segsort_four_way_params"
        for ["twophase_segsort_four_way_cuts", "twophase_segsort_four_way_merge"] {
        keys: u64,
        scratch_keys: u64,
        vals: u64,
        scratch_vals: u64,
        count: u64,
        masks: u64,
        control: u64,
        list: u64,
        partitions: u64,
        cuts: u64,
        status: u64,
        level: u32,
    }
}

/// The layouts of the parameter blocks of a segmented-sort program, for its asserts.
pub(super) fn param_layouts() -> Vec<&'static ParamLayout> {
    vec![
        &CheckParams::LAYOUT,
        &ShortParams::LAYOUT,
        &PlanParams::LAYOUT,
        &BlocksortParams::LAYOUT,
        &PartitionParams::LAYOUT,
        &VerifyParams::LAYOUT,
        &MergeParams::LAYOUT,
        &FourWayParams::LAYOUT,
    ]
}
