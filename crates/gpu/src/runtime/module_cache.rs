//! Compiled programs: the disk cache of cubins (checksummed, private, written atomically) and each handle's loaded kernels.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{sys as driver_sys, CudaFunction};

use super::fault::{lock_recover, ContextHealth};
use super::nvrtc::{compile_cubin, nvrtc_options, nvrtc_version};
use crate::error::GpuError;

/// The hasher of a handle's program map ([`ProgramMap`]): eight bytes a step, where std's SipHash
/// takes about a byte a cycle. Every sort, merge and search looks its program up by a key of a few
/// hundred bytes (the comparator's CUDA among them) before its first launch, so the lookup is part
/// of a small call's latency. The keys are built by the library, not chosen to collide.
#[derive(Default)]
pub(crate) struct ProgramKeyHasher(u64);

/// The multiplier of [`ProgramKeyHasher`]'s steps (odd, bits spread: the one FxHash uses).
const PROGRAM_KEY_MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;
/// The rotation of [`ProgramKeyHasher`]'s steps.
const PROGRAM_KEY_ROTATION: u32 = 5;

impl ProgramKeyHasher {
    fn add(&mut self, word: u64) {
        self.0 =
            (self.0.rotate_left(PROGRAM_KEY_ROTATION) ^ word).wrapping_mul(PROGRAM_KEY_MULTIPLIER);
    }
}

impl std::hash::Hasher for ProgramKeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut le = [0u8; 8];
            le.copy_from_slice(word);
            self.add(u64::from_le_bytes(le));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut le = [0u8; 8];
            le[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(le));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A handle's loaded programs by their key ([`program_id`](super::program::program_id)).
pub(crate) type ProgramMap =
    HashMap<String, Arc<Kernels>, std::hash::BuildHasherDefault<ProgramKeyHasher>>;

/// The kernels of one compiled program, by name.
pub(crate) struct Kernels {
    pub(crate) functions: HashMap<&'static str, CudaFunction>,
    /// The health of the context the program is loaded in: a program of a lost context is leaked,
    /// not unloaded, when dropped (its module handle may be invalid after a reset).
    pub(crate) health: Arc<ContextHealth>,
    /// Dynamic shared memory each kernel has been allowed past the default 48 KiB (set once per
    /// loaded kernel, not on every launch).
    pub(crate) dynamic_shared: Mutex<HashMap<&'static str, usize>>,
}

impl Kernels {
    /// The kernel `entry` of this program (every entry asked for at load time is there).
    pub(crate) fn function(&self, entry: &str) -> Result<&CudaFunction, GpuError> {
        self.functions.get(entry).ok_or_else(|| GpuError::Nvrtc {
            call: "cuModuleGetFunction",
            message: format!("{entry} missing"),
        })
    }

    /// The functions of `entries`, in order (the error names the first one missing).
    pub(crate) fn functions<const N: usize>(
        &self,
        entries: [&str; N],
    ) -> Result<[&CudaFunction; N], GpuError> {
        for entry in entries {
            self.function(entry)?;
        }
        // Every entry was just found, so indexing cannot fail.
        Ok(entries.map(|entry| &self.functions[entry]))
    }

    /// Let kernel `entry` launch with `bytes` of dynamic shared memory, and return that size as
    /// the launch takes it: past the default `default_max` bytes it must opt in
    /// (`MAX_DYNAMIC_SHARED_SIZE_BYTES`), up to the device's `device_max`. The attribute is set
    /// once per kernel and size, then remembered.
    pub(crate) fn allow_dynamic_shared(
        &self,
        entry: &'static str,
        bytes: usize,
        default_max: usize,
        device_max: usize,
    ) -> Result<u32, GpuError> {
        let too_large = || GpuError::TooLarge(format!("{bytes} bytes of shared memory"));
        let launch_bytes = u32::try_from(bytes).map_err(|_| too_large())?;
        if bytes <= default_max {
            return Ok(launch_bytes);
        }
        if bytes > device_max {
            return Err(GpuError::InvalidTuning(format!(
                "{entry} needs {bytes} bytes of shared memory; this device allows {device_max}"
            )));
        }
        let mut allowed = lock_recover(&self.dynamic_shared);
        if allowed.get(entry).is_some_and(|&b| b >= bytes) {
            return Ok(launch_bytes);
        }
        let bytes_attr = i32::try_from(bytes).map_err(|_| too_large())?;
        self.function(entry)?.set_attribute(
            driver_sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes_attr,
        )?;
        allowed.insert(entry, bytes);
        Ok(launch_bytes)
    }
}

