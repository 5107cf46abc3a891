//! The sharded calls' device buffers and errors: unset buffers, typed views of byte scratch, errors that name their device.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};

use crate::error::GpuError;
use crate::runtime::device::Gpu;

/// `source`, an error on device `ordinal`, naming the device.
pub(super) fn device_error(ordinal: usize, source: GpuError) -> GpuError {
    GpuError::OnDevice {
        ordinal,
        source: Box::new(source),
    }
}

/// `result` of a step on `gpu`'s device, its error naming the device.
pub(super) fn on_device<T>(gpu: &Gpu, result: Result<T, GpuError>) -> Result<T, GpuError> {
    result.map_err(|source| device_error(gpu.context().ordinal(), source))
}

/// The first `len` elements of a tree buffer as `T`s (the buffer already grown to hold them by
/// the exchange or an earlier level).
pub(super) fn tree_view<T>(
    tree: &Option<CudaSlice<u8>>,
    len: usize,
) -> Result<CudaView<'_, T>, GpuError> {
    let buffer = tree.as_ref().ok_or(GpuError::Poisoned("tree buffer"))?;
    // SAFETY: the bytes hold `T`s written by the exchange or an earlier level of the same call
    // (device allocations are aligned past any key's alignment), and `T` is plain data
    // (DeviceKey and DeviceValue are Pod): every bit pattern is a value.
    unsafe { buffer.transmute::<T>(len) }.ok_or(GpuError::Poisoned("tree buffer"))
}

/// A tree buffer grown to hold `len` `T`s, as `T`s.
pub(super) fn tree_view_mut<'t, T: DeviceRepr>(
    gpu: &Gpu,
    tree: &'t mut Option<CudaSlice<u8>>,
    len: usize,
) -> Result<CudaViewMut<'t, T>, GpuError> {
    let buffer = gpu.grow_scratch(tree, len * std::mem::size_of::<T>())?;
    // SAFETY: the buffer holds at least `len` `T`s' bytes (grown above) at an allocation's
    // alignment; the caller writes them before any read, and `T` is plain data.
    unsafe { buffer.transmute_mut::<T>(len) }.ok_or(GpuError::Poisoned("tree buffer"))
}

/// A buffer of `len` elements on `gpu`'s stream whose contents the caller writes before any
/// read (a one-element allocation behind an empty buffer, where the driver takes no empty one).
pub(super) fn uninit_buffer<T: DeviceRepr>(
    gpu: &Gpu,
    len: usize,
) -> Result<CudaSlice<T>, GpuError> {
    let stream = gpu.stream();
    // SAFETY: the memory is left unset; every caller writes each element before reading it,
    // and the length handed out never exceeds the allocation.
    unsafe {
        let buffer = stream.alloc::<T>(len.max(1))?;
        if len > 0 {
            return Ok(buffer);
        }
        Ok(stream.upgrade_device_ptr(buffer.leak(), 0))
    }
}
