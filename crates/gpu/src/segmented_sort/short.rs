//! The segmented sort's short path: where no segment holds more than [`SHORT_MAX`] keys, one kernel sorts each segment on one thread (kernels/segmented_sort_short.cu).
//!
//! Whether a call takes it is decided on the device (the check records whether a segment is longer), so
//! the host launches the short kernel whenever the types allow it, next to the tile path's
//! kernels, which return at once where it took the call.

use super::{SegmentAddresses, SEGMENTED_SORT_ENTRY_SHORT};
use crate::error::GpuError;
use crate::primitive::value_bytes;
use crate::runtime::device::Gpu;
use crate::runtime::launch::{param_block, LaunchShape};
use crate::runtime::module_cache::Kernels;
use crate::runtime::shape::{strided_grid, MAX_STATIC_SHARED_BYTES};
use crate::runtime::staging::SortAddresses;

/// Most keys of a segment the short path sorts: the slots of one thread's sorting network
/// (`TP_SHORT_MAX`). Segments of 32 keys, the benchmark's `all32` row, are its reason.
pub const SHORT_MAX: usize = 32;
/// Threads of a short-kernel block, one segment each (`TP_SHORT_NT`): a block stages up to
/// `SHORT_THREADS * SHORT_MAX` keys, 16 KiB of 4-byte keys, in one coalesced span.
const SHORT_THREADS: u32 = 128;
/// Blocks of the short kernel an SM at most; each strides over the groups of SHORT_THREADS
/// segments. Eight keep a u32 program's SM full (64 registers a thread); and where the tile path
/// takes the call, only these blocks read the control word and return, where a block a group
/// cost a 2^27-key power-law call (25 million segments) about 0.4 ms of empty blocks.
const SHORT_BLOCKS_PER_SM: usize = 8;
/// Widest key the short path takes (`TP_SHORT_KEY_BYTES`): 32 keys (and their positions) of a
/// thread stay in registers up to 8-byte keys; wider ones take the tile path.
const SHORT_KEY_MAX_BYTES: usize = 8;
/// Widest value the short path takes (`TP_SHORT_VALUE_BYTES`): the block's values sit in shared
/// memory, `SHORT_THREADS * SHORT_MAX` of them, 32 KiB at 8 bytes.
const SHORT_VALUE_MAX_BYTES: usize = 8;
/// Bytes of a shared-memory bank: rows of keys (and of value sources) are padded by one.
const BANK_BYTES: usize = 4;
/// Bytes of a value's source offset in shared memory (a signed byte).
const OFFSET_BYTES: usize = 1;
/// The alignment of every shared-memory region (kernels/mergesort_blocksort.cu `align16`).
const SHARED_ALIGN: usize = 16;

param_block! {
    /// The parameter block of `twophase_segsort_short` (kernels/segmented_sort_short.cu).
    pub(super) struct ShortParams as "segsort_short_params" {
        keys: u64,
        vals: u64,
        starts: u64,
        ends: u64,
        num_segments: u64,
        count: u64,
        control: u64,
    }
}

/// The short path's defines for the program (kernels/segmented_sort.cu `SHORT_PATH_TYPES`).
pub(super) fn defines() -> String {
    format!(
        "#define TP_SHORT_MAX {SHORT_MAX}\n#define TP_SHORT_NT {SHORT_THREADS}\n\
         #define TP_SHORT_KEY_BYTES {SHORT_KEY_MAX_BYTES}\n\
         #define TP_SHORT_VALUE_BYTES {SHORT_VALUE_MAX_BYTES}\n"
    )
}

/// Whether keys of `key_bytes` with values of `value_bytes` (0: none) take the short path: the
/// host's twin of kernels/segmented_sort.cu `SHORT_PATH_TYPES` (the kernel of other types is
/// empty and not launched, and the tile path never stands aside for it).
pub(super) const fn short_path_types(key_bytes: usize, value_bytes: usize) -> bool {
    key_bytes <= SHORT_KEY_MAX_BYTES && value_bytes <= SHORT_VALUE_MAX_BYTES
}

