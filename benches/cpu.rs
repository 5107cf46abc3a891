//! CPU benchmarks: two-phase mergesort (natural order, and a closure) vs `slice::sort` and rayon `par_sort`, merge vs sequential, segmented sort vs std per segment, searches vs binary searches.

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rayon::prelude::*;
use std::time::Duration;
use twophase::cpu;

/// Sizes the issue asks for: 1M and 16M keys.
const SIZES: [usize; 2] = [1 << 20, 1 << 24];
/// Fixed seed so that every run sorts the same keys.
const SEED: u64 = 0x7e0_9a5e;
/// Samples per benchmark: a 16M sort takes around a second on two cores, so criterion's default
/// of 100 would take minutes per line.
const SAMPLES: usize = 10;
/// Warm-up before the samples of each benchmark.
const WARM_UP: Duration = Duration::from_secs(1);

fn random<T>(n: usize) -> Vec<T>
where
    rand::distributions::Standard: rand::distributions::Distribution<T>,
{
    let mut rng = StdRng::seed_from_u64(SEED);
    (0..n).map(|_| rng.gen()).collect()
}

/// The textbook sequential merge, the baseline the parallel merge is compared with.
fn sequential_merge<T: Copy + Ord>(a: &[T], b: &[T], out: &mut [T]) {
    let (mut i, mut j) = (0, 0);
    for o in out.iter_mut() {
        if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
            *o = a[i];
            i += 1;
        } else {
            *o = b[j];
            j += 1;
        }
    }
}

/// A benchmark group `<primitive>_<key>` sampled this file's way: [`SAMPLES`] samples after a
/// [`WARM_UP`].
fn group<'c>(c: &'c mut Criterion, primitive: &str, key: &str) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(format!("{primitive}_{key}"));
    group.sample_size(SAMPLES).warm_up_time(WARM_UP);
    group
}

/// The sort group (`sort_<name>`) and the merge group (`merge_<name>`) of key type `T`.
fn key_groups<T>(c: &mut Criterion, name: &str)
where
    T: Copy + Ord + Send + Sync + twophase::order::NaturalOrder,
    rand::distributions::Standard: rand::distributions::Distribution<T>,
{
    let mut sort = group(c, "sort", name);
    for n in SIZES {
        let input = random::<T>(n);
        sort.throughput(Throughput::Elements(n as u64));
        sort.bench_with_input(
            BenchmarkId::new("twophase_mergesort", n),
            &input,
            |bench, input| {
                bench.iter_batched_ref(
                    || input.clone(),
                    |v| cpu::mergesort(v),
                    BatchSize::LargeInput,
                )
            },
        );
        sort.bench_with_input(
            BenchmarkId::new("twophase_mergesort_by_closure", n),
            &input,
            |bench, input| {
                bench.iter_batched_ref(
                    || input.clone(),
                    |v| cpu::mergesort_by(v, twophase::order::less),
                    BatchSize::LargeInput,
                )
            },
        );
        sort.bench_with_input(
            BenchmarkId::new("rayon_par_sort", n),
            &input,
            |bench, input| {
                bench.iter_batched_ref(|| input.clone(), |v| v.par_sort(), BatchSize::LargeInput)
            },
        );
        sort.bench_with_input(BenchmarkId::new("std_sort", n), &input, |bench, input| {
            bench.iter_batched_ref(|| input.clone(), |v| v.sort(), BatchSize::LargeInput)
        });
    }
    sort.finish();

    let mut merge = group(c, "merge", name);
    for n in SIZES {
        let mut keys = random::<T>(n);
        let (a, b) = keys.split_at_mut(n / 2);
        a.sort_unstable();
        b.sort_unstable();
        let (a, b) = (a.to_vec(), b.to_vec());
        let mut out = keys.clone();
        merge.throughput(Throughput::Elements(n as u64));
        merge.bench_function(BenchmarkId::new("twophase_merge", n), |bench| {
            bench.iter(|| cpu::merge_into_by(&a, &b, &mut out, |x: &T, y: &T| x < y))
        });
        merge.bench_function(BenchmarkId::new("sequential_merge", n), |bench| {
            bench.iter(|| sequential_merge(&a, &b, &mut out))
        });
    }
    merge.finish();
}

/// Keys of the segmented-sort group.
const SEGMENTED_KEYS: usize = 1 << 24;
/// The segment lengths of that group: uniform in 1..=this (mean about 1000), the issue's
/// "uniform 1..2000" mix.
const SEGMENT_MAX: usize = 2000;

/// `sort` run on every segment `[starts[i], ends[i])` of `keys` in parallel on rayon: what a
/// user would write without a segmented sort.
fn par_per_segment(
    keys: &mut [u32],
    starts: &[usize],
    ends: &[usize],
    sort: impl Fn(&mut [u32]) + Sync + Send,
) {
    let mut rest = keys;
    let mut pieces = Vec::with_capacity(starts.len());
    for (&s, &e) in starts.iter().zip(ends) {
        let (piece, tail) = rest.split_at_mut(e - s);
        pieces.push(piece);
        rest = tail;
    }
    pieces.into_par_iter().for_each(sort);
}

