//! The two-phase GPU load-balancing search (with interval expand/move and a user snippet form), and what it shares with the sorted search.
//!
//! Both are merges in disguise (docs/design.md): the load-balancing search merges the counting
//! sequence `0..total` with the segment starts (the exclusive scan of segment sizes), upper bound;
//! the sorted search merges needles with a haystack, lower or upper bound. Each runs as a partition
//! kernel (one merge path search per tile boundary) and a tile kernel (shared memory, per-thread
//! merge path, `serial_load_balance` / `serial_search` of VT steps, strided coalesced output).
//! The sorted search's tuning, programs and launches are in [`crate::sorted_search`].

use std::ffi::c_void;
use std::mem::{align_of, size_of};

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use crate::compare::sanitize;
use crate::context::{kernel_param, Gpu, Staged};
use crate::error::GpuError;
use crate::fault::lock_recover;
use crate::key::{cuda_value_type, DeviceValue};
use crate::merge::{overlapped_partition_blocks, MAX_GRID_X};
use crate::program::{
    check_launch_shape, shipped_programs, Program, ValueLayout, CTA_LOAD_BALANCE_CUH,
    LOAD_BALANCE_CU, LOAD_BALANCE_ENTRIES, LOAD_BALANCE_ENTRY_EXPAND, LOAD_BALANCE_ENTRY_FOR_EACH,
    LOAD_BALANCE_ENTRY_MOVE, LOAD_BALANCE_ENTRY_PARTITION, LOAD_BALANCE_ENTRY_TILE, PARTITION_CUH,
    PARTITION_THREADS, SERIAL_CUH, SHIPPED_VALUE_LAYOUTS,
};
use crate::status::{
    messages, status_error, CheckArgs, InputCheck, StatusNames, STATUS_FIRST_UNSORTED,
    STATUS_ORDER_INCONSISTENT, STATUS_POSITION_INVALID, STATUS_SCAN_INVALID,
    STATUS_SECOND_UNSORTED,
};

/// An index type of the load-balancing search and sorted search: segment starts, segment ids,
/// ranks and search results. `u32` halves the bytes moved but limits totals, segment counts and
/// haystack lengths to `u32::MAX`; `u64` (and `usize` on 64-bit targets) has no practical limit.
pub trait DeviceIndex: bytemuck::Pod + Send + Sync + 'static {
    /// The CUDA type of identical layout.
    const CUDA_TYPE: &'static str;
    /// The largest value the type holds.
    const MAX: u64;
}

impl DeviceIndex for u32 {
    const CUDA_TYPE: &'static str = "unsigned int";
    const MAX: u64 = u32::MAX as u64;
}

impl DeviceIndex for u64 {
    const CUDA_TYPE: &'static str = "unsigned long long";
    const MAX: u64 = u64::MAX;
}

#[cfg(target_pointer_width = "64")]
impl DeviceIndex for usize {
    const CUDA_TYPE: &'static str = "unsigned long long";
    const MAX: u64 = u64::MAX;
}

/// Which bound of each needle a sorted search returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SearchBound {
    /// The first haystack position whose key is not less than the needle.
    Lower,
    /// The first haystack position whose key is greater than the needle.
    Upper,
}

pub use crate::sorted_search::{sorted_search_program, SortedSearchTuning};

/// Launch shape of a load-balancing tile kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadBalanceTuning {
    /// Threads per block (NT).
    pub threads: u32,
    /// Merge steps per thread (VT): items plus segment starts each thread walks serially.
    pub vt: u32,
}

impl LoadBalanceTuning {
    /// Merge outputs (items + segment starts) per tile: NT * VT.
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.vt as usize
    }

    /// The shipped tuning (H100 sweeps in docs/tuning.md). Reasons:
    /// - The work is a stream (a segment start read per segment, an index written per item); the
    ///   in-tile merge runs on 32-bit shared-memory values, whatever the index type.
    /// - NT = 256, VT = 15 (3840 merge outputs, 30 KB of shared memory): large tiles keep the
    ///   partition searches few and many loads in flight; seven blocks still fit an SM.
    /// - VT is odd, so that the per-thread strides into shared memory spread over the banks.
    pub const SHIPPED: LoadBalanceTuning = LoadBalanceTuning {
        threads: 256,
        vt: 15,
    };

    /// Shared memory of one tile: the starts (NV + 2 ints) and each item's segment slot (NV ints).
    pub const fn shared_bytes(&self) -> usize {
        (2 * self.tile() + 2) * size_of::<i32>()
    }

    /// Check the tuning against what the kernels support.
    pub fn validate(&self) -> Result<(), GpuError> {
        check_launch_shape(self.threads, self.vt, false, self.shared_bytes())
    }
}

