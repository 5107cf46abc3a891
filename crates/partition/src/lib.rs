//! Phase 1 of the two-phase strategy: exact partitions of a merge by co-rank and merge path.
//!
//! Every function here answers one question: *given a position on the output of a merge, how many
//! of the outputs before it come from each input?* The answer splits any merge-shaped problem
//! (merge, a mergesort pass, sorted search, load-balanced search) into pieces of exactly equal
//! output size, which phase 2 then processes with simple serial code.
//!
//! Comparators are "is less" predicates `Fn(&T, &T) -> bool` that must be a strict weak order
//! for the answers to be exact. The tie rule is the stable one: with [`Lower`] bounds, equal keys
//! are taken from A before B.
//!
//! On any other input (unsorted runs, a comparator that is not a strict weak order or answers at
//! random) every search still returns a count inside its diagonal's range and terminates, but
//! the boundaries of neighbouring diagonals may cross. [`clamp_boundary`],
//! [`repair_partitions`], [`repair_mergesort_partitions`] and (for cuts of many runs)
//! [`clamp_multiway_cut`] turn any such sequence into a valid staircase (every run's index
//! non-decreasing), leave a valid one untouched, and say whether they changed anything, so that
//! phase 2 always reads and writes its own ranges.
#![no_std]
#![forbid(unsafe_code)]

// The README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

/// Tie policy of a merge path search, as a type so that the policy is chosen at compile time.
pub trait Bounds {
    /// `true` for [`Upper`]: on ties the B element comes first.
    const UPPER: bool;
}

/// On ties take from A first: the stable merge rule (A's equal keys precede B's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lower;

/// On ties take from B first: used where B holds boundaries that equal items must follow
/// (load-balancing search, upper-bound sorted search).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Upper;

impl Bounds for Lower {
    const UPPER: bool = false;
}

impl Bounds for Upper {
    const UPPER: bool = true;
}

/// Whether the merge under policy `B` emits `a_key` before `b_key`.
#[inline(always)]
pub fn takes_a<B: Bounds, T, F: Fn(&T, &T) -> bool>(a_key: &T, b_key: &T, is_less: &F) -> bool {
    if B::UPPER {
        is_less(a_key, b_key)
    } else {
        !is_less(b_key, a_key)
    }
}

/// Siebert–Träff co-rank: for output rank `k` of the stable merge of `a` and `b`, the unique
/// `(i, j)` with `i + j = k` such that the first `k` outputs are exactly `a[..i]` and `b[..j]`.
///
/// The lemma it satisfies (stable rule, A first on ties):
/// `i == 0 || j == b.len() || !(b[j] < a[i-1])` and `j == 0 || i == a.len() || b[j-1] < a[i]`.
/// The search moves `i` and `j` along the cross-diagonal `i + j = k`, halving the remaining
/// interval at each step, so it takes O(log min(k, m, n)) comparisons.
///
/// # Panics
/// If `k > a.len() + b.len()`.
pub fn co_rank<T, F: Fn(&T, &T) -> bool>(k: usize, a: &[T], b: &[T], is_less: F) -> (usize, usize) {
    let (m, n) = (a.len(), b.len());
    assert!(k <= m + n, "co_rank: rank {k} past the merge of {m} + {n}");
    let mut i = k.min(m);
    let mut j = k - i;
    let mut i_low = k.saturating_sub(n);
    let mut j_low = k.saturating_sub(m);
    loop {
        if i > 0 && j < n && is_less(&b[j], &a[i - 1]) {
            // a[i-1] belongs after b[j]: too many from A. Step back half of what is left.
            let delta = (i - i_low).div_ceil(2);
            if delta == 0 {
                // Only unsorted input or an inconsistent comparator gets here: no room is left
                // to move, so stop at a cut that is inside the range instead of looping.
                return (i, j);
            }
            j_low = j;
            i -= delta;
            j += delta;
        } else if j > 0 && i < m && !is_less(&b[j - 1], &a[i]) {
            // b[j-1] is not strictly before a[i]: too many from B (ties go to A).
            let delta = (j - j_low).div_ceil(2);
            if delta == 0 {
                return (i, j);
            }
            i_low = i;
            i += delta;
            j -= delta;
        } else {
            return (i, j);
        }
    }
}

/// Merge path: binary search on the cross-diagonal `diag` of the merge of `a` and `b` for the
/// number of A elements among the first `diag` outputs, with ties broken by policy `B`.
///
/// With [`Lower`] this equals the first component of [`co_rank`].
///
/// # Panics
/// If `diag > a.len() + b.len()`.
pub fn merge_path<B: Bounds, T, F: Fn(&T, &T) -> bool>(
    a: &[T],
    b: &[T],
    diag: usize,
    is_less: F,
) -> usize {
    assert!(
        diag <= a.len() + b.len(),
        "merge_path: diagonal past the end of the merge"
    );
    let mut begin = diag.saturating_sub(b.len());
    let mut end = diag.min(a.len());
    while begin < end {
        let mid = begin + (end - begin) / 2;
        if takes_a::<B, T, F>(&a[mid], &b[diag - 1 - mid], &is_less) {
            begin = mid + 1;
        } else {
            end = mid;
        }
    }
    begin
}

/// One round of a strided search (see [`strided_search`]): the candidates it probes,
/// `count` of them from `first`, `step` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedProbes {
    pub first: usize,
    pub step: usize,
    pub count: usize,
}

impl StridedProbes {
    /// The probes of a round over candidates `[begin, end)` (not empty), at most `max_probes`
    /// (at least 1): every candidate when they fit, else the last of every `step` candidates,
    /// with `step` the smallest that cuts the candidates into `max_probes + 1` spans. The round
    /// then leaves at most `step` candidates (none when every candidate is probed).
    ///
    /// # Panics
    /// If `begin >= end` or `max_probes` is 0.
    pub fn new(begin: usize, end: usize, max_probes: usize) -> Self {
        assert!(
            begin < end && max_probes > 0,
            "StridedProbes: no candidates or no probes"
        );
        let n = end - begin;
        if n <= max_probes {
            return StridedProbes {
                first: begin,
                step: 1,
                count: n,
            };
        }
        // max_probes + 1 spans of `step` or fewer candidates (one probe is a binary search's).
        let step = n.div_ceil(max_probes + 1);
        StridedProbes {
            first: begin + step - 1,
            step,
            count: (n / step).min(max_probes),
        }
    }

    /// Probe `l` (below `count`).
    pub fn probe(&self, l: usize) -> usize {
        self.first + l * self.step
    }

    /// The candidates `[begin, end)` left after this round, where the first `trues` probes
    /// answered true and the next one (if any) false: past the last true probe, up to and
    /// including the first false one. `trues` above `count` counts as `count`.
    pub fn narrow(&self, begin: usize, end: usize, trues: usize) -> (usize, usize) {
        let trues = trues.min(self.count);
        let begin = if trues > 0 {
            self.probe(trues - 1) + 1
        } else {
            begin
        };
        let end = if trues < self.count {
            self.probe(trues)
        } else {
            end
        };
        (begin, end)
    }
}

/// The first candidate in `[begin, end)` at which a predicate that is true and then false is
/// false (`end` if none), found a round at a time: `trues_of(probes)` answers how many of a
/// round's leading probes are true (at most `max_probes` a round, spaced by a constant step, so
/// that one strided copy can fetch them). A binary search's chain of log2(n) dependent reads
/// becomes log(n) / log(max_probes) rounds. Whatever `trues_of` answers, the result lies in
/// `[begin, end]` and the search ends, each round leaving fewer candidates.
///
/// # Panics
/// If `max_probes` is 0.
pub fn strided_search(
    mut begin: usize,
    mut end: usize,
    max_probes: usize,
    mut trues_of: impl FnMut(&StridedProbes) -> usize,
) -> usize {
    assert!(max_probes > 0, "strided_search: no probes");
    while begin < end {
        let probes = StridedProbes::new(begin, end, max_probes);
        (begin, end) = probes.narrow(begin, end, trues_of(&probes));
    }
    begin
}

