//! CI check without a GPU: every shipped kernel instantiation compiles with NVRTC for sm_80 and sm_90.

use twophase_gpu::load_balance::shipped_load_balance_programs;
use twophase_gpu::primitive::shipped_programs_of;
use twophase_gpu::runtime::launch::{param_asserts, ParamLayout};
use twophase_gpu::runtime::nvrtc::{
    compile_cubin, compile_cubin_with_log, nvrtc_available, nvrtc_version,
};
use twophase_gpu::runtime::program::{program, Program, ValueLayout};
use twophase_gpu::sorted_search::shipped_sorted_search_programs;
use twophase_gpu::{
    device_key, BatcherTuning, CudaComparator, DeviceComparator, DeviceKey, GpuError, Less,
    MergeTuning, MergesortTuning, ProgramTuning, SegmentedSortTuning, TextbookMergeTuning,
};

/// Architectures CI compiles for: Ampere (A100) and Hopper (H100/H200).
const CI_ARCHS: [u32; 2] = [80, 90];

/// Compiler threads: NVRTC is thread-safe and each compile is single-threaded.
const COMPILE_THREADS: usize = 8;

/// Set to a folder to keep every cubin there as `<program>-sm<arch>.cubin`, for
/// scripts/kernel_resources.py (registers, spills and shared memory of each kernel, no GPU), and
/// every program's source as `<program>` (its name ends in `.cu`), for scripts/emulate.
const CUBIN_DUMP_ENV: &str = "TWOPHASE_CUBIN_DUMP";

/// With a dump folder, set to a text to compile (and dump) only the programs whose name holds it.
const CUBIN_FILTER_ENV: &str = "TWOPHASE_CUBIN_FILTER";

/// Whether NVRTC can be loaded; without it the test is skipped, unless CI is set (then it fails).
fn nvrtc_or_skip() -> bool {
    if nvrtc_available() {
        return true;
    }
    let on_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    assert!(!on_ci, "CI is set but libnvrtc cannot be loaded: set LD_LIBRARY_PATH to nvidia-cuda-nvrtc's lib folder");
    eprintln!("SKIPPED: libnvrtc not found (CI unset); install nvidia-cuda-nvrtc==13.0.88 and set LD_LIBRARY_PATH");
    false
}

