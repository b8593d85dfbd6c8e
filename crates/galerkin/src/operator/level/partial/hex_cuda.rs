//! The matrix-free levels on hexahedra for mass and diffusion on the GPU (`kernels/hex_matfree.cu`):
//! what CEED's bake-off problems measure. A Q×Q slab of threads per element, columns along z in
//! registers, geometry stored as 6 numbers per point (`partial`) or recomputed from the 8 vertices
//! (`none`), collocated Gauss–Lobatto quadrature without the interpolation stages. Other physics
//! and cells take the general kernel of [`super::cuda`].
use super::cuda::{compile_checked, to_u32};
use super::Pointwise;
use crate::backend::cuda::jit::{self, HEX_MATFREE};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::Backend;
use crate::fe::{gauss_legendre, gauss_lobatto};
use crate::mesh::CellType;
use crate::operator::basis::TensorBasis;
use crate::operator::integrate::ElementIntegrator;
use crate::operator::level::{LevelInput, LevelOperator};
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// Most points per axis: a slab of Q×Q threads within one block.
const MAX_Q: usize = 16;

/// The variant of `integ`, when the fast kernel applies: (defines, cells per block, tables).
pub struct HexVariant {
    pub defines: Vec<String>,
    pub epb: usize,
    pub q1: usize,
    /// `B[Q][P] | Dq[Q][Q] | x1d[Q] | w1d[Q] | refv[8][3]`.
    pub tab: Vec<f64>,
    pub nqd: usize,
}

impl HexVariant {
    /// `None` unless the cells are hexahedra with a tensor basis and the physics is exactly mass or
    /// diffusion (one coefficient, the same operator on every component).
    pub fn of(integ: &ElementIntegrator, mode: Pointwise) -> Option<HexVariant> {
        if integ.space.mesh.cell_type != CellType::Hexahedron {
            return None;
        }
        let t = integ.basis.tensor.as_ref()?;
        let kind = match integ.qf.cuda_type().as_str() {
            "Mass" => 0,
            "Diffusion" => 1,
            _ => return None,
        };
        if t.q1d > MAX_Q || t.p1d > t.q1d || t.p1d < 2 {
            return None;
        }
        let (p1, q1) = (t.p1d, t.q1d);
        let x1d: Vec<f64> = (0..q1).map(|i| integ.basis.rule.points[i][0]).collect();
        let w1d = [gauss_legendre(q1), gauss_lobatto(q1)].into_iter().find(|(x, _)| x.iter().zip(&x1d).all(|(a, b)| (a - b).abs() < 1e-14))?.1;
        let collo = p1 == q1 && (0..q1).all(|i| (0..p1).all(|j| (t.b[i * p1 + j] - f64::from(u8::from(i == j))).abs() < 1e-13));
        let mut tab = t.b.clone();
        tab.extend(collocated_derivative(&x1d));
        tab.extend_from_slice(&x1d);
        tab.extend_from_slice(&w1d);
        for v in CellType::Hexahedron.reference_vertices() {
            tab.extend_from_slice(v);
        }
        let epb = (jit::BLOCK_SIZE as usize / (q1 * q1)).max(1);
        let b = |v: bool| usize::from(v);
        let defines = vec![
            format!("P={p1}"),
            format!("Q={q1}"),
            format!("NCOMP={}", integ.space.ncomp),
            format!("KIND={kind}"),
            format!("COLLO={}", b(collo)),
            format!("NONE={}", b(mode == Pointwise::Recomputed)),
            format!("EPB={epb}"),
        ];
        Some(HexVariant { defines, epb, q1, tab, nqd: if kind == 0 { 1 } else { 6 } })
    }
}

/// `D[i][j] = ℓ_j'(x_i)` for the Lagrange polynomials `ℓ_j` through the points `x` (barycentric
/// form): differentiates exactly any polynomial of degree < len(x) sampled at the points.
pub fn collocated_derivative(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let w: Vec<f64> = (0..n).map(|j| 1.0 / (0..n).filter(|&k| k != j).map(|k| x[j] - x[k]).product::<f64>()).collect();
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        let mut diag = 0.0;
        for j in (0..n).filter(|&j| j != i) {
            let v = w[j] / w[i] / (x[i] - x[j]);
            d[i * n + j] = v;
            diag -= v;
        }
        d[i * n + i] = diag;
    }
    d
}

/// The fast matrix-free operator on hexahedra.
pub struct HexMatFree {
    mode: Pointwise,
    apply_k: Kernel,
    diag_k: Kernel,
    setup_k: Kernel,
    ncells: usize,
    ndofs: usize,
    ncomp: usize,
    pd: usize,
    qd: usize,
    q1: usize,
    nqd: usize,
    epb: usize,
    idx: CudaSlice<u32>,
    cell_verts: CudaSlice<u32>,
    coords: CudaSlice<f64>,
    tab: CudaSlice<f64>,
    coef: CudaSlice<f64>,
    meta: CudaSlice<u64>,
    qdata: CudaSlice<f64>,
}

