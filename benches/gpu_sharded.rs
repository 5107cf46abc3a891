//! GPU benchmark of the sort across GPUs: one GPU's mergesort of the whole input against the group's sharded sort, per phase.
//!
//! Run on a machine with two or more GPUs (scripts/device.sh collects it; the device command
//! sets NCCL_NVLS_ENABLE=0). With one GPU it runs two handles on it (the copies exchange): a
//! correctness run, not a speed-up. Each configuration is checked against the CPU first (the
//! output shards' concatenation equals the sorted input, each shard of its exact size), then
//! timed on the host clock (the call synchronizes every device) after the shards are restored
//! from pristine copies, into output shards made once (the group keeps its scratch, so a timed
//! call allocates nothing); the median of REPS runs. `TWOPHASE_BENCH_LOG2N` picks one total
//! size.

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
/// 8-byte keys and pairs run up to this total size (8 GiB of keys and values: the host keeps
/// the input, the expected and the sorted copies).
const WIDE_LOG2N_LIMIT: u32 = 30;
/// Milliseconds in a second.
const MS: f64 = 1e3;
/// Prints every timed run's exchange time, not only the median.
const EACH_RUN_ENV: &str = "TWOPHASE_BENCH_EACH_RUN";
/// A comma-separated list of the streamed exchange's chunk bytes
/// (`GpuGroup::set_stream_chunk_bytes`): the u32 sort alone, once a value.
const CHUNK_BYTES_ENV: &str = "TWOPHASE_BENCH_CHUNK_BYTES";
/// Also prints one GPU's mergesort of one shard's keys alone (n/p u32 keys on GPU 0): the sort
/// column's time without the other devices sorting beside it.
const ONE_SHARD_ENV: &str = "TWOPHASE_BENCH_ONE_SHARD";
/// A comma-separated list of the two-GPU cut's probes a round (`GpuGroup::set_cut_probes`): the
/// u32 sort alone, once a value.
const CUT_PROBES_ENV: &str = "TWOPHASE_BENCH_CUT_PROBES";
/// Runs only the u64 rows (for settings of NCCL's environment, a process each).
const U64_ONLY_ENV: &str = "TWOPHASE_BENCH_U64_ONLY";
/// A comma-separated list of the streamed exchange's chunk weights, each colon-separated
/// (`GpuGroup::set_stream_chunk_weights`, e.g. `2:1,3:1`): the u64 row once a list, in
/// `WEIGHT_ROUNDS` rounds.
const CHUNK_WEIGHTS_ENV: &str = "TWOPHASE_BENCH_CHUNK_WEIGHTS";
/// The group's chunk weights unless set, restored after a sweep.
const SHIPPED_CHUNK_WEIGHTS: [usize; 2] = [2, 1];
/// Rounds of a chunk-weight sweep: each list's rows interleave with the others'.
const WEIGHT_ROUNDS: usize = 2;
/// Also prints each into-output row (u32, pairs, u64) with the exchange started after the sort
/// (`GpuGroup::set_lead_exchange(false)`), in `LEAD_ROUNDS` rounds alternating with the
/// shipped lead.
const LEAD_OFF_ENV: &str = "TWOPHASE_BENCH_LEAD_OFF";
/// Rounds of the lead's comparison.
const LEAD_ROUNDS: usize = 2;
/// Bytes in a GiB.
const GIB: f64 = (1u64 << 30) as f64;

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

/// Median ms of `run` over REPS runs after WARMUP, each after `restore` (untimed), and with a
/// group the medians of its phases (sort, cuts, exchange, merge) in ms.
fn timed(
    group: Option<&GpuGroup>,
    mut restore: impl FnMut(),
    mut run: impl FnMut(),
) -> (f64, [f64; 4]) {
    let mut times = Vec::with_capacity(REPS);
    let mut phases: [Vec<f64>; 4] = Default::default();
    for rep in 0..WARMUP + REPS {
        restore();
        let start = Instant::now();
        run();
        let ms = start.elapsed().as_secs_f64() * MS;
        if rep < WARMUP {
            continue;
        }
        times.push(ms);
        if let Some(group) = group {
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
    if group.is_some() && std::env::var(EACH_RUN_ENV).is_ok() {
        println!("each run's exchange ms: {:.3?}", phases[2]);
    }
    let phases = if group.is_some() {
        phases.map(median)
    } else {
        [0.0; 4]
    };
    (median(times), phases)
}

/// `keys` cut into the group's equal shards.
fn shards_of<'k, K>(group: &GpuGroup, keys: &'k [K]) -> Vec<&'k [K]> {
    let (p, n) = (group.gpus().len(), keys.len());
    (0..p)
        .map(|i| &keys[shard_boundary(i, p, n)..shard_boundary(i + 1, p, n)])
        .collect()
}

