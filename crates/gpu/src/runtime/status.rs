//! Device-side input checks: the status word kernels raise bits in, and the errors those bits name.
//!
//! A kernel that sees its input break a precondition (partitions that are not monotone, an
//! unsorted merge input or needle run, a bad scan or position) keeps every read and write inside
//! its buffers, produces a permutation (or in-range indices), and raises a bit in the call's
//! status word. Host-slice calls read the word after their synchronization and return
//! [`GpuError::InvalidInput`] naming the argument; device-buffer calls leave it in their scratch,
//! where [`InputCheck::check`] (through each scratch's `check`) reads and clears it.
//!
//! The same words hold the partition repair slot: a partition kernel that finds boundary `p`
//! and `p + 1` out of order raises `(generation << 32) | (u32::MAX - p)` there with an atomic
//! maximum, so that, per call, the slot holds the first bad boundary, and a value of an older
//! call (a smaller generation) never counts. Tiles past that boundary follow a fixed valid path
//! from it (kernels/partition.cuh, `repaired_boundary`): the output stays a permutation.

use cudarc::driver::{CudaSlice, DevicePtrMut};

use crate::error::GpuError;
use crate::runtime::device::Gpu;

/// Status bit: the first input is not sorted under the comparator (a merge's `a`, a sorted
/// search's needles).
pub const STATUS_FIRST_UNSORTED: u32 = 1;
/// Status bit: the second input is not sorted under the comparator (a merge's `b`, a sorted
/// search's haystack).
pub const STATUS_SECOND_UNSORTED: u32 = 2;
/// Status bit: the comparator answered inconsistently (a sort's merge found its own sorted runs
/// out of order): it is not a strict weak order.
pub const STATUS_ORDER_INCONSISTENT: u32 = 4;
/// Status bit: a segment scan does not start at 0, decreases, or passes the total.
pub const STATUS_SCAN_INVALID: u32 = 8;
/// Status bit: a gather or scatter position lies outside its buffer.
pub const STATUS_POSITION_INVALID: u32 = 16;
/// Status bit: a segmented sort's segments are not valid offsets into its keys (then its kernels
/// touch no key).
pub const STATUS_SEGMENTS_INVALID: u32 = 32;

/// Words of one check: the status bits, the partition repair slot, and a second one for a pass
/// whose partitions are built on others (the mergesort's four-way cuts, on its two-way samples).
const WORDS: usize = 3;
/// Index of the status bits among the words.
const STATUS_WORD: usize = 0;
/// Index of the partition repair slot among the words.
const REPAIR_WORD: usize = 1;
/// Index of the second repair slot among the words.
const SECOND_REPAIR_WORD: usize = 2;
/// Bytes of one word.
const WORD_BYTES: u64 = 8;

/// What each status bit means for one primitive, by argument: `(bit, message)`.
pub type StatusNames = &'static [(u32, &'static str)];

/// Device addresses and generation of one call's checks, passed to its kernels.
#[derive(Clone, Copy, Debug)]
pub struct CheckArgs {
    /// Address of the status word (`unsigned long long*`, bits raised with atomicOr).
    pub status: u64,
    /// Address of the partition repair slot (`unsigned long long*`).
    pub repair: u64,
    /// Address of a second repair slot, for partitions built on the first ones.
    pub second_repair: u64,
    /// This launch's generation (never 0): a repair slot value of an older one is ignored.
    pub generation: u32,
}

/// The status word and repair slot of one scratch (allocated zeroed on first use) and the
/// generation counter of the launches that use them.
#[derive(Debug, Default)]
pub struct InputCheck {
    words: Option<CudaSlice<u64>>,
    generation: u32,
}

impl InputCheck {
    /// An empty check; device memory is taken on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// The addresses to pass to one launch (or one pass of a sort), with a fresh generation.
    pub fn args(&mut self, gpu: &Gpu) -> Result<CheckArgs, GpuError> {
        if self.words.is_none() {
            // Zeroed: no status bit raised, and a repair slot of generation 0, which no launch has.
            self.words = Some(gpu.stream().alloc_zeros::<u64>(WORDS)?);
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1).max(1);
        let stream = gpu.stream().clone();
        let words = self
            .words
            .as_mut()
            .ok_or(GpuError::Poisoned("input check"))?;
        let (base, _sync) = words.device_ptr_mut(&stream);
        Ok(CheckArgs {
            status: base + STATUS_WORD as u64 * WORD_BYTES,
            repair: base + REPAIR_WORD as u64 * WORD_BYTES,
            second_repair: base + SECOND_REPAIR_WORD as u64 * WORD_BYTES,
            generation: self.generation,
        })
    }

    /// The addresses for the first launch of a call ([`args`](Self::args)). While the stream is
    /// being captured into a CUDA graph, the repair slots are cleared first (one memset node):
    /// every replay of the graph repeats the generations it captured, so a slot that an earlier
    /// replay tagged must not be read by a later one. Outside capture each launch's generation is
    /// fresh and no clearing is needed.
    pub fn call_args(&mut self, gpu: &Gpu) -> Result<CheckArgs, GpuError> {
        let args = self.args(gpu)?;
        let capturing = gpu.stream().capture_status()?;
        if capturing == cudarc::driver::sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE
        {
            let words = self
                .words
                .as_mut()
                .ok_or(GpuError::Poisoned("input check"))?;
            gpu.stream()
                .memset_zeros(&mut words.slice_mut(REPAIR_WORD..WORDS))?;
        }
        Ok(args)
    }

