//! The streamed merge's plan on two GPUs: where the remote piece's chunks end, and what each window merges (crates/gpu/src/sharded/stream.rs launches them).

use std::ops::Range;

use super::layout::NCCL_PACK_BYTES;

/// The chunks of a remote piece, by relative size, unless the group sets others: the first two
/// thirds, then the last. The first window's merge runs while the last chunk is in flight; the
/// last window's (a third of the merge) follows the exchange. Each further NCCL group waits for
/// the SMs and memory the merge holds, and slows the exchange more than its overlap saves
/// (docs/tuning.md).
pub(super) const CHUNK_WEIGHTS: [usize; 2] = [2, 1];
/// Fewest bytes of keys in the smallest chunk (a smaller piece goes whole), unless the group
/// sets another: a second chunk costs an NCCL group, the window cuts' read-back and a merge's
/// launches, which at 2^24 keys (16 MiB pieces) cost more than the overlap saves.
pub(super) const MIN_CHUNK_BYTES: usize = 64 << 20;
/// Chunk boundaries fall on multiples of this many elements: a multiple of every column's pack
/// unit, so that every chunk after the first starts 16-byte aligned in both columns.
const CHUNK_ALIGN_ELEMENTS: usize = NCCL_PACK_BYTES;

/// How one output shard's merge is streamed: its local piece, its remote piece, the remote
/// piece's chunk boundaries and the order the chunks are sent in.
///
/// The remote shard's element `e` lands at element `e - base` of the receive buffer (in every
/// column: `base` and every boundary between chunks are multiples of [`CHUNK_ALIGN_ELEMENTS`],
/// so that every chunk is sent from and received at 16-byte-aligned addresses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct StreamPlan {
    /// The output shard (and device) this plan merges.
    pub(super) shard: usize,
    /// The shard the remote piece comes from.
    pub(super) remote: usize,
    /// Whether the remote piece comes first in the stable order (from an earlier shard).
    pub(super) remote_first: bool,
    /// The local piece: elements of this device's own sorted shard.
    pub(super) local: Range<usize>,
    /// The chunk boundaries of the remote piece, in its shard's elements: chunk `j` is
    /// `bounds[j]..bounds[j + 1]`, from the piece's start to its end.
    bounds: Vec<usize>,
    /// The remote element at the receive buffer's start.
    base: usize,
    /// The chunks in the order they are sent (and their windows merged).
    order: Vec<usize>,
}

/// `len` split at multiples of [`CHUNK_ALIGN_ELEMENTS`] past `start` into chunks whose sizes
/// go as `weights` (at least one element in each but the last where the length allows):
/// returns the boundaries between them, ascending, with `weights[0]`'s chunk first from the
/// start, or (`from_end`) first from the end.
pub(super) fn weighted_bounds(
    start: usize,
    len: usize,
    weights: &[usize],
    from_end: bool,
) -> Vec<usize> {
    let total: usize = weights.iter().sum();
    let end = start + len;
    let mut bounds = Vec::with_capacity(weights.len().saturating_sub(1));
    let mut taken = 0;
    for &weight in &weights[..weights.len().saturating_sub(1)] {
        taken += weight;
        // The share of the piece before this boundary, counted from `start`.
        let share = if from_end { total - taken } else { taken };
        let offset = (len * share / total) / CHUNK_ALIGN_ELEMENTS * CHUNK_ALIGN_ELEMENTS;
        bounds.push((start + offset.max(CHUNK_ALIGN_ELEMENTS)).min(end));
    }
    bounds.sort_unstable();
    bounds
}

/// Whether a piece of `len` elements of `key_bytes` each is sent in chunks of `weights`, each
/// of at least `min_chunk_bytes` of keys.
pub(super) fn streams(
    len: usize,
    key_bytes: usize,
    min_chunk_bytes: usize,
    weights: &[usize],
) -> bool {
    let smallest = weights.iter().copied().min().unwrap_or(1);
    let total = weights.iter().sum::<usize>();
    weights.len() > 1 && len * key_bytes * smallest >= min_chunk_bytes * total
}

