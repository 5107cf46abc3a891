//! The one typed kernel launch: a `#[repr(C)]` parameter block per kernel, checked against its CUDA twin.

use std::ffi::c_void;

use cudarc::driver::{sys as driver_sys, CudaFunction};

use super::device::Gpu;
use crate::error::GpuError;

/// The field layout of a kernel's parameter block as Rust laid it out: the CUDA struct's name,
/// its size, and each field's name, offset and size. [`param_asserts`] turns it into
/// `static_assert`s that the CUDA struct of the same name has exactly this layout.
#[derive(Debug)]
pub struct ParamLayout {
    /// The CUDA struct's name (in namespace `twophase`).
    pub cuda_name: &'static str,
    /// `size_of` the Rust struct.
    pub size: usize,
    /// `(name, offset, size)` of each field, in declaration order.
    pub fields: &'static [(&'static str, usize, usize)],
}

/// A kernel's parameter block: one `#[repr(C)]` struct of plain fields (device addresses as
/// `u64`, sizes as `u64`, counters as `u32`), which the kernel takes by value as the CUDA struct
/// `twophase::<LAYOUT.cuda_name>`. Implemented by [`kernel_params!`] only.
///
/// # Safety
/// `LAYOUT` must describe `Self` exactly, and `Self` must be `#[repr(C)]` plain data with no
/// padding the kernel reads: the launch hands its bytes to the kernel as they are.
pub unsafe trait KernelParams: Copy {
    /// The block's layout, checked against the CUDA struct in every program that launches it.
    const LAYOUT: ParamLayout;
}

