//! The segmented sort's launches: check, straddles and plan, block sort, then per level its partitions, their check, its merge and its four-way cuts and merge.

use std::mem::size_of;

use cudarc::driver::DevicePtrMut;

use super::params::{
    BlocksortParams, CheckParams, FourWayParams, MergeParams, PartitionParams, PlanParams,
    VerifyParams,
};
use super::{
    SegmentAddresses, SegmentedSortScratch, SegmentedSortTuning, SEGMENTED_SORT_ENTRY_BLOCKSORT,
    SEGMENTED_SORT_ENTRY_CHECK, SEGMENTED_SORT_ENTRY_FOUR_WAY_CUTS,
    SEGMENTED_SORT_ENTRY_FOUR_WAY_MERGE, SEGMENTED_SORT_ENTRY_MERGE,
    SEGMENTED_SORT_ENTRY_PARTITION, SEGMENTED_SORT_ENTRY_PLAN, SEGMENTED_SORT_ENTRY_STRADDLES,
    SEGMENTED_SORT_ENTRY_VERIFY,
};
use crate::error::GpuError;
use crate::primitive::value_bytes;
use crate::runtime::device::Gpu;
use crate::runtime::launch::LaunchShape;
use crate::runtime::module_cache::Kernels;
use crate::runtime::shape::{
    grid_blocks, strided_grid, MAX_GRID_X, MAX_STATIC_SHARED_BYTES, PARTITION_THREADS,
};
use crate::runtime::staging::SortAddresses;
use crate::runtime::status::CheckArgs;

/// Levels a sort can have: tiles are numbered in 32 bits (kernels/segmented_sort.cu
/// `SEGSORT_MAX_LEVELS`).
const MAX_LEVELS: usize = 32;
/// The call's control words: the invalid flag, a work-list count per level, a bad flag per level,
/// whether a segment is longer than the short path takes, a four-way list count per level
/// (kernels/segmented_sort.cu `control_word`, `CONTROL_LONG_SEGMENT`, `CONTROL_FOUR_WAY_COUNTS`).
const CONTROL_WORDS: usize = 1 + 2 * MAX_LEVELS + 1 + MAX_LEVELS;
/// Work lists a level has: its tiles, and its four-way tiles (kernels/segmented_sort_plan.cu).
const LISTS_PER_LEVEL: usize = 2;
/// Words of a four-way cut (x, a, c: kernels/mergesort_quad_partition.cuh `cut_counts`).
const CUT_WORDS: usize = 3;
/// Levels a four-way merge covers (kernels/segmented_sort_plan.cu).
const FOUR_WAY_LEVELS: usize = 2;
/// Words of one straddle (its lo and hi).
const STRADDLE_WORDS: usize = 2;
/// Partition-kernel blocks an SM at most: the kernels stride over their level's list.
const PARTITION_BLOCKS_PER_SM: usize = 8;
/// Check-kernel blocks an SM at most: its threads stride over the segments, and each block sets
/// the long-segment word at most once, so that few writes meet on that word.
const CHECK_BLOCKS_PER_SM: usize = 8;

/// One segmented sort's launches: the buffers (at least one key), the segments (at least one),
/// the program and what the launches need of the types.
pub(super) struct SegmentedLaunch<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) kernels: &'a Kernels,
    pub(super) buffers: SortAddresses,
    pub(super) segments: SegmentAddresses,
    pub(super) key_bytes: usize,
    /// Whether the comparator is one of twophase's own orders (no partition check).
    pub(super) trusted: bool,
    pub(super) tuning: SegmentedSortTuning,
}

/// The merge levels of `num_tiles` tiles: ceil(log2(num_tiles)).
fn levels_of(num_tiles: usize) -> usize {
    num_tiles.next_power_of_two().trailing_zeros() as usize
}

/// Entries of the straddle table: one per pair of runs at each level.
fn straddle_entries(num_tiles: usize, levels: usize) -> usize {
    (0..levels)
        .map(|level| num_tiles.div_ceil(2 << level))
        .sum()
}