/// `at` rounded down to a multiple of [`CHUNK_ALIGN_ELEMENTS`].
pub(super) fn align_down(at: usize) -> usize {
    at - at % CHUNK_ALIGN_ELEMENTS
}

/// `at` rounded up to a multiple of [`CHUNK_ALIGN_ELEMENTS`].
pub(super) fn align_up(at: usize) -> usize {
    at.next_multiple_of(CHUNK_ALIGN_ELEMENTS)
}

impl StreamPlan {
    /// The plan of output shard `shard` (0 or 1) of two, from the sharded sort's `cuts`, for
    /// keys of `key_bytes` bytes, chunks of at least `min_chunk_bytes` of them whose sizes go as
    /// `weights` (none zero; no weights send the piece whole), sent first to last.
    pub(super) fn new(
        cuts: &[Vec<usize>],
        shard: usize,
        key_bytes: usize,
        min_chunk_bytes: usize,
        weights: &[usize],
    ) -> Self {
        let remote = 1 - shard;
        let piece = |k: usize| cuts[shard][k]..cuts[shard + 1][k];
        let (local, remote_piece) = (piece(shard), piece(remote));
        let (start, end) = (remote_piece.start, remote_piece.end);
        let base = align_down(start);
        let mut bounds = vec![start];
        if streams(remote_piece.len(), key_bytes, min_chunk_bytes, weights) {
            for bound in weighted_bounds(base, end - base, weights, false) {
                bounds.push(bound.max(bounds[bounds.len() - 1]));
            }
        }
        bounds.push(end);
        let order = (0..bounds.len() - 1).collect();
        StreamPlan {
            shard,
            remote,
            remote_first: remote < shard,
            local,
            bounds,
            base,
            order,
        }
    }

    /// The plan of output shard `shard` of two whose local piece is `local`, whose remote
    /// piece's chunks end at `bounds` (ascending, the piece's start first; every boundary
    /// between chunks aligned) and are sent in `order`, received from remote element `base`
    /// (aligned, at or before the piece's start).
    pub(super) fn from_parts(
        shard: usize,
        local: Range<usize>,
        bounds: Vec<usize>,
        base: usize,
        order: Vec<usize>,
    ) -> Self {
        StreamPlan {
            shard,
            remote: 1 - shard,
            remote_first: shard == 1,
            local,
            bounds,
            base,
            order,
        }
    }

    /// The number of chunks (and windows).
    pub(super) fn chunks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The chunk sent at step `step` of the exchange, if this plan sends that many.
    pub(super) fn chunk_at_step(&self, step: usize) -> Option<usize> {
        self.order.get(step).copied()
    }

    /// The remote piece's elements in its shard.
    fn remote_piece(&self) -> Range<usize> {
        self.bounds[0]..self.bounds[self.chunks()]
    }

    /// Elements of a receive buffer that holds the remote piece where the plan puts it.
    pub(super) fn receive_len(&self) -> usize {
        self.remote_piece().end - self.base
    }

    /// The elements of the remote shard that chunk `j` sends, in every column (the first
    /// chunk from its start rounded down to an aligned element, the others from their
    /// boundary), and where they land in the receive buffer; `None` when the chunk is empty.
    pub(super) fn chunk_transfer(&self, j: usize) -> Option<(Range<usize>, usize)> {
        let (begin, end) = (self.bounds[j], self.bounds[j + 1]);
        if begin >= end {
            return None;
        }
        let from = if j == 0 { align_down(begin) } else { begin };
        Some((from..end, from - self.base))
    }

    /// The needles, one a boundary between chunks: the remote shard's element that ends the
    /// piece's elements before the boundary, or `None` for a boundary at the piece's start
    /// (an empty first chunk), before which no local key goes.
    pub(super) fn needles(&self) -> impl Iterator<Item = Option<usize>> + '_ {
        let start = self.bounds[0];
        self.bounds[1..self.chunks()]
            .iter()
            .map(move |&end| (end > start).then(|| end - 1))
    }
}

