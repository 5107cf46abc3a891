//! The merge passes that follow a sort's block sort: how many levels, and which kind of pass merges them.

/// The merge passes of one sort
/// ([`MergesortTuning::pass_plan`](super::MergesortTuning::pass_plan)), in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassPlan {
    /// Two-way passes (one merge level each), first.
    pub two_way: u32,
    /// Four-way passes (two levels each), next.
    pub four_way: u32,
    /// Eight-way passes (three levels each), last.
    pub eight_way: u32,
}

impl PassPlan {
    /// Kernel passes over the keys after the block sort.
    pub const fn passes(&self) -> u32 {
        self.two_way + self.four_way + self.eight_way
    }
}

/// Number of two-way merge passes after the block sort: ceil(log2(tiles)).
pub const fn merge_passes(count: usize, tile: usize) -> u32 {
    let tiles = count.div_ceil(tile);
    if tiles <= 1 {
        0
    } else {
        usize::BITS - (tiles - 1).leading_zeros()
    }
}