/// The dynamic shared memory of the tile kernel `entry` (`shared_bytes`, allowed past the static
/// limit) and its grid: it strides over a level's list with the blocks of `threads` that fit on
/// the device at once, at most one a tile, so that a level touching few tiles launches no idle
/// blocks and one touching every tile leaves no SM with a second round while others idle.
fn strided_tiles(
    gpu: &Gpu,
    kernels: &Kernels,
    entry: &'static str,
    shared_bytes: usize,
    threads: u32,
    num_tiles: usize,
) -> Result<(u32, u32), GpuError> {
    let shared = kernels.allow_dynamic_shared(
        entry,
        shared_bytes,
        MAX_STATIC_SHARED_BYTES,
        gpu.max_shared_per_block_optin(),
    )?;
    let [function] = kernels.functions([entry])?;
    let resident = function
        .occupancy_max_active_blocks_per_multiprocessor(threads, shared as usize, None)?
        .max(1) as usize;
    let grid = grid_blocks(num_tiles.min(gpu.multiprocessors() as usize * resident))?;
    Ok((shared, grid))
}

impl SegmentedSortScratch {
    /// The first launches of a call: the control words cleared (one memset, a node of a captured
    /// graph: no segment fault, empty work lists, no bad level), then the check of the segments
    /// over `count` keys with `kernels`' check kernel. Returns the control words' address and the
    /// call's check.
    pub(super) fn launch_check(
        &mut self,
        gpu: &Gpu,
        kernels: &Kernels,
        count: usize,
        segments: SegmentAddresses,
    ) -> Result<(u64, CheckArgs), GpuError> {
        let [check_kernel] = kernels.functions([SEGMENTED_SORT_ENTRY_CHECK])?;
        let stream = gpu.stream().clone();
        let control_buf = gpu.grow_scratch(&mut self.control, CONTROL_WORDS)?;
        stream.memset_zeros(control_buf)?;
        let control = control_buf.device_ptr_mut(&stream).0;
        let check = self.input_check.call_args(gpu)?;
        let check_params = CheckParams {
            starts: segments.starts,
            ends: segments.ends,
            num_segments: segments.count as u64,
            count: count as u64,
            control,
            status: check.status,
        };
        let check_grid = strided_grid(
            segments.count,
            PARTITION_THREADS,
            CHECK_BLOCKS_PER_SM,
            gpu.multiprocessors(),
        )?;
        // SAFETY: the block is twophase_segsort_check's (kernels/segmented_sort.cu; the program
        // asserts the layouts equal); the threads stride over the segments and read `starts`
        // (and `ends`, when not null) at indices below `num_segments`; it writes only the
        // control words (CONTROL_WORDS of them, grown above) and the status word of this scratch.
        unsafe {
            gpu.launch(
                check_kernel,
                LaunchShape::new(check_grid, PARTITION_THREADS),
                &check_params,
            )
        }?;
        Ok((control, check))
    }

