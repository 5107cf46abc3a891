//! Sort and merge across the GPUs of one host: each shard sorted on its device, exact multiway co-rank cuts, one exchange, a merge of the received pieces.
//!
//! The two phases across devices, as the CPU backend's `sharded` twin runs them on threads:
//! 1. each GPU sorts its shard (the mergesort, in place);
//! 2. the **multiway co-rank** ([`twophase_partition::multiway_co_rank_indexed`]) finds, at every
//!    output shard boundary `floor(i n / p)`, the cut of every sorted shard, reading keys from the
//!    devices one at a time (each read once: O(p log n) reads a boundary);
//! 3. one exchange moves every (input shard, output shard) piece once: an NCCL group of sends
//!    and receives between devices, copies where handles share a device;
//! 4. each GPU merges the `p` pieces it received (a tree of the two-phase merge), the last level
//!    into the caller's output shard.
//!
//! Each device keeps its scratch across calls (the mergesort's and the merge's, the received
//! pieces and the merge tree's second buffer), so repeated calls of the same or smaller sizes
//! into caller-provided outputs allocate nothing.
//!
//! Output shard `i` (on GPU `i`) then holds exactly ranks `[floor(i n / p), floor((i + 1) n / p))`
//! of the stable order of the shards' concatenation (ties by shard, then position).

mod buffers;
mod cuts;
mod exchange;
mod host;
mod in_place;
mod layout;
mod lead;
mod local_sort;
mod receive;
mod stream;
mod tree;
mod windows;

use std::cell::{Cell, RefCell};
use std::mem::size_of;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use twophase_partition::shard_boundary;

use crate::compare::DeviceComparator;
use crate::error::{check_len, GpuError};
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::MergeScratch;
use crate::mergesort::MergesortScratch;
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use buffers::{device_error, on_device, tree_view_mut, uninit_buffer};
use cuts::shard_cuts;
use exchange::{copy_pieces, nccl_available, Communicators};
use layout::ReceiveLayout;

/// How a group moves its pieces between devices.
enum Exchange {
    /// One GPU: nothing moves.
    None,
    /// Distinct devices with NCCL present: one communicator a device.
    Nccl(Communicators),
    /// Handles that share a device (NCCL takes one rank a device), or no NCCL library:
    /// the driver's copies (peer copies between devices).
    Copies,
}

/// One device's scratch of the group's calls, grown as needed and kept across calls.
#[derive(Default)]
struct DeviceScratch {
    sort: MergesortScratch,
    merge: MergeScratch,
    /// The merge tree's two buffers, as bytes, each a column of keys and one of values: the
    /// exchange receives into `trees[0]`, and the levels alternate between them.
    trees: [[Option<CudaSlice<u8>>; COLUMNS]; 2],
    /// The streamed merge's second stream, the exchange's (two devices through NCCL).
    comm_stream: Option<Arc<CudaStream>>,
    /// The streamed merge's needles, as bytes: the remote chunks' last keys.
    needles: Option<CudaSlice<u8>>,
    /// The streamed merge's window cuts, one a needle.
    window_cuts: Option<CudaSlice<u64>>,
    /// A leading sort's samples of its runs, as bytes.
    samples: Option<CudaSlice<u8>>,
}

/// What a merge of the received pieces reports when they were not sorted.
const UNSORTED_RUNS: &str = "`runs` (or the shards) are not sorted under the comparator, or it \
                             is not a strict weak order: the output is a permutation of them in \
                             unspecified order";

/// Columns of a tree buffer: keys, values.
const COLUMNS: usize = 2;
/// The keys' column.
const KEYS: usize = 0;
/// The values' column.
const VALUES: usize = 1;

/// GPU handles on one host that sort and merge together, shard `i` on `gpus[i]`
/// ([`sort_device_into`](Self::sort_device_into), [`sort_pairs_device_into`](Self::sort_pairs_device_into),
/// [`merge_device_into`](Self::merge_device_into), their allocating forms, and the host
/// convenience [`sort`](Self::sort)).
///
/// Every call returns once its outputs are complete (it synchronizes every handle's stream). A
/// failure on one device returns [`GpuError::OnDevice`] naming it; the NCCL communicators are
/// destroyed with the group.
pub struct GpuGroup<'g> {
    gpus: Vec<&'g Gpu>,
    exchange: Exchange,
    scratch: RefCell<Vec<DeviceScratch>>,
    phases: Cell<Phases>,
    /// The cuts' time in the call under way.
    cut_time: Cell<Duration>,
    /// The fewest key bytes in a chunk of a streamed exchange.
    min_chunk_bytes: Cell<usize>,
    /// The relative sizes of a streamed exchange's chunks, first to last.
    chunk_weights: RefCell<Vec<usize>>,
    /// Keys a round of a two-device cut reads from each device at most.
    cut_probes: Cell<usize>,
    /// Whether a two-GPU sort begins its exchange inside its last merge pass.
    lead: Cell<bool>,
}

