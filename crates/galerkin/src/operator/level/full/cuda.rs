//! Full (and element-matrix) assembly on the GPU: element matrices of any Lagrange element (P1–P3,
//! Q1–Q3, 1D–3D) and any physics (its QFunctions' linearised block, `kernels/qf/`) integrated by
//! `kernels/assembly.cu`, then summed into CSR values through precomputed positions (atomics,
//! colors, rows or patches: [`Scatter`]) or stored per cell for the `element` level. Only the mesh,
//! the reference tables and the passive data cross to the device; the element matrices never do.
//!
//! Robin facet terms are few and integrated on the host ([`ElementIntegrator::add_robin_matrix`]),
//! then added on the device by one scatter kernel.
use super::patches::{patch_cells, PatchLists};
use crate::backend::cuda::jit::{self, ASSEMBLY};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, DeviceCsr, Shared};
use crate::backend::{Backend, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::mesh::{ordering::hilbert_cell_order, Mesh};
use crate::operator::coloring::cell_colors;
use crate::operator::level::{BoundaryMatrices, Integration, LevelInput, LevelOperator, Scatter, Tuning};
use crate::operator::level::element::packed::Storage;
use crate::operator::ElementIntegrator;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rayon::prelude::*;
use std::sync::Arc;

/// The compile-time shape of one assembly kernel variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub dim: usize,
    /// Vertices of the geometry map (P1/Q1 on the cell's corners).
    pub nv: usize,
    /// Scalar basis functions per cell.
    pub nloc: usize,
    pub nq: usize,
    pub ncomp: usize,
    pub affine: bool,
    /// The QFunction type of `kernels/qf/` (e.g. `Sum<Elasticity,Mass>`).
    pub qf: String,
    /// Whether its block reads every gradient pair (keeps all of S on the reference-tensor path).
    pub full_gradient: bool,
    /// Affine cell and coefficients constant per cell: contract precomputed reference tensors
    /// instead of looping over quadrature points.
    pub reftensor: bool,
    pub tuning: Tuning,
}

impl Variant {
    /// Column nodes per thread: the NCOMP²·JB accumulators stay in registers (≤ 32 for scalar
    /// problems, ≤ 64 for vector ones), split evenly so no thread idles on a short last block.
    /// [`Tuning::columns_per_thread`] overrides it (clamped to 1..=NLOC) for tuning sweeps.
    pub fn columns_per_thread(&self) -> usize {
        if let Some(jb) = self.tuning.columns_per_thread {
            return jb.clamp(1, self.nloc);
        }
        let cap = if self.ncomp == 1 { 32 } else { (64 / (self.ncomp * self.ncomp)).max(1) };
        let blocks = self.nloc.div_ceil(cap);
        self.nloc.div_ceil(blocks)
    }

    /// The `-D` defines of this variant.
    pub fn defines(&self) -> Vec<String> {
        let b = |v: bool| usize::from(v);
        vec![
            format!("DIM={}", self.dim),
            format!("NV={}", self.nv),
            format!("NLOC={}", self.nloc),
            format!("NQ={}", self.nq),
            format!("NCOMP={}", self.ncomp),
            format!("JB={}", self.columns_per_thread()),
            format!("AFFINE={}", b(self.affine)),
            format!("QF={}", self.qf),
            format!("REFTENSOR={}", b(self.reftensor)),
            format!("PATCH_DOUBLES={}", super::patches::patch_doubles(self.nloc, self.ncomp, self.tuning.patch_doubles)),
            format!("PATCH_CELLS={}", super::patches::fitted_patch_cells(self).unwrap_or(0)),
        ]
    }

    /// Threads `assemble_cells` gives one cell: a row node times its blocks of columns.
    pub fn threads_per_cell(&self) -> usize {
        self.nloc * self.nloc.div_ceil(self.columns_per_thread())
    }

    /// Local dofs per cell.
    pub fn elem_size(&self) -> usize {
        self.nloc * self.ncomp
    }
}

