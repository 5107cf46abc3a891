//! Output files that appear whole or not at all: written to a temporary file beside the destination, renamed into place when complete, removed on error, drop or interrupt.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::error::CliError;

/// Exit status after Ctrl-C or SIGTERM, as a shell reports a process killed by SIGINT.
const EXIT_INTERRUPTED: i32 = 130;

/// Bytes buffered between the program and an output file: large writes, few system calls.
const WRITE_BUFFER: usize = 1 << 20;

/// The temporary files of this process not yet renamed or removed, for the interrupt handler.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Counter making the temporary names of one process unique.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// On Ctrl-C or SIGTERM, remove every unfinished output and exit with status 130. Where the
/// handler cannot be installed (another one is), an interrupted run may leave a temporary file,
/// never a partial output under the final name.
pub fn remove_unfinished_on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        let unfinished = UNFINISHED.lock().unwrap_or_else(PoisonError::into_inner);
        for path in unfinished.iter() {
            let _ = std::fs::remove_file(path);
        }
        eprintln!("twophase: interrupted; no output written");
        std::process::exit(EXIT_INTERRUPTED);
    });
}

/// An output being written: a temporary file beside `destination`, renamed into place by
/// [`commit`](Self::commit). Dropped uncommitted, it removes its temporary file.
pub struct PendingOutput {
    destination: PathBuf,
    temp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl PendingOutput {
    /// Create the temporary file for `destination` (exclusively: never through a file someone
    /// else put there). Fails early, before any work, when the folder is not writable.
    pub fn create(destination: &Path) -> Result<Self, CliError> {
        let temp = temp_path(destination);
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(CliError::io(destination))?;
        UNFINISHED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(temp.clone());
        Ok(PendingOutput {
            destination: destination.to_owned(),
            temp,
            file: Some(BufWriter::with_capacity(WRITE_BUFFER, file)),
        })
    }

    /// The final path.
    pub fn destination(&self) -> &Path {
        &self.destination
    }

    /// Write all of `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        let io = CliError::io(&self.destination);
        match &mut self.file {
            Some(file) => file.write_all(bytes).map_err(io),
            None => Err(io(std::io::Error::other("output already closed"))),
        }
    }

    /// Flush, close and rename the temporary file to the destination (replacing any file there).
    /// The file is not synced to disk first: the promise is about the process (an error or an
    /// interrupt leaves no partial output), not about a crash of the machine.
    pub fn commit(mut self) -> Result<(), CliError> {
        if let Some(mut file) = self.file.take() {
            file.flush().map_err(CliError::io(&self.destination))?;
        }
        std::fs::rename(&self.temp, &self.destination).map_err(CliError::io(&self.destination))?;
        self.forget_temp();
        Ok(())
    }

    /// Take the temporary file off the interrupt handler's list.
    fn forget_temp(&self) {
        UNFINISHED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|path| path != &self.temp);
    }
}

impl Drop for PendingOutput {
    fn drop(&mut self) {
        if self.file.is_some() || self.temp.exists() {
            self.file = None;
            let _ = std::fs::remove_file(&self.temp);
            self.forget_temp();
        }
    }
}

/// A hidden temporary name beside `destination`, unique to this process and call:
/// `.NAME.PID.COUNT.tmp`.
fn temp_path(destination: &Path) -> PathBuf {
    let name = destination
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let count = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    destination.with_file_name(format!(".{name}.{}.{count}.tmp", std::process::id()))
}
