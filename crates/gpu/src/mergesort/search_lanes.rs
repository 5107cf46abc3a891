//! Lanes a search: how many threads of a warp search each two-way pass boundary or four-way cut.

use super::tuning::{MergesortTuning, WARP_LANES};
use crate::runtime::shape::lanes_within;

impl MergesortTuning {
    /// Lanes per four-way cut for `cuts` cuts on a device of `multiprocessors` SMs: a warp where
    /// that keeps the partition's threads within `quad_cut_warp_threads_per_sm` an SM, else the
    /// most (a power of two) that keep them within `quad_cut_threads_per_sm`, and at least one.
    /// Fewer cuts than that leave the memory system idle while each cut's chain of dependent
    /// loads runs, so more lanes shorten the chains; more cuts already fill it, and more lanes
    /// would only add loads.
    pub fn quad_cut_lanes(&self, cuts: usize, multiprocessors: u32) -> u32 {
        if lanes_within(self.quad_cut_warp_threads_per_sm, cuts, multiprocessors) == WARP_LANES {
            WARP_LANES
        } else {
            lanes_within(self.quad_cut_threads_per_sm, cuts, multiprocessors)
        }
    }

    /// Lanes per two-way partition search for `boundaries` searches on a device of
    /// `multiprocessors` SMs: a whole warp where that keeps within
    /// `boundary_search_threads_per_sm` threads an SM, else the binary search of one lane. With a
    /// warp (and the tuning's lanes automatic), a two-way pass has no partition kernel: each tile
    /// block searches its own two.
    pub fn boundary_search_lanes(&self, boundaries: usize, multiprocessors: u32) -> u32 {
        let lanes = lanes_within(
            self.boundary_search_threads_per_sm,
            boundaries,
            multiprocessors,
        );
        if lanes == WARP_LANES {
            WARP_LANES
        } else {
            1
        }
    }
}
