//! The merge on host slices: staged through the device with the handle's pooled scratch, checked before the result is returned.

use super::buffers::{check_lengths, MergeArgs};
use super::tuning::MergeTuning;
use super::{MergeScratch, MERGE_PAIRS_STATUS, MERGE_STATUS};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::primitive::value_layout;
use crate::primitive::ProgramTuning;
use crate::runtime::device::Gpu;
use crate::runtime::staging::Staged;

impl Gpu {
    /// Host convenience: merge two sorted host slices on the GPU and return the result. Device
    /// buffers and scratch are kept in the handle and reused across calls.
    pub fn merge<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        a: &[K],
        b: &[K],
        comp: &C,
    ) -> Result<Vec<K>, GpuError> {
        self.merge_host(a, b, |args, scratch| {
            let tuning = MergeTuning::for_layout::<K>(None);
            self.launch_merge::<K, C>(args, comp, None, tuning, scratch)
        })
    }

    /// One host-slice keys merge through the handle's staging buffers and merge scratch:
    /// `launch` gets the device addresses and the scratch.
    pub(crate) fn merge_host<K: DeviceKey>(
        &self,
        a: &[K],
        b: &[K],
        launch: impl FnOnce(MergeArgs, &mut MergeScratch) -> Result<(), GpuError>,
    ) -> Result<Vec<K>, GpuError> {
        let total = a.len() + b.len();
        let mut out = bytemuck::zeroed_vec::<K>(total);
        if total == 0 {
            return Ok(out);
        }
        let mut scratch = self.pooled_scratch::<MergeScratch>();
        let mut buffers = [
            Staged::Upload(bytemuck::cast_slice(a)),
            Staged::Upload(bytemuck::cast_slice(b)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out)),
        ];
        let launched = self.through_staging(&mut buffers, |[a_ptr, b_ptr, out]| {
            let args = MergeArgs::new((a_ptr, a.len()), (b_ptr, b.len()), out, (0, 0, 0));
            launch(args, &mut scratch)
        });
        launched.and_then(|()| scratch.input_check.check(self, MERGE_STATUS))?;
        Ok(out)
    }

    /// Host convenience: merge two sorted key-value host sequences on the GPU (stable).
    pub fn merge_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        a_keys: &[K],
        a_vals: &[V],
        b_keys: &[K],
        b_vals: &[V],
        comp: &C,
    ) -> Result<(Vec<K>, Vec<V>), GpuError> {
        self.merge_pairs_host(a_keys, a_vals, b_keys, b_vals, |args, scratch| {
            let layout = value_layout::<V>();
            let tuning = MergeTuning::for_layout::<K>(layout);
            self.launch_merge::<K, C>(args, comp, layout, tuning, scratch)
        })
    }

    /// One host-slice key-value merge through the handle's staging buffers and merge scratch.
    pub(crate) fn merge_pairs_host<K: DeviceKey, V: DeviceValue>(
        &self,
        a_keys: &[K],
        a_vals: &[V],
        b_keys: &[K],
        b_vals: &[V],
        launch: impl FnOnce(MergeArgs, &mut MergeScratch) -> Result<(), GpuError>,
    ) -> Result<(Vec<K>, Vec<V>), GpuError> {
        let total = a_keys.len() + b_keys.len();
        check_lengths(&[
            ("A values", a_keys.len(), a_vals.len()),
            ("B values", b_keys.len(), b_vals.len()),
        ])?;
        let mut out_keys = bytemuck::zeroed_vec::<K>(total);
        let mut out_vals = bytemuck::zeroed_vec::<V>(total);
        if total == 0 {
            return Ok((out_keys, out_vals));
        }
        let mut scratch = self.pooled_scratch::<MergeScratch>();
        let mut buffers = [
            Staged::Upload(bytemuck::cast_slice(a_keys)),
            Staged::Upload(bytemuck::cast_slice(b_keys)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out_keys)),
            Staged::Upload(bytemuck::cast_slice(a_vals)),
            Staged::Upload(bytemuck::cast_slice(b_vals)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out_vals)),
        ];
        let launched = self.through_staging(&mut buffers, |[a, b, out, av, bv, ov]| {
            let args = MergeArgs::new((a, a_keys.len()), (b, b_keys.len()), out, (av, bv, ov));
            launch(args, &mut scratch)
        });
        launched.and_then(|()| scratch.input_check.check(self, MERGE_PAIRS_STATUS))?;
        Ok((out_keys, out_vals))
    }
}
