//! Newton's method with a backtracking line search on ‖R‖ and load stepping, written once over the
//! [`Backend`] trait: the CPU and the GPU run the same loop, only the assembly of the internal
//! forces and the Jacobian differs ([`HyperSystem`]).
//!
//! Load step k of N sets the load factor λ = k/N: the Dirichlet values, the dead loads and the
//! pressure are λ times their full value. Each step starts from the last converged state with the
//! new Dirichlet values imposed, and iterates `K du = −R`, `u += t du`. The line search works on
//! the slope of the energy along du, s(t) = du·R(u + t du), not on ‖R‖: bending makes ‖R‖ rise
//! after good Newton steps, and an Armijo test on ‖R‖ then crawls. t = 1 is kept unless it
//! overshoots the minimum along du by much (s(t) < −0.8 s(0) in magnitude), then t moves to the
//! secant zero of s; states where the law is undefined (J ≤ 0) halve t, and so do states whose ‖R‖
//! is more than [`MAX_RESIDUAL_RISE`] times the last: the slope test sees only du's component of R,
//! and a poor direction (an inexact or truncated solve of a nearly singular K) can leave the slope
//! small while ‖R‖ explodes across it (10⁻³ → 10⁶⁴ in one accepted step at 10⁷ unknowns).
//! Constrained rows of K are identity rows and their residual is zero.
use super::loads::FollowerPressure;
use crate::backend::{Backend, LinearOperator};
use crate::solver::precond::{BlockJacobi, Jacobi, SolverBackend};
use crate::solver::{KrylovOptions, SolverMethod};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// What the Newton loop needs from a backend's assembly.
pub trait HyperSystem<B: Backend> {
    fn ndofs(&self) -> usize;
    /// Displacement components per node (3, or 2 in plane strain): the block Jacobi block size.
    fn components(&self) -> usize {
        3
    }
    /// A matrix with the Jacobian's sparsity.
    fn new_matrix(&self, be: &B) -> Result<B::Matrix>;
    /// `r = internal forces at u` and, when given, `k = their Jacobian`.
    fn internal(&mut self, be: &B, u: &B::Vector, r: &mut B::Vector, k: Option<&mut B::Matrix>) -> Result<()>;
    /// Registers the follower pressure (once, before any [`Self::add_pressure`]).
    fn set_pressure(&mut self, be: &B, p: &FollowerPressure) -> Result<()>;
    /// `r += ` the pressure's forces at `u` and load factor `lf`, and `k +=` their Jacobian when
    /// given, on the backend that holds `u`.
    fn add_pressure(&mut self, be: &B, u: &B::Vector, lf: f64, r: &mut B::Vector, k: Option<&mut B::Matrix>) -> Result<()>;
}

/// The linear solver of each Newton step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinearPrecond {
    None,
    Jacobi,
    BlockJacobi,
}

/// How tightly each Newton step's linear system is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forcing {
    /// Every solve to the Krylov rtol.
    #[default]
    Fixed,
    /// Inexact Newton (Eisenstat & Walker 1996, choice 2, as PETSc SNES's `-snes_ksp_ew`): the
    /// first solve of a load step to η₀ = 0.3, then η_k = γ (‖R_k‖/‖R_{k−1}‖)^α with γ = 0.9,
    /// α = 2, safeguarded by γ η_{k−1}^α when that exceeds 0.1, capped at η_max = 0.9 and never
    /// below the Krylov rtol: a far-from-converged Newton step is not worth an exact solve, and the
    /// forcing tightens as ‖R‖ falls, so convergence stays superlinear. Two guards more (see
    /// [`Forcing::eta`]): where ‖R‖ rose, η stays as it was (the rise is the nonlinearity's, not
    /// the solve's, and choice 2 would jump to η_max), and a step that did not make half the
    /// reduction its linear solve promised halves η, which breaks the fixed point of choice 2
    /// where loose solves make slow Newton steps and slow steps keep the solves loose.
    EisenstatWalker,
}

/// Choice 2's constants and bounds (Eisenstat & Walker 1996; PETSc's defaults).
pub const EW_GAMMA: f64 = 0.9;
pub const EW_ALPHA: f64 = 2.0;
pub const EW_ETA0: f64 = 0.3;
pub const EW_ETA_MAX: f64 = 0.9;

