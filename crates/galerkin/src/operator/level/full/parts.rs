//! One matrix from several cell parts, each integrated by its own kernel variant: the degree groups
//! of a mixed-degree mesh (every group with its own element size, so a cell costs its own degree;
//! [`crate::operator::degree_groups`]), and the shares of several GPUs (each GPU its cells, its own
//! partial matrix, summed on the host).
//!
//! Each part stores its element matrices, then adds them through its own CSR positions into one
//! set of values of the parent's pattern (colour by colour or with atomics; the part's colouring
//! is of its own cells, which share no vertex, so no dof).
use super::cuda::{CsrTarget, DeviceAssembler};
use crate::backend::cuda::CudaBackend;
use crate::fe::QuadratureKind;
use crate::linalg::CsrMatrix;
use crate::operator::coloring::cell_colors;
use crate::operator::level::element::packed::Storage;
use crate::operator::level::{Integration, Scatter, Tuning};
use crate::operator::ElementIntegrator;
use crate::physics::PointwisePhysics;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;
use std::time::Instant;

/// One part: its assembler, CSR positions and stored element matrices (in the layout of the
/// scheme that last integrated them: scheme III's packed).
pub struct Part {
    pub asm: DeviceAssembler,
    target: CsrTarget,
    pub mats: CudaSlice<f64>,
    pub storage: Storage,
}

impl Part {
    pub fn ncells(&self) -> usize {
        self.asm.num_cells()
    }
}

/// Parts summed into one CSR matrix on one GPU.
pub struct PartsAssembler {
    pub parts: Vec<Part>,
    /// Which part's target holds the values every part adds into (the first).
    scatter: Scatter,
}

impl PartsAssembler {
    /// Uploads every part (`spaces`: cells of one parent, e.g. [`crate::operator::degree_groups`])
    /// with `physics` on quadrature `kind`, and finds the positions of its entries in `pattern`
    /// (the parent's sparsity). Only the first part keeps a copy of the matrix.
    pub fn new(be: &CudaBackend, spaces: &[&FunctionSpace], physics: &dyn PointwisePhysics, kind: QuadratureKind, pattern: &CsrMatrix, scatter: Scatter) -> Result<Self> {
        if !matches!(scatter, Scatter::Colored | Scatter::Atomic) {
            return Err(Error::Unsupported(format!("summing cell parts by the `{}` scatter: use atomic or colored", scatter.name())));
        }
        let mut parts = Vec::new();
        for (i, space) in spaces.iter().enumerate() {
            let integ = ElementIntegrator::with_quadrature(space, physics, None, kind)?;
            let asm = DeviceAssembler::new(be, &integ, &Vec::new(), Tuning { scatter, ..Default::default() })?;
            let colors = cell_colors(&space.mesh);
            let mut target = asm.csr_target(be, pattern, scatter, Some(&colors))?;
            if i > 0 {
                // Only the positions are needed: release this part's copy of the values and columns.
                target.matrix.replace_values(be.alloc::<f64>(1)?);
                target.matrix.col_idx = be.alloc::<u32>(1)?;
            }
            let nd = asm.variant.elem_size();
            let mats = be.alloc::<f64>(space.mesh.num_cells() * nd * nd)?;
            parts.push(Part { asm, target, mats, storage: Storage::Full });
        }
        if parts.is_empty() {
            return Err(Error::invalid("a parts assembler needs at least one part"));
        }
        Ok(PartsAssembler { parts, scatter })
    }

    /// Why `scheme` cannot integrate some part, if it cannot.
    pub fn unsupported(&self, scheme: Integration) -> Option<String> {
        self.parts.iter().find_map(|p| p.asm.scheme_unsupported(scheme))
    }

    /// Every part's element matrices by `scheme` (queued on the stream).
    pub fn integrate(&mut self, be: &CudaBackend, scheme: Integration) -> Result<()> {
        for p in &mut self.parts {
            p.asm.scheme_matrices_into(be, scheme, &mut p.mats)?;
            p.storage = p.asm.storage(scheme);
        }
        Ok(())
    }

    /// Each part's first `counts[i]` cells (the GPU's share of a hybrid run) by `scheme`.
    pub fn integrate_first(&mut self, be: &CudaBackend, scheme: Integration, counts: &[usize]) -> Result<()> {
        if counts.len() != self.parts.len() {
            return Err(Error::dim("cells per part", self.parts.len(), counts.len()));
        }
        for (p, &n) in self.parts.iter_mut().zip(counts) {
            p.asm.first_matrices_into(be, scheme, n, &mut p.mats)?;
            p.storage = p.asm.storage(scheme);
        }
        Ok(())
    }

    /// Sums the stored element matrices of every part into the one matrix (zeroed first).
    pub fn sum(&mut self, be: &CudaBackend) -> Result<()> {
        let (first, rest) = self.parts.split_first_mut().ok_or_else(|| Error::invalid("no parts"))?;
        let t0 = &mut first.target;
        be.zero_slice(&mut t0.matrix.values)?;
        first.asm.add_matrices(be, &first.mats, first.storage, &t0.kpos, &t0.colors, self.scatter, &mut t0.matrix.values, &t0.matrix.row_ptr)?;
        for p in rest {
            p.asm.add_matrices(be, &p.mats, p.storage, &p.target.kpos, &p.target.colors, self.scatter, &mut t0.matrix.values, &t0.matrix.row_ptr)?;
        }
        Ok(())
    }

