//! Shared support of the GPU benchmarks: event timing (warm-up, median), the copy rate, inputs, checked runs over rotated input sets, peer results.
#![allow(dead_code)] // Each benchmark uses the part it needs.

use std::collections::HashMap;
use std::sync::Arc;

use rand::SeedableRng;
use rayon::prelude::*;
use twophase::gpu::Gpu;
use twophase_gpu::cudarc::driver::{sys, CudaSlice, CudaStream, DeviceRepr};

/// Bytes of each buffer of the device-to-device copy that measures the copy rate (1 GiB).
pub const COPY_BYTES: usize = 1 << 30;
/// The value the u32 outputs start as, so that a run that skips an output is caught.
pub const POISON_U32: u32 = 0xDEAD_BEEF;
/// Sizes (log2 of keys or of total outputs) of the comparisons with CUB.
pub const SIZES: [u32; 3] = [20, 24, 27];
/// The largest of [`SIZES`], where the tuning sweeps run.
pub const LARGEST_LOG2N: u32 = SIZES[SIZES.len() - 1];
/// Environment variable: a comma-separated list of sizes (log2 of keys) to time instead of
/// [`SIZES`] (e.g. `25,26,27`); a benchmark whose sweeps run at its largest size then runs them at
/// each of these.
pub const SIZES_ENV: &str = "TWOPHASE_BENCH_SIZES";

/// Environment variable: when set, run only the rows of these kinds, a comma-separated list
/// (e.g. `u32-user` or `u32,u64+u64`), sweeps included.
pub const KIND_ENV: &str = "TWOPHASE_BENCH_KIND";

/// Whether the rows of `kind` run ([`KIND_ENV`] unset, or listing it).
pub fn kind_selected(kind: &str) -> bool {
    std::env::var(KIND_ENV).map_or(true, |kinds| kinds.split(',').any(|k| k.trim() == kind))
}

/// The numbers of the comma-separated list in environment variable `var` (none when unset).
pub fn env_numbers<T: std::str::FromStr>(var: &str) -> Vec<T> {
    let list = std::env::var(var).unwrap_or_default();
    list.split(',')
        .filter_map(|v| v.trim().parse::<T>().ok())
        .collect()
}

/// The sizes of [`SIZES_ENV`], if it is set to any.
pub fn env_sizes() -> Option<Vec<u32>> {
    let sizes = env_numbers::<u32>(SIZES_ENV);
    (!sizes.is_empty()).then_some(sizes)
}
/// Merge inputs are rotated among enough sets to exceed this many times the L2 size (as in the
/// CUB merge peer), so that repeated runs do not measure the cache.
pub const L2_MULTIPLE: usize = 4;
/// At most this many rotated input sets.
pub const MAX_SETS: usize = 16;

/// The device of a benchmark, or `None` when the harness only lists the benchmarks (`--list`).
/// Panics without a CUDA GPU.
pub fn open_gpu() -> Option<Gpu> {
    if std::env::args().any(|a| a == "--list") {
        return None;
    }
    match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => panic!("the GPU benchmark needs a CUDA GPU: {e}"),
    }
}

/// The device's name and architecture as the benchmarks' first line shows them.
pub fn device_name(gpu: &Gpu) -> String {
    format!("{} (sm_{})", gpu.name().unwrap_or_default(), gpu.arch())
}

/// The device's L2 cache size in bytes.
pub fn l2_bytes(gpu: &Gpu) -> usize {
    gpu.context()
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .expect("L2 size") as usize
}

/// The median of `v` (the upper one for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median of `reps` event-timed runs of `f(run)` in ms, after `warmup` untimed runs (module
/// load, first touch and clock ramp stay out of the numbers).
pub fn time_events(gpu: &Gpu, warmup: usize, reps: usize, f: impl FnMut(usize)) -> f64 {
    time_events_queued(gpu, warmup, reps, || {}, f)
}