/// The variant of an integrator's space and physics.
pub(super) fn variant_of(integ: &ElementIntegrator, tuning: Tuning) -> Result<Variant> {
    let space = integ.space;
    let mesh = &*space.mesh;
    let v = Variant {
        dim: mesh.dim,
        nv: mesh.cell_type.num_vertices(),
        nloc: space.dofmap.nodes_per_cell,
        nq: integ.quad.len(),
        ncomp: space.ncomp,
        affine: mesh.cell_type.is_simplex(),
        qf: integ.qf.cuda_type(),
        full_gradient: integ.qf.full_gradient(),
        reftensor: mesh.cell_type.is_simplex() && integ.passive.per_cell(),
        tuning,
    };
    if v.nloc > 1 << 16 || v.elem_size() * v.elem_size() > 1 << 24 {
        return Err(Error::Unsupported(format!("GPU assembly of {} local dofs per cell", v.elem_size())));
    }
    Ok(v)
}

/// The entry points of one assembly variant.
#[derive(Clone)]
pub(crate) struct AssemblyKernels {
    pub assemble: Kernel,
    pub positions: Kernel,
    pub add_at: Kernel,
    pub apply: Kernel,
    pub node_blocks: Kernel,
    /// Row-owner assembly (reference-tensor variants only).
    pub rows: Option<Kernel>,
    /// Patch assembly (where the upper triangle of a cell's matrix fits in shared memory).
    pub patches: Option<Kernel>,
}

/// Everything the assembly kernel reads, uploaded once per space and physics.
pub struct DeviceAssembler {
    pub variant: Variant,
    pub(crate) kernels: AssemblyKernels,
    pub(crate) ncells: usize,
    pub(crate) ndofs: usize,
    /// The mesh and dof map: the backend's resident copies ([`crate::backend::cuda::resident`]),
    /// which the load and the error norms read too.
    pub(super) cell_verts: Shared<u32>,
    pub(super) coords: Shared<f64>,
    pub(crate) cell_nodes: Shared<u32>,
    /// ±1 per (cell, local node) for hierarchical bases (a single unused entry otherwise).
    pub(crate) signs: CudaSlice<i8>,
    pub(crate) has_signs: i32,
    /// For the patch scatter's cell order.
    mesh: Arc<Mesh>,
    pub(super) tab: CudaSlice<f64>,
    pub(super) coef: CudaSlice<f64>,
    pub(super) meta: CudaSlice<u64>,
    /// Robin facet matrices integrated on the host: (cell, global dofs, elem_size² entries).
    pub(super) robin: Vec<(usize, Vec<usize>, Vec<f64>)>,
    /// The element-scheme kernels ([`super::schemes`]), compiled on first use.
    pub(super) schemes: std::sync::OnceLock<super::schemes::SchemeKernels>,
    pub(super) support: super::schemes::SchemeSupport,
    /// 1D factor tables of a tensor-product basis on a grid rule (the tiled scheme's staging,
    /// [`super::tensor_tables`]): (points, factors) per axis where the split exists, and the
    /// tables (a single unused entry each otherwise).
    pub(super) tensor_dims: Option<(usize, usize)>,
    pub(super) tensor_reals: CudaSlice<f64>,
    pub(super) tensor_ints: CudaSlice<u32>,
}

/// A CSR matrix on the device with what re-assembling it needs: the position of every element
/// entry (rank of the column node in the row, computed once) and the host-side extras.
pub struct CsrTarget {
    pub matrix: DeviceCsr,
    pub(super) kpos: CudaSlice<u16>,
    pub(super) robin_idx: CudaSlice<u64>,
    pub(super) robin_vals: CudaSlice<f64>,
    /// Cells per color (only for [`Scatter::Colored`]).
    pub(super) colors: Vec<(usize, CudaSlice<u32>)>,
    /// Node-to-cell map for [`Scatter::Rows`]: offsets per node and incidences `c·nloc + i`.
    node_cells: Option<(CudaSlice<u32>, CudaSlice<u32>)>,
    /// Patch lists for [`Scatter::Patch`].
    patches: Option<DevicePatches>,
    pub scatter: Scatter,
}