/// `to` restored from `from`, shard by shard, every device synchronized.
fn restore<T: DeviceRepr>(group: &GpuGroup, from: &[CudaSlice<T>], to: &mut [CudaSlice<T>]) {
    for ((gpu, from), to) in group.gpus().iter().zip(from).zip(to.iter_mut()) {
        gpu.stream().memcpy_dtod(from, to).expect("restore");
        gpu.synchronize().expect("sync");
    }
}

/// Median ms of one GPU's mergesort of all of `keys` (with `values`, if any).
fn single_gpu_ms<K: PrimitiveKey + Ord + DeviceRepr>(
    gpu: &Gpu,
    keys: &[K],
    values: Option<&[u32]>,
) -> f64 {
    let stream = gpu.stream();
    let pristine = stream.clone_htod(keys).expect("upload");
    let pristine_values = values.map(|v| stream.clone_htod(v).expect("upload"));
    let work = std::cell::RefCell::new((
        stream.clone_htod(keys).expect("upload"),
        values.map(|v| stream.clone_htod(v).expect("upload")),
    ));
    let mut scratch = MergesortScratch::new();
    let restore = || {
        let (keys, values) = &mut *work.borrow_mut();
        stream.memcpy_dtod(&pristine, keys).expect("restore");
        if let (Some(from), Some(to)) = (&pristine_values, values) {
            stream.memcpy_dtod(from, to).expect("restore");
        }
        gpu.synchronize().expect("sync");
    };
    let run = || {
        let (keys, values) = &mut *work.borrow_mut();
        match values {
            Some(v) => gpu.sort_device(SortBuffers::pairs(keys, v), &Less, None, &mut scratch),
            None => gpu.sort_device(SortBuffers::keys(keys), &Less, None, &mut scratch),
        }
        .expect("sort");
        gpu.synchronize().expect("sync");
    };
    timed(None, restore, run).0
}

/// The sharded sort of `keys` (equal shards): checked against the sorted keys, then the median
/// ms and the median of each phase in ms.
fn sharded_ms<K>(group: &GpuGroup, keys: &[K]) -> (f64, [f64; 4])
where
    K: PrimitiveKey + DeviceRepr + Ord,
{
    let n = keys.len();
    let pristine = group.upload(&shards_of(group, keys)).expect("upload");
    let mut work = group.upload(&shards_of(group, keys)).expect("upload");
    let mut out = group.output_shards::<K>(n).expect("outputs");
    // Correctness first.
    group
        .sort_device_into(&mut work, &mut out, &Less)
        .expect("sharded sort");
    let mut got = vec![K::zeroed(); n];
    group.download(&out, &mut got).expect("download");
    let mut expected = keys.to_vec();
    expected.par_sort_unstable();
    assert!(
        got == expected,
        "the sharded sort differs from the sorted keys"
    );
    let work = std::cell::RefCell::new(work);
    timed(
        Some(group),
        || restore(group, &pristine, &mut work.borrow_mut()),
        || {
            group
                .sort_device_into(&mut work.borrow_mut(), &mut out, &Less)
                .expect("sharded sort")
        },
    )
}

/// The in-place sharded sort of `keys` (equal shards, each replaced by its output shard):
/// checked against the sorted keys, then the median ms and phases.
fn sharded_in_place_ms(group: &GpuGroup, keys: &[u32]) -> (f64, [f64; 4]) {
    let n = keys.len();
    let pristine = group.upload(&shards_of(group, keys)).expect("upload");
    let mut work = group.upload(&shards_of(group, keys)).expect("upload");
    group
        .sort_device_in_place(&mut work, &Less)
        .expect("sharded sort in place");
    let mut got = vec![0u32; n];
    group.download(&work, &mut got).expect("download");
    let mut expected = keys.to_vec();
    expected.par_sort_unstable();
    assert!(got == expected, "the in-place sharded sort differs");
    let work = std::cell::RefCell::new(work);
    timed(
        Some(group),
        || restore(group, &pristine, &mut work.borrow_mut()),
        || {
            group
                .sort_device_in_place(&mut work.borrow_mut(), &Less)
                .expect("sharded sort in place")
        },
    )
}

