//! Kernel programs: CUDA sources from `kernels/` assembled per instantiation, compiled by NVRTC to a
//! cubin for one architecture, cached on disk (keyed by a hash of source, options, NVRTC version
//! and architecture) so that a second process does not recompile.

use std::ffi::CString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys};

use crate::compare::{sanitize, DeviceComparator};
use crate::error::GpuError;
use crate::key::{cuda_value_type, DeviceKey};

/// `kernels/partition.cuh`: phase 1 (merge path), twin of crates/partition.
pub const PARTITION_CUH: &str = include_str!("../kernels/partition.cuh");
/// `kernels/serial.cuh`: phase 2 (serial merge), twin of crates/serial.
pub const SERIAL_CUH: &str = include_str!("../kernels/serial.cuh");
/// `kernels/cta_merge.cuh`: one tile of a merge per CTA.
pub const CTA_MERGE_CUH: &str = include_str!("../kernels/cta_merge.cuh");
/// `kernels/merge.cu`: the partition and tile kernels of the merge.
pub const MERGE_CU: &str = include_str!("../kernels/merge.cu");

/// Entry point of the merge's partition kernel.
pub const MERGE_ENTRY_PARTITION: &str = "twophase_merge_partition";
/// Entry point of the merge's tile kernel.
pub const MERGE_ENTRY_TILE: &str = "twophase_merge_tile";
/// `kernels/cta_mergesort.cuh`: the block sort of one tile per CTA.
pub const CTA_MERGESORT_CUH: &str = include_str!("../kernels/cta_mergesort.cuh");
/// `kernels/mergesort_blocksort.cu`: the mergesort's common definitions and block-sort kernel.
pub const MERGESORT_BLOCKSORT_CU: &str = include_str!("../kernels/mergesort_blocksort.cu");
/// `kernels/mergesort_partition.cuh`: the search for a merge pass's boundaries.
pub const MERGESORT_PARTITION_CUH: &str = include_str!("../kernels/mergesort_partition.cuh");
/// `kernels/mergesort_pass.cu`: the two-way pass's partition and tile kernels.
pub const MERGESORT_PASS_CU: &str = include_str!("../kernels/mergesort_pass.cu");
/// `kernels/mergesort_quad_partition.cuh`: the search for a four-way pass's cuts.
pub const MERGESORT_QUAD_PARTITION_CUH: &str =
    include_str!("../kernels/mergesort_quad_partition.cuh");
/// `kernels/mergesort_quad_partition.cu`: the four-way pass's partition kernel.
pub const MERGESORT_QUAD_PARTITION_CU: &str =
    include_str!("../kernels/mergesort_quad_partition.cu");
/// `kernels/mergesort_quad_tile.cu`: the four-way pass's tile kernel.
pub const MERGESORT_QUAD_TILE_CU: &str = include_str!("../kernels/mergesort_quad_tile.cu");
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

/// `kernels/cta_load_balance.cuh`: one tile of a load-balancing search per CTA.
pub const CTA_LOAD_BALANCE_CUH: &str = include_str!("../kernels/cta_load_balance.cuh");
/// `kernels/load_balance.cu`: the load-balancing partition kernel and its tile kernels.
pub const LOAD_BALANCE_CU: &str = include_str!("../kernels/load_balance.cu");
/// `kernels/sorted_search.cu`: the sorted search's partition and tile kernels.
pub const SORTED_SEARCH_CU: &str = include_str!("../kernels/sorted_search.cu");
/// Entry point of the load-balancing partition kernel.
pub const LOAD_BALANCE_ENTRY_PARTITION: &str = "twophase_lbs_partition";
/// Entry point of the load-balancing tile kernel writing segment ids (and ranks).
pub const LOAD_BALANCE_ENTRY_TILE: &str = "twophase_lbs_tile";
/// Entry point of the interval expand tile kernel.
pub const LOAD_BALANCE_ENTRY_EXPAND: &str = "twophase_interval_expand";
/// Entry point of the interval move (gather/scatter) tile kernel.
pub const LOAD_BALANCE_ENTRY_MOVE: &str = "twophase_interval_move";
/// Entry point of the tile kernel running a user snippet per (item, segment, rank).
pub const LOAD_BALANCE_ENTRY_FOR_EACH: &str = "twophase_lbs_for_each";
/// Every entry point of a load-balancing program.
pub const LOAD_BALANCE_ENTRIES: [&str; 5] = [
    LOAD_BALANCE_ENTRY_PARTITION,
    LOAD_BALANCE_ENTRY_TILE,
    LOAD_BALANCE_ENTRY_EXPAND,
    LOAD_BALANCE_ENTRY_MOVE,
    LOAD_BALANCE_ENTRY_FOR_EACH,
];
/// Entry point of the sorted search's partition kernel.
pub const SORTED_SEARCH_ENTRY_PARTITION: &str = "twophase_search_partition";
/// Entry point of the sorted search's tile kernel.
pub const SORTED_SEARCH_ENTRY_TILE: &str = "twophase_search_tile";
/// Every entry point of a sorted-search program.
pub const SORTED_SEARCH_ENTRIES: [&str; 2] =
    [SORTED_SEARCH_ENTRY_PARTITION, SORTED_SEARCH_ENTRY_TILE];

