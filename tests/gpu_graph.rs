//! GPU test (needs a CUDA GPU; run with --include-ignored): device-buffer calls captured into one CUDA graph and replayed on fresh data.

mod common;

use common::{gpu, rng};
use rand::rngs::StdRng;
use rand::Rng;
use twophase::gpu::{
    DeviceSegments, Gpu, Less, MergeAlgorithm, MergeBuffers, MergeScratch, MergesortScratch,
    SegmentedSortScratch, SortBuffers,
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

/// A segmented sort of pairs captured into a graph (after one ordinary call grew its scratch) and
/// replayed on fresh keys and fresh offsets in the same buffers, each replay checked against std
/// per segment: no allocation, synchronization or read-back inside the call.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_segmented_sort_replays_from_a_graph() {
    let (gpu, mut rng) = (gpu(), rng());
    let stream = gpu.stream().clone();
    // Offsets of `SEGMENTS` segments, the first at 0, drawn afresh each round.
    let draw = |rng: &mut StdRng| {
        let mut starts: Vec<u64> = (0..SEGMENTS)
            .map(|_| rng.gen_range(0..KEYS as u64))
            .collect();
        starts[0] = 0;
        starts.sort_unstable();
        let keys: Vec<u32> = (0..KEYS).map(|_| rng.gen_range(0..1000)).collect();
        (starts, keys)
    };
    let mut keys = stream.alloc_zeros::<u32>(KEYS).expect("alloc");
    let mut values = stream.alloc_zeros::<u32>(KEYS).expect("alloc");
    let mut starts = stream.alloc_zeros::<u64>(SEGMENTS).expect("alloc");
    let mut scratch = SegmentedSortScratch::new();
    let tags: Vec<u32> = (0..KEYS as u32).collect();
    let round = |rng: &mut StdRng,
                 keys: &mut CudaSlice<u32>,
                 values: &mut CudaSlice<u32>,
                 starts_buf: &mut CudaSlice<u64>| {
        let (starts, host_keys) = draw(rng);
        stream.memcpy_htod(&host_keys, keys).expect("upload keys");
        stream.memcpy_htod(&tags, values).expect("upload values");
        stream
            .memcpy_htod(&starts, starts_buf)
            .expect("upload starts");
        (starts, host_keys)
    };
    let sort = |keys: &mut CudaSlice<u32>,
                values: &mut CudaSlice<u32>,
                starts: &CudaSlice<u64>,
                scratch: &mut SegmentedSortScratch| {
        gpu.segmented_sort_device(
            SortBuffers::pairs(keys, values),
            DeviceSegments::Starts(starts),
            &Less,
            None,
            scratch,
        )
    };
    let check = |starts: &[u64],
                 host_keys: &[u32],
                 keys: &CudaSlice<u32>,
                 values: &CudaSlice<u32>,
                 what: &str| {
        let got_keys = stream.clone_dtoh(keys).expect("download");
        let got_values = stream.clone_dtoh(values).expect("download");
        let mut expected: Vec<(u32, u32)> = host_keys
            .iter()
            .copied()
            .zip(tags.iter().copied())
            .collect();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(KEYS, |&e| e as usize);
            expected[start as usize..end].sort_by_key(|p| p.0);
        }
        let got: Vec<(u32, u32)> = got_keys.into_iter().zip(got_values).collect();
        assert!(got == expected, "{what}: differs from std per segment");
    };
    let (s, k) = round(&mut rng, &mut keys, &mut values, &mut starts);
    sort(&mut keys, &mut values, &starts, &mut scratch).expect("ordinary call");
    scratch.check(&gpu).expect("ordinary call's status");
    check(&s, &k, &keys, &values, "ordinary call");

    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .expect("begin capture");
    let issued = sort(&mut keys, &mut values, &starts, &mut scratch);
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .expect("end capture");
    issued.expect("call under capture");
    let graph = graph.expect("a graph with the call's launches");
    for replay in 0..REPLAYS {
        let (s, k) = round(&mut rng, &mut keys, &mut values, &mut starts);
        graph.launch().expect("replay");
        stream.synchronize().expect("replay ran");
        scratch.check(&gpu).expect("replay status");
        check(&s, &k, &keys, &values, &format!("replay {replay}"));
    }
}