/// Device copies of [`PatchLists`].
struct DevicePatches {
    order: CudaSlice<u32>,
    ptr: CudaSlice<u32>,
    pos: CudaSlice<u32>,
    tpos: CudaSlice<u32>,
    slice_ptr: CudaSlice<u32>,
    slice_base: CudaSlice<u32>,
    slots: CudaSlice<u16>,
    atomic_fraction: f64,
}

impl CsrTarget {
    /// For [`Scatter::Patch`], the global atomics per element entry that remain.
    pub fn patch_atomic_fraction(&self) -> Option<f64> {
        self.patches.as_ref().map(|p| p.atomic_fraction)
    }
}

/// Reference tables in the layout of `kernels/assembly.cu`: phi | dphi | gdn | w, then with
/// `reftensor` S[i][j][c][e] = Σ_q w ∂_c φ_i ∂_e φ_j (symmetrized in (c, e) without elasticity)
/// and M[i][j] = Σ_q w φ_i φ_j.
pub(super) fn tables(integ: &ElementIntegrator, v: &Variant) -> Vec<f64> {
    let cell = integ.space.mesh.cell_type;
    let (q, tab) = (&integ.quad, &integ.tab);
    let mut t = Vec::with_capacity(v.nq * (v.nloc * (1 + v.dim) + v.nv * v.dim + 1));
    t.extend_from_slice(&tab.values);
    for g in &tab.grads {
        t.extend_from_slice(&g[..v.dim]);
    }
    let (mut vals, mut grads) = (vec![0.0; v.nv], vec![[0.0; 3]; v.nv]);
    for p in &q.points {
        cell.geometry_basis(*p, &mut vals, &mut grads);
        for g in &grads {
            t.extend_from_slice(&g[..v.dim]);
        }
    }
    t.extend_from_slice(&q.weights);
    if v.reftensor {
        let (n, d) = (v.nloc, v.dim);
        let at = |qi: usize, i: usize| qi * n + i;
        let s = |i: usize, j: usize, c: usize, e: usize| -> f64 { (0..v.nq).map(|qi| q.weights[qi] * tab.grads[at(qi, i)][c] * tab.grads[at(qi, j)][e]).sum() };
        for i in 0..n {
            for j in 0..n {
                for c in 0..d {
                    for e in 0..d {
                        // Symmetrized where only its contraction with a symmetric tensor is used.
                        t.push(if v.full_gradient { s(i, j, c, e) } else { 0.5 * (s(i, j, c, e) + s(i, j, e, c)) });
                    }
                }
            }
        }
        for i in 0..n {
            for j in 0..n {
                t.push((0..v.nq).map(|qi| q.weights[qi] * tab.values[at(qi, i)] * tab.values[at(qi, j)]).sum());
            }
        }
    }
    t
}

/// The defines of `v`'s kernels for `tab` (its [`tables`]): the variant's, and on the
/// reference-tensor path S and M as `REF_TABLE`, literals the kernels keep in constant memory.
/// Rust prints the shortest decimal that reads back as the same double, so they are exact.
pub(super) fn kernel_defines(v: &Variant, tab: &[f64]) -> Vec<String> {
    let mut d = v.defines();
    if v.reftensor {
        let s = v.nq * (v.nloc * (1 + v.dim) + v.nv * v.dim + 1);
        assert_eq!(tab.len() - s, v.nloc * v.nloc * (v.dim * v.dim + 1), "tables() and TAB_S of assembly.cu disagree");
        let list: Vec<String> = tab[s..].iter().map(|x| format!("{x:e}")).collect();
        d.push(format!("REF_TABLE={}", list.join(",")));
    }
    d
}

