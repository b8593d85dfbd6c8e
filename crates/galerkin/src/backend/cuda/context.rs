//! Finding GPUs without ever panicking, and the [`CudaBackend`] that owns a device's context, stream
//! and loaded kernels.
use super::kernels::Kernels;
use super::{cuda_error, guard, jit, memory};
use crate::Result;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What [`probe`] reports about one GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    /// Bytes of device memory.
    pub total_memory: usize,
    /// Bytes free when probed.
    pub free_memory: usize,
    pub compute_capability: (u32, u32),
    pub multiprocessors: u32,
    /// The most shared memory a block may opt in to (`..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`:
    /// 227 KiB on sm_80/sm_90), static and dynamic together.
    pub shared_optin: usize,
}

/// True when `GALERKIN_REQUIRE_GPU=1`: tests then fail instead of skipping without a GPU, so a GPU
/// job cannot pass by silently testing nothing.
pub fn require_gpu() -> bool {
    std::env::var("GALERKIN_REQUIRE_GPU").is_ok_and(|v| v.trim() == "1")
}

/// Lists the CUDA devices, or says in words why there are none ("no CUDA driver (libcuda.so)
/// found", "no CUDA device", a driver error). Never panics, even without any CUDA library.
pub fn probe() -> std::result::Result<Vec<DeviceInfo>, String> {
    let count = device_count()?;
    (0..count)
        .map(|ordinal| device_info(&context(ordinal)?))
        .collect()
}

/// Number of devices; the first driver calls, so both guards sit here.
fn device_count() -> std::result::Result<usize, String> {
    // SAFETY: only tries to open the shared library.
    if !guard("loading the CUDA driver", || unsafe {
        cudarc::driver::sys::is_culib_present()
    })? {
        return Err("no CUDA driver (libcuda.so) found".to_string());
    }
    let count = guard("cuInit/cuDeviceGetCount", CudaContext::device_count)?
        .map_err(|e| format!("CUDA driver present but not usable: {e}"))?;
    match usize::try_from(count) {
        Ok(0) | Err(_) => Err("no CUDA device".to_string()),
        Ok(n) => Ok(n),
    }
}

/// The device's primary context, retained once per process and shared by every backend on it, so
/// modules loaded for one backend serve all.
fn context(ordinal: usize) -> std::result::Result<Arc<CudaContext>, String> {
    let mut map = contexts().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(ctx) = map.get(&ordinal) {
        return Ok(ctx.clone());
    }
    let ctx = guard("cuDevicePrimaryCtxRetain", || CudaContext::new(ordinal))?
        .map_err(|e| format!("cannot create a context on CUDA device {ordinal}: {e}"))?;
    // SAFETY: every backend on this context submits all its work to its own single stream and
    // refuses vectors of other backends (see `CudaBackend::owns`), so no buffer is ever shared
    // between streams and cudarc's per-buffer events would only add overhead.
    unsafe { ctx.disable_event_tracking() };
    map.insert(ordinal, ctx.clone());
    Ok(ctx)
}

/// The process's retained primary contexts, by device ordinal.
fn contexts() -> &'static Mutex<HashMap<usize, Arc<CudaContext>>> {
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    CONTEXTS.get_or_init(Default::default)
}

/// Modules loaded once per process: (ordinal, source file, defines) to module.
type Loaded = HashMap<(usize, &'static str, String), Arc<CudaModule>>;

fn modules() -> &'static Mutex<Loaded> {
    static MODULES: OnceLock<Mutex<Loaded>> = OnceLock::new();
    MODULES.get_or_init(Default::default)
}

/// Releases the loaded modules and every primary context that no backend, buffer or stream
/// still holds, so the driver tears the context down now (device memory, mappings: about 0.1 s
/// after a 10^7-unknown run) instead of at the process's exit, where no report can time it.
/// A command calls it in its timed teardown, once its backend is dropped. Contexts still in use
/// stay (their modules are loaded again on demand); a later backend retains a fresh context.
/// Returns how many contexts were released.
pub fn release_unused_contexts() -> usize {
    // Modules first: each holds its context.
    let loaded = std::mem::take(&mut *modules().lock().unwrap_or_else(|p| p.into_inner()));
    drop(loaded);
    let mut map = contexts().lock().unwrap_or_else(|p| p.into_inner());
    // Under the lock nobody can clone a context out of the map, so a count of one is final.
    let unused: Vec<usize> = map.iter().filter(|(_, c)| Arc::strong_count(c) == 1).map(|(&k, _)| k).collect();
    for k in &unused {
        if let Some(ctx) = map.remove(k) {
            drop(ctx);
        }
    }
    unused.len()
}