/// Threads per block of the partition kernels. Each thread runs one independent binary search
/// (latency bound, no shared memory), so the block size only needs to be a few warps; 128 keeps
/// many blocks resident for latency hiding.
pub const PARTITION_THREADS: u32 = 128;

/// Largest static shared memory of one block (48 KiB without opt-in).
pub const MAX_STATIC_SHARED_BYTES: usize = 48 * 1024;

/// Largest dynamic shared memory of one block after opt-in on any architecture the kernels are
/// built for (sm_90: 227 KiB; sm_80 has 163 KiB, the device's own limit is checked at launch).
pub const MAX_OPTIN_SHARED_BYTES: usize = 227 * 1024;

/// Most threads of one block (CUDA's limit).
const MAX_THREADS: u32 = 1024;

/// Threads of a warp: blocks are whole warps.
const WARP: u32 = 32;

/// Most items per thread: the VT register arrays of keys and indices must stay in registers.
const MAX_VT: u32 = 64;

/// Check a kernel's launch shape: `threads` whole warps up to 1024 (a power of two when
/// `power_of_two`, for kernels that merge runs pairwise up to the block), VT from 1 to 64, and
/// `shared_bytes` of static shared memory within the 48 KiB limit.
pub fn check_launch_shape(
    threads: u32,
    vt: u32,
    power_of_two: bool,
    shared_bytes: usize,
) -> Result<(), GpuError> {
    check_launch_shape_within(
        threads,
        vt,
        power_of_two,
        shared_bytes,
        MAX_STATIC_SHARED_BYTES,
    )
}

/// [`check_launch_shape`] for a kernel whose shared memory may be as large as `max_shared`
/// (dynamic shared memory with opt-in).
pub fn check_launch_shape_within(
    threads: u32,
    vt: u32,
    power_of_two: bool,
    shared_bytes: usize,
    max_shared: usize,
) -> Result<(), GpuError> {
    let whole_warps = threads > 0 && threads <= MAX_THREADS && threads.is_multiple_of(WARP);
    if !whole_warps || (power_of_two && !threads.is_power_of_two()) {
        let shape = if power_of_two {
            "a power of two"
        } else {
            "a multiple of 32"
        };
        return Err(GpuError::InvalidTuning(format!(
            "threads = {threads} ({shape} from 32 to {MAX_THREADS})"
        )));
    }
    if vt == 0 || vt > MAX_VT {
        return Err(GpuError::InvalidTuning(format!(
            "vt = {vt} (1 to {MAX_VT})"
        )));
    }
    if shared_bytes > max_shared {
        return Err(GpuError::InvalidTuning(format!(
            "tile needs {shared_bytes} bytes of shared memory (at most {max_shared})"
        )));
    }
    Ok(())
}

/// Byte layout `(size, align)` of a primitive's values: `None` for keys only.
pub type ValueLayout = Option<(usize, usize)>;

/// One program instantiation: its cache key, its source name and its source.
pub struct Program {
    pub key: String,
    pub name: String,
    pub source: String,
}

fn value_type(values: ValueLayout) -> String {
    values.map_or_else(
        || "unsigned char".to_owned(),
        |(size, align)| cuda_value_type(size, align),
    )
}

/// Starts the cache key of a program whose key or value type is zero-sized; the rest of the first
/// line says which. [`check_not_zero_sized`] refuses such a key before anything is compiled.
const ZERO_SIZED_MARK: &str = "zero-sized:";

/// Refuse zero-sized keys and values ([`GpuError::InvalidInput`]): the kernels move whole
/// elements, and CUDA has no zero-sized type to match them. Every program built through
/// [`program_id`] is checked by [`Gpu::kernels`](crate::Gpu); primitives that build their own
/// program id call this on their value layout.
pub fn check_layout<K: DeviceKey>(values: ValueLayout) -> Result<(), GpuError> {
    match zero_sized_message::<K>(values) {
        Some(message) => Err(GpuError::InvalidInput(message)),
        None => Ok(()),
    }
}

/// Refuse a value layout of zero bytes ([`GpuError::InvalidInput`]), for primitives without a
/// key type (the load-balancing moves).
pub fn check_value_layout(values: ValueLayout) -> Result<(), GpuError> {
    match values {
        Some((0, _)) => Err(GpuError::InvalidInput(
            "`values` are zero-sized: the GPU primitives move elements of at least one byte".into(),
        )),
        _ => Ok(()),
    }
}

fn zero_sized_message<K: DeviceKey>(values: ValueLayout) -> Option<String> {
    if std::mem::size_of::<K>() == 0 {
        return Some(format!(
            "the key type `{}` is zero-sized: the GPU primitives sort and merge keys of at least \
             one byte",
            std::any::type_name::<K>()
        ));
    }
    check_value_layout(values).err().map(|e| match e {
        GpuError::InvalidInput(message) => message,
        other => other.to_string(),
    })
}