impl DeviceAssembler {
    /// Uploads the mesh, dof map, tables and passive data of `integ` and loads its kernel variant
    /// (compiled by NVRTC on first use); `boundary` holds the host-integrated Robin matrices.
    pub fn new(be: &CudaBackend, integ: &ElementIntegrator, boundary: &BoundaryMatrices, tuning: Tuning) -> Result<DeviceAssembler> {
        let variant = variant_of(integ, tuning)?;
        let tab = tables(integ, &variant);
        let module = be.variant_module(&ASSEMBLY, &kernel_defines(&variant, &tab))?;
        let k = |name| Kernel::from_module(&module, name);
        let kernels = AssemblyKernels {
            assemble: k("assemble_cells")?,
            positions: k("element_positions")?,
            add_at: k("add_at")?,
            apply: k("element_apply")?,
            node_blocks: k("element_node_blocks")?,
            rows: if variant.reftensor { Some(k("assemble_rows")?) } else { None },
            patches: if patch_cells(variant.nloc, variant.ncomp, tuning.patch_doubles).is_some() { Some(k("assemble_patches")?) } else { None },
        };
        let space = integ.space;
        let mesh = &*space.mesh;
        let (coef, meta) = integ.passive.device_parts();
        let r = be.resident(space)?;
        let tensor = if variant.dim == 3 && variant.nv == 8 { super::tensor_tables::tensor_tables(&integ.quad.points, variant.nloc, &integ.tab.values, &integ.tab.grads) } else { None };
        Ok(DeviceAssembler {
            variant,
            kernels,
            ncells: mesh.num_cells(),
            ndofs: space.ndofs(),
            cell_verts: r.verts,
            coords: r.coords,
            cell_nodes: r.nodes,
            signs: be.upload(&match &space.dofmap.signs {
                Some(s) => s.iter().map(|&x| if x < 0.0 { -1i8 } else { 1 }).collect(),
                None => vec![1i8],
            })?,
            has_signs: i32::from(space.dofmap.signs.is_some()),
            mesh: space.mesh.clone(),
            tab: be.upload(&tab)?,
            coef: be.upload_parts(&coef)?,
            meta: be.upload(&meta)?,
            robin: boundary.clone(),
            schemes: Default::default(),
            support: super::schemes::SchemeSupport {
                symmetric: integ.qf.is_symmetric(),
                value_term: integ.qf.modes().value,
                per_cell: integ.passive.per_cell(),
            },
            tensor_dims: tensor.as_ref().map(|t| (t.n1, t.nf)),
            tensor_reals: be.upload(tensor.as_ref().map_or(&[0.0][..], |t| &t.reals[..]))?,
            tensor_ints: be.upload(tensor.as_ref().map_or(&[0u32][..], |t| &t.ints[..]))?,
        })
    }

    /// New passive data (coefficients) for the next assembly; the variant must not change (a
    /// per-point field where there were per-cell ones changes it: rebuild instead).
    pub fn update_passive(&mut self, be: &CudaBackend, integ: &ElementIntegrator) -> Result<()> {
        if variant_of(integ, self.variant.tuning)? != self.variant {
            return Err(Error::invalid("the new passive data changes the GPU assembly variant: build the operator anew"));
        }
        let (coef, meta) = integ.passive.device_parts();
        self.coef = be.upload_parts(&coef)?;
        self.meta = be.upload(&meta)?;
        Ok(())
    }

    pub fn num_cells(&self) -> usize {
        self.ncells
    }

    /// Uploads the sparsity `pattern` (from [`crate::operator::assemble::sparsity`]) and finds the
    /// CSR position of every element entry on the device. `colors` (cells per color, from
    /// [`crate::operator::coloring::cell_colors`]) is needed for [`Scatter::Colored`].
    pub fn csr_target(&self, be: &CudaBackend, pattern: &CsrMatrix, scatter: Scatter, colors: Option<&[Vec<u32>]>) -> Result<CsrTarget> {
        if pattern.nrows != self.ndofs || pattern.ncols != self.ndofs {
            return Err(Error::dim("GPU assembly pattern", self.ndofs, pattern.nrows));
        }
        // Values zeroed on the device: the host pattern's zeros are not uploaded.
        let matrix = DeviceCsr::pattern_from_host(be, pattern)?;
        self.target_on(be, matrix, Some(pattern), scatter, colors)
    }

