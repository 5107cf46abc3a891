//! The merge's tuning: the tile kernel's launch shape per key and value size.

use crate::error::GpuError;
use crate::runtime::shape::{check_launch_shape, tile_tuning, MAX_THREADS_PER_SM};

tile_tuning! {
    /// Launch shape of the merge's tile kernel: each thread merges `vt` outputs serially in
    /// registers.
    pub struct MergeTuning {
        /// Blocks of the tile kernel that must fit on one SM by registers (its launch bound's
        /// minimum): ptxas then keeps the kernel within 64K / (threads * blocks_per_sm) registers
        /// a thread. 1 leaves the register count to ptxas.
        pub blocks_per_sm: u32,
    }
}

impl MergeTuning {
    /// The tuning shipped for keys of `key_bytes` bytes, with values of `value_bytes` bytes (0 for
    /// keys only), on any device ([`for_memory`](Self::for_memory) picks per device). Chosen from
    /// H100 sweeps at 2^20-2^27 outputs with the input checks on (docs/tuning.md). Reasons:
    /// - VT is odd so that the thread-order <-> strided transposes through shared memory
    ///   (`VT * tid + i`) hit 32 distinct banks for 4-byte words: conflict-free.
    /// - Large tiles: fewer tiles mean fewer partition searches (each a chain of ~log2(n)
    ///   dependent global loads) and more independent loads in flight per thread.
    /// - 2- and 4-byte keys alone: NT = 384, VT = 21 (8064-item tiles), [`NARROW_KEYS_BLOCKS_PER_SM`].
    /// - 1-byte keys alone, and pairs of at most 4 bytes together: NT = 384, VT = 23 (8832-item
    ///   tiles, 35 KB of shared memory), [`KEYS_BLOCKS_PER_SM`].
    /// - Keys of up to 4 bytes with values of up to 4 bytes: NT = 384, VT = 17 (6528-item tiles),
    ///   [`NARROW_PAIRS_BLOCKS_PER_SM`]: the values are gathered in a second pass, from more blocks.
    /// - Keys of up to 4 bytes with 8-byte values: NT = 512, VT = 15 (7680-item tiles),
    ///   [`PAIRS_BLOCKS_PER_SM`]: bigger blocks keep more of the value loads in flight.
    /// - 8-byte keys (values up to 8 bytes): NT = 256, VT = 19 (4864-item tiles, 39 KB): the
    ///   register arrays are twice as wide, so fewer items per thread than for 4-byte keys.
    /// - Anything wider (user structs, big values): NT = 128, VT = 7, to bound registers and
    ///   shared memory; blocks_per_sm 1 (ptxas's choice).
    pub const fn for_types(key_bytes: usize, value_bytes: usize) -> Self {
        if value_bytes == 0 && (key_bytes == 2 || key_bytes == 4) {
            MergeTuning {
                threads: 384,
                vt: 21,
                blocks_per_sm: NARROW_KEYS_BLOCKS_PER_SM,
            }
        } else if key_bytes + value_bytes <= 4 {
            MergeTuning {
                threads: 384,
                vt: 23,
                blocks_per_sm: KEYS_BLOCKS_PER_SM,
            }
        } else if key_bytes <= 4 && value_bytes <= 4 {
            MergeTuning {
                threads: 384,
                vt: 17,
                blocks_per_sm: NARROW_PAIRS_BLOCKS_PER_SM,
            }
        } else if key_bytes <= 4 && value_bytes <= 8 {
            MergeTuning {
                threads: 512,
                vt: 15,
                blocks_per_sm: PAIRS_BLOCKS_PER_SM,
            }
        } else if key_bytes <= 8 && value_bytes <= 8 {
            MergeTuning {
                threads: 256,
                vt: 19,
                blocks_per_sm: if value_bytes == 0 {
                    KEYS_BLOCKS_PER_SM
                } else {
                    PAIRS_BLOCKS_PER_SM
                },
            }
        } else {
            MergeTuning {
                threads: 128,
                vt: 7,
                blocks_per_sm: 1,
            }
        }
    }

    /// The tuning shipped for a device whose memory moves `bandwidth_per_sm` bytes a second per
    /// SM at its peak: [`for_fast_memory`](Self::for_fast_memory) from
    /// [`FAST_MEMORY_BYTES_PER_SM`], else [`for_types`](Self::for_types). The launches use this.
    pub const fn for_memory(key_bytes: usize, value_bytes: usize, bandwidth_per_sm: u64) -> Self {
        if bandwidth_per_sm >= FAST_MEMORY_BYTES_PER_SM {
            Self::for_fast_memory(key_bytes, value_bytes)
        } else {
            Self::for_types(key_bytes, value_bytes)
        }
    }