/// How long each step of a group's last sort or merge took on the host clock (each step ends
/// with every stream synchronized): what the benchmarks report per phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Step 1, every shard sorted on its device (zero for a merge). A sort that leads its
    /// exchange ([`GpuGroup::set_lead_exchange`]) sends most of it during this step.
    pub sort: Duration,
    /// Step 2, the multiway co-rank cuts, keys read from the devices.
    pub cuts: Duration,
    /// Step 3, the exchange of the pieces (keys, then values): from the cuts' end to the last
    /// piece's arrival.
    pub exchange: Duration,
    /// Step 4, the merge of every output shard's pieces.
    pub merge: Duration,
}

impl std::fmt::Debug for GpuGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuGroup")
            .field("gpus", &self.gpus)
            .field("exchange", &self.exchange_name())
            .finish()
    }
}

/// The buffers of one column of a call: the inputs (sorted shards) and the outputs.
struct Column<'c, T> {
    inputs: &'c [CudaSlice<T>],
    outputs: &'c mut [CudaSlice<T>],
}

impl<'g> GpuGroup<'g> {
    /// A group of `gpus` (at least one; every handle's context alive). On distinct devices with
    /// the NCCL library present, one NCCL communicator a device is made for the exchange;
    /// handles that share a device, or a machine without NCCL, exchange by the driver's copies.
    pub fn new(gpus: &[&'g Gpu]) -> Result<Self, GpuError> {
        if gpus.is_empty() {
            return Err(GpuError::InvalidInput(
                "`gpus` must hold at least one handle".to_owned(),
            ));
        }
        for gpu in gpus {
            on_device(gpu, gpu.ensure_alive())?;
        }
        let mut ordinals: Vec<usize> = gpus.iter().map(|gpu| gpu.context().ordinal()).collect();
        ordinals.sort_unstable();
        ordinals.dedup();
        let exchange = if gpus.len() == 1 {
            Exchange::None
        } else if ordinals.len() == gpus.len() && nccl_available() {
            Exchange::Nccl(Communicators::new(gpus)?)
        } else {
            Exchange::Copies
        };
        Ok(GpuGroup {
            gpus: gpus.to_vec(),
            exchange,
            scratch: RefCell::new(gpus.iter().map(|_| DeviceScratch::default()).collect()),
            phases: Cell::new(Phases::default()),
            cut_time: Cell::new(Duration::ZERO),
            min_chunk_bytes: Cell::new(windows::MIN_CHUNK_BYTES),
            chunk_weights: RefCell::new(windows::CHUNK_WEIGHTS.to_vec()),
            cut_probes: Cell::new(cuts::CUT_PROBES),
            lead: Cell::new(true),
        })
    }

    /// The handles, shard `i` on handle `i`.
    pub fn gpus(&self) -> &[&'g Gpu] {
        &self.gpus
    }

    /// The phases of the group's last sort or merge, on the host clock.
    pub fn last_phases(&self) -> Phases {
        self.phases.get()
    }

    /// The fewest bytes of keys in the smallest chunk of a two-GPU call's streamed exchange
    /// (64 MiB unless set): the remote piece of each output shard is sent in two chunks, the
    /// first merged while the second is in flight, where the smaller carries this much (else
    /// whole). Smaller values stream smaller calls (the tests do, to run the windows' code).
    pub fn set_stream_chunk_bytes(&self, bytes: usize) {
        self.min_chunk_bytes.set(bytes.max(1));
    }

    /// The relative sizes of the chunks of a two-GPU call's streamed exchange, first to last
    /// (`[2, 1]` unless set: the first two thirds of each remote piece, merged while the last
    /// third is in flight). Each chunk is one more NCCL group and one more window of the merge;
    /// one weight sends each piece whole. Weights that are none or include a zero are
    /// [`GpuError::InvalidInput`].
    pub fn set_stream_chunk_weights(&self, weights: &[usize]) -> Result<(), GpuError> {
        if weights.is_empty() || weights.contains(&0) {
            return Err(GpuError::InvalidInput(format!(
                "`weights` {weights:?}: a streamed exchange's chunks need one weight or more, \
                 none zero"
            )));
        }
        *self.chunk_weights.borrow_mut() = weights.to_vec();
        Ok(())
    }

    /// The most keys a round of a two-GPU call's cut search reads from each device (256 unless
    /// set; at least 1, which is a binary search): the cut of two sorted shards is searched a
    /// round at a time, each round one strided copy from each device. Smaller values take more
    /// rounds (the tests do, to run several on small shards).
    pub fn set_cut_probes(&self, probes: usize) {
        self.cut_probes.set(probes.max(1));
    }

    /// How the group exchanges pieces: `"none"` (one GPU), `"nccl"` or `"copies"`.
    pub fn exchange_name(&self) -> &'static str {
        match self.exchange {
            Exchange::None => "none",
            Exchange::Nccl(_) => "nccl",
            Exchange::Copies => "copies",
        }
    }

