//! Property tests of co-rank, merge path and the partitions against a brute-force merge.

use proptest::prelude::*;
use twophase_partition::*;

/// Keys drawn from few values so that ties are common; the second field tags the origin.
fn sorted_keys(max_len: usize, distinct: u32) -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(0..distinct, 0..max_len).prop_map(|mut v| {
        v.sort();
        v
    })
}

fn less(a: &u32, b: &u32) -> bool {
    a < b
}

/// Brute-force stable merge recording, for each output, whether it came from A.
fn brute_merge_from_a(a: &[u32], b: &[u32], upper: bool) -> Vec<bool> {
    let (mut i, mut j) = (0, 0);
    let mut from_a = Vec::new();
    while i < a.len() || j < b.len() {
        let take_a =
            j == b.len() || (i < a.len() && if upper { a[i] < b[j] } else { a[i] <= b[j] });
        from_a.push(take_a);
        if take_a {
            i += 1;
        } else {
            j += 1;
        }
    }
    from_a
}

/// Sorts every run of `run` keys, as a mergesort pass takes its input.
fn sort_runs(keys: &mut [u32], run: usize) {
    for chunk in keys.chunks_mut(run) {
        chunk.sort();
    }
}

/// The partitions of the two-way mergesort pass over `keys` (runs of `run` keys), cut every
/// `spacing` outputs under `is_less`.
fn pass_partitions(
    keys: &[u32],
    run: usize,
    spacing: usize,
    is_less: impl Fn(&u32, &u32) -> bool,
) -> Vec<usize> {
    let mut partitions = vec![0; partition_count(keys.len(), spacing)];
    mergesort_partitions(keys, run, spacing, is_less, &mut partitions);
    partitions
}

fn a_taken_before(from_a: &[bool], k: usize) -> usize {
    from_a[..k].iter().filter(|&&x| x).count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn co_rank_satisfies_the_lemma_at_every_k(a in sorted_keys(60, 8), b in sorted_keys(60, 8)) {
        let from_a = brute_merge_from_a(&a, &b, false);
        for k in 0..=a.len() + b.len() {
            let (i, j) = co_rank(k, &a, &b, less);
            prop_assert_eq!(i + j, k);
            prop_assert!(i == 0 || j == b.len() || a[i - 1] <= b[j]);
            prop_assert!(j == 0 || i == a.len() || b[j - 1] < a[i]);
            prop_assert_eq!(i, a_taken_before(&from_a, k));
        }
    }

    #[test]
    fn merge_path_agrees_with_brute_force_under_both_policies(
        a in sorted_keys(60, 5), b in sorted_keys(60, 5)
    ) {
        let lower = brute_merge_from_a(&a, &b, false);
        let upper = brute_merge_from_a(&a, &b, true);
        for diag in 0..=a.len() + b.len() {
            prop_assert_eq!(merge_path::<Lower, _, _>(&a, &b, diag, less), a_taken_before(&lower, diag));
            prop_assert_eq!(merge_path::<Upper, _, _>(&a, &b, diag, less), a_taken_before(&upper, diag));
            prop_assert_eq!(merge_path::<Lower, _, _>(&a, &b, diag, less), co_rank(diag, &a, &b, less).0);
        }
    }

    #[test]
    fn each_partition_holds_exactly_spacing_outputs(
        a in sorted_keys(300, 4), b in sorted_keys(300, 4), spacing in 1usize..40
    ) {
        let count = a.len() + b.len();
        let mut parts = vec![0; partition_count(count, spacing)];
        merge_path_partitions::<Lower, _, _>(&a, &b, spacing, less, &mut parts);
        let mut merged = Vec::new();
        for t in 0..parts.len() - 1 {
            let r = merge_path_tile(&parts, t, spacing, count);
            let expected = spacing.min(count - t * spacing);
            prop_assert_eq!(r.total(), expected);
            // Merging the tile's pieces on their own reproduces its slice of the whole merge.
            let mut piece: Vec<u32> = a[r.a_begin..r.a_end].iter().chain(&b[r.b_begin..r.b_end]).copied().collect();
            piece.sort();
            merged.extend(piece);
        }
        let mut all: Vec<u32> = a.iter().chain(&b).copied().collect();
        all.sort();
        prop_assert_eq!(merged, all);
    }

    #[test]
    fn mergesort_tiles_cover_each_pass(
        keys in prop::collection::vec(0u32..6, 0..400), run_tiles in 1usize..4, spacing in 1usize..20
    ) {
        let run = run_tiles * spacing;
        let mut keys = keys;
        sort_runs(&mut keys, run);
        let n = keys.len();
        let parts = pass_partitions(&keys, run, spacing, less);
        let mut out = Vec::new();
        for t in 0..parts.len() - 1 {
            let r = mergesort_tile(&parts, t, spacing, run, n);
            prop_assert_eq!(r.total(), spacing.min(n - t * spacing));
            let pair = mergesort_pair(n, run, t * spacing);
            prop_assert!(pair.a_begin <= r.a_begin && r.a_end <= pair.a_end);
            prop_assert!(pair.b_begin <= r.b_begin && r.b_end <= pair.b_end);
            // Stable tile merge equals the tile's slice of a stable sort of the pair.
            let (mut i, mut j) = (r.a_begin, r.b_begin);
            while i < r.a_end || j < r.b_end {
                if j == r.b_end || (i < r.a_end && keys[i] <= keys[j]) { out.push(keys[i]); i += 1; } else { out.push(keys[j]); j += 1; }
            }
        }
        // Each pair of runs is sorted in the output.
        for pair in out.chunks(2 * run) {
            prop_assert!(pair.windows(2).all(|w| w[0] <= w[1]));
        }
        let mut sorted_in = keys.clone();
        sorted_in.sort();
        let mut sorted_out = out.clone();
        sorted_out.sort();
        prop_assert_eq!(sorted_in, sorted_out);
    }

    #[test]
    fn load_balance_path_counts_items_before_each_diagonal(
        sizes in prop::collection::vec(0usize..6, 1..50), spacing in 1usize..30
    ) {
        let mut scan = Vec::with_capacity(sizes.len());
        let mut total = 0;
        for s in &sizes { scan.push(total); total += s; }
        // Brute force: the merge takes offset scan[s] before item x when scan[s] <= x.
        let mut from_item = Vec::new();
        let (mut x, mut s) = (0, 0);
        while x < total || s < scan.len() {
            let take_item = s == scan.len() || (x < total && x < scan[s]);
            from_item.push(take_item);
            if take_item { x += 1 } else { s += 1 }
        }
        let count = total + scan.len();
        for diag in 0..=count {
            prop_assert_eq!(load_balance_path(total, &scan, diag), a_taken_before(&from_item, diag));
        }
        let mut parts = vec![0; partition_count(count, spacing)];
        load_balance_partitions(total, &scan, spacing, &mut parts);
        prop_assert_eq!(parts[0], 0);
        prop_assert_eq!(*parts.last().unwrap(), total);
    }
}

