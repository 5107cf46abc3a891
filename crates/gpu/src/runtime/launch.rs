//! The one typed kernel launch: a `#[repr(C)]` parameter block per kernel, checked against its CUDA twin and the kernel's parameters.
//!
//! A kernel `twophase_<name>` keeps its own parameter list (its pointers stay `__restrict__`
//! parameters, which is what lets NVRTC load through the read-only path: a kernel taking one
//! struct measured no `ld.global.nc` at all in the merge tile, and a 4-byte spill at its register
//! bound). Its parameters are described once in Rust by `param_block!` and once in CUDA by
//! the twin struct `twophase::<name>_params`; the generated program asserts ([`param_asserts`])
//! that the twin has the Rust struct's size and each field's offset and size, and that the
//! kernel's parameter types are the twin's field types in order. The launch hands the driver the
//! Rust struct's bytes as the kernel's parameter buffer, whose layout (each parameter at its
//! natural alignment, in order) is the C layout of the twin.

use std::ffi::c_void;

use cudarc::driver::{sys as driver_sys, CudaFunction};

use super::device::Gpu;
use crate::error::GpuError;

/// The field layout of a kernel's parameter block as Rust laid it out: the CUDA struct's name,
/// its size, and each field's name, offset and size. [`param_asserts`] turns it into
/// `static_assert`s that the CUDA struct of the same name has exactly this layout and that the
/// kernel `twophase_<name>` (the struct's name without `_params`) takes these fields as its
/// parameters.
#[derive(Debug)]
pub struct ParamLayout {
    /// The CUDA struct's name (in namespace `twophase`).
    pub cuda_name: &'static str,
    /// The kernels that take these parameters; empty for the one kernel `twophase_<name>` of
    /// the struct `<name>_params`.
    pub kernels: &'static [&'static str],
    /// `size_of` the Rust struct.
    pub size: usize,
    /// `(name, offset, size)` of each field, in declaration order.
    pub fields: &'static [(&'static str, usize, usize)],
}

/// A kernel's parameter block: one `#[repr(C)]` struct of plain fields (device addresses as
/// `u64`, sizes as `u64`, counts as `u32`/`i32`), laid out as the kernel's parameter buffer.
/// Implemented by `param_block!` only.
///
/// # Safety
/// `LAYOUT` must describe `Self` exactly, and `Self` must be `#[repr(C)]` plain data: the launch
/// hands its bytes, up to the end of its last field, to the kernel as its parameters.
pub unsafe trait KernelParams: Copy {
    /// The block's layout, checked against the CUDA struct in every program that launches it.
    const LAYOUT: ParamLayout;
}

