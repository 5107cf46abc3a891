//! Sorted search: each needle's lower or upper bound in a sorted haystack, as a merge path walk (tuning, programs, launches).

use std::mem::size_of;

use cudarc::driver::{DevicePtr, DevicePtrMut};

use crate::compare::{sanitize, DeviceComparator};
use crate::error::check_len;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{check_words, param_asserts, param_block, KernelParams};
use crate::runtime::phases::partition_params;
use crate::runtime::program::{
    entry_points, program, program_id, shipped_programs, Program, ProgramFactory, ValueLayout,
    CTA_MERGE_CUH, PARTITION_CUH, SERIAL_CUH,
};
use crate::runtime::shape::MAX_STATIC_SHARED_BYTES;
use crate::runtime::staging::Staged;
use crate::runtime::status::messages;
use crate::search::{too_large, DeviceIndex, SearchBound, SearchScratch, SEARCH_OUTPUTS};

pub mod tuning;

pub use tuning::SortedSearchTuning;

/// `kernels/sorted_search.cu`: the sorted search's partition and tile kernels.
pub const SORTED_SEARCH_CU: &str = include_str!("../../kernels/sorted_search.cu");
entry_points! {
    /// Every entry point of a sorted-search program.
    SORTED_SEARCH_ENTRIES = [
        /// Entry point of the sorted search's partition kernel.
        SORTED_SEARCH_ENTRY_PARTITION = "twophase_search_partition",
        /// Entry point of the sorted search's tile kernel.
        SORTED_SEARCH_ENTRY_TILE = "twophase_search_tile",
    ];
}

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

partition_params! {
    /// The parameter block of `twophase_search_partition` (kernels/sorted_search.cu).
    struct SearchPartitionParams as "search_partition_params" {
        needles: u64,
        needle_count: u64,
        haystack: u64,
        haystack_count: u64,
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
        ..check_words,
    }
}

impl Gpu {
    /// Both kernels of one sorted search over device addresses: the needles, the haystack and
    /// the output, the first two holding `counts` keys.
    #[allow(clippy::too_many_arguments)] // The call's shape: each argument is one part of it.
    fn launch_sorted_search<K: DeviceKey, I: DeviceIndex, C: DeviceComparator<K> + ?Sized>(
        &self,
        [needles, haystack, out]: [u64; 3],
        (needle_count, haystack_count): (usize, usize),
        bound: SearchBound,
        comp: &C,
        tuning: Option<SortedSearchTuning>,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        let tuning = tuning.unwrap_or(SortedSearchTuning::for_key(size_of::<K>()));
        tuning.validate(size_of::<K>())?;
        // With no needles the kernels still run over the haystack: they check its order.
        if needle_count == 0 && haystack_count == 0 {
            return Ok(());
        }
        too_large::<I>("haystack length", haystack_count)?;
        let primitive = search_primitive::<I>(bound);
        let (key, name) = program_id::<K, C>(&primitive, comp, None, tuning.threads, tuning.vt);
        let kernels = self.kernels(
            &key,
            &name,
            || sorted_search_program::<K, I, C>(comp, bound, tuning).source,
            &SORTED_SEARCH_ENTRIES,
        )?;
        // The tile's keys and bounds in dynamic shared memory, opted in past the static limit.
        let tile_shared = kernels.allow_dynamic_shared(
            SORTED_SEARCH_ENTRY_TILE,
            tuning.shared_bytes(size_of::<K>()),
            MAX_STATIC_SHARED_BYTES,
            self.max_shared_per_block_optin(),
        )?;
        let partition = kernels.function(SORTED_SEARCH_ENTRY_PARTITION)?;
        let tile_kernel = kernels.function(SORTED_SEARCH_ENTRY_TILE)?;
        let count = needle_count.checked_add(haystack_count).ok_or_else(|| {
            GpuError::TooLarge(format!(
                "{needle_count} needles and {haystack_count} haystack keys"
            ))
        })?;
        let (needle_count, haystack_count) = (needle_count as u64, haystack_count as u64);
        self.launch_phases(
            (count, SEARCH_OUTPUTS),
            (tuning.tile(), tuning.threads),
            &mut scratch.phases,
            |shape, args| {
                let params = SearchPartitionParams::new(
                    needles,
                    needle_count,
                    haystack,
                    haystack_count,
                    args,
                );
                // SAFETY: the block is twophase_search_partition's (kernels/sorted_search.cu;
                // the program asserts the layouts equal); the needles and the haystack hold the
                // given counts of K, the partitions buffer `num_partitions` entries, the check's
                // words live in the scratch, all valid on this stream until the launches are
                // made (launch_phases). The shape's blocks cover every boundary.
                unsafe { self.launch(partition, shape, &params) }
            },
            |shape, args| {
                let params = SearchTileParams {
                    needles,
                    needle_count,
                    haystack,
                    haystack_count,
                    partitions: args.partitions,
                    out,
                    status: args.status,
                    repair: args.repair,
                    generation: args.generation,
                };
                // SAFETY: the block is twophase_search_tile's (kernels/sorted_search.cu; the
                // program asserts the layouts equal); `out` holds one index of type I per needle
                // (checked by the callers); one block per tile, with the dynamic shared memory its
                // tuning needs (allowed above). The kernel reads and writes only
                // inside these buffers for any keys and comparator (kernels/sorted_search.cu). As
                // a programmatic dependent, it waits (griddepcontrol.wait) for the partition
                // kernel before reading the partitions.
                unsafe { self.launch(tile_kernel, shape.shared(tile_shared), &params) }
            },
        )
    }

