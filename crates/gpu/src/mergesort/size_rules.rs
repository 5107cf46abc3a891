//! The mergesort's tuning by the sort's size and order: small sorts' VT, large sorts' narrow four-way tiles, orders whose equivalents may differ.

use super::plan::merge_passes;
use super::tuning::{MergesortTuning, WIDE_BLOCK_VT, WIDE_KEYS_BLOCK_REGISTERS};

impl MergesortTuning {
    /// This tuning for an order whose equivalent keys are identical or not
    /// ([`DeviceComparator::equivalents_identical`](crate::DeviceComparator::equivalents_identical)):
    /// where they may differ, the block sort's register sort is the stable slot sort, with which
    /// the 4-byte keys' block sort at VT
    /// [`NARROW_OPTIN_BLOCK_VT`](super::tuning::NARROW_OPTIN_BLOCK_VT) measured 1.5-2% faster
    /// than at [`WIDE_BLOCK_VT`] (u32 under a top-8-bit comparator, 2^24 and 2^27). A small sort at
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
    /// or, smaller still, [`for_small_sorts`](Self::for_small_sorts)' where they all run at once.
    /// For 4- and 8-byte keys alone the two-way tile then takes the most registers of
    /// [`ONE_ROUND_PASS_REGISTERS`] at which all its tiles run at once, and where none is few
    /// enough, [`for_many_pass_tiles`](Self::for_many_pass_tiles)' bound (docs/tuning.md).
    pub const fn for_launch(
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
        max_shared_optin: usize,
        multiprocessors: usize,
    ) -> Self {
        Self::for_launch_ordered(
            key_bytes,
            value_bytes,
            count,
            max_shared_optin,
            multiprocessors,
            true,
        )
    }

    /// [`for_launch`](Self::for_launch) for an order whose equivalent keys are identical or not:
    /// the tiles [`for_order`](Self::for_order) takes, then the two-way tile's register bound for
    /// their number (a shorter VT means more tiles).
    pub const fn for_launch_ordered(
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
        max_shared_optin: usize,
        multiprocessors: usize,
        equivalents_identical: bool,
    ) -> Self {
        let (shape, within_static) = Self::for_launch_shape(
            key_bytes,
            value_bytes,
            count,
            max_shared_optin,
            multiprocessors,
        );
        let chosen = shape.for_order(equivalents_identical);
        if !within_static || !bounds_pass_registers(key_bytes, value_bytes) {
            return chosen;
        }
        let pass_tiles = count.div_ceil(chosen.pass_tile());
        let mut pass_registers = Self::for_many_pass_tiles(key_bytes, value_bytes).pass_registers;
        // Orders whose equivalents may differ try the first bound alone: their checked tiles at
        // VT 21 take 72-80 registers by themselves, and at 2^21 (781 tiles) a bound of 80 was
        // 1-5% slower and 64 9-10%.
        let bounds = if equivalents_identical {
            ONE_ROUND_PASS_REGISTERS.len()
        } else {
            1
        };
        let mut i = 0;
        while i < bounds {
            let registers = ONE_ROUND_PASS_REGISTERS[i];
            let blocks = REGISTERS_PER_SM / (chosen.pass_threads as usize * registers as usize);
            if pass_tiles <= blocks * multiprocessors {
                pass_registers = registers;
                break;
            }
            i += 1;
        }
        Self {
            pass_registers,
            ..chosen
        }
    }

    /// [`for_launch`](Self::for_launch)'s tiles before the two-way tile's register bound, and
    /// whether they are the ones within static shared memory (the small sorts' or
    /// [`within_static_shared`](Self::within_static_shared)'s).
    const fn for_launch_shape(
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
        max_shared_optin: usize,
        multiprocessors: usize,
    ) -> (Self, bool) {
        let tuning = Self::for_device(key_bytes, value_bytes, max_shared_optin);
        let small = Self::within_static_shared(key_bytes, value_bytes);
        let shorter = Self::for_small_sorts(key_bytes, value_bytes);
        if shorter.vt != small.vt
            && count.div_ceil(shorter.tile())
                <= shorter.small_sort_blocks_per_sm() * multiprocessors
            && merge_passes(count, shorter.tile()) == merge_passes(count, small.tile())
        {
            (shorter, true)
        } else if count < tuning.tile() * multiprocessors {
            (small, true)
        } else if count.saturating_mul(key_bytes + value_bytes) >= LARGE_SORT_MIN_BYTES {
            // The 8-byte keys' large tiles are within static shared memory too.
            let large = Self::for_large_sorts(key_bytes, value_bytes, max_shared_optin);
            (
                large,
                large.vt == small.vt && large.threads == small.threads,
            )
        } else {
            // The 8-byte keys' shipped tiles are within static shared memory already.
            (
                tuning,
                tuning.vt == small.vt && tuning.threads == small.threads,
            )
        }
    }

