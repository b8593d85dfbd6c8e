//! Geometric multigrid for the Newton systems of a hyperelastic problem on a generated box of
//! tetrahedra (`[solver] preconditioner = "multigrid"`): levels P_k(n) → P1(n) → P1(⌈n/2⌉) → …
//! down to at most `coarse_dofs` unknowns, transfers by P1 interpolation in the Kuhn lattice
//! ([`super::lattice`]; for odd n the levels are not nested and the interpolation still makes a
//! good preconditioner), coarse operators by rediscretisation: the Jacobian assembled on each
//! coarse mesh (the same CPU or GPU assembly, degree 1) at the state carried down to it (the
//! finer field at the coarse vertices: injection where they coincide), every Newton step, with the
//! file's `[physics] quadrature` rule on each level (on P1 tetrahedra F is constant per cell, so
//! the stiffness rule's one point integrates the level exactly, as the full rule's four do). The
//! V-cycle itself is [`crate::solver::precond::Multigrid`], written once over the backend.
//! Block Jacobi's CG iterations grow with the mesh (5 000–6 000 per tight solve at 10⁷ unknowns,
//! BENCHMARKS.md, seventh pass); the V-cycle's do not.
use super::config::HyperFile;
use super::element::HyperElement;
use super::lattice::{expand, Lattice};
use super::loads::FollowerPressure;
use super::newton::HyperSystem;
use super::run::Prepared;
use crate::backend::{Backend, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::mesh::{generate::box_mesh, CellType};
use crate::problem::config::Generator;
use crate::solver::precond::multigrid::{CoarseLevel, HostCholesky, Multigrid, SmootherOptions};
use crate::solver::precond::{BlockJacobi, Jacobi};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Deserialize;
use std::sync::Arc;

/// `[solver.multigrid]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MgConfig {
    /// The most levels, the finest included (0: as many as it takes to reach `coarse_dofs`).
    pub levels: usize,
    /// Chebyshev smoothing degree (degree − 1 operator applications before and after the coarse
    /// correction).
    pub smoother_degree: usize,
    /// The smoothed part of the spectrum of D⁻¹A: [λmax/ratio, λmax].
    pub smoother_ratio: f64,
    /// D: the diagonal (`jacobi`) or the node blocks (`block-jacobi`, 3×3 in 3D), which keep the
    /// coupling of a node's components that the fibre law's anisotropy makes strong.
    pub smoother: MgSmoother,
    /// Coarsening stops at a level of at most this many unknowns (solved by a sparse Cholesky).
    pub coarse_dofs: usize,
}

impl Default for MgConfig {
    fn default() -> Self {
        MgConfig { levels: 0, smoother_degree: 3, smoother_ratio: 10.0, smoother: MgSmoother::Jacobi, coarse_dofs: 4000 }
    }
}

/// The scaling `D⁻¹` of the Chebyshev smoother (`[solver.multigrid] smoother`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MgSmoother {
    Jacobi,
    BlockJacobi,
}

impl MgConfig {
    fn check(&self) -> Result<()> {
        if self.smoother_degree == 0 {
            return Err(Error::config("solver.multigrid.smoother_degree", "must be at least 1"));
        }
        if !(self.smoother_ratio > 1.0) {
            return Err(Error::config("solver.multigrid.smoother_ratio", "must exceed 1"));
        }
        if self.levels == 1 {
            return Err(Error::config("solver.multigrid.levels", "must be 0 (automatic) or at least 2"));
        }
        Ok(())
    }
}

/// A coarse level: its assembly, Jacobian, constraints, state, and transfers.
struct Level<B: Backend, S> {
    sys: S,
    k: B::Matrix,
    mask: B::Vector,
    zeros: B::Vector,
    u: B::Vector,
    r: B::Vector,
    /// This level → the finer one, Dirichlet rows and columns dropped.
    prolong: B::Matrix,
    /// Its transpose.
    restrict: B::Matrix,
    /// The finer level's state → this level's (interpolation at the coarse vertices).
    inject: B::Matrix,
}

/// A [`HyperSystem`] with the multigrid hierarchy: the fine system does the assembly, the levels
/// below it are reassembled for each Newton system by [`HyperSystem::multigrid`].
pub struct MgSystem<B: Backend, S> {
    pub fine: S,
    levels: Vec<Level<B, S>>,
    cfg: MgConfig,
    sizes: Vec<usize>,
}