/// [`merge_path`] under the stable rule ([`Lower`]) by [`strided_search`], at most `max_probes`
/// probes a round: each round reads its probes' A keys and the B keys mirrored on the
/// diagonal, as the cut between two devices' sorted shards reads them (one strided copy from
/// each device a round). Equal to `merge_path::<Lower>` on sorted inputs under a strict weak
/// order; on the diagonal and inside both inputs whatever `is_less` answers.
///
/// # Panics
/// If `diag > a.len() + b.len()` or `max_probes` is 0.
pub fn strided_merge_path<T, F: Fn(&T, &T) -> bool>(
    a: &[T],
    b: &[T],
    diag: usize,
    max_probes: usize,
    is_less: &F,
) -> usize {
    assert!(
        diag <= a.len() + b.len(),
        "strided_merge_path: diagonal past the end of the merge"
    );
    let (begin, end) = (diag.saturating_sub(b.len()), diag.min(a.len()));
    strided_search(begin, end, max_probes, |probes| {
        (0..probes.count)
            .take_while(|&l| {
                let i = probes.probe(l);
                takes_a::<Lower, T, F>(&a[i], &b[diag - 1 - i], is_less)
            })
            .count()
    })
}

/// The slices of A and B that produce one contiguous piece of a merge's output.
///
/// Indices are positions in A and B respectively (or, inside a tile, in the tile's shared copy
/// where B follows A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MergeRange {
    pub a_begin: usize,
    pub a_end: usize,
    pub b_begin: usize,
    pub b_end: usize,
}

impl MergeRange {
    /// Elements this range takes from A.
    pub fn a_count(&self) -> usize {
        self.a_end - self.a_begin
    }

    /// Elements this range takes from B.
    pub fn b_count(&self) -> usize {
        self.b_end - self.b_begin
    }

    /// Outputs this range produces.
    pub fn total(&self) -> usize {
        self.a_count() + self.b_count()
    }

    /// True when the range produces nothing.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The output diagonal at which this range starts.
    pub fn diag(&self) -> usize {
        self.a_begin + self.b_begin
    }

    /// The range of one tile: between the merge paths `mp0` and `mp1` found at output diagonals
    /// `diag0 <= diag1` of the whole merge (`mp` = number of A elements before the diagonal).
    pub fn between(mp0: usize, diag0: usize, mp1: usize, diag1: usize) -> Self {
        MergeRange {
            a_begin: mp0,
            a_end: mp1,
            b_begin: diag0 - mp0,
            b_end: diag1 - mp1,
        }
    }

    /// The same range with B re-indexed to follow A's slice, the layout of a tile loaded into one
    /// buffer (`[a_begin, a_end)` then `[b_begin, b_end)`): A starts at 0 and B at `a_count`.
    pub fn to_local(&self) -> Self {
        MergeRange {
            a_begin: 0,
            a_end: self.a_count(),
            b_begin: self.a_count(),
            b_end: self.total(),
        }
    }

    /// Split this range at local output diagonal `diag` (0 ≤ diag ≤ total), given the merge path
    /// `mp` (A elements taken before it, counted from `a_begin`): the part before and after.
    pub fn split(&self, diag: usize, mp: usize) -> (Self, Self) {
        let a_mid = self.a_begin + mp;
        let b_mid = self.b_begin + (diag - mp);
        (
            MergeRange {
                a_end: a_mid,
                b_end: b_mid,
                ..*self
            },
            MergeRange {
                a_begin: a_mid,
                b_begin: b_mid,
                ..*self
            },
        )
    }
}

/// Number of partition boundaries for `count` outputs cut every `spacing`: one per tile plus the
/// end, i.e. `ceil(count / spacing) + 1`.
pub fn partition_count(count: usize, spacing: usize) -> usize {
    assert!(spacing > 0, "partition spacing must be positive");
    count.div_ceil(spacing) + 1
}

/// The output diagonal of partition boundary `p` when `count` outputs are cut every `spacing`:
/// `p * spacing`, clamped to the end.
pub fn partition_diag(p: usize, spacing: usize, count: usize) -> usize {
    p.saturating_mul(spacing).min(count)
}

/// The output diagonals `[diag0, diag1)` that tile `tile` produces when `count` outputs are cut
/// every `spacing`.
pub fn tile_diagonals(tile: usize, spacing: usize, count: usize) -> (usize, usize) {
    (
        partition_diag(tile, spacing, count),
        partition_diag(tile + 1, spacing, count),
    )
}

/// The merge path at every `spacing`-th output diagonal of the merge of `a` and `b` (and at the
/// end), written to `out`, which must hold [`partition_count`] entries. Tile `t` then produces
/// outputs `[t * spacing, min((t+1) * spacing, a.len() + b.len()))` from the range
/// [`merge_path_tile`] gives.
pub fn merge_path_partitions<B: Bounds, T, F: Fn(&T, &T) -> bool>(
    a: &[T],
    b: &[T],
    spacing: usize,
    is_less: F,
    out: &mut [usize],
) {
    let count = a.len() + b.len();
    assert_eq!(
        out.len(),
        partition_count(count, spacing),
        "partition buffer size"
    );
    for (p, mp) in out.iter_mut().enumerate() {
        *mp = merge_path::<B, T, &F>(a, b, partition_diag(p, spacing, count), &is_less);
    }
}

/// Boundary `mp` (A elements before output diagonal `diag` of a merge of `a_len` A elements with
/// `b_len` B elements) made consistent with the previous boundary `prev` at diagonal
/// `prev_diag <= diag`, which must itself be valid: `mp` is first clamped into its diagonal's
/// range `[diag - b_len, diag] ∩ [0, a_len]`, then into `[prev, prev + (diag - prev_diag)]`, so
/// that the piece between the two boundaries takes a non-negative count from each side.
///
/// A valid boundary (the exact merge path of sorted inputs under a strict weak order) is
/// returned unchanged. The result is always in range, so a chain of clamped boundaries that ends
/// at `diag == a_len + b_len` ends at `a_len`.
#[inline]
pub fn clamp_boundary(
    prev: usize,
    prev_diag: usize,
    mp: usize,
    diag: usize,
    a_len: usize,
    b_len: usize,
) -> usize {
    let in_range = mp.clamp(diag.saturating_sub(b_len), diag.min(a_len));
    let step = diag.saturating_sub(prev_diag);
    in_range.clamp(prev, prev.saturating_add(step))
}

/// Make the merge partitions of a merge of `a_len` with `b_len` elements cut every `spacing`
/// outputs (as [`merge_path_partitions`] writes them) a valid staircase in place: the first is 0,
/// the last `a_len`, and every tile's range ([`merge_path_tile`]) takes a non-negative count from
/// A and from B. Returns `true` when nothing had to change (always the case for sorted inputs
/// under a strict weak order); `false` means the inputs were unsorted or the comparator
/// inconsistent, and the repaired tiles still cover every input exactly once.
///
/// # Panics
/// If `partitions` does not hold [`partition_count`] entries for `a_len + b_len` outputs.
pub fn repair_partitions(
    partitions: &mut [usize],
    spacing: usize,
    a_len: usize,
    b_len: usize,
) -> bool {
    let count = a_len.saturating_add(b_len);
    assert_eq!(
        partitions.len(),
        partition_count(count, spacing),
        "partition buffer size"
    );
    let mut valid = true;
    let (mut prev, mut prev_diag) = (0, 0);
    for (p, mp) in partitions.iter_mut().enumerate() {
        let diag = partition_diag(p, spacing, count);
        let fixed = clamp_boundary(prev, prev_diag, *mp, diag, a_len, b_len);
        valid &= fixed == *mp;
        *mp = fixed;
        (prev, prev_diag) = (fixed, diag);
    }
    valid
}

