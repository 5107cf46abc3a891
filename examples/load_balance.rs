//! Example: expand a CSR graph's rows into an edge list with the load-balancing search.
//!
//! `cargo run --release --example load_balance`. A CSR graph gives each vertex the offset of its
//! first edge; the load-balancing search hands every edge its source vertex (its segment) and its
//! position in that vertex's adjacency list (its rank) with no per-edge binary search, however
//! uneven the degrees are (docs/search.md). Runs on the GPU if present, else the CPU backend, and
//! is checked against the plain nested loop.

mod common;

use rand::rngs::StdRng;
use rand::Rng;
use twophase::Error;

/// Vertices of the generated graph.
const VERTICES: usize = 100_000;
/// Degrees are drawn from `0..=MAX_DEGREE` with a skew (see `degree`): most vertices have a few
/// edges, some have hundreds, and some none — the uneven work a load-balancing search is for.
const MAX_DEGREE: usize = 400;
/// Seed of the generator, so that every run expands the same graph.
const SEED: u64 = 27;

/// A skewed degree: the cube of a uniform number in [0, 1) scaled to `MAX_DEGREE`.
fn degree(rng: &mut StdRng) -> usize {
    let u: f64 = rng.gen();
    (u * u * u * MAX_DEGREE as f64) as usize
}

fn main() -> Result<(), Error> {
    common::run("expanding", SEED, expand_demo)
}

/// Expands a random CSR graph into its edge list, checking it against the nested loop.
fn expand_demo(rng: &mut StdRng) -> Result<(), Error> {
    // CSR: row_offsets[v] = first edge of v (an exclusive scan of the degrees), plus the total.
    let mut row_offsets = Vec::with_capacity(VERTICES + 1);
    row_offsets.push(0usize);
    for _ in 0..VERTICES {
        let next = row_offsets[row_offsets.len() - 1] + degree(rng);
        row_offsets.push(next);
    }
    let edges = row_offsets[VERTICES];
    let columns: Vec<u32> = (0..edges)
        .map(|_| rng.gen_range(0..VERTICES as u32))
        .collect();
    let scan = &row_offsets[..VERTICES];

    // Every edge's source vertex and its rank in that vertex's adjacency list.
    let sources = twophase::load_balance_search_with_ranks(scan, edges)?;
    let edge_list: Vec<(u32, u32)> = sources
        .iter()
        .zip(&columns)
        .map(|(&(src, _), &dst)| (src as u32, dst))
        .collect();

    // The same by the sequential nested loop.
    let mut expected_sources = Vec::with_capacity(edges);
    let mut expected_edges = Vec::with_capacity(edges);
    for v in 0..VERTICES {
        let adjacency = &columns[row_offsets[v]..row_offsets[v + 1]];
        for (rank, &dst) in adjacency.iter().enumerate() {
            expected_sources.push((v, rank));
            expected_edges.push((v as u32, dst));
        }
    }
    assert_eq!(
        sources, expected_sources,
        "segments or ranks differ from the nested loop"
    );
    assert_eq!(edge_list, expected_edges);

    // Interval expand: a per-vertex value (here the vertex's degree) replicated over its edges.
    let degrees: Vec<u32> = row_offsets
        .windows(2)
        .map(|w| (w[1] - w[0]) as u32)
        .collect();
    let edge_degrees = twophase::interval_expand(scan, &degrees, edges)?;
    assert!(edge_list
        .iter()
        .zip(&edge_degrees)
        .all(|(&(src, _), &d)| d == degrees[src as usize]));

    let empty = degrees.iter().filter(|&&d| d == 0).count();
    let busiest = degrees.iter().max().copied().unwrap_or(0);
    println!(
        "{VERTICES} vertices ({empty} without edges, the busiest with {busiest}) -> {edges} edges: verified against the nested loop"
    );
    Ok(())
}
