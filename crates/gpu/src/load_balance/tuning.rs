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

    /// The shipped tuning, for every device the kernels are built for (H100 sweeps in
    /// docs/tuning.md). Reasons:
    /// - The work is a stream (a segment start read per segment, an index written per item); the
    ///   in-tile merge runs on 16-bit shared-memory values, whatever the index type.
    /// - NT = 256, VT = 15 (3840 merge outputs, 15 KB of shared memory in 16-bit starts and
    ///   slots): large tiles keep the partition searches few and many loads in flight; eight
    ///   blocks, a full SM, still fit.
    /// - VT is odd, so that the per-thread strides into shared memory spread over the banks.
    pub const fn shipped() -> Self {
        LoadBalanceTuning {
            threads: 256,
            vt: 15,
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