/// A sum of a well-mixed hash of every key: equal for two orders of the same keys, and (with
/// overwhelming probability) different where a key was lost or duplicated.
fn key_hash_sum(keys: &[u32]) -> u64 {
    keys.par_iter()
        .map(|&k| {
            let mut z = u64::from(k).wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .reduce(|| 0, u64::wrapping_add)
}

/// Bytes of device memory a one-GPU mergesort of a key takes: the keys and the sort's second
/// buffer.
const ONE_GPU_BYTES_PER_U32: usize = 2 * 4;
/// How far past one GPU's capacity the capacity run goes: its keys' sort on one GPU would need
/// this many times that GPU's whole memory.
const PAST_ONE_GPU: f64 = 1.25;
/// Selects the capacity run: more u32 keys than one GPU's sort can hold, sorted in place.
const BEYOND_ENV: &str = "TWOPHASE_BENCH_BEYOND";

/// The capacity run: `PAST_ONE_GPU` times the u32 keys one GPU's sort holds (by GPU 0's total
/// memory), generated on the host in equal shards, sorted in place across the group once, and
/// checked: every output shard of its exact size, the concatenation ascending, and the same
/// multiset (a hash sum over the keys, taken as they were made).
fn beyond_one_gpu(group: &GpuGroup) {
    let gpus = group.gpus();
    let (free, total_memory) = gpus[0].context().mem_get_info().expect("memory info");
    let n = (total_memory as f64 * PAST_ONE_GPU / ONE_GPU_BYTES_PER_U32 as f64) as usize;
    let p = gpus.len();
    println!(
        "capacity run: {n} u32 keys ({:.1} GiB) on {p} GPUs; one GPU's sort of them needs {:.1} GiB, GPU 0 has {:.1} GiB ({:.1} free)",
        (n * 4) as f64 / GIB,
        (n * ONE_GPU_BYTES_PER_U32) as f64 / GIB,
        total_memory as f64 / GIB,
        free as f64 / GIB
    );
    let start = Instant::now();
    let mut keys = vec![0u32; n];
    keys.par_chunks_mut(1 << 20)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (j, key) in chunk.iter_mut().enumerate() {
                *key = splitmix_u32(c * (1 << 20) + j);
            }
        });
    let hash = key_hash_sum(&keys);
    let mut shards = group.upload(&shards_of(group, &keys)).expect("upload");
    println!(
        "made and uploaded in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let start = Instant::now();
    group
        .sort_device_in_place(&mut shards, &Less)
        .expect("capacity sort");
    let ms = start.elapsed().as_secs_f64() * MS;
    let phases = group.last_phases();
    group.download(&shards, &mut keys).expect("download");
    let sorted = keys.par_windows(2).all(|w| w[0] <= w[1]);
    let kept = key_hash_sum(&keys) == hash;
    for (i, shard) in shards.iter().enumerate() {
        assert_eq!(shard.len(), group.output_len(i, n), "output shard {i}");
    }
    assert!(
        sorted && kept,
        "capacity run: sorted {sorted}, keys kept {kept}"
    );
    println!(
        "capacity run sorted and checked: {ms:.1} ms ({:.2} Gkeys/s); sort {:.1}, cuts {:.1}, exchange {:.1}, merge {:.1} ms",
        n as f64 / (ms / MS) / 1e9,
        phases.sort.as_secs_f64() * MS,
        phases.cuts.as_secs_f64() * MS,
        phases.exchange.as_secs_f64() * MS,
        phases.merge.as_secs_f64() * MS
    );
}

/// The capacity run's keys: SplitMix64 of the position, low 32 bits.
fn splitmix_u32(i: usize) -> u32 {
    let mut z = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

/// The sharded sort of `keys` with their positions as values: checked against the stable sort
/// of the pairs, then the median ms and phases.
fn sharded_pairs_ms(group: &GpuGroup, keys: &[u32], values: &[u32]) -> (f64, [f64; 4]) {
    let n = keys.len();
    let pristine = group.upload(&shards_of(group, keys)).expect("upload");
    let pristine_values = group.upload(&shards_of(group, values)).expect("upload");
    let mut work = group.upload(&shards_of(group, keys)).expect("upload");
    let mut work_values = group.upload(&shards_of(group, values)).expect("upload");
    let mut out = group.output_shards::<u32>(n).expect("outputs");
    let mut out_values = group.output_shards::<u32>(n).expect("outputs");
    group
        .sort_pairs_device_into(
            (&mut work, &mut work_values),
            (&mut out, &mut out_values),
            &Less,
        )
        .expect("sharded pairs");
    let (mut got, mut got_values) = (vec![0u32; n], vec![0u32; n]);
    group.download(&out, &mut got).expect("download");
    group
        .download(&out_values, &mut got_values)
        .expect("download");
    let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    // The values are the positions, so the lexicographic order is the stable one.
    expected.par_sort_unstable();
    let got: Vec<(u32, u32)> = got.into_iter().zip(got_values).collect();
    assert!(
        got == expected,
        "the sharded pairs sort differs from the stable sort"
    );
    let work = std::cell::RefCell::new((work, work_values));
    timed(
        Some(group),
        || {
            let (keys, values) = &mut *work.borrow_mut();
            restore(group, &pristine, keys);
            restore(group, &pristine_values, values);
        },
        || {
            let (keys, values) = &mut *work.borrow_mut();
            group
                .sort_pairs_device_into((keys, values), (&mut out, &mut out_values), &Less)
                .expect("sharded pairs");
        },
    )
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
    if std::env::var(BEYOND_ENV).is_ok() {
        if gpus[0].context().ordinal() == gpus[1].context().ordinal() {
            println!("capacity run skipped: the handles share one device");
        } else {
            beyond_one_gpu(&group);
        }
        return;
    }
    println!("| keys | n (all GPUs) | one GPU ms | sharded ms | speed-up | sort | cuts | exchange | merge | exchange GB/s (bytes crossing) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for log2n in TOTAL_LOG2N {
        if std::env::var(LOG2N_ENV).is_ok_and(|l| l != log2n.to_string()) {
            continue;
        }
        let n = 1usize << log2n;
        let p = gpus.len();
        let keys: Vec<u32> = random_keys(n, rand::random());
        let one = single_gpu_ms(&gpus[0], &keys, None);
        if std::env::var(ONE_SHARD_ENV).is_ok() {
            let shard = &keys[..shard_boundary(1, p, n)];
            let alone = single_gpu_ms(&gpus[0], shard, None);
            println!("one shard (2^{log2n} / {p} u32 keys) sorted alone on GPU 0: {alone:.3} ms");
        }
        // A sweep of one setting (a comma-separated list in its variable): the u32 row alone,
        // once a value.
        let sweeps: [Sweep; 2] = [
            (
                CUT_PROBES_ENV,
                &|v| group.set_cut_probes(v),
                "cuts of {} probes a round",
            ),
            (
                CHUNK_BYTES_ENV,
                &|v| group.set_stream_chunk_bytes(v),
                "chunks of {} bytes or more",
            ),
        ];
        if let Some((list, set, label)) = sweeps
            .iter()
            .find_map(|(env, set, label)| Some((std::env::var(env).ok()?, set, label)))
        {
            for value in list
                .split(',')
                .filter_map(|v| v.trim().parse::<usize>().ok())
            {
                set(value);
                let name = format!("u32, {}", label.replace("{}", &value.to_string()));
                print_shipped_row(&group, &name, (log2n, 4), one, sharded_ms(&group, &keys));
            }
            continue;
        }
        let u64_only = std::env::var(U64_ONLY_ENV).is_ok();
        // A row, and with LEAD_OFF_ENV the same row without the lead, alternating.
        let rows = |name: &str, pair_bytes: usize, one: f64, run: &dyn Fn() -> (f64, [f64; 4])| {
            if std::env::var(LEAD_OFF_ENV).is_err() {
                print_shipped_row(&group, name, (log2n, pair_bytes), one, run());
                return;
            }
            for _ in 0..LEAD_ROUNDS {
                for lead in [true, false] {
                    group.set_lead_exchange(lead);
                    let label = if lead {
                        name.to_owned()
                    } else {
                        format!("{name}, exchange after the sort")
                    };
                    let row = run();
                    if lead {
                        print_shipped_row(&group, &label, (log2n, pair_bytes), one, row);
                    } else {
                        print_row(&label, log2n, p, pair_bytes, one, row);
                    }
                }
            }
            group.set_lead_exchange(true);
        };
        if !u64_only {
            rows("u32", 4, one, &|| sharded_ms(&group, &keys));
            let in_place = sharded_in_place_ms(&group, &keys);
            print_row("u32 in place", log2n, p, 4, one, in_place);
        }
        if log2n > WIDE_LOG2N_LIMIT {
            continue;
        }
        if !u64_only {
            let values: Vec<u32> = (0..n as u32).collect();
            let one = single_gpu_ms(&gpus[0], &keys, Some(&values));
            rows("u32 + u32 values", 8, one, &|| {
                sharded_pairs_ms(&group, &keys, &values)
            });
        }
        let wide: Vec<u64> = random_keys(n, rand::random());
        let one = single_gpu_ms(&gpus[0], &wide, None);
        rows("u64", 8, one, &|| sharded_ms(&group, &wide));
        if let Ok(lists) = std::env::var(CHUNK_WEIGHTS_ENV) {
            let lists: Vec<Vec<usize>> = lists
                .split(',')
                .map(|list| {
                    list.split(':')
                        .filter_map(|w| w.trim().parse().ok())
                        .collect()
                })
                .collect();
            for _ in 0..WEIGHT_ROUNDS {
                for weights in &lists {
                    if let Err(error) = group.set_stream_chunk_weights(weights) {
                        println!("weights {weights:?}: {error}");
                        continue;
                    }
                    let name = format!("u64, chunks {weights:?}");
                    print_shipped_row(&group, &name, (log2n, 8), one, sharded_ms(&group, &wide));
                }
            }
            group
                .set_stream_chunk_weights(&SHIPPED_CHUNK_WEIGHTS)
                .expect("the shipped weights");
        }
    }
}

/// One table row of a sort into output shards as the group ships it: led on two devices through
/// NCCL ([`print_led_row`]), else [`print_row`]; `(log2n, pair_bytes)` as there.
fn print_shipped_row(
    group: &GpuGroup,
    name: &str,
    (log2n, pair_bytes): (u32, usize),
    one: f64,
    row: (f64, [f64; 4]),
) {
    if group.exchange_name() == "nccl" && group.gpus().len() == 2 {
        print_led_row(name, log2n, one, row);
    } else {
        print_row(name, log2n, group.gpus().len(), pair_bytes, one, row);
    }
}

/// One table row of a sort that led its exchange: as [`print_row`], but no crossing rate, since
/// most of the exchange ran inside the sort column (the exchange column is what was left after
/// the cuts).
fn print_led_row(name: &str, log2n: u32, one: f64, sharded: (f64, [f64; 4])) {
    let (ms, [sort, cuts, exchange, merge]) = sharded;
    println!(
        "| {name} | 2^{log2n} | {one:.3} | {ms:.3} | {:.2}x | {sort:.3} | {cuts:.3} | {exchange:.3} | {merge:.3} | (inside the sort) |",
        one / ms
    );
}

/// A setting swept by the benchmark: its variable, how the group takes a value, the row's label
/// (`{}` the value).
type Sweep<'s> = (&'static str, &'s dyn Fn(usize), &'static str);

/// One table row: one GPU's time `one` against the group's `(ms, phases)` for `n` keys of
/// `pair_bytes` bytes with their values.
fn print_row(
    name: &str,
    log2n: u32,
    p: usize,
    pair_bytes: usize,
    one: f64,
    sharded: (f64, [f64; 4]),
) {
    let (ms, [sort, cuts, exchange, merge]) = sharded;
    let n = 1usize << log2n;
    // Random keys: each shard keeps 1/p of its keys and sends the rest.
    let crossing = (n - n / p) * pair_bytes;
    let gbs = crossing as f64 / (exchange / MS) / 1e9;
    println!(
        "| {name} | 2^{log2n} | {one:.3} | {ms:.3} | {:.2}x | {sort:.3} | {cuts:.3} | {exchange:.3} | {merge:.3} | {gbs:.1} |",
        one / ms
    );
}
