//! Assembly levels as strategies (MFEM's names), each implemented for the CPU (`cpu.rs`) and the
//! GPU (`cuda.rs`) side by side:
//! - [`full`]: a global CSR matrix (on the GPU by atomics, colors, rows or patches: [`Scatter`]);
//! - [`element`]: element matrices stored and applied cell by cell;
//! - [`partial`]: the pointwise `D` in reference coordinates stored per quadrature point, the basis
//!   applied on the fly (sum factorized on quadrilaterals and hexahedra, hierarchical ones through
//!   signed tensor slots: [`partial::tensor_of`]);
//! - [`none`]: geometry and coefficients re-read and `D` re-evaluated at every point of every apply.
//!
//! A level is a [`LevelOperator`]: the unconstrained `A`, its node blocks (hence diagonal) on the
//! backend, its CSR matrix where it has one, its storage, and an update of its passive data.
//! [`FeBackend::build_level`] is the one place per backend that maps a level to its strategy; a new
//! level is a module here plus one match arm per backend, and nothing in `problem/` or the solvers
//! changes. [`crate::operator::FeOperator`] wraps a level with Dirichlet conditions and boundary
//! terms.
pub mod element;
pub mod full;
pub mod none;
pub mod partial;

use super::integrate::ElementIntegrator;
use super::Coloring;
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, Cpu};
use crate::solver::precond::SolverBackend;
use crate::Result;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How much of the operator is precomputed (MFEM's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, Hash)]
#[serde(rename_all = "lowercase")]
pub enum AssemblyLevel {
    /// A global CSR matrix.
    #[default]
    Full,
    /// Element matrices stored and applied element by element.
    Element,
    /// Quadrature-point data stored, the basis applied on the fly.
    Partial,
    /// Nothing stored but the mesh and coefficients: everything recomputed per apply.
    None,
}

impl AssemblyLevel {
    pub const ALL: [AssemblyLevel; 4] = [AssemblyLevel::Full, AssemblyLevel::Element, AssemblyLevel::Partial, AssemblyLevel::None];

    pub fn name(self) -> &'static str {
        match self {
            AssemblyLevel::Full => "full",
            AssemblyLevel::Element => "element",
            AssemblyLevel::Partial => "partial",
            AssemblyLevel::None => "none",
        }
    }

    /// The level named `s` (`full`, `element`, `partial`, `none`).
    pub fn parse(s: &str) -> Result<AssemblyLevel> {
        AssemblyLevel::ALL.into_iter().find(|l| l.name() == s).ok_or_else(|| {
            crate::Error::invalid(format!("unknown assembly level `{s}` (expected full, element, partial or none)"))
        })
    }
}

/// How element entries reach the CSR values on the GPU (level `full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Scatter {
    /// `atomicAdd` into the values: one launch, cells in mesh order. The default: no set-up beyond
    /// the positions, and the fastest but for `Patch`, whose host-built lists cost seconds at 10⁶
    /// cells and pay off only when one mesh is assembled many times.
    #[default]
    Atomic,
    /// One launch per color of cells sharing no vertex: plain read-modify-write, no atomics.
    Colored,
    /// One thread per node owns its rows and visits the cells around it: no atomics, no colors.
    /// Needs the reference-tensor path (simplices, coefficients constant per cell).
    Rows,
    /// A block per patch of cells (consecutive along a Hilbert curve) sums their shared entries in
    /// shared memory, stores the values no other patch touches and adds the rest atomically
    /// ([`full::patches`]). Needs the upper triangle of a cell's matrix to fit in shared memory.
    /// For repeated assembly on one mesh (time stepping, Newton).
    Patch,
}

impl Scatter {
    pub fn name(self) -> &'static str {
        match self {
            Scatter::Atomic => "atomic",
            Scatter::Colored => "colored",
            Scatter::Rows => "rows",
            Scatter::Patch => "patch",
        }
    }
}

