//! The GPU handle: a cudarc context and stream, its health after a fault, and device attributes.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{sys as driver_sys, CudaContext, CudaFunction, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;

use super::fault::{self, lock_recover, ContextHealth};
use super::module_cache::{compile_cached, Kernels, ProgramMap};
use super::program;
use crate::error::GpuError;
use crate::runtime::shape::{valid_search_lanes, MAX_SEARCH_LANES};

/// First architecture with programmatic dependent launch (griddepcontrol): Hopper, sm_90.
pub const PDL_MIN_ARCH: u32 = 90;

/// A handle over a cudarc context and stream. Calls run on that stream; the handle also keeps the
/// compiled kernels (per instantiation) and reusable device buffers for the host-slice calls.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// Whether the context is lost, shared with every handle on it.
    pub(crate) health: Arc<ContextHealth>,
    /// `entry (program)` of every kernel loaded by this handle, by its driver function handle, to
    /// name the kernel that lost the context.
    pub(crate) kernel_names: Mutex<HashMap<usize, String>>,
    /// The driver function handle of the last kernel launched.
    pub(crate) last_launch: AtomicUsize,
    pub(crate) arch: u32,
    /// Streaming multiprocessors of the device.
    pub(crate) multiprocessors: u32,
    /// The device's `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`, in bytes.
    pub(crate) max_shared_optin: usize,
    /// The device memory's peak bandwidth in bytes a second (0 where the driver does not say).
    pub(crate) memory_bandwidth: u64,
    pub(crate) kernels: Mutex<ProgramMap>,
    /// Device buffers reused by the host-slice calls (`&[T]` in, `Vec<T>` out), grown on demand.
    pub(crate) staging: Mutex<Vec<CudaSlice<u8>>>,
    /// Whether the second kernel of a two-kernel primitive is launched as a programmatic dependent
    /// of the first (sm_90+), so that its launch overlaps the first kernel's tail.
    pub(crate) programmatic_launch: AtomicBool,
    /// Lanes per boundary search of the two-phase partition kernels, or 0 for the automatic
    /// choice ([`Gpu::set_partition_lanes`]).
    pub(crate) partition_lanes: AtomicU32,
    /// The host-slice calls' scratch, one value per scratch type ([`Gpu::with_pooled_scratch`]):
    /// the runtime holds them without knowing any primitive's type.
    pub(crate) scratch_pool: Mutex<HashMap<TypeId, Box<dyn Any + Send>>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .field("arch", &self.arch)
            .finish()
    }
}

