//! The mergesort's tuning: block-sort and pass tiles, the pass plan, and the size thresholds of its passes.

use super::plan::{merge_passes, PassPlan};
use crate::error::GpuError;
use crate::runtime::shape::{
    check_launch_shape, check_launch_shape_within, valid_search_lanes, MAX_OPTIN_SHARED_BYTES,
    MAX_SEARCH_LANES,
};

/// `bytes` rounded up to the 16-byte alignment at which the kernels start each shared-memory
/// region (kernels/mergesort_blocksort.cu `align16`, kernels/cta_quad_merge.cuh `quad_smem`), so that every region can hold any key.
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
    /// Registers a thread of the block sort may use (0: the compiler's choice), so that
    /// `65536 / (threads * block_registers)` blocks fit on an SM, as
    /// [`pass_registers`](Self::pass_registers) for the two-way tile: left to itself ptxas gave the
    /// 256 x 15 block sort of u64 keys with u64 values 114 registers, two blocks an SM.
    pub block_registers: u32,
    /// Threads per block of the merge passes, a power of two no larger than `threads`.
    pub pass_threads: u32,
    /// Registers a thread of the two-way pass tile may use (0: the compiler's choice), so that
    /// `65536 / (pass_threads * pass_registers)` blocks fit on an SM, as
    /// [`quad_registers`](Self::quad_registers) for the four-way tile: left to itself ptxas gave
    /// the u64 keys' 256 x 23 tile 106 registers, two blocks an SM.
    pub pass_registers: u32,
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
    /// the choice of [`boundary_search_lanes`](Self::boundary_search_lanes) and
    /// [`quad_cut_lanes`](Self::quad_cut_lanes) by the number of searches
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
    /// Threads per block of the eight-way merge passes (0: none), a power of two no larger than
    /// `threads`, with four-way passes in the tuning (their cuts are its samples). An eight-way
    /// pass merges eight runs per read and write of the keys (three merge levels in shared
    /// memory), so it replaces three two-way passes. Only a trusted order's sorts take them (their
    /// kernels run no order checks).
    pub oct_threads: u32,
    /// Smallest sort that uses the eight-way passes (their partitions chain three searches).
    pub eight_way_min_keys: usize,
    /// Registers a thread of the eight-way tile may use (0: the compiler's choice), as
    /// `quad_registers` for the four-way tile.
    pub oct_registers: u32,
    /// Keys per thread (VT), in every kernel.
    pub vt: u32,
    /// Four-way partition threads an SM that keep the memory system busy with the cuts'
    /// scattered loads: automatic cut lanes ([`quad_cut_lanes`](Self::quad_cut_lanes)) spread
    /// the cuts over at most this many threads an SM.
    pub quad_cut_threads_per_sm: usize,
    /// Four-way partition threads an SM up to which each cut gets a whole warp, beyond
    /// `quad_cut_threads_per_sm`: a warp also narrows the cut's fine selection by rounds of
    /// probes, so it pays at more threads than lanes that only shorten the coarse search.
    pub quad_cut_warp_threads_per_sm: usize,
    /// Two-way partition threads an SM up to which each boundary is searched by a whole warp
    /// (automatic lanes, [`boundary_search_lanes`](Self::boundary_search_lanes)).
    pub boundary_search_threads_per_sm: usize,
    /// Sorts of fewer keys chain their kernels by programmatic dependent launch (each kernel
    /// after the block sort starts while the previous one's last blocks run); 0 turns it off.
    pub pdl_below_keys: usize,
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

    /// Outputs per eight-way pass tile (oct_threads * VT).
    pub const fn oct_tile(&self) -> usize {
        self.oct_threads as usize * self.vt as usize
    }

    /// Outputs of one level-one piece of a four-way tile (kernels/cta_quad_merge.cuh `quad_piece`):
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

    /// Dynamic shared memory of a block-sort tile (kernels/mergesort_blocksort.cu `blocksort_smem`): NV + 1
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

    /// Shared memory of a four-way tile (kernels/cta_quad_merge.cuh `quad_smem`): one key buffer for
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

    /// Shared memory of an eight-way tile (kernels/mergesort_oct_tile.cu `oct_smem`): one key
    /// buffer for the tile's input and then each level's output (NV + 5 PIECE + 1 keys), with
    /// values as many source positions and the tile's NV input values.
    pub const fn oct_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> usize {
        // Level one's four outputs, each from a multiple of PIECE, and PIECE slots that a
        // part's last piece may read past it.
        const OCT_PADDED_PIECES: usize = 5;
        let slots = self.oct_tile() + OCT_PADDED_PIECES * self.quad_piece() + 1;
        let keys = shared_aligned(slots * key_bytes);
        if value_bytes == 0 {
            return keys;
        }
        keys + shared_aligned(slots * size_of::<i32>()) + self.oct_tile() * value_bytes
    }

    /// The two-way, four-way and eight-way merge passes that follow the block sort of `count`
    /// keys, under a `trusted` order or not: every three two-way passes become one eight-way
    /// pass where the tuning has them and the order is trusted, and every two left one four-way
    /// pass; an odd one out runs first as a two-way pass, and two left over as a four-way pass
    /// before the eight-way ones.
    pub fn pass_plan(&self, count: usize, trusted: bool) -> PassPlan {
        let passes = merge_passes(count, self.tile());
        if self.quad_threads == 0 || count < self.four_way_min_keys {
            return PassPlan {
                two_way: passes,
                four_way: 0,
                eight_way: 0,
            };
        }
        if self.oct_threads > 0 && trusted && count >= self.eight_way_min_keys {
            let left = passes % 3;
            return PassPlan {
                two_way: left % 2,
                four_way: left / 2,
                eight_way: passes / 3,
            };
        }
        PassPlan {
            two_way: passes % 2,
            four_way: passes / 2,
            eight_way: 0,
        }
    }

    /// The tuning shipped for keys of `key_bytes` and values of `value_bytes` (0 for keys only).
    /// Block tiles as large as shared memory allows (each doubling saves a pass), VT odd (no bank
    /// conflicts), passes and four-way tiles sized per type; the sweeps are in docs/tuning.md.
    /// Devices that cannot give a block the 4-byte keys' 180 KiB get the 148 KiB block sort of
    /// VT 37 if they can ([`for_device`](Self::for_device)), else
    /// [`within_static_shared`](Self::within_static_shared).
    pub const fn for_types(key_bytes: usize, value_bytes: usize) -> Self {
        Self::shipped(key_bytes, value_bytes, false)
    }

    /// [`for_types`](Self::for_types) where its block sort fits in `max_shared_optin` bytes of
    /// shared memory a block (the device's opt-in limit,
    /// [`Gpu::max_shared_per_block_optin`](crate::Gpu::max_shared_per_block_optin)),
    /// else [`within_static_shared`](Self::within_static_shared). The launches use this.
    pub const fn for_device(key_bytes: usize, value_bytes: usize, max_shared_optin: usize) -> Self {
        let tuning = Self::for_types(key_bytes, value_bytes);
        if tuning.fits(key_bytes, value_bytes, max_shared_optin) {
            return tuning;
        }
        let narrower = tuning.narrow_block();
        if narrower.vt != tuning.vt && narrower.fits(key_bytes, value_bytes, max_shared_optin) {
            narrower
        } else {
            Self::within_static_shared(key_bytes, value_bytes)
        }
    }

    /// This tuning with the 4-byte keys' block sort at VT [`NARROW_OPTIN_BLOCK_VT`] where it is
    /// at [`WIDE_BLOCK_VT`]; any other tuning as it is.
    pub(super) const fn narrow_block(self) -> Self {
        if self.vt == WIDE_BLOCK_VT {
            Self {
                vt: NARROW_OPTIN_BLOCK_VT,
                ..self
            }
        } else {
            self
        }
    }

    /// Whether this tuning's block sort and merge tiles fit in `max_shared_optin` bytes of
    /// shared memory a block.
    const fn fits(&self, key_bytes: usize, value_bytes: usize, max_shared_optin: usize) -> bool {
        let tuning = *self;
        let quad_shared = if tuning.quad_threads > 0 {
            tuning.quad_shared_bytes(key_bytes, value_bytes)
        } else {
            0
        };
        let oct_shared = if tuning.oct_threads > 0 {
            tuning.oct_shared_bytes(key_bytes, value_bytes)
        } else {
            0
        };
        tuning.blocksort_shared_bytes(key_bytes, value_bytes) <= max_shared_optin
            && quad_shared <= max_shared_optin
            && oct_shared <= max_shared_optin
    }

    /// The best measured tuning whose block sort and four-way tile fit in 48 KiB of shared memory
    /// (every CUDA GPU): for 4-byte keys a 512 x 23 block sort and four-way tiles, for keys of 17
    /// to 48 bytes 128 x 7 with four-way tiles; the other types' shipped tunings fit already
    /// (docs/tuning.md).
    pub const fn within_static_shared(key_bytes: usize, value_bytes: usize) -> Self {
        Self::shipped(key_bytes, value_bytes, true)
    }

    /// A tuning of these launch shapes for u32 keys (the rest as [`for_types`](Self::for_types)
    /// `(4, 0)`) with four-way passes at every size when `quad_threads` is not 0, for tests and
    /// sweeps of the shapes on small sorts: `quad_cut_lanes` 0 chooses the lanes by the number of
    /// cuts, `quad_registers` 0 leaves the registers to the compiler.
    pub const fn forced_u32(
        threads: u32,
        pass_threads: u32,
        quad_threads: u32,
        quad_cut_lanes: u32,
        quad_registers: u32,
        vt: u32,
    ) -> Self {
        Self {
            threads,
            pass_threads,
            quad_threads,
            four_way_min_keys: 0,
            quad_cut_lanes,
            quad_registers,
            oct_threads: 0,
            oct_registers: 0,
            vt,
            ..Self::for_types(4, 0)
        }
    }

    /// This tuning with eight-way tiles of `oct_threads` threads (0: none) at every size where
    /// the order is trusted, the registers left to the compiler: for tests and sweeps.
    pub const fn with_eight_way(self, oct_threads: u32) -> Self {
        Self {
            oct_threads,
            eight_way_min_keys: 0,
            oct_registers: 0,
            ..self
        }
    }

    pub(crate) const fn shipped(key_bytes: usize, value_bytes: usize, static_shared: bool) -> Self {
        let (threads, pass_threads, quad_threads, quad_registers, vt) =
            match (key_bytes, value_bytes) {
                // The largest 4-byte tile in 48 KiB; 128-thread passes fit the most blocks.
                (0..=4, 0) if static_shared => (512, 128, 512, 64, 23),
                // 180 KiB, one block an SM: one pass fewer than 512 x 23, and VT 45 faster than
                // 37 at 2^24 and 2^27 (fewer block-sort tiles and fewer cuts); four-way tiles at
                // 64 registers keep four blocks an SM.
                (0..=4, 0) => (1024, 128, 256, 64, WIDE_BLOCK_VT),
                // 47 KB; 128-thread four-way tiles at 96 registers, five blocks an SM.
                (0..=8, 0) => (256, 256, 128, 96, 23),
                // 45 KB with the tile positions; 256-thread passes and four-way tiles.
                (0..=4, 1..=4) => (512, 256, 256, 64, 11),
                // 46 KB.
                (0..=8, 0..=8) => (256, 256, 128, 0, 15),
                // 45 KB for 16-byte keys (so they keep it within 48 KiB), 68 KB for 24 (up to 90
                // KB): larger tiles and VT than 128 x 7 save a pass and overlap more of each
                // thread's merge with its loads.
                (9..=32, 0) if key_bytes <= 16 || !static_shared => (256, 128, 128, 0, 11),
                // 22-43 KB: four-way passes, which halve the passes over the wide keys.
                (9..=48, 0) => (128, 128, 128, 0, 7),
                // Wider keys, or pairs of them: small tiles, two-way passes only (not measured
                // with four-way passes).
                _ => (128, 128, 0, 0, 7),
            };
        // Four-way passes win on the H100 at 64 MiB and lose at 4 MiB, where the partitions'
        // fixed latency dominates; the 8-byte elements' (u64 keys, u32 pairs) smaller block
        // tiles leave more levels at a size, and on the H200 their four-way passes already won
        // at 32 MiB. They also take eight-way tiles of the four-way tiles' shape and registers
        // (within 48 KiB), the fastest of 128 and 256 threads for each. 4-byte keys keep
        // four-way passes: their tiles are bound by the merge levels' instructions, and a third
        // level in the tile cost what the saved passes saved.
        let (four_way_min_bytes, oct_threads, oct_registers) = match (key_bytes, value_bytes) {
            (5..=8, 0) | (0..=4, 1..=4) => {
                (EIGHT_BYTE_FOUR_WAY_MIN_BYTES, quad_threads, quad_registers)
            }
            _ => (FOUR_WAY_MIN_BYTES, 0, 0),
        };
        // The 4-byte keys' 1024-thread block sort leaves its two-way passes (one in sorts of an
        // odd number of merge levels) many 128 x 45 tiles: at the compiler's 96 registers five
        // blocks an SM, at 64 eight; on an H200 u32 at 2^24 1.2% faster, the top-8-bit comparator
        // 0.3-1%.
        let pass_registers = match (key_bytes, value_bytes) {
            (4, 0) if !static_shared => WIDE_BLOCK_PASS_REGISTERS,
            (0..=8, 5..=8) => WIDE_PAIRS_PASS_REGISTERS,
            _ => 0,
        };
        // The 256-thread block sort of pairs with an 8-byte key or value: three blocks an SM.
        let block_registers = match (key_bytes, value_bytes) {
            (0..=8, 5..=8) | (5..=8, 1..=4) => WIDE_PAIRS_BLOCK_REGISTERS,
            _ => 0,
        };
        let element_bytes = key_bytes + value_bytes;
        MergesortTuning {
            threads,
            block_registers,
            pass_threads,
            pass_registers,
            quad_threads,
            four_way_min_keys: four_way_min_bytes / element_bytes,
            // Picked per sort by its number of cuts (quad_cut_lanes).
            quad_cut_lanes: 0,
            quad_registers,
            oct_threads,
            // Eight-way passes won at 1 GiB and lost at 128 MiB, where their partitions' three
            // chained searches cost more than the saved passes.
            eight_way_min_keys: EIGHT_WAY_MIN_BYTES / element_bytes,
            oct_registers,
            vt,
            // On the H100 the fastest cut lanes at every measured size put 45-50 thousand
            // threads on the cuts: 384 an SM.
            quad_cut_threads_per_sm: 384,
            // H200, cheaper probe rounds: a warp each for the 2.8-3k cuts of 2^23 u64 or pair
            // sorts was 7% faster than 16 lanes; 1536 and 2048 lost 2-10% on larger sorts.
            quad_cut_warp_threads_per_sm: SEARCH_WARP_THREADS_PER_SM,
            // A warp a boundary: much faster on small sorts' few, no faster on large sorts'.
            boundary_search_threads_per_sm: SEARCH_WARP_THREADS_PER_SM,
            // Between the sizes PDL made faster on the H100 and the first it did not.
            pdl_below_keys: PDL_MAX_BYTES.div_ceil(element_bytes),
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
        if !valid_search_lanes(self.quad_cut_lanes) {
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
        if self.oct_threads > 0 {
            check_launch_shape_within(
                self.oct_threads,
                self.vt,
                true,
                self.oct_shared_bytes(key_bytes, value_bytes),
                MAX_OPTIN_SHARED_BYTES,
            )?;
            let (piece, vt) = (self.quad_piece() as u32, self.vt);
            if self.quad_threads == 0 {
                return Err(GpuError::InvalidTuning(
                    "oct_threads needs quad_threads: the four-way cuts are the eight-way cuts' samples"
                        .to_owned(),
                ));
            }
            if self.oct_threads * (piece - vt) < OCT_FIRST_LEVEL_MERGES * piece {
                return Err(GpuError::InvalidTuning(format!(
                    "oct_threads = {} is too few for one level-one piece of {piece} outputs a thread (VT = {vt})",
                    self.oct_threads
                )));
            }
            if self.oct_threads > self.threads {
                return Err(GpuError::InvalidTuning(format!(
                    "oct_threads = {} must not exceed the block sort's threads = {}",
                    self.oct_threads, self.threads
                )));
            }
        }
        // Each register bound; at MIN_BOUNDED_REGISTERS or more its blocks an SM never ask for
        // more threads than an SM holds.
        for (name, registers) in [
            ("block_registers", self.block_registers),
            ("pass_registers", self.pass_registers),
            ("quad_registers", self.quad_registers),
            ("oct_registers", self.oct_registers),
        ] {
            if registers != 0
                && !(MIN_BOUNDED_REGISTERS..=MAX_REGISTERS_PER_THREAD).contains(&registers)
            {
                return Err(GpuError::InvalidTuning(format!(
                    "{name} = {registers} must be 0 or {MIN_BOUNDED_REGISTERS} to {MAX_REGISTERS_PER_THREAD}"
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

/// VT of the 4-byte keys' 1024-thread block sort (180 KiB of shared memory) and four-way tiles:
/// on the H100 the fastest of VT 37 to 47 at 2^27 and within 1% of the fastest (43) at 2^24,
/// 6% and 2-4% faster than 37 there (docs/tuning.md).
pub const WIDE_BLOCK_VT: u32 = 45;
/// Registers a thread of the 4-byte keys' two-way tile beside the [`WIDE_BLOCK_VT`] block sort
/// (eight 128-thread blocks an SM, where the compiler's 96 leave five).
pub const WIDE_BLOCK_PASS_REGISTERS: u32 = 64;
/// Registers a thread of the 256 x 15 two-way tile of pairs with 8-byte values (three blocks an SM,
/// where the compiler's 92 and 103 for u32 and u64 keys leave two): on an H200 those sorts of 2^20
/// pairs took 8-12% less time (docs/tuning.md). u64 keys with u32 values take 80 by themselves,
/// and the bound was 1-3% slower at 2^20.
pub const WIDE_PAIRS_PASS_REGISTERS: u32 = 80;
/// Registers a thread of the 256 x 15 block sort of pairs with an 8-byte key or value (three blocks
/// an SM, where the compiler's 101-122 leave two): on an H200 those sorts of 2^24 and 2^27 pairs
/// took 3-3.5% less time, of 2^20 1.5-2.5% (docs/tuning.md).
pub const WIDE_PAIRS_BLOCK_REGISTERS: u32 = 80;
/// Registers a thread of the 256 x 23 block sort of 8-byte keys alone in large sorts
/// ([`MergesortTuning::for_large_sorts`]): four blocks an SM, with a 40-byte stack, where the
/// compiler's 80 leave three (docs/tuning.md).
pub const WIDE_KEYS_BLOCK_REGISTERS: u32 = 64;
/// VT of the same tiles on devices whose opt-in shared memory a block holds 148 KiB but not 180
/// (sm_80's 163 KiB), the VT shipped before [`WIDE_BLOCK_VT`]; and under orders whose equivalent
/// keys may differ, whose stable slot sort measured faster here ([`MergesortTuning::for_order`]).
pub const NARROW_OPTIN_BLOCK_VT: u32 = 37;

/// The fewest registers a thread a tile's register bound may name: below this ptxas spills even
/// the indices of a merge.
const MIN_BOUNDED_REGISTERS: u32 = 32;
/// The most registers a thread can have (sm_80, sm_90).
const MAX_REGISTERS_PER_THREAD: u32 = 255;

/// Bytes of keys and values from which the shipped tunings sort with four-way passes
/// ([`MergesortTuning::four_way_min_keys`]).
const FOUR_WAY_MIN_BYTES: usize = 1 << 26;

/// The same for 8-byte elements (u64 keys, u32 pairs): on the H200 four-way passes took 2^22 of
/// them (32 MiB) 11-12% faster, where 2^23 u32 keys (32 MiB) were 9% slower (docs/tuning.md).
const EIGHT_BYTE_FOUR_WAY_MIN_BYTES: usize = 1 << 25;

/// Bytes of keys and values from which the shipped tunings sort with eight-way passes
/// ([`MergesortTuning::eight_way_min_keys`]).
const EIGHT_WAY_MIN_BYTES: usize = 1 << 30;

/// Bytes of keys and values below which the shipped tunings chain the kernels by programmatic
/// dependent launch ([`MergesortTuning::pdl_below_keys`]).
const PDL_MAX_BYTES: usize = 256 << 20;

/// Threads an SM up to which each four-way cut and two-way search gets a warp
/// ([`MergesortTuning::quad_cut_warp_threads_per_sm`], `boundary_search_threads_per_sm`): 1024,
/// where 512 left the 2.8-3k cuts of a 2^23 sort of 8-byte elements 16 lanes each.
const SEARCH_WARP_THREADS_PER_SM: usize = 1024;

/// Threads of a warp: a four-way cut's lanes vote within one.
pub(super) const WARP_LANES: u32 = MAX_SEARCH_LANES;

/// Pass tiles up to which a comparator that is not trusted lets its two-way passes' tile blocks
/// find their own boundaries: every block of the pass after reads all the pass's records (two
/// words a tile), so the reads grow with the square of the tiles (docs/tuning.md).
pub(super) const CHECKED_OWN_MAX_TILES: usize = 1024;

/// Merges of an eight-way tile's first level (kernels/mergesort_oct_tile.cu `OCT_FIRST_GROUPS`):
/// each needs a piece's thread beyond VT outputs a thread.
const OCT_FIRST_LEVEL_MERGES: u32 = 4;

/// Words per eight-way cut (kernels/mergesort_oct_partition.cu): the count taken from each run.
pub(super) const OCT_CUT_WORDS: usize = 8;

/// Words per four-way cut (kernels/mergesort_quad_partition.cuh): the counts taken from X, from run 0 and from
/// run 2.
pub(super) const QUAD_CUT_WORDS: usize = 3;

#[cfg(test)]
#[path = "tuning_tests.rs"]
mod tests;