/// The input range of tile `tile` of a merge of `a_count + b_count` outputs cut every `spacing`,
/// from that merge's partitions.
pub fn merge_path_tile(
    partitions: &[usize],
    tile: usize,
    spacing: usize,
    count: usize,
) -> MergeRange {
    let (diag0, diag1) = tile_diagonals(tile, spacing, count);
    MergeRange::between(partitions[tile], diag0, partitions[tile + 1], diag1)
}

/// The two sorted runs merged by one pair of a mergesort pass, in which runs of `run` elements
/// (the last may be short) are merged pairwise into runs of `2 * run`.
///
/// `pos` is any index inside the pair's output; the range is in global indices of the pass input.
pub fn mergesort_pair(count: usize, run: usize, pos: usize) -> MergeRange {
    assert!(run > 0, "mergesort run length must be positive");
    let width = run.saturating_mul(2);
    let a_begin = pos / width * width;
    let a_end = a_begin.saturating_add(run).min(count);
    let b_end = a_begin.saturating_add(width).min(count);
    MergeRange {
        a_begin,
        a_end,
        b_begin: a_end,
        b_end,
    }
}

/// The merge path (in global index of A's element) at output position `pos` of a mergesort pass
/// merging runs of `run` elements: a tile boundary that lies inside a pair of runs is placed on
/// that pair's merge path.
pub fn mergesort_path<T, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    run: usize,
    pos: usize,
    is_less: F,
) -> usize {
    let pair = mergesort_pair(keys.len(), run, pos);
    let a = &keys[pair.a_begin..pair.a_end];
    let b = &keys[pair.b_begin..pair.b_end];
    pair.a_begin + merge_path::<Lower, T, F>(a, b, pos - pair.a_begin, is_less)
}

/// The partitions of one mergesort pass: [`mergesort_path`] at every `spacing`-th output (and at
/// the end), written to `out` ([`partition_count`] entries).
pub fn mergesort_partitions<T, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    run: usize,
    spacing: usize,
    is_less: F,
    out: &mut [usize],
) {
    assert_eq!(
        out.len(),
        partition_count(keys.len(), spacing),
        "partition buffer size"
    );
    for (p, mp) in out.iter_mut().enumerate() {
        *mp = mergesort_path(keys, run, partition_diag(p, spacing, keys.len()), &is_less);
    }
}

/// Make the partitions of one mergesort pass ([`mergesort_partitions`]: `count` keys, run length
/// `run`, cut every `spacing` outputs) a valid staircase inside every pair of runs, in place: a
/// boundary at a pair's start is that start, and every tile's range ([`mergesort_tile`]) takes a
/// non-negative count from each run. Returns `true` when nothing had to change (always the case
/// for sorted runs under a strict weak order); `false` means a run was unsorted or the
/// comparator inconsistent.
///
/// # Panics
/// If `partitions` does not hold [`partition_count`] entries for `count` outputs, or `run` is 0.
pub fn repair_mergesort_partitions(
    partitions: &mut [usize],
    spacing: usize,
    run: usize,
    count: usize,
) -> bool {
    assert_eq!(
        partitions.len(),
        partition_count(count, spacing),
        "partition buffer size"
    );
    let mut valid = true;
    let mut prev_diag = 0;
    for p in 0..partitions.len() {
        let diag = partition_diag(p, spacing, count);
        let pair = mergesort_pair(count, run, diag);
        // The previous boundary, or the pair's own start when it lies in an earlier pair.
        let (prev, prev_local) = if p > 0 && prev_diag >= pair.a_begin {
            (partitions[p - 1] - pair.a_begin, prev_diag - pair.a_begin)
        } else {
            (0, 0)
        };
        let local = clamp_boundary(
            prev,
            prev_local,
            partitions[p].saturating_sub(pair.a_begin),
            diag - pair.a_begin,
            pair.a_count(),
            pair.b_count(),
        );
        let fixed = pair.a_begin + local;
        valid &= fixed == partitions[p];
        partitions[p] = fixed;
        prev_diag = diag;
    }
    valid
}

/// The input range (global indices) of tile `tile` of a mergesort pass over `count` keys with run
/// length `run`, cut every `spacing` outputs, from that pass's partitions.
///
/// A tile must not straddle two pairs of runs: `2 * run` must be a multiple of `spacing`.
pub fn mergesort_tile(
    partitions: &[usize],
    tile: usize,
    spacing: usize,
    run: usize,
    count: usize,
) -> MergeRange {
    debug_assert_eq!(
        run.saturating_mul(2) % spacing,
        0,
        "tiles must not straddle run pairs"
    );
    let (diag0, diag1) = tile_diagonals(tile, spacing, count);
    let pair = mergesort_pair(count, run, diag0);
    let a_begin = partitions[tile];
    // A boundary at the end of a pair is stored as the next pair's start (its own first path);
    // for the tile that ends there, the path is the end of this pair's A run.
    let a_end = if diag1 == pair.b_end {
        pair.a_end
    } else {
        partitions[tile + 1]
    };
    // Within the pair, outputs before `diag` are (A taken) + (B taken).
    let b_begin = pair.b_begin + (diag0 - pair.a_begin) - (a_begin - pair.a_begin);
    let b_end = pair.b_begin + (diag1 - pair.a_begin) - (a_end - pair.a_begin);
    MergeRange {
        a_begin,
        a_end,
        b_begin,
        b_end,
    }
}

/// The four sorted runs merged by one quad of a four-way mergesort pass, in which runs of `run`
/// elements (the last ones short or empty) are merged four at a time into runs of `4 * run`: the
/// merge of the merge of runs 0 and 1 (X) with the merge of runs 2 and 3 (Y), X first on ties, so
/// that one four-way pass produces exactly what two two-way passes would.
///
/// `pos` is any index inside the quad's output; run `k` is `starts[k]..starts[k + 1]` (global).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MergeQuad {
    pub starts: [usize; 5],
}

impl MergeQuad {
    /// The quad of the four-way pass over `count` keys with run length `run` that holds `pos`.
    pub fn at(count: usize, run: usize, pos: usize) -> Self {
        MergeQuad {
            starts: group_starts(count, run, pos),
        }
    }

    /// The pair of runs `2 * half .. 2 * half + 2` (X for `half == 0`, Y for `half == 1`) as the
    /// range of a two-way pass with run length `run` (global indices).
    pub fn half(&self, half: usize) -> MergeRange {
        MergeRange {
            a_begin: self.starts[2 * half],
            a_end: self.starts[2 * half + 1],
            b_begin: self.starts[2 * half + 1],
            b_end: self.starts[2 * half + 2],
        }
    }

    /// Outputs of the whole quad.
    pub fn total(&self) -> usize {
        self.starts[4] - self.starts[0]
    }
}

/// The `STARTS - 1` runs of the group (a quad, an octet) of a mergesort pass over `count` keys
/// with run length `run` that holds `pos`: run `k` is `starts[k]..starts[k + 1]`, cut at `count`.
fn group_starts<const STARTS: usize>(count: usize, run: usize, pos: usize) -> [usize; STARTS] {
    assert!(run > 0, "mergesort run length must be positive");
    let width = run.saturating_mul(STARTS - 1);
    let begin = pos / width * width;
    core::array::from_fn(|k| match k {
        0 => begin,
        _ => begin.saturating_add(run.saturating_mul(k)).min(count),
    })
}