/// Number of 64-bit arguments a [`LoadBalanceOp`] snippet receives (`args.p[0..OP_ARGS]`).
pub const OP_ARGS: usize = 8;

/// The arguments of a user snippet, passed by value to the kernel: device addresses (from
/// `DevicePtr::device_ptr`) or plain numbers, as the snippet casts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct OpArgs(pub [u64; OP_ARGS]);

/// A CUDA snippet run once per work item of a load-balancing search: the body of
/// `__device__ void operator()(unsigned long long item, unsigned long long segment,
/// unsigned long long rank, const twophase_op_args& args) const`, where `args.p[i]` are the
/// [`OpArgs`] given at launch. Items are handed out in strided order inside a tile (consecutive
/// threads get consecutive items), so item-indexed accesses coalesce.
///
/// The snippet is trusted code, like a comparator body: it runs with the device's full access,
/// and the pointers it is given must be valid for what it does with them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoadBalanceOp {
    name: String,
    body: String,
    helpers: String,
}

impl LoadBalanceOp {
    /// A snippet named `name` (letters, digits and `_`; other characters are replaced by `_`).
    pub fn new(name: &str, cuda_body: &str) -> Self {
        LoadBalanceOp {
            name: sanitize(name),
            body: cuda_body.to_owned(),
            helpers: String::new(),
        }
    }

    /// The same snippet with CUDA helper definitions placed before it (device functions, types).
    pub fn with_helpers(mut self, cuda_helpers: &str) -> Self {
        self.helpers = cuda_helpers.to_owned();
        self
    }

    /// The snippet of the built-in kernels' programs: does nothing.
    pub fn none() -> Self {
        LoadBalanceOp::new("none", "")
    }

    /// The snippet's name.
    pub fn name(&self) -> &str {
        &self.name
    }
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
    partitions: Option<CudaSlice<u64>>,
    pub(crate) input_check: InputCheck,
}

/// What the status bits of a search scratch mean, by argument.
const SEARCH_STATUS_NAMES: StatusNames = &[
    (STATUS_FIRST_UNSORTED, messages::NEEDLES_UNSORTED),
    (STATUS_SECOND_UNSORTED, messages::HAYSTACK_UNSORTED),
    (STATUS_ORDER_INCONSISTENT, SEARCH_ORDER_INCONSISTENT),
    (STATUS_SCAN_INVALID, messages::SCAN_INVALID),
    (STATUS_POSITION_INVALID, POSITION_INVALID),
];

/// A sorted search whose partitions came out of order although every adjacent pair of needles
/// and of haystack keys was in order.
pub const SEARCH_ORDER_INCONSISTENT: &str = "the comparator does not implement a strict weak order (it answered inconsistently); the search results are within [0, haystack.len()] but unspecified";

/// A device-buffer interval call found a position outside its buffer (the device does not tell
/// gather from scatter positions apart).
pub const POSITION_INVALID: &str =
    "a `gather` or `scatter` position plus its segment's size passes its buffer; those items were not moved";

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
        let bits = self.input_check.take_status(gpu)?;
        match search_status_error(bits) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    pub(crate) fn partitions(
        &mut self,
        gpu: &Gpu,
        count: usize,
    ) -> Result<&mut CudaSlice<u64>, GpuError> {
        let big_enough = self.partitions.as_ref().is_some_and(|p| p.len() >= count);
        if !big_enough {
            self.partitions = None;
            // SAFETY: the partition kernel writes every entry the tile kernel reads before it
            // reads it (same stream, launched first).
            self.partitions = Some(unsafe { gpu.stream().alloc::<u64>(count.max(1)) }?);
        }
        self.partitions
            .as_mut()
            .ok_or(GpuError::Poisoned("search scratch"))
    }
}

