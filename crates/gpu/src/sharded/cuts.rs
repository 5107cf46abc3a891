//! The sharded sort's cuts: the multiway co-rank at every output shard boundary, over sorted shards on the devices (two: a strided search; more: windows bounded by samples).

use std::cell::RefCell;
use std::collections::HashMap;
use std::mem::size_of;

use cudarc::driver::sys::{self, CUdevice_attribute, CUmemorytype};
use cudarc::driver::{CudaSlice, CudaView, DevicePtr, DeviceRepr};
use twophase_partition::{
    clamp_multiway_cut, multiway_co_rank_indexed, sampled_cut_bounds, select_indexed_runs,
    shard_boundary, strided_search, takes_a, IndexedRuns, Lower, StridedProbes,
};

use super::buffers::{device_error, on_device, tree_view, tree_view_mut};
use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::runtime::device::Gpu;
use crate::runtime::program::ValueLayout;

/// The cuts of the sorted `runs` at every output shard boundary: row `i` the count taken
/// from each run before output shard `i` (row 0 zeros, row p the runs' lengths), each inner
/// row a multiway co-rank over the devices' keys, clamped into a staircase after the row
/// before (a no-op on sorted runs under a strict weak order). Two runs take
/// [`two_run_cuts`], with at most `max_probes` keys a round from each device; more take
/// [`run_samples`] in the merge program of `comp` and `values` (the call's value layout).
pub(super) fn shard_cuts<K, C>(
    gpus: &[&Gpu],
    runs: &[CudaSlice<K>],
    comp: &C,
    max_probes: usize,
    values: ValueLayout,
) -> Result<Vec<Vec<usize>>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    if let ([a_gpu, b_gpu], [a, b]) = (gpus, runs) {
        if let Some(cuts) = two_run_cuts([a_gpu, b_gpu], [a, b], comp, max_probes)? {
            return Ok(cuts);
        }
    }
    let p = gpus.len();
    let lens: Vec<usize> = runs.iter().map(CudaSlice::len).collect();
    let total = lens.iter().sum();
    let device_runs = DeviceRuns {
        gpus,
        runs,
        read: RefCell::new(HashMap::new()),
        failure: RefCell::new(None),
    };
    // Two runs reach here only where a strided copy's pitch is too narrow for their keys.
    let samples = if p > 1 {
        Some(run_samples(gpus, runs, comp, values)?)
    } else {
        None
    };
    let is_less = |a: &K, b: &K| comp.is_less(a, b);
    let mut cuts = vec![vec![0; p]];
    for shard in 1..p {
        let diag = shard_boundary(shard, p, total);
        let (mut cut, mut upper) = (vec![0; p], vec![0; p]);
        let bounded = samples.as_ref().is_some_and(|(samples, stride)| {
            let samples: Vec<&[K]> = samples.iter().map(Vec::as_slice).collect();
            sampled_cut_bounds(
                &samples, *stride, &lens, diag, &is_less, &mut cut, &mut upper,
            )
        });
        if bounded {
            // The exact search inside the windows, each fetched whole.
            let windows = WindowRuns::fetch(&device_runs, &cut, &upper)?;
            select_indexed_runs(&windows, &mut cut, &mut upper, diag, &is_less);
        } else {
            multiway_co_rank_indexed(&device_runs, diag, &is_less, &mut cut, &mut upper);
        }
        if let Some(error) = device_runs.failure.take() {
            return Err(error);
        }
        clamp_multiway_cut(&cuts[shard - 1], &mut cut, diag, &lens);
        cuts.push(cut);
    }
    cuts.push(lens);
    Ok(cuts)
}

/// Samples a run of three or more shards' cut takes at most. Gathered on the device and copied
/// to the host whole (2^16 u32 keys: 256 KiB a device), they leave windows of (p + 1) len / 2^16
/// keys a run a boundary, which one small copy each fetches (docs/tuning.md, "Cuts on three or
/// more GPUs").
const MULTIWAY_SAMPLES: usize = 1 << 16;

/// Each run's samples, and their stride.
type RunSamples<K> = (Vec<Vec<K>>, usize);

/// Every `stride`-th key of each run, with the stride: the samples that bound a multiway cut
/// ([`sampled_cut_bounds`]). Each device gathers its run's samples ([`gather_samples`]), all
/// devices before any copy, so that they gather together, then copies them to the host.
fn run_samples<K, C>(
    gpus: &[&Gpu],
    runs: &[CudaSlice<K>],
    comp: &C,
    values: ValueLayout,
) -> Result<RunSamples<K>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let longest = runs.iter().map(CudaSlice::len).max().unwrap_or(0);
    let stride = longest.div_ceil(MULTIWAY_SAMPLES).max(1);
    let mut buffers: Vec<Option<CudaSlice<u8>>> = runs.iter().map(|_| None).collect();
    for ((gpu, run), buffer) in gpus.iter().zip(runs).zip(buffers.iter_mut()) {
        let gathered = gather_samples(gpu, &[run.slice(..)], stride, buffer, comp, values);
        on_device(gpu, gathered)?;
    }
    let mut samples = Vec::with_capacity(runs.len());
    for ((gpu, run), buffer) in gpus.iter().zip(runs).zip(&buffers) {
        let copied = samples_to_host::<K>(gpu, &[run.len()], stride, buffer);
        samples.extend(on_device(gpu, copied)?);
    }
    Ok((samples, stride))
}