/// [`GpuError::InvalidInput`] when `key` (from [`program_id`]) names a zero-sized key or value.
pub(crate) fn check_not_zero_sized(key: &str) -> Result<(), GpuError> {
    match key.strip_prefix(ZERO_SIZED_MARK) {
        Some(rest) => Err(GpuError::InvalidInput(
            rest.lines().next().unwrap_or_default().to_owned(),
        )),
        None => Ok(()),
    }
}

/// The cache key and source name of `primitive`'s program for key `K`, comparator `comp`, value
/// layout and launch shape, without building its source (the per-call path: the source is only
/// assembled on a cache miss). The key holds the Rust size and alignment of `K`, which the
/// program checks; a zero-sized key or value marks it for refusal (see [`check_layout`]).
pub fn program_id<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    primitive: &str,
    comp: &C,
    values: ValueLayout,
    threads: u32,
    vt: u32,
) -> (String, String) {
    let value_tag = values.map_or("keys".to_owned(), |(size, align)| {
        format!("v{size}a{align}")
    });
    let name = format!(
        "twophase_{primitive}_{}_{}_{}_nt{threads}_vt{vt}.cu",
        sanitize(K::CUDA_TYPE),
        value_tag,
        sanitize(&comp.name()),
    );
    let zero_sized = zero_sized_message::<K>(values)
        .map(|message| format!("{ZERO_SIZED_MARK}{message}\n"))
        .unwrap_or_default();
    let key = format!(
        "{zero_sized}{name}|k{}a{}|{}|{}|{}|{}|{}|{}",
        std::mem::size_of::<K>(),
        std::mem::align_of::<K>(),
        K::CUDA_DEFINITION,
        value_type(values),
        comp.cuda_helpers(),
        comp.cuda_body(),
        comp.equivalents_identical(),
        comp.trusted_order()
    );
    (key, name)
}

/// File-name labels that `#line` gives user-supplied CUDA in a generated program, so that NVRTC's
/// messages point at the snippet: a warning located in one of them fails the compilation
/// ([`compile_cubin`]).
pub const SNIPPET_LABELS: [&str; 3] = ["comparator ", "key type ", "load-balance op "];

/// A `#line` file name: the label with the characters a C string literal or a log line would
/// garble replaced by `_`.
fn line_file(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c == '"' || c == '\\' || c == '(' || c == ')' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Append user-supplied CUDA `text` to the generated `source` of program `program_name` under a
/// `#line` marker naming it `label` (one of [`SNIPPET_LABELS`] followed by a name), then a
/// `#line` marker back to the generated file, so that NVRTC reports lines of the snippet as
/// `label(line)` and those of the generated file as before.
pub fn push_user_snippet(source: &mut String, label: &str, text: &str, program_name: &str) {
    source.push_str(&format!("#line 1 \"{}\"\n", line_file(label)));
    source.push_str(text);
    if !text.ends_with('\n') {
        source.push('\n');
    }
    // The marker sets the number of the line after it: the physical line after its own.
    let next_line = source.matches('\n').count() + 2;
    source.push_str(&format!(
        "#line {next_line} \"{}\"\n",
        line_file(program_name)
    ));
}

/// `text` as the inside of a C string literal.
fn c_string_body(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '_',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// `static_assert`s that the CUDA type `cuda_type` (typedef'd as `typedef_name`) has the Rust
/// type's size, and an alignment no larger than the Rust type's (device accesses can only rely on
/// the alignment the Rust buffers have), naming both types in the message.
fn layout_asserts(
    role: &str,
    typedef_name: &str,
    cuda_type: &str,
    rust_type: &str,
    size: usize,
    align: usize,
) -> String {
    let cuda_type = c_string_body(cuda_type);
    let rust_type = c_string_body(rust_type);
    format!(
        "static_assert(sizeof({typedef_name}) == {size}, \"twophase: the CUDA {role} type \
         `{cuda_type}` must be {size} bytes, the size of the Rust {role} type `{rust_type}`\");\n\
         static_assert(alignof({typedef_name}) <= {align}, \"twophase: the CUDA {role} type \
         `{cuda_type}` must be aligned to at most {align} bytes, the alignment of the Rust {role} \
         type `{rust_type}`\");\n"
    )
}

/// `primitive`'s program: a prelude defining `key_type`, `key_compare`, `value_type`, `TP_NT`,
/// `TP_VT`, `TP_HAS_VALUES` and `TP_PARTITION_NT`, followed by `sources` in order. The user's
/// CUDA (the key definition, the comparator's helpers and body) sits under `#line` markers
/// ([`push_user_snippet`]), and the prelude `static_assert`s that the CUDA key and value types
/// have the Rust types' layout.
pub fn program<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    primitive: &str,
    sources: &[&str],
    comp: &C,
    values: ValueLayout,
    threads: u32,
    vt: u32,
) -> Program {
    let (key, name) = program_id::<K, C>(primitive, comp, values, threads, vt);
    let comparator = comp.name();
    let mut source = format!(
        "// {name}: generated by twophase-gpu.\n\
         #define TP_NT {threads}\n#define TP_VT {vt}\n#define TP_HAS_VALUES {has_values}\n\
         #define TP_PARTITION_NT {pnt}\n\
         template <int N, int A> struct alignas(A) twophase_value_bytes {{ unsigned char bytes[N]; }};\n",
        has_values = values.is_some(),
        pnt = PARTITION_THREADS,
    );
    if !K::CUDA_DEFINITION.is_empty() {
        let label = format!("key type {}", K::CUDA_TYPE);
        push_user_snippet(&mut source, &label, K::CUDA_DEFINITION, &name);
    }
    source.push_str(&format!(
        "typedef {key_type} key_type;\ntypedef {value_type} value_type;\n",
        key_type = K::CUDA_TYPE,
        value_type = value_type(values),
    ));
    source.push_str(&layout_asserts(
        "key",
        "key_type",
        K::CUDA_TYPE,
        std::any::type_name::<K>(),
        std::mem::size_of::<K>(),
        std::mem::align_of::<K>(),
    ));
    if let Some((size, align)) = values {
        source.push_str(&layout_asserts(
            "value",
            "value_type",
            &value_type(values),
            "value",
            size,
            align,
        ));
    }
    let helpers = comp.cuda_helpers();
    if !helpers.is_empty() {
        let label = format!("comparator {comparator} helpers");
        push_user_snippet(&mut source, &label, &helpers, &name);
    }
    source.push_str(&format!(
        "struct key_compare {{\n  static constexpr bool equivalents_identical = {identical};\n  static constexpr bool trusted_order = {trusted};\n  __device__ __forceinline__ bool operator()(const key_type& a, const key_type& b) const {{\n",
        identical = comp.equivalents_identical(),
        trusted = comp.trusted_order(),
    ));
    push_user_snippet(
        &mut source,
        &format!("comparator {comparator}"),
        &comp.cuda_body(),
        &name,
    );
    source.push_str("  }\n};\n");
    for part in sources {
        source.push_str(part);
        source.push('\n');
    }
    Program { key, name, source }
}

/// Options given to NVRTC besides the architecture. C++17 for `constexpr`/`auto` in the kernels;
/// no fast-math: comparisons of floats must be exact.
pub const NVRTC_OPTIONS: &[&str] = &["-std=c++17", "--device-as-default-execution-space"];

/// Environment variable overriding the on-disk cache folder; set it to an empty string to disable
/// the disk cache.
pub const CACHE_DIR_ENV: &str = "TWOPHASE_CACHE_DIR";

/// Whether the NVRTC library can be loaded on this machine (no GPU needed).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the candidate library names; no symbol is called.
    unsafe { nvrtc_sys::is_culib_present() }
}