impl Forcing {
    /// The linear rtol of the next solve: `prev` = the last η and ‖R‖ (None on a step's first).
    ///
    /// Choice 2 alone has a stagnating fixed point: with ρ = ‖R_k‖/‖R_{k−1}‖ ≈ 0.9 (a rise of ‖R‖
    /// under bending sends η to η_max, and a loosely solved step then reduces ‖R‖ little), γρ² ≈
    /// 0.73 and the safeguard γη² ≥ 0.48 keep η near 0.75 for good, so each step reduces ‖R‖ by
    /// about 10 % (the 3·10⁶ benchmark: 25 iterations, ‖R‖ down 10×). The linear model of an
    /// η-accurate step promises ρ ≤ η; where the step made less than half of that promise,
    /// (1 + η_{k−1})/2 < ρ ≤ 1, the next η is at most η_{k−1}/2 (the safeguard gives way). Where
    /// ‖R‖ rose (ρ > 1: bending, an overshooting first step under a dead load), the last η is kept:
    /// choice 2 would loosen to η_max there, the way into the trap above, and halving would spend
    /// Krylov iterations on steps the nonlinearity spoils anyway.
    pub fn eta(self, floor: f64, rn: f64, prev: Option<(f64, f64)>) -> f64 {
        match (self, prev) {
            (Forcing::Fixed, _) => floor,
            (Forcing::EisenstatWalker, None) => EW_ETA0.max(floor),
            (Forcing::EisenstatWalker, Some((eta_prev, rn_prev))) => {
                let rho = rn / rn_prev;
                if !(rho <= 1.0) {
                    return eta_prev.min(EW_ETA_MAX).max(floor);
                }
                let mut eta = EW_GAMMA * rho.powf(EW_ALPHA);
                let safe = EW_GAMMA * eta_prev.powf(EW_ALPHA);
                if safe > 0.1 {
                    eta = eta.max(safe);
                }
                if !eta.is_finite() {
                    eta = EW_ETA_MAX;
                }
                eta = eta.min(EW_ETA_MAX);
                if !(rho <= 0.5 * (1.0 + eta_prev)) {
                    eta = eta.min(0.5 * eta_prev);
                }
                eta.max(floor)
            }
        }
    }
}

/// The most ‖R‖ may grow in one accepted Newton step before the line search shortens it: bending
/// and the first step under a dead load raise ‖R‖ 7–15× on good steps (BENCHMARKS.md, issue 17);
/// a thousandfold rise is a direction the slope test cannot judge.
pub const MAX_RESIDUAL_RISE: f64 = 1e3;

/// Set (to anything), every Newton iteration is printed on stderr as it completes.
pub const TRACE_ENV: &str = "GALERKIN_NEWTON_TRACE";

/// Newton and linear-solver settings.
#[derive(Clone, Debug)]
pub struct NewtonOptions {
    pub rtol: f64,
    pub atol: f64,
    pub max_iter: usize,
    pub line_search: bool,
    pub forcing: Forcing,
    pub method: SolverMethod,
    pub precond: LinearPrecond,
    pub krylov: KrylovOptions,
}

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            rtol: 1e-9,
            atol: 1e-12,
            max_iter: 25,
            line_search: true,
            forcing: Forcing::Fixed,
            method: SolverMethod::Gmres,
            precond: LinearPrecond::BlockJacobi,
            krylov: KrylovOptions { rtol: 1e-10, atol: 0.0, max_iter: 5000, restart: 100, progress: false },
        }
    }
}

/// One Newton iteration: the residual norm at its start, and the step it took.
#[derive(Clone, Debug, Serialize)]
pub struct NewtonIteration {
    pub residual: f64,
    pub step_length: f64,
    pub linear_iterations: usize,
    /// The linear solve's relative tolerance (the forcing η; 0 for a direct solve).
    pub forcing: f64,
    /// CG met negative curvature (K indefinite at this iterate) and its last iterate was taken
    /// as the direction (truncated Newton–CG).
    pub truncated: bool,
    pub assembly_s: f64,
    pub solve_s: f64,
}

/// One load step.
#[derive(Clone, Debug, Serialize)]
pub struct LoadStepReport {
    pub step: usize,
    pub load_factor: f64,
    /// ‖R‖ at each iterate, the last one converged.
    pub residuals: Vec<f64>,
    pub iterations: Vec<NewtonIteration>,
}

/// The loads and constraints of a problem on backend `B`.
pub struct Loading<'a, B: Backend> {
    /// Dead loads at λ = 1.
    pub dead: B::Vector,
    /// 1 on free dofs, 0 on constrained ones.
    pub mask: B::Vector,
    /// The Dirichlet values at load factor λ on constrained dofs, 0 elsewhere (host).
    pub dirichlet: Box<dyn Fn(f64) -> Vec<f64> + 'a>,
    pub pressure: FollowerPressure,
}

