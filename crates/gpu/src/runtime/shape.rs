//! Launch shapes: block and tile limits every kernel is checked against, and the partition kernels' grids.

use crate::error::GpuError;

/// Threads per block of the partition kernels. Each thread runs one independent binary search
/// (latency bound, no shared memory), so the block size only needs to be a few warps; 128 keeps
/// many blocks resident for latency hiding.
pub const PARTITION_THREADS: u32 = 128;

/// Largest static shared memory of one block (48 KiB without opt-in).
pub const MAX_STATIC_SHARED_BYTES: usize = 48 * 1024;

/// Largest dynamic shared memory of one block after opt-in on any architecture the kernels are
/// built for (sm_90: 227 KiB; sm_80 has 163 KiB, the device's own limit is checked at launch).
pub const MAX_OPTIN_SHARED_BYTES: usize = 227 * 1024;

/// Most threads of one block (CUDA's limit).
const MAX_THREADS: u32 = 1024;

/// Threads one SM holds at once (sm_80 and sm_90): a launch bound asking for more blocks than fit
/// is refused.
pub(crate) const MAX_THREADS_PER_SM: u32 = 2048;

/// Threads of a warp: blocks are whole warps.
const WARP: u32 = 32;

/// Most items per thread: the VT register arrays of keys and indices must stay in registers.
const MAX_VT: u32 = 64;

/// Most lanes of one boundary search: a warp (kernels/partition.cuh, `MAX_SEARCH_LANES`).
pub(crate) const MAX_SEARCH_LANES: u32 = 32;

/// Threads an SM that the partition kernels of the merge, the load-balancing search and the
/// sorted search may put on their boundary searches: each boundary gets the most lanes that stay
/// within it ([`partition_lanes`]). On the H100 the fastest lanes put 16-33 thousand threads on a
/// merge's boundaries at 2^20 and 2^24 keys, and one lane was fastest from 16 thousand boundaries
/// up (more lanes only added loads): 128 an SM.
pub(crate) const PARTITION_SEARCH_THREADS_PER_SM: usize = 128;

/// Whether `lanes` is a valid lanes-per-search setting: 0 (the automatic choice) or a power of
/// two up to a warp.
pub(crate) fn valid_search_lanes(lanes: u32) -> bool {
    lanes == 0 || (lanes.is_power_of_two() && lanes <= MAX_SEARCH_LANES)
}

/// The most lanes per search (a power of two up to a warp, at least one) that keep `searches`
/// searches within `threads_per_sm` threads an SM of `multiprocessors` SMs. Few searches leave
/// the memory system idle while each one's chain of dependent loads runs, so more lanes shorten
/// the chains; many searches already fill it, and more lanes would only add loads.
pub(crate) fn lanes_within(threads_per_sm: usize, searches: usize, multiprocessors: u32) -> u32 {
    let budget = threads_per_sm * multiprocessors as usize / searches.max(1);
    let mut lanes = 1;
    while lanes < MAX_SEARCH_LANES && (2 * lanes) as usize <= budget {
        lanes *= 2;
    }
    lanes
}

/// Lanes per boundary search of a two-phase partition kernel with `boundaries` boundaries on a
/// device of `multiprocessors` SMs ([`lanes_within`] [`PARTITION_SEARCH_THREADS_PER_SM`]).
pub(crate) fn partition_lanes(boundaries: usize, multiprocessors: u32) -> u32 {
    lanes_within(PARTITION_SEARCH_THREADS_PER_SM, boundaries, multiprocessors)
}

/// Largest grid a kernel may use: CUDA's limit on gridDim.x (2^31 - 1).
pub const MAX_GRID_X: u64 = (1 << 31) - 1;

/// `blocks` as a launch's grid size, or [`GpuError::TooLarge`] past [`MAX_GRID_X`].
pub(crate) fn grid_blocks(blocks: usize) -> Result<u32, GpuError> {
    u32::try_from(blocks)
        .ok()
        .filter(|&b| u64::from(b) <= MAX_GRID_X)
        .ok_or_else(|| GpuError::TooLarge(format!("{blocks} blocks in one grid")))
}

