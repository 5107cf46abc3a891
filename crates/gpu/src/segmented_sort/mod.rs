//! Segmented sort: many independent stable sorts at once, by a block sort of (segment, key) and merge levels over only the segments that straddle runs.

use std::mem::{align_of, size_of};

use cudarc::driver::{CudaSlice, DevicePtr};

use crate::compare::{is_trusted, DeviceComparator};
use crate::error::{check_len, GpuError};
use crate::key::{DeviceKey, DeviceValue};
use crate::mergesort::{
    DeviceSortBuffers, MergesortScratch, SortArgs, SortLaunch, CTA_MERGESORT_CUH,
    CTA_QUAD_MERGE_CUH, MERGESORT_BLOCKSORT_CU, MERGESORT_PARTITION_CUH,
    MERGESORT_QUAD_PARTITION_CUH,
};
use crate::primitive::{value_bytes, ProgramTuning};
use crate::runtime::device::Gpu;
use crate::runtime::launch::ParamLayout;
use crate::runtime::program::{entry_points, CTA_MERGE_CUH, PARTITION_CUH, SERIAL_CUH};
use crate::runtime::staging::{SortAddresses, Staged};
use crate::runtime::status::{
    messages, status_error, InputCheck, StatusNames, STATUS_ORDER_INCONSISTENT,
    STATUS_SEGMENTS_INVALID,
};

mod alone;
mod launch;
mod params;
mod short;
pub mod tuning;

use alone::Routed;
pub use short::SHORT_MAX;
pub use tuning::SegmentedSortTuning;

// The offsets cross to the device as 64-bit words (`size_type`).
const _: () = assert!(size_of::<usize>() == size_of::<u64>());

entry_points! {
    /// Every entry point of a segmented-sort program, in launch order.
    SEGMENTED_SORT_ENTRIES = [
        /// Entry point of the check of the segments.
        SEGMENTED_SORT_ENTRY_CHECK = "twophase_segsort_check",
        /// Entry point of the short path: every segment sorted by one thread, where all are short.
        SEGMENTED_SORT_ENTRY_SHORT = "twophase_segsort_short",
        /// Entry point of the straddles: each pair of runs' straddle at each level.
        SEGMENTED_SORT_ENTRY_STRADDLES = "twophase_segsort_straddles",
        /// Entry point of the plan: each tile's levels and the work lists.
        SEGMENTED_SORT_ENTRY_PLAN = "twophase_segsort_plan",
        /// Entry point of the block sort by (segment, key).
        SEGMENTED_SORT_ENTRY_BLOCKSORT = "twophase_segsort_blocksort",
        /// Entry point of a level's partition kernel.
        SEGMENTED_SORT_ENTRY_PARTITION = "twophase_segsort_partition",
        /// Entry point of a level's check of its partitions (comparators not trusted).
        SEGMENTED_SORT_ENTRY_VERIFY = "twophase_segsort_verify",
        /// Entry point of a level's merge kernel.
        SEGMENTED_SORT_ENTRY_MERGE = "twophase_segsort_merge",
        /// Entry point of a level's four-way cuts (trusted comparators).
        SEGMENTED_SORT_ENTRY_FOUR_WAY_CUTS = "twophase_segsort_four_way_cuts",
        /// Entry point of a level's four-way merge: two levels in one pass over a quad of runs.
        SEGMENTED_SORT_ENTRY_FOUR_WAY_MERGE = "twophase_segsort_four_way_merge",
    ];
}

/// The segmented sort's kernel sources, in the order they follow the prelude: the mergesort's
/// block sort and its definitions, then the segmented sort's kernels.
pub const SEGMENTED_SORT_SOURCES: [&str; 15] = [
    PARTITION_CUH,
    SERIAL_CUH,
    CTA_MERGE_CUH,
    CTA_MERGESORT_CUH,
    MERGESORT_BLOCKSORT_CU,
    // Parameter blocks, segment searches, the masks and the check.
    include_str!("../../kernels/segmented_sort.cu"),
    // The straddles and the plan.
    include_str!("../../kernels/segmented_sort_plan.cu"),
    // The block sort by (piece, key).
    include_str!("../../kernels/cta_segmented_sort.cuh"),
    // The merge levels: their partitions and check, then their merge.
    include_str!("../../kernels/segmented_sort_partitions.cu"),
    include_str!("../../kernels/segmented_sort_levels.cu"),
    // The mergesort's four-way cut search and tile, then the four-way levels.
    MERGESORT_PARTITION_CUH,
    MERGESORT_QUAD_PARTITION_CUH,
    CTA_QUAD_MERGE_CUH,
    include_str!("../../kernels/segmented_sort_four_way.cu"),
    // The short path.
    include_str!("../../kernels/segmented_sort_short.cu"),
];

