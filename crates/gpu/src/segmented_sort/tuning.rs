//! The segmented sort's tuning: one tile shape for its block sort and its merge levels, per key size.

use std::mem::size_of;

use crate::error::GpuError;
use crate::runtime::shape::{check_launch_shape_within, MAX_OPTIN_SHARED_BYTES};

/// Bytes of a position's entry in the block sort's piece table (kernels/cta_segmented_sort.cuh
/// `segsort_smem`).
const PIECE_BYTES: usize = size_of::<u32>();
/// Threads of a warp (the merge tile keeps one walk start a warp).
const WARP: usize = 32;
/// The alignment of every shared-memory region (kernels/mergesort_blocksort.cu `align16`).
const SHARED_ALIGN: usize = 16;

const fn aligned(bytes: usize) -> usize {
    bytes.div_ceil(SHARED_ALIGN) * SHARED_ALIGN
}

/// Launch shape of the segmented sort: tiles of NT x VT keys, sorted by the block sort and
/// rewritten by the merge levels that touch them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SegmentedSortTuning {
    /// Threads per block (NT), a power of two: the block sort merges runs pairwise up to NT.
    pub threads: u32,
    /// Keys per thread (VT).
    pub vt: u32,
    /// Segments of at least this many keys sort alone, through the plain mergesort (its larger
    /// tiles and four-way passes), in the calls that have the segments on the host; the merge
    /// levels move every key of a long segment once a doubling.
    pub alone_min_keys: usize,
    /// The first level merged four-way where four runs lie in one segment, then every other
    /// level from it (trusted comparators; [`NO_FOUR_WAY_LEVELS`](Self::NO_FOUR_WAY_LEVELS):
    /// none). Each four-way level costs two launches whether or not a quad lies in one segment.
    pub four_way_from_level: u32,
    /// Sorts of fewer keys merge two-way only: their four-way levels' launches, which cost a call
    /// whether or not a quad lies in one segment, weigh more against a smaller sort.
    pub four_way_min_keys: usize,
    /// Sorts of fewer keys launch every kernel after the check as a programmatic dependent of
    /// the one before (sm_90+), so that each one's blocks are scheduled while the previous
    /// kernel's last blocks run; 0 turns it off.
    pub pdl_below_keys: usize,
    /// Sorts of fewer keys under a trusted order search each merge tile's partitions in the merge
    /// kernel (two threads a tile), at the levels whose partitions no four-way cut reads: one
    /// launch a level instead of two; 0 turns it off.
    pub own_partitions_below_keys: usize,
}

/// Bytes of keys and values from which a segment sorts alone ([`SegmentedSortTuning::alone_min_keys`]):
/// the merge levels cost a segment about one read and write of its keys per doubling past a
/// tile, the plain mergesort about half that plus a fixed few tens of microseconds a call.
const ALONE_MIN_BYTES: usize = 32 << 20;

/// Bytes of keys and values from which a sort merges four-way ([`SegmentedSortTuning::four_way_min_keys`]):
/// the size the four-way levels were measured at (2^27 4-byte keys), where their empty launches
/// cost 1.7% of a call without long segments; smaller sorts were not timed with them.
const FOUR_WAY_MIN_BYTES: usize = 512 << 20;

/// The first four-way level of keys of at most 8 bytes alone: level 0, the fastest start for a
/// long segment, at two launches a four-way level on every call (docs/tuning.md, "Four-way merge
/// levels"). Wider keys and pairs merge two-way only: their four-way tile spills (untimed).
const FOUR_WAY_FROM_LEVEL: u32 = 0;

/// Bytes of keys and values below which the launches are chained by programmatic dependent launch
/// ([`SegmentedSortTuning::pdl_below_keys`]): 6-21% faster at 2^20 u32 keys and up to 29% at 2^24,
/// most launches of a small call finding no work; the mergesort's bound, where 1 GiB sorts lost
/// (docs/tuning.md, "Launches of small sorts").
const PDL_MAX_BYTES: usize = 256 << 20;

/// Bytes of keys and values below which the merge levels search their own partitions
/// ([`SegmentedSortTuning::own_partitions_below_keys`]): a partition launch cost about 4 us even
/// with nothing to search; every row measured at 2^20, 2^24 and 2^25 gained (up to 37%) or held
/// but a segment of 7/8 of the keys, 5.6% slower for u64 at 2^24 and 7% for u32 at 2^25, where a
/// merge block meets a dozen of its tiles' searches one after another (docs/tuning.md, as above).
const OWN_PARTITIONS_MAX_BYTES: usize = 256 << 20;

impl SegmentedSortTuning {
    /// [`four_way_from_level`](Self::four_way_from_level) past every level: two-way levels only.
    pub const NO_FOUR_WAY_LEVELS: u32 = u32::MAX;

