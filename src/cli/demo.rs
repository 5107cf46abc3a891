//! `twophase` without a subcommand: sort and merge random keys on the backend the crate-root calls use, verify against std, print the throughput.
//!
//! Times are host-clock times of whole calls: on the GPU they include the copies of the keys to
//! and from the device (`twophase bench` and the benchmarks in `benches/` say more).

use std::time::Instant;

use twophase::{Backend, Less};

use super::error::CliError;

/// Keys per job unless `--n` says otherwise: large enough to fill a GPU, small enough for a laptop.
pub const DEFAULT_KEYS: usize = 10_000_000;
/// Seed of the key generator, so every run checks the same keys.
const SEED: u64 = 0x2f6e_2b1d_5a3c_9e01;
/// The fewest keys a run takes: the merge needs two halves.
const MIN_KEYS: usize = 2;

/// SplitMix64: a fast, well-mixed generator of test keys, `n` of them from `state`.
pub fn random_keys(n: usize, mut state: u64) -> Vec<u32> {
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

/// The demo on `n` keys.
pub fn run(n: usize) -> Result<(), CliError> {
    if n < MIN_KEYS {
        return Err(CliError::Usage(format!("--n must be at least {MIN_KEYS}")));
    }
    let keys = random_keys(n, SEED);
    let mut expected = keys.clone();
    expected.sort_unstable();

    let backend = match twophase::backend() {
        Backend::Gpu => "gpu",
        Backend::Cpu => "cpu",
    };
    if let Some(device) = twophase::gpu::default_gpu() {
        // Compile (or load from the disk cache) the kernels first, so the timings below are the
        // primitives' own: one call of each, the sort at the job's size since its tuning (and so
        // its program) depends on the size.
        let start = Instant::now();
        twophase::sort_by(&mut keys.clone(), &Less)
            .and_then(|()| twophase::merge_by(&keys[..1], &keys[1..2], &Less))
            .map_err(|e| CliError::Usage(format!("GPU present but unusable: {e}")))?;
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
    twophase::sort_by(&mut sorted, &Less)?;
    let sort_ok = sorted == expected;
    report(
        "mergesort",
        backend,
        n,
        start.elapsed().as_secs_f64(),
        sort_ok,
    );

    // Two sorted halves of the random keys, so that the merge really interleaves them.
    let mut a = keys[..n / 2].to_vec();
    let mut b = keys[n / 2..].to_vec();
    a.sort_unstable();
    b.sort_unstable();
    let start = Instant::now();
    let merged = twophase::merge_by(&a, &b, &Less)?;
    let merge_ok = merged == expected;
    report("merge", backend, n, start.elapsed().as_secs_f64(), merge_ok);

    println!(
        "\n`twophase info` says which backend runs here and why; `twophase bench --quick` \
         measures this machine against std and rayon; `twophase --help` lists the commands"
    );
    if sort_ok && merge_ok {
        Ok(())
    } else {
        Err(CliError::Mismatch(
            "a result differs from std's (see above)".to_owned(),
        ))
    }
}
