//! Step 4 of the sort across GPUs: each output shard's received pieces merged by a tree of the two-phase merge into the output.

use std::ops::Range;

use cudarc::driver::{CudaSlice, CudaView, DeviceRepr};

use super::buffers::{tree_view, tree_view_mut};
use super::tree::{merge_level, Pieces, PiecesMut};
use super::{GpuGroup, Merge, COLUMNS, KEYS, UNSORTED_RUNS, VALUES};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::runtime::device::Gpu;

impl GpuGroup<'_> {
    /// Step 4: each output shard's pieces (with their values, if any) merged into `out_keys`
    /// (and `out_values`): a tree of the two-phase merge, pieces `2m` and `2m + 1` a level
    /// (earlier pieces as A, so ties keep shard order), each level launched on every device
    /// before any is waited for. Out of place the levels alternate between the device's two
    /// tree buffers, the last into the outputs; in place (`merge.in_place`: the outputs are the
    /// sent shards) between the first tree buffer and the outputs.
    pub(super) fn merge_received<K, V, C>(
        &self,
        out_keys: &mut [CudaSlice<K>],
        mut out_values: Option<&mut [CudaSlice<V>]>,
        merge: Merge,
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let [keys_received, values_received] = match merge.received {
            [keys] => [keys, keys],
            [keys, values, ..] => [keys, values],
            [] => return Err(GpuError::Poisoned("received pieces")),
        };
        // Where each output shard's pieces lie in the buffer a level reads (keys, values):
        // first as the exchange put them, after a level compact.
        let mut sources: Vec<[Vec<Range<usize>>; COLUMNS]> = (0..self.gpus.len())
            .map(|i| {
                [
                    keys_received.pieces[i].clone(),
                    values_received.pieces[i].clone(),
                ]
            })
            .collect();
        // ceil(log2(p)) levels; one GPU copies its one piece out.
        let levels = self.gpus.len().next_power_of_two().trailing_zeros().max(1);
        let places = level_places(levels, merge.in_place);
        let mut scratch = self.scratch.borrow_mut();
        if places
            .first()
            .is_some_and(|&(from, _)| from == Place::Output)
        {
            // In place with an even number of levels: the received pieces are copied, compact,
            // to the outputs first, so that the last level ends there.
            self.each(|i, gpu| {
                let received = &scratch[i].trees[0];
                let compact = copy_compact::<K>(
                    gpu,
                    tree_view(&received[KEYS], keys_received.lens[i])?,
                    &sources[i][KEYS],
                    &mut out_keys[i],
                )?;
                if let Some(out) = &mut out_values {
                    let from = tree_view::<V>(&received[VALUES], values_received.lens[i])?;
                    copy_compact(gpu, from, &sources[i][VALUES], &mut out[i])?;
                }
                sources[i] = [compact.clone(), compact];
                Ok(())
            })?;
        }
        let mut unsorted = false;
        for (level, (from, to)) in places.into_iter().enumerate() {
            self.each(|i, gpu| {
                let device = &mut scratch[i];
                let len = out_keys[i].len();
                // The level reads the received pieces where the exchange put them, or
                // compact ones.
                let (keys_len, values_len) = if level == 0 && from == Place::Tree(0) {
                    (keys_received.lens[i], values_received.lens[i])
                } else {
                    (len, len)
                };
                // The tree buffer read or written (the other tree, or the outputs, is the
                // other side).
                let [first, second] = &mut device.trees;
                let (from_tree, to_tree) = if from == Place::Tree(0) {
                    (first, second)
                } else {
                    (second, first)
                };
                let [to_tree_keys, to_tree_values] = to_tree;
                let has_values = out_values.is_some();
                let (from_out, to_out) = match to {
                    Place::Output => (None, Some(&mut out_keys[i])),
                    Place::Tree(_) => (Some(&out_keys[i]), None),
                };
                let from_keys = match (from, from_out) {
                    (Place::Output, Some(out)) => out.slice(0..len),
                    _ => tree_view::<K>(&from_tree[KEYS], keys_len)?,
                };
                let mut to_keys = match to_out {
                    Some(out) => out.as_view_mut(),
                    None => tree_view_mut::<K>(gpu, to_tree_keys, len)?,
                };
                let (from_vals, to_vals) = match (&mut out_values, to) {
                    (Some(out), Place::Output) => (None, Some(&mut out[i])),
                    (Some(out), Place::Tree(_)) => (Some(&out[i]), None),
                    (None, _) => (None, None),
                };
                let from_values = match (has_values, from, from_vals) {
                    (false, _, _) => None,
                    (true, Place::Output, Some(out)) => Some(out.slice(0..len)),
                    (true, _, _) => Some(tree_view::<V>(&from_tree[VALUES], values_len)?),
                };
                let mut to_values = match (has_values, to_vals) {
                    (false, _) => None,
                    (true, Some(out)) => Some(out.as_view_mut()),
                    (true, None) => Some(tree_view_mut::<V>(gpu, to_tree_values, len)?),
                };
                let level_in = Pieces {
                    keys: &from_keys,
                    values: from_values.as_ref(),
                    key_pieces: &sources[i][KEYS],
                    value_pieces: &sources[i][VALUES],
                };
                let level_out = PiecesMut {
                    keys: &mut to_keys,
                    values: to_values.as_mut(),
                };
                let merged = merge_level(gpu, level_in, level_out, comp, &mut device.merge)?;
                sources[i] = [merged.clone(), merged];
                Ok(())
            })?;
            unsorted |= self
                .order_checks(|i, gpu| scratch[i].merge.check(gpu))?
                .is_some();
        }
        if unsorted {
            return Err(GpuError::InvalidInput(UNSORTED_RUNS.to_owned()));
        }
        Ok(())
    }
}

