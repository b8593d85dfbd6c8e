//! The loaded kernels of a backend, each with its name so that launch failures can say which one
//! failed, and the one launch path every operation goes through.
use super::context::CudaBackend;
use super::cuda_error;
use super::jit::{self, KernelSource, BLOCK_SIZE};
use crate::Result;
use cudarc::driver::{CudaFunction, CudaModule, DriverError, LaunchConfig};
use std::sync::{Arc, OnceLock};

/// A kernel entry point and its name.
#[derive(Clone)]
pub(crate) struct Kernel {
    pub name: &'static str,
    pub func: CudaFunction,
    /// Its threads-per-block limit (registers), asked of the driver once ([`Kernel::max_threads`]).
    max_threads: OnceLock<usize>,
}

/// Every entry point of the three sources, resolved once when the backend opens.
pub(crate) struct Kernels {
    pub fill: Kernel,
    pub scale: Kernel,
    pub axpy: Kernel,
    pub axpby: Kernel,
    pub pointwise_mult: Kernel,
    pub dot_partials: Kernel,
    pub cg_update_partials: Kernel,
    pub sum_partials: Kernel,
    /// The many-vector kernels in the shapes of [`MultiKernel::ALL`](super::multi::MultiKernel::ALL).
    pub dots_partials: [Kernel; 4],
    pub sum_partials_many: Kernel,
    pub add_combination: [Kernel; 4],
    pub triad: Kernel,
    /// The two fused kernels of the device-resident Jacobi-PCG ([`super::pcg`]).
    pub pcg_update: Kernel,
    pub pcg_direction: Kernel,
    /// CSR-vector SpMV with 4, 8, 16, 32 threads per row (see [`SPMV_GROUPS`]).
    pub spmv: [Kernel; 4],
    /// `y_k = M_k x_k` for blocks of size 1, 2, 3.
    pub block_jacobi: [Kernel; 3],
    /// In-place inversion of blocks of size 1, 2, 3.
    pub block_invert: [Kernel; 3],
    /// Diagonals of blocks of size 1, 2, 3.
    pub block_diagonal: [Kernel; 3],
    pub csr_diagonal: Kernel,
    /// Node blocks of a CSR matrix for blocks of size 1, 2, 3.
    pub csr_node_blocks: [Kernel; 3],
    pub csr_eliminate: Kernel,
}

impl Kernel {
    /// The entry point `name` of a loaded module.
    pub fn from_module(m: &Arc<CudaModule>, name: &'static str) -> Result<Kernel> {
        let func = m
            .load_function(name)
            .map_err(|e| cuda_error(format!("kernel `{name}` not found in its module: {e}")))?;
        Ok(Kernel { name, func, max_threads: OnceLock::new() })
    }

    /// The most threads a block of this kernel can have (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`:
    /// fewer than 1024 where its registers do not allow more), read from the driver on the first
    /// call only: launches that size their blocks by it ask every time.
    pub fn max_threads(&self) -> Result<usize> {
        if let Some(&m) = self.max_threads.get() {
            return Ok(m);
        }
        let m = self
            .func
            .get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(|e| cuda_error(format!("threads per block of {}: {e}", self.name)))?;
        Ok(*self.max_threads.get_or_init(|| usize::try_from(m).unwrap_or(0)))
    }

    /// Bytes of static (`__shared__`) memory the function declares, read from the driver: counts
    /// by hand have missed some (the H200 refused a limit of 232 168 B, round 18).
    pub fn static_shared(&self) -> Result<usize> {
        let b = self
            .func
            .get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .map_err(|e| cuda_error(format!("static shared memory of {}: {e}", self.name)))?;
        Ok(b.max(0) as usize)
    }

    /// Allows a block `bytes` of dynamic shared memory (needed above the default 48 KiB). The limit
    /// belongs to the function, so every launch of it from the same module shares it.
    pub fn allow_dynamic_shared(&self, bytes: usize) -> Result<()> {
        let v = i32::try_from(bytes).map_err(|_| crate::Error::invalid(format!("{bytes} bytes of shared memory for {}", self.name)))?;
        self.func
            .set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v)
            .map_err(|e| cuda_error(format!("cannot allow {bytes} bytes of dynamic shared memory for {}: {e}", self.name)))
    }

    /// Allows the most dynamic shared memory a block of this function can have — the device's
    /// opt-in maximum `optin` ([`DeviceInfo::shared_optin`](super::DeviceInfo::shared_optin)) less its static
    /// memory — and returns it. Kernels shared by several systems set this one value, so that no
    /// system lowers the limit another one relies on.
    pub fn allow_most_dynamic_shared(&self, optin: usize) -> Result<usize> {
        let most = optin.saturating_sub(self.static_shared()?);
        self.allow_dynamic_shared(most)?;
        Ok(most)
    }
}

/// Threads per row of the SpMV variants, in the order of [`Kernels::spmv`].
pub(crate) const SPMV_GROUPS: [u32; 4] = [4, 8, 16, 32];