/// Where the segments of a segmented sort lie in its keys. Keys outside every segment (only
/// possible with [`Segments::Ranges`]) stay where they are.
#[derive(Clone, Copy, Debug)]
pub enum Segments<'a> {
    /// CSR offsets: segment `i` is `starts[i]..starts[i + 1]`, the last one running to the end
    /// of the keys. `starts` begins at 0 (and may be empty only when the keys are), does not
    /// decrease, and stays within the keys' length; a trailing offset equal to that length (the
    /// usual `rows + 1` CSR offsets) is an empty last segment.
    Starts(&'a [usize]),
    /// Segment `i` is `starts[i]..ends[i]`: segments in order and not overlapping
    /// (`ends[i] <= starts[i + 1]`), within the keys, with `starts[i] <= ends[i]`.
    Ranges {
        /// The first key of each segment.
        starts: &'a [usize],
        /// One past the last key of each segment.
        ends: &'a [usize],
    },
}

impl Segments<'_> {
    /// Number of segments.
    pub fn len(&self) -> usize {
        match self {
            Segments::Starts(starts) => starts.len(),
            Segments::Ranges { starts, .. } => starts.len(),
        }
    }

    /// Whether there are no segments.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ends of the segments, where they are given apart from the starts.
    pub fn ends(&self) -> Option<&[usize]> {
        match self {
            Segments::Starts(_) => None,
            Segments::Ranges { ends, .. } => Some(ends),
        }
    }

    /// The starts of the segments, ascending.
    pub fn starts(&self) -> &[usize] {
        match self {
            Segments::Starts(starts) => starts,
            Segments::Ranges { starts, .. } => starts,
        }
    }

    /// Segment `i` as a range of key positions, for segments of `count` keys in all; valid
    /// segments only ([`segments_problem`] found nothing).
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len).
    pub fn segment(&self, i: usize, count: usize) -> std::ops::Range<usize> {
        match self {
            Segments::Starts(starts) => starts[i]..starts.get(i + 1).copied().unwrap_or(count),
            Segments::Ranges { starts, ends } => starts[i]..ends[i],
        }
    }
}