/// The NVRTC version as (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), GpuError> {
    if !nvrtc_available() {
        return Err(GpuError::NoNvrtc);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); both pointers are valid for writes.
    let status = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
    status.result().map_err(|e| GpuError::Nvrtc {
        call: "nvrtcVersion",
        message: format!("{e:?}"),
    })?;
    Ok((major, minor))
}

/// A 128-bit FNV-1a hash (two 64-bit lanes with different offset bases): stable across processes
/// and Rust versions, unlike `DefaultHasher`, so it can name files of the disk cache.
pub fn stable_hash(parts: &[&[u8]]) -> u128 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    const BASIS_LO: u64 = 0xcbf2_9ce4_8422_2325;
    const BASIS_HI: u64 = 0x6c62_272e_07bb_0142;
    let (mut lo, mut hi) = (BASIS_LO, BASIS_HI);
    for part in parts {
        for &byte in part.iter().chain((part.len() as u64).to_le_bytes().iter()) {
            lo = (lo ^ u64::from(byte)).wrapping_mul(PRIME);
            hi = (hi ^ u64::from(byte.rotate_left(3))).wrapping_mul(PRIME);
        }
    }
    (u128::from(hi) << 64) | u128::from(lo)
}

/// The on-disk cache folder: `$TWOPHASE_CACHE_DIR`, else `$XDG_CACHE_HOME/twophase`, else
/// `$HOME/.cache/twophase`; `None` when disabled or no home is known.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV) {
        return if dir.is_empty() {
            None
        } else {
            Some(PathBuf::from(dir))
        };
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(xdg).join("twophase"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("twophase"))
}

/// The options NVRTC gets for `arch` (e.g. 90 for sm_90): a real architecture, so that NVRTC
/// emits a cubin the driver loads without a JIT step.
pub fn nvrtc_options(arch: u32) -> Vec<String> {
    let mut options = vec![format!("--gpu-architecture=sm_{arch}")];
    options.extend(NVRTC_OPTIONS.iter().map(|s| s.to_string()));
    options
}

fn nvrtc_err(call: &'static str) -> impl FnOnce(nvrtc_result::NvrtcError) -> GpuError {
    move |e| GpuError::Nvrtc {
        call,
        message: format!("{e:?}"),
    }
}