    /// The length of output shard `shard` of `total` keys: `floor((i + 1) n / p) - floor(i n / p)`.
    pub fn output_len(&self, shard: usize, total: usize) -> usize {
        let p = self.gpus.len();
        shard_boundary(shard + 1, p, total) - shard_boundary(shard, p, total)
    }

    /// Output shards for `total` keys (or values), shard `i` on handle `i` of
    /// [`output_len`](Self::output_len); their contents are unset until a call writes them.
    pub fn output_shards<T: DeviceRepr>(
        &self,
        total: usize,
    ) -> Result<Vec<CudaSlice<T>>, GpuError> {
        self.gpus
            .iter()
            .enumerate()
            .map(|(i, gpu)| on_device(gpu, uninit_buffer(gpu, self.output_len(i, total))))
            .collect()
    }

    /// Check that `buffers` holds one buffer per handle, each on its handle's context
    /// (`InvalidInput` naming `what` otherwise).
    fn check_placement<T>(&self, what: &str, buffers: &[CudaSlice<T>]) -> Result<(), GpuError> {
        if buffers.len() != self.gpus.len() {
            return Err(GpuError::InvalidInput(format!(
                "`{what}` holds {} buffers for {} GPUs",
                buffers.len(),
                self.gpus.len()
            )));
        }
        for (i, (buffer, gpu)) in buffers.iter().zip(&self.gpus).enumerate() {
            if buffer.context().cu_ctx() != gpu.context().cu_ctx() {
                return Err(GpuError::InvalidInput(format!(
                    "`{what}[{i}]` lies in another context than GPU handle {i}'s"
                )));
            }
        }
        Ok(())
    }

    /// Check that `outputs` are placed as the handles and sized as the output shards of `total`
    /// (`SizeMismatch` naming `what`).
    fn check_outputs<T>(
        &self,
        what: &'static str,
        outputs: &[CudaSlice<T>],
        total: usize,
    ) -> Result<(), GpuError> {
        self.check_placement(what, outputs)?;
        for (i, output) in outputs.iter().enumerate() {
            check_len(what, self.output_len(i, total), output.len())?;
        }
        Ok(())
    }

    /// Stable sort of the keys of all `shards` under `comp` (shard `i` a buffer on handle `i`'s
    /// context, of any length) into `out`: each shard is sorted in place, then cut, exchanged
    /// and merged. Output shard `i` (`out[i]`, on handle `i`, of
    /// [`output_len`](Self::output_len): [`output_shards`](Self::output_shards) makes them)
    /// receives exactly ranks `[floor(i n / p), floor((i + 1) n / p))` of the stable order of the
    /// shards' concatenation: the outputs' concatenation is std's stable sort of it.
    ///
    /// Whatever `comp` answers, each input shard ends a permutation of itself; where it answered
    /// inconsistently (not a strict weak order) the call returns `InvalidInput` naming the
    /// comparator, and the outputs are unspecified.
    pub fn sort_device_into<K, C>(
        &self,
        shards: &mut [CudaSlice<K>],
        out: &mut [CudaSlice<K>],
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        self.check_placement("shards", shards)?;
        self.check_outputs("out", out, shards.iter().map(CudaSlice::len).sum())?;
        if self.leads_exchange(shards, comp) {
            return self.sort_leading::<K, u8, C>((shards, out), None, comp);
        }
        let sorted = self.sort_key_shards(shards, comp)?;
        let keys = Column {
            inputs: shards,
            outputs: out,
        };
        self.merge_sorted::<K, u8, C>(keys, None, comp, sorted)
    }

