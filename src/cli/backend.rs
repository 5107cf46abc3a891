//! Which backend a command runs on: the crate-root calls' choice (`twophase::backend`), or the one forced by --cpu / --gpu, with the reason when the GPU cannot be used.

use twophase::gpu::diagnose::{self, NVRTC_ADVICE};
use twophase::gpu::Gpu;
use twophase::Backend;

use super::error::CliError;
use super::report::Reporter;
use super::BackendChoice;

/// Where a command runs.
#[derive(Clone, Copy, Debug)]
pub enum Runner {
    /// The CPU backend (`twophase::cpu`).
    Cpu,
    /// The default GPU, the one the crate-root calls use.
    Gpu(&'static Gpu),
}

/// Advice when a GPU that is present failed to open.
const OPEN_ADVICE: &str = "try again; where it persists, check `nvidia-smi` for a device in \
     error or held by another process";

/// The runner for `choice`. `Auto` takes the crate-root calls' choice: the GPU when one is
/// present (and then its failures are errors, as the library never falls back silently), else
/// the CPU. `Gpu` fails, saying why, where no GPU is usable. Either way a GPU runner needs NVRTC,
/// checked here so that its absence is named before any file is read.
/// The choice is timed as the phase "open backend" of `report` (opening the GPU's context and
/// loading NVRTC, where the GPU runs).
pub fn choose(choice: BackendChoice, report: &mut Reporter) -> Result<Runner, CliError> {
    report.phase("open backend", None, || choose_untimed(choice))
}

fn choose_untimed(choice: BackendChoice) -> Result<Runner, CliError> {
    if choice == BackendChoice::Cpu
        || (choice == BackendChoice::Auto && twophase::backend() == Backend::Cpu)
    {
        return Ok(Runner::Cpu);
    }
    let Some(gpu) = twophase::gpu::default_gpu() else {
        return Err(why_no_gpu());
    };
    if let Err(error) = diagnose::nvrtc_info() {
        return Err(CliError::NoGpu {
            reason: error.to_string(),
            advice: NVRTC_ADVICE.to_owned(),
        });
    }
    Ok(Runner::Gpu(gpu))
}

/// Why the default GPU cannot be used: the first blocker the diagnosis finds, else the error
/// opening device 0.
fn why_no_gpu() -> CliError {
    let diagnosis = diagnose::diagnose();
    if let Some(blocker) = diagnosis.blockers().into_iter().next() {
        return CliError::NoGpu {
            reason: blocker.reason,
            advice: blocker.advice.to_owned(),
        };
    }
    let reason = match Gpu::first() {
        Err(error) => error.to_string(),
        Ok(_) => "device 0 opened on a second try".to_owned(),
    };
    CliError::NoGpu {
        reason,
        advice: OPEN_ADVICE.to_owned(),
    }
}
