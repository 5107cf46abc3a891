//! GPU graph benchmark: a mergesort, a merge and a load-balancing search at 2^20, as ordinary calls and as one captured CUDA graph replayed.
//!
//! Run on a GPU machine (see scripts/device.sh). Prints markdown table rows. Every timed run
//! first restores the sort's unsorted keys with a device-to-device copy (the sort is in place);
//! the copy's own time, measured the same way, is subtracted.

mod common;

use std::time::Instant;

use common::{device_name, median, open_gpu, time_events};
use rand::{Rng, SeedableRng};
use twophase::gpu::{
    Gpu, Less, MergeAlgorithm, MergeBuffers, MergeScratch, MergesortScratch, SortBuffers,
};
use twophase_gpu::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use twophase_gpu::cudarc::driver::CudaSlice;
use twophase_gpu::SearchScratch;

/// Untimed runs first.
const WARMUP: usize = 10;
/// Timed runs; the median is reported.
const REPS: usize = 101;
/// Keys of the sort and of each merge input, and work items of the load-balancing search.
const LOG2N: u32 = 20;
/// Segments of the load-balancing search.
const SEGMENTS: usize = 1 << 16;

/// The three calls' device buffers and scratch.
struct Work {
    pristine: CudaSlice<u32>,
    keys: CudaSlice<u32>,
    a: CudaSlice<u32>,
    b: CudaSlice<u32>,
    merged: CudaSlice<u32>,
    scan: CudaSlice<u32>,
    segments: CudaSlice<u32>,
    sort_scratch: MergesortScratch,
    merge_scratch: MergeScratch,
    search_scratch: SearchScratch,
}

impl Work {
    /// The sort's keys restored (a device-to-device copy).
    fn restore(&mut self, gpu: &Gpu) {
        gpu.stream()
            .memcpy_dtod(&self.pristine, &mut self.keys)
            .expect("restore");
    }

    /// The three calls, asynchronous on the handle's stream.
    fn issue(&mut self, gpu: &Gpu) {
        gpu.sort_device(
            SortBuffers::keys(&mut self.keys),
            &Less,
            None,
            &mut self.sort_scratch,
        )
        .expect("sort");
        gpu.merge_device(
            MergeBuffers::keys(&self.a, &self.b, &mut self.merged),
            &Less,
            MergeAlgorithm::TwoPhase(None),
            &mut self.merge_scratch,
        )
        .expect("merge");
        gpu.load_balance_search_device(
            &self.scan,
            1 << LOG2N,
            &mut self.segments,
            None,
            None,
            &mut self.search_scratch,
        )
        .expect("search");
    }
}

/// Median host-clock ms of `reps` runs of `f` each followed by a synchronize, after `warmup`.
fn time_host(gpu: &Gpu, warmup: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut times = Vec::with_capacity(reps);
    for rep in 0..warmup + reps {
        gpu.stream().synchronize().expect("sync");
        let start = Instant::now();
        f();
        gpu.stream().synchronize().expect("sync");
        if rep >= warmup {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    median(times)
}

fn main() {
    let Some(gpu) = open_gpu() else {
        return;
    };
    let n = 1usize << LOG2N;
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let sorted = |rng: &mut rand::rngs::StdRng| {
        let mut v: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        v.sort_unstable();
        v
    };
    let (a, b) = (sorted(&mut rng), sorted(&mut rng));
    let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let mut scan: Vec<u32> = (0..SEGMENTS).map(|_| rng.gen_range(0..n as u32)).collect();
    scan[0] = 0;
    scan.sort_unstable();
    let stream = gpu.stream().clone();
    let up = |v: &[u32]| stream.clone_htod(v).expect("upload");
    let mut work = Work {
        pristine: up(&keys),
        keys: up(&keys),
        a: up(&a),
        b: up(&b),
        merged: stream.alloc_zeros(2 * n).expect("alloc"),
        scan: up(&scan),
        segments: stream.alloc_zeros(n).expect("alloc"),
        sort_scratch: MergesortScratch::new(),
        merge_scratch: MergeScratch::new(),
        search_scratch: SearchScratch::new(),
    };

    // Correctness first (ordinary calls, then the graph on poisoned outputs): the sort against
    // std, the merge against std's sort of both inputs.
    let mut expected_sort = keys.clone();
    expected_sort.sort_unstable();
    let mut expected_merge = [a, b].concat();
    expected_merge.sort_unstable();
    let assert_results = |work: &Work, what: &str| {
        let got = stream.clone_dtoh(&work.keys).expect("download");
        assert!(got == expected_sort, "{what}: the sort differs from std");
        let got = stream.clone_dtoh(&work.merged).expect("download");
        assert!(got == expected_merge, "{what}: the merge differs from std");
    };
    work.issue(&gpu);
    assert_results(&work, "ordinary calls");
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .expect("begin capture");
    work.issue(&gpu);
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .expect("end capture")
        .expect("a graph");
    graph.upload().expect("upload graph");
    work.restore(&gpu);
    stream
        .memset_zeros(&mut work.merged)
        .expect("poison the merge output");
    graph.launch().expect("replay");
    assert_results(&work, "graph replay");

    let copy_events = time_events(&gpu, WARMUP, REPS, |_| work.restore(&gpu));
    let copy_host = time_host(&gpu, WARMUP, REPS, || work.restore(&gpu));
    let calls_events = time_events(&gpu, WARMUP, REPS, |_| {
        work.restore(&gpu);
        work.issue(&gpu);
    });
    let calls_host = time_host(&gpu, WARMUP, REPS, || {
        work.restore(&gpu);
        work.issue(&gpu);
    });
    let graph_events = time_events(&gpu, WARMUP, REPS, |_| {
        work.restore(&gpu);
        graph.launch().expect("replay");
    });
    let graph_host = time_host(&gpu, WARMUP, REPS, || {
        work.restore(&gpu);
        graph.launch().expect("replay");
    });
    println!(
        "device: {}; mergesort of 2^{LOG2N} u32, merge of 2^{LOG2N} + 2^{LOG2N} u32, \
         load-balancing search of 2^{LOG2N} items in {SEGMENTS} segments",
        device_name(&gpu)
    );
    println!("| how | device events: ms | host clock, to synchronize: ms |");
    println!("|---|---|---|");
    println!(
        "| three ordinary calls | {:.4} | {:.4} |",
        calls_events - copy_events,
        calls_host - copy_host
    );
    println!(
        "| one graph replay | {:.4} | {:.4} |",
        graph_events - copy_events,
        graph_host - copy_host
    );
    println!(
        "| replay / calls | {:.3} | {:.3} |",
        (graph_events - copy_events) / (calls_events - copy_events),
        (graph_host - copy_host) / (calls_host - copy_host)
    );
}