/// The box of a problem file, if its mesh is one the transfers can locate points in: the `box`
/// generator with tetrahedra (not a Gmsh file, not the `[shell]` map).
fn box_of(f: &HyperFile, prep: &Prepared) -> Result<([usize; 3], [f64; 3], [f64; 3], bool)> {
    let why = "multigrid needs a generated box of tetrahedra ([mesh] generator = \"box\", cell = \"tetrahedron\"): Gmsh meshes and [shell] keep \"block-jacobi\"";
    let m = match (&f.mesh, &f.shell) {
        (Some(m), None) if m.generator == Some(Generator::Box) && m.file.is_none() => m,
        _ => return Err(Error::config("solver.preconditioner", why)),
    };
    let mesh = &prep.el.space.mesh;
    if mesh.cell_type != CellType::Tetrahedron || mesh.dim != 3 || prep.el.dim != 3 {
        return Err(Error::config("solver.preconditioner", why));
    }
    let n = m.n.clone().ok_or_else(|| Error::config("mesh.n", "missing"))?;
    let corner = |v: &Option<Vec<f64>>, d: f64| -> [f64; 3] { v.as_ref().filter(|v| v.len() == 3).map_or([d; 3], |v| [v[0], v[1], v[2]]) };
    Ok(([n[0], n[1], n[2]], corner(&m.lower, 0.0), corner(&m.upper, 1.0), m.reorder.unwrap_or(true)))
}

/// The coarse box sizes below a fine one of `n` cells and degree `degree`.
pub fn level_sizes(n: [usize; 3], degree: usize, cfg: &MgConfig) -> Vec<[usize; 3]> {
    let dofs = |m: [usize; 3]| 3 * (m[0] + 1) * (m[1] + 1) * (m[2] + 1);
    let mut out = Vec::new();
    let mut m = if degree > 1 { n } else { n.map(|k| k.div_ceil(2)) };
    let max = if cfg.levels == 0 { usize::MAX } else { cfg.levels - 1 };
    while out.len() < max {
        if out.last() == Some(&m) {
            break;
        }
        out.push(m);
        if dofs(m) <= cfg.coarse_dofs || m.iter().all(|&k| k == 1) {
            break;
        }
        m = m.map(|k| k.div_ceil(2));
    }
    out
}

impl<B: Backend, S: HyperSystem<B>> MgSystem<B, S> {
    /// The hierarchy below the prepared problem `prep` of file `f`, each coarse level's assembly
    /// made by `make` (the backend's [`HyperSystem`] at degree 1).
    pub fn build(be: &B, f: &HyperFile, prep: &Prepared, fine: S, cfg: &MgConfig, mut make: impl FnMut(&HyperElement) -> Result<S>) -> Result<Self> {
        cfg.check()?;
        let (n, lo, hi, reorder) = box_of(f, prep)?;
        let space = &prep.el.space;
        let degree = space.element.degree();
        let fine_coords = &space.dofmap.node_coords;
        let mut finer = (Lattice::from_nodes(n.map(|k| k * degree), lo, hi, fine_coords)?, fine_coords.clone(), prep.mask.clone());
        let mut levels = Vec::new();
        let mut sizes = vec![space.ndofs()];
        for m in level_sizes(n, degree, cfg) {
            let mut mesh = box_mesh(m[0], m[1], m[2], lo, hi, CellType::Tetrahedron)?;
            if reorder {
                mesh = crate::mesh::ordering::reorder_for_locality(&mesh)?;
            }
            let frames = super::run::frames_of(f, &mesh, None)?;
            let cspace = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 1, 3)?);
            let mask = super::run::dirichlet_mask(f, &cspace)?;
            let coords = cspace.dofmap.node_coords.clone();
            let lat = Lattice::from_nodes(m, lo, hi, &coords)?;
            let nc = coords.len();
            let p = expand(&lat.interpolation(&finer.1, nc)?, 3, Some(&finer.2), Some(&mask));
            let q = expand(&finer.0.interpolation(&coords, finer.1.len())?, 3, None, None);
            let el = HyperElement::with_degree(cspace.clone(), prep.el.law, frames, f.quadrature_degree(&cspace)?)?.plane_stress(prep.el.plane_stress)?;
            let sys = make(&el)?;
            let k = sys.new_matrix(be)?;
            sizes.push(3 * nc);
            levels.push(Level {
                sys,
                k,
                mask: be.from_host(&mask)?,
                zeros: be.zeros(3 * nc)?,
                u: be.zeros(3 * nc)?,
                r: be.zeros(3 * nc)?,
                restrict: be.upload_matrix(&p.transpose())?,
                prolong: be.upload_matrix(&p)?,
                inject: be.upload_matrix(&q)?,
            });
            finer = (lat, coords, mask);
        }
        if levels.is_empty() {
            return Err(Error::config("solver.multigrid.levels", "no coarse level below this mesh"));
        }
        Ok(MgSystem { fine, levels, cfg: cfg.clone(), sizes })
    }

    /// Unknowns per level, the finest first.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The coarse levels' assemblies, the finest of them first.
    pub fn coarse_systems(&self) -> impl Iterator<Item = &S> {
        self.levels.iter().map(|l| &l.sys)
    }

    /// The transfers of coarse level `l` (1 = the first below the finest) on the host:
    /// (prolongation, state injection), for tests.
    pub fn transfers(&self, be: &B, l: usize) -> Result<(CsrMatrix, CsrMatrix)> {
        let lv = self.levels.get(l.wrapping_sub(1)).ok_or_else(|| Error::invalid(format!("no coarse level {l}")))?;
        Ok((be.matrix_to_host(&lv.prolong)?, be.matrix_to_host(&lv.inject)?))
    }

    /// Carries the state `u` down and reassembles every coarse Jacobian (Dirichlet rows and columns
    /// eliminated); the coarsest one's factor.
    fn update(&mut self, be: &B, u: &B::Vector) -> Result<HostCholesky> {
        for l in 0..self.levels.len() {
            let (above, rest) = self.levels.split_at_mut(l);
            let lv = &mut rest[0];
            lv.inject.apply(be, above.last().map_or(u, |a| &a.u), &mut lv.u)?;
            lv.sys.internal(be, &lv.u, &mut lv.r, Some(&mut lv.k))?;
            be.eliminate(&mut lv.k, &mut lv.r, &lv.mask, &lv.zeros)?;
        }
        let last = self.levels.last().ok_or_else(|| Error::invalid("multigrid without levels"))?;
        HostCholesky::new(&be.matrix_to_host(&last.k)?)
    }
}

