//! The streamed merge's plan on two GPUs: where the remote piece's chunks end, and what each window merges (crates/gpu/src/sharded/stream.rs launches them).

use std::ops::Range;

use super::layout::{ReceiveLayout, NCCL_PACK_BYTES};
use super::{COLUMNS, KEYS, VALUES};

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

/// How one output shard's merge is streamed: its local piece, its remote piece and the
/// remote piece's chunk boundaries.
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
}

impl StreamPlan {
    /// The plan of output shard `shard` (0 or 1) of two, from the sharded sort's `cuts`, for
    /// keys of `key_bytes` bytes, chunks of at least `min_chunk_bytes` of them whose sizes go as
    /// `weights` (none zero; no weights send the piece whole).
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
        let (smallest, total) = (
            weights.iter().copied().min().unwrap_or(1),
            weights.iter().sum::<usize>(),
        );
        // Every chunk carries at least `min_chunk_bytes` of keys, or the piece goes whole.
        let streamed = weights.len() > 1
            && remote_piece.len() * key_bytes * smallest >= min_chunk_bytes * total;
        let base = start - start % CHUNK_ALIGN_ELEMENTS;
        let mut bounds = vec![start];
        if streamed {
            let mut taken = 0;
            for &weight in &weights[..weights.len() - 1] {
                taken += weight;
                let offset =
                    ((end - base) * taken / total) / CHUNK_ALIGN_ELEMENTS * CHUNK_ALIGN_ELEMENTS;
                let bound = (base + offset.max(CHUNK_ALIGN_ELEMENTS)).min(end);
                bounds.push(bound.max(bounds[bounds.len() - 1]));
            }
        }
        bounds.push(end);
        StreamPlan {
            shard,
            remote,
            remote_first: remote < shard,
            local,
            bounds,
        }
    }

    /// The number of chunks (and windows).
    pub(super) fn chunks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The remote piece's elements in its shard.
    fn remote_piece(&self) -> Range<usize> {
        self.bounds[0]..self.bounds[self.chunks()]
    }

    /// The elements of the remote shard that chunk `j` of a column sends, whose whole piece
    /// sends `sent` (its start rounded down to the column's pack unit): the first chunk from
    /// there, the others from their boundary.
    fn chunk_sent(&self, j: usize, sent: &Range<usize>) -> Range<usize> {
        let from = if j == 0 { sent.start } else { self.bounds[j] };
        from..self.bounds[j + 1].max(from)
    }

    /// Chunk `j` of the column laid out by `layout`: the remote shard's elements it sends and
    /// where they land in this output shard's receive buffer (the piece's slot plus their offset
    /// in what the piece sends), or `None` when it sends nothing.
    pub(super) fn chunk_transfer(
        &self,
        j: usize,
        layout: &ReceiveLayout,
    ) -> Option<(Range<usize>, usize)> {
        let sent = &layout.sent[self.shard][self.remote];
        if sent.is_empty() {
            return None;
        }
        let chunk = self.chunk_sent(j, sent);
        let slot = layout.slots[self.shard][self.remote] + (chunk.start - sent.start);
        (!chunk.is_empty()).then_some((chunk, slot))
    }

    /// The needles: the remote shard's elements that end each chunk but the last.
    pub(super) fn needles(&self) -> impl Iterator<Item = usize> + '_ {
        self.bounds[1..self.chunks()].iter().map(|&end| end - 1)
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
/// buffer (per column), the local keys in the shard, the place in the output shard.
pub(super) struct Window {
    pub(super) chunk: [Range<usize>; COLUMNS],
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

/// The windows of `plan` from its local `cuts` (a staircase over the local piece), the remote
/// piece lying at `piece_starts` (keys, values) in the receive buffers.
pub(super) fn plan_windows(
    plan: &StreamPlan,
    cuts: &[usize],
    piece_starts: [usize; COLUMNS],
) -> Vec<Window> {
    let piece_start = plan.remote_piece().start;
    (0..plan.chunks())
        .map(|j| {
            let (begin, end) = (plan.bounds[j], plan.bounds[j + 1]);
            let chunk = |column: usize| {
                let at = piece_starts[column] + (begin - piece_start);
                at..at + (end - begin)
            };
            let local = plan.local.start + cuts[j]..plan.local.start + cuts[j + 1];
            let out_start = (begin - piece_start) + cuts[j];
            Window {
                chunk: [chunk(KEYS), chunk(VALUES)],
                out: out_start..out_start + (end - begin) + local.len(),
                local,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharded::layout::ReceiveLayout;
    use twophase_partition::{multiway_co_rank, shard_boundary};

    /// A small deterministic generator (the crate has no rand).
    fn next(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    /// The sort's cuts of two sorted shards (row 1: the multiway co-rank at the middle).
    fn two_shard_cuts(shards: &[Vec<(u32, u32)>; 2]) -> Vec<Vec<usize>> {
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
                        assert!(plan.bounds.windows(2).all(|w| w[0] <= w[1]), "{plan:?}");
                        for bytes in [1, 2, 4, 8, 12, 16, 24, 40] {
                            let layout = ReceiveLayout::new(&cuts, bytes);
                            let sent = &layout.sent[shard][plan.remote];
                            if sent.is_empty() {
                                continue;
                            }
                            let mut at = sent.start;
                            for j in 0..plan.chunks() {
                                let chunk = plan.chunk_sent(j, sent);
                                assert_eq!(chunk.start, at, "{plan:?} {bytes}");
                                if !chunk.is_empty() {
                                    let offset = (chunk.start - sent.start) * bytes;
                                    assert_eq!(offset % NCCL_PACK_BYTES, 0, "{plan:?} {bytes}");
                                }
                                at = chunk.end;
                            }
                            assert_eq!(at, sent.end);
                        }
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

    /// The streamed merge run on the host, keys of 4 bytes and values of 8 (so the two columns'
    /// pieces lie at different places): every chunk received where `chunk_transfer` puts it,
    /// then the windows' merges, each into its place, give the output shard of the stable
    /// merge, whatever the chunks.
    #[test]
    fn windows_merged_in_place_give_each_output_shard() {
        let mut state = 11;
        for round in 0..300 {
            let range = [2, 16, 1000][round % 3];
            let shards: [Vec<(u32, u32)>; 2] = [0u32, 1].map(|s| {
                let len = next(&mut state) as usize % 3000;
                let mut keys: Vec<(u32, u32)> = (0..len)
                    .map(|i| ((next(&mut state) % range) as u32, (s << 16) | i as u32))
                    .collect();
                keys.sort_by_key(|k| k.0);
                keys
            });
            let mut expected: Vec<(u32, u32)> = shards.concat();
            expected.sort_by_key(|k| k.0);
            let cuts = two_shard_cuts(&shards);
            let total = expected.len();
            let layouts = [ReceiveLayout::new(&cuts, 4), ReceiveLayout::new(&cuts, 8)];
            for (i, min_chunk) in [(0, 4), (1, 4), (0, 256), (1, 1 << 20)] {
                let weights = WEIGHTS[round % WEIGHTS.len()];
                let plan = StreamPlan::new(&cuts, i, 4, min_chunk, weights);
                let remote = &shards[plan.remote];
                let mut keys_in = vec![u32::MAX; layouts[KEYS].lens[i]];
                let mut values_in = vec![u64::MAX; layouts[VALUES].lens[i]];
                for j in 0..plan.chunks() {
                    if let Some((chunk, slot)) = plan.chunk_transfer(j, &layouts[KEYS]) {
                        for (at, k) in (slot..).zip(chunk) {
                            keys_in[at] = remote[k].0;
                        }
                    }
                    if let Some((chunk, slot)) = plan.chunk_transfer(j, &layouts[VALUES]) {
                        for (at, k) in (slot..).zip(chunk) {
                            values_in[at] = u64::from(remote[k].1);
                        }
                    }
                }
                // The device's search, as twophase_merge_window_cuts makes it.
                let local = &shards[i][plan.local.clone()];
                let searched: Vec<u64> = plan
                    .needles()
                    .map(|at| {
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
                let pieces = [KEYS, VALUES].map(|c| layouts[c].pieces[i][plan.remote].start);
                let out_len = shard_boundary(i + 1, 2, total) - shard_boundary(i, 2, total);
                let mut out = vec![(u32::MAX, u32::MAX); out_len];
                for window in plan_windows(&plan, &local_cuts, pieces) {
                    let chunk: Vec<(u32, u32)> = keys_in[window.chunk[KEYS].clone()]
                        .iter()
                        .zip(&values_in[window.chunk[VALUES].clone()])
                        .map(|(&key, &value)| (key, value as u32))
                        .collect();
                    let local = &shards[i][window.local.clone()];
                    let (a, b) = merge_order(plan.remote_first, chunk.as_slice(), local);
                    let mut merged: Vec<(u32, u32)> = a.iter().chain(b).copied().collect();
                    merged.sort_by_key(|k| k.0); // stable: A's keys before B's equal ones
                    out[window.out.clone()].copy_from_slice(&merged);
                }
                let first = shard_boundary(i, 2, total);
                assert_eq!(
                    out,
                    expected[first..first + out_len],
                    "round {round} shard {i}"
                );
            }
        }
    }
}