/// What is wrong with `segments` over `count` keys, naming the argument, or `None` when they are
/// valid: the check every segmented sort makes before it touches a key.
pub fn segments_problem(count: usize, segments: Segments<'_>) -> Option<&'static str> {
    match segments {
        Segments::Starts(starts) => {
            if starts.is_empty() {
                return (count > 0).then_some("`starts` must hold at least one segment (start 0)");
            }
            if starts[0] != 0 {
                return Some("`starts` must begin at 0");
            }
            if starts.windows(2).any(|w| w[0] > w[1]) {
                return Some("`starts` must not decrease");
            }
            if starts.last().is_some_and(|&last| last > count) {
                return Some("`starts` must not pass the keys' length");
            }
            None
        }
        Segments::Ranges { starts, ends } => {
            if starts.len() != ends.len() {
                return Some("`starts` and `ends` must have the same length");
            }
            if starts.iter().zip(ends).any(|(s, e)| s > e) {
                return Some("each segment's end must not come before its start");
            }
            if ends.iter().any(|&e| e > count) {
                return Some("`ends` must not pass the keys' length");
            }
            if ends
                .iter()
                .zip(&starts[1.min(starts.len())..])
                .any(|(e, s)| e > s)
            {
                return Some("segments must be in order and must not overlap");
            }
            None
        }
    }
}

/// Segments on the device for [`Gpu::segmented_sort_device`], as [`Segments`] says of host
/// offsets: CSR `starts` (from 0, not decreasing, within the keys), or `starts` and `ends` of
/// segments in order that need not tile the keys. 64-bit offsets.
#[derive(Debug)]
pub enum DeviceSegments<'a, S> {
    /// CSR offsets: segment `i` is `starts[i]..starts[i + 1]`, the last one to the end.
    Starts(&'a S),
    /// Segment `i` is `starts[i]..ends[i]`.
    Ranges {
        /// The first key of each segment.
        starts: &'a S,
        /// One past the last key of each segment.
        ends: &'a S,
    },
}

/// Device scratch of the segmented sort: the other buffer of each tile, the plan (each tile's
/// levels, the straddles, the levels' work lists, partitions and four-way cuts) and the call's
/// control words.
/// They only grow, so repeated sorts of the same or smaller size allocate nothing.
///
/// It also holds the checks of the sorts that use it: segments that are not valid offsets
/// (the sort then touches no key) and a comparator that answered inconsistently (each segment
/// is then a permutation of its keys), which [`check`](Self::check) reports.
#[derive(Debug, Default)]
pub struct SegmentedSortScratch {
    keys: Option<CudaSlice<u8>>,
    values: Option<CudaSlice<u8>>,
    masks: Option<CudaSlice<u64>>,
    straddles: Option<CudaSlice<u64>>,
    lists: Option<CudaSlice<u32>>,
    partitions: Option<CudaSlice<u64>>,
    cuts: Option<CudaSlice<u64>>,
    control: Option<CudaSlice<u32>>,
    input_check: InputCheck,
    /// The plain mergesort's scratch, for the call whose one CSR segment is the whole input.
    mergesort: MergesortScratch,
}

/// What the segmented sort's status bits say.
const SEGMENTED_SORT_STATUS: StatusNames = &[
    (STATUS_SEGMENTS_INVALID, messages::SEGMENTS_INVALID),
    (STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT),
];

impl SegmentedSortScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for this handle's stream, then report whether a device-buffer segmented sort that
    /// used this scratch since the last check was given invalid segments (it touched no key) or
    /// saw its comparator answer inconsistently: `Err(InvalidInput)` naming the argument. The
    /// status is cleared.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        let bits = self.input_check.take_status(gpu)? | self.mergesort.take_status(gpu)?;
        match status_error(bits, SEGMENTED_SORT_STATUS) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// The raw addresses of one call's segments: starts, ends (0 for CSR starts) and their number.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegmentAddresses {
    pub(crate) starts: u64,
    pub(crate) ends: u64,
    pub(crate) count: usize,
}

