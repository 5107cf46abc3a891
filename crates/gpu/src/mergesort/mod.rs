//! The two-phase GPU mergesort: block sort of each tile, then merge passes split by merge path.

use std::mem::{align_of, size_of};

use cudarc::driver::{CudaSlice, DevicePtrMut};

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::runtime::device::Gpu;
use crate::runtime::launch::param_asserts;
use crate::runtime::program::{
    program, shipped_programs, Program, ProgramFactory, ValueLayout, CTA_MERGE_CUH, PARTITION_CUH,
    SERIAL_CUH,
};
use crate::runtime::staging::SortBuffers;
use crate::runtime::status::{messages, InputCheck, StatusNames, STATUS_ORDER_INCONSISTENT};

mod launch;
pub mod tuning;

pub use tuning::{merge_passes, MergesortTuning};

/// `kernels/cta_mergesort.cuh`: the block sort of one tile per CTA.
pub const CTA_MERGESORT_CUH: &str = include_str!("../../kernels/cta_mergesort.cuh");
/// `kernels/mergesort_blocksort.cu`: the mergesort's common definitions and block-sort kernel.
pub const MERGESORT_BLOCKSORT_CU: &str = include_str!("../../kernels/mergesort_blocksort.cu");
/// `kernels/mergesort_partition.cuh`: the search for a merge pass's boundaries.
pub const MERGESORT_PARTITION_CUH: &str = include_str!("../../kernels/mergesort_partition.cuh");
/// `kernels/mergesort_pass.cu`: the two-way pass's partition and tile kernels.
pub const MERGESORT_PASS_CU: &str = include_str!("../../kernels/mergesort_pass.cu");
/// `kernels/mergesort_quad_partition.cuh`: the search for a four-way pass's cuts.
pub const MERGESORT_QUAD_PARTITION_CUH: &str =
    include_str!("../../kernels/mergesort_quad_partition.cuh");
/// `kernels/mergesort_quad_partition.cu`: the four-way pass's partition kernel.
pub const MERGESORT_QUAD_PARTITION_CU: &str =
    include_str!("../../kernels/mergesort_quad_partition.cu");
/// `kernels/mergesort_quad_tile.cu`: the four-way pass's tile kernel.
pub const MERGESORT_QUAD_TILE_CU: &str = include_str!("../../kernels/mergesort_quad_tile.cu");
/// Entry point of the mergesort's block sort.
pub const MERGESORT_ENTRY_BLOCKSORT: &str = "twophase_blocksort";
/// Entry point of a mergesort pass's partition kernel.
pub const MERGESORT_ENTRY_PARTITION: &str = "twophase_mergesort_partition";
/// Entry point of a mergesort pass's tile kernel.
pub const MERGESORT_ENTRY_TILE: &str = "twophase_mergesort_tile";
/// Entry point of the four-way merge pass's partition kernel (one cut per quad tile).
pub const MERGESORT_ENTRY_QUAD_PARTITION: &str = "twophase_mergesort_quad_partition";
/// Entry point of the four-way merge pass's tile kernel (two merge levels per tile).
pub const MERGESORT_ENTRY_QUAD_TILE: &str = "twophase_mergesort_quad_tile";

/// The mergesort's kernel sources, in the order they follow the prelude.
pub const MERGESORT_SOURCES: [&str; 10] = [
    PARTITION_CUH,
    SERIAL_CUH,
    CTA_MERGE_CUH,
    CTA_MERGESORT_CUH,
    MERGESORT_BLOCKSORT_CU,
    MERGESORT_PARTITION_CUH,
    MERGESORT_PASS_CU,
    MERGESORT_QUAD_PARTITION_CUH,
    MERGESORT_QUAD_PARTITION_CU,
    MERGESORT_QUAD_TILE_CU,
];

/// The mergesort's name in program names and cache keys, with its pass shape (the block-sort
/// shape is in every program's name already).
pub(super) fn primitive_name(tuning: MergesortTuning) -> String {
    format!(
        "mergesort_pass{}_quad{}r{}",
        tuning.pass_threads, tuning.quad_threads, tuning.quad_registers
    )
}

/// The kernels of a mergesort program: the four-way pass's only when the tuning has them.
pub(super) fn mergesort_entries(tuning: MergesortTuning) -> &'static [&'static str] {
    const TWO_WAY: [&str; 3] = [
        MERGESORT_ENTRY_BLOCKSORT,
        MERGESORT_ENTRY_PARTITION,
        MERGESORT_ENTRY_TILE,
    ];
    const FOUR_WAY: [&str; 5] = [
        MERGESORT_ENTRY_BLOCKSORT,
        MERGESORT_ENTRY_PARTITION,
        MERGESORT_ENTRY_TILE,
        MERGESORT_ENTRY_QUAD_PARTITION,
        MERGESORT_ENTRY_QUAD_TILE,
    ];
    if tuning.quad_threads > 0 {
        &FOUR_WAY
    } else {
        &TWO_WAY
    }
}

