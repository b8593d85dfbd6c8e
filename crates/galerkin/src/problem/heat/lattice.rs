//! The θ-method time loop on a generated box at the `none` level built straight from the box
//! ([`crate::operator::level::none::direct`]): no mesh, no dof map, so 5·10⁷ unknowns and more fit
//! and start in seconds. The same steps as [`super::HeatStepper`] with zero Dirichlet temperature
//! on the named sides and the other sides insulated (no loads): `rhs = mask∘((M/Δt − (1−θ)K) Tⁿ)`,
//! Jacobi-PCG on the masked `M/Δt + θK` started from `Tⁿ`, then `Tⁿ⁺¹ = mask∘T` — the same
//! operators, iterations and temperatures as the stepper on the recognised mesh (tests/heat_lattice.rs).
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, Cpu, LinearOperator};
use crate::operator::level::none::direct::LatticeBox;
use crate::operator::level::none::grid::{CpuGrid, GridData};
use crate::operator::level::none::grid_cuda::{DeviceGrid, KernelChoice};
use crate::operator::level::LevelOperator;
use crate::linalg::CsrMatrix;
use crate::solver::{jacobi_cg, Jacobi, KrylovOptions};
use super::loads::Schedule;
use crate::{Error, Result};

/// A backend that can hold a lattice operator built outside the mesh path.
pub trait LatticeBackend: Backend {
    fn lattice_operator(&self, g: GridData) -> Result<Box<dyn LevelOperator<Self>>> {
        self.lattice_operator_with(g, None)
    }
    /// With the GPU apply kernel chosen ([`KernelChoice`]; the CPU has one).
    fn lattice_operator_with(&self, g: GridData, choice: KernelChoice) -> Result<Box<dyn LevelOperator<Self>>>;
}

impl LatticeBackend for Cpu {
    fn lattice_operator_with(&self, g: GridData, _choice: KernelChoice) -> Result<Box<dyn LevelOperator<Cpu>>> {
        Ok(Box::new(CpuGrid(g)))
    }
}

impl LatticeBackend for CudaBackend {
    fn lattice_operator_with(&self, g: GridData, choice: KernelChoice) -> Result<Box<dyn LevelOperator<CudaBackend>>> {
        Ok(Box::new(DeviceGrid::from_data_with(self, g, choice)?))
    }
}

/// The masked operator `M A M + (I − M)` of a lattice level (one fused pass, with CG's p·q and the
/// lattice's PCG loop where the backend has them), plus `θ M F M` where Robin sides are kept as a
/// face matrix beside the lattice (then unfused; [`LatticeHeat::new_robin`] puts them inside).
struct Masked<'a, B: Backend> {
    level: &'a dyn LevelOperator<B>,
    mask: &'a B::Vector,
    n: usize,
    face: Option<(&'a RobinFaces<B>, f64)>,
}

/// Robin face terms on box sides, `F = Σ h ∫ φᵢ φⱼ ds` (rows only on those sides' nodes): kept as
/// a CSR matrix of the backend, once unmasked (the explicit operator, the lifting) and once with
/// the Dirichlet rows and columns removed (the implicit solve), and a scratch vector.
pub struct RobinFaces<B: Backend> {
    plain: B::Matrix,
    masked: B::Matrix,
    scratch: std::sync::Mutex<B::Vector>,
}

impl<B: Backend> RobinFaces<B> {
    /// `y += a F x` (masked: `a M F M x`).
    fn add(&self, be: &B, a: f64, x: &B::Vector, y: &mut B::Vector, masked: bool) -> Result<()> {
        let mut tmp = self.scratch.lock().map_err(|_| Error::invalid("lattice heat face scratch poisoned"))?;
        (if masked { &self.masked } else { &self.plain }).apply(be, x, &mut *tmp)?;
        be.axpy(a, &*tmp, y)
    }
}

impl<B: Backend> LinearOperator<B> for Masked<'_, B> {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        if !self.level.apply_masked(be, x, y, self.mask)? {
            return Err(Error::invalid("lattice heat: the level has no masked apply"));
        }
        match self.face {
            Some((f, a)) => f.add(be, a, x, y, true),
            None => Ok(()),
        }
    }
    fn apply_dot(&self, be: &B, x: &B::Vector, y: &mut B::Vector, mask: Option<&B::Vector>, partials: &mut B::Vector) -> Result<Option<usize>> {
        match mask {
            None if self.face.is_none() => self.level.apply_dot(be, x, y, Some(self.mask), partials),
            _ => Ok(None),
        }
    }
    fn pcg_fused(&self, be: &B, x: &mut B::Vector, w: &mut crate::backend::PcgWork<'_, B>, k: usize, mask: Option<&B::Vector>) -> Result<bool> {
        match mask {
            None if self.face.is_none() => self.level.pcg_fused(be, x, w, k, Some(self.mask)),
            _ => Ok(false),
        }
    }
}

