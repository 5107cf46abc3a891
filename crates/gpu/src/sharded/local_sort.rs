//! Step 1 of the sort across GPUs: every shard sorted on its own device by the mergesort, all devices launched before any is waited for.

use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, DeviceRepr};

use super::GpuGroup;
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::mergesort::{MergesortScratch, SortBuffers};
use crate::runtime::device::Gpu;

impl GpuGroup<'_> {
    /// Step 1 on key shards: each sorted in place on its device under `comp`; returns the
    /// step's time.
    pub(super) fn sort_key_shards<K, C>(
        &self,
        shards: &mut [CudaSlice<K>],
        comp: &C,
    ) -> Result<Duration, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let start = Instant::now();
        self.sort_shards(|i, gpu, scratch| {
            gpu.sort_device(SortBuffers::keys(&mut shards[i]), comp, None, scratch)
        })?;
        Ok(start.elapsed())
    }

    /// Step 1 on pair shards: each shard's keys sorted with their values on its device;
    /// returns the step's time.
    pub(super) fn sort_pair_shards<K, V, C>(
        &self,
        keys: &mut [CudaSlice<K>],
        values: &mut [CudaSlice<V>],
        comp: &C,
    ) -> Result<Duration, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let start = Instant::now();
        self.sort_shards(|i, gpu, scratch| {
            let buffers = SortBuffers::pairs(&mut keys[i], &mut values[i]);
            gpu.sort_device(buffers, comp, None, scratch)
        })?;
        Ok(start.elapsed())
    }

    /// Step 1: `sort(i, gpu, scratch)` launched on every device (asynchronous, so the devices
    /// sort together), then every sort's order check (which synchronizes).
    pub(super) fn sort_shards(
        &self,
        mut sort: impl FnMut(usize, &Gpu, &mut MergesortScratch) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let mut scratch = self.scratch.borrow_mut();
        self.each(|i, gpu| sort(i, gpu, &mut scratch[i].sort))?;
        let inconsistent = self.order_checks(|i, gpu| scratch[i].sort.check(gpu))?;
        inconsistent.map_or(Ok(()), Err)
    }
}
