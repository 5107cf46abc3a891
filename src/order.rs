//! Comparators ("is less" predicates) of both backends, and the order of the calls without one.
//!
//! # The order of floats
//!
//! `f32` and `f64` are not `Ord` in Rust: `<` on floats is not a strict weak order once a NaN is
//! present (NaN is neither less nor greater than anything, so "equivalent" stops being
//! transitive). twophase follows std and makes that partial order impossible to name where it is
//! trusted, and sorts floats by the IEEE 754 total order wherever no comparator is given:
//!
//! - **Calls without a comparator sort floats by the total order** ([`f32::total_cmp`]:
//!   -NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN, so positive NaNs sort last, as NumPy and
//!   PyTorch do). On the GPU, `twophase::sort`, `merge` and `sorted_search` take the
//!   key's [`PrimitiveKey::Ascending`](crate::gpu::PrimitiveKey::Ascending) comparator:
//!   [`Less`](crate::gpu::Less) for the integers, [`TotalOrder`](crate::gpu::TotalOrder) for the
//!   floats. On the CPU, `cpu::mergesort`, `merge`, `merge_pairs`, `mergesort_pairs` and
//!   `sorted_search` take keys that implement [`NaturalOrder`]: `<` for the integers, `char`,
//!   `bool`, and lexicographically for tuples and arrays of such keys; `total_cmp` for the
//!   floats. The results equal std's `sort_by(|a, b| a.total_cmp(b))`.
//! - **[`Less`](crate::gpu::Less) and [`Greater`](crate::gpu::Greater) do not compile on
//!   floats**: they need an `Ord` key. They are trusted strict weak orders (the GPU skips its
//!   consistency checks for them), which is only sound because they never apply to floats. Use
//!   [`TotalOrder`](crate::gpu::TotalOrder) / [`TotalOrderDesc`](crate::gpu::TotalOrderDesc), or
//!   [`total_less_f32`] and friends on the CPU.
//! - A **partial order can still be given as a user comparator** (a `CudaComparator` with
//!   `return a < b;`, or [`less`] / a closure on the CPU). It is then treated like any comparator
//!   that is not a strict weak order: sorts and merges return a permutation of their input in
//!   unspecified order (no key is lost or duplicated, nothing panics or reads out of bounds), and
//!   the GPU and the backend-neutral crate-root calls may report it as
//!   `GpuError::InvalidInput` (an unsorted input, or an inconsistent order).
//!
//! A CPU call on another `Ord` type that does not implement [`NaturalOrder`] uses the `_by`
//! form with [`less`]; or the type implements [`NaturalOrder`] in one line.
//!
//! ```
//! let mut keys = vec![2.0f32, f32::NAN, -0.0, 0.0, -1.0];
//! twophase::cpu::mergesort(&mut keys);
//! let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
//! let mut expected = vec![2.0f32, f32::NAN, -0.0, 0.0, -1.0];
//! expected.sort_by(f32::total_cmp);
//! assert_eq!(bits, expected.iter().map(|k| k.to_bits()).collect::<Vec<_>>());
//! ```
//!
//! `Less` on floats does not compile:
//!
//! ```compile_fail
//! let mut keys = vec![2.0f32, f32::NAN];
//! let _ = twophase::sort_by(&mut keys, &twophase::gpu::Less);
//! ```
//!
//! while the total order does (and is what `twophase::sort` picks):
//!
//! ```no_run
//! let mut keys = vec![2.0f32, f32::NAN];
//! let _ = twophase::sort_by(&mut keys, &twophase::gpu::TotalOrder);
//! let _ = twophase::sort(&mut keys);
//! ```

use crate::cpu::sort::RunSort;

/// Keys with a natural ascending strict weak order, used by the CPU calls that take no
/// comparator: `<` for the integers, `char` and `bool`, the IEEE 754 total order for `f32` and
/// `f64` (NaN last), and lexicographic order for tuples (up to four) and arrays of such keys.
///
/// A blanket implementation for every `Ord` type cannot sit beside the float ones (Rust's
/// coherence rules forbid it), so other `Ord` types implement it themselves:
///
/// ```
/// #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
/// struct Id(u32);
/// impl twophase::order::NaturalOrder for Id {
///     fn natural_less(a: &Self, b: &Self) -> bool {
///         a < b
///     }
/// }
/// let mut ids = vec![Id(3), Id(1), Id(2)];
/// twophase::cpu::mergesort(&mut ids);
/// assert!(ids.windows(2).all(|w| w[0] < w[1]));
/// ```
pub trait NaturalOrder {
    /// Whether `a` comes strictly before `b`; must be a strict weak order.
    fn natural_less(a: &Self, b: &Self) -> bool;