/// Material of a lattice heat problem: volumetric heat capacity ρc and conductivity k.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatticeMaterial {
    pub rhoc: f64,
    pub k: f64,
}

/// The two step operators of a θ-step on a lattice box, built once.
pub struct LatticeHeat<'b, B: LatticeBackend> {
    be: &'b B,
    implicit: Box<dyn LevelOperator<B>>,
    explicit: Box<dyn LevelOperator<B>>,
    mask: B::Vector,
    jacobi: Jacobi<B>,
    /// The masked operator's diagonal (without face terms).
    diag: B::Vector,
    n: usize,
    /// Dirichlet values g (zero on free nodes) and `A g` (the unconstrained implicit operator),
    /// where some value is not zero ([`LatticeHeat::set_dirichlet_values`]).
    lift: Option<(B::Vector, B::Vector)>,
    /// A load vector constant in time ([`LatticeHeat::set_source`]).
    source: Option<B::Vector>,
    /// Load vectors weighted per step by their schedule ([`LatticeHeat::add_load`]).
    loads: Vec<(B::Vector, Schedule)>,
    /// Robin face terms ([`LatticeHeat::set_face_terms`]).
    face: Option<RobinFaces<B>>,
    dt: f64,
    theta: f64,
    pub options: KrylovOptions,
}

/// One step of [`LatticeHeat::run_with`]: its PCG iterations and relative residual.
#[derive(Clone, Copy, Debug)]
pub struct LatticeStep {
    pub iterations: usize,
    pub relative_residual: f64,
}

impl<'b, B: LatticeBackend> LatticeHeat<'b, B> {
    /// `material[c]` indexes `materials` for every cell of `bx` (in `box_mesh` order); T = 0 on
    /// `zero_dirichlet` sides, the rest insulated; time step `dt`, `theta` ∈ [½, 1].
    pub fn new(be: &'b B, bx: &LatticeBox, material: Vec<u8>, materials: &[LatticeMaterial], zero_dirichlet: &[&str], dt: f64, theta: f64) -> Result<Self> {
        Self::new_with(be, bx, material, materials, zero_dirichlet, dt, theta, None)
    }

    /// [`LatticeHeat::new`] with the GPU apply kernel chosen (tests run the tiles and the marching
    /// apply with its fused PCG at sizes where the default would not take it).
    #[allow(clippy::too_many_arguments)]
    pub fn new_with(be: &'b B, bx: &LatticeBox, material: Vec<u8>, materials: &[LatticeMaterial], zero_dirichlet: &[&str], dt: f64, theta: f64, choice: KernelChoice) -> Result<Self> {
        Self::new_robin(be, bx, material, materials, zero_dirichlet, &[0.0; 6], dt, theta, choice)?
            .ok_or_else(|| Error::invalid("lattice heat: no face terms yet the lattice declined"))
    }

