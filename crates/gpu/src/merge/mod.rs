//! The two-phase GPU merge: tuning, scratch, program instantiation and the launches.

use std::mem::{align_of, size_of};

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::runtime::device::Gpu;
use crate::runtime::launch::{param_asserts, param_block, KernelParams, LaunchShape};
use crate::runtime::program::{
    program, program_id, shipped_programs, Program, ProgramFactory, ValueLayout, CTA_MERGE_CUH,
    PARTITION_CUH, SERIAL_CUH,
};
use crate::runtime::shape::{overlapped_partition_blocks, MAX_GRID_X, PARTITION_THREADS};
use crate::runtime::status::{
    messages, CheckArgs, InputCheck, StatusNames, STATUS_FIRST_UNSORTED, STATUS_ORDER_INCONSISTENT,
    STATUS_SECOND_UNSORTED,
};

pub mod host;
pub mod tuning;

pub use tuning::{
    MergeTuning, KEYS_BLOCKS_PER_SM, NARROW_KEYS_BLOCKS_PER_SM, NARROW_PAIRS_BLOCKS_PER_SM,
    PAIRS_BLOCKS_PER_SM,
};

/// `kernels/merge.cu`: the partition and tile kernels of the merge.
pub const MERGE_CU: &str = include_str!("../../kernels/merge.cu");

/// Entry point of the merge's partition kernel.
pub const MERGE_ENTRY_PARTITION: &str = "twophase_merge_partition";
/// Entry point of the merge's tile kernel.
pub const MERGE_ENTRY_TILE: &str = "twophase_merge_tile";

/// Device scratch of the merge (the partitions), reusable across calls: it only grows, so a loop
/// of calls of the same or smaller size allocates nothing.
///
/// It also holds the input check of the calls that use it: a merge whose inputs turn out not to be
/// sorted under the comparator (or whose comparator answers inconsistently) still writes a
/// permutation of its inputs and stays inside its buffers, and raises a status here, which
/// [`check`](Self::check) reports.
#[derive(Debug, Default)]
pub struct MergeScratch {
    partitions: Option<CudaSlice<u64>>,
    input_check: InputCheck,
}

/// What the merge's status bits say, for a keys merge.
const MERGE_STATUS: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::A_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::B_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT),
];

/// What the merge's status bits say, for a key-value merge.
const MERGE_PAIRS_STATUS: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::A_KEYS_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::B_KEYS_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, messages::ORDER_INCONSISTENT),
];

impl MergeScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for this handle's stream, then report whether a device-buffer merge that used this
    /// scratch since the last check found its input out of order: `Err(InvalidInput)` naming
    /// `a` or `b` (or the comparator, when it answered inconsistently). The status is cleared.
    /// Such a merge's output is a permutation of its inputs in unspecified order.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.input_check.check(gpu, MERGE_STATUS)
    }

    fn partitions(&mut self, gpu: &Gpu, count: usize) -> Result<&mut CudaSlice<u64>, GpuError> {
        gpu.grow_scratch(&mut self.partitions, count)
    }
}

/// The merge's kernel sources, in the order they follow the prelude.
pub const MERGE_SOURCES: [&str; 4] = [PARTITION_CUH, SERIAL_CUH, CTA_MERGE_CUH, MERGE_CU];

/// The cache key and source name of a merge program, without building its source (the per-call
/// path: the source is only assembled on a cache miss).
pub fn merge_program_id<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    comp: &C,
    values: ValueLayout,
    tuning: MergeTuning,
) -> (String, String) {
    program_id::<K, C>(
        &merge_label(tuning),
        comp,
        values,
        tuning.threads,
        tuning.vt,
    )
}

/// The program label of a merge at `tuning`: the launch bound's block count is part of the
/// program (and so of its cache key and name).
fn merge_label(tuning: MergeTuning) -> String {
    format!("merge_b{}", tuning.blocks_per_sm)
}

