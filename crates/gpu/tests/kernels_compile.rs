//! CI check without a GPU: every shipped kernel instantiation compiles with NVRTC for sm_80 and sm_90.

use twophase_gpu::batcher::shipped_batcher_programs;
use twophase_gpu::merge::shipped_merge_programs;
use twophase_gpu::mergesort::shipped_mergesort_programs;
use twophase_gpu::program::{compile_cubin, nvrtc_available, nvrtc_version};
use twophase_gpu::search::shipped_search_programs;
use twophase_gpu::textbook::shipped_textbook_merge_programs;

/// Architectures CI compiles for: Ampere (A100) and Hopper (H100/H200).
const CI_ARCHS: [u32; 2] = [80, 90];

/// Compiler threads: NVRTC is thread-safe and each compile is single-threaded.
const COMPILE_THREADS: usize = 8;

/// Set to a folder to keep every cubin there as `<program>-sm<arch>.cubin`, for
/// scripts/kernel_resources.py (registers, spills and shared memory of each kernel, no GPU).
const CUBIN_DUMP_ENV: &str = "TWOPHASE_CUBIN_DUMP";

/// With a dump folder, set to a text to compile (and dump) only the programs whose name holds it.
const CUBIN_FILTER_ENV: &str = "TWOPHASE_CUBIN_FILTER";

#[test]
fn every_shipped_kernel_compiles_for_sm80_and_sm90() {
    if !nvrtc_available() {
        let on_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
        assert!(!on_ci, "CI is set but libnvrtc cannot be loaded: set LD_LIBRARY_PATH to nvidia-cuda-nvrtc's lib folder");
        eprintln!("SKIPPED: libnvrtc not found (CI unset); install nvidia-cuda-nvrtc==13.0.88 and set LD_LIBRARY_PATH");
        return;
    }
    let version = nvrtc_version().expect("NVRTC version");
    let mut programs = shipped_merge_programs();
    programs.extend(shipped_mergesort_programs());
    programs.extend(shipped_search_programs());
    programs.extend(shipped_textbook_merge_programs());
    programs.extend(shipped_batcher_programs());
    if let (Some(_), Ok(filter)) = (
        std::env::var_os(CUBIN_DUMP_ENV),
        std::env::var(CUBIN_FILTER_ENV),
    ) {
        programs.retain(|p| p.name.contains(&filter));
    }
    let jobs: Vec<_> = programs
        .iter()
        .flat_map(|p| CI_ARCHS.iter().map(move |&arch| (p, arch)))
        .collect();
    let dump = std::env::var_os(CUBIN_DUMP_ENV).map(std::path::PathBuf::from);
    if let Some(dir) = &dump {
        std::fs::create_dir_all(dir).expect("cubin dump folder");
    }
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..COMPILE_THREADS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(program, arch)) = jobs.get(i) else {
                    break;
                };
                match compile_cubin(&program.source, &program.name, arch) {
                    Ok(cubin) => {
                        assert!(!cubin.is_empty(), "{} sm_{arch}: empty cubin", program.name);
                        if let Some(dir) = &dump {
                            let file = dir.join(format!("{}-sm{arch}.cubin", program.name));
                            std::fs::write(&file, &cubin).expect("write cubin");
                        }
                    }
                    Err(e) => failures.lock().expect("lock").push(format!("{e}")),
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    assert!(
        failures.is_empty(),
        "{} of {} compiles failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    eprintln!(
        "compiled {} programs x {:?} with NVRTC {version:?}",
        programs.len(),
        CI_ARCHS
    );
}

#[test]
fn a_compile_error_keeps_the_log_and_the_name() {
    if !nvrtc_available() {
        let on_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
        assert!(!on_ci, "CI is set but libnvrtc cannot be loaded");
        eprintln!("SKIPPED: libnvrtc not found (CI unset)");
        return;
    }
    let err = compile_cubin(
        "__global__ void k() { this_is_not_cuda; }",
        "broken_probe.cu",
        90,
    )
    .expect_err("must not compile");
    let text = err.to_string();
    assert!(text.contains("broken_probe.cu"), "{text}");
    assert!(text.contains("this_is_not_cuda"), "{text}");
}
