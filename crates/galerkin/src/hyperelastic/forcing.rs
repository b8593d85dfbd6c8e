//! How tightly each Newton step's linear system is solved: a fixed Krylov rtol, or the inexact
//! Newton forcing of Eisenstat & Walker with the guards the hyperelastic benchmarks needed.
use serde::{Deserialize, Serialize};

/// How tightly each Newton step's linear system is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forcing {
    /// Every solve to the Krylov rtol.
    #[default]
    Fixed,
    /// Inexact Newton (Eisenstat & Walker 1996, choice 2, as PETSc SNES's `-snes_ksp_ew`): the
    /// first solve of a load step to η₀ ([`EwStart`], 0.3 by default), then η_k = γ (‖R_k‖/‖R_{k−1}‖)^α with γ = 0.9,
    /// α = 2, safeguarded by γ η_{k−1}^α when that exceeds 0.1, capped at η_max = 0.9 and never
    /// below the Krylov rtol: a far-from-converged Newton step is not worth an exact solve, and the
    /// forcing tightens as ‖R‖ falls, so convergence stays superlinear. Two guards more (see
    /// [`Forcing::eta`]): where ‖R‖ rose, η stays as it was but at most [`EwStart::eta_rise`]
    /// (the rise is the nonlinearity's, choice 2 would jump to η_max), and a step that did not make half the
    /// reduction its linear solve promised halves η, which breaks the fixed point of choice 2
    /// where loose solves make slow Newton steps and slow steps keep the solves loose.
    EisenstatWalker,
}

/// Choice 2's constants and bounds (Eisenstat & Walker 1996; PETSc's defaults).
pub const EW_GAMMA: f64 = 0.9;
pub const EW_ALPHA: f64 = 2.0;
pub const EW_ETA_MAX: f64 = 0.9;

/// Where the Eisenstat–Walker forcing starts, and how loose it may stay while ‖R‖ rises
/// (`[newton] eta0`, `eta_rise`). The default is PETSc's η₀ = 0.3 with η kept where ‖R‖ rose.
/// With the multigrid preconditioner one V-cycle meets 0.3, and at 10⁷ unknowns the direction so
/// obtained right after the first step's 15–60× rise of ‖R‖ was suspected of leading the attempts
/// past λ ≈ 0.6 into indefinite Jacobians (BENCHMARKS.md, issue 17, eighth pass);
/// [`EW_START_TIGHT`] tests that. On the CPU at 6 591 unknowns under a stiffened load it was
/// worse (ninth pass: 31 Newton and 381 CG iterations against 13 and 101), and the 10⁷ run
/// could not be made, so it is not the default.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EwStart {
    /// η of the first solve of an attempt at a load factor.
    pub eta0: f64,
    /// The most η may be where ‖R‖ rose since the last iterate.
    pub eta_rise: f64,
}

/// The default start: PETSc's η₀, η kept (up to η_max) on a rise.
pub const EW_START: EwStart = EwStart { eta0: 0.3, eta_rise: EW_ETA_MAX };
/// Tight start and rise cap, both 10⁻² (`eta0 = 1e-2`, `eta_rise = 1e-2`).
pub const EW_START_TIGHT: EwStart = EwStart { eta0: 1e-2, eta_rise: 1e-2 };

impl Default for EwStart {
    fn default() -> Self {
        EW_START
    }
}

impl Forcing {
    /// The linear rtol of the next solve: `prev` = the last η and ‖R‖ (None on a step's first).
    ///
    /// Choice 2 alone has a stagnating fixed point: with ρ = ‖R_k‖/‖R_{k−1}‖ ≈ 0.9 (a rise of ‖R‖
    /// under bending sends η to η_max, and a loosely solved step then reduces ‖R‖ little), γρ² ≈
    /// 0.73 and the safeguard γη² ≥ 0.48 keep η near 0.75 for good, so each step reduces ‖R‖ by
    /// about 10 % (the 3·10⁶ benchmark: 25 iterations, ‖R‖ down 10×). The linear model of an
    /// η-accurate step promises ρ ≤ η; where the step made less than half of that promise,
    /// (1 + η_{k−1})/2 < ρ ≤ 1, the next η is at most η_{k−1}/2 (the safeguard gives way). Where
    /// ‖R‖ rose (ρ > 1: bending, an overshooting first step under a dead load), the last η is kept,
    /// capped at `start.eta_rise`: choice 2 would loosen to η_max there, the way into the trap
    /// above, and a loose direction from a state the nonlinearity spoilt is a poor one.
    pub fn eta(self, start: EwStart, floor: f64, rn: f64, prev: Option<(f64, f64)>) -> f64 {
        match (self, prev) {
            (Forcing::Fixed, _) => floor,
            (Forcing::EisenstatWalker, None) => start.eta0.min(EW_ETA_MAX).max(floor),
            (Forcing::EisenstatWalker, Some((eta_prev, rn_prev))) => {
                let rho = rn / rn_prev;
                if !(rho <= 1.0) {
                    return eta_prev.min(start.eta_rise).min(EW_ETA_MAX).max(floor);
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

    /// [`Forcing::eta`] with Kelley's guard against oversolving the last steps (Kelley 1995,
    /// "Iterative Methods for Linear and Nonlinear Equations", eq. 6.20): the Newton loop stops at
    /// ‖R‖ ≤ `target`, so a step need not reduce ‖R‖ below about target/2, and η is at least
    /// 0.5 target/‖R_k‖ (at most η_max). Without it the last one or two solves of a 10⁷-unknown
    /// run go to the Krylov rtol (10⁻⁸ relative) where about 10⁻³ would finish Newton, and a solve
    /// to 10⁻⁸ costs the most CG iterations of the run. The fixed forcing is left
    /// alone (it asks for its rtol on purpose).
    pub fn eta_toward(self, start: EwStart, floor: f64, rn: f64, prev: Option<(f64, f64)>, target: f64) -> f64 {
        let eta = self.eta(start, floor, rn, prev);
        match self {
            Forcing::Fixed => eta,
            Forcing::EisenstatWalker if rn > 0.0 && target > 0.0 => eta.max((0.5 * target / rn).min(EW_ETA_MAX)),
            Forcing::EisenstatWalker => eta,
        }
    }
}