/// Declare a kernel's parameter block: a `#[repr(C)]` struct and its [`KernelParams`] layout.
/// The CUDA twin (same name, same fields in the same order) lives in the kernel's `.cu` file, and
/// the program that compiles it `static_assert`s ([`param_asserts`]) the two layouts equal and
/// the kernel's parameters the twin's fields.
macro_rules! param_block {
    // The block of the one kernel `twophase_<name>` for the CUDA twin `<name>_params`.
    ($(#[$meta:meta])* $vis:vis struct $name:ident as $cuda:literal { $($body:tt)* }) => {
        $crate::runtime::launch::param_block! {
            $(#[$meta])* $vis struct $name as $cuda for [] { $($body)* }
        }
    };
    // A block several kernels take (named in full). Its body is a list of fields and of field
    // groups `..group`: `group!` is a macro (such as [`check_words`]) that adds its fields.
    ($(#[$meta:meta])* $vis:vis struct $name:ident as $cuda:literal for [$($kernel:literal),*] {
        $($body:tt)*
    }) => {
        $crate::runtime::launch::param_block! {
            @fields [$(#[$meta])* $vis struct $name as $cuda for [$($kernel),*]] [] $($body)* ,
        }
    };
    // Reading the body: a stray comma, a group, a field, or the end.
    (@fields $head:tt [$($done:tt)*] , $($rest:tt)*) => {
        $crate::runtime::launch::param_block! { @fields $head [$($done)*] $($rest)* }
    };
    (@fields $head:tt [$($done:tt)*] ..$group:ident $($rest:tt)*) => {
        $group! { @fields $head [$($done)*] $($rest)* }
    };
    (@fields $head:tt [$($done:tt)*] $field:ident: $ty:ty, $($rest:tt)*) => {
        $crate::runtime::launch::param_block! { @fields $head [$($done)* $field: $ty,] $($rest)* }
    };
    (@fields [$(#[$meta:meta])* $vis:vis struct $name:ident as $cuda:literal for [$($kernel:literal),*]]
        [$($field:ident: $ty:ty,)*]) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        $vis struct $name {
            $(pub(crate) $field: $ty),*
        }

        // SAFETY: the struct is #[repr(C)] and the layout is read off it by offset_of/size_of.
        unsafe impl $crate::runtime::launch::KernelParams for $name {
            const LAYOUT: $crate::runtime::launch::ParamLayout = $crate::runtime::launch::ParamLayout {
                cuda_name: $cuda,
                kernels: &[$($kernel),*],
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
pub(crate) use param_block;

/// Declare a field group of `param_block!` (`..name` in a block's body): the macro `name` adds
/// `fields` where the group stands.
macro_rules! param_group {
    ($(#[$meta:meta])* $name:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        $crate::runtime::launch::param_group! { @with [$] $(#[$meta])* $name { $($field: $ty),* } }
    };
    // `$d` is a `$`, for the group macro's own metavariables.
    (@with [$d:tt] $(#[$meta:meta])* $name:ident { $($field:ident: $ty:ty),* }) => {
        $(#[$meta])*
        macro_rules! $name {
            (@fields $d head:tt [$d($d done:tt)*] $d($d rest:tt)*) => {
                $crate::runtime::launch::param_block! {
                    @fields $d head [$d($d done)* $($field: $ty,)*] $d($d rest)*
                }
            };
        }
    };
}
pub(crate) use param_group;

param_group! {
    /// The input check's words of a block (`..check_words`): the status word's address, the
    /// repair slot's address and the launch's generation ([`CheckArgs`](crate::runtime::status::CheckArgs)).
    check_words { status: u64, repair: u64, generation: u32 }
}
pub(crate) use check_words;

/// `static_assert`s, for a program's source, that each CUDA parameter struct has the layout of
/// its Rust twin (its size, and each field's offset and size) and that its kernel
/// `twophase_<name>` takes the struct's field types as its parameters, in order: a mismatch is a
/// compile error naming the struct, the field or the kernel, not a kernel reading the wrong bytes.
pub fn param_asserts(layouts: &[&ParamLayout]) -> String {
    // NVRTC has no <cstddef>: a field's offset is the address of the field of a struct at
    // address 0, which EDG's __INTADDR__ folds to a constant (as its own offsetof does). A
    // kernel's function type drops its parameters' top-level qualifiers (`__restrict__`), so it
    // equals the function type built from the fields' declared types. (An enum, not a static
    // member: a static member would be a device variable in every program.)
    let mut asserts = String::from(
        "#define TP_FIELD_OFFSET(S, F) ((unsigned long long)__INTADDR__(&(((S*)0)->F)))\n\
         namespace twophase {\n\
         template <class A, class B> struct same_params { enum { value = 0 }; };\n\
         template <class A> struct same_params<A, A> { enum { value = 1 }; };\n\
         }  // namespace twophase\n",
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
        let types: Vec<String> = layout
            .fields
            .iter()
            .map(|(field, _, _)| format!("decltype(twophase::{name}::{field})"))
            .collect();
        for kernel in layout.kernels() {
            asserts.push_str(&format!(
                "static_assert(twophase::same_params<decltype(&{kernel}), void (*)({types})>::value, \
                 \"twophase: the parameters of `{kernel}` must be the fields of `{name}`, in order\");\n",
                types = types.join(", ")
            ));
        }
    }
    asserts.push_str("#undef TP_FIELD_OFFSET\n");
    asserts
}

impl ParamLayout {
    /// The kernels this block is the parameters of: those named, else `twophase_<name>` for
    /// `<name>_params`.
    pub fn kernels(&self) -> Vec<String> {
        if !self.kernels.is_empty() {
            return self.kernels.iter().map(|k| (*k).to_owned()).collect();
        }
        let stem = self
            .cuda_name
            .strip_suffix("_params")
            .unwrap_or(self.cuda_name);
        vec![format!("twophase_{stem}")]
    }

    /// Bytes of the kernel's parameter buffer: up to the end of the last field (the struct's
    /// tail padding is no parameter).
    pub fn buffer_bytes(&self) -> usize {
        self.fields
            .iter()
            .map(|&(_, offset, size)| offset + size)
            .max()
            .unwrap_or(0)
    }
}

/// `CU_LAUNCH_PARAM_BUFFER_POINTER`: the next `extra` entry is the parameter buffer.
const PARAM_BUFFER_POINTER: *mut c_void = std::ptr::without_provenance_mut(1);
/// `CU_LAUNCH_PARAM_BUFFER_SIZE`: the next `extra` entry points at the buffer's size (`size_t`).
const PARAM_BUFFER_SIZE: *mut c_void = std::ptr::without_provenance_mut(2);
/// `CU_LAUNCH_PARAM_END`: the end of `extra`.
const PARAM_END: *mut c_void = std::ptr::null_mut();

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
    /// Launch `function` on this handle's stream with the parameter block `params` as its
    /// parameters: the only kernel launch in the crate.
    ///
    /// # Safety
    /// `function` must be one of the kernels `P::LAYOUT.kernels()` of a program that compiled
    /// [`param_asserts`] of `P::LAYOUT` (so its parameters are `P`'s fields in order), and the
    /// device addresses in `params` must be valid on this stream, for what the kernel reads and
    /// writes there, until the kernel completes.
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
        // The parameters as one buffer (the driver copies it): the block's bytes up to the end
        // of its last field, each parameter at its natural alignment as the kernel expects.
        let mut block = *params;
        let mut buffer_bytes: usize = P::LAYOUT.buffer_bytes();
        let mut extra = [
            PARAM_BUFFER_POINTER,
            std::ptr::addr_of_mut!(block).cast::<c_void>(),
            PARAM_BUFFER_SIZE,
            std::ptr::addr_of_mut!(buffer_bytes).cast::<c_void>(),
            PARAM_END,
        ];
        let launched = self.context().bind_to_thread().and_then(|()| {
            // SAFETY: the caller guarantees that the kernel's parameters are P's fields in order
            // and that the addresses in them are valid; `block`, `buffer_bytes`, `extra`,
            // `config` and `attribute` outlive the call (the driver copies the parameters); the
            // function belongs to this context and the stream to this handle.
            unsafe {
                driver_sys::cuLaunchKernelEx(
                    &config,
                    function.cu_function(),
                    std::ptr::null_mut(),
                    extra.as_mut_ptr(),
                )
            }
            .result()
        });
        self.observe(launched.map_err(GpuError::from), || {
            let kernel = self.last_kernel().unwrap_or_else(|| "a kernel".to_owned());
            format!("launching {kernel}")
        })
    }

    /// Fault a kernel on purpose (a store through a null pointer), losing this handle's context:
    /// for tests of the recovery from a sticky error. Returns the [`GpuError::ContextLost`] that
    /// the launch or the synchronization saw.
    #[doc(hidden)]
    pub fn fault_for_test(&self) -> Result<(), GpuError> {
        let kernels = self.kernels(
            FAULT_PROGRAM,
            FAULT_PROGRAM,
            || format!("{FAULT_SOURCE}{}", param_asserts(&[&FaultParams::LAYOUT])),
            &[FAULT_ENTRY],
        )?;
        let function = kernels.function(FAULT_ENTRY)?;
        // SAFETY: the block is the fault kernel's (its program asserts the layouts equal). Its
        // store through the null device address is caught by the device as an illegal address,
        // a sticky error of this context: no host memory and no other context is touched.
        unsafe { self.launch(function, LaunchShape::new(1, 1), &FaultParams { target: 0 }) }?;
        self.synchronize()
    }
}

/// Name (and cache key) of the program [`Gpu::fault_for_test`] runs.
const FAULT_PROGRAM: &str = "twophase_fault_for_test.cu";
/// Entry point of that program.
const FAULT_ENTRY: &str = "twophase_fault_for_test";
/// That program: one store through its parameter block's address, which the launch makes null.
const FAULT_SOURCE: &str =
    "namespace twophase { struct fault_for_test_params { int* target; }; }\n\
    extern \"C\" __global__ void twophase_fault_for_test(int* target) {\n\
    \x20 *(volatile int*)target = 1;\n}\n";

param_block! {
    /// The parameter block of the fault kernel: the address it stores through.
    struct FaultParams as "fault_for_test_params" {
        target: u64,
    }
}
