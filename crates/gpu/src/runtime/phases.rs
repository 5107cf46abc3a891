//! The two phases of a merge-path launch: a partition kernel over the tile boundaries, then the tile kernel that depends on it.

use cudarc::driver::{CudaSlice, DevicePtrMut};

use crate::error::GpuError;
use crate::runtime::device::Gpu;
use crate::runtime::launch::LaunchShape;
use crate::runtime::shape::{partition_lanes, MAX_GRID_X, PARTITION_THREADS};
use crate::runtime::status::InputCheck;

/// What both kernels of a two-phase launch get besides their own buffers: the spacing of the
/// tile boundaries (merge outputs per tile), the partitions buffer, the lanes that search each
/// boundary together, the partition blocks' arrival count and the input check's words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PartitionArgs {
    pub(crate) spacing: u64,
    pub(crate) num_partitions: u64,
    pub(crate) partitions: u64,
    pub(crate) lanes: u64,
    pub(crate) arrivals: u64,
    pub(crate) status: u64,
    pub(crate) repair: u64,
    pub(crate) generation: u32,
}

/// A partition kernel's parameter block (`param_block!`): the kernel's own inputs, then the
/// fields that every partition kernel takes ([`PartitionArgs`]), in the order of its CUDA
/// struct; `new` builds it from the inputs and the launch's [`PartitionArgs`].
macro_rules! partition_params {
    ($(#[$meta:meta])* struct $name:ident as $cuda:literal { $($field:ident: $ty:ty),* $(,)? }) => {
        $crate::runtime::launch::param_block! {
            $(#[$meta])*
            struct $name as $cuda {
                $($field: $ty,)*
                spacing: u64,
                num_partitions: u64,
                partitions: u64,
                lanes: u64,
                arrivals: u64,
                ..check_words,
            }
        }

        impl $name {
            /// The block of the kernel's own inputs and the launch's partition arguments.
            fn new($($field: $ty,)* args: $crate::runtime::phases::PartitionArgs) -> Self {
                Self {
                    $($field,)*
                    spacing: args.spacing,
                    num_partitions: args.num_partitions,
                    partitions: args.partitions,
                    lanes: args.lanes,
                    arrivals: args.arrivals,
                    status: args.status,
                    repair: args.repair,
                    generation: args.generation,
                }
            }
        }
    };
}
pub(crate) use partition_params;

/// The scratch of two-phase launches, reusable across calls: the input check whose words the
/// kernels get, and the partitions buffer, which only grows.
#[derive(Debug, Default)]
pub(crate) struct PhaseScratch {
    pub(crate) input_check: InputCheck,
    partitions: Option<CudaSlice<u64>>,
    /// The partition kernel's count of arrived blocks (kernels/partition.cuh
    /// `search_partitions`): zeroed once, and back at 0 after every launch.
    arrivals: Option<CudaSlice<u32>>,
}

impl Gpu {
    /// The two phases of a launch over `count` merge outputs in tiles of `tile` outputs (`outputs`
    /// names what `count` counts, for the too-large error): takes the scratch's check words and
    /// partitions buffer, then runs `partition` (to launch the partition kernel at the shape
    /// given: blocks of PARTITION_THREADS, each boundary searched by a group of
    /// [`partition_lanes`] lanes, the blocks' groups covering all `count / tile + 1` of them)
    /// and `tiles` (to launch the tile kernel at the shape given: one
    /// block of `threads` per tile, a programmatic dependent of the partition kernel). Both get
    /// the same [`PartitionArgs`], whose buffers stay valid on this stream until both launches
    /// are made.
    pub(crate) fn launch_phases(
        &self,
        count: (usize, &str),
        tile: (usize, u32),
        scratch: &mut PhaseScratch,
        partition: impl FnOnce(LaunchShape, PartitionArgs) -> Result<(), GpuError>,
        tiles: impl FnOnce(LaunchShape, PartitionArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        self.launch_phases_checked(count, tile, scratch, None, partition, tiles)
    }

    /// [`launch_phases`](Self::launch_phases) with the check words taken from `check` instead
    /// of the scratch's own check when given (a caller that reads the launch's status apart from
    /// the scratch's, under its own names).
    pub(crate) fn launch_phases_checked(
        &self,
        (count, outputs): (usize, &str),
        (tile, threads): (usize, u32),
        scratch: &mut PhaseScratch,
        check: Option<&mut InputCheck>,
        partition: impl FnOnce(LaunchShape, PartitionArgs) -> Result<(), GpuError>,
        tiles: impl FnOnce(LaunchShape, PartitionArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let num_tiles = count.div_ceil(tile);
        let num_partitions = num_tiles + 1;
        if num_tiles as u64 > MAX_GRID_X {
            return Err(GpuError::TooLarge(format!(
                "{count} {outputs} need {num_tiles} tiles"
            )));
        }
        let stream = self.stream().clone();
        // The check words are taken first, then the partitions buffer.
        let check = check.unwrap_or(&mut scratch.input_check).call_args(self)?;
        let buf = self.grow_scratch(&mut scratch.partitions, num_partitions)?;
        let (partitions, _guard) = buf.device_ptr_mut(&stream);
        let lanes = self
            .partition_lanes_override()
            .unwrap_or_else(|| partition_lanes(num_partitions, self.multiprocessors()));
        let groups = (PARTITION_THREADS / lanes) as usize;
        let partition_blocks = u32::try_from(num_partitions.div_ceil(groups))
            .map_err(|_| GpuError::TooLarge(format!("{num_partitions} partitions")))?;
        let arrivals = self.arrivals_address(&mut scratch.arrivals)?;
        let args = PartitionArgs {
            spacing: tile as u64,
            num_partitions: num_partitions as u64,
            partitions,
            lanes: u64::from(lanes),
            arrivals,
            status: check.status,
            repair: check.repair,
            generation: check.generation,
        };
        partition(LaunchShape::new(partition_blocks, PARTITION_THREADS), args)?;
        tiles(
            LaunchShape::new(num_tiles as u32, threads).dependent(true),
            args,
        )
    }
}