    /// [`Self::csr_target`] for a pattern already on the device (`pattern_cuda`); `host` is the
    /// same pattern on the host, which the patch scatter and Robin terms need.
    pub(crate) fn target_on(&self, be: &CudaBackend, matrix: DeviceCsr, host: Option<&CsrMatrix>, scatter: Scatter, colors: Option<&[Vec<u32>]>) -> Result<CsrTarget> {
        let v = &self.variant;
        if matrix.nrows() != self.ndofs {
            return Err(Error::dim("GPU assembly pattern", self.ndofs, matrix.nrows()));
        }
        let needs_host = !self.robin.is_empty() || scatter == Scatter::Patch;
        let pattern = match host {
            Some(p) => Some(p),
            None if needs_host => return Err(Error::invalid("the patch scatter and Robin terms need the host pattern")),
            None => None,
        };
        if self.has_signs != 0 && matches!(scatter, Scatter::Patch | Scatter::Rows) {
            return Err(Error::Unsupported(format!(
                "the `{scatter:?}` GPU scatter with a hierarchical basis: use atomic or colored"
            )));
        }
        let mut kpos = be.alloc::<u16>(self.ncells * v.nloc * v.nloc)?;
        let mut missing = be.upload(&[0u32])?;
        let work = (self.ncells * v.nloc * v.nloc) as u64;
        let nc = self.ncells as u64;
        if work > 0 {
            launch!(be, &self.kernels.positions, be.grid(work);
                &nc, &self.cell_nodes, &matrix.row_ptr, &matrix.col_idx, &mut kpos, &mut missing)?;
        }
        let missing = be.download(&missing)?[0];
        if missing > 0 {
            return Err(Error::invalid(format!(
                "the CSR pattern lacks {missing} couplings of the mesh's cells (not built by `sparsity` for this space?)"
            )));
        }
        let (idx, vals) = match pattern {
            Some(p) => self.robin_csr_entries(p)?,
            None => (Vec::new(), Vec::new()),
        };
        let node_cells = match scatter {
            Scatter::Rows => {
                if self.kernels.rows.is_none() {
                    return Err(Error::Unsupported(
                        "row assembly needs simplices with coefficients constant per cell (the reference-tensor path): use atomic".into(),
                    ));
                }
                let (ptr, inc) = self.node_cell_map(&be.download(&self.cell_nodes)?)?;
                Some((be.upload(&ptr)?, be.upload(&inc)?))
            }
            _ => None,
        };
        let patches = match scatter {
            Scatter::Patch => {
                let host_kpos = be.download(&kpos)?;
                let order = hilbert_cell_order(&self.mesh);
                let Some(pattern) = pattern else {
                    return Err(Error::invalid("the patch scatter needs the host pattern"));
                };
                let l = PatchLists::build(v, &be.download(&self.cell_nodes)?, &pattern.row_ptr, &host_kpos, pattern.nnz(), order)?;
                let atomic_fraction = l.atomic_fraction();
                Some(DevicePatches {
                    order: be.upload(&l.order)?,
                    ptr: be.upload(&l.ptr)?,
                    pos: be.upload(&l.pos)?,
                    tpos: be.upload(&l.tpos)?,
                    slice_ptr: be.upload(&l.slice_ptr)?,
                    slice_base: be.upload(&l.slice_base)?,
                    slots: be.upload(&l.slots)?,
                    atomic_fraction,
                })
            }
            _ => None,
        };
        let colors = match (scatter, colors) {
            (Scatter::Atomic | Scatter::Rows | Scatter::Patch, _) => Vec::new(),
            (Scatter::Colored, Some(c)) => c.iter().map(|cells| Ok((cells.len(), be.upload(cells)?))).collect::<Result<_>>()?,
            (Scatter::Colored, None) => return Err(Error::invalid("colored GPU assembly needs the cell colors")),
        };
        Ok(CsrTarget { matrix, kpos, robin_idx: be.upload(&idx)?, robin_vals: be.upload(&vals)?, colors, node_cells, patches, scatter })
    }

