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
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaStream, DevicePtrMut, DeviceRepr};

use super::buffers::{on_device, tree_view, tree_view_mut};
use super::cuts::shard_cuts;
use super::exchange::{Communicators, Transfer};
use super::layout::ReceiveLayout;
use super::windows::{merge_order, plan_windows, window_staircase, StreamPlan, Window};
use super::{Column, DeviceScratch, GpuGroup, COLUMNS, KEYS, UNSORTED_RUNS, VALUES};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::{MergeAlgorithm, MergeBuffers};
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::runtime::program::ValueLayout;

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
        let layout = values.as_ref().and_then(|_| value_layout::<V>());
        let cuts = shard_cuts(&self.gpus, keys.inputs, comp, self.cut_probes.get(), layout)?;
        let cut_time = start.elapsed();
        let weights = self.chunk_weights.borrow();
        let min_chunk_bytes = self.min_chunk_bytes.get();
        let plans: Vec<StreamPlan> = (0..2)
            .map(|i| StreamPlan::new(&cuts, i, size_of::<K>(), min_chunk_bytes, &weights))
            .collect();
        drop(weights);
        let layouts = [
            ReceiveLayout::new(&cuts, size_of::<K>()),
            ReceiveLayout::new(&cuts, size_of::<V>()),
        ];
        let mut scratch = self.scratch.borrow_mut();
        let comm_streams = self
            .gpus
            .iter()
            .zip(scratch.iter_mut())
            .map(|(gpu, device)| on_device(gpu, comm_stream(gpu, device)))
            .collect::<Result<Vec<_>, _>>()?;
        let run = StreamRun {
            gpus: &self.gpus,
            comms,
            comm_streams: &comm_streams,
            plans: &plans,
            layouts: &layouts,
            values: layout,
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
    /// The values' layout (none for keys alone): the merge program the windows run in.
    values: ValueLayout,
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
            let key_view = tree_view_mut::<K>(gpu, key_tree, self.layouts[KEYS].lens[i]);
            targets[KEYS][i] = on_device(gpu, key_view)?.device_ptr_mut(stream).0;
            if has_values {
                let value_tree = &mut device.trees[0][VALUES];
                let len = self.layouts[VALUES].lens[i];
                let value_view = tree_view_mut::<V>(gpu, value_tree, len);
                targets[VALUES][i] = on_device(gpu, value_view)?.device_ptr_mut(stream).0;
            }
            let ready = stream.record_event(None)?;
            self.comm_streams[i].wait(&ready)?;
        }
        let arrivals = self.send_chunks(&keys, values.as_ref(), &targets)?;
        let (windows, consistent) = self.window_cuts(scratch, &keys, comp, self.values)?;
        let most = windows.iter().map(Vec::len).max().unwrap_or(0);
        for j in 0..most {
            for (i, (gpu, arrived)) in self.gpus.iter().zip(&arrivals).enumerate() {
                let Some(window) = windows[i].get(j) else {
                    continue;
                };
                // One arrival a chunk, one window a chunk.
                let arrived = arrived.get(j).ok_or(GpuError::Poisoned("chunk arrival"))?;
                gpu.stream().wait(arrived)?;
                let device = &mut scratch[i];
                let [first, _] = &device.trees;
                let key_tree = tree_view::<K>(&first[KEYS], self.layouts[KEYS].lens[i])?;
                let chunk = key_tree.slice(window.chunk[KEYS].clone());
                let local = keys.inputs[i].slice(window.local.clone());
                let remote_first = self.plans[i].remote_first;
                let (a, b) = merge_order(remote_first, &chunk, &local);
                let mut out = keys.outputs[i].slice_mut(window.out.clone());
                let merged = match values.as_mut() {
                    Some(values) => {
                        let value_tree =
                            tree_view::<V>(&first[VALUES], self.layouts[VALUES].lens[i])?;
                        let chunk_values = value_tree.slice(window.chunk[VALUES].clone());
                        let local_values = values.inputs[i].slice(window.local.clone());
                        let (a_values, b_values) =
                            merge_order(remote_first, &chunk_values, &local_values);
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
                on_device(gpu, merged)?;
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
                    let Some((chunk, slot)) = plan.chunk_transfer(j, &self.layouts[column]) else {
                        continue;
                    };
                    transfers.push(Transfer {
                        from: plan.remote,
                        to: i,
                        src: sources(column, plan.remote) + (chunk.start * bytes) as u64,
                        dst: targets[column][i] + (slot * bytes) as u64,
                        bytes: chunk.len() * bytes,
                    });
                }
            }
            // SAFETY: each chunk lies inside its piece's sent range (`chunk_transfer` stays
            // within `sent`, itself within the remote shard), in the sorted input shard on device
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
            let needle_view = tree_view_mut::<K>(gpu, &mut device.needles, needles.len());
            let mut needle_keys = on_device(gpu, needle_view)?;
            for (slot, &at) in needles.iter().enumerate() {
                let needle = keys.inputs[plan.remote].slice(at..at + 1);
                let mut place = needle_keys.slice_mut(slot..slot + 1);
                let copied = gpu.stream().memcpy_dtod(&needle, &mut place);
                on_device(gpu, copied.map_err(GpuError::from))?;
            }
            let cuts = on_device(
                gpu,
                gpu.grow_scratch(&mut device.window_cuts, needles.len()),
            )?;
            let mut cuts = cuts.slice_mut(0..needles.len());
            let local = keys.inputs[i].slice(plan.local.clone());
            let needle_keys = needle_keys.slice(0..needles.len());
            let searched = gpu.merge_window_cuts(
                (&local, &needle_keys),
                plan.remote_first,
                &mut cuts,
                comp,
                values,
            );
            on_device(gpu, searched)?;
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
                let read = gpu
                    .stream()
                    .memcpy_dtoh(&cuts.slice(0..needles), &mut searched);
                on_device(gpu, read.map_err(GpuError::from))?;
            }
            let (cuts, staircase) = window_staircase(&searched, plan.local.len());
            consistent &= staircase;
            let pieces = [KEYS, VALUES].map(|c| self.layouts[c].pieces[i][plan.remote].start);
            windows.push(plan_windows(plan, &cuts, pieces));
        }
        Ok((windows, consistent))
    }
}