/// A cut of a four-way merge after `diag` outputs, in counts taken from each run: `a` from run 0,
/// `x - a` from run 1, `c` from run 2 and `diag - x - c` from run 3 (`x` is the count taken from
/// X, the merge of runs 0 and 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QuadCut {
    pub x: usize,
    pub a: usize,
    pub c: usize,
}

/// One pair of runs of a two-way mergesort pass (global indices into the pass input `keys`),
/// with that pass's `partitions` (cut every `spacing` outputs, [`mergesort_partitions`]): samples
/// of the pair's merge path, which the four-way cut reads instead of searching.
struct SampledPair<'k, T> {
    keys: &'k [T],
    pair: MergeRange,
    partitions: &'k [usize],
    spacing: usize,
}

impl<'k, T> SampledPair<'k, T> {
    /// The merge path at pair-local diagonal `diag`, a multiple of `spacing` or the pair's end,
    /// read off the samples, as an A count.
    fn sampled_path(&self, diag: usize) -> usize {
        let pair = &self.pair;
        if pair.a_begin + diag == pair.b_end {
            // The pair's end is stored as the next pair's start: all of A.
            pair.a_count()
        } else {
            self.partitions[(pair.a_begin + diag) / self.spacing] - pair.a_begin
        }
    }

    /// Number of A elements among the first `diag` outputs of the merge, searched only inside
    /// the window between the two neighbouring samples: at most log2(spacing) comparisons.
    fn windowed_path<F: Fn(&T, &T) -> bool>(&self, diag: usize, is_less: &F) -> usize {
        let (pair, spacing) = (&self.pair, self.spacing);
        let diag0 = diag / spacing * spacing;
        if diag0 == diag {
            return self.sampled_path(diag);
        }
        let diag1 = (diag0 + spacing).min(pair.total());
        let a0 = self.sampled_path(diag0);
        let a1 = self.sampled_path(diag1);
        let a = &self.keys[pair.a_begin + a0..pair.a_begin + a1];
        let b = &self.keys[pair.b_begin + (diag0 - a0)..pair.b_begin + (diag1 - a1)];
        a0 + merge_path::<Lower, T, &F>(a, b, diag - diag0, is_less)
    }

    /// The element at output `i` (< `pair.total()`) of the stable merge.
    fn windowed_element<F: Fn(&T, &T) -> bool>(&self, i: usize, is_less: &F) -> &'k T {
        let (keys, pair) = (self.keys, &self.pair);
        let a = self.windowed_path(i, is_less);
        let b = i - a;
        let (a_key, b_key) = (pair.a_begin + a, pair.b_begin + b);
        if a_key < pair.a_end
            && (b_key >= pair.b_end || takes_a::<Lower, T, F>(&keys[a_key], &keys[b_key], is_less))
        {
            &keys[a_key]
        } else {
            &keys[b_key]
        }
    }

    /// Output `t - 1` (`0 < t <= pair.total()`) of the stable merge, read off the sample at
    /// pair-local diagonal `t` (a multiple of `spacing`, or the pair's end): the later in merge
    /// order of the last A and the last B among the first `t` outputs.
    fn element_before<F: Fn(&T, &T) -> bool>(&self, t: usize, is_less: &F) -> &'k T {
        let (keys, pair) = (self.keys, &self.pair);
        let a = self.sampled_path(t);
        let b = t - a;
        if a == 0 {
            return &keys[pair.b_begin + b - 1];
        }
        if b == 0 {
            return &keys[pair.a_begin + a - 1];
        }
        let (a_key, b_key) = (&keys[pair.a_begin + a - 1], &keys[pair.b_begin + b - 1]);
        // The last B comes after the last A iff the A key is not after it (A first on ties).
        if takes_a::<Lower, T, F>(a_key, b_key, is_less) {
            b_key
        } else {
            a_key
        }
    }
}

/// Stable selection among `N` sorted runs (earlier runs first on ties), bounds and answer as
/// arrays: [`select_runs_within`] on copies of `lo` and `hi`, returning the counts.
///
/// # Panics
/// As [`select_runs_within`].
pub fn select_runs<T, F: Fn(&T, &T) -> bool, const N: usize>(
    runs: [&[T]; N],
    mut lo: [usize; N],
    mut hi: [usize; N],
    diag: usize,
    is_less: &F,
) -> [usize; N] {
    select_runs_within(&runs, &mut lo, &mut hi, diag, is_less);
    lo
}

/// Stable selection among sorted runs (earlier runs first on ties): the counts taken from each
/// run among the first `diag` outputs of their merge, given bounds `lo[k] <= count[k] <= hi[k]`
/// known to hold the answer (`sum(lo) <= diag <= sum(hi)`; `hi[k] <= runs[k].len()`). On return
/// `lo` holds the counts (and `hi` bounds still holding them).
///
/// Each round looks at the middle element of every run whose bounds are still open. Let `u` be
/// the number of open-range elements before those middles, `open` the number of open runs and
/// `t` the outputs still to place among the open ranges:
/// - the last middle in merge order has at least `u + open - 1` open-range elements before it, so
///   when that is `>= t` it is not taken and its run's upper bound drops to its index;
/// - the first middle has at most `u` open-range elements before it, so when `u < t` it is taken
///   and its run's lower bound rises past it.
///
/// One of the two always holds, so every round halves at least one run's range: at most about
/// `sum(log2(hi[k] - lo[k]))` rounds, each `2 * open` comparisons of middles (O(p) for p runs).
/// The four-way cut uses it where a nested search (a merge path search of X and of Y inside
/// every probe of the search between them) would cost the square of that.
///
/// Any input: the bookkeeping that keeps `sum(lo) + t == diag` and `t <= sum(hi - lo)` is
/// arithmetic that holds whatever the comparisons answer, so on unsorted runs or under a
/// comparator that is not a strict weak order the search still ends, with `lo[k] <= hi[k]`
/// inside the given bounds and `sum(lo) == diag`; only the counts' meaning is lost.
///
/// # Panics
/// If `lo`, `hi` and `runs` differ in length, if some `lo[k] > hi[k]` or `hi[k] >
/// runs[k].len()`, or if `sum(lo) <= diag <= sum(hi)` fails: argument misuse, never the keys.
pub fn select_runs_within<T, F: Fn(&T, &T) -> bool>(
    runs: &[&[T]],
    lo: &mut [usize],
    hi: &mut [usize],
    diag: usize,
    is_less: &F,
) {
    select_indexed_runs(runs, lo, hi, diag, &|a: &&T, b: &&T| is_less(a, b));
}

/// Sorted runs whose keys are read one at a time by (run, index): slices in memory, or runs that
/// live elsewhere (on devices), where each read is a transfer. The selections here read
/// O(runs) keys a round.
pub trait IndexedRuns {
    /// What a read returns: a reference for runs in memory, a copy for runs elsewhere.
    type Key;
    /// Number of runs.
    fn run_count(&self) -> usize;
    /// Length of run `run`.
    fn run_len(&self, run: usize) -> usize;
    /// Key `index` (below the run's length) of run `run`.
    fn key(&self, run: usize, index: usize) -> Self::Key;
}

impl<'a, T> IndexedRuns for [&'a [T]] {
    type Key = &'a T;
    fn run_count(&self) -> usize {
        self.len()
    }
    fn run_len(&self, run: usize) -> usize {
        self[run].len()
    }
    fn key(&self, run: usize, index: usize) -> &'a T {
        &self[run][index]
    }
}

