//! What the command-line tests share: running the `twophase` binary, writing and reading .npy and raw fixtures, the key types with their reference orders.
#![allow(dead_code)] // Each test file uses part of it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use npyz::WriterBuilder;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The exit status of a run that failed on its input (or on anything but its arguments).
pub const EXIT_FAILURE: i32 = 1;

/// The binary under test, run in `dir` with `args`, on the CPU unless the arguments say
/// otherwise (`TWOPHASE_CACHE_DIR` empty: no kernel cache written by tests).
pub fn twophase(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twophase"))
        .args(args)
        .current_dir(dir)
        .env("TWOPHASE_CACHE_DIR", "")
        .output()
        .expect("the twophase binary runs")
}

/// `twophase` with `args`, which must succeed.
pub fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let output = twophase(dir, args);
    assert!(
        output.status.success(),
        "twophase {args:?} failed ({:?}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `twophase` with `args`, which must fail with exit status 1 and one line on stderr holding
/// `message`.
pub fn run_fails(dir: &Path, args: &[&str], message: &str) {
    let output = twophase(dir, args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(EXIT_FAILURE),
        "twophase {args:?}: {stderr}"
    );
    assert!(
        stderr.contains(message),
        "twophase {args:?}: expected `{message}` in: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "twophase {args:?}: not one line: {stderr}"
    );
    assert!(
        stderr.starts_with("twophase: "),
        "twophase {args:?}: {stderr}"
    );
}

/// The names of the files in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A fixed-seed generator, so that a failure can be reproduced.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A key type of the command, with its dtype names and its reference orders.
pub trait TestKey:
    npyz::AutoSerialize + npyz::Deserialize + bytemuck::Pod + std::fmt::Debug
{
    /// `--dtype`'s name.
    const NAME: &'static str;
    /// The little-endian NumPy type string.
    const DESCR: &'static str;
    /// `n` keys with many duplicates and, for floats, NaNs of both signs, infinities, zeros of
    /// both signs and subnormals.
    fn keys(n: usize, seed: u64) -> Vec<Self>;
    /// The IEEE total order for floats, `Ord` for integers.
    fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering;
    /// NumPy's order (the same as the total order for integers).
    fn numpy_cmp(a: &Self, b: &Self) -> std::cmp::Ordering;
    /// The bits, so that floats compare exactly.
    fn bits(&self) -> u64;
}

/// Distinct key values per thousand keys: about eight copies of each, so stability shows.
const DISTINCT_PER_THOUSAND: u64 = 125;

macro_rules! int_keys {
    ($($t:ty => $name:literal, $descr:literal;)*) => {$(
        impl TestKey for $t {
            const NAME: &'static str = $name;
            const DESCR: &'static str = $descr;
            fn keys(n: usize, seed: u64) -> Vec<Self> {
                let mut rng = rng(seed);
                let range = <$t>::MAX as u64;
                let distinct = (n as u64 * DISTINCT_PER_THOUSAND / 1000).clamp(2, range);
                let spread = (range / distinct).max(1);
                (0..n)
                    .map(|i| match i % 97 {
                        0 => <$t>::MIN,
                        1 => <$t>::MAX,
                        _ => {
                            let key = (rng.gen_range(0..distinct) * spread) as $t;
                            // Both signs for the signed types (large keys for the others).
                            if rng.gen::<bool>() { key.wrapping_neg() } else { key }
                        }
                    })
                    .collect()
            }
            fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
                a.cmp(b)
            }
            fn numpy_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
                a.cmp(b)
            }
            fn bits(&self) -> u64 {
                *self as u64
            }
        }
    )*};
}

int_keys! {
    u8 => "u8", "|u1";
    u16 => "u16", "<u2";
    u32 => "u32", "<u4";
    u64 => "u64", "<u8";
    i8 => "i8", "|i1";
    i16 => "i16", "<i2";
    i32 => "i32", "<i4";
    i64 => "i64", "<i8";
}

macro_rules! float_keys {
    ($($t:ty, $bits:ty => $name:literal, $descr:literal;)*) => {$(
        impl TestKey for $t {
            const NAME: &'static str = $name;
            const DESCR: &'static str = $descr;
            fn keys(n: usize, seed: u64) -> Vec<Self> {
                let mut rng = rng(seed);
                let distinct = (n as u64 * DISTINCT_PER_THOUSAND / 1000).max(2);
                let specials = [
                    <$t>::NAN,
                    -<$t>::NAN,
                    <$t>::from_bits(<$t>::NAN.to_bits() | 1),
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    <$t>::MIN_POSITIVE,
                    <$t>::from_bits(1),
                    -<$t>::from_bits(1),
                ];
                (0..n)
                    .map(|i| match i % 13 {
                        0 => specials[rng.gen_range(0..specials.len())],
                        _ => (rng.gen_range(0..distinct) as $t - distinct as $t / 2.0) / 4.0,
                    })
                    .collect()
            }
            fn total_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
                a.total_cmp(b)
            }
            fn numpy_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
                // NumPy's `a < b || (b != b && a == a)`, as an ordering.
                let less = |x: &$t, y: &$t| x < y || (y.is_nan() && !x.is_nan());
                if less(a, b) {
                    std::cmp::Ordering::Less
                } else if less(b, a) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            }
            fn bits(&self) -> u64 {
                self.to_bits() as u64
            }
        }
    )*};
}

float_keys! {
    f32, u32 => "f32", "<f4";
    f64, u64 => "f64", "<f8";
}

/// Write `data` to `path` as a 1-D .npy file of NumPy type string `descr` (any endianness).
pub fn write_npy<T: npyz::Serialize>(path: &Path, descr: &str, data: &[T]) {
    write_npy_shaped(path, descr, &[data.len() as u64], data);
}

/// Write `data` to `path` as a .npy file of `shape` (its product must be `data.len()`).
pub fn write_npy_shaped<T: npyz::Serialize>(path: &Path, descr: &str, shape: &[u64], data: &[T]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create the fixture"));
    let dtype = npyz::DType::Plain(descr.parse().expect("a NumPy type string"));
    let mut writer = npyz::WriteOptions::new()
        .dtype(dtype)
        .shape(shape)
        .writer(file)
        .begin_nd()
        .expect("begin the fixture");
    writer.extend(data.iter()).expect("write the fixture");
    writer.finish().expect("finish the fixture");
}

/// The 1-D .npy file at `path`: its NumPy type string and its elements.
pub fn read_npy<T: npyz::Deserialize>(path: &Path) -> (String, Vec<T>) {
    let file = std::fs::File::open(path).expect("open the output");
    let npy = npyz::NpyFile::new(std::io::BufReader::new(file)).expect("a .npy output");
    assert_eq!(npy.shape().len(), 1, "{} is not 1-D", path.display());
    let descr = npy.dtype().descr().trim_matches('\'').to_owned();
    (descr, npy.into_vec().expect("read the output"))
}

/// Write `data` raw, in this machine's byte order.
pub fn write_raw<T: bytemuck::Pod>(path: &Path, data: &[T]) {
    std::fs::write(path, bytemuck::cast_slice::<T, u8>(data)).expect("write the fixture");
}

/// The raw file at `path` as elements of `T`.
pub fn read_raw<T: bytemuck::Pod>(path: &Path) -> Vec<T> {
    let bytes = std::fs::read(path).expect("read the output");
    bytemuck::pod_collect_to_vec(&bytes)
}

/// `path` as a string argument.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// A fresh temporary folder.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// `dir` joined with `name`.
pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}
