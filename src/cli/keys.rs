//! The key types of the command and their orders: the library's comparators for the total orders, NumPy's float order as a user comparator.

use twophase::gpu::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use twophase::order::NaturalOrder;
use twophase::{CudaComparator, DeviceComparator, Greater, Less, PrimitiveKey};
use twophase::{TotalOrder, TotalOrderDesc};

use super::{Dtype, FloatOrder};

/// The order a command sorts, merges or searches in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Order {
    /// Descending instead of ascending.
    pub descending: bool,
    /// For floats: the total order or NumPy's.
    pub float_order: FloatOrder,
}

impl Order {
    /// Words for messages: `ascending`, `descending NumPy`, ...
    pub fn describe(self, dtype: Dtype) -> String {
        let direction = if self.descending {
            "descending"
        } else {
            "ascending"
        };
        match (dtype, self.float_order) {
            (Dtype::F32 | Dtype::F64, FloatOrder::Total) => format!("{direction} total order"),
            (Dtype::F32 | Dtype::F64, FloatOrder::Numpy) => format!("{direction} NumPy order"),
            _ => format!("{direction} order"),
        }
    }
}

/// Work generic over the comparator of an [`Order`]: [`Key::visit_order`] calls
/// [`visit`](Self::visit) with the comparator the order names.
pub trait OrderVisitor<K: Key> {
    /// What the work returns.
    type Output;
    /// Run with `comp`.
    fn visit<C: DeviceComparator<K>>(self, comp: &C) -> Self::Output;
}

/// A key type of the command: a primitive key of the library that cudarc can copy.
pub trait Key:
    PrimitiveKey + NaturalOrder + DeviceRepr + ValidAsZeroBits + std::fmt::Display + std::fmt::Debug
{
    /// The file dtype of this type.
    const DTYPE: Dtype;
    /// This type with its bytes reversed (big-endian files).
    fn swap_bytes(self) -> Self;
    /// Run `visitor` with the comparator of `order`.
    fn visit_order<V: OrderVisitor<Self>>(order: Order, visitor: V) -> V::Output;
    /// Stable ascending sort of `keys` (and `values` with them) on the CPU backend, in the float
    /// order `float_order` (integers have one order): [`NaturalOrder`]'s for the total order, so
    /// that std's sorts run under the merge passes.
    fn cpu_sort<V: Copy + Send + Sync>(
        keys: &mut [Self],
        values: Option<&mut [V]>,
        float_order: FloatOrder,
    );
    /// Stable ascending merge of `a` and `b` on the CPU backend in `float_order`.
    fn cpu_merge(a: &[Self], b: &[Self], float_order: FloatOrder) -> Vec<Self>;
}

/// [`Key::cpu_sort`] in the key's natural order.
fn cpu_sort_natural<K: Key, V: Copy + Send + Sync>(keys: &mut [K], values: Option<&mut [V]>) {
    match values {
        Some(values) => twophase::cpu::mergesort_pairs(keys, values),
        None => twophase::cpu::mergesort(keys),
    }
}

macro_rules! integer_keys {
    ($($t:ty => $dtype:ident),* $(,)?) => {$(
        impl Key for $t {
            const DTYPE: Dtype = Dtype::$dtype;
            fn swap_bytes(self) -> Self {
                <$t>::swap_bytes(self)
            }
            // Integers have one order: the float order does not apply.
            fn visit_order<V: OrderVisitor<Self>>(order: Order, visitor: V) -> V::Output {
                if order.descending {
                    visitor.visit(&Greater)
                } else {
                    visitor.visit(&Less)
                }
            }
            fn cpu_sort<V: Copy + Send + Sync>(
                keys: &mut [Self],
                values: Option<&mut [V]>,
                _float_order: FloatOrder,
            ) {
                cpu_sort_natural(keys, values);
            }
            fn cpu_merge(a: &[Self], b: &[Self], _float_order: FloatOrder) -> Vec<Self> {
                twophase::cpu::merge(a, b)
            }
        }
    )*};
}

integer_keys!(
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
);

/// NumPy's "a before b" on floats (`npysort`'s `a < b || (b != b && a == a)`): every NaN after
/// every number, NaNs equivalent to each other, -0.0 equivalent to +0.0. A strict weak order.
/// The CUDA body tests NaN by `x != x` (NVRTC compiles without fast-math, so it holds).
const NUMPY_LESS_CUDA: &str = "return a < b || (b != b && a == a);";
/// The reverse of [`NUMPY_LESS_CUDA`]: NaNs first.
const NUMPY_GREATER_CUDA: &str = "return b < a || (a != a && b == b);";