#[test]
fn every_shipped_kernel_compiles_for_sm80_and_sm90_without_warnings() {
    if !nvrtc_or_skip() {
        return;
    }
    let version = nvrtc_version().expect("NVRTC version");
    let mut programs = shipped_programs_of::<MergeTuning>();
    programs.extend(shipped_programs_of::<MergesortTuning>());
    programs.extend(shipped_load_balance_programs());
    programs.extend(shipped_sorted_search_programs());
    programs.extend(shipped_programs_of::<TextbookMergeTuning>());
    programs.extend(shipped_programs_of::<BatcherTuning>());
    programs.extend(shipped_programs_of::<SegmentedSortTuning>());
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
                match compile_cubin_with_log(&program.source, &program.name, arch) {
                    Ok((cubin, log)) => {
                        assert!(!cubin.is_empty(), "{} sm_{arch}: empty cubin", program.name);
                        if log.contains("warning") {
                            let warned = format!("{} sm_{arch} warns:\n{log}", program.name);
                            failures.lock().expect("lock").push(warned);
                        }
                        if let Some(dir) = &dump {
                            let file = dir.join(format!("{}-sm{arch}.cubin", program.name));
                            std::fs::write(&file, &cubin).expect("write cubin");
                            // The source too, for scripts/emulate (host emulation under ASan).
                            let source = dir.join(&program.name);
                            std::fs::write(&source, &program.source).expect("write source");
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

/// Architecture of the probes below.
const PROBE_ARCH: u32 = 90;

/// Threads and items per thread of the probe programs (compiled only, never launched).
const PROBE_THREADS: u32 = 128;
const PROBE_VT: u32 = 1;

/// The probe program: `sources` after the prelude for key `K`, comparator `comp` and `values`.
fn probe<K: DeviceKey, C: DeviceComparator<K>>(
    sources: &[&str],
    comp: &C,
    values: ValueLayout,
) -> Program {
    program::<K, C>("probe", sources, comp, values, PROBE_THREADS, PROBE_VT)
}

/// A kernel that is not CUDA.
const NOT_CUDA: &str = "__global__ void k() { this_is_not_cuda; }";

#[test]
fn a_compile_error_keeps_the_log_and_the_name() {
    if !nvrtc_or_skip() {
        return;
    }
    let err = compile_cubin(NOT_CUDA, "broken_probe.cu", PROBE_ARCH).expect_err("must not compile");
    let text = err.to_string();
    assert!(text.contains("broken_probe.cu"), "{text}");
    assert!(text.contains("this_is_not_cuda"), "{text}");
}

/// A kernel calling the comparator, so that the prelude and the comparator are instantiated.
const PROBE_KERNEL: &str = "extern \"C\" __global__ void twophase_probe(const key_type* keys, \
                            bool* out) {\n  key_compare less;\n  *out = less(keys[0], keys[1]);\n}\n";

/// The log of a compile that must fail with [`GpuError::Compile`].
fn compile_log(source: &str, name: &str) -> String {
    match compile_cubin(source, name, PROBE_ARCH) {
        Err(GpuError::Compile { name: got, log, .. }) => {
            assert_eq!(got, name);
            log
        }
        Err(other) => panic!("expected a compile error, got {other}"),
        Ok(_) => panic!("{name} compiled"),
    }
}

/// A 4-byte Rust key whose CUDA definition says 16 bytes.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Narrow {
    key: u32,
}

device_key!(Narrow => "narrow", "struct narrow { unsigned int key; unsigned int pad[3]; };");

/// A 4-byte, 4-aligned Rust key whose CUDA definition is 4 bytes but 8-aligned... impossible
/// in C++ (sizes are multiples of alignments), so: 8 bytes in both, 4-aligned in Rust and
/// 8-aligned in CUDA.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Overaligned {
    halves: [u32; 2],
}

device_key!(Overaligned => "overaligned", "struct overaligned { unsigned long long bits; };");

/// A user key whose CUDA definition matches the Rust layout.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Record {
    key: u32,
    tag: u32,
}

device_key!(Record => "record", "struct record { unsigned int key; unsigned int tag; };");

/// The probe program of user key `K` (values of `values` layout) under the comparator `by_<field>`,
/// whose CUDA body compares `field` and whose Rust predicate is `is_less`.
fn user_key_probe<K: DeviceKey>(
    field: &str,
    is_less: fn(&K, &K) -> bool,
    values: ValueLayout,
) -> Program {
    let body = format!("return a.{field} < b.{field};");
    let comp = CudaComparator::new(&format!("by_{field}"), &body, is_less);
    probe::<K, _>(&[PROBE_KERNEL], &comp, values)
}

#[test]
fn a_layout_mismatched_user_key_does_not_compile() {
    if !nvrtc_or_skip() {
        return;
    }
    let probe = user_key_probe::<Narrow>("key", |a, b| a.key < b.key, None);
    let log = compile_log(&probe.source, &probe.name);
    assert!(log.contains("static assertion failed"), "{log}");
    assert!(
        log.contains("the CUDA key type `narrow` must be 4 bytes"),
        "{log}"
    );
    assert!(log.contains("Narrow`"), "the Rust type is named: {log}");

    let probe = user_key_probe::<Overaligned>("bits", |a, b| a.halves < b.halves, None);
    let log = compile_log(&probe.source, &probe.name);
    assert!(log.contains("must be aligned to at most 4 bytes"), "{log}");

    let probe = user_key_probe::<Record>("key", |a, b| a.key < b.key, Some((12, 4)));
    compile_cubin(&probe.source, &probe.name, PROBE_ARCH).expect("a matching user key compiles");
}

/// The log of the probe program under the `u32` user comparator `name` whose CUDA `body` does
/// not compile.
fn broken_comparator_log(name: &str, body: &str) -> String {
    let comp = CudaComparator::new(name, body, |a: &u32, b: &u32| a < b);
    let probe = probe::<u32, _>(&[PROBE_KERNEL], &comp, None);
    compile_log(&probe.source, &probe.name)
}

#[test]
fn a_comparator_without_return_does_not_compile() {
    if !nvrtc_or_skip() {
        return;
    }
    let log = broken_comparator_log("no_return", "a < b;");
    assert!(
        log.contains("comparator no_return("),
        "the snippet is named: {log}"
    );
    assert!(log.contains("missing return statement"), "{log}");

    let log = broken_comparator_log("broken", "return a <> b;");
    assert!(
        log.contains("comparator broken(1): error"),
        "the line is the snippet's: {log}"
    );

    let probe = probe::<u32, _>(&[PROBE_KERNEL], &Less, None);
    let (_, log) = compile_cubin_with_log(&probe.source, &probe.name, PROBE_ARCH)
        .expect("the built-in comparator compiles");
    assert!(!log.contains("warning"), "{log}");
}

#[test]
fn an_error_after_a_snippet_points_at_the_generated_line() {
    if !nvrtc_or_skip() {
        return;
    }
    let probe = probe::<u32, _>(&["this_is_not_cuda;"], &Less, None);
    let log = compile_log(&probe.source, &probe.name);
    let line = probe
        .source
        .lines()
        .position(|l| l == "this_is_not_cuda;")
        .expect("line")
        + 1;
    assert!(
        log.contains(&format!("{}({line}): error", probe.name)),
        "line {line}: {log}"
    );
}

/// A probe kernel's parameter block as Rust would lay it out: an address, then a 32-bit count.
const PROBE_PARAMS: ParamLayout = ParamLayout {
    cuda_name: "probe_params",
    kernels: &[],
    size: 16,
    fields: &[("data", 0, 8), ("count", 8, 4)],
};

/// The probe's program: its CUDA twin struct, the kernel's parameter list, the generated asserts.
fn probe_program(twin_fields: &str, param_block: &str) -> String {
    format!(
        "namespace twophase {{ struct probe_params {{ {twin_fields} }}; }}\n\
         extern \"C\" __global__ void twophase_probe({param_block}) {{ data[0] = count; }}\n{}",
        param_asserts(&[&PROBE_PARAMS])
    )
}

#[test]
fn a_parameter_block_must_match_its_twin_and_its_kernel() {
    if !nvrtc_or_skip() {
        return;
    }
    let matching = probe_program(
        "int* data; unsigned count;",
        "int* __restrict__ data, unsigned count",
    );
    compile_cubin(&matching, "probe_matching.cu", PROBE_ARCH).expect("matching block compiles");
    // What is wrong, the twin's fields, the kernel's parameters, the program, what the log says.
    let mismatches = [
        (
            "the kernel takes the fields in another order than its twin declares them",
            "int* data; unsigned count;",
            "unsigned count, int* data",
            "probe_swapped.cu",
            "the parameters of `twophase_probe`",
        ),
        (
            "the twin declares the fields in another order than Rust lays them out",
            "unsigned count; int* data;",
            "unsigned count, int* data",
            "probe_moved.cu",
            "`probe_params::data` must lie at byte 0",
        ),
        (
            "a field of another size",
            "int* data; unsigned long long count;",
            "int* data, unsigned long long count",
            "probe_narrow.cu",
            "`probe_params::count`",
        ),
    ];
    for (wrong, twin_fields, param_block, name, expected) in mismatches {
        let log = compile_log(&probe_program(twin_fields, param_block), name);
        assert!(log.contains(expected), "{wrong}: {log}");
    }
}

/// Keys and values past 8 bytes sort with two-way passes only (no four-way kernels compiled):
/// the shipped primitive keys never do, so this compiles one such program.
#[test]
fn a_mergesort_without_four_way_passes_compiles() {
    if !nvrtc_or_skip() {
        return;
    }
    let tuning = MergesortTuning::for_types(8, 16);
    assert_eq!(tuning.quad_threads, 0, "{tuning:?}");
    let program = tuning.program::<u64, _>(&Less, Some((16, 8)));
    for arch in CI_ARCHS {
        compile_cubin(&program.source, &program.name, arch).expect("two-way-only mergesort");
    }
}

/// A 24-byte user record: keys of 9 to 32 bytes take 256 x 11 block sorts and four-way passes.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Record24 {
    time: u64,
    user: u32,
    tag: u32,
    value: f64,
}

