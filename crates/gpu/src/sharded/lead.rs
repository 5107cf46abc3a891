//! Two GPUs' sort with the exchange begun inside the last merge pass: samples of the runs before that pass bound the cut, the part of each shard that leaves whatever the cut is merged and sent first, and the rest of the pass runs beside its transfer.
//!
//! Each device's mergesort holds back its last pass's tiles ([`HeldPass`]). Every
//! `stride`-th key of the runs that pass merges, on both devices, goes to the host, where
//! [`sampled_cut_bounds`] bounds each run's count before the middle of the output, and so the
//! cut of each sorted shard. The elements past the highest cut of shard 0 (before the lowest of
//! shard 1) leave their device whatever the exact cut: their tiles are merged first, and their
//! chunks sent on the exchange's stream while the devices merge the other tiles. The exact cuts
//! of the sorted shards follow, then the part of each piece between the bound and the cut, and
//! the windows' merges as [`StreamRun`] makes them, in the order the chunks arrive.

use std::mem::size_of;
use std::ops::{Range, RangeInclusive};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaSlice, DeviceRepr};
use twophase_partition::{sampled_cut_bounds, shard_boundary};

use super::buffers::{on_device, tree_view};
use super::cuts::{gather_samples, samples_to_host, shard_cuts};
use super::stream::{StreamRun, StreamTiming};
use super::windows::{align_down, align_up, streams, weighted_bounds, StreamPlan};
use super::{Column, GpuGroup};
use crate::compare::{is_trusted, key_image, DeviceComparator};
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::mergesort::{HeldPass, SortBuffers};
use crate::primitive::value_layout;
use crate::runtime::program::ValueLayout;

/// Samples a device's runs give the bounds at most: the cut of each of its runs is then known
/// to within about (runs + 1) times `len / LEAD_SAMPLES` keys, sent after the exact cut (at
/// 2^29 u64 keys a device: about 2 MiB a run), while the samples cost one 256 KiB copy a
/// device (docs/tuning.md, "The exchange led from the last merge pass").
const LEAD_SAMPLES: usize = 1 << 15;

/// A column's input shards and output shards, the inputs still to sort.
type Unsorted<'c, T> = (&'c mut [CudaSlice<T>], &'c mut [CudaSlice<T>]);
/// A column's sorted input shards and its output shards.
type Sorted<'c, T> = (&'c [CudaSlice<T>], &'c mut [CudaSlice<T>]);

/// One device's shard with its values, as the sort takes them.
type Shard<'s, K, V> = (&'s mut CudaSlice<K>, Option<&'s mut CudaSlice<V>>);

