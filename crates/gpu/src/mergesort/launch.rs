//! The mergesort's launches: the block sort, then its two-way, four-way and eight-way merge passes.

use super::held::{HeldParams, HeldPass};
use super::params::{
    BlocksortParams, MergesortOctPartitionParams, MergesortOctTileParams, MergesortPartitionParams,
    MergesortQuadPartitionParams, MergesortQuadTileParams, MergesortTileParams,
};
use super::tuning::{
    MergesortTuning, CHECKED_OWN_MAX_TILES, OCT_CUT_WORDS, QUAD_CUT_WORDS, WARP_LANES,
};
use super::{
    MergesortScratch, SortLaunch, MERGESORT_ENTRY_BLOCKSORT, MERGESORT_ENTRY_OCT_PARTITION,
    MERGESORT_ENTRY_OCT_TILE, MERGESORT_ENTRY_PARTITION, MERGESORT_ENTRY_QUAD_PARTITION,
    MERGESORT_ENTRY_QUAD_TILE, MERGESORT_ENTRY_TILE, MERGESORT_ENTRY_TILE_RECORDED,
};
use crate::error::GpuError;
use crate::runtime::launch::LaunchShape;
use crate::runtime::shape::{grid_blocks, MAX_GRID_X, MAX_STATIC_SHARED_BYTES, PARTITION_THREADS};
use crate::runtime::staging::SortAddresses;
use crate::runtime::status::CheckArgs;

