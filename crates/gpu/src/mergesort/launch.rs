//! The mergesort's launches: the block sort, then its two-way and four-way merge passes.

use std::mem::size_of;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg};

use super::tuning::{MergesortTuning, QUAD_CUT_WORDS, WARP_LANES};
use super::{
    mergesort_entries, mergesort_program, primitive_name, MergesortScratch,
    MERGESORT_ENTRY_BLOCKSORT, MERGESORT_ENTRY_PARTITION, MERGESORT_ENTRY_QUAD_PARTITION,
    MERGESORT_ENTRY_QUAD_TILE, MERGESORT_ENTRY_TILE,
};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{
    kernel_param, overlapped_blocks, MAX_GRID_X, MAX_STATIC_SHARED_BYTES, PARTITION_THREADS,
};
use crate::runtime::program::program_id;
use crate::runtime::staging::SortBuffers;
use crate::runtime::status::CheckArgs;

impl Gpu {
    /// Sort `count` keys at device address `keys` (and values at `values` if `value_layout`),
    /// stably, in place from the caller's view.
    pub(super) fn launch_mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        buffers: SortBuffers,
        comp: &C,
        tuning: MergesortTuning,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError> {
        let SortBuffers {
            keys,
            values,
            count,
            layout: value_layout,
        } = buffers;
        let value_bytes = value_layout.map_or(0, |(size, _)| size);
        tuning.validate(size_of::<K>(), value_bytes)?;
        if count <= 1 {
            return Ok(());
        }
        let (key, name) = program_id::<K, C>(
            &primitive_name(tuning),
            comp,
            value_layout,
            tuning.threads,
            tuning.vt,
        );
        let kernels = self.kernels(
            &key,
            &name,
            || mergesort_program::<K, C>(comp, value_layout, tuning).source,
            mergesort_entries(tuning),
        )?;
        let (blocksort, partition, tile_kernel) = (
            kernels.function(MERGESORT_ENTRY_BLOCKSORT)?,
            kernels.function(MERGESORT_ENTRY_PARTITION)?,
            kernels.function(MERGESORT_ENTRY_TILE)?,
        );
        let tile = tuning.tile();
        let num_tiles = count.div_ceil(tile);
        if num_tiles as u64 > MAX_GRID_X {
            return Err(GpuError::TooLarge(format!(
                "{count} keys need {num_tiles} tiles"
            )));
        }
        // A comparator that is not trusted gets checked kernels (kernels/mergesort_blocksort.cu
        // CHECK_ORDER): partitions and cuts checked and repaired, walks checked.
        let trusted = comp.trusted_order();
        let (two_way_passes, four_way_passes) = tuning.pass_plan(count);
        let passes = two_way_passes + four_way_passes;
        let pass_tile = tuning.pass_tile();
        let num_pass_tiles = count.div_ceil(pass_tile);
        let num_quad_tiles = if four_way_passes > 0 {
            count.div_ceil(tuning.quad_tile())
        } else {
            0
        };
        let stream = self.stream().clone();
        // Raw addresses: the scratch lives in `scratch` for the whole call, and this handle's
        // one stream orders every use (no per-buffer events to keep).
        fn address<T>(stream: &Arc<CudaStream>, buf: &mut CudaSlice<T>) -> u64 {
            buf.device_ptr_mut(stream).0
        }
        let scratch_keys = address(
            &stream,
            self.grow_scratch(&mut scratch.keys, count * size_of::<K>())?,
        );
        let scratch_values = if value_layout.is_some() {
            address(
                &stream,
                self.grow_scratch(&mut scratch.values, count * value_bytes)?,
            )
        } else {
            0
        };
        let partitions = address(
            &stream,
            self.grow_scratch(
                &mut scratch.partitions,
                num_pass_tiles.max(num_quad_tiles) + 1,
            )?,
        );
        let cuts = if four_way_passes > 0 {
            address(
                &stream,
                self.grow_scratch(&mut scratch.cuts, QUAD_CUT_WORDS * (num_quad_tiles + 1))?,
            )
        } else {
            0
        };

        // An odd number of passes starts in scratch so that the last pass lands in `keys`.
        let (mut src, mut dst) = ((keys, values), (scratch_keys, scratch_values));
        let first = if passes % 2 == 1 { dst } else { src };
        let count_arg = count as u64;
        let blocksort_check = scratch.input_check.args(self)?;
        let mut launch = stream.launch_builder(blocksort);
        launch
            .arg(&src.0)
            .arg(&src.1)
            .arg(&count_arg)
            .arg(&first.0)
            .arg(&first.1)
            .arg(&blocksort_check.status);
        let blocksort_shared = kernels.allow_dynamic_shared(
            MERGESORT_ENTRY_BLOCKSORT,
            tuning.blocksort_shared_bytes(size_of::<K>(), value_bytes),
            MAX_STATIC_SHARED_BYTES,
            self.max_shared_per_block_optin(),
        )?;
        let tile_config = LaunchConfig {
            grid_dim: (num_tiles as u32, 1, 1),
            block_dim: (tuning.threads, 1, 1),
            shared_mem_bytes: blocksort_shared,
        };
        // SAFETY: the arguments match twophase_blocksort in kernels/mergesort_blocksort.cu; `keys`/`values`
        // hold `count` elements and the scratch buffers at least as many (grown above); one block
        // per tile; the value pointers are read only when the program has values; the status
        // word lives in the scratch.
        unsafe { launch.launch(tile_config) }?;
        if passes % 2 == 1 {
            std::mem::swap(&mut src, &mut dst);
        }

        // Below pdl_below_keys, every kernel after the block sort is launched as a programmatic
        // dependent of the one before (Gpu::launch_raw; kernels/mergesort_blocksort.cu
        // `follow_previous_kernel` waits for it before touching memory). Parameters go as
        // pointers to their values, in the kernels' order: 64-bit addresses and sizes, and the
        // four-way partition's 32-bit lane count.
        let dependent = count < tuning.pdl_below_keys;
        let grid = |blocks: usize| -> Result<u32, GpuError> {
            u32::try_from(blocks)
                .ok()
                .filter(|&b| u64::from(b) <= MAX_GRID_X)
                .ok_or_else(|| GpuError::TooLarge(format!("{blocks} blocks in one grid")))
        };
        let partition_blocks = |threads: usize| grid(threads.div_ceil(PARTITION_THREADS as usize));
        // Checked partition kernels overlap their blocks by one boundary (a group of `lanes`
        // threads a boundary).
        let pass_partition_blocks = |boundaries: usize, lanes: u32| {
            if trusted {
                partition_blocks(boundaries * lanes as usize)
            } else {
                grid(overlapped_blocks(
                    boundaries,
                    (PARTITION_THREADS / lanes) as usize,
                ))
            }
        };

        // Lanes per search of `searches` two-way boundaries or (`quad`) four-way cuts: the
        // tuning's, or chosen by their number.
        let search_lanes = |searches: usize, quad: bool| match (tuning.quad_cut_lanes, quad) {
            (0, true) => tuning.quad_cut_lanes(searches, self.multiprocessors()),
            (0, false) => tuning.boundary_search_lanes(searches, self.multiprocessors()),
            (forced, _) => forced,
        };
        // The two-way merge paths of one pass over `keys` (runs of `run`) at every `spacing`-th
        // output, `boundaries` of them, into `partitions`: the two-way passes' tile boundaries,
        // and the four-way passes' samples.
        let launch_partitions =
            |keys: u64, run: u64, spacing: usize, boundaries: usize, check: &CheckArgs| {
                let (spacing, boundary_count) = (spacing as u64, boundaries as u64);
                let lanes = search_lanes(boundaries, false);
                let lanes_arg = lanes as i32;
                let mut params = [
                    kernel_param(&keys),
                    kernel_param(&count_arg),
                    kernel_param(&run),
                    kernel_param(&spacing),
                    kernel_param(&boundary_count),
                    kernel_param(&lanes_arg),
                    kernel_param(&partitions),
                    kernel_param(&check.status),
                    kernel_param(&check.repair),
                    kernel_param(&check.generation),
                ];
                // SAFETY: `params` points at values matching twophase_mergesort_partition (five
                // 64-bit, the 32-bit lane count, three 64-bit, the 32-bit generation), alive for the
                // call; `partitions` was grown to hold max(num_pass_tiles, num_quad_tiles) + 1 >=
                // `boundaries` entries; `keys` holds `count` keys; one group of `lanes` threads (a
                // power of two up to 32, validated or chosen above) per boundary, the blocks
                // overlapping by one boundary for an untrusted comparator as the kernel does
                // (CHECK_ORDER); the check's words live in the scratch.
                unsafe {
                    self.launch_raw(
                        partition,
                        pass_partition_blocks(boundaries, lanes)?,
                        PARTITION_THREADS,
                        &mut params,
                        dependent,
                    )
                }
            };
        let num_partitions = num_pass_tiles + 1;
        let pass_grid = grid(num_pass_tiles)?;
        // Where a warp searches each boundary (few boundaries, the tuning's lanes automatic), each
        // tile block finds its own two (a null partitions argument): one launch a pass instead of
        // two.
        // Only for a trusted comparator: boundaries a block finds itself are not checked against
        // each other.
        let own_boundaries = trusted
            && tuning.quad_cut_lanes == 0
            && search_lanes(num_partitions, false) == WARP_LANES;
        let tile_partitions = if own_boundaries { 0 } else { partitions };
        for pass in 0..two_way_passes {
            let run = (tile as u64) << pass;
            let check = scratch.input_check.args(self)?;
            if !own_boundaries {
                launch_partitions(src.0, run, pass_tile, num_partitions, &check)?;
            }
            let mut params = [
                kernel_param(&src.0),
                kernel_param(&count_arg),
                kernel_param(&run),
                kernel_param(&tile_partitions),
                kernel_param(&dst.0),
                kernel_param(&src.1),
                kernel_param(&dst.1),
                kernel_param(&check.status),
                kernel_param(&check.repair),
                kernel_param(&check.generation),
            ];
            // SAFETY: `params` points at nine 64-bit values and the 32-bit generation matching
            // twophase_mergesort_tile (built for TP_PASS_NT threads), alive for the call; `src`
            // and `dst` are distinct buffers of `count` keys (and values); the partitions are
            // null (each block searches its own) or written by the launch before, which this one
            // waits for, as is the repair slot of this pass's generation; one block per pass
            // tile.
            unsafe {
                self.launch_raw(
                    tile_kernel,
                    pass_grid,
                    tuning.pass_threads,
                    &mut params,
                    dependent,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        if four_way_passes == 0 {
            return Ok(());
        }
        let (quad_partition, quad_tile_kernel) = (
            kernels.function(MERGESORT_ENTRY_QUAD_PARTITION)?,
            kernels.function(MERGESORT_ENTRY_QUAD_TILE)?,
        );
        let quad_shared = kernels.allow_dynamic_shared(
            MERGESORT_ENTRY_QUAD_TILE,
            tuning.quad_shared_bytes(size_of::<K>(), value_bytes),
            MAX_STATIC_SHARED_BYTES,
            self.max_shared_per_block_optin(),
        )?;
        let num_cuts = num_quad_tiles + 1;
        let quad_grid = grid(num_quad_tiles)?;
        let (quad_spacing, cut_count) = (tuning.quad_tile() as u64, num_cuts as u64);
        let lanes = search_lanes(num_cuts, true);
        let lanes_arg = lanes as i32;
        let cut_blocks = pass_partition_blocks(num_cuts, lanes)?;
        for quad_pass in 0..four_way_passes {
            let run = (tile as u64) << (two_way_passes + 2 * quad_pass);
            // The two-way partitions of this input at every quad tile: the samples of X and Y.
            let check = scratch.input_check.args(self)?;
            launch_partitions(src.0, run, tuning.quad_tile(), num_cuts, &check)?;
            let mut params = [
                kernel_param(&src.0),
                kernel_param(&count_arg),
                kernel_param(&run),
                kernel_param(&partitions),
                kernel_param(&quad_spacing),
                kernel_param(&cut_count),
                kernel_param(&lanes_arg),
                kernel_param(&cuts),
                kernel_param(&check.status),
                kernel_param(&check.repair),
                kernel_param(&check.second_repair),
                kernel_param(&check.generation),
            ];
            // SAFETY: `params` points at values matching twophase_mergesort_quad_partition (six
            // 64-bit, the 32-bit lane count, four 64-bit, the 32-bit generation), alive for the
            // call; one group of `lanes` threads (a power of two up to 32, validated or chosen
            // above) per cut, the blocks overlapping by one cut for an untrusted comparator as
            // the kernel does; `cuts` holds QUAD_CUT_WORDS entries per cut; the samples (and
            // their repair slot, this pass's generation) are written by the launch before, which
            // this one waits for; the check's words live in the scratch.
            unsafe {
                self.launch_raw(
                    quad_partition,
                    cut_blocks,
                    PARTITION_THREADS,
                    &mut params,
                    dependent,
                )
            }?;
            let mut params = [
                kernel_param(&src.0),
                kernel_param(&count_arg),
                kernel_param(&run),
                kernel_param(&cuts),
                kernel_param(&dst.0),
                kernel_param(&src.1),
                kernel_param(&dst.1),
                kernel_param(&check.status),
                kernel_param(&check.second_repair),
                kernel_param(&check.generation),
            ];
            // SAFETY: `params` points at nine 64-bit values and the 32-bit generation matching
            // twophase_mergesort_quad_tile (built for TP_QUAD_NT threads), alive for the call;
            // `src` and `dst` are distinct buffers of `count` keys (and values); one block per
            // quad tile; the cuts (and their repair slot) are written by the launch before, which
            // this one waits for.
            unsafe {
                self.launch_raw_shared(
                    quad_tile_kernel,
                    quad_grid,
                    tuning.quad_threads,
                    quad_shared,
                    &mut params,
                    dependent,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        Ok(())
    }
}
