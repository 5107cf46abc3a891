//! Long segments sorted alone: where the segments are on the host, those of at least `alone_min_keys` keys go through the plain mergesort and the rest through the segmented kernels with the long ones left as gaps.

use std::ops::Range;

use super::Segments;

/// A host-slice call's segments, split by length.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Routed {
    /// The long segments, longest first: the plain sort's scratch grows on the first alone.
    pub(super) alone: Vec<Range<usize>>,
    /// The first key of each other segment, in order (the segmented kernels' `starts`).
    pub(super) starts: Vec<usize>,
    /// One past the last key of each other segment (their `ends`): the long segments lie in
    /// the gaps between them, which the segmented kernels leave as they are.
    pub(super) ends: Vec<usize>,
}

impl Routed {
    /// The split of valid `segments` over `count` keys, or `None` where no segment has
    /// `min_keys` keys or more (the segmented kernels take them all).
    pub(super) fn new(segments: Segments<'_>, count: usize, min_keys: usize) -> Option<Self> {
        let segment = |i: usize| segments.segment(i, count);
        let long = |range: &Range<usize>| range.len() >= min_keys.max(2);
        if !(0..segments.len()).any(|i| long(&segment(i))) {
            return None;
        }
        let mut routed = Routed {
            alone: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
        };
        for range in (0..segments.len()).map(segment) {
            if long(&range) {
                routed.alone.push(range);
            } else if range.len() > 1 {
                routed.starts.push(range.start);
                routed.ends.push(range.end);
            }
        }
        routed
            .alone
            .sort_by_key(|range| std::cmp::Reverse(range.len()));
        Some(routed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_segments_go_alone_longest_first_and_the_rest_keep_their_order() {
        let starts = [0, 2, 10, 11, 30, 31];
        let routed = Routed::new(Segments::Starts(&starts), 40, 9).expect("long segments");
        assert_eq!(routed.alone, [11..30, 31..40]);
        // [10, 11) and [30, 31) hold one key each: nothing to sort.
        assert_eq!(routed.starts, [0, 2]);
        assert_eq!(routed.ends, [2, 10]);
        assert_eq!(Routed::new(Segments::Starts(&starts), 40, 20), None);
        let (starts, ends) = ([5, 20], [18, 21]);
        let routed = Routed::new(
            Segments::Ranges {
                starts: &starts,
                ends: &ends,
            },
            30,
            13,
        )
        .expect("one long range");
        assert_eq!(routed.alone, vec![Range { start: 5, end: 18 }]);
        assert!(routed.starts.is_empty() && routed.ends.is_empty());
    }
}
