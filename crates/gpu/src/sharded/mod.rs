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

mod exchange;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};
use twophase_partition::{
    clamp_multiway_cut, multiway_co_rank_indexed, shard_boundary, IndexedRuns,
};

use crate::compare::DeviceComparator;
use crate::error::{check_len, GpuError};
use crate::key::{DeviceKey, DeviceValue};
use crate::merge::{MergeAlgorithm, MergeBuffers, MergeScratch};
use crate::mergesort::{MergesortScratch, SortBuffers};
use crate::runtime::device::Gpu;
use exchange::{copy_pieces, nccl_available, Communicators};

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
}

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
}

/// How long each step of a group's last sort or merge took on the host clock (each step ends
/// with every stream synchronized): what the benchmarks report per phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Step 1, every shard sorted on its device (zero for a merge).
    pub sort: Duration,
    /// Step 2, the multiway co-rank cuts, keys read from the devices.
    pub cuts: Duration,
    /// Step 3, the exchange of the pieces (keys, then values).
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

/// `source`, an error on device `ordinal`, naming the device.
fn device_error(ordinal: usize, source: GpuError) -> GpuError {
    GpuError::OnDevice {
        ordinal,
        source: Box::new(source),
    }
}

/// `result` of a step on `gpu`'s device, its error naming the device.
fn on_device<T>(gpu: &Gpu, result: Result<T, GpuError>) -> Result<T, GpuError> {
    result.map_err(|source| device_error(gpu.context().ordinal(), source))
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
        let start = Instant::now();
        self.sort_shards(|i, gpu, scratch| {
            gpu.sort_device(SortBuffers::keys(&mut shards[i]), comp, None, scratch)
        })?;
        let keys = Column {
            inputs: shards,
            outputs: out,
        };
        self.merge_sorted::<K, u8, C>(keys, None, comp, start.elapsed())
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
        self.check_placement("values", values)?;
        for (k, v) in keys.iter().zip(values.iter()) {
            check_len("values", k.len(), v.len())?;
        }
        let total = keys.iter().map(CudaSlice::len).sum();
        self.check_outputs("out_keys", out_keys, total)?;
        self.check_outputs("out_values", out_values, total)?;
        let start = Instant::now();
        self.sort_shards(|i, gpu, scratch| {
            let buffers = SortBuffers::pairs(&mut keys[i], &mut values[i]);
            gpu.sort_device(buffers, comp, None, scratch)
        })?;
        let keys = Column {
            inputs: keys,
            outputs: out_keys,
        };
        let values = Column {
            inputs: values,
            outputs: out_values,
        };
        self.merge_sorted(keys, Some(values), comp, start.elapsed())
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

    /// Host convenience: sort `keys` stably under `comp` across the group, the keys split into
    /// equal shards (shard `i` uploaded to handle `i`), sorted, and gathered back in order.
    pub fn sort<K, C>(&self, keys: &mut [K], comp: &C) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let (p, n) = (self.gpus.len(), keys.len());
        let parts: Vec<&[K]> = (0..p)
            .map(|i| &keys[shard_boundary(i, p, n)..shard_boundary(i + 1, p, n)])
            .collect();
        let mut shards = self.upload(&parts)?;
        let sorted = self.sort_device(&mut shards, comp)?;
        self.download(&sorted, keys)
    }

    /// `parts[i]` copied into a new buffer on handle `i` (empty parts included), every copy
    /// complete on return.
    pub fn upload<T: DeviceRepr>(&self, parts: &[&[T]]) -> Result<Vec<CudaSlice<T>>, GpuError> {
        if parts.len() != self.gpus.len() {
            return Err(GpuError::InvalidInput(format!(
                "`parts` holds {} slices for {} GPUs",
                parts.len(),
                self.gpus.len()
            )));
        }
        let mut buffers = Vec::with_capacity(parts.len());
        for (gpu, part) in self.gpus.iter().zip(parts) {
            let mut buffer = on_device(gpu, uninit_buffer(gpu, part.len()))?;
            if !part.is_empty() {
                on_device(
                    gpu,
                    gpu.stream()
                        .memcpy_htod(*part, &mut buffer)
                        .map_err(GpuError::from),
                )?;
            }
            buffers.push(buffer);
        }
        self.each(|_, _| Ok(()))?;
        Ok(buffers)
    }

    /// The `shards` (shard `i` on handle `i`) copied back to back into `host`, which holds
    /// exactly their total length (`SizeMismatch` otherwise).
    pub fn download<T: DeviceRepr>(
        &self,
        shards: &[CudaSlice<T>],
        host: &mut [T],
    ) -> Result<(), GpuError> {
        self.check_placement("shards", shards)?;
        check_len("host", shards.iter().map(CudaSlice::len).sum(), host.len())?;
        let mut at = 0;
        for (shard, gpu) in shards.iter().zip(&self.gpus) {
            let part = &mut host[at..at + shard.len()];
            if !part.is_empty() {
                on_device(
                    gpu,
                    gpu.stream()
                        .memcpy_dtoh(shard, part)
                        .map_err(GpuError::from),
                )?;
            }
            at += shard.len();
        }
        self.each(|_, _| Ok(()))
    }

    /// Step 1: `sort(i, gpu, scratch)` launched on every device (asynchronous, so the devices
    /// sort together), then every sort's order check (which synchronizes).
    fn sort_shards(
        &self,
        mut sort: impl FnMut(usize, &Gpu, &mut MergesortScratch) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let mut scratch = self.scratch.borrow_mut();
        self.each(|i, gpu| sort(i, gpu, &mut scratch[i].sort))?;
        self.each(|i, gpu| scratch[i].sort.check(gpu))
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
        let start = Instant::now();
        let cuts = self.cuts(keys.inputs, comp)?;
        let cut = Instant::now();
        self.exchange(KEYS, keys.inputs, &cuts)?;
        if let Some(values) = &values {
            self.exchange(VALUES, values.inputs, &cuts)?;
        }
        let exchanged = Instant::now();
        self.merge_received(keys.outputs, values.map(|v| v.outputs), &cuts, comp)?;
        self.phases.set(Phases {
            sort: sorted,
            cuts: cut - start,
            exchange: exchanged - cut,
            merge: exchanged.elapsed(),
        });
        Ok(())
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

    /// The cuts of the sorted `runs` at every output shard boundary: row `i` the count taken
    /// from each run before output shard `i` (row 0 zeros, row p the runs' lengths), each inner
    /// row a multiway co-rank over the devices' keys, clamped into a staircase after the row
    /// before (a no-op on sorted runs under a strict weak order).
    fn cuts<K, C>(&self, runs: &[CudaSlice<K>], comp: &C) -> Result<Vec<Vec<usize>>, GpuError>
    where
        K: DeviceKey + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        let p = self.gpus.len();
        let lens: Vec<usize> = runs.iter().map(CudaSlice::len).collect();
        let total = lens.iter().sum();
        let device_runs = DeviceRuns {
            gpus: &self.gpus,
            runs,
            read: RefCell::new(HashMap::new()),
            failure: RefCell::new(None),
        };
        let mut cuts = vec![vec![0; p]];
        let mut upper = vec![0; p];
        for shard in 1..p {
            let diag = shard_boundary(shard, p, total);
            let mut cut = vec![0; p];
            let is_less = |a: &K, b: &K| comp.is_less(a, b);
            multiway_co_rank_indexed(&device_runs, diag, &is_less, &mut cut, &mut upper);
            if let Some(error) = device_runs.failure.take() {
                return Err(error);
            }
            clamp_multiway_cut(&cuts[shard - 1], &mut cut, diag, &lens);
            cuts.push(cut);
        }
        cuts.push(lens);
        Ok(cuts)
    }

    /// Step 3 for one column: output shard `i`'s pieces (`cuts[i][k]..cuts[i + 1][k]` of every
    /// `inputs[k]`), back to back in input order, into device `i`'s first tree buffer, by the
    /// group's exchange; every stream synchronized after.
    fn exchange<T: DeviceRepr>(
        &self,
        column: usize,
        inputs: &[CudaSlice<T>],
        cuts: &[Vec<usize>],
    ) -> Result<(), GpuError> {
        let mut scratch = self.scratch.borrow_mut();
        let mut targets = Vec::with_capacity(self.gpus.len());
        for (i, (gpu, device)) in self.gpus.iter().zip(scratch.iter_mut()).enumerate() {
            let len = self.output_len(i, cuts[cuts.len() - 1].iter().sum());
            targets.push(on_device(
                gpu,
                tree_view_mut::<T>(gpu, &mut device.trees[0][column], len),
            )?);
        }
        let moved = match &self.exchange {
            Exchange::Nccl(comms) => comms.exchange(&self.gpus, inputs, &mut targets, cuts),
            Exchange::None | Exchange::Copies => {
                copy_pieces(&self.gpus, inputs, &mut targets, cuts)
            }
        };
        drop(targets);
        // The streams finish before the inputs may be reused or dropped.
        let synchronized = self.each(|_, _| Ok(()));
        moved?;
        synchronized
    }

    /// Step 4: each output shard's pieces (with their values, if any) merged into `out_keys`
    /// (and `out_values`): a tree of the two-phase merge, pieces `2m` and `2m + 1` a level
    /// (earlier pieces as A, so ties keep shard order), between the device's two tree buffers,
    /// the last level into the outputs; each level launched on every device before any is
    /// waited for.
    fn merge_received<K, V, C>(
        &self,
        out_keys: &mut [CudaSlice<K>],
        mut out_values: Option<&mut [CudaSlice<V>]>,
        cuts: &[Vec<usize>],
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey + DeviceRepr,
        V: DeviceValue + DeviceRepr,
        C: DeviceComparator<K> + ?Sized,
    {
        // Each output shard's piece bounds: piece k is what input shard k sent it.
        let mut bounds: Vec<Vec<usize>> = cuts
            .windows(2)
            .map(|cut| {
                let mut piece_bounds = vec![0];
                for (begin, end) in cut[0].iter().zip(&cut[1]) {
                    piece_bounds.push(piece_bounds[piece_bounds.len() - 1] + end - begin);
                }
                piece_bounds
            })
            .collect();
        // ceil(log2(p)) levels; one GPU copies its one piece out.
        let levels = self.gpus.len().next_power_of_two().trailing_zeros().max(1);
        let mut scratch = self.scratch.borrow_mut();
        let mut unsorted = false;
        for level in 0..levels {
            let last = level + 1 == levels;
            self.each(|i, gpu| {
                let device = &mut scratch[i];
                let len = out_keys[i].len();
                let [first, second] = &mut device.trees;
                let (src, dst) = if level % 2 == 0 {
                    (first, second)
                } else {
                    (second, first)
                };
                let src_keys = tree_view::<K>(&src[KEYS], len)?;
                let src_values = match out_values {
                    Some(_) => Some(tree_view::<V>(&src[VALUES], len)?),
                    None => None,
                };
                let [dst_keys_tree, dst_values_tree] = dst;
                let mut dst_keys = if last {
                    out_keys[i].as_view_mut()
                } else {
                    tree_view_mut::<K>(gpu, dst_keys_tree, len)?
                };
                let mut dst_values = match (&mut out_values, last) {
                    (Some(out), true) => Some(out[i].as_view_mut()),
                    (Some(_), false) => Some(tree_view_mut::<V>(gpu, dst_values_tree, len)?),
                    (None, _) => None,
                };
                let level_in = Pieces {
                    keys: &src_keys,
                    values: src_values.as_ref(),
                };
                let level_out = PiecesMut {
                    keys: &mut dst_keys,
                    values: dst_values.as_mut(),
                };
                bounds[i] = merge_level(
                    gpu,
                    level_in,
                    level_out,
                    &bounds[i],
                    comp,
                    &mut device.merge,
                )?;
                Ok(())
            })?;
            for (gpu, device) in self.gpus.iter().zip(scratch.iter_mut()) {
                unsorted |= device.merge.check(gpu).is_err();
            }
        }
        if unsorted {
            return Err(GpuError::InvalidInput(
                "`runs` (or the shards) are not sorted under the comparator, or it is not a \
                 strict weak order: the output is a permutation of them in unspecified order"
                    .to_owned(),
            ));
        }
        Ok(())
    }
}

