//! The buffers of one device-buffer merge (keys alone or key-value pairs): their length checks and raw addresses, shared by every merge variant.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};

use crate::error::{check_len, GpuError};
use crate::key::{DeviceKey, DeviceValue};
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::runtime::program::ValueLayout;

/// No values: the buffers of a keys-only merge or sort.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeysOnly;

/// Raw device addresses of one merge call (of any merge variant), valid for the launches the
/// call makes with them.
pub struct MergeArgs {
    pub(crate) a: u64,
    pub(crate) a_count: usize,
    pub(crate) b: u64,
    pub(crate) b_count: usize,
    pub(crate) out: u64,
    /// (a_vals, b_vals, out_vals), or zeros for keys only.
    pub(crate) values: (u64, u64, u64),
}

impl MergeArgs {
    /// The addresses of a merge of `a_count` keys at `a` and `b_count` at `b` into `out`, with
    /// `values` (A's, B's and the output's, zeros for keys only).
    pub(crate) fn new(
        (a, a_count): (u64, usize),
        (b, b_count): (u64, usize),
        out: u64,
        values: (u64, u64, u64),
    ) -> Self {
        MergeArgs {
            a,
            a_count,
            b,
            b_count,
            out,
            values,
        }
    }
}

/// The value buffers of a key-value merge of values `V`: A's, B's and the output's.
#[derive(Debug)]
pub struct MergeValues<'a, V, AV, BV, OV> {
    value: PhantomData<V>,
    a: &'a AV,
    b: &'a BV,
    out: &'a mut OV,
}

/// The device buffers of one merge: the sorted inputs `a` and `b` and the output, with the
/// values moved with the keys ([`MergeValues`]) or [`KeysOnly`]. Built by
/// [`keys`](MergeBuffers::keys) or [`pairs`](MergeBuffers::pairs) and passed to
/// [`Gpu::merge_device`].
#[derive(Debug)]
pub struct MergeBuffers<'a, A, B, O, V = KeysOnly> {
    a: &'a A,
    b: &'a B,
    out: &'a mut O,
    values: V,
}

impl<'a, A, B, O> MergeBuffers<'a, A, B, O> {
    /// Merge the keys `a` and `b` into `out` (length `a.len() + b.len()`).
    pub fn keys(a: &'a A, b: &'a B, out: &'a mut O) -> Self {
        MergeBuffers {
            a,
            b,
            out,
            values: KeysOnly,
        }
    }
}

impl<'a, A, B, O, V, AV, BV, OV> MergeBuffers<'a, A, B, O, MergeValues<'a, V, AV, BV, OV>> {
    /// Merge the key-value sequences (`a_keys`, `a_vals`) and (`b_keys`, `b_vals`) into
    /// (`out_keys`, `out_vals`): each value moves with its key.
    pub fn pairs(
        a_keys: &'a A,
        a_vals: &'a AV,
        b_keys: &'a B,
        b_vals: &'a BV,
        out_keys: &'a mut O,
        out_vals: &'a mut OV,
    ) -> Self {
        MergeBuffers {
            a: a_keys,
            b: b_keys,
            out: out_keys,
            values: MergeValues {
                value: PhantomData,
                a: a_vals,
                b: b_vals,
                out: out_vals,
            },
        }
    }
}

mod sealed {
    /// Only this crate's buffer types are merge or sort buffers.
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

impl<A, B, O, V> Sealed for MergeBuffers<'_, A, B, O, V> {}
impl Sealed for KeysOnly {}
impl<V, AV, BV, OV> Sealed for MergeValues<'_, V, AV, BV, OV> {}

/// The device buffers of a merge of keys `K`: [`MergeBuffers`] of keys alone or of pairs.
pub trait DeviceMergeBuffers<K: DeviceKey>: Sealed {
    /// The layout of the values moved with the keys (`None` for keys alone).
    const VALUES: ValueLayout;

    /// Check the lengths ([`GpuError::SizeMismatch`] naming the first that is off), then run
    /// `launch` with the buffers' addresses on `gpu`'s stream, holding their guards across it.
    fn with_args(
        self,
        gpu: &Gpu,
        launch: impl FnOnce(MergeArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError>;
}

/// The values part of [`MergeBuffers`]: [`KeysOnly`] or [`MergeValues`].
pub trait MergeValueBuffers: Sealed {
    /// The layout of the values (`None` for keys alone).
    const VALUES: ValueLayout;

    /// Check the lengths of the output keys and of the values against the input keys'
    /// ([`GpuError::SizeMismatch`] naming the first that is off).
    fn check(&self, a_count: usize, b_count: usize, out_keys: usize) -> Result<(), GpuError>;

    /// Run `launch` with the addresses of A's, B's and the output's values (zeros for keys
    /// alone) on `stream`, holding their guards across it.
    fn with_addresses(
        self,
        stream: &Arc<CudaStream>,
        launch: impl FnOnce((u64, u64, u64)) -> Result<(), GpuError>,
    ) -> Result<(), GpuError>;
}

impl<K, A, B, O, V> DeviceMergeBuffers<K> for MergeBuffers<'_, A, B, O, V>
where
    K: DeviceKey,
    A: DevicePtr<K>,
    B: DevicePtr<K>,
    O: DevicePtrMut<K>,
    V: MergeValueBuffers,
{
    const VALUES: ValueLayout = V::VALUES;

    fn with_args(
        self,
        gpu: &Gpu,
        launch: impl FnOnce(MergeArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let (a_count, b_count) = (self.a.len(), self.b.len());
        self.values.check(a_count, b_count, self.out.len())?;
        let stream = gpu.stream().clone();
        let (a, _a) = self.a.device_ptr(&stream);
        let (b, _b) = self.b.device_ptr(&stream);
        let (out, _out) = self.out.device_ptr_mut(&stream);
        self.values.with_addresses(&stream, |values| {
            launch(MergeArgs::new((a, a_count), (b, b_count), out, values))
        })
    }
}

impl MergeValueBuffers for KeysOnly {
    const VALUES: ValueLayout = None;

    fn check(&self, a_count: usize, b_count: usize, out_keys: usize) -> Result<(), GpuError> {
        check_len("merge output", a_count + b_count, out_keys)
    }

    fn with_addresses(
        self,
        _stream: &Arc<CudaStream>,
        launch: impl FnOnce((u64, u64, u64)) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        launch((0, 0, 0))
    }
}

impl<V, AV, BV, OV> MergeValueBuffers for MergeValues<'_, V, AV, BV, OV>
where
    V: DeviceValue,
    AV: DevicePtr<V>,
    BV: DevicePtr<V>,
    OV: DevicePtrMut<V>,
{
    const VALUES: ValueLayout = value_layout::<V>();

    fn check(&self, a_count: usize, b_count: usize, out_keys: usize) -> Result<(), GpuError> {
        let total = a_count + b_count;
        check_len("A values", a_count, self.a.len())?;
        check_len("B values", b_count, self.b.len())?;
        check_len("merge output keys", total, out_keys)?;
        check_len("merge output values", total, self.out.len())
    }

    fn with_addresses(
        self,
        stream: &Arc<CudaStream>,
        launch: impl FnOnce((u64, u64, u64)) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let (a, _a) = self.a.device_ptr(stream);
        let (b, _b) = self.b.device_ptr(stream);
        let (out, _out) = self.out.device_ptr_mut(stream);
        launch((a, b, out))
    }
}
