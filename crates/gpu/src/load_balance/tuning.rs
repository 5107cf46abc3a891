//! The load-balancing search's tuning: the tile kernel's launch shape.

use crate::error::GpuError;
use crate::runtime::shape::check_launch_shape;

/// Launch shape of a load-balancing tile kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadBalanceTuning {
    /// Threads per block (NT).
    pub threads: u32,
    /// Merge steps per thread (VT): items plus segment starts each thread walks serially.
    pub vt: u32,
}

impl LoadBalanceTuning {
    /// Merge outputs (items + segment starts) per tile: NT * VT.
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.vt as usize
    }

    /// The shipped tuning, for every device the kernels are built for (H200 sweeps in
    /// docs/tuning.md). Reasons:
    /// - The work is a stream (a segment start read per segment, an index or value written per
    ///   item); the in-tile merge runs on 16-bit shared-memory values, whatever the index type.
    /// - NT = 256, VT = 23 (5888 merge outputs, 23 KB of shared memory in 16-bit starts and
    ///   slots): a third fewer tiles than at VT = 15, so fewer partition searches and tile-start
    ///   waits; eight blocks, a full SM, still fit, each kernel in 32 registers without a stack.
    /// - VT is odd, so that the per-thread strides into shared memory spread over the banks.
    pub const fn shipped() -> Self {
        LoadBalanceTuning {
            threads: 256,
            vt: 23,
        }
    }

    /// Shared memory of one tile: the starts (NV + 2 values) and each item's segment slot (NV
    /// values), 16 bits each (`tile_short` in kernels/cta_load_balance.cuh).
    pub const fn shared_bytes(&self) -> usize {
        (2 * self.tile() + 2) * size_of::<i16>()
    }

    /// Check the tuning against what the kernels support.
    pub fn validate(&self) -> Result<(), GpuError> {
        check_launch_shape(self.threads, self.vt, false, self.shared_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::LoadBalanceTuning;
    use crate::runtime::shape::MAX_THREADS_PER_SM;

    /// Shared memory of an sm_90 SM for its blocks, and what each block reserves besides its own
    /// (kernels/partition.cuh's SHARED_PER_SM and RESERVED_SHARED_PER_BLOCK).
    const SM90_SHARED_PER_SM: usize = 228 * 1024;
    const RESERVED_SHARED_PER_BLOCK: usize = 1024;

    /// The shipped tuning is valid, odd in VT, and leaves a full SM of blocks (by threads) room
    /// in sm_90's shared memory: the reasons given for it.
    #[test]
    fn shipped_tuning_fills_an_sm90_sm() {
        let tuning = LoadBalanceTuning::shipped();
        assert!(tuning.validate().is_ok(), "{tuning:?}");
        assert_eq!(tuning.vt % 2, 1, "{tuning:?}: VT even");
        let blocks = (MAX_THREADS_PER_SM / tuning.threads) as usize;
        let shared = blocks * (tuning.shared_bytes() + RESERVED_SHARED_PER_BLOCK);
        assert!(
            shared <= SM90_SHARED_PER_SM,
            "{tuning:?}: {blocks} blocks need {shared} B"
        );
    }
}
