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

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};

use super::buffers::{on_device, tree_view, tree_view_mut};
use super::cuts::shard_cuts;
use super::exchange::{Communicators, Transfer};
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
        let mut scratch = self.scratch.borrow_mut();
        let comm_streams = self.comm_streams(&mut scratch)?;
        let run = StreamRun {
            gpus: &self.gpus,
            comms,
            comm_streams: &comm_streams,
            plans: &plans,
            values: layout,
        };
        let steps = run.steps(&mut scratch, keys, values, comp);
        let timing = StreamTiming {
            sorted,
            start,
            cut_time,
        };
        self.end_stream(&run, &mut scratch, steps, timing)
    }

    /// The end of a streamed call whose steps returned `steps` (whether the window cuts were a
    /// staircase): every stream synchronized whatever failed (no stream may still use the
    /// buffers when the call returns), the merges' order checks, the phases recorded.
    pub(super) fn end_stream(
        &self,
        run: &StreamRun,
        scratch: &mut [DeviceScratch],
        steps: Result<bool, GpuError>,
        timing: StreamTiming,
    ) -> Result<(), GpuError> {
        let exchanged = run.synchronize();
        let exchange_end = Instant::now();
        let merged = self.each(|_, _| Ok(()));
        let consistent = steps?;
        exchanged?;
        merged?;
        let unsorted = self
            .order_checks(|i, gpu| scratch[i].merge.check(gpu))?
            .is_some();
        let StreamTiming {
            sorted,
            start,
            cut_time,
        } = timing;
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

    /// Each device's exchange stream (made on first use).
    pub(super) fn comm_streams(
        &self,
        scratch: &mut [DeviceScratch],
    ) -> Result<Vec<Arc<CudaStream>>, GpuError> {
        self.gpus
            .iter()
            .zip(scratch.iter_mut())
            .map(|(gpu, device)| on_device(gpu, comm_stream(gpu, device)))
            .collect()
    }
}

/// When a streamed call's steps ran, for its phases.
pub(super) struct StreamTiming {
    /// Step 1's time (the sort; zero for a merge).
    pub(super) sorted: Duration,
    /// When the steps after the sort started.
    pub(super) start: Instant,
    /// The cuts' time, from `start`.
    pub(super) cut_time: Duration,
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
pub(super) struct StreamRun<'r, 'g> {
    pub(super) gpus: &'r [&'g Gpu],
    pub(super) comms: &'r Communicators,
    pub(super) comm_streams: &'r [Arc<CudaStream>],
    pub(super) plans: &'r [StreamPlan],
    /// The values' layout (none for keys alone): the merge program the windows run in.
    pub(super) values: ValueLayout,
}

/// Each device's receive buffers' addresses, by column then device.
pub(super) type Targets = [[u64; 2]; COLUMNS];

impl StreamRun<'_, '_> {
    /// Every device's second stream synchronized, the first error naming its device.
    pub(super) fn synchronize(&self) -> Result<(), GpuError> {
        let mut first_error = None;
        for (gpu, stream) in self.gpus.iter().zip(self.comm_streams) {
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
        values: Option<Column<V>>,
        comp: &C,
    ) -> Result<bool, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let lens: Vec<usize> = self.plans.iter().map(StreamPlan::receive_len).collect();
        let targets = self.receive_targets::<K, V>(scratch, &lens, values.is_some())?;
        let steps = self.plans.iter().map(StreamPlan::chunks).max().unwrap_or(0);
        let mut arrivals: Vec<Vec<CudaEvent>> = (0..2).map(|_| Vec::with_capacity(steps)).collect();
        let value_inputs = values.as_ref().map(|v| v.inputs);
        self.send_steps(keys.inputs, value_inputs, &targets, 0..steps, &mut arrivals)?;
        self.merge_windows(scratch, keys, values, comp, &arrivals)
    }

