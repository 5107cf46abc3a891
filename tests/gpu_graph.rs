//! GPU test (needs a CUDA GPU; run with --include-ignored): device-buffer calls captured into one CUDA graph and replayed on fresh data.

mod common;

use common::{gpu, rng};
use rand::rngs::StdRng;
use rand::Rng;
use twophase::gpu::{
    Gpu, Less, MergeAlgorithm, MergeBuffers, MergeScratch, MergesortScratch, SortBuffers,
};
use twophase_gpu::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use twophase_gpu::cudarc::driver::CudaSlice;
use twophase_gpu::{GpuError, SearchScratch};

/// Keys of the sort and of each merge input, and work items of the load-balancing search.
const KEYS: usize = 1 << 20;
/// Segments of the load-balancing search.
const SEGMENTS: usize = 1 << 16;
/// Replays of the captured graph, each on fresh data.
const REPLAYS: usize = 4;

/// Device buffers of the three calls, reused by every replay: the graph captured their addresses.
struct Buffers {
    sort_keys: CudaSlice<u32>,
    a: CudaSlice<u32>,
    b: CudaSlice<u32>,
    merged: CudaSlice<u32>,
    scan: CudaSlice<u32>,
    segments: CudaSlice<u32>,
}

/// One round's inputs, and what the CPU says the calls must give.
struct Round {
    sort_keys: Vec<u32>,
    a: Vec<u32>,
    b: Vec<u32>,
    scan: Vec<u32>,
}

impl Round {
    /// Fresh random inputs; with `unsorted_a`, the merge's `a` has one pair out of order.
    fn new(rng: &mut StdRng, unsorted_a: bool) -> Round {
        let sorted = |rng: &mut StdRng| {
            let mut v: Vec<u32> = (0..KEYS).map(|_| rng.gen_range(0..1 << 24)).collect();
            v.sort_unstable();
            v
        };
        let mut a = sorted(rng);
        if unsorted_a {
            a.swap(KEYS / 3, KEYS - 5);
        }
        // Segment starts: a sorted draw below the item count, the first at 0.
        let mut scan: Vec<u32> = (0..SEGMENTS)
            .map(|_| rng.gen_range(0..KEYS as u32))
            .collect();
        scan[0] = 0;
        scan.sort_unstable();
        Round {
            sort_keys: (0..KEYS).map(|_| rng.gen()).collect(),
            a,
            b: sorted(rng),
            scan,
        }
    }

    /// Copy the inputs into the buffers the graph reads.
    fn upload(&self, gpu: &Gpu, buffers: &mut Buffers) {
        let stream = gpu.stream();
        stream
            .memcpy_htod(&self.sort_keys, &mut buffers.sort_keys)
            .expect("upload sort keys");
        stream
            .memcpy_htod(&self.a, &mut buffers.a)
            .expect("upload a");
        stream
            .memcpy_htod(&self.b, &mut buffers.b)
            .expect("upload b");
        stream
            .memcpy_htod(&self.scan, &mut buffers.scan)
            .expect("upload scan");
    }

    /// Assert the three results against the CPU: std's sort, std's merge of the halves, and each
    /// item's segment by binary search of the scan.
    fn assert_results(&self, gpu: &Gpu, buffers: &Buffers, what: &str) {
        let stream = gpu.stream();
        let mut expected = self.sort_keys.clone();
        expected.sort_unstable();
        let got = stream.clone_dtoh(&buffers.sort_keys).expect("download");
        assert!(got == expected, "{what}: the sort differs from std");
        let mut merged = [self.a.clone(), self.b.clone()].concat();
        merged.sort(); // stable: the same keys in the same order as a merge of sorted inputs
        let got = stream.clone_dtoh(&buffers.merged).expect("download");
        assert!(got == merged, "{what}: the merge differs from std");
        let got = stream.clone_dtoh(&buffers.segments).expect("download");
        for (item, &segment) in got.iter().enumerate() {
            let want = self.scan.partition_point(|&start| start as usize <= item) - 1;
            assert_eq!(segment as usize, want, "{what}: item {item}'s segment");
        }
    }
}

/// The three calls, as an ordinary caller issues them (asynchronous, on the handle's stream).
fn issue_calls(
    gpu: &Gpu,
    buffers: &mut Buffers,
    scratch: &mut (MergesortScratch, MergeScratch, SearchScratch),
) -> Result<(), GpuError> {
    gpu.sort_device(
        SortBuffers::keys(&mut buffers.sort_keys),
        &Less,
        None,
        &mut scratch.0,
    )?;
    gpu.merge_device(
        MergeBuffers::keys(&buffers.a, &buffers.b, &mut buffers.merged),
        &Less,
        MergeAlgorithm::TwoPhase(None),
        &mut scratch.1,
    )?;
    gpu.load_balance_search_device(
        &buffers.scan,
        KEYS,
        &mut buffers.segments,
        None,
        None,
        &mut scratch.2,
    )
}

/// A mergesort, a merge and a load-balancing search captured into one CUDA graph after one
/// ordinary round (which compiles the programs and grows the scratch), then replayed on fresh
/// inputs, each replay checked against the CPU. One replay's merge input is unsorted: its
/// scratch reports it, and the next replay on sorted input is exact again (the capture cleared
/// the repair slots, which every replay tags with the same generations).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_sort_a_merge_and_a_search_replay_from_one_graph() {
    let (gpu, mut rng) = (gpu(), rng());
    let stream = gpu.stream().clone();
    let alloc = |n: usize| stream.alloc_zeros::<u32>(n).expect("alloc");
    let mut buffers = Buffers {
        sort_keys: alloc(KEYS),
        a: alloc(KEYS),
        b: alloc(KEYS),
        merged: alloc(2 * KEYS),
        scan: alloc(SEGMENTS),
        segments: alloc(KEYS),
    };
    let mut scratch = (
        MergesortScratch::new(),
        MergeScratch::new(),
        SearchScratch::new(),
    );

    let round = Round::new(&mut rng, false);
    round.upload(&gpu, &mut buffers);
    issue_calls(&gpu, &mut buffers, &mut scratch).expect("ordinary calls");
    round.assert_results(&gpu, &buffers, "ordinary calls");

    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .expect("begin capture");
    let issued = issue_calls(&gpu, &mut buffers, &mut scratch);
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .expect("end capture");
    issued.expect("calls under capture");
    let graph = graph.expect("a graph with the calls' launches");

    for replay in 0..REPLAYS {
        let unsorted_a = replay == 1;
        let round = Round::new(&mut rng, unsorted_a);
        round.upload(&gpu, &mut buffers);
        graph.launch().expect("replay");
        stream.synchronize().expect("replay ran");
        let what = format!("replay {replay}");
        scratch.0.check(&gpu).expect("sort status");
        scratch.2.check(&gpu).expect("search status");
        if unsorted_a {
            let err = scratch
                .1
                .check(&gpu)
                .expect_err("an unsorted `a` is reported");
            assert!(
                matches!(&err, GpuError::InvalidInput(m) if m.contains("`a`")),
                "{what}: {err:?}"
            );
            continue;
        }
        scratch.1.check(&gpu).expect("merge status");
        round.assert_results(&gpu, &buffers, &what);
    }
}
