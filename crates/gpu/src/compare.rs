//! Comparators as a CUDA snippet plus the equivalent Rust predicate, built-ins and user-given.

use std::borrow::Cow;
use std::marker::PhantomData;

use crate::key::{DeviceKey, FloatKey};

mod sealed {
    /// Keeps [`PrimitiveKey`](super::PrimitiveKey) to the types of this file: the built-in
    /// comparators trust their order on exactly these.
    pub trait Sealed {}

    /// The argument of [`DeviceComparator::trusted_order`](super::DeviceComparator::trusted_order):
    /// no type outside this crate can name it, so no impl outside it can override that method.
    /// Trust is given by this crate's own orders, or by the caller through the `unsafe`
    /// [`TrustedComparator::new`](super::TrustedComparator::new).
    #[derive(Clone, Copy, Debug)]
    pub struct TrustToken;
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

/// A strict weak order usable on the device and on the host: `cuda_body` is the body of
/// `bool operator()(const key_type& a, const key_type& b) const` and must compute the same
/// predicate as [`is_less`](Self::is_less), which the CPU backend uses to check GPU results.
pub trait DeviceComparator<K: DeviceKey>: Send + Sync {
    /// A short identifier (letters, digits, `_`) naming the comparator in generated sources.
    fn name(&self) -> Cow<'_, str>;
    /// CUDA source of the comparison; `a` and `b` are `const key_type&`.
    fn cuda_body(&self) -> Cow<'_, str>;
    /// CUDA source of helper definitions the body uses (may be empty).
    fn cuda_helpers(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    /// The same predicate in Rust.
    fn is_less(&self, a: &K, b: &K) -> bool;
    /// Whether keys that this order finds equivalent (neither less than the other) are always
    /// bitwise identical, so that no arrangement of equal keys can be told from the stable one.
    /// Then a keys-only sort may use unstable steps: the GPU mergesort sorts each thread's keys
    /// with a sorting network (246 compare-exchanges for 33 keys) instead of a stable sort
    /// (transpositions of groups of 8 keys merged through shared memory: the block sort compiles
    /// to 6344 instructions a thread at 37 keys under a top-8-bit comparator, 4888 with the
    /// network). True for [`Less`] and [`Greater`] on integers and for the
    /// float total orders; false by default.
    fn equivalents_identical(&self) -> bool {
        false
    }
    /// Whether this order is known to be a strict weak order on every input: one of twophase's
    /// own orders on its own key types ([`Less`] and [`Greater`] on integers, the float total
    /// orders), or a comparator wrapped in the `unsafe` [`TrustedComparator::new`]. Then the
    /// mergesort skips the device-side checks that keep an inconsistent order from losing keys
    /// or leaving its tiles. False by default: a user comparator is always checked.
    ///
    /// Its argument cannot be named outside this crate, so no other impl can override it: the
    /// checks' absence would let an inconsistent comparator reach out-of-bounds memory, which
    /// safe code must not.
    ///
    /// ```compile_fail
    /// use std::borrow::Cow;
    /// use twophase_gpu::DeviceComparator;
    /// struct Claims;
    /// impl DeviceComparator<u32> for Claims {
    ///     fn name(&self) -> Cow<'_, str> { "claims".into() }
    ///     fn cuda_body(&self) -> Cow<'_, str> { "return a <= b;".into() }
    ///     fn is_less(&self, a: &u32, b: &u32) -> bool { a <= b }
    ///     fn trusted_order(&self, _: twophase_gpu::compare::TrustToken) -> bool { true }
    /// }
    /// ```
    fn trusted_order(&self, _token: sealed::TrustToken) -> bool {
        false
    }
    /// The order as an unsigned integer order of mapped keys, where twophase knows one (the
    /// float total orders): then the mergesort sorts the integers and maps the keys on its first
    /// load and its last store. Like [`trusted_order`](Self::trusted_order), only this crate's
    /// own orders answer.
    fn key_image(&self, _token: sealed::TrustToken) -> Option<KeyImage> {
        None
    }
}

/// Ascending order by `<`, for the primitive integer keys.
///
/// Only the integers: it needs an `Ord` key, so `Less` on `f32`/`f64` does not compile (`<` on
/// floats is not a strict weak order once a NaN is present). Floats use [`TotalOrder`], which the
/// calls without a comparator pick by themselves ([`PrimitiveKey::Ascending`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Less;

/// Descending order by `>`, for the primitive integer keys (floats: [`TotalOrderDesc`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Greater;

/// Ascending IEEE total order for floats (`f32::total_cmp`: -NaN first, NaN last, -0.0 < +0.0).
#[derive(Clone, Copy, Debug, Default)]
pub struct TotalOrder;

/// Descending IEEE total order for floats (the reverse of [`TotalOrder`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct TotalOrderDesc;

/// The [`DeviceComparator`] impls of the built-in comparators, one a line: the comparator, the
/// bounds on the keys `K` it orders, its name, CUDA body and CUDA helpers, whether its
/// equivalents are identical, and its Rust predicate. Every built-in comparator is trusted.
macro_rules! builtin_comparators {
    ($($comp:ident [$($bounds:tt)+] $name:literal, $body:literal, $helpers:expr, $identical:expr, $image:expr, |$a:ident, $b:ident| $is_less:expr;)+) => {$(
        impl<K: $($bounds)+> DeviceComparator<K> for $comp {
            fn equivalents_identical(&self) -> bool {
                $identical
            }
            fn key_image(&self, _token: sealed::TrustToken) -> Option<KeyImage> {
                $image
            }
            fn trusted_order(&self, _token: sealed::TrustToken) -> bool {
                true
            }
            fn name(&self) -> Cow<'_, str> {
                Cow::Borrowed($name)
            }
            fn cuda_body(&self) -> Cow<'_, str> {
                Cow::Borrowed($body)
            }
            fn cuda_helpers(&self) -> Cow<'_, str> {
                $helpers
            }
            fn is_less(&self, $a: &K, $b: &K) -> bool {
                $is_less
            }
        }
    )+};
}

