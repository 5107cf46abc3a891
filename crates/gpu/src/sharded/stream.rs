//! Two GPUs' merge streamed behind the exchange: each receives its remote piece in chunks and merges every chunk with the local keys before the chunk's last key while the next is in flight.
//!
//! On two devices each output shard is the merge of two pieces: the local one, which stays in
//! the sorted shard and is read there, and the remote one, which NCCL brings. The remote piece
//! is cut into chunks at fixed elements and sent chunk after chunk; chunk `j` and the local keys
//! that come before its last key in the stable merge form window `j`, a merge of its own into
//! its place of the output. A window's local cut is a binary search of the chunk's last key (a
//! needle) in the local piece, made on the device before the exchange ends
//! (`twophase_merge_window_cuts`), so each window's merge waits only for its chunk: all but the
//! last window's merge run while later chunks are in flight.

use std::mem::size_of;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaStream, DevicePtrMut, DeviceRepr};

use super::buffers::{tree_view, tree_view_mut};
use super::cuts::shard_cuts;
use super::exchange::{Communicators, Transfer};
use super::layout::{ReceiveLayout, NCCL_PACK_BYTES};
use super::{Column, DeviceScratch, GpuGroup, COLUMNS, KEYS, UNSORTED_RUNS, VALUES};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::{MergeAlgorithm, MergeBuffers};
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::runtime::program::ValueLayout;

/// The chunks of a remote piece, by relative size: the first two thirds, then the last. The
/// first window's merge runs while the last chunk is in flight; the last window's (a third of
/// the merge) follows the exchange. Each further NCCL group waits for the SMs and memory the
/// merge holds, and slows the exchange more than its overlap saves (docs/tuning.md).
const CHUNK_WEIGHTS: [usize; 2] = [2, 1];
/// Fewest bytes of keys in the smallest chunk (a smaller piece goes whole), unless the group
/// sets another: each chunk costs an NCCL group and a merge's launches, tens of microseconds.
pub(super) const MIN_CHUNK_BYTES: usize = 4 << 20;
/// Chunk boundaries fall on multiples of this many elements: a multiple of every column's pack
/// unit, so that every chunk after the first starts 16-byte aligned in both columns.
const CHUNK_ALIGN_ELEMENTS: usize = NCCL_PACK_BYTES;

/// How one output shard's merge is streamed: its local piece, its remote piece and the
/// remote piece's chunk boundaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct StreamPlan {
    /// The shard the remote piece comes from.
    remote: usize,
    /// Whether the remote piece comes first in the stable order (from an earlier shard).
    remote_first: bool,
    /// The local piece: elements of this device's own sorted shard.
    local: Range<usize>,
    /// The chunk boundaries of the remote piece, in its shard's elements: chunk `j` is
    /// `bounds[j]..bounds[j + 1]`, from the piece's start to its end.
    bounds: Vec<usize>,
}

