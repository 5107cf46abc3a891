//! The two-phase GPU mergesort: block sort of each tile, then merge passes split by merge path.

use std::mem::{align_of, size_of};

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg};

use crate::compare::DeviceComparator;
use crate::context::{kernel_param, Gpu, SortBuffers};
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::overlapped_blocks;
use crate::merge::MAX_GRID_X;
use crate::program::{
    check_launch_shape, check_launch_shape_within, program, program_id, shipped_programs, Program,
    ProgramFactory, ValueLayout, CTA_MERGESORT_CUH, CTA_MERGE_CUH, MAX_OPTIN_SHARED_BYTES,
    MAX_STATIC_SHARED_BYTES, MERGESORT_BLOCKSORT_CU, MERGESORT_ENTRY_BLOCKSORT,
    MERGESORT_ENTRY_PARTITION, MERGESORT_ENTRY_QUAD_PARTITION, MERGESORT_ENTRY_QUAD_TILE,
    MERGESORT_ENTRY_TILE, MERGESORT_PARTITION_CUH, MERGESORT_PASS_CU, MERGESORT_QUAD_PARTITION_CU,
    MERGESORT_QUAD_PARTITION_CUH, MERGESORT_QUAD_TILE_CU, PARTITION_CUH, PARTITION_THREADS,
    SERIAL_CUH,
};
use crate::status::{messages, CheckArgs, InputCheck, StatusNames, STATUS_ORDER_INCONSISTENT};

/// The mergesort's kernel sources, in the order they follow the prelude.
pub const MERGESORT_SOURCES: [&str; 10] = [
    PARTITION_CUH,
    SERIAL_CUH,
    CTA_MERGE_CUH,
    CTA_MERGESORT_CUH,
    MERGESORT_BLOCKSORT_CU,
    MERGESORT_PARTITION_CUH,
    MERGESORT_PASS_CU,
    MERGESORT_QUAD_PARTITION_CUH,
    MERGESORT_QUAD_PARTITION_CU,
    MERGESORT_QUAD_TILE_CU,
];

/// The mergesort's name in program names and cache keys, with its pass shape (the block-sort
/// shape is in every program's name already).
fn primitive_name(tuning: MergesortTuning) -> String {
    format!(
        "mergesort_pass{}_quad{}r{}",
        tuning.pass_threads, tuning.quad_threads, tuning.quad_registers
    )
}

/// The kernels of a mergesort program: the four-way pass's only when the tuning has them.
fn mergesort_entries(tuning: MergesortTuning) -> &'static [&'static str] {
    const TWO_WAY: [&str; 3] = [
        MERGESORT_ENTRY_BLOCKSORT,
        MERGESORT_ENTRY_PARTITION,
        MERGESORT_ENTRY_TILE,
    ];
    const FOUR_WAY: [&str; 5] = [
        MERGESORT_ENTRY_BLOCKSORT,
        MERGESORT_ENTRY_PARTITION,
        MERGESORT_ENTRY_TILE,
        MERGESORT_ENTRY_QUAD_PARTITION,
        MERGESORT_ENTRY_QUAD_TILE,
    ];
    if tuning.quad_threads > 0 {
        &FOUR_WAY
    } else {
        &TWO_WAY
    }
}

/// The mergesort program for key `K`, comparator `comp`, value layout and tuning: `TP_NT` is the
/// block sort's threads, `TP_PASS_NT` the merge passes'.
pub fn mergesort_program<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    comp: &C,
    values: ValueLayout,
    tuning: MergesortTuning,
) -> Program {
    let pass_define = format!(
        "#define TP_PASS_NT {}\n#define TP_QUAD_NT {}\n#define TP_QUAD_REGISTERS {}\n",
        tuning.pass_threads, tuning.quad_threads, tuning.quad_registers
    );
    let mut sources = vec![pass_define.as_str()];
    sources.extend(MERGESORT_SOURCES);
    program::<K, C>(
        &primitive_name(tuning),
        &sources,
        comp,
        values,
        tuning.threads,
        tuning.vt,
    )
}

/// `bytes` rounded up to the 16-byte alignment at which the kernels start each shared-memory
/// region (kernels/mergesort.cu `align16`, `quad_smem`), so that every region can hold any key.
const fn shared_aligned(bytes: usize) -> usize {
    const SHARED_ALIGN: usize = 16;
    bytes.div_ceil(SHARED_ALIGN) * SHARED_ALIGN
}

