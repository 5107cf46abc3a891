//! Key and value types that can live on the device, with their CUDA spelling.

/// A key the GPU kernels can compare and move: plain old data with a CUDA type of identical layout.
///
/// For a user struct, derive `bytemuck::Pod` on a `#[repr(C)]` type and give its CUDA definition
/// (or let [`device_key!`](crate::device_key) write this impl):
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

/// Implements [`DeviceKey`] for a `#[repr(C)]` plain-old-data struct: its CUDA type name and the
/// CUDA definition of that type, the struct's twin (the generated program checks that the two
/// layouts agree).
///
/// ```
/// #[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Rec {
///     key: u32,
///     tag: u32,
/// }
/// twophase_gpu::device_key!(Rec => "rec", "struct rec { unsigned int key; unsigned int tag; };");
/// ```
#[macro_export]
macro_rules! device_key {
    ($rust:ty => $cuda_type:literal, $definition:literal $(,)?) => {
        impl $crate::DeviceKey for $rust {
            const CUDA_TYPE: &'static str = $cuda_type;
            const CUDA_DEFINITION: &'static str = $definition;
        }
    };
}

/// Floating-point keys, with the CUDA expression mapping a value to a signed integer whose order is
/// `total_cmp`'s (NaN last, -0.0 before +0.0).
pub trait FloatKey: DeviceKey {
    /// CUDA function body computing the total-order integer of `x`.
    const CUDA_TOTAL_KEY: &'static str;
    /// Rust `total_cmp` of two values.
    fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering;
}
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