/// The selections' argument checks: one lower and one upper bound per run (of `p`), each inside
/// its run (`run_len`), holding `diag` between their sums. Returns the outputs left to place,
/// `diag - sum(lo)`.
///
/// # Panics
/// If any of those fails: argument misuse, never the keys.
fn outputs_to_place(
    p: usize,
    run_len: impl Fn(usize) -> usize,
    lo: &[usize],
    hi: &[usize],
    diag: usize,
) -> usize {
    assert!(
        lo.len() == p && hi.len() == p,
        "select_runs: one lower and one upper bound per run"
    );
    assert!(
        (0..p).all(|k| lo[k] <= hi[k] && hi[k] <= run_len(k)),
        "select_runs: bounds outside a run"
    );
    let placed = lo.iter().fold(0, |sum: usize, &l| sum.saturating_add(l));
    let capacity = hi.iter().fold(0, |sum: usize, &h| sum.saturating_add(h));
    assert!(
        placed <= diag && diag <= capacity,
        "select_runs: the bounds do not hold the diagonal"
    );
    diag - placed
}

/// Whether run k's element `key_k` comes before run l's `key_l` in the stable merge of several
/// runs (earlier runs first on ties).
fn precedes_in_merge<K, F: Fn(&K, &K) -> bool>(
    k: usize,
    key_k: &K,
    l: usize,
    key_l: &K,
    is_less: &F,
) -> bool {
    if k < l {
        takes_a::<Lower, K, F>(key_k, key_l, is_less)
    } else {
        is_less(key_k, key_l)
    }
}

/// [`select_runs_within`] over any [`IndexedRuns`]: the same selection, each round reading the
/// middle key of every open run (the comparator takes the runs' [`IndexedRuns::Key`]s).
///
/// # Panics
/// As [`select_runs_within`].
pub fn select_indexed_runs<R: IndexedRuns + ?Sized, F: Fn(&R::Key, &R::Key) -> bool>(
    runs: &R,
    lo: &mut [usize],
    hi: &mut [usize],
    diag: usize,
    is_less: &F,
) {
    let p = runs.run_count();
    let mut t = outputs_to_place(p, |k| runs.run_len(k), lo, hi, diag);
    let precedes = |k: usize, key_k: &R::Key, l: usize, key_l: &R::Key| {
        precedes_in_merge(k, key_k, l, key_l, is_less)
    };
    while t > 0 {
        let mid = |k: usize| lo[k] + (hi[k] - lo[k]) / 2;
        let (mut first, mut last, mut open, mut u) = (p, p, 0, 0);
        // The middles of the first and last open runs so far, each read once a round.
        let (mut first_key, mut last_key) = (None, None);
        for k in (0..p).filter(|&k| lo[k] < hi[k]) {
            u += mid(k) - lo[k];
            open += 1;
            let key = runs.key(k, mid(k));
            let before_first = match &first_key {
                None => true,
                Some(first_key) => precedes(k, &key, first, first_key),
            };
            let after_last = match &last_key {
                None => true,
                Some(last_key) => precedes(last, last_key, k, &key),
            };
            match (before_first, after_last) {
                (true, true) => {
                    (first, last) = (k, k);
                    last_key = Some(runs.key(k, mid(k)));
                    first_key = Some(key);
                }
                (true, false) => (first, first_key) = (k, Some(key)),
                (false, true) => (last, last_key) = (k, Some(key)),
                (false, false) => {}
            }
        }
        // t <= sum(hi - lo) holds every round, so some range is open while t > 0.
        assert!(open > 0, "select_runs: outputs left but no open run");
        if open == 1 {
            lo[first] += t;
            break;
        }
        let (first_mid, last_mid) = (mid(first), mid(last));
        // The last middle has at least u + open - 1 >= t open-range elements before it.
        let cut_last = u + open > t;
        if cut_last {
            hi[last] = last_mid;
        }
        // The first middle has at most u < t open-range elements before it. Only a comparator
        // that is not a strict weak order makes one middle both first and last: then the cut
        // above alone is this round's progress.
        if u < t && !(cut_last && first == last) {
            t -= first_mid + 1 - lo[first];
            lo[first] = first_mid + 1;
        }
    }
}

/// Stable selection among sorted runs by rounds of probes: [`select_runs_within`]'s answer, with
/// `probes` evenly spaced probes in every open run a round instead of one middle. It models the
/// four-way cut's fine stage on a warp (kernels/mergesort_quad_partition.cuh `group_select_runs`:
/// eight probes a run, one probe a lane, every lane ranking its own).
///
/// A round reads probe `i` of each open run `m` at offset `((2i + 1) * w_m) / (2 * probes)` of its
/// open range (of width `w_m`; one probe is the middle). For every probe it bounds how many
/// open-range elements precede it in the merge: exactly its offset from its own run; from each
/// other run at least one past the last probe that precedes it, at most the first probe that does
/// not (found by a binary search over that run's probes). With `t` outputs left to place, a probe
/// whose upper bound is below `t` is taken (its run's lower bound rises past it) and one whose
/// lower bound reaches `t` is not (its run's upper bound drops to it). The first probe in merge
/// order has at most the sum of the runs' first offsets before it, and the last at least the sum
/// of their last offsets, so one of the two is decided every round; with eight probes a run the
/// four-way cut's ranges shrink about fivefold a round.
///
/// Rounds stop when the bounds meet the answer (`t` is 0 or every open element is taken), when a
/// round decides nothing, after [`MAX_PROBE_ROUNDS`], or when its decisions contradict each
/// other (a taken probe at or after one that is not, or more taken than `t`, or too few kept
/// open: unsorted runs or a comparator that is not a strict weak order); then
/// [`select_runs_within`] finishes from the bounds reached, so the answer and its guarantees on
/// any input are that function's. Returns the number of probe rounds.
///
/// # Panics
/// As [`select_runs_within`], or if `probes` is 0 or the runs are more than
/// [`MAX_PROBED_RUNS`].
pub fn select_runs_by_probes<T, F: Fn(&T, &T) -> bool>(
    runs: &[&[T]],
    lo: &mut [usize],
    hi: &mut [usize],
    diag: usize,
    probes: usize,
    is_less: &F,
) -> usize {
    assert!(probes > 0, "select_runs_by_probes: no probes");
    let p = runs.len();
    assert!(p <= MAX_PROBED_RUNS, "select_runs_by_probes: too many runs");
    outputs_to_place(p, |k| runs[k].len(), lo, hi, diag);
    // Probe i's offset in an open range of width w.
    let offset = |i: usize, w: usize| (2 * i + 1) * w / (2 * probes);
    let mut rounds = 0;
    while rounds < MAX_PROBE_ROUNDS {
        let t = diag - lo.iter().sum::<usize>();
        let open: usize = (0..p).map(|k| hi[k] - lo[k]).sum();
        if t == open {
            lo.copy_from_slice(hi);
        }
        if t == 0 || t == open {
            break;
        }
        rounds += 1;
        // Per run: how far its lower bound rises and its upper bound drops (from the range's
        // start and end).
        let mut raise = [0usize; MAX_PROBED_RUNS];
        let mut drop = [0usize; MAX_PROBED_RUNS];
        for k in (0..p).filter(|&k| lo[k] < hi[k]) {
            let w_k = hi[k] - lo[k];
            for i in 0..probes {
                let off = offset(i, w_k);
                let key = &runs[k][lo[k] + off];
                let (mut below, mut above) = (off, off);
                for m in (0..p).filter(|&m| m != k && lo[m] < hi[m]) {
                    let w_m = hi[m] - lo[m];
                    // How many of run m's probes precede this one: a binary search over them
                    // (a step past the last probe answers nothing), as a lane does by shuffles.
                    let mut preceding = 0;
                    let mut step = probes.next_power_of_two();
                    while step > 0 {
                        let asked = (preceding + step).min(probes) - 1;
                        let other = &runs[m][lo[m] + offset(asked, w_m)];
                        if precedes_in_merge(m, other, k, key, is_less)
                            && preceding + step <= probes
                        {
                            preceding += step;
                        }
                        step /= 2;
                    }
                    let least = if preceding > 0 {
                        offset(preceding - 1, w_m) + 1
                    } else {
                        0
                    };
                    let most = if preceding < probes {
                        offset(preceding, w_m)
                    } else {
                        w_m
                    };
                    below += least;
                    above += most;
                }
                if above < t {
                    raise[k] = raise[k].max(off + 1);
                }
                if below >= t {
                    drop[k] = drop[k].max(w_k - off);
                }
            }
        }
        // Contradictions: a run's taken probe at or after one not taken, or more taken in all
        // than the outputs left, or fewer kept open than they need.
        let raised: usize = raise[..p].iter().sum();
        let dropped: usize = drop[..p].iter().sum();
        let contradicts =
            (0..p).any(|k| raise[k] + drop[k] > hi[k] - lo[k]) || raised > t || t + dropped > open;
        let decided = raised + dropped > 0;
        if contradicts || !decided {
            break;
        }
        for k in 0..p {
            hi[k] -= drop[k];
            lo[k] += raise[k];
        }
    }
    select_runs_within(runs, lo, hi, diag, is_less);
    rounds
}