/// Launch shapes of the mergesort: the block sort's NT x VT tile, and the merge passes' tile of
/// `pass_threads` x VT keys, which must divide the block tile (so that runs are whole pass
/// tiles and no pass tile straddles two pairs of runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MergesortTuning {
    /// Threads per block of the block sort (NT), a power of two: it merges runs pairwise up to NT.
    pub threads: u32,
    /// Threads per block of the merge passes, a power of two no larger than `threads`.
    pub pass_threads: u32,
    /// Threads per block of the four-way merge passes (0: two-way passes only), a power of two
    /// no larger than `threads`. A four-way pass merges four runs per read and write of the keys
    /// (two merge levels in shared memory), so it replaces two two-way passes.
    pub quad_threads: u32,
    /// Smallest sort that uses the four-way passes: each four-way pass pays a partition whose
    /// cuts are chains of dependent scattered loads (a fixed latency at any size), so it only
    /// pays where one two-way pass moves much more than that (docs/tuning.md).
    pub four_way_min_keys: usize,
    /// Lanes of a warp that run one partition search together, a two-way pass boundary (or
    /// four-way sample) or a four-way cut's coarse search: a power of two up to 32, or 0 for
    /// the choice of [`boundary_search_lanes`] and [`quad_cut_lanes`] by the number of searches
    /// (where the choice is a warp, a two-way pass's tile blocks search their own boundaries; a
    /// set lane count always runs them in a partition kernel). A search is a chain of dependent
    /// loads; `lanes` lanes probe `lanes` candidates a round, which makes it log2(lanes + 1)
    /// times shorter for about `lanes` times the loads (a four-way cut's fine selection runs on
    /// one lane).
    pub quad_cut_lanes: u32,
    /// Registers a thread of the four-way tile may use (0: the compiler's choice), so that
    /// `65536 / (quad_threads * quad_registers)` blocks fit on an SM. ptxas takes what the
    /// kernel's launch bounds allow, not what keeps blocks resident: the u32 four-way tile took
    /// 82-124 registers (one 512-thread block an SM) when its loads changed.
    pub quad_registers: u32,
    /// Keys per thread (VT), in every kernel.
    pub vt: u32,
}

