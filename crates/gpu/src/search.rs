//! What the load-balancing search and the sorted search share: index types, the search bound, their scratch and length checks.
//!
//! Both are merges in disguise (docs/design.md): the load-balancing search merges the counting
//! sequence `0..total` with the segment starts (the exclusive scan of segment sizes), upper bound;
//! the sorted search merges needles with a haystack, lower or upper bound. Each runs as a partition
//! kernel (one merge path search per tile boundary) and a tile kernel (shared memory, per-thread
//! merge path, `serial_load_balance` / `serial_search` of VT steps, strided coalesced output).
//! They live in [`crate::load_balance`] and [`crate::sorted_search`].

use crate::error::GpuError;
use crate::runtime::device::Gpu;
use crate::runtime::phases::PhaseScratch;
use crate::runtime::staging::Staged;
use crate::runtime::status::{
    messages, status_error, StatusNames, STATUS_FIRST_UNSORTED, STATUS_ORDER_INCONSISTENT,
    STATUS_POSITION_INVALID, STATUS_SCAN_INVALID, STATUS_SECOND_UNSORTED,
};

mod sealed {
    /// Keeps [`DeviceIndex`](super::DeviceIndex) to `u32`, `u64` and `usize`: the kernels index
    /// memory with these values, so a CUDA type or maximum that disagreed with the Rust type
    /// would let them write outside their buffers.
    pub trait Sealed {}
}

/// An index type of the load-balancing search and sorted search: segment starts, segment ids,
/// ranks and search results. `u32` halves the bytes moved but limits totals, segment counts and
/// haystack lengths to `u32::MAX`; `u64` (and `usize` on 64-bit targets) has no practical limit.
/// Sealed: only those three.
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// #[repr(transparent)]
/// struct Narrow(u8);
/// // SAFETY: a plain byte.
/// unsafe impl bytemuck::Zeroable for Narrow {}
/// unsafe impl bytemuck::Pod for Narrow {}
/// impl twophase_gpu::DeviceIndex for Narrow {
///     const CUDA_TYPE: &'static str = "unsigned long long";
///     const MAX: u64 = u64::MAX;
/// }
/// ```
pub trait DeviceIndex: bytemuck::Pod + Send + Sync + sealed::Sealed + 'static {
    /// The CUDA type of identical layout.
    const CUDA_TYPE: &'static str;
    /// The largest value the type holds.
    const MAX: u64;
}

/// Which bound of each needle a sorted search returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SearchBound {
    /// The first haystack position whose key is not less than the needle.
    Lower,
    /// The first haystack position whose key is greater than the needle.
    Upper,
}

/// Device scratch of the load-balancing and sorted searches (the partitions and the input check),
/// reusable across calls: it only grows.
///
/// The device-buffer calls that use it check their input on the device (sorted needles and
/// haystack; a valid scan; positions inside their buffers) and record what they found here,
/// without synchronizing: [`check`](Self::check) waits for the stream and returns the error of
/// every call since the last check.
#[derive(Debug, Default)]
pub struct SearchScratch {
    pub(crate) phases: PhaseScratch,
}

/// A sorted search whose partitions came out of order although every adjacent pair of needles
/// and of haystack keys was in order.
pub const SEARCH_ORDER_INCONSISTENT: &str = "the comparator does not implement a strict weak order (it answered inconsistently); the search results are within [0, haystack.len()] but unspecified";

/// A device-buffer interval call found a position outside its buffer (the device does not tell
/// gather from scatter positions apart).
pub const POSITION_INVALID: &str =
    "a `gather` or `scatter` position plus its segment's size passes its buffer; those items were not moved";

/// What the status bits of a search scratch mean, by argument.
const SEARCH_STATUS_NAMES: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::NEEDLES_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::HAYSTACK_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, SEARCH_ORDER_INCONSISTENT),
    (STATUS_SCAN_INVALID, messages::SCAN_INVALID),
    (STATUS_POSITION_INVALID, POSITION_INVALID),
];

/// The error of the status `bits` of a search scratch, or `None`: an unsorted needle run or
/// haystack explains partitions out of order, so the comparator is only blamed when neither is.
pub(crate) fn search_status_error(bits: u32) -> Option<GpuError> {
    let bits = if bits & (STATUS_FIRST_UNSORTED | STATUS_SECOND_UNSORTED) != 0 {
        bits & !STATUS_ORDER_INCONSISTENT
    } else {
        bits
    };
    status_error(bits, SEARCH_STATUS_NAMES)
}