/// The most runs [`select_runs_by_probes`] takes: an eight-way pass's octet.
pub const MAX_PROBED_RUNS: usize = 8;

/// The most probe rounds of [`select_runs_by_probes`]: a strict weak order needs about
/// `log(width) / log(probes)`, and a decided probe narrows its range by at least `1 / (2 probes)`,
/// so only a comparator that is not one could make rounds crawl.
pub const MAX_PROBE_ROUNDS: usize = 64;

/// Multiway co-rank: the counts taken from each sorted run among the first `diag` outputs of
/// their stable merge (earlier runs first on ties, each run in its own order), written to
/// `counts`; `upper` is scratch of the same length (on return, upper bounds of the counts).
///
/// The runs' merge is then exactly `runs[k][..counts[k]]` for every k, merged, followed by the
/// rest: cutting every run at the counts of diagonal `d0` and of `d1` gives the pieces that
/// produce outputs `[d0, d1)`, whatever the runs' lengths (empty runs included). This is
/// [`select_runs_within`] from the bounds any diagonal implies (`count[k] <= min(len_k, diag)`
/// and `count[k] >= diag - (total - len_k)`): about `sum(log2(len_k))` rounds of O(p)
/// comparisons for p runs, at most `p * log2(total / p)` rounds of `2p` for runs of equal size.
///
/// On unsorted runs or under a comparator that is not a strict weak order it still ends, with
/// `counts[k] <= runs[k].len()` and `sum(counts) == diag`; [`clamp_multiway_cut`] then makes
/// consecutive cuts cover every run exactly once.
///
/// # Panics
/// If `counts` or `upper` does not hold one entry per run, or `diag` is past the end of the
/// merge (the sum of the runs' lengths).
pub fn multiway_co_rank<T, F: Fn(&T, &T) -> bool>(
    runs: &[&[T]],
    diag: usize,
    is_less: &F,
    counts: &mut [usize],
    upper: &mut [usize],
) {
    multiway_co_rank_indexed(runs, diag, &|a: &&T, b: &&T| is_less(a, b), counts, upper);
}

/// The first index in `[0, len)` at which `pred` is false, for a predicate that is true and
/// then false (`len` if none): a binary search over indices rather than a slice.
fn first_false(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut begin, mut end) = (0, len);
    while begin < end {
        let mid = begin + (end - begin) / 2;
        if pred(mid) {
            begin = mid + 1;
        } else {
            end = mid;
        }
    }
    begin
}

/// Bounds on the multiway co-rank at `diag` (the counts [`multiway_co_rank`] finds) from
/// regular samples of the runs, so that the exact search reads only narrow windows:
/// `samples[k]` holds keys `0, stride, 2 stride, ...` of run `k` (`run_lens[k].div_ceil(stride)`
/// of them). A sample's global rank is its index plus, for every other run, the count of that
/// run's keys before it in the stable merge, which that run's samples bound to within `stride`;
/// a sample whose highest rank is below `diag` is taken, one whose lowest is at or past it is
/// not. Writes `lo[k] <= count_k <= hi[k]` for sorted runs under a strict weak order, each
/// window about `(runs + 1) * stride` wide, and returns true; returns false (bounds unusable)
/// where the samples contradict each other (unsorted runs, or a comparator that is not a strict
/// weak order), leaving `lo` and `hi` to be reset by the caller.
///
/// # Panics
/// If the slices' lengths differ from the runs', `stride` is 0, a run's samples are not
/// `run_lens[k].div_ceil(stride)`, or `diag` exceeds the runs' total.
pub fn sampled_cut_bounds<T, F: Fn(&T, &T) -> bool>(
    samples: &[&[T]],
    stride: usize,
    run_lens: &[usize],
    diag: usize,
    is_less: &F,
    lo: &mut [usize],
    hi: &mut [usize],
) -> bool {
    let p = run_lens.len();
    assert!(
        samples.len() == p && lo.len() == p && hi.len() == p && stride > 0,
        "sampled_cut_bounds: one sample slice and bound pair per run, a stride of one or more"
    );
    assert!(
        (0..p).all(|k| samples[k].len() == run_lens[k].div_ceil(stride)),
        "sampled_cut_bounds: a run's samples are not one every stride keys"
    );
    let total = run_lens
        .iter()
        .fold(0, |sum: usize, &len| sum.saturating_add(len));
    assert!(
        diag <= total,
        "sampled_cut_bounds: diagonal past the runs' end"
    );
    // Whether run m's key y comes before run k's key x in the stable merge (ties: lower run first).
    let precedes = |m: usize, y: &T, k: usize, x: &T| {
        if m < k {
            takes_a::<Lower, T, F>(y, x, is_less)
        } else {
            is_less(y, x)
        }
    };
    // The lowest and highest global rank of sample j of run k.
    let rank_bounds = |k: usize, j: usize| {
        let x = &samples[k][j];
        let (mut low, mut high) = (j * stride, j * stride);
        for m in (0..p).filter(|&m| m != k) {
            let before = first_false(samples[m].len(), |i| precedes(m, &samples[m][i], k, x));
            if before > 0 {
                low += (before - 1) * stride + 1;
                high += (before * stride).min(run_lens[m]);
            }
        }
        (low, high)
    };
    for k in 0..p {
        lo[k] = diag.saturating_sub(total - run_lens[k]);
        hi[k] = diag.min(run_lens[k]);
        let count = samples[k].len();
        let taken = first_false(count, |j| rank_bounds(k, j).1 < diag);
        if taken > 0 {
            lo[k] = lo[k].max((taken - 1) * stride + 1);
        }
        let not_taken = first_false(count, |j| rank_bounds(k, j).0 < diag);
        if not_taken < count {
            hi[k] = hi[k].min(not_taken * stride);
        }
    }
    let sum = |bounds: &[usize]| bounds.iter().fold(0, |s: usize, &b| s.saturating_add(b));
    (0..p).all(|k| lo[k] <= hi[k]) && sum(lo) <= diag && diag <= sum(hi)
}

/// [`multiway_co_rank`] over any [`IndexedRuns`] (runs on devices, read a key at a time).
///
/// # Panics
/// As [`multiway_co_rank`].
pub fn multiway_co_rank_indexed<R: IndexedRuns + ?Sized, F: Fn(&R::Key, &R::Key) -> bool>(
    runs: &R,
    diag: usize,
    is_less: &F,
    counts: &mut [usize],
    upper: &mut [usize],
) {
    let p = runs.run_count();
    assert!(
        counts.len() == p && upper.len() == p,
        "multiway_co_rank: one count and one upper bound per run"
    );
    let total = (0..p).fold(0, |sum: usize, k| sum.saturating_add(runs.run_len(k)));
    assert!(
        diag <= total,
        "multiway_co_rank: diagonal {diag} past the end of the merge of {total}"
    );
    for k in 0..p {
        let len = runs.run_len(k);
        // The other runs hold `total - len` outputs, so at least the rest come from this one.
        counts[k] = diag.saturating_sub(total - len);
        upper[k] = diag.min(len);
    }
    select_indexed_runs(runs, counts, upper, diag, is_less);
}