    /// Wait for the stream, then return and clear the status bits raised since the last call
    /// (0 when none, or when no launch used this check yet).
    pub fn take_status(&mut self, gpu: &Gpu) -> Result<u32, GpuError> {
        let Some(words) = self.words.as_mut() else {
            return Ok(0);
        };
        let stream = gpu.stream();
        let mut host = [0u64; WORDS];
        stream.memcpy_dtoh(&*words, &mut host)?;
        stream.synchronize()?;
        let bits = host[STATUS_WORD];
        if bits != 0 {
            stream.memset_zeros(&mut words.slice_mut(STATUS_WORD..STATUS_WORD + 1))?;
            stream.synchronize()?;
        }
        // Only the low 32 bits are ever raised.
        Ok(bits as u32)
    }

    /// Wait for the stream, then `Err(InvalidInput)` naming what `names` says of every bit raised
    /// since the last check (the bits are cleared), or `Ok` when none was.
    pub fn check(&mut self, gpu: &Gpu, names: StatusNames) -> Result<(), GpuError> {
        let bits = self.take_status(gpu)?;
        match status_error(bits, names) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// The error for status `bits` under `names` (every bit raised, in bit order, joined by "; "),
/// or `None` for no bit.
pub fn status_error(bits: u32, names: StatusNames) -> Option<GpuError> {
    if bits == 0 {
        return None;
    }
    // An unsorted input, a bad scan or position explains any inconsistency seen downstream of it.
    let input_bits = STATUS_FIRST_UNSORTED
        | STATUS_SECOND_UNSORTED
        | STATUS_SCAN_INVALID
        | STATUS_POSITION_INVALID
        | STATUS_SEGMENTS_INVALID;
    let bits = if bits & input_bits != 0 {
        bits & !STATUS_ORDER_INCONSISTENT
    } else {
        bits
    };
    let mut parts: Vec<String> = names
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, message)| (*message).to_owned())
        .collect();
    let known = names.iter().fold(0, |acc, (bit, _)| acc | bit);
    if bits & !known != 0 {
        parts.push(format!("input check bits {:#x} raised", bits & !known));
    }
    Some(GpuError::InvalidInput(parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: StatusNames = &[
        (
            STATUS_FIRST_UNSORTED,
            "`a` is not sorted under the comparator",
        ),
        (
            STATUS_SECOND_UNSORTED,
            "`b` is not sorted under the comparator",
        ),
    ];

    #[test]
    fn status_error_names_every_raised_bit() {
        assert!(status_error(0, NAMES).is_none());
        let message = status_error(STATUS_FIRST_UNSORTED | STATUS_SECOND_UNSORTED, NAMES)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("`a` is not sorted"), "{message}");
        assert!(message.contains("`b` is not sorted"), "{message}");
        let other = status_error(STATUS_SCAN_INVALID, NAMES)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(other.contains("0x8"), "{other}");
    }
}

/// The messages of [`GpuError::InvalidInput`] shared by both backends, so that a CPU call and a GPU
/// call reject the same input with the same words.
pub mod messages {
    /// A merge's first input.
    pub const A_UNSORTED: &str = "`a` is not sorted under the comparator";
    /// A merge's second input.
    pub const B_UNSORTED: &str = "`b` is not sorted under the comparator";
    /// A key-value merge's first keys.
    pub const A_KEYS_UNSORTED: &str = "`a_keys` is not sorted under the comparator";
    /// A key-value merge's second keys.
    pub const B_KEYS_UNSORTED: &str = "`b_keys` is not sorted under the comparator";
    /// A sorted search's needles.
    pub const NEEDLES_UNSORTED: &str = "`needles` is not sorted under the comparator";
    /// A sorted search's haystack.
    pub const HAYSTACK_UNSORTED: &str = "`haystack` is not sorted under the comparator";
    /// A sort whose comparator answered inconsistently.
    pub const ORDER_INCONSISTENT: &str =
        "the comparator does not implement a strict weak order (it answered inconsistently); the keys are a permutation of the input in unspecified order";
    /// A segment scan that is not an exclusive scan of sizes within the total.
    pub const SCAN_INVALID: &str = "`scan` must start at 0, not decrease, and not pass `total`";
    /// A segmented sort's segments, as its device check finds them (the host-slice calls name
    /// the exact fault first).
    pub const SEGMENTS_INVALID: &str = "the segments are invalid: `starts` must begin at 0, not decrease and not pass the keys' length (with `ends`: each segment within the keys, its start not past its end, in order and not overlapping)";
    /// A gather position past the input.
    pub const GATHER_INVALID: &str = "a `gather` position plus its segment's size passes the input";
    /// A scatter position past the output.
    pub const SCATTER_INVALID: &str =
        "a `scatter` position plus its segment's size passes the output";
}
