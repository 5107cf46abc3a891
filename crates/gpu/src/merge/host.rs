//! The merge on host slices: staged through the device with the handle's pooled scratch, checked before the result is returned.

use super::buffers::{KeysOnly, MergeArgs, Sealed};
use super::{MergeScratch, MERGE_PAIRS_STATUS, MERGE_STATUS};
use crate::compare::DeviceComparator;
use crate::error::check_len;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::runtime::program::ValueLayout;
use crate::runtime::staging::Staged;
use crate::runtime::status::StatusNames;

/// The host slices of one merge: the sorted inputs `a` and `b`, with their values
/// ([`SliceValues`]) or [`KeysOnly`]. Built by [`keys`](MergeSlices::keys) or
/// [`pairs`](MergeSlices::pairs) and passed to the host-slice merge calls that take every form
/// ([`Gpu::merge_variant`]).
#[derive(Debug)]
pub struct MergeSlices<'a, K, V = KeysOnly> {
    a: &'a [K],
    b: &'a [K],
    values: V,
}

/// The value slices of a key-value host merge: A's and B's.
#[derive(Debug)]
pub struct SliceValues<'a, V> {
    a: &'a [V],
    b: &'a [V],
}

impl<'a, K> MergeSlices<'a, K> {
    /// Merge the keys `a` and `b`; the call returns the merged keys.
    pub fn keys(a: &'a [K], b: &'a [K]) -> Self {
        MergeSlices {
            a,
            b,
            values: KeysOnly,
        }
    }
}

impl<'a, K, V> MergeSlices<'a, K, SliceValues<'a, V>> {
    /// Merge the key-value sequences (`a_keys`, `a_vals`) and (`b_keys`, `b_vals`), each value
    /// moving with its key; the call returns the merged keys and values.
    pub fn pairs(a_keys: &'a [K], a_vals: &'a [V], b_keys: &'a [K], b_vals: &'a [V]) -> Self {
        MergeSlices {
            a: a_keys,
            b: b_keys,
            values: SliceValues {
                a: a_vals,
                b: b_vals,
            },
        }
    }
}

impl<K, V> Sealed for MergeSlices<'_, K, V> {}

/// The host slices of a merge of keys `K`: [`MergeSlices`] of keys alone or of pairs.
pub trait HostMergeSlices<K: DeviceKey>: Sealed {
    /// What the merge returns: the merged keys, or the merged keys and values.
    type Output;

    /// The layout of the values moved with the keys (`None` for keys alone).
    const VALUES: ValueLayout;

    /// Merge through the handle's staging buffers and pooled merge scratch: check the lengths,
    /// run `launch` with the device addresses and the scratch, check the scratch's status and
    /// return the output.
    fn merge_on(
        self,
        gpu: &Gpu,
        launch: impl FnOnce(MergeArgs, &mut MergeScratch) -> Result<(), GpuError>,
    ) -> Result<Self::Output, GpuError>;
}

impl<K: DeviceKey> HostMergeSlices<K> for MergeSlices<'_, K> {
    type Output = Vec<K>;

    const VALUES: ValueLayout = None;

    fn merge_on(
        self,
        gpu: &Gpu,
        launch: impl FnOnce(MergeArgs, &mut MergeScratch) -> Result<(), GpuError>,
    ) -> Result<Vec<K>, GpuError> {
        let (a, b) = (self.a, self.b);
        let mut out = bytemuck::zeroed_vec::<K>(a.len() + b.len());
        if out.is_empty() {
            return Ok(out);
        }
        let buffers = [
            Staged::Upload(bytemuck::cast_slice(a)),
            Staged::Upload(bytemuck::cast_slice(b)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out)),
        ];
        let args = |[a_ptr, b_ptr, out_ptr]: [u64; 3]| {
            MergeArgs::new((a_ptr, a.len()), (b_ptr, b.len()), out_ptr, (0, 0, 0))
        };
        gpu.merge_staged(buffers, MERGE_STATUS, args, launch)?;
        Ok(out)
    }
}

impl<K: DeviceKey, V: DeviceValue> HostMergeSlices<K> for MergeSlices<'_, K, SliceValues<'_, V>> {
    type Output = (Vec<K>, Vec<V>);

    const VALUES: ValueLayout = value_layout::<V>();

    fn merge_on(
        self,
        gpu: &Gpu,
        launch: impl FnOnce(MergeArgs, &mut MergeScratch) -> Result<(), GpuError>,
    ) -> Result<(Vec<K>, Vec<V>), GpuError> {
        let (a_keys, b_keys, values) = (self.a, self.b, self.values);
        check_len("A values", a_keys.len(), values.a.len())?;
        check_len("B values", b_keys.len(), values.b.len())?;
        let total = a_keys.len() + b_keys.len();
        let mut out_keys = bytemuck::zeroed_vec::<K>(total);
        let mut out_vals = bytemuck::zeroed_vec::<V>(total);
        if total == 0 {
            return Ok((out_keys, out_vals));
        }
        let buffers = [
            Staged::Upload(bytemuck::cast_slice(a_keys)),
            Staged::Upload(bytemuck::cast_slice(b_keys)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out_keys)),
            Staged::Upload(bytemuck::cast_slice(values.a)),
            Staged::Upload(bytemuck::cast_slice(values.b)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out_vals)),
        ];
        let args = |[a, b, out, av, bv, ov]: [u64; 6]| {
            MergeArgs::new((a, a_keys.len()), (b, b_keys.len()), out, (av, bv, ov))
        };
        gpu.merge_staged(buffers, MERGE_PAIRS_STATUS, args, launch)?;
        Ok((out_keys, out_vals))
    }
}

impl Gpu {
    /// Host convenience: merge two sorted host slices on the GPU and return the result. Device
    /// buffers and scratch are kept in the handle and reused across calls.
    pub fn merge<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        a: &[K],
        b: &[K],
        comp: &C,
    ) -> Result<Vec<K>, GpuError> {
        self.merge_slices(MergeSlices::keys(a, b), comp)
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
        self.merge_slices(MergeSlices::pairs(a_keys, a_vals, b_keys, b_vals), comp)
    }

    /// The two-phase merge of host slices at the shipped tuning.
    fn merge_slices<K, C, S>(&self, slices: S, comp: &C) -> Result<S::Output, GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: HostMergeSlices<K>,
    {
        slices.merge_on(self, |args, scratch| {
            let tuning = self.merge_tuning::<K>(S::VALUES, args.a_count + args.b_count);
            self.launch_merge::<K, C>(args, comp, S::VALUES, tuning, scratch)
        })
    }

    /// One host-slice merge through the staging `buffers` and the pooled merge scratch: `launch`
    /// gets the merge's addresses (`args` of the buffers' device addresses) and the scratch,
    /// whose status is then checked under `status`.
    fn merge_staged<const N: usize>(
        &self,
        mut buffers: [Staged<'_>; N],
        status: StatusNames,
        args: impl FnOnce([u64; N]) -> MergeArgs,
        launch: impl FnOnce(MergeArgs, &mut MergeScratch) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let mut scratch = self.pooled_scratch::<MergeScratch>();
        let launched = self.through_staging(&mut buffers, |addresses| {
            launch(args(addresses), &mut scratch)
        });
        launched.and_then(|()| scratch.phases.input_check.check(self, status))
    }
}