const fn aligned(bytes: usize) -> usize {
    bytes.div_ceil(SHARED_ALIGN) * SHARED_ALIGN
}

/// Elements of padding after each row of [`SHORT_MAX`] elements of `bytes` bytes: a bank's width,
/// at least one element (kernels/segmented_sort_short.cu `short_row_pad`).
const fn row_pad(bytes: usize) -> usize {
    if bytes >= BANK_BYTES {
        1
    } else {
        BANK_BYTES / bytes
    }
}

/// Dynamic shared memory of a short-kernel block (kernels/segmented_sort_short.cu `short_smem`):
/// the span's keys in padded rows; with values their source offsets (padded rows) and the values.
pub(super) const fn short_shared_bytes(key_bytes: usize, value_bytes: usize) -> usize {
    let span = SHORT_THREADS as usize * SHORT_MAX;
    let rows = SHORT_THREADS as usize;
    let keys = aligned((span + rows * row_pad(key_bytes)) * key_bytes);
    if value_bytes == 0 {
        return keys;
    }
    keys + aligned((span + rows * row_pad(OFFSET_BYTES)) * OFFSET_BYTES)
        + aligned(span * value_bytes)
}

impl Gpu {
    /// Launch the short kernel over `segments` of `buffers` (at least one key and one segment)
    /// with the call's control words at `control`, which the check wrote before: it sorts the
    /// keys only where they say every segment is valid and short. Nothing is launched for types
    /// the short path does not take.
    pub(super) fn launch_segmented_short(
        &self,
        kernels: &Kernels,
        buffers: SortAddresses,
        segments: SegmentAddresses,
        key_bytes: usize,
        control: u64,
        dependent: bool,
    ) -> Result<(), GpuError> {
        let value_bytes = value_bytes(buffers.layout);
        if !short_path_types(key_bytes, value_bytes) {
            return Ok(());
        }
        let [short] = kernels.functions([SEGMENTED_SORT_ENTRY_SHORT])?;
        let shared = kernels.allow_dynamic_shared(
            SEGMENTED_SORT_ENTRY_SHORT,
            short_shared_bytes(key_bytes, value_bytes),
            MAX_STATIC_SHARED_BYTES,
            self.max_shared_per_block_optin(),
        )?;
        let params = ShortParams {
            keys: buffers.keys,
            vals: buffers.values,
            starts: segments.starts,
            ends: segments.ends,
            num_segments: segments.count as u64,
            count: buffers.count as u64,
            control,
        };
        let grid = strided_grid(
            segments.count,
            SHORT_THREADS,
            SHORT_BLOCKS_PER_SM,
            self.multiprocessors(),
        )?;
        // SAFETY: the block is twophase_segsort_short's (kernels/segmented_sort_short.cu; the
        // program asserts the layouts equal). Each block strides over the groups of
        // SHORT_THREADS segments; for each it reads starts (and ends, when not null) at
        // segment indices below `num_segments`, their lengths, and only after the check (the
        // launch before, on this stream) found them valid and none longer than SHORT_MAX; it
        // then reads and writes keys (and values) only in [starts[first], end of its last
        // segment), within `count` for valid segments, staged in `shared` bytes of dynamic
        // shared memory (short_shared_bytes, the kernel's own layout); otherwise it returns.
        unsafe {
            self.launch(
                short,
                LaunchShape::new(grid, SHORT_THREADS)
                    .shared(shared)
                    .dependent(dependent),
                &params,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_and_types_of_the_short_path() {
        // 4096 u32 keys in rows of 33: 16896 bytes.
        assert_eq!(short_shared_bytes(4, 0), 16_896);
        // u8 keys: rows of 32 + 4 bytes.
        assert_eq!(short_shared_bytes(1, 0), 4_608);
        // u64 keys and values: keys 33792, offsets 4608, values 32768.
        assert_eq!(short_shared_bytes(8, 8), 33_792 + 4_608 + 32_768);
        assert!(short_path_types(8, 8) && short_path_types(1, 0));
        assert!(!short_path_types(16, 0) && !short_path_types(4, 16));
    }
}
