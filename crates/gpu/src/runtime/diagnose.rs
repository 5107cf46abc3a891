//! What this machine offers the GPU backend, each part with the reason it is missing: the driver, NVRTC, the devices, the kernel cache.
//!
//! [`diagnose`] asks each layer in turn without stopping at the first failure, so that a report
//! can say everything that is wrong at once: a driver without NVRTC, NVRTC without a driver, a
//! driver older than the NVRTC that compiles the kernels. Nothing here changes the machine: the
//! kernel cache folder is inspected, never created.

use std::path::{Path, PathBuf};

use cudarc::driver::CudaContext;

use super::device::{driver_version, Gpu};
use super::module_cache::{cache_dir, is_private_cache_dir, CACHE_DIR_ENV};
use super::nvrtc::nvrtc_version;
use crate::error::GpuError;

/// A driver version as the driver reports it (`major * 1000 + minor * 10`): 13000 is CUDA 13.0.
const DRIVER_VERSION_MAJOR: i32 = 1000;
/// The minor part's scale in a driver version: 12040 is CUDA 12.4.
const DRIVER_VERSION_MINOR: i32 = 10;

/// The CUDA driver library: its CUDA version and the file the process loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverInfo {
    /// The newest CUDA version the driver supports, as (major, minor).
    pub cuda_version: (i32, i32),
    /// The file the library was loaded from (read from the process's memory map; `None` where
    /// the platform does not tell).
    pub path: Option<PathBuf>,
}

/// The NVRTC library: its version and the file the process loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvrtcInfo {
    /// NVRTC's version, as (major, minor).
    pub version: (i32, i32),
    /// The file the library was loaded from (`None` where the platform does not tell).
    pub path: Option<PathBuf>,
}

/// One device, as a handle on it sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's ordinal (0 is the device the crate-root calls use).
    pub ordinal: usize,
    /// The device's name.
    pub name: String,
    /// Its architecture as NVRTC names it (90 for sm_90).
    pub arch: u32,
    /// Its streaming multiprocessors.
    pub multiprocessors: u32,
    /// Its memory, in bytes.
    pub total_memory: usize,
    /// Its memory free when asked, in bytes.
    pub free_memory: usize,
}

/// Whether the kernel cache folder ([`cache_dir`]) is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheState {
    /// `TWOPHASE_CACHE_DIR` is set to an empty string: every program is compiled anew.
    Disabled,
    /// No folder can be named (no `TWOPHASE_CACHE_DIR`, `XDG_CACHE_HOME` or `HOME`).
    NoFolder,
    /// The folder does not exist yet: the first compilation creates it, private to this user.
    NotCreated,
    /// The folder exists and is private to this user: compiled programs are kept there.
    Used,
    /// The folder exists but is not a folder owned by this user that nobody else can write
    /// into: it is not used, since a cubin planted there would run on the GPU.
    NotPrivate,
}

/// The kernel cache: its folder, whether it is used, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheInfo {
    /// The folder (`None` when disabled or unnamed).
    pub dir: Option<PathBuf>,
    /// Whether it is used.
    pub state: CacheState,
    /// Cached programs (`.cubin` files) in it.
    pub programs: usize,
    /// Bytes of every file in it.
    pub bytes: u64,
}

/// What [`diagnose`] found: each part, or the error that stopped it.
#[derive(Debug)]
pub struct Diagnosis {
    /// The driver library, or [`GpuError::NoDriver`].
    pub driver: Result<DriverInfo, GpuError>,
    /// NVRTC, or [`GpuError::NoNvrtc`] (or the error of its version call).
    pub nvrtc: Result<NvrtcInfo, GpuError>,
    /// Every device, each opened or the error opening it; `Err` when the driver is missing or
    /// cannot list its devices ([`GpuError::NoDevice`] with the driver's error).
    pub devices: Result<Vec<Result<DeviceInfo, GpuError>>, GpuError>,
    /// The kernel cache.
    pub cache: CacheInfo,
}