    /// The segmented sort's launches, in place from the caller's view.
    pub(super) fn launch(&mut self, launch: SegmentedLaunch) -> Result<(), GpuError> {
        let SegmentedLaunch {
            gpu,
            kernels,
            buffers,
            segments,
            key_bytes,
            trusted,
            tuning,
        } = launch;
        let value_bytes = value_bytes(buffers.layout);
        let SortAddresses {
            keys,
            values,
            count,
            layout,
        } = buffers;
        let [straddles_kernel, plan, blocksort, partition, verify, merge, four_way_cuts, four_way_merge] =
            kernels.functions([
                SEGMENTED_SORT_ENTRY_STRADDLES,
                SEGMENTED_SORT_ENTRY_PLAN,
                SEGMENTED_SORT_ENTRY_BLOCKSORT,
                SEGMENTED_SORT_ENTRY_PARTITION,
                SEGMENTED_SORT_ENTRY_VERIFY,
                SEGMENTED_SORT_ENTRY_MERGE,
                SEGMENTED_SORT_ENTRY_FOUR_WAY_CUTS,
                SEGMENTED_SORT_ENTRY_FOUR_WAY_MERGE,
            ])?;
        let tile = tuning.tile();
        let num_tiles = count.div_ceil(tile);
        if num_tiles as u64 > MAX_GRID_X || u32::try_from(num_tiles).is_err() {
            return Err(GpuError::TooLarge(format!(
                "{count} keys need {num_tiles} tiles"
            )));
        }
        let levels = levels_of(num_tiles);
        let scratch_keys = gpu.grow_scratch_address(&mut self.keys, count * key_bytes)?;
        let scratch_values = if layout.is_some() {
            gpu.grow_scratch_address(&mut self.values, count * value_bytes)?
        } else {
            0
        };
        let masks = gpu.grow_scratch_address(&mut self.masks, num_tiles)?;
        let straddles = gpu.grow_scratch_address(
            &mut self.straddles,
            STRADDLE_WORDS * straddle_entries(num_tiles, levels).max(1),
        )?;
        let lists = gpu.grow_scratch_address(
            &mut self.lists,
            (LISTS_PER_LEVEL * levels * num_tiles).max(1),
        )?;
        let partitions = gpu.grow_scratch_address(&mut self.partitions, num_tiles + 1)?;
        // Only a trusted comparator's sorts merge four-way (the kernels take the cuts as exact),
        // of the tuning's size or more, from its first four-way level, every other level below
        // the last.
        let four_way_from = if trusted && count >= tuning.four_way_min_keys {
            tuning.four_way_from_level as usize
        } else {
            usize::MAX
        };
        let four_way_at = |level: usize| {
            level >= four_way_from
                && (level - four_way_from).is_multiple_of(FOUR_WAY_LEVELS)
                && level + 1 < levels
        };
        let four_way = (0..levels).any(four_way_at);
        let cuts = if four_way {
            gpu.grow_scratch_address(&mut self.cuts, CUT_WORDS * (num_tiles + 1))?
        } else {
            0
        };
        let (control, check) = self.launch_check(gpu, kernels, count, segments)?;
        // Below pdl_below_keys every kernel after the check is a programmatic dependent of the
        // one before. Each waits for that one to complete before it touches global memory
        // (kernels/segmented_sort.cu `follow_previous_launch`), so every launch below still
        // reads what the launches before it wrote, as the SAFETY notes say.
        let dependent = count < tuning.pdl_below_keys;
        // Below own_partitions_below_keys a trusted order's merge levels search their own
        // partitions (kernels/segmented_sort_levels.cu), where no four-way cut reads them.
        let own_partitions_below = trusted && count < tuning.own_partitions_below_keys;
        // The short path next: it sorts where every segment is short, and then every kernel
        // below returns at once.
        gpu.launch_segmented_short(kernels, buffers, segments, key_bytes, control, dependent)?;
        let count_arg = count as u64;
        let num_segments = segments.count as u64;
        let plan_params = PlanParams {
            starts: segments.starts,
            ends: segments.ends,
            num_segments,
            count: count_arg,
            num_tiles: num_tiles as u64,
            masks,
            straddles,
            control,
            lists,
            levels: levels as u32,
            four_way: u32::try_from(four_way_from).unwrap_or(u32::MAX),
        };
        let entries = straddle_entries(num_tiles, levels);
        // SAFETY: the block is twophase_segsort_straddles', with the plan's parameters; it runs
        // only on segments the check found valid (the control word, written by the launch
        // before), so its binary searches stay within `starts`/`ends`; one thread an entry
        // writes the straddle entries of the levels (straddle_entries of them, grown above).
        unsafe {
            gpu.launch(
                straddles_kernel,
                LaunchShape::new(
                    grid_blocks(entries.max(1).div_ceil(PARTITION_THREADS as usize))?,
                    PARTITION_THREADS,
                )
                .dependent(dependent),
                &plan_params,
            )
        }?;
        // SAFETY: the block is twophase_segsort_plan's, after the straddles' launch in the same
        // stream; one thread a tile reads its pair's entry at each level (within the entries
        // written above), writes masks[tile] (num_tiles entries) and list slots below num_tiles
        // per list (a list's count grows by the tiles it holds, each at most once; two lists a
        // level, LISTS_PER_LEVEL * levels * num_tiles slots, grown above).
        unsafe {
            gpu.launch(
                plan,
                LaunchShape::new(
                    grid_blocks(num_tiles.div_ceil(PARTITION_THREADS as usize))?,
                    PARTITION_THREADS,
                )
                .dependent(dependent),
                &plan_params,
            )
        }?;
        let blocksort_shared = kernels.allow_dynamic_shared(
            SEGMENTED_SORT_ENTRY_BLOCKSORT,
            tuning.blocksort_shared_bytes(key_bytes, value_bytes),
            MAX_STATIC_SHARED_BYTES,
            gpu.max_shared_per_block_optin(),
        )?;
        let blocksort_params = BlocksortParams {
            keys,
            vals: values,
            scratch_keys,
            scratch_vals: scratch_values,
            starts: segments.starts,
            ends: segments.ends,
            num_segments,
            count: count_arg,
            masks,
            control,
            status: check.status,
        };
        // SAFETY: the block is twophase_segsort_blocksort's; one block a tile of `keys` (count
        // keys) writes that tile of `keys` or of the scratch (count keys, grown above), values
        // alike when the program has them; it reads the masks the plan wrote, and nothing when
        // the segments are invalid or the short kernel took the call (then the plan wrote none).
        unsafe {
            gpu.launch(
                blocksort,
                LaunchShape::new(grid_blocks(num_tiles)?, tuning.threads)
                    .shared(blocksort_shared)
                    .dependent(dependent),
                &blocksort_params,
            )
        }?;
        let (merge_shared, merge_grid) = strided_tiles(
            gpu,
            kernels,
            SEGMENTED_SORT_ENTRY_MERGE,
            tuning.merge_shared_bytes(key_bytes, value_bytes),
            tuning.threads,
            num_tiles,
        )?;
        let partition_grid = strided_grid(
            num_tiles,
            PARTITION_THREADS,
            PARTITION_BLOCKS_PER_SM,
            gpu.multiprocessors(),
        )?;
        let (four_way_shared, four_way_grid) = if four_way {
            strided_tiles(
                gpu,
                kernels,
                SEGMENTED_SORT_ENTRY_FOUR_WAY_MERGE,
                tuning.four_way_shared_bytes(key_bytes, value_bytes),
                tuning.threads,
                num_tiles,
            )?
        } else {
            (0, 1)
        };
        // Work list `index` (level `index`'s, then from `levels` on the four-way ones), num_tiles
        // slots each (kernels/segmented_sort_plan.cu).
        let list_at = |index: usize| lists + (index * num_tiles * size_of::<u32>()) as u64;
        let mut straddle_offset = 0;
        for level in 0..levels {
            let level_straddles = straddles + (STRADDLE_WORDS * straddle_offset * 8) as u64;
            let list = list_at(level);
            straddle_offset += num_tiles.div_ceil(2 << level);
            // The merge searches its own partitions where no four-way cut reads them.
            let own_partitions = own_partitions_below && !four_way_at(level);
            if !own_partitions {
                let partition_params = PartitionParams {
                    keys,
                    scratch_keys,
                    count: count_arg,
                    num_tiles: num_tiles as u64,
                    masks,
                    straddles: level_straddles,
                    control,
                    list,
                    partitions,
                    level: level as u32,
                };
                // SAFETY: the block is twophase_segsort_partition's; its threads stride over the
                // level's list (the count the plan wrote, at most num_tiles), read keys of the
                // tiles' straddles (within `count`) from the buffer their masks name, and write
                // partitions[tile] (num_tiles + 1 entries).
                unsafe {
                    gpu.launch(
                        partition,
                        LaunchShape::new(partition_grid, PARTITION_THREADS).dependent(dependent),
                        &partition_params,
                    )
                }?;
            }
            if !trusted {
                let verify_params = VerifyParams {
                    count: count_arg,
                    straddles: level_straddles,
                    list,
                    partitions,
                    control,
                    status: check.status,
                    level: level as u32,
                };
                // SAFETY: the block is twophase_segsort_verify's; it reads the level's list,
                // straddles and partitions written before and writes only control and status
                // words.
                unsafe {
                    gpu.launch(
                        verify,
                        LaunchShape::new(partition_grid, PARTITION_THREADS).dependent(dependent),
                        &verify_params,
                    )
                }?;
            }
            let merge_params = MergeParams {
                keys,
                scratch_keys,
                vals: values,
                scratch_vals: scratch_values,
                count: count_arg,
                masks,
                straddles: level_straddles,
                control,
                list,
                partitions,
                status: check.status,
                level: level as u32,
                own_partitions: u32::from(own_partitions),
            };
            // SAFETY: the block is twophase_segsort_merge's; its blocks stride over the level's
            // list, each tile read from the buffer its mask names and written whole into the
            // other (both `count` keys, values alike); its merge ranges are the partitions (the
            // launch's above, or with own_partitions, a trusted order's only, its own searches
            // of the same merge paths), checked against each other first for a comparator that
            // is not trusted (a bad level copies instead), so every read stays inside the tile's
            // straddle.
            unsafe {
                gpu.launch(
                    merge,
                    LaunchShape::new(merge_grid, tuning.threads)
                        .shared(merge_shared)
                        .dependent(dependent),
                    &merge_params,
                )
            }?;
            if four_way_at(level) {
                let four_way_params = FourWayParams {
                    keys,
                    scratch_keys,
                    vals: values,
                    scratch_vals: scratch_values,
                    count: count_arg,
                    masks,
                    control,
                    list: list_at(levels + level),
                    partitions,
                    cuts,
                    status: check.status,
                    level: level as u32,
                };
                // SAFETY: the block is twophase_segsort_four_way_cuts'; its threads stride over
                // the level's four-way list (the count the plan wrote, at most num_tiles; list
                // `levels + level` of LISTS_PER_LEVEL * levels, grown above), search each tile's
                // quad (within `count` keys, in the buffer its mask names) on the level's
                // partitions of the quad's tiles (all listed at this level, written by the
                // partition launch above), and write cuts[3 tile ..] (CUT_WORDS * (num_tiles + 1)
                // words, grown above for trusted comparators).
                unsafe {
                    gpu.launch(
                        four_way_cuts,
                        LaunchShape::new(partition_grid, PARTITION_THREADS).dependent(dependent),
                        &four_way_params,
                    )
                }?;
                // SAFETY: the block is twophase_segsort_four_way_merge's; its blocks stride over
                // the same list, each tile merged from its quad's buffer into the other (both
                // `count` keys, values alike) by the cuts written just before (its own and the
                // next tile's of the same quad), which select within each of the quad's runs.
                unsafe {
                    gpu.launch(
                        four_way_merge,
                        LaunchShape::new(four_way_grid, tuning.threads)
                            .shared(four_way_shared)
                            .dependent(dependent),
                        &four_way_params,
                    )
                }?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_straddles_cover_every_pair() {
        assert_eq!(levels_of(1), 0);
        assert_eq!(levels_of(2), 1);
        assert_eq!(levels_of(3), 2);
        assert_eq!(levels_of(4), 2);
        assert_eq!(levels_of(5), 3);
        // 5 tiles: pairs of 1-tile runs (3), of 2-tile runs (2), of 4-tile runs (1).
        assert_eq!(straddle_entries(5, 3), 6);
        assert_eq!(straddle_entries(1, 0), 0);
    }
}
