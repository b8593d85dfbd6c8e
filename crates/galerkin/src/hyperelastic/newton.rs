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
//!
//! Adaptive load stepping: an attempt at a load factor that fails — the iteration limit, a stall
//! ([`STALL_DAMPED`] steps the line search shortened below [`STALL_STEP`] without ‖R‖ halving; at 10⁷ unknowns one
//! load step of the benchmark's full load overshot into states with an indefinite K and crawled
//! with steps of 10⁻³), a failed line search or linear solve, an inverted element — is retried
//! from the last converged state with half the increment (`[loads] cutbacks` halvings at most),
//! and each abandoned attempt is reported with its reason. The stopping test is relative to the
//! step's first residual, ‖R‖ ≤ max(atol, rtol ‖R₀‖): the scale of ‖R‖ depends on the mesh (the
//! entries of a load vector scale with the cell volume: ‖R₀‖ = 1.5·10⁻³ at 10⁵ unknowns of the
//! benchmark, 1.6·10⁻⁴ at 10⁷), the relative test does not; `atol` is a floor for R₀ ≈ 0.
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
    /// The multigrid V-cycle for the eliminated Jacobian `k` at state `u`
    /// ([`super::multigrid::MgSystem`]); `None` where the system has no hierarchy. An `Err` is a
    /// system the hierarchy cannot serve (a coarse state that inverts an element, an indefinite
    /// coarsest Jacobian): that Newton system is solved with block Jacobi instead.
    fn multigrid<'s>(&'s mut self, _be: &B, _u: &B::Vector, _k: &'s B::Matrix) -> Result<Option<Box<dyn LinearOperator<B> + 's>>>
    where
        B: 's,
    {
        Ok(None)
    }
}

/// The linear solver of each Newton step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinearPrecond {
    None,
    Jacobi,
    BlockJacobi,
    /// Geometric multigrid (generated boxes of tetrahedra, [`super::multigrid`]).
    Multigrid,
}

pub use super::forcing::{EwStart, Forcing, EW_ALPHA, EW_ETA_MAX, EW_GAMMA, EW_START, EW_START_TIGHT};

/// The most ‖R‖ may grow in one accepted Newton step before the line search shortens it: bending
/// and the first step under a dead load raise ‖R‖ 7–15× on good steps (BENCHMARKS.md, issue 17);
/// a thousandfold rise is a direction the slope test cannot judge.
pub const MAX_RESIDUAL_RISE: f64 = 1e3;

/// A line-search step shorter than this is a damped step: the Newton model is poor there.
pub const STALL_STEP: f64 = 1.0 / 16.0;
/// Damped steps without progress that make one attempt at a load factor a stall; one along a
/// truncated, negative-curvature direction counts as two (K is indefinite there). The count goes
/// back to zero when an accepted step makes progress ([`STALL_PROGRESS`]): at 10⁶ unknowns the
/// seventh pass's rule (two damped steps, a truncated one alone) abandoned a full-load attempt
/// that Newton would have recovered from (review R7), while at 10⁷ the damped steps never
/// reduced ‖R‖ (steps of 10⁻⁴–10⁻², ‖R‖ flat) and still make a stall.
pub const STALL_DAMPED: usize = 3;
/// Progress, the merit function's meaningful decrease: ‖R‖ below this fraction of its value when
/// the current run of damped steps began.
pub const STALL_PROGRESS: f64 = 0.5;
/// The forcing of a step solved again after the iterate it led to had an indefinite Jacobian
/// (see [`NewtonIteration::rolled_back`]); a step solved at least this tightly is not solved again.
pub const ETA_RESOLVE: f64 = 1e-3;
/// The default of `[loads] cutbacks`: the most halvings of a nominal load increment.
pub const DEFAULT_CUTBACKS: usize = 6;

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
    /// The Eisenstat–Walker forcing's start and its cap while ‖R‖ rises.
    pub ew_start: EwStart,
    /// Where CG meets negative curvature right after a loosely solved step, go back and solve
    /// that step again to [`ETA_RESOLVE`] ([`NewtonIteration::rolled_back`]; `[newton]
    /// resolve_indefinite`, off by default: on the CPU test case it cost iterations).
    pub resolve_indefinite: bool,
    pub method: SolverMethod,
    pub precond: LinearPrecond,
    pub krylov: KrylovOptions,
    /// Adaptive load stepping: an attempt at a load factor that fails (iteration limit, stall,
    /// line-search or linear-solver failure, an inverted element) is retried from the last
    /// converged state with half the load increment, at most this many halvings deep (0: fail at
    /// once, as a fixed load stepping does).
    pub max_cutbacks: usize,
    /// The load path ([`LoadPath`]: first increment, growth, predictor, intermediate tolerance).
    pub path: LoadPath,
    /// The most ‖R‖ may grow in one accepted step before the line search halves it
    /// (`[newton] max_rise`, default [`MAX_RESIDUAL_RISE`]).
    pub max_rise: f64,
}

