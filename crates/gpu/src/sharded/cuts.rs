//! The sharded sort's cuts: the multiway co-rank at every output shard boundary, over sorted shards on the devices read a key at a time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::mem::size_of;

use cudarc::driver::{CudaSlice, DeviceRepr, PinnedHostSlice};
use twophase_partition::{
    clamp_multiway_cut, multiway_co_rank_indexed, shard_boundary, IndexedRuns,
};

use super::buffers::device_error;
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::runtime::device::Gpu;

/// The cuts of the sorted `runs` at every output shard boundary: row `i` the count taken
/// from each run before output shard `i` (row 0 zeros, row p the runs' lengths), each inner
/// row a multiway co-rank over the devices' keys, clamped into a staircase after the row
/// before (a no-op on sorted runs under a strict weak order).
pub(super) fn shard_cuts<K, C>(
    gpus: &[&Gpu],
    runs: &[CudaSlice<K>],
    comp: &C,
    landing: &RefCell<Vec<Option<PinnedHostSlice<u8>>>>,
) -> Result<Vec<Vec<usize>>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let p = gpus.len();
    let lens: Vec<usize> = runs.iter().map(CudaSlice::len).collect();
    let total = lens.iter().sum();
    landing.borrow_mut().resize_with(p, || None);
    let device_runs = DeviceRuns {
        gpus,
        runs,
        read: RefCell::new(HashMap::new()),
        failure: RefCell::new(None),
        landing,
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

/// Page-locked host memory without write-combining (`cuMemHostAlloc` flags 0): the host reads
/// the keys back, and write-combined memory is uncached for reads.
const PAGE_LOCKED_CACHED: u32 = 0;

/// Sorted runs on devices, read a key at a time for the multiway co-rank (each key read at most
/// once a call), a round's keys fetched together ([`IndexedRuns::prefetch`]); the first failed
/// read is kept, and the search then sees zeroed keys (it ends whatever it reads) until the
/// caller reports the failure.
struct DeviceRuns<'a, K> {
    gpus: &'a [&'a Gpu],
    runs: &'a [CudaSlice<K>],
    read: RefCell<HashMap<(usize, usize), K>>,
    failure: RefCell<Option<GpuError>>,
    /// Each run's page-locked landing place of one key, kept by the group across calls: a copy
    /// into it is asynchronous, so a round's copies from every device overlap.
    landing: &'a RefCell<Vec<Option<PinnedHostSlice<u8>>>>,
}

impl<K: DeviceKey + DeviceRepr> DeviceRuns<'_, K> {
    /// Start copying key `index` of run `run` into the run's landing place (made or grown
    /// here), on its device's stream.
    fn start_fetch(&self, run: usize, index: usize) -> Result<(), GpuError> {
        let gpu = self.gpus[run];
        let mut landing = self.landing.borrow_mut();
        let slot = &mut landing[run];
        if slot
            .as_ref()
            .is_none_or(|place| place.len() < size_of::<K>())
        {
            // SAFETY: the page-locked bytes are unset until the copy below writes them, and
            // they are read only after it (finish_fetch waits for the copy's event).
            *slot = Some(unsafe {
                gpu.context()
                    .alloc_pinned_with_flags::<u8>(size_of::<K>(), PAGE_LOCKED_CACHED)
            }?);
        }
        let place = slot.as_mut().ok_or(GpuError::Poisoned("key landing"))?;
        let key = self.runs[run].slice(index..index + 1);
        // SAFETY: the one-key view is `size_of::<K>()` bytes of plain data on its device.
        let bytes = unsafe { key.transmute::<u8>(size_of::<K>()) }
            .ok_or(GpuError::Poisoned("key bytes"))?;
        gpu.stream().memcpy_dtoh(&bytes, place)?;
        Ok(())
    }

    /// The key `start_fetch` copied for run `run`, once its copy has completed.
    fn finish_fetch(&self, run: usize) -> Result<K, GpuError> {
        let landing = self.landing.borrow();
        let place = landing[run]
            .as_ref()
            .ok_or(GpuError::Poisoned("key landing"))?;
        let bytes = place.as_slice()?;
        Ok(bytemuck::pod_read_unaligned(&bytes[..size_of::<K>()]))
    }

    /// Key `index` of run `run`, copied from its device.
    fn fetch(&self, run: usize, index: usize) -> Result<K, GpuError> {
        self.start_fetch(run, index)?;
        self.finish_fetch(run)
    }

    /// The first failure of a read from run `run`, kept (the search ends on zeroed keys).
    fn fail(&self, run: usize, error: GpuError) {
        let ordinal = self.gpus[run].context().ordinal();
        self.failure
            .borrow_mut()
            .get_or_insert(device_error(ordinal, error));
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
                self.fail(run, error);
                K::zeroed()
            }
        }
    }

    /// A round's keys, one a run (so one a device's landing place): every copy started, then
    /// each waited for, so that the devices' copies overlap.
    fn prefetch<P: Iterator<Item = (usize, usize)>>(&self, probes: P) {
        let mut started = Vec::new();
        for (run, index) in probes {
            if self.failure.borrow().is_some() {
                return;
            }
            // A second probe of one run would overwrite its landing place: key() reads it.
            let landing_busy = started.iter().any(|&(busy, _)| busy == run);
            if landing_busy || self.read.borrow().contains_key(&(run, index)) {
                continue;
            }
            match self.start_fetch(run, index) {
                Ok(()) => started.push((run, index)),
                Err(error) => self.fail(run, error),
            }
        }
        for (run, index) in started {
            match self.finish_fetch(run) {
                Ok(key) => {
                    self.read.borrow_mut().insert((run, index), key);
                }
                Err(error) => self.fail(run, error),
            }
        }
    }
}