fn total_helper<K: FloatKey>() -> Cow<'static, str> {
    Cow::Owned(format!(
        "__device__ __forceinline__ auto twophase_total_key(key_type x) {{ {} }}\n",
        K::CUDA_TOTAL_KEY
    ))
}

// `trusted_order` is sound because `K: Ord` holds only for the integer keys among the (sealed)
// primitive keys, where `<` is a total order in Rust and CUDA alike; the total orders' key is a
// bijection of the bits, so their equivalents are identical.
builtin_comparators! {
    Less [PrimitiveKey + Ord] "less", "return a < b;", "".into(), K::EQUIVALENTS_IDENTICAL, None, |a, b| a < b;
    Greater [PrimitiveKey + Ord] "greater", "return b < a;", "".into(), K::EQUIVALENTS_IDENTICAL, None, |a, b| b < a;
    TotalOrder [FloatKey] "total", "return twophase_total_key(a) < twophase_total_key(b);", total_helper::<K>(), true, KeyImage::float_total::<K>(false), |a, b| K::total_cmp(a, b).is_lt();
    TotalOrderDesc [FloatKey] "total_desc", "return twophase_total_key(b) < twophase_total_key(a);", total_helper::<K>(), true, KeyImage::float_total::<K>(true), |a, b| K::total_cmp(b, a).is_lt();
}

/// A user comparator: a CUDA body (over `const key_type& a, const key_type& b`) and the equivalent
/// Rust closure.
pub struct CudaComparator<K, F> {
    name: String,
    body: String,
    is_less: F,
    identical: bool,
    marker: PhantomData<fn(&K, &K) -> bool>,
}

impl<K: DeviceKey, F: Fn(&K, &K) -> bool + Send + Sync> CudaComparator<K, F> {
    /// A comparator named `name` (letters, digits and `_`; other characters are replaced by `_`).
    pub fn new(name: &str, cuda_body: &str, is_less: F) -> Self {
        let name = sanitize(name);
        CudaComparator {
            name,
            body: cuda_body.to_owned(),
            is_less,
            identical: false,
            marker: PhantomData,
        }
    }

    /// The same comparator, declaring that keys it finds equivalent are always the same bits
    /// ([`DeviceComparator::equivalents_identical`]): a keys-only sort may then take the
    /// unstable sorting-network register sort. A false claim costs stability among equivalent
    /// keys, never a key.
    pub fn with_identical_equivalents(mut self) -> Self {
        self.identical = true;
        self
    }
}