/// Declare a kernel's parameter block: a `#[repr(C)]` struct and its [`KernelParams`] layout.
/// The CUDA twin (same name, same fields in the same order) lives in the kernel's `.cu` file, and
/// the program that compiles it `static_assert`s ([`param_asserts`]) the two layouts equal.
macro_rules! kernel_params {
    ($(#[$meta:meta])* $vis:vis struct $name:ident as $cuda:literal {
        $($(#[$field_meta:meta])* $field:ident: $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        $vis struct $name {
            $($(#[$field_meta])* pub(crate) $field: $ty),*
        }

        // SAFETY: the struct is #[repr(C)] and the layout is read off it by offset_of/size_of.
        unsafe impl $crate::runtime::launch::KernelParams for $name {
            const LAYOUT: $crate::runtime::launch::ParamLayout = $crate::runtime::launch::ParamLayout {
                cuda_name: $cuda,
                size: ::core::mem::size_of::<$name>(),
                fields: &[$((
                    stringify!($field),
                    ::core::mem::offset_of!($name, $field),
                    ::core::mem::size_of::<$ty>(),
                )),*],
            };
        }
    };
}
pub(crate) use kernel_params;

/// `static_assert`s, for a program's source, that each CUDA parameter struct has the layout of
/// its Rust twin: its size, and each field's offset and size (a mismatch is a compile error
/// naming the struct and the field, not a kernel reading the wrong bytes).
pub fn param_asserts(layouts: &[&ParamLayout]) -> String {
    // NVRTC has no <cstddef>: a field's offset is the address of the field of a struct at
    // address 0, which EDG's __INTADDR__ folds to a constant (as its own offsetof does).
    let mut asserts = String::from(
        "#define TP_FIELD_OFFSET(S, F) ((unsigned long long)__INTADDR__(&(((S*)0)->F)))\n",
    );
    for layout in layouts {
        let name = layout.cuda_name;
        asserts.push_str(&format!(
            "static_assert(sizeof(twophase::{name}) == {size}, \"twophase: the CUDA parameter \
             struct `{name}` must be {size} bytes, as its Rust twin\");\n",
            size = layout.size
        ));
        for &(field, offset, size) in layout.fields {
            asserts.push_str(&format!(
                "static_assert(TP_FIELD_OFFSET(twophase::{name}, {field}) == {offset} && \
                 sizeof(twophase::{name}::{field}) == {size}, \"twophase: `{name}::{field}` must \
                 lie at byte {offset} and take {size} bytes, as in its Rust twin\");\n"
            ));
        }
    }
    asserts.push_str("#undef TP_FIELD_OFFSET\n");
    asserts
}

/// The shape of one launch: blocks, threads a block, dynamic shared memory, and whether the
/// kernel is a programmatic dependent of the previous launch on the stream (sm_90+, when the
/// handle allows it: its blocks may start while the previous kernel's last blocks run, and it
/// waits for that kernel with `griddepcontrol.wait` before reading its output).
#[derive(Clone, Copy, Debug)]
pub struct LaunchShape {
    pub grid: u32,
    pub threads: u32,
    pub shared_bytes: u32,
    pub dependent: bool,
}

impl LaunchShape {
    /// `grid` blocks of `threads`, no dynamic shared memory, not dependent.
    pub fn new(grid: u32, threads: u32) -> Self {
        Self {
            grid,
            threads,
            shared_bytes: 0,
            dependent: false,
        }
    }

    /// The same shape with `bytes` of dynamic shared memory.
    pub fn shared(self, bytes: u32) -> Self {
        Self {
            shared_bytes: bytes,
            ..self
        }
    }

    /// The same shape as a programmatic dependent of the previous launch when `dependent`.
    pub fn dependent(self, dependent: bool) -> Self {
        Self { dependent, ..self }
    }
}

impl Gpu {
    /// Launch `function` on this handle's stream with the parameter block `params`: the only
    /// kernel launch in the crate.
    ///
    /// # Safety
    /// `function` must take exactly one parameter, the CUDA twin of `P` (its program compiled
    /// [`param_asserts`] of `P::LAYOUT`), and the device addresses in `params` must be valid on
    /// this stream, for what the kernel reads and writes there, until the kernel completes.
    pub(crate) unsafe fn launch<P: KernelParams>(
        &self,
        function: &CudaFunction,
        shape: LaunchShape,
        params: &P,
    ) -> Result<(), GpuError> {
        // SAFETY: an all-zero launch attribute value is valid plain data (a union of integers and
        // plain structs); only the field selected by `id` is then set.
        let mut value: driver_sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
        value.programmaticStreamSerializationAllowed = 1;
        let mut attribute = driver_sys::CUlaunchAttribute {
            id: driver_sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value,
        };
        self.ensure_alive()?;
        let pdl = shape.dependent && self.programmatic_launch();
        let config = driver_sys::CUlaunchConfig {
            gridDimX: shape.grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: shape.threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shape.shared_bytes,
            hStream: self.stream().cu_stream(),
            attrs: &mut attribute,
            numAttrs: u32::from(pdl),
        };
        self.note_launch(function);
        // The kernel's one parameter: a pointer to the block, which the driver copies.
        let mut block = *params;
        let mut block_address = [std::ptr::addr_of_mut!(block).cast::<c_void>()];
        let launched = self.context().bind_to_thread().and_then(|()| {
            // SAFETY: the caller guarantees that the kernel takes one parameter of P's layout and
            // that the addresses in it are valid; `block`, `config` and `attribute` outlive the
            // call (the driver copies the parameter); the function belongs to this context and
            // the stream to this handle.
            unsafe {
                driver_sys::cuLaunchKernelEx(
                    &config,
                    function.cu_function(),
                    block_address.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result()
        });
        self.observe(launched.map_err(GpuError::from), || {
            let kernel = self.last_kernel().unwrap_or_else(|| "a kernel".to_owned());
            format!("launching {kernel}")
        })
    }
}

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

/// Blocks of a partition kernel whose blocks overlap by one boundary (each computes
/// PARTITION_THREADS boundaries, the first of them the previous block's last), so that every
/// adjacent pair of boundaries is checked inside one block (kernels/partition.cuh), as a launch's
/// grid size.
pub(crate) fn overlapped_partition_blocks(num_partitions: usize) -> Result<u32, GpuError> {
    let blocks = overlapped_blocks(num_partitions, PARTITION_THREADS as usize);
    u32::try_from(blocks).map_err(|_| GpuError::TooLarge(format!("{num_partitions} partitions")))
}

/// Blocks of `groups` boundaries each, overlapping by one, that cover `num_partitions` boundaries.
pub(crate) fn overlapped_blocks(num_partitions: usize, groups: usize) -> usize {
    num_partitions
        .saturating_sub(1)
        .div_ceil(groups.saturating_sub(1).max(1))
        .max(1)
}

/// Largest grid a kernel may use: CUDA's limit on gridDim.x (2^31 - 1).
pub const MAX_GRID_X: u64 = (1 << 31) - 1;

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

/// One raw kernel parameter for [`Gpu::launch_raw`]: a pointer to its value, which the driver
/// reads (and copies) during the launch, so the value must outlive that call.
pub(crate) fn kernel_param<T>(value: &T) -> *mut c_void {
    (value as *const T).cast_mut().cast()
}

impl Gpu {
    /// Launch `function` with raw parameters (each a [`kernel_param`] pointer to its value), as a
    /// programmatic dependent of the previous launch
    /// on this stream when `dependent` and programmatic launch is on.
    ///
    /// # Safety
    /// `params` must point at values matching the kernel's parameters in number, order and size,
    /// alive for the call; the buffers they address must be valid on this stream for what the
    /// kernel does with them.
    pub(crate) unsafe fn launch_raw(
        &self,
        function: &CudaFunction,
        grid: u32,
        threads: u32,
        params: &mut [*mut c_void],
        dependent: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: forwarded; no dynamic shared memory.
        unsafe { self.launch_raw_shared(function, grid, threads, 0, params, dependent) }
    }

    /// [`launch_raw`](Self::launch_raw) with `shared_bytes` of dynamic shared memory (past 48 KiB
    /// the kernel must have opted in, [`Kernels::allow_dynamic_shared`]).
    ///
    /// # Safety
    /// As for [`launch_raw`](Self::launch_raw).
    pub(crate) unsafe fn launch_raw_shared(
        &self,
        function: &CudaFunction,
        grid: u32,
        threads: u32,
        shared_bytes: u32,
        params: &mut [*mut c_void],
        dependent: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: an all-zero launch attribute value is valid plain data (a union of integers and
        // plain structs); only the field selected by `id` is then set.
        let mut value: driver_sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
        value.programmaticStreamSerializationAllowed = 1;
        let mut attribute = driver_sys::CUlaunchAttribute {
            id: driver_sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value,
        };
        self.ensure_alive()?;
        let pdl = dependent && self.programmatic_launch();
        let config = driver_sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shared_bytes,
            hStream: self.stream().cu_stream(),
            attrs: &mut attribute,
            numAttrs: u32::from(pdl),
        };
        self.note_launch(function);
        let launched = self.context().bind_to_thread().and_then(|()| {
            // SAFETY: the caller guarantees `params`; `config` and `attribute` outlive the call
            // (the driver copies the parameters); the function belongs to this context and the
            // stream to this handle. A dependent tile kernel waits (griddepcontrol.wait) for the
            // partition kernel before reading the partitions.
            unsafe {
                driver_sys::cuLaunchKernelEx(
                    &config,
                    function.cu_function(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result()
        });
        self.observe(launched.map_err(GpuError::from), || {
            let kernel = self.last_kernel().unwrap_or_else(|| "a kernel".to_owned());
            format!("launching {kernel}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapped_partition_blocks_cover_every_boundary_pair() {
        let per_block = PARTITION_THREADS as usize - 1;
        for partitions in [1usize, 2, per_block, per_block + 1, per_block + 2, 10_000] {
            let blocks = overlapped_partition_blocks(partitions).expect("blocks") as usize;
            // Block b computes boundaries [b * per_block, b * per_block + per_block]: the last
            // one reaches the last boundary, and no block starts past it.
            assert!(blocks * per_block + 1 >= partitions, "{partitions}");
            assert!((blocks - 1) * per_block < partitions.max(1), "{partitions}");
        }
    }
}
