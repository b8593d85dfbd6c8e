//! Loads of a heat run: Dirichlet temperatures, prescribed heat flux (incl. a Gaussian laser
//! spot), Robin convection h(T − T∞) and a volumetric source Q. Every load but Dirichlet is a
//! fixed spatial vector (assembled once, on the host, by [`LinearProblem::load_only`]) times a
//! scalar [`Schedule`] of time, so a step costs one `axpy` per load on the backend.
use super::super::linear::{flux, Boundary, LinearProblem};
use crate::physics::Mass;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use std::sync::Arc;

/// A scalar function of position.
pub type SpaceFn = Arc<dyn Fn([f64; 3]) -> f64 + Send + Sync>;
/// A scalar function of position and time.
pub type SpaceTimeFn = Arc<dyn Fn([f64; 3], f64) -> f64 + Send + Sync>;
/// A scalar function of time.
pub type TimeFn = Arc<dyn Fn(f64) -> f64 + Send + Sync>;

/// When and how strongly a load acts: `factor(t)` (default 1) while `on ≤ t < off`.
///
/// Per step the load is weighted by `θ·factor(tⁿ⁺¹) + (1−θ)·factor(tⁿ)` times the fraction of the
/// step inside `[on, off)`: a switch inside a step delivers exactly the heat of the part of the
/// step it is on (a pulse shorter than Δt is not lost).
#[derive(Clone)]
pub struct Schedule {
    pub factor: Option<TimeFn>,
    pub on: f64,
    pub off: f64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            factor: None,
            on: f64::NEG_INFINITY,
            off: f64::INFINITY,
        }
    }
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Schedule {{ factor: {}, on: {}, off: {} }}",
            if self.factor.is_some() { "fn" } else { "1" },
            self.on,
            self.off
        )
    }
}

impl Schedule {
    /// On during `[on, off)`.
    pub fn window(on: f64, off: f64) -> Self {
        Schedule {
            on,
            off,
            ..Schedule::default()
        }
    }

    /// Scaled by `f(t)`.
    pub fn factor(mut self, f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Self {
        self.factor = Some(Arc::new(f));
        self
    }

    pub(crate) fn check(&self, what: &str) -> Result<()> {
        if self.on.is_nan() || self.off.is_nan() || self.off < self.on {
            return Err(Error::invalid(format!(
                "{what}: the on/off times must satisfy on ≤ off (got {} and {})",
                self.on, self.off
            )));
        }
        Ok(())
    }

    /// The weight of the load over the step `[t0, t1]` of the θ-method.
    pub fn weight(&self, t0: f64, t1: f64, theta: f64) -> f64 {
        let overlap = (t1.min(self.off) - t0.max(self.on)).max(0.0);
        let fraction = if t1 > t0 { overlap / (t1 - t0) } else { 0.0 };
        if fraction == 0.0 {
            return 0.0;
        }
        let f = match &self.factor {
            None => 1.0,
            Some(g) => theta * g(t1) + (1.0 - theta) * g(t0),
        };
        fraction * f
    }
}

/// A Gaussian laser spot: q(x) = 2P/(π w²) · exp(−2|x − c|²/w²).
///
/// `radius` is the 1/e² radius w (where the intensity falls to e⁻² of its peak; the "beam width"
/// 2w is the 1/e² diameter). With that convention the flux integrates to exactly `power` over an
/// infinite plane through `centre`; on a finite face or a coarse mesh the delivered power is
/// what the assembled load integrates to (the energy balance uses that value).
#[derive(Clone, Copy, Debug)]
pub struct Laser {
    /// Total power P (W).
    pub power: f64,
    /// 1/e² radius w (m).
    pub radius: f64,
    /// Centre of the spot (a point on the heated face).
    pub centre: [f64; 3],
}

impl Laser {
    /// Flux density at `x` (W/m²).
    pub fn flux(&self, x: [f64; 3]) -> f64 {
        let w2 = self.radius * self.radius;
        let r2: f64 = (0..3).map(|k| (x[k] - self.centre[k]).powi(2)).sum();
        2.0 * self.power / (std::f64::consts::PI * w2) * (-2.0 * r2 / w2).exp()
    }