impl Gpu {
    /// Stable sort of each segment of the device buffers `buffers` under `comp`, in place, all
    /// segments at once: [`SortBuffers::keys`](crate::SortBuffers::keys) or
    /// [`SortBuffers::pairs`](crate::SortBuffers::pairs) (each value moves with its key). At
    /// `tuning`, or (`None`) the shipped one for the types. Asynchronous on this handle's
    /// stream, with no allocation once `scratch` is large enough and no host read-back, so that
    /// it can be captured in a CUDA graph.
    ///
    /// One CSR start (the whole input, when valid) runs the plain mergesort's kernels, which read
    /// the check of the start before touching a key; other segments run the segmented kernels:
    /// where none is longer than [`SHORT_MAX`] keys (and keys and values are at most 8 bytes),
    /// one kernel sorting each segment on one thread, else the tile path. The device picks from
    /// the check's record of whether a segment is longer: every kernel of both paths is
    /// launched, and those of the path not taken return at once.
    ///
    /// The segments are checked on the device: invalid ones leave the keys untouched, and
    /// [`SegmentedSortScratch::check`] (which synchronizes) reports them, as it reports a
    /// comparator that answered inconsistently (each segment then holds a permutation of its
    /// keys). CSR starts that are empty while there are keys are refused here.
    pub fn segmented_sort_device<K, C, B, S>(
        &self,
        buffers: B,
        segments: DeviceSegments<'_, S>,
        comp: &C,
        tuning: Option<SegmentedSortTuning>,
        scratch: &mut SegmentedSortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        B: DeviceSortBuffers<K>,
        S: DevicePtr<u64>,
    {
        let tuning = tuning.unwrap_or_else(|| {
            SegmentedSortTuning::for_types(size_of::<K>(), value_bytes(B::VALUES))
        });
        let stream = self.stream().clone();
        let (starts, ends) = match segments {
            DeviceSegments::Starts(starts) => (starts, None),
            DeviceSegments::Ranges { starts, ends } => {
                check_len("segment ends", starts.len(), ends.len())?;
                (starts, Some(ends))
            }
        };
        let count = starts.len();
        let (starts, _starts) = starts.device_ptr(&stream);
        let ends_guard = ends.map(|ends| ends.device_ptr(&stream));
        let ends = ends_guard.as_ref().map_or(0, |(address, _)| *address);
        buffers.with_args(self, "segmented sort values", |SortArgs(buffers)| {
            self.launch_segmented_sort::<K, C>(
                buffers,
                SegmentAddresses {
                    starts,
                    ends,
                    count,
                },
                comp,
                tuning,
                scratch,
            )
        })
    }

    /// Check `tuning` and the number of segments, then make the launches.
    fn launch_segmented_sort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        buffers: SortAddresses,
        segments: SegmentAddresses,
        comp: &C,
        tuning: SegmentedSortTuning,
        scratch: &mut SegmentedSortScratch,
    ) -> Result<(), GpuError> {
        let value_bytes = value_bytes(buffers.layout);
        tuning.validate(size_of::<K>(), value_bytes)?;
        if segments.ends == 0 && segments.count == 0 && buffers.count > 0 {
            return Err(GpuError::InvalidInput(
                "`starts` must hold at least one segment (start 0)".into(),
            ));
        }
        if buffers.count == 0 || segments.count == 0 {
            return Ok(());
        }
        let kernels = self.program_kernels::<K, C, _>(comp, buffers.layout, tuning)?;
        if segments.ends == 0 && segments.count == 1 {
            // One CSR segment is valid only as the whole input (start 0): the plain mergesort's
            // sort, with its larger tiles and four-way passes. The check runs first, and every
            // mergesort kernel reads its verdict (the control word) and touches no key where it
            // refused the start.
            let (control, _) = scratch.launch_check(self, &kernels, buffers.count, segments)?;
            return self.launch_plain_sort::<K, C>(buffers, comp, control, &mut scratch.mergesort);
        }
        scratch.launch(launch::SegmentedLaunch {
            gpu: self,
            kernels: &kernels,
            buffers,
            segments,
            key_bytes: size_of::<K>(),
            trusted: is_trusted(comp),
            tuning,
        })
    }

    /// The plain mergesort of `buffers` (one segment), its kernels reading the control word at
    /// `guard` before touching a key (0: no guard).
    fn launch_plain_sort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        buffers: SortAddresses,
        comp: &C,
        guard: u64,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError> {
        if buffers.count < 2 {
            return Ok(());
        }
        let value_bytes = value_bytes(buffers.layout);
        let sort_tuning =
            self.shipped_mergesort_tuning_for::<K, C>(comp, value_bytes, buffers.count);
        let sort_kernels = self.program_kernels::<K, C, _>(comp, buffers.layout, sort_tuning)?;
        scratch
            .launch_passes(
                SortLaunch {
                    gpu: self,
                    kernels: &sort_kernels,
                    buffers,
                    key_bytes: size_of::<K>(),
                    trusted: is_trusted(comp),
                    guard,
                },
                sort_tuning,
                false,
            )
            .map(|_| ())
    }

