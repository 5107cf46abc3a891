//! The sharded sort's cuts: the multiway co-rank at every output shard boundary, over sorted shards on the devices read a key at a time.

use std::cell::RefCell;
use std::collections::HashMap;

use cudarc::driver::{CudaSlice, DeviceRepr};
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
) -> Result<Vec<Vec<usize>>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let p = gpus.len();
    let lens: Vec<usize> = runs.iter().map(CudaSlice::len).collect();
    let total = lens.iter().sum();
    let device_runs = DeviceRuns {
        gpus,
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