    /// Sorted search on the device: for each needle of the sorted `needles`, its lower or upper
    /// bound in the sorted `haystack` under `comp`, written to `out` (one index of type `I` per
    /// needle). One merge of the two arrays split by merge path — no binary search per needle.
    /// `tuning` is the tile kernel's launch shape; `None` takes the one shipped for the key
    /// size ([`SortedSearchTuning::for_key`]). Asynchronous.
    ///
    /// Whatever the keys and the comparator, every needle's result is written once and lies
    /// within `[0, haystack.len()]`. Needles or a haystack not sorted under `comp` (and a
    /// comparator found inconsistent) are detected on the device and reported by
    /// [`SearchScratch::check`]; the results are then unspecified. With no needles the haystack
    /// is still read and checked, as the host call checks it.
    #[allow(clippy::too_many_arguments)] // The call's shape: each argument is one part of it.
    pub fn sorted_search_device<K: DeviceKey, I: DeviceIndex, C: DeviceComparator<K> + ?Sized>(
        &self,
        needles: &dyn DevicePtr<K>,
        haystack: &dyn DevicePtr<K>,
        out: &mut dyn DevicePtrMut<I>,
        bound: SearchBound,
        comp: &C,
        tuning: Option<SortedSearchTuning>,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        check_len("search output", needles.len(), out.len())?;
        let stream = self.stream().clone();
        let (n_ptr, _n) = needles.device_ptr(&stream);
        let (h_ptr, _h) = haystack.device_ptr(&stream);
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        let counts = (needles.len(), haystack.len());
        let addresses = [n_ptr, h_ptr, out_ptr];
        self.launch_sorted_search::<K, I, C>(addresses, counts, bound, comp, tuning, scratch)
    }

    /// Host convenience: sorted search of host slices (see
    /// [`sorted_search_device`](Self::sorted_search_device)), at the shipped tuning.
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
        let buffers = [
            Staged::Upload(bytemuck::cast_slice(needles)),
            Staged::Upload(bytemuck::cast_slice(haystack)),
            Staged::Download(bytemuck::cast_slice_mut(&mut out)),
        ];
        let counts = (needles.len(), haystack.len());
        self.search_through_staging(buffers, |addresses, scratch| {
            self.launch_sorted_search::<K, I, C>(addresses, counts, bound, comp, None, scratch)
        })?;
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
