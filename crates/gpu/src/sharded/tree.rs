//! One level of the sharded sort's merge tree: the received pieces merged pairwise by the two-phase merge.

use cudarc::driver::{CudaView, CudaViewMut, DeviceRepr};

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::{MergeAlgorithm, MergeBuffers, MergeScratch};
use crate::runtime::device::Gpu;

/// The keys (and values) of one merge level's input.
pub(super) struct Pieces<'v, 'b, K, V> {
    pub(super) keys: &'v CudaView<'b, K>,
    pub(super) values: Option<&'v CudaView<'b, V>>,
}

/// The keys (and values) of one merge level's output.
pub(super) struct PiecesMut<'v, 'b, K, V> {
    pub(super) keys: &'v mut CudaViewMut<'b, K>,
    pub(super) values: Option<&'v mut CudaViewMut<'b, V>>,
}

/// One level of the merge of the consecutive sorted pieces of `from` that `bounds` delimits, on
/// `gpu`'s stream: piece `2m` merged with `2m + 1` (an odd last piece merged with nothing, a
/// copy) into `to`, the same positions. Returns the bounds of the merged pieces.
pub(super) fn merge_level<K, V, C>(
    gpu: &Gpu,
    from: Pieces<K, V>,
    to: PiecesMut<K, V>,
    bounds: &[usize],
    comp: &C,
    scratch: &mut MergeScratch,
) -> Result<Vec<usize>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    V: DeviceValue + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let pieces = bounds.len() - 1;
    let mut merged_bounds = vec![0];
    let PiecesMut {
        keys: to_keys,
        values: mut to_values,
    } = to;
    for a in (0..pieces).step_by(2) {
        let (begin, mid) = (bounds[a], bounds[a + 1]);
        let end = bounds[(a + 2).min(pieces)];
        let (a_keys, b_keys) = (from.keys.slice(begin..mid), from.keys.slice(mid..end));
        let mut o_keys = to_keys.slice_mut(begin..end);
        match (from.values, to_values.as_deref_mut()) {
            (Some(v), Some(o)) => {
                let (a_vals, b_vals) = (v.slice(begin..mid), v.slice(mid..end));
                let mut o_vals = o.slice_mut(begin..end);
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
        merged_bounds.push(end);
    }
    Ok(merged_bounds)
}