    /// [`LatticeHeat::new_with`] with Robin convection `h[s]` on box side s ([`crate::operator::level::none::direct::SIDES`]
    /// order; 0: none) inside the lattice kernels: both step operators take `θ h M_face` and
    /// `(θ−1) h M_face` in their element matrices ([`GridData::from_box_with_faces`]), so the
    /// solve keeps the marching apply's fused p·q and PCG loop and no face matrix is stored. `None`
    /// where the face materials do not fit the byte per cell (then [`LatticeHeat::set_face_terms`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new_robin(be: &'b B, bx: &LatticeBox, material: Vec<u8>, materials: &[LatticeMaterial], zero_dirichlet: &[&str], h: &[f64; 6], dt: f64, theta: f64, choice: KernelChoice) -> Result<Option<Self>> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::invalid(format!("time step `dt` must be positive and finite (got {dt})")));
        }
        if !(0.5..=1.0).contains(&theta) {
            return Err(Error::invalid(format!("`theta` must lie in [0.5, 1] (got {theta})")));
        }
        if let Some((m, v)) = materials.iter().enumerate().find(|(_, v)| !(v.rhoc > 0.0 && v.k > 0.0 && v.rhoc.is_finite() && v.k.is_finite())) {
            return Err(Error::invalid(format!("lattice heat: material {m} has ρc = {}, k = {} (positive and finite)", v.rhoc, v.k)));
        }
        if let Some(s) = h.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::invalid(format!("lattice heat: Robin `h` on side {s} must be finite and non-negative (got {})", h[s])));
        }
        let coef = |s: f64| materials.iter().map(|v| [v.rhoc / dt, s * v.k]).collect::<Vec<_>>();
        let faces = |s: f64| h.map(|v| s * v);
        let Some(explicit_data) = GridData::from_box_with_faces(bx, material.clone(), &coef(theta - 1.0), &faces(theta - 1.0))? else { return Ok(None) };
        let Some(implicit_data) = GridData::from_box_with_faces(bx, material, &coef(theta), &faces(theta))? else { return Ok(None) };
        let n = bx.ndofs();
        let free = bx.free_mask(zero_dirichlet)?;
        let mut implicit = be.lattice_operator_with(implicit_data, choice)?;
        implicit.set_dirichlet(be, &free)?;
        let explicit = be.lattice_operator_with(explicit_data, choice)?;
        let mask = be.from_host(&free)?;
        // Diagonal of the masked operator: a_ii on free rows, 1 on fixed ones.
        let d = implicit.node_blocks(be)?;
        let mut diag = be.from_host(&free.iter().map(|m| 1.0 - m).collect::<Vec<_>>())?;
        let mut free_d = be.zeros(n)?;
        be.pointwise_mult(&mask, &d, &mut free_d)?;
        be.axpy(1.0, &free_d, &mut diag)?;
        let jacobi = Jacobi::new(be, &diag)?;
        let options = KrylovOptions { rtol: 1e-10, atol: 0.0, ..KrylovOptions::default() };
        Ok(Some(LatticeHeat { be, implicit, explicit, mask, jacobi, diag, n, lift: None, source: None, loads: Vec::new(), face: None, dt, theta, options }))
    }

    pub fn ndofs(&self) -> usize {
        self.n
    }

    /// Bytes both step operators keep.
    pub fn storage_bytes(&self) -> usize {
        self.implicit.storage_bytes() + self.explicit.storage_bytes()
    }

    /// Bytes the implicit operator keeps (what each PCG iteration reads besides vectors).
    pub fn implicit_storage_bytes(&self) -> usize {
        self.implicit.storage_bytes()
    }

    /// `y = (M/Δt + θ(K + F)) x`, unconstrained (tests; F: the Robin face terms).
    pub fn apply_implicit(&self, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        self.implicit.apply(self.be, x, y)?;
        match &self.face {
            Some(f) => f.add(self.be, self.theta, x, y, false),
            None => Ok(()),
        }
    }

    /// `y = (M/Δt − (1−θ)(K + F)) x` (tests).
    pub fn apply_explicit(&self, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        self.explicit.apply(self.be, x, y)?;
        match &self.face {
            Some(f) => f.add(self.be, self.theta - 1.0, x, y, false),
            None => Ok(()),
        }
    }

    /// Robin face terms `F = Σ h ∫ φᵢ φⱼ ds` on box sides (an n × n matrix with rows only on those
    /// sides' nodes) beside the lattice: both step operators take `θF` and `(θ−1)F` as the mesh
    /// path's Robin terms, and the Jacobi diagonal `θ Fᵢᵢ` on free rows (a CSR product and an axpy
    /// per apply; [`LatticeHeat::new_robin`] has them inside the lattice instead, where they fit).
    /// Call before [`LatticeHeat::set_dirichlet_values`].
    pub fn set_face_terms(&mut self, f: &CsrMatrix) -> Result<()> {
        let be = self.be;
        if f.nrows != self.n || f.ncols != self.n {
            return Err(Error::dim("lattice heat face terms (rows)", self.n, if f.nrows != self.n { f.nrows } else { f.ncols }));
        }
        if self.lift.is_some() {
            return Err(Error::invalid("lattice heat: face terms after the Dirichlet values (their lifting would miss them)"));
        }
        let free = be.to_host(&self.mask)?;
        let mut masked = f.clone();
        for r in 0..masked.nrows {
            for k in masked.row_ptr[r] as usize..masked.row_ptr[r + 1] as usize {
                if free[r] != 1.0 || free[masked.col_idx[k] as usize] != 1.0 {
                    masked.values[k] = 0.0;
                }
            }
        }
        let mut diag = be.from_host(&masked.diagonal())?;
        be.axpby(1.0, &self.diag, self.theta, &mut diag)?;
        self.jacobi = Jacobi::new(be, &diag)?;
        self.face = Some(RobinFaces { plain: be.upload_matrix(f)?, masked: be.upload_matrix(&masked)?, scratch: std::sync::Mutex::new(be.zeros(self.n)?) });
        Ok(())
    }

    /// A load vector `f` added to each step's right-hand side with weight
    /// `schedule.weight(tⁿ, tⁿ⁺¹, θ)` (flux, laser, Robin ambient; as the mesh path's terms).
    pub fn add_load(&mut self, f: &[f64], schedule: Schedule) -> Result<()> {
        if f.len() != self.n {
            return Err(Error::dim("lattice heat load vector", self.n, f.len()));
        }
        self.loads.push((self.be.from_host(f)?, schedule));
        Ok(())
    }

    /// Temperatures `g` on the fixed nodes (one per node; free nodes' entries are ignored), held
    /// from the first step on, by lifting as [`super::HeatStepper`] does: `rhs = mask∘(b − A g) + g`.
    pub fn set_dirichlet_values(&mut self, g: &[f64]) -> Result<()> {
        if g.len() != self.n {
            return Err(Error::dim("lattice heat Dirichlet values", self.n, g.len()));
        }
        let be = self.be;
        let free = be.to_host(&self.mask)?;
        let fixed: Vec<f64> = g.iter().zip(&free).map(|(&v, &m)| if m == 1.0 { 0.0 } else { v }).collect();
        if let Some(i) = fixed.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(format!("lattice heat: the Dirichlet temperature at node {i} is not finite")));
        }
        if fixed.iter().all(|&v| v == 0.0) {
            self.lift = None;
            return Ok(());
        }
        let g = be.from_host(&fixed)?;
        let mut ag = be.zeros(self.n)?;
        self.apply_implicit(&g, &mut ag)?;
        self.lift = Some((g, ag));
        Ok(())
    }

    /// A load vector constant in time (∫Qφ of a source), added to every step's right-hand side.
    pub fn set_source(&mut self, f: &[f64]) -> Result<()> {
        if f.len() != self.n {
            return Err(Error::dim("lattice heat load vector", self.n, f.len()));
        }
        self.source = Some(self.be.from_host(f)?);
        Ok(())
    }

    /// Advances `t` by `steps` steps; returns the PCG iterations of each.
    pub fn run(&self, t: &mut B::Vector, steps: usize) -> Result<Vec<usize>> {
        Ok(self.run_with(t, steps, |_, _| Ok(()))?.iter().map(|s| s.iterations).collect())
    }

    /// [`LatticeHeat::run`] calling `after(step, T)` after every step (1 for the first).
    pub fn run_with(&self, t: &mut B::Vector, steps: usize, mut after: impl FnMut(usize, &B::Vector) -> Result<()>) -> Result<Vec<LatticeStep>> {
        let be = self.be;
        if be.len(t) != self.n {
            return Err(Error::dim("lattice heat temperature", self.n, be.len(t)));
        }
        let a = Masked { level: &*self.implicit, mask: &self.mask, n: self.n, face: self.face.as_ref().map(|f| (f, self.theta)) };
        let (mut load, mut rhs) = (be.zeros(self.n)?, be.zeros(self.n)?);
        let mut out = Vec::with_capacity(steps);
        for step in 1..=steps {
            self.apply_explicit(t, &mut load)?;
            if let Some(f) = &self.source {
                be.axpy(1.0, f, &mut load)?;
            }
            let (t0, t1) = ((step - 1) as f64 * self.dt, step as f64 * self.dt);
            for (f, schedule) in &self.loads {
                let w = schedule.weight(t0, t1, self.theta);
                if w != 0.0 {
                    be.axpy(w, f, &mut load)?;
                }
            }
            if let Some((_, ag)) = &self.lift {
                be.axpy(-1.0, ag, &mut load)?;
            }
            be.pointwise_mult(&self.mask, &load, &mut rhs)?;
            if let Some((g, _)) = &self.lift {
                be.axpy(1.0, g, &mut rhs)?;
            }
            let stats = jacobi_cg(be, &a, &self.jacobi, &rhs, t, &self.options)?;
            // Fixed nodes exactly at their values (CG leaves them within its tolerance).
            be.pointwise_mult(&self.mask, t, &mut rhs)?;
            if let Some((g, _)) = &self.lift {
                be.axpy(1.0, g, &mut rhs)?;
            }
            std::mem::swap(t, &mut rhs);
            out.push(LatticeStep { iterations: stats.iterations, relative_residual: stats.relative_residual });
            after(step, t)?;
        }
        Ok(out)
    }

    /// `∫ q_m φ` for a source `q[m]` per material (W/m³): the mass operator with coefficient q
    /// applied to ones — exact for a source constant on each cell.
    pub fn load_vector(be: &B, bx: &LatticeBox, material: Vec<u8>, q: &[f64]) -> Result<Vec<f64>> {
        let coef: Vec<[f64; 2]> = q.iter().map(|&v| [v, 0.0]).collect();
        let op = be.lattice_operator(GridData::from_box(bx, material, &coef)?)?;
        let ones = be.from_host(&vec![1.0; bx.ndofs()])?;
        let mut f = be.zeros(bx.ndofs())?;
        op.apply(be, &ones, &mut f)?;
        be.to_host(&f)
    }
}