/// The run each output of a group's merge came from: the runs `starts[k]..starts[k + 1]` merged
/// pairwise in a balanced tree (R0 with R1, R2 with R3, ..., then the results the same way),
/// earlier first on ties, as a mergesort's two-way passes would.
fn brute_group_origins(keys: &[u32], starts: &[usize]) -> Vec<usize> {
    let merge = |a: Vec<(u32, usize)>, b: Vec<(u32, usize)>| -> Vec<(u32, usize)> {
        let from_a = brute_merge_from_a(
            &a.iter().map(|p| p.0).collect::<Vec<_>>(),
            &b.iter().map(|p| p.0).collect::<Vec<_>>(),
            false,
        );
        let (mut ia, mut ib) = (a.into_iter(), b.into_iter());
        from_a
            .iter()
            .map(|&t| if t { ia.next() } else { ib.next() }.unwrap())
            .collect()
    };
    let mut level: Vec<Vec<(u32, usize)>> = (0..starts.len() - 1)
        .map(|k| {
            keys[starts[k]..starts[k + 1]]
                .iter()
                .map(|&v| (v, k))
                .collect()
        })
        .collect();
    while level.len() > 1 {
        let mut pairs = level.into_iter();
        let mut next = Vec::new();
        while let (Some(a), b) = (pairs.next(), pairs.next()) {
            next.push(merge(a, b.unwrap_or_default()));
        }
        level = next;
    }
    level
        .pop()
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.1)
        .collect()
}

/// Brute force: how many of the first `diag` outputs of the stable merge of `runs` (earlier runs
/// first on ties) come from each run.
fn stable_merge_counts<const N: usize>(runs: [&[u32]; N], diag: usize) -> [usize; N] {
    let mut tagged: Vec<(u32, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(k, r)| r.iter().map(move |&v| (v, k)))
        .collect();
    tagged.sort(); // (key, run): stable across runs, earlier runs first on ties
    core::array::from_fn(|k| tagged[..diag].iter().filter(|p| p.1 == k).count())
}

