//! Solving a [`DgProblem`] end to end on one backend: sample the coefficients, assemble, then a
//! direct solve (block Thomas or cyclic reduction on the CPU, cyclic reduction on the GPU, faer's
//! sparse LU as the check) or a Krylov method (CG for SIPG, GMRES/BiCGStab for any method) with
//! none, Jacobi or element block Jacobi preconditioning. Every phase is timed separately.
use super::assemble::assemble;
use super::block_tridiag::{BlockJacobi, BlockTridiag};
use super::cyclic::CyclicReduction;
use super::basis::Tabulation;
use super::problem::{DgProblem, Samples};
use super::thomas::BlockThomas;
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, Cpu, Identity, LinearOperator};
use crate::solver::{DirectSolver, Factorization, Jacobi, SolverMethod, KrylovOptions, SolveStats};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Which direct solver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirectKind {
    /// On the GPU cyclic reduction; on the CPU cyclic reduction with 8 or more threads and at
    /// least 10⁵ elements (where it is faster), block Thomas otherwise.
    #[default]
    Auto,
    Thomas,
    CyclicReduction,
    /// faer's general sparse LU of the same matrix (CPU; for checking).
    FaerLu,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DgPreconditioner {
    None,
    Jacobi,
    /// The inverse of each element's diagonal block.
    #[default]
    BlockJacobi,
}

#[derive(Clone, Debug)]
pub enum DgSolver {
    /// A factorization, then `refine` steps of iterative refinement x += A⁻¹(b − A x) (`None`: one
    /// for cyclic reduction, whose forward error grows faster with N; none otherwise).
    Direct { kind: DirectKind, refine: Option<usize> },
    Krylov { method: SolverMethod, preconditioner: DgPreconditioner, options: KrylovOptions },
}

impl Default for DgSolver {
    fn default() -> Self {
        DgSolver::direct(DirectKind::Auto)
    }
}

impl DgSolver {
    /// A direct solver with its default refinement.
    pub fn direct(kind: DirectKind) -> DgSolver {
        DgSolver::Direct { kind, refine: None }
    }
}

/// What `Auto` means on the CPU for `n` elements.
pub fn cpu_direct(kind: DirectKind, n: usize) -> DirectKind {
    match kind {
        DirectKind::Auto if rayon::current_num_threads() >= 8 && n >= 100_000 => DirectKind::CyclicReduction,
        DirectKind::Auto => DirectKind::Thomas,
        k => k,
    }
}

/// Refinement steps: as asked, or one for cyclic reduction.
pub fn refine_steps(kind: DirectKind, refine: Option<usize>) -> usize {
    refine.unwrap_or(usize::from(kind == DirectKind::CyclicReduction))
}

/// Seconds per phase.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DgTimings {
    /// Coefficients evaluated at the quadrature points (host).
    pub sample: f64,
    /// Host-to-device copies (GPU only).
    pub upload: f64,
    pub assembly: f64,
    /// Factorization or preconditioner set-up.
    pub setup: f64,
    pub solve: f64,
    /// Device-to-host copy of the solution (GPU only).
    pub download: f64,
}

#[derive(Clone, Debug)]
pub struct DgSolution {
    pub coefficients: Vec<f64>,
    /// Direct solves report one "iteration" and the residual of the computed solution.
    pub stats: SolveStats,
    pub solver: String,
    pub preconditioner: String,
    pub backend: String,
    pub timings: DgTimings,
    /// Stored matrix values, 3 N b².
    pub stored: usize,
    /// max |A − Aᵀ| / max |A| of the assembled matrix (CPU assembly only; GPU: `None`).
    pub asymmetry: Option<f64>,
}

/// Refuses CG on a non-symmetric method (it would fail slowly or silently).
fn check_method(p: &DgProblem, solver: &DgSolver) -> Result<()> {
    if let DgSolver::Krylov { method: SolverMethod::Cg, .. } = solver {
        if !p.method.symmetric() {
            return Err(Error::config(
                "solver.method",
                format!("CG needs a symmetric matrix, but {} is not symmetric: use gmres or bicgstab", p.method.name().to_uppercase()),
            ));
        }
    }
    Ok(())
}