/// Where the time goes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NewtonTimes {
    pub assembly_s: f64,
    pub solve_s: f64,
    pub total_s: f64,
}

/// `r = R(u)` (masked) and, when `k` is given, the Jacobian (not yet eliminated).
#[allow(clippy::too_many_arguments)]
fn residual<B: Backend, S: HyperSystem<B>>(be: &B, sys: &mut S, ld: &Loading<'_, B>, u: &B::Vector, lf: f64, r: &mut B::Vector, mut k: Option<&mut B::Matrix>, tmp: &mut B::Vector) -> Result<f64> {
    sys.internal(be, u, r, k.as_deref_mut())?;
    be.axpy(-lf, &ld.dead, r)?;
    if !ld.pressure.is_empty() {
        sys.add_pressure(be, u, lf, r, k)?;
    }
    be.pointwise_mult(&ld.mask, r, tmp)?;
    be.copy(tmp, r)?;
    let n = be.norm2(r)?;
    Ok(if n.is_finite() { n } else { f64::INFINITY })
}

/// Runs `steps` load steps from `u` (overwritten with the final state); `on_step` sees each
/// converged step's state (output). Fails naming the load step where Newton does not converge.
pub fn solve<B: SolverBackend, S: HyperSystem<B>>(
    be: &B,
    sys: &mut S,
    ld: &Loading<'_, B>,
    u: &mut B::Vector,
    steps: usize,
    opts: &NewtonOptions,
    mut on_step: impl FnMut(&LoadStepReport, &B::Vector) -> Result<()>,
) -> Result<(Vec<LoadStepReport>, NewtonTimes)> {
    // Each iteration on stderr as it completes (for runs that may be cut short, such as the 10⁷
    // benchmark under a time limit).
    let trace = std::env::var_os(TRACE_ENV).is_some();
    let t_all = std::time::Instant::now();
    let n = sys.ndofs();
    if steps == 0 {
        return Err(Error::config("loads.steps", "must be at least 1"));
    }
    if !ld.pressure.is_empty() {
        sys.set_pressure(be, &ld.pressure)?;
    }
    let mut k = sys.new_matrix(be)?;
    let (mut r, mut rt, mut tmp, mut du, mut ut) = (be.zeros(n)?, be.zeros(n)?, be.zeros(n)?, be.zeros(n)?, be.zeros(n)?);
    let zeros = be.zeros(n)?;
    let mut reports = Vec::with_capacity(steps);
    let mut times = NewtonTimes::default();
    for step in 1..=steps {
        let lf = step as f64 / steps as f64;
        // u = mask ⊙ u + λ g
        be.pointwise_mult(&ld.mask, u, &mut tmp)?;
        be.copy(&tmp, u)?;
        let g = be.from_host(&(ld.dirichlet)(lf))?;
        be.axpy(1.0, &g, u)?;
        let fail = |why: String, rep: &LoadStepReport| Error::NotConverged {
            method: "Newton".into(),
            reason: format!("at load step {step} of {steps} (load factor {lf}): {why}"),
            iterations: rep.iterations.len(),
            relative_residual: rep.residuals.last().copied().unwrap_or(f64::NAN) / rep.residuals.first().copied().unwrap_or(1.0).max(f64::MIN_POSITIVE),
            history: rep.residuals.clone(),
        };
        let mut rep = LoadStepReport { step, load_factor: lf, residuals: Vec::new(), iterations: Vec::new() };
        let t = std::time::Instant::now();
        let mut rn = residual(be, sys, ld, u, lf, &mut r, Some(&mut k), &mut tmp)?;
        let mut asm_s = t.elapsed().as_secs_f64();
        times.assembly_s += asm_s;
        if !rn.is_finite() {
            return Err(fail("the Dirichlet values of this step invert an element (J ≤ 0): use more load steps".into(), &rep));
        }
        let r0 = rn;
        let mut last_eta: Option<(f64, f64)> = None;
        loop {
            rep.residuals.push(rn);
            if rn <= opts.atol.max(opts.rtol * r0) {
                break;
            }
            if rep.iterations.len() == opts.max_iter {
                return Err(fail(format!("{} iterations, ‖R‖ = {rn:.3e} from {r0:.3e}", opts.max_iter), &rep));
            }
            // K du = −R with the constrained rows eliminated.
            let ts = std::time::Instant::now();
            be.copy(&r, &mut tmp)?;
            be.scale(-1.0, &mut tmp)?;
            be.eliminate(&mut k, &mut tmp, &ld.mask, &zeros)?;
            be.fill(&mut du, 0.0)?;
            let mut eta = 0.0;
            let mut truncated = false;
            let lin_its = match opts.method {
                SolverMethod::Direct => {
                    be.factorize(&k, false)?.solve(be, &tmp, &mut du)?;
                    1
                }
                m => {
                    eta = opts.forcing.eta(opts.krylov.rtol, rn, last_eta);
                    last_eta = Some((eta, rn));
                    let krylov = KrylovOptions { rtol: eta, ..opts.krylov.clone() };
                    let pc: Box<dyn LinearOperator<B>> = match opts.precond {
                        LinearPrecond::None => Box::new(crate::backend::Identity(n)),
                        LinearPrecond::Jacobi => Box::new(Jacobi::new(be, &be.matrix_diagonal(&k)?)?),
                        LinearPrecond::BlockJacobi => Box::new(BlockJacobi::new(be, sys.components(), be.matrix_node_blocks(&k, sys.components())?)?),
                    };
                    match m.solve(be, &k, pc.as_ref(), &tmp, &mut du, &krylov) {
                        Ok(st) => st.iterations,
                        // Truncated Newton–CG (Nocedal & Wright, Alg. 7.1): where K is indefinite
                        // at this iterate (an overshooting step into a compressed, unstable state),
                        // CG stops at the first direction of negative curvature; its iterate so far
                        // minimises the quadratic model on a subspace where K is positive, so it
                        // is a descent direction for the energy, and the line search takes it.
                        Err(Error::NotConverged { ref reason, iterations, .. })
                            if m == SolverMethod::Cg && reason.starts_with("operator is not positive definite") && iterations > 0 && be.norm2(&du)? > 0.0 =>
                        {
                            truncated = true;
                            iterations
                        }
                        Err(e) => return Err(fail(format!("the linear solve failed: {e}"), &rep)),
                    }
                }
            };
            let solve_s = ts.elapsed().as_secs_f64();
            times.solve_s += solve_s;
            // Line search on the energy slope s(t) = du·R(u + t du) (Crisfield): accept unless the
            // step overshoots the minimum along du by much (s(t)/s(0) < −0.8), then take the
            // secant zero of s; halve where the state is infeasible (J ≤ 0, non-finite) or ‖R‖
            // rose more than MAX_RESIDUAL_RISE times.
            let s0 = be.dot(&du, &r)?;
            let mut step_len = 1.0;
            let ta = std::time::Instant::now();
            let mut tries = 0;
            let accepted = loop {
                tries += 1;
                be.copy(u, &mut ut)?;
                be.axpy(step_len, &du, &mut ut)?;
                let rn_t = residual(be, sys, ld, &ut, lf, &mut rt, Some(&mut k), &mut tmp)?;
                if rn_t.is_finite() && (!opts.line_search || rn_t <= MAX_RESIDUAL_RISE * rn) {
                    if !opts.line_search || s0 >= 0.0 || tries > 8 {
                        break Some(rn_t);
                    }
                    let rho = be.dot(&du, &rt)? / s0;
                    if rho >= -0.8 {
                        break Some(rn_t);
                    }
                    step_len *= (1.0 / (1.0 - rho)).max(0.1);
                } else {
                    if !opts.line_search || tries > 30 {
                        break None;
                    }
                    step_len *= 0.5;
                }
            };
            asm_s = ta.elapsed().as_secs_f64();
            times.assembly_s += asm_s;
            let it = NewtonIteration { residual: rn, step_length: step_len, linear_iterations: lin_its, forcing: eta, truncated, assembly_s: asm_s, solve_s };
            if trace {
                eprintln!("newton {}: {it:?}", rep.iterations.len());
            }
            rep.iterations.push(it);
            let Some(rn_t) = accepted else {
                return Err(fail(format!("every step along the Newton direction from ‖R‖ = {rn:.3e} inverts an element (J ≤ 0) or raises ‖R‖ more than {MAX_RESIDUAL_RISE:e} times"), &rep));
            };
            std::mem::swap(u, &mut ut);
            std::mem::swap(&mut r, &mut rt);
            rn = rn_t;
        }
        on_step(&rep, u)?;
        reports.push(rep);
    }
    times.total_s = t_all.elapsed().as_secs_f64();
    Ok((reports, times))
}
