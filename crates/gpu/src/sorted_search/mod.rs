//! Sorted search: each needle's lower or upper bound in a sorted haystack, as a merge path walk (tuning, programs, launches).

use std::mem::size_of;

use cudarc::driver::{DevicePtr, DevicePtrMut};

use crate::compare::{sanitize, DeviceComparator};
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{param_asserts, param_block, KernelParams, LaunchShape};
use crate::runtime::program::{
    program, program_id, shipped_programs, Program, ProgramFactory, ValueLayout, CTA_MERGE_CUH,
    PARTITION_CUH, SERIAL_CUH,
};
use crate::runtime::shape::{overlapped_partition_blocks, MAX_GRID_X, PARTITION_THREADS};
use crate::runtime::staging::Staged;
use crate::runtime::status::{messages, CheckArgs};
use crate::search::{check_len, too_large, DeviceIndex, SearchBound, SearchScratch};

pub mod tuning;

pub use tuning::SortedSearchTuning;

/// `kernels/sorted_search.cu`: the sorted search's partition and tile kernels.
pub const SORTED_SEARCH_CU: &str = include_str!("../../kernels/sorted_search.cu");
/// Entry point of the sorted search's partition kernel.
pub const SORTED_SEARCH_ENTRY_PARTITION: &str = "twophase_search_partition";
/// Entry point of the sorted search's tile kernel.
pub const SORTED_SEARCH_ENTRY_TILE: &str = "twophase_search_tile";
/// Every entry point of a sorted-search program.
pub const SORTED_SEARCH_ENTRIES: [&str; 2] =
    [SORTED_SEARCH_ENTRY_PARTITION, SORTED_SEARCH_ENTRY_TILE];

fn search_primitive<I: DeviceIndex>(bound: SearchBound) -> String {
    let bound = match bound {
        SearchBound::Lower => "lower",
        SearchBound::Upper => "upper",
    };
    format!("sorted_search_{bound}_{}", sanitize(I::CUDA_TYPE))
}

fn search_prelude<I: DeviceIndex>(bound: SearchBound) -> String {
    format!(
        "typedef {} index_type;\n#define TP_UPPER {}\n",
        I::CUDA_TYPE,
        u8::from(bound == SearchBound::Upper)
    )
}

/// The sorted-search program for key `K`, index type `I`, bound, comparator and tuning.
pub fn sorted_search_program<K: DeviceKey, I: DeviceIndex, C: DeviceComparator<K> + ?Sized>(
    comp: &C,
    bound: SearchBound,
    tuning: SortedSearchTuning,
) -> Program {
    let prelude = search_prelude::<I>(bound);
    let asserts = param_asserts(&[&SearchPartitionParams::LAYOUT, &SearchTileParams::LAYOUT]);
    program::<K, C>(
        &search_primitive::<I>(bound),
        &[
            &prelude,
            PARTITION_CUH,
            SERIAL_CUH,
            CTA_MERGE_CUH,
            SORTED_SEARCH_CU,
            &asserts,
        ],
        comp,
        None,
        tuning.threads,
        tuning.vt,
    )
}

param_block! {
    /// The parameter block of `twophase_search_partition` (kernels/sorted_search.cu).
    struct SearchPartitionParams as "search_partition_params" {
        needles: u64,
        needle_count: u64,
        haystack: u64,
        haystack_count: u64,
        spacing: u64,
        num_partitions: u64,
        partitions: u64,
        status: u64,
        repair: u64,
        generation: u32,
    }
}

param_block! {
    /// The parameter block of `twophase_search_tile` (kernels/sorted_search.cu).
    struct SearchTileParams as "search_tile_params" {
        needles: u64,
        needle_count: u64,
        haystack: u64,
        haystack_count: u64,
        partitions: u64,
        out: u64,
        status: u64,
        repair: u64,
        generation: u32,
    }
}