/// The grid of a kernel whose blocks stride over `items` work items of one thread each,
/// `threads` a block: a block per `threads` items, but no more than `blocks_per_sm` on each of
/// the device's `multiprocessors` (the rest are strided over), and at least one.
pub(crate) fn strided_grid(
    items: usize,
    threads: u32,
    blocks_per_sm: usize,
    multiprocessors: u32,
) -> Result<u32, GpuError> {
    let resident = blocks_per_sm.saturating_mul(multiprocessors as usize);
    grid_blocks(items.div_ceil(threads as usize).min(resident).max(1))
}

/// Check a kernel's launch shape: `threads` whole warps up to 1024 (a power of two when
/// `power_of_two`, for kernels that merge runs pairwise up to the block), VT from 1 to 64, and
/// `shared_bytes` of static shared memory within the 48 KiB limit.
pub fn check_launch_shape(
    threads: u32,
    vt: u32,
    power_of_two: bool,
    shared_bytes: usize,
) -> Result<(), GpuError> {
    check_launch_shape_within(
        threads,
        vt,
        power_of_two,
        shared_bytes,
        MAX_STATIC_SHARED_BYTES,
    )
}

/// [`check_launch_shape`] for a kernel whose shared memory may be as large as `max_shared`
/// (dynamic shared memory with opt-in).
pub fn check_launch_shape_within(
    threads: u32,
    vt: u32,
    power_of_two: bool,
    shared_bytes: usize,
    max_shared: usize,
) -> Result<(), GpuError> {
    let whole_warps = threads > 0 && threads <= MAX_THREADS && threads.is_multiple_of(WARP);
    if !whole_warps || (power_of_two && !threads.is_power_of_two()) {
        let shape = if power_of_two {
            "a power of two"
        } else {
            "a multiple of 32"
        };
        return Err(GpuError::InvalidTuning(format!(
            "threads = {threads} ({shape} from 32 to {MAX_THREADS})"
        )));
    }
    if vt == 0 || vt > MAX_VT {
        return Err(GpuError::InvalidTuning(format!(
            "vt = {vt} (1 to {MAX_VT})"
        )));
    }
    if shared_bytes > max_shared {
        return Err(GpuError::InvalidTuning(format!(
            "tile needs {shared_bytes} bytes of shared memory (at most {max_shared})"
        )));
    }
    Ok(())
}

/// Declare a tuning whose launch shape is a tile of `threads` x `vt` items: the struct (`Copy`,
/// comparable, hashable) with those two fields before its own `$field`s, and its `tile()`, the
/// items of a tile.
macro_rules! tile_tuning {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            /// Threads per block (NT).
            pub threads: u32,
            /// Items per thread (VT): the items of a tile each thread handles serially in
            /// registers.
            pub vt: u32,
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $name {
            /// Items per tile (NV = NT * VT).
            pub const fn tile(&self) -> usize {
                self.threads as usize * self.vt as usize
            }
        }
    };
}
pub(crate) use tile_tuning;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_lanes_shrink_as_boundaries_grow() {
        // 132 SMs at 128 threads each: 16896 search threads.
        assert_eq!(partition_lanes(132, 132), MAX_SEARCH_LANES);
        assert_eq!(partition_lanes(16_896 / 4, 132), 4);
        assert_eq!(partition_lanes(16_896 / 4 + 1, 132), 2);
        assert_eq!(partition_lanes(16_646, 132), 1);
        assert_eq!(partition_lanes(1 << 20, 132), 1);
        assert_eq!(partition_lanes(0, 132), MAX_SEARCH_LANES);
        for boundaries in [1usize, 7, 1000, 1 << 16] {
            let lanes = partition_lanes(boundaries, 132);
            assert!(lanes.is_power_of_two() && PARTITION_THREADS.is_multiple_of(lanes));
        }
    }

    #[test]
    fn strided_grids_cover_the_items_up_to_the_resident_blocks() {
        // 1000 items of 128 threads: 8 blocks, under 8 a SM of 132 SMs.
        assert_eq!(strided_grid(1000, 128, 8, 132).ok(), Some(8));
        // Past the resident blocks the grid stops there; none is still one block.
        assert_eq!(strided_grid(1 << 30, 128, 8, 132).ok(), Some(8 * 132));
        assert_eq!(strided_grid(0, 128, 8, 132).ok(), Some(1));
        assert_eq!(strided_grid(129, 128, 8, 132).ok(), Some(2));
    }
}