/// The multiway analogue of [`clamp_boundary`]: a cut `cut` of runs of lengths `run_lens` at
/// output diagonal `diag` (counts taken from each run, as [`multiway_co_rank`] writes them) made
/// consistent with the previous cut `prev`, which must itself be valid (`prev[k] <=
/// run_lens[k]`, summing to a diagonal `<= diag`): every count is clamped into `[prev[k],
/// run_lens[k]]`, then counts are moved back toward those bounds, earlier runs first, until they
/// sum to `diag` again. The piece between the two cuts then takes a non-negative count from every
/// run and produces exactly the outputs between the two diagonals.
///
/// A valid cut (the exact multiway co-rank of sorted runs under a strict weak order, which is
/// monotone in the diagonal) is left unchanged, and then `true` is returned; `false` means the
/// runs were unsorted or the comparator inconsistent. O(p) for p runs.
///
/// # Panics
/// If `prev`, `cut` and `run_lens` differ in length, or `diag` is outside `[sum(prev),
/// sum(run_lens)]`.
pub fn clamp_multiway_cut(
    prev: &[usize],
    cut: &mut [usize],
    diag: usize,
    run_lens: &[usize],
) -> bool {
    let p = run_lens.len();
    assert!(
        prev.len() == p && cut.len() == p,
        "clamp_multiway_cut: one count per run in each cut"
    );
    let sum = |counts: &[usize]| counts.iter().fold(0, |s: usize, &c| s.saturating_add(c));
    assert!(
        sum(prev) <= diag && diag <= sum(run_lens),
        "clamp_multiway_cut: the diagonal lies outside the previous cut and the runs' end"
    );
    let mut unchanged = true;
    for k in 0..p {
        let clamped = cut[k].clamp(prev[k].min(run_lens[k]), run_lens[k]);
        unchanged &= clamped == cut[k];
        cut[k] = clamped;
    }
    let mut taken = sum(cut);
    unchanged &= taken == diag;
    for k in 0..p {
        if taken > diag {
            let give_back = (taken - diag).min(cut[k] - prev[k].min(cut[k]));
            cut[k] -= give_back;
            taken -= give_back;
        } else if taken < diag {
            let take = (diag - taken).min(run_lens[k] - cut[k]);
            cut[k] += take;
            taken += take;
        }
    }
    unchanged
}

/// The first global rank of output shard `shard` when `total` outputs are split into `shards`
/// shards as evenly as possible: `floor(shard * total / shards)`, computed in 128 bits so that
/// it cannot overflow. Shard `i` holds ranks `[shard_boundary(i), shard_boundary(i + 1))`, of
/// `floor(total / shards)` or one more; `shard_boundary(shards) == total`.
///
/// # Panics
/// If `shards` is 0 or `shard > shards`.
pub fn shard_boundary(shard: usize, shards: usize, total: usize) -> usize {
    assert!(
        shards > 0 && shard <= shards,
        "shard_boundary: shard {shard} of {shards}"
    );
    // usize is at most 64 bits on every target Rust supports, so the product fits in 128.
    let rank = shard as u128 * total as u128 / shards as u128;
    // rank <= total, so it fits back.
    usize::try_from(rank).unwrap_or(total)
}

/// The windows of a multiway cut's two halves (first, second) at output `diag` of a group whose
/// halves have `n_first` and `n_second` outputs, each widened to the samples every `spacing`-th
/// output: `[first_0, first_1, second_0, second_1]`, the first half's count lying in
/// `first_0..=first_1` and the second's in `second_0..=second_1`. Where `diag` is a multiple of
/// `spacing` (every tile boundary), a binary search over first-half counts that are multiples of
/// `spacing` narrows them to one sample apart: `takes_first(i)` answers whether the first half's
/// output `i` comes before the second half's output `diag - 1 - i` (both read off samples).
fn sampled_windows(
    diag: usize,
    n_first: usize,
    n_second: usize,
    spacing: usize,
    takes_first: impl Fn(usize) -> bool,
) -> [usize; 4] {
    let (mut begin, mut end) = (diag.saturating_sub(n_second), diag.min(n_first));
    if diag.is_multiple_of(spacing) {
        let (mut j_lo, mut j_hi) = (begin.div_ceil(spacing), end.div_ceil(spacing));
        while j_lo < j_hi {
            let j = j_lo + (j_hi - j_lo) / 2;
            let i = j * spacing;
            if takes_first(i) {
                begin = i + 1;
                j_lo = j + 1;
            } else {
                end = i;
                j_hi = j;
            }
        }
    }
    let sample_below = |i: usize| i / spacing * spacing;
    let sample_above = |i: usize, n: usize| (i.div_ceil(spacing) * spacing).min(n);
    [
        sample_below(begin),
        sample_above(end, n_first),
        sample_below(diag - end),
        sample_above(diag - begin, n_second),
    ]
}

/// The cut after `diag` quad-local outputs of the four-way merge of `quad`: the merge path of X
/// and Y at `diag`, bracketed with the two-way `partitions` (of the same pass input, run length
/// `run`, cut every `spacing` outputs; `4 * run` must be a multiple of `spacing`), which are
/// samples of X and of Y.
/// - Coarse: when `diag` is a multiple of `spacing` (every tile boundary but the sort's end), a
///   search over X indices that are multiples of `spacing` brackets the cut to one window; there
///   X's element and Y's element just before the matching Y sample are read straight off the
///   samples, so a probe costs no search.
/// - Fine: the samples around the X and Y brackets bound the count taken from each of the four
///   runs, and [`select_runs`] finds the counts inside those bounds.
pub fn quad_cut<T, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    quad: &MergeQuad,
    partitions: &[usize],
    spacing: usize,
    diag: usize,
    is_less: F,
) -> QuadCut {
    let sampled = |pair| SampledPair {
        keys,
        pair,
        partitions,
        spacing,
    };
    let (x, y) = (sampled(quad.half(0)), sampled(quad.half(1)));
    let (nx, ny) = (x.pair.total(), y.pair.total());
    assert!(
        diag <= nx + ny,
        "quad_cut: diagonal past the end of the quad"
    );
    // Each half's merge path at the windows' ends bounds the counts of both its runs (both are
    // monotone in the half's diagonal).
    let [x0, x1, y0, y1] = sampled_windows(diag, nx, ny, spacing, |xi| {
        let x_key = x.windowed_element(xi, &is_less);
        let y_key = y.element_before(diag - xi, &is_less);
        takes_a::<Lower, T, &F>(x_key, y_key, &&is_less)
    });
    let (a0, a1) = (x.sampled_path(x0), x.sampled_path(x1));
    let (c0, c1) = (y.sampled_path(y0), y.sampled_path(y1));
    let runs = [0, 1, 2, 3].map(|k| &keys[quad.starts[k]..quad.starts[k + 1]]);
    let counts = select_runs(
        runs,
        [a0, x0 - a0, c0, y0 - c0],
        [a1, x1 - a1, c1, y1 - c1],
        diag,
        &is_less,
    );
    QuadCut {
        x: counts[0] + counts[1],
        a: counts[0],
        c: counts[2],
    }
}