/// How the GPU integrates element matrices for the `full` and `element` levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Integration {
    /// `assembly.cu`: a thread per (cell, row node, block of columns), entries written straight
    /// into the CSR values or the stored matrices.
    #[default]
    Default,
    /// The seed's scheme I: one thread per cell computes its whole element matrix.
    ThreadPerCell,
    /// The seed's scheme II: one block per cell, one thread per quadrature point, a shared-memory
    /// reduction per entry.
    ThreadPerPoint,
    /// Scheme III: the moments Σ_q w ∂_k φ_a ∂_l φ_b as a tiled GEMM per cell in shared memory and
    /// registers (gradient-only physics with coefficients constant per cell).
    Tiled,
}

impl Integration {
    pub const ALL: [Integration; 4] = [Integration::Default, Integration::ThreadPerCell, Integration::ThreadPerPoint, Integration::Tiled];

    pub fn name(self) -> &'static str {
        match self {
            Integration::Default => "default",
            Integration::ThreadPerCell => "thread-per-cell",
            Integration::ThreadPerPoint => "thread-per-point",
            Integration::Tiled => "tiled",
        }
    }
}

/// Knobs of the GPU kernels (problem file `[assembly]`, bench flags); `None` takes the measured
/// defaults (BENCHMARKS.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuning {
    /// Scatter of GPU full assembly.
    #[serde(default)]
    pub scatter: Scatter,
    /// Column nodes per assembly thread (clamped to 1..=nodes per cell).
    pub columns_per_thread: Option<usize>,
    /// Shared-memory doubles of a patch block (256 to 6144).
    pub patch_doubles: Option<usize>,
    /// How many of a patch's value pairs are sorted by entry count (1: none, CSR order).
    pub patch_sort_window: Option<usize>,
    /// How element matrices are integrated on the GPU.
    #[serde(default)]
    pub integration: Integration,
    /// CPU `partial` of scalar mass/diffusion on hexahedra: cells vectorized in batches of eight
    /// (default) or, with `false`, one at a time (the scalar path, kept as the reference).
    pub cpu_cell_batches: Option<bool>,
    /// Those batches' sum into the result: scattered one color of blocks at a time (`false`) or,
    /// with `true`, per node through a node→(cell, node) map (no colors, the threads evenly loaded,
    /// but the batches' results make a round trip through memory: faster on 2–4 threads, slower
    /// on one — BENCHMARKS.md, issue 11 op7). Unset: the gather form from 8 threads at degree ≥ 4,
    /// and at degree 3 on a Gauss rule (issue 11 op8/op9), else the colored scatter — the two
    /// sums agree to round-off, not bit for bit.
    pub cpu_gather: Option<bool>,
    /// The colored scatter with the batches' own colors (runs of one to eight batches colored by
    /// shared nodes: hundreds of runs per color) instead of the mesh's blocks of 64–2048 cells
    /// (5–60 blocks per color at 2·10⁵ unknowns); ignored with `cpu_gather = true`.
    pub cpu_batch_colors: Option<bool>,
    /// Where D is one matrix per cell and the rule is Gauss (not collocated), P ≤ 3: the batches'
    /// apply on the nodes as a sum of Kronecker products of 1D matrices (default) or, with
    /// `false`, through the quadrature points.
    pub cpu_kronecker: Option<bool>,
    /// Stored element matrices of symmetric physics as packed upper triangles
    /// ([`element::packed`]): `None` packs scheme III's at the GPU `element` level (half its
    /// writes and of the bytes each apply reads) and keeps the rest full (scheme III's matrices
    /// summed at the full level too: the packed summation was slower); `Some(true)` packs those
    /// and the CPU `element` level's as well; `Some(false)` keeps every matrix full.
    pub packed: Option<bool>,
    /// GPU `full` level: its sparsity pattern built on the device beside the host's set-up
    /// ([`FeBackend::overlap_setup`]; `None` or `true`, the default) or, with `false`, in the
    /// level after it (for measuring what the overlap hides; issue 18, e2e9).
    pub overlap_pattern: Option<bool>,
}