/// The keys (and values) of one merge level's input.
struct Pieces<'v, 'b, K, V> {
    keys: &'v CudaView<'b, K>,
    values: Option<&'v CudaView<'b, V>>,
}

/// The keys (and values) of one merge level's output.
struct PiecesMut<'v, 'b, K, V> {
    keys: &'v mut CudaViewMut<'b, K>,
    values: Option<&'v mut CudaViewMut<'b, V>>,
}

/// One level of the merge of the consecutive sorted pieces of `from` that `bounds` delimits, on
/// `gpu`'s stream: piece `2m` merged with `2m + 1` (an odd last piece merged with nothing, a
/// copy) into `to`, the same positions. Returns the bounds of the merged pieces.
fn merge_level<K, V, C>(
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

/// The first `len` elements of a tree buffer as `T`s (the buffer already grown to hold them by
/// the exchange or an earlier level).
fn tree_view<T>(tree: &Option<CudaSlice<u8>>, len: usize) -> Result<CudaView<'_, T>, GpuError> {
    let buffer = tree.as_ref().ok_or(GpuError::Poisoned("tree buffer"))?;
    // SAFETY: the bytes hold `T`s written by the exchange or an earlier level of the same call
    // (device allocations are aligned past any key's alignment), and `T` is plain data
    // (DeviceKey and DeviceValue are Pod): every bit pattern is a value.
    unsafe { buffer.transmute::<T>(len) }.ok_or(GpuError::Poisoned("tree buffer"))
}