/// The load-balancing program for index type `I`, value layout and user snippet, at `tuning`: all
/// five kernels (partition, segments, expand, move, for-each) in one module.
pub fn load_balance_program<I: DeviceIndex>(
    values: ValueLayout,
    op: &LoadBalanceOp,
    tuning: LoadBalanceTuning,
) -> Program {
    let (key, name) = load_balance_program_id::<I>(values, op, tuning);
    let value_type = values.map_or_else(
        || "unsigned char".to_owned(),
        |(size, align)| cuda_value_type(size, align),
    );
    let mut source = format!(
        "// {name}: generated by twophase-gpu.\n\
         #define TP_NT {nt}\n#define TP_VT {vt}\n#define TP_PARTITION_NT {pnt}\n\
         template <int N, int A> struct alignas(A) twophase_value_bytes {{ unsigned char bytes[N]; }};\n\
         typedef {index} index_type;\ntypedef {value_type} value_type;\n\
         struct twophase_op_args {{ unsigned long long p[{args}]; }};\n{helpers}\n\
         struct load_balance_user_op {{\n  __device__ __forceinline__ void operator()(unsigned long long item, \
         unsigned long long segment, unsigned long long rank, const twophase_op_args& args) const {{\n    \
         (void)item; (void)segment; (void)rank; (void)args;\n    {body}\n  }}\n}};\n",
        nt = tuning.threads,
        vt = tuning.vt,
        pnt = PARTITION_THREADS,
        index = I::CUDA_TYPE,
        args = OP_ARGS,
        helpers = op.helpers,
        body = op.body,
    );
    for part in [
        PARTITION_CUH,
        SERIAL_CUH,
        CTA_LOAD_BALANCE_CUH,
        LOAD_BALANCE_CU,
    ] {
        source.push_str(part);
        source.push('\n');
    }
    Program { key, name, source }
}

/// The cache key and source name of a load-balancing program, without building its source.
pub fn load_balance_program_id<I: DeviceIndex>(
    values: ValueLayout,
    op: &LoadBalanceOp,
    tuning: LoadBalanceTuning,
) -> (String, String) {
    let value_tag = values.map_or("novalues".to_owned(), |(size, align)| {
        format!("v{size}a{align}")
    });
    let name = format!(
        "twophase_load_balance_{}_{}_{}_nt{}_vt{}.cu",
        sanitize(I::CUDA_TYPE),
        value_tag,
        op.name,
        tuning.threads,
        tuning.vt
    );
    let key = format!("{name}|{}|{}", op.helpers, op.body);
    (key, name)
}

/// Which tile kernel of the load-balancing program a call runs, with its own arguments.
enum TileCall {
    /// Segment ids (and ranks when the second address is not 0).
    Segments { segments: u64, ranks: u64 },
    /// `out[item] = values[segment]`.
    Expand { values: u64, out: u64 },
    /// `output[scatter[s] + rank] = input[gather[s] + rank]` (0 for identity); the input and
    /// output as (address, element count), every position checked against the counts.
    Move {
        gather: u64,
        scatter: u64,
        input: (u64, u64),
        output: (u64, u64),
    },
    /// The user snippet.
    ForEach { args: OpArgs },
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

impl HostIndex for u32 {
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
}

impl HostIndex for u64 {
    fn to_u64(self) -> u64 {
        self
    }
}

#[cfg(target_pointer_width = "64")]
impl HostIndex for usize {
    fn to_u64(self) -> u64 {
        self as u64
    }
}

/// Check a host segment scan: starts at 0, non-decreasing, at most `total`, at least one segment
/// when there are items. The error names `scan` and the first entry that breaks the rule.
fn check_host_scan<I: HostIndex>(scan: &[I], total: usize) -> Result<(), GpuError> {
    let invalid = |detail: String| {
        Err(GpuError::InvalidInput(format!(
            "{}: {detail}",
            messages::SCAN_INVALID
        )))
    };
    if scan.is_empty() && total > 0 {
        return invalid(format!(
            "it is empty, and {total} work items need a segment"
        ));
    }
    if let Some(&first) = scan.first() {
        if first.to_u64() != 0 {
            return invalid(format!("scan[0] = {}", first.to_u64()));
        }
    }
    if let Some(s) = scan.windows(2).position(|w| w[0].to_u64() > w[1].to_u64()) {
        return invalid(format!(
            "scan[{}] = {} < scan[{s}] = {}",
            s + 1,
            scan[s + 1].to_u64(),
            scan[s].to_u64()
        ));
    }
    if let Some(&last) = scan.last() {
        if last.to_u64() > total as u64 {
            return invalid(format!(
                "scan[{}] = {} > total = {total}",
                scan.len() - 1,
                last.to_u64()
            ));
        }
    }
    Ok(())
}

/// Check host gather or scatter positions (one per segment of the valid `scan`) against a buffer
/// of `len` elements: every `positions[s] + size(s)` of a non-empty segment at most `len`,
/// computed without overflow. The error is `message` with the first segment that passes the
/// buffer.
fn check_host_positions<I: HostIndex>(
    message: &str,
    scan: &[I],
    total: usize,
    positions: &[I],
    len: usize,
) -> Result<(), GpuError> {
    for (s, position) in positions.iter().enumerate() {
        let start = scan[s].to_u64();
        let end = scan.get(s + 1).map_or(total as u64, |e| e.to_u64());
        let size = end.saturating_sub(start);
        if size == 0 {
            // An empty segment moves nothing: its position is never used (as on the device).
            continue;
        }
        let fits = position
            .to_u64()
            .checked_add(size)
            .is_some_and(|end| end <= len as u64);
        if !fits {
            return Err(GpuError::InvalidInput(format!(
                "{message}: segment {s} at position {} with {size} items, buffer of {len}",
                position.to_u64()
            )));
        }
    }
    Ok(())
}

impl Gpu {
    /// Compile (or fetch from the caches) a load-balancing program ahead of the first call.
    pub fn prepare_load_balance<I: DeviceIndex>(
        &self,
        values: ValueLayout,
        op: &LoadBalanceOp,
        tuning: LoadBalanceTuning,
    ) -> Result<(), GpuError> {
        let (key, name) = load_balance_program_id::<I>(values, op, tuning);
        self.kernels(
            &key,
            &name,
            || load_balance_program::<I>(values, op, tuning).source,
            &LOAD_BALANCE_ENTRIES,
        )
        .map(|_| ())
    }