/// The `pieces` of `from` copied back to back, in order, to the start of `to` on `gpu`'s
/// stream; returns where they now lie.
fn copy_compact<T: DeviceRepr>(
    gpu: &Gpu,
    from: CudaView<'_, T>,
    pieces: &[Range<usize>],
    to: &mut CudaSlice<T>,
) -> Result<Vec<Range<usize>>, GpuError> {
    let mut at = 0;
    let mut compact = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let place = at..at + piece.len();
        if !piece.is_empty() {
            let mut target = to.slice_mut(place.clone());
            gpu.stream()
                .memcpy_dtod(&from.slice(piece.clone()), &mut target)?;
        }
        at = place.end;
        compact.push(place);
    }
    Ok(compact)
}

/// Where a merge level reads or writes: a device's tree buffer, or its output shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Tree(usize),
    Output,
}

/// The (from, to) of each of `levels` merge levels, the received pieces in tree buffer 0 and the
/// last level into the outputs. Out of place the levels alternate between the two tree buffers;
/// in place between tree buffer 0 and the outputs, starting from the outputs (after a copy of
/// the pieces there) when `levels` is even.
fn level_places(levels: u32, in_place: bool) -> Vec<(Place, Place)> {
    (0..levels)
        .map(|level| {
            let last = level + 1 == levels;
            if in_place {
                // Levels counted back from the last, which writes the outputs.
                let to_outputs = (levels - 1 - level).is_multiple_of(2);
                if to_outputs {
                    (Place::Tree(0), Place::Output)
                } else {
                    (Place::Output, Place::Tree(0))
                }
            } else {
                let from = (level % 2) as usize;
                let to = if last {
                    Place::Output
                } else {
                    Place::Tree(1 - from)
                };
                (Place::Tree(from), to)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_read_what_the_level_before_wrote_and_end_in_the_outputs() {
        for in_place in [false, true] {
            for levels in 1..6 {
                let places = level_places(levels, in_place);
                assert_eq!(places.len(), levels as usize);
                assert_eq!(places[places.len() - 1].1, Place::Output);
                for pair in places.windows(2) {
                    assert_eq!(pair[0].1, pair[1].0);
                }
                for &(from, to) in &places {
                    assert_ne!(from, to);
                }
                // The received pieces are in tree 0, or copied to the outputs first.
                let first = places[0].0;
                assert!(first == Place::Tree(0) || (in_place && first == Place::Output));
            }
        }
    }
}