/// Host Robin facet matrices: (cell, global dofs, elem_size² entries).
pub type BoundaryMatrices = Vec<(usize, Vec<usize>, Vec<f64>)>;

/// What every level builds from: the integrator (space, basis, QFunctions, passive data), the
/// boundary terms integrated on the host, the CPU block coloring and the tuning.
pub struct LevelInput<'a> {
    pub integ: &'a ElementIntegrator<'a>,
    pub boundary: &'a BoundaryMatrices,
    pub coloring: &'a Arc<Coloring>,
    pub tuning: Tuning,
}

/// Coefficients constant per cell given as a material per cell and a table: cell c has the passive
/// field values `values[index[c]]` (one value per field, in the QFunctions' order). What changes
/// between samples of an inverse problem whose parameter moves material boundaries.
#[derive(Clone, Copy, Debug)]
pub struct CellMaterials<'a> {
    pub index: &'a [u8],
    pub values: &'a [Vec<f64>],
}

impl CellMaterials<'_> {
    /// The per-cell values of passive field `field`.
    pub fn field(&self, field: usize) -> Vec<f64> {
        self.index.iter().map(|&m| self.values[m as usize][field]).collect()
    }
}

/// One assembly level on backend `B`: the unconstrained operator `A` of the volume terms (and the
/// boundary terms where [`LevelOperator::includes_boundary`]).
pub trait LevelOperator<B: Backend>: Send + Sync {
    /// `y = A x`.
    fn apply(&self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()>;
    /// The `ncomp × ncomp` diagonal block of every node, row-major, node after node.
    fn node_blocks(&self, be: &B) -> Result<B::Vector>;
    /// The assembled matrix, where the level has one.
    fn matrix(&self) -> Option<&B::Matrix> {
        None
    }
    fn matrix_mut(&mut self) -> Option<&mut B::Matrix> {
        None
    }
    /// Bytes the level keeps beyond the mesh and dof map.
    fn storage_bytes(&self) -> usize;
    /// Whether the Robin facet terms are part of `A` (else the operator adds them).
    fn includes_boundary(&self) -> bool;
    /// Recomputes what depends on the passive data from `input` (same mesh, space and physics).
    fn update(&mut self, be: &B, input: &LevelInput) -> Result<()>;
    /// Takes new per-cell coefficients without re-integrating, where the level can (the lattice:
    /// every material of `m` already has its element matrices); `false` leaves the level as it was
    /// and asks for [`LevelOperator::update`].
    fn set_materials(&mut self, _be: &B, _m: &CellMaterials) -> Result<bool> {
        Ok(false)
    }
    /// Learns the Dirichlet mask its [`LevelOperator::apply_masked`] will be called with (1 free,
    /// 0 fixed; [`crate::operator::FeOperator::constrain`] calls it once).
    fn set_dirichlet(&mut self, _be: &B, _free: &[f64]) -> Result<()> {
        Ok(())
    }
    /// `y = M A M x + (I − M) x` in one pass where the level can (see
    /// [`crate::backend::LinearOperator::apply_masked`]); `false` asks for the unfused form.
    fn apply_masked(&self, _be: &B, _x: &B::Vector, _y: &mut B::Vector, _mask: &B::Vector) -> Result<bool> {
        Ok(false)
    }
    /// `apply` (with `mask`: `apply_masked`) and the per-block partial sums of `x·y` in one pass
    /// (see [`crate::backend::LinearOperator::apply_dot`]); `None` asks for the unfused form.
    fn apply_dot(&self, _be: &B, _x: &B::Vector, _y: &mut B::Vector, _mask: Option<&B::Vector>, _partials: &mut B::Vector) -> Result<Option<usize>> {
        Ok(None)
    }
    /// Resident Jacobi-PCG iterations fused into the level's own kernels (see
    /// [`crate::backend::LinearOperator::pcg_fused`]); `false` asks for the unfused loop.
    fn pcg_fused(&self, _be: &B, _x: &mut B::Vector, _w: &mut crate::backend::PcgWork<'_, B>, _k: usize, _mask: Option<&B::Vector>) -> Result<bool> {
        Ok(false)
    }
}

/// A backend the finite element operators run on: the one place per backend that maps an assembly
/// level to its strategy.
pub trait FeBackend: SolverBackend {
    fn build_level(&self, level: AssemblyLevel, input: &LevelInput) -> Result<Box<dyn LevelOperator<Self>>>;