/// Residual statistics of a direct solve: ‖b − A x‖ / ‖b‖ must be small, or the solve is an error.
fn direct_stats<B: Backend>(be: &B, a: &dyn LinearOperator<B>, b: &B::Vector, x: &B::Vector, name: &str) -> Result<SolveStats> {
    let mut r = be.zeros(a.nrows())?;
    a.apply(be, x, &mut r)?;
    be.axpby(1.0, b, -1.0, &mut r)?;
    let (rn, bn) = (be.norm2(&r)?, be.norm2(b)?);
    let rel = if bn > 0.0 { rn / bn } else { rn };
    if !(rel <= 1e-6) {
        return Err(Error::Factorization(format!("{name}: the computed solution has relative residual {rel:.3e} (singular or badly conditioned matrix)")));
    }
    Ok(SolveStats { method: name.into(), iterations: 1, residual_history: vec![bn, rn], initial_residual: bn, final_residual: rn, relative_residual: rel })
}

fn krylov<B: Backend>(
    be: &B,
    a: &dyn LinearOperator<B>,
    m: &dyn LinearOperator<B>,
    method: SolverMethod,
    options: &KrylovOptions,
    b: &B::Vector,
) -> Result<(B::Vector, SolveStats)> {
    let mut x = be.zeros(a.nrows())?;
    let stats = method.solve(be, a, m, b, &mut x, options)?;
    Ok((x, stats))
}

