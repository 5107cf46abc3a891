//! Shared support of the GPU integration tests: the GPU under test, a seeded RNG, input patterns.
#![allow(dead_code)] // Each test file uses the part it needs.

use std::cmp::Ordering;

use rand::rngs::StdRng;
use rand::SeedableRng;
use twophase::gpu::{CudaComparator, DeviceComparator, DeviceKey, Gpu};
use twophase_gpu::cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};

pub mod bounds;
pub mod checks;

/// The GPU under test. A missing GPU is a failure, never a silent pass.
pub fn gpu() -> Gpu {
    match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("these tests need a CUDA GPU and found none: {e}"),
    }
}

/// A fresh random generator whose seed is printed, so a failure can be replayed.
pub fn rng() -> StdRng {
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    StdRng::seed_from_u64(seed)
}

/// A user key: compared by `key` only, `tag` rides along and proves stability.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rec {
    pub key: u32,
    pub tag: u32,
}

impl DeviceKey for Rec {
    const CUDA_TYPE: &'static str = "rec";
    const CUDA_DEFINITION: &'static str = "struct rec { unsigned int key; unsigned int tag; };";
}

/// A user comparator on [`Rec`]: descending by key, as a CUDA snippet and the same Rust predicate.
pub fn rec_key_descending() -> CudaComparator<Rec, fn(&Rec, &Rec) -> bool> {
    CudaComparator::new(
        "rec_key_desc",
        "return a.key > b.key;",
        |a: &Rec, b: &Rec| a.key > b.key,
    )
}

/// Input patterns of the sort tests.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    Random,
    Sorted,
    Reversed,
    AllEqual,
    FewDistinct,
    OrganPipe,
}

pub const PATTERNS: [Pattern; 6] = [
    Pattern::Random,
    Pattern::Sorted,
    Pattern::Reversed,
    Pattern::AllEqual,
    Pattern::FewDistinct,
    Pattern::OrganPipe,
];

/// The `Ordering` a comparator's Rust predicate defines (equal: neither is less).
pub fn order<K: DeviceKey, C: DeviceComparator<K>>(comp: &C) -> impl Fn(&K, &K) -> Ordering + '_ {
    |x, y| {
        if comp.is_less(x, y) {
            Ordering::Less
        } else if comp.is_less(y, x) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }
}

/// `n` keys in `pattern`, from `draw` (random keys) and `few` (one of a few distinct keys).
pub fn keys<K: DeviceKey, C: DeviceComparator<K>>(
    rng: &mut StdRng,
    n: usize,
    pattern: Pattern,
    comp: &C,
    draw: &dyn Fn(&mut StdRng) -> K,
    few: &dyn Fn(&mut StdRng) -> K,
) -> Vec<K> {
    let mut v: Vec<K> = match pattern {
        Pattern::FewDistinct => (0..n).map(|_| few(rng)).collect(),
        Pattern::AllEqual => {
            let k = draw(rng);
            vec![k; n]
        }
        _ => (0..n).map(|_| draw(rng)).collect(),
    };
    match pattern {
        Pattern::Sorted => v.sort_by(order(comp)),
        Pattern::Reversed => {
            v.sort_by(order(comp));
            v.reverse();
        }
        Pattern::OrganPipe => {
            v.sort_by(order(comp));
            let tail: Vec<K> = v[n / 2..].iter().rev().copied().collect();
            v.truncate(n / 2);
            v.extend(tail);
        }
        _ => {}
    }
    v
}

/// Whether two key slices are the same bytes (NaN payloads and signed zeros included).
pub fn same_bits<K: DeviceKey>(x: &[K], y: &[K]) -> bool {
    bytemuck::cast_slice::<K, u8>(x) == bytemuck::cast_slice::<K, u8>(y)
}

/// Upload at least one element (so that empty inputs still get a valid buffer).
pub fn upload<K: DeviceKey + DeviceRepr>(gpu: &Gpu, host: &[K], filler: K) -> CudaSlice<K> {
    let data: Vec<K> = if host.is_empty() {
        vec![filler]
    } else {
        host.to_vec()
    };
    gpu.stream().clone_htod(&data).expect("upload")
}

/// Key `i` of a fresh random sequence drawn by SplitMix64 from `seed`: independent per index,
/// so billions of keys are drawn in parallel without a serial generator.
pub fn splitmix_u32(seed: u64, i: usize) -> u32 {
    let mut z = seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

/// Run `merge(a, b, out)` on device copies of `a` and `b` with an output of `a.len() + b.len()`
/// keys poisoned first, and return the output: a key the merge forgot to write shows as poison.
pub fn device_merge<K: DeviceKey + DeviceRepr>(
    gpu: &Gpu,
    a: &[K],
    b: &[K],
    poison: K,
    merge: impl FnOnce(&CudaView<K>, &CudaView<K>, &mut CudaViewMut<K>),
) -> Vec<K> {
    let n = a.len() + b.len();
    let da = upload(gpu, a, poison);
    let db = upload(gpu, b, poison);
    let mut out = upload(gpu, &vec![poison; n], poison);
    merge(
        &da.slice(..a.len()),
        &db.slice(..b.len()),
        &mut out.slice_mut(..n),
    );
    let mut host = gpu.stream().clone_dtoh(&out).expect("download");
    host.truncate(n);
    host
}