impl GpuGroup<'_> {
    /// Whether a two-GPU sort begins its exchange inside its last merge pass (on unless set
    /// off): it then merges first the part of each shard that leaves its device whatever the
    /// cut, and sends it while the rest of the pass runs. Off, the exchange starts once the
    /// shards are sorted and cut. Only twophase's own orders on keys without an integer image
    /// lead (their samples are the keys and bound the cut).
    pub fn set_lead_exchange(&self, lead: bool) {
        self.lead.set(lead);
    }

    /// Whether a sort of `shards` under `comp` leads its exchange
    /// ([`set_lead_exchange`](Self::set_lead_exchange)): only where half of each shard would
    /// stream in chunks (the sure part is about that much on random keys). Smaller sorts would
    /// pay the samples' copy and wait, and then exchange whole pieces anyway (on two H200s at
    /// 2^24 keys, 0.1-0.3 ms more: docs/tuning.md).
    pub(super) fn leads_exchange<K: DeviceKey, T, C: DeviceComparator<K> + ?Sized>(
        &self,
        shards: &[CudaSlice<T>],
        comp: &C,
    ) -> bool {
        let weights = self.chunk_weights.borrow();
        let (chunk, key_bytes) = (self.min_chunk_bytes.get(), size_of::<K>());
        let half_streams =
            |shard: &CudaSlice<T>| streams(shard.len() / 2, key_bytes, chunk, &weights);
        self.lead.get()
            && self.streams_merge()
            && is_trusted(comp)
            && key_image(comp).is_none()
            && shards.iter().all(half_streams)
    }

    /// Steps 1 to 4 of a two-GPU sort that leads its exchange: `keys` (and `values`) sorted
    /// into `out_keys` (and `out_values`), each input shard left sorted. Where the lead does
    /// not apply (a shard sorted by its block sort alone, a sure part too short to stream,
    /// samples that bound nothing) the call streams as [`stream_merge`](Self::stream_merge).
    pub(super) fn sort_leading<K, V, C>(
        &self,
        (keys, out_keys): Unsorted<K>,
        values: Option<Unsorted<V>>,
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let start = Instant::now();
        let (mut value_inputs, value_outputs) = match values {
            Some((inputs, outputs)) => (Some(inputs), Some(outputs)),
            None => (None, None),
        };
        let held = {
            let mut shards: Vec<Shard<K, V>> = match value_inputs.as_deref_mut() {
                Some(values) => keys
                    .iter_mut()
                    .zip(values.iter_mut())
                    .map(|(k, v)| (k, Some(v)))
                    .collect(),
                None => keys.iter_mut().map(|k| (k, None)).collect(),
            };
            self.hold_last_passes(&mut shards, comp)?
        };
        let layout = value_inputs.as_ref().and_then(|_| value_layout::<V>());
        let leads = match self.leads(keys, &held, comp, layout) {
            Ok(leads) => leads,
            Err(error) => {
                // The sorts end whatever failed: each shard stays a permutation of itself.
                self.finish_held(&held, &[0..0, 0..0])?;
                return Err(error);
            }
        };
        let Some(leads) = leads else {
            self.finish_held(&held, &[0..0, 0..0])?;
            let sorted = self.sort_checks(start)?;
            let keys = Column {
                inputs: keys,
                outputs: out_keys,
            };
            let values = value_inputs
                .zip(value_outputs)
                .map(|(inputs, outputs)| Column { inputs, outputs });
            return self.stream_merge(keys, values, comp, sorted);
        };
        let value_inputs = value_inputs.map(|v| &*v);
        self.lead_steps(
            (&*keys, out_keys),
            value_inputs.zip(value_outputs),
            comp,
            (&held, &leads),
            start,
        )
    }

    /// Step 1 held: each device's mergesort launched but for its last pass's tiles. Returns
    /// the held passes (`None` where a shard's sort has no pass left to hold).
    fn hold_last_passes<K, V, C>(
        &self,
        shards: &mut [Shard<K, V>],
        comp: &C,
    ) -> Result<Vec<Option<HeldPass>>, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let mut scratch = self.scratch.borrow_mut();
        let mut held = Vec::with_capacity(2);
        for (i, (gpu, (keys, values))) in self.gpus.iter().zip(shards.iter_mut()).enumerate() {
            let sort = &mut scratch[i].sort;
            let launched = match values {
                Some(values) => {
                    gpu.sort_device_held(SortBuffers::pairs(&mut **keys, &mut **values), comp, sort)
                }
                None => gpu.sort_device_held(SortBuffers::keys(&mut **keys), comp, sort),
            };
            match on_device(gpu, launched) {
                Ok(pass) => held.push(pass),
                Err(error) => {
                    drop(scratch);
                    self.finish_held(&held, &[0..0, 0..0])?;
                    return Err(error);
                }
            }
        }
        Ok(held)
    }

    /// Every held pass's tiles launched but those of `launched[i]` (launched already).
    fn finish_held(
        &self,
        held: &[Option<HeldPass>],
        launched: &[Range<usize>],
    ) -> Result<(), GpuError> {
        for ((gpu, pass), done) in self.gpus.iter().zip(held).zip(launched) {
            if let Some(pass) = pass {
                on_device(gpu, pass.launch_tiles(gpu, 0..done.start))?;
                on_device(gpu, pass.launch_tiles(gpu, done.end..pass.tiles))?;
            }
        }
        Ok(())
    }

    /// The sorts' order checks (which synchronize): step 1's time from `start`, or the first
    /// device's report that its comparator answered inconsistently.
    fn sort_checks(&self, start: Instant) -> Result<Duration, GpuError> {
        let mut scratch = self.scratch.borrow_mut();
        let inconsistent = self.order_checks(|i, gpu| scratch[i].sort.check(gpu))?;
        inconsistent.map_or(Ok(start.elapsed()), Err)
    }

    /// The leads of both output shards from samples of the runs the held passes merge (each
    /// device's gathered and copied to the host, which waits for its sort so far), or `None`
    /// where the call cannot lead: a pass not held, samples that bound nothing, or a sure part
    /// too short to stream.
    fn leads<K, C>(
        &self,
        keys: &[CudaSlice<K>],
        held: &[Option<HeldPass>],
        comp: &C,
        values: ValueLayout,
    ) -> Result<Option<[Lead; 2]>, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let [Some(first), Some(second)] = held else {
            return Ok(None);
        };
        let lens = [keys[0].len(), keys[1].len()];
        let stride = lens
            .iter()
            .max()
            .unwrap_or(&0)
            .div_ceil(LEAD_SAMPLES)
            .max(1);
        // The runs of each device: `run` keys each, the last what is left.
        let runs_of = |len: usize, run: usize| -> Vec<Range<usize>> {
            (0..len.div_ceil(run))
                .map(|r| r * run..((r + 1) * run).min(len))
                .collect()
        };
        let runs = [runs_of(lens[0], first.run), runs_of(lens[1], second.run)];
        let mut scratch = self.scratch.borrow_mut();
        // Every run's samples, device 0's runs first: the stable order's ties.
        let mut run_samples: Vec<Vec<K>> = Vec::new();
        for (i, (gpu, pass)) in self.gpus.iter().zip([first, second]).enumerate() {
            let device = &mut scratch[i];
            let (lent, _) = device.sort.buffers_mut();
            let sorted_runs = if pass.runs_in_scratch {
                on_device(gpu, tree_view::<K>(lent, lens[i]))?
            } else {
                keys[i].slice(..)
            };
            let views: Vec<_> = runs[i]
                .iter()
                .map(|run| sorted_runs.slice(run.clone()))
                .collect();
            let gathered = gather_samples(gpu, &views, stride, &mut device.samples, comp, values);
            on_device(gpu, gathered)?;
            let run_lens: Vec<usize> = runs[i].iter().map(Range::len).collect();
            let copied = samples_to_host::<K>(gpu, &run_lens, stride, &device.samples);
            run_samples.extend(on_device(gpu, copied)?);
        }
        let run_samples: Vec<&[K]> = run_samples.iter().map(Vec::as_slice).collect();
        let run_lens: Vec<usize> = runs.iter().flatten().map(Range::len).collect();
        let total = lens[0] + lens[1];
        let (mut lo, mut hi) = (vec![0; run_lens.len()], vec![0; run_lens.len()]);
        let is_less = |a: &K, b: &K| comp.is_less(a, b);
        let diag = shard_boundary(1, 2, total);
        if !sampled_cut_bounds(
            &run_samples,
            stride,
            &run_lens,
            diag,
            &is_less,
            &mut lo,
            &mut hi,
        ) {
            return Ok(None);
        }
        let first_runs = runs[0].len();
        let sum = |bounds: &[usize]| bounds.iter().sum::<usize>();
        // The cut of shard 0 (output 1's remote piece starts there) and of shard 1 (output 0's
        // remote piece ends there).
        let cut_of_0 = sum(&lo[..first_runs])..=sum(&hi[..first_runs]);
        let cut_of_1 = sum(&lo[first_runs..])..=sum(&hi[first_runs..]);
        let weights = self.chunk_weights.borrow();
        let chunk = self.min_chunk_bytes.get();
        let key_bytes = size_of::<K>();
        let to_0 = Lead::new(0, cut_of_1, lens[1], key_bytes, chunk, &weights);
        let to_1 = Lead::new(1, cut_of_0, lens[0], key_bytes, chunk, &weights);
        Ok(to_0.zip(to_1).map(|(a, b)| [a, b]))
    }

    /// Steps 1 (the held passes' tiles) to 4 with the `leads`: the leaving tiles, the sure
    /// chunks sent, the other tiles, the exact cuts, the rest of each piece, the windows.
    fn lead_steps<K, V, C>(
        &self,
        (keys, out_keys): Sorted<K>,
        values: Option<Sorted<V>>,
        comp: &C,
        (held, leads): (&[Option<HeldPass>], &[Lead; 2]),
        start: Instant,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let super::Exchange::Nccl(comms) = &self.exchange else {
            return Err(GpuError::Poisoned("lead without NCCL"));
        };
        // Device i sends output shard 1 - i its lead's sure part: those tiles first.
        let leaving: Vec<Range<usize>> = (0..2)
            .map(|i| match &held[i] {
                Some(pass) => pass.tiles_of(leads[1 - i].sure.clone()),
                None => 0..0,
            })
            .collect();
        let launched = self.gpus.iter().zip(held).zip(&leaving).try_for_each(
            |((gpu, pass), tiles)| match pass {
                Some(pass) => on_device(gpu, pass.launch_tiles(gpu, tiles.clone())),
                None => Ok(()),
            },
        );
        if let Err(error) = launched {
            self.finish_held(held, &leaving)?;
            return Err(error);
        }
        let provisional = [leads[0].provisional(), leads[1].provisional()];
        let mut scratch = self.scratch.borrow_mut();
        let comm_streams = self.comm_streams(&mut scratch)?;
        let early = StreamRun {
            gpus: &self.gpus,
            comms,
            comm_streams: &comm_streams,
            plans: &provisional,
            values: values.as_ref().and_then(|_| value_layout::<V>()),
        };
        let lens = [leads[0].receive_len, leads[1].receive_len];
        let early_steps = leads[0].early_steps().max(leads[1].early_steps());
        let mut arrivals: Vec<Vec<CudaEvent>> = vec![Vec::new(), Vec::new()];
        let value_inputs = values.as_ref().map(|(inputs, _)| *inputs);
        let sent = early
            .receive_targets::<K, V>(&mut scratch, &lens, values.is_some())
            .and_then(|targets| {
                early.send_steps(keys, value_inputs, &targets, 0..early_steps, &mut arrivals)?;
                Ok(targets)
            });
        drop(scratch);
        // The other tiles, beside the exchange, whatever the sends returned.
        let finished = self.finish_held(held, &leaving);
        let targets = match (sent, finished) {
            (Ok(targets), Ok(())) => targets,
            (Err(error), _) | (_, Err(error)) => {
                let _ = early.synchronize();
                return Err(error);
            }
        };
        let layout = values.as_ref().and_then(|_| value_layout::<V>());
        let checked = self.sort_checks(start).and_then(|sorted| {
            let cut_start = Instant::now();
            let cuts = shard_cuts(&self.gpus, keys, comp, self.cut_probes.get(), layout)?;
            Ok((sorted, cuts, cut_start))
        });
        let (sorted, cuts, cut_start) = match checked {
            Ok(checked) => checked,
            Err(error) => {
                let _ = early.synchronize();
                return Err(error);
            }
        };
        let plans: Option<Vec<StreamPlan>> = leads.iter().map(|lead| lead.plan(&cuts)).collect();
        let Some(plans) = plans else {
            // The sends ahead end before anything else uses the receive buffers.
            early.synchronize()?;
            let keys = Column {
                inputs: keys,
                outputs: out_keys,
            };
            let values = values.map(|(inputs, outputs)| Column { inputs, outputs });
            return self.stream_merge(keys, values, comp, sorted);
        };
        let cut_time = cut_start.elapsed();
        let run = StreamRun {
            plans: &plans,
            ..early
        };
        let mut scratch = self.scratch.borrow_mut();
        let steps = plans.iter().map(StreamPlan::chunks).max().unwrap_or(0);
        let keys = Column {
            inputs: keys,
            outputs: out_keys,
        };
        let values = values.map(|(inputs, outputs)| Column { inputs, outputs });
        let rest = run.send_steps(
            keys.inputs,
            values.as_ref().map(|v| v.inputs),
            &targets,
            early_steps..steps,
            &mut arrivals,
        );
        let merged =
            rest.and_then(|()| run.merge_windows(&mut scratch, keys, values, comp, &arrivals));
        let timing = StreamTiming {
            sorted,
            start: cut_start,
            cut_time,
        };
        self.end_stream(&run, &mut scratch, merged, timing)
    }
}

