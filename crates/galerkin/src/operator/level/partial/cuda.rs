//! The matrix-free apply on the GPU (`partial` and `none`): `kernels/matfree.cu`, compiled per
//! (element, quadrature, physics, level) variant; a block takes a few cells at a time and keeps
//! their fields in shared memory, sum factorized on tensor cells.
use super::{KernelTables, Pointwise};
use crate::backend::cuda::jit::{self, BLOCK_SIZE, MATFREE};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::Backend;
use crate::operator::integrate::ElementIntegrator;
use crate::operator::level::{variant_cases, LevelInput, LevelOperator};
use crate::{Error, Result};
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig};
use rayon::prelude::*;
use std::sync::Arc;

/// Shared memory of one block (the static limit).
const SHARED_DOUBLES: usize = 6144;
/// Shared memory of one block allocated at launch (`DYN_SHARED`): Hopper's 227 KB opt-in.
const DYN_SHARED_DOUBLES: usize = 227 * 1024 / 8;

/// `partial` on affine cells with coefficients constant per cell (simplices): D_ref stored once
/// per cell (the `CELL_D` variant; the CPU does the same).
fn cell_d(integ: &ElementIntegrator, tables: &KernelTables, mode: Pointwise) -> bool {
    mode == Pointwise::Stored && tables.tensor.is_none() && integ.geo.affine && integ.passive.per_cell()
}

/// The thread-per-cell apply (`CELL_APPLY`): affine simplices with coefficients constant per cell
/// whose dofs, result and D_ref fit in registers (scalar P1–P3, vector P1).
fn cell_apply(integ: &ElementIntegrator, tables: &KernelTables) -> bool {
    let (mf, n) = (integ.qf.field_size(), integ.space.ncomp * tables.pd);
    let shared = tables.qd * tables.pd * (tables.dim + 1) + tables.qd;
    tables.tensor.is_none() && integ.geo.affine && integ.passive.per_cell() && 2 * n + mf * mf <= 128 && shared <= SHARED_DOUBLES
}

/// The defines of the variant of `integ` at `mode`, the cells per block round and the bytes of
/// shared memory allocated at launch (0: static).
fn defines(integ: &ElementIntegrator, tables: &KernelTables, mode: Pointwise) -> Result<(Vec<String>, usize, usize)> {
    let (dim, ncomp) = (tables.dim, integ.space.ncomp);
    let mf = integ.qf.field_size();
    let (p, q) = match &tables.tensor {
        Some((p1, q1, _, _)) => (*p1, *q1),
        None => (tables.pd, tables.qd),
    };
    let maxn = if tables.tensor.is_some() { p.max(q).pow(dim as u32) } else { 0 };
    let per_cell = ncomp * tables.pd + mf * tables.qd + 2 * mf * maxn;
    let one = cell_apply(integ, tables);
    if per_cell > DYN_SHARED_DOUBLES && !one {
        return Err(Error::Unsupported(format!(
            "matrix-free GPU apply of cells needing {per_cell} doubles of shared memory (at most {DYN_SHARED_DOUBLES}): use full or element"
        )));
    }
    // Cells beyond the static 48 KB (elasticity from Q5, hierarchical or Lagrange) take one cell a
    // block in shared memory allocated at launch.
    let dynamic = !one && per_cell > SHARED_DOUBLES;
    let epb = if one {
        BLOCK_SIZE as usize
    } else if dynamic {
        1
    } else {
        (BLOCK_SIZE as usize / tables.pd.max(tables.qd).max(1)).clamp(1, SHARED_DOUBLES / per_cell.max(1))
    };
    let b = |v: bool| usize::from(v);
    Ok((
        vec![
            format!("DIM={dim}"),
            format!("NCOMP={ncomp}"),
            format!("QF={}", integ.qf.cuda_type()),
            format!("NV={}", tables.nv),
            format!("TENSOR={}", b(tables.tensor.is_some())),
            format!("NONE={}", b(mode == Pointwise::Recomputed)),
            format!("CELL_D={}", b(cell_d(integ, tables, mode))),
            format!("CELL_APPLY={}", b(one)),
            format!("P={p}"),
            format!("Q={q}"),
            format!("EPB={epb}"),
            format!("SIGNED_IDX={}", b(signed(integ, tables.slot_sign.as_deref()))),
            format!("DYN_SHARED={}", b(dynamic)),
        ],
        epb,
        if dynamic { per_cell * 8 } else { 0 },
    ))
}