    /// [`sort_device_into`](Self::sort_device_into) into new output shards.
    pub fn sort_device<K, C>(
        &self,
        shards: &mut [CudaSlice<K>],
        comp: &C,
    ) -> Result<Vec<CudaSlice<K>>, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let mut out = self.output_shards(shards.iter().map(CudaSlice::len).sum())?;
        self.sort_device_into(shards, &mut out, comp)?;
        Ok(out)
    }

    /// [`sort_device_into`](Self::sort_device_into) of key-value pairs: shard `i` is `keys[i]`
    /// with `values[i]` (as many), each value moving with its key into `out_keys` and
    /// `out_values`; equal keys keep shard, then position, order.
    pub fn sort_pairs_device_into<K, V, C>(
        &self,
        (keys, values): (&mut [CudaSlice<K>], &mut [CudaSlice<V>]),
        (out_keys, out_values): (&mut [CudaSlice<K>], &mut [CudaSlice<V>]),
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        self.check_placement("keys", keys)?;
        self.check_values(keys, values)?;
        let total = keys.iter().map(CudaSlice::len).sum();
        self.check_outputs("out_keys", out_keys, total)?;
        self.check_outputs("out_values", out_values, total)?;
        if self.leads_exchange(keys, comp) {
            return self.sort_leading((keys, out_keys), Some((values, out_values)), comp);
        }
        let sorted = self.sort_pair_shards(keys, values, comp)?;
        let keys = Column {
            inputs: keys,
            outputs: out_keys,
        };
        let values = Column {
            inputs: values,
            outputs: out_values,
        };
        self.merge_sorted(keys, Some(values), comp, sorted)
    }

    /// [`sort_pairs_device_into`](Self::sort_pairs_device_into) into new output shards.
    #[allow(clippy::type_complexity)]
    pub fn sort_pairs_device<K, V, C>(
        &self,
        keys: &mut [CudaSlice<K>],
        values: &mut [CudaSlice<V>],
        comp: &C,
    ) -> Result<(Vec<CudaSlice<K>>, Vec<CudaSlice<V>>), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let total = keys.iter().map(CudaSlice::len).sum();
        let mut out_keys = self.output_shards(total)?;
        let mut out_values = self.output_shards(total)?;
        self.sort_pairs_device_into((keys, values), (&mut out_keys, &mut out_values), comp)?;
        Ok((out_keys, out_values))
    }

    /// Stable merge of the sorted `runs` (run `i` on handle `i`, any lengths) into `out`, cut
    /// as [`sort_device_into`](Self::sort_device_into)'s (ties: earlier runs first). Runs that
    /// are not sorted under `comp` still give a permutation of their keys, and the call returns
    /// `InvalidInput` naming `runs`.
    pub fn merge_device_into<K, C>(
        &self,
        runs: &[CudaSlice<K>],
        out: &mut [CudaSlice<K>],
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        self.check_placement("runs", runs)?;
        self.check_outputs("out", out, runs.iter().map(CudaSlice::len).sum())?;
        let keys = Column {
            inputs: runs,
            outputs: out,
        };
        self.merge_sorted::<K, u8, C>(keys, None, comp, Duration::ZERO)
    }

    /// [`merge_device_into`](Self::merge_device_into) into new output shards.
    pub fn merge_device<K, C>(
        &self,
        runs: &[CudaSlice<K>],
        comp: &C,
    ) -> Result<Vec<CudaSlice<K>>, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let mut out = self.output_shards(runs.iter().map(CudaSlice::len).sum())?;
        self.merge_device_into(runs, &mut out, comp)?;
        Ok(out)
    }

    /// Check that `values` are placed as the handles and each as long as its shard of `keys`
    /// (`InvalidInput` or `SizeMismatch` naming `values`).
    fn check_values<K, V>(
        &self,
        keys: &[CudaSlice<K>],
        values: &[CudaSlice<V>],
    ) -> Result<(), GpuError> {
        self.check_placement("values", values)?;
        for (k, v) in keys.iter().zip(values) {
            check_len("values", k.len(), v.len())?;
        }
        Ok(())
    }

    /// Every device's order check `check(i, gpu)` (a scratch's `check`, which synchronizes):
    /// the first `InvalidInput` it reports (the input's order, on whichever device), or the
    /// first other error, naming its device.
    fn order_checks(
        &self,
        mut check: impl FnMut(usize, &Gpu) -> Result<(), GpuError>,
    ) -> Result<Option<GpuError>, GpuError> {
        let mut invalid = None;
        for (i, gpu) in self.gpus.iter().enumerate() {
            match check(i, gpu) {
                Ok(()) => {}
                Err(error @ GpuError::InvalidInput(_)) => {
                    invalid.get_or_insert(error);
                }
                Err(error) => return Err(device_error(gpu.context().ordinal(), error)),
            }
        }
        Ok(invalid)
    }

    /// Steps 2 to 4 on sorted key shards (and their values): the cuts, the exchange into each
    /// device's tree buffer and the merge into the outputs, recording the phases (`sorted`:
    /// step 1's time).
    fn merge_sorted<K, V, C>(
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
        if self.streams_merge() {
            return self.stream_merge(keys, values, comp, sorted);
        }
        let start = Instant::now();
        let (received, exchanged) =
            self.cut_and_exchange(keys.inputs, values.as_ref().map(|v| v.inputs), comp)?;
        let merge = Merge {
            received: &received,
            in_place: false,
        };
        self.merge_received(keys.outputs, values.map(|v| v.outputs), merge, comp)?;
        self.record_phases(sorted, start, exchanged);
        Ok(())
    }

    /// Steps 2 and 3: the cuts of the sorted `keys` shards, then the exchange of the keys (and
    /// `values`) into each device's first tree buffer. Returns where the pieces lie (keys, then values) and the time the
    /// exchange ended, the cuts' time recorded for [`record_phases`](Self::record_phases).
    fn cut_and_exchange<K, V, C>(
        &self,
        keys: &[CudaSlice<K>],
        values: Option<&[CudaSlice<V>]>,
        comp: &C,
    ) -> Result<(Vec<ReceiveLayout>, Instant), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let start = Instant::now();
        let layout = values.and_then(|_| value_layout::<V>());
        let cuts = shard_cuts(&self.gpus, keys, comp, self.cut_probes.get(), layout)?;
        self.cut_time.set(start.elapsed());
        let mut received = vec![self.exchange(KEYS, keys, &cuts)?];
        if let Some(values) = values {
            received.push(self.exchange(VALUES, values, &cuts)?);
        }
        Ok((received, Instant::now()))
    }

    /// The phases of a call whose steps 2 to 4 started at `start` and whose exchange ended at
    /// `exchanged` (now: the merge's end), step 1 having taken `sorted`.
    fn record_phases(&self, sorted: Duration, start: Instant, exchanged: Instant) {
        let cuts = self.cut_time.get();
        self.phases.set(Phases {
            sort: sorted,
            cuts,
            exchange: (exchanged - start).saturating_sub(cuts),
            merge: exchanged.elapsed(),
        });
    }

    /// `step` on every handle in turn (each step asynchronous on its own stream, so the devices
    /// run together), then every stream synchronized; the first error names its device.
    fn each(
        &self,
        mut step: impl FnMut(usize, &Gpu) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let mut first_error = None;
        for (i, gpu) in self.gpus.iter().enumerate() {
            if let Err(error) = step(i, gpu) {
                first_error.get_or_insert(device_error(gpu.context().ordinal(), error));
            }
        }
        for gpu in &self.gpus {
            if let Err(error) = gpu.synchronize() {
                first_error.get_or_insert(device_error(gpu.context().ordinal(), error));
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Step 3 for one column: output shard `i`'s pieces (`cuts[i][k]..cuts[i + 1][k]` of every
    /// `inputs[k]`), in input order at the aligned places of their [`ReceiveLayout`], into
    /// device `i`'s first tree buffer, by the group's exchange; every stream synchronized after.
    /// Returns the layout.
    fn exchange<T: DeviceRepr>(
        &self,
        column: usize,
        inputs: &[CudaSlice<T>],
        cuts: &[Vec<usize>],
    ) -> Result<ReceiveLayout, GpuError> {
        let layout = ReceiveLayout::new(cuts, size_of::<T>());
        let mut scratch = self.scratch.borrow_mut();
        let mut targets = Vec::with_capacity(self.gpus.len());
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            targets.push(on_device(
                gpu,
                tree_view_mut::<T>(gpu, &mut device.trees[0][column], layout.lens[i]),
            )?);
        }
        let moved = match &self.exchange {
            Exchange::Nccl(comms) => comms.exchange(&self.gpus, inputs, &mut targets, &layout),
            Exchange::None | Exchange::Copies => {
                copy_pieces(&self.gpus, inputs, &mut targets, &layout)
            }
        };
        drop(targets);
        // The streams finish before the inputs may be reused or dropped.
        let synchronized = self.each(|_, _| Ok(()));
        moved?;
        synchronized.map(|()| layout)
    }
}

/// What the merge of the received pieces works from: where the exchange put them, and whether the
/// outputs are the sent shards themselves (the in-place sort).
#[derive(Clone, Copy)]
struct Merge<'c> {
    /// The layout of each column's received pieces: keys, then values if any.
    received: &'c [ReceiveLayout],
    in_place: bool,
}