/// The part of the remote piece of an output shard of two that is sent before the cuts are
/// known (the sort's last pass held): the sorted elements that samples of the
/// runs before that pass place in the piece whatever the exact cut, sent in chunks of the
/// group's weights, the chunk nearest the piece's far end first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Lead {
    /// The output shard (and device) whose remote piece this leads.
    pub(super) shard: usize,
    /// The remote shard's elements sent ahead: for output shard 0 a start of shard 1 (its
    /// piece is shard 1's start), for output shard 1 an end of shard 0, each aligned where it
    /// meets the part left for the cut.
    pub(super) sure: Range<usize>,
    /// The remote element at the receive buffer's start: aligned, and at or before the
    /// lowest cut the samples allow.
    pub(super) base: usize,
    /// Elements of the receive buffer that hold the remote piece wherever the cut falls.
    pub(super) receive_len: usize,
    /// The boundaries between the sure part's chunks, ascending.
    inner: Vec<usize>,
}

impl Lead {
    /// The lead of output shard `shard` (0 or 1) whose remote piece's cut in the remote shard
    /// (of `remote_len` elements) lies in `cut_bounds` (both ends included), for keys of
    /// `key_bytes` bytes in chunks of the group's `min_chunk_bytes` and `weights`: `None` where
    /// its sure part is too short to stream (the call then streams as [`StreamPlan::new`]
    /// plans).
    pub(super) fn new(
        shard: usize,
        cut_bounds: RangeInclusive<usize>,
        remote_len: usize,
        key_bytes: usize,
        min_chunk_bytes: usize,
        weights: &[usize],
    ) -> Option<Self> {
        let (lowest, highest) = (*cut_bounds.start(), *cut_bounds.end());
        let (sure, base, receive_len) = if shard == 0 {
            (0..align_down(lowest), 0, highest)
        } else {
            let base = align_down(lowest);
            (
                align_up(highest).min(remote_len)..remote_len,
                base,
                remote_len - base,
            )
        };
        if !streams(sure.len(), key_bytes, min_chunk_bytes, weights) {
            return None;
        }
        let inner = weighted_bounds(sure.start, sure.len(), weights, shard == 1);
        Some(Lead {
            shard,
            sure,
            base,
            receive_len,
            inner,
        })
    }