impl Diagnosis {
    /// Why the GPU backend cannot run a kernel here, in order of the steps a call takes (driver,
    /// device 0, NVRTC, driver version against NVRTC's), each with what to do about it; empty
    /// when every part is present.
    pub fn blockers(&self) -> Vec<Blocker> {
        let mut blockers = Vec::new();
        match &self.driver {
            Err(error) => blockers.push(Blocker::new(error, DRIVER_ADVICE)),
            Ok(_) => match &self.devices {
                Err(error) => blockers.push(Blocker::new(error, DEVICE_ADVICE)),
                Ok(devices) => match devices.first() {
                    None => blockers.push(Blocker {
                        reason: "the CUDA driver sees no device".into(),
                        advice: DEVICE_ADVICE,
                    }),
                    Some(Err(error)) => blockers.push(Blocker::new(error, CONTEXT_ADVICE)),
                    Some(Ok(_)) => {}
                },
            },
        }
        match &self.nvrtc {
            Err(error) => blockers.push(Blocker::new(error, NVRTC_ADVICE)),
            Ok(nvrtc) => {
                if let Ok(driver) = &self.driver {
                    if driver.cuda_version.0 < nvrtc.version.0 {
                        blockers.push(Blocker {
                            reason: format!(
                                "the driver supports CUDA {}.{}, older than NVRTC {}.{}, whose \
                                 kernels it may refuse to load",
                                driver.cuda_version.0,
                                driver.cuda_version.1,
                                nvrtc.version.0,
                                nvrtc.version.1
                            ),
                            advice: DRIVER_VERSION_ADVICE,
                        });
                    }
                }
            }
        }
        blockers
    }
}

/// One reason the GPU backend cannot run here, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocker {
    /// What is wrong, in the runtime's words.
    pub reason: String,
    /// What to do about it.
    pub advice: &'static str,
}

impl Blocker {
    fn new(error: &GpuError, advice: &'static str) -> Self {
        Blocker {
            reason: error.to_string(),
            advice,
        }
    }
}

/// What to do without a driver library.
pub const DRIVER_ADVICE: &str = "install the NVIDIA driver (it provides libcuda.so.1); in a \
     container, start it with the GPUs exposed (e.g. `docker run --gpus all`)";
/// What to do when the driver lists no usable device.
pub const DEVICE_ADVICE: &str = "check that `nvidia-smi` lists the GPU, that CUDA_VISIBLE_DEVICES \
     does not hide it, and that the driver's kernel module is loaded";
/// What to do when device 0 cannot be opened.
pub const CONTEXT_ADVICE: &str = "the device exists but no context could be made on it: check \
     `nvidia-smi` for another process holding it in exclusive mode, or a device in error";
/// What to do without NVRTC.
pub const NVRTC_ADVICE: &str = "install NVRTC for CUDA 13 (the CUDA toolkit, or `python3 -m pip \
     install nvidia-cuda-nvrtc==13.0.*`) and add the folder holding libnvrtc.so.13 to \
     LD_LIBRARY_PATH";
/// What to do when the driver is older than NVRTC.
pub const DRIVER_VERSION_ADVICE: &str = "update the NVIDIA driver to one for CUDA 13 or newer, or \
     put an NVRTC no newer than the driver first on LD_LIBRARY_PATH";

/// Look at the driver, NVRTC, every device and the kernel cache. Opens a handle on each device
/// (a context and a stream, released on return); compiles nothing.
pub fn diagnose() -> Diagnosis {
    let driver = driver_info();
    let devices = match &driver {
        Err(_) => Err(GpuError::NoDriver),
        Ok(_) => devices(),
    };
    Diagnosis {
        driver,
        nvrtc: nvrtc_info(),
        devices,
        cache: cache_info(),
    }
}

/// The driver's CUDA version and file, or [`GpuError::NoDriver`].
pub fn driver_info() -> Result<DriverInfo, GpuError> {
    let version = driver_version().ok_or(GpuError::NoDriver)?;
    Ok(DriverInfo {
        cuda_version: (
            version / DRIVER_VERSION_MAJOR,
            version % DRIVER_VERSION_MAJOR / DRIVER_VERSION_MINOR,
        ),
        path: loaded_library("libcuda"),
    })
}

/// NVRTC's version and file, or why it cannot be used.
pub fn nvrtc_info() -> Result<NvrtcInfo, GpuError> {
    let version = nvrtc_version()?;
    Ok(NvrtcInfo {
        version,
        path: loaded_library("libnvrtc"),
    })
}