/// [`time_events`] with `queue` run before each start event (e.g. a long copy): the host issues
/// `f`'s work while the GPU is still busy, so the times leave out the host's time before `f`'s
/// first launch.
pub fn time_events_queued(
    gpu: &Gpu,
    warmup: usize,
    reps: usize,
    mut queue: impl FnMut(),
    mut f: impl FnMut(usize),
) -> f64 {
    let stream = gpu.stream();
    for i in 0..warmup {
        queue();
        f(i);
    }
    let mut times = Vec::with_capacity(reps);
    for i in 0..reps {
        queue();
        let start = stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .expect("event");
        f(i);
        let end = stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .expect("event");
        end.synchronize().expect("sync");
        times.push(f64::from(start.elapsed_ms(&end).expect("elapsed")));
    }
    median(times)
}

/// The device-to-device copy rate of a 1 GiB buffer in GB/s, counting bytes read and written.
pub fn copy_rate_gbs(gpu: &Gpu, warmup: usize, reps: usize) -> f64 {
    let stream = gpu.stream();
    let src: CudaSlice<u8> = stream.clone_htod(&vec![0x5Au8; COPY_BYTES]).expect("alloc");
    let mut dst: CudaSlice<u8> = stream.clone_htod(&vec![0xA5u8; COPY_BYTES]).expect("alloc");
    let ms = time_events(gpu, warmup, reps, |_| {
        stream.memcpy_dtod(&src, &mut dst).expect("copy")
    });
    (2 * COPY_BYTES) as f64 / (ms * 1e-3) / 1e9
}

/// Two sorted halves of `n` keys drawn by `draw` from `seed` (each half drawn and sorted on its
/// own rayon thread).
pub fn sorted_halves<K: Copy + Send + Ord>(
    n: usize,
    seed: u64,
    draw: fn(&mut rand::rngs::StdRng) -> K,
) -> (Vec<K>, Vec<K>) {
    let half = n / 2;
    let chunks: Vec<Vec<K>> = (0..2u64)
        .into_par_iter()
        .map(|side| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed * 2 + side);
            let len = if side == 0 { half } else { n - half };
            let mut v: Vec<K> = (0..len).map(|_| draw(&mut rng)).collect();
            v.par_sort_unstable();
            v
        })
        .collect();
    let mut it = chunks.into_iter();
    (it.next().unwrap_or_default(), it.next().unwrap_or_default())
}

/// The results file a CUB peer wrote (lines `kind log2n ms`), named by the environment variable
/// `var`: (kind, log2n) -> ms. Empty (with a note) when the variable or the file is missing.
pub fn load_results(var: &str) -> HashMap<(String, u32), f64> {
    let mut map = HashMap::new();
    let Ok(path) = std::env::var(var) else {
        return map;
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("no peer results at {path}");
        return map;
    };
    for line in text.lines() {
        if let [kind, log2n, ms] = line.split_whitespace().collect::<Vec<_>>()[..] {
            if let (Ok(l), Ok(m)) = (log2n.parse(), ms.parse()) {
                map.insert((kind.to_owned(), l), m);
            }
        }
    }
    map
}

/// `n` random keys drawn from `seed` in parallel (one generator per chunk of 2^16 keys).
pub fn random_keys<K>(n: usize, seed: u64) -> Vec<K>
where
    K: bytemuck::Zeroable + Copy + Send,
    rand::distributions::Standard: rand::distributions::Distribution<K>,
{
    let mut keys = vec![K::zeroed(); n];
    keys.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ c as u64);
            chunk.iter_mut().for_each(|k| *k = rand::Rng::gen(&mut rng));
        });
    keys
}

/// Device output buffers of a checked run: uploaded from, overwritten with and compared to a
/// host value (a buffer of keys, or keys and values).
pub trait DeviceOutput: Sized {
    /// The host copy of the buffers.
    type Host: PartialEq;
    /// New buffers holding `host`.
    fn upload(stream: &Arc<CudaStream>, host: &Self::Host) -> Self;
    /// Overwrites the buffers with `host`.
    fn overwrite(&mut self, stream: &Arc<CudaStream>, host: &Self::Host);
    /// The buffers' contents.
    fn download(&self, stream: &Arc<CudaStream>) -> Self::Host;
}

