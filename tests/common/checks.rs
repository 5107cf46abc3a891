//! Checks shared by the adversarial GPU tests: the size scale, multiset checks, guarded buffers.

use std::mem::size_of;

use rayon::prelude::*;
use twophase::gpu::Gpu;
use twophase_gpu::cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};

/// Environment variable that bounds the sizes of the tests that honour it: `small` (for
/// compute-sanitizer runs), `medium`, `full` (the default) or a number of elements.
pub const TEST_SCALE_ENV: &str = "TWOPHASE_TEST_SCALE";

/// Largest size under `TWOPHASE_TEST_SCALE=small`: a few block-sort tiles of every shipped
/// tuning, and a few merge passes, fast enough under compute-sanitizer's memcheck.
pub const SMALL_TEST_SCALE: usize = 1 << 17;

/// Largest size under `TWOPHASE_TEST_SCALE=medium`.
pub const MEDIUM_TEST_SCALE: usize = 1 << 20;

/// The largest input size (in elements) a scaled test may use: `usize::MAX` unless
/// `TWOPHASE_TEST_SCALE` asks for less. An unknown value is a failure, not a silent full run.
pub fn test_scale() -> usize {
    match std::env::var(TEST_SCALE_ENV) {
        Err(_) => usize::MAX,
        Ok(value) => match value.trim() {
            "" | "full" => usize::MAX,
            "small" => SMALL_TEST_SCALE,
            "medium" => MEDIUM_TEST_SCALE,
            number => number.parse().unwrap_or_else(|_| {
                panic!("{TEST_SCALE_ENV}={value}: expected small, medium, full or a number")
            }),
        },
    }
}

/// Sizes that probe every tile of `tiles` (one key short of a tile, a tile, one past it, two
/// tiles and one, three tiles and seven), the empty and tiny inputs, and `large` sizes, all
/// within [`test_scale`], ascending and without repeats.
pub fn boundary_sizes(tiles: &[usize], large: &[usize]) -> Vec<usize> {
    let scale = test_scale();
    let mut sizes = vec![0, 1, 2, 3, 31, 33];
    for &tile in tiles {
        sizes.extend([tile - 1, tile, tile + 1, 2 * tile + 1, 3 * tile + 7]);
    }
    sizes.extend_from_slice(large);
    sizes.retain(|&n| n <= scale);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The bytes of each element of `items`, sorted: two slices are permutations of each other
/// exactly when these agree (NaN payloads and signed zeros included).
fn sorted_elements<T: bytemuck::Pod>(items: &[T]) -> Vec<&[u8]> {
    assert!(size_of::<T>() > 0, "multiset check of zero-sized elements");
    let mut elements: Vec<&[u8]> = bytemuck::cast_slice::<T, u8>(items)
        .chunks_exact(size_of::<T>())
        .collect();
    elements.par_sort_unstable();
    elements
}

/// Assert that `got` is a permutation of `input` (a multiset check over the bytes of each
/// element), naming `case` and the first difference otherwise.
pub fn assert_permutation<T: bytemuck::Pod>(got: &[T], input: &[T], case: &str) {
    assert_eq!(
        got.len(),
        input.len(),
        "{case}: {} elements out for {} in",
        got.len(),
        input.len()
    );
    let (got, want) = (sorted_elements(got), sorted_elements(input));
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{case}: not a permutation of the input: the {i}-th smallest element (by bytes) is {:?}, expected {:?}",
            got[i], want[i]
        );
    }
}

/// Assert that the pairs `(got_keys[i], got_values[i])` are a permutation of the input's pairs:
/// every key kept its value, and no pair was lost or duplicated.
pub fn assert_pairs_permutation<K: bytemuck::Pod + Sync, V: bytemuck::Pod + Sync>(
    (got_keys, got_values): (&[K], &[V]),
    (keys, values): (&[K], &[V]),
    case: &str,
) {
    assert_eq!(got_keys.len(), keys.len(), "{case}: key count");
    assert_eq!(got_values.len(), values.len(), "{case}: value count");
    assert_eq!(keys.len(), values.len(), "{case}: input pairs");
    let pairs = |k: &[K], v: &[V]| -> Vec<Vec<u8>> {
        let mut p: Vec<Vec<u8>> = k
            .par_iter()
            .zip(v.par_iter())
            .map(|(k, v)| {
                let mut bytes = bytemuck::bytes_of(k).to_vec();
                bytes.extend_from_slice(bytemuck::bytes_of(v));
                bytes
            })
            .collect();
        p.par_sort_unstable();
        p
    };
    let (got, want) = (pairs(got_keys, got_values), pairs(keys, values));
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{case}: the (key, value) pairs are not a permutation of the input's: the {i}-th smallest pair (by bytes) is {:?}, expected {:?}",
            got[i], want[i]
        );
    }
}

/// Elements of guard on each side of a [`Guarded`] buffer.
pub const GUARD: usize = 64;

/// A device buffer with [`GUARD`] poison elements on each side of the `len` elements a call
/// gets: a write outside the call's range changes the guards, which [`Guarded::download`]
/// checks, even without compute-sanitizer.
pub struct Guarded<T: DeviceRepr> {
    buffer: CudaSlice<T>,
    len: usize,
    poison: T,
}

impl<T: DeviceRepr + bytemuck::Pod> Guarded<T> {
    /// `host` between two guards of `poison`.
    pub fn new(gpu: &Gpu, host: &[T], poison: T) -> Self {
        let mut data = vec![poison; GUARD];
        data.extend_from_slice(host);
        data.extend(std::iter::repeat_n(poison, GUARD));
        let buffer = gpu
            .stream()
            .clone_htod(&data)
            .expect("upload guarded buffer");
        Guarded {
            buffer,
            len: host.len(),
            poison,
        }
    }

    /// The call's elements, read-only.
    pub fn view(&self) -> CudaView<'_, T> {
        self.buffer.slice(GUARD..GUARD + self.len)
    }

    /// The call's elements, writable.
    pub fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.buffer.slice_mut(GUARD..GUARD + self.len)
    }

    /// The call's elements, after asserting that both guards are intact (`case` names the call).
    pub fn download(&self, gpu: &Gpu, case: &str) -> Vec<T> {
        let mut host = gpu.stream().clone_dtoh(&self.buffer).expect("download");
        let poison = bytemuck::bytes_of(&self.poison);
        let after = host.split_off(GUARD + self.len);
        let inside = host.split_off(GUARD);
        for (side, guard) in [("before", &host), ("after", &after)] {
            if let Some(i) = guard.iter().position(|g| bytemuck::bytes_of(g) != poison) {
                panic!("{case}: a write landed {side} the buffer (guard element {i} changed)");
            }
        }
        inside
    }
}
