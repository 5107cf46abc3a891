//! One level of the sharded sort's merge tree: the received pieces merged pairwise by the two-phase merge.

use std::ops::Range;

use cudarc::driver::{CudaView, CudaViewMut, DeviceRepr};

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::{MergeAlgorithm, MergeBuffers, MergeScratch};
use crate::runtime::device::Gpu;

/// The keys (and values) of one merge level's input, and where its sorted pieces lie in them
/// (in order; keys and values may lie at different places, each piece as long in both).
pub(super) struct Pieces<'v, 'b, K, V> {
    pub(super) keys: &'v CudaView<'b, K>,
    pub(super) values: Option<&'v CudaView<'b, V>>,
    pub(super) key_pieces: &'v [Range<usize>],
    pub(super) value_pieces: &'v [Range<usize>],
}

/// The keys (and values) of one merge level's output.
pub(super) struct PiecesMut<'v, 'b, K, V> {
    pub(super) keys: &'v mut CudaViewMut<'b, K>,
    pub(super) values: Option<&'v mut CudaViewMut<'b, V>>,
}

/// One level of the merge of the sorted pieces of `from`, on `gpu`'s stream: piece `2m` merged
/// with `2m + 1` (an odd last piece merged with nothing, a copy) into `to`, back to back from
/// its start. Returns where the merged pieces lie in `to`.
pub(super) fn merge_level<K, V, C>(
    gpu: &Gpu,
    from: Pieces<K, V>,
    to: PiecesMut<K, V>,
    comp: &C,
    scratch: &mut MergeScratch,
) -> Result<Vec<Range<usize>>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    V: DeviceValue + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let pieces = from.key_pieces.len();
    let mut merged = Vec::with_capacity(pieces.div_ceil(2));
    let PiecesMut {
        keys: to_keys,
        values: mut to_values,
    } = to;
    // The piece after `a`, or an empty one where `a` is the last.
    let pair = |ranges: &[Range<usize>], a: usize| {
        let first = ranges[a].clone();
        let second = ranges.get(a + 1).cloned().unwrap_or(first.end..first.end);
        (first, second)
    };
    let mut at = 0;
    for a in (0..pieces).step_by(2) {
        let (a_range, b_range) = pair(from.key_pieces, a);
        let place = at..at + a_range.len() + b_range.len();
        let (a_keys, b_keys) = (from.keys.slice(a_range), from.keys.slice(b_range));
        let mut o_keys = to_keys.slice_mut(place.clone());
        match (from.values, to_values.as_deref_mut()) {
            (Some(v), Some(o)) => {
                let (a_range, b_range) = pair(from.value_pieces, a);
                let (a_vals, b_vals) = (v.slice(a_range), v.slice(b_range));
                let mut o_vals = o.slice_mut(place.clone());
                let buffers = MergeBuffers::pairs(
                    &a_keys,
                    &a_vals,
                    &b_keys,
                    &b_vals,
                    &mut o_keys,
                    &mut o_vals,
                );
                gpu.merge_device(buffers, comp, MergeAlgorithm::default(), scratch)?;
            }
            _ => {
                let buffers = MergeBuffers::keys(&a_keys, &b_keys, &mut o_keys);
                gpu.merge_device(buffers, comp, MergeAlgorithm::default(), scratch)?;
            }
        }
        at = place.end;
        merged.push(place);
    }
    Ok(merged)
}