/// Whether the kernels read signed restriction words (hierarchical bases: [`super::cell_index`],
/// [`signed_words`]).
pub(super) fn signed(integ: &ElementIntegrator, slot_sign: Option<&[f64]>) -> bool {
    slot_sign.is_some() || integ.space.dofmap.signs.is_some()
}

/// The restriction as the kernels read it with `SIGNED_IDX` (`common.cuh`): the node in the low
/// 30 bits, bit 31 where the sign is −1, bit 30 where it is 0 (a slot the element lacks).
fn signed_words(idx: &[usize], sgn: &[f64]) -> Result<Vec<u32>> {
    idx.iter()
        .zip(sgn)
        .map(|(&node, &s)| {
            if node >= 1 << 30 {
                return Err(Error::Unsupported(format!("node index {node} exceeds the 30 bits of a signed matrix-free restriction on the GPU")));
            }
            Ok(node as u32 | if s < 0.0 { 1 << 31 } else { 0 } | if s == 0.0 { 1 << 30 } else { 0 })
        })
        .collect()
}

/// A matrix-free operator on the GPU: the general kernel of `matfree.cu` or the fast hexahedral
/// one of [`super::hex_cuda`], which differ only in their module, thread block and tables.
pub struct DeviceMatFree {
    mode: Pointwise,
    apply_k: Kernel,
    blocks_k: Kernel,
    setup_k: Kernel,
    ncells: usize,
    ndofs: usize,
    ncomp: usize,
    pd: usize,
    /// Points per cell with their own stored D_ref, and packed entries per point.
    stored_points: usize,
    ns: usize,
    epb: usize,
    /// Threads of one block of the apply (it takes `epb` cells) and its shared bytes allocated at
    /// launch.
    block: (u32, u32, u32),
    dyn_shared: u32,
    idx: CudaSlice<u32>,
    /// The backend's resident mesh ([`crate::backend::cuda::resident`]).
    cell_verts: crate::backend::cuda::Shared<u32>,
    coords: crate::backend::cuda::Shared<f64>,
    tab: CudaSlice<f64>,
    coef: CudaSlice<f64>,
    meta: CudaSlice<u64>,
    /// `partial`: packed D_ref per point (one dummy entry for `none`).
    qdata: CudaSlice<f64>,
}

/// What a kernel variant brings to [`DeviceMatFree::from_variant`].
pub(super) struct Variant<'a> {
    pub module: Arc<CudaModule>,
    /// Names of the apply, node-block (diagonal) and setup kernels.
    pub kernels: [&'static str; 3],
    /// Each cell's nodes in the kernel's local order (`usize::MAX`: an absent tensor slot).
    pub order: &'a [usize],
    /// The sign of each kernel position's function ([`super::tensor_of`]), where not all +1.
    pub slot_sign: Option<&'a [f64]>,
    pub tab: &'a [f64],
    /// Points per cell with their own D_ref (1 when stored per cell).
    pub stored_points: usize,
    pub ns: usize,
    pub epb: usize,
    pub block: (u32, u32, u32),
    /// Shared bytes of the apply allocated at launch (0: static).
    pub dyn_shared: usize,
}

pub(super) fn to_u32(v: impl Iterator<Item = usize>, what: &str) -> Result<Vec<u32>> {
    v.map(|x| u32::try_from(x).map_err(|_| Error::Unsupported(format!("{what} index {x} exceeds 32 bits on the GPU")))).collect()
}