    /// The tuning shipped where each SM must keep more bytes in flight to cover its memory's
    /// bandwidth (H200-class memory, docs/tuning.md), else [`for_types`](Self::for_types):
    /// 8-byte keys alone keep NT = 256, VT = 19 with [`FAST_WIDE_KEYS_BLOCKS_PER_SM`] blocks.
    /// 4-byte keys alone keep theirs below 2^25 outputs (large merges:
    /// [`for_large_fast_memory`](Self::for_large_fast_memory)); u32 pairs at 256 x 19, 4 blocks,
    /// did not gain.
    pub const fn for_fast_memory(key_bytes: usize, value_bytes: usize) -> Self {
        if value_bytes == 0 && key_bytes == 8 {
            MergeTuning {
                threads: 256,
                vt: 19,
                blocks_per_sm: FAST_WIDE_KEYS_BLOCKS_PER_SM,
            }
        } else {
            Self::for_types(key_bytes, value_bytes)
        }
    }

    /// The tuning shipped for a merge of `outputs` outputs on a device whose memory moves
    /// `bandwidth_per_sm` bytes a second per SM: [`for_large_fast_memory`](Self::for_large_fast_memory)
    /// for 4-byte keys alone from [`LARGE_MERGE_MIN_BYTES`] of outputs on fast memory, else
    /// [`for_memory`](Self::for_memory). The launches use this.
    pub const fn for_launch(
        key_bytes: usize,
        value_bytes: usize,
        bandwidth_per_sm: u64,
        outputs: usize,
    ) -> Self {
        let large = outputs.saturating_mul(key_bytes + value_bytes) >= LARGE_MERGE_MIN_BYTES;
        if large && bandwidth_per_sm >= FAST_MEMORY_BYTES_PER_SM {
            Self::for_large_fast_memory(key_bytes, value_bytes)
        } else {
            Self::for_memory(key_bytes, value_bytes, bandwidth_per_sm)
        }
    }

    /// The tuning shipped for large merges on fast memory: 4-byte keys alone take NT = 128,
    /// VT = 27 with [`LARGE_FAST_KEYS_BLOCKS_PER_SM`] blocks (3456-item tiles), which kept the
    /// H200's memory busier than the 8064-item tiles from 2^25 outputs and lost below; every
    /// other type keeps [`for_fast_memory`](Self::for_fast_memory) (docs/tuning.md).
    pub const fn for_large_fast_memory(key_bytes: usize, value_bytes: usize) -> Self {
        if value_bytes == 0 && key_bytes == 4 {
            MergeTuning {
                threads: 128,
                vt: 27,
                blocks_per_sm: LARGE_FAST_KEYS_BLOCKS_PER_SM,
            }
        } else {
            Self::for_fast_memory(key_bytes, value_bytes)
        }
    }

    /// Check the tuning against what the kernels support for keys of `key_bytes` bytes.
    pub fn validate(&self, key_bytes: usize) -> Result<(), GpuError> {
        let shared = (self.tile() + 1) * key_bytes.max(size_of::<i32>());
        check_launch_shape(self.threads, self.vt, false, shared)?;
        let resident = u64::from(self.threads) * u64::from(self.blocks_per_sm);
        if self.blocks_per_sm == 0 || resident > u64::from(MAX_THREADS_PER_SM) {
            return Err(GpuError::InvalidTuning(format!(
                "blocks_per_sm = {} (1 to {} / threads = {})",
                self.blocks_per_sm,
                MAX_THREADS_PER_SM,
                MAX_THREADS_PER_SM / self.threads.max(1)
            )));
        }
        Ok(())
    }
}

/// Tile blocks per SM for 2- and 4-byte keys alone: 4 (40 registers, nothing spilled at VT =
/// 21): a fourth block overlaps one tile's loads with another's merge, which pays for the
/// input checks' compares (docs/tuning.md).
pub const NARROW_KEYS_BLOCKS_PER_SM: u32 = 4;

/// Tile blocks per SM for the other keys alone (1- and 8-byte keys): 3 (56 and 80 registers,
/// nothing spilled). Unbounded, ptxas takes 78-112 registers and 2 blocks; at 4 blocks 1-byte
/// keys spill and 8-byte keys gain nothing on the H100 (on faster memory they do:
/// [`FAST_WIDE_KEYS_BLOCKS_PER_SM`]).
pub const KEYS_BLOCKS_PER_SM: u32 = 3;