    /// The load vector ∫ f·φ of a source given as compiled expressions (one per component),
    /// integrated on this backend's device; `None` where the backend integrates on the host.
    fn device_load(&self, _integ: &crate::operator::ElementIntegrator, _source: &[crate::expr::Expr]) -> Result<Option<Self::Vector>> {
        Ok(None)
    }

    /// Whether this backend's levels read the CPU cell coloring of [`LevelInput`].
    fn levels_use_coloring(&self) -> bool {
        true
    }

    /// Runs `host` (set-up work on the host that the level will read, such as the integrator's
    /// coefficient samples) while this backend prepares, on its device, what the operator at
    /// `level` needs of `space` alone, so the two overlap. The default prepares nothing. `robin`:
    /// the operator will have boundary (Robin) terms.
    fn overlap_setup<R>(&self, _space: &crate::space::FunctionSpace, _level: AssemblyLevel, _tuning: Tuning, _robin: bool, host: impl FnOnce() -> R) -> R {
        host()
    }
}

impl FeBackend for Cpu {
    fn build_level(&self, level: AssemblyLevel, input: &LevelInput) -> Result<Box<dyn LevelOperator<Cpu>>> {
        Ok(match level {
            AssemblyLevel::Full => match full::grouped::CpuGrouped::try_build(input)? {
                Some(grouped) => Box::new(grouped),
                None => Box::new(full::cpu::CpuFull::build(input)?),
            },
            AssemblyLevel::Element => Box::new(element::cpu::ElementMatrices::assemble(input)?),
            AssemblyLevel::Partial => Box::new(partial::cpu::MatFree::build(input, partial::Pointwise::Stored)?),
            AssemblyLevel::None => none::cpu::build(input)?,
        })
    }
}

impl FeBackend for CudaBackend {
    fn device_load(&self, integ: &crate::operator::ElementIntegrator, source: &[crate::expr::Expr]) -> Result<Option<Self::Vector>> {
        let Some(b) = crate::operator::load_cuda::load_vector_cuda(self, integ, source)? else {
            return Ok(None);
        };
        // A non-finite value: the host pass names the point where the source fails.
        Ok(self.norm2(&b)?.is_finite().then_some(b))
    }

    fn levels_use_coloring(&self) -> bool {
        false
    }

    /// The full level's sparsity pattern is built on the device (on another thread, which only
    /// drives the GPU) while `host` runs; [`full::cuda::GpuFull::build`] takes it. Where the level
    /// would not build its pattern there (other levels, the patch scatter, Robin terms, degree
    /// groups) or with `[assembly] overlap_pattern = false`, nothing is prepared. A pattern that failed is not
    /// kept: the level builds it again and reports the error in its place.
    fn overlap_setup<R>(&self, space: &crate::space::FunctionSpace, level: AssemblyLevel, tuning: Tuning, robin: bool, host: impl FnOnce() -> R) -> R {
        let wanted = level == AssemblyLevel::Full
            && !robin
            && space.cell_degrees.is_none()
            && matches!(tuning.scatter, Scatter::Atomic | Scatter::Colored | Scatter::Rows)
            && tuning.overlap_pattern.unwrap_or(true);
        if !wanted {
            return host();
        }
        let (r, pattern) = std::thread::scope(|s| {
            let device = s.spawn(|| {
                let t = std::time::Instant::now();
                let p = full::pattern_cuda::device_pattern_of(self, space);
                crate::trace::note("full: device pattern (beside the host set-up)", t.elapsed().as_secs_f64());
                p
            });
            let r = host();
            (r, device.join())
        });
        match pattern {
            Ok(Ok(Some(p))) => self.keep_pattern(space, p),
            Ok(_) => {}
            Err(panic) => std::panic::resume_unwind(panic),
        }
        r
    }