impl Drop for Kernels {
    fn drop(&mut self) {
        if self.health.loss().is_some() {
            std::mem::forget(std::mem::take(&mut self.functions));
        }
    }
}

/// Environment variable overriding the on-disk cache folder; set it to an empty string to disable
/// the disk cache.
pub const CACHE_DIR_ENV: &str = "TWOPHASE_CACHE_DIR";

/// A 128-bit FNV-1a hash (two 64-bit lanes with different offset bases): stable across processes
/// and Rust versions, unlike `DefaultHasher`, so it can name files of the disk cache.
pub fn stable_hash(parts: &[&[u8]]) -> u128 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    const BASIS_LO: u64 = 0xcbf2_9ce4_8422_2325;
    const BASIS_HI: u64 = 0x6c62_272e_07bb_0142;
    let (mut lo, mut hi) = (BASIS_LO, BASIS_HI);
    for part in parts {
        for &byte in part.iter().chain((part.len() as u64).to_le_bytes().iter()) {
            lo = (lo ^ u64::from(byte)).wrapping_mul(PRIME);
            hi = (hi ^ u64::from(byte.rotate_left(3))).wrapping_mul(PRIME);
        }
    }
    (u128::from(hi) << 64) | u128::from(lo)
}

/// The on-disk cache folder: `$TWOPHASE_CACHE_DIR`, else `$XDG_CACHE_HOME/twophase`, else
/// `$HOME/.cache/twophase`; `None` when disabled or no home is known.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV) {
        return if dir.is_empty() {
            None
        } else {
            Some(PathBuf::from(dir))
        };
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(xdg).join("twophase"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("twophase"))
}

/// Magic bytes opening every cubin file of the disk cache (format version included).
const CACHE_MAGIC: &[u8; 8] = b"TPCUBIN1";

/// Bytes of a cache file's header: the magic, the cubin's length (u64, little-endian) and its
/// [`stable_hash`] (u128, little-endian).
const CACHE_HEADER_BYTES: usize = 8 + 8 + 16;

/// A cache entry's bytes: the header, then the cubin.
fn cache_entry(cubin: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(CACHE_HEADER_BYTES + cubin.len());
    entry.extend_from_slice(CACHE_MAGIC);
    entry.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    entry.extend_from_slice(&stable_hash(&[cubin]).to_le_bytes());
    entry.extend_from_slice(cubin);
    entry
}

/// The cubin in `entry` if its header is intact and its length and checksum match.
fn verified_cubin(entry: &[u8]) -> Option<&[u8]> {
    let (header, cubin) = entry.split_at_checked(CACHE_HEADER_BYTES)?;
    let (magic, rest) = header.split_at(CACHE_MAGIC.len());
    let (length, hash) = rest.split_at(8);
    let length = u64::from_le_bytes(length.try_into().ok()?);
    let hash = u128::from_le_bytes(hash.try_into().ok()?);
    let intact = magic == CACHE_MAGIC
        && u64::try_from(cubin.len()).is_ok_and(|len| len == length)
        && !cubin.is_empty()
        && stable_hash(&[cubin]) == hash;
    intact.then_some(cubin)
}