/// A tree buffer grown to hold `len` `T`s, as `T`s.
fn tree_view_mut<'t, T: DeviceRepr>(
    gpu: &Gpu,
    tree: &'t mut Option<CudaSlice<u8>>,
    len: usize,
) -> Result<CudaViewMut<'t, T>, GpuError> {
    let buffer = gpu.grow_scratch(tree, len * std::mem::size_of::<T>())?;
    // SAFETY: the buffer holds at least `len` `T`s' bytes (grown above) at an allocation's
    // alignment; the caller writes them before any read, and `T` is plain data.
    unsafe { buffer.transmute_mut::<T>(len) }.ok_or(GpuError::Poisoned("tree buffer"))
}

/// A buffer of `len` elements on `gpu`'s stream whose contents the caller writes before any
/// read (a one-element allocation behind an empty buffer, where the driver takes no empty one).
fn uninit_buffer<T: DeviceRepr>(gpu: &Gpu, len: usize) -> Result<CudaSlice<T>, GpuError> {
    let stream = gpu.stream();
    // SAFETY: the memory is left unset; every caller writes each element before reading it,
    // and the length handed out never exceeds the allocation.
    unsafe {
        let buffer = stream.alloc::<T>(len.max(1))?;
        if len > 0 {
            return Ok(buffer);
        }
        Ok(stream.upgrade_device_ptr(buffer.leak(), 0))
    }
}

