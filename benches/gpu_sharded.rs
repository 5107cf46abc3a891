//! GPU benchmark of the sort across GPUs: one GPU's mergesort of the whole input against the group's sharded sort, per phase.
//!
//! Run on a machine with two or more GPUs (scripts/device.sh collects it; the device command
//! sets NCCL_NVLS_ENABLE=0). With one GPU it runs two handles on it (the copies exchange): a
//! correctness run, not a speed-up. Each configuration is checked against the CPU first (the
//! output shards' concatenation equals the sorted input, each shard of its exact size), then
//! timed on the host clock (the call synchronizes every device) after the shards are restored
//! from pristine copies; the median of REPS runs. `TWOPHASE_BENCH_LOG2N` picks one total size.

mod common;

use std::time::Instant;

use common::{copy_rate_gbs, device_name, median, random_keys};
use rayon::prelude::*;
use twophase::gpu::{Gpu, GpuGroup, Less, MergesortScratch, PrimitiveKey, SortBuffers};
use twophase_gpu::cudarc::driver::{CudaContext, CudaSlice, DeviceRepr};
use twophase_partition::shard_boundary;

/// Untimed runs before timing.
const WARMUP: usize = 2;
/// Timed runs per configuration; the median is reported.
const REPS: usize = 7;
/// Total sizes (log2 of the keys over all GPUs).
const TOTAL_LOG2N: [u32; 3] = [24, 28, 30];
/// Selects one total size.
const LOG2N_ENV: &str = "TWOPHASE_BENCH_LOG2N";
/// Milliseconds in a second.
const MS: f64 = 1e3;

/// The benchmark's handles: one per device, or two on device 0 where the machine has one.
fn handles() -> Option<Vec<Gpu>> {
    if std::env::args().any(|a| a == "--list") {
        return None;
    }
    let devices = CudaContext::device_count().map_or(0, |count| count as usize);
    let ordinals: Vec<usize> = if devices >= 2 {
        (0..devices).collect()
    } else {
        vec![0, 0]
    };
    Some(
        ordinals
            .into_iter()
            .map(|d| Gpu::new(d).expect("the sharded benchmark needs a CUDA GPU"))
            .collect(),
    )
}

/// Median ms of one GPU's mergesort of all of `keys`, restored from a pristine copy before
/// each run (the restore untimed).
fn single_gpu_ms<K: PrimitiveKey + Ord + DeviceRepr>(gpu: &Gpu, keys: &[K]) -> f64 {
    let stream = gpu.stream();
    let pristine = stream.clone_htod(keys).expect("upload");
    let mut work = stream.clone_htod(keys).expect("upload");
    let mut scratch = MergesortScratch::new();
    let mut times = Vec::with_capacity(REPS);
    for rep in 0..WARMUP + REPS {
        stream.memcpy_dtod(&pristine, &mut work).expect("restore");
        gpu.synchronize().expect("sync");
        let start = Instant::now();
        gpu.sort_device(SortBuffers::keys(&mut work), &Less, None, &mut scratch)
            .expect("sort");
        gpu.synchronize().expect("sync");
        if rep >= WARMUP {
            times.push(start.elapsed().as_secs_f64() * MS);
        }
    }
    median(times)
}

/// The sharded sort of `keys` (equal shards): checked against the sorted keys, then the median
/// ms and the median of each phase (sort, cuts, exchange, merge) in ms.
fn sharded_ms<K>(group: &GpuGroup, keys: &[K]) -> (f64, [f64; 4])
where
    K: PrimitiveKey + DeviceRepr + Ord,
{
    let (p, n) = (group.gpus().len(), keys.len());
    let parts: Vec<&[K]> = (0..p)
        .map(|i| &keys[shard_boundary(i, p, n)..shard_boundary(i + 1, p, n)])
        .collect();
    let pristine = group.upload(&parts).expect("upload");
    let mut work = group.upload(&parts).expect("upload");
    let restore = |work: &mut Vec<CudaSlice<K>>| {
        for ((gpu, from), to) in group.gpus().iter().zip(&pristine).zip(work.iter_mut()) {
            gpu.stream().memcpy_dtod(from, to).expect("restore");
            gpu.synchronize().expect("sync");
        }
    };
    // Correctness first.
    let out = group.sort_device(&mut work, &Less).expect("sharded sort");
    let mut got = vec![K::zeroed(); n];
    group.download(&out, &mut got).expect("download");
    let mut expected = keys.to_vec();
    expected.par_sort_unstable();
    assert!(
        got == expected,
        "the sharded sort differs from the sorted keys"
    );
    for (i, shard) in out.iter().enumerate() {
        assert_eq!(
            shard.len(),
            shard_boundary(i + 1, p, n) - shard_boundary(i, p, n)
        );
    }
    drop(out);
    let mut times = Vec::with_capacity(REPS);
    let mut phases: [Vec<f64>; 4] = Default::default();
    for rep in 0..WARMUP + REPS {
        restore(&mut work);
        let start = Instant::now();
        let out = group.sort_device(&mut work, &Less).expect("sharded sort");
        let ms = start.elapsed().as_secs_f64() * MS;
        drop(out);
        if rep >= WARMUP {
            times.push(ms);
            let last = group.last_phases();
            for (list, phase) in
                phases
                    .iter_mut()
                    .zip([last.sort, last.cuts, last.exchange, last.merge])
            {
                list.push(phase.as_secs_f64() * MS);
            }
        }
    }
    (median(times), phases.map(median))
}

fn main() {
    let Some(gpus) = handles() else {
        return;
    };
    let refs: Vec<&Gpu> = gpus.iter().collect();
    let group = GpuGroup::new(&refs).expect("group");
    let copy = copy_rate_gbs(&gpus[0], WARMUP, REPS);
    println!(
        "devices: {} x {}; exchange: {}; device-to-device copy rate of GPU 0: {copy:.0} GB/s",
        gpus.len(),
        device_name(&gpus[0]),
        group.exchange_name()
    );
    println!("| keys | n (all GPUs) | one GPU ms | sharded ms | speed-up | sort | cuts | exchange | merge | exchange GB/s (bytes crossing) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let p = gpus.len();
    for log2n in TOTAL_LOG2N {
        if std::env::var(LOG2N_ENV).is_ok_and(|l| l != log2n.to_string()) {
            continue;
        }
        let n = 1usize << log2n;
        let keys: Vec<u32> = random_keys(n, rand::random());
        let one = single_gpu_ms(&gpus[0], &keys);
        let (ms, [sort, cuts, exchange, merge]) = sharded_ms(&group, &keys);
        // Random keys: each shard keeps 1/p of its keys and sends the rest.
        let crossing = (n - n / p) * size_of::<u32>();
        let gbs = crossing as f64 / (exchange / MS) / 1e9;
        println!(
            "| u32 | 2^{log2n} | {one:.3} | {ms:.3} | {:.2}x | {sort:.3} | {cuts:.3} | {exchange:.3} | {merge:.3} | {gbs:.1} |",
            one / ms
        );
    }
}
