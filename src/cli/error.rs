//! The command's one error type: each variant prints as the one line a user sees after `twophase: `.

use std::path::PathBuf;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file's content is not what the command takes: wrong or unknown dtype, truncated, not
    /// 1-D, not sorted, a length that does not match.
    #[error("{}: {message}", path.display())]
    BadInput { path: PathBuf, message: String },
    /// The arguments together ask for something the command cannot do.
    #[error("{0}")]
    Usage(String),
    /// The inputs need more memory than this machine has free.
    #[error(
        "{what} needs about {needed} of memory and {available} is available; files larger than \
         memory are not supported yet (out-of-core sorting does not exist)"
    )]
    TooLarge {
        what: String,
        needed: Bytes,
        available: Bytes,
    },
    /// The GPU was asked for (`--gpu`) but cannot be used.
    #[error("the GPU cannot be used: {reason}; {advice} (`twophase info` says more; --cpu runs on the CPU)")]
    NoGpu { reason: String, advice: String },
    /// A call of the library failed (on the GPU: compilation, memory, a lost context).
    #[error("{0}")]
    Library(#[from] twophase::Error),
    /// A plot could not be drawn.
    #[error("drawing {}: {message}", path.display())]
    Plot { path: PathBuf, message: String },
    /// A result did not match its reference (the demo and the benchmark verify every result).
    #[error("{0}")]
    Mismatch(String),
}

impl CliError {
    /// [`CliError::BadInput`] about `path`.
    pub fn bad_input(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        CliError::BadInput {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A closure turning an I/O error on `path` into [`CliError::Io`].
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> CliError {
        let path = path.into();
        move |source| CliError::Io { path, source }
    }
}

impl From<twophase::gpu::cudarc::driver::DriverError> for CliError {
    fn from(error: twophase::gpu::cudarc::driver::DriverError) -> Self {
        CliError::Library(error.into())
    }
}

/// A number of bytes, printed in binary units (`1.5 GiB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// Binary unit prefixes, each 1024 times the one before.
const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
/// The step between two units.
const UNIT_STEP: f64 = 1024.0;

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= UNIT_STEP && unit + 1 < UNITS.len() {
            value /= UNIT_STEP;
            unit += 1;
        }
        if unit == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{value:.1} {}", UNITS[unit])
        }
    }
}