/// The mergesort program for key `K`, comparator `comp`, value layout and tuning: `TP_NT` is the
/// block sort's threads, `TP_PASS_NT` the merge passes'.
pub fn mergesort_program<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    comp: &C,
    values: ValueLayout,
    tuning: MergesortTuning,
) -> Program {
    let pass_define = format!(
        "#define TP_PASS_NT {}\n#define TP_QUAD_NT {}\n#define TP_QUAD_REGISTERS {}\n",
        tuning.pass_threads, tuning.quad_threads, tuning.quad_registers
    );
    let mut sources = vec![pass_define.as_str()];
    sources.extend(MERGESORT_SOURCES);
    let asserts = param_asserts(&launch::param_layouts(tuning));
    sources.push(&asserts);
    program::<K, C>(
        &primitive_name(tuning),
        &sources,
        comp,
        values,
        tuning.threads,
        tuning.vt,
    )
}

/// Device scratch of the mergesort: the pass partitions and the ping-pong key and value buffers.
/// They only grow, so repeated sorts of the same or smaller size allocate nothing.
///
/// It also holds the order check of the sorts that use it: a sort whose comparator answers
/// inconsistently (not a strict weak order) still leaves a permutation of its keys, and raises a
/// status here that [`check`](Self::check) reports.
#[derive(Debug, Default)]
pub struct MergesortScratch {
    partitions: Option<CudaSlice<u64>>,
    /// Four-way cuts: three counts per quad-tile boundary.
    cuts: Option<CudaSlice<u64>>,
    keys: Option<CudaSlice<u8>>,
    values: Option<CudaSlice<u8>>,
    input_check: InputCheck,
}

/// What the mergesort's status bits say.
const MERGESORT_STATUS: StatusNames = &[(STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT)];

impl MergesortScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for this handle's stream, then report whether a device-buffer sort that used this
    /// scratch since the last check saw its comparator answer inconsistently:
    /// `Err(InvalidInput)` naming the comparator. The status is cleared. Such a sort leaves a
    /// permutation of its keys (and pairs) in unspecified order.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.input_check.check(gpu, MERGESORT_STATUS)
    }
}

