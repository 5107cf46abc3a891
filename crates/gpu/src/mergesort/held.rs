//! A mergesort's last merge pass held back: its tiles launched later, by ranges of the sorted output.

use std::ops::Range;

use cudarc::driver::CudaFunction;

use super::params::{MergesortOctTileParams, MergesortQuadTileParams, MergesortTileParams};
use crate::error::GpuError;
use crate::runtime::device::Gpu;
use crate::runtime::launch::LaunchShape;

/// The parameter block of a held last pass's tile kernel, by the pass's kind.
#[derive(Clone, Copy, Debug)]
pub(super) enum HeldParams {
    /// A two-way pass's.
    Two(MergesortTileParams),
    /// A four-way pass's.
    Four(MergesortQuadTileParams),
    /// An eight-way pass's.
    Eight(MergesortOctTileParams),
}

/// A sort's last merge pass whose tiles are not launched yet ([`MergesortScratch::launch_passes`]
/// with `hold_last`): its partitions are launched on the handle's stream, and
/// [`launch_tiles`](Self::launch_tiles) merges any range of its tiles, so that a caller can
/// write one range of the sorted output before the rest (the sort across GPUs sends the part
/// that leaves its device first). The keys are sorted once every tile is launched.
#[derive(Clone, Debug)]
pub(crate) struct HeldPass {
    function: CudaFunction,
    /// The tile kernel's threads and dynamic shared memory (the grid is set per launch).
    shape: LaunchShape,
    params: HeldParams,
    /// Tiles of the pass.
    pub(crate) tiles: usize,
    /// Outputs of each tile but the last.
    pub(crate) tile_outputs: usize,
    /// Length of the sorted runs the pass merges (the last may be shorter).
    pub(crate) run: usize,
    /// Whether those runs lie in the scratch's key buffer (else in the sort's keys).
    pub(crate) runs_in_scratch: bool,
}

impl HeldPass {
    pub(super) fn new(
        function: &CudaFunction,
        shape: LaunchShape,
        params: HeldParams,
        tiles: usize,
        tile_outputs: usize,
        run: u64,
        runs_in_scratch: bool,
    ) -> Self {
        HeldPass {
            function: function.clone(),
            shape,
            params,
            tiles,
            tile_outputs,
            run: run as usize,
            runs_in_scratch,
        }
    }

    /// The tiles whose outputs meet `outputs` (a range of the sorted keys' positions).
    pub(crate) fn tiles_of(&self, outputs: Range<usize>) -> Range<usize> {
        if outputs.is_empty() {
            return 0..0;
        }
        let first = (outputs.start / self.tile_outputs).min(self.tiles);
        first..outputs.end.div_ceil(self.tile_outputs).min(self.tiles)
    }

    /// Merge the pass's `tiles` (within `0..tiles`; an empty range launches nothing) on `gpu`'s
    /// stream, the handle that held the pass.
    pub(crate) fn launch_tiles(&self, gpu: &Gpu, tiles: Range<usize>) -> Result<(), GpuError> {
        if tiles.end > self.tiles {
            return Err(GpuError::Poisoned("held pass: tiles past the pass's end"));
        }
        if tiles.is_empty() {
            return Ok(());
        }
        let grid = u32::try_from(tiles.len()).map_err(|_| GpuError::Poisoned("held pass grid"))?;
        let shape = LaunchShape { grid, ..self.shape };
        let first_tile = tiles.start as u64;
        // SAFETY: each block is the tile kernel's whose launch the pass held, with that
        // launch's parameters (buffers of `count` keys and values that the caller keeps alive
        // until the stream has run every tile, the partitions and cuts launched before on this
        // stream), threads and shared memory; only the first tile moves, and the grid ends at
        // or before the pass's last tile, as the held launch's did.
        unsafe {
            match self.params {
                HeldParams::Two(params) => gpu.launch(
                    &self.function,
                    shape,
                    &MergesortTileParams {
                        first_tile,
                        ..params
                    },
                ),
                HeldParams::Four(params) => gpu.launch(
                    &self.function,
                    shape,
                    &MergesortQuadTileParams {
                        first_tile,
                        ..params
                    },
                ),
                HeldParams::Eight(params) => gpu.launch(
                    &self.function,
                    shape,
                    &MergesortOctTileParams {
                        first_tile,
                        ..params
                    },
                ),
            }
        }
    }
}
