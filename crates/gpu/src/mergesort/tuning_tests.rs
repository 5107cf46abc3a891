//! Host tests of the mergesort's tuning: pass plans, shipped shapes, the block sort by device and order.

use super::super::size_rules::*;
use super::*;

/// Every plan merges exactly the levels the block tiles need, takes eight-way passes only
/// for a trusted order with eight-way threads, and leaves at most one two-way pass (first)
/// and at most one four-way pass beside eight-way ones.
#[test]
fn pass_plans_cover_every_level() {
    let shipped = MergesortTuning::for_types(4, 0);
    let forced = MergesortTuning::forced_u32(64, 32, 32, 0, 0, 3);
    for tuning in [shipped, forced, forced.with_eight_way(32)] {
        for tiles in [1, 2, 3, 4, 5, 8, 9, 64, 65, 1 << 12, (1 << 12) + 1] {
            let count = tiles * tuning.tile();
            let levels = merge_passes(count, tuning.tile());
            for trusted in [false, true] {
                let plan = tuning.pass_plan(count, trusted);
                let merged = plan.two_way + 2 * plan.four_way + 3 * plan.eight_way;
                assert_eq!(merged, levels, "{tuning:?}, {tiles} tiles, {plan:?}");
                assert!(plan.two_way <= 1 || plan.four_way + plan.eight_way == 0);
                if plan.eight_way > 0 {
                    assert!(trusted && tuning.oct_threads > 0, "{plan:?}");
                    assert!(plan.four_way <= 1 && plan.two_way + plan.four_way <= 1);
                    assert!(count >= tuning.eight_way_min_keys);
                }
            }
        }
    }
    // The shipped u64 sort at 2^27: fifteen levels, five eight-way passes for a trusted
    // order, seven four-way passes after a two-way one for a user comparator.
    let u64_keys = MergesortTuning::for_types(8, 0);
    let plan = u64_keys.pass_plan(1 << 27, true);
    assert_eq!((plan.two_way, plan.four_way, plan.eight_way), (0, 0, 5));
    let plan = u64_keys.pass_plan(1 << 27, false);
    assert_eq!((plan.two_way, plan.four_way, plan.eight_way), (1, 7, 0));
    // Below 1 GiB, and for u32 keys, four-way passes.
    assert_eq!(u64_keys.pass_plan(1 << 24, true).eight_way, 0);
    assert_eq!(shipped.pass_plan(1 << 27, true).four_way, 6);
}

/// The shipped eight-way tiles pass their own checks, and fit next to the four-way tiles.
#[test]
fn shipped_eight_way_tunings_validate() {
    for (key_bytes, value_bytes) in [(8, 0), (4, 4)] {
        let tuning = MergesortTuning::for_types(key_bytes, value_bytes);
        assert!(tuning.oct_threads > 0, "{key_bytes}+{value_bytes}");
        tuning.validate(key_bytes, value_bytes).expect("valid");
    }
    let too_few = MergesortTuning {
        oct_threads: 2,
        ..MergesortTuning::forced_u32(64, 32, 32, 0, 0, 3)
    };
    assert!(too_few.validate(4, 0).is_err());
}

#[test]
fn four_byte_keys_take_the_widest_block_sort_the_device_holds() {
    // sm_90 (227 KiB a block), sm_80 (163 KiB), and a device held to 48 KiB.
    let vt = |optin: usize| MergesortTuning::for_device(4, 0, optin).vt;
    assert_eq!(vt(227 * 1024), WIDE_BLOCK_VT);
    assert_eq!(vt(163 * 1024), NARROW_OPTIN_BLOCK_VT);
    assert_eq!(
        vt(48 * 1024),
        MergesortTuning::within_static_shared(4, 0).vt
    );
    // An order whose equivalents may differ keeps VT 37 (its register sort is quadratic).
    let wide = MergesortTuning::for_device(4, 0, 227 * 1024);
    assert_eq!(wide.for_order(false).vt, NARROW_OPTIN_BLOCK_VT);
    assert_eq!(wide.for_order(true), wide);
    let pairs = MergesortTuning::for_types(4, 4);
    assert_eq!(pairs.for_order(false), pairs);
    for optin in [227 * 1024, 163 * 1024, 48 * 1024] {
        let tuning = MergesortTuning::for_device(4, 0, optin);
        assert!(tuning.blocksort_shared_bytes(4, 0) <= optin);
        tuning.validate(4, 0).expect("valid");
    }
}