    pub(crate) fn check(&self) -> Result<()> {
        if !(self.power.is_finite() && self.power >= 0.0) {
            return Err(Error::invalid(format!(
                "laser power must be finite and non-negative (got {})",
                self.power
            )));
        }
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(Error::invalid(format!(
                "laser radius must be positive and finite (got {})",
                self.radius
            )));
        }
        if self.centre.iter().any(|c| !c.is_finite()) {
            return Err(Error::invalid(format!(
                "laser centre must be finite (got {:?})",
                self.centre
            )));
        }
        Ok(())
    }
}

/// One load of a heat run.
#[derive(Clone)]
pub enum Load {
    /// T = value(x, t) on the boundaries (later conditions win on shared nodes).
    Dirichlet {
        on: Vec<Boundary>,
        value: SpaceTimeFn,
        time_dependent: bool,
    },
    /// Heat flux q(x) into the body (W/m², k∂T/∂n = q) on the boundaries.
    Flux {
        on: Vec<Boundary>,
        q: SpaceFn,
        schedule: Schedule,
    },
    /// A Gaussian laser spot on the boundaries.
    Laser {
        on: Vec<Boundary>,
        laser: Laser,
        schedule: Schedule,
    },
    /// Convection k∂T/∂n = −h(T − T∞): h in both step operators (θ-weighted), h·T∞ as a load.
    Robin {
        on: Vec<Boundary>,
        h: f64,
        ambient: f64,
    },
    /// Volumetric source Q(x) (W/m³).
    Source { q: SpaceFn, schedule: Schedule },
}

/// The loads of a heat run beyond the insulated default (empty: every face insulated, no source).
#[derive(Clone, Default)]
pub struct HeatLoads {
    pub loads: Vec<Load>,
}

fn boundaries<T: Into<Boundary>>(on: impl IntoIterator<Item = T>) -> Vec<Boundary> {
    on.into_iter().map(Into::into).collect()
}

impl HeatLoads {
    /// A constant temperature on `on`.
    pub fn temperature<T: Into<Boundary>>(
        self,
        on: impl IntoIterator<Item = T>,
        value: f64,
    ) -> Self {
        self.push(Load::Dirichlet {
            on: boundaries(on),
            value: Arc::new(move |_, _| value),
            time_dependent: false,
        })
    }

    /// A temperature g(x, t) on `on` (re-evaluated every step on the boundary nodes).
    pub fn dirichlet<T: Into<Boundary>>(
        self,
        on: impl IntoIterator<Item = T>,
        value: impl Fn([f64; 3], f64) -> f64 + Send + Sync + 'static,
    ) -> Self {
        self.push(Load::Dirichlet {
            on: boundaries(on),
            value: Arc::new(value),
            time_dependent: true,
        })
    }

    /// Heat flux q(x) into the body through `on`.
    pub fn flux<T: Into<Boundary>>(
        self,
        on: impl IntoIterator<Item = T>,
        q: impl Fn([f64; 3]) -> f64 + Send + Sync + 'static,
        schedule: Schedule,
    ) -> Self {
        self.push(Load::Flux {
            on: boundaries(on),
            q: Arc::new(q),
            schedule,
        })
    }

    pub fn laser<T: Into<Boundary>>(
        self,
        on: impl IntoIterator<Item = T>,
        laser: Laser,
        schedule: Schedule,
    ) -> Self {
        self.push(Load::Laser {
            on: boundaries(on),
            laser,
            schedule,
        })
    }

    pub fn robin<T: Into<Boundary>>(
        self,
        on: impl IntoIterator<Item = T>,
        h: f64,
        ambient: f64,
    ) -> Self {
        self.push(Load::Robin {
            on: boundaries(on),
            h,
            ambient,
        })
    }

    pub fn source(
        self,
        q: impl Fn([f64; 3]) -> f64 + Send + Sync + 'static,
        schedule: Schedule,
    ) -> Self {
        self.push(Load::Source {
            q: Arc::new(q),
            schedule,
        })
    }

    pub fn push(mut self, load: Load) -> Self {
        self.loads.push(load);
        self
    }