fn precond_name(p: DgPreconditioner) -> String {
    serde_json::to_value(p).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// Checks the solver, tabulates the basis and samples the coefficients (timed).
fn prepare(p: &DgProblem, solver: &DgSolver) -> Result<(Tabulation, Samples, DgTimings)> {
    check_method(p, solver)?;
    let tab = p.tabulation()?;
    let clock = Instant::now();
    let samples = p.sample(&tab)?;
    let t = DgTimings { sample: clock.elapsed().as_secs_f64(), ..DgTimings::default() };
    Ok((tab, samples, t))
}

/// Solves on the CPU backend.
pub fn solve_cpu(p: &DgProblem, solver: &DgSolver) -> Result<DgSolution> {
    let (tab, samples, mut t) = prepare(p, solver)?;
    let clock = Instant::now();
    let (m, rhs) = assemble(p, &tab, &samples)?;
    t.assembly = clock.elapsed().as_secs_f64();
    let stored = m.stored();
    let asymmetry = Some(m.asymmetry());
    let (x, stats, name, pre) = match solver {
        DgSolver::Direct { kind, refine } => {
            let kind = cpu_direct(*kind, p.mesh.len());
            let clock = Instant::now();
            let f: Box<dyn Factorization<Cpu>> = match kind {
                DirectKind::Auto | DirectKind::Thomas => Box::new(BlockThomas::factor(&m)?),
                DirectKind::CyclicReduction => Box::new(CyclicReduction::factor(&m)?),
                DirectKind::FaerLu => Box::new(DirectSolver::lu(&m.to_csr()?)?),
            };
            t.setup = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let mut x = vec![0.0; rhs.len()];
            f.solve(&Cpu, &rhs, &mut x)?;
            let (mut r, mut d) = (vec![0.0; rhs.len()], vec![0.0; rhs.len()]);
            for _ in 0..refine_steps(kind, *refine) {
                m.apply(&x, &mut r)?;
                r.iter_mut().zip(&rhs).for_each(|(ri, bi)| *ri = bi - *ri);
                f.solve(&Cpu, &r, &mut d)?;
                x.iter_mut().zip(&d).for_each(|(xi, di)| *xi += di);
            }
            t.solve = clock.elapsed().as_secs_f64();
            let stats = direct_stats(&Cpu, &m, &rhs, &x, &f.name())?;
            (x, stats, f.name(), "none".to_string())
        }
        DgSolver::Krylov { method, preconditioner, options } => {
            let clock = Instant::now();
            let pre: Box<dyn LinearOperator<Cpu>> = match preconditioner {
                DgPreconditioner::None => Box::new(Identity(m.size())),
                DgPreconditioner::Jacobi => Box::new(Jacobi::new(&Cpu, &m.diagonal())?),
                DgPreconditioner::BlockJacobi => Box::new(BlockJacobi::new(&m)?),
            };
            t.setup = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let (x, stats) = krylov(&Cpu, &m, pre.as_ref(), *method, options, &rhs)?;
            t.solve = clock.elapsed().as_secs_f64();
            (x, stats, stats_name(*method), precond_name(*preconditioner))
        }
    };
    Ok(DgSolution { coefficients: x, stats, solver: name, preconditioner: pre, backend: "cpu".into(), timings: t, stored, asymmetry })
}

fn stats_name(m: SolverMethod) -> String {
    serde_json::to_value(m).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// Solves on a GPU: assembly, factorization or Krylov iterations on the device; only the
/// coefficient samples go up and the solution comes down. faer's LU (a check) downloads the matrix.
pub fn solve_cuda(be: &CudaBackend, p: &DgProblem, solver: &DgSolver) -> Result<DgSolution> {
    use super::cuda::{refine_solution, DeviceBlockJacobi, DeviceCyclicReduction, DeviceDg, RefineScratch};
    if let DgSolver::Direct { kind: DirectKind::Thomas, .. } = solver {
        return Err(Error::config("solver.direct", "block Thomas is sequential and runs on the CPU: use cyclic-reduction (or auto) on the GPU"));
    }
    let (tab, samples, mut t) = prepare(p, solver)?;
    let clock = Instant::now();
    let data = DeviceDg::upload(be, p, &tab, &samples)?;
    be.synchronize()?;
    t.upload = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let (m, rhs) = data.assemble(be)?;
    be.synchronize()?;
    t.assembly = clock.elapsed().as_secs_f64();
    let stored = 3 * m.n * m.b * m.b;
    let (x, stats, name, pre) = match solver {
        DgSolver::Direct { kind: DirectKind::FaerLu, .. } => {
            let host = m.to_host(be)?;
            let rhs = be.to_host(&rhs)?;
            let clock = Instant::now();
            let f = DirectSolver::lu(&host.to_csr()?)?;
            t.setup = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let x = f.solve(&rhs)?;
            t.solve = clock.elapsed().as_secs_f64();
            let stats = direct_stats(&Cpu, &host, &rhs, &x, "lu")?;
            let x = be.from_host(&x)?;
            (x, stats, "lu".to_string(), "none".to_string())
        }
        DgSolver::Direct { refine, .. } => {
            // The residual check needs A after the in-place factorization: keep a device copy.
            let copy = m.try_clone(be)?;
            let clock = Instant::now();
            let f = DeviceCyclicReduction::factor_owned(be, m)?;
            t.setup = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let mut x = be.zeros(rhs.len())?;
            f.solve(be, &rhs, &mut x)?;
            let mut scratch = RefineScratch::new(be, rhs.len())?;
            refine_solution(be, &data, &f, &mut x, refine_steps(DirectKind::CyclicReduction, *refine), &mut scratch)?;
            be.synchronize()?;
            t.solve = clock.elapsed().as_secs_f64();
            let stats = direct_stats(be, &copy, &rhs, &x, &f.name())?;
            (x, stats, f.name(), "none".to_string())
        }
        DgSolver::Krylov { method, preconditioner, options } => {
            let clock = Instant::now();
            let pre: Box<dyn LinearOperator<CudaBackend>> = match preconditioner {
                DgPreconditioner::None => Box::new(Identity(m.size())),
                DgPreconditioner::Jacobi => Box::new(Jacobi::new(be, &be.from_host(&m.to_host(be)?.diagonal())?)?),
                DgPreconditioner::BlockJacobi => Box::new(DeviceBlockJacobi::new(be, &m)?),
            };
            be.synchronize()?;
            t.setup = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let (x, stats) = krylov(be, &m, pre.as_ref(), *method, options, &rhs)?;
            be.synchronize()?;
            t.solve = clock.elapsed().as_secs_f64();
            (x, stats, stats_name(*method), precond_name(*preconditioner))
        }
    };
    let clock = Instant::now();
    let coefficients = be.to_host(&x)?;
    t.download = clock.elapsed().as_secs_f64();
    Ok(DgSolution { coefficients, stats, solver: name, preconditioner: pre, backend: format!("cuda ({})", be.device().name), timings: t, stored, asymmetry: None })
}

/// The CPU-assembled system, for callers with their own solver (and for tests).
pub fn system_cpu(p: &DgProblem) -> Result<(BlockTridiag, Vec<f64>)> {
    let tab = p.tabulation()?;
    let s = p.sample(&tab)?;
    assemble(p, &tab, &s)
}