    /// Each device's receive buffers (its first tree buffers) grown to `lens[i]` elements of
    /// keys, and of values where the call has them, on its own stream, which its exchange
    /// stream then waits for (with everything before on it). Returns their addresses.
    pub(super) fn receive_targets<K: DeviceRepr, V: DeviceRepr>(
        &self,
        scratch: &mut [DeviceScratch],
        lens: &[usize],
        has_values: bool,
    ) -> Result<Targets, GpuError> {
        let mut targets = [[0u64; 2]; COLUMNS];
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            let stream = gpu.stream();
            let key_tree = &mut device.trees[0][KEYS];
            let key_view = tree_view_mut::<K>(gpu, key_tree, lens[i]);
            targets[KEYS][i] = on_device(gpu, key_view)?.device_ptr_mut(stream).0;
            if has_values {
                let value_tree = &mut device.trees[0][VALUES];
                let value_view = tree_view_mut::<V>(gpu, value_tree, lens[i]);
                targets[VALUES][i] = on_device(gpu, value_view)?.device_ptr_mut(stream).0;
            }
            let ready = stream.record_event(None)?;
            self.comm_streams[i].wait(&ready)?;
        }
        Ok(targets)
    }

    /// The exchange's `steps`: at step `s`, one NCCL group of each device's chunk of that step
    /// (keys, then values) on the devices' second streams into the receive buffers at
    /// `targets`, each device's arrival recorded as event `arrivals[device][s]` (steps in
    /// order, each call's first the one after the last call's).
    pub(super) fn send_steps<K: DeviceRepr, V: DeviceRepr>(
        &self,
        keys: &[CudaSlice<K>],
        values: Option<&[CudaSlice<V>]>,
        targets: &Targets,
        steps: Range<usize>,
        arrivals: &mut [Vec<CudaEvent>],
    ) -> Result<(), GpuError> {
        let streams: Vec<&CudaStream> = self.comm_streams.iter().map(Arc::as_ref).collect();
        let sources = |column: usize, shard: usize| -> u64 {
            let stream = self.gpus[shard].stream();
            match (column, values) {
                (KEYS, _) => keys[shard].device_ptr(stream).0,
                (_, Some(values)) => values[shard].device_ptr(stream).0,
                (_, None) => 0,
            }
        };
        let columns: &[(usize, usize)] = if values.is_some() {
            &[(KEYS, size_of::<K>()), (VALUES, size_of::<V>())]
        } else {
            &[(KEYS, size_of::<K>())]
        };
        for step in steps {
            let mut transfers = Vec::with_capacity(2 * columns.len());
            for (i, plan) in self.plans.iter().enumerate() {
                let Some(j) = plan.chunk_at_step(step) else {
                    continue;
                };
                let Some((chunk, slot)) = plan.chunk_transfer(j) else {
                    continue;
                };
                for &(column, bytes) in columns {
                    transfers.push(Transfer {
                        from: plan.remote,
                        to: i,
                        src: sources(column, plan.remote) + (chunk.start * bytes) as u64,
                        dst: targets[column][i] + (slot * bytes) as u64,
                        bytes: chunk.len() * bytes,
                    });
                }
            }
            // SAFETY: each chunk lies inside the remote shard on device `remote` (a plan's
            // chunks lie between its piece's start, rounded down to an aligned element no
            // lower than its base, and its end, within the shard), sorted there by the launches
            // the exchange's stream waited for; its place, from element `chunk.start - base`,
            // lies inside output `i`'s receive buffer, grown to the plan's receive length or
            // more on its own stream before this stream waited for it; both buffers live until
            // the call synchronizes these streams, the devices' own second streams, and nothing
            // else writes them meanwhile.
            unsafe { self.comms.group(&transfers, &streams) }?;
            for (i, stream) in self.comm_streams.iter().enumerate() {
                if self.plans[i].chunk_at_step(step).is_some() {
                    arrivals[i].push(stream.record_event(None)?);
                }
            }
        }
        Ok(())
    }

    /// Every window's merge on its device's first stream, in the order the chunks are sent,
    /// each after its chunk's arrival (`arrivals[device][step]`): the window cuts first (the
    /// needles searched on the devices and read back). Returns whether the window cuts were a
    /// staircase as searched.
    pub(super) fn merge_windows<K, V, C>(
        &self,
        scratch: &mut [DeviceScratch],
        keys: Column<K>,
        mut values: Option<Column<V>>,
        comp: &C,
        arrivals: &[Vec<CudaEvent>],
    ) -> Result<bool, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let (windows, consistent) = self.window_cuts(scratch, &keys, comp, self.values)?;
        let steps = self.plans.iter().map(StreamPlan::chunks).max().unwrap_or(0);
        for step in 0..steps {
            for (i, (gpu, plan)) in self.gpus.iter().zip(self.plans).enumerate() {
                let Some(j) = plan.chunk_at_step(step) else {
                    continue;
                };
                let window = &windows[i][j];
                let arrived = arrivals[i]
                    .get(step)
                    .ok_or(GpuError::Poisoned("chunk arrival"))?;
                gpu.stream().wait(arrived)?;
                let device = &mut scratch[i];
                let [first, _] = &device.trees;
                let received = plan.receive_len();
                let key_tree = tree_view::<K>(&first[KEYS], received)?;
                let chunk = key_tree.slice(window.chunk.clone());
                let local = keys.inputs[i].slice(window.local.clone());
                let (a, b) = merge_order(plan.remote_first, &chunk, &local);
                let mut out = keys.outputs[i].slice_mut(window.out.clone());
                let merged = match values.as_mut() {
                    Some(values) => {
                        let value_tree = tree_view::<V>(&first[VALUES], received)?;
                        let chunk_values = value_tree.slice(window.chunk.clone());
                        let local_values = values.inputs[i].slice(window.local.clone());
                        let (a_values, b_values) =
                            merge_order(plan.remote_first, &chunk_values, &local_values);
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
            let needles: Vec<usize> = plan.needles().flatten().collect();
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
            let needles = plan.needles().flatten().count();
            let mut found = vec![0u64; needles];
            if needles > 0 {
                let cuts = device
                    .window_cuts
                    .as_ref()
                    .ok_or(GpuError::Poisoned("window cuts"))?;
                let read = gpu
                    .stream()
                    .memcpy_dtoh(&cuts.slice(0..needles), &mut found);
                on_device(gpu, read.map_err(GpuError::from))?;
            }
            // A boundary at the piece's start cuts the local piece at 0.
            let mut found = found.into_iter();
            let searched: Vec<u64> = plan
                .needles()
                .map(|needle| needle.and_then(|_| found.next()).unwrap_or(0))
                .collect();
            let (cuts, staircase) = window_staircase(&searched, plan.local.len());
            consistent &= staircase;
            windows.push(plan_windows(plan, &cuts));
        }
        Ok((windows, consistent))
    }
}