    /// Keys per tile (NV = NT * VT).
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.vt as usize
    }

    /// The tuning shipped for keys of `key_bytes` bytes and values of `value_bytes` (the shape
    /// depends on the keys alone). Reasons:
    /// - 4-byte keys: 128 x 15, the fastest of the H100 sweep for segments of 32 and of
    ///   1..2000 keys (10-11% under 256 x 15), 2% over it for one segment
    ///   (docs/tuning.md): the block sort's levels cost every thread whatever moves, and a
    ///   smaller block has fewer of them and more blocks an SM.
    /// - 8-byte keys: 256 x 11, the mergesort's u64 shape (not swept).
    /// - Wider keys: 128 x 7, to bound registers and shared memory.
    /// - Four-way levels from level 0 for keys of at most 8 bytes alone, in sorts of 512 MiB or
    ///   more; none for wider keys and pairs, whose four-way tile spills (the constants' reasons).
    pub const fn for_types(key_bytes: usize, value_bytes: usize) -> Self {
        let (threads, vt) = if key_bytes <= 4 {
            (128, 15)
        } else if key_bytes <= 8 {
            (256, 11)
        } else {
            (128, 7)
        };
        let element_bytes = key_bytes + value_bytes;
        Self {
            threads,
            vt,
            alone_min_keys: ALONE_MIN_BYTES / if element_bytes > 0 { element_bytes } else { 1 },
            four_way_from_level: if key_bytes <= 8 && value_bytes == 0 {
                FOUR_WAY_FROM_LEVEL
            } else {
                Self::NO_FOUR_WAY_LEVELS
            },
            four_way_min_keys: FOUR_WAY_MIN_BYTES
                / if element_bytes > 0 { element_bytes } else { 1 },
            pdl_below_keys: PDL_MAX_BYTES / if element_bytes > 0 { element_bytes } else { 1 },
            own_partitions_below_keys: OWN_PARTITIONS_MAX_BYTES
                / if element_bytes > 0 { element_bytes } else { 1 },
        }
    }

    /// Dynamic shared memory of the block sort (kernels/cta_segmented_sort.cuh `segsort_smem`):
    /// the NV + 1 keys, the piece table (a 32-bit entry a position), with values the NV tile
    /// positions and the NV values (copied in while the keys sort, each region its own); plus the
    /// walk check (one int a warp).
    pub const fn blocksort_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> usize {
        let nv = self.tile();
        let keys = aligned((nv + 1) * key_bytes) + aligned(nv * PIECE_BYTES);
        let walk_check = aligned(self.threads as usize / WARP * size_of::<i32>());
        if value_bytes == 0 {
            return keys + walk_check;
        }
        keys + aligned(nv * size_of::<i32>()) + aligned(nv * value_bytes) + walk_check
    }

    /// Dynamic shared memory of a merge-level tile (kernels/segmented_sort_levels.cu
    /// `merge_smem`): the straddle's NV + 1 keys, the merged outputs' NV source positions and,
    /// with values, the straddle's NV values, each in a region of its own: the straddle stays in
    /// place while the sources are stored, and the keys and values are gathered from it by
    /// source.
    pub const fn merge_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> usize {
        let nv = self.tile();
        aligned((nv + 1) * key_bytes) + aligned(nv * size_of::<i32>()) + aligned(nv * value_bytes)
    }

    /// Dynamic shared memory of a four-way tile (kernels/cta_quad_merge.cuh `quad_smem`, NV of
    /// this tuning): the input and then the first level's output (NV + PIECE + 1 keys), with
    /// values as many source positions and the NV input values.
    pub const fn four_way_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> usize {
        // A thread's level-one piece (`quad_piece`): VT + 2 for odd VT, else VT + 1.
        let piece = self.vt as usize + if self.vt % 2 == 1 { 2 } else { 1 };
        let slots = self.tile() + piece + 1;
        let keys = aligned(slots * key_bytes);
        if value_bytes == 0 {
            return keys;
        }
        keys + aligned(slots * size_of::<i32>()) + self.tile() * value_bytes
    }

    /// Check the tuning against what the kernels support for these types.
    pub fn validate(&self, key_bytes: usize, value_bytes: usize) -> Result<(), GpuError> {
        // Tile positions are packed in 16 bits in the piece table.
        const MAX_TILE: usize = u16::MAX as usize;
        // Two warps of a merge block search its tile's partitions (kernels/segmented_sort_levels.cu).
        const MIN_THREADS: u32 = 2 * WARP as u32;
        if self.threads < MIN_THREADS {
            return Err(GpuError::InvalidTuning(format!(
                "threads = {}: at least {MIN_THREADS} (two warps search a merge tile's partitions)",
                self.threads
            )));
        }
        if self.tile() > MAX_TILE {
            return Err(GpuError::InvalidTuning(format!(
                "a tile of {} keys: at most {MAX_TILE}",
                self.tile()
            )));
        }
        let shared = self
            .blocksort_shared_bytes(key_bytes, value_bytes)
            .max(self.merge_shared_bytes(key_bytes, value_bytes))
            .max(self.four_way_shared_bytes(key_bytes, value_bytes));
        check_launch_shape_within(self.threads, self.vt, true, shared, MAX_OPTIN_SHARED_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_tunings_validate_and_one_warp_is_refused() {
        for (key_bytes, value_bytes) in [(1, 0), (4, 0), (4, 4), (8, 0), (8, 8), (16, 0), (24, 8)] {
            let tuning = SegmentedSortTuning::for_types(key_bytes, value_bytes);
            assert!(
                tuning.validate(key_bytes, value_bytes).is_ok(),
                "{key_bytes}, {value_bytes}"
            );
        }
        let one_warp = SegmentedSortTuning {
            threads: WARP as u32,
            ..SegmentedSortTuning::for_types(4, 0)
        };
        let refused = one_warp.validate(4, 0);
        assert!(
            matches!(&refused, Err(GpuError::InvalidTuning(why)) if why.contains("two warps")),
            "{refused:?}"
        );
    }
}