/// `segmented_u32`: each of about 16k segments of 2^24 u32 keys sorted, by the segmented sort,
/// by std's `sort_unstable` on each segment in turn, and by rayon running that on every segment
/// in parallel (what a user would write without a segmented sort); then under a closure, by the
/// segmented sort and by rayon running std's stable sort on every segment.
fn segmented_group(c: &mut Criterion) {
    let mut rng = StdRng::seed_from_u64(SEED);
    let input = random::<u32>(SEGMENTED_KEYS);
    let mut starts = vec![0];
    let mut at = 0;
    loop {
        at += rng.gen_range(1..=SEGMENT_MAX);
        if at >= SEGMENTED_KEYS {
            break;
        }
        starts.push(at);
    }
    let ends: Vec<usize> = starts[1..]
        .iter()
        .copied()
        .chain([SEGMENTED_KEYS])
        .collect();
    let mut group = group(c, "segmented", "u32");
    group.throughput(Throughput::Elements(SEGMENTED_KEYS as u64));
    let id = |name| BenchmarkId::new(name, SEGMENTED_KEYS);
    group.bench_function(id("twophase_segmented_sort"), |bench| {
        bench.iter_batched_ref(
            || input.clone(),
            |v| cpu::segmented_sort(v, cpu::Segments::Starts(&starts)),
            BatchSize::LargeInput,
        )
    });
    group.bench_function(id("std_sort_unstable_per_segment"), |bench| {
        bench.iter_batched_ref(
            || input.clone(),
            |v| {
                for (&s, &e) in starts.iter().zip(&ends) {
                    v[s..e].sort_unstable();
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function(id("rayon_sort_unstable_per_segment"), |bench| {
        bench.iter_batched_ref(
            || input.clone(),
            |v| par_per_segment(v, &starts, &ends, |piece| piece.sort_unstable()),
            BatchSize::LargeInput,
        )
    });
    // A closure the crate cannot vouch for: the segmented sort's block sort, against std's stable
    // sort of each segment on rayon (`sort`, as fast as `sort_by` with an inlined comparison;
    // std's sorts may panic on an order that is not strict weak, the block sort does not).
    group.bench_function(id("twophase_segmented_sort_by"), |bench| {
        bench.iter_batched_ref(
            || input.clone(),
            |v| cpu::segmented_sort_by(v, cpu::Segments::Starts(&starts), |a, b| a < b),
            BatchSize::LargeInput,
        )
    });
    group.bench_function(id("rayon_stable_sort_per_segment"), |bench| {
        bench.iter_batched_ref(
            || input.clone(),
            |v| par_per_segment(v, &starts, &ends, |piece| piece.sort()),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Work items of the load-balancing search: 2^24, in segments of 0 to 7 items (mean 3.5).
const SEARCH_KEYS: usize = 1 << 24;
/// One more than the largest segment of the load-balancing search's input.
const LOAD_BALANCE_SEGMENT_END: usize = 8;

/// `search_u32`: the lower bound of each of 2^24 sorted needles in 2^24 sorted keys, by the
/// sorted search (one merge) and by a binary search per needle (`partition_point`) on one core
/// and on rayon; and the segment of each of 2^24 work items, by the load-balancing search and by
/// a binary search of the segment starts per item on rayon.
fn search_group(c: &mut Criterion) {
    let mut needles = random::<u32>(SEARCH_KEYS);
    needles.sort_unstable();
    let mut haystack: Vec<u32> = needles.iter().map(|x| x.rotate_left(7)).collect();
    haystack.sort_unstable();
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut scan = Vec::new();
    let mut total = 0;
    while total < SEARCH_KEYS {
        scan.push(total);
        total += rng.gen_range(0..LOAD_BALANCE_SEGMENT_END);
    }
    let mut group = group(c, "search", "u32");
    group.throughput(Throughput::Elements(SEARCH_KEYS as u64));
    let id = |name| BenchmarkId::new(name, SEARCH_KEYS);
    group.bench_function(id("twophase_sorted_search"), |bench| {
        bench.iter(|| cpu::sorted_search(&needles, &haystack, cpu::SearchBound::Lower))
    });
    group.bench_function(id("binary_search_per_needle"), |bench| {
        bench.iter(|| {
            needles
                .iter()
                .map(|x| haystack.partition_point(|h| h < x))
                .collect::<Vec<usize>>()
        })
    });
    group.bench_function(id("rayon_binary_search_per_needle"), |bench| {
        bench.iter(|| {
            needles
                .par_iter()
                .map(|x| haystack.partition_point(|h| h < x))
                .collect::<Vec<usize>>()
        })
    });
    group.bench_function(id("twophase_load_balance_search"), |bench| {
        bench.iter(|| cpu::load_balance_search(&scan, total))
    });
    group.bench_function(id("rayon_binary_search_per_item"), |bench| {
        bench.iter(|| {
            (0..total)
                .into_par_iter()
                .map(|item| scan.partition_point(|&start| start <= item) - 1)
                .collect::<Vec<usize>>()
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    key_groups::<u32>(c, "u32");
    key_groups::<u64>(c, "u64");
    segmented_group(c);
    search_group(c);
}

criterion_group!(cpu_benches, benches);
criterion_main!(cpu_benches);