macro_rules! float_keys {
    ($($t:ty => $dtype:ident),* $(,)?) => {$(
        impl Key for $t {
            const DTYPE: Dtype = Dtype::$dtype;
            fn swap_bytes(self) -> Self {
                <$t>::from_bits(self.to_bits().swap_bytes())
            }
            fn visit_order<V: OrderVisitor<Self>>(order: Order, visitor: V) -> V::Output {
                match (order.float_order, order.descending) {
                    (FloatOrder::Total, false) => visitor.visit(&TotalOrder),
                    (FloatOrder::Total, true) => visitor.visit(&TotalOrderDesc),
                    (FloatOrder::Numpy, false) => visitor.visit(&CudaComparator::new(
                        "numpy_less",
                        NUMPY_LESS_CUDA,
                        |a: &$t, b: &$t| numpy_less(a, b),
                    )),
                    (FloatOrder::Numpy, true) => visitor.visit(&CudaComparator::new(
                        "numpy_greater",
                        NUMPY_GREATER_CUDA,
                        |a: &$t, b: &$t| numpy_less(b, a),
                    )),
                }
            }
            fn cpu_sort<V: Copy + Send + Sync>(
                keys: &mut [Self],
                values: Option<&mut [V]>,
                float_order: FloatOrder,
            ) {
                match (float_order, values) {
                    (FloatOrder::Total, values) => cpu_sort_natural(keys, values),
                    (FloatOrder::Numpy, Some(values)) => {
                        twophase::cpu::mergesort_pairs_by(keys, values, numpy_less::<$t>)
                    }
                    (FloatOrder::Numpy, None) => {
                        twophase::cpu::mergesort_by(keys, numpy_less::<$t>)
                    }
                }
            }
            fn cpu_merge(a: &[Self], b: &[Self], float_order: FloatOrder) -> Vec<Self> {
                match float_order {
                    FloatOrder::Total => twophase::cpu::merge(a, b),
                    FloatOrder::Numpy => twophase::cpu::merge_by(a, b, numpy_less::<$t>),
                }
            }
        }
    )*};
}

/// NumPy's float order in Rust, as [`NUMPY_LESS_CUDA`].
fn numpy_less<F: num_like::Float>(a: &F, b: &F) -> bool {
    a < b || (b.is_nan() && !a.is_nan())
}

/// The float operations [`numpy_less`] needs, for `f32` and `f64`.
mod num_like {
    pub trait Float: PartialOrd {
        fn is_nan(&self) -> bool;
    }
    impl Float for f32 {
        fn is_nan(&self) -> bool {
            f32::is_nan(*self)
        }
    }
    impl Float for f64 {
        fn is_nan(&self) -> bool {
            f64::is_nan(*self)
        }
    }
}

float_keys!(f32 => F32, f64 => F64);

/// The first position `i` where `keys[i]` comes before `keys[i - 1]` under `comp`, if any (in
/// parallel: the first such pair of the whole slice).
pub fn first_unsorted<K: Key, C: DeviceComparator<K>>(keys: &[K], comp: &C) -> Option<usize> {
    use rayon::prelude::*;
    keys.par_windows(2)
        .position_first(|pair| comp.is_less(&pair[1], &pair[0]))
        .map(|i| i + 1)
}

/// Reverse `data` in place, in parallel.
pub fn par_reverse<T: Send>(data: &mut [T]) {
    use rayon::prelude::*;
    let half = data.len() / 2;
    let (front, back) = data.split_at_mut(data.len() - half);
    front[..half]
        .par_iter_mut()
        .zip(back.par_iter_mut().rev())
        .for_each(|(x, y)| std::mem::swap(x, y));
}

/// Stable sort of `keys` (and `values`) on the CPU backend in `order`. A descending order is the
/// ascending one on the reversed input, reversed: equal keys, reversed twice, keep their input
/// order; so the CPU needs only the ascending orders, with std's sorts under their merge passes.
pub fn cpu_sort_in_order<K: Key, V: Copy + Send + Sync>(
    keys: &mut [K],
    mut values: Option<&mut [V]>,
    order: Order,
) {
    if order.descending {
        par_reverse(keys);
        values.as_deref_mut().map(par_reverse);
    }
    K::cpu_sort(keys, values.as_deref_mut(), order.float_order);
    if order.descending {
        par_reverse(keys);
        values.map(par_reverse);
    }
}

/// Stable merge of `a` and `b` on the CPU backend in `order`, `a`'s keys first among equal keys.
/// Descending: the ascending merge of reversed `b` and reversed `a` (so that `a`'s keys, reversed
/// twice, still come first), reversed.
pub fn cpu_merge_in_order<K: Key>(a: &[K], b: &[K], order: Order) -> Vec<K> {
    if !order.descending {
        return K::cpu_merge(a, b, order.float_order);
    }
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    par_reverse(&mut a);
    par_reverse(&mut b);
    let mut merged = K::cpu_merge(&b, &a, order.float_order);
    par_reverse(&mut merged);
    merged
}
