//! The expected answer of a sorted search, by std's `partition_point`: the reference of the search tests.

use twophase::SearchBound;

/// For each needle, the index of its `bound` in `haystack` under `is_less`: the first haystack
/// key not less than the needle (`Lower`), or the first greater than it (`Upper`).
pub fn reference_bounds<K>(
    needles: &[K],
    haystack: &[K],
    bound: SearchBound,
    is_less: impl Fn(&K, &K) -> bool,
) -> Vec<usize> {
    needles
        .iter()
        .map(|x| match bound {
            SearchBound::Lower => haystack.partition_point(|h| is_less(h, x)),
            SearchBound::Upper => haystack.partition_point(|h| !is_less(x, h)),
        })
        .collect()
}