    /// The plan of the output shard once the `cuts` are known: the sure part's chunks, sent
    /// first from the piece's far end, then the rest of the piece in one chunk; `None` where
    /// the cut lies outside the bounds the lead assumed (samples that did not bound it: unsorted
    /// runs, or a comparator that is no strict weak order).
    pub(super) fn plan(&self, cuts: &[Vec<usize>]) -> Option<StreamPlan> {
        let (shard, remote) = (self.shard, 1 - self.shard);
        let local = cuts[shard][shard]..cuts[shard + 1][shard];
        let piece = cuts[shard][remote]..cuts[shard + 1][remote];
        let bounded = if shard == 0 {
            piece.start == 0 && piece.end >= self.sure.end
        } else {
            piece.end == self.sure.end && (self.base..=self.sure.start).contains(&piece.start)
        };
        let fits = bounded && piece.end - self.base <= self.receive_len;
        let cut = if shard == 0 { piece.end } else { piece.start };
        fits.then(|| self.with_cut(cut, local))
    }

    /// The plan the sure part's chunks are sent by before the cuts are known: the piece cut
    /// where the sure part ends, with no local piece. Its first chunks are the final plan's.
    pub(super) fn provisional(&self) -> StreamPlan {
        let cut = if self.shard == 0 {
            self.sure.end
        } else {
            self.sure.start
        };
        self.with_cut(cut, 0..0)
    }