impl HexMatFree {
    /// The fast operator where [`HexVariant::of`] applies, else `None`.
    pub fn try_build(be: &CudaBackend, input: &LevelInput, mode: Pointwise) -> Result<Option<HexMatFree>> {
        let integ = input.integ;
        let Some(v) = HexVariant::of(integ, mode) else { return Ok(None) };
        let Some(t): Option<&TensorBasis> = integ.basis.tensor.as_ref() else { return Ok(None) };
        let module = be.variant_module(&HEX_MATFREE, &v.defines)?;
        let k = |name| Kernel::from_module(&module, name);
        let space = integ.space;
        let mesh = &*space.mesh;
        let pd = space.dofmap.nodes_per_cell;
        let idx = to_u32((0..mesh.num_cells()).flat_map(|c| t.lex_to_dof.iter().map(move |&l| space.dofmap.cell_nodes[c * pd + l])), "node")?;
        let coords: Vec<f64> = mesh.coords.iter().flat_map(|x| x[..3].to_vec()).collect();
        let (coef, meta) = integ.passive.device_layout();
        let mut op = HexMatFree {
            mode,
            apply_k: k("hex_apply")?,
            diag_k: k("hex_diagonal")?,
            setup_k: k("hex_setup")?,
            ncells: mesh.num_cells(),
            ndofs: space.ndofs(),
            ncomp: space.ncomp,
            pd,
            qd: v.q1.pow(3),
            q1: v.q1,
            nqd: v.nqd,
            epb: v.epb,
            idx: be.upload(&idx)?,
            cell_verts: be.upload(&to_u32(mesh.cells.iter().copied(), "vertex")?)?,
            coords: be.upload(&coords)?,
            tab: be.upload(&v.tab)?,
            coef: be.upload(&coef)?,
            meta: be.upload(&meta)?,
            qdata: be.upload(&[0.0])?,
        };
        op.setup(be)?;
        Ok(Some(op))
    }

    fn setup(&mut self, be: &CudaBackend) -> Result<()> {
        if self.mode == Pointwise::Recomputed || self.ncells == 0 {
            return Ok(());
        }
        let npts = (self.ncells * self.qd) as u64;
        let mut qdata = be.alloc::<f64>(self.ncells * self.qd * self.nqd)?;
        let nc = self.ncells as u64;
        launch!(be, &self.setup_k, be.grid(npts); &nc, &self.cell_verts, &self.coords, &self.tab, &self.coef, &self.meta, &mut qdata)?;
        self.qdata = qdata;
        Ok(())
    }
}

impl LevelOperator<CudaBackend> for HexMatFree {
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("matrix-free apply (hexahedra)", self.ndofs, &[x, y])?;
        if !be.owns(&self.tab) {
            return Err(Error::invalid("a matrix-free operator used with a CUDA backend other than the one that built it"));
        }
        be.zero_slice(&mut y.data)?;
        if self.ncells == 0 {
            return Ok(());
        }
        let rounds = self.ncells.div_ceil(self.epb).min(1 << 20) as u32;
        let q = self.q1 as u32;
        let cfg = LaunchConfig { grid_dim: (rounds, 1, 1), block_dim: (q, q, self.epb as u32), shared_mem_bytes: 0 };
        let nc = self.ncells as u64;
        launch!(be, &self.apply_k, cfg; &nc, &self.idx, &self.cell_verts, &self.coords, &self.tab, &self.coef, &self.meta,
            &self.qdata, &x.data, &mut y.data)
    }
    fn node_blocks(&self, be: &CudaBackend) -> Result<CudaVector> {
        let mut blocks = be.zeros(self.ndofs * self.ncomp)?;
        if self.ncells > 0 {
            let nc = self.ncells as u64;
            launch!(be, &self.diag_k, be.grid(nc * self.pd as u64); &nc, &self.idx, &self.cell_verts, &self.coords, &self.tab,
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

/// Compiles `hex_matfree.cu` for every variant the bake-off reaches (Q1–Q8, mass and diffusion,
/// 1 and 3 components, Gauss q = p + 2 and p + 1 (the default) and collocated Gauss–Lobatto
/// q = p + 1, partial and none)
/// with NVRTC only, for the degrees `p` in `degrees`; warnings are errors.
pub fn compile_variants(arch: &str, degrees: std::ops::RangeInclusive<usize>) -> Result<Vec<(String, usize)>> {
    let mut all = Vec::new();
    for p in degrees {
        for (q, collo) in [(p + 2, false), (p + 1, false), (p + 1, true)] {
            for (kind, ncomp) in [(0, 1), (1, 1), (0, 3), (1, 3)] {
                for none in [0, 1] {
                    let epb = (jit::BLOCK_SIZE as usize / (q * q)).max(1);
                    all.push(vec![
                        format!("P={}", p + 1),
                        format!("Q={q}"),
                        format!("NCOMP={ncomp}"),
                        format!("KIND={kind}"),
                        format!("COLLO={}", usize::from(collo)),
                        format!("NONE={none}"),
                        format!("EPB={epb}"),
                    ]);
                }
            }
        }
    }
    compile_checked(&HEX_MATFREE, arch, all)
}
