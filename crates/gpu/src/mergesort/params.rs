//! The mergesort's kernel parameter blocks, the Rust twins of kernels/mergesort_blocksort.cu's structs, and the layouts a program asserts.

use super::tuning::MergesortTuning;
use crate::runtime::launch::{param_block, KernelParams, ParamLayout};

param_block! {
    /// The parameter block of `twophase_blocksort` (kernels/mergesort_blocksort.cu).
    pub(super) struct BlocksortParams as "blocksort_params" {
        keys_in: u64,
        vals_in: u64,
        count: u64,
        keys_out: u64,
        vals_out: u64,
        status: u64,
        guard: u64,
        // In every block of the sort's kernels: whether this launch stores the sort's final keys,
        // mapped back from their integer image (kernels/mergesort_blocksort.cu key_image_out).
        image_out: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_mergesort_partition` (kernels/mergesort_pass.cu).
    pub(super) struct MergesortPartitionParams as "mergesort_partition_params" {
        keys: u64,
        count: u64,
        run: u64,
        spacing: u64,
        num_partitions: u64,
        lanes: i32,
        partitions: u64,
        arrivals: u64,
        status: u64,
        guard: u64,
        repair: u64,
        generation: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_mergesort_tile` and `twophase_mergesort_tile_recorded`
    /// (kernels/mergesort_pass.cu).
    pub(super) struct MergesortTileParams as "mergesort_tile_params"
        for ["twophase_mergesort_tile", "twophase_mergesort_tile_recorded"] {
        src: u64,
        count: u64,
        run: u64,
        partitions: u64,
        dst: u64,
        vals_src: u64,
        vals_dst: u64,
        status: u64,
        guard: u64,
        repair: u64,
        generation: u32,
        image_out: u32,
        // The pass's tile that the launch's block 0 merges (a launch of a range of them).
        first_tile: u64,
        // A checked program's pass whose tile blocks find their own boundaries: where each tile
        // records the two it merged from (0: not such a pass).
        ends: u64,
        // The pass before's records, where it was such a pass (0: none), checked before merging.
        prior_ends: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_mergesort_quad_partition` (kernels/mergesort_quad_partition.cu).
    pub(super) struct MergesortQuadPartitionParams as "mergesort_quad_partition_params" {
        keys: u64,
        count: u64,
        run: u64,
        partitions: u64,
        spacing: u64,
        num_cuts: u64,
        lanes: i32,
        cuts: u64,
        arrivals: u64,
        status: u64,
        guard: u64,
        samples_repair: u64,
        cuts_repair: u64,
        generation: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_mergesort_quad_tile` (kernels/mergesort_quad_tile.cu).
    pub(super) struct MergesortQuadTileParams as "mergesort_quad_tile_params" {
        src: u64,
        count: u64,
        run: u64,
        cuts: u64,
        dst: u64,
        vals_src: u64,
        vals_dst: u64,
        status: u64,
        guard: u64,
        cuts_repair: u64,
        generation: u32,
        image_out: u32,
        // The pass's tile that the launch's block 0 merges.
        first_tile: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_mergesort_oct_partition` (kernels/mergesort_oct_partition.cu).
    pub(super) struct MergesortOctPartitionParams as "mergesort_oct_partition_params" {
        keys: u64,
        count: u64,
        run: u64,
        quad_cuts: u64,
        spacing: u64,
        num_cuts: u64,
        lanes: i32,
        cuts: u64,
        guard: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_mergesort_oct_tile` (kernels/mergesort_oct_tile.cu).
    pub(super) struct MergesortOctTileParams as "mergesort_oct_tile_params" {
        src: u64,
        count: u64,
        run: u64,
        cuts: u64,
        dst: u64,
        vals_src: u64,
        vals_dst: u64,
        guard: u64,
        image_out: u32,
        // The pass's tile that the launch's block 0 merges.
        first_tile: u64,
    }
}

/// The layouts of the parameter blocks of the kernels a mergesort program at `tuning` compiles,
/// for its asserts.
pub(super) fn param_layouts(tuning: MergesortTuning) -> Vec<&'static ParamLayout> {
    let mut layouts = vec![
        &BlocksortParams::LAYOUT,
        &MergesortPartitionParams::LAYOUT,
        &MergesortTileParams::LAYOUT,
    ];
    // Without four-way passes their kernels are not compiled (TP_QUAD_NT is 0).
    if tuning.quad_threads > 0 {
        layouts.extend([
            &MergesortQuadPartitionParams::LAYOUT,
            &MergesortQuadTileParams::LAYOUT,
        ]);
        if tuning.oct_threads > 0 {
            layouts.extend([
                &MergesortOctPartitionParams::LAYOUT,
                &MergesortOctTileParams::LAYOUT,
            ]);
        }
    }
    layouts
}