/// How the load factor travels from 0 to 1 (`[loads]` keys; the defaults are the eighth pass's
/// path: the full nominal increment first, doubling back after every converged step, no
/// predictor, every step converged to the final tolerance).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPath {
    /// Halvings of the nominal increment before the first attempt (`first_halvings`): at 10⁷
    /// unknowns the benchmark's full load was abandoned at a cost of 40 s before λ = 0.5 converged.
    pub first_halvings: usize,
    /// The increment doubles after a converged step only where it took at most this many Newton
    /// iterations (`grow_iterations`); a harder step keeps the increment. At 10⁷ every doubling
    /// after an 8–13-iteration step was abandoned again (eighth pass).
    pub grow_iterations: usize,
    /// After an abandoned attempt the increment doubles again only once this many steps have
    /// converged since (`regrow_after`; 1: after the first). At 10⁷ unknowns every doubling back
    /// to the increment abandoned one step before was abandoned again (1/16 → 1/8 after each
    /// converged 1/16 step: half the Newton time, tenth pass).
    pub regrow_after: usize,
    /// Extrapolate the displacement from the last two converged load steps (`predictor =
    /// "secant"`) instead of starting from the last one.
    pub secant: bool,
    /// Steps before the last (λ < 1) stop at ‖R‖ ≤ this × ‖R₀‖ (`step_rtol`; 0: the final
    /// tolerance): an intermediate equilibrium of a conservative load only carries the path, its
    /// last digits are discarded by the next increment.
    pub step_rtol: f64,
}

impl Default for LoadPath {
    fn default() -> Self {
        LoadPath { first_halvings: 0, grow_iterations: usize::MAX, regrow_after: 1, secant: false, step_rtol: 0.0 }
    }
}

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            rtol: 1e-9,
            atol: 1e-12,
            max_iter: 25,
            line_search: true,
            forcing: Forcing::Fixed,
            ew_start: EW_START,
            resolve_indefinite: false,
            method: SolverMethod::Gmres,
            precond: LinearPrecond::BlockJacobi,
            krylov: KrylovOptions { rtol: 1e-10, atol: 0.0, max_iter: 5000, restart: 100, progress: false },
            max_cutbacks: DEFAULT_CUTBACKS,
            path: LoadPath::default(),
            max_rise: MAX_RESIDUAL_RISE,
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
    /// The direction is the first one of the abandoned attempt before, rescaled to this load
    /// increment (same state and K, right-hand side proportional): no linear solve.
    pub reused: bool,
    /// CG met negative curvature at this iterate, which the previous direction, solved loosely
    /// (η > [`ETA_RESOLVE`]), had led to: this iterate was dropped, and the Newton system of the
    /// previous one solved again to [`ETA_RESOLVE`] (the next iteration). A loose direction taken
    /// in full from a state the nonlinearity spoilt was the suspect of the 10⁷ benchmark's
    /// indefinite Jacobians (eighth pass); where the tight direction leads there too, the
    /// truncated direction and the damped step are taken as before. Opt-in
    /// ([`NewtonOptions::resolve_indefinite`]).
    pub rolled_back: bool,
    pub assembly_s: f64,
    pub solve_s: f64,
}

/// An attempt at a load factor that was given up, and why; the increment was halved after it.
#[derive(Clone, Debug, Serialize)]
pub struct AbandonedAttempt {
    pub load_factor: f64,
    pub reason: String,
    pub residuals: Vec<f64>,
    pub iterations: Vec<NewtonIteration>,
}

