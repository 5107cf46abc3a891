//! The GPU handle: a cudarc context and stream, the compiled-kernel cache and host staging buffers.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{
    sys as driver_sys, CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtrMut,
};
use cudarc::nvrtc::Ptx;

use crate::error::GpuError;
use crate::fault::{self, lock_recover, ContextHealth};
use crate::key::{DeviceKey, DeviceValue};
use crate::program::{self, ValueLayout};

/// First architecture with programmatic dependent launch (griddepcontrol): Hopper, sm_90.
pub const PDL_MIN_ARCH: u32 = 90;

/// The kernels of one compiled program, by name.
pub(crate) struct Kernels {
    functions: HashMap<&'static str, CudaFunction>,
    /// The health of the context the program is loaded in: a program of a lost context is leaked,
    /// not unloaded, when dropped (its module handle may be invalid after a reset).
    health: Arc<ContextHealth>,
    /// Dynamic shared memory each kernel has been allowed past the default 48 KiB (set once per
    /// loaded kernel, not on every launch).
    dynamic_shared: Mutex<HashMap<&'static str, usize>>,
}

impl Kernels {
    /// The kernel `entry` of this program (every entry asked for at load time is there).
    pub(crate) fn function(&self, entry: &str) -> Result<&CudaFunction, GpuError> {
        self.functions.get(entry).ok_or_else(|| GpuError::Nvrtc {
            call: "cuModuleGetFunction",
            message: format!("{entry} missing"),
        })
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

/// One raw kernel parameter for [`Gpu::launch_raw`]: a pointer to its value, which the driver
/// reads (and copies) during the launch, so the value must outlive that call.
pub(crate) fn kernel_param<T>(value: &T) -> *mut c_void {
    (value as *const T).cast_mut().cast()
}

/// A handle over a cudarc context and stream. Calls run on that stream; the handle also keeps the
/// compiled kernels (per instantiation) and reusable device buffers for the host-slice calls.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Whether the context is lost, shared with every handle on it.
    health: Arc<ContextHealth>,
    /// `entry (program)` of every kernel loaded by this handle, by its driver function handle, to
    /// name the kernel that lost the context.
    kernel_names: Mutex<HashMap<usize, String>>,
    /// The driver function handle of the last kernel launched.
    last_launch: AtomicUsize,
    arch: u32,
    /// Streaming multiprocessors of the device.
    multiprocessors: u32,
    /// The device's `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`, in bytes.
    max_shared_optin: usize,
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
    /// Search (load-balancing and sorted) scratch reused by the host-slice calls.
    pub(crate) search_scratch: Mutex<crate::search::SearchScratch>,
    /// Batcher's sort scratch reused by the host-slice calls.
    pub(crate) batcher_scratch: Mutex<crate::batcher::BatcherScratch>,
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
        Ok(Gpu {
            ctx,
            stream,
            health,
            kernel_names: Mutex::new(HashMap::new()),
            last_launch: AtomicUsize::new(0),
            arch,
            multiprocessors,
            max_shared_optin,
            kernels: Mutex::new(HashMap::new()),
            staging: Mutex::new(Vec::new()),
            merge_scratch: Mutex::new(crate::merge::MergeScratch::new()),
            mergesort_scratch: Mutex::new(crate::mergesort::MergesortScratch::new()),
            search_scratch: Mutex::new(crate::search::SearchScratch::new()),
            batcher_scratch: Mutex::new(crate::batcher::BatcherScratch::new()),
            programmatic_launch: std::sync::atomic::AtomicBool::new(arch >= PDL_MIN_ARCH),
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
    fn after_last_launch(&self, what: &str) -> String {
        match self.last_kernel() {
            Some(kernel) => format!("{what} after launching {kernel}"),
            None => what.to_owned(),
        }
    }

    /// The last kernel launched on this handle, as `` `entry` (program) ``.
    fn last_kernel(&self) -> Option<String> {
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

    /// The device's streaming multiprocessors (SMs).
    pub fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    /// The most shared memory one block may use after opting in (the device's
    /// `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
    pub fn max_shared_per_block_optin(&self) -> usize {
        self.max_shared_optin
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
        let cubin = program::compile_cached(&source(), name, self.arch)?;
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

    /// Fault a kernel on purpose (a store through a null pointer), losing this handle's context:
    /// for tests of the recovery from a sticky error. Returns the [`GpuError::ContextLost`] that
    /// the launch or the synchronization saw.
    #[doc(hidden)]
    pub fn fault_for_test(&self) -> Result<(), GpuError> {
        let kernels = self.kernels(
            FAULT_PROGRAM,
            FAULT_PROGRAM,
            || FAULT_SOURCE.to_owned(),
            &[FAULT_ENTRY],
        )?;
        let function = kernels.function(FAULT_ENTRY)?;
        // SAFETY: the kernel takes no parameters. Its store through a null device pointer is
        // caught by the device as an illegal address, a sticky error of this context: no host
        // memory and no other context is touched.
        unsafe { self.launch_raw(function, 1, 1, &mut [], false) }?;
        self.synchronize()
    }

    /// Launch `function` with raw parameters (each a [`kernel_param`] pointer to its value), as a
    /// programmatic dependent of the previous launch
    /// on this stream when `dependent` and programmatic launch is on.
    ///
    /// # Safety
    /// `params` must point at values matching the kernel's parameters in number, order and size,
    /// alive for the call; the buffers they address must be valid on this stream for what the
    /// kernel does with them.
    pub(crate) unsafe fn launch_raw(
        &self,
        function: &CudaFunction,
        grid: u32,
        threads: u32,
        params: &mut [*mut c_void],
        dependent: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: forwarded; no dynamic shared memory.
        unsafe { self.launch_raw_shared(function, grid, threads, 0, params, dependent) }
    }

    /// [`launch_raw`](Self::launch_raw) with `shared_bytes` of dynamic shared memory (past 48 KiB
    /// the kernel must have opted in, [`Kernels::allow_dynamic_shared`]).
    ///
    /// # Safety
    /// As for [`launch_raw`](Self::launch_raw).
    pub(crate) unsafe fn launch_raw_shared(
        &self,
        function: &CudaFunction,
        grid: u32,
        threads: u32,
        shared_bytes: u32,
        params: &mut [*mut c_void],
        dependent: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: an all-zero launch attribute value is valid plain data (a union of integers and
        // plain structs); only the field selected by `id` is then set.
        let mut value: driver_sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
        value.programmaticStreamSerializationAllowed = 1;
        let mut attribute = driver_sys::CUlaunchAttribute {
            id: driver_sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value,
        };
        self.ensure_alive()?;
        let pdl = dependent && self.programmatic_launch();
        let config = driver_sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shared_bytes,
            hStream: self.stream().cu_stream(),
            attrs: &mut attribute,
            numAttrs: u32::from(pdl),
        };
        self.last_launch
            .store(function_id(function), Ordering::Relaxed);
        let launched = self.context().bind_to_thread().and_then(|()| {
            // SAFETY: the caller guarantees `params`; `config` and `attribute` outlive the call
            // (the driver copies the parameters); the function belongs to this context and the
            // stream to this handle. A dependent tile kernel waits (griddepcontrol.wait) for the
            // partition kernel before reading the partitions.
            unsafe {
                driver_sys::cuLaunchKernelEx(
                    &config,
                    function.cu_function(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result()
        });
        self.observe(launched.map_err(GpuError::from), || {
            let kernel = self.last_kernel().unwrap_or_else(|| "a kernel".to_owned());
            format!("launching {kernel}")
        })
    }

    /// Grow the device scratch buffer in `slot` to at least `len` elements (a buffer only grows,
    /// so repeated calls of the same or smaller size allocate nothing) and return it.
    pub(crate) fn grow_scratch<'s, T: cudarc::driver::DeviceRepr>(
        &self,
        slot: &'s mut Option<CudaSlice<T>>,
        len: usize,
    ) -> Result<&'s mut CudaSlice<T>, GpuError> {
        self.ensure_alive()?;
        if slot.as_ref().is_none_or(|buf| buf.len() < len) {
            *slot = None;
            // SAFETY: scratch is never read before a kernel of the same call has written the
            // part it reads (same stream, launched first); its old contents are never used.
            let allocated = unsafe { self.stream.alloc::<T>(len.max(1)) };
            *slot = Some(self.observe(allocated.map_err(GpuError::from), || {
                self.after_last_launch("allocating scratch")
            })?);
        }
        slot.as_mut().ok_or(GpuError::Poisoned("scratch"))
    }

    /// The first `sizes.len()` staging buffers, each grown to at least its size in bytes.
    fn staging_buffers<'s>(
        &self,
        staging: &'s mut Vec<CudaSlice<u8>>,
        sizes: &[usize],
    ) -> Result<&'s mut [CudaSlice<u8>], GpuError> {
        for (slot, &bytes) in sizes.iter().enumerate() {
            let fits = staging.get(slot).is_some_and(|buf| buf.len() >= bytes);
            if fits {
                continue;
            }
            // SAFETY: staging buffers are written (host-to-device copy or kernel output) before
            // they are read.
            let allocated = unsafe { self.stream().alloc::<u8>(bytes.max(1)) };
            let buf = self.observe(allocated.map_err(GpuError::from), || {
                self.after_last_launch("allocating staging buffers")
            })?;
            if slot < staging.len() {
                staging[slot] = buf;
            } else {
                staging.push(buf);
            }
        }
        Ok(&mut staging[..sizes.len()])
    }

    /// One host-slice call through the handle's staging buffers: uploads each buffer's host bytes,
    /// runs `launch` with the device addresses of all N buffers (in order), downloads the
    /// buffers that have a host destination, and waits for the stream. The buffers are reused
    /// across calls (they only grow), so a loop of host calls allocates nothing.
    pub(crate) fn through_staging<const N: usize>(
        &self,
        buffers: &mut [Staged<'_>; N],
        launch: impl FnOnce([u64; N]) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        self.ensure_alive()?;
        let mut staging = lock_recover(&self.staging);
        let sizes = buffers.each_ref().map(Staged::bytes);
        let bufs = self.staging_buffers(&mut staging, &sizes)?;
        let stream = self.stream.clone();
        for (buffer, device) in buffers.iter().zip(bufs.iter_mut()) {
            let host: &[u8] = match buffer {
                Staged::Upload(host) => host,
                Staged::InPlace(host) => host,
                Staged::Download(_) => continue,
            };
            let copied = stream.memcpy_htod(host, &mut device.slice_mut(..host.len()));
            self.observe(copied.map_err(GpuError::from), || {
                self.after_last_launch("copying the input to the device")
            })?;
        }
        let mut addresses = [0u64; N];
        for (address, device) in addresses.iter_mut().zip(bufs.iter_mut()) {
            *address = device.device_ptr_mut(&stream).0;
        }
        self.observe(launch(addresses), || {
            self.after_last_launch("a host-slice call")
        })?;
        for (buffer, device) in buffers.iter_mut().zip(bufs.iter()) {
            if let Staged::Download(host) | Staged::InPlace(host) = buffer {
                let bytes = host.len();
                let copied = stream.memcpy_dtoh(&device.slice(..bytes), &mut **host);
                self.observe(copied.map_err(GpuError::from), || {
                    self.after_last_launch("copying the result to the host")
                })?;
            }
        }
        self.observe(stream.synchronize().map_err(GpuError::from), || {
            self.after_last_launch("synchronizing a host-slice call")
        })
    }
}

/// The driver handle of `function`, as a number: names it in [`Gpu::after_last_launch`].
fn function_id(function: &CudaFunction) -> usize {
    function.cu_function() as usize
}

/// Name (and cache key) of the program [`Gpu::fault_for_test`] runs.
const FAULT_PROGRAM: &str = "twophase_fault_for_test.cu";
/// Entry point of that program.
const FAULT_ENTRY: &str = "twophase_fault_for_test";
/// That program: one store through a null pointer.
const FAULT_SOURCE: &str =
    "extern \"C\" __global__ void twophase_fault_for_test() {\n  *(volatile int*)0 = 1;\n}\n";

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
        leak(&mut self.kernels, HashMap::new());
        leak(&mut self.merge_scratch, crate::merge::MergeScratch::new());
        leak(
            &mut self.mergesort_scratch,
            crate::mergesort::MergesortScratch::new(),
        );
        leak(
            &mut self.search_scratch,
            crate::search::SearchScratch::new(),
        );
        leak(
            &mut self.batcher_scratch,
            crate::batcher::BatcherScratch::new(),
        );
        std::mem::forget(self.stream.clone());
        std::mem::forget(self.ctx.clone());
    }
}

/// Raw device addresses of one in-place sort: `count` keys at `keys`, and values at `values`
/// when `layout` is `Some` (0 otherwise).
pub(crate) struct SortBuffers {
    pub(crate) keys: u64,
    pub(crate) values: u64,
    pub(crate) count: usize,
    pub(crate) layout: ValueLayout,
}

impl Gpu {
    /// One in-place host-slice sort (of any sort variant) through the staging buffers, holding
    /// `scratch` throughout (`_what` names it; a poisoned lock is recovered): uploads the keys
    /// (and values), runs `launch` with their device addresses, downloads them. Fewer than two
    /// keys: nothing to do.
    pub(crate) fn sort_host<K: DeviceKey, V: DeviceValue, S>(
        &self,
        keys: &mut [K],
        values: Option<&mut [V]>,
        scratch: &Mutex<S>,
        _what: &'static str,
        launch: impl FnOnce(SortBuffers, &mut S) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let count = keys.len();
        if count <= 1 {
            return Ok(());
        }
        let mut scratch = lock_recover(scratch);
        let layout = values
            .is_some()
            .then_some((std::mem::size_of::<V>(), std::mem::align_of::<V>()));
        let mut staged = [
            Staged::InPlace(bytemuck::cast_slice_mut(keys)),
            match values {
                Some(values) => Staged::InPlace(bytemuck::cast_slice_mut(values)),
                None => Staged::Upload(&[]),
            },
        ];
        self.through_staging(&mut staged, |[keys, values]| {
            let values = if layout.is_some() { values } else { 0 };
            let buffers = SortBuffers {
                keys,
                values,
                count,
                layout,
            };
            launch(buffers, &mut scratch)
        })
    }
}

/// One staging buffer of a host-slice call and what happens to its host bytes.
pub(crate) enum Staged<'a> {
    /// An input: uploaded before the launch.
    Upload(&'a [u8]),
    /// An output: downloaded after the launch.
    Download(&'a mut [u8]),
    /// Both, for an in-place call: uploaded before and downloaded after the launch.
    InPlace(&'a mut [u8]),
}

impl Staged<'_> {
    fn bytes(&self) -> usize {
        match self {
            Staged::Upload(host) => host.len(),
            Staged::Download(host) | Staged::InPlace(host) => host.len(),
        }
    }
}