fn device_info(ctx: &Arc<CudaContext>) -> std::result::Result<DeviceInfo, String> {
    fn e(what: &str) -> impl Fn(cudarc::driver::DriverError) -> String + '_ {
        move |err| format!("querying {what} failed: {err}")
    }
    let attr = |a: Attr, what: &str| ctx.attribute(a).map(|v| v.max(0) as u32).map_err(e(what));
    let (free_memory, total_memory) = ctx.mem_get_info().map_err(e("memory"))?;
    Ok(DeviceInfo {
        ordinal: ctx.ordinal(),
        name: ctx.name().map_err(e("name"))?,
        total_memory,
        free_memory,
        compute_capability: (
            attr(
                Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                "compute capability",
            )?,
            attr(
                Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                "compute capability",
            )?,
        ),
        multiprocessors: attr(
            Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "multiprocessor count",
        )?,
        shared_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory")? as usize,
    })
}

/// One GPU as a [`Backend`](crate::backend::Backend): its context, one in-order stream, the compiled
/// kernels and a small scratch buffer for reductions. Cheap to share by reference across threads;
/// operations from several threads are serialized on the stream.
pub struct CudaBackend {
    /// cuSPARSE handle, created on first use; declared first so it is destroyed before the stream.
    pub(super) cusparse: Mutex<Option<super::cusparse::Handle>>,
    pub(super) info: DeviceInfo,
    pub(super) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) kernels: Kernels,
    /// Blocks of `BLOCK_SIZE` threads the whole GPU holds at once: the grid of grid-stride kernels.
    pub(super) resident_blocks: u32,
    /// Per-block partial sums of a reduction, then its result in the last slot. The lock also
    /// keeps two concurrent `dot`s from sharing it.
    pub(super) scratch: Mutex<CudaSlice<f64>>,
    /// The partial sums and results of [`super::multi`]'s reductions over several vectors, grown
    /// on demand.
    pub(super) multi_scratch: Mutex<Option<CudaSlice<f64>>>,
    /// The shape of GMRES's many-vector kernels: [`MultiShape::DEFAULT`](super::multi::MultiShape::DEFAULT),
    /// or `GALERKIN_MULTI_SHAPE` (e.g. `p2/16`) for a run that measures another.
    pub(super) multi_shape: super::multi::MultiShape,
    /// Synchronize and check after every launch (`GALERKIN_CUDA_SYNC=1`), so an asynchronous fault
    /// is reported with the name of the kernel that caused it.
    pub(super) sync_each_launch: bool,
    /// NVRTC target, `compute_XY` of this device.
    pub(super) arch: String,
    /// Device copies of the last mesh and dof map the kernels read ([`super::resident`]).
    pub(super) resident: Mutex<super::resident::Slot>,
}