    /// [`for_device`](Self::for_device) for sorts of 128 MiB of keys and values or more (where
    /// [`for_launch`](Self::for_launch) takes it; docs/tuning.md): for the wide block sort's keys
    /// four-way tiles of 128 threads (half the threads); for 8-byte keys alone the block sort
    /// bound to [`WIDE_KEYS_BLOCK_REGISTERS`] and the two-way tile to [`WIDE_KEYS_PASS_REGISTERS`]
    /// (the bound `for_launch` gives their many tiles); other tunings as they are.
    pub const fn for_large_sorts(
        key_bytes: usize,
        value_bytes: usize,
        max_shared_optin: usize,
    ) -> Self {
        let tuning = Self::for_device(key_bytes, value_bytes, max_shared_optin);
        if tuning.vt == WIDE_BLOCK_VT {
            Self {
                quad_threads: NARROW_QUAD_THREADS,
                ..tuning
            }
        } else if key_bytes == 8 && value_bytes == 0 {
            Self {
                block_registers: WIDE_KEYS_BLOCK_REGISTERS,
                pass_registers: WIDE_KEYS_PASS_REGISTERS,
                ..tuning
            }
        } else {
            tuning
        }
    }

    /// [`within_static_shared`](Self::within_static_shared) with a shorter VT for small sorts:
    /// [`SMALL_SORT_VT`] for 4-byte keys, [`SMALL_SORT_WIDE_KEYS_VT`] for 8-byte keys,
    /// [`SMALL_SORT_PAIRS_VT`] for 4-byte keys with 4-byte values and
    /// [`SMALL_SORT_WIDE_PAIRS_VT`] for pairs with an 8-byte key or value; the other types as
    /// they are.
    /// [`for_launch`](Self::for_launch) takes it where all its block-sort tiles run at once and
    /// the sort needs no more passes than at the longer VT.
    /// There every launch is one round of blocks, each a chain of dependent steps a key: a
    /// shorter VT shortens each chain and spreads the tiles over more SMs (docs/tuning.md).
    pub const fn for_small_sorts(key_bytes: usize, value_bytes: usize) -> Self {
        let small = Self::within_static_shared(key_bytes, value_bytes);
        let vt = match (key_bytes, value_bytes) {
            (4, 0) => SMALL_SORT_VT,
            (8, 0) => SMALL_SORT_WIDE_KEYS_VT,
            (4, 4) => SMALL_SORT_PAIRS_VT,
            (0..=8, 5..=8) | (5..=8, 1..=4) => SMALL_SORT_WIDE_PAIRS_VT,
            _ => small.vt,
        };
        Self { vt, ..small }
    }

    /// Block-sort tiles an SM up to which a sort takes this small-sort tuning: as many as its
    /// register bound lets run at once (three for the pairs with an 8-byte key or value), else
    /// [`SMALL_SORT_BLOCKS_PER_SM`].
    const fn small_sort_blocks_per_sm(&self) -> usize {
        if self.block_registers > 0 {
            REGISTERS_PER_SM / (self.threads as usize * self.block_registers as usize)
        } else {
            SMALL_SORT_BLOCKS_PER_SM
        }
    }

    /// [`within_static_shared`](Self::within_static_shared) with the two-way pass tile bound to
    /// [`WIDE_KEYS_PASS_REGISTERS`] for 8-byte keys alone (their shipped tiles), the other types'
    /// tiles as shipped. [`for_launch`](Self::for_launch) takes it where the two-way tiles are too
    /// many to run at once at any of [`ONE_ROUND_PASS_REGISTERS`].
    pub const fn for_many_pass_tiles(key_bytes: usize, value_bytes: usize) -> Self {
        let tuning = Self::within_static_shared(key_bytes, value_bytes);
        let pass_registers = match (key_bytes, value_bytes) {
            (8, 0) => WIDE_KEYS_PASS_REGISTERS,
            _ => tuning.pass_registers,
        };
        Self {
            pass_registers,
            ..tuning
        }
    }

    /// [`for_small_sorts`](Self::for_small_sorts) with the two-way tile bound to `REGISTERS`
    /// where [`for_launch`](Self::for_launch) bounds the type's tile: the programs it may take.
    pub const fn for_small_sorts_bounded<const REGISTERS: u32>(
        key_bytes: usize,
        value_bytes: usize,
    ) -> Self {
        Self::for_small_sorts(key_bytes, value_bytes).bounded_for(key_bytes, value_bytes, REGISTERS)
    }

