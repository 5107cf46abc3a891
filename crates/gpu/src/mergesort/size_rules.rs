//! The mergesort's tuning by the sort's size and order: small sorts' VT, large sorts' narrow four-way tiles, orders whose equivalents may differ.

use super::plan::merge_passes;
use super::tuning::{MergesortTuning, WIDE_BLOCK_VT};

impl MergesortTuning {
    /// This tuning for an order whose equivalent keys are identical or not
    /// ([`DeviceComparator::equivalents_identical`](crate::DeviceComparator::equivalents_identical)):
    /// where they may differ, the block sort's register sort is the stable slot sort, with which
    /// the 4-byte keys' block sort at VT [`NARROW_OPTIN_BLOCK_VT`](super::tuning::NARROW_OPTIN_BLOCK_VT) measured 1.5-2% faster than at
    /// [`WIDE_BLOCK_VT`] (u32 under a top-8-bit comparator, 2^24 and 2^27). A small sort at
    /// [`SMALL_SORT_VT`] takes VT [`SMALL_SORT_SLOT_SORT_VT`]: under the top-8-bit comparator on
    /// an H200, 2-19% faster than VT 23 from 2^19 to 2^21 keys, where VT 17 was 6% faster than
    /// 21 at 2^19 but 4% slower at 2^20 and 19% at 2^21.
    pub const fn for_order(self, equivalents_identical: bool) -> Self {
        if equivalents_identical {
            self
        } else if self.vt == SMALL_SORT_VT {
            Self {
                vt: SMALL_SORT_SLOT_SORT_VT,
                ..self
            }
        } else {
            self.narrow_block()
        }
    }

    /// The tuning the launches use for `count` keys: [`for_device`](Self::for_device), unless
    /// its block sort has fewer tiles than the device has SMs (`multiprocessors`), where
    /// [`within_static_shared`](Self::within_static_shared)'s smaller tiles keep more SMs busy,
    /// or, smaller still, [`for_small_sorts`](Self::for_small_sorts)' where they all run at once;
    /// with [`for_many_pass_tiles`](Self::for_many_pass_tiles)' two-way tile registers where
    /// the two-way tiles are more than two an SM (docs/tuning.md).
    pub const fn for_launch(
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
        max_shared_optin: usize,
        multiprocessors: usize,
    ) -> Self {
        let chosen = Self::for_launch_shape(
            key_bytes,
            value_bytes,
            count,
            max_shared_optin,
            multiprocessors,
        );
        let bounded = Self::for_many_pass_tiles(key_bytes, value_bytes).pass_registers;
        if bounded != chosen.pass_registers
            && count.div_ceil(chosen.pass_tile()) > UNBOUNDED_PASS_TILES_PER_SM * multiprocessors
        {
            Self {
                pass_registers: bounded,
                ..chosen
            }
        } else {
            chosen
        }
    }

    /// [`for_launch`](Self::for_launch)'s tiles before the two-way tile's register bound.
    const fn for_launch_shape(
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
        max_shared_optin: usize,
        multiprocessors: usize,
    ) -> Self {
        let tuning = Self::for_device(key_bytes, value_bytes, max_shared_optin);
        let small = Self::within_static_shared(key_bytes, value_bytes);
        let shorter = Self::for_small_sorts(key_bytes, value_bytes);
        if shorter.vt != small.vt
            && count.div_ceil(shorter.tile()) <= SMALL_SORT_BLOCKS_PER_SM * multiprocessors
            && merge_passes(count, shorter.tile()) == merge_passes(count, small.tile())
        {
            shorter
        } else if count < tuning.tile() * multiprocessors {
            small
        } else if tuning.vt == WIDE_BLOCK_VT
            && count.saturating_mul(key_bytes + value_bytes) >= NARROW_QUAD_MIN_BYTES
        {
            // Large sorts of the wide block sort's keys: four-way tiles of half the threads.
            Self {
                quad_threads: NARROW_QUAD_THREADS,
                ..tuning
            }
        } else {
            tuning
        }
    }

    /// [`within_static_shared`](Self::within_static_shared) with a shorter VT for small sorts:
    /// [`SMALL_SORT_VT`] for 4-byte keys, [`SMALL_SORT_WIDE_KEYS_VT`] for 8-byte keys and
    /// [`SMALL_SORT_PAIRS_VT`] for 4-byte keys with 4-byte values; the other types as they are. [`for_launch`](Self::for_launch) takes it where all
    /// its block-sort tiles run at once and the sort needs no more passes than at the longer VT.
    /// There every launch is one round of blocks, each a chain of dependent steps a key: a
    /// shorter VT shortens each chain and spreads the tiles over more SMs (docs/tuning.md).
    pub const fn for_small_sorts(key_bytes: usize, value_bytes: usize) -> Self {
        let small = Self::within_static_shared(key_bytes, value_bytes);
        let vt = match (key_bytes, value_bytes) {
            (4, 0) => SMALL_SORT_VT,
            (8, 0) => SMALL_SORT_WIDE_KEYS_VT,
            (4, 4) => SMALL_SORT_PAIRS_VT,
            _ => small.vt,
        };
        Self { vt, ..small }
    }