    /// For every node, the incidences `c·nloc + i` of the cells around it (a counting sort of the
    /// dof map).
    fn node_cell_map(&self, cell_nodes: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
        if cell_nodes.len() > u32::MAX as usize {
            return Err(Error::Unsupported(format!("{} cell-node incidences exceed 32 bits", cell_nodes.len())));
        }
        let nnodes = self.ndofs / self.variant.ncomp;
        let mut ptr = vec![0u32; nnodes + 1];
        for &n in cell_nodes {
            ptr[n as usize + 1] += 1;
        }
        for i in 0..nnodes {
            ptr[i + 1] += ptr[i];
        }
        let mut fill = ptr.clone();
        let mut inc = vec![0u32; cell_nodes.len()];
        for (k, &n) in cell_nodes.iter().enumerate() {
            inc[fill[n as usize] as usize] = k as u32;
            fill[n as usize] += 1;
        }
        Ok((ptr, inc))
    }

    /// CSR positions and values of the host-integrated Robin entries.
    fn robin_csr_entries(&self, a: &CsrMatrix) -> Result<(Vec<u64>, Vec<f64>)> {
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        let nd = self.variant.elem_size();
        for (_, dofs, ke) in &self.robin {
            for (r, &row) in dofs.iter().enumerate() {
                for (s, &col) in dofs.iter().enumerate() {
                    let cols = &a.col_idx[a.row_ptr[row]..a.row_ptr[row + 1]];
                    let k = cols.binary_search(&(col as u32)).map_err(|_| {
                        Error::invalid(format!("the CSR pattern lacks the Robin coupling ({row}, {col})"))
                    })?;
                    idx.push((a.row_ptr[row] + k) as u64);
                    vals.push(ke[r * nd + s]);
                }
            }
        }
        Ok((idx, vals))
    }

    /// Sums the element matrices into `target`'s values (zeroed first) and adds the Robin terms.
    pub fn assemble_into(&self, be: &CudaBackend, target: &mut CsrTarget) -> Result<()> {
        let scheme = self.variant.tuning.integration;
        if scheme != Integration::Default {
            // The seed's way: every element matrix stored (scheme III's packed), then summed.
            let storage = self.storage(scheme);
            let mut mats = be.alloc::<f64>(self.ncells * storage.doubles(self.variant.elem_size()))?;
            self.scheme_matrices_into(be, scheme, &mut mats)?;
            return self.scatter_matrices(be, &mats, storage, target);
        }
        be.zero_slice(&mut target.matrix.values)?;
        let CsrTarget { matrix, kpos, colors, scatter, node_cells, patches, .. } = target;
        match scatter {
            Scatter::Patch => {
                let (Some(k), Some(l)) = (&self.kernels.patches, patches.as_ref()) else {
                    return Err(Error::invalid("patch assembly target without its patch lists"));
                };
                let nc = self.ncells as u64;
                let npatches = (l.ptr.len() - 1) as u32;
                if npatches > 0 {
                    let cfg = LaunchConfig { grid_dim: (npatches.min(1 << 20), 1, 1), ..be.grid(1) };
                    launch!(be, k, cfg; &nc, &l.order, &self.cell_verts, &self.coords, &self.tab, &self.coef, &self.meta,
                        &l.ptr, &l.slice_ptr, &l.slice_base, &l.pos, &l.tpos, &l.slots, &mut matrix.values)?;
                }
            }
            Scatter::Rows => {
                let (Some(k), Some((ptr, inc))) = (&self.kernels.rows, node_cells.as_ref()) else {
                    return Err(Error::invalid("row assembly target without its node-to-cell map"));
                };
                let nn = (ptr.len() - 1) as u64;
                if nn > 0 {
                    launch!(be, k, be.grid(nn); &nn, ptr, inc, &self.cell_verts, &self.coords, &self.tab,
                        &self.coef, &self.meta, &matrix.row_ptr, &*kpos, &mut matrix.values)?;
                }
            }
            Scatter::Atomic => {
                let nc = self.ncells as u64;
                self.launch_assemble(be, nc, None, 0, &matrix.row_ptr, kpos, &mut matrix.values)?
            }
            Scatter::Colored => {
                for (n, cells) in colors.iter() {
                    self.launch_assemble(be, *n as u64, Some(cells), 1, &matrix.row_ptr, kpos, &mut matrix.values)?;
                }
            }
        }
        self.add_robin_values(be, target)
    }