/// Brute force: which run (0..4) each output of one quad's four-way merge comes from.
fn brute_quad_origins(keys: &[u32], quad: &MergeQuad) -> Vec<usize> {
    brute_group_origins(keys, &quad.starts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Selection among three sorted runs, from any bounds that hold the answer, counts exactly
    /// what a stable merge (earlier runs first on ties) takes from each run before `diag`.
    #[test]
    fn select_runs_counts_each_run_from_any_valid_bounds(
        r0 in sorted_keys(40, 5),
        r1 in sorted_keys(40, 5),
        r2 in sorted_keys(40, 5),
        diag_frac in 0.0f64..=1.0,
        slack in prop::array::uniform6(0usize..50),
    ) {
        let runs = [&r0[..], &r1[..], &r2[..]];
        let total: usize = runs.iter().map(|r| r.len()).sum();
        let diag = ((total as f64) * diag_frac) as usize;
        let truth: [usize; 3] = stable_merge_counts(runs, diag);
        let lo: [usize; 3] = core::array::from_fn(|k| truth[k].saturating_sub(slack[k]));
        let hi: [usize; 3] = core::array::from_fn(|k| (truth[k] + slack[3 + k]).min(runs[k].len()));
        prop_assert_eq!(select_runs(runs, lo, hi, diag, &less), truth);
    }

    /// Selection by rounds of probes (the four-way cut's fine stage on a group of lanes), from
    /// any bounds that hold the answer, with 1 to 16 probes a run: the counts of a stable merge.
    #[test]
    fn select_runs_by_probes_counts_each_run_from_any_valid_bounds(
        r0 in sorted_keys(60, 6),
        r1 in sorted_keys(60, 6),
        r2 in sorted_keys(60, 6),
        r3 in sorted_keys(60, 6),
        diag_frac in 0.0f64..=1.0,
        slack in prop::array::uniform8(0usize..60),
        probe_log2 in 0usize..5,
    ) {
        let runs = [&r0[..], &r1[..], &r2[..], &r3[..]];
        let total: usize = runs.iter().map(|r| r.len()).sum();
        let diag = ((total as f64) * diag_frac) as usize;
        let truth: [usize; 4] = stable_merge_counts(runs, diag);
        let mut lo: [usize; 4] = core::array::from_fn(|k| truth[k].saturating_sub(slack[k]));
        let mut hi: [usize; 4] =
            core::array::from_fn(|k| (truth[k] + slack[4 + k]).min(runs[k].len()));
        select_runs_by_probes(&runs, &mut lo, &mut hi, diag, 1 << probe_log2, &less);
        prop_assert_eq!(lo, truth);
        prop_assert!((0..4).all(|k| lo[k] <= hi[k]));
    }

    /// On runs that are not sorted, under a comparator that answers at random, the probe rounds
    /// still end inside the bounds with every output placed.
    #[test]
    fn select_runs_by_probes_stays_inside_its_bounds_on_any_input(
        runs_raw in prop::collection::vec(prop::collection::vec(0u32..100, 0..50), 4),
        answers in prop::collection::vec(any::<bool>(), 1..64),
        diag_frac in 0.0f64..=1.0,
        probe_log2 in 0usize..4,
    ) {
        let runs: Vec<&[u32]> = runs_raw.iter().map(|r| &r[..]).collect();
        let total: usize = runs.iter().map(|r| r.len()).sum();
        let diag = ((total as f64) * diag_frac) as usize;
        let calls = core::cell::Cell::new(0usize);
        let random = |_: &u32, _: &u32| {
            calls.set(calls.get() + 1);
            answers[calls.get() % answers.len()]
        };
        let mut lo = [0usize; 4];
        let mut hi: [usize; 4] = core::array::from_fn(|k| runs[k].len());
        select_runs_by_probes(&runs, &mut lo, &mut hi, diag, 1 << probe_log2, &random);
        prop_assert_eq!(lo.iter().sum::<usize>(), diag);
        prop_assert!((0..4).all(|k| lo[k] <= hi[k] && hi[k] <= runs[k].len()));
    }

    /// The four-way cut, found through the two-way samples, counts exactly the outputs of each
    /// run before every diagonal of every quad, and tiles chain end to start.
    #[test]
    fn quad_cut_counts_each_run_before_every_diagonal(
        raw in prop::collection::vec(0u32..6, 0..200),
        spacing in 1usize..7,
        runs_per_spacing in 1usize..4,
    ) {
        let run = spacing * runs_per_spacing;
        let mut keys = raw;
        sort_runs(&mut keys, run);
        let count = keys.len();
        let partitions = pass_partitions(&keys, run, spacing, less);
        let mut quad_begin = 0;
        while quad_begin < count {
            let quad = MergeQuad::at(count, run, quad_begin);
            let origins = brute_quad_origins(&keys, &quad);
            for diag in 0..=quad.total() {
                let cut = quad_cut(&keys, &quad, &partitions, spacing, diag, less);
                let taken = |k: usize| origins[..diag].iter().filter(|&&o| o == k).count();
                prop_assert_eq!(cut.a, taken(0), "run 0 at diag {}", diag);
                prop_assert_eq!(cut.x - cut.a, taken(1), "run 1 at diag {}", diag);
                prop_assert_eq!(cut.c, taken(2), "run 2 at diag {}", diag);
                prop_assert_eq!(diag - cut.x - cut.c, taken(3), "run 3 at diag {}", diag);
            }
            quad_begin = quad.starts[4];
        }
        let cuts: Vec<QuadCut> = (0..partition_count(count, spacing))
            .map(|p| {
                let diag = partition_diag(p, spacing, count);
                let quad = MergeQuad::at(count, run, diag.min(count.saturating_sub(1)));
                let quad = if diag == count { MergeQuad::at(count, run, diag) } else { quad };
                quad_cut(&keys, &quad, &partitions, spacing, diag - quad.starts[0], less)
            })
            .collect();
        for tile in 0..count.div_ceil(spacing) {
            let diag0 = partition_diag(tile, spacing, count);
            let diag1 = partition_diag(tile + 1, spacing, count);
            let quad = MergeQuad::at(count, run, diag0);
            let end = quad_tile_end(&cuts, tile, spacing, run, count);
            let origins = brute_quad_origins(&keys, &quad);
            let d = diag1 - quad.starts[0];
            prop_assert_eq!(end.a, origins[..d].iter().filter(|&&o| o == 0).count());
            prop_assert_eq!(end.x, origins[..d].iter().filter(|&&o| o < 2).count());
            prop_assert_eq!(end.c, origins[..d].iter().filter(|&&o| o == 2).count());
        }
    }
}

/// The run each output of the octet's eight-way merge came from.
fn brute_octet_origins(keys: &[u32], octet: &MergeOctet) -> Vec<usize> {
    brute_group_origins(keys, &octet.starts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The eight-way cut, searched on the four-way cuts of the same pass at every `spacing`-th
    /// output, counts exactly the keys each run gives the octet's first `diag` outputs, at every
    /// diagonal of every octet (including a short last octet).
    #[test]
    fn oct_cut_counts_each_run_before_every_diagonal(
        raw in prop::collection::vec(0u32..6, 0..400),
        spacing in 1usize..6,
        runs_per_spacing in 1usize..3,
    ) {
        let run = spacing * runs_per_spacing;
        let mut keys = raw;
        sort_runs(&mut keys, run);
        let count = keys.len();
        let partitions = pass_partitions(&keys, run, spacing, less);
        let quad_cuts: Vec<QuadCut> = (0..partition_count(count, spacing))
            .map(|p| {
                let pos = partition_diag(p, spacing, count);
                let quad = MergeQuad::at(count, run, pos);
                quad_cut(&keys, &quad, &partitions, spacing, pos - quad.starts[0], less)
            })
            .collect();
        let mut octet_begin = 0;
        while octet_begin < count {
            let octet = MergeOctet::at(count, run, octet_begin);
            let origins = brute_octet_origins(&keys, &octet);
            for diag in 0..=octet.total() {
                let cut = oct_cut(&keys, &octet, &quad_cuts, spacing, diag, less);
                for (k, &taken) in cut.iter().enumerate() {
                    let want = origins[..diag].iter().filter(|&&o| o == k).count();
                    prop_assert_eq!(taken, want, "run {} at diag {}", k, diag);
                }
            }
            octet_begin = octet.starts[8];
        }
    }
}

#[test]
fn co_rank_of_the_textbook_example() {
    // A = [1, 3, 5, 7], B = [2, 5, 6, 8, 9]: first 4 outputs are 1, 2, 3, 5(A) → i = 3, j = 1.
    let a = [1u32, 3, 5, 7];
    let b = [2u32, 5, 6, 8, 9];
    assert_eq!(co_rank(4, &a, &b, less), (3, 1));
    assert_eq!(co_rank(0, &a, &b, less), (0, 0));
    assert_eq!(co_rank(9, &a, &b, less), (4, 5));
}

#[test]
fn merge_range_split_and_local_layout() {
    let r = MergeRange {
        a_begin: 10,
        a_end: 14,
        b_begin: 20,
        b_end: 23,
    };
    assert_eq!(r.total(), 7);
    assert_eq!(
        r.to_local(),
        MergeRange {
            a_begin: 0,
            a_end: 4,
            b_begin: 4,
            b_end: 7
        }
    );
    let (lo, hi) = r.split(3, 2);
    assert_eq!(
        lo,
        MergeRange {
            a_begin: 10,
            a_end: 12,
            b_begin: 20,
            b_end: 21
        }
    );
    assert_eq!(
        hi,
        MergeRange {
            a_begin: 12,
            a_end: 14,
            b_begin: 21,
            b_end: 23
        }
    );
}

/// A comparator that is not a strict weak order: a hash of both keys and a seed.
fn hash_less(seed: u64) -> impl Fn(&u32, &u32) -> bool {
    move |a: &u32, b: &u32| {
        let mut x = seed ^ (u64::from(*a) << 32 | u64::from(*b));
        x ^= x >> 31;
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 29;
        x & 1 == 0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn repaired_partitions_are_a_valid_staircase(
        raw in prop::collection::vec(any::<usize>(), 0..40),
        a_len in 0usize..300,
        b_len in 0usize..300,
        spacing in 1usize..40,
    ) {
        let count = a_len + b_len;
        let mut parts: Vec<usize> = (0..partition_count(count, spacing))
            .map(|p| raw.get(p).copied().unwrap_or(p * 7) % (a_len + 2))
            .collect();
        let before = parts.clone();
        let unchanged = repair_partitions(&mut parts, spacing, a_len, b_len);
        prop_assert_eq!(unchanged, before == parts);
        prop_assert_eq!(parts[0], 0);
        prop_assert_eq!(*parts.last().unwrap(), a_len);
        let (mut a_seen, mut b_seen) = (0, 0);
        for t in 0..parts.len() - 1 {
            let r = merge_path_tile(&parts, t, spacing, count);
            prop_assert!(r.a_begin <= r.a_end && r.a_end <= a_len);
            prop_assert!(r.b_begin <= r.b_end && r.b_end <= b_len);
            prop_assert_eq!((r.a_begin, r.b_begin), (a_seen, b_seen));
            (a_seen, b_seen) = (r.a_end, r.b_end);
        }
        prop_assert_eq!((a_seen, b_seen), (a_len, b_len));
    }

    #[test]
    fn repair_leaves_exact_partitions_alone(
        a in sorted_keys(200, 6), b in sorted_keys(200, 6), spacing in 1usize..40
    ) {
        let mut parts = vec![0; partition_count(a.len() + b.len(), spacing)];
        merge_path_partitions::<Lower, _, _>(&a, &b, spacing, less, &mut parts);
        let exact = parts.clone();
        prop_assert!(repair_partitions(&mut parts, spacing, a.len(), b.len()));
        prop_assert_eq!(parts, exact);
    }

    #[test]
    fn repaired_mergesort_partitions_give_valid_tiles(
        keys in prop::collection::vec(any::<u32>(), 0..400),
        run_tiles in 1usize..4,
        spacing in 1usize..20,
        seed in any::<u64>(),
        runs_sorted in any::<bool>(),
    ) {
        let run = run_tiles * spacing;
        let mut keys = keys;
        if runs_sorted {
            sort_runs(&mut keys, run);
        }
        let n = keys.len();
        let mut parts = pass_partitions(&keys, run, spacing, hash_less(seed));
        repair_mergesort_partitions(&mut parts, spacing, run, n);
        let mut taken = vec![0u32; n];
        for t in 0..parts.len() - 1 {
            let r = mergesort_tile(&parts, t, spacing, run, n);
            let pair = mergesort_pair(n, run, t * spacing);
            prop_assert!(pair.a_begin <= r.a_begin && r.a_begin <= r.a_end && r.a_end <= pair.a_end);
            prop_assert!(pair.b_begin <= r.b_begin && r.b_begin <= r.b_end && r.b_end <= pair.b_end);
            prop_assert_eq!(r.total(), spacing.min(n - t * spacing));
            for i in (r.a_begin..r.a_end).chain(r.b_begin..r.b_end) {
                taken[i] += 1;
            }
        }
        prop_assert!(taken.iter().all(|&c| c == 1), "every key in exactly one tile");
        // With a strict weak order on sorted runs the repair changes nothing.
        if runs_sorted {
            let mut exact = pass_partitions(&keys, run, spacing, less);
            let before = exact.clone();
            prop_assert!(repair_mergesort_partitions(&mut exact, spacing, run, n));
            prop_assert_eq!(exact, before);
        }
    }

    #[test]
    fn searches_stay_in_range_and_end_under_any_comparator(
        a in prop::collection::vec(any::<u32>(), 0..100),
        b in prop::collection::vec(any::<u32>(), 0..100),
        seed in any::<u64>(),
    ) {
        let less = hash_less(seed);
        for k in 0..=a.len() + b.len() {
            let (i, j) = co_rank(k, &a, &b, &less);
            prop_assert_eq!(i + j, k);
            prop_assert!(i <= a.len() && j <= b.len());
            let lower = merge_path::<Lower, _, _>(&a, &b, k, &less);
            let upper = merge_path::<Upper, _, _>(&a, &b, k, &less);
            for mp in [lower, upper] {
                prop_assert!(mp <= a.len() && mp <= k && k - mp <= b.len());
            }
        }
    }
}

/// An "is less" predicate on the test keys, as a trait object.
type IsLess = dyn Fn(&u32, &u32) -> bool;

/// One to eight sorted runs of up to 12 keys from 4 values (some runs empty, ties across runs).
fn sorted_runs() -> impl Strategy<Value = Vec<Vec<u32>>> {
    prop::collection::vec(sorted_keys(13, 4), 1..=8)
}

/// The stable merge of `runs` (earlier runs first on ties, each run in its own order), as the run
/// each output came from.
fn brute_run_origins(runs: &[Vec<u32>]) -> Vec<usize> {
    let mut tagged: Vec<(u32, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(k, run)| run.iter().map(move |&key| (key, k)))
        .collect();
    tagged.sort_by_key(|&(key, k)| (key, k)); // std's sort is stable: positions stay in order
    tagged.into_iter().map(|(_, k)| k).collect()
}

/// [`multiway_co_rank`] with its scratch: the counts of each run before `diag`.
fn multiway_counts(
    runs: &[&[u32]],
    diag: usize,
    is_less: &impl Fn(&u32, &u32) -> bool,
) -> Vec<usize> {
    let mut counts = vec![usize::MAX; runs.len()];
    let mut upper = vec![usize::MAX; runs.len()];
    multiway_co_rank(runs, diag, is_less, &mut counts, &mut upper);
    counts
}

/// The multiway cuts at every shard boundary of `shards` output shards, each clamped against
/// the one before: the first all zeros, the last the runs' lengths. Also returns whether every
/// clamp left its cut unchanged.
fn clamped_shard_cuts(
    runs: &[&[u32]],
    shards: usize,
    is_less: &impl Fn(&u32, &u32) -> bool,
) -> (Vec<Vec<usize>>, bool) {
    let lens: Vec<usize> = runs.iter().map(|run| run.len()).collect();
    let total = lens.iter().sum();
    let mut cuts = vec![vec![0; runs.len()]];
    let mut unchanged = true;
    for shard in 1..=shards {
        let diag = shard_boundary(shard, shards, total);
        let mut cut = multiway_counts(runs, diag, is_less);
        unchanged &= clamp_multiway_cut(&cuts[shard - 1], &mut cut, diag, &lens);
        cuts.push(cut);
    }
    (cuts, unchanged)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The multiway co-rank of 1 to 8 runs counts, at every diagonal, exactly what the stable
    /// merge takes from each run, and its upper bounds hold the counts.
    #[test]
    fn multiway_co_rank_counts_each_run_before_every_diagonal(runs in sorted_runs()) {
        let origins = brute_run_origins(&runs);
        let slices: Vec<&[u32]> = runs.iter().map(Vec::as_slice).collect();
        let mut truth = vec![0; runs.len()];
        for diag in 0..=origins.len() {
            let mut counts = vec![usize::MAX; runs.len()];
            let mut upper = vec![usize::MAX; runs.len()];
            multiway_co_rank(&slices, diag, &less, &mut counts, &mut upper);
            prop_assert_eq!(&counts, &truth, "diag {}", diag);
            prop_assert!(counts.iter().zip(&upper).zip(&runs).all(|((c, u), r)| c <= u && *u <= r.len()));
            if let Some(&k) = origins.get(diag) {
                truth[k] += 1;
            }
        }
    }

    /// The exact split: for 1 to 8 output shards, shard i's cuts give pieces that hold exactly
    /// ranks [i n / p, (i + 1) n / p) of the stable merge, every run's cuts are non-decreasing,
    /// and clamping exact cuts changes nothing.
    #[test]
    fn shard_cuts_give_each_shard_exactly_its_ranks(runs in sorted_runs(), shards in 1usize..=8) {
        let slices: Vec<&[u32]> = runs.iter().map(Vec::as_slice).collect();
        let origins = brute_run_origins(&runs);
        let total = origins.len();
        let (cuts, unchanged) = clamped_shard_cuts(&slices, shards, &less);
        prop_assert!(unchanged, "exact cuts need no clamping");
        prop_assert_eq!(&cuts[shards], &runs.iter().map(Vec::len).collect::<Vec<_>>());
        let mut merged: Vec<(u32, usize)> = Vec::new();
        for shard in 0..shards {
            let (begin, end) = (shard_boundary(shard, shards, total), shard_boundary(shard + 1, shards, total));
            prop_assert!(end - begin == total / shards || end - begin == total / shards + 1);
            let mut piece: Vec<(u32, usize)> = Vec::new();
            for (k, run) in runs.iter().enumerate() {
                prop_assert!(cuts[shard][k] <= cuts[shard + 1][k]);
                piece.extend(run[cuts[shard][k]..cuts[shard + 1][k]].iter().map(|&key| (key, k)));
            }
            prop_assert_eq!(piece.len(), end - begin);
            piece.sort();
            merged.extend(piece);
        }
        // The shards' pieces, each merged alone, concatenate to the whole stable merge.
        prop_assert_eq!(merged.iter().map(|&(_, k)| k).collect::<Vec<_>>(), origins);
    }

    /// `shard_boundary` splits any size, up to `usize::MAX`, into shards whose sizes differ by
    /// at most one, starting at 0 and ending at the total.
    #[test]
    fn shard_boundaries_split_any_size_evenly(total in any::<usize>(), shards in 1usize..2000) {
        prop_assert_eq!(shard_boundary(0, shards, total), 0);
        prop_assert_eq!(shard_boundary(shards, shards, total), total);
        let (floor, step) = (total / shards, shards.div_ceil(40).max(1));
        for shard in (0..shards).step_by(step) {
            let size = shard_boundary(shard + 1, shards, total) - shard_boundary(shard, shards, total);
            prop_assert!(size == floor || size == floor + 1, "shard {} of {}: {}", shard, shards, size);
        }
    }

    /// Under comparators that are not strict weak orders (at random, always, never) and on
    /// unsorted runs, the multiway co-rank ends with counts inside the runs that sum to the
    /// diagonal, and the clamped shard cuts cover every key exactly once.
    #[test]
    fn multiway_cuts_stay_in_range_under_any_comparator(
        runs in prop::collection::vec(prop::collection::vec(0u32..6, 0..12), 1..=8),
        shards in 1usize..=8,
        seed in any::<u64>(),
    ) {
        let slices: Vec<&[u32]> = runs.iter().map(Vec::as_slice).collect();
        let total: usize = runs.iter().map(Vec::len).sum();
        let random = hash_less(seed);
        // Rock, paper, scissors: every key is before the next one mod 3, a cycle.
        let cyclic = |a: &u32, b: &u32| (b % 3 + 3 - a % 3) % 3 == 1;
        let orders: [&IsLess; 4] = [&random, &cyclic, &|_, _| true, &|_, _| false];
        for is_less in orders {
            for diag in 0..=total {
                let mut counts = vec![usize::MAX; runs.len()];
                let mut upper = vec![usize::MAX; runs.len()];
                multiway_co_rank(&slices, diag, &is_less, &mut counts, &mut upper);
                prop_assert!(counts.iter().zip(&upper).zip(&runs).all(|((c, u), r)| c <= u && *u <= r.len()));
                prop_assert_eq!(counts.iter().sum::<usize>(), diag);
            }
            let (cuts, _) = clamped_shard_cuts(&slices, shards, &is_less);
            for shard in 0..shards {
                let size: usize = (0..runs.len()).map(|k| cuts[shard + 1][k] - cuts[shard][k]).sum();
                prop_assert_eq!(size, shard_boundary(shard + 1, shards, total) - shard_boundary(shard, shards, total));
            }
            prop_assert_eq!(&cuts[shards], &runs.iter().map(Vec::len).collect::<Vec<_>>());
        }
    }
}

/// Clamping repairs a cut that crosses the previous one and one that sums to another diagonal.
#[test]
fn clamp_multiway_cut_repairs_crossing_cuts() {
    let lens = [4, 0, 5];
    let prev = [2, 0, 1];
    let mut crossing = [1, 0, 5];
    assert!(!clamp_multiway_cut(&prev, &mut crossing, 6, &lens));
    assert_eq!(crossing, [2, 0, 4]);
    let mut short = [2, 0, 1];
    assert!(!clamp_multiway_cut(&prev, &mut short, 5, &lens));
    assert_eq!(short, [4, 0, 1]);
    let mut exact = [3, 0, 3];
    assert!(clamp_multiway_cut(&prev, &mut exact, 6, &lens));
    assert_eq!(exact, [3, 0, 3]);
}

proptest! {
    /// A strided search finds the first false of any true-then-false predicate, as
    /// `partition_point` does, in at most ceil(log(n) / log(max_probes)) + 1 rounds.
    #[test]
    fn strided_search_finds_the_first_false(
        begin in 0usize..1000,
        len in 0usize..5000,
        first_false in 0usize..5000,
        max_probes in 1usize..70,
    ) {
        let end = begin + len;
        let first_false = begin + first_false.min(len);
        let mut rounds = 0;
        let found = strided_search(begin, end, max_probes, |probes| {
            rounds += 1;
            (0..probes.count).take_while(|&l| probes.probe(l) < first_false).count()
        });
        prop_assert_eq!(found, first_false);
        let bound = if max_probes == 1 {
            usize::BITS as usize
        } else {
            (len.max(1) as f64).log(max_probes as f64).ceil() as usize + 1
        };
        prop_assert!(rounds <= bound, "{} rounds for {} candidates", rounds, len);
    }

    /// Whatever a round answers, the probes stay in range and the search ends in range.
    #[test]
    fn strided_search_ends_in_range_under_any_answers(
        begin in 0usize..1000,
        len in 0usize..5000,
        max_probes in 1usize..70,
        answers in prop::collection::vec(0usize..80, 64),
    ) {
        let end = begin + len;
        let mut next = answers.iter().cycle();
        let found = strided_search(begin, end, max_probes, |probes| {
            assert!(probes.first >= begin && probes.probe(probes.count - 1) < end);
            *next.next().unwrap_or(&0)
        });
        prop_assert!(begin <= found && found <= end);
    }

    /// The strided merge path equals the binary one on sorted inputs at every diagonal, and
    /// stays on the diagonal under any comparator.
    #[test]
    fn strided_merge_path_equals_merge_path(
        a in sorted_keys(200, 6),
        b in sorted_keys(200, 6),
        max_probes in 1usize..20,
        seed in any::<u64>(),
    ) {
        for diag in 0..=a.len() + b.len() {
            let cut = strided_merge_path(&a, &b, diag, max_probes, &less);
            prop_assert_eq!(cut, merge_path::<Lower, _, _>(&a, &b, diag, less));
            let cut = strided_merge_path(&a, &b, diag, max_probes, &hash_less(seed));
            prop_assert!(cut <= a.len() && cut <= diag && diag - cut <= b.len());
        }
    }
}

/// Every `stride`-th key of each run, as `sampled_cut_bounds` takes them.
fn regular_samples(runs: &[Vec<u32>], stride: usize) -> Vec<Vec<u32>> {
    runs.iter()
        .map(|run| run.iter().copied().step_by(stride).collect())
        .collect()
}

proptest! {
    /// On sorted runs the sampled bounds hold every diagonal's exact co-rank, each window at
    /// most (runs + 1) * stride wide.
    #[test]
    fn sampled_bounds_hold_the_co_rank(runs in sorted_runs(), stride in 1usize..6) {
        let p = runs.len();
        let samples = regular_samples(&runs, stride);
        let sample_refs: Vec<&[u32]> = samples.iter().map(Vec::as_slice).collect();
        let lens: Vec<usize> = runs.iter().map(Vec::len).collect();
        let total: usize = lens.iter().sum();
        let run_refs: Vec<&[u32]> = runs.iter().map(Vec::as_slice).collect();
        for diag in 0..=total {
            let (mut lo, mut hi) = (vec![0; p], vec![0; p]);
            prop_assert!(sampled_cut_bounds(&sample_refs, stride, &lens, diag, &less, &mut lo, &mut hi));
            let (mut exact, mut upper) = (vec![0; p], vec![0; p]);
            multiway_co_rank(&run_refs, diag, &less, &mut exact, &mut upper);
            for k in 0..p {
                prop_assert!(lo[k] <= exact[k] && exact[k] <= hi[k], "run {} at {}: {} not in [{}, {}]", k, diag, exact[k], lo[k], hi[k]);
                prop_assert!(hi[k] - lo[k] <= (p + 1) * stride, "run {} window {}..{}", k, lo[k], hi[k]);
            }
            // The exact search started from the sampled bounds finds the same counts.
            select_indexed_runs(&run_refs[..], &mut lo, &mut hi, diag, &|a: &&u32, b: &&u32| less(a, b));
            prop_assert_eq!(lo, exact);
        }
    }

    /// Under any comparator the bounds either are usable (inside the runs, holding the
    /// diagonal) or are reported unusable; nothing panics.
    #[test]
    fn sampled_bounds_are_usable_or_refused_under_any_comparator(
        runs in prop::collection::vec(prop::collection::vec(any::<u32>(), 0..12), 1..=6),
        stride in 1usize..5,
        seed in any::<u64>(),
    ) {
        let p = runs.len();
        let less = hash_less(seed);
        let samples = regular_samples(&runs, stride);
        let sample_refs: Vec<&[u32]> = samples.iter().map(Vec::as_slice).collect();
        let lens: Vec<usize> = runs.iter().map(Vec::len).collect();
        let total: usize = lens.iter().sum();
        for diag in 0..=total {
            let (mut lo, mut hi) = (vec![0; p], vec![0; p]);
            if sampled_cut_bounds(&sample_refs, stride, &lens, diag, &less, &mut lo, &mut hi) {
                prop_assert!((0..p).all(|k| lo[k] <= hi[k] && hi[k] <= lens[k]));
                prop_assert!(lo.iter().sum::<usize>() <= diag && diag <= hi.iter().sum::<usize>());
            }
        }
    }
}
