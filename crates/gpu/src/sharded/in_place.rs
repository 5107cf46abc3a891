//! The sort across GPUs in place: each shard sorted, sent, and replaced by its output shard, in about twice its bytes a device.

use std::mem::size_of;
use std::time::Instant;

use cudarc::driver::{CudaSlice, DeviceRepr};

use super::buffers::on_device;
use super::layout::receive_capacity;
use super::{GpuGroup, Merge, KEYS, VALUES};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};

impl GpuGroup<'_> {
    /// Stable sort of the keys of all `shards` under `comp`, each shard replaced by its output
    /// shard: shard `i` (on handle `i`) must hold exactly
    /// [`output_len(i, n)`](Self::output_len) keys (`SizeMismatch` naming `shards` otherwise;
    /// [`upload`](Self::upload) of equal parts makes them), and ends holding ranks
    /// `[floor(i n / p), floor((i + 1) n / p))` of the stable order of their concatenation, as
    /// [`sort_device_into`](Self::sort_device_into) writes them.
    ///
    /// A device holds its shard and one buffer of about its size: the mergesort's second buffer
    /// receives the exchanged pieces, and the merge levels alternate between it and the shard.
    /// [`sort_device_into`](Self::sort_device_into) holds four (shard, output, the sort's
    /// buffer and the received pieces'), so in place the group sorts about twice as many keys,
    /// `p` times what one GPU's sort holds.
    ///
    /// On a comparator that answers inconsistently the call returns `InvalidInput` naming it,
    /// and the shards hold a permutation of their keys together.
    pub fn sort_device_in_place<K, C>(
        &self,
        shards: &mut [CudaSlice<K>],
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        self.check_outputs("shards", shards, shards.iter().map(CudaSlice::len).sum())?;
        self.grow_lent_buffers(shards, None::<&[CudaSlice<u8>]>)?;
        let sorted = self.sort_key_shards(shards, comp)?;
        self.with_lent_buffers(|group| {
            let start = Instant::now();
            let (received, exchanged) = group.cut_and_exchange::<K, u8, C>(shards, None, comp)?;
            let merge = Merge {
                received: &received,
                in_place: true,
            };
            group.merge_received::<K, u8, C>(shards, None, merge, comp)?;
            group.record_phases(sorted, start, exchanged);
            Ok(())
        })
    }

    /// [`sort_device_in_place`](Self::sort_device_in_place) of key-value pairs: shard `i` is
    /// `keys[i]` with `values[i]` (as many), each value moving with its key; equal keys keep
    /// shard, then position, order.
    pub fn sort_pairs_device_in_place<K, V, C>(
        &self,
        keys: &mut [CudaSlice<K>],
        values: &mut [CudaSlice<V>],
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let total = keys.iter().map(CudaSlice::len).sum();
        self.check_outputs("keys", keys, total)?;
        self.check_values(keys, values)?;
        self.grow_lent_buffers(keys, Some(&*values))?;
        let sorted = self.sort_pair_shards(keys, values, comp)?;
        self.with_lent_buffers(|group| {
            let start = Instant::now();
            let (received, exchanged) = group.cut_and_exchange(keys, Some(&*values), comp)?;
            let merge = Merge {
                received: &received,
                in_place: true,
            };
            group.merge_received(keys, Some(values), merge, comp)?;
            group.record_phases(sorted, start, exchanged);
            Ok(())
        })
    }

    /// Each device's mergesort buffers grown, before the sort of the shards, to hold what the
    /// exchange will receive into them ([`receive_capacity`]): the sort then takes them as they
    /// are, and the exchange needs no buffer of its own.
    fn grow_lent_buffers<K: DeviceRepr, V: DeviceRepr>(
        &self,
        keys: &[CudaSlice<K>],
        values: Option<&[CudaSlice<V>]>,
    ) -> Result<(), GpuError> {
        let p = self.gpus.len();
        let mut scratch = self.scratch.borrow_mut();
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            let (lent_keys, lent_values) = device.sort.buffers_mut();
            let len = keys[i].len();
            let key_bytes = size_of::<K>() * receive_capacity(len, p, size_of::<K>());
            on_device(gpu, gpu.grow_scratch(lent_keys, key_bytes).map(|_| ()))?;
            if values.is_some() {
                let value_bytes = size_of::<V>() * receive_capacity(len, p, size_of::<V>());
                on_device(gpu, gpu.grow_scratch(lent_values, value_bytes).map(|_| ()))?;
            }
        }
        Ok(())
    }

    /// `steps` with each device's first tree buffers (keys, values) swapped with its
    /// mergesort's second buffers, which the sort of the shards has just grown to a shard's
    /// size, and swapped back after whatever `steps` returned.
    fn with_lent_buffers(
        &self,
        steps: impl FnOnce(&Self) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let swap = |group: &Self| {
            for device in group.scratch.borrow_mut().iter_mut() {
                let (keys, values) = device.sort.buffers_mut();
                let [tree_keys, tree_values] = &mut device.trees[0];
                std::mem::swap(tree_keys, keys);
                std::mem::swap(tree_values, values);
            }
        };
        // KEYS and VALUES name the columns swapped above, in that order.
        const _: () = assert!(KEYS == 0 && VALUES == 1);
        swap(self);
        let result = steps(self);
        swap(self);
        result
    }
}
