//! The group's host-slice side: equal shards uploaded, output shards gathered, and the host convenience sort.

use cudarc::driver::{CudaSlice, DeviceRepr};
use twophase_partition::shard_boundary;

use super::buffers::{on_device, uninit_buffer};
use super::GpuGroup;
use crate::compare::DeviceComparator;
use crate::error::{check_len, GpuError};
use crate::key::DeviceKey;

impl GpuGroup<'_> {
    /// Host convenience: sort `keys` stably under `comp` across the group, the keys split into
    /// equal shards (shard `i` uploaded to handle `i`), sorted in place, and gathered back in order.
    pub fn sort<K, C>(&self, keys: &mut [K], comp: &C) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let (p, n) = (self.gpus.len(), keys.len());
        let parts: Vec<&[K]> = (0..p)
            .map(|i| &keys[shard_boundary(i, p, n)..shard_boundary(i + 1, p, n)])
            .collect();
        let mut shards = self.upload(&parts)?;
        self.sort_device_in_place(&mut shards, comp)?;
        self.download(&shards, keys)
    }

    /// `parts[i]` copied into a new buffer on handle `i` (empty parts included), every copy
    /// complete on return.
    pub fn upload<T: DeviceRepr>(&self, parts: &[&[T]]) -> Result<Vec<CudaSlice<T>>, GpuError> {
        if parts.len() != self.gpus.len() {
            return Err(GpuError::InvalidInput(format!(
                "`parts` holds {} slices for {} GPUs",
                parts.len(),
                self.gpus.len()
            )));
        }
        let mut buffers = Vec::with_capacity(parts.len());
        for (gpu, part) in self.gpus.iter().zip(parts) {
            let mut buffer = on_device(gpu, uninit_buffer(gpu, part.len()))?;
            if !part.is_empty() {
                on_device(
                    gpu,
                    gpu.stream()
                        .memcpy_htod(*part, &mut buffer)
                        .map_err(GpuError::from),
                )?;
            }
            buffers.push(buffer);
        }
        self.each(|_, _| Ok(()))?;
        Ok(buffers)
    }

    /// The `shards` (shard `i` on handle `i`) copied back to back into `host`, which holds
    /// exactly their total length (`SizeMismatch` otherwise).
    pub fn download<T: DeviceRepr>(
        &self,
        shards: &[CudaSlice<T>],
        host: &mut [T],
    ) -> Result<(), GpuError> {
        self.check_placement("shards", shards)?;
        check_len("host", shards.iter().map(CudaSlice::len).sum(), host.len())?;
        let mut at = 0;
        for (shard, gpu) in shards.iter().zip(&self.gpus) {
            let part = &mut host[at..at + shard.len()];
            if !part.is_empty() {
                on_device(
                    gpu,
                    gpu.stream()
                        .memcpy_dtoh(shard, part)
                        .map_err(GpuError::from),
                )?;
            }
            at += shard.len();
        }
        self.each(|_, _| Ok(()))
    }
}
