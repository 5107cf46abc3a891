//! The exchange of a sharded sort: every (input shard, output shard) piece moved once, through NCCL between devices or by copies where handles share one.

use std::mem::size_of;

use cudarc::driver::{CudaSlice, CudaStream, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr};
use cudarc::nccl::{result as nccl, sys as nccl_sys};

use super::layout::ReceiveLayout;
use crate::error::GpuError;
use crate::runtime::device::Gpu;

/// One NCCL communicator per device of a group, made together (`ncclCommInitAll`) and destroyed
/// together.
pub(super) struct Communicators {
    comms: Vec<nccl_sys::ncclComm_t>,
}

/// `error` of NCCL call `call` as this crate's error.
fn nccl_error(call: &'static str, error: nccl::NcclError) -> GpuError {
    GpuError::Nccl {
        call,
        code: format!("{:?}", error.0),
    }
}

/// Whether the NCCL library can be loaded on this machine.
pub(super) fn nccl_available() -> bool {
    // SAFETY: only tries to dlopen the candidate library names; no symbol is called.
    unsafe { nccl_sys::is_culib_present() }
}

impl Communicators {
    /// One communicator per device of `gpus` (distinct devices, NCCL present), rank i on
    /// `gpus[i]`.
    pub(super) fn new(gpus: &[&Gpu]) -> Result<Self, GpuError> {
        let ordinals = gpus
            .iter()
            .map(|gpu| i32::try_from(gpu.context().ordinal()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| GpuError::InvalidInput("a device ordinal past i32".to_owned()))?;
        let ranks = i32::try_from(gpus.len())
            .map_err(|_| GpuError::InvalidInput("more GPUs than NCCL ranks".to_owned()))?;
        let mut comms = vec![std::ptr::null_mut(); gpus.len()];
        // SAFETY: NCCL is present (the caller checked); `comms` holds `ranks` slots for the
        // communicators and `ordinals` `ranks` device ordinals, both alive across the call.
        unsafe { nccl::comm_init_all(comms.as_mut_ptr(), ranks, ordinals.as_ptr()) }
            .map_err(|e| nccl_error("ncclCommInitAll", e))?;
        Ok(Communicators { comms })
    }

    /// Move every piece: output shard `i` (on `gpus[i]`, `outputs[i]`) receives from every input
    /// shard `k` (`inputs[k]`, on `gpus[k]`) its elements `layout.sent[i][k]` at
    /// `layout.slots[i][k]`: one NCCL group of sends and receives on the handles' streams, a
    /// shard's piece for its own device included (NCCL copies it on the device).
    pub(super) fn exchange<T: DeviceRepr>(
        &self,
        gpus: &[&Gpu],
        inputs: &[CudaSlice<T>],
        outputs: &mut [CudaViewMut<T>],
        layout: &ReceiveLayout,
    ) -> Result<(), GpuError> {
        let p = gpus.len();
        // The raw addresses, each taken on its own device's stream (one stream orders every
        // use of a handle's buffers, so the guards record nothing).
        let sources: Vec<u64> = (0..p)
            .map(|k| inputs[k].device_ptr(gpus[k].stream()).0)
            .collect();
        let targets: Vec<u64> = outputs
            .iter_mut()
            .zip(gpus)
            .map(|(output, gpu)| output.device_ptr_mut(gpu.stream()).0)
            .collect();
        let bytes = |elements: usize| (elements * size_of::<T>()) as u64;
        let mut transfers = Vec::with_capacity(p * p);
        for (k, &source) in sources.iter().enumerate() {
            for (i, &target) in targets.iter().enumerate() {
                let sent = &layout.sent[i][k];
                transfers.push(Transfer {
                    from: k,
                    to: i,
                    src: source + bytes(sent.start),
                    dst: target + bytes(layout.slots[i][k]),
                    bytes: sent.len() * size_of::<T>(),
                });
            }
        }
        let streams: Vec<&CudaStream> = gpus.iter().map(|gpu| gpu.stream().as_ref()).collect();
        // SAFETY: elements `sent[i][k]` lie inside input shard k (the cuts are a staircase
        // within each shard's length, and the layout only moves a start down), on device k;
        // output i's buffer holds layout.lens[i] elements (the caller sized it so), and each
        // piece's place [slots[i][k], + its length) lies inside it, on device i; the streams are
        // the devices' own; the buffers outlive the call, which synchronizes every stream before
        // it returns.
        unsafe { self.group(&transfers, &streams) }
    }

    /// One NCCL group of `transfers` (the empty ones skipped), each sent on `streams[from]`
    /// and received on `streams[to]`, the communicators' ranks being the streams' devices.
    ///
    /// # Safety
    /// Every transfer's `bytes` at `src` must lie in a buffer on device `from`, and at `dst` in
    /// one on device `to`, both alive and unused by anything else until `streams[from]` and
    /// `streams[to]` have been synchronized; `streams[k]` must belong to device `k`'s context.
    pub(super) unsafe fn group(
        &self,
        transfers: &[Transfer],
        streams: &[&CudaStream],
    ) -> Result<(), GpuError> {
        nccl::group_start().map_err(|e| nccl_error("ncclGroupStart", e))?;
        let mut first_error = None;
        for transfer in transfers.iter().filter(|t| t.bytes > 0) {
            let Transfer {
                from,
                to,
                src,
                dst,
                bytes,
            } = *transfer;
            // SAFETY: the range lies in a live buffer on device `from` (the caller's contract),
            // whose stream and communicator these are.
            let sent = unsafe {
                nccl::send(
                    src as *const _,
                    bytes,
                    nccl_sys::ncclDataType_t::ncclUint8,
                    to as i32,
                    self.comms[from],
                    streams[from].cu_stream() as _,
                )
            };
            if let Err(e) = sent {
                first_error.get_or_insert(nccl_error("ncclSend", e));
            }
            // SAFETY: the range lies in a live buffer on device `to` (the caller's contract),
            // whose stream and communicator these are.
            let received = unsafe {
                nccl::recv(
                    dst as *mut _,
                    bytes,
                    nccl_sys::ncclDataType_t::ncclUint8,
                    from as i32,
                    self.comms[to],
                    streams[to].cu_stream() as _,
                )
            };
            if let Err(e) = received {
                first_error.get_or_insert(nccl_error("ncclRecv", e));
            }
        }
        // The group always ends, so that NCCL leaves group mode whatever failed inside.
        let ended = nccl::group_end().map_err(|e| nccl_error("ncclGroupEnd", e));
        if let Some(error) = first_error {
            return Err(error);
        }
        ended.map(|_| ())
    }
}

/// One transfer of an NCCL group: `bytes` from address `src` on device `from` to address `dst`
/// on device `to`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Transfer {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) src: u64,
    pub(super) dst: u64,
    pub(super) bytes: usize,
}