/// One converged load step (a nominal step, or part of one after cutbacks).
#[derive(Clone, Debug, Serialize)]
pub struct LoadStepReport {
    /// 1, 2, … over the converged steps of the run.
    pub step: usize,
    pub load_factor: f64,
    /// ‖R‖ at each iterate, the last one converged.
    pub residuals: Vec<f64>,
    pub iterations: Vec<NewtonIteration>,
    /// The attempts given up since the last converged step (each halved the increment).
    pub abandoned: Vec<AbandonedAttempt>,
}

impl LoadStepReport {
    /// Newton iterations of this step, its abandoned attempts included.
    pub fn all_iterations(&self) -> impl Iterator<Item = &NewtonIteration> {
        self.abandoned.iter().flat_map(|a| &a.iterations).chain(&self.iterations)
    }
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

/// The first Newton direction of the last abandoned attempt, kept for its retry: the retry starts
/// from the same state with the same Dirichlet values (and no follower pressure), so K is the same
/// and, the state being converged for the last load factor, −R is the dead load's increment: the
/// direction scales with the increment (CG from zero is linear in its right-hand side, and its
/// relative stopping test scale-free). It is reused only where ‖R_new − s R_old‖ ≤ η/10 ‖R_new‖.
struct FirstDirection<B: Backend> {
    du: B::Vector,
    r: B::Vector,
    dirichlet: Vec<f64>,
    eta: f64,
    valid: bool,
}

/// Why an attempt at one load factor was given up (its report so far).
struct Abandon {
    why: String,
    rep: LoadStepReport,
}

/// The vectors and matrix of the Newton loop, and the attempt at one load factor.
struct Work<'w, 'l, B: SolverBackend, S: HyperSystem<B>> {
    be: &'w B,
    sys: &'w mut S,
    ld: &'w Loading<'l, B>,
    opts: &'w NewtonOptions,
    k: B::Matrix,
    r: B::Vector,
    rt: B::Vector,
    tmp: B::Vector,
    du: B::Vector,
    ut: B::Vector,
    zeros: B::Vector,
    /// The iterate before the last accepted step (for [`NewtonIteration::rolled_back`]).
    prev: B::Vector,
    first: FirstDirection<B>,
    times: NewtonTimes,
    trace: bool,
}

impl<B: SolverBackend, S: HyperSystem<B>> Work<'_, '_, B, S> {
    /// Newton at load factor `lf` from `u` (its Dirichlet values already set to `g`): `Ok` with
    /// `u` converged, `Err(Ok(..))` for a failure a smaller load increment may cure (`u` then
    /// holds the last iterate), `Err(Err(..))` for any other error.
    /// `last`: the step to λ = 1 (`[loads] step_rtol` spares the others); `reference`: ‖R‖ the
    /// stopping test is relative to where it is not the first iterate's (the secant predictor's).
    fn attempt(&mut self, u: &mut B::Vector, lf: f64, g: &[f64], last: bool, reference: Option<f64>) -> std::result::Result<LoadStepReport, Result<Abandon>> {
        let (be, ld, opts) = (self.be, self.ld, self.opts);
        let n = self.sys.ndofs();
        let mut rep = LoadStepReport { step: 0, load_factor: lf, residuals: Vec::new(), iterations: Vec::new(), abandoned: Vec::new() };
        macro_rules! give_up {
            ($($why:tt)*) => { return Err(Ok(Abandon { why: format!($($why)*), rep })) };
        }
        let t = std::time::Instant::now();
        let mut rn = residual(be, &mut *self.sys, ld, u, lf, &mut self.r, Some(&mut self.k), &mut self.tmp).map_err(Err)?;
        self.times.assembly_s += t.elapsed().as_secs_f64();
        if !rn.is_finite() {
            rep.residuals.push(rn);
            give_up!("the Dirichlet values of this load factor invert an element (J ≤ 0)");
        }
        let r0 = reference.filter(|r| r.is_finite()).unwrap_or(rn);
        let target = opts.atol.max(opts.rtol * r0).max(if last { 0.0 } else { opts.path.step_rtol * r0 });
        let mut last_eta: Option<(f64, f64)> = None;
        // The last accepted step, while it may be solved again: its η, and the forcing state and
        // ‖R‖ at the iterate it started from (`self.prev`).
        let mut back: Option<(f64, Option<(f64, f64)>, f64)> = None;
        let mut forced_eta: Option<f64> = None;
        // Damped steps since the last progress, and ‖R‖ when the first of them was taken.
        let (mut damped, mut damped_from) = (0usize, f64::INFINITY);
        loop {
            rep.residuals.push(rn);
            if rn <= target {
                return Ok(rep);
            }
            if rep.iterations.len() == opts.max_iter {
                give_up!("{} iterations, ‖R‖ = {rn:.3e} from {r0:.3e}", opts.max_iter);
            }
            if damped >= STALL_DAMPED {
                give_up!("stalled: {damped} damped line-search steps (t < {STALL_STEP}, a truncated direction's counting 2) without ‖R‖ falling below {STALL_PROGRESS} of its value {damped_from:.3e} before them, ‖R‖ = {rn:.3e} from {r0:.3e}");
            }
            // K du = −R with the constrained rows eliminated.
            let ts = std::time::Instant::now();
            be.copy(&self.r, &mut self.tmp).map_err(Err)?;
            be.scale(-1.0, &mut self.tmp).map_err(Err)?;
            be.eliminate(&mut self.k, &mut self.tmp, &ld.mask, &self.zeros).map_err(Err)?;
            be.fill(&mut self.du, 0.0).map_err(Err)?;
            let last_eta_before = last_eta;
            let mut eta = 0.0;
            let mut truncated = false;
            let mut reused = false;
            let lin_its = match opts.method {
                SolverMethod::Direct => {
                    be.factorize(&self.k, false).and_then(|f| f.solve(be, &self.tmp, &mut self.du)).map_err(Err)?;
                    1
                }
                m => {
                    eta = forced_eta.take().unwrap_or_else(|| opts.forcing.eta_toward(opts.ew_start, opts.krylov.rtol, rn, last_eta, target));
                    last_eta = Some((eta, rn));
                    if rep.iterations.is_empty() && self.reuse_first(g, rn, eta).map_err(Err)? {
                        reused = true;
                        0
                    } else {
                        let krylov = KrylovOptions { rtol: eta, ..opts.krylov.clone() };
                        let comps = self.sys.components();
                        let block_jacobi = |k: &B::Matrix| -> Result<Box<dyn LinearOperator<B>>> { Ok(Box::new(BlockJacobi::new(be, comps, be.matrix_node_blocks(k, comps)?)?)) };
                        let pc: Box<dyn LinearOperator<B> + '_> = match opts.precond {
                            LinearPrecond::None => Box::new(crate::backend::Identity(n)),
                            LinearPrecond::Jacobi => Box::new(Jacobi::new(be, &be.matrix_diagonal(&self.k).map_err(Err)?).map_err(Err)?),
                            LinearPrecond::BlockJacobi => block_jacobi(&self.k).map_err(Err)?,
                            LinearPrecond::Multigrid => match self.sys.multigrid(be, u, &self.k) {
                                Ok(Some(mg)) => mg,
                                Ok(None) => return Err(Err(Error::config("solver.preconditioner", "multigrid: this system has no multigrid hierarchy"))),
                                Err(e) => {
                                    if self.trace {
                                        eprintln!("newton: multigrid unavailable for this system ({e}); block Jacobi instead");
                                    }
                                    block_jacobi(&self.k).map_err(Err)?
                                }
                            },
                        };
                        match m.solve(be, &self.k, pc.as_ref(), &self.tmp, &mut self.du, &krylov) {
                            Ok(st) => st.iterations,
                            // Truncated Newton–CG (Nocedal & Wright, Alg. 7.1): where K is indefinite
                            // at this iterate (an overshooting step into a compressed, unstable state),
                            // CG stops at the first direction of negative curvature; its iterate so far
                            // minimises the quadratic model on a subspace where K is positive, so it
                            // is a descent direction for the energy, and the line search takes it.
                            Err(Error::NotConverged { ref reason, iterations, .. })
                                if m == SolverMethod::Cg && reason.starts_with("operator is not positive definite") && iterations > 0 && be.norm2(&self.du).map_err(Err)? > 0.0 =>
                            {
                                truncated = true;
                                iterations
                            }
                            Err(e @ Error::NotConverged { .. }) => give_up!("the linear solve failed: {e}"),
                            Err(e) => return Err(Err(e)),
                        }
                    }
                }
            };
            if rep.iterations.is_empty() && !truncated && !reused && opts.method != SolverMethod::Direct && ld.pressure.is_empty() {
                be.copy(&self.du, &mut self.first.du).map_err(Err)?;
                be.copy(&self.r, &mut self.first.r).map_err(Err)?;
                self.first.dirichlet = g.to_vec();
                self.first.eta = eta;
                self.first.valid = true;
            }
            let solve_s = ts.elapsed().as_secs_f64();
            self.times.solve_s += solve_s;
            if truncated {
                if let Some((eta_back, eta_state, rn_back)) = back.take().filter(|b| b.0 > ETA_RESOLVE) {
                    let it = NewtonIteration { residual: rn, step_length: 0.0, linear_iterations: lin_its, forcing: eta, truncated, reused, rolled_back: true, assembly_s: 0.0, solve_s };
                    if self.trace {
                        eprintln!("newton {} (λ = {lf}): {it:?}; back to the iterate before (‖R‖ = {rn_back:.3e}), its step solved again to {ETA_RESOLVE:e} (was {eta_back:.2e})", rep.iterations.len());
                    }
                    rep.iterations.push(it);
                    std::mem::swap(u, &mut self.prev);
                    let ta = std::time::Instant::now();
                    rn = residual(be, &mut *self.sys, ld, u, lf, &mut self.r, Some(&mut self.k), &mut self.tmp).map_err(Err)?;
                    self.times.assembly_s += ta.elapsed().as_secs_f64();
                    last_eta = eta_state;
                    forced_eta = Some(ETA_RESOLVE.max(opts.krylov.rtol));
                    if damped == 0 {
                        damped_from = rn;
                    }
                    damped += 1;
                    continue;
                }
            }
            let ta = std::time::Instant::now();
            let (step_len, accepted) = self.line_search(u, lf, rn).map_err(Err)?;
            let asm_s = ta.elapsed().as_secs_f64();
            self.times.assembly_s += asm_s;
            let it = NewtonIteration { residual: rn, step_length: step_len, linear_iterations: lin_its, forcing: eta, truncated, reused, rolled_back: false, assembly_s: asm_s, solve_s };
            if self.trace {
                eprintln!("newton {} (λ = {lf}): {it:?}", rep.iterations.len());
            }
            rep.iterations.push(it);
            let Some(rn_t) = accepted else {
                give_up!("every step along the Newton direction from ‖R‖ = {rn:.3e} inverts an element (J ≤ 0) or raises ‖R‖ more than {:e} times", opts.max_rise);
            };
            if opts.line_search && step_len < STALL_STEP {
                if damped == 0 {
                    damped_from = rn;
                }
                damped += if truncated { 2 } else { 1 };
            } else if damped > 0 && rn_t < STALL_PROGRESS * damped_from {
                damped = 0;
            }
            back = (opts.resolve_indefinite && !truncated && opts.method != SolverMethod::Direct).then_some((eta, last_eta_before, rn));
            std::mem::swap(u, &mut self.ut);
            std::mem::swap(&mut self.ut, &mut self.prev);
            std::mem::swap(&mut self.r, &mut self.rt);
            rn = rn_t;
        }
    }