/// Compile `source` (named `name` in NVRTC's messages) to a cubin for `sm_{arch}`. Needs NVRTC but
/// no GPU. A compilation error, or a warning located in a user snippet ([`SNIPPET_LABELS`]: a
/// comparator body without `return`, an expression with no effect), returns
/// [`GpuError::Compile`] with NVRTC's log.
pub fn compile_cubin(source: &str, name: &str, arch: u32) -> Result<Vec<u8>, GpuError> {
    let (cubin, log) = compile_cubin_with_log(source, name, arch)?;
    if has_snippet_warning(&log) {
        return Err(GpuError::Compile {
            name: name.to_owned(),
            arch,
            log: format!(
                "a user snippet compiled with warnings, which twophase treats as errors:\n{log}"
            ),
        });
    }
    Ok(cubin)
}

/// Whether NVRTC's `log` holds a warning located in a user snippet: a line
/// `<label ...>(<line>): warning ...` for one of [`SNIPPET_LABELS`].
pub fn has_snippet_warning(log: &str) -> bool {
    log.lines().any(|line| {
        SNIPPET_LABELS.iter().any(|label| line.starts_with(label))
            && line
                .split_once("): ")
                .is_some_and(|(_, rest)| rest.starts_with("warning"))
    })
}

/// [`compile_cubin`] without the check of the log: the cubin and NVRTC's log (empty when NVRTC
/// had nothing to say), so that callers can check that built-in code compiles without warnings.
pub fn compile_cubin_with_log(
    source: &str,
    name: &str,
    arch: u32,
) -> Result<(Vec<u8>, String), GpuError> {
    if !nvrtc_available() {
        return Err(GpuError::NoNvrtc);
    }
    let c_source = CString::new(source).map_err(|_| GpuError::Nvrtc {
        call: "nvrtcCreateProgram",
        message: format!("{name} contains a NUL byte"),
    })?;
    let c_name = CString::new(name).map_err(|_| GpuError::Nvrtc {
        call: "nvrtcCreateProgram",
        message: "program name contains a NUL byte".into(),
    })?;
    let program = nvrtc_result::create_program(&c_source, Some(&c_name))
        .map_err(nvrtc_err("nvrtcCreateProgram"))?;
    let options = nvrtc_options(arch);
    // SAFETY: `program` was just created and is destroyed once, below; `c_source` and `c_name`
    // outlive it.
    let compiled = unsafe { nvrtc_result::compile_program(program, &options) };
    // SAFETY: `program` is live; the log is read before it is destroyed.
    let log = unsafe { nvrtc_result::get_program_log(program) }
        .map(|chars| {
            let bytes: Vec<u8> = chars
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .unwrap_or_else(|e| format!("(no log: {e:?})"));
    let outcome = match compiled {
        Ok(()) => read_cubin(program).map(|cubin| (cubin, log)),
        Err(_) => Err(GpuError::Compile {
            name: name.to_owned(),
            arch,
            log,
        }),
    };
    // SAFETY: `program` is live and not used after this.
    unsafe { nvrtc_result::destroy_program(program) }.map_err(nvrtc_err("nvrtcDestroyProgram"))?;
    outcome
}

fn read_cubin(program: nvrtc_sys::nvrtcProgram) -> Result<Vec<u8>, GpuError> {
    let mut size = 0usize;
    // SAFETY: `program` was compiled successfully; `size` is valid for writes.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(program, &mut size) }
        .result()
        .map_err(nvrtc_err("nvrtcGetCUBINSize"))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds exactly the `size` bytes NVRTC reported.
    unsafe { nvrtc_sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(nvrtc_err("nvrtcGetCUBIN"))?;
    Ok(cubin)
}

/// Magic bytes opening every cubin file of the disk cache (format version included).
const CACHE_MAGIC: &[u8; 8] = b"TPCUBIN1";

/// Bytes of a cache file's header: the magic, the cubin's length (u64, little-endian) and its
/// [`stable_hash`] (u128, little-endian).
const CACHE_HEADER_BYTES: usize = 8 + 8 + 16;

/// A cache entry's bytes: the header, then the cubin.
fn cache_entry(cubin: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(CACHE_HEADER_BYTES + cubin.len());
    entry.extend_from_slice(CACHE_MAGIC);
    entry.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    entry.extend_from_slice(&stable_hash(&[cubin]).to_le_bytes());
    entry.extend_from_slice(cubin);
    entry
}

/// The cubin in `entry` if its header is intact and its length and checksum match.
fn verified_cubin(entry: &[u8]) -> Option<&[u8]> {
    let (header, cubin) = entry.split_at_checked(CACHE_HEADER_BYTES)?;
    let (magic, rest) = header.split_at(CACHE_MAGIC.len());
    let (length, hash) = rest.split_at(8);
    let length = u64::from_le_bytes(length.try_into().ok()?);
    let hash = u128::from_le_bytes(hash.try_into().ok()?);
    let intact = magic == CACHE_MAGIC
        && u64::try_from(cubin.len()).is_ok_and(|len| len == length)
        && !cubin.is_empty()
        && stable_hash(&[cubin]) == hash;
    intact.then_some(cubin)
}

/// The cubin cached at `path`, if the file is there and intact. A file that is there but
/// truncated or corrupt is deleted (it would otherwise be read again every time), so that the
/// program is recompiled and cached afresh.
pub fn read_cache_entry(path: &Path) -> Option<Vec<u8>> {
    let entry = std::fs::read(path).ok()?;
    match verified_cubin(&entry) {
        Some(cubin) => Some(cubin.to_vec()),
        None => {
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// Counter making the temporary names of one process unique.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name next to `path`, unique to this process (its id) and to this call (a counter).
fn temp_path(path: &Path) -> PathBuf {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let count = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{file}.{}.{count}.tmp", std::process::id()))
}

/// Cache `cubin` at `path` (in a folder from [`private_cache_dir`]): written to a temporary file
/// created exclusively (never through a file someone else put there) under a name unique to this
/// process and call, then renamed into place, so that readers never see a partial file.
pub fn write_cache_entry(path: &Path, cubin: &[u8]) -> std::io::Result<()> {
    let temp = temp_path(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, CACHE_FILE_MODE);
    let written = options
        .open(&temp)
        .and_then(|mut file| file.write_all(&cache_entry(cubin)))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Permissions of the cache folder: its user's only.
#[cfg(unix)]
const CACHE_DIR_MODE: u32 = 0o700;

/// Permissions of a cache file: its user's only.
#[cfg(unix)]
const CACHE_FILE_MODE: u32 = 0o600;

/// Permission bits letting the group or others write into a folder.
#[cfg(unix)]
const GROUP_OR_WORLD_WRITE: u32 = 0o022;

/// `dir`, created private to this user (mode 0700, parents included) when missing, if it can be
/// trusted as a cache: a folder owned by this user that neither its group nor others can write
/// into. `None` (no disk cache, no error) otherwise: a cubin planted by someone else would be
/// loaded and run on the GPU. An existing folder is never re-permissioned (it may be shared on
/// purpose, like `/tmp`): it is used or not.
pub fn private_cache_dir(dir: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(CACHE_DIR_MODE)
            .create(dir);
        let meta = std::fs::metadata(dir).ok()?;
        // SAFETY: getuid has no preconditions and cannot fail.
        let user = unsafe { libc::getuid() };
        let private =
            meta.is_dir() && meta.uid() == user && meta.mode() & GROUP_OR_WORLD_WRITE == 0;
        private.then(|| dir.to_path_buf())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).ok()?;
        Some(dir.to_path_buf())
    }
}

/// Compile through the disk cache: a cubin compiled before (same source, options, NVRTC version
/// and architecture) is read back instead of recompiled. Each file carries a checksum: a
/// truncated or corrupt one is deleted and the program recompiled. Cache failures are ignored
/// (the cache is an optimization), and a cache folder that is not private to this user is not
/// used ([`private_cache_dir`]).
pub fn compile_cached(source: &str, name: &str, arch: u32) -> Result<Vec<u8>, GpuError> {
    let (major, minor) = nvrtc_version()?;
    let options = nvrtc_options(arch).join(" ");
    let version = format!("nvrtc {major}.{minor}");
    let arch_text = arch.to_string();
    let hash = stable_hash(&[
        source.as_bytes(),
        options.as_bytes(),
        version.as_bytes(),
        arch_text.as_bytes(),
    ]);
    let path = cache_dir()
        .and_then(|dir| private_cache_dir(&dir))
        .map(|dir| dir.join(format!("{name}-{hash:032x}.cubin")));
    if let Some(cubin) = path.as_deref().and_then(read_cache_entry) {
        return Ok(cubin);
    }
    let cubin = compile_cubin(source, name, arch)?;
    if let Some(path) = &path {
        let _ = write_cache_entry(path, &cubin);
    }
    Ok(cubin)
}

/// Builds one primitive's program for a key type, comparator and value layout (at that
/// primitive's shipped tuning), so that [`shipped_programs`] lists every primitive's instantiations
/// from one list of types.
pub trait ProgramFactory {
    fn program<K: DeviceKey>(&self, comp: &dyn DeviceComparator<K>, values: ValueLayout)
        -> Program;
}

/// Value layouts the library ships kernels for ahead of use: keys only, 4-byte and 8-byte values
/// (other layouts compile on first use).
pub const SHIPPED_VALUE_LAYOUTS: [ValueLayout; 3] = [None, Some((4, 4)), Some((8, 8))];

/// Every instantiation of one primitive the library ships: each primitive key type × built-in
/// comparator × shipped value layout. CI compiles all of them with NVRTC.
pub fn shipped_programs(factory: &impl ProgramFactory) -> Vec<Program> {
    use crate::compare::{Greater, Less, TotalOrder, TotalOrderDesc};
    fn push<K: DeviceKey>(
        out: &mut Vec<Program>,
        factory: &impl ProgramFactory,
        comps: &[&dyn DeviceComparator<K>],
    ) {
        for &comp in comps {
            for values in SHIPPED_VALUE_LAYOUTS {
                out.push(factory.program::<K>(comp, values));
            }
        }
    }
    let mut out = Vec::new();
    push::<u8>(&mut out, factory, &[&Less, &Greater]);
    push::<i8>(&mut out, factory, &[&Less, &Greater]);
    push::<u16>(&mut out, factory, &[&Less, &Greater]);
    push::<i16>(&mut out, factory, &[&Less, &Greater]);
    push::<u32>(&mut out, factory, &[&Less, &Greater]);
    push::<i32>(&mut out, factory, &[&Less, &Greater]);
    push::<u64>(&mut out, factory, &[&Less, &Greater]);
    push::<i64>(&mut out, factory, &[&Less, &Greater]);
    push::<f32>(&mut out, factory, &[&TotalOrder, &TotalOrderDesc]);
    push::<f64>(&mut out, factory, &[&TotalOrder, &TotalOrderDesc]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CudaComparator, Less};

    /// A fresh folder under the system's temporary folder, unique to this test and process.
    fn scratch_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "twophase-program-test-{test}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_intact_cache_entry_reads_back() {
        let dir = private_cache_dir(&scratch_dir("intact")).expect("private folder");
        let path = dir.join("probe.cubin");
        let cubin: Vec<u8> = (0..=255u8).cycle().take(4099).collect();
        write_cache_entry(&path, &cubin).expect("write");
        assert_eq!(read_cache_entry(&path).as_deref(), Some(&cubin[..]));
        // A second write replaces the first in place.
        write_cache_entry(&path, &cubin[..100]).expect("rewrite");
        assert_eq!(read_cache_entry(&path).as_deref(), Some(&cubin[..100]));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .filter(|name| name.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_truncated_or_corrupt_cache_entry_is_deleted() {
        let dir = private_cache_dir(&scratch_dir("corrupt")).expect("private folder");
        let path = dir.join("probe.cubin");
        let cubin = vec![7u8; 1000];
        let entry = cache_entry(&cubin);
        let mut flipped = entry.clone();
        flipped[CACHE_HEADER_BYTES + 500] ^= 1;
        let mut bad_magic = entry.clone();
        bad_magic[0] = b'X';
        let broken: [(&str, &[u8]); 6] = [
            ("truncated cubin", &entry[..entry.len() - 1]),
            ("truncated header", &entry[..CACHE_HEADER_BYTES - 1]),
            ("empty file", &[]),
            ("flipped bit", &flipped),
            ("wrong magic", &bad_magic),
            ("unverified raw cubin", &cubin),
        ];
        for (what, bytes) in broken {
            std::fs::write(&path, bytes).expect("plant");
            assert_eq!(read_cache_entry(&path), None, "{what} was accepted");
            assert!(!path.exists(), "{what} was not deleted");
        }
        let mut longer = entry.clone();
        longer.push(0);
        assert!(verified_cubin(&longer).is_none(), "trailing bytes accepted");
        assert_eq!(verified_cubin(&entry), Some(&cubin[..]));
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn temporary_names_are_unique_per_process_and_call() {
        let path = Path::new("/cache/probe.cubin");
        let first = temp_path(path);
        let second = temp_path(path);
        assert_ne!(first, second);
        let pid = std::process::id().to_string();
        for temp in [&first, &second] {
            let name = temp
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            assert!(name.starts_with(".probe.cubin."), "{name}");
            assert!(name.contains(&format!(".{pid}.")), "{name}");
            assert_eq!(temp.parent(), path.parent());
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_cache_folder_is_private_and_shared_folders_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = scratch_dir("private");
        let nested = root.join("a").join("twophase");
        let dir = private_cache_dir(&nested).expect("created");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.join("a")), 0o700);
        // A folder others can write into is not used, and not re-permissioned.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert_eq!(private_cache_dir(&dir), None);
        assert_eq!(mode(&dir), 0o777);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).expect("chmod");
        assert_eq!(private_cache_dir(&dir), None);
        // Readable by others is no risk to what is loaded from it.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(private_cache_dir(&dir), Some(dir.clone()));
        // Not a folder.
        let file = root.join("file");
        std::fs::write(&file, b"x").expect("file");
        assert_eq!(private_cache_dir(&file), None);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[cfg(unix)]
    #[test]
    fn a_temporary_file_is_never_opened_if_it_exists() {
        // Exclusive creation: a planted file (or link) at the temporary name makes the write fail
        // instead of writing through it.
        let dir = private_cache_dir(&scratch_dir("exclusive")).expect("private folder");
        let path = dir.join("probe.cubin");
        let next = TEMP_COUNTER.load(Ordering::Relaxed);
        // Plant files at the next few names this process would use.
        let planted: Vec<PathBuf> = (next..next + 64)
            .map(|count| {
                let name = format!(".probe.cubin.{}.{count}.tmp", std::process::id());
                let planted = dir.join(name);
                std::fs::write(&planted, b"planted").expect("plant");
                planted
            })
            .collect();
        let result = write_cache_entry(&path, b"cubin");
        assert!(result.is_err(), "wrote through a planted temporary file");
        assert!(!path.exists());
        for file in &planted {
            if file.exists() {
                assert_eq!(std::fs::read(file).expect("read"), b"planted");
            }
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn the_prelude_checks_the_layout_and_marks_the_snippets() {
        let program = program::<u32, _>("probe", &[], &Less, Some((8, 8)), 128, 4);
        let source = &program.source;
        assert!(
            source.contains("static_assert(sizeof(key_type) == 4,"),
            "{source}"
        );
        assert!(
            source.contains("static_assert(alignof(key_type) <= 4,"),
            "{source}"
        );
        assert!(
            source.contains("static_assert(sizeof(value_type) == 8,"),
            "{source}"
        );
        assert!(
            source.contains("static_assert(alignof(value_type) <= 8,"),
            "{source}"
        );
        assert!(source.contains("the Rust key type `u32`"), "{source}");
        assert!(
            source.contains("#line 1 \"comparator less\"\nreturn a < b;\n"),
            "{source}"
        );
        assert!(program.key.contains("|k4a4|"), "{}", program.key);
        assert_line_markers_resume(source, &program.name);
    }

    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Pair {
        key: u32,
        tag: u32,
    }

    impl DeviceKey for Pair {
        const CUDA_TYPE: &'static str = "pair";
        const CUDA_DEFINITION: &'static str =
            "struct pair { unsigned int key; unsigned int tag; };";
    }

    /// Every `#line <n> "<program name>"` marker gives the physical number of the line after it,
    /// so that NVRTC's line numbers in the generated file stay true.
    fn assert_line_markers_resume(source: &str, name: &str) {
        let back = format!("\"{name}\"");
        let mut markers = 0;
        for (index, line) in source.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("#line ") {
                if rest.ends_with(&back) {
                    let number: usize = rest.split(' ').next().expect("n").parse().expect("n");
                    assert_eq!(number, index + 2, "marker on line {}", index + 1);
                    markers += 1;
                }
            }
        }
        assert!(markers > 0, "no marker back to {name}");
    }

    #[test]
    fn a_user_key_and_comparator_get_their_own_line_markers() {
        let comp = CudaComparator::new("by_key", "return a.key < b.key;", |a: &Pair, b: &Pair| {
            a.key < b.key
        });
        let program = program::<Pair, _>("probe", &["// tail"], &comp, None, 128, 4);
        let source = &program.source;
        assert!(
            source.contains("#line 1 \"key type pair\"\nstruct pair"),
            "{source}"
        );
        assert!(
            source.contains("#line 1 \"comparator by_key\"\nreturn a.key"),
            "{source}"
        );
        assert!(
            source.contains("the CUDA key type `pair` must be 8 bytes"),
            "{source}"
        );
        assert!(source.contains("Pair`"), "the Rust type is named: {source}");
        assert_line_markers_resume(source, &program.name);
    }

    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Nothing;

    impl DeviceKey for Nothing {
        const CUDA_TYPE: &'static str = "nothing";
        const CUDA_DEFINITION: &'static str = "struct nothing {};";
    }

    #[test]
    fn zero_sized_keys_and_values_are_refused() {
        let comp = CudaComparator::new("never", "return false;", |_: &Nothing, _: &Nothing| false);
        let (key, _) = program_id::<Nothing, _>("probe", &comp, None, 128, 4);
        let err = check_not_zero_sized(&key).expect_err("zero-sized key");
        assert!(
            matches!(&err, GpuError::InvalidInput(m) if m.contains("Nothing`")),
            "{err}"
        );
        assert!(check_layout::<Nothing>(None).is_err());
        let (key, _) = program_id::<u32, _>("probe", &Less, Some((0, 1)), 128, 4);
        let err = check_not_zero_sized(&key).expect_err("zero-sized values");
        assert!(
            matches!(&err, GpuError::InvalidInput(m) if m.contains("`values`")),
            "{err}"
        );
        assert!(check_layout::<u32>(Some((0, 1))).is_err());
        assert!(check_value_layout(Some((0, 1))).is_err());
        let (key, _) = program_id::<u32, _>("probe", &Less, Some((4, 4)), 128, 4);
        assert!(check_not_zero_sized(&key).is_ok());
        assert!(check_layout::<u32>(Some((4, 4))).is_ok());
    }

    #[test]
    fn snippet_warnings_are_told_from_others() {
        let snippet = "comparator by_key(3): warning #940-D: missing return statement at end of \
                       non-void function\n";
        let helpers = "comparator by_key helpers(1): warning #177-D: variable \"y\" was declared \
                       but never referenced\n";
        let key = "key type pair(1): warning #1-D: something\n";
        let generated = "twophase_merge.cu(7): warning #177-D: variable \"y\" was declared\n";
        let error = "comparator by_key(2): error: identifier \"c\" is undefined\n";
        assert!(has_snippet_warning(snippet));
        assert!(has_snippet_warning(helpers));
        assert!(has_snippet_warning(key));
        assert!(!has_snippet_warning(generated));
        assert!(!has_snippet_warning(error));
        assert!(!has_snippet_warning(""));
    }
}