    /// The host-slice segmented sort: keys (and values) staged in place, the offsets uploaded,
    /// the segments checked on the host first. Segments of at least `alone_min_keys` keys are
    /// sorted alone by the plain mergesort, after the segmented kernels have sorted the others
    /// around them (which leave those gaps as they are).
    fn segmented_sort_slices<K, V, C>(
        &self,
        keys: &mut [K],
        values: Option<&mut [V]>,
        segments: Segments<'_>,
        comp: &C,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
    {
        if let Some(values) = &values {
            check_len("segmented sort values", keys.len(), values.len())?;
        }
        let count = keys.len();
        if let Some(problem) = segments_problem(count, segments) {
            return Err(GpuError::InvalidInput(problem.into()));
        }
        if count <= 1 || segments.is_empty() {
            return Ok(());
        }
        let layout = values.as_ref().map(|_| (size_of::<V>(), align_of::<V>()));
        let tuning = SegmentedSortTuning::for_types(size_of::<K>(), value_bytes(layout));
        let mut scratch = self.pooled_scratch::<SegmentedSortScratch>();
        let routed = Routed::new(segments, count, tuning.alone_min_keys);
        let (starts, ends, num_segments) = match &routed {
            Some(routed) => (&routed.starts[..], &routed.ends[..], routed.starts.len()),
            None => (
                segments.starts(),
                segments.ends().unwrap_or(&[]),
                segments.len(),
            ),
        };
        let has_ends = routed.is_some() || segments.ends().is_some();
        let starts: &[u8] = bytemuck::cast_slice(starts);
        let ends: &[u8] = bytemuck::cast_slice(ends);
        let mut staged = [
            Staged::InPlace(bytemuck::cast_slice_mut(keys)),
            match values {
                Some(values) => Staged::InPlace(bytemuck::cast_slice_mut(values)),
                None => Staged::Upload(&[]),
            },
            Staged::Upload(starts),
            Staged::Upload(ends),
        ];
        self.through_staging(&mut staged, |[keys, values, starts, ends]| {
            let buffers = SortAddresses {
                keys,
                values: if layout.is_some() { values } else { 0 },
                count,
                layout,
            };
            let segments = SegmentAddresses {
                starts,
                ends: if has_ends { ends } else { 0 },
                count: num_segments,
            };
            if num_segments > 0 {
                self.launch_segmented_sort::<K, C>(buffers, segments, comp, tuning, &mut scratch)?;
            }
            for range in routed.iter().flat_map(|routed| routed.alone.iter()) {
                let segment = SortAddresses {
                    keys: keys + (range.start * size_of::<K>()) as u64,
                    values: layout.map_or(0, |(bytes, _)| values + (range.start * bytes) as u64),
                    count: range.len(),
                    layout,
                };
                self.launch_plain_sort::<K, C>(segment, comp, 0, &mut scratch.mergesort)?;
            }
            // On an inconsistent comparator the host slices keep their keys as they were.
            scratch.check(self)
        })
    }

    /// Host convenience: sort each segment of `keys` in place on the GPU, stably under `comp`.
    /// Invalid `segments` give [`GpuError::InvalidInput`] naming the fault, before any copy.
    pub fn segmented_sort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        segments: Segments<'_>,
        comp: &C,
    ) -> Result<(), GpuError> {
        self.segmented_sort_slices::<K, u8, C>(keys, None, segments, comp)
    }

    /// Host convenience: sort each segment of key-value pairs in place on the GPU, stably by key
    /// under `comp`.
    pub fn segmented_sort_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        segments: Segments<'_>,
        comp: &C,
    ) -> Result<(), GpuError> {
        self.segmented_sort_slices::<K, V, C>(keys, Some(values), segments, comp)
    }
}

impl ProgramTuning for SegmentedSortTuning {
    const SOURCES: &'static [&'static str] = &SEGMENTED_SORT_SOURCES;

    /// Keys under an order with an integer image are sorted as those integers, mapped back as
    /// each tile is stored for the last time.
    const MAPS_KEY_IMAGES: bool = true;

    fn label(self) -> String {
        "segmented_sort".to_owned()
    }

    fn shape(self) -> (u32, u32) {
        (self.threads, self.vt)
    }

    fn entries(self) -> &'static [&'static str] {
        &SEGMENTED_SORT_ENTRIES
    }

    fn defines(self) -> String {
        // The four-way levels' tile is a tile of the levels (kernels/cta_quad_merge.cuh).
        format!("{}#define TP_QUAD_NT TP_NT\n", short::defines())
    }

    fn params(self) -> Vec<&'static ParamLayout> {
        params::param_layouts()
    }

    const SHIPPED: &'static [fn(usize, usize) -> Self] = &[Self::for_types];
}