/// Every `stride`-th key of each of `runs` (on `gpu`'s device) gathered side by side into
/// `buffer`, grown to hold them, on the handle's stream (a kernel of the merge program of
/// `comp` and `values`, the one the merge then runs), for one copy to the host
/// ([`samples_to_host`]).
pub(super) fn gather_samples<K, C>(
    gpu: &Gpu,
    runs: &[CudaView<K>],
    stride: usize,
    buffer: &mut Option<CudaSlice<u8>>,
    comp: &C,
    values: ValueLayout,
) -> Result<(), GpuError>
where
    K: DeviceKey + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let count = runs.iter().map(|run| run.len().div_ceil(stride)).sum();
    let mut gathered = tree_view_mut::<K>(gpu, buffer, count)?;
    let mut at = 0;
    for run in runs {
        let taken = run.len().div_ceil(stride);
        let mut out = gathered.slice_mut(at..at + taken);
        gpu.merge_gather(run, (0, stride), &mut out, comp, values)?;
        at += taken;
    }
    Ok(())
}

/// The samples [`gather_samples`] left in `buffer` for runs of `run_lens` keys, copied to the
/// host (waiting for the handle's stream), one vector a run.
pub(super) fn samples_to_host<K: DeviceKey + DeviceRepr>(
    gpu: &Gpu,
    run_lens: &[usize],
    stride: usize,
    buffer: &Option<CudaSlice<u8>>,
) -> Result<Vec<Vec<K>>, GpuError> {
    let counts: Vec<usize> = run_lens.iter().map(|len| len.div_ceil(stride)).collect();
    let all = read_to_host(gpu, &tree_view::<K>(buffer, counts.iter().sum())?)?;
    let mut at = 0;
    Ok(counts
        .iter()
        .map(|&count| {
            at += count;
            all[at - count..at].to_vec()
        })
        .collect())
}

/// The runs' windows `[lo[k], hi[k])`, fetched whole (one copy a run), for the exact search
/// started from sampled bounds: it reads only inside them; a read outside (never, on bounds
/// that hold) goes to the devices key by key.
struct WindowRuns<'d, 'a, K> {
    device_runs: &'d DeviceRuns<'a, K>,
    windows: Vec<(usize, Vec<K>)>,
}

impl<'d, 'a, K: DeviceKey + DeviceRepr> WindowRuns<'d, 'a, K> {
    fn fetch(
        device_runs: &'d DeviceRuns<'a, K>,
        lo: &[usize],
        hi: &[usize],
    ) -> Result<Self, GpuError> {
        let mut windows = Vec::with_capacity(lo.len());
        for (k, (gpu, run)) in device_runs.gpus.iter().zip(device_runs.runs).enumerate() {
            let keys = on_device(gpu, read_to_host(gpu, &run.slice(lo[k]..hi[k])))?;
            windows.push((lo[k], keys));
        }
        Ok(WindowRuns {
            device_runs,
            windows,
        })
    }
}

impl<K: DeviceKey + DeviceRepr> IndexedRuns for WindowRuns<'_, '_, K> {
    type Key = K;

    fn run_count(&self) -> usize {
        self.windows.len()
    }

    fn run_len(&self, run: usize) -> usize {
        self.device_runs.run_len(run)
    }

    fn key(&self, run: usize, index: usize) -> K {
        let (start, keys) = &self.windows[run];
        match index.checked_sub(*start).and_then(|i| keys.get(i)) {
            Some(&key) => key,
            None => self.device_runs.key(run, index),
        }
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
        let key = read_to_host(self.gpus[run], &self.runs[run].slice(index..index + 1))?;
        key.first()
            .copied()
            .ok_or(GpuError::Poisoned("one-key read"))
    }
}