impl Drop for Communicators {
    fn drop(&mut self) {
        for &comm in &self.comms {
            // SAFETY: each communicator was made by ncclCommInitAll and is destroyed once; the
            // group's calls synchronized their streams before returning, so no operation is
            // pending on it. An error here cannot be reported from a drop.
            let _ = unsafe { nccl::comm_destroy(comm) };
        }
    }
}

/// The exchange by copies, for handles that share a device (NCCL takes one rank a device) or a
/// machine without NCCL: every piece copied into its output shard on the output device's stream
/// (the driver's peer copy between contexts).
pub(super) fn copy_pieces<T: DeviceRepr>(
    gpus: &[&Gpu],
    inputs: &[CudaSlice<T>],
    outputs: &mut [CudaViewMut<T>],
    layout: &ReceiveLayout,
) -> Result<(), GpuError> {
    let p = gpus.len();
    for i in 0..p {
        for (k, input) in inputs.iter().enumerate() {
            let sent = layout.sent[i][k].clone();
            if sent.is_empty() {
                continue;
            }
            let at = layout.slots[i][k];
            let mut place = outputs[i].slice_mut(at..at + sent.len());
            gpus[i]
                .stream()
                .memcpy_dtod(&input.slice(sent), &mut place)
                .map_err(GpuError::from)?;
        }
    }
    Ok(())
}