impl StreamPlan {
    /// The plan of output shard `shard` (0 or 1) of two, from the sharded sort's `cuts`, for
    /// keys of `key_bytes` bytes, chunks of at least `min_chunk_bytes` of them.
    pub(super) fn new(
        cuts: &[Vec<usize>],
        shard: usize,
        key_bytes: usize,
        min_chunk_bytes: usize,
    ) -> Self {
        let remote = 1 - shard;
        let piece = |k: usize| cuts[shard][k]..cuts[shard + 1][k];
        let (local, remote_piece) = (piece(shard), piece(remote));
        let (start, end) = (remote_piece.start, remote_piece.end);
        let weights = CHUNK_WEIGHTS;
        let (smallest, total) = (
            weights.iter().copied().min().unwrap_or(1),
            weights.iter().sum::<usize>(),
        );
        // Every chunk carries at least `min_chunk_bytes` of keys, or the piece goes whole.
        let streamed = remote_piece.len() * key_bytes * smallest >= min_chunk_bytes * total;
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
            remote,
            remote_first: remote < shard,
            local,
            bounds,
        }
    }

    /// The number of chunks (and windows).
    fn chunks(&self) -> usize {
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

    /// The needles: the remote shard's elements that end each chunk but the last.
    fn needles(&self) -> impl Iterator<Item = usize> + '_ {
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
struct Window {
    chunk: [Range<usize>; COLUMNS],
    local: Range<usize>,
    out: Range<usize>,
}

impl GpuGroup<'_> {
    /// Whether this group streams its merge behind the exchange: two distinct devices that
    /// exchange through NCCL.
    pub(super) fn streams_merge(&self) -> bool {
        self.gpus.len() == 2 && matches!(self.exchange, super::Exchange::Nccl(_))
    }

    /// Steps 2 to 4 on two GPUs, streamed: the cuts, then the chunks' exchange on each device's
    /// second stream with every window's merge on its first, each waiting for its chunk.
    /// Records the phases (`sorted`: step 1's time; the exchange ends when the last chunk has
    /// arrived, the merge when the last window is merged).
    pub(super) fn stream_merge<K, V, C>(
        &self,
        keys: Column<K>,
        values: Option<Column<V>>,
        comp: &C,
        sorted: Duration,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let super::Exchange::Nccl(comms) = &self.exchange else {
            return Err(GpuError::Poisoned("streamed merge without NCCL"));
        };
        let start = Instant::now();
        let cuts = shard_cuts(&self.gpus, keys.inputs, comp)?;
        let cut_time = start.elapsed();
        let plans: Vec<StreamPlan> = (0..2)
            .map(|i| StreamPlan::new(&cuts, i, size_of::<K>(), self.min_chunk_bytes.get()))
            .collect();
        let layouts = [
            ReceiveLayout::new(&cuts, size_of::<K>()),
            ReceiveLayout::new(&cuts, size_of::<V>()),
        ];
        let mut scratch = self.scratch.borrow_mut();
        let comm_streams = self
            .gpus
            .iter()
            .zip(scratch.iter_mut())
            .map(|(gpu, device)| super::on_device(gpu, comm_stream(gpu, device)))
            .collect::<Result<Vec<_>, _>>()?;
        let run = StreamRun {
            gpus: &self.gpus,
            comms,
            comm_streams: &comm_streams,
            plans: &plans,
            layouts: &layouts,
        };
        let steps = run.steps(&mut scratch, keys, values, comp);
        // Whatever failed, no stream may still use the buffers when the call returns.
        let exchanged = run.synchronize(&comm_streams);
        let exchange_end = Instant::now();
        let merged = self.each(|_, _| Ok(()));
        let consistent = steps?;
        exchanged?;
        merged?;
        let unsorted = self
            .order_checks(|i, gpu| scratch[i].merge.check(gpu))?
            .is_some();
        self.phases.set(super::Phases {
            sort: sorted,
            cuts: cut_time,
            exchange: exchange_end.duration_since(start).saturating_sub(cut_time),
            merge: exchange_end.elapsed(),
        });
        if unsorted || !consistent {
            return Err(GpuError::InvalidInput(UNSORTED_RUNS.to_owned()));
        }
        Ok(())
    }
}

/// Device `gpu`'s second stream, made once and kept in its scratch: the exchange's, at the
/// highest priority, so that NCCL's blocks take SMs ahead of the merges' waiting blocks.
fn comm_stream(gpu: &Gpu, device: &mut DeviceScratch) -> Result<Arc<CudaStream>, GpuError> {
    if let Some(stream) = &device.comm_stream {
        return Ok(stream.clone());
    }
    let context = gpu.context();
    context.bind_to_thread()?;
    let (_, greatest) = cudarc::driver::result::stream::get_priority_range()?;
    let stream = context.new_stream_with_priority(greatest)?;
    device.comm_stream = Some(stream.clone());
    Ok(stream)
}

