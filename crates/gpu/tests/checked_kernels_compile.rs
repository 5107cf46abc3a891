//! CI check without a GPU: the checked kernels (a user comparator, never trusted) compile with NVRTC.

use twophase_gpu::merge::MergeTuning;
use twophase_gpu::mergesort::MergesortTuning;
use twophase_gpu::runtime::nvrtc::{compile_cubin, nvrtc_available};
use twophase_gpu::runtime::program::Program;
use twophase_gpu::{CudaComparator, DeviceComparator, ProgramTuning, SegmentedSortTuning};

/// Architectures CI compiles for: Ampere (A100) and Hopper (H100/H200).
const CI_ARCHS: [u32; 2] = [80, 90];

/// Set to a folder to keep every cubin there as `<program>-sm<arch>.cubin`.
const CUBIN_DUMP_ENV: &str = "TWOPHASE_CUBIN_DUMP";

/// A user comparator: not trusted, so the programs carry every input check.
fn user_less() -> impl DeviceComparator<u32> {
    CudaComparator::new("user_less", "return a < b;", |a: &u32, b: &u32| a < b)
}

fn checked_programs() -> Vec<Program> {
    let comp = user_less();
    assert!(!twophase_gpu::compare::is_trusted(&comp));
    let pairs = Some((4, 4));
    let mut programs = Vec::new();
    for values in [None, pairs] {
        let value_bytes = values.map_or(0, |(size, _)| size);
        programs.push(MergeTuning::for_types(4, value_bytes).program::<u32, _>(&comp, values));
        // Small sorts' VT, and for keys alone the one an order whose equivalents may differ
        // takes there.
        let shorter = MergesortTuning::for_small_sorts(4, value_bytes);
        let mut tunings = vec![
            MergesortTuning::for_types(4, value_bytes),
            MergesortTuning::within_static_shared(4, value_bytes),
            shorter,
        ];
        if values.is_none() {
            tunings.push(shorter.for_order(false));
            // The two-way tile bound to the most and the fewest registers the launches take.
            for bounded in [
                MergesortTuning::for_small_sorts_bounded::<128>(4, 0),
                MergesortTuning::within_static_shared_bounded::<64>(4, 0),
            ] {
                tunings.push(bounded);
                tunings.push(bounded.for_order(false));
            }
        }
        for tuning in tunings {
            programs.push(tuning.program::<u32, _>(&comp, values));
        }
        if values.is_none() {
            // u64 keys' two-way tile bound to fewer registers than the compiler takes.
            let comp64 =
                CudaComparator::new("user_less", "return a < b;", |a: &u64, b: &u64| a < b);
            programs
                .push(MergesortTuning::for_many_pass_tiles(8, 0).program::<u64, _>(&comp64, None));
        }
        // The segmented sort's checked tile path, and its short path's register sort that keeps
        // padding away from the comparator.
        programs
            .push(SegmentedSortTuning::for_types(4, value_bytes).program::<u32, _>(&comp, values));
    }
    programs
}

#[test]
fn checked_merge_mergesort_and_segmented_sort_kernels_compile() {
    if !nvrtc_available() {
        let on_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
        assert!(!on_ci, "CI is set but libnvrtc cannot be loaded");
        eprintln!("SKIPPED: libnvrtc not found (CI unset)");
        return;
    }
    let programs = checked_programs();
    // As in kernels_compile.rs: a folder to keep each cubin in, for scripts/kernel_resources.py.
    let dump = std::env::var_os(CUBIN_DUMP_ENV).map(std::path::PathBuf::from);
    if let Some(dir) = &dump {
        std::fs::create_dir_all(dir).expect("cubin dump folder");
    }
    let dump = &dump;
    let failures: Vec<String> = std::thread::scope(|scope| {
        let jobs: Vec<_> = programs
            .iter()
            .flat_map(|p| CI_ARCHS.iter().map(move |&arch| (p, arch)))
            .map(|(program, arch)| {
                scope.spawn(
                    move || match compile_cubin(&program.source, &program.name, arch) {
                        Ok(cubin) => {
                            if let Some(dir) = dump {
                                let path = dir.join(format!("{}-sm{arch}.cubin", program.name));
                                std::fs::write(path, cubin).expect("write cubin");
                            }
                            None
                        }
                        Err(e) => Some(format!("{} sm_{arch}: {e}", program.name)),
                    },
                )
            })
            .collect();
        jobs.into_iter()
            .filter_map(|job| job.join().expect("compile thread"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Only twophase's own orders, and a comparator its caller vouched for with the `unsafe`
/// `TrustedComparator::new`, compile the unchecked kernels; the generated prelude says which.
#[test]
fn only_vouched_comparators_compile_the_unchecked_kernels() {
    use twophase_gpu::compare::is_trusted;
    use twophase_gpu::{Less, TotalOrder, TrustedComparator};
    let prelude_says = |program: &Program, trusted: bool| {
        program
            .source
            .contains(&format!("static constexpr bool trusted_order = {trusted};"))
    };
    let tuning = MergesortTuning::for_types(4, 0);
    let user = user_less();
    assert!(!is_trusted(&user));
    assert!(prelude_says(&tuning.program::<u32, _>(&user, None), false));
    assert!(
        !is_trusted(&&user),
        "a reference trusts as its comparator does"
    );

    // SAFETY: `a < b` on u32 is a strict weak order, in CUDA and in Rust.
    let vouched = unsafe { TrustedComparator::new(user_less()) };
    assert!(is_trusted(&vouched));
    let program = tuning.program::<u32, _>(&vouched, None);
    assert!(prelude_says(&program, true));
    assert!(
        program.source.contains("return a < b;"),
        "the body is the user's"
    );
    assert_ne!(
        program.key,
        tuning.program::<u32, _>(&user, None).key,
        "the checked and unchecked programs are cached apart"
    );

    assert!(is_trusted::<u32, _>(&Less));
    let declared = CudaComparator::new("user_less", "return a < b;", |a: &u32, b: &u32| a < b)
        .with_identical_equivalents();
    assert!(declared.equivalents_identical() && !is_trusted(&declared));
    assert!(tuning
        .program::<u32, _>(&declared, None)
        .source
        .contains("static constexpr bool equivalents_identical = true;"));
    assert!(is_trusted::<f32, _>(&TotalOrder));
}
