//! The one error type of the GPU runtime.

use cudarc::driver::DriverError;

use crate::runtime::fault::is_sticky;

/// The call named in [`GpuError::ContextLost`] when a sticky error surfaces where the call is not
/// known (the handle names it at its next synchronizing step).
pub const UNNAMED_DRIVER_CALL: &str = "a CUDA driver call";

/// Everything that can go wrong in the GPU runtime.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The CUDA driver library (libcuda) could not be loaded: no GPU driver on this machine.
    #[error("the CUDA driver library (libcuda) is not available on this machine")]
    NoDriver,
    /// The NVRTC library could not be loaded (CI: install nvidia-cuda-nvrtc and set LD_LIBRARY_PATH).
    #[error("the NVRTC library (libnvrtc.so.13 or a fallback name) could not be loaded; point LD_LIBRARY_PATH at it")]
    NoNvrtc,
    /// No usable GPU could be opened; the text says why (no device, or the driver's own error).
    #[error("no usable CUDA GPU: {0}")]
    NoDevice(String),
    /// A CUDA driver call failed (a recoverable error: the context still works).
    #[error("CUDA driver error: {0}")]
    Driver(#[source] DriverError),
    /// A sticky device error (an illegal address or instruction in a kernel, a failed launch) lost
    /// the context: nothing can run on it any more. `call` names the call that saw it first; every
    /// later call on a handle of that context returns this error again without touching the
    /// device. Open a new handle (`Gpu::new`, or call the default GPU again): it resets the
    /// device's primary context, where the driver allows that
    /// ([`GpuError::DeviceLostForProcess`] where it does not).
    #[error(
        "the CUDA context is lost: {cause} in {call}; every later call on this handle fails with \
         this error: open a new `Gpu` (or call the default GPU again), which resets the device \
         where the driver allows it"
    )]
    ContextLost { call: String, cause: DriverError },
    /// After a sticky error, the driver answers every new context on the device in this process
    /// with an error (`refused`): resetting the primary context succeeds, yet retaining it, or
    /// creating a context of its own, fails. The H100 driver 580 does this after an illegal
    /// address. Only a new process can use the device again.
    #[error(
        "the GPU cannot be opened again in this process: since {cause} in {call}, the driver \
         answers every new context with {refused}; restart the process to use the GPU"
    )]
    DeviceLostForProcess {
        call: String,
        cause: DriverError,
        refused: DriverError,
    },
    /// NVRTC rejected a generated program; `log` is NVRTC's full log.
    #[error("NVRTC failed to compile {name} for sm_{arch}:\n{log}")]
    Compile {
        name: String,
        arch: u32,
        log: String,
    },
    /// An NVRTC call other than the compilation itself failed.
    #[error("NVRTC error in {call}: {message}")]
    Nvrtc { call: &'static str, message: String },
    /// Two buffers of one call disagree in length.
    #[error("buffer size mismatch: {what} holds {got} elements, {expected} needed")]
    SizeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// The problem needs a grid larger than the device can launch.
    #[error("problem too large: {0}")]
    TooLarge(String),
    /// A tuning is outside what the kernels support.
    #[error("invalid tuning: {0}")]
    InvalidTuning(String),
    /// An input violates a documented precondition (checked on the host).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The NCCL library could not be loaded, or an NCCL call failed (`code`: NCCL's result).
    #[error("NCCL error in {call}: {code}")]
    Nccl { call: &'static str, code: String },
    /// A call over several GPUs failed on one of them: the device's ordinal and its error.
    #[error("on GPU {ordinal}: {source}")]
    OnDevice {
        ordinal: usize,
        #[source]
        source: Box<GpuError>,
    },
    /// A lock guarding a cache was poisoned by a panic in another thread.
    #[error("internal lock poisoned: {0}")]
    Poisoned(&'static str),
}

impl From<DriverError> for GpuError {
    /// A sticky error becomes [`GpuError::ContextLost`], any other [`GpuError::Driver`].
    fn from(error: DriverError) -> Self {
        if is_sticky(error) {
            GpuError::ContextLost {
                call: UNNAMED_DRIVER_CALL.to_owned(),
                cause: error,
            }
        } else {
            GpuError::Driver(error)
        }
    }
}

impl GpuError {
    /// Whether this error means the context is lost (see [`GpuError::ContextLost`]).
    pub fn is_context_lost(&self) -> bool {
        match self {
            GpuError::ContextLost { .. } | GpuError::DeviceLostForProcess { .. } => true,
            GpuError::Driver(error) => is_sticky(*error),
            GpuError::OnDevice { source, .. } => source.is_context_lost(),
            _ => false,
        }
    }
}

/// [`GpuError::SizeMismatch`] naming `what` unless `got == expected`: the length check of every
/// call's buffers, on both backends.
pub fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), GpuError> {
    if expected != got {
        return Err(GpuError::SizeMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}
