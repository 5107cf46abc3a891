//! The textbook merges and Batcher's sort: teaching material built on the runtime and the merge, kept beside the two-phase primitives for comparison.

pub mod batcher;
pub mod textbook;