    /// Whether the kept first direction serves this attempt's first step: `du` = s du_old then.
    fn reuse_first(&mut self, g: &[f64], rn: f64, eta: f64) -> Result<bool> {
        let be = self.be;
        if !self.first.valid || self.first.eta > eta || self.first.dirichlet != g {
            return Ok(false);
        }
        let rr = be.dot(&self.first.r, &self.first.r)?;
        if !(rr > 0.0) {
            return Ok(false);
        }
        let s = be.dot(&self.r, &self.first.r)? / rr;
        be.copy(&self.r, &mut self.ut)?;
        be.axpy(-s, &self.first.r, &mut self.ut)?;
        if !(be.norm2(&self.ut)? <= 0.1 * eta * rn) {
            return Ok(false);
        }
        be.copy(&self.first.du, &mut self.du)?;
        be.scale(s, &mut self.du)?;
        Ok(true)
    }

    /// Line search on the energy slope s(t) = du·R(u + t du) (Crisfield): accept unless the step
    /// overshoots the minimum along du by much (s(t)/s(0) < −0.8), then take the secant zero of s;
    /// halve where the state is infeasible (J ≤ 0, non-finite) or ‖R‖ rose more than
    /// [`MAX_RESIDUAL_RISE`] times. The trial state is left in `ut`, its residual in `rt` and its
    /// Jacobian in `k`; `None`: no acceptable step.
    fn line_search(&mut self, u: &B::Vector, lf: f64, rn: f64) -> Result<(f64, Option<f64>)> {
        let (be, opts) = (self.be, self.opts);
        let s0 = be.dot(&self.du, &self.r)?;
        let mut step_len = 1.0;
        let mut tries = 0;
        loop {
            tries += 1;
            be.copy(u, &mut self.ut)?;
            be.axpy(step_len, &self.du, &mut self.ut)?;
            let rn_t = residual(be, &mut *self.sys, self.ld, &self.ut, lf, &mut self.rt, Some(&mut self.k), &mut self.tmp)?;
            if rn_t.is_finite() && (!opts.line_search || rn_t <= opts.max_rise * rn) {
                if !opts.line_search || s0 >= 0.0 || tries > 8 {
                    return Ok((step_len, Some(rn_t)));
                }
                let rho = be.dot(&self.du, &self.rt)? / s0;
                if rho >= -0.8 {
                    return Ok((step_len, Some(rn_t)));
                }
                step_len *= (1.0 / (1.0 - rho)).max(0.1);
            } else {
                if !opts.line_search || tries > 30 {
                    return Ok((step_len, None));
                }
                step_len *= 0.5;
            }
        }
    }
}