/// Tile blocks per SM for keys of up to 4 bytes with values of up to 4 bytes: 3 (56 registers,
/// nothing spilled at NT = 384, VT = 17; 8-byte values spill there).
pub const NARROW_PAIRS_BLOCKS_PER_SM: u32 = 3;

/// Tile blocks per SM for the other merges of key-value pairs: 2, as ptxas chooses unbounded
/// (64-118 registers); the value gather needs the index array besides the keys.
pub const PAIRS_BLOCKS_PER_SM: u32 = 2;

/// Peak memory bandwidth per SM, bytes a second, from which the merge takes
/// [`MergeTuning::for_fast_memory`]: between the H100's (3.35 TB/s over 132 SMs, 25 GB/s) and
/// the H200's (4.9 TB/s, 37 GB/s). By Little's law the bytes an SM keeps in flight grow with it.
pub const FAST_MEMORY_BYTES_PER_SM: u64 = 30_000_000_000;
/// Tile blocks per SM for 8-byte keys alone on fast memory: 4 (64 registers, nothing spilled)
/// where 3 cover the H100's memory.
pub const FAST_WIDE_KEYS_BLOCKS_PER_SM: u32 = 4;

/// Bytes of outputs from which a merge on fast memory takes
/// [`MergeTuning::for_large_fast_memory`]: 2^25 4-byte keys, the smallest size at which its
/// tiles measured faster on the H200 (2^24 lost 17%).
pub const LARGE_MERGE_MIN_BYTES: usize = 128 << 20;
/// Tile blocks per SM of the large merges' 128-thread tiles of 4-byte keys on fast memory: 10
/// (48 registers, nothing spilled): 1280 threads an SM in small blocks, where 12 blocks at 40
/// registers measured the same and 20 blocks of 64 threads slower.
pub const LARGE_FAST_KEYS_BLOCKS_PER_SM: u32 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    /// Peak bandwidth per SM of the devices the rule was measured on, bytes a second.
    const H100_PER_SM: u64 = 3_350_000_000_000 / 132;
    const H200_PER_SM: u64 = 4_800_000_000_000 / 132;

    #[test]
    fn large_merges_of_4_byte_keys_take_narrow_tiles_on_fast_memory_only() {
        let threshold = LARGE_MERGE_MIN_BYTES / 4;
        for (key_bytes, value_bytes) in [(1, 0), (2, 0), (4, 0), (8, 0), (4, 4), (24, 0)] {
            for outputs in [0, threshold - 1, threshold, usize::MAX] {
                let slow = MergeTuning::for_launch(key_bytes, value_bytes, H100_PER_SM, outputs);
                assert_eq!(slow, MergeTuning::for_types(key_bytes, value_bytes));
                let fast = MergeTuning::for_launch(key_bytes, value_bytes, H200_PER_SM, outputs);
                fast.validate(key_bytes).expect("valid");
                let large =
                    outputs.saturating_mul(key_bytes + value_bytes) >= LARGE_MERGE_MIN_BYTES;
                let expected = if key_bytes == 4 && value_bytes == 0 && large {
                    MergeTuning {
                        threads: 128,
                        vt: 27,
                        blocks_per_sm: LARGE_FAST_KEYS_BLOCKS_PER_SM,
                    }
                } else {
                    MergeTuning::for_fast_memory(key_bytes, value_bytes)
                };
                assert_eq!(
                    fast, expected,
                    "{key_bytes}+{value_bytes} bytes, {outputs} outputs"
                );
            }
        }
    }

    #[test]
    fn fast_memory_takes_more_tile_blocks_for_8_byte_keys_alone_only() {
        for (key_bytes, value_bytes) in [
            (1, 0),
            (2, 0),
            (4, 0),
            (8, 0),
            (24, 0),
            (4, 4),
            (4, 8),
            (8, 8),
        ] {
            let any = MergeTuning::for_types(key_bytes, value_bytes);
            assert_eq!(
                MergeTuning::for_memory(key_bytes, value_bytes, H100_PER_SM),
                any
            );
            assert_eq!(MergeTuning::for_memory(key_bytes, value_bytes, 0), any);
            let fast = MergeTuning::for_memory(key_bytes, value_bytes, H200_PER_SM);
            assert_eq!(fast, MergeTuning::for_fast_memory(key_bytes, value_bytes));
            fast.validate(key_bytes).expect("valid on fast memory");
            let keys_alone = value_bytes == 0 && key_bytes == 8;
            assert_eq!(fast != any, keys_alone, "{key_bytes}+{value_bytes} bytes");
            if keys_alone {
                assert!(fast.blocks_per_sm > any.blocks_per_sm);
            }
        }
    }
}