impl SearchScratch {
    /// An empty scratch; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for the stream, then report what the device-buffer calls that used this scratch
    /// found since the last check: [`GpuError::InvalidInput`] naming each broken precondition
    /// (`needles` or `haystack` not sorted under the comparator, an inconsistent comparator, an
    /// invalid `scan`, a `gather` or `scatter` position past its buffer), or `Ok`. Clears what it
    /// reports. Those calls kept every read and write inside their buffers: search results lie
    /// within `[0, haystack.len()]`, and items of an invalid scan's tiles or at invalid positions
    /// were not written.
    pub fn check(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        let bits = self.phases.input_check.take_status(gpu)?;
        match search_status_error(bits) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// What a search's count of merge outputs counts, in its too-large error.
pub(crate) const SEARCH_OUTPUTS: &str = "merge outputs";

impl Gpu {
    /// One host-slice search: `buffers` go through the handle's staging buffers, `launch` runs
    /// with their device addresses and the pooled search scratch, then the scratch is checked
    /// even when the launch failed (so that no finding is left for a later call). The launch's
    /// error comes first.
    pub(crate) fn search_through_staging<const N: usize>(
        &self,
        mut buffers: [Staged<'_>; N],
        launch: impl FnOnce([u64; N], &mut SearchScratch) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let mut scratch = self.pooled_scratch::<SearchScratch>();
        let launched =
            self.through_staging(&mut buffers, |addresses| launch(addresses, &mut scratch));
        let checked = scratch.check(self);
        launched?;
        checked
    }
}

/// [`GpuError::SizeMismatch`] unless `values` holds one value per segment of a scan of
/// `segments` entries (more are allowed).
pub fn check_values_per_segment(segments: usize, values: usize) -> Result<(), GpuError> {
    if values < segments {
        return Err(GpuError::SizeMismatch {
            what: "values (one per segment)",
            expected: segments,
            got: values,
        });
    }
    Ok(())
}

pub(crate) fn too_large<I: DeviceIndex>(what: &str, n: usize) -> Result<(), GpuError> {
    if n as u64 > I::MAX {
        return Err(GpuError::TooLarge(format!(
            "{what} = {n} does not fit the index type {}",
            I::CUDA_TYPE
        )));
    }
    Ok(())
}

/// Widen a host index to 64 bits.
pub trait HostIndex: DeviceIndex + Copy {
    /// The value as `u64`.
    fn to_u64(self) -> u64;
}

/// The [`DeviceIndex`] and [`HostIndex`] impls of unsigned integer types, each with the CUDA type
/// of identical layout (every one widens to `u64` without loss).
macro_rules! index_types {
    ($($(#[$attr:meta])* $ty:ty => $cuda:literal,)*) => {$(
        $(#[$attr])*
        impl sealed::Sealed for $ty {}

        $(#[$attr])*
        impl DeviceIndex for $ty {
            const CUDA_TYPE: &'static str = $cuda;
            const MAX: u64 = <$ty>::MAX as u64;
        }

        $(#[$attr])*
        impl HostIndex for $ty {
            fn to_u64(self) -> u64 {
                self as u64
            }
        }
    )*};
}

index_types! {
    u32 => "unsigned int",
    u64 => "unsigned long long",
    #[cfg(target_pointer_width = "64")]
    usize => "unsigned long long",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsorted_input_is_named_instead_of_the_comparator() {
        assert!(search_status_error(0).is_none());
        let both = search_status_error(STATUS_FIRST_UNSORTED | STATUS_ORDER_INCONSISTENT)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(both.contains(messages::NEEDLES_UNSORTED), "{both}");
        assert!(!both.contains("strict weak order"), "{both}");
        let alone = search_status_error(STATUS_ORDER_INCONSISTENT)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(alone.contains(SEARCH_ORDER_INCONSISTENT), "{alone}");
        let scan = search_status_error(STATUS_SCAN_INVALID | STATUS_POSITION_INVALID)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(scan.contains(messages::SCAN_INVALID), "{scan}");
        assert!(scan.contains(POSITION_INVALID), "{scan}");
    }
}