impl<B: Backend, S: HyperSystem<B>> HyperSystem<B> for MgSystem<B, S> {
    fn ndofs(&self) -> usize {
        self.fine.ndofs()
    }
    fn components(&self) -> usize {
        self.fine.components()
    }
    fn new_matrix(&self, be: &B) -> Result<B::Matrix> {
        self.fine.new_matrix(be)
    }
    fn internal(&mut self, be: &B, u: &B::Vector, r: &mut B::Vector, k: Option<&mut B::Matrix>) -> Result<()> {
        self.fine.internal(be, u, r, k)
    }
    fn set_pressure(&mut self, be: &B, p: &FollowerPressure) -> Result<()> {
        self.fine.set_pressure(be, p)
    }
    fn add_pressure(&mut self, be: &B, u: &B::Vector, lf: f64, r: &mut B::Vector, k: Option<&mut B::Matrix>) -> Result<()> {
        self.fine.add_pressure(be, u, lf, r, k)
    }
    /// The V-cycle for the eliminated Jacobian `k` at state `u`. The coarse levels lack the
    /// follower pressure's terms (a preconditioner still); where a coarse state inverts an element
    /// or the coarsest Jacobian is indefinite (an overshooting iterate), `Err`: the caller falls
    /// back to block Jacobi for this system.
    fn multigrid<'s>(&'s mut self, be: &B, u: &B::Vector, k: &'s B::Matrix) -> Result<Option<Box<dyn LinearOperator<B> + 's>>>
    where
        B: 's,
    {
        let coarse = self.update(be, u)?;
        let me: &'s Self = self;
        let comps = me.fine.components();
        let scaling = |k: &B::Matrix| -> Result<Box<dyn LinearOperator<B> + 's>> {
            Ok(match me.cfg.smoother {
                MgSmoother::Jacobi => Box::new(Jacobi::new(be, &be.matrix_diagonal(k)?)?),
                MgSmoother::BlockJacobi => Box::new(BlockJacobi::new(be, comps, be.matrix_node_blocks(k, comps)?)?),
            })
        };
        let levels = me
            .levels
            .iter()
            .map(|lv| Ok(CoarseLevel { a: &lv.k as &dyn LinearOperator<B>, scaling: scaling(&lv.k)?, prolong: &lv.prolong as &dyn LinearOperator<B>, restrict: &lv.restrict as &dyn LinearOperator<B> }))
            .collect::<Result<Vec<_>>>()?;
        let sm = SmootherOptions { degree: me.cfg.smoother_degree, ratio: me.cfg.smoother_ratio };
        let mg = Multigrid::new(be, k, scaling(k)?, levels, Box::new(coarse), sm)?;
        Ok(Some(Box::new(mg)))
    }
}