/// One streamed call's fixed parts.
struct StreamRun<'r, 'g> {
    gpus: &'r [&'g Gpu],
    comms: &'r Communicators,
    comm_streams: &'r [Arc<CudaStream>],
    plans: &'r [StreamPlan],
    layouts: &'r [ReceiveLayout; COLUMNS],
}

impl StreamRun<'_, '_> {
    /// Every device's second stream synchronized, the first error naming its device.
    fn synchronize(&self, streams: &[Arc<CudaStream>]) -> Result<(), GpuError> {
        let mut first_error = None;
        for (gpu, stream) in self.gpus.iter().zip(streams) {
            if let Err(error) = stream.synchronize() {
                let error = super::device_error(gpu.context().ordinal(), error.into());
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The streamed steps, everything enqueued (nothing waited for but the window cuts'
    /// read-back). Returns whether the window cuts were a staircase as searched.
    fn steps<K, V, C>(
        &self,
        scratch: &mut [DeviceScratch],
        keys: Column<K>,
        mut values: Option<Column<V>>,
        comp: &C,
    ) -> Result<bool, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let has_values = values.is_some();
        // The receive buffers, grown on the devices' own streams before the exchange's stream
        // waits for them (and for the sorted shards).
        let mut targets = [[0u64; 2]; COLUMNS];
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            let stream = gpu.stream();
            let key_tree = &mut device.trees[0][KEYS];
            targets[KEYS][i] = tree_view_mut::<K>(gpu, key_tree, self.layouts[KEYS].lens[i])
                .map(|mut view| view.device_ptr_mut(stream).0)
                .map_err(|e| super::device_error(gpu.context().ordinal(), e))?;
            if has_values {
                let value_tree = &mut device.trees[0][VALUES];
                let len = self.layouts[VALUES].lens[i];
                targets[VALUES][i] = tree_view_mut::<V>(gpu, value_tree, len)
                    .map(|mut view| view.device_ptr_mut(stream).0)
                    .map_err(|e| super::device_error(gpu.context().ordinal(), e))?;
            }
            let ready = stream.record_event(None)?;
            self.comm_streams[i].wait(&ready)?;
        }
        let arrivals = self.send_chunks(&keys, values.as_ref(), &targets)?;
        let value_layout = if has_values {
            value_layout::<V>()
        } else {
            None
        };
        let (windows, consistent) = self.window_cuts(scratch, &keys, comp, value_layout)?;
        let most = windows.iter().map(Vec::len).max().unwrap_or(0);
        for j in 0..most {
            for (i, gpu) in self.gpus.iter().enumerate() {
                let Some(window) = windows[i].get(j) else {
                    continue;
                };
                gpu.stream().wait(&arrivals[i][j])?;
                let device = &mut scratch[i];
                let [first, _] = &device.trees;
                let key_tree = tree_view::<K>(&first[KEYS], self.layouts[KEYS].lens[i])?;
                let chunk = key_tree.slice(window.chunk[KEYS].clone());
                let local = keys.inputs[i].slice(window.local.clone());
                let (a, b) = if self.plans[i].remote_first {
                    (&chunk, &local)
                } else {
                    (&local, &chunk)
                };
                let mut out = keys.outputs[i].slice_mut(window.out.clone());
                let merged = match values.as_mut() {
                    Some(values) => {
                        let value_tree =
                            tree_view::<V>(&first[VALUES], self.layouts[VALUES].lens[i])?;
                        let chunk_values = value_tree.slice(window.chunk[VALUES].clone());
                        let local_values = values.inputs[i].slice(window.local.clone());
                        let (a_values, b_values) = if self.plans[i].remote_first {
                            (&chunk_values, &local_values)
                        } else {
                            (&local_values, &chunk_values)
                        };
                        let mut out_values = values.outputs[i].slice_mut(window.out.clone());
                        let buffers = MergeBuffers::pairs(
                            a,
                            a_values,
                            b,
                            b_values,
                            &mut out,
                            &mut out_values,
                        );
                        gpu.merge_device(
                            buffers,
                            comp,
                            MergeAlgorithm::default(),
                            &mut device.merge,
                        )
                    }
                    None => gpu.merge_device(
                        MergeBuffers::keys(a, b, &mut out),
                        comp,
                        MergeAlgorithm::default(),
                        &mut device.merge,
                    ),
                };
                merged.map_err(|e| super::device_error(gpu.context().ordinal(), e))?;
            }
        }
        Ok(consistent)
    }

    /// The exchange, chunk after chunk: one NCCL group a chunk index (keys, then values) on the
    /// devices' second streams into the receive buffers at `targets`, each device's arrival of
    /// chunk `j` recorded as event `[device][j]`.
    fn send_chunks<K: DeviceRepr, V: DeviceRepr>(
        &self,
        keys: &Column<K>,
        values: Option<&Column<V>>,
        targets: &[[u64; 2]; COLUMNS],
    ) -> Result<Vec<Vec<CudaEvent>>, GpuError> {
        let streams: Vec<&CudaStream> = self.comm_streams.iter().map(Arc::as_ref).collect();
        let sources = |column: usize, shard: usize| -> u64 {
            let stream = self.gpus[shard].stream();
            match (column, values) {
                (KEYS, _) => cudarc::driver::DevicePtr::device_ptr(&keys.inputs[shard], stream).0,
                (_, Some(values)) => {
                    cudarc::driver::DevicePtr::device_ptr(&values.inputs[shard], stream).0
                }
                (_, None) => 0,
            }
        };
        let columns: &[(usize, usize)] = if values.is_some() {
            &[(KEYS, size_of::<K>()), (VALUES, size_of::<V>())]
        } else {
            &[(KEYS, size_of::<K>())]
        };
        let most = self.plans.iter().map(StreamPlan::chunks).max().unwrap_or(0);
        let mut arrivals: Vec<Vec<CudaEvent>> = (0..2).map(|_| Vec::with_capacity(most)).collect();
        for j in 0..most {
            let mut transfers = Vec::with_capacity(2 * columns.len());
            for (i, plan) in self.plans.iter().enumerate() {
                if j >= plan.chunks() {
                    continue;
                }
                for &(column, bytes) in columns {
                    let layout = &self.layouts[column];
                    let sent = &layout.sent[i][plan.remote];
                    if sent.is_empty() {
                        continue;
                    }
                    let chunk = plan.chunk_sent(j, sent);
                    let slot = layout.slots[i][plan.remote] + (chunk.start - sent.start);
                    transfers.push(Transfer {
                        from: plan.remote,
                        to: i,
                        src: sources(column, plan.remote) + (chunk.start * bytes) as u64,
                        dst: targets[column][i] + (slot * bytes) as u64,
                        bytes: chunk.len() * bytes,
                    });
                }
            }
            // SAFETY: each chunk lies inside its piece's sent range (`chunk_sent` stays within
            // `sent`, itself within the remote shard), in the sorted input shard on device
            // `remote`; its place lies inside output `i`'s receive buffer, grown above to the
            // layout's `lens[i]` elements, at the piece's slot plus the chunk's offset in the
            // piece; both buffers live until `stream_merge` synchronizes these streams, which
            // are the devices' own second streams, and nothing else writes them meanwhile.
            unsafe { self.comms.group(&transfers, &streams) }?;
            for (i, stream) in self.comm_streams.iter().enumerate() {
                if j < self.plans[i].chunks() {
                    arrivals[i].push(stream.record_event(None)?);
                }
            }
        }
        Ok(arrivals)
    }

    /// Every window of both devices: the needles copied from the remote shards, each searched
    /// in the local piece on the device, the cuts read back and made a staircase. Returns each
    /// device's windows and whether every staircase was one as searched.
    fn window_cuts<K, C>(
        &self,
        scratch: &mut [DeviceScratch],
        keys: &Column<K>,
        comp: &C,
        values: ValueLayout,
    ) -> Result<(Vec<Vec<Window>>, bool), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            let plan = &self.plans[i];
            let needles: Vec<usize> = plan.needles().collect();
            if needles.is_empty() {
                continue;
            }
            let on_device = |e| super::device_error(gpu.context().ordinal(), e);
            let mut needle_keys =
                tree_view_mut::<K>(gpu, &mut device.needles, needles.len()).map_err(on_device)?;
            for (slot, &at) in needles.iter().enumerate() {
                let needle = keys.inputs[plan.remote].slice(at..at + 1);
                let mut place = needle_keys.slice_mut(slot..slot + 1);
                gpu.stream()
                    .memcpy_dtod(&needle, &mut place)
                    .map_err(|e| on_device(e.into()))?;
            }
            let cuts = gpu
                .grow_scratch(&mut device.window_cuts, needles.len())
                .map_err(on_device)?;
            let mut cuts = cuts.slice_mut(0..needles.len());
            let local = keys.inputs[i].slice(plan.local.clone());
            let needle_keys = needle_keys.slice(0..needles.len());
            gpu.merge_window_cuts(
                (&local, &needle_keys),
                plan.remote_first,
                &mut cuts,
                comp,
                values,
            )
            .map_err(on_device)?;
        }
        let mut consistent = true;
        let mut windows = Vec::with_capacity(2);
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            let plan = &self.plans[i];
            let needles = plan.chunks() - 1;
            let mut searched = vec![0u64; needles];
            if needles > 0 {
                let cuts = device
                    .window_cuts
                    .as_ref()
                    .ok_or(GpuError::Poisoned("window cuts"))?;
                gpu.stream()
                    .memcpy_dtoh(&cuts.slice(0..needles), &mut searched)
                    .map_err(|e| super::device_error(gpu.context().ordinal(), e.into()))?;
            }
            let (cuts, staircase) = window_staircase(&searched, plan.local.len());
            consistent &= staircase;
            let pieces = [KEYS, VALUES].map(|c| self.layouts[c].pieces[i][plan.remote].start);
            windows.push(plan_windows(plan, &cuts, pieces));
        }
        Ok((windows, consistent))
    }
}

