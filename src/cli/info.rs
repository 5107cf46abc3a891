//! `twophase info`: the driver, NVRTC, the devices and the kernel cache as the library's diagnosis sees them, which backend the crate-root calls use and why, and a small end-to-end check.

use std::time::Instant;

use twophase::gpu::diagnose::{self, CacheState, Diagnosis};
use twophase::Backend;

use super::demo::random_keys;
use super::error::{Bytes, CliError};
use super::InfoArgs;

/// Keys of the end-to-end check: enough for several tiles and merge passes on either backend,
/// few enough to take milliseconds once the kernels are compiled.
const CHECK_KEYS: usize = 1 << 20;
/// Seed of the check's keys.
const CHECK_SEED: u64 = 0x6a09_e667_f3bc_c908;
/// Milliseconds per second.
const MS_PER_S: f64 = 1e3;

/// `twophase info`.
pub fn run(args: &InfoArgs) -> Result<(), CliError> {
    let backend = twophase::backend();
    let diagnosis = diagnose::diagnose();
    println!("twophase {}", env!("CARGO_PKG_VERSION"));
    print_backend(backend, &diagnosis);
    print_driver(&diagnosis);
    print_nvrtc(&diagnosis);
    print_devices(&diagnosis);
    print_cache(&diagnosis);
    println!(
        "CPU backend:  {} threads (rayon)",
        rayon::current_num_threads()
    );
    let blockers = diagnosis.blockers();
    if !blockers.is_empty() {
        println!("\nThe GPU cannot be used here:");
        for blocker in &blockers {
            println!("  - {}\n    what to do: {}", blocker.reason, blocker.advice);
        }
    }
    if args.no_check {
        return Ok(());
    }
    check(backend)
}

fn print_backend(backend: Backend, diagnosis: &Diagnosis) {
    match backend {
        Backend::Gpu => println!(
            "backend:      gpu (twophase::sort and the other crate-root calls run on device 0)"
        ),
        Backend::Cpu => {
            let why = diagnosis
                .blockers()
                .into_iter()
                .next()
                .map_or_else(|| "no usable GPU".to_owned(), |b| b.reason);
            println!("backend:      cpu (no GPU: {why})");
        }
    }
}

fn print_driver(diagnosis: &Diagnosis) {
    match &diagnosis.driver {
        Ok(driver) => println!(
            "driver:       CUDA {}.{}, {}",
            driver.cuda_version.0,
            driver.cuda_version.1,
            path_or_unknown(driver.path.as_deref())
        ),
        Err(error) => println!("driver:       missing: {error}"),
    }
}

fn print_nvrtc(diagnosis: &Diagnosis) {
    match &diagnosis.nvrtc {
        Ok(nvrtc) => println!(
            "NVRTC:        {}.{}, {}",
            nvrtc.version.0,
            nvrtc.version.1,
            path_or_unknown(nvrtc.path.as_deref())
        ),
        Err(error) => println!(
            "NVRTC:        missing: {error} (looked for {} on LD_LIBRARY_PATH and the system's \
             library folders)",
            diagnose::nvrtc_candidates().join(", ")
        ),
    }
}

fn print_devices(diagnosis: &Diagnosis) {
    match &diagnosis.devices {
        Err(error) => println!("devices:      none: {error}"),
        Ok(devices) if devices.is_empty() => println!("devices:      none"),
        Ok(devices) => {
            println!("devices:      {}", devices.len());
            for (ordinal, device) in devices.iter().enumerate() {
                match device {
                    Ok(d) => println!(
                        "  {}: {}, sm_{}, {} SMs, {} ({} free)",
                        d.ordinal,
                        d.name,
                        d.arch,
                        d.multiprocessors,
                        Bytes(d.total_memory as u64),
                        Bytes(d.free_memory as u64)
                    ),
                    Err(error) => println!("  {ordinal}: cannot be opened: {error}"),
                }
            }
        }
    }
}

fn print_cache(diagnosis: &Diagnosis) {
    let cache = &diagnosis.cache;
    let dir = path_or_unknown(cache.dir.as_deref());
    let contents = format!("{} programs, {}", cache.programs, Bytes(cache.bytes));
    let line = match cache.state {
        CacheState::Disabled => "disabled (TWOPHASE_CACHE_DIR is empty)".to_owned(),
        CacheState::NoFolder => "none (no TWOPHASE_CACHE_DIR, XDG_CACHE_HOME or HOME)".to_owned(),
        CacheState::NotCreated => format!("{dir} (created on the first compilation)"),
        CacheState::Used => format!("{dir} ({contents})"),
        CacheState::NotPrivate => format!(
            "{dir} NOT USED: others can write into it, and a cubin planted there would run on \
             the GPU; set TWOPHASE_CACHE_DIR to a folder of your own"
        ),
    };
    println!("kernel cache: {line}");
}

fn path_or_unknown(path: Option<&std::path::Path>) -> String {
    path.map_or_else(
        || "(file not known)".to_owned(),
        |p| p.display().to_string(),
    )
}

/// Sort [`CHECK_KEYS`] random keys through the crate-root call and compare with std: the backend
/// works end to end (on the GPU: NVRTC compiles, the driver loads and runs the kernels).
fn check(backend: Backend) -> Result<(), CliError> {
    let backend_name = match backend {
        Backend::Gpu => "gpu",
        Backend::Cpu => "cpu",
    };
    let mut keys = random_keys(CHECK_KEYS, CHECK_SEED);
    let mut expected = keys.clone();
    expected.sort_unstable();
    let start = Instant::now();
    let sorted = twophase::sort(&mut keys);
    let ms = start.elapsed().as_secs_f64() * MS_PER_S;
    match sorted {
        Ok(()) if keys == expected => {
            let kernels = match backend {
                Backend::Gpu => " (compiling or loading the kernels included)",
                Backend::Cpu => "",
            };
            println!(
                "check:        sorted {CHECK_KEYS} u32 keys on the {backend_name} in {ms:.0} \
                 ms{kernels}, equal to std's sort"
            );
            Ok(())
        }
        Ok(()) => Err(CliError::Mismatch(format!(
            "check: the {backend_name} sort of {CHECK_KEYS} keys differs from std's"
        ))),
        Err(error) => {
            println!("check:        FAILED on the {backend_name}: {error}");
            Err(CliError::Library(error))
        }
    }
}