impl MergesortTuning {
    /// Keys per block-sort tile (NV = NT * VT): the length of the runs the first pass merges.
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.vt as usize
    }

    /// Outputs per merge-pass tile (pass_threads * VT).
    pub const fn pass_tile(&self) -> usize {
        self.pass_threads as usize * self.vt as usize
    }

    /// Outputs per four-way pass tile (quad_threads * VT).
    pub const fn quad_tile(&self) -> usize {
        self.quad_threads as usize * self.vt as usize
    }

    /// Outputs of one level-one piece of a four-way tile (kernels/mergesort.cu `quad_piece`):
    /// more than VT, so that every thread merges at most one piece, and odd, so that the
    /// piece-strided shared-memory stores are free of bank conflicts.
    pub const fn quad_piece(&self) -> usize {
        let vt = self.vt as usize;
        if vt % 2 == 1 {
            vt + 2
        } else {
            vt + 1
        }
    }

    /// Dynamic shared memory of a block-sort tile (kernels/mergesort.cu `blocksort_smem`): NV + 1
    /// keys, with values followed by NV tile positions; or, if larger, the NV values and NV
    /// positions that reuse that memory once the keys are stored (the values are permuted in
    /// shared memory).
    pub const fn blocksort_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> usize {
        let nv = self.tile();
        let keys = shared_aligned((nv + 1) * key_bytes);
        // The merge levels' walk check: one int a warp (kernels/partition.cuh).
        let walk_check =
            shared_aligned(self.threads as usize / WARP_LANES as usize * size_of::<i32>());
        if value_bytes == 0 {
            return keys + walk_check;
        }
        let positions = nv * size_of::<i32>();
        let sort = keys + positions;
        let permute = shared_aligned(nv * value_bytes) + positions;
        shared_aligned(if sort > permute { sort } else { permute }) + walk_check
    }

    /// Shared memory of a four-way tile (kernels/mergesort.cu `quad_smem`): one key buffer for
    /// the tile's input and then the first level's output (NV + PIECE + 1 keys), with values
    /// the first level's NV + PIECE + 1 source positions and the tile's NV input values.
    pub const fn quad_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> usize {
        // The level-one output (tile + piece - 1 keys) and one slot past it; or the input and
        // piece + 1 slots that the last level-one piece of a part may read past it.
        let slots = self.quad_tile() + self.quad_piece() + 1;
        let keys = shared_aligned(slots * key_bytes);
        if value_bytes == 0 {
            return keys;
        }
        keys + shared_aligned(slots * size_of::<i32>()) + self.quad_tile() * value_bytes
    }

    /// The two-way and four-way merge passes that follow the block sort of `count` keys: every
    /// pair of two-way passes becomes one four-way pass when the tuning has them; an odd one out
    /// runs first as a two-way pass.
    pub fn pass_plan(&self, count: usize) -> (u32, u32) {
        let passes = merge_passes(count, self.tile());
        if self.quad_threads > 0 && count >= self.four_way_min_keys {
            (passes % 2, passes / 2)
        } else {
            (passes, 0)
        }
    }

    /// The tuning shipped for keys of `key_bytes` and values of `value_bytes` (0 for keys only).
    /// Block tiles as large as shared memory allows (each doubling saves a pass), VT odd (no bank
    /// conflicts), passes and four-way tiles sized per type; the sweeps are in docs/tuning.md.
    /// Devices that cannot give a block 148 KiB get
    /// [`within_static_shared`](Self::within_static_shared).
    pub const fn for_types(key_bytes: usize, value_bytes: usize) -> Self {
        Self::shipped(key_bytes, value_bytes, false)
    }

    /// [`for_types`](Self::for_types) where its block sort fits in `max_shared_optin` bytes of
    /// shared memory a block (the device's opt-in limit,
    /// [`Gpu::max_shared_per_block_optin`](crate::context::Gpu::max_shared_per_block_optin)),
    /// else [`within_static_shared`](Self::within_static_shared). The launches use this.
    pub const fn for_device(key_bytes: usize, value_bytes: usize, max_shared_optin: usize) -> Self {
        let tuning = Self::for_types(key_bytes, value_bytes);
        let quad_shared = if tuning.quad_threads > 0 {
            tuning.quad_shared_bytes(key_bytes, value_bytes)
        } else {
            0
        };
        if tuning.blocksort_shared_bytes(key_bytes, value_bytes) <= max_shared_optin
            && quad_shared <= max_shared_optin
        {
            tuning
        } else {
            Self::within_static_shared(key_bytes, value_bytes)
        }
    }

    /// The best measured tuning whose block sort and four-way tile fit in 48 KiB of shared memory
    /// (every CUDA GPU): for 4-byte keys a 512 x 23 block sort and four-way tiles; the other
    /// types' shipped tunings fit already (docs/tuning.md).
    pub const fn within_static_shared(key_bytes: usize, value_bytes: usize) -> Self {
        Self::shipped(key_bytes, value_bytes, true)
    }

    /// The tuning the launches use for `count` keys: [`for_device`](Self::for_device), unless
    /// its block sort has fewer tiles than the device has SMs (`multiprocessors`), where
    /// [`within_static_shared`](Self::within_static_shared)'s smaller tiles keep more SMs busy
    /// (docs/tuning.md).
    pub const fn for_launch(
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
        max_shared_optin: usize,
        multiprocessors: usize,
    ) -> Self {
        let tuning = Self::for_device(key_bytes, value_bytes, max_shared_optin);
        if count < tuning.tile() * multiprocessors {
            Self::within_static_shared(key_bytes, value_bytes)
        } else {
            tuning
        }
    }

    const fn shipped(key_bytes: usize, value_bytes: usize, static_shared: bool) -> Self {
        let (threads, pass_threads, quad_threads, quad_registers, vt) =
            match (key_bytes, value_bytes) {
                // The largest 4-byte tile in 48 KiB; 128-thread passes fit the most blocks.
                (0..=4, 0) if static_shared => (512, 128, 512, 64, 23),
                // 148 KiB, one block an SM: one pass fewer than 512 x 23; four-way tiles at 64
                // registers keep four blocks an SM.
                (0..=4, 0) => (1024, 128, 256, 64, 37),
                // 47 KB; 128-thread four-way tiles at 96 registers, five blocks an SM.
                (0..=8, 0) => (256, 256, 128, 96, 23),
                // 45 KB with the tile positions; 256-thread passes and four-way tiles.
                (0..=4, 1..=4) => (512, 256, 256, 64, 11),
                // 46 KB.
                (0..=8, 0..=8) => (256, 256, 128, 0, 15),
                // Wider keys: small tiles, two-way passes only.
                _ => (128, 128, 0, 0, 7),
            };
        MergesortTuning {
            threads,
            pass_threads,
            quad_threads,
            four_way_min_keys: FOUR_WAY_MIN_BYTES / (key_bytes + value_bytes),
            // Picked per sort by its number of cuts (quad_cut_lanes).
            quad_cut_lanes: 0,
            quad_registers,
            vt,
        }
    }

    /// Check the tuning against what the kernels support for keys of `key_bytes` bytes and values
    /// of `value_bytes` (0: keys only). The block sort's shared memory is dynamic and may exceed
    /// 48 KiB (up to [`MAX_OPTIN_SHARED_BYTES`]; the device's own limit is checked at launch).
    pub fn validate(&self, key_bytes: usize, value_bytes: usize) -> Result<(), GpuError> {
        check_launch_shape_within(
            self.threads,
            self.vt,
            true,
            self.blocksort_shared_bytes(key_bytes, value_bytes),
            MAX_OPTIN_SHARED_BYTES,
        )?;
        let pass_shared =
            ((self.pass_tile() + 1) * key_bytes).max(self.pass_tile() * size_of::<i32>());
        check_launch_shape(self.pass_threads, self.vt, true, pass_shared)?;
        // Every pass's partition searches use the lanes, two-way passes' too.
        let lanes = self.quad_cut_lanes;
        if lanes != 0 && !(lanes.is_power_of_two() && lanes <= WARP_LANES) {
            return Err(GpuError::InvalidTuning(format!(
                "quad_cut_lanes = {} must be 0 or a power of two up to {WARP_LANES}",
                self.quad_cut_lanes
            )));
        }
        if self.quad_threads > 0 {
            check_launch_shape_within(
                self.quad_threads,
                self.vt,
                true,
                self.quad_shared_bytes(key_bytes, value_bytes),
                MAX_OPTIN_SHARED_BYTES,
            )?;
            let (piece, vt) = (self.quad_piece() as u32, self.vt);
            if self.quad_threads * (piece - vt) < 2 * piece {
                return Err(GpuError::InvalidTuning(format!(
                    "quad_threads = {} is too few for one level-one piece of {piece} outputs a thread (VT = {vt})",
                    self.quad_threads
                )));
            }
            if self.quad_threads > self.threads {
                return Err(GpuError::InvalidTuning(format!(
                    "quad_threads = {} must not exceed the block sort's threads = {}",
                    self.quad_threads, self.threads
                )));
            }
        }
        if self.pass_threads > self.threads {
            return Err(GpuError::InvalidTuning(format!(
                "pass_threads = {} must not exceed the block sort's threads = {}",
                self.pass_threads, self.threads
            )));
        }
        Ok(())
    }
}

