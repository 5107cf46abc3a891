//! The GPU handle: a cudarc context and stream, the compiled-kernel cache and host staging buffers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{sys as driver_sys, CudaContext, CudaFunction, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::error::GpuError;
use crate::program;

/// First architecture with programmatic dependent launch (griddepcontrol): Hopper, sm_90.
pub const PDL_MIN_ARCH: u32 = 90;

/// The kernels of one compiled program, by name.
pub(crate) struct Kernels {
    pub(crate) functions: HashMap<&'static str, CudaFunction>,
}

/// A handle over a cudarc context and stream. Calls run on that stream; the handle also keeps the
/// compiled kernels (per instantiation) and reusable device buffers for the host-slice calls.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: u32,
    kernels: Mutex<HashMap<String, Arc<Kernels>>>,
    /// Device buffers reused by the host-slice calls (`&[T]` in, `Vec<T>` out), grown on demand.
    pub(crate) staging: Mutex<Vec<CudaSlice<u8>>>,
    /// Whether the second kernel of a two-kernel primitive is launched as a programmatic dependent
    /// of the first (sm_90+), so that its launch overlaps the first kernel's tail.
    pub(crate) programmatic_launch: std::sync::atomic::AtomicBool,
    /// Merge scratch reused by the host-slice calls.
    pub(crate) merge_scratch: Mutex<crate::merge::MergeScratch>,
    /// Mergesort scratch reused by the host-slice calls.
    pub(crate) mergesort_scratch: Mutex<crate::mergesort::MergesortScratch>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .field("arch", &self.arch)
            .finish()
    }
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the candidate library names; no symbol is called.
    unsafe { driver_sys::is_culib_present() }
}

impl Gpu {
    /// A handle on device `ordinal`, with a new stream of its own (and cudarc's per-buffer event
    /// tracking off: one stream orders everything). Fails (without panicking) when no driver or no
    /// such device is present.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        if !driver_available() {
            return Err(GpuError::NoDriver);
        }
        let ctx = CudaContext::new(ordinal)?;
        // SAFETY: called before any buffer of this context object exists. Everything this handle
        // allocates and launches runs on its one stream, so stream order already serializes every
        // use; per-buffer event tracking would only add a cuEventRecord per buffer per call.
        // Users who fork more streams from `Gpu::context()` synchronize them themselves.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        Self::from_stream(stream)
    }

    /// A handle running on the user's own cudarc stream, so that twophase drops into existing
    /// cudarc code: buffers of that stream's context can be passed to the device calls directly.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Self, GpuError> {
        let ctx = stream.context().clone();
        let (major, minor) = ctx.compute_capability()?;
        let arch = u32::try_from(major * 10 + minor)
            .map_err(|_| GpuError::TooLarge(format!("compute capability {major}.{minor}")))?;
        Ok(Gpu {
            ctx,
            stream,
            arch,
            kernels: Mutex::new(HashMap::new()),
            staging: Mutex::new(Vec::new()),
            merge_scratch: Mutex::new(crate::merge::MergeScratch::new()),
            mergesort_scratch: Mutex::new(crate::mergesort::MergesortScratch::new()),
            programmatic_launch: std::sync::atomic::AtomicBool::new(arch >= PDL_MIN_ARCH),
        })
    }

    /// The first GPU, if this machine has a working one.
    pub fn first() -> Option<Self> {
        let count = if driver_available() {
            CudaContext::device_count().ok()?
        } else {
            0
        };
        if count > 0 {
            Gpu::new(0).ok()
        } else {
            None
        }
    }

    /// The cudarc context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every call of this handle runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Turn programmatic dependent launch on or off (on by default where the device has it,
    /// sm_90+; ignored on older devices). The results are the same either way.
    pub fn set_programmatic_launch(&self, on: bool) {
        self.programmatic_launch.store(
            on && self.arch >= PDL_MIN_ARCH,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Whether programmatic dependent launch is in use.
    pub fn programmatic_launch(&self) -> bool {
        self.programmatic_launch
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The device architecture as NVRTC names it (90 for sm_90).
    pub fn arch(&self) -> u32 {
        self.arch
    }

    /// The device's name.
    pub fn name(&self) -> Result<String, GpuError> {
        Ok(self.ctx.name()?)
    }

    /// Wait for all work queued on this handle's stream.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        Ok(self.stream.synchronize()?)
    }

    /// The kernels of the program `key` identifies, compiled from `source()` on first use (memory
    /// cache, then disk cache, then NVRTC) and loaded into this context.
    pub(crate) fn kernels(
        &self,
        key: &str,
        name: &str,
        source: impl FnOnce() -> String,
        entry_points: &[&'static str],
    ) -> Result<Arc<Kernels>, GpuError> {
        let mut cache = self
            .kernels
            .lock()
            .map_err(|_| GpuError::Poisoned("kernel cache"))?;
        if let Some(kernels) = cache.get(key) {
            return Ok(kernels.clone());
        }
        let cubin = program::compile_cached(&source(), name, self.arch)?;
        let module = self.ctx.load_module(Ptx::from_binary(cubin))?;
        let mut functions = HashMap::new();
        for &entry in entry_points {
            functions.insert(entry, module.load_function(entry)?);
        }
        let kernels = Arc::new(Kernels { functions });
        cache.insert(key.to_owned(), kernels.clone());
        Ok(kernels)
    }

    /// Grow the device scratch buffer in `slot` to at least `len` elements (a buffer only grows,
    /// so repeated calls of the same or smaller size allocate nothing) and return it.
    pub(crate) fn grow_scratch<'s, T: cudarc::driver::DeviceRepr>(
        &self,
        slot: &'s mut Option<CudaSlice<T>>,
        len: usize,
    ) -> Result<&'s mut CudaSlice<T>, GpuError> {
        if slot.as_ref().is_none_or(|buf| buf.len() < len) {
            *slot = None;
            // SAFETY: scratch is never read before a kernel of the same call has written the
            // part it reads (same stream, launched first); its old contents are never used.
            *slot = Some(unsafe { self.stream.alloc::<T>(len.max(1)) }?);
        }
        slot.as_mut().ok_or(GpuError::Poisoned("scratch"))
    }
}