impl DeviceMatFree {
    /// The general kernel, for any cell, physics and basis whose cells fit in shared memory.
    pub fn build(be: &CudaBackend, input: &LevelInput, mode: Pointwise) -> Result<DeviceMatFree> {
        let integ = input.integ;
        if !integ.qf.is_symmetric() {
            return Err(Error::Unsupported("matrix-free levels of a non-symmetric physics: use full or element".into()));
        }
        let tables = KernelTables::new(integ);
        let (defs, epb, dyn_shared) = defines(integ, &tables, mode)?;
        let variant = Variant {
            module: be.variant_module(&MATFREE, &defs)?,
            kernels: [if cell_apply(integ, &tables) { "matfree_apply_cell" } else { "matfree_apply" }, "matfree_node_blocks", "matfree_setup"],
            order: &tables.order,
            slot_sign: tables.slot_sign.as_deref(),
            tab: &tables.device_tab(),
            stored_points: if cell_d(integ, &tables, mode) { 1 } else { tables.qd },
            ns: integ.qf.field_size() * (integ.qf.field_size() + 1) / 2,
            epb,
            block: (BLOCK_SIZE, 1, 1),
            dyn_shared,
        };
        Self::from_variant(be, input, mode, variant)
    }

    /// Uploads the restriction, geometry, tables and coefficients of `input` for `v`'s kernels.
    pub(super) fn from_variant(be: &CudaBackend, input: &LevelInput, mode: Pointwise, v: Variant) -> Result<DeviceMatFree> {
        let integ = input.integ;
        let k = |name| Kernel::from_module(&v.module, name);
        let space = integ.space;
        let mesh = &*space.mesh;
        let pd = v.order.len();
        let idx = match super::cell_index(space, v.order, v.slot_sign) {
            (idx, Some(sgn)) => signed_words(&idx, &sgn)?,
            (idx, None) => to_u32(idx.into_iter(), "node")?,
        };
        let (coords, cell_verts) = be.resident_mesh(&space.mesh)?;
        let (coef, meta) = integ.passive.device_layout();
        let apply_k = k(v.kernels[0])?;
        if v.dyn_shared > 48 * 1024 {
            apply_k.allow_dynamic_shared(v.dyn_shared)?;
        }
        let mut op = DeviceMatFree {
            mode,
            apply_k,
            blocks_k: k(v.kernels[1])?,
            setup_k: k(v.kernels[2])?,
            ncells: mesh.num_cells(),
            ndofs: space.ndofs(),
            ncomp: space.ncomp,
            pd,
            stored_points: v.stored_points,
            ns: v.ns,
            epb: v.epb,
            block: v.block,
            dyn_shared: v.dyn_shared as u32,
            idx: be.upload(&idx)?,
            cell_verts,
            coords,
            tab: be.upload(v.tab)?,
            coef: be.upload(&coef)?,
            meta: be.upload(&meta)?,
            qdata: be.upload(&[0.0])?,
        };
        op.setup(be)?;
        Ok(op)
    }

    /// `partial`: the packed D_ref of every point, by the setup kernel.
    fn setup(&mut self, be: &CudaBackend) -> Result<()> {
        if self.mode == Pointwise::Recomputed || self.ncells == 0 {
            return Ok(());
        }
        let npts = (self.ncells * self.stored_points) as u64;
        let mut qdata = be.alloc::<f64>(self.ncells * self.stored_points * self.ns)?;
        let nc = self.ncells as u64;
        launch!(be, &self.setup_k, be.grid(npts); &nc, &self.cell_verts, &self.coords, &self.tab, &self.coef, &self.meta, &mut qdata)?;
        self.qdata = qdata;
        Ok(())
    }
}