    fn build_level(&self, level: AssemblyLevel, input: &LevelInput) -> Result<Box<dyn LevelOperator<CudaBackend>>> {
        Ok(match level {
            AssemblyLevel::Full => match full::grouped::GpuGrouped::try_build(self, input)? {
                Some(grouped) => Box::new(grouped),
                None => Box::new(full::cuda::GpuFull::build(self, input)?),
            },
            AssemblyLevel::Element => Box::new(element::cuda::DeviceElementMatrices::build(self, input)?),
            AssemblyLevel::Partial => match partial::hex_cuda::try_build(self, input, partial::Pointwise::Stored)? {
                Some(hex) => Box::new(hex),
                None => Box::new(partial::cuda::DeviceMatFree::build(self, input, partial::Pointwise::Stored)?),
            },
            AssemblyLevel::None => none::cuda::build(self, input)?,
        })
    }
}

/// Compiles every finite element kernel variant a user can reach (assembly for every element,
/// degree 1–3 and physics; the matrix-free levels likewise) for `arch` with NVRTC only: what CI
/// runs so that no variant fails to compile. Returns (description, PTX bytes).
pub fn compile_variants(arch: &str) -> Result<Vec<(String, usize)>> {
    let mut all = full::cuda::compile_variants(arch)?.into_iter().map(|(v, n)| (format!("assembly {v:?}"), n)).collect::<Vec<_>>();
    all.extend(partial::cuda::compile_variants(arch)?);
    all.extend(partial::hex_cuda::compile_variants(arch, 1..=crate::fe::lagrange::MAX_TENSOR_DEGREE)?);
    all.extend(none::grid_cuda::compile_variants(arch)?.into_iter().map(|(v, n)| (format!("lattice {v}"), n)));
    Ok(all)
}

/// Every (space, physics) whose kernels a user can reach, on one-cell meshes: each element (interval,
/// triangle, quadrilateral, tetrahedron, hexahedron) at degrees 1–3 with scalar physics (constant
/// coefficients, and a function coefficient plus reaction) and, from 2D on, elasticity (constant,
/// with a function coefficient, and with a mass term). Constant coefficients take the
/// reference-tensor path of GPU assembly on simplices, functions the quadrature loop.
pub fn variant_cases() -> Result<Vec<(crate::space::FunctionSpace, Box<dyn crate::physics::PointwisePhysics>)>> {
    use crate::mesh::{generate, CellType};
    use crate::physics::{Coefficient, Diffusion, Elasticity, Mass, PointwisePhysics, Sum};
    let mut cases = Vec::new();
    for cell in CellType::ALL {
        let dim = cell.dim();
        let mesh = Arc::new(match dim {
            1 => generate::interval(1, 0.0, 1.0)?,
            2 => generate::rectangle(1, 1, [0.0; 2], [1.0; 2], cell)?,
            _ => generate::box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], cell)?,
        });
        for degree in 1..=3 {
            let f = || Coefficient::function(|x| 1.0 + x[0]);
            let mut physics: Vec<(usize, Box<dyn PointwisePhysics>)> = vec![
                (1, Box::new(Diffusion::new(1.0))),
                (1, Box::new(Sum(vec![Box::new(Diffusion::new(f())), Box::new(Mass::new(1.0, 1))]))),
            ];
            if dim > 1 {
                physics.push((dim, Box::new(Elasticity::lame(1.0, 1.0, dim))));
                physics.push((dim, Box::new(Elasticity::lame(1.0, f(), dim))));
                physics.push((dim, Box::new(Sum(vec![Box::new(Elasticity::lame(1.0, 1.0, dim)), Box::new(Mass::new(1.0, dim))]))));
            }
            for (ncomp, p) in physics {
                cases.push((crate::space::FunctionSpace::lagrange(mesh.clone(), degree, ncomp)?, p));
            }
        }
    }
    Ok(cases)
}