impl<K: DeviceKey, F: Fn(&K, &K) -> bool + Send + Sync> DeviceComparator<K>
    for CudaComparator<K, F>
{
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.name)
    }
    fn cuda_body(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.body)
    }
    fn is_less(&self, a: &K, b: &K) -> bool {
        (self.is_less)(a, b)
    }
    fn equivalents_identical(&self) -> bool {
        self.identical
    }
}

impl<K: DeviceKey, C: DeviceComparator<K> + ?Sized> DeviceComparator<K> for &C {
    fn name(&self) -> Cow<'_, str> {
        (**self).name()
    }
    fn cuda_body(&self) -> Cow<'_, str> {
        (**self).cuda_body()
    }
    fn cuda_helpers(&self) -> Cow<'_, str> {
        (**self).cuda_helpers()
    }
    fn is_less(&self, a: &K, b: &K) -> bool {
        (**self).is_less(a, b)
    }
    fn equivalents_identical(&self) -> bool {
        (**self).equivalents_identical()
    }
    fn trusted_order(&self, token: sealed::TrustToken) -> bool {
        (**self).trusted_order(token)
    }
    fn key_image(&self, token: sealed::TrustToken) -> Option<KeyImage> {
        (**self).key_image(token)
    }
}

/// A comparator its caller vouches for: a strict weak order on every key it will be given, in
/// CUDA and in Rust alike. The mergesort then runs the kernels of twophase's own orders, which
/// carry none of the device-side checks that keep an inconsistent comparator from losing keys
/// (a user comparator's sort pays about 5% for them at 2^27 keys on an H100; docs/tuning.md).
///
/// Everything else is as for `comp`: its name, CUDA body, helpers, Rust predicate and
/// [`equivalents_identical`](DeviceComparator::equivalents_identical).
#[derive(Clone, Copy, Debug)]
pub struct TrustedComparator<C>(C);

impl<C> TrustedComparator<C> {
    /// Trust `comp` to be a strict weak order.
    ///
    /// # Safety
    ///
    /// For every pair of keys a call will compare, `comp`'s CUDA body must answer the same each
    /// time and be a strict weak order (irreflexive, transitive, with transitive
    /// incomparability) over the keys of that call. Otherwise the sorting kernels' partitions
    /// need not be monotone, and the tiles built on them may read and write outside their
    /// buffers: undefined behaviour. (`<` on floats with NaN, `<=` and hashes are not strict weak
    /// orders.)
    pub unsafe fn new(comp: C) -> Self {
        TrustedComparator(comp)
    }

    /// The comparator inside.
    pub fn into_inner(self) -> C {
        self.0
    }
}

impl<K: DeviceKey, C: DeviceComparator<K>> DeviceComparator<K> for TrustedComparator<C> {
    fn name(&self) -> Cow<'_, str> {
        self.0.name()
    }
    fn cuda_body(&self) -> Cow<'_, str> {
        self.0.cuda_body()
    }
    fn cuda_helpers(&self) -> Cow<'_, str> {
        self.0.cuda_helpers()
    }
    fn is_less(&self, a: &K, b: &K) -> bool {
        self.0.is_less(a, b)
    }
    fn equivalents_identical(&self) -> bool {
        self.0.equivalents_identical()
    }
    // SAFETY-relevant: sound because `TrustedComparator::new` is `unsafe`; its caller promised a
    // strict weak order.
    fn trusted_order(&self, _token: sealed::TrustToken) -> bool {
        true
    }
    fn key_image(&self, token: sealed::TrustToken) -> Option<KeyImage> {
        self.0.key_image(token)
    }
}

/// Whether `comp` is trusted to be a strict weak order (see
/// [`DeviceComparator::trusted_order`]): the mergesort then compiles its unchecked kernels.
pub fn is_trusted<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(comp: &C) -> bool {
    comp.trusted_order(sealed::TrustToken)
}

/// An order-preserving bijection of a key's bits onto an unsigned integer of the same width: the
/// comparator's order is the integers' `<` on the mapped keys. The mergesort then sorts the
/// integers (one compare instruction a step instead of the comparator's body) and maps the keys
/// on its first load and its last store (kernels/mergesort_blocksort.cu `TP_KEY_IMAGE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyImage {
    /// Bits of the key and of its image: 32 or 64.
    bits: u32,
    /// Whether the order is the total order's reverse (the image complemented).
    descending: bool,
}

