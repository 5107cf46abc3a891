//! twophase CLI: sort and merge random keys on the GPU if one is present, else the CPU; verify.
//!
//! Times are host-clock times of whole calls: on the GPU they include the copies of the keys to
//! and from the device (the benchmarks in `benches/` time the kernels alone).

use std::process::ExitCode;
use std::time::Instant;

use twophase::{Backend, Less};

/// Keys per job unless `--n` says otherwise: large enough to fill a GPU, small enough for a laptop.
const DEFAULT_KEYS: usize = 10_000_000;
/// Seed of the key generator, so every run checks the same keys.
const SEED: u64 = 0x2f6e_2b1d_5a3c_9e01;

/// SplitMix64: a fast, well-mixed generator for test keys (no dependency for the CLI).
fn random_keys(n: usize, mut state: u64) -> Vec<u32> {
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u32
        })
        .collect()
}

fn parse_args() -> Result<usize, String> {
    let mut n = DEFAULT_KEYS;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--n" => {
                let v = args.next().ok_or("--n needs a number of keys")?;
                n = v.parse().map_err(|e| format!("--n {v}: {e}"))?;
            }
            "-h" | "--help" => {
                println!("usage: twophase [--n KEYS]\n  sorts and merges KEYS random u32 keys, verifies against std, prints throughput");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(n)
}

fn report(what: &str, backend: &str, n: usize, seconds: f64, ok: bool) {
    println!(
        "{what:<10} {backend:<4} {n:>12} keys {:>10.3} ms {:>9.1} Mkeys/s  {}",
        seconds * 1e3,
        n as f64 / seconds / 1e6,
        if ok {
            "verified against std"
        } else {
            "MISMATCH against std"
        }
    );
}

fn main() -> ExitCode {
    let n = match parse_args() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("twophase: {e}");
            return ExitCode::FAILURE;
        }
    };
    if n < 2 {
        eprintln!("twophase: --n must be at least 2");
        return ExitCode::FAILURE;
    }
    let keys = random_keys(n, SEED);
    let mut expected = keys.clone();
    expected.sort_unstable();

    let mut all_ok = true;
    let backend = match twophase::backend() {
        Backend::Gpu => "gpu",
        Backend::Cpu => "cpu",
    };
    if let Some(device) = twophase::gpu::default_gpu() {
        // Compile (or load from the disk cache) the kernels first, so the timings below are the
        // primitives' own: one call of each, the sort at the job's size since its tuning (and so
        // its program) depends on the size.
        let start = Instant::now();
        let warm = twophase::sort_by(&mut keys.clone(), &Less)
            .and_then(|()| twophase::merge_by(&keys[..1], &keys[1..2], &Less));
        if let Err(e) = warm {
            eprintln!("twophase: GPU present but unusable: {e}");
            return ExitCode::FAILURE;
        }
        println!(
            "gpu: {} (sm_{}), kernels ready in {:.0} ms",
            device.name().unwrap_or_default(),
            device.arch(),
            start.elapsed().as_secs_f64() * 1e3
        );
    } else {
        println!("no CUDA GPU found: running on the CPU backend");
    }

    let mut sorted = keys.clone();
    let start = Instant::now();
    if let Err(e) = twophase::sort_by(&mut sorted, &Less) {
        eprintln!("twophase: mergesort failed: {e}");
        return ExitCode::FAILURE;
    }
    let ok = sorted == expected;
    report("mergesort", backend, n, start.elapsed().as_secs_f64(), ok);
    all_ok &= ok;

    // Two sorted halves of the random keys, so that the merge really interleaves them.
    let mut a = keys[..n / 2].to_vec();
    let mut b = keys[n / 2..].to_vec();
    a.sort_unstable();
    b.sort_unstable();
    let start = Instant::now();
    let merged = match twophase::merge_by(&a, &b, &Less) {
        Ok(merged) => merged,
        Err(e) => {
            eprintln!("twophase: merge failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ok = merged == expected;
    report("merge", backend, n, start.elapsed().as_secs_f64(), ok);
    all_ok &= ok;

    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