device_key!(Record24 => "record24", "struct record24 { unsigned long long time; unsigned int user; unsigned int tag; double value; };");

/// A 48-byte user record: the widest keys with four-way passes (128 x 7 tiles).
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Record48 {
    time: u64,
    words: [u64; 5],
}

device_key!(Record48 => "record48", "struct record48 { unsigned long long time; unsigned long long words[5]; };");

/// The mergesort programs of `K` under a user comparator on `time` (checked, and vouched for)
/// at both shipped tunings, compiled for every CI architecture without warnings.
fn wide_mergesort_compiles<K: DeviceKey>(is_less: fn(&K, &K) -> bool) {
    let checked = CudaComparator::new("by_time", "return a.time < b.time;", is_less);
    // SAFETY: `<` on the u64 field is a strict weak order, in CUDA and in Rust.
    let vouched = unsafe {
        twophase_gpu::TrustedComparator::new(CudaComparator::new(
            "by_time",
            "return a.time < b.time;",
            is_less,
        ))
    };
    let comps: [&dyn DeviceComparator<K>; 2] = [&checked, &vouched];
    for rule in MergesortTuning::SHIPPED {
        let tuning = rule(std::mem::size_of::<K>(), 0);
        assert!(tuning.quad_threads > 0, "{tuning:?}: no four-way passes");
        for comp in comps {
            let program = tuning.program::<K, dyn DeviceComparator<K>>(comp, None);
            for arch in CI_ARCHS {
                let (cubin, log) = compile_cubin_with_log(&program.source, &program.name, arch)
                    .unwrap_or_else(|e| panic!("{} sm_{arch}: {e}", program.name));
                assert!(!cubin.is_empty(), "{} sm_{arch}: empty cubin", program.name);
                assert!(
                    !log.contains("warning"),
                    "{} sm_{arch} warns:\n{log}",
                    program.name
                );
            }
        }
    }
}

#[test]
fn wide_user_keys_compile_with_four_way_passes() {
    if !nvrtc_or_skip() {
        return;
    }
    wide_mergesort_compiles::<Record24>(|a, b| a.time < b.time);
    wide_mergesort_compiles::<Record48>(|a, b| a.time < b.time);
}