impl<K: DeviceRepr + PartialEq> DeviceOutput for CudaSlice<K> {
    type Host = Vec<K>;
    fn upload(stream: &Arc<CudaStream>, host: &Vec<K>) -> Self {
        stream.clone_htod(host).expect("alloc")
    }
    fn overwrite(&mut self, stream: &Arc<CudaStream>, host: &Vec<K>) {
        stream.memcpy_htod(host, self).expect("poison");
    }
    fn download(&self, stream: &Arc<CudaStream>) -> Vec<K> {
        stream.clone_dtoh(self).expect("download")
    }
}

impl<A: DeviceOutput, B: DeviceOutput> DeviceOutput for (A, B) {
    type Host = (A::Host, B::Host);
    fn upload(stream: &Arc<CudaStream>, host: &Self::Host) -> Self {
        (A::upload(stream, &host.0), B::upload(stream, &host.1))
    }
    fn overwrite(&mut self, stream: &Arc<CudaStream>, host: &Self::Host) {
        self.0.overwrite(stream, &host.0);
        self.1.overwrite(stream, &host.1);
    }
    fn download(&self, stream: &Arc<CudaStream>) -> Self::Host {
        (self.0.download(stream), self.1.download(stream))
    }
}

/// How many rotated input sets of `set_bytes` each exceed [`L2_MULTIPLE`] times the L2 size of
/// `l2` bytes (1 to [`MAX_SETS`]).
pub fn rotated_sets(l2: usize, set_bytes: usize) -> usize {
    (L2_MULTIPLE * l2).div_ceil(set_bytes).clamp(1, MAX_SETS)
}

/// Rotated sets of device inputs, each with its own output (poisoned), and the expected output
/// of the first set: a run is checked on the first set, and timed over all of them.
pub struct Rotated<I, O: DeviceOutput> {
    pub inputs: Vec<I>,
    pub outs: Vec<O>,
    pub expected: O::Host,
    pub poison: O::Host,
}

impl<I, O: DeviceOutput> Rotated<I, O> {
    /// The sets `inputs`, each with an output holding `poison`.
    pub fn new(
        stream: &Arc<CudaStream>,
        inputs: Vec<I>,
        expected: O::Host,
        poison: O::Host,
    ) -> Self {
        let outs = inputs.iter().map(|_| O::upload(stream, &poison)).collect();
        Self {
            inputs,
            outs,
            expected,
            poison,
        }
    }

    /// Poisons the first set's output, runs `run` on the first set, and says whether its output
    /// is the expected one.
    pub fn check(&mut self, stream: &Arc<CudaStream>, run: &mut impl FnMut(&I, &mut O)) -> bool {
        self.outs[0].overwrite(stream, &self.poison);
        run(&self.inputs[0], &mut self.outs[0]);
        self.outs[0].download(stream) == self.expected
    }

    /// Median ms of `reps` event-timed runs of `run` after `warmup`, rotating over the sets.
    pub fn time(
        &mut self,
        gpu: &Gpu,
        warmup: usize,
        reps: usize,
        run: &mut impl FnMut(&I, &mut O),
    ) -> f64 {
        let sets = self.inputs.len();
        time_events(gpu, warmup, reps, |i| {
            run(&self.inputs[i % sets], &mut self.outs[i % sets])
        })
    }
}

/// Rotated sets of two sorted halves of `n` keys each on the device (set `s` drawn by `draw`
/// from `seed(s)`), their outputs poisoned with `poison`, and the CPU merge of the first set.
pub fn key_merge_sets<K>(
    stream: &Arc<CudaStream>,
    n: usize,
    sets: usize,
    seed: impl Fn(usize) -> u64,
    draw: fn(&mut rand::rngs::StdRng) -> K,
    poison: K,
) -> Rotated<(CudaSlice<K>, CudaSlice<K>), CudaSlice<K>>
where
    K: DeviceRepr + Ord + Copy + Send + Sync,
{
    let mut inputs = Vec::new();
    let mut expected = Vec::new();
    for s in 0..sets {
        let (a, b) = sorted_halves(n, seed(s), draw);
        if s == 0 {
            expected = twophase::cpu::merge_by(&a, &b, twophase::order::less);
        }
        inputs.push((
            stream.clone_htod(&a).expect("upload"),
            stream.clone_htod(&b).expect("upload"),
        ));
    }
    Rotated::new(stream, inputs, expected, vec![poison; n])
}