/// The cubin cached at `path`, if the file is there and intact. A file that is there but
/// truncated or corrupt is deleted (it would otherwise be read again every time), so that the
/// program is recompiled and cached afresh.
pub fn read_cache_entry(path: &Path) -> Option<Vec<u8>> {
    let entry = std::fs::read(path).ok()?;
    match verified_cubin(&entry) {
        Some(cubin) => Some(cubin.to_vec()),
        None => {
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// Counter making the temporary names of one process unique.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name next to `path`, unique to this process (its id) and to this call (a counter).
fn temp_path(path: &Path) -> PathBuf {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let count = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{file}.{}.{count}.tmp", std::process::id()))
}

/// Cache `cubin` at `path` (in a folder from [`private_cache_dir`]): written to a temporary file
/// created exclusively (never through a file someone else put there) under a name unique to this
/// process and call, then renamed into place, so that readers never see a partial file.
pub fn write_cache_entry(path: &Path, cubin: &[u8]) -> std::io::Result<()> {
    let temp = temp_path(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, CACHE_FILE_MODE);
    let written = options
        .open(&temp)
        .and_then(|mut file| file.write_all(&cache_entry(cubin)))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Permissions of the cache folder: its user's only.
#[cfg(unix)]
const CACHE_DIR_MODE: u32 = 0o700;

/// Permissions of a cache file: its user's only.
#[cfg(unix)]
const CACHE_FILE_MODE: u32 = 0o600;

/// Permission bits letting the group or others write into a folder.
#[cfg(unix)]
const GROUP_OR_WORLD_WRITE: u32 = 0o022;

/// `dir`, created private to this user (mode 0700, parents included) when missing, if it can be
/// trusted as a cache: a folder owned by this user that neither its group nor others can write
/// into. `None` (no disk cache, no error) otherwise: a cubin planted by someone else would be
/// loaded and run on the GPU. An existing folder is never re-permissioned (it may be shared on
/// purpose, like `/tmp`): it is used or not.
pub fn private_cache_dir(dir: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(CACHE_DIR_MODE)
            .create(dir);
        let meta = std::fs::metadata(dir).ok()?;
        is_private_cache_dir(&meta).then(|| dir.to_path_buf())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).ok()?;
        Some(dir.to_path_buf())
    }
}

/// Whether a folder with metadata `meta` can be trusted as a cache ([`private_cache_dir`]): a
/// folder owned by this user that neither its group nor others can write into (on Unix; any
/// folder elsewhere).
pub fn is_private_cache_dir(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: getuid has no preconditions and cannot fail.
        let user = unsafe { libc::getuid() };
        meta.is_dir() && meta.uid() == user && meta.mode() & GROUP_OR_WORLD_WRITE == 0
    }
    #[cfg(not(unix))]
    {
        meta.is_dir()
    }
}

/// Compile through the disk cache: a cubin compiled before (same source, options, NVRTC version
/// and architecture) is read back instead of recompiled. Each file carries a checksum: a
/// truncated or corrupt one is deleted and the program recompiled. Cache failures are ignored
/// (the cache is an optimization), and a cache folder that is not private to this user is not
/// used ([`private_cache_dir`]).
pub fn compile_cached(source: &str, name: &str, arch: u32) -> Result<Vec<u8>, GpuError> {
    let (major, minor) = nvrtc_version()?;
    let options = nvrtc_options(arch).join(" ");
    let version = format!("nvrtc {major}.{minor}");
    let arch_text = arch.to_string();
    let hash = stable_hash(&[
        source.as_bytes(),
        options.as_bytes(),
        version.as_bytes(),
        arch_text.as_bytes(),
    ]);
    let path = cache_dir()
        .and_then(|dir| private_cache_dir(&dir))
        .map(|dir| dir.join(format!("{name}-{hash:032x}.cubin")));
    if let Some(cubin) = path.as_deref().and_then(read_cache_entry) {
        return Ok(cubin);
    }
    let cubin = compile_cubin(source, name, arch)?;
    if let Some(path) = &path {
        let _ = write_cache_entry(path, &cubin);
    }
    Ok(cubin)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder, unique to this test and process.
    fn scratch_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "twophase-program-test-{test}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_intact_cache_entry_reads_back() {
        let dir = private_cache_dir(&scratch_dir("intact")).expect("private folder");
        let path = dir.join("probe.cubin");
        let cubin: Vec<u8> = (0..=255u8).cycle().take(4099).collect();
        write_cache_entry(&path, &cubin).expect("write");
        assert_eq!(read_cache_entry(&path).as_deref(), Some(&cubin[..]));
        // A second write replaces the first in place.
        write_cache_entry(&path, &cubin[..100]).expect("rewrite");
        assert_eq!(read_cache_entry(&path).as_deref(), Some(&cubin[..100]));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .filter(|name| name.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_truncated_or_corrupt_cache_entry_is_deleted() {
        let dir = private_cache_dir(&scratch_dir("corrupt")).expect("private folder");
        let path = dir.join("probe.cubin");
        let cubin = vec![7u8; 1000];
        let entry = cache_entry(&cubin);
        let mut flipped = entry.clone();
        flipped[CACHE_HEADER_BYTES + 500] ^= 1;
        let mut bad_magic = entry.clone();
        bad_magic[0] = b'X';
        let broken: [(&str, &[u8]); 6] = [
            ("truncated cubin", &entry[..entry.len() - 1]),
            ("truncated header", &entry[..CACHE_HEADER_BYTES - 1]),
            ("empty file", &[]),
            ("flipped bit", &flipped),
            ("wrong magic", &bad_magic),
            ("unverified raw cubin", &cubin),
        ];
        for (what, bytes) in broken {
            std::fs::write(&path, bytes).expect("plant");
            assert_eq!(read_cache_entry(&path), None, "{what} was accepted");
            assert!(!path.exists(), "{what} was not deleted");
        }
        let mut longer = entry.clone();
        longer.push(0);
        assert!(verified_cubin(&longer).is_none(), "trailing bytes accepted");
        assert_eq!(verified_cubin(&entry), Some(&cubin[..]));
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn temporary_names_are_unique_per_process_and_call() {
        let path = Path::new("/cache/probe.cubin");
        let first = temp_path(path);
        let second = temp_path(path);
        assert_ne!(first, second);
        let pid = std::process::id().to_string();
        for temp in [&first, &second] {
            let name = temp
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            assert!(name.starts_with(".probe.cubin."), "{name}");
            assert!(name.contains(&format!(".{pid}.")), "{name}");
            assert_eq!(temp.parent(), path.parent());
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_cache_folder_is_private_and_shared_folders_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = scratch_dir("private");
        let nested = root.join("a").join("twophase");
        let dir = private_cache_dir(&nested).expect("created");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.join("a")), 0o700);
        // A folder others can write into is not used, and not re-permissioned.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert_eq!(private_cache_dir(&dir), None);
        assert_eq!(mode(&dir), 0o777);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).expect("chmod");
        assert_eq!(private_cache_dir(&dir), None);
        // Readable by others is no risk to what is loaded from it.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(private_cache_dir(&dir), Some(dir.clone()));
        // Not a folder.
        let file = root.join("file");
        std::fs::write(&file, b"x").expect("file");
        assert_eq!(private_cache_dir(&file), None);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[cfg(unix)]
    #[test]
    fn a_temporary_file_is_never_opened_if_it_exists() {
        // Exclusive creation: a planted file (or link) at the temporary name makes the write fail
        // instead of writing through it.
        let dir = private_cache_dir(&scratch_dir("exclusive")).expect("private folder");
        let path = dir.join("probe.cubin");
        let next = TEMP_COUNTER.load(Ordering::Relaxed);
        // Plant files at the next few names this process would use.
        let planted: Vec<PathBuf> = (next..next + 64)
            .map(|count| {
                let name = format!(".probe.cubin.{}.{count}.tmp", std::process::id());
                let planted = dir.join(name);
                std::fs::write(&planted, b"planted").expect("plant");
                planted
            })
            .collect();
        let result = write_cache_entry(&path, b"cubin");
        assert!(result.is_err(), "wrote through a planted temporary file");
        assert!(!path.exists());
        for file in &planted {
            if file.exists() {
                assert_eq!(std::fs::read(file).expect("read"), b"planted");
            }
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
