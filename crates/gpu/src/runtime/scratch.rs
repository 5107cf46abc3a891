//! Device scratch: buffers that only grow, and the handle's pool of the host-slice calls' scratch.

use std::any::{Any, TypeId};
use std::ops::{Deref, DerefMut};

use cudarc::driver::{CudaSlice, DevicePtrMut};

use super::device::Gpu;
use super::fault::lock_recover;
use crate::error::GpuError;

impl Gpu {
    /// Grow the device scratch buffer in `slot` to at least `len` elements (a buffer only grows,
    /// so repeated calls of the same or smaller size allocate nothing) and return it.
    pub(crate) fn grow_scratch<'s, T: cudarc::driver::DeviceRepr>(
        &self,
        slot: &'s mut Option<CudaSlice<T>>,
        len: usize,
    ) -> Result<&'s mut CudaSlice<T>, GpuError> {
        self.ensure_alive()?;
        if slot.as_ref().is_none_or(|buf| buf.len() < len) {
            *slot = None;
            // SAFETY: scratch is never read before a kernel of the same call has written the
            // part it reads (same stream, launched first); its old contents are never used.
            let allocated = unsafe { self.stream.alloc::<T>(len.max(1)) };
            *slot = Some(self.observe(allocated.map_err(GpuError::from), || {
                self.after_last_launch("allocating scratch")
            })?);
        }
        slot.as_mut().ok_or(GpuError::Poisoned("scratch"))
    }

    /// [`grow_scratch`](Self::grow_scratch), as the buffer's raw device address on this handle's
    /// stream: for launches that hold the scratch borrowed for the whole call, whose one stream
    /// orders every use (no per-buffer events to keep).
    pub(crate) fn grow_scratch_address<T: cudarc::driver::DeviceRepr>(
        &self,
        slot: &mut Option<CudaSlice<T>>,
        len: usize,
    ) -> Result<u64, GpuError> {
        let stream = self.stream.clone();
        let (address, _guard) = self.grow_scratch(slot, len)?.device_ptr_mut(&stream);
        Ok(address)
    }

    /// The arrival word of the checked partition kernels in `slot` (allocated zeroed on first
    /// use; each launch that counts its blocks there leaves it 0 again, kernels/partition.cuh
    /// check_pairs_across_blocks), as its raw device address on this handle's stream.
    pub(crate) fn arrivals_address(
        &self,
        slot: &mut Option<CudaSlice<u32>>,
    ) -> Result<u64, GpuError> {
        self.ensure_alive()?;
        let stream = self.stream.clone();
        if slot.is_none() {
            *slot = Some(stream.alloc_zeros::<u32>(1)?);
        }
        let (address, _guard) = slot
            .as_mut()
            .ok_or(GpuError::Poisoned("partition arrivals"))?
            .device_ptr_mut(&stream);
        Ok(address)
    }
}

/// A handle's pooled scratch of one type, taken out of the pool for one host-slice call and put
/// back when dropped ([`Gpu::pooled_scratch`]).
pub(crate) struct PooledScratch<'g, S: Default + Send + 'static> {
    gpu: &'g Gpu,
    scratch: Box<S>,
}

impl<S: Default + Send + 'static> Deref for PooledScratch<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.scratch
    }
}

impl<S: Default + Send + 'static> DerefMut for PooledScratch<'_, S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.scratch
    }
}

impl<S: Default + Send + 'static> Drop for PooledScratch<'_, S> {
    fn drop(&mut self) {
        let scratch: Box<S> = std::mem::take(&mut self.scratch);
        lock_recover(&self.gpu.scratch_pool)
            .insert(TypeId::of::<S>(), scratch as Box<dyn Any + Send>);
    }
}

impl Gpu {
    /// This handle's pooled scratch of type `S` (made by `Default` on first use), for host-slice
    /// calls, which own no scratch of their own. It is taken out of the pool until the guard
    /// drops, so the pool's lock is not held while the call runs: two threads calling at once
    /// each get one (the one put back last stays). The runtime never names the type.
    pub(crate) fn pooled_scratch<S: Default + Send + 'static>(&self) -> PooledScratch<'_, S> {
        let pooled = lock_recover(&self.scratch_pool).remove(&TypeId::of::<S>());
        let scratch = pooled
            .and_then(|held| held.downcast::<S>().ok())
            .unwrap_or_default();
        PooledScratch { gpu: self, scratch }
    }
}