/// The cut at the end of tile `tile` of a four-way pass (`cuts` holds [`quad_cut`] at every
/// `spacing`-th output): a tile that ends its quad ends at the quad's full counts, since the
/// stored boundary there is the next quad's start.
pub fn quad_tile_end(
    cuts: &[QuadCut],
    tile: usize,
    spacing: usize,
    run: usize,
    count: usize,
) -> QuadCut {
    let (diag0, diag1) = tile_diagonals(tile, spacing, count);
    let quad = MergeQuad::at(count, run, diag0);
    if diag1 == quad.starts[4] {
        QuadCut {
            x: quad.half(0).total(),
            a: quad.half(0).a_count(),
            c: quad.half(1).a_count(),
        }
    } else {
        cuts[tile + 1]
    }
}

/// The eight runs of an eight-way mergesort pass that hold output `pos`: run `k` is
/// `starts[k]..starts[k + 1]` (global). The octet's output is the stable merge of P, the merge of
/// the quad of runs 0..4, with Q, the merge of the quad of runs 4..8, P first on ties: exactly
/// what three two-way passes produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MergeOctet {
    pub starts: [usize; 9],
}

impl MergeOctet {
    /// The octet of the eight-way pass over `count` keys with run length `run` that holds `pos`.
    pub fn at(count: usize, run: usize, pos: usize) -> Self {
        MergeOctet {
            starts: group_starts(count, run, pos),
        }
    }

    /// Outputs of the whole octet.
    pub fn total(&self) -> usize {
        self.starts[8] - self.starts[0]
    }

    /// The counts taken from the four runs of half `half` (P for 0, Q for 1) among its first `i`
    /// outputs, `i` a multiple of `spacing` or the half's length, read off the four-way cut of the
    /// same pass stored for the output position `starts[4 * half] + i` (`quad_cuts[p]` is
    /// [`quad_cut`] at output `p * spacing`, in that position's quad).
    fn sampled_counts(
        &self,
        quad_cuts: &[QuadCut],
        half: usize,
        spacing: usize,
        i: usize,
    ) -> [usize; 4] {
        let runs = &self.starts[4 * half..4 * half + 5];
        if runs[0] + i == runs[4] {
            return [0, 1, 2, 3].map(|k| runs[k + 1] - runs[k]);
        }
        let cut = quad_cuts[(runs[0] + i) / spacing];
        [cut.a, cut.x - cut.a, cut.c, i - cut.x - cut.c]
    }

    /// The head (next output) of half `half` after `counts`: the first in merge order of its
    /// runs' next keys (an earlier run first on ties); `None` once all of it is taken.
    fn head<'k, T, F: Fn(&T, &T) -> bool>(
        &self,
        keys: &'k [T],
        half: usize,
        counts: [usize; 4],
        is_less: &F,
    ) -> Option<&'k T> {
        (0..4)
            .filter_map(|k| {
                let at = self.starts[4 * half + k] + counts[k];
                (at < self.starts[4 * half + k + 1]).then(|| &keys[at])
            })
            .reduce(|best, key| if is_less(key, best) { key } else { best })
    }

    /// The last output of half `half` among its first outputs `counts`: the last in merge order
    /// of its runs' last taken keys (a later run last on ties); `None` before any is taken.
    fn last<'k, T, F: Fn(&T, &T) -> bool>(
        &self,
        keys: &'k [T],
        half: usize,
        counts: [usize; 4],
        is_less: &F,
    ) -> Option<&'k T> {
        (0..4)
            .filter(|&k| counts[k] > 0)
            .map(|k| &keys[self.starts[4 * half + k] + counts[k] - 1])
            .reduce(|best, key| if is_less(key, best) { best } else { key })
    }
}

/// The cut of an eight-way mergesort pass after `diag` outputs of `octet`, as counts taken from
/// each of its eight runs, with the four-way cuts of the same pass at every `spacing`-th output
/// as samples of P and Q (`quad_cuts[p]` at output `p * spacing`; `spacing` divides the run
/// length). Twin of `twophase_mergesort_oct_partition` (kernels/mergesort_oct_partition.cu).
/// - Coarse: a binary search over P counts that are multiples of `spacing` (so is `diag`, where
///   the search runs): P's output there and Q's output just before the matching Q sample are read
///   off the four-way cuts.
/// - Fine: the four-way cuts around the P and Q brackets bound the count taken from each of the
///   eight runs, and [`select_runs`] finds the counts inside those bounds.
pub fn oct_cut<T, F: Fn(&T, &T) -> bool>(
    keys: &[T],
    octet: &MergeOctet,
    quad_cuts: &[QuadCut],
    spacing: usize,
    diag: usize,
    is_less: F,
) -> [usize; 8] {
    let np = octet.starts[4] - octet.starts[0];
    let nq = octet.starts[8] - octet.starts[4];
    assert!(
        diag <= np + nq,
        "oct_cut: diagonal past the end of the octet"
    );
    let [p0, p1, q0, q1] = sampled_windows(diag, np, nq, spacing, |pi| {
        let p_counts = octet.sampled_counts(quad_cuts, 0, spacing, pi);
        let q_counts = octet.sampled_counts(quad_cuts, 1, spacing, diag - pi);
        // Inside the search's bracket P has output `pi` and Q one before `diag - pi`; past
        // either end, P is taken exactly when Q has nothing before it.
        match (
            octet.head(keys, 0, p_counts, &is_less),
            octet.last(keys, 1, q_counts, &is_less),
        ) {
            (Some(p_key), Some(q_key)) => takes_a::<Lower, T, &F>(p_key, q_key, &&is_less),
            (p_key, _) => p_key.is_some(),
        }
    });
    let (lo_p, hi_p) = (
        octet.sampled_counts(quad_cuts, 0, spacing, p0),
        octet.sampled_counts(quad_cuts, 0, spacing, p1),
    );
    let (lo_q, hi_q) = (
        octet.sampled_counts(quad_cuts, 1, spacing, q0),
        octet.sampled_counts(quad_cuts, 1, spacing, q1),
    );
    let join = |p: [usize; 4], q: [usize; 4]| {
        core::array::from_fn(|k| if k < 4 { p[k] } else { q[k - 4] })
    };
    let runs: [&[T]; 8] = core::array::from_fn(|k| &keys[octet.starts[k]..octet.starts[k + 1]]);
    select_runs(runs, join(lo_p, lo_q), join(hi_p, hi_q), diag, &is_less)
}

/// Load-balancing merge path: at output diagonal `diag` of the merge of the work items
/// `0..total` (A) with the segment offsets `scan` (B, the exclusive scan of segment sizes), how
/// many work items precede it. Upper bound: an offset equal to an item index comes first, so that
/// the item lands in the segment that starts there.
pub fn load_balance_path(total: usize, scan: &[usize], diag: usize) -> usize {
    assert!(
        diag <= total + scan.len(),
        "load_balance_path: diagonal past the end"
    );
    let mut begin = diag.saturating_sub(scan.len());
    let mut end = diag.min(total);
    while begin < end {
        let mid = begin + (end - begin) / 2;
        // Item `mid` against offset scan[diag-1-mid], upper bound: take the item only if it is
        // strictly before the offset.
        if mid < scan[diag - 1 - mid] {
            begin = mid + 1;
        } else {
            end = mid;
        }
    }
    begin
}

/// The load-balancing partitions: [`load_balance_path`] at every `spacing`-th diagonal of the
/// merge of `total` items with `scan.len()` segment offsets, written to `out`
/// ([`partition_count`] of `total + scan.len()` entries).
pub fn load_balance_partitions(total: usize, scan: &[usize], spacing: usize, out: &mut [usize]) {
    let count = total + scan.len();
    assert_eq!(
        out.len(),
        partition_count(count, spacing),
        "partition buffer size"
    );
    for (p, mp) in out.iter_mut().enumerate() {
        *mp = load_balance_path(total, scan, partition_diag(p, spacing, count));
    }
}
