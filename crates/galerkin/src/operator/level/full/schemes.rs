//! Element matrices integrated on the GPU by a chosen scheme ([`Integration`]), stored per cell, and
//! their summation into CSR values colour by colour or with atomics: the seed's study of element
//! integration on the GPU ("Forming matrices of finite element systems in GPGPU") on galerkin's
//! assembler. The kernels are `kernels/element_schemes.cu`, compiled per (element, quadrature,
//! physics) on first use; the stored layout is the `element` level's.
use super::cuda::{kernel_defines, tables, variant_of, CsrTarget, DeviceAssembler, Variant};
use crate::backend::cuda::jit::{self, ASSEMBLY, ELEMENT_SCHEMES};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::operator::level::{Integration, Scatter, Tuning};
use crate::operator::ElementIntegrator;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rayon::prelude::*;

/// The entry points of one scheme variant.
#[derive(Clone)]
pub(crate) struct SchemeKernels {
    per_cell: Kernel,
    per_point: Kernel,
    tiled: Kernel,
    scatter: Kernel,
    fma: Kernel,
    dmma: Kernel,
}

/// What the physics allows: all schemes write mirrored blocks (symmetric physics); the tiled one
/// reads gradient moments only, with coefficients constant per cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SchemeSupport {
    pub symmetric: bool,
    pub value_term: bool,
    pub per_cell: bool,
}

/// Largest quadrature the thread-per-point scheme takes (one block of threads).
pub const MAX_POINTS_PER_BLOCK: usize = 1024;

/// Dynamic shared memory a block may take (H100: 227 KB).
const MAX_SHARED_BYTES: usize = 227 * 1024;

/// Tiles (8 × 8 node pairs, nine moments each: 36 accumulators) a warp of the tiled scheme holds,
/// and warps per block: 118 registers, no spills (ptxas, sm_90). Swept on the H100 at p = 3…5
/// (tiles per warp, warps): (3, 12) 11.4 ms, (2, 16) 11.0, (3, 16) 14.2, (2, 24) 18.8, (1, 32)
/// 11.3 at p = 5 — more tiles per warp spill, more warps lower the registers per thread.
const TILES_PER_WARP: usize = 2;
const MAX_WARPS: usize = 16;

/// Launch shape of the tiled scheme for `v`: (threads per block, points staged per pass, dynamic
/// shared-memory bytes). Warps: the 8 × 8 tiles on or above the diagonal, TILES_PER_WARP per warp,
/// at most MAX_WARPS (further tiles take further rounds: two at p = 5 trunk). Points per pass: as
/// many multiples of 4 as fit in about 96 KB after the per-point J⁻¹ and weights, 4 to 32 (160 and
/// 220 KB were no faster on the H100: the registers hold one block per SM either way). Mirrors
/// `element_schemes.cu`.
pub(crate) fn tiled_shape(v: &Variant) -> (usize, usize, usize) {
    let n8 = v.nloc.div_ceil(8);
    let tiles = n8 * (n8 + 1) / 2;
    let warps = tiles.div_ceil(TILES_PER_WARP).clamp(1, MAX_WARPS);
    let stride = if n8 % 2 == 1 { n8 * 8 } else { n8 * 8 + 8 };
    let jq = v.nq * (v.dim * v.dim + 1) * 8;
    let per_q = 2 * v.dim * stride * 8;
    let qcp = ((96 * 1024usize).saturating_sub(jq) / per_q / 4 * 4).clamp(4, 32).min(v.nq.div_ceil(4) * 4);
    (32 * warps, qcp, jq + qcp * per_q)
}

/// The defines of the schemes' variant of assembly variant `v`.
pub(crate) fn scheme_defines(v: &Variant) -> Vec<String> {
    let (threads, qcp, _) = tiled_shape(v);
    vec![
        format!("TILED_WARPS={}", threads / 32),
        format!("TPR={TILES_PER_WARP}"),
        format!("QCP={qcp}"),
        format!("DIM={}", v.dim),
        format!("NV={}", v.nv),
        format!("NLOC={}", v.nloc),
        format!("NQ={}", v.nq),
        format!("NCOMP={}", v.ncomp),
        format!("QF={}", v.qf),
    ]
}

fn load(be: &CudaBackend, asm: &DeviceAssembler) -> Result<SchemeKernels> {
    let module = be.variant_module(&ELEMENT_SCHEMES, &scheme_defines(&asm.variant))?;
    let k = |name| Kernel::from_module(&module, name);
    let (_, _, smem) = tiled_shape(&asm.variant);
    let tiled = k("matrices_tiled")?;
    if smem > 48 * 1024 && smem <= MAX_SHARED_BYTES {
        tiled
            .func
            .set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
            .map_err(|e| crate::backend::cuda::cuda_error(format!("cannot allow {smem} bytes of shared memory for matrices_tiled: {e}")))?;
    }
    Ok(SchemeKernels { per_cell: k("matrices_per_cell")?, per_point: k("matrices_per_point")?, tiled, scatter: k("scatter_matrices")?, fma: k("fma_peak")?, dmma: k("dmma_peak")? })
}

