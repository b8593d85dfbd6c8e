//! The θ-method time loop: each step solves `(M/Δt + θK) Tⁿ⁺¹ = (M/Δt − (1−θ)K) Tⁿ + F^θ` with
//! Jacobi-PCG started from `Tⁿ`, where K holds the conduction and the Robin face mass and
//! `F^θ = θ F(tⁿ⁺¹) + (1−θ) F(tⁿ)` the loads ([`super::loads`]).
//!
//! Both operators are [`System`]s of the one finite element operator (mass + diffusion QFunctions
//! at any assembly level, Robin face terms at every level), built once: a time run is a loop of
//! operator applications, `axpy`s and CG solves on the backend, so a caller (issue 13's sampler)
//! can re-run it with other coefficients through [`System::update_coefficient`].
//!
//! Dirichlet values g enter by lifting: `rhs = mask∘(b − A g) + g` with `A` the unconstrained
//! implicit operator; `A g` is computed once for values constant in time, else every step from
//! the boundary values (the only per-step host work). The energy balance of each step needs only
//! dot products with vectors built once ([`super::balance`]).
use super::balance::{Balance, EnergyBalance, Measure, StepRecord};
use super::loads::{self, HeatLoads, Load, LoadKind, Schedule, SpaceTimeFn};
use crate::backend::{Cpu, LinearOperator};
use crate::operator::{AssemblyLevel, CellMaterials, FeBackend, Tuning};
use crate::physics::{Coefficient, Diffusion, Mass, Sum};
use crate::problem::linear::{flux, scalar, Boundary, LinearProblem, System};
use crate::solver::{jacobi_cg, Jacobi, Preconditionable};
use crate::solver::KrylovOptions;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Material and time-stepping parameters of a heat run.
#[derive(Clone, Debug)]
pub struct HeatSetup {
    /// Volumetric heat capacity ρc.
    pub rhoc: Coefficient,
    /// Conductivity k.
    pub k: Coefficient,
    /// Faces held at T = 0 (further conditions: [`HeatLoads`]; faces without any are insulated).
    pub zero_dirichlet: Vec<Boundary>,
    pub dt: f64,
    /// 1 = backward Euler, ½ = Crank–Nicolson.
    pub theta: f64,
}

/// A load vector on the backend.
struct Term<B: FeBackend> {
    vector: B::Vector,
    total: f64,
    schedule: Schedule,
    kind: LoadKind,
}

/// Dirichlet values: the constrained dofs, the condition of each, and the lifting on the backend.
struct Lift<'b, B: FeBackend> {
    dofs: Vec<usize>,
    coords: Vec<[f64; 3]>,
    /// Index into `values` per constrained dof.
    which: Vec<usize>,
    values: Vec<SpaceTimeFn>,
    /// The unconstrained implicit operator (for non-zero values and the energy balance; kept so
    /// [`HeatStepper::set_materials`] can recompute `A g`).
    unconstrained: Option<System<'b, B>>,
    /// Some value changes in time: `g` and `A g` are evaluated every step.
    time_dependent: bool,
    /// g (zero on free dofs) and A g at the current target time.
    g: B::Vector,
    ag: B::Vector,
    /// All values identically zero: nothing to lift.
    zero: bool,
}

/// Vectors the energy balance needs, built once: `m = ∫ρc φᵢ`, `r = ∫ h φᵢ ds` (Robin),
/// `1 − mask`, and `a_D = A (1 − mask)` (the Dirichlet rows' sums of the unconstrained operator).
struct BalanceVectors<B: FeBackend> {
    m: B::Vector,
    robin_rows: Option<B::Vector>,
    comask: Option<B::Vector>,
    a_d: Option<B::Vector>,
}