/// Four-way passes from 64 MiB of 4-byte keys (2^24) and from 32 MiB of 8-byte elements (2^22
/// u64 keys or u32 pairs), where each measured faster than two-way passes only.
#[test]
fn four_way_passes_start_where_they_measured_faster() {
    assert_eq!(MergesortTuning::for_types(4, 0).four_way_min_keys, 1 << 24);
    assert_eq!(MergesortTuning::for_types(8, 0).four_way_min_keys, 1 << 22);
    assert_eq!(MergesortTuning::for_types(4, 4).four_way_min_keys, 1 << 22);
    assert_eq!(MergesortTuning::for_types(8, 8).four_way_min_keys, 1 << 22);
}

/// On 132 SMs with 227 KiB a block, sorts whose shorter-VT block sort runs two tiles an SM at
/// most and needs no more passes take it: 4-byte keys VT 17 (21 under an order whose equivalents
/// may differ), u64 keys 19, u32 pairs 9; larger ones and ones where it adds a pass keep 23 and
/// 11.
#[test]
fn small_sorts_take_the_shorter_vt_where_it_adds_no_pass() {
    const H200_SMS: usize = 132;
    let vt = |key_bytes: usize, value_bytes: usize, count: usize| {
        MergesortTuning::for_launch(key_bytes, value_bytes, count, 227 * 1024, H200_SMS).vt
    };
    for log2n in [10, 16, 19, 20, 21] {
        assert_eq!(vt(4, 0, 1 << log2n), SMALL_SORT_VT, "2^{log2n}");
    }
    // Two rounds of 512 x 17 tiles (482 at 2^22).
    assert_eq!(vt(4, 0, 1 << 22), 23);
    // 128 tiles of 512 x 23 (seven passes) or 173 of 512 x 17 (eight).
    assert_eq!(vt(4, 0, 128 * 512 * 23), 23);
    for log2n in [16, 19, 20] {
        assert_eq!(
            vt(8, 0, 1 << log2n),
            SMALL_SORT_WIDE_KEYS_VT,
            "u64 2^{log2n}"
        );
        assert_eq!(vt(4, 4, 1 << log2n), SMALL_SORT_PAIRS_VT, "pairs 2^{log2n}");
    }
    // 432 tiles of 256 x 19 and 456 of 512 x 9: two rounds.
    assert_eq!(vt(8, 0, 1 << 21), 23);
    assert_eq!(vt(4, 4, 1 << 21), 11);
    // Other types keep their tiles.
    assert_eq!(
        vt(16, 0, 1 << 16),
        MergesortTuning::within_static_shared(16, 0).vt
    );
    for (key_bytes, value_bytes) in [(8, 0), (4, 4)] {
        let shorter = MergesortTuning::for_small_sorts(key_bytes, value_bytes);
        shorter.validate(key_bytes, value_bytes).expect("valid");
        assert_eq!(shorter.tile() % shorter.pass_tile(), 0);
        assert_eq!(shorter.for_order(false), shorter);
    }
    let small = MergesortTuning::for_launch(4, 0, 1 << 20, 227 * 1024, H200_SMS);
    assert_eq!(small.for_order(false).vt, SMALL_SORT_SLOT_SORT_VT);
    assert_eq!(small.for_order(true), small);
    for tuning in [small, small.for_order(false)] {
        tuning.validate(4, 0).expect("valid");
        assert_eq!(tuning.tile() % tuning.pass_tile(), 0);
    }
}