    /// Values that no mesh is needed to check.
    pub(crate) fn check(&self) -> Result<()> {
        for (i, l) in self.loads.iter().enumerate() {
            let what = format!("load {i}");
            match l {
                Load::Laser {
                    laser, schedule, ..
                } => {
                    laser.check()?;
                    schedule.check(&what)?
                }
                Load::Flux { schedule, .. } | Load::Source { schedule, .. } => {
                    schedule.check(&what)?
                }
                Load::Robin { h, ambient, .. } => {
                    if !(h.is_finite() && *h >= 0.0) {
                        return Err(Error::invalid(format!(
                            "{what}: Robin `h` must be finite and non-negative (got {h})"
                        )));
                    }
                    if !ambient.is_finite() {
                        return Err(Error::invalid(format!(
                            "{what}: Robin ambient temperature must be finite (got {ambient})"
                        )));
                    }
                }
                Load::Dirichlet { .. } => {}
            }
        }
        Ok(())
    }
}

/// Whether a load vector is heat put in (flux, laser, source) or the ambient part of a Robin
/// condition (counted with the convective loss in the energy balance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoadKind {
    Input,
    Ambient,
}

/// A load assembled on the host: vector, its sum (the heat rate at weight 1), schedule and kind.
pub(crate) struct HostLoad {
    pub vector: Vec<f64>,
    pub total: f64,
    pub schedule: Schedule,
    pub kind: LoadKind,
}

/// `∫ f v ds` over `on` (a zero-physics problem: only the load is assembled).
fn surface_load(space: &Arc<FunctionSpace>, on: &[Boundary], f: SpaceFn) -> Result<Vec<f64>> {
    LinearProblem::new(space.clone(), Mass::new(1.0, 1))
        .neumann(on.to_vec(), flux(move |x, _| f(x)))
        .load_only()
}

/// Assembles the load vectors (everything but Dirichlet) and the Robin row sums `∫ h φᵢ ds`.
pub(crate) fn assemble(
    space: &Arc<FunctionSpace>,
    loads: &HeatLoads,
) -> Result<(Vec<HostLoad>, Option<Vec<f64>>)> {
    let mut out = Vec::new();
    let mut robin_rows: Option<Vec<f64>> = None;
    let host = |vector: Vec<f64>, schedule: Schedule, kind| {
        let total = vector.iter().sum();
        HostLoad {
            vector,
            total,
            schedule,
            kind,
        }
    };
    for l in &loads.loads {
        match l {
            Load::Dirichlet { .. } => {}
            Load::Flux { on, q, schedule } => out.push(host(
                surface_load(space, on, q.clone())?,
                schedule.clone(),
                LoadKind::Input,
            )),
            Load::Laser {
                on,
                laser,
                schedule,
            } => {
                let laser = *laser;
                out.push(host(
                    surface_load(space, on, Arc::new(move |x| laser.flux(x)))?,
                    schedule.clone(),
                    LoadKind::Input,
                ))
            }
            Load::Robin { on, h, ambient } => {
                let (h, ambient) = (*h, *ambient);
                let rows = surface_load(space, on, Arc::new(move |_| h))?;
                out.push(host(
                    rows.iter().map(|r| r * ambient).collect(),
                    Schedule::default(),
                    LoadKind::Ambient,
                ));
                match &mut robin_rows {
                    Some(acc) => acc.iter_mut().zip(&rows).for_each(|(a, r)| *a += r),
                    None => robin_rows = Some(rows),
                }
            }
            Load::Source { q, schedule } => {
                let q = q.clone();
                let v = LinearProblem::new(space.clone(), Mass::new(1.0, 1))
                    .source(Arc::new(move |x, out: &mut [f64]| out[0] = q(x)))
                    .load_only()?;
                out.push(host(v, schedule.clone(), LoadKind::Input))
            }
        }
    }
    Ok((out, robin_rows))
}

/// The Robin conditions as (boundaries, h): what the step operators add.
pub(crate) fn robin_terms(loads: &HeatLoads) -> Vec<(Vec<Boundary>, f64)> {
    loads
        .loads
        .iter()
        .filter_map(|l| match l {
            Load::Robin { on, h, .. } => Some((on.clone(), *h)),
            _ => None,
        })
        .collect()
}