/// `u = mask ⊙ u + g`: the Dirichlet values of the load factor imposed on the state.
fn impose<B: Backend>(be: &B, ld: &Loading<'_, B>, u: &mut B::Vector, g: &B::Vector, tmp: &mut B::Vector) -> Result<()> {
    be.pointwise_mult(&ld.mask, u, tmp)?;
    be.copy(tmp, u)?;
    be.axpy(1.0, g, u)
}

/// The secant predictor: `u` (the converged state at λ₁) moved along the path's last chord,
/// u + (λ − λ₁)/(λ₁ − λ₀) (u − u₀), then the Dirichlet values of λ imposed. Where the extrapolated
/// state inverts an element the step starts from `u` as without a predictor. Returns ‖R‖ at the
/// plain start (u with λ's Dirichlet values), the step's reference for its stopping test: the
/// tolerance stays that of a run without the predictor.
fn predict<B: SolverBackend, S: HyperSystem<B>>(be: &B, w: &mut Work<'_, '_, B, S>, ld: &Loading<'_, B>, u: &mut B::Vector, u0: &B::Vector, (l0, l1, lf): (f64, f64, f64), g: &B::Vector) -> Result<f64> {
    be.copy(u, &mut w.du)?;
    impose(be, ld, &mut w.du, g, &mut w.tmp)?;
    let plain = residual(be, &mut *w.sys, ld, &w.du, lf, &mut w.rt, None, &mut w.tmp)?;
    let s = (lf - l1) / (l1 - l0);
    be.copy(u, &mut w.ut)?;
    be.axpy(s, u, &mut w.ut)?;
    be.axpy(-s, u0, &mut w.ut)?;
    impose(be, ld, &mut w.ut, g, &mut w.tmp)?;
    let rn = residual(be, &mut *w.sys, ld, &w.ut, lf, &mut w.rt, None, &mut w.tmp)?;
    if rn.is_finite() {
        std::mem::swap(u, &mut w.ut);
    } else {
        if w.trace {
            eprintln!("newton: the secant predictor to λ = {lf} inverts an element; starting from λ = {l1}");
        }
        impose(be, ld, u, g, &mut w.tmp)?;
    }
    Ok(plain)
}