/// Device scratch of the mergesort: the pass partitions and the ping-pong key and value buffers.
/// They only grow, so repeated sorts of the same or smaller size allocate nothing.
#[derive(Debug, Default)]
///
/// It also holds the order check of the sorts that use it: a sort whose comparator answers
/// inconsistently (not a strict weak order) still leaves a permutation of its keys, and raises a
/// status here that [`check`](Self::check) reports.
pub struct MergesortScratch {
    partitions: Option<CudaSlice<u64>>,
    /// Four-way cuts: three counts per quad-tile boundary.
    cuts: Option<CudaSlice<u64>>,
    keys: Option<CudaSlice<u8>>,
    values: Option<CudaSlice<u8>>,
    input_check: InputCheck,
}

/// What the mergesort's status bits say.
const MERGESORT_STATUS: StatusNames = &[(STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT)];

impl MergesortScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for this handle's stream, then report whether a device-buffer sort that used this
    /// scratch since the last check saw its comparator answer inconsistently:
    /// `Err(InvalidInput)` naming the comparator. The status is cleared. Such a sort leaves a
    /// permutation of its keys (and pairs) in unspecified order.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.input_check.check(gpu, MERGESORT_STATUS)
    }
}

/// Bytes of keys and values from which the shipped tunings sort with four-way passes: on the
/// H100 they win at 64 MiB and lose at 4 MiB, where the partitions' fixed latency dominates
/// (docs/tuning.md).
pub const FOUR_WAY_MIN_BYTES: usize = 1 << 26;

/// Threads of a warp: a four-way cut's lanes vote within one.
const WARP_LANES: u32 = 32;

/// Four-way partition threads per SM that keep the memory system busy with the cuts' scattered
/// loads: on the H100 the fastest lane count at every measured size put 45-50 thousand threads
/// on the cuts (docs/tuning.md).
const QUAD_CUT_THREADS_PER_SM: usize = 384;

/// Lanes per four-way cut for `cuts` cuts on a device of `multiprocessors` SMs: the most (a power
/// of two up to a warp) that keep the partition's threads within `QUAD_CUT_THREADS_PER_SM` (384) an
/// SM, and at least one. Fewer cuts than that leave the memory system idle while each cut's chain
/// of dependent loads runs, so more lanes shorten the chains; more cuts already fill it, and more
/// lanes would only add loads.
pub fn quad_cut_lanes(cuts: usize, multiprocessors: u32) -> u32 {
    lanes_within(QUAD_CUT_THREADS_PER_SM, cuts, multiprocessors)
}

/// Two-way partition threads per SM (a pass's tile boundaries, or a four-way pass's samples) up
/// to which each boundary is searched by a whole warp: much faster on the few boundaries of a
/// small sort, slower or no faster on the thousands of a large one (docs/tuning.md).
const BOUNDARY_SEARCH_THREADS_PER_SM: usize = 384;

/// Lanes per two-way partition search for `boundaries` searches on a device of
/// `multiprocessors` SMs: a whole warp where that keeps within `BOUNDARY_SEARCH_THREADS_PER_SM`
/// (384) threads an SM, else the binary search of one lane. With a warp (and the tuning's lanes
/// automatic), a two-way pass has no partition kernel: each tile block searches its own two.
pub fn boundary_search_lanes(boundaries: usize, multiprocessors: u32) -> u32 {
    if lanes_within(BOUNDARY_SEARCH_THREADS_PER_SM, boundaries, multiprocessors) == WARP_LANES {
        WARP_LANES
    } else {
        1
    }
}

/// The most lanes per search (a power of two up to a warp, at least one) that keep `searches`
/// searches within `threads_per_sm` threads an SM.
fn lanes_within(threads_per_sm: usize, searches: usize, multiprocessors: u32) -> u32 {
    let budget = threads_per_sm * multiprocessors as usize / searches.max(1);
    let mut lanes = 1;
    while lanes < WARP_LANES && (2 * lanes) as usize <= budget {
        lanes *= 2;
    }
    lanes
}

/// Largest sort (bytes of keys and values) whose kernels are chained by programmatic dependent
/// launch: between the sizes it made faster on the H100 and the first it did not
/// (docs/tuning.md).
pub const PDL_MAX_BYTES: usize = 256 << 20;

/// Words per four-way cut (kernels/mergesort.cu): the counts taken from X, from run 0 and from
/// run 2.
const QUAD_CUT_WORDS: usize = 3;

