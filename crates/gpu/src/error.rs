//! The one error type of the GPU runtime.

use cudarc::driver::DriverError;

/// Everything that can go wrong in the GPU runtime.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The CUDA driver library (libcuda) could not be loaded: no GPU driver on this machine.
    #[error("the CUDA driver library (libcuda) is not available on this machine")]
    NoDriver,
    /// The NVRTC library could not be loaded (CI: install nvidia-cuda-nvrtc and set LD_LIBRARY_PATH).
    #[error("the NVRTC library (libnvrtc.so.13 or a fallback name) could not be loaded; point LD_LIBRARY_PATH at it")]
    NoNvrtc,
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
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
    /// A lock guarding a cache was poisoned by a panic in another thread.
    #[error("internal lock poisoned: {0}")]
    Poisoned(&'static str),
}