impl KeyImage {
    /// The IEEE 754 total order of float `K` (`total_cmp`), or its reverse: the bits with the sign
    /// flipped for positives and every bit flipped for negatives.
    fn float_total<K: FloatKey>(descending: bool) -> Option<KeyImage> {
        Some(KeyImage {
            bits: 8 * std::mem::size_of::<K>() as u32,
            descending,
        })
    }

    /// Bits of the key and of its image: 32 or 64.
    pub fn bits(self) -> u32 {
        self.bits
    }

    /// The image as the `<` of the unsigned integers it maps to: the comparator a sort of the
    /// mapped keys compiles, with the maps among its helpers.
    pub fn order(self) -> ImageOrder {
        ImageOrder(self)
    }

    /// The map and its inverse in CUDA, over `key_type` (the unsigned integer): TP_KEY_IMAGE with
    /// `twophase_key_image` and `twophase_key_from_image`. Static text: every sort of floats
    /// names it in its program's key before its first launch.
    fn cuda_maps(self) -> &'static str {
        if self.descending {
            DESCENDING_IMAGE_MAPS
        } else {
            ASCENDING_IMAGE_MAPS
        }
    }
}

/// [`KeyImage::cuda_maps`]' text with the map `$into` and its inverse `$back`.
macro_rules! image_maps {
    ($into:literal, $back:literal) => {
        concat!(
            "#define TP_KEY_IMAGE 1
             __device__ __forceinline__ key_type twophase_total_mask(key_type x) {
               const key_type sign = (key_type)1 << (8 * sizeof(key_type) - 1);
               return (key_type)(0 - (x >> (8 * sizeof(key_type) - 1))) | sign;
}
             __device__ __forceinline__ key_type twophase_key_image(key_type x) { return ",
            $into,
            "; }
             __device__ __forceinline__ key_type twophase_key_from_image(key_type y) { ",
            $back,
            " }
"
        )
    };
}

// Ascending: a set sign bit (a negative) flips every bit, a clear one only the sign bit; the
// inverse decides by the image's top bit, which is the complement of the key's.
const ASCENDING_IMAGE_MAPS: &str = image_maps!(
    "x ^ twophase_total_mask(x)",
    "return y ^ twophase_total_mask(~y);"
);
const DESCENDING_IMAGE_MAPS: &str = image_maps!(
    "~(x ^ twophase_total_mask(x))",
    "y = ~y; return y ^ twophase_total_mask(~y);"
);

/// The order of [`KeyImage`]'s unsigned integers: `<`, trusted, with the maps among its helpers
/// (for `u32` and `u64` keys of the image's width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageOrder(KeyImage);

macro_rules! image_orders {
    ($($t:ty),*) => {$(
        impl DeviceComparator<$t> for ImageOrder {
            fn name(&self) -> Cow<'_, str> {
                Cow::Borrowed(if self.0.descending { "total_desc_image" } else { "total_image" })
            }
            fn cuda_body(&self) -> Cow<'_, str> {
                Cow::Borrowed("return a < b;")
            }
            fn cuda_helpers(&self) -> Cow<'_, str> {
                Cow::Borrowed(self.0.cuda_maps())
            }
            fn is_less(&self, a: &$t, b: &$t) -> bool {
                a < b
            }
            fn equivalents_identical(&self) -> bool {
                true
            }
            // `<` on unsigned integers is a strict weak order.
            fn trusted_order(&self, _token: sealed::TrustToken) -> bool {
                true
            }
        }
    )*};
}
image_orders!(u32, u64);

/// The integer image of `comp`'s order, where twophase knows one ([`KeyImage`]).
pub fn key_image<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(comp: &C) -> Option<KeyImage> {
    comp.key_image(sealed::TrustToken)
}

/// The `Ordering` that `comp`'s Rust predicate defines (equal: neither is less), for std's
/// `sort_by` and `binary_search_by` on the host.
pub fn ordering<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    comp: &C,
) -> impl Fn(&K, &K) -> std::cmp::Ordering + Sync + '_ {
    move |x, y| {
        if comp.is_less(x, y) {
            std::cmp::Ordering::Less
        } else if comp.is_less(y, x) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }
}

/// `text` as a C identifier fragment: letters, digits and `_` kept, anything else `_` (program
/// names, comparator names, CUDA type names in program names).
pub(crate) fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