impl Gpu {
    /// Both kernels of one sorted search over device addresses.
    #[allow(clippy::too_many_arguments)] // The call's shape: each argument is one part of it.
    fn launch_sorted_search<K: DeviceKey, I: DeviceIndex, C: DeviceComparator<K> + ?Sized>(
        &self,
        needles: (u64, usize),
        haystack: (u64, usize),
        out: u64,
        bound: SearchBound,
        comp: &C,
        tuning: SortedSearchTuning,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        tuning.validate(size_of::<K>())?;
        // With no needles the kernels still run over the haystack: they check its order.
        if needles.1 == 0 && haystack.1 == 0 {
            return Ok(());
        }
        too_large::<I>("haystack length", haystack.1)?;
        let primitive = search_primitive::<I>(bound);
        let (key, name) = program_id::<K, C>(&primitive, comp, None, tuning.threads, tuning.vt);
        let kernels = self.kernels(
            &key,
            &name,
            || sorted_search_program::<K, I, C>(comp, bound, tuning).source,
            &SORTED_SEARCH_ENTRIES,
        )?;
        let partition = kernels.function(SORTED_SEARCH_ENTRY_PARTITION)?;
        let tile_kernel = kernels.function(SORTED_SEARCH_ENTRY_TILE)?;
        let count = needles.1.checked_add(haystack.1).ok_or_else(|| {
            GpuError::TooLarge(format!(
                "{} needles and {} haystack keys",
                needles.1, haystack.1
            ))
        })?;
        let tile = tuning.tile();
        let num_tiles = count.div_ceil(tile);
        let num_partitions = num_tiles + 1;
        if num_tiles as u64 > MAX_GRID_X {
            return Err(GpuError::TooLarge(format!(
                "{count} merge outputs need {num_tiles} tiles"
            )));
        }
        let stream = self.stream().clone();
        let check = scratch.input_check.args(self)?;
        let buf = scratch.partitions(self, num_partitions)?;
        let (partitions_ptr, _guard) = buf.device_ptr_mut(&stream);
        let (n_count, h_count, spacing, partition_count) = (
            needles.1 as u64,
            haystack.1 as u64,
            tile as u64,
            num_partitions as u64,
        );
        let CheckArgs {
            status,
            repair,
            generation,
            ..
        } = check;
        let partition_blocks = overlapped_partition_blocks(num_partitions)?;
        let partition_params = SearchPartitionParams {
            needles: needles.0,
            needle_count: n_count,
            haystack: haystack.0,
            haystack_count: h_count,
            spacing,
            num_partitions: partition_count,
            partitions: partitions_ptr,
            status,
            repair,
            generation,
        };
        // SAFETY: the block is twophase_search_partition's (kernels/sorted_search.cu; the program
        // asserts the layouts equal); the needles and the haystack hold the given counts of K,
        // the partitions buffer `num_partitions` entries, the check's words live in the scratch,
        // all valid on this stream until the guards drop after the launches. The blocks overlap
        // by one boundary, so `partition_blocks` of PARTITION_THREADS cover every boundary.
        unsafe {
            self.launch(
                partition,
                LaunchShape::new(partition_blocks, PARTITION_THREADS),
                &partition_params,
            )
        }?;
        let tile_params = SearchTileParams {
            needles: needles.0,
            needle_count: n_count,
            haystack: haystack.0,
            haystack_count: h_count,
            partitions: partitions_ptr,
            out,
            status,
            repair,
            generation,
        };
        // SAFETY: the block is twophase_search_tile's (kernels/sorted_search.cu; the program
        // asserts the layouts equal); `out` holds one index of type I per needle (checked by the
        // callers); one block per tile. The kernel reads and writes only inside these buffers for
        // any keys and comparator (kernels/sorted_search.cu). As a programmatic dependent, it
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

    /// Sorted search on the device: for each needle of the sorted `needles`, its lower or upper
    /// bound in the sorted `haystack` under `comp`, written to `out` (one index of type `I` per
    /// needle). One merge of the two arrays split by merge path — no binary search per needle.
    /// Asynchronous.
    ///
    /// Whatever the keys and the comparator, every needle's result is written once and lies
    /// within `[0, haystack.len()]`. Needles or a haystack not sorted under `comp` (and a
    /// comparator found inconsistent) are detected on the device and reported by
    /// [`SearchScratch::check`]; the results are then unspecified. With no needles the haystack
    /// is still read and checked, as the host call checks it.
    pub fn sorted_search_device<K, I, C, N, H, O>(
        &self,
        needles: &N,
        haystack: &H,
        out: &mut O,
        bound: SearchBound,
        comp: &C,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        I: DeviceIndex,
        C: DeviceComparator<K> + ?Sized,
        N: DevicePtr<K>,
        H: DevicePtr<K>,
        O: DevicePtrMut<I>,
    {
        self.sorted_search_device_tuned(
            needles,
            haystack,
            out,
            bound,
            comp,
            SortedSearchTuning::for_key(size_of::<K>()),
            scratch,
        )
    }

    /// [`sorted_search_device`](Self::sorted_search_device) with an explicit tuning.
    #[allow(clippy::too_many_arguments)] // The call's shape: each argument is one part of it.
    pub fn sorted_search_device_tuned<K, I, C, N, H, O>(
        &self,
        needles: &N,
        haystack: &H,
        out: &mut O,
        bound: SearchBound,
        comp: &C,
        tuning: SortedSearchTuning,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        I: DeviceIndex,
        C: DeviceComparator<K> + ?Sized,
        N: DevicePtr<K>,
        H: DevicePtr<K>,
        O: DevicePtrMut<I>,
    {
        check_len("search output", needles.len(), out.len())?;
        let stream = self.stream().clone();
        let (n_ptr, _n) = needles.device_ptr(&stream);
        let (h_ptr, _h) = haystack.device_ptr(&stream);
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_sorted_search::<K, I, C>(
            (n_ptr, needles.len()),
            (h_ptr, haystack.len()),
            out_ptr,
            bound,
            comp,
            tuning,
            scratch,
        )
    }

    /// Host convenience: sorted search of host slices (see
    /// [`sorted_search_device`](Self::sorted_search_device)).
    pub fn sorted_search<K: DeviceKey, I: DeviceIndex, C: DeviceComparator<K> + ?Sized>(
        &self,
        needles: &[K],
        haystack: &[K],
        bound: SearchBound,
        comp: &C,
    ) -> Result<Vec<I>, GpuError> {
        let mut out = bytemuck::zeroed_vec::<I>(needles.len());
        if needles.is_empty() {
            // Nothing to search, but the haystack is still checked, as with needles (and as the
            // CPU path of `sorted_search_any` does): on the host, it is here already.
            if haystack
                .windows(2)
                .any(|pair| comp.is_less(&pair[1], &pair[0]))
            {
                return Err(GpuError::InvalidInput(
                    messages::HAYSTACK_UNSORTED.to_owned(),
                ));
            }
            return Ok(out);
        }
        let mut scratch = self.pooled_scratch::<SearchScratch>();
        let mut buffers = [
            Staged::Upload(bytemuck::cast_slice(needles)),
            Staged::Upload(bytemuck::cast_slice(haystack)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out)),
        ];
        let launched = self.through_staging(&mut buffers, |[n_ptr, h_ptr, out_ptr]| {
            self.launch_sorted_search::<K, I, C>(
                (n_ptr, needles.len()),
                (h_ptr, haystack.len()),
                out_ptr,
                bound,
                comp,
                SortedSearchTuning::for_key(size_of::<K>()),
                &mut scratch,
            )
        });
        let checked = scratch.check(self);
        launched?;
        checked?;
        Ok(out)
    }
}

/// Builds sorted-search programs at the shipped tuning for [`shipped_programs`]: the value layout
/// slot of the factory selects the variant (keys only: lower bound, u32 results; 4-byte layout:
/// upper bound, u32; 8-byte layout: lower bound, u64), so every key type and comparator is
/// compiled with both bounds and both index widths across the list.
struct SortedSearchPrograms;

impl ProgramFactory for SortedSearchPrograms {
    fn program<K: DeviceKey>(
        &self,
        comp: &dyn DeviceComparator<K>,
        values: ValueLayout,
    ) -> Program {
        let tuning = SortedSearchTuning::for_key(size_of::<K>());
        match values {
            None => sorted_search_program::<K, u32, dyn DeviceComparator<K>>(
                comp,
                SearchBound::Lower,
                tuning,
            ),
            Some((4, _)) => sorted_search_program::<K, u32, dyn DeviceComparator<K>>(
                comp,
                SearchBound::Upper,
                tuning,
            ),
            Some(_) => sorted_search_program::<K, u64, dyn DeviceComparator<K>>(
                comp,
                SearchBound::Lower,
                tuning,
            ),
        }
    }
}

/// Every sorted-search program the library ships: each primitive key type × built-in comparator
/// (both bounds, both index widths across the list). CI compiles all of them with NVRTC.
pub fn shipped_sorted_search_programs() -> Vec<Program> {
    shipped_programs(&SortedSearchPrograms)
}
