//! Property tests of the serial VT functions against std.

use proptest::prelude::*;
use twophase_serial::*;

const VT: usize = 7;

fn sorted(v: Vec<(u8, u32)>) -> Vec<(u8, u32)> {
    let mut v = v;
    v.sort_by_key(|x| x.0);
    v
}

fn key_less(a: &(u8, u32), b: &(u8, u32)) -> bool {
    a.0 < b.0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn serial_merge_in_steps_equals_stable_sort(
        a in prop::collection::vec((0u8..4, any::<u32>()), 0..40),
        b in prop::collection::vec((0u8..4, any::<u32>()), 0..40),
    ) {
        let (a, b) = (sorted(a), sorted(b));
        // Tag origin in the payload: A's first.
        let keys: Vec<(u8, u32)> = a.iter().map(|x| (x.0, 0)).chain(b.iter().map(|x| (x.0, 1))).collect();
        let mut range = MergeRange { a_begin: 0, a_end: a.len(), b_begin: a.len(), b_end: keys.len() };
        let mut out = Vec::new();
        let mut sources = Vec::new();
        while range.total() >= VT {
            let (k, s) = serial_merge::<Lower, VT, _, _>(&keys, &mut range, &key_less);
            out.extend(k);
            sources.extend(s);
        }
        let mut k = [(0, 0); VT];
        let mut s = [usize::MAX; VT];
        let n = serial_merge_checked::<Lower, VT, _, _>(&keys, &mut range, &key_less, &mut k, &mut s);
        out.extend(&k[..n]);
        sources.extend(&s[..n]);
        prop_assert!(s[n..].iter().all(|&x| x == usize::MAX), "checked form wrote past its count");
        let mut expected = keys.clone();
        expected.sort_by_key(|x| x.0); // stable: A's tag 0 before B's tag 1 on ties
        prop_assert_eq!(&out, &expected);
        for (o, &src) in out.iter().zip(&sources) {
            prop_assert_eq!(*o, keys[src]);
        }
    }

    #[test]
    fn serial_search_finds_lower_and_upper_bounds(
        needles in prop::collection::vec(0u32..10, 0..30),
        haystack in prop::collection::vec(0u32..10, 0..30),
    ) {
        let mut needles = needles; needles.sort();
        let mut haystack = haystack; haystack.sort();
        let less = |a: &u32, b: &u32| a < b;
        for upper in [false, true] {
            let mut range = MergeRange { a_begin: 0, a_end: needles.len(), b_begin: 0, b_end: haystack.len() };
            let mut got = vec![usize::MAX; needles.len()];
            while !range.is_empty() {
                let r = if upper {
                    serial_search::<Upper, VT, _, _>(&needles, &haystack, &mut range, &less)
                } else {
                    serial_search::<Lower, VT, _, _>(&needles, &haystack, &mut range, &less)
                };
                for i in 0..r.found { got[r.needles[i]] = r.bounds[i]; }
            }
            let expected: Vec<usize> = needles.iter().map(|n| {
                if upper { haystack.partition_point(|h| h <= n) } else { haystack.partition_point(|h| h < n) }
            }).collect();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn serial_load_balance_assigns_segments_and_ranks(sizes in prop::collection::vec(0usize..5, 1..30)) {
        let mut scan = Vec::new();
        let mut total = 0;
        for s in &sizes { scan.push(total); total += s; }
        let mut range = MergeRange { a_begin: 0, a_end: total, b_begin: 0, b_end: scan.len() };
        let mut got = Vec::new();
        while !range.is_empty() {
            let r = serial_load_balance::<VT>(&scan, &mut range);
            for i in 0..r.count {
                prop_assert_eq!(r.first_item + i, got.len());
                got.push((r.segments[i], r.ranks[i]));
            }
        }
        let expected: Vec<(usize, usize)> =
            sizes.iter().enumerate().flat_map(|(s, &n)| (0..n).map(move |r| (s, r))).collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn serial_sort_is_stable_on_any_prefix(keys in prop::collection::vec(0u8..3, VT), count in 0usize..=VT) {
        let mut k: [u8; VT] = keys.clone().try_into().unwrap();
        let mut v: [usize; VT] = core::array::from_fn(|i| i);
        serial_sort_pairs::<VT, _, _, _>(&mut k, &mut v, count, &|a: &u8, b: &u8| a < b);
        let mut expected: Vec<(u8, usize)> = keys[..count].iter().copied().zip(0..).collect();
        expected.sort_by_key(|x| x.0);
        let got: Vec<(u8, usize)> = k[..count].iter().copied().zip(v[..count].iter().copied()).collect();
        prop_assert_eq!(got, expected);
        // Entries past count are untouched.
        prop_assert_eq!(&k[count..], &keys[count..]);
        let mut plain: [u8; VT] = keys.clone().try_into().unwrap();
        serial_sort::<VT, _, _>(&mut plain, count, &|a: &u8, b: &u8| a < b);
        prop_assert_eq!(plain, k);
    }

    #[test]
    fn stable_slot_sort_is_std_stable_sort(keys in prop::collection::vec(0u8..3, SLOT_VT)) {
        // The block sort's widths (VT 37 and 45) and a short one, each with groups of 8 (as
        // shipped), of 1 (merges only) and of VT (transposition only).
        fn check<const N: usize, const GROUP: usize>(keys: &[u8]) -> Result<(), TestCaseError> {
            let input: [(u8, u32); N] = core::array::from_fn(|i| (keys[i], i as u32));
            let mut got = input;
            let mut slots = input;
            stable_slot_sort::<N, GROUP, _, _>(&mut got, &mut slots, &key_less);
            prop_assert_eq!(got.to_vec(), sorted(input.to_vec()), "VT {} groups of {}", N, GROUP);
            Ok(())
        }
        check::<SLOT_VT, 8>(&keys)?;
        check::<37, 8>(&keys)?;
        check::<11, 8>(&keys)?;
        check::<37, 1>(&keys)?;
        check::<37, 37>(&keys)?;
    }
}

/// The widest VT the slot sort's property test sorts (the u32 block sort's).
const SLOT_VT: usize = 45;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A scan that breaks the exclusive-scan precondition (not starting at 0, decreasing) gives
    /// unspecified answers but never panics.
    #[test]
    fn serial_load_balance_survives_any_scan(
        scan in prop::collection::vec(0usize..50, 1..20),
        total in 0usize..50,
    ) {
        let mut range = MergeRange { a_begin: 0, a_end: total, b_begin: 0, b_end: scan.len() };
        let mut assigned = 0;
        while !range.is_empty() {
            let items = serial_load_balance::<VT>(&scan, &mut range);
            prop_assert!(items.segments[..items.count].iter().all(|&s| s < scan.len()));
            assigned += items.count;
        }
        prop_assert_eq!(assigned, total);
    }
}

/// Three ranges of one buffer: each a sorted A then a sorted B, laid end to end.
fn three_ranges(parts: &[(Vec<u8>, Vec<u8>); 3]) -> (Vec<(u8, u32)>, [MergeRange; 3]) {
    let mut keys = Vec::new();
    let mut ranges = [MergeRange {
        a_begin: 0,
        a_end: 0,
        b_begin: 0,
        b_end: 0,
    }; 3];
    for (range, (a, b)) in ranges.iter_mut().zip(parts) {
        let (mut a, mut b) = (a.clone(), b.clone());
        a.sort();
        b.sort();
        range.a_begin = keys.len();
        keys.extend(a.iter().map(|&k| (k, 0)));
        range.a_end = keys.len();
        range.b_begin = keys.len();
        keys.extend(b.iter().map(|&k| (k, 0)));
        range.b_end = keys.len();
    }
    // Payloads are positions, so every output names where it came from.
    for (i, key) in keys.iter_mut().enumerate() {
        key.1 = i as u32;
    }
    (keys, ranges)
}

fn parts() -> impl Strategy<Value = [(Vec<u8>, Vec<u8>); 3]> {
    let side = || prop::collection::vec(0u8..4, 0..40);
    [(side(), side()), (side(), side()), (side(), side())]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Lanes stepped together give each lane exactly what serial_merge gives it alone, with or
    /// without the source positions, whether a side can run out within the piece or not.
    #[test]
    fn serial_merge_lanes_equal_serial_merge_on_each_lane(parts in parts()) {
        let (keys, start) = three_ranges(&parts);
        let mut lanes = start;
        let mut alone = start;
        let mut sources = [[usize::MAX; VT]; 3];
        let mut with_sources = true;
        while lanes.iter().all(|lane| lane.total() >= VT) {
            let merged = if with_sources {
                serial_merge_lanes::<Lower, VT, 3, _, _>(&keys, &mut lanes, &key_less, Some(&mut sources))
            } else {
                serial_merge_lanes::<Lower, VT, 3, _, _>(&keys, &mut lanes, &key_less, None)
            };
            for l in 0..3 {
                let (k, s) = serial_merge::<Lower, VT, _, _>(&keys, &mut alone[l], &key_less);
                prop_assert_eq!(merged[l], k);
                if with_sources {
                    prop_assert_eq!(sources[l], s);
                }
                prop_assert_eq!(lanes[l], alone[l]);
            }
            with_sources = !with_sources;
        }
    }

    /// Under a comparator that answers at random (no order at all), every lane's reads and
    /// outputs stay inside its own range, each input taken at most once.
    #[test]
    fn serial_merge_lanes_stay_in_their_ranges_under_any_answers(parts in parts(), seed in any::<u64>()) {
        let (keys, start) = three_ranges(&parts);
        let state = core::cell::Cell::new(seed | 1);
        let random_less = |_: &(u8, u32), _: &(u8, u32)| {
            // xorshift64: a different answer at every call.
            let mut x = state.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            state.set(x);
            x & 1 == 1
        };
        let mut lanes = start;
        let mut taken = vec![false; keys.len()];
        let mut sources = [[0; VT]; 3];
        while lanes.iter().all(|lane| lane.total() >= VT) {
            let merged = serial_merge_lanes::<Lower, VT, 3, _, _>(&keys, &mut lanes, &random_less, Some(&mut sources));
            for l in 0..3 {
                for (key, &source) in merged[l].iter().zip(&sources[l]) {
                    let inside = (start[l].a_begin..start[l].a_end).contains(&source)
                        || (start[l].b_begin..start[l].b_end).contains(&source);
                    prop_assert!(inside, "lane {} took position {} outside its range", l, source);
                    prop_assert!(!taken[source], "position {} taken twice", source);
                    taken[source] = true;
                    prop_assert_eq!(*key, keys[source]);
                }
                prop_assert!(lanes[l].a_begin <= lanes[l].a_end && lanes[l].b_begin <= lanes[l].b_end);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Searches and load-balancing walks stepped as lanes give each lane what the one-range
    /// forms give it alone, step for step.
    #[test]
    fn search_and_load_balance_lanes_equal_one_range_walks(
        needles in prop::collection::vec(0u32..20, 0..60),
        haystack in prop::collection::vec(0u32..20, 0..60),
        sizes in prop::collection::vec(0usize..5, 1..40),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 2),
    ) {
        let (mut needles, mut haystack) = (needles, haystack);
        needles.sort();
        haystack.sort();
        let less = |a: &u32, b: &u32| a < b;
        // Three lanes over one merge: needles and haystack cut at two points each.
        let (i, j) = (cuts[0].index(needles.len() + 1), cuts[1].index(needles.len() + 1));
        let (x, y) = (cuts[0].index(haystack.len() + 1), cuts[1].index(haystack.len() + 1));
        let (n0, n1) = (i.min(j), i.max(j));
        let (h0, h1) = (x.min(y), x.max(y));
        let start = [
            MergeRange { a_begin: 0, a_end: n0, b_begin: 0, b_end: h0 },
            MergeRange { a_begin: n0, a_end: n1, b_begin: h0, b_end: h1 },
            MergeRange { a_begin: n1, a_end: needles.len(), b_begin: h1, b_end: haystack.len() },
        ];
        let (mut lanes, mut alone) = (start, start);
        while lanes.iter().any(|lane| !lane.is_empty()) {
            let found = serial_search_lanes::<Upper, VT, 3, _, _>(&needles, &haystack, &mut lanes, &less);
            for l in 0..3 {
                let one = serial_search::<Upper, VT, _, _>(&needles, &haystack, &mut alone[l], &less);
                prop_assert_eq!(found[l].found, one.found);
                prop_assert_eq!(&found[l].needles[..one.found], &one.needles[..one.found]);
                prop_assert_eq!(&found[l].bounds[..one.found], &one.bounds[..one.found]);
                prop_assert_eq!(lanes[l], alone[l]);
            }
        }
        // The load balance over `sizes`, its merge cut the same way.
        let mut scan = Vec::new();
        let mut total = 0;
        for s in &sizes {
            scan.push(total);
            total += s;
        }
        let (t0, t1) = (cuts[0].index(total + 1).min(cuts[1].index(total + 1)), cuts[0].index(total + 1).max(cuts[1].index(total + 1)));
        let (s0, s1) = (cuts[0].index(scan.len() + 1).min(cuts[1].index(scan.len() + 1)), cuts[0].index(scan.len() + 1).max(cuts[1].index(scan.len() + 1)));
        let start = [
            MergeRange { a_begin: 0, a_end: t0, b_begin: 0, b_end: s0 },
            MergeRange { a_begin: t0, a_end: t1, b_begin: s0, b_end: s1 },
            MergeRange { a_begin: t1, a_end: total, b_begin: s1, b_end: scan.len() },
        ];
        let (mut lanes, mut alone) = (start, start);
        while lanes.iter().any(|lane| !lane.is_empty()) {
            let items = serial_load_balance_lanes::<VT, 3>(&scan, &mut lanes);
            for l in 0..3 {
                let one = serial_load_balance::<VT>(&scan, &mut alone[l]);
                prop_assert_eq!(items[l].first_item, one.first_item);
                prop_assert_eq!(items[l].count, one.count);
                prop_assert_eq!(&items[l].segments[..one.count], &one.segments[..one.count]);
                prop_assert_eq!(&items[l].ranks[..one.count], &one.ranks[..one.count]);
                prop_assert_eq!(lanes[l], alone[l]);
            }
        }
    }
}
