//! Comparators ("is less" predicates) shared by both backends, with a total order for floats.
//!
//! Every primitive takes a strict weak order `Fn(&T, &T) -> bool`. Integers use `<` directly.
//! Floats under plain `<` are **not** a strict weak order once a NaN is present (NaN is neither
//! less nor greater than anything, so "equivalent" stops being transitive): the primitives then
//! still return a permutation of their input and never panic, but the order around NaNs is
//! unspecified and a merge of inputs sorted that way may not be sorted. Use [`total_less_f32`] /
//! [`total_less_f64`] (the IEEE 754 total order of [`f32::total_cmp`]: -NaN < -inf < … < -0.0 <
//! +0.0 < … < +inf < +NaN, so positive NaNs sort last) for floats that may hold NaN.

/// The natural ascending order `a < b`.
#[inline(always)]
pub fn less<T: PartialOrd>(a: &T, b: &T) -> bool {
    a < b
}

/// The natural descending order `a > b`.
#[inline(always)]
pub fn greater<T: PartialOrd>(a: &T, b: &T) -> bool {
    a > b
}

/// Ascending IEEE 754 total order on `f32` (positive NaN last, -0.0 before +0.0).
#[inline(always)]
pub fn total_less_f32(a: &f32, b: &f32) -> bool {
    a.total_cmp(b).is_lt()
}

/// Ascending IEEE 754 total order on `f64` (positive NaN last, -0.0 before +0.0).
#[inline(always)]
pub fn total_less_f64(a: &f64, b: &f64) -> bool {
    a.total_cmp(b).is_lt()
}

/// Descending IEEE 754 total order on `f32` (positive NaN first).
#[inline(always)]
pub fn total_greater_f32(a: &f32, b: &f32) -> bool {
    b.total_cmp(a).is_lt()
}

/// Descending IEEE 754 total order on `f64` (positive NaN first).
#[inline(always)]
pub fn total_greater_f64(a: &f64, b: &f64) -> bool {
    b.total_cmp(a).is_lt()
}