    /// [`Self::integrate`] then [`Self::sum`].
    pub fn assemble(&mut self, be: &CudaBackend, scheme: Integration) -> Result<()> {
        self.integrate(be, scheme)?;
        self.sum(be)
    }

    /// The summed matrix on the device.
    pub fn matrix(&self) -> &crate::backend::cuda::DeviceCsr {
        &self.parts[0].target.matrix
    }

    pub fn matrix_mut(&mut self) -> &mut crate::backend::cuda::DeviceCsr {
        &mut self.parts[0].target.matrix
    }

    /// Frees every part's stored element matrices (after [`Self::assemble`], where the matrix is
    /// all that is kept); integrating again needs a new assembler.
    pub fn release_matrices(&mut self, be: &CudaBackend) -> Result<()> {
        for p in &mut self.parts {
            p.mats = be.alloc::<f64>(1)?;
        }
        Ok(())
    }

    /// The summed matrix on the host.
    pub fn matrix_to_host(&self, be: &CudaBackend) -> Result<CsrMatrix> {
        self.parts[0].target.matrix.to_host(be)
    }

    /// The summed values on the host.
    pub fn values_to_host(&self, be: &CudaBackend) -> Result<Vec<f64>> {
        be.download(&self.parts[0].target.matrix.values)
    }
}

/// Cells split between several GPUs: GPU `g` integrates its cells (`shares`) and sums them into
/// its own partial matrix of the whole pattern; the partial matrices are added on the host.
pub struct MultiGpuAssembler<'b> {
    pub gpus: Vec<(&'b CudaBackend, PartsAssembler)>,
    /// The parent's cells of each GPU, in order.
    pub cells: Vec<Vec<usize>>,
}

/// Splits `ncells` cells into contiguous ranges in proportion to `weights` (speeds); every range
/// may be empty but together they cover every cell.
pub fn proportional_split(ncells: usize, weights: &[f64]) -> Result<Vec<std::ops::Range<usize>>> {
    let total: f64 = weights.iter().sum();
    if weights.is_empty() || weights.iter().any(|w| !w.is_finite() || *w < 0.0) || total <= 0.0 {
        return Err(Error::invalid(format!("splitting cells by speeds {weights:?}: give finite, non-negative speeds, not all zero")));
    }
    let mut out = Vec::new();
    let (mut start, mut acc) = (0usize, 0.0);
    for (i, w) in weights.iter().enumerate() {
        acc += w;
        let end = if i + 1 == weights.len() { ncells } else { ((ncells as f64 * acc / total).round() as usize).clamp(start, ncells) };
        out.push(start..end);
        start = end;
    }
    Ok(out)
}

impl<'b> MultiGpuAssembler<'b> {
    /// Splits the cells of `space` between `gpus` in proportion to `speeds` and uploads each share
    /// (the parent's element; one part per GPU, a sub-space of its cells).
    pub fn new(gpus: &'b [CudaBackend], space: &FunctionSpace, physics: &dyn PointwisePhysics, kind: QuadratureKind, pattern: &CsrMatrix, scatter: Scatter, speeds: &[f64]) -> Result<Self> {
        if speeds.len() != gpus.len() {
            return Err(Error::dim("speeds per GPU", gpus.len(), speeds.len()));
        }
        let ranges = proportional_split(space.mesh.num_cells(), speeds)?;
        let mut out = Vec::new();
        let mut cells = Vec::new();
        for (be, r) in gpus.iter().zip(ranges) {
            let share: Vec<usize> = r.collect();
            let sub = crate::operator::degree_groups::cell_subspace(space, &share, None)?;
            out.push((be, PartsAssembler::new(be, &[&sub], physics, kind, pattern, scatter)?));
            cells.push(share);
        }
        Ok(MultiGpuAssembler { gpus: out, cells })
    }

    /// Every GPU integrates its cells by `scheme` and, with `sum`, adds them into its partial
    /// matrix; all run at once (queued on each GPU's stream, then awaited). Returns the wall time.
    pub fn run(&mut self, scheme: Integration, sum: bool) -> Result<f64> {
        for (be, _) in &self.gpus {
            be.synchronize()?;
        }
        let t0 = Instant::now();
        for (be, a) in &mut self.gpus {
            a.integrate(be, scheme)?;
            if sum {
                a.sum(be)?;
            }
        }
        for (be, _) in &self.gpus {
            be.synchronize()?;
        }
        Ok(t0.elapsed().as_secs_f64())
    }

    /// The assembled matrix: the GPUs' partial matrices added on the host (after [`Self::run`]
    /// with `sum`).
    pub fn matrix_to_host(&self) -> Result<CsrMatrix> {
        let (be, first) = &self.gpus[0];
        let mut a = first.matrix_to_host(be)?;
        for (be, p) in &self.gpus[1..] {
            let v = p.values_to_host(be)?;
            if v.len() != a.values.len() {
                return Err(Error::dim("partial matrix values", a.values.len(), v.len()));
            }
            a.values.iter_mut().zip(v).for_each(|(x, y)| *x += y);
        }
        Ok(a)
    }
}
