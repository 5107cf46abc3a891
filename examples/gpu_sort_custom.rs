//! Example: stable sort of a user `#[repr(C)]` struct with a CUDA comparator and its Rust twin.
//!
//! `cargo run --release --example gpu_sort_custom`. Particles are binned by grid cell: sorted by
//! `cell` only, so the sort's stability keeps each cell's particles in their original (`id`)
//! order. On a GPU the comparator's CUDA body is compiled into the mergesort by NVRTC; without
//! one the same sort runs on the CPU backend with the Rust closure. The two must agree, as they
//! do for the built-in comparators.

mod common;

use rand::rngs::StdRng;
use rand::Rng;
use twophase::bytemuck;
use twophase::{CudaComparator, Error};

/// A particle: its grid cell, its id (its position before the sort) and its energy. `#[repr(C)]`
/// with no padding, so the same bytes are the CUDA `struct particle` below.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[bytemuck(crate = "twophase::bytemuck")]
#[repr(C)]
struct Particle {
    cell: u32,
    id: u32,
    energy: f32,
}

twophase::device_key!(
    Particle => "particle",
    "struct particle { unsigned int cell; unsigned int id; float energy; };"
);

/// Particles to sort: a few million on a GPU would be the point, this many keeps the CPU run short.
const PARTICLES: usize = 1 << 18;
/// Grid cells: many particles share a cell, so stability matters.
const CELLS: u32 = 1 << 10;
/// Seed of the generator, so that every run sorts the same particles.
const SEED: u64 = 11;

fn main() -> Result<(), Error> {
    common::run("sorting", SEED, sort_demo)
}

/// Sorts particles by cell with a user comparator, checking the result against std's stable sort.
fn sort_demo(rng: &mut StdRng) -> Result<(), Error> {
    let mut particles: Vec<Particle> = (0..PARTICLES as u32)
        .map(|id| Particle {
            cell: rng.gen_range(0..CELLS),
            id,
            energy: rng.gen(),
        })
        .collect();
    let mut expected = particles.clone();
    expected.sort_by_key(|p| p.cell); // std's stable sort: the reference

    // The comparator: the body of `bool operator()(const particle& a, const particle& b)` in
    // CUDA, and the same strict weak order in Rust.
    let by_cell = CudaComparator::new(
        "particle_by_cell",
        "return a.cell < b.cell;",
        |a: &Particle, b: &Particle| a.cell < b.cell,
    );
    twophase::sort_by(&mut particles, &by_cell)?;

    assert!(
        particles
            .windows(2)
            .all(|w| w[0].cell < w[1].cell || (w[0].cell == w[1].cell && w[0].id < w[1].id)),
        "not sorted by cell with ids ascending inside each cell"
    );
    assert_eq!(particles, expected, "differs from std's stable sort");
    let first_cell = particles
        .iter()
        .take_while(|p| p.cell == particles[0].cell)
        .count();
    println!(
        "sorted {PARTICLES} particles into {CELLS} cells, stable (cell {} holds {first_cell}, ids in order): verified against std",
        particles[0].cell
    );
    Ok(())
}