/// The local cuts of the windows, `cuts[j]..cuts[j + 1]` of the local piece in window `j`, from
/// the device's `searched` cut of every needle: clamped into a staircase from 0 to
/// `local_len`. Returns them and whether they were one already (sorted pieces under a strict
/// weak order always are).
pub(super) fn window_staircase(searched: &[u64], local_len: usize) -> (Vec<usize>, bool) {
    let mut cuts = vec![0];
    let mut consistent = true;
    for &cut in searched {
        let prev = cuts[cuts.len() - 1];
        let cut = usize::try_from(cut).unwrap_or(usize::MAX);
        let clamped = cut.clamp(prev, local_len);
        consistent &= clamped == cut;
        cuts.push(clamped);
    }
    cuts.push(local_len);
    (cuts, consistent)
}

/// Where one window's merge reads and writes, in elements: the remote chunk in the receive
/// buffers (the same in every column), the local keys in the shard, the place in the output shard.
pub(super) struct Window {
    pub(super) chunk: Range<usize>,
    pub(super) local: Range<usize>,
    pub(super) out: Range<usize>,
}

/// A window's `remote` and `local` parts as the merge's A and B: the earlier shard's first, so
/// that ties keep shard order.
pub(super) fn merge_order<T>(remote_first: bool, remote: T, local: T) -> (T, T) {
    if remote_first {
        (remote, local)
    } else {
        (local, remote)
    }
}

