//! twophase: merge, mergesort, load-balanced search and sorted search built the two-phase way.
//!
#![doc = include_str!("../README.md")]
pub mod cpu;
pub mod gpu;
pub mod order;
#[doc = include_str!("../docs/search.md")]
pub mod search_guide {}
#[doc = include_str!("../docs/guide.md")]
pub mod guide {}
