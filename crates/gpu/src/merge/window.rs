//! Kernels of the merge program for work across devices: a streamed merge's window cuts (where each needle falls in a sorted run) and a cut's strided samples, one thread each (kernels/merge.cu).

use cudarc::driver::{CudaFunction, CudaView, CudaViewMut, DevicePtr, DevicePtrMut};

use super::{MERGE_ENTRY_GATHER, MERGE_ENTRY_WINDOW_CUTS};
use crate::compare::DeviceComparator;
use crate::error::{check_len, GpuError};
use crate::key::DeviceKey;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{param_block, LaunchShape};
use crate::runtime::program::ValueLayout;
use crate::runtime::shape::{grid_blocks, PARTITION_THREADS};

param_block! {
    /// The parameter block of `twophase_merge_window_cuts` (kernels/merge.cu).
    pub(crate) struct MergeWindowCutsParams as "merge_window_cuts_params" {
        keys: u64,
        count: u64,
        needles: u64,
        needle_count: u64,
        needles_first: u64,
        cuts: u64,
    }
}

param_block! {
    /// The parameter block of `twophase_merge_gather` (kernels/merge.cu).
    pub(crate) struct MergeGatherParams as "merge_gather_params" {
        keys: u64,
        first: u64,
        step: u64,
        count: u64,
        out: u64,
    }
}

impl Gpu {
    /// Kernel `entry` of the merge program of `comp` and `values` on this handle (built or
    /// fetched from the caches).
    fn merge_kernel<K, C>(
        &self,
        comp: &C,
        values: ValueLayout,
        entry: &str,
    ) -> Result<CudaFunction, GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
    {
        // The entry does not depend on the tile's shape: the smallest merges' program.
        let tuning = self.merge_tuning::<K>(values, 0);
        let kernels = self.program_kernels::<K, C, _>(comp, values, tuning)?;
        let [function] = kernels.functions([entry])?;
        Ok(function.clone())
    }

    /// `out[j] = keys[first + j * step]` for every `j` below `out.len()`: strided samples side
    /// by side, for one contiguous copy. Asynchronous on this handle's stream, in the merge
    /// program of `values`. The last sample must lie inside `keys` (checked here, else
    /// `InvalidInput`).
    pub(crate) fn merge_gather<K, C>(
        &self,
        keys: &CudaView<K>,
        (first, step): (usize, usize),
        out: &mut CudaViewMut<K>,
        comp: &C,
        values: ValueLayout,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
    {
        let count = out.len();
        if count == 0 {
            return Ok(());
        }
        let last = (count - 1)
            .checked_mul(step)
            .and_then(|span| span.checked_add(first));
        if last.is_none_or(|last| last >= keys.len()) {
            return Err(GpuError::InvalidInput(format!(
                "{count} samples {step} apart from {first} pass the {} keys",
                keys.len()
            )));
        }
        let gather = self.merge_kernel::<K, C>(comp, values, MERGE_ENTRY_GATHER)?;
        let stream = self.stream();
        let params = MergeGatherParams {
            keys: keys.device_ptr(stream).0,
            first: first as u64,
            step: step as u64,
            count: count as u64,
            out: out.device_ptr_mut(stream).0,
        };
        let blocks = grid_blocks(count.div_ceil(PARTITION_THREADS as usize))?;
        // SAFETY: the block is twophase_merge_gather's (kernels/merge.cu; the program asserts the
        // layouts equal); every key read, first + j * step for j < count, lies inside `keys`
        // (checked above), `out` holds `count` keys, both on this handle's context and ordered by
        // its stream; one thread a sample, the threads past the last returning at once.
        unsafe {
            self.launch(
                &gather,
                LaunchShape::new(blocks, PARTITION_THREADS),
                &params,
            )
        }
    }

    /// `cuts[j]` = how many of the sorted `keys` come before `needles[j]` in the stable merge
    /// of the two runs under `comp`, the needles' run first (`needles_first`: the keys strictly
    /// less) or second (the keys not greater). Asynchronous on this handle's stream, in the
    /// merge program of `values` (the one the windows' merges then run). Whatever `comp`
    /// answers, every cut lies in `[0, keys.len()]`; the caller makes them a staircase.
    pub(crate) fn merge_window_cuts<K, C>(
        &self,
        (keys, needles): (&CudaView<K>, &CudaView<K>),
        needles_first: bool,
        cuts: &mut CudaViewMut<u64>,
        comp: &C,
        values: ValueLayout,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
    {
        check_len("window cuts", needles.len(), cuts.len())?;
        if needles.is_empty() {
            return Ok(());
        }
        let window_cuts = self.merge_kernel::<K, C>(comp, values, MERGE_ENTRY_WINDOW_CUTS)?;
        let stream = self.stream();
        let params = MergeWindowCutsParams {
            keys: keys.device_ptr(stream).0,
            count: keys.len() as u64,
            needles: needles.device_ptr(stream).0,
            needle_count: needles.len() as u64,
            needles_first: u64::from(needles_first),
            cuts: cuts.device_ptr_mut(stream).0,
        };
        let blocks = grid_blocks(needles.len().div_ceil(PARTITION_THREADS as usize))?;
        // SAFETY: the block is twophase_merge_window_cuts' (kernels/merge.cu; the program asserts
        // the layouts equal); `keys` holds `count` keys and `needles` `needle_count`, and `cuts`
        // as many entries as needles (checked above), all on this handle's context and ordered
        // by its stream; one thread a needle, the threads past the last returning at once.
        unsafe {
            self.launch(
                &window_cuts,
                LaunchShape::new(blocks, PARTITION_THREADS),
                &params,
            )
        }
    }
}
