//! Shared support of the GPU benchmarks: event timing (warm-up, median), the copy rate, inputs, peer results.
#![allow(dead_code)] // Each benchmark uses the part it needs.

use std::collections::HashMap;

use rand::SeedableRng;
use rayon::prelude::*;
use twophase::gpu::Gpu;
use twophase_gpu::cudarc::driver::{sys, CudaSlice};

/// Bytes of each buffer of the device-to-device copy that measures the copy rate (1 GiB).
pub const COPY_BYTES: usize = 1 << 30;

/// The median of `v` (the upper one for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median of `reps` event-timed runs of `f(run)` in ms, after `warmup` untimed runs (module
/// load, first touch and clock ramp stay out of the numbers).
pub fn time_events(gpu: &Gpu, warmup: usize, reps: usize, mut f: impl FnMut(usize)) -> f64 {
    let stream = gpu.stream();
    for i in 0..warmup {
        f(i);
    }
    let mut times = Vec::with_capacity(reps);
    for i in 0..reps {
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
