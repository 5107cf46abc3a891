//! Batcher's sort's tuning: tile, threads and the stage and fused-stride constants.

use crate::error::GpuError;
use crate::runtime::shape::{check_launch_shape, MAX_STATIC_SHARED_BYTES};

/// Compare-exchanges each thread of the shared-memory kernels does per stage: a tile of T keys
/// has T / 2 comparators per stage, so T / 16 threads. Eight keep the block at 512 threads for a
/// 8192-key tile (the u32 tile) and give every thread enough independent work between barriers.
pub const BATCHER_COMPARATORS_PER_THREAD: usize = 8;

/// Threads per block of the global-stage kernel (one comparator per thread, a pure streaming
/// kernel: any multiple of the warp does; 256 is the common choice).
pub const BATCHER_STAGE_THREADS: u32 = 256;

/// The fused launch runs the strides tile / 8 .. 1 of a level (`FUSED_STRIDE` in
/// kernels/batcher.cu, which gets this number as `TP_FUSED_DIVISOR`): its windows carry a halo of 2 x tile / 8 on each side, so each writes
/// half the keys it loads. A larger fused stride would fuse one more stage but write only a
/// sliver of each window; a smaller one reads less but leaves one more stage to a global launch
/// (one read and one write of all keys).
pub const BATCHER_FUSED_STRIDE_DIVISOR: usize = 8;

/// Launch shape of Batcher's sort: a tile of `tile` keys (a power of two, sorted whole in shared
/// memory) handled by `threads` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BatcherTuning {
    /// Threads per block of the shared-memory kernels.
    pub threads: u32,
    /// Keys per tile, a power of two: every merge level of runs shorter than the tile runs in
    /// one launch, and the strides up to tile / 8 of each larger level in one more.
    pub tile: u32,
}

impl BatcherTuning {
    /// The shipped tuning for keys of `key_bytes` and values of `value_bytes` (0 for keys
    /// only): the largest power-of-two tile whose keys and values fit in the 48 KiB of static
    /// shared memory (8192 u32 keys, 4096 u64 keys or u32 pairs), and
    /// [`BATCHER_COMPARATORS_PER_THREAD`] comparators per thread. Larger tiles put more levels
    /// into the block sort and more strides into each fused launch.
    pub const fn for_types(key_bytes: usize, value_bytes: usize) -> Self {
        const MIN_THREADS: usize = 32;
        const MAX_THREADS: usize = 1024;
        let bytes = key_bytes + value_bytes;
        let fit = MAX_STATIC_SHARED_BYTES / if bytes == 0 { 1 } else { bytes };
        // The largest power of two not above `fit`.
        let tile = if fit == 0 {
            1
        } else {
            1usize << (usize::BITS - 1 - fit.leading_zeros())
        };
        let mut threads = tile / (2 * BATCHER_COMPARATORS_PER_THREAD);
        if threads < MIN_THREADS {
            threads = MIN_THREADS;
        }
        if threads > MAX_THREADS {
            threads = MAX_THREADS;
        }
        BatcherTuning {
            threads: threads as u32,
            tile: tile as u32,
        }
    }

    /// Keys per thread of the shared-memory kernels (the program's VT).
    pub const fn vt(&self) -> u32 {
        self.tile / self.threads
    }

    /// Largest stride of the fused launch.
    pub const fn fused_stride(&self) -> usize {
        self.tile as usize / BATCHER_FUSED_STRIDE_DIVISOR
    }

    /// Keys each window of the fused launch writes: the tile less a halo of twice the fused
    /// stride on each side.
    pub const fn fused_outputs(&self) -> usize {
        self.tile as usize - 4 * self.fused_stride()
    }

    /// Check the tuning for keys of `key_bytes` and values of `value_bytes`: a power-of-two tile
    /// of at least 16 keys (so that the fused stride is at least 2), a whole number of keys per
    /// thread, keys and values within static shared memory.
    pub fn validate(&self, key_bytes: usize, value_bytes: usize) -> Result<(), GpuError> {
        const MIN_TILE: u32 = 2 * BATCHER_FUSED_STRIDE_DIVISOR as u32;
        if !self.tile.is_power_of_two() || self.tile < MIN_TILE {
            return Err(GpuError::InvalidTuning(format!(
                "tile = {} (a power of two, at least {MIN_TILE})",
                self.tile
            )));
        }
        if self.threads == 0 || !self.tile.is_multiple_of(self.threads) {
            return Err(GpuError::InvalidTuning(format!(
                "tile = {} is not a multiple of threads = {}",
                self.tile, self.threads
            )));
        }
        // Keys and values of a tile; without values the kernels keep a one-element value array.
        let values = if value_bytes == 0 {
            1
        } else {
            self.tile as usize * value_bytes
        };
        let shared = self.tile as usize * key_bytes + values;
        check_launch_shape(self.threads, self.vt(), false, shared)
    }
}