/// Runs the load steps 1/`steps`, 2/`steps`, … 1 from `u` (overwritten with the final state);
/// `on_step` sees each converged step's state (output). An attempt that fails is retried from
/// the last converged state with half the increment (at most `max_cutbacks` halvings deep; the
/// increment doubles again after each converged step, up to the nominal one). Fails naming the
/// load step where Newton does not converge even so. With `[loads] regrow_after = m` the
/// increment stays at its cut size until m steps have converged after the cutback.
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
    let k = sys.new_matrix(be)?;
    let first = FirstDirection { du: be.zeros(n)?, r: be.zeros(n)?, dirichlet: Vec::new(), eta: 0.0, valid: false };
    let mut w = Work {
        be,
        sys,
        ld,
        opts,
        k,
        r: be.zeros(n)?,
        rt: be.zeros(n)?,
        tmp: be.zeros(n)?,
        du: be.zeros(n)?,
        ut: be.zeros(n)?,
        zeros: be.zeros(n)?,
        prev: be.zeros(n)?,
        first,
        times: NewtonTimes::default(),
        trace,
    };
    let mut saved = be.zeros(n)?;
    be.copy(u, &mut saved)?;
    // The converged state before `saved` and its load factor (the secant predictor's other point).
    let mut before = be.zeros(n)?;
    be.copy(u, &mut before)?;
    let mut done_before: Option<f64> = None;
    let nominal = 1.0 / steps as f64;
    let (mut done, mut depth) = (0.0f64, opts.path.first_halvings.min(opts.max_cutbacks));
    let mut abandoned = Vec::new();
    // Converged steps since the last abandoned attempt (`regrow_after`).
    let mut since_cut = usize::MAX;
    let mut reports = Vec::with_capacity(steps);
    while done < 1.0 {
        // The next load factor: one increment on, never past the next nominal one.
        let grid = ((done * steps as f64 + 1e-9).floor() + 1.0) / steps as f64;
        let mut lf = (done + nominal / (1u64 << depth.min(62)) as f64).min(grid);
        if lf > 1.0 - 1e-12 {
            lf = 1.0;
        }
        let g_host = (ld.dirichlet)(lf);
        let g = be.from_host(&g_host)?;
        let reference = match done_before.filter(|_| opts.path.secant) {
            Some(lb) => Some(predict(be, &mut w, ld, u, &before, (lb, done, lf), &g)?),
            None => {
                impose(be, ld, u, &g, &mut w.tmp)?;
                None
            }
        };
        match w.attempt(u, lf, &g_host, lf >= 1.0, reference) {
            Ok(mut rep) => {
                rep.step = reports.len() + 1;
                rep.abandoned = std::mem::take(&mut abandoned);
                on_step(&rep, u)?;
                let easy = rep.iterations.len() <= opts.path.grow_iterations;
                reports.push(rep);
                std::mem::swap(&mut before, &mut saved);
                done_before = Some(done);
                done = lf;
                be.copy(u, &mut saved)?;
                w.first.valid = false;
                since_cut = since_cut.saturating_add(1);
                if easy && since_cut >= opts.path.regrow_after {
                    depth = depth.saturating_sub(1);
                }
            }
            Err(Err(e)) => return Err(e),
            Err(Ok(Abandon { why, rep })) => {
                let nominal_step = ((lf * steps as f64) - 1e-9).ceil().max(1.0) as usize;
                if depth >= opts.max_cutbacks {
                    let cut = if abandoned.is_empty() { String::new() } else { format!(", after {} cutbacks of the load increment", abandoned.len()) };
                    return Err(Error::NotConverged {
                        method: "Newton".into(),
                        reason: format!("at load step {nominal_step} of {steps} (load factor {lf}{cut}): {why}"),
                        iterations: rep.iterations.len(),
                        relative_residual: rep.residuals.last().copied().unwrap_or(f64::NAN) / rep.residuals.first().copied().unwrap_or(1.0).max(f64::MIN_POSITIVE),
                        history: rep.residuals.clone(),
                    });
                }
                // Halve the increment that was tried, not the nominal one: after easy steps `depth`
                // may have come down so far that the grid capped `lf`, and one halving of the
                // nominal increment would land on the same load factor again.
                let tried = lf - done;
                depth += 1;
                while depth < 62 && nominal / (1u64 << depth) as f64 > 0.5 * tried * (1.0 + 1e-9) {
                    depth += 1;
                }
                if trace {
                    eprintln!("newton: load factor {lf} abandoned ({why}); retrying from {done} with increment {}", nominal / (1u64 << depth.min(62)) as f64);
                }
                since_cut = 0;
                abandoned.push(AbandonedAttempt { load_factor: lf, reason: why, residuals: rep.residuals, iterations: rep.iterations });
                be.copy(&saved, u)?;
            }
        }
    }
    let mut times = w.times;
    times.total_s = t_all.elapsed().as_secs_f64();
    Ok((reports, times))
}