/// The two operators of a θ-step on backend `B`, built once, with the loads.
pub struct HeatStepper<'b, B: FeBackend> {
    implicit: System<'b, B>,
    explicit: System<'b, B>,
    /// 1 on free dofs, 0 on Dirichlet dofs.
    mask: B::Vector,
    pub options: KrylovOptions,
    /// Start PCG from `2Tⁿ − Tⁿ⁻¹` instead of `Tⁿ` (fewer iterations where the temperature
    /// changes smoothly in time; off by default, as the seed's method starts from `Tⁿ`).
    pub extrapolate: bool,
    /// `Tⁿ⁻¹` of the last step, for `extrapolate` (cleared by [`HeatStepper::set_time`]).
    previous: std::sync::Mutex<Option<B::Vector>>,
    dt: f64,
    theta: f64,
    /// Time of the current state: `start + step·Δt` (no drift from summing Δt).
    time: AtomicU64,
    start: AtomicU64,
    /// Steps taken so far.
    step: AtomicUsize,
    terms: Vec<Term<B>>,
    lift: Option<Lift<'b, B>>,
    /// `None` for steppers built by [`HeatStepper::new`] (no balance: nothing extra built).
    balance: Option<BalanceVectors<B>>,
    /// What the systems were built from, for [`HeatStepper::set_materials`].
    problems: Problems,
}