impl Gpu {
    /// Compile (or fetch from the caches) the mergesort kernels for these types, comparator and
    /// tuning ahead of the first call.
    pub fn prepare_mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        comp: &C,
        values: ValueLayout,
        tuning: MergesortTuning,
    ) -> Result<(), GpuError> {
        let program = mergesort_program::<K, C>(comp, values, tuning);
        self.kernels(
            &program.key,
            &program.name,
            || program.source.clone(),
            mergesort_entries(tuning),
        )
        .map(|_| ())
    }

    /// Stable sort of the device keys `keys` under `comp`, in place (the scratch holds the
    /// ping-pong buffer), with the shipped tuning. Asynchronous on this handle's stream.
    ///
    /// Whatever `comp` answers, `keys` ends as a permutation of itself. A user comparator is
    /// checked as the sort runs (twophase's own orders need not be); where it answered
    /// inconsistently (not a strict weak order) the order is unspecified and the scratch
    /// records it: [`MergesortScratch::check`] (which synchronizes) reports it as `InvalidInput`.
    pub fn mergesort_device<K, C, S>(
        &self,
        keys: &mut S,
        comp: &C,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DevicePtrMut<K>,
    {
        self.mergesort_device_tuned(
            keys,
            comp,
            self.shipped_mergesort_tuning(size_of::<K>(), 0, keys.len()),
            scratch,
        )
    }

    /// The shipped mergesort tuning for `count` keys of `key_bytes` (and values of
    /// `value_bytes`) on this device ([`MergesortTuning::for_launch`]).
    pub fn shipped_mergesort_tuning(
        &self,
        key_bytes: usize,
        value_bytes: usize,
        count: usize,
    ) -> MergesortTuning {
        MergesortTuning::for_launch(
            key_bytes,
            value_bytes,
            count,
            self.max_shared_per_block_optin(),
            self.multiprocessors() as usize,
        )
    }

    /// [`mergesort_device`](Self::mergesort_device) with an explicit tuning.
    pub fn mergesort_device_tuned<K, C, S>(
        &self,
        keys: &mut S,
        comp: &C,
        tuning: MergesortTuning,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        S: DevicePtrMut<K>,
    {
        let stream = self.stream().clone();
        let count = keys.len();
        let (ptr, _guard) = keys.device_ptr_mut(&stream);
        let buffers = SortBuffers {
            keys: ptr,
            values: 0,
            count,
            layout: None,
        };
        self.launch_mergesort::<K, C>(buffers, comp, tuning, scratch)
    }

    /// Stable sort of device key-value pairs by key under `comp`, in place: each value moves with
    /// its key and equal keys keep their order. Asynchronous on this handle's stream.
    pub fn mergesort_pairs_device<K, V, C, SK, SV>(
        &self,
        keys: &mut SK,
        values: &mut SV,
        comp: &C,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        SK: DevicePtrMut<K>,
        SV: DevicePtrMut<V>,
    {
        let tuning = self.shipped_mergesort_tuning(size_of::<K>(), size_of::<V>(), keys.len());
        self.mergesort_pairs_device_tuned(keys, values, comp, tuning, scratch)
    }

    /// [`mergesort_pairs_device`](Self::mergesort_pairs_device) with an explicit tuning.
    pub fn mergesort_pairs_device_tuned<K, V, C, SK, SV>(
        &self,
        keys: &mut SK,
        values: &mut SV,
        comp: &C,
        tuning: MergesortTuning,
        scratch: &mut MergesortScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        SK: DevicePtrMut<K>,
        SV: DevicePtrMut<V>,
    {
        if keys.len() != values.len() {
            return Err(GpuError::SizeMismatch {
                what: "mergesort values",
                expected: keys.len(),
                got: values.len(),
            });
        }
        let stream = self.stream().clone();
        let count = keys.len();
        let (key_ptr, _keys) = keys.device_ptr_mut(&stream);
        let (value_ptr, _values) = values.device_ptr_mut(&stream);
        let layout = Some((size_of::<V>(), align_of::<V>()));
        let buffers = SortBuffers {
            keys: key_ptr,
            values: value_ptr,
            count,
            layout,
        };
        self.launch_mergesort::<K, C>(buffers, comp, tuning, scratch)
    }

    /// Host convenience: sort `keys` in place on the GPU, stably under `comp`. Device buffers and
    /// scratch are kept in the handle and reused across calls.
    pub fn mergesort<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        comp: &C,
    ) -> Result<(), GpuError> {
        self.mergesort_host::<K, u8, C>(keys, None, comp)
    }

    /// Host convenience: sort key-value pairs in place on the GPU, stably by key under `comp`.
    pub fn mergesort_pairs<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        comp: &C,
    ) -> Result<(), GpuError> {
        if keys.len() != values.len() {
            return Err(GpuError::SizeMismatch {
                what: "mergesort values",
                expected: keys.len(),
                got: values.len(),
            });
        }
        self.mergesort_host::<K, V, C>(keys, Some(values), comp)
    }

    fn mergesort_host<K: DeviceKey, V: DeviceValue, C: DeviceComparator<K> + ?Sized>(
        &self,
        keys: &mut [K],
        values: Option<&mut [V]>,
        comp: &C,
    ) -> Result<(), GpuError> {
        let mut scratch = self.pooled_scratch::<MergesortScratch>();
        self.sort_host(keys, values, &mut scratch, |buffers, scratch| {
            let value_bytes = buffers.layout.map_or(0, |(size, _)| size);
            let tuning = self.shipped_mergesort_tuning(size_of::<K>(), value_bytes, buffers.count);
            self.launch_mergesort::<K, C>(buffers, comp, tuning, scratch)?;
            // Before the download: on an inconsistent comparator the host slices keep their
            // keys as they were (a permutation, and what the caller had).
            scratch.check(self)
        })
    }
}

/// Builds mergesort programs at the shipped tuning, or with `static_shared` at the tuning within
/// static shared memory ([`MergesortTuning::within_static_shared`]), for [`shipped_programs`].
struct MergesortPrograms {
    static_shared: bool,
}

impl ProgramFactory for MergesortPrograms {
    fn program<K: DeviceKey>(
        &self,
        comp: &dyn DeviceComparator<K>,
        values: ValueLayout,
    ) -> Program {
        let value_bytes = values.map_or(0, |(size, _)| size);
        let tuning = MergesortTuning::shipped(size_of::<K>(), value_bytes, self.static_shared);
        mergesort_program::<K, dyn DeviceComparator<K>>(comp, values, tuning)
    }
}

/// Every mergesort program instantiation the library ships: each primitive key type × built-in
/// comparator × shipped value layout, at its shipped tuning and at its tuning within static
/// shared memory (for devices with less opt-in shared memory), once each. CI compiles all of
/// them with NVRTC.
pub fn shipped_mergesort_programs() -> Vec<Program> {
    let mut programs = shipped_programs(&MergesortPrograms {
        static_shared: false,
    });
    for program in shipped_programs(&MergesortPrograms {
        static_shared: true,
    }) {
        if !programs.iter().any(|p| p.name == program.name) {
            programs.push(program);
        }
    }
    programs
}