impl DeviceAssembler {
    fn scheme_kernels(&self, be: &CudaBackend) -> Result<SchemeKernels> {
        if let Some(k) = self.schemes.get() {
            return Ok(k.clone());
        }
        let k = load(be, self)?;
        Ok(self.schemes.get_or_init(|| k).clone())
    }

    /// Why `scheme` cannot integrate this physics, if it cannot.
    pub fn scheme_unsupported(&self, scheme: Integration) -> Option<String> {
        let s = self.support;
        if scheme == Integration::Default {
            return None;
        }
        if self.variant.dim != 3 || self.variant.nv != 8 {
            return Some(format!("the {} integration is for hexahedra: use default", scheme.name()));
        }
        if !s.symmetric {
            return Some(format!("the {} integration writes symmetric element matrices: this physics is not symmetric", scheme.name()));
        }
        match scheme {
            Integration::ThreadPerPoint if self.variant.nq > MAX_POINTS_PER_BLOCK => Some(format!(
                "thread-per-point integration takes at most {MAX_POINTS_PER_BLOCK} quadrature points per cell, this rule has {}",
                self.variant.nq
            )),
            Integration::Tiled if s.value_term || !s.per_cell => {
                Some("tiled integration needs gradient-only physics (no mass term) with coefficients constant per cell".into())
            }
            Integration::Tiled if tiled_shape(&self.variant).2 > MAX_SHARED_BYTES => Some(format!(
                "tiled integration of {} points per cell needs more shared memory than a block has: use thread-per-cell",
                self.variant.nq
            )),
            _ => None,
        }
    }

    /// Element matrices of every cell (`elem_size²` each, global orientation) by `scheme`, into
    /// `out` (length `ncells · elem_size²`). Robin terms are not included.
    pub fn scheme_matrices_into(&self, be: &CudaBackend, scheme: Integration, out: &mut CudaSlice<f64>) -> Result<()> {
        self.first_matrices_into(be, scheme, self.ncells, out)
    }