/// The problems behind the step operators (and the balance's heat capacity).
struct Problems {
    implicit: LinearProblem,
    explicit: LinearProblem,
    /// Behind `Lift::unconstrained`, where that was built.
    unconstrained: Option<LinearProblem>,
    /// `M_ρc` on the CPU: the balance's `m = M_ρc 1`.
    mass: Option<(LinearProblem, System<'static, Cpu>)>,
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
    /// Zero Dirichlet values on `setup.zero_dirichlet`, every other face insulated, no source;
    /// only the two step operators are built (no energy balance: the lean form for benchmarks).
    pub fn new(
        be: &'b B,
        space: Arc<FunctionSpace>,
        setup: &HeatSetup,
        level: AssemblyLevel,
    ) -> Result<Self> {
        Self::build(be, space, setup, &HeatLoads::default(), level, false)
    }

    /// With the loads of `loads` (Dirichlet conditions there override `setup.zero_dirichlet` on
    /// shared nodes) and the energy balance of every step in [`HeatStepper::run_recorded`] (the
    /// Dirichlet reaction needs the unconstrained implicit operator once, at construction).
    pub fn with_loads(
        be: &'b B,
        space: Arc<FunctionSpace>,
        setup: &HeatSetup,
        loads: &HeatLoads,
        level: AssemblyLevel,
    ) -> Result<Self> {
        Self::build(be, space, setup, loads, level, true)
    }

    /// With the loads of `loads` but no energy balance: the lean form a sampler re-runs.
    pub fn with_loads_only(
        be: &'b B,
        space: Arc<FunctionSpace>,
        setup: &HeatSetup,
        loads: &HeatLoads,
        level: AssemblyLevel,
    ) -> Result<Self> {
        Self::build(be, space, setup, loads, level, false)
    }

    fn build(
        be: &'b B,
        space: Arc<FunctionSpace>,
        setup: &HeatSetup,
        loads: &HeatLoads,
        level: AssemblyLevel,
        balance: bool,
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
        loads.check()?;
        let robin = loads::robin_terms(loads);
        // M/Δt + s (K + R): the implicit operator with s = θ, the explicit one with s = θ − 1.
        let problem = |s: f64| {
            let physics = Sum(vec![
                Box::new(Mass::new(scaled(&setup.rhoc, 1.0 / dt), 1)),
                Box::new(Diffusion::new(scaled(&setup.k, s))),
            ]);
            robin
                .iter()
                .fold(LinearProblem::new(space.clone(), physics), |p, (on, h)| {
                    p.robin(on.clone(), h * s, flux(|_, _| 0.0))
                })
        };
        // Dirichlet conditions in order; the constraint value of each dof is its condition's index.
        let mut values: Vec<SpaceTimeFn> = Vec::new();
        let mut time_dependent = false;
        let mut implicit = problem(theta);
        let mut which = problem(theta);
        let mut zero = true;
        for on in &setup.zero_dirichlet {
            let i = values.len() as f64;
            values.push(Arc::new(|_, _| 0.0));
            implicit = implicit.dirichlet([on.clone()], scalar(|_| 0.0));
            which = which.dirichlet([on.clone()], scalar(move |_| i));
        }
        for l in &loads.loads {
            if let Load::Dirichlet {
                on,
                value,
                time_dependent: td,
            } = l
            {
                let i = values.len() as f64;
                values.push(value.clone());
                time_dependent |= *td;
                zero = false;
                implicit = implicit.dirichlet(on.clone(), scalar(|_| 0.0));
                which = which.dirichlet(on.clone(), scalar(move |_| i));
            }
        }
        let which = which.constraints()?;
        let n = space.ndofs();
        let mask_host = which.free_mask(n);
        let constrained = !which.dofs.is_empty();
        let implicit_sys = implicit.system(be, level, Tuning::default())?;
        let explicit_problem = problem(theta - 1.0);
        let explicit = explicit_problem.system(be, level, Tuning::default())?;

        // The unconstrained implicit operator: for the lifting and the Dirichlet reactions.
        let unconstrained_problem = (constrained && (!zero || balance)).then(|| problem(theta));
        let unconstrained = unconstrained_problem.as_ref().map(|p| p.system(be, level, Tuning::default())).transpose()?;
        let comask_host: Vec<f64> = mask_host.iter().map(|m| 1.0 - m).collect();
        let a_d = match &unconstrained {
            Some(u) if balance => {
                let mut y = be.zeros(n)?;
                u.operator.apply(be, &be.from_host(&comask_host)?, &mut y)?;
                Some(y)
            }
            _ => None,
        };
        let lift = if constrained {
            let coords: Vec<[f64; 3]> = which
                .dofs
                .iter()
                .map(|&d| space.dofmap.node_coords[d])
                .collect();
            let which_idx = which.values.iter().map(|v| *v as usize).collect();
            let mut lift = Lift {
                dofs: which.dofs.clone(),
                coords,
                which: which_idx,
                values,
                unconstrained,
                time_dependent,
                g: be.zeros(n)?,
                ag: be.zeros(n)?,
                zero,
            };
            if !zero {
                lift.update(be, n, 0.0)?;
            }
            Some(lift)
        } else {
            None
        };

        let (host_loads, robin_rows) = loads::assemble(&space, loads)?;
        let terms = host_loads
            .into_iter()
            .map(|h| {
                Ok(Term {
                    vector: be.from_host(&h.vector)?,
                    total: h.total,
                    schedule: h.schedule,
                    kind: h.kind,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut mass_problem = None;
        let balance =
            if balance {
                // m = M_ρc 1 on the host (one application of a CPU mass operator).
                let mp = LinearProblem::new(space.clone(), Mass::new(setup.rhoc.clone(), 1));
                let mass = mp.system(&Cpu, AssemblyLevel::Partial, Tuning::default())?;
                let m = mass.apply_host(&vec![1.0; n])?;
                mass_problem = Some((mp, mass));
                Some(BalanceVectors {
                    m: be.from_host(&m)?,
                    robin_rows: robin_rows.map(|r| be.from_host(&r)).transpose()?,
                    comask: if constrained {
                        Some(be.from_host(&comask_host)?)
                    } else {
                        None
                    },
                    a_d,
                })
            } else {
                None
            };
        let options = KrylovOptions {
            rtol: 1e-10,
            atol: 0.0,
            ..KrylovOptions::default()
        };
        Ok(HeatStepper {
            implicit: implicit_sys,
            explicit,
            mask: be.from_host(&mask_host)?,
            options,
            extrapolate: false,
            previous: std::sync::Mutex::new(None),
            dt,
            theta,
            time: AtomicU64::new(0f64.to_bits()),
            start: AtomicU64::new(0f64.to_bits()),
            step: AtomicUsize::new(0),
            terms,
            lift,
            balance,
            problems: Problems {
                implicit,
                explicit: explicit_problem,
                unconstrained: unconstrained_problem,
                mass: mass_problem,
            },
        })
    }

    /// Gives cell c the material `table[index[c]]` = (ρc, k): the mesh, the loads and the
    /// kernels stay; on the lattice (`none` on a generated box) only the material bytes change
    /// when every material of `table` was present at construction. Returns whether every operator
    /// took that fast path (else they were re-integrated). What the balance and the Dirichlet
    /// lifting derive from the operators is recomputed.
    pub fn set_materials(&mut self, index: &[u8], table: &[(f64, f64)]) -> Result<bool> {
        if let Some((i, _)) = table.iter().enumerate().find(|(_, (rhoc, k))| !(rhoc.is_finite() && *rhoc > 0.0 && k.is_finite() && *k > 0.0)) {
            return Err(Error::invalid(format!("material {i}: ρc and k must be positive and finite (got {:?})", table[i])));
        }
        let be = self.implicit.backend;
        let n = self.implicit.ndofs();
        let s = 1.0 / self.dt;
        // Bit for bit what `scaled` gives the operators at construction (the lattice matches
        // materials by their values).
        let values = |w: f64| -> Vec<Vec<f64>> { table.iter().map(|&(rhoc, k)| vec![rhoc * s, k * w]).collect() };
        let (vi, ve) = (values(self.theta), values(self.theta - 1.0));
        let (mi, me) = (CellMaterials { index, values: &vi }, CellMaterials { index, values: &ve });
        let t = Tuning::default();
        let mut fast = self.implicit.set_materials(&self.problems.implicit, &mi, t)?;
        fast &= self.explicit.set_materials(&self.problems.explicit, &me, t)?;
        let time = self.time();
        if let Some(l) = &mut self.lift {
            if let (Some(u), Some(p)) = (&mut l.unconstrained, &self.problems.unconstrained) {
                fast &= u.set_materials(p, &mi, t)?;
            }
            if !l.zero {
                l.update(be, n, time)?;
            }
        }
        if let Some(bv) = &mut self.balance {
            let (mp, mass) = self.problems.mass.as_mut().ok_or_else(|| Error::invalid("balance without its mass operator"))?;
            let rhoc: Vec<Vec<f64>> = table.iter().map(|&(rhoc, _)| vec![rhoc]).collect();
            mass.set_materials(mp, &CellMaterials { index, values: &rhoc }, t)?;
            bv.m = be.from_host(&mass.apply_host(&vec![1.0; n])?)?;
            if let (Some(a_d), Some(c), Some(u)) = (&mut bv.a_d, &bv.comask, self.lift.as_ref().and_then(|l| l.unconstrained.as_ref())) {
                u.operator.apply(be, c, a_d)?;
            }
        }
        Ok(fast)
    }

    /// Time of the current state (0 at construction).
    pub fn time(&self) -> f64 {
        f64::from_bits(self.time.load(Relaxed))
    }

    /// Sets the time of the current state (and the step counter to 0).
    pub fn set_time(&self, t: f64) {
        self.time.store(t.to_bits(), Relaxed);
        self.start.store(t.to_bits(), Relaxed);
        self.step.store(0, Relaxed);
        if let Ok(mut p) = self.previous.lock() {
            *p = None;
        }
    }

    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Bytes the two step operators keep.
    pub fn storage_bytes(&self) -> usize {
        self.implicit.storage_bytes() + self.explicit.storage_bytes()
    }

    /// Bytes the implicit step operator keeps: what every PCG iteration reads.
    pub fn implicit_storage_bytes(&self) -> usize {
        self.implicit.storage_bytes()
    }

    /// Heat content ∫ρc T of `t`.
    pub fn stored_energy(&self, t: &B::Vector) -> Result<f64> {
        let b = self.balance.as_ref().ok_or_else(|| {
            Error::invalid(
                "heat content: the stepper was built without the energy balance (use `with_loads`)",
            )
        })?;
        self.implicit.backend.dot(&b.m, t)
    }

    /// Advances `t` (on the backend) by `steps` steps; returns the PCG iterations of each step.
    pub fn run(&self, t: &mut B::Vector, steps: usize) -> Result<Vec<usize>> {
        let m = self.preconditioner()?;
        let mut iterations = Vec::with_capacity(steps);
        for _ in 0..steps {
            iterations.push(self.step(&m, t, false)?.iterations);
        }
        Ok(iterations)
    }

    /// Advances `t` by `steps` steps with the energy balance of each; `each` sees every step's
    /// record and state (outputs, progress) and may stop the run with an error.
    pub fn run_recorded(
        &self,
        t: &mut B::Vector,
        steps: usize,
        mut each: impl FnMut(&StepRecord, &B::Vector) -> Result<()>,
    ) -> Result<Vec<StepRecord>> {
        let m = self.preconditioner()?;
        let mut records = Vec::with_capacity(steps);
        for _ in 0..steps {
            let r = self.step(&m, t, true)?;
            each(&r, t)?;
            records.push(r);
        }
        Ok(records)
    }

    /// Jacobi on the implicit operator's diagonal (computed without assembly at every level).
    fn preconditioner(&self) -> Result<Jacobi<B>> {
        let be = self.implicit.backend;
        Jacobi::new(be, &self.implicit.operator.diagonal(be)?)
    }

    fn step(
        &self,
        m: &Jacobi<B>,
        t: &mut B::Vector,
        record: bool,
    ) -> Result<StepRecord> {
        let be = self.implicit.backend;
        let n = self.implicit.ndofs();
        let (t0, theta) = (f64::from_bits(self.time.load(Relaxed)), self.theta);
        let t1 = f64::from_bits(self.start.load(Relaxed))
            + (self.step.load(Relaxed) + 1) as f64 * self.dt;
        let (mut load, mut rhs) = (be.zeros(n)?, be.zeros(n)?);
        self.explicit.operator.apply(be, t, &mut load)?;
        let (mut heat_in, mut ambient_in) = (0.0, 0.0);
        for term in &self.terms {
            let w = term.schedule.weight(t0, t1, theta);
            if w != 0.0 {
                be.axpy(w, &term.vector, &mut load)?;
                match term.kind {
                    LoadKind::Input => heat_in += w * term.total,
                    LoadKind::Ambient => ambient_in += w * term.total,
                }
            }
        }
        let before = match &self.balance {
            Some(bv) if record => Some(self.measure(bv, t, Some(&load))?),
            _ => None,
        };
        // The lifting at tⁿ⁺¹: fresh vectors for values that change in time, else those built once.
        let fresh;
        let lifted: Option<(&B::Vector, &B::Vector)> = match self.lift.as_ref().filter(|l| !l.zero)
        {
            Some(l) if l.time_dependent => {
                fresh = l.evaluate(be, n, t1)?;
                Some((&fresh.0, &fresh.1))
            }
            Some(l) => Some((&l.g, &l.ag)),
            None => None,
        };
        if let Some((_, ag)) = lifted {
            be.axpy(-1.0, ag, &mut load)?;
        }
        be.pointwise_mult(&self.mask, &load, &mut rhs)?;
        if let Some((g, _)) = lifted {
            be.axpy(1.0, g, &mut rhs)?;
        }
        // On the GPU the PCG iterations run with their scalars on the device (`jacobi_cg`).
        if self.extrapolate {
            let mut prev = self.previous.lock().map_err(|_| Error::invalid("heat stepper state poisoned"))?;
            match prev.as_mut() {
                // prev ← 2Tⁿ − Tⁿ⁻¹, then swapped in: t holds the guess, prev holds Tⁿ.
                Some(p) => {
                    be.axpby(2.0, t, -1.0, p)?;
                    std::mem::swap(p, t);
                }
                None => {
                    let mut p = be.zeros(n)?;
                    be.copy(t, &mut p)?;
                    *prev = Some(p);
                }
            }
        }
        let stats = jacobi_cg(be, &self.implicit.operator, m, &rhs, t, &self.options)?;
        if self.lift.is_some() {
            // Constrained dofs exactly at their values (CG leaves them within its tolerance).
            be.pointwise_mult(&self.mask, t, &mut rhs)?;
            if let Some((g, _)) = lifted {
                be.axpy(1.0, g, &mut rhs)?;
            }
            std::mem::swap(t, &mut rhs);
        }
        self.time.store(t1.to_bits(), Relaxed);
        self.step.fetch_add(1, Relaxed);
        let balance = match before {
            Some(b0) => {
                let bv = self
                    .balance
                    .as_ref()
                    .ok_or_else(|| Error::invalid("balance vectors missing"))?;
                let b1 = self.measure(bv, t, None)?;
                Some(EnergyBalance::of_step(
                    &Balance {
                        dt: self.dt,
                        theta,
                        heat_in,
                        ambient_in,
                    },
                    &b0,
                    &b1,
                ))
            }
            None => None,
        };
        Ok(StepRecord {
            step: self.step.load(Relaxed),
            time: t1,
            iterations: stats.iterations,
            relative_residual: stats.relative_residual,
            balance,
        })
    }

    /// The dot products of the energy balance for state `t` (and the step's load `b`).
    fn measure(
        &self,
        bv: &BalanceVectors<B>,
        t: &B::Vector,
        b: Option<&B::Vector>,
    ) -> Result<Measure> {
        let be = self.implicit.backend;
        Ok(Measure {
            stored: be.dot(&bv.m, t)?,
            robin: bv
                .robin_rows
                .as_ref()
                .map(|r| be.dot(r, t))
                .transpose()?
                .unwrap_or(0.0),
            dirichlet_rows: bv
                .a_d
                .as_ref()
                .map(|a| be.dot(a, t))
                .transpose()?
                .unwrap_or(0.0),
            dirichlet_load: match (&bv.comask, b) {
                (Some(c), Some(b)) => be.dot(c, b)?,
                _ => 0.0,
            },
        })
    }
}

impl<B: FeBackend> Lift<'_, B> {
    /// g(t) on the host (zero on free dofs), on the backend, and A g.
    fn evaluate(&self, be: &B, n: usize, t: f64) -> Result<(B::Vector, B::Vector)> {
        let mut g = vec![0.0; n];
        for ((&d, &x), &w) in self.dofs.iter().zip(&self.coords).zip(&self.which) {
            g[d] = (self.values[w])(x, t);
        }
        if let Some((i, _)) = self
            .dofs
            .iter()
            .enumerate()
            .find(|(i, _)| !g[self.dofs[*i]].is_finite())
        {
            return Err(Error::invalid(format!(
                "Dirichlet temperature at {:?}, t = {t} is not finite",
                self.coords[i]
            )));
        }
        let u = self
            .unconstrained
            .as_ref()
            .ok_or_else(|| Error::invalid("Dirichlet lifting without its operator"))?;
        let g = be.from_host(&g)?;
        let mut ag = be.zeros(n)?;
        u.operator.apply(be, &g, &mut ag)?;
        Ok((g, ag))
    }

    fn update(&mut self, be: &B, n: usize, t: f64) -> Result<()> {
        let (g, ag) = self.evaluate(be, n, t)?;
        self.g = g;
        self.ag = ag;
        Ok(())
    }
}
