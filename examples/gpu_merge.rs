//! Example: merge two sorted vectors (keys, then key-value pairs) on the GPU if present, else on the CPU.
//!
//! `cargo run --release --example gpu_merge`. The crate-root calls (`twophase::merge`, ...) run on the default GPU
//! when this machine has one and on the CPU backend (`twophase::cpu`) otherwise; a GPU that is present but
//! fails returns its error instead of falling back. The result is checked against std either way.

mod common;

use rand::rngs::StdRng;
use rand::Rng;
use twophase::Error;

/// Keys in each input: enough to fill a GPU with tiles, quick on two CPU cores.
const KEYS_PER_INPUT: usize = 1 << 20;
/// Keys are drawn from `0..KEY_RANGE`: far fewer values than keys, so that equal keys in A and
/// B are common and the stable tie rule (A's before B's) is exercised.
const KEY_RANGE: u32 = 1 << 12;
/// Seed of the generator, so that every run merges the same inputs.
const SEED: u64 = 6;

fn sorted_keys(rng: &mut StdRng, n: usize) -> Vec<u32> {
    let mut keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..KEY_RANGE)).collect();
    keys.sort_unstable();
    keys
}

fn main() -> Result<(), Error> {
    common::run("merging", SEED, merge_demo)
}

/// Merges two sorted key vectors, then the same keys with values, checking both against std.
fn merge_demo(rng: &mut StdRng) -> Result<(), Error> {
    let a = sorted_keys(rng, KEYS_PER_INPUT);
    let b = sorted_keys(rng, KEYS_PER_INPUT);

    // Keys only.
    let merged = twophase::merge(&a, &b)?;
    let mut expected = [a.as_slice(), b.as_slice()].concat();
    expected.sort_unstable();
    assert_eq!(merged, expected, "merge differs from std");
    println!(
        "merged {} + {} keys: verified against std",
        a.len(),
        b.len()
    );

    // Key-value pairs: each value records where its key came from (A's positions, then B's
    // shifted past them), so stability is visible: equal keys keep A's before B's, each side in
    // its own order, which is exactly a stable sort of the concatenation.
    let a_vals: Vec<u32> = (0..a.len() as u32).collect();
    let b_vals: Vec<u32> = (a.len() as u32..(a.len() + b.len()) as u32).collect();
    let (keys, vals) = twophase::merge_pairs_by(&a, &a_vals, &b, &b_vals, &twophase::Less)?;
    let mut pairs: Vec<(u32, u32)> = a
        .iter()
        .zip(&a_vals)
        .chain(b.iter().zip(&b_vals))
        .map(|(&k, &v)| (k, v))
        .collect();
    pairs.sort_by_key(|&(k, _)| k); // stable
    let merged_pairs: Vec<(u32, u32)> = keys.into_iter().zip(vals).collect();
    assert_eq!(merged_pairs, pairs, "pair merge is not the stable merge");
    println!(
        "merged {} key-value pairs: stable, verified against std",
        merged_pairs.len()
    );
    Ok(())
}
