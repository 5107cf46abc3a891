//! Key and value types that can live on the device, with their CUDA spelling.

use crate::compare::{DeviceComparator, Less, TotalOrder};

/// A key the GPU kernels can compare and move: plain old data with a CUDA type of identical layout.
///
/// For a user struct, derive `bytemuck::Pod` on a `#[repr(C)]` type and give its CUDA definition:
///
/// ```
/// #[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Rec { key: u32, tag: u32 }
/// impl twophase_gpu::DeviceKey for Rec {
///     const CUDA_TYPE: &'static str = "rec";
///     const CUDA_DEFINITION: &'static str = "struct rec { unsigned int key; unsigned int tag; };";
/// }
/// ```
pub trait DeviceKey: bytemuck::Pod + Send + Sync + 'static {
    /// The CUDA type name (`unsigned int`, or the name of the struct in `CUDA_DEFINITION`).
    const CUDA_TYPE: &'static str;
    /// CUDA source defining the type, empty for built-in types.
    const CUDA_DEFINITION: &'static str = "";
}

mod sealed {
    /// Keeps [`PrimitiveKey`](super::PrimitiveKey) to the types of this file: the built-in
    /// comparators trust their order on exactly these.
    pub trait Sealed {}
}

/// The primitive numeric keys, for which `a < b` means the same in Rust and CUDA: the integers
/// and `f32`/`f64`. Sealed: the built-in comparators are trusted to be strict weak orders on
/// exactly these types.
///
/// [`Ascending`](Self::Ascending) is the order of the calls that take no comparator: [`Less`]
/// for the integers, [`TotalOrder`] (IEEE 754 total order, NaN last) for the floats. A partial
/// order on floats cannot be named: [`Less`] and [`Greater`] need an `Ord` key.
///
/// [`Less`]: crate::Less
/// [`Greater`]: crate::Greater
/// [`TotalOrder`]: crate::TotalOrder
pub trait PrimitiveKey: DeviceKey + PartialOrd + sealed::Sealed {
    /// Whether two values neither of which is `<` the other are always the same bits: true for
    /// the integers, false for the floats (-0.0 and +0.0; NaNs).
    const EQUIVALENTS_IDENTICAL: bool;
    /// The natural ascending order: `Less` for the integers, `TotalOrder` for the floats.
    type Ascending: DeviceComparator<Self> + Default + Copy + std::fmt::Debug;
}

/// Floating-point keys, with the CUDA expression mapping a value to a signed integer whose order is
/// `total_cmp`'s (NaN last, -0.0 before +0.0).
pub trait FloatKey: DeviceKey {
    /// CUDA function body computing the total-order integer of `x`.
    const CUDA_TOTAL_KEY: &'static str;
    /// Rust `total_cmp` of two values.
    fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering;
}

macro_rules! primitive_key {
    ($($t:ty => $cuda:literal, $identical:literal, $ascending:ty),* $(,)?) => {$(
        impl DeviceKey for $t {
            const CUDA_TYPE: &'static str = $cuda;
        }
        impl sealed::Sealed for $t {}
        impl PrimitiveKey for $t {
            const EQUIVALENTS_IDENTICAL: bool = $identical;
            type Ascending = $ascending;
        }
    )*};
}

primitive_key!(
    u8 => "unsigned char", true, Less,
    i8 => "signed char", true, Less,
    u16 => "unsigned short", true, Less,
    i16 => "short", true, Less,
    u32 => "unsigned int", true, Less,
    i32 => "int", true, Less,
    u64 => "unsigned long long", true, Less,
    i64 => "long long", true, Less,
    f32 => "float", false, TotalOrder,
    f64 => "double", false, TotalOrder,
);

impl FloatKey for f32 {
    // The bits as a signed integer, with the magnitude bits flipped for negatives: the same map as
    // f32::total_cmp.
    const CUDA_TOTAL_KEY: &'static str =
        "int i = __float_as_int(x); return i ^ (int)(((unsigned int)(i >> 31)) >> 1);";
    fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.total_cmp(b)
    }
}

impl FloatKey for f64 {
    // As for f32, on 64 bits (f64::total_cmp).
    const CUDA_TOTAL_KEY: &'static str =
        "long long i = __double_as_longlong(x); return i ^ (long long)(((unsigned long long)(i >> 63)) >> 1);";
    fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.total_cmp(b)
    }
}

/// A payload carried by a key-value merge: any plain old data; the kernels only move its bytes.
pub trait DeviceValue: bytemuck::Pod + Send + Sync + 'static {}

impl<T: bytemuck::Pod + Send + Sync + 'static> DeviceValue for T {}

/// The CUDA type used to move a value of `size` bytes and `align` alignment: a native word when
/// one fits exactly (one load and one store per value), else an aligned byte array.
pub(crate) fn cuda_value_type(size: usize, align: usize) -> String {
    match (size, align) {
        (1, _) => "unsigned char".into(),
        (2, 2..) => "unsigned short".into(),
        (4, 4..) => "unsigned int".into(),
        (8, 8..) => "unsigned long long".into(),
        (16, 16..) => "uint4".into(),
        _ => format!("twophase_value_bytes<{size}, {align}>"),
    }
}
