//! The textbook merges' tuning: threads, items per thread and tiles per block.

use std::mem::size_of;

use crate::error::GpuError;
use crate::runtime::shape::{check_launch_shape, tile_tuning};

tile_tuning! {
    /// Launch shape of the textbook merge kernels: `threads` x `vt` outputs per tile (basic: per
    /// block), `tiles_per_block` tiles per block of the tiled and circular kernels.
    pub struct TextbookMergeTuning {
        /// Tiles per block of the tiled and circular kernels (each block loops over them).
        pub tiles_per_block: u32,
    }
}

impl TextbookMergeTuning {
    /// Outputs per block of the tiled and circular kernels.
    pub const fn block_outputs(&self) -> usize {
        self.tile() * self.tiles_per_block as usize
    }

    /// The shipped tuning for keys of `key_bytes` and values of `value_bytes` (0 for keys only):
    /// [`TEXTBOOK_THREADS`], [`TEXTBOOK_VT`] (or [`TEXTBOOK_VT_WIDE`] past 8 bytes) and
    /// [`TEXTBOOK_TILES_PER_BLOCK`]. Not swept: the textbook kernels are measured as the
    /// textbook shapes them, not tuned.
    pub const fn for_types(key_bytes: usize, value_bytes: usize) -> Self {
        let vt = if key_bytes <= 8 && value_bytes <= 8 {
            TEXTBOOK_VT
        } else {
            TEXTBOOK_VT_WIDE
        };
        TextbookMergeTuning {
            threads: TEXTBOOK_THREADS,
            vt,
            tiles_per_block: TEXTBOOK_TILES_PER_BLOCK,
        }
    }

    /// Check the tuning against what the kernels support for keys of `key_bytes` bytes: the
    /// tiled kernel's 2 x tile + 1 keys (and every thread's end co-rank, an `int`, passed to the
    /// next thread) in static shared memory.
    pub fn validate(&self, key_bytes: usize) -> Result<(), GpuError> {
        let ends_bytes = self.threads as usize * size_of::<i32>();
        let shared = (2 * self.tile() + 1) * key_bytes + ends_bytes;
        check_launch_shape(self.threads, self.vt, false, shared)?;
        if self.tiles_per_block == 0 {
            return Err(GpuError::InvalidTuning("tiles_per_block = 0".into()));
        }
        Ok(())
    }
}

/// Threads per block of the textbook kernels: four warps. The kernels are bound by the latency
/// of dependent global loads (the co-rank searches) and of uncoalesced stores; small blocks keep
/// more of them resident per SM to hide it.
pub const TEXTBOOK_THREADS: u32 = 128;

/// Outputs per thread (per tile, for the tiled kernels) for keys and values up to 8 bytes: a
/// tile of 128 x 8 = 1024 outputs, whose tiled kernel holds 2 x 1024 + 1 keys in shared memory
/// (8 KB for u32, 16 KB for u64). It need not be odd: these kernels write their outputs straight
/// from registers to global memory, with no transpose through shared memory.
pub const TEXTBOOK_VT: u32 = 8;

/// Outputs per thread for wider keys or values: halves the tile so that 2 x tile + 1 keys of up
/// to 47 bytes stay within the 48 KiB of static shared memory.
pub const TEXTBOOK_VT_WIDE: u32 = 4;

/// Tiles a block of the tiled and circular kernels merges: 8 x 1024 = 8192 outputs, about the
/// two-phase u32 tile (8832), so both run about the same number of global co-rank searches per
/// output and the comparison measures what happens inside the block; and enough iterations per
/// block that the circular buffer's saved loads show.
pub const TEXTBOOK_TILES_PER_BLOCK: u32 = 8;
