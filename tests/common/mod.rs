//! Shared support of the GPU integration tests: the GPU under test and a seeded, reported RNG.
#![allow(dead_code)] // Each test file uses the part it needs.

use rand::rngs::StdRng;
use rand::SeedableRng;
use twophase::gpu::Gpu;

/// The GPU under test. A missing GPU is a failure, never a silent pass.
pub fn gpu() -> Gpu {
    match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("these tests need a CUDA GPU and found none: {e}"),
    }
}

/// A fresh random generator whose seed is printed, so a failure can be replayed.
pub fn rng() -> StdRng {
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    StdRng::seed_from_u64(seed)
}