/// The windows of `plan` from its local `cuts` (a staircase over the local piece), the remote
/// piece lying at `piece_starts` (keys, values) in the receive buffers.
fn plan_windows(plan: &StreamPlan, cuts: &[usize], piece_starts: [usize; COLUMNS]) -> Vec<Window> {
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
                for min_chunk in [1, 64, 4096, MIN_CHUNK_BYTES] {
                    for shard in 0..2 {
                        let plan = StreamPlan::new(&cuts, shard, key_bytes, min_chunk);
                        assert!((1..=CHUNK_WEIGHTS.len()).contains(&plan.chunks()));
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

    /// The streamed merge run on the host: the windows' merges, each into its place, give the
    /// output shard of the stable merge, whatever the chunks.
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
            for (i, min_chunk) in [(0, 4), (1, 4), (0, 256), (1, 1 << 20)] {
                let plan = StreamPlan::new(&cuts, i, 8, min_chunk);
                let layout = ReceiveLayout::new(&cuts, 8);
                let remote = &shards[plan.remote];
                let mut received = vec![(u32::MAX, u32::MAX); layout.lens[i]];
                let sent = layout.sent[i][plan.remote].clone();
                let slot = layout.slots[i][plan.remote];
                received[slot..slot + sent.len()].copy_from_slice(&remote[sent]);
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
                let piece = layout.pieces[i][plan.remote].start;
                let out_len = shard_boundary(i + 1, 2, total) - shard_boundary(i, 2, total);
                let mut out = vec![(u32::MAX, u32::MAX); out_len];
                for window in plan_windows(&plan, &local_cuts, [piece, piece]) {
                    let chunk = &received[window.chunk[KEYS].clone()];
                    let local = &shards[i][window.local.clone()];
                    let (a, b) = if plan.remote_first {
                        (chunk, local)
                    } else {
                        (local, chunk)
                    };
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