impl CudaBackend {
    /// Opens device `ordinal`: context, stream, and every kernel compiled (or taken from the PTX
    /// cache) for its architecture. Errors name what is missing: driver, device, NVRTC, a kernel.
    pub fn new(ordinal: usize) -> Result<CudaBackend> {
        let count = device_count().map_err(cuda_error)?;
        if ordinal >= count {
            return Err(crate::Error::invalid(format!(
                "CUDA device {ordinal} does not exist ({count} device(s) found)"
            )));
        }
        jit::nvrtc_version().map_err(cuda_error)?;
        let ctx = context(ordinal).map_err(cuda_error)?;
        let info = device_info(&ctx).map_err(cuda_error)?;
        let stream = ctx
            .new_stream()
            .map_err(|e| cuda_error(format!("cannot create a stream: {e}")))?;
        let arch = format!(
            "compute_{}{}",
            info.compute_capability.0, info.compute_capability.1
        );
        let kernels = Kernels::load(|src| module(&ctx, ordinal, src, &[], &arch))?;
        let threads_per_sm = ctx
            .attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
            .map_err(|e| cuda_error(format!("querying threads per multiprocessor failed: {e}")))?;
        let per_sm = (threads_per_sm.max(0) as u32 / jit::BLOCK_SIZE).max(1);
        let resident_blocks = (info.multiprocessors.max(1) * per_sm).max(1);
        let sync_each_launch = std::env::var("GALERKIN_CUDA_SYNC").is_ok_and(|v| v.trim() == "1");
        let multi_shape = match std::env::var("GALERKIN_MULTI_SHAPE") {
            Ok(v) => super::multi::MultiShape::parse(&v).map_err(|e| crate::Error::invalid(format!("GALERKIN_MULTI_SHAPE: {e}")))?,
            Err(_) => super::multi::MultiShape::DEFAULT,
        };
        let scratch = Mutex::new(memory::alloc_on::<f64>(
            &ctx,
            &stream,
            resident_blocks as usize + 1,
        )?);
        Ok(CudaBackend {
            cusparse: Mutex::new(None),
            info,
            ctx,
            stream,
            kernels,
            resident_blocks,
            scratch,
            multi_scratch: Mutex::new(None),
            multi_shape,
            sync_each_launch,
            arch,
            resident: Default::default(),
        })
    }

    /// The module of one variant of `src` (compiled with `defines`), loaded once per process.
    pub(crate) fn variant_module(&self, src: &jit::KernelSource, defines: &[String]) -> Result<Arc<CudaModule>> {
        module(&self.ctx, self.info.ordinal, src, defines, &self.arch)
    }

    /// The device this backend runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    /// Waits until all work queued on this backend's stream has finished, reporting any fault.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| cuda_error(format!("stream synchronization failed: {e}")))?;
        self.ctx
            .check_err()
            .map_err(|e| cuda_error(format!("deferred CUDA error: {e}")))
    }

    /// True when `slice` was allocated on this backend's stream.
    pub(crate) fn owns<T>(&self, slice: &CudaSlice<T>) -> bool {
        Arc::ptr_eq(slice.stream(), &self.stream)
    }
}

/// Loads `src` into the context once per process and device; a PTX the driver rejects (say, a
/// stale or corrupt disk-cache entry) is recompiled once before giving up.
fn module(
    ctx: &Arc<CudaContext>,
    ordinal: usize,
    src: &jit::KernelSource,
    defines: &[String],
    arch: &str,
) -> Result<Arc<CudaModule>> {
    let mut map = modules().lock().unwrap_or_else(|p| p.into_inner());
    let key = (ordinal, src.file, defines.join(" "));
    if let Some(m) = map.get(&key) {
        return Ok(m.clone());
    }
    let _span = crate::trace::span(|| format!("module {} [{}]", src.file, defines.len()));
    let load = |fresh: bool| -> Result<Arc<CudaModule>> {
        let ptx = {
            let _s = crate::trace::span(|| format!("  ptx of {}", src.file));
            jit::ptx_for(src, defines, arch, fresh)?
        };
        ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx.to_string()))
            .map_err(|e| {
                cuda_error(format!(
                    "the driver rejected the PTX of {} for {arch}: {e}",
                    src.file
                ))
            })
    };
    let m = load(false).or_else(|_| load(true))?;
    map.insert(key, m.clone());
    Ok(m)
}

/// For tests and examples: the first usable GPU, or `None` after printing
/// "SKIPPED: no CUDA GPU: <reason>". Panics instead when GALERKIN_REQUIRE_GPU=1, so a GPU machine
/// cannot pass by skipping.
pub fn test_gpu() -> Option<CudaBackend> {
    let reason = match probe() {
        Ok(_) => match CudaBackend::new(0) {
            Ok(b) => return Some(b),
            Err(e) => e.to_string(),
        },
        Err(reason) => reason,
    };
    if require_gpu() {
        panic!("GALERKIN_REQUIRE_GPU=1 but no CUDA GPU is usable: {reason}");
    }
    eprintln!("SKIPPED: no CUDA GPU: {reason}");
    None
}