/// On 132 SMs, 4- and 8-byte keys alone bound the two-way tile to the most registers of
/// `ONE_ROUND_PASS_REGISTERS` at which every tile runs at once; past that u64 keys take 80, the
/// 4-byte keys' static-shared tiles the compiler's registers and their 1024 x 45 block sort's 64;
/// pairs with 8-byte values take 80 at every size, and other types are never bound.
#[test]
fn two_way_tiles_take_the_most_registers_that_run_them_at_once() {
    const H200_SMS: usize = 132;
    let registers = |key_bytes: usize, value_bytes: usize, count: usize| {
        MergesortTuning::for_launch(key_bytes, value_bytes, count, 227 * 1024, H200_SMS)
            .pass_registers
    };
    // 4-byte keys: 128-thread tiles of 128 x 17 (small sorts) or 128 x 23; four blocks an SM at
    // 128 registers, six at 80, eight at 64.
    for key_bytes in [4, 8] {
        assert_eq!(
            registers(key_bytes, 0, 1 << 10),
            128,
            "{key_bytes}-byte 2^10"
        );
    }
    assert_eq!(registers(4, 0, 1 << 19), 128);
    assert_eq!(registers(4, 0, 1 << 20), 128, "482 tiles");
    assert_eq!(registers(4, 0, 700 * 128 * 17), 80, "700 tiles");
    assert_eq!(registers(4, 0, 1 << 21), 64, "964 tiles");
    assert_eq!(registers(4, 0, 1 << 22), 0, "1425 tiles of 128 x 23");
    // The 1024 x 45 block sort's many 128-thread tiles: eight blocks an SM.
    assert_eq!(registers(4, 0, 1 << 24), WIDE_BLOCK_PASS_REGISTERS);
    // Under an order whose equivalents may differ the small sorts' VT 21 leaves fewer tiles (391
    // and 781 at 2^20 and 2^21), and only the first bound is tried.
    let ordered = |count: usize| {
        MergesortTuning::for_launch_ordered(4, 0, count, 227 * 1024, H200_SMS, false)
    };
    assert_eq!(ordered(1 << 20).vt, SMALL_SORT_SLOT_SORT_VT);
    assert_eq!(ordered(1 << 20).pass_registers, 128);
    // (781 tiles: more than four an SM, so the compiler's registers.)
    assert_eq!(ordered(1 << 21).pass_registers, 0);
    assert_eq!(ordered(1 << 24).pass_registers, WIDE_BLOCK_PASS_REGISTERS);
    // 8-byte keys: 256-thread tiles; two blocks at 128, three at 80, four at 64, then 80.
    assert_eq!(registers(8, 0, 1 << 20), 128, "216 tiles of 256 x 19");
    assert_eq!(registers(8, 0, 264 * 256 * 23), 128);
    assert_eq!(registers(8, 0, 264 * 256 * 23 + 1), 80);
    assert_eq!(registers(8, 0, 1 << 21), 80, "357 tiles");
    assert_eq!(registers(8, 0, 450 * 256 * 23), 64);
    for count in [3 << 20, 1 << 23, 1 << 27] {
        assert_eq!(
            registers(8, 0, count),
            WIDE_KEYS_PASS_REGISTERS,
            "u64 {count}"
        );
    }
    for (key_bytes, value_bytes) in [(4, 4), (8, 8), (4, 8), (8, 4), (16, 0), (2, 0)] {
        // Pairs with 8-byte values take their shipped bound at every size; the rest the
        // compiler's registers.
        let shipped = match (key_bytes, value_bytes) {
            (8, 8) | (4, 8) => WIDE_PAIRS_PASS_REGISTERS,
            _ => 0,
        };
        for log2n in [10, 20, 22, 24, 27] {
            let bound = registers(key_bytes, value_bytes, 1 << log2n);
            assert_eq!(bound, shipped, "{key_bytes}+{value_bytes} 2^{log2n}");
        }
    }
    // Every bounded tuning the rule takes is among the shipped programs' tunings.
    for count in [
        1 << 16,
        1 << 20,
        700 * 128 * 17,
        1 << 21,
        1 << 22,
        1 << 23,
        1 << 27,
    ] {
        for key_bytes in [4, 8] {
            let tuning = MergesortTuning::for_launch(key_bytes, 0, count, 227 * 1024, H200_SMS);
            tuning.validate(key_bytes, 0).expect("valid");
            let shipped = <MergesortTuning as crate::ProgramTuning>::SHIPPED
                .iter()
                .any(|rule| rule(key_bytes, 0) == tuning);
            let bounded = tuning.pass_registers != 0;
            assert!(
                shipped || !bounded,
                "{key_bytes}-byte keys, {count}: {tuning:?} is not shipped"
            );
        }
    }
    assert!(MergesortTuning {
        pass_registers: 8,
        ..MergesortTuning::for_many_pass_tiles(8, 0)
    }
    .validate(8, 0)
    .is_err());
}