    /// Which sort the CPU backend may run on this order: std's own sorts only where this crate
    /// knows the order is a strict weak order (std's sorts may panic on any other). The argument
    /// cannot be named outside this crate, so only its own impls override this method.
    #[doc(hidden)]
    fn run_sort(_token: sealed::OrderToken) -> RunSort
    where
        Self: Sized,
    {
        RunSort::BlockSort
    }
}

pub(crate) mod sealed {
    /// The argument of [`NaturalOrder::run_sort`](super::NaturalOrder::run_sort): no type outside
    /// this crate can name it, so no impl outside it can vouch for its own order.
    pub struct OrderToken;
}

macro_rules! natural_order_by_lt {
    ($($t:ty),* $(,)?) => {$(
        impl NaturalOrder for $t {
            #[inline(always)]
            fn natural_less(a: &Self, b: &Self) -> bool {
                a < b
            }
            // `<` on these types is a total order: equal keys are identical.
            fn run_sort(_token: sealed::OrderToken) -> RunSort {
                RunSort::StdUnstable
            }
        }
    )*};
}

natural_order_by_lt!(
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    char,
    bool,
    ()
);

impl NaturalOrder for f32 {
    #[inline(always)]
    fn natural_less(a: &Self, b: &Self) -> bool {
        total_less_f32(a, b)
    }
    // `total_cmp` orders the bit patterns: equal keys are identical.
    fn run_sort(_token: sealed::OrderToken) -> RunSort {
        RunSort::StdUnstable
    }
}

impl NaturalOrder for f64 {
    #[inline(always)]
    fn natural_less(a: &Self, b: &Self) -> bool {
        total_less_f64(a, b)
    }
    // `total_cmp` orders the bit patterns: equal keys are identical.
    fn run_sort(_token: sealed::OrderToken) -> RunSort {
        RunSort::StdUnstable
    }
}

macro_rules! natural_order_tuple {
    ($(($($name:ident $index:tt),+)),* $(,)?) => {$(
        impl<$($name: NaturalOrder),+> NaturalOrder for ($($name,)+) {
            #[inline]
            fn natural_less(a: &Self, b: &Self) -> bool {
                $(
                    if $name::natural_less(&a.$index, &b.$index) {
                        return true;
                    }
                    if $name::natural_less(&b.$index, &a.$index) {
                        return false;
                    }
                )+
                false
            }
            // Lexicographic order over strict weak orders is one; its equivalents are
            // identical where every component's are.
            fn run_sort(_token: sealed::OrderToken) -> RunSort {
                [$($name::run_sort(sealed::OrderToken)),+].into_iter().fold(
                    RunSort::StdUnstable,
                    RunSort::weakest,
                )
            }
        }
    )*};
}

natural_order_tuple!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
);

impl<T: NaturalOrder, const N: usize> NaturalOrder for [T; N] {
    #[inline]
    fn natural_less(a: &Self, b: &Self) -> bool {
        for (x, y) in a.iter().zip(b) {
            if T::natural_less(x, y) {
                return true;
            }
            if T::natural_less(y, x) {
                return false;
            }
        }
        false
    }
    // Lexicographic order, as for tuples.
    fn run_sort(_token: sealed::OrderToken) -> RunSort {
        T::run_sort(sealed::OrderToken)
    }
}

/// The natural ascending order `a < b`. On floats this is a partial order, not a strict weak
/// order: see the [module docs](self).
#[inline(always)]
pub fn less<T: PartialOrd>(a: &T, b: &T) -> bool {
    a < b
}

/// The natural descending order `a > b` (a partial order on floats, as [`less`]).
#[inline(always)]
pub fn greater<T: PartialOrd>(a: &T, b: &T) -> bool {
    a > b
}

/// The IEEE 754 total orders of one float type, ascending and descending, as "is less" functions.
macro_rules! total_orders {
    ($($float:ty => $less:ident, $greater:ident;)+) => {$(
        #[doc = concat!("Ascending IEEE 754 total order on `", stringify!($float), "` (positive NaN last, -0.0 before +0.0).")]
        #[inline(always)]
        pub fn $less(a: &$float, b: &$float) -> bool {
            a.total_cmp(b).is_lt()
        }

        #[doc = concat!("Descending IEEE 754 total order on `", stringify!($float), "` (positive NaN first).")]
        #[inline(always)]
        pub fn $greater(a: &$float, b: &$float) -> bool {
            b.total_cmp(a).is_lt()
        }
    )+};
}

total_orders! {
    f32 => total_less_f32, total_greater_f32;
    f64 => total_less_f64, total_greater_f64;
}
