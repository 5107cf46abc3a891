//! The sorted search's tuning: the tile kernel's launch shape per key size.

use std::mem::size_of;

use crate::error::GpuError;
use crate::runtime::shape::{check_launch_shape_within, MAX_OPTIN_SHARED_BYTES};

/// Threads of a warp (the tile keeps one walk start a warp).
const WARP: usize = 32;

/// Launch shape of the sorted search's tile kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SortedSearchTuning {
    /// Threads per block (NT).
    pub threads: u32,
    /// Merge steps per thread (VT).
    pub vt: u32,
}

impl SortedSearchTuning {
    /// Merge outputs (needles + haystack keys) per tile: NT * VT.
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.vt as usize
    }

    /// The tuning shipped for keys of `key_bytes` bytes. The tile holds its keys (NV + 1), a
    /// 32-bit bound per needle (NV) and a walk start per warp in shared memory. Reasons:
    /// - 4-byte keys: NT = 256, VT = 23 (5888 outputs, 46 KB), the fastest of the H100 sweeps
    ///   (docs/tuning.md): large tiles keep the partition searches few and many loads in flight.
    /// - 8-byte keys: NT = 256, VT = 11 (2816 outputs, 34 KB): twice the key bytes per output
    ///   (not swept).
    /// - Wider keys: NT = 128, VT = 7, to bound registers and shared memory.
    pub const fn for_key(key_bytes: usize) -> Self {
        if key_bytes <= 4 {
            SortedSearchTuning {
                threads: 256,
                vt: 23,
            }
        } else if key_bytes <= 8 {
            SortedSearchTuning {
                threads: 256,
                vt: 11,
            }
        } else {
            SortedSearchTuning {
                threads: 128,
                vt: 7,
            }
        }
    }

    /// The tile kernel's dynamic shared memory for keys of `key_bytes` bytes: its keys (NV + 1,
    /// padded to 16 bytes) and a 32-bit bound per output (NV). Past 48 KiB the launch opts in.
    pub const fn shared_bytes(&self, key_bytes: usize) -> usize {
        ((self.tile() + 1) * key_bytes).div_ceil(16) * 16 + self.tile() * size_of::<i32>()
    }

    /// Check the tuning against what the kernels support for keys of `key_bytes` bytes: the
    /// tile's dynamic shared memory and its static walk starts within the largest opt-in block
    /// (the device's own limit is checked at launch).
    pub fn validate(&self, key_bytes: usize) -> Result<(), GpuError> {
        // One walk start per warp, for the check that the walks tiled the merge.
        let warp_starts = (self.threads as usize).div_ceil(WARP) * size_of::<i32>();
        check_launch_shape_within(
            self.threads,
            self.vt,
            false,
            self.shared_bytes(key_bytes) + warp_starts,
            MAX_OPTIN_SHARED_BYTES,
        )
    }
}