    /// [`Self::scheme_matrices_into`] for cells `0..ncells` only (the GPU's share of a hybrid run).
    pub fn first_matrices_into(&self, be: &CudaBackend, scheme: Integration, ncells: usize, out: &mut CudaSlice<f64>) -> Result<()> {
        if let Some(why) = self.scheme_unsupported(scheme) {
            return Err(Error::Unsupported(why));
        }
        let nd = self.variant.elem_size();
        if ncells > self.ncells || out.len() < ncells * nd * nd {
            return Err(Error::dim("element matrices buffer", ncells * nd * nd, out.len()));
        }
        let nc = ncells as u64;
        if nc == 0 {
            return Ok(());
        }
        let blocks = |n: u64| n.min(1 << 20) as u32;
        match scheme {
            Integration::Default => {
                // assembly.cu's store mode, which every element has (the scheme module is only
                // for 3D cells). Row pointers and positions are unused there, but it takes them.
                let (rows, pos) = (be.upload(&[0u32])?, be.upload(&[0u16])?);
                self.launch_assemble(be, nc, None, 2, &rows, &pos, out)
            }
            Integration::ThreadPerCell => {
                let k = self.scheme_kernels(be)?;
                launch!(be, &k.per_cell, be.grid(nc); &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs,
                    &self.tab, &self.coef, &self.meta, out)
            }
            Integration::ThreadPerPoint => {
                let threads = (self.variant.nq.div_ceil(32) * 32) as u32;
                let cfg = LaunchConfig { grid_dim: (blocks(nc), 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
                let k = self.scheme_kernels(be)?;
                launch!(be, &k.per_point, cfg; &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs,
                    &self.tab, &self.coef, &self.meta, out)
            }
            Integration::Tiled => {
                let (threads, _, smem) = tiled_shape(&self.variant);
                let cfg = LaunchConfig { grid_dim: (blocks(nc), 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
                let k = self.scheme_kernels(be)?;
                launch!(be, &k.tiled, cfg; &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs,
                    &self.tab, &self.coef, &self.meta, out)
            }
        }
    }

    /// The device's double-precision FMA throughput in GFLOP/s (2 flops per FMA), measured by
    /// independent FMA chains: the arithmetic ceiling the benchmarks hold the schemes to.
    pub fn fma_gflops(&self, be: &CudaBackend) -> Result<f64> {
        let k = self.scheme_kernels(be)?;
        let cfg = be.grid(1 << 40);
        let threads = u64::from(cfg.grid_dim.0) * u64::from(cfg.block_dim.0);
        let iters = 4096i32;
        let mut sink = be.alloc::<f64>(1)?;
        let seed = 1.0f64;
        let t = crate::backend::cuda::bench::median_seconds(be, 5, || launch!(be, &k.fma, cfg; &iters, &seed, &mut sink))?;
        Ok(2.0 * 8.0 * f64::from(iters) * threads as f64 / t * 1e-9)
    }

    /// The FP64 tensor cores' throughput in GFLOP/s (m8n8k4 chains): the ceiling of the tiled
    /// scheme.
    pub fn dmma_gflops(&self, be: &CudaBackend) -> Result<f64> {
        let k = self.scheme_kernels(be)?;
        let cfg = be.grid(1 << 40);
        let warps = u64::from(cfg.grid_dim.0) * u64::from(cfg.block_dim.0) / 32;
        let iters = 2048i32;
        let mut sink = be.alloc::<f64>(1)?;
        let seed = 1.0f64;
        let t = crate::backend::cuda::bench::median_seconds(be, 5, || launch!(be, &k.dmma, cfg; &iters, &seed, &mut sink))?;
        Ok(2.0 * 256.0 * 8.0 * f64::from(iters) * warps as f64 / t * 1e-9)
    }

    /// Sums stored element matrices `mats` into `target`'s values (zeroed first): colour by colour
    /// with plain adds for [`Scatter::Colored`], atomics otherwise; then the Robin terms.
    pub fn scatter_matrices(&self, be: &CudaBackend, mats: &CudaSlice<f64>, target: &mut CsrTarget) -> Result<()> {
        let k = self.scheme_kernels(be)?;
        be.zero_slice(&mut target.matrix.values)?;
        let nl = (self.variant.nloc * self.variant.nloc) as u64;
        let CsrTarget { matrix, kpos, colors, scatter, .. } = target;
        match scatter {
            Scatter::Colored => {
                let mode = 1i32;
                for (n, cells) in colors.iter() {
                    let n = *n as u64;
                    if n > 0 {
                        launch!(be, &k.scatter, be.grid(n * nl); &n, cells, &self.cell_nodes, mats, &mode, &matrix.row_ptr, &*kpos,
                            &mut matrix.values)?;
                    }
                }
            }
            Scatter::Atomic => {
                let (mode, n) = (0i32, self.ncells as u64);
                if n > 0 {
                    launch!(be, &k.scatter, be.grid(n * nl); &n, &0u64, &self.cell_nodes, mats, &mode, &matrix.row_ptr, &*kpos,
                        &mut matrix.values)?;
                }
            }
            other => return Err(Error::Unsupported(format!("summing stored element matrices by the `{}` scatter: use atomic or colored", other.name()))),
        }
        self.add_robin_values(be, target)
    }
}

/// Compiles, with NVRTC only, the element-scheme kernels and the default assembly kernel for the
/// hierarchical hexahedra a user can reach: elasticity on trunk spaces p = 1…8 (Gauss) and p = 5
/// (the seed's rule), full p = 3, diffusion on trunk p = 4. Returns (variant, PTX bytes) per source.
pub fn compile_variants(arch: &str) -> Result<Vec<(String, usize)>> {
    use crate::fe::{ModeSet, QuadratureKind};
    use crate::mesh::{generate, CellType};
    use crate::physics::{Diffusion, Elasticity, PointwisePhysics};
    use crate::space::FunctionSpace;
    use std::sync::Arc;
    let mesh = Arc::new(generate::box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], CellType::Hexahedron)?);
    let mut cases: Vec<(usize, ModeSet, usize, QuadratureKind)> = (1..=crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE).map(|p| (p, ModeSet::Trunk, 3, QuadratureKind::Gauss)).collect();
    cases.push((5, ModeSet::Trunk, 3, QuadratureKind::Seed));
    cases.push((3, ModeSet::Full, 3, QuadratureKind::Gauss));
    cases.push((4, ModeSet::Trunk, 1, QuadratureKind::Gauss));
    let mut jobs = Vec::new();
    for (p, modes, ncomp, kind) in cases {
        let space = FunctionSpace::hierarchical(mesh.clone(), p, modes, ncomp)?;
        let physics: Box<dyn PointwisePhysics> = if ncomp == 3 { Box::new(Elasticity::lame(1.0, 1.0, 3)) } else { Box::new(Diffusion::new(1.0)) };
        let integ = ElementIntegrator::with_quadrature(&space, physics.as_ref(), None, kind)?;
        let v = variant_of(&integ, Tuning::default())?;
        let label = format!("hierarchical {modes:?} p = {p}, {ncomp} components, {kind:?} ({} points)", v.nq);
        jobs.push((format!("element_schemes.cu {label}"), ELEMENT_SCHEMES, scheme_defines(&v)));
        jobs.push((format!("assembly.cu {label}"), ASSEMBLY, kernel_defines(&v, &tables(&integ, &v))));
    }
    jobs.into_par_iter()
        .map(|(label, src, defines)| {
            let c = jit::compile_ptx_with(&src, arch, &defines)?;
            if c.log.to_ascii_lowercase().contains("warning") {
                return Err(Error::invalid(format!("NVRTC warnings in {label}:\n{}", c.log)));
            }
            Ok((label, c.ptx.len()))
        })
        .collect()
}