    /// The plan with the remote piece cut at `cut` (its end for shard 0, its start for shard
    /// 1) and the local piece `local`.
    fn with_cut(&self, cut: usize, local: Range<usize>) -> StreamPlan {
        let (shard, sure) = (self.shard, &self.sure);
        let early = self.inner.len() + 1;
        let (bounds, order) = if shard == 0 {
            let bounds = [&[sure.start], &self.inner[..], &[sure.end, cut]].concat();
            (bounds, (0..=early).collect())
        } else {
            let bounds = [&[cut, sure.start], &self.inner[..], &[sure.end]].concat();
            (bounds, (0..=early).rev().collect())
        };
        StreamPlan::from_parts(shard, local, bounds, self.base, order)
    }

    /// The steps of the exchange that send the sure part (its chunks).
    pub(super) fn early_steps(&self) -> usize {
        self.inner.len() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharded::windows::tests::{
        assert_streams_its_shard, check_chunks, next, sorted_shards, two_shard_cuts,
    };
    use crate::sharded::windows::CHUNK_WEIGHTS;

    /// A lead from bounds around the exact cut: its provisional plan sends the sure part's
    /// chunks as the final plan would, the final plan's chunks tile the piece, and the
    /// windows give each output shard; a cut outside the bounds gives no plan.
    #[test]
    fn leads_send_their_sure_part_ahead_and_give_each_output_shard() {
        let mut state = 23;
        let mut led = 0;
        for round in 0..400 {
            let range = [2, 16, 1000][round % 3];
            let mut shards = sorted_shards(&mut state, range);
            // Some rounds put one shard wholly above the other: a cut at a shard's end.
            if let Some(above) = [None, None, None, Some(0), Some(1)][round % 5] {
                shards[above].iter_mut().for_each(|k| k.0 += range as u32);
            }
            let mut expected: Vec<(u32, u32)> = shards.concat();
            expected.sort_by_key(|k| k.0);
            let cuts = two_shard_cuts(&shards);
            let weights = [&CHUNK_WEIGHTS[..], &[3, 1], &[4, 2, 1]][round % 3];
            for i in 0..2 {
                let remote = 1 - i;
                // Output 0's piece ends at shard 1's cut, output 1's starts at shard 0's.
                let cut = cuts[1][remote];
                let remote_len = shards[remote].len();
                let below = next(&mut state) as usize % 100;
                let above = next(&mut state) as usize % 100;
                let bounds = cut.saturating_sub(below)..=(cut + above).min(remote_len);
                let Some(lead) = Lead::new(i, bounds, remote_len, 4, 4, weights) else {
                    continue;
                };
                led += 1;
                let plan = lead.plan(&cuts).expect("a cut inside the bounds");
                check_chunks(&plan);
                assert_eq!(lead.early_steps() + 1, plan.chunks());
                assert!(plan.receive_len() <= lead.receive_len);
                let provisional = lead.provisional();
                let mut senders = vec![&provisional; lead.early_steps()];
                senders.push(&plan);
                assert_streams_its_shard(&shards, &plan, &senders, &expected, round);
                // A cut the bounds exclude.
                let mut wrong = cuts.clone();
                wrong[1][remote] = if i == 0 {
                    lead.sure.end.saturating_sub(1)
                } else {
                    lead.sure.start + 1
                };
                if wrong[1][remote] != cut && wrong[1][remote] <= remote_len {
                    let outside = if i == 0 {
                        wrong[1][remote] < lead.sure.end
                    } else {
                        wrong[1][remote] > lead.sure.start
                    };
                    assert_eq!(lead.plan(&wrong).is_none(), outside, "round {round}");
                }
            }
        }
        assert!(led > 200, "{led} leads");
    }
}