/// The 256-thread block sort of pairs with an 8-byte key or value is bound to three blocks an SM
/// at every size, that of 8-byte keys alone to four past the small sorts; other types' block
/// sorts are left to the compiler; and every register bound is checked.
#[test]
fn wide_pairs_bound_their_block_sort() {
    const H200_SMS: usize = 132;
    for (key_bytes, value_bytes) in [(4, 8), (8, 4), (8, 8), (4, 4), (8, 0), (4, 0), (24, 0)] {
        for log2n in [10, 20, 24, 27] {
            let expected = match (key_bytes, value_bytes) {
                (4, 8) | (8, 4) | (8, 8) => WIDE_PAIRS_BLOCK_REGISTERS,
                (8, 0) if log2n >= 24 => WIDE_KEYS_BLOCK_REGISTERS,
                _ => 0,
            };
            let tuning = MergesortTuning::for_launch(
                key_bytes,
                value_bytes,
                1 << log2n,
                227 * 1024,
                H200_SMS,
            );
            assert_eq!(
                tuning.block_registers, expected,
                "{key_bytes}+{value_bytes} 2^{log2n}"
            );
            tuning.validate(key_bytes, value_bytes).expect("valid");
        }
    }
    let shipped = MergesortTuning::for_types(8, 8);
    for bad in [
        MergesortTuning {
            block_registers: 16,
            ..shipped
        },
        MergesortTuning {
            quad_registers: 256,
            ..shipped
        },
        MergesortTuning {
            oct_registers: 31,
            ..shipped
        },
    ] {
        assert!(bad.validate(8, 8).is_err(), "{bad:?}");
    }
}

/// Small sorts of pairs with an 8-byte key or value take VT 11 while their tiles are at most three
/// an SM (their block sort's blocks at 80 registers), VT 15 past that.
#[test]
fn wide_pairs_small_sorts_take_a_shorter_vt() {
    const H200_SMS: usize = 132;
    for (key_bytes, value_bytes) in [(4, 8), (8, 4), (8, 8)] {
        let vt = |count: usize| {
            MergesortTuning::for_launch(key_bytes, value_bytes, count, 227 * 1024, H200_SMS).vt
        };
        let short_tile = 256 * SMALL_SORT_WIDE_PAIRS_VT as usize;
        assert_eq!(vt(1 << 19), SMALL_SORT_WIDE_PAIRS_VT);
        assert_eq!(vt(1 << 20), SMALL_SORT_WIDE_PAIRS_VT, "373 tiles");
        assert_eq!(vt(3 * H200_SMS * short_tile), SMALL_SORT_WIDE_PAIRS_VT);
        assert_eq!(vt(3 * H200_SMS * short_tile + 1), 15);
        assert_eq!(vt(1 << 21), 15);
    }
}
