//! Shared support of the GPU integration tests: the GPU under test and a seeded, reported RNG.
#![allow(dead_code)] // Each test file uses the part it needs.

use rand::rngs::StdRng;
use rand::SeedableRng;
use twophase::gpu::{CudaComparator, DeviceKey, Gpu};

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

/// A user key: compared by `key` only, `tag` rides along and proves stability.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rec {
    pub key: u32,
    pub tag: u32,
}

impl DeviceKey for Rec {
    const CUDA_TYPE: &'static str = "rec";
    const CUDA_DEFINITION: &'static str = "struct rec { unsigned int key; unsigned int tag; };";
}

/// A user comparator on [`Rec`]: descending by key, as a CUDA snippet and the same Rust predicate.
pub fn rec_key_descending() -> CudaComparator<Rec, fn(&Rec, &Rec) -> bool> {
    CudaComparator::new(
        "rec_key_desc",
        "return a.key > b.key;",
        |a: &Rec, b: &Rec| a.key > b.key,
    )
}