/// Whether `cudarc`'s driver symbol table is usable (kept for diagnostics).
pub fn driver_version() -> Option<i32> {
    if !driver_available() {
        return None;
    }
    let mut version = 0;
    // SAFETY: the driver library is present (checked above); `version` is valid for writes.
    let status = unsafe { driver_sys::cuDriverGetVersion(&mut version) };
    status.result().ok().map(|()| version)
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
    ///
    /// When a handle of this process saw the device's primary context lost
    /// ([`GpuError::ContextLost`]), the context is reset first, so that the new handle works; where
    /// the driver refuses that after the sticky error, the new handle gets a context of its own;
    /// where it refuses that too, the error is [`GpuError::DeviceLostForProcess`]: only a new
    /// process can use the device.
    /// Buffers, streams and modules made directly with cudarc on the lost context must not be
    /// used or dropped after that (leak them with `std::mem::forget`); twophase's own handles leak
    /// theirs.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        if !driver_available() {
            return Err(GpuError::NoDriver);
        }
        // The device's primary context (reset first if a sticky error lost it). Where the driver
        // still answers a step of opening it with a sticky error, this handle takes a context of
        // its own instead: a sticky error loses the context it happened in, not the device.
        let primary = fault::open_primary_health(ordinal)
            .map_err(GpuError::from)
            .and_then(|health| Self::on_context(CudaContext::new(ordinal)?, health));
        match primary {
            Err(error) if error.is_context_lost() => CudaContext::new_non_primary(ordinal, 0)
                .map_err(GpuError::from)
                .and_then(|ctx| Self::on_context(ctx, Arc::new(ContextHealth::default())))
                .map_err(|own| Self::lost_for_process(ordinal, own)),
            opened => opened,
        }
    }

    /// `error`, from opening a context of its own on device `ordinal` after its primary context
    /// was lost: where the driver refused it with a sticky error too, the device is lost for the
    /// process ([`GpuError::DeviceLostForProcess`], naming the call that lost it).
    fn lost_for_process(ordinal: usize, error: GpuError) -> GpuError {
        let refused = match &error {
            GpuError::ContextLost { cause, .. } => *cause,
            GpuError::Driver(cause) if fault::is_sticky(*cause) => *cause,
            _ => return error,
        };
        match fault::last_reset_loss(ordinal) {
            Some(loss) => GpuError::DeviceLostForProcess {
                call: loss.call,
                cause: loss.cause,
                refused,
            },
            None => error,
        }
    }

    /// A handle with a new stream of its own on `ctx`, whose health is `health`.
    fn on_context(ctx: Arc<CudaContext>, health: Arc<ContextHealth>) -> Result<Self, GpuError> {
        // SAFETY: called before any buffer of this context object exists. Everything this handle
        // allocates and launches runs on its one stream, so stream order already serializes every
        // use; per-buffer event tracking would only add a cuEventRecord per buffer per call.
        // Users who fork more streams from `Gpu::context()` synchronize them themselves.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        Self::with_health(stream, health)
    }

    /// A handle running on the user's own cudarc stream, so that twophase drops into existing
    /// cudarc code: buffers of that stream's context can be passed to the device calls directly.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Self, GpuError> {
        let ctx = stream.context();
        let health = if ctx.is_primary() {
            fault::primary_health(ctx.ordinal())
        } else {
            Arc::new(ContextHealth::default())
        };
        Self::with_health(stream, health)
    }

    /// A handle on `stream`, whose context's health is `health`.
    fn with_health(stream: Arc<CudaStream>, health: Arc<ContextHealth>) -> Result<Self, GpuError> {
        let ctx = stream.context().clone();
        let (major, minor) = ctx.compute_capability()?;
        let arch = u32::try_from(major * 10 + minor)
            .map_err(|_| GpuError::TooLarge(format!("compute capability {major}.{minor}")))?;
        // A device attribute as a non-negative count (`what` names it in the error).
        let count = |attribute, what: &str| -> Result<u32, GpuError> {
            let value = ctx.attribute(attribute)?;
            u32::try_from(value).map_err(|_| GpuError::TooLarge(format!("{what} {value}")))
        };
        let multiprocessors = count(
            driver_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "multiprocessors",
        )?;
        let max_shared_optin = count(
            driver_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            "shared memory per block",
        )? as usize;
        let memory_bandwidth = peak_memory_bandwidth(&ctx);
        Ok(Gpu {
            ctx,
            stream,
            health,
            kernel_names: Mutex::new(HashMap::new()),
            last_launch: AtomicUsize::new(0),
            arch,
            multiprocessors,
            max_shared_optin,
            memory_bandwidth,
            kernels: Mutex::new(ProgramMap::default()),
            staging: Mutex::new(Vec::new()),
            scratch_pool: Mutex::new(HashMap::new()),
            programmatic_launch: AtomicBool::new(arch >= PDL_MIN_ARCH),
            partition_lanes: AtomicU32::new(0),
        })
    }

    /// A handle on the first GPU, or why this machine has no working one: no driver library
    /// ([`GpuError::NoDriver`]), no device or a driver that fails to start
    /// ([`GpuError::NoDevice`], with the driver's error), or the error opening device 0.
    pub fn first() -> Result<Self, GpuError> {
        if !driver_available() {
            return Err(GpuError::NoDriver);
        }
        let count = CudaContext::device_count().map_err(|e| {
            GpuError::NoDevice(format!("the CUDA driver could not list its devices: {e}"))
        })?;
        if count <= 0 {
            return Err(GpuError::NoDevice("the CUDA driver sees no device".into()));
        }
        Gpu::new(0)
    }

    /// Whether this handle's context is lost ([`GpuError::ContextLost`]): every call on it fails.
    /// A new handle ([`Gpu::new`]) works again.
    pub fn is_lost(&self) -> bool {
        self.health.loss().is_some()
    }

    /// `Ok` while the context works; the loss otherwise, without touching the device.
    pub(crate) fn ensure_alive(&self) -> Result<(), GpuError> {
        match self.health.loss() {
            None => Ok(()),
            Some(loss) => Err(GpuError::ContextLost {
                call: loss.call.clone(),
                cause: loss.cause,
            }),
        }
    }

    /// `result`, where a sticky error becomes this context's loss by `call` (the first call to
    /// see it is the one every later error names). Every driver step of the handle's own
    /// synchronizing paths goes through here.
    pub(crate) fn observe<T>(
        &self,
        result: Result<T, GpuError>,
        call: impl FnOnce() -> String,
    ) -> Result<T, GpuError> {
        let error = match result {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let cause = match error {
            GpuError::ContextLost { cause, .. } => cause,
            GpuError::Driver(cause) if fault::is_sticky(cause) => cause,
            other => return Err(other),
        };
        let loss = self.health.mark_lost(call(), cause);
        Err(GpuError::ContextLost {
            call: loss.call.clone(),
            cause: loss.cause,
        })
    }

    /// `what`, followed by the last kernel launched on this handle, to name the call that saw a
    /// fault (faults of a kernel surface at the next synchronizing call).
    pub(crate) fn after_last_launch(&self, what: &str) -> String {
        match self.last_kernel() {
            Some(kernel) => format!("{what} after launching {kernel}"),
            None => what.to_owned(),
        }
    }

    /// The last kernel launched on this handle, as `` `entry` (program) ``.
    pub(crate) fn last_kernel(&self) -> Option<String> {
        let function = self.last_launch.load(Ordering::Relaxed);
        if function == 0 {
            return None;
        }
        let names = lock_recover(&self.kernel_names);
        Some(
            names
                .get(&function)
                .cloned()
                .unwrap_or_else(|| "a kernel".to_owned()),
        )
    }

    /// Remember `function` as the last kernel launched on this handle (named by later errors).
    pub(crate) fn note_launch(&self, function: &CudaFunction) {
        self.last_launch
            .store(function_id(function), Ordering::Relaxed);
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
        self.programmatic_launch
            .store(on && self.arch >= PDL_MIN_ARCH, Ordering::Relaxed);
    }

    /// Whether programmatic dependent launch is in use.
    pub fn programmatic_launch(&self) -> bool {
        self.programmatic_launch.load(Ordering::Relaxed)
    }

    /// Fix the lanes that search each boundary of the merge's, the load-balancing search's and
    /// the sorted search's partition kernels (a power of two up to 32), or `None` for the
    /// automatic choice by the number of boundaries (the default). For tuning sweeps: the results
    /// are the same either way.
    pub fn set_partition_lanes(&self, lanes: Option<u32>) -> Result<(), GpuError> {
        let lanes = lanes.unwrap_or(0);
        if !valid_search_lanes(lanes) {
            return Err(GpuError::InvalidInput(format!(
                "partition lanes = {lanes} must be a power of two up to {MAX_SEARCH_LANES}"
            )));
        }
        self.partition_lanes.store(lanes, Ordering::Relaxed);
        Ok(())
    }

    /// The lanes fixed by [`Gpu::set_partition_lanes`], if any.
    pub(crate) fn partition_lanes_override(&self) -> Option<u32> {
        Some(self.partition_lanes.load(Ordering::Relaxed)).filter(|&lanes| lanes != 0)
    }

    /// The device architecture as NVRTC names it (90 for sm_90).
    pub fn arch(&self) -> u32 {
        self.arch
    }

    /// The device's streaming multiprocessors (SMs).
    pub fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    /// The most shared memory one block may use after opting in (the device's
    /// `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
    pub fn max_shared_per_block_optin(&self) -> usize {
        self.max_shared_optin
    }

    /// The device memory's peak bandwidth, bytes a second: two transfers a clock of the memory
    /// clock over the global memory bus. 0 where the driver reports neither.
    pub fn memory_bandwidth(&self) -> u64 {
        self.memory_bandwidth
    }

    /// The device's name.
    pub fn name(&self) -> Result<String, GpuError> {
        Ok(self.ctx.name()?)
    }

    /// Wait for all work queued on this handle's stream.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.ensure_alive()?;
        self.observe(self.stream.synchronize().map_err(GpuError::from), || {
            self.after_last_launch("`Gpu::synchronize`")
        })
    }
}