/// The keys of `range` on `gpu`'s device, copied to the host on its stream and waited for (an
/// empty range copies nothing).
fn read_to_host<K: DeviceKey + DeviceRepr>(
    gpu: &Gpu,
    range: &CudaView<'_, K>,
) -> Result<Vec<K>, GpuError> {
    let mut keys = vec![K::zeroed(); range.len()];
    if !keys.is_empty() {
        gpu.stream().memcpy_dtoh(range, &mut keys)?;
        gpu.synchronize()?;
    }
    Ok(keys)
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

/// Keys a round of the two-run cut reads from each device at most: a round's copy costs about
/// the same for one key as for hundreds, and 2^29 keys then take three strided rounds and one
/// contiguous one (docs/tuning.md, "Cuts on two GPUs").
pub(super) const CUT_PROBES: usize = 256;

/// The cuts of two sorted runs, one a device (run 0 on `gpus[0]`): the stable merge path at the
/// middle diagonal, searched by [`strided_search`]. A round reads its probes' keys of run 0 and
/// the keys of run 1 mirrored on the diagonal, one strided copy from each device, in place of a
/// binary search's dozens of single-key reads. `None` where a key is too wide for a strided
/// copy's pitch (the multiway search then runs). The cut stays on the diagonal and inside both
/// runs whatever the comparator answers.
fn two_run_cuts<K, C>(
    gpus: [&Gpu; 2],
    runs: [&CudaSlice<K>; 2],
    comp: &C,
    max_probes: usize,
) -> Result<Option<Vec<Vec<usize>>>, GpuError>
where
    K: DeviceKey + DeviceRepr,
    C: DeviceComparator<K> + ?Sized,
{
    let lens = [runs[0].len(), runs[1].len()];
    let diag = shard_boundary(1, 2, lens[0] + lens[1]);
    let (begin, end) = (diag.saturating_sub(lens[1]), diag.min(lens[0]));
    // A round's step must keep each copy's pitch (step * key bytes) within both devices' limit.
    let mut widest_step = usize::MAX;
    for gpu in gpus {
        let pitch = on_device(gpu, max_pitch(gpu))?;
        widest_step = widest_step.min(pitch / size_of::<K>());
    }
    if widest_step == 0 {
        return Ok(None);
    }
    let max_probes = max_probes.max(1).max((end - begin).div_ceil(widest_step));
    let is_less = |a: &K, b: &K| comp.is_less(a, b);
    let (mut a_keys, mut b_keys) = (Vec::new(), Vec::new());
    let mut failure = None;
    let cut = strided_search(begin, end, max_probes, |probes| {
        if failure.is_some() {
            return 0;
        }
        // Run 1's keys at diag - 1 - probe, from the last probe's up.
        let b_first = diag - 1 - probes.probe(probes.count - 1);
        let read = on_device(
            gpus[0],
            read_strided(gpus[0], runs[0], probes, probes.first, &mut a_keys),
        )
        .and_then(|()| {
            on_device(
                gpus[1],
                read_strided(gpus[1], runs[1], probes, b_first, &mut b_keys),
            )
        });
        if let Err(error) = read {
            failure = Some(error);
            return 0;
        }
        (0..probes.count)
            .take_while(|&l| {
                takes_a::<Lower, K, _>(&a_keys[l], &b_keys[probes.count - 1 - l], &is_less)
            })
            .count()
    });
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(Some(vec![vec![0, 0], vec![cut, diag - cut], lens.to_vec()]))
}

/// The largest pitch in bytes a strided copy on `gpu`'s device takes.
fn max_pitch(gpu: &Gpu) -> Result<usize, GpuError> {
    let pitch = gpu
        .context()
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_PITCH)?;
    Ok(usize::try_from(pitch).unwrap_or(0))
}

/// `probes.count` keys of `run` from `first` on, `probes.step` apart, into `keys` (resized),
/// one strided copy on `gpu`'s stream, waited for.
fn read_strided<K: DeviceKey + DeviceRepr>(
    gpu: &Gpu,
    run: &CudaSlice<K>,
    probes: &StridedProbes,
    first: usize,
    keys: &mut Vec<K>,
) -> Result<(), GpuError> {
    keys.clear();
    keys.resize(probes.count, K::zeroed());
    let last = (probes.count - 1)
        .checked_mul(probes.step)
        .and_then(|span| span.checked_add(first));
    if last.is_none_or(|last| last >= run.len()) {
        return Err(GpuError::Poisoned("strided cut read past its run"));
    }
    let key_bytes = size_of::<K>();
    let stream = gpu.stream();
    gpu.context().bind_to_thread()?;
    let (base, _record) = run.device_ptr(stream);
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: base + (first * key_bytes) as u64,
        srcArray: std::ptr::null_mut(),
        srcPitch: probes.step * key_bytes,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
        dstHost: keys.as_mut_ptr().cast(),
        dstDevice: 0,
        dstArray: std::ptr::null_mut(),
        dstPitch: key_bytes,
        WidthInBytes: key_bytes,
        Height: probes.count,
    };
    // SAFETY: the source rows are keys first + l * step (l < count) of `run`, the last checked
    // above to lie inside it, each `key_bytes` wide; the destination is `count` keys of `keys`,
    // written before the stream is synchronized below, and `K` is plain data. The caller keeps
    // the pitch (step * key_bytes) within the device's limit; a bad copy is an error returned.
    unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }.result()?;
    gpu.synchronize()
}
