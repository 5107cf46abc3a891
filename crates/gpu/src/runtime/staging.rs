//! Host-slice calls: the handle's staging buffers, uploaded before a launch and downloaded after.

use cudarc::driver::{CudaSlice, DevicePtrMut};

use super::device::Gpu;
use super::fault::lock_recover;
use super::program::ValueLayout;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};

impl Gpu {
    /// The first `sizes.len()` staging buffers, each grown to at least its size in bytes.
    fn staging_buffers<'s>(
        &self,
        staging: &'s mut Vec<CudaSlice<u8>>,
        sizes: &[usize],
    ) -> Result<&'s mut [CudaSlice<u8>], GpuError> {
        for (slot, &bytes) in sizes.iter().enumerate() {
            let fits = staging.get(slot).is_some_and(|buf| buf.len() >= bytes);
            if fits {
                continue;
            }
            // SAFETY: staging buffers are written (host-to-device copy or kernel output) before
            // they are read.
            let allocated = unsafe { self.stream().alloc::<u8>(bytes.max(1)) };
            let buf = self.observe(allocated.map_err(GpuError::from), || {
                self.after_last_launch("allocating staging buffers")
            })?;
            if slot < staging.len() {
                staging[slot] = buf;
            } else {
                staging.push(buf);
            }
        }
        Ok(&mut staging[..sizes.len()])
    }

    /// One host-slice call through the handle's staging buffers: uploads each buffer's host bytes,
    /// runs `launch` with the device addresses of all N buffers (in order), downloads the
    /// buffers that have a host destination, and waits for the stream. The buffers are reused
    /// across calls (they only grow), so a loop of host calls allocates nothing.
    pub(crate) fn through_staging<const N: usize>(
        &self,
        buffers: &mut [Staged<'_>; N],
        launch: impl FnOnce([u64; N]) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        self.ensure_alive()?;
        let mut staging = lock_recover(&self.staging);
        let sizes = buffers.each_ref().map(Staged::bytes);
        let bufs = self.staging_buffers(&mut staging, &sizes)?;
        let stream = self.stream.clone();
        for (buffer, device) in buffers.iter().zip(bufs.iter_mut()) {
            let host: &[u8] = match buffer {
                Staged::Upload(host) => host,
                Staged::InPlace(host) => host,
                Staged::Download(_) => continue,
            };
            let copied = stream.memcpy_htod(host, &mut device.slice_mut(..host.len()));
            self.observe(copied.map_err(GpuError::from), || {
                self.after_last_launch("copying the input to the device")
            })?;
        }
        let mut addresses = [0u64; N];
        for (address, device) in addresses.iter_mut().zip(bufs.iter_mut()) {
            *address = device.device_ptr_mut(&stream).0;
        }
        self.observe(launch(addresses), || {
            self.after_last_launch("a host-slice call")
        })?;
        for (buffer, device) in buffers.iter_mut().zip(bufs.iter()) {
            if let Staged::Download(host) | Staged::InPlace(host) = buffer {
                let bytes = host.len();
                let copied = stream.memcpy_dtoh(&device.slice(..bytes), &mut **host);
                self.observe(copied.map_err(GpuError::from), || {
                    self.after_last_launch("copying the result to the host")
                })?;
            }
        }
        self.observe(stream.synchronize().map_err(GpuError::from), || {
            self.after_last_launch("synchronizing a host-slice call")
        })
    }
}

/// Raw device addresses of one in-place sort: `count` keys at `keys`, and values at `values`
/// when `layout` is `Some` (0 otherwise).
pub(crate) struct SortAddresses {
    pub(crate) keys: u64,
    pub(crate) values: u64,
    pub(crate) count: usize,
    pub(crate) layout: ValueLayout,
}

impl Gpu {
    /// One in-place host-slice sort (of any sort variant) through the staging buffers: uploads
    /// the keys (and values), runs `launch` with their device addresses and the sort's `scratch`,
    /// downloads them. Fewer than two keys: nothing to do.
    pub(crate) fn sort_host<K: DeviceKey, V: DeviceValue, S>(
        &self,
        keys: &mut [K],
        values: Option<&mut [V]>,
        scratch: &mut S,
        launch: impl FnOnce(SortAddresses, &mut S) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let count = keys.len();
        if count <= 1 {
            return Ok(());
        }
        let layout = values
            .is_some()
            .then_some((std::mem::size_of::<V>(), std::mem::align_of::<V>()));
        let mut staged = [
            Staged::InPlace(bytemuck::cast_slice_mut(keys)),
            match values {
                Some(values) => Staged::InPlace(bytemuck::cast_slice_mut(values)),
                None => Staged::Upload(&[]),
            },
        ];
        self.through_staging(&mut staged, |[keys, values]| {
            let values = if layout.is_some() { values } else { 0 };
            let buffers = SortAddresses {
                keys,
                values,
                count,
                layout,
            };
            launch(buffers, scratch)
        })
    }
}

/// One staging buffer of a host-slice call and what happens to its host bytes.
pub(crate) enum Staged<'a> {
    /// An input: uploaded before the launch.
    Upload(&'a [u8]),
    /// An output: downloaded after the launch.
    Download(&'a mut [u8]),
    /// Both, for an in-place call: uploaded before and downloaded after the launch.
    InPlace(&'a mut [u8]),
}

impl Staged<'_> {
    fn bytes(&self) -> usize {
        match self {
            Staged::Upload(host) => host.len(),
            Staged::Download(host) | Staged::InPlace(host) => host.len(),
        }
    }
}