    /// Adds the host-integrated Robin entries to `target`'s values.
    pub(super) fn add_robin_values(&self, be: &CudaBackend, target: &mut CsrTarget) -> Result<()> {
        let n = target.robin_idx.len() as u64;
        if n > 0 {
            launch!(be, &self.kernels.add_at, be.grid(n); &n, &target.robin_idx, &target.robin_vals, &mut target.matrix.values)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch_assemble(
        &self,
        be: &CudaBackend,
        ncells: u64,
        cells: Option<&CudaSlice<u32>>,
        mode: i32,
        row_ptr: &CudaSlice<u32>,
        kpos: &CudaSlice<u16>,
        out: &mut CudaSlice<f64>,
    ) -> Result<()> {
        if ncells == 0 {
            return Ok(());
        }
        // Cells go in tiles of 32, one per warp lane (see the kernel).
        let cfg = be.grid(ncells.div_ceil(32) * 32 * self.variant.threads_per_cell() as u64);
        let k = &self.kernels.assemble;
        match cells {
            Some(list) => launch!(be, k, cfg; &ncells, list, &self.cell_verts, &self.coords, &self.cell_nodes, &self.signs,
                &self.has_signs, &self.tab, &self.coef, &self.meta, &mode, row_ptr, kpos, out),
            None => launch!(be, k, cfg; &ncells, &0u64, &self.cell_verts, &self.coords, &self.cell_nodes, &self.signs,
                &self.has_signs, &self.tab, &self.coef, &self.meta, &mode, row_ptr, kpos, out),
        }
    }

    /// [`Self::element_matrices`] copied to the host (tests compare them with the CPU's).
    pub fn element_matrices_to_host(&self, be: &CudaBackend) -> Result<Vec<f64>> {
        let (k, storage) = self.element_matrices(be)?;
        super::schemes::full_on_host(be, &k, storage, self.variant.elem_size())
    }

    /// Element matrices of every cell stored on the device (the `element` level), Robin included,
    /// and their layout ([`Self::element_storage`]: scheme III's packed by default).
    pub fn element_matrices(&self, be: &CudaBackend) -> Result<(CudaSlice<f64>, Storage)> {
        let v = &self.variant;
        let nd = v.elem_size();
        let storage = self.element_storage(v.tuning.integration);
        let per_cell = storage.doubles(nd);
        let mut k = be.alloc::<f64>(self.ncells * per_cell)?;
        self.matrices_in(be, v.tuning.integration, storage, &mut k)?;
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        for (c, _, ke) in &self.robin {
            for r in 0..nd {
                // A packed triangle takes the Robin terms on and above the diagonal (symmetric).
                let first = if storage == Storage::Packed { r } else { 0 };
                for s in first..nd {
                    idx.push((c * per_cell + storage.index(nd, r, s)) as u64);
                    vals.push(ke[r * nd + s]);
                }
            }
        }
        let n = idx.len() as u64;
        if n > 0 {
            let (idx, vals) = (be.upload(&idx)?, be.upload(&vals)?);
            launch!(be, &self.kernels.add_at, be.grid(n); &n, &idx, &vals, &mut k)?;
        }
        Ok((k, storage))
    }

}

/// The `full` level on the GPU: the CSR matrix assembled there, with what re-assembling it needs.
pub struct GpuFull {
    asm: DeviceAssembler,
    target: CsrTarget,
}

impl GpuFull {
    /// Sparsity on the device ([`super::pattern_cuda`]; on the host where the patch scatter or
    /// Robin terms need it there, or a node has too many neighbours), positions and values on the
    /// device.
    pub fn build(be: &CudaBackend, input: &LevelInput) -> Result<GpuFull> {
        let span = crate::trace::span(|| "full: assembler (variant, tables, coefficients up)".into());
        let asm = DeviceAssembler::new(be, input.integ, input.boundary, input.tuning)?;
        drop(span);
        let space = input.integ.space;
        let scatter = input.tuning.scatter;
        let colors = (scatter == Scatter::Colored).then(|| cell_colors(&space.mesh));
        let on_device = match scatter {
            Scatter::Atomic | Scatter::Colored | Scatter::Rows if asm.robin.is_empty() => {
                let _s = crate::trace::span(|| "full: device pattern".into());
                // Built beside the host's set-up (`FeBackend::overlap_setup`), or now.
                match be.take_pattern(space) {
                    Some(p) => Some(p),
                    None => super::pattern_cuda::device_pattern(be, space, &asm.cell_nodes)?,
                }
            }
            _ => None,
        };
        let span = crate::trace::span(|| "full: positions".into());
        let mut target = match on_device {
            Some(matrix) => asm.target_on(be, matrix, None, scatter, colors.as_deref())?,
            None => asm.csr_target(be, &crate::operator::assemble::sparsity(space)?, scatter, colors.as_deref())?,
        };
        drop(span);
        let span = crate::trace::span(|| "full: element matrices".into());
        asm.assemble_into(be, &mut target)?;
        if crate::trace::enabled() {
            be.synchronize()?;
        }
        drop(span);
        Ok(GpuFull { asm, target })
    }

    /// The kernels and positions, for benchmarks that time re-assembly.
    pub fn parts(&mut self) -> (&DeviceAssembler, &mut CsrTarget) {
        (&self.asm, &mut self.target)
    }
}

impl LevelOperator<CudaBackend> for GpuFull {
    fn apply(&self, be: &CudaBackend, x: &crate::backend::cuda::CudaVector, y: &mut crate::backend::cuda::CudaVector) -> Result<()> {
        self.target.matrix.apply(be, x, y)
    }
    fn node_blocks(&self, be: &CudaBackend) -> Result<crate::backend::cuda::CudaVector> {
        be.matrix_node_blocks(&self.target.matrix, self.asm.variant.ncomp)
    }
    fn matrix(&self) -> Option<&DeviceCsr> {
        Some(&self.target.matrix)
    }
    fn matrix_mut(&mut self) -> Option<&mut DeviceCsr> {
        Some(&mut self.target.matrix)
    }
    fn storage_bytes(&self) -> usize {
        self.target.matrix.nnz() * 12 + (self.target.matrix.nrows() + 1) * 4
    }
    fn includes_boundary(&self) -> bool {
        true
    }
    fn update(&mut self, be: &CudaBackend, input: &LevelInput) -> Result<()> {
        self.asm.update_passive(be, input.integ)?;
        self.asm.assemble_into(be, &mut self.target)
    }
}

/// Compiles the assembly kernel for every element the library has (interval, triangle,
/// quadrilateral, tetrahedron, hexahedron; degrees 1–3) with each physics, for `arch`, with NVRTC
/// only: what CI runs so that no variant a user can reach fails to compile. Returns (variant, PTX
/// bytes).
pub fn compile_variants(arch: &str) -> Result<Vec<(Variant, usize)>> {
    let mut variants = Vec::new();
    for (space, physics) in crate::operator::level::variant_cases()? {
        let integ = ElementIntegrator::new(&space, physics.as_ref(), None)?;
        let v = variant_of(&integ, Tuning::default())?;
        let defines = kernel_defines(&v, &tables(&integ, &v));
        variants.push((v, defines));
    }
    // NVRTC compiles independent programs concurrently.
    variants
        .into_par_iter()
        .map(|(v, defines)| {
            let c = jit::compile_ptx_with(&ASSEMBLY, arch, &defines)?;
            if c.log.to_ascii_lowercase().contains("warning") {
                return Err(Error::invalid(format!("NVRTC warnings in assembly.cu for {v:?}:\n{}", c.log)));
            }
            // The optional entry points exist exactly where the host looks for them.
            let has = |name: &str| c.ptx.contains(&format!(".entry {name}("));
            if has("assemble_rows") != v.reftensor || has("assemble_patches") != patch_cells(v.nloc, v.ncomp, None).is_some() {
                return Err(Error::invalid(format!("assembly.cu for {v:?}: row/patch entry points do not match the variant")));
            }
            Ok((v, c.ptx.len()))
        })
        .collect()
}