    /// Both kernels of one load-balancing call over the device scan at address `scan`.
    #[allow(clippy::too_many_arguments)] // The call's shape: each argument is one part of it.
    fn launch_load_balance<I: DeviceIndex>(
        &self,
        scan: u64,
        num_segments: usize,
        total: usize,
        call: TileCall,
        values: ValueLayout,
        op: &LoadBalanceOp,
        tuning: LoadBalanceTuning,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        tuning.validate()?;
        crate::program::check_value_layout(values)?;
        if total == 0 {
            return Ok(());
        }
        if num_segments == 0 {
            return Err(GpuError::InvalidInput(format!(
                "{}: {total} work items need at least one segment",
                messages::SCAN_INVALID
            )));
        }
        too_large::<I>("total", total)?;
        too_large::<I>("segment count", num_segments)?;
        let (key, name) = load_balance_program_id::<I>(values, op, tuning);
        let kernels = self.kernels(
            &key,
            &name,
            || load_balance_program::<I>(values, op, tuning).source,
            &LOAD_BALANCE_ENTRIES,
        )?;
        let entry = match call {
            TileCall::Segments { .. } => LOAD_BALANCE_ENTRY_TILE,
            TileCall::Expand { .. } => LOAD_BALANCE_ENTRY_EXPAND,
            TileCall::Move { .. } => LOAD_BALANCE_ENTRY_MOVE,
            TileCall::ForEach { .. } => LOAD_BALANCE_ENTRY_FOR_EACH,
        };
        let partition = kernels.function(LOAD_BALANCE_ENTRY_PARTITION)?;
        let tile_kernel = kernels.function(entry)?;

        let count = total.checked_add(num_segments).ok_or_else(|| {
            GpuError::TooLarge(format!("{total} items and {num_segments} segments"))
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
        let (segments, total_u, spacing, partition_count) = (
            num_segments as u64,
            total as u64,
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
        let mut params: [*mut c_void; 9] = [
            kernel_param(&scan),
            kernel_param(&segments),
            kernel_param(&total_u),
            kernel_param(&spacing),
            kernel_param(&partition_count),
            kernel_param(&partitions_ptr),
            kernel_param(&status),
            kernel_param(&repair),
            kernel_param(&generation),
        ];
        // SAFETY: six 64-bit values and the check's three (two device addresses, a 32-bit
        // generation) matching twophase_lbs_partition's parameters in kernels/load_balance.cu;
        // the scan holds `num_segments` indices of type I and the partitions buffer
        // `num_partitions` entries, both valid on this stream.
        unsafe {
            self.launch_raw(
                partition,
                partition_blocks,
                PARTITION_THREADS,
                &mut params,
                false,
            )
        }?;

        let head: [*mut c_void; 4] = [
            kernel_param(&scan),
            kernel_param(&segments),
            kernel_param(&total_u),
            kernel_param(&partitions_ptr),
        ];
        let mut params: Vec<*mut c_void> = head.to_vec();
        match &call {
            TileCall::Segments { segments, ranks } => {
                params.push(kernel_param(segments));
                params.push(kernel_param(ranks));
            }
            TileCall::Expand { values, out } => {
                params.push(kernel_param(values));
                params.push(kernel_param(out));
            }
            TileCall::Move {
                gather,
                scatter,
                input,
                output,
            } => {
                params.push(kernel_param(gather));
                params.push(kernel_param(scatter));
                params.push(kernel_param(&input.0));
                params.push(kernel_param(&input.1));
                params.push(kernel_param(&output.0));
                params.push(kernel_param(&output.1));
            }
            TileCall::ForEach { args } => {
                params.push(kernel_param(args));
            }
        }
        params.push(kernel_param(&status));
        params.push(kernel_param(&repair));
        params.push(kernel_param(&generation));
        // SAFETY: the parameters match the chosen tile kernel of kernels/load_balance.cu (four
        // 64-bit head values, then its own pointers and counts, or the 64-byte twophase_op_args
        // struct that OpArgs mirrors with #[repr(C)], then the check's two addresses and 32-bit
        // generation); the callers checked the output lengths against `total`, the values
        // against the segments and the value pointers against the program's value layout; the
        // move kernel checks every position against the counts it is given. Whatever the scan
        // holds, the tiles read and write only inside these buffers (kernels/cta_load_balance.cuh);
        // one block per tile.
        unsafe {
            self.launch_raw(
                tile_kernel,
                num_tiles as u32,
                tuning.threads,
                &mut params,
                true,
            )
        }?;
        Ok(())
    }

    /// Load-balancing search on the device: for each of the `total` work items, the segment it
    /// belongs to in `segments` (length `total`), given `scan`, the exclusive scan of the segment
    /// sizes (`scan[s]` = first item of segment `s`: starts at 0, non-decreasing, at most
    /// `total`). Empty segments are skipped over. Asynchronous.
    ///
    /// The scan is checked on the device: the items of a tile whose part of the scan is invalid
    /// are not written, every id written is below `scan.len()`, and [`SearchScratch::check`]
    /// reports an invalid scan.
    pub fn load_balance_search_device<I, S, O>(
        &self,
        scan: &S,
        total: usize,
        segments: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
        O: DevicePtrMut<I>,
    {
        self.load_balance_search_device_tuned(
            scan,
            total,
            segments,
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// [`load_balance_search_device`](Self::load_balance_search_device) with an explicit tuning.
    pub fn load_balance_search_device_tuned<I, S, O>(
        &self,
        scan: &S,
        total: usize,
        segments: &mut O,
        tuning: LoadBalanceTuning,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
        O: DevicePtrMut<I>,
    {
        check_len("segment ids", total, segments.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (out_ptr, _o) = segments.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Segments {
                segments: out_ptr,
                ranks: 0,
            },
            None,
            &LoadBalanceOp::none(),
            tuning,
            scratch,
        )
    }

    /// [`load_balance_search_device`](Self::load_balance_search_device) that also writes each
    /// item's rank inside its segment to `ranks` (length `total`). Checked and reported as that
    /// call is.
    pub fn load_balance_search_with_ranks_device<I, S, O, R>(
        &self,
        scan: &S,
        total: usize,
        segments: &mut O,
        ranks: &mut R,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
        O: DevicePtrMut<I>,
        R: DevicePtrMut<I>,
    {
        check_len("segment ids", total, segments.len())?;
        check_len("ranks", total, ranks.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (out_ptr, _o) = segments.device_ptr_mut(&stream);
        let (ranks_ptr, _r) = ranks.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Segments {
                segments: out_ptr,
                ranks: ranks_ptr,
            },
            None,
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// Interval expand on the device: `out[item] = values[segment of item]` for the `total`
    /// items of the segments described by `scan` (one value per segment). Asynchronous.
    ///
    /// The scan is checked on the device: the items of a tile whose part of the scan is invalid
    /// are not written, and [`SearchScratch::check`] reports it.
    pub fn interval_expand_device<I, V, S, W, O>(
        &self,
        scan: &S,
        values: &W,
        total: usize,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        W: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("expand output", total, out.len())?;
        if values.len() < scan.len() {
            return Err(GpuError::SizeMismatch {
                what: "values (one per segment)",
                expected: scan.len(),
                got: values.len(),
            });
        }
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (values_ptr, _v) = values.device_ptr(&stream);
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Expand {
                values: values_ptr,
                out: out_ptr,
            },
            Some((size_of::<V>(), align_of::<V>())),
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// Interval gather on the device: for each segment `s` (sizes by `scan`, `total` items),
    /// `out[scan[s] + r] = input[gather[s] + r]` for `r < size(s)`. Asynchronous.
    ///
    /// The scan and the positions are checked on the device: items of a tile whose part of the
    /// scan is invalid, or whose `gather[s] + r` lies past `input.len()`, are not written, and
    /// [`SearchScratch::check`] reports it.
    #[allow(clippy::too_many_arguments)] // Four buffers are the operation's inputs and outputs.
    pub fn interval_gather_device<I, V, S, G, In, O>(
        &self,
        scan: &S,
        total: usize,
        gather: &G,
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        G: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("gather output", total, out.len())?;
        check_len("gather positions", scan.len(), gather.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (gather_ptr, _g) = gather.device_ptr(&stream);
        let (input_ptr, _i) = input.device_ptr(&stream);
        let out_count = out.len() as u64;
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Move {
                gather: gather_ptr,
                scatter: 0,
                input: (input_ptr, input.len() as u64),
                output: (out_ptr, out_count),
            },
            Some((size_of::<V>(), align_of::<V>())),
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// Interval scatter on the device: for each segment `s`,
    /// `out[scatter[s] + r] = input[scan[s] + r]` for `r < size(s)` (`input` holds the `total`
    /// items). Asynchronous.
    ///
    /// The scan and the positions are checked on the device: items of a tile whose part of the
    /// scan is invalid, or whose `scatter[s] + r` lies past `out.len()`, are not written, and
    /// [`SearchScratch::check`] reports it.
    #[allow(clippy::too_many_arguments)] // Four buffers are the operation's inputs and outputs.
    pub fn interval_scatter_device<I, V, S, G, In, O>(
        &self,
        scan: &S,
        total: usize,
        scatter: &G,
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        G: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("scatter input", total, input.len())?;
        check_len("scatter positions", scan.len(), scatter.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (scatter_ptr, _g) = scatter.device_ptr(&stream);
        let (input_ptr, _i) = input.device_ptr(&stream);
        let out_count = out.len() as u64;
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Move {
                gather: 0,
                scatter: scatter_ptr,
                input: (input_ptr, input.len() as u64),
                output: (out_ptr, out_count),
            },
            Some((size_of::<V>(), align_of::<V>())),
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// Interval move on the device: for each segment `s`,
    /// `out[scatter[s] + r] = input[gather[s] + r]` for `r < size(s)`. Asynchronous.
    ///
    /// The scan and the positions are checked on the device: items of a tile whose part of the
    /// scan is invalid, or whose `gather[s] + r` passes `input.len()` or `scatter[s] + r` passes
    /// `out.len()`, are not written, and [`SearchScratch::check`] reports it.
    #[allow(clippy::too_many_arguments)] // Five buffers are the operation's inputs and outputs.
    pub fn interval_move_device<I, V, S, G, T, In, O>(
        &self,
        scan: &S,
        total: usize,
        gather: &G,
        scatter: &T,
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        G: DevicePtr<I>,
        T: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("gather positions", scan.len(), gather.len())?;
        check_len("scatter positions", scan.len(), scatter.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (gather_ptr, _g) = gather.device_ptr(&stream);
        let (scatter_ptr, _t) = scatter.device_ptr(&stream);
        let (input_ptr, _i) = input.device_ptr(&stream);
        let out_count = out.len() as u64;
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Move {
                gather: gather_ptr,
                scatter: scatter_ptr,
                input: (input_ptr, input.len() as u64),
                output: (out_ptr, out_count),
            },
            Some((size_of::<V>(), align_of::<V>())),
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// Run the user snippet `op` once per work item with its (item, segment, rank), the segments
    /// given by the device scan `scan` and `total`; `args` (at most [`OP_ARGS`] values, the rest
    /// zero) reach the snippet as `args.p[i]`. Asynchronous.
    ///
    /// The scan is checked on the device: the snippet runs only for the items of tiles whose part
    /// of the scan is valid, always with `item < total`, `segment < scan.len()` and
    /// `rank <= item`; [`SearchScratch::check`] reports an invalid scan.
    pub fn load_balance_for_each_device<I, S>(
        &self,
        scan: &S,
        total: usize,
        op: &LoadBalanceOp,
        args: &[u64],
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
    {
        if args.len() > OP_ARGS {
            return Err(GpuError::SizeMismatch {
                what: "snippet arguments (at most OP_ARGS)",
                expected: OP_ARGS,
                got: args.len(),
            });
        }
        let mut packed = OpArgs::default();
        packed.0[..args.len()].copy_from_slice(args);
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::ForEach { args: packed },
            None,
            op,
            LoadBalanceTuning::SHIPPED,
            scratch,
        )
    }

    /// Host convenience: the segment of each of `total` work items (see
    /// [`load_balance_search_device`](Self::load_balance_search_device)); the scan is checked
    /// (starts at 0, non-decreasing, at most `total`).
    pub fn load_balance_search<I: HostIndex>(
        &self,
        scan: &[I],
        total: usize,
    ) -> Result<Vec<I>, GpuError> {
        let (segments, _) = self.load_balance_host(scan, total, false)?;
        Ok(segments)
    }

    /// Host convenience: each work item's `(segment, rank)`, as two vectors.
    pub fn load_balance_search_with_ranks<I: HostIndex>(
        &self,
        scan: &[I],
        total: usize,
    ) -> Result<(Vec<I>, Vec<I>), GpuError> {
        self.load_balance_host(scan, total, true)
    }

    fn load_balance_host<I: HostIndex>(
        &self,
        scan: &[I],
        total: usize,
        with_ranks: bool,
    ) -> Result<(Vec<I>, Vec<I>), GpuError> {
        check_host_scan(scan, total)?;
        let mut segments = bytemuck::zeroed_vec::<I>(total);
        let mut ranks = bytemuck::zeroed_vec::<I>(if with_ranks { total } else { 0 });
        if total == 0 {
            return Ok((segments, ranks));
        }
        let mut scratch = lock_recover(&self.search_scratch);
        let mut buffers = [
            Staged::Upload(bytemuck::cast_slice(scan)),
            Staged::Download(bytemuck::cast_slice_mut(&mut segments)),
            Staged::Download(bytemuck::cast_slice_mut(&mut ranks)),
        ];
        let launched = self.through_staging(&mut buffers, |[scan_ptr, seg_ptr, rank_ptr]| {
            self.launch_load_balance::<I>(
                scan_ptr,
                scan.len(),
                total,
                TileCall::Segments {
                    segments: seg_ptr,
                    ranks: if with_ranks { rank_ptr } else { 0 },
                },
                None,
                &LoadBalanceOp::none(),
                LoadBalanceTuning::SHIPPED,
                &mut scratch,
            )
        });
        let checked = scratch.check(self);
        launched?;
        checked?;
        Ok((segments, ranks))
    }

    /// Host convenience: interval expand (`values[s]` replicated once per item of segment `s`).
    pub fn interval_expand<I: HostIndex, V: DeviceValue>(
        &self,
        scan: &[I],
        values: &[V],
        total: usize,
    ) -> Result<Vec<V>, GpuError> {
        check_host_scan(scan, total)?;
        if values.len() < scan.len() {
            return Err(GpuError::SizeMismatch {
                what: "values (one per segment)",
                expected: scan.len(),
                got: values.len(),
            });
        }
        let mut out = bytemuck::zeroed_vec::<V>(total);
        self.interval_host(scan, total, IntervalHost::Expand(values), &mut out)?;
        Ok(out)
    }

    /// Host convenience: interval move. For each segment `s` of size `n` (sizes by `scan` and
    /// `total`), `output[scatter[s] .. + n] = input[gather[s] .. + n]`, where a missing `gather`
    /// (`scatter`) means the segment's own position `scan[s]`. Output entries no segment writes
    /// keep their values. Positions are checked against `input` and `output`.
    pub fn interval_move<I: HostIndex, V: DeviceValue>(
        &self,
        scan: &[I],
        total: usize,
        gather: Option<&[I]>,
        scatter: Option<&[I]>,
        input: &[V],
        output: &mut [V],
    ) -> Result<(), GpuError> {
        check_host_scan(scan, total)?;
        match gather {
            None => check_len("interval move input", total, input.len())?,
            Some(gather) => {
                check_len("gather positions", scan.len(), gather.len())?;
                check_host_positions(messages::GATHER_INVALID, scan, total, gather, input.len())?;
            }
        }
        match scatter {
            None => check_len("interval move output", total, output.len())?,
            Some(scatter) => {
                check_len("scatter positions", scan.len(), scatter.len())?;
                check_host_positions(
                    messages::SCATTER_INVALID,
                    scan,
                    total,
                    scatter,
                    output.len(),
                )?;
            }
        }
        self.interval_host(
            scan,
            total,
            IntervalHost::Move {
                gather,
                scatter,
                input,
            },
            output,
        )
    }

    fn interval_host<I: HostIndex, V: DeviceValue>(
        &self,
        scan: &[I],
        total: usize,
        what: IntervalHost<'_, I, V>,
        out: &mut [V],
    ) -> Result<(), GpuError> {
        if total == 0 {
            return Ok(());
        }
        let (src, gather, scatter): (&[V], &[I], &[I]) = match what {
            IntervalHost::Expand(values) => (values, &[], &[]),
            IntervalHost::Move {
                gather,
                scatter,
                input,
            } => (input, gather.unwrap_or(&[]), scatter.unwrap_or(&[])),
        };
        let mut scratch = lock_recover(&self.search_scratch);
        let out_count = out.len() as u64;
        let mut buffers = [
            Staged::Upload(bytemuck::cast_slice(scan)),
            Staged::Upload(bytemuck::cast_slice(src)),
            Staged::Upload(bytemuck::cast_slice(gather)),
            Staged::Upload(bytemuck::cast_slice(scatter)),
            Staged::InPlace(bytemuck::cast_slice_mut(out)),
        ];
        let launched = self.through_staging(
            &mut buffers,
            |[scan_ptr, src_ptr, gather_ptr, scatter_ptr, out_ptr]| {
                let call = match what {
                    IntervalHost::Expand(_) => TileCall::Expand {
                        values: src_ptr,
                        out: out_ptr,
                    },
                    IntervalHost::Move {
                        gather, scatter, ..
                    } => TileCall::Move {
                        gather: if gather.is_some() { gather_ptr } else { 0 },
                        scatter: if scatter.is_some() { scatter_ptr } else { 0 },
                        input: (src_ptr, src.len() as u64),
                        output: (out_ptr, out_count),
                    },
                };
                self.launch_load_balance::<I>(
                    scan_ptr,
                    scan.len(),
                    total,
                    call,
                    Some((size_of::<V>(), align_of::<V>())),
                    &LoadBalanceOp::none(),
                    LoadBalanceTuning::SHIPPED,
                    &mut scratch,
                )
            },
        );
        let checked = scratch.check(self);
        launched?;
        checked
    }
}

/// What a host interval call moves.
enum IntervalHost<'a, I, V> {
    Expand(&'a [V]),
    Move {
        gather: Option<&'a [I]>,
        scatter: Option<&'a [I]>,
        input: &'a [V],
    },
}

pub(crate) fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), GpuError> {
    if expected != got {
        return Err(GpuError::SizeMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}

/// Every search program the library ships: the load-balancing program for u32 and u64 indices ×
/// each shipped value layout (built-in kernels, no user snippet), and the sorted search for each
/// primitive key type × built-in comparator (both bounds, both index widths across the list). CI
/// compiles all of them with NVRTC.
pub fn shipped_search_programs() -> Vec<Program> {
    let mut out = Vec::new();
    for values in SHIPPED_VALUE_LAYOUTS {
        out.push(load_balance_program::<u32>(
            values,
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
        ));
        out.push(load_balance_program::<u64>(
            values,
            &LoadBalanceOp::none(),
            LoadBalanceTuning::SHIPPED,
        ));
    }
    out.extend(shipped_programs(
        &crate::sorted_search::SortedSearchPrograms,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<(), GpuError>) -> String {
        match result {
            Err(GpuError::InvalidInput(message)) => message,
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn host_scans_that_break_the_rules_name_the_scan() {
        check_host_scan::<usize>(&[0, 0, 2, 5], 5).expect("valid");
        check_host_scan::<usize>(&[], 0).expect("no items, no segments");
        for (scan, total) in [
            (vec![1usize, 2], 4),
            (vec![0, 3, 2], 4),
            (vec![0, 5], 4),
            (vec![0, usize::MAX], 4),
            (vec![], 3),
        ] {
            let text = message(check_host_scan(&scan, total));
            assert!(text.contains(messages::SCAN_INVALID), "{scan:?}: {text}");
        }
    }

    #[test]
    fn host_positions_are_checked_without_overflow() {
        let scan = [0usize, 2, 2];
        let total = 5;
        // Sizes 2, 0, 3.
        check_host_positions("p", &scan, total, &[0usize, 99, 2], 5).expect("in range");
        check_host_positions("p", &scan, total, &[3usize, 0, 0], 5).expect("ends at the buffer");
        for positions in [
            [4usize, 0, 0],
            [0, 0, 3],
            [usize::MAX, 0, 0],
            [usize::MAX - 1, 0, 0],
            [0, 0, usize::MAX - 2],
        ] {
            let text = message(check_host_positions(
                messages::GATHER_INVALID,
                &scan,
                total,
                &positions,
                5,
            ));
            assert!(
                text.contains(messages::GATHER_INVALID),
                "{positions:?}: {text}"
            );
        }
        // An empty segment may sit anywhere, even at usize::MAX.
        check_host_positions("p", &scan, total, &[0usize, usize::MAX, 0], 5)
            .expect("empty segment");
    }

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