    /// [`for_types`](Self::for_types) with the two-way pass tile bound to
    /// [`WIDE_KEYS_PASS_REGISTERS`] for 8-byte keys alone; the other types as they are.
    /// [`for_launch`](Self::for_launch) takes the bound where the two-way tiles do not all run
    /// at once at the compiler's registers.
    pub const fn for_many_pass_tiles(key_bytes: usize, value_bytes: usize) -> Self {
        let tuning = Self::for_types(key_bytes, value_bytes);
        let pass_registers = match (key_bytes, value_bytes) {
            (8, 0) => WIDE_KEYS_PASS_REGISTERS,
            _ => tuning.pass_registers,
        };
        Self {
            pass_registers,
            ..tuning
        }
    }
}

/// VT of small sorts of 4-byte keys ([`MergesortTuning::for_small_sorts`]): on an H200 u32
/// sorts of 2^19 to 2^21 keys took 6-9% less time than at VT 23, within 3% of the fastest VT
/// of 13 to 23 at each size; at 2^22 (two rounds of blocks) VT 17 was 6% slower.
pub const SMALL_SORT_VT: u32 = 17;
/// VT of the same sorts under an order whose equivalent keys may differ
/// ([`MergesortTuning::for_order`]).
pub const SMALL_SORT_SLOT_SORT_VT: u32 = 21;
/// VT of small sorts of 8-byte keys: on an H200 u64 sorts of 2^18 to 2^20 keys took 7-10% less
/// time than at VT 23, the fastest of 15 to 23 at 2^19 and 2^20 (at 2^18 VT 17 was 5-8% faster
/// still).
pub const SMALL_SORT_WIDE_KEYS_VT: u32 = 19;
/// VT of small sorts of 4-byte keys with 4-byte values: on an H200 u32 pairs of 2^18 to 2^20
/// took 4-9% less time than at VT 11, the fastest of 7, 9 and 11 at 2^19 and 2^20 and within 2%
/// of 7 at 2^18.
pub const SMALL_SORT_PAIRS_VT: u32 = 9;
/// Block-sort tiles an SM up to which a sort takes [`MergesortTuning::for_small_sorts`]: the
/// 4-byte keys' 512-thread block sort runs two an SM (64 registers), so up to that every tile
/// starts at once; u64 and pair sorts of 2^21 (432 and 456 tiles) lost 5% at the shorter VT.
const SMALL_SORT_BLOCKS_PER_SM: usize = 2;

/// Registers a thread of the 8-byte keys' 256-thread two-way tile where its tiles are many
/// ([`MergesortTuning::for_many_pass_tiles`]): three blocks an SM where the compiler's 90-106
/// registers leave two. On an H200 u64 and f64 sorts of 1.6 to 3.1 million keys took 2-15% less
/// time, and 2^23 (one two-way pass) 1.5-2%; a bound of 64 (four blocks, a spill) was 15% faster
/// at 3.1 million keys but slower at 1.6 and 2.1 million and at 2^23.
pub const WIDE_KEYS_PASS_REGISTERS: u32 = 80;

/// Two-way tiles an SM up to which [`MergesortTuning::for_launch`] leaves the tile's registers
/// to the compiler: the u64 tile's two blocks an SM. Where every tile runs at once the tiles
/// wait on their own chains of dependent steps, and fewer registers lengthen them: u64 sorts of
/// 2^20 keys (216 tiles of 256 x 19) took 16% longer at 80 registers a thread.
const UNBOUNDED_PASS_TILES_PER_SM: usize = 2;

/// Four-way tile threads of the wide block sort's large sorts ([`MergesortTuning::for_launch`]):
/// twice the blocks an SM of the 256-thread tiles (eight at 64 registers) overlap more of one
/// tile's loads with another's merging where the tiles are many; on the H100 1.9% faster for u32
/// at 2^27, 4% slower at 2^24 (docs/tuning.md).
const NARROW_QUAD_THREADS: u32 = 128;

/// Bytes of keys and values from which the wide block sort's sorts take [`NARROW_QUAD_THREADS`].
const NARROW_QUAD_MIN_BYTES: usize = 1 << 27;
