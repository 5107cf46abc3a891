//! The buffers of one in-place device sort (keys alone or key-value pairs): their length check and raw addresses, shared by the mergesort and Batcher's sort.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtrMut};

use crate::error::check_len;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::buffers::{KeysOnly, Sealed};
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::runtime::program::ValueLayout;
use crate::runtime::staging::SortAddresses;

/// The value buffer of a key-value sort of values `V`.
#[derive(Debug)]
pub struct SortValues<'a, V, S> {
    value: PhantomData<V>,
    values: &'a mut S,
}

/// The device buffers of one in-place sort: the keys, with the values that move with them
/// ([`SortValues`]) or [`KeysOnly`]. Built by [`keys`](SortBuffers::keys) or
/// [`pairs`](SortBuffers::pairs) and passed to [`Gpu::sort_device`] or
/// [`Gpu::sort_variant_device`].
#[derive(Debug)]
pub struct SortBuffers<'a, S, V = KeysOnly> {
    keys: &'a mut S,
    values: V,
}

impl<'a, S> SortBuffers<'a, S> {
    /// Sort the keys `keys` in place.
    pub fn keys(keys: &'a mut S) -> Self {
        SortBuffers {
            keys,
            values: KeysOnly,
        }
    }
}

impl<'a, S, V, SV> SortBuffers<'a, S, SortValues<'a, V, SV>> {
    /// Sort the pairs (`keys`, `values`) by key in place: each value moves with its key.
    pub fn pairs(keys: &'a mut S, values: &'a mut SV) -> Self {
        SortBuffers {
            keys,
            values: SortValues {
                value: PhantomData,
                values,
            },
        }
    }
}

impl<S, V> Sealed for SortBuffers<'_, S, V> {}
impl<V, SV> Sealed for SortValues<'_, V, SV> {}

/// Raw device addresses of one in-place sort, valid for the launches the call makes with them.
pub struct SortArgs(pub(crate) SortAddresses);

/// The device buffers of an in-place sort of keys `K`: [`SortBuffers`] of keys alone or of pairs.
pub trait DeviceSortBuffers<K: DeviceKey>: Sealed {
    /// The layout of the values moved with the keys (`None` for keys alone).
    const VALUES: ValueLayout;

    /// The number of keys.
    fn count(&self) -> usize;

    /// Check that the values (if any) are as many as the keys ([`GpuError::SizeMismatch`]
    /// naming `what`), then run `launch` with the buffers' addresses on `gpu`'s stream, holding
    /// their guards across it.
    fn with_args(
        self,
        gpu: &Gpu,
        what: &'static str,
        launch: impl FnOnce(SortArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError>;
}

/// The values part of [`SortBuffers`]: [`KeysOnly`] or [`SortValues`].
pub trait SortValueBuffers: Sealed {
    /// The layout of the values (`None` for keys alone).
    const VALUES: ValueLayout;

    /// Check that the values are as many as the `count` keys ([`GpuError::SizeMismatch`]
    /// naming `what`).
    fn check(&self, what: &'static str, count: usize) -> Result<(), GpuError>;

    /// Run `launch` with the values' address (0 for keys alone) on `stream`, holding its guard
    /// across it.
    fn with_address(
        self,
        stream: &Arc<CudaStream>,
        launch: impl FnOnce(u64) -> Result<(), GpuError>,
    ) -> Result<(), GpuError>;
}

impl<K, S, V> DeviceSortBuffers<K> for SortBuffers<'_, S, V>
where
    K: DeviceKey,
    S: DevicePtrMut<K>,
    V: SortValueBuffers,
{
    const VALUES: ValueLayout = V::VALUES;

    fn count(&self) -> usize {
        self.keys.len()
    }

    fn with_args(
        self,
        gpu: &Gpu,
        what: &'static str,
        launch: impl FnOnce(SortArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let count = self.keys.len();
        self.values.check(what, count)?;
        let stream = gpu.stream().clone();
        let (keys, _keys) = self.keys.device_ptr_mut(&stream);
        self.values.with_address(&stream, |values| {
            launch(SortArgs(SortAddresses {
                keys,
                values,
                count,
                layout: V::VALUES,
            }))
        })
    }
}

impl SortValueBuffers for KeysOnly {
    const VALUES: ValueLayout = None;

    fn check(&self, _what: &'static str, _count: usize) -> Result<(), GpuError> {
        Ok(())
    }

    fn with_address(
        self,
        _stream: &Arc<CudaStream>,
        launch: impl FnOnce(u64) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        launch(0)
    }
}

impl<V: DeviceValue, SV: DevicePtrMut<V>> SortValueBuffers for SortValues<'_, V, SV> {
    const VALUES: ValueLayout = value_layout::<V>();

    fn check(&self, what: &'static str, count: usize) -> Result<(), GpuError> {
        check_len(what, count, self.values.len())
    }

    fn with_address(
        self,
        stream: &Arc<CudaStream>,
        launch: impl FnOnce(u64) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let (values, _values) = self.values.device_ptr_mut(stream);
        launch(values)
    }
}