/// The merge program for key `K`, comparator `comp`, value layout and tuning.
pub fn merge_program<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    comp: &C,
    values: ValueLayout,
    tuning: MergeTuning,
) -> Program {
    let launch_bound = format!("#define TP_MIN_BLOCKS {}\n", tuning.blocks_per_sm);
    let mut sources = vec![launch_bound.as_str()];
    sources.extend(MERGE_SOURCES);
    let asserts = param_asserts(&[&MergePartitionParams::LAYOUT, &MergeTileParams::LAYOUT]);
    sources.push(&asserts);
    program::<K, C>(
        &merge_label(tuning),
        &sources,
        comp,
        values,
        tuning.threads,
        tuning.vt,
    )
}

param_block! {
    /// The parameter block of `twophase_merge_partition` (kernels/merge.cu).
    struct MergePartitionParams as "merge_partition_params" {
        a: u64,
        a_count: u64,
        b: u64,
        b_count: u64,
        spacing: u64,
        num_partitions: u64,
        partitions: u64,
        status: u64,
        repair: u64,
        generation: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_merge_tile` (kernels/merge.cu).
    struct MergeTileParams as "merge_tile_params" {
        a: u64,
        a_count: u64,
        b: u64,
        b_count: u64,
        partitions: u64,
        out: u64,
        a_vals: u64,
        b_vals: u64,
        out_vals: u64,
        status: u64,
        repair: u64,
        generation: u32,
    }
}

/// Raw device addresses of one merge call (of any merge variant).
pub(crate) struct MergeArgs {
    pub(crate) a: u64,
    pub(crate) a_count: usize,
    pub(crate) b: u64,
    pub(crate) b_count: usize,
    pub(crate) out: u64,
    /// (a_vals, b_vals, out_vals), or zeros for keys only.
    pub(crate) values: (u64, u64, u64),
}

impl Gpu {
    /// Compile (or fetch from the caches) the merge kernels for these types, comparator and tuning
    /// ahead of the first call.
    pub fn prepare_merge<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        comp: &C,
        values: ValueLayout,
        tuning: MergeTuning,
    ) -> Result<(), GpuError> {
        let program = merge_program::<K, C>(comp, values, tuning);
        self.kernels(
            &program.key,
            &program.name,
            || program.source.clone(),
            &[MERGE_ENTRY_PARTITION, MERGE_ENTRY_TILE],
        )
        .map(|_| ())
    }

    pub(crate) fn launch_merge<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        &self,
        args: MergeArgs,
        comp: &C,
        values: ValueLayout,
        tuning: MergeTuning,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError> {
        tuning.validate(size_of::<K>())?;
        let total = args.a_count + args.b_count;
        if total == 0 {
            return Ok(());
        }
        let (key, name) = merge_program_id::<K, C>(comp, values, tuning);
        let kernels = self.kernels(
            &key,
            &name,
            || merge_program::<K, C>(comp, values, tuning).source,
            &[MERGE_ENTRY_PARTITION, MERGE_ENTRY_TILE],
        )?;
        let partition = kernels.function(MERGE_ENTRY_PARTITION)?;
        let tile_kernel = kernels.function(MERGE_ENTRY_TILE)?;

        let tile = tuning.tile();
        let num_tiles = total.div_ceil(tile);
        let num_partitions = num_tiles + 1;
        if num_tiles as u64 > MAX_GRID_X {
            return Err(GpuError::TooLarge(format!(
                "{total} outputs need {num_tiles} tiles"
            )));
        }
        let partition_blocks = overlapped_partition_blocks(num_partitions)?;
        let stream = self.stream().clone();
        let check = scratch.input_check.args(self)?;
        let CheckArgs {
            status,
            repair,
            generation,
            ..
        } = check;
        let partitions = scratch.partitions(self, num_partitions)?;
        let (partitions_ptr, _partitions_guard) = partitions.device_ptr_mut(&stream);

        let (a_count, b_count) = (args.a_count as u64, args.b_count as u64);
        let partition_params = MergePartitionParams {
            a: args.a,
            a_count,
            b: args.b,
            b_count,
            spacing: tile as u64,
            num_partitions: num_partitions as u64,
            partitions: partitions_ptr,
            status,
            repair,
            generation,
        };
        // SAFETY: the block is twophase_merge_partition's (kernels/merge.cu; the program asserts
        // the layouts equal); `partitions` holds `num_partitions` entries, the inputs `a_count`
        // and `b_count` keys, the check's words live in the scratch, all valid on this stream
        // until the guards drop after the launches. The blocks overlap by one boundary, so
        // `partition_blocks` of PARTITION_THREADS cover every boundary.
        unsafe {
            self.launch(
                partition,
                LaunchShape::new(partition_blocks, PARTITION_THREADS),
                &partition_params,
            )
        }?;

        let tile_params = MergeTileParams {
            a: args.a,
            a_count,
            b: args.b,
            b_count,
            partitions: partitions_ptr,
            out: args.out,
            a_vals: args.values.0,
            b_vals: args.values.1,
            out_vals: args.values.2,
            status,
            repair,
            generation,
        };
        // SAFETY: the block is twophase_merge_tile's (kernels/merge.cu; the program asserts the
        // layouts equal); `out` (and `out_vals`) hold a_count + b_count elements (checked by the
        // callers), the value addresses are read only when the program was instantiated with
        // values; the grid has one block per tile. As a programmatic dependent, the tile kernel
        // waits (griddepcontrol.wait) for the partition kernel before reading the partitions.
        unsafe {
            self.launch(
                tile_kernel,
                LaunchShape::new(num_tiles as u32, tuning.threads).dependent(true),
                &tile_params,
            )
        }?;
        Ok(())
    }

    /// Merge the sorted device sequences `a` and `b` into `out` (length `a.len() + b.len()`),
    /// stably (ties: A first), with the shipped tuning. Asynchronous on this handle's stream.
    ///
    /// Inputs that are not sorted under `comp` (or a comparator that answers inconsistently)
    /// never take the kernels outside their buffers: `out` then holds a permutation of `a` and
    /// `b` in unspecified order, and the scratch records it. [`MergeScratch::check`] (which
    /// synchronizes) reports it as `InvalidInput` naming `a` or `b`.
    pub fn merge_device<K, C, A, B, O>(
        &self,
        a: &A,
        b: &B,
        out: &mut O,
        comp: &C,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        A: DevicePtr<K>,
        B: DevicePtr<K>,
        O: DevicePtrMut<K>,
    {
        self.merge_device_tuned(
            a,
            b,
            out,
            comp,
            MergeTuning::for_types(size_of::<K>(), 0),
            scratch,
        )
    }

    /// [`merge_device`](Self::merge_device) with an explicit tuning.
    pub fn merge_device_tuned<K, C, A, B, O>(
        &self,
        a: &A,
        b: &B,
        out: &mut O,
        comp: &C,
        tuning: MergeTuning,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        A: DevicePtr<K>,
        B: DevicePtr<K>,
        O: DevicePtrMut<K>,
    {
        self.merge_keys_args(a, b, out, |args| {
            self.launch_merge::<K, C>(args, comp, None, tuning, scratch)
        })
    }

    /// Check the buffers of a keys-only merge on the device and run `launch` with their
    /// addresses (the one place every merge variant's device call gets them from).
    pub(crate) fn merge_keys_args<K, A, B, O>(
        &self,
        a: &A,
        b: &B,
        out: &mut O,
        launch: impl FnOnce(MergeArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        A: DevicePtr<K>,
        B: DevicePtr<K>,
        O: DevicePtrMut<K>,
    {
        let total = a.len() + b.len();
        if out.len() != total {
            return Err(GpuError::SizeMismatch {
                what: "merge output",
                expected: total,
                got: out.len(),
            });
        }
        let stream = self.stream().clone();
        let (a_ptr, _a) = a.device_ptr(&stream);
        let (b_ptr, _b) = b.device_ptr(&stream);
        let (out_ptr, _out) = out.device_ptr_mut(&stream);
        launch(MergeArgs {
            a: a_ptr,
            a_count: a.len(),
            b: b_ptr,
            b_count: b.len(),
            out: out_ptr,
            values: (0, 0, 0),
        })
    }

    /// Merge sorted key-value sequences on the device: keys as [`merge_device`](Self::merge_device),
    /// each value moved with its key (stable). Asynchronous on this handle's stream.
    #[allow(clippy::too_many_arguments)] // Six buffers are the operation's inputs and outputs.
    pub fn merge_pairs_device<K, V, C, AK, AV, BK, BV, OK, OV>(
        &self,
        a_keys: &AK,
        a_vals: &AV,
        b_keys: &BK,
        b_vals: &BV,
        out_keys: &mut OK,
        out_vals: &mut OV,
        comp: &C,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        AK: DevicePtr<K>,
        AV: DevicePtr<V>,
        BK: DevicePtr<K>,
        BV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
    {
        let tuning = MergeTuning::for_types(size_of::<K>(), size_of::<V>());
        self.merge_pairs_device_tuned(
            a_keys, a_vals, b_keys, b_vals, out_keys, out_vals, comp, tuning, scratch,
        )
    }

    /// [`merge_pairs_device`](Self::merge_pairs_device) with an explicit tuning.
    #[allow(clippy::too_many_arguments)] // Six buffers are the operation's inputs and outputs.
    pub fn merge_pairs_device_tuned<K, V, C, AK, AV, BK, BV, OK, OV>(
        &self,
        a_keys: &AK,
        a_vals: &AV,
        b_keys: &BK,
        b_vals: &BV,
        out_keys: &mut OK,
        out_vals: &mut OV,
        comp: &C,
        tuning: MergeTuning,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        C: DeviceComparator<K> + ?Sized,
        AK: DevicePtr<K>,
        AV: DevicePtr<V>,
        BK: DevicePtr<K>,
        BV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
    {
        let buffers = (a_keys, a_vals, b_keys, b_vals, out_keys, out_vals);
        self.merge_pairs_args(buffers, |args| {
            let layout = Some((size_of::<V>(), align_of::<V>()));
            self.launch_merge::<K, C>(args, comp, layout, tuning, scratch)
        })
    }

    /// Check the buffers of a key-value merge on the device (A keys, A values, B keys, B values,
    /// output keys, output values) and run `launch` with their addresses.
    #[allow(clippy::type_complexity)] // The six buffers of one merge, in operation order.
    pub(crate) fn merge_pairs_args<K, V, AK, AV, BK, BV, OK, OV>(
        &self,
        (a_keys, a_vals, b_keys, b_vals, out_keys, out_vals): (
            &AK,
            &AV,
            &BK,
            &BV,
            &mut OK,
            &mut OV,
        ),
        launch: impl FnOnce(MergeArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        V: DeviceValue,
        AK: DevicePtr<K>,
        AV: DevicePtr<V>,
        BK: DevicePtr<K>,
        BV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
    {
        let total = a_keys.len() + b_keys.len();
        let checks = [
            ("A values", a_keys.len(), a_vals.len()),
            ("B values", b_keys.len(), b_vals.len()),
            ("merge output keys", total, out_keys.len()),
            ("merge output values", total, out_vals.len()),
        ];
        for (what, expected, got) in checks {
            if expected != got {
                return Err(GpuError::SizeMismatch {
                    what,
                    expected,
                    got,
                });
            }
        }
        let stream = self.stream().clone();
        let (a_ptr, _a) = a_keys.device_ptr(&stream);
        let (b_ptr, _b) = b_keys.device_ptr(&stream);
        let (av_ptr, _av) = a_vals.device_ptr(&stream);
        let (bv_ptr, _bv) = b_vals.device_ptr(&stream);
        let (out_ptr, _out) = out_keys.device_ptr_mut(&stream);
        let (ov_ptr, _ov) = out_vals.device_ptr_mut(&stream);
        launch(MergeArgs {
            a: a_ptr,
            a_count: a_keys.len(),
            b: b_ptr,
            b_count: b_keys.len(),
            out: out_ptr,
            values: (av_ptr, bv_ptr, ov_ptr),
        })
    }
}

/// Builds merge programs at the shipped tuning, for [`shipped_programs`].
struct MergePrograms;

impl ProgramFactory for MergePrograms {
    fn program<K: DeviceKey>(
        &self,
        comp: &dyn DeviceComparator<K>,
        values: ValueLayout,
    ) -> Program {
        let tuning = MergeTuning::for_types(size_of::<K>(), values.map_or(0, |(size, _)| size));
        merge_program::<K, dyn DeviceComparator<K>>(comp, values, tuning)
    }
}

/// Every merge program instantiation the library ships: each primitive key type × built-in
/// comparator × shipped value layout, at its shipped tuning. CI compiles all of them with NVRTC.
pub fn shipped_merge_programs() -> Vec<Program> {
    shipped_programs(&MergePrograms)
}