impl Kernels {
    /// Resolves every entry point, getting each source's module from `module`.
    pub fn load(
        mut module: impl FnMut(&KernelSource) -> Result<Arc<CudaModule>>,
    ) -> Result<Kernels> {
        let vector = module(&jit::VECTOR)?;
        let spmv = module(&jit::SPMV)?;
        let bj = module(&jit::BLOCK_JACOBI)?;
        let get = Kernel::from_module;
        Ok(Kernels {
            fill: get(&vector, "vec_fill")?,
            scale: get(&vector, "vec_scale")?,
            axpy: get(&vector, "vec_axpy")?,
            axpby: get(&vector, "vec_axpby")?,
            pointwise_mult: get(&vector, "vec_pointwise_mult")?,
            dot_partials: get(&vector, "vec_dot_partials")?,
            cg_update_partials: get(&vector, "vec_cg_update_partials")?,
            sum_partials: get(&vector, "vec_sum_partials")?,
            dots_partials: [
                get(&vector, "vec_dots_partials_s1")?,
                get(&vector, "vec_dots_partials_p1")?,
                get(&vector, "vec_dots_partials_p2")?,
                get(&vector, "vec_dots_partials_p4")?,
            ],
            sum_partials_many: get(&vector, "vec_sum_partials_many")?,
            add_combination: [
                get(&vector, "vec_add_combination_s1")?,
                get(&vector, "vec_add_combination_p1")?,
                get(&vector, "vec_add_combination_p2")?,
                get(&vector, "vec_add_combination_p4")?,
            ],
            triad: get(&vector, "vec_triad")?,
            pcg_update: get(&vector, "pcg_update")?,
            pcg_direction: get(&vector, "pcg_direction")?,
            spmv: [
                get(&spmv, "spmv_csr_g4")?,
                get(&spmv, "spmv_csr_g8")?,
                get(&spmv, "spmv_csr_g16")?,
                get(&spmv, "spmv_csr_g32")?,
            ],
            block_jacobi: [
                get(&bj, "block_jacobi_b1")?,
                get(&bj, "block_jacobi_b2")?,
                get(&bj, "block_jacobi_b3")?,
            ],
            block_invert: [get(&bj, "block_invert_b1")?, get(&bj, "block_invert_b2")?, get(&bj, "block_invert_b3")?],
            block_diagonal: [get(&bj, "block_diagonal_b1")?, get(&bj, "block_diagonal_b2")?, get(&bj, "block_diagonal_b3")?],
            csr_diagonal: get(&spmv, "csr_diagonal")?,
            csr_node_blocks: [get(&spmv, "csr_node_blocks_b1")?, get(&spmv, "csr_node_blocks_b2")?, get(&spmv, "csr_node_blocks_b3")?],
            csr_eliminate: get(&spmv, "csr_eliminate")?,
        })
    }
}

impl CudaBackend {
    /// Launch shape for a grid-stride kernel over `work` items (threads' worth of work): enough
    /// blocks to cover the work, at most what the GPU holds at once (every SM full, no tail wave).
    pub(crate) fn grid(&self, work: u64) -> LaunchConfig {
        let blocks = work
            .div_ceil(u64::from(BLOCK_SIZE))
            .clamp(1, u64::from(self.resident_blocks)) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK_SIZE, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Turns a launch result into an error naming the kernel; with `GALERKIN_CUDA_SYNC=1` also
    /// waits for the kernel so faults during execution are attributed to it too.
    pub(crate) fn check_launch(
        &self,
        kernel: &Kernel,
        launched: std::result::Result<(), DriverError>,
    ) -> Result<()> {
        launched
            .map_err(|e| cuda_error(format!("launch of kernel `{}` failed: {e}", kernel.name)))?;
        if self.sync_each_launch {
            self.stream.synchronize().map_err(|e| {
                cuda_error(format!(
                    "kernel `{}` failed while running: {e}",
                    kernel.name
                ))
            })?;
        }
        Ok(())
    }
}

/// Launches `$kernel` on the backend's stream (or, `@on stream, …`, on another stream of its context) with the given arguments (references to device
/// buffers or to plain values, in the kernel's parameter order) and checks the result.
macro_rules! launch {
    // On `stream`, another stream of the backend's context (work that overlaps the backend's).
    (@on $stream:expr, $backend:expr, $kernel:expr, $cfg:expr; $($arg:expr),+ $(,)?) => {{
        use cudarc::driver::PushKernelArg as _;
        let stream: &cudarc::driver::CudaStream = $stream;
        let backend: &$crate::backend::cuda::context::CudaBackend = $backend;
        let kernel: &$crate::backend::cuda::kernels::Kernel = $kernel;
        let mut args = stream.launch_builder(&kernel.func);
        $( args.arg($arg); )+
        // SAFETY: each call site passes arguments matching the kernel's C signature, with device
        // buffers of this backend whose lengths it checked against the sizes it passes.
        let launched = unsafe { args.launch($cfg) }.map(|_| ());
        backend.check_launch(kernel, launched)
    }};
    ($backend:expr, $kernel:expr, $cfg:expr; $($arg:expr),+ $(,)?) => {{
        let backend: &$crate::backend::cuda::context::CudaBackend = $backend;
        $crate::backend::cuda::kernels::launch!(@on &backend.stream, backend, $kernel, $cfg; $($arg),+)
    }};
}
pub(crate) use launch;