    /// [`within_static_shared`](Self::within_static_shared) with the two-way tile bound to
    /// `REGISTERS` where [`for_launch`](Self::for_launch) bounds the type's tile.
    pub const fn within_static_shared_bounded<const REGISTERS: u32>(
        key_bytes: usize,
        value_bytes: usize,
    ) -> Self {
        Self::within_static_shared(key_bytes, value_bytes).bounded_for(
            key_bytes,
            value_bytes,
            REGISTERS,
        )
    }

    /// This tuning with the two-way tile bound to `registers` where the type's tile takes bounds.
    const fn bounded_for(self, key_bytes: usize, value_bytes: usize, registers: u32) -> Self {
        if bounds_pass_registers(key_bytes, value_bytes) {
            Self {
                pass_registers: registers,
                ..self
            }
        } else {
            self
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
/// VT of small sorts of pairs with an 8-byte key or value (u32 keys with u64 values, u64 keys with
/// u32 or u64 values), up to three tiles an SM: on an H200 sorts of 2^19 and 2^20 pairs took
/// 12-17% and 5-14% less time than at VT 15; VT 9 was faster still for u32 keys with u64 values
/// (5-8% at 2^20) but slower than VT 15 for u64 pairs (5% at 2^20).
pub const SMALL_SORT_WIDE_PAIRS_VT: u32 = 11;
/// Block-sort tiles an SM up to which a sort takes [`MergesortTuning::for_small_sorts`]: the
/// 4-byte keys' 512-thread block sort runs two an SM (64 registers), so up to that every tile
/// starts at once; u64 and pair sorts of 2^21 (432 and 456 tiles) lost 5% at the shorter VT.
const SMALL_SORT_BLOCKS_PER_SM: usize = 2;

/// Registers a thread of the 8-byte keys' 256-thread two-way tile where its tiles are more than
/// [`ONE_ROUND_PASS_REGISTERS`] let run at once ([`MergesortTuning::for_many_pass_tiles`]):
/// three blocks an SM where the compiler's 90-106 registers leave two. On an H200 u64 and f64
/// sorts of 1.6 to 3.1 million keys took 2-15% less time, and 2^23 (one two-way pass) 1.5-2%; a
/// bound of 64 (four blocks, a spill) was 15% faster at 3.1 million keys but slower at 1.6 and
/// 2.1 million and at 2^23.
pub const WIDE_KEYS_PASS_REGISTERS: u32 = 80;

/// Register bounds of the two-way tile, most first, of which [`MergesortTuning::for_launch`]
/// takes the first at which every tile runs at once (`65536 / (pass_threads * registers)` blocks
/// an SM): where they all do, each launch lasts one block's chain of dependent steps, and more
/// registers shorten it. On an H200 u32 sorts of 2^20 keys (482 tiles of 128 x 17) took 10% less
/// time at 128 registers than at the compiler's 48, and of 2^21 (964 tiles) 6-7% less at 64;
/// bounds that leave two rounds lost 5-20%.
pub const ONE_ROUND_PASS_REGISTERS: [u32; 3] = [128, 80, 64];

/// Registers of an SM (sm_80, sm_90).
const REGISTERS_PER_SM: usize = 65536;

/// Whether [`MergesortTuning::for_launch`] bounds the two-way tile's registers for keys of
/// `key_bytes` and values of `value_bytes`: 4- and 8-byte keys alone, the types measured.
const fn bounds_pass_registers(key_bytes: usize, value_bytes: usize) -> bool {
    value_bytes == 0 && (key_bytes == 4 || key_bytes == 8)
}

/// Four-way tile threads of the wide block sort's large sorts ([`MergesortTuning::for_launch`]):
/// twice the blocks an SM of the 256-thread tiles (eight at 64 registers) overlap more of one
/// tile's loads with another's merging where the tiles are many; on the H100 1.9% faster for u32
/// at 2^27, 4% slower at 2^24 (docs/tuning.md).
const NARROW_QUAD_THREADS: u32 = 128;

/// Bytes of keys and values from which a sort takes [`MergesortTuning::for_large_sorts`]: the wide
/// block sort's [`NARROW_QUAD_THREADS`], and 8-byte keys' block sort at
/// [`WIDE_KEYS_BLOCK_REGISTERS`], which on an H200 took 1.3-2% off u64 and f64 sorts of 2^24 and
/// 2^27 keys and added 0.4-1.9% at 2^21-2^23, where its tiles are two waves or fewer.
const LARGE_SORT_MIN_BYTES: usize = 1 << 27;
