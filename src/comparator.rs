//! `comparator!`: one comparator for both backends, its CUDA body and its Rust predicate written once.

/// A [`CudaComparator`](crate::CudaComparator) whose CUDA body and Rust predicate come from the
/// same tokens, so that the GPU and the CPU backend cannot disagree:
///
/// ```
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Item {
///     cell: u32,
///     weight: f32,
/// }
/// impl twophase::DeviceKey for Item {
///     const CUDA_TYPE: &'static str = "item";
///     const CUDA_DEFINITION: &'static str = "struct item { unsigned int cell; float weight; };";
/// }
///
/// let by_cell = twophase::comparator!(by_cell, |a: Item, b: Item| a.cell < b.cell);
/// let mut items = vec![Item { cell: 2, weight: 0.5 }, Item { cell: 1, weight: 1.0 }];
/// twophase::sort_by(&mut items, &by_cell)?;
/// assert_eq!(items[0].cell, 1);
/// # Ok::<(), twophase::Error>(())
/// ```
///
/// The expression after the parameters is the predicate "a orders before b" (a strict weak
/// order). It may use what Rust and CUDA C++ spell alike: field access, comparisons, `&&`, `||`,
/// `!`, arithmetic and bit operators, parentheses, and literals without a type suffix (`255`, not
/// `255u32`). Anything else (a method call, `as`, a suffixed literal) fails to compile on one side:
/// in Rust at build time, in CUDA when NVRTC compiles the sort, with an error carrying the
/// compiler's log. On the GPU the expression runs inside a lambda taking the two keys under the
/// parameters' names.
#[macro_export]
macro_rules! comparator {
    ($name:ident, |$a:ident : $key:ty, $b:ident : $key_b:ty| $($predicate:tt)+) => {
        $crate::CudaComparator::new(
            stringify!($name),
            concat!(
                "return [&](const key_type& ",
                stringify!($a),
                ", const key_type& ",
                stringify!($b),
                ") -> bool { return ",
                stringify!($($predicate)+),
                "; }(a, b);"
            ),
            |$a: &$key, $b: &$key_b| -> bool { $($predicate)+ },
        )
    };
}
