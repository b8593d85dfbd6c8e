//! Transient heat conduction ρc ∂T/∂t − ∇·(k∇T) = 0 by the θ-method (issue 12, core only).
//!
//! Each step solves `(M/Δt + θK) Tⁿ⁺¹ = (M/Δt − (1−θ)K) Tⁿ` with Jacobi-PCG started from `Tⁿ`.
//! Both operators are [`System`]s of the reshaped operator (mass + diffusion QFunctions at any
//! assembly level), built once: a time run is a loop of operator applications and CG solves on the
//! backend, so a caller (issue 13's sampler) can re-run it with other coefficients through
//! [`System::update_coefficient`] without rebuilding the mesh or operator.
//! Not done yet: loads (flux, laser, Robin), non-zero Dirichlet values, the problem file.
use super::linear::{scalar, Boundary, LinearProblem, System};
use crate::backend::LinearOperator;
use crate::operator::{AssemblyLevel, FeBackend, Tuning};
use crate::physics::{Coefficient, Diffusion, Mass, Sum};
use crate::solver::precond::{PrecondParams, PreconditionerKind};
use crate::solver::{KrylovOptions, SolverMethod};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use std::sync::Arc;

/// Material and time-stepping parameters of a heat run.
#[derive(Clone, Debug)]
pub struct HeatSetup {
    /// Volumetric heat capacity ρc.
    pub rhoc: Coefficient,
    /// Conductivity k.
    pub k: Coefficient,
    /// Faces held at T = 0 (the others are insulated).
    pub zero_dirichlet: Vec<Boundary>,
    pub dt: f64,
    /// 1 = backward Euler, ½ = Crank–Nicolson.
    pub theta: f64,
}

/// The two operators of a θ-step on backend `B`, built once.
pub struct HeatStepper<'b, B: FeBackend> {
    implicit: System<'b, B>,
    explicit: System<'b, B>,
    /// 1 on free dofs, 0 on Dirichlet dofs.
    mask: B::Vector,
    pub options: KrylovOptions,
}

/// `c` multiplied by `s` (constant, per region or function alike).
fn scaled(c: &Coefficient, s: f64) -> Coefficient {
    match c {
        Coefficient::Constant(v) => Coefficient::Constant(v * s),
        Coefficient::PerRegion(m) => {
            Coefficient::PerRegion(m.iter().map(|(k, v)| (*k, v * s)).collect())
        }
        Coefficient::Function(f) => {
            let f = f.clone();
            Coefficient::function(move |x| s * f(x))
        }
    }
}

impl<'b, B: FeBackend> HeatStepper<'b, B> {
    pub fn new(
        be: &'b B,
        space: Arc<FunctionSpace>,
        setup: &HeatSetup,
        level: AssemblyLevel,
    ) -> Result<Self> {
        let (dt, theta) = (setup.dt, setup.theta);
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::invalid(format!(
                "time step `dt` must be positive and finite (got {dt})"
            )));
        }
        if !(0.5..=1.0).contains(&theta) {
            return Err(Error::invalid(format!(
                "`theta` must lie in [0.5, 1] (got {theta})"
            )));
        }
        let physics = |kscale: f64| {
            Sum(vec![
                Box::new(Mass::new(scaled(&setup.rhoc, 1.0 / dt), 1)),
                Box::new(Diffusion::new(scaled(&setup.k, kscale))),
            ])
        };
        let implicit = LinearProblem::new(space.clone(), physics(theta))
            .dirichlet(setup.zero_dirichlet.clone(), scalar(|_| 0.0));
        let mask_host = implicit.constraints()?.free_mask(space.ndofs());
        let implicit = implicit.system(be, level, Tuning::default())?;
        let explicit =
            LinearProblem::new(space, physics(theta - 1.0)).system(be, level, Tuning::default())?;
        let options = KrylovOptions {
            rtol: 1e-10,
            atol: 0.0,
            ..KrylovOptions::default()
        };
        Ok(HeatStepper {
            implicit,
            explicit,
            mask: be.from_host(&mask_host)?,
            options,
        })
    }

    /// Advances `t` (on the backend) by `steps` steps; returns the PCG iterations of each step.
    pub fn run(&self, t: &mut B::Vector, steps: usize) -> Result<Vec<usize>> {
        let be = self.implicit.backend;
        let n = self.implicit.ndofs();
        let params = PrecondParams {
            block_size: 1,
            omega: 1.0,
        };
        let m = PreconditionerKind::Jacobi.build_for(be, &self.implicit.operator, &params)?;
        let (mut load, mut rhs) = (be.zeros(n)?, be.zeros(n)?);
        let mut iterations = Vec::with_capacity(steps);
        for _ in 0..steps {
            self.explicit.operator.apply(be, t, &mut load)?;
            be.pointwise_mult(&self.mask, &load, &mut rhs)?;
            let stats = SolverMethod::Cg.solve(
                be,
                &self.implicit.operator,
                m.as_ref(),
                &rhs,
                t,
                &self.options,
            )?;
            iterations.push(stats.iterations);
        }
        Ok(iterations)
    }
}