/// Sorted runs on devices, read a key at a time for the multiway co-rank (each key read at most
/// once a call); the first failed read is kept, and the search then sees zeroed keys (it ends
/// whatever it reads) until the caller reports the failure.
struct DeviceRuns<'a, K> {
    gpus: &'a [&'a Gpu],
    runs: &'a [CudaSlice<K>],
    read: RefCell<HashMap<(usize, usize), K>>,
    failure: RefCell<Option<GpuError>>,
}

impl<K: DeviceKey + DeviceRepr> DeviceRuns<'_, K> {
    /// Key `index` of run `run`, copied from its device.
    fn fetch(&self, run: usize, index: usize) -> Result<K, GpuError> {
        let gpu = self.gpus[run];
        let mut key = [K::zeroed()];
        gpu.stream()
            .memcpy_dtoh(&self.runs[run].slice(index..index + 1), &mut key)
            .map_err(GpuError::from)?;
        gpu.synchronize()?;
        Ok(key[0])
    }
}

impl<K: DeviceKey + DeviceRepr> IndexedRuns for DeviceRuns<'_, K> {
    type Key = K;

    fn run_count(&self) -> usize {
        self.runs.len()
    }

    fn run_len(&self, run: usize) -> usize {
        self.runs[run].len()
    }

    fn key(&self, run: usize, index: usize) -> K {
        if let Some(&key) = self.read.borrow().get(&(run, index)) {
            return key;
        }
        if self.failure.borrow().is_some() {
            return K::zeroed();
        }
        match self.fetch(run, index) {
            Ok(key) => {
                self.read.borrow_mut().insert((run, index), key);
                key
            }
            Err(error) => {
                let ordinal = self.gpus[run].context().ordinal();
                *self.failure.borrow_mut() = Some(device_error(ordinal, error));
                K::zeroed()
            }
        }
    }
}