/// The windows of `plan` from its local `cuts` (a staircase over the local piece), chunk `j`
/// lying at its remote elements less the plan's base in the receive buffers (every column).
pub(super) fn plan_windows(plan: &StreamPlan, cuts: &[usize]) -> Vec<Window> {
    let piece_start = plan.remote_piece().start;
    (0..plan.chunks())
        .map(|j| {
            let (begin, end) = (plan.bounds[j], plan.bounds[j + 1]);
            let chunk = begin - plan.base..end - plan.base;
            let local = plan.local.start + cuts[j]..plan.local.start + cuts[j + 1];
            let out_start = (begin - piece_start) + cuts[j];
            Window {
                chunk,
                out: out_start..out_start + (end - begin) + local.len(),
                local,
            }
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use twophase_partition::{multiway_co_rank, shard_boundary};

    /// A small deterministic generator (the crate has no rand).
    pub(in crate::sharded) fn next(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    /// The sort's cuts of two sorted shards (row 1: the multiway co-rank at the middle).
    pub(in crate::sharded) fn two_shard_cuts(shards: &[Vec<(u32, u32)>; 2]) -> Vec<Vec<usize>> {
        let runs: Vec<&[(u32, u32)]> = shards.iter().map(Vec::as_slice).collect();
        let total = shards[0].len() + shards[1].len();
        let (mut cut, mut upper) = (vec![0; 2], vec![0; 2]);
        let is_less = |a: &(u32, u32), b: &(u32, u32)| a.0 < b.0;
        multiway_co_rank(
            &runs,
            shard_boundary(1, 2, total),
            &is_less,
            &mut cut,
            &mut upper,
        );
        vec![vec![0, 0], cut, vec![shards[0].len(), shards[1].len()]]
    }

    /// Chunk weights the tests plan with: the shipped ones, none, one, and longer lists.
    const WEIGHTS: [&[usize]; 5] = [&CHUNK_WEIGHTS, &[], &[1], &[3, 1], &[8, 4, 2, 1, 1]];

    /// Every chunk of `plan` is sent from an aligned element (or its piece's start rounded
    /// down, no lower than the base) to its boundary, lands at that element less the base,
    /// inside the receive buffer, and the chunks cover the remote piece in order.
    pub(in crate::sharded) fn check_chunks(plan: &StreamPlan) {
        let piece = plan.remote_piece();
        let mut at = piece.start;
        for j in 0..plan.chunks() {
            let (begin, end) = (plan.bounds[j], plan.bounds[j + 1]);
            assert!(begin <= end, "{plan:?}");
            let Some((sent, slot)) = plan.chunk_transfer(j) else {
                assert_eq!(begin, end, "{plan:?}");
                continue;
            };
            assert_eq!((begin, sent.end), (at, end), "{plan:?}");
            assert!(sent.start <= begin && sent.start >= plan.base, "{plan:?}");
            assert_eq!(sent.start % CHUNK_ALIGN_ELEMENTS, 0, "{plan:?}");
            assert_eq!(slot, sent.start - plan.base, "{plan:?}");
            assert!(slot + sent.len() <= plan.receive_len(), "{plan:?}");
            at = end;
        }
        assert_eq!(at, piece.end, "{plan:?}");
        let mut order = plan.order.clone();
        order.sort_unstable();
        assert_eq!(order, (0..plan.chunks()).collect::<Vec<_>>(), "{plan:?}");
    }

    #[test]
    fn chunks_tile_each_piece_and_start_aligned_in_every_column() {
        let mut state = 7;
        for _ in 0..200 {
            let lens = [
                next(&mut state) as usize % 5000,
                next(&mut state) as usize % 5000,
            ];
            let cut = [
                next(&mut state) as usize % (lens[0] + 1),
                next(&mut state) as usize % (lens[1] + 1),
            ];
            let cuts = vec![vec![0, 0], cut.to_vec(), lens.to_vec()];
            for key_bytes in [1, 2, 4, 8, 12, 16, 24] {
                for (min_chunk, weights) in [1, 64, 4096, MIN_CHUNK_BYTES]
                    .into_iter()
                    .flat_map(|min_chunk| WEIGHTS.map(|weights| (min_chunk, weights)))
                {
                    for shard in 0..2 {
                        let plan = StreamPlan::new(&cuts, shard, key_bytes, min_chunk, weights);
                        assert!((1..=weights.len().max(1)).contains(&plan.chunks()));
                        assert_eq!(
                            plan.remote_piece(),
                            cuts[shard][1 - shard]..cuts[shard + 1][1 - shard]
                        );
                        check_chunks(&plan);
                    }
                }
            }
        }
    }

    #[test]
    fn the_staircase_keeps_sorted_cuts_and_clamps_others() {
        assert_eq!(window_staircase(&[2, 2, 5], 7), (vec![0, 2, 2, 5, 7], true));
        assert_eq!(window_staircase(&[], 0), (vec![0, 0], true));
        assert_eq!(
            window_staircase(&[4, 1, 9], 7),
            (vec![0, 4, 4, 7, 7], false)
        );
    }

    /// Random sorted shards of pairs (key, shard << 16 | position) with keys below `range`.
    pub(in crate::sharded) fn sorted_shards(state: &mut u64, range: u64) -> [Vec<(u32, u32)>; 2] {
        [0u32, 1].map(|s| {
            let len = next(state) as usize % 3000;
            let mut keys: Vec<(u32, u32)> = (0..len)
                .map(|i| ((next(state) % range) as u32, (s << 16) | i as u32))
                .collect();
            keys.sort_by_key(|k| k.0);
            keys
        })
    }

    /// Output shard `plan.shard` as the device makes it, on the host: the chunks sent by
    /// `senders` (step `s` by `senders[s]`, a plan whose chunk at that step is this plan's)
    /// received where they put them (keys of 4 bytes and values of 8, as two columns), the
    /// needles searched in the local piece, then each window merged into its place, in the
    /// order the chunks are sent.
    /// The output shard that `plan`'s streamed merge gives ([`streamed_output`], the chunks sent
    /// by `senders`) is that shard of `expected`, the stable merge of both shards.
    pub(in crate::sharded) fn assert_streams_its_shard(
        shards: &[Vec<(u32, u32)>; 2],
        plan: &StreamPlan,
        senders: &[&StreamPlan],
        expected: &[(u32, u32)],
        round: usize,
    ) {
        let total = expected.len();
        let first = shard_boundary(plan.shard, 2, total);
        let out = streamed_output(shards, plan, senders, total);
        assert_eq!(
            out,
            expected[first..first + out.len()],
            "round {round} shard {}",
            plan.shard
        );
    }

    fn streamed_output(
        shards: &[Vec<(u32, u32)>; 2],
        plan: &StreamPlan,
        senders: &[&StreamPlan],
        total: usize,
    ) -> Vec<(u32, u32)> {
        let remote = &shards[plan.remote];
        let mut keys_in = vec![u32::MAX; plan.receive_len()];
        let mut values_in = vec![u64::MAX; plan.receive_len()];
        for (step, sender) in senders.iter().enumerate() {
            let j = sender.chunk_at_step(step).expect("a chunk a step");
            assert_eq!(Some(j), plan.chunk_at_step(step));
            assert_eq!(
                sender.chunk_transfer(j),
                plan.chunk_transfer(j),
                "step {step}"
            );
            if let Some((chunk, slot)) = sender.chunk_transfer(j) {
                for (at, k) in (slot..).zip(chunk) {
                    keys_in[at] = remote[k].0;
                    values_in[at] = u64::from(remote[k].1);
                }
            }
        }
        // The device's search, as twophase_merge_window_cuts makes it.
        let local = &shards[plan.shard][plan.local.clone()];
        let searched: Vec<u64> = plan
            .needles()
            .map(|at| {
                let Some(at) = at else {
                    return 0;
                };
                let needle = remote[at].0;
                let before = |key: &(u32, u32)| {
                    if plan.remote_first {
                        key.0 < needle
                    } else {
                        key.0 <= needle
                    }
                };
                local.partition_point(before) as u64
            })
            .collect();
        let (local_cuts, consistent) = window_staircase(&searched, local.len());
        assert!(consistent);
        let i = plan.shard;
        let out_len = shard_boundary(i + 1, 2, total) - shard_boundary(i, 2, total);
        let mut out = vec![(u32::MAX, u32::MAX); out_len];
        let windows = plan_windows(plan, &local_cuts);
        for &j in &plan.order {
            let window = &windows[j];
            let chunk: Vec<(u32, u32)> = keys_in[window.chunk.clone()]
                .iter()
                .zip(&values_in[window.chunk.clone()])
                .map(|(&key, &value)| (key, value as u32))
                .collect();
            let local = &shards[i][window.local.clone()];
            let (a, b) = merge_order(plan.remote_first, chunk.as_slice(), local);
            let mut merged: Vec<(u32, u32)> = a.iter().chain(b).copied().collect();
            merged.sort_by_key(|k| k.0); // stable: A's keys before B's equal ones
            out[window.out.clone()].copy_from_slice(&merged);
        }
        out
    }

    /// The streamed merge run on the host: every chunk received where `chunk_transfer` puts
    /// it, then the windows' merges, each into its place, give the output shard of the stable
    /// merge, whatever the chunks.
    #[test]
    fn windows_merged_in_place_give_each_output_shard() {
        let mut state = 11;
        for round in 0..300 {
            let shards = sorted_shards(&mut state, [2, 16, 1000][round % 3]);
            let mut expected: Vec<(u32, u32)> = shards.concat();
            expected.sort_by_key(|k| k.0);
            let cuts = two_shard_cuts(&shards);
            for (i, min_chunk) in [(0, 4), (1, 4), (0, 256), (1, 1 << 20)] {
                let weights = WEIGHTS[round % WEIGHTS.len()];
                let plan = StreamPlan::new(&cuts, i, 4, min_chunk, weights);
                let senders = vec![&plan; plan.chunks()];
                assert_streams_its_shard(&shards, &plan, &senders, &expected, round);
            }
        }
    }
}
