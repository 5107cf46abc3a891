//! What the examples share: say which backend runs the demo, then run it on a seeded generator.

use rand::rngs::StdRng;
use rand::SeedableRng;
use twophase::{Backend, Error};

/// Runs `demo` on a generator seeded with `seed` (so that every run sees the same inputs), after
/// printing `doing` ("merging", ...) and which backend the crate-root calls take: the default
/// GPU when this machine has a usable one, else the CPU backend.
pub fn run(
    doing: &str,
    seed: u64,
    demo: impl FnOnce(&mut StdRng) -> Result<(), Error>,
) -> Result<(), Error> {
    let backend = match twophase::backend() {
        Backend::Gpu => "the GPU (device 0)",
        Backend::Cpu => "the CPU backend (no usable GPU here)",
    };
    println!("{doing} on {backend}");
    demo(&mut StdRng::seed_from_u64(seed))
}
