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
}

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