impl MergesortScratch {
    /// The mergesort's launches (at least two keys): the block sort, then the merge passes,
    /// stable and in place from the caller's view (the passes ping-pong with this scratch).
    ///
    /// With `hold_last`, the last merge pass's tiles are not launched (its partitions are):
    /// the returned [`HeldPass`] launches them, by ranges of tiles, and must launch them all
    /// before the keys are sorted. `None` where the block sort was the last kernel.
    pub(crate) fn launch_passes(
        &mut self,
        sort: SortLaunch,
        tuning: MergesortTuning,
        hold_last: bool,
    ) -> Result<Option<HeldPass>, GpuError> {
        let value_bytes = sort.value_bytes();
        let SortLaunch {
            gpu,
            kernels,
            buffers,
            key_bytes,
            trusted,
            guard,
        } = sort;
        let SortAddresses {
            keys,
            values,
            count,
            layout: value_layout,
        } = buffers;
        // A comparator that is not trusted gets checked kernels (kernels/mergesort_blocksort.cu
        // CHECK_ORDER): partitions and cuts checked and repaired, walks checked.
        let [blocksort, partition, plain_tile_kernel, recorded_tile_kernel] =
            kernels.functions([
                MERGESORT_ENTRY_BLOCKSORT,
                MERGESORT_ENTRY_PARTITION,
                MERGESORT_ENTRY_TILE,
                MERGESORT_ENTRY_TILE_RECORDED,
            ])?;
        let tile = tuning.tile();
        let num_tiles = count.div_ceil(tile);
        if num_tiles as u64 > MAX_GRID_X {
            return Err(GpuError::TooLarge(format!(
                "{count} keys need {num_tiles} tiles"
            )));
        }
        let plan = tuning.pass_plan(count, trusted);
        let (two_way_passes, four_way_passes) = (plan.two_way, plan.four_way);
        let passes = plan.passes();
        let pass_tile = tuning.pass_tile();
        let num_pass_tiles = count.div_ceil(pass_tile);
        let num_quad_tiles = if four_way_passes > 0 {
            count.div_ceil(tuning.quad_tile())
        } else {
            0
        };
        let num_oct_tiles = if plan.eight_way > 0 {
            count.div_ceil(tuning.oct_tile())
        } else {
            0
        };
        // The two-way partitions and four-way cuts serve as samples of the eight-way passes' too.
        let num_sampled_tiles = num_quad_tiles.max(num_oct_tiles);
        let scratch_keys = gpu.grow_scratch_address(&mut self.keys, count * key_bytes)?;
        let scratch_values = if value_layout.is_some() {
            gpu.grow_scratch_address(&mut self.values, count * value_bytes)?
        } else {
            0
        };
        let num_partitions = num_pass_tiles + 1;
        let partition_words = num_pass_tiles.max(num_sampled_tiles) + 1;
        // Lanes per search of `searches` two-way boundaries or (`quad`) four-way cuts: the
        // tuning's, or chosen by their number.
        let search_lanes = |searches: usize, quad: bool| match (tuning.quad_cut_lanes, quad) {
            (0, true) => tuning.quad_cut_lanes(searches, gpu.multiprocessors()),
            (0, false) => tuning.boundary_search_lanes(searches, gpu.multiprocessors()),
            (forced, _) => forced,
        };
        // Where a warp searches each boundary (few boundaries, the tuning's lanes automatic), each
        // tile block finds its own two (a null partitions argument): one launch a pass instead of
        // two. Under a comparator that is not trusted, each boundary is then searched twice (by
        // the tiles on both sides of it), so the tiles record what they merged from (32-bit
        // positions, two a tile) after the partitions, in two halves of `record_words` that
        // alternate by pass; the pass after checks the records in every block
        // (kernels/mergesort_pass.cu), so only passes of few tiles record.
        let own_searches =
            tuning.quad_cut_lanes == 0 && search_lanes(num_partitions, false) == WARP_LANES;
        let checked_own_searches =
            own_searches && num_pass_tiles <= CHECKED_OWN_MAX_TILES && u32::try_from(count).is_ok();
        let record_words = if !trusted && checked_own_searches {
            num_pass_tiles + 1
        } else {
            0
        };
        let partitions =
            gpu.grow_scratch_address(&mut self.partitions, partition_words + 2 * record_words)?;
        let records = |pass: usize| {
            partitions + (size_of::<u64>() * (partition_words + pass % 2 * record_words)) as u64
        };
        let arrivals = gpu.arrivals_address(&mut self.arrivals)?;
        let cuts = if num_sampled_tiles > 0 {
            gpu.grow_scratch_address(&mut self.cuts, QUAD_CUT_WORDS * (num_sampled_tiles + 1))?
        } else {
            0
        };
        let oct_cuts = if num_oct_tiles > 0 {
            gpu.grow_scratch_address(&mut self.oct_cuts, OCT_CUT_WORDS * (num_oct_tiles + 1))?
        } else {
            0
        };

        // An odd number of passes starts in scratch so that the last pass lands in `keys`.
        let (mut src, mut dst) = ((keys, values), (scratch_keys, scratch_values));
        let first = if passes % 2 == 1 { dst } else { src };
        let count_arg = count as u64;
        let blocksort_check = self.input_check.call_args(gpu)?;
        let blocksort_params = BlocksortParams {
            keys_in: src.0,
            vals_in: src.1,
            count: count_arg,
            keys_out: first.0,
            vals_out: first.1,
            status: blocksort_check.status,
            guard,
            image_out: u32::from(passes == 0),
        };
        // Past the static limit, a kernel's shared memory opts in up to the device's maximum.
        let allow_shared = |entry, bytes| {
            kernels.allow_dynamic_shared(
                entry,
                bytes,
                MAX_STATIC_SHARED_BYTES,
                gpu.max_shared_per_block_optin(),
            )
        };
        let blocksort_shared = allow_shared(
            MERGESORT_ENTRY_BLOCKSORT,
            tuning.blocksort_shared_bytes(key_bytes, value_bytes),
        )?;
        // SAFETY: the block is twophase_blocksort's (kernels/mergesort_blocksort.cu; the program
        // asserts the layouts equal); `keys`/`values` hold `count` elements and the scratch
        // buffers at least as many (grown above); one block per tile; the value addresses are
        // read only when the program has values; the status word lives in the scratch.
        unsafe {
            gpu.launch(
                blocksort,
                LaunchShape::new(num_tiles as u32, tuning.threads).shared(blocksort_shared),
                &blocksort_params,
            )
        }?;
        if passes % 2 == 1 {
            std::mem::swap(&mut src, &mut dst);
        }

        // Below pdl_below_keys, every kernel after the block sort is launched as a programmatic
        // dependent of the one before (kernels/mergesort_blocksort.cu `follow_previous_kernel`
        // waits for it before touching memory).
        let dependent = count < tuning.pdl_below_keys;
        let partition_blocks =
            |threads: usize| grid_blocks(threads.div_ceil(PARTITION_THREADS as usize));
        // One group of `lanes` threads a boundary.
        let pass_partition_blocks =
            |boundaries: usize, lanes: u32| partition_blocks(boundaries * lanes as usize);
        // The two-way merge paths of one pass over `keys` (runs of `run`) at every `spacing`-th
        // output, `boundaries` of them, into `partitions`: the two-way passes' tile boundaries,
        // and the four-way passes' samples.
        let launch_partitions = |keys: u64,
                                 run: u64,
                                 spacing: usize,
                                 boundaries: usize,
                                 check: &CheckArgs| {
            let lanes = search_lanes(boundaries, false);
            let params = MergesortPartitionParams {
                keys,
                count: count_arg,
                run,
                spacing: spacing as u64,
                num_partitions: boundaries as u64,
                lanes: lanes as i32,
                partitions,
                arrivals,
                status: check.status,
                guard,
                repair: check.repair,
                generation: check.generation,
            };
            // SAFETY: the block is twophase_mergesort_partition's (kernels/mergesort_pass.cu;
            // the program asserts the layouts equal); `partitions` was grown to hold max(num_pass_tiles, num_sampled_tiles) + 1 >=
            // `boundaries` entries; `keys` holds `count` keys; one group of `lanes` threads (a
            // power of two up to 32, validated or chosen above) per boundary; the check's words
            // and the arrival word (0 between launches) live in the scratch.
            unsafe {
                gpu.launch(
                    partition,
                    LaunchShape::new(pass_partition_blocks(boundaries, lanes)?, PARTITION_THREADS)
                        .dependent(dependent),
                    &params,
                )
            }
        };
        let pass_grid = grid_blocks(num_pass_tiles)?;
        let mut prior_records = 0;
        for pass in 0..two_way_passes {
            let run = (tile as u64) << pass;
            let check = self.input_check.args(gpu)?;
            // A checked pass that records needs a two-way pass after it, to check it.
            let own_boundaries = if trusted {
                own_searches
            } else {
                checked_own_searches && pass + 1 < two_way_passes
            };
            let ends = if own_boundaries && !trusted {
                records(pass as usize)
            } else {
                0
            };
            if !own_boundaries {
                launch_partitions(src.0, run, pass_tile, num_partitions, &check)?;
            }
            let params = MergesortTileParams {
                src: src.0,
                count: count_arg,
                run,
                partitions: if own_boundaries { 0 } else { partitions },
                dst: dst.0,
                vals_src: src.1,
                vals_dst: dst.1,
                status: check.status,
                guard,
                repair: check.repair,
                generation: check.generation,
                image_out: u32::from(pass + 1 == passes),
                first_tile: 0,
                ends,
                prior_ends: prior_records,
            };
            // Records read or written: the kernel with those paths (kernels/mergesort_pass.cu).
            let tile_kernel = if ends != 0 || prior_records != 0 {
                recorded_tile_kernel
            } else {
                plain_tile_kernel
            };
            prior_records = ends;
            if hold_last && pass + 1 == passes {
                let shape = LaunchShape::new(0, tuning.pass_threads);
                let held = HeldParams::Two(params);
                return Ok(Some(HeldPass::new(
                    tile_kernel,
                    shape,
                    held,
                    num_pass_tiles,
                    pass_tile,
                    run,
                    src.0 != keys,
                )));
            }
            // SAFETY: the block is twophase_mergesort_tile's and its recorded twin's
            // (kernels/mergesort_pass.cu, built for TP_PASS_NT threads; the program asserts the
            // layouts equal); `src` and `dst` are distinct buffers of `count` keys (and values);
            // the partitions are null (each block searches its own) or written by the launch
            // before, which this one waits for, as is the repair slot of this pass's generation;
            // `ends` and `prior_ends`, where not null, are the two halves of records after the
            // partitions (grown above to 2 * num_pass_tiles + 2 u32 slots each, of which the
            // kernel writes and reads 1 ..= 2 * num_pass_tiles), the second written by the pass
            // before, which this one waits for; one block per pass tile.
            unsafe {
                gpu.launch(
                    tile_kernel,
                    LaunchShape::new(pass_grid, tuning.pass_threads).dependent(dependent),
                    &params,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        if four_way_passes == 0 && plan.eight_way == 0 {
            return Ok(None);
        }
        let [quad_partition, quad_tile_kernel] =
            kernels.functions([MERGESORT_ENTRY_QUAD_PARTITION, MERGESORT_ENTRY_QUAD_TILE])?;
        // The four-way cuts of one pass over `keys` (quads of runs of `run`) at every
        // `spacing`-th output, `num_cuts` of them, into `cuts`, from the two-way partitions at the
        // same spacing (launched first): the four-way tiles' boundaries, and the eight-way cuts'
        // samples.
        let mut launch_quad_cuts = |keys: u64,
                                    run: u64,
                                    spacing: usize,
                                    num_cuts: usize,
                                    lanes: u32| {
            let check = self.input_check.args(gpu)?;
            launch_partitions(keys, run, spacing, num_cuts, &check)?;
            let params = MergesortQuadPartitionParams {
                keys,
                count: count_arg,
                run,
                partitions,
                spacing: spacing as u64,
                num_cuts: num_cuts as u64,
                lanes: lanes as i32,
                cuts,
                arrivals,
                status: check.status,
                guard,
                samples_repair: check.repair,
                cuts_repair: check.second_repair,
                generation: check.generation,
            };
            // SAFETY: the block is twophase_mergesort_quad_partition's
            // (kernels/mergesort_quad_partition.cu; the program asserts the layouts equal); one
            // group of `lanes` threads (a power of two up to 32, validated or chosen
            // above) per cut; `cuts` holds QUAD_CUT_WORDS entries per cut of either pass (grown
            // above for num_sampled_tiles + 1); the samples (and their repair slot, this pass's
            // generation) are written by the launch before, which this one waits for; the
            // check's words live in the scratch.
            unsafe {
                gpu.launch(
                    quad_partition,
                    LaunchShape::new(pass_partition_blocks(num_cuts, lanes)?, PARTITION_THREADS)
                        .dependent(dependent),
                    &params,
                )
            }?;
            Ok::<_, GpuError>(check)
        };
        let quad_shared = if four_way_passes > 0 {
            allow_shared(
                MERGESORT_ENTRY_QUAD_TILE,
                tuning.quad_shared_bytes(key_bytes, value_bytes),
            )?
        } else {
            0
        };
        let num_cuts = num_quad_tiles + 1;
        let quad_grid = grid_blocks(num_quad_tiles)?;
        let lanes = search_lanes(num_cuts, true);
        for quad_pass in 0..four_way_passes {
            let run = (tile as u64) << (two_way_passes + 2 * quad_pass);
            let check = launch_quad_cuts(src.0, run, tuning.quad_tile(), num_cuts, lanes)?;
            let params = MergesortQuadTileParams {
                src: src.0,
                count: count_arg,
                run,
                cuts,
                dst: dst.0,
                vals_src: src.1,
                vals_dst: dst.1,
                status: check.status,
                guard,
                cuts_repair: check.second_repair,
                generation: check.generation,
                image_out: u32::from(plan.eight_way == 0 && quad_pass + 1 == four_way_passes),
                first_tile: 0,
            };
            if hold_last && params.image_out != 0 {
                let shape = LaunchShape::new(0, tuning.quad_threads).shared(quad_shared);
                let held = HeldParams::Four(params);
                let quad_tile = tuning.quad_tile();
                return Ok(Some(HeldPass::new(
                    quad_tile_kernel,
                    shape,
                    held,
                    num_quad_tiles,
                    quad_tile,
                    run,
                    src.0 != keys,
                )));
            }
            // SAFETY: the block is twophase_mergesort_quad_tile's (kernels/mergesort_quad_tile.cu,
            // built for TP_QUAD_NT threads; the program asserts the layouts equal);
            // `src` and `dst` are distinct buffers of `count` keys (and values); one block per
            // quad tile; the cuts (and their repair slot) are written by the launch before, which
            // this one waits for.
            unsafe {
                gpu.launch(
                    quad_tile_kernel,
                    LaunchShape::new(quad_grid, tuning.quad_threads)
                        .shared(quad_shared)
                        .dependent(dependent),
                    &params,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        if plan.eight_way == 0 {
            return Ok(None);
        }
        let [oct_partition, oct_tile_kernel] =
            kernels.functions([MERGESORT_ENTRY_OCT_PARTITION, MERGESORT_ENTRY_OCT_TILE])?;
        let oct_shared = allow_shared(
            MERGESORT_ENTRY_OCT_TILE,
            tuning.oct_shared_bytes(key_bytes, value_bytes),
        )?;
        let num_cuts = num_oct_tiles + 1;
        let oct_grid = grid_blocks(num_oct_tiles)?;
        let lanes = search_lanes(num_cuts, true);
        let oct_spacing = tuning.oct_tile();
        for oct_pass in 0..plan.eight_way {
            let run = (tile as u64) << (two_way_passes + 2 * four_way_passes + 3 * oct_pass);
            launch_quad_cuts(src.0, run, oct_spacing, num_cuts, lanes)?;
            let params = MergesortOctPartitionParams {
                keys: src.0,
                count: count_arg,
                run,
                quad_cuts: cuts,
                spacing: oct_spacing as u64,
                num_cuts: num_cuts as u64,
                lanes: lanes as i32,
                cuts: oct_cuts,
                guard,
            };
            // SAFETY: the block is twophase_mergesort_oct_partition's
            // (kernels/mergesort_oct_partition.cu; the program asserts the layouts equal); one
            // group of `lanes` threads (a power of two up to 32) per cut; `oct_cuts` holds
            // OCT_CUT_WORDS entries per cut and `cuts` the four-way cuts at the same spacing,
            // written by the launch before, which this one waits for. Eight-way passes are
            // planned only for a trusted order, whose program compiles them (pass_plan).
            unsafe {
                gpu.launch(
                    oct_partition,
                    LaunchShape::new(pass_partition_blocks(num_cuts, lanes)?, PARTITION_THREADS)
                        .dependent(dependent),
                    &params,
                )
            }?;
            let params = MergesortOctTileParams {
                src: src.0,
                count: count_arg,
                run,
                cuts: oct_cuts,
                dst: dst.0,
                vals_src: src.1,
                vals_dst: dst.1,
                guard,
                image_out: u32::from(oct_pass + 1 == plan.eight_way),
                first_tile: 0,
            };
            if hold_last && params.image_out != 0 {
                let shape = LaunchShape::new(0, tuning.oct_threads).shared(oct_shared);
                let held = HeldParams::Eight(params);
                return Ok(Some(HeldPass::new(
                    oct_tile_kernel,
                    shape,
                    held,
                    num_oct_tiles,
                    oct_spacing,
                    run,
                    src.0 != keys,
                )));
            }
            // SAFETY: the block is twophase_mergesort_oct_tile's (kernels/mergesort_oct_tile.cu,
            // built for TP_OCT_NT threads; the program asserts the layouts equal); `src` and
            // `dst` are distinct buffers of `count` keys (and values); one block per octet tile;
            // the cuts are written by the launch before, which this one waits for.
            unsafe {
                gpu.launch(
                    oct_tile_kernel,
                    LaunchShape::new(oct_grid, tuning.oct_threads)
                        .shared(oct_shared)
                        .dependent(dependent),
                    &params,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        Ok(None)
    }
}
