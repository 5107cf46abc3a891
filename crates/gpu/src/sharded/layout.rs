//! Where the exchange's pieces go: each sent from and received at 16-byte-aligned addresses, so that NCCL copies them in whole 16-byte packs.

use std::ops::Range;

/// The alignment, in bytes, at which NCCL's copy loops move 16-byte packs: a send or receive
/// buffer at another alignment falls back to narrower loads and stores (on two H200s, a third
/// to a half of the aligned rate).
pub(super) const NCCL_PACK_BYTES: usize = 16;

/// Elements of `bytes` bytes in the smallest run whose size is a multiple of
/// [`NCCL_PACK_BYTES`]: starts that are multiples of it, on an aligned buffer, are aligned.
fn pack_unit(bytes: usize) -> usize {
    let (mut a, mut b) = (bytes.max(1), NCCL_PACK_BYTES);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    // lcm(bytes, NCCL_PACK_BYTES) / bytes
    NCCL_PACK_BYTES / a
}

/// Elements of a receive buffer that holds an output shard of `len` elements of `bytes`
/// bytes each from `p` pieces in the aligned layout ([`ReceiveLayout`]): each piece adds at
/// most one unit of its sender's preceding elements and one unit of alignment.
pub(super) fn receive_capacity(len: usize, p: usize, bytes: usize) -> usize {
    len + 2 * p * pack_unit(bytes)
}

/// The layout of one column's exchange, for elements of one size: for every output shard `i`
/// and input shard `k`, the range of input `k` sent (the piece's cut, its start rounded down
/// to a pack unit), where it lands in output `i`'s receive buffer (a multiple of the unit), and
/// so where the piece itself lies there.
#[derive(Clone, Debug, Default)]
pub(super) struct ReceiveLayout {
    /// `sent[i][k]`: the elements of input shard `k` sent to output shard `i`.
    pub(super) sent: Vec<Vec<Range<usize>>>,
    /// `slots[i][k]`: where that range starts in output `i`'s receive buffer.
    pub(super) slots: Vec<Vec<usize>>,
    /// `pieces[i][k]`: where the piece (the cut's elements alone) lies in that buffer.
    pub(super) pieces: Vec<Vec<Range<usize>>>,
    /// `lens[i]`: elements of output `i`'s receive buffer the layout uses.
    pub(super) lens: Vec<usize>,
}

impl ReceiveLayout {
    /// The layout of the pieces `cuts` delimits (output shard `i` receives elements
    /// `cuts[i][k]..cuts[i + 1][k]` of every input shard `k`) for elements of `bytes` bytes.
    /// Empty pieces send nothing.
    pub(super) fn new(cuts: &[Vec<usize>], bytes: usize) -> Self {
        let unit = pack_unit(bytes);
        let mut layout = ReceiveLayout::default();
        for cut in cuts.windows(2) {
            let (mut sent, mut slots, mut pieces) = (vec![], vec![], vec![]);
            let mut at: usize = 0;
            for (&begin, &end) in cut[0].iter().zip(&cut[1]) {
                if begin == end {
                    sent.push(begin..begin);
                    slots.push(at);
                    pieces.push(at..at);
                    continue;
                }
                let from = begin - begin % unit;
                let slot = at.next_multiple_of(unit);
                sent.push(from..end);
                slots.push(slot);
                pieces.push(slot + (begin - from)..slot + (end - from));
                at = slot + (end - from);
            }
            layout.sent.push(sent);
            layout.slots.push(slots);
            layout.pieces.push(pieces);
            layout.lens.push(at);
        }
        layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_sent_and_received_at_aligned_elements_and_fit_the_capacity() {
        // Three input shards, two outputs, cuts at awkward positions.
        let cuts = vec![vec![0, 0, 0], vec![5, 0, 13], vec![11, 7, 30]];
        for bytes in [1, 2, 4, 8, 12, 16, 24, 40] {
            let unit = pack_unit(bytes);
            assert_eq!(unit * bytes % NCCL_PACK_BYTES, 0, "{bytes}");
            let layout = ReceiveLayout::new(&cuts, bytes);
            for i in 0..2 {
                let len: usize = (0..3).map(|k| cuts[i + 1][k] - cuts[i][k]).sum();
                assert!(layout.lens[i] <= receive_capacity(len, 3, bytes));
                let mut end = 0;
                #[allow(clippy::needless_range_loop)] // k indexes the cuts and every table
                for k in 0..3 {
                    let (sent, slot, piece) =
                        (&layout.sent[i][k], layout.slots[i][k], &layout.pieces[i][k]);
                    assert_eq!(piece.len(), cuts[i + 1][k] - cuts[i][k]);
                    if piece.is_empty() {
                        continue;
                    }
                    assert_eq!(sent.end, cuts[i + 1][k]);
                    assert!(sent.start <= cuts[i][k] && sent.start % unit == 0);
                    assert!(slot % unit == 0 && slot >= end);
                    assert_eq!(piece.start - slot, cuts[i][k] - sent.start);
                    end = slot + sent.len();
                    assert!(end <= layout.lens[i]);
                }
            }
        }
    }
}