/// Data transfers per memory clock of the DRAM interfaces the driver describes (double data rate).
const TRANSFERS_PER_MEMORY_CLOCK: u64 = 2;
/// The driver reports the memory clock in kHz.
const HERTZ_PER_KILOHERTZ: u64 = 1000;

/// The device memory's peak bandwidth in bytes a second, from the driver's memory clock (kHz) and
/// bus width (bits); 0 where it reports either as missing, negative or zero. Only a tuning hint:
/// a driver without these attributes gets the tunings for any device.
fn peak_memory_bandwidth(ctx: &CudaContext) -> u64 {
    let reported = |attribute| {
        ctx.attribute(attribute)
            .ok()
            .and_then(|value| u64::try_from(value).ok())
    };
    let clock_khz = reported(driver_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    let bus_bits =
        reported(driver_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    match (clock_khz, bus_bits) {
        (Some(clock_khz), Some(bus_bits)) => clock_khz
            .saturating_mul(HERTZ_PER_KILOHERTZ)
            .saturating_mul(TRANSFERS_PER_MEMORY_CLOCK)
            .saturating_mul(bus_bits / u64::from(u8::BITS)),
        _ => 0,
    }
}

/// The driver handle of `function`, as a number: names it in [`Gpu::after_last_launch`].
pub(crate) fn function_id(function: &CudaFunction) -> usize {
    function.cu_function() as usize
}

impl Drop for Gpu {
    /// A handle of a lost context leaks what it holds in it instead of freeing it: after the
    /// context is reset ([`Gpu::new`]), its buffers, stream and modules are invalid handles, which
    /// the driver could confuse with those of the new context.
    fn drop(&mut self) {
        if self.health.loss().is_none() {
            return;
        }
        fn leak<T>(mutex: &mut Mutex<T>, empty: T) {
            let value = mutex.get_mut().unwrap_or_else(PoisonError::into_inner);
            std::mem::forget(std::mem::replace(value, empty));
        }
        leak(&mut self.staging, Vec::new());
        leak(&mut self.kernels, ProgramMap::default());
        leak(&mut self.scratch_pool, HashMap::new());
        std::mem::forget(self.stream.clone());
        std::mem::forget(self.ctx.clone());
    }
}

impl Gpu {
    /// The kernels of the program `key` identifies, compiled from `source()` on first use (memory
    /// cache, then disk cache, then NVRTC) and loaded into this context. A program whose key or
    /// values are zero-sized ([`program::program_id`] marks it) is refused with
    /// [`GpuError::InvalidInput`]. The cache lock is not held while compiling: two threads
    /// missing the same program may both compile it, and the first one stored is kept.
    pub(crate) fn kernels(
        &self,
        key: &str,
        name: &str,
        source: impl FnOnce() -> String,
        entry_points: &[&'static str],
    ) -> Result<Arc<Kernels>, GpuError> {
        self.ensure_alive()?;
        program::check_not_zero_sized(key)?;
        if let Some(kernels) = lock_recover(&self.kernels).get(key) {
            return Ok(kernels.clone());
        }
        let cubin = compile_cached(&source(), name, self.arch)?;
        let loading = || format!("loading program `{name}`");
        let module = self.observe(
            self.ctx
                .load_module(Ptx::from_binary(cubin))
                .map_err(GpuError::from),
            loading,
        )?;
        let mut functions = HashMap::new();
        let mut names = Vec::new();
        for &entry in entry_points {
            let function =
                self.observe(module.load_function(entry).map_err(GpuError::from), loading)?;
            names.push((function_id(&function), format!("`{entry}` ({name})")));
            functions.insert(entry, function);
        }
        lock_recover(&self.kernel_names).extend(names);
        let kernels = Arc::new(Kernels {
            functions,
            health: self.health.clone(),
            dynamic_shared: Mutex::new(HashMap::new()),
        });
        let mut cache = lock_recover(&self.kernels);
        Ok(cache.entry(key.to_owned()).or_insert(kernels).clone())
    }
}