/// The file names NVRTC is looked for under, in order, each once (the dynamic loader searches
/// LD_LIBRARY_PATH and the system's folders for each).
pub fn nvrtc_candidates() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in cudarc::get_lib_name_candidates("nvrtc") {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Every device the driver lists, each opened through a [`Gpu`] handle.
fn devices() -> Result<Vec<Result<DeviceInfo, GpuError>>, GpuError> {
    let count = CudaContext::device_count().map_err(|e| {
        GpuError::NoDevice(format!("the CUDA driver could not list its devices: {e}"))
    })?;
    let count = usize::try_from(count).unwrap_or(0);
    Ok((0..count).map(device_info).collect())
}

/// Device `ordinal` as a handle on it sees it.
pub fn device_info(ordinal: usize) -> Result<DeviceInfo, GpuError> {
    let gpu = Gpu::new(ordinal)?;
    let ctx = gpu.context();
    let (free_memory, total_memory) = ctx.mem_get_info()?;
    Ok(DeviceInfo {
        ordinal,
        name: gpu.name()?,
        arch: gpu.arch(),
        multiprocessors: gpu.multiprocessors(),
        total_memory,
        free_memory,
    })
}

/// The kernel cache folder and what it holds, without creating it.
pub fn cache_info() -> CacheInfo {
    let disabled = std::env::var_os(CACHE_DIR_ENV).is_some_and(|dir| dir.is_empty());
    let Some(dir) = cache_dir() else {
        let state = if disabled {
            CacheState::Disabled
        } else {
            CacheState::NoFolder
        };
        return CacheInfo {
            dir: None,
            state,
            programs: 0,
            bytes: 0,
        };
    };
    let state = match std::fs::metadata(&dir) {
        Err(_) => CacheState::NotCreated,
        Ok(meta) if is_private_cache_dir(&meta) => CacheState::Used,
        Ok(_) => CacheState::NotPrivate,
    };
    let (programs, bytes) = folder_contents(&dir);
    CacheInfo {
        dir: Some(dir),
        state,
        programs,
        bytes,
    }
}

/// The `.cubin` files in `dir` and the bytes of all its files (0 and 0 when it cannot be read).
fn folder_contents(dir: &Path) -> (usize, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    let mut programs = 0;
    let mut bytes = 0;
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        bytes += meta.len();
        if entry.path().extension().is_some_and(|ext| ext == "cubin") {
            programs += 1;
        }
    }
    (programs, bytes)
}

/// The file of a shared library this process has loaded whose file name starts with `stem`
/// followed by `.` or a digit (`libnvrtc.so.13`, `libnvrtc64_130_0.dll`; not
/// `libnvrtc-builtins.so`): read from `/proc/self/maps`, so Linux only.
pub fn loaded_library(stem: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    library_in_maps(&maps, stem)
}

/// [`loaded_library`] on the text of a memory map.
fn library_in_maps(maps: &str, stem: &str) -> Option<PathBuf> {
    maps.lines()
        .filter_map(|line| line.find('/').map(|start| Path::new(&line[start..])))
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_prefix(stem))
                .and_then(|rest| rest.chars().next())
                .is_some_and(|next| next == '.' || next.is_ascii_digit())
        })
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_is_found_in_a_memory_map_and_its_neighbours_are_not() {
        let maps = "\
7f00-7f01 r--p 00000000 08:01 1 /usr/lib/libnvrtc-builtins.so.13.0
7f01-7f02 r-xp 00000000 08:01 2 /opt/cuda/lib64/libnvrtc.so.13
7f02-7f03 r--p 00000000 08:01 3 /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06
7f03-7f04 rw-p 00000000 00:00 0 [heap]
";
        assert_eq!(
            library_in_maps(maps, "libnvrtc"),
            Some(PathBuf::from("/opt/cuda/lib64/libnvrtc.so.13"))
        );
        assert_eq!(
            library_in_maps(maps, "libcuda"),
            Some(PathBuf::from(
                "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06"
            ))
        );
        assert_eq!(library_in_maps(maps, "libnccl"), None);
    }

    #[test]
    fn a_missing_driver_is_one_blocker_with_advice() {
        let diagnosis = Diagnosis {
            driver: Err(GpuError::NoDriver),
            nvrtc: Ok(NvrtcInfo {
                version: (13, 0),
                path: None,
            }),
            devices: Err(GpuError::NoDriver),
            cache: cache_info(),
        };
        let blockers = diagnosis.blockers();
        assert_eq!(blockers.len(), 1);
        assert_eq!(blockers[0].advice, DRIVER_ADVICE);
        assert!(blockers[0].reason.contains("libcuda"), "{blockers:?}");
    }

    #[test]
    fn a_driver_older_than_nvrtc_is_a_blocker() {
        let device = DeviceInfo {
            ordinal: 0,
            name: "H100".into(),
            arch: 90,
            multiprocessors: 132,
            total_memory: 1 << 30,
            free_memory: 1 << 29,
        };
        let diagnosis = Diagnosis {
            driver: Ok(DriverInfo {
                cuda_version: (12, 4),
                path: None,
            }),
            nvrtc: Ok(NvrtcInfo {
                version: (13, 0),
                path: None,
            }),
            devices: Ok(vec![Ok(device)]),
            cache: cache_info(),
        };
        let blockers = diagnosis.blockers();
        assert_eq!(blockers.len(), 1);
        assert_eq!(blockers[0].advice, DRIVER_VERSION_ADVICE);
        assert!(blockers[0].reason.contains("CUDA 12.4"), "{blockers:?}");
    }
}