/// Number of two-way merge passes after the block sort: ceil(log2(tiles)).
pub fn merge_passes(count: usize, tile: usize) -> u32 {
    let tiles = count.div_ceil(tile);
    if tiles <= 1 {
        0
    } else {
        usize::BITS - (tiles - 1).leading_zeros()
    }
}

impl Gpu {
    /// Sort `count` keys at device address `keys` (and values at `values` if `value_layout`),
    /// stably, in place from the caller's view.
    fn launch_mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        buffers: SortBuffers,
        comp: &C,
        tuning: MergesortTuning,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError> {
        let SortBuffers {
            keys,
            values,
            count,
            layout: value_layout,
        } = buffers;
        let value_bytes = value_layout.map_or(0, |(size, _)| size);
        tuning.validate(size_of::<K>(), value_bytes)?;
        if count <= 1 {
            return Ok(());
        }
        let (key, name) = program_id::<K, C>(
            &primitive_name(tuning),
            comp,
            value_layout,
            tuning.threads,
            tuning.vt,
        );
        let kernels = self.kernels(
            &key,
            &name,
            || mergesort_program::<K, C>(comp, value_layout, tuning).source,
            mergesort_entries(tuning),
        )?;
        let (blocksort, partition, tile_kernel) = (
            kernels.function(MERGESORT_ENTRY_BLOCKSORT)?,
            kernels.function(MERGESORT_ENTRY_PARTITION)?,
            kernels.function(MERGESORT_ENTRY_TILE)?,
        );
        let tile = tuning.tile();
        let num_tiles = count.div_ceil(tile);
        if num_tiles as u64 > MAX_GRID_X {
            return Err(GpuError::TooLarge(format!(
                "{count} keys need {num_tiles} tiles"
            )));
        }
        // A comparator that is not trusted gets checked kernels (kernels/mergesort.cu
        // CHECK_ORDER): partitions and cuts checked and repaired, walks checked.
        let trusted = comp.trusted_order();
        let (two_way_passes, four_way_passes) = tuning.pass_plan(count);
        let passes = two_way_passes + four_way_passes;
        let pass_tile = tuning.pass_tile();
        let num_pass_tiles = count.div_ceil(pass_tile);
        let num_quad_tiles = if four_way_passes > 0 {
            count.div_ceil(tuning.quad_tile())
        } else {
            0
        };
        let stream = self.stream().clone();
        // Raw addresses: the scratch lives in `scratch` for the whole call, and this handle's
        // one stream orders every use (no per-buffer events to keep).
        fn address<T>(stream: &Arc<CudaStream>, buf: &mut CudaSlice<T>) -> u64 {
            buf.device_ptr_mut(stream).0
        }
        let scratch_keys = address(
            &stream,
            self.grow_scratch(&mut scratch.keys, count * size_of::<K>())?,
        );
        let scratch_values = if value_layout.is_some() {
            address(
                &stream,
                self.grow_scratch(&mut scratch.values, count * value_bytes)?,
            )
        } else {
            0
        };
        let partitions = address(
            &stream,
            self.grow_scratch(
                &mut scratch.partitions,
                num_pass_tiles.max(num_quad_tiles) + 1,
            )?,
        );
        let cuts = if four_way_passes > 0 {
            address(
                &stream,
                self.grow_scratch(&mut scratch.cuts, QUAD_CUT_WORDS * (num_quad_tiles + 1))?,
            )
        } else {
            0
        };

        // An odd number of passes starts in scratch so that the last pass lands in `keys`.
        let (mut src, mut dst) = ((keys, values), (scratch_keys, scratch_values));
        let first = if passes % 2 == 1 { dst } else { src };
        let count_arg = count as u64;
        let blocksort_check = scratch.input_check.args(self)?;
        let mut launch = stream.launch_builder(blocksort);
        launch
            .arg(&src.0)
            .arg(&src.1)
            .arg(&count_arg)
            .arg(&first.0)
            .arg(&first.1)
            .arg(&blocksort_check.status);
        let blocksort_shared = kernels.allow_dynamic_shared(
            MERGESORT_ENTRY_BLOCKSORT,
            tuning.blocksort_shared_bytes(size_of::<K>(), value_bytes),
            MAX_STATIC_SHARED_BYTES,
            self.max_shared_per_block_optin(),
        )?;
        let tile_config = LaunchConfig {
            grid_dim: (num_tiles as u32, 1, 1),
            block_dim: (tuning.threads, 1, 1),
            shared_mem_bytes: blocksort_shared,
        };
        // SAFETY: the arguments match twophase_blocksort in kernels/mergesort.cu; `keys`/`values`
        // hold `count` elements and the scratch buffers at least as many (grown above); one block
        // per tile; the value pointers are read only when the program has values; the status
        // word lives in the scratch.
        unsafe { launch.launch(tile_config) }?;
        if passes % 2 == 1 {
            std::mem::swap(&mut src, &mut dst);
        }

        // Below PDL_MAX_BYTES, every kernel after the block sort is launched as a programmatic
        // dependent of the one before (Gpu::launch_raw; kernels/mergesort.cu
        // `follow_previous_kernel` waits for it before touching memory). Parameters go as
        // pointers to their values, in the kernels' order: 64-bit addresses and sizes, and the
        // four-way partition's 32-bit lane count.
        let dependent = count * (size_of::<K>() + value_bytes) < PDL_MAX_BYTES;
        let grid = |blocks: usize| -> Result<u32, GpuError> {
            u32::try_from(blocks)
                .ok()
                .filter(|&b| u64::from(b) <= MAX_GRID_X)
                .ok_or_else(|| GpuError::TooLarge(format!("{blocks} blocks in one grid")))
        };
        let partition_blocks = |threads: usize| grid(threads.div_ceil(PARTITION_THREADS as usize));
        // Checked partition kernels overlap their blocks by one boundary (a group of `lanes`
        // threads a boundary).
        let pass_partition_blocks = |boundaries: usize, lanes: u32| {
            if trusted {
                partition_blocks(boundaries * lanes as usize)
            } else {
                grid(overlapped_blocks(
                    boundaries,
                    (PARTITION_THREADS / lanes) as usize,
                ))
            }
        };

        // Lanes per search of `searches` two-way boundaries or (`quad`) four-way cuts: the
        // tuning's, or chosen by their number.
        let search_lanes = |searches: usize, quad: bool| match (tuning.quad_cut_lanes, quad) {
            (0, true) => quad_cut_lanes(searches, self.multiprocessors()),
            (0, false) => boundary_search_lanes(searches, self.multiprocessors()),
            (forced, _) => forced,
        };
        // The two-way merge paths of one pass over `keys` (runs of `run`) at every `spacing`-th
        // output, `boundaries` of them, into `partitions`: the two-way passes' tile boundaries,
        // and the four-way passes' samples.
        let launch_partitions =
            |keys: u64, run: u64, spacing: usize, boundaries: usize, check: &CheckArgs| {
                let (spacing, boundary_count) = (spacing as u64, boundaries as u64);
                let lanes = search_lanes(boundaries, false);
                let lanes_arg = lanes as i32;
                let mut params = [
                    kernel_param(&keys),
                    kernel_param(&count_arg),
                    kernel_param(&run),
                    kernel_param(&spacing),
                    kernel_param(&boundary_count),
                    kernel_param(&lanes_arg),
                    kernel_param(&partitions),
                    kernel_param(&check.status),
                    kernel_param(&check.repair),
                    kernel_param(&check.generation),
                ];
                // SAFETY: `params` points at values matching twophase_mergesort_partition (five
                // 64-bit, the 32-bit lane count, three 64-bit, the 32-bit generation), alive for the
                // call; `partitions` was grown to hold max(num_pass_tiles, num_quad_tiles) + 1 >=
                // `boundaries` entries; `keys` holds `count` keys; one group of `lanes` threads (a
                // power of two up to 32, validated or chosen above) per boundary, the blocks
                // overlapping by one boundary for an untrusted comparator as the kernel does
                // (CHECK_ORDER); the check's words live in the scratch.
                unsafe {
                    self.launch_raw(
                        partition,
                        pass_partition_blocks(boundaries, lanes)?,
                        PARTITION_THREADS,
                        &mut params,
                        dependent,
                    )
                }
            };
        let num_partitions = num_pass_tiles + 1;
        let pass_grid = grid(num_pass_tiles)?;
        // Where a warp searches each boundary (few boundaries, the tuning's lanes automatic), each
        // tile block finds its own two (a null partitions argument): one launch a pass instead of
        // two.
        // Only for a trusted comparator: boundaries a block finds itself are not checked against
        // each other.
        let own_boundaries = trusted
            && tuning.quad_cut_lanes == 0
            && search_lanes(num_partitions, false) == WARP_LANES;
        let tile_partitions = if own_boundaries { 0 } else { partitions };
        for pass in 0..two_way_passes {
            let run = (tile as u64) << pass;
            let check = scratch.input_check.args(self)?;
            if !own_boundaries {
                launch_partitions(src.0, run, pass_tile, num_partitions, &check)?;
            }
            let mut params = [
                kernel_param(&src.0),
                kernel_param(&count_arg),
                kernel_param(&run),
                kernel_param(&tile_partitions),
                kernel_param(&dst.0),
                kernel_param(&src.1),
                kernel_param(&dst.1),
                kernel_param(&check.status),
                kernel_param(&check.repair),
                kernel_param(&check.generation),
            ];
            // SAFETY: `params` points at nine 64-bit values and the 32-bit generation matching
            // twophase_mergesort_tile (built for TP_PASS_NT threads), alive for the call; `src`
            // and `dst` are distinct buffers of `count` keys (and values); the partitions are
            // null (each block searches its own) or written by the launch before, which this one
            // waits for, as is the repair slot of this pass's generation; one block per pass
            // tile.
            unsafe {
                self.launch_raw(
                    tile_kernel,
                    pass_grid,
                    tuning.pass_threads,
                    &mut params,
                    dependent,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        if four_way_passes == 0 {
            return Ok(());
        }
        let (quad_partition, quad_tile_kernel) = (
            kernels.function(MERGESORT_ENTRY_QUAD_PARTITION)?,
            kernels.function(MERGESORT_ENTRY_QUAD_TILE)?,
        );
        let quad_shared = kernels.allow_dynamic_shared(
            MERGESORT_ENTRY_QUAD_TILE,
            tuning.quad_shared_bytes(size_of::<K>(), value_bytes),
            MAX_STATIC_SHARED_BYTES,
            self.max_shared_per_block_optin(),
        )?;
        let num_cuts = num_quad_tiles + 1;
        let quad_grid = grid(num_quad_tiles)?;
        let (quad_spacing, cut_count) = (tuning.quad_tile() as u64, num_cuts as u64);
        let lanes = search_lanes(num_cuts, true);
        let lanes_arg = lanes as i32;
        let cut_blocks = pass_partition_blocks(num_cuts, lanes)?;
        for quad_pass in 0..four_way_passes {
            let run = (tile as u64) << (two_way_passes + 2 * quad_pass);
            // The two-way partitions of this input at every quad tile: the samples of X and Y.
            let check = scratch.input_check.args(self)?;
            launch_partitions(src.0, run, tuning.quad_tile(), num_cuts, &check)?;
            let mut params = [
                kernel_param(&src.0),
                kernel_param(&count_arg),
                kernel_param(&run),
                kernel_param(&partitions),
                kernel_param(&quad_spacing),
                kernel_param(&cut_count),
                kernel_param(&lanes_arg),
                kernel_param(&cuts),
                kernel_param(&check.status),
                kernel_param(&check.repair),
                kernel_param(&check.second_repair),
                kernel_param(&check.generation),
            ];
            // SAFETY: `params` points at values matching twophase_mergesort_quad_partition (six
            // 64-bit, the 32-bit lane count, four 64-bit, the 32-bit generation), alive for the
            // call; one group of `lanes` threads (a power of two up to 32, validated or chosen
            // above) per cut, the blocks overlapping by one cut for an untrusted comparator as
            // the kernel does; `cuts` holds QUAD_CUT_WORDS entries per cut; the samples (and
            // their repair slot, this pass's generation) are written by the launch before, which
            // this one waits for; the check's words live in the scratch.
            unsafe {
                self.launch_raw(
                    quad_partition,
                    cut_blocks,
                    PARTITION_THREADS,
                    &mut params,
                    dependent,
                )
            }?;
            let mut params = [
                kernel_param(&src.0),
                kernel_param(&count_arg),
                kernel_param(&run),
                kernel_param(&cuts),
                kernel_param(&dst.0),
                kernel_param(&src.1),
                kernel_param(&dst.1),
                kernel_param(&check.status),
                kernel_param(&check.second_repair),
                kernel_param(&check.generation),
            ];
            // SAFETY: `params` points at nine 64-bit values and the 32-bit generation matching
            // twophase_mergesort_quad_tile (built for TP_QUAD_NT threads), alive for the call;
            // `src` and `dst` are distinct buffers of `count` keys (and values); one block per
            // quad tile; the cuts (and their repair slot) are written by the launch before, which
            // this one waits for.
            unsafe {
                self.launch_raw_shared(
                    quad_tile_kernel,
                    quad_grid,
                    tuning.quad_threads,
                    quad_shared,
                    &mut params,
                    dependent,
                )
            }?;
            std::mem::swap(&mut src, &mut dst);
        }
        Ok(())
    }

    /// Compile (or fetch from the caches) the mergesort kernels for these types, comparator and
    /// tuning ahead of the first call.
    pub fn prepare_mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        comp: &C,
        values: ValueLayout,
        tuning: MergesortTuning,
    ) -> Result<(), GpuError> {
        let program = mergesort_program::<K, C>(comp, values, tuning);
        self.kernels(
            &program.key,
            &program.name,
            || program.source.clone(),
            mergesort_entries(tuning),
        )
        .map(|_| ())
    }

    /// Stable sort of the device keys `keys` under `comp`, in place (the scratch holds the
    /// ping-pong buffer), with the shipped tuning. Asynchronous on this handle's stream.
    ///
    /// Whatever `comp` answers, `keys` ends as a permutation of itself. A user comparator is
    /// checked as the sort runs (twophase's own orders need not be); where it answered
    /// inconsistently (not a strict weak order) the order is unspecified and the scratch
    /// records it: [`MergesortScratch::check`] (which synchronizes) reports it as `InvalidInput`.
    pub fn mergesort_device<K, C, S>(
        &self,
        keys: &mut S,
        comp: &C,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DevicePtrMut<K>,
    {
        self.mergesort_device_tuned(
            keys,
            comp,
            self.shipped_mergesort_tuning(size_of::<K>(), 0, keys.len()),
            scratch,
        )
    }

    /// The shipped mergesort tuning for `count` keys of `key_bytes` (and values of
    /// `value_bytes`) on this device ([`MergesortTuning::for_launch`]).
    pub fn shipped_mergesort_tuning(
        &self,
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
    ) -> MergesortTuning {
        MergesortTuning::for_launch(
            key_bytes,
            value_bytes,
            count,
            self.max_shared_per_block_optin(),
            self.multiprocessors() as usize,
        )
    }

    /// [`mergesort_device`](Self::mergesort_device) with an explicit tuning.
    pub fn mergesort_device_tuned<K, C, S>(
        &self,
        keys: &mut S,
        comp: &C,
        tuning: MergesortTuning,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DevicePtrMut<K>,
    {
        let stream = self.stream().clone();
        let count = keys.len();
        let (ptr, _guard) = keys.device_ptr_mut(&stream);
        let buffers = SortBuffers {
            keys: ptr,
            values: 0,
            count,
            layout: None,
        };
        self.launch_mergesort::<K, C>(buffers, comp, tuning, scratch)
    }

    /// Stable sort of device key-value pairs by key under `comp`, in place: each value moves with
    /// its key and equal keys keep their order. Asynchronous on this handle's stream.
    pub fn mergesort_pairs_device<K, V, C, SK, SV>(
        &self,
        keys: &mut SK,
        values: &mut SV,
        comp: &C,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        SK: DevicePtrMut<K>,
        SV: DevicePtrMut<V>,
    {
        let tuning = self.shipped_mergesort_tuning(size_of::<K>(), size_of::<V>(), keys.len());
        self.mergesort_pairs_device_tuned(keys, values, comp, tuning, scratch)
    }

    /// [`mergesort_pairs_device`](Self::mergesort_pairs_device) with an explicit tuning.
    pub fn mergesort_pairs_device_tuned<K, V, C, SK, SV>(
        &self,
        keys: &mut SK,
        values: &mut SV,
        comp: &C,
        tuning: MergesortTuning,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        SK: DevicePtrMut<K>,
        SV: DevicePtrMut<V>,
    {
        if keys.len() != values.len() {
            return Err(GpuError::SizeMismatch {
                what: "mergesort values",
                expected: keys.len(),
                got: values.len(),
            });
        }
        let stream = self.stream().clone();
        let count = keys.len();
        let (key_ptr, _keys) = keys.device_ptr_mut(&stream);
        let (value_ptr, _values) = values.device_ptr_mut(&stream);
        let layout = Some((size_of::<V>(), align_of::<V>()));
        let buffers = SortBuffers {
            keys: key_ptr,
            values: value_ptr,
            count,
            layout,
        };
        self.launch_mergesort::<K, C>(buffers, comp, tuning, scratch)
    }

    /// Host convenience: sort `keys` in place on the GPU, stably under `comp`. Device buffers and
    /// scratch are kept in the handle and reused across calls.
    pub fn mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        comp: &C,
    ) -> Result<(), GpuError> {
        self.mergesort_host::<K, u8, C>(keys, None, comp)
    }

    /// Host convenience: sort key-value pairs in place on the GPU, stably by key under `comp`.
    pub fn mergesort_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        comp: &C,
    ) -> Result<(), GpuError> {
        if keys.len() != values.len() {
            return Err(GpuError::SizeMismatch {
                what: "mergesort values",
                expected: keys.len(),
                got: values.len(),
            });
        }
        self.mergesort_host::<K, V, C>(keys, Some(values), comp)
    }

    fn mergesort_host<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        values: Option<&mut [V]>,
        comp: &C,
    ) -> Result<(), GpuError> {
        let scratch = &self.mergesort_scratch;
        self.sort_host(
            keys,
            values,
            scratch,
            "mergesort scratch",
            |buffers, scratch| {
                let value_bytes = buffers.layout.map_or(0, |(size, _)| size);
                let tuning =
                    self.shipped_mergesort_tuning(size_of::<K>(), value_bytes, buffers.count);
                self.launch_mergesort::<K, C>(buffers, comp, tuning, scratch)?;
                // Before the download: on an inconsistent comparator the host slices keep their
                // keys as they were (a permutation, and what the caller had).
                scratch.check(self)
            },
        )
    }
}

/// Builds mergesort programs at the shipped tuning, or with `static_shared` at the tuning within
/// static shared memory ([`MergesortTuning::within_static_shared`]), for [`shipped_programs`].
struct MergesortPrograms {
    static_shared: bool,
}

impl ProgramFactory for MergesortPrograms {
    fn program<K: DeviceKey>(
        &self,
        comp: &dyn DeviceComparator<K>,
        values: ValueLayout,
    ) -> Program {
        let value_bytes = values.map_or(0, |(size, _)| size);
        let tuning = MergesortTuning::shipped(size_of::<K>(), value_bytes, self.static_shared);
        mergesort_program::<K, dyn DeviceComparator<K>>(comp, values, tuning)
    }
}

/// Every mergesort program instantiation the library ships: each primitive key type × built-in
/// comparator × shipped value layout, at its shipped tuning and at its tuning within static
/// shared memory (for devices with less opt-in shared memory), once each. CI compiles all of
/// them with NVRTC.
pub fn shipped_mergesort_programs() -> Vec<Program> {
    let mut programs = shipped_programs(&MergesortPrograms {
        static_shared: false,
    });
    for program in shipped_programs(&MergesortPrograms {
        static_shared: true,
    }) {
        if !programs.iter().any(|p| p.name == program.name) {
            programs.push(program);
        }
    }
    programs
}