impl LevelOperator<CudaBackend> for DeviceMatFree {
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("matrix-free apply", self.ndofs, &[x, y])?;
        if !be.owns(&self.tab) {
            return Err(Error::invalid("a matrix-free operator used with a CUDA backend other than the one that built it"));
        }
        be.zero_slice(&mut y.data)?;
        if self.ncells == 0 {
            return Ok(());
        }
        let rounds = self.ncells.div_ceil(self.epb).min(1 << 20) as u32;
        let cfg = LaunchConfig { grid_dim: (rounds, 1, 1), block_dim: self.block, shared_mem_bytes: self.dyn_shared };
        let nc = self.ncells as u64;
        launch!(be, &self.apply_k, cfg; &nc, &self.idx, &self.cell_verts, &self.coords, &self.tab, &self.coef, &self.meta,
            &self.qdata, &x.data, &mut y.data)
    }
    fn node_blocks(&self, be: &CudaBackend) -> Result<CudaVector> {
        let mut blocks = be.zeros(self.ndofs * self.ncomp)?;
        if self.ncells > 0 {
            let nc = self.ncells as u64;
            launch!(be, &self.blocks_k, be.grid(nc * self.pd as u64); &nc, &self.idx, &self.cell_verts, &self.coords, &self.tab,
                &self.coef, &self.meta, &self.qdata, &mut blocks.data)?;
        }
        Ok(blocks)
    }
    fn storage_bytes(&self) -> usize {
        let stored = if self.mode == Pointwise::Stored { self.qdata.len() * 8 } else { self.coef.len() * 8 };
        stored + self.idx.len() * 4
    }
    fn includes_boundary(&self) -> bool {
        false
    }
    fn update(&mut self, be: &CudaBackend, input: &LevelInput) -> Result<()> {
        let (coef, meta) = input.integ.passive.device_layout();
        self.coef = be.upload(&coef)?;
        self.meta = be.upload(&meta)?;
        self.setup(be)
    }
}

/// Compiles `matfree.cu` for every element, degree 1–3 and physics at both levels, and hierarchical
/// hexahedra at p = 2 and 6, with NVRTC only (warnings are errors). Returns (description, PTX bytes).
pub fn compile_variants(arch: &str) -> Result<Vec<(String, usize)>> {
    let mut all = Vec::new();
    let mut cases = variant_cases()?;
    // Hierarchical hexahedra (signed tensor slots): Q2, and Q6 with shared memory at launch.
    {
        use crate::physics::{Elasticity, Mass, PointwisePhysics, Sum};
        let mesh = Arc::new(crate::mesh::generate::box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], crate::mesh::CellType::Hexahedron)?);
        for p in [2, 6] {
            let reaction: Box<dyn PointwisePhysics> = Box::new(Sum(vec![Box::new(crate::physics::Diffusion::new(1.0)), Box::new(Mass::new(1.0, 1))]));
            for (ncomp, physics) in [(1, reaction), (3, Box::new(Elasticity::lame(1.0, 1.0, 3)) as Box<dyn PointwisePhysics>)] {
                cases.push((crate::space::FunctionSpace::hierarchical(mesh.clone(), p, crate::fe::ModeSet::Trunk, ncomp)?, physics));
            }
        }
    }
    for (space, physics) in cases {
        let integ = ElementIntegrator::new(&space, physics.as_ref(), None)?;
        let tables = KernelTables::new(&integ);
        for mode in [Pointwise::Stored, Pointwise::Recomputed] {
            let (defs, _, _) = defines(&integ, &tables, mode)?;
            // A coefficient varying inside the cells takes the per-point variant.
            if defs.iter().any(|d| d == "CELL_D=1" || d == "CELL_APPLY=1") {
                all.push(
                    defs.iter()
                        .map(|d| match d.as_str() {
                            "CELL_D=1" => "CELL_D=0".to_string(),
                            "CELL_APPLY=1" => "CELL_APPLY=0".to_string(),
                            _ => d.clone(),
                        })
                        .collect(),
                );
            }
            all.push(defs);
        }
    }
    compile_checked(&MATFREE, arch, all)
}

/// Compiles `src` once per define set with NVRTC only, in parallel; warnings are errors. Returns
/// (description, PTX bytes).
pub(crate) fn compile_checked(src: &jit::KernelSource, arch: &str, variants: Vec<Vec<String>>) -> Result<Vec<(String, usize)>> {
    variants
        .into_par_iter()
        .map(|defs| {
            let what = format!("{} {}", src.file.trim_end_matches(".cu"), defs.join(" "));
            let c = jit::compile_ptx_with(src, arch, &defs)?;
            if c.log.to_ascii_lowercase().contains("warning") {
                return Err(Error::invalid(format!("NVRTC warnings in {what}:\n{}", c.log)));
            }
            Ok((what, c.ptx.len()))
        })
        .collect()
}
