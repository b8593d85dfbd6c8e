//! The energy balance of a θ-step: heat put in (flux, laser, source) plus heat entering through
//! Dirichlet faces equals the change of the heat content ∫ρcT plus the convective (Robin) loss.
//!
//! Summing all rows of the step's equations gives it exactly (the conduction matrix annihilates
//! constants), so on the free rows it holds to the solver tolerance; the Dirichlet reaction is
//! measured directly as the residual of the unconstrained operator on the constrained rows:
//! `Q_D = Δt·Σ_D (A Tⁿ⁺¹ − b)ᵢ`, with `Σ_D (A T)ᵢ = a_D·T` (`a_D = A(1 − mask)`, A symmetric).
use serde::Serialize;

/// One step of a run.
#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    /// 1 for the first step.
    pub step: usize,
    /// Time at the end of the step.
    pub time: f64,
    pub iterations: usize,
    pub relative_residual: f64,
    pub balance: Option<EnergyBalance>,
}

/// Energies of one step (J).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct EnergyBalance {
    /// Heat put in by fluxes, lasers and sources over the step.
    pub heat_in: f64,
    /// Heat that entered through Dirichlet faces (negative: left).
    pub dirichlet_in: f64,
    /// Convective loss ∫∫ h(T − T∞) over the step.
    pub robin_loss: f64,
    /// Change of the heat content ∫ρcT.
    pub stored_change: f64,
    /// Heat content at the end of the step.
    pub stored: f64,
    /// heat_in + dirichlet_in − robin_loss − stored_change.
    pub residual: f64,
    /// |residual| over the largest gross term (heat in, loss, stored change, either part of the
    /// Dirichlet reaction).
    pub relative: f64,
}

/// The dot products measured on a state.
pub(crate) struct Measure {
    pub stored: f64,
    pub robin: f64,
    pub dirichlet_rows: f64,
    pub dirichlet_load: f64,
}

/// The step's parameters and its load rates at weight (heat and Robin ambient part, per second).
pub(crate) struct Balance {
    pub dt: f64,
    pub theta: f64,
    pub heat_in: f64,
    pub ambient_in: f64,
}

impl EnergyBalance {
    /// From the measures before (`b0`, with the step's load) and after (`b1`) the step.
    pub(crate) fn of_step(p: &Balance, b0: &Measure, b1: &Measure) -> EnergyBalance {
        let heat_in = p.dt * p.heat_in;
        let stored_change = b1.stored - b0.stored;
        let robin_loss = p.dt * (p.theta * b1.robin + (1.0 - p.theta) * b0.robin - p.ambient_in);
        let dirichlet_in = p.dt * (b1.dirichlet_rows - b0.dirichlet_load);
        let residual = heat_in + dirichlet_in - robin_loss - stored_change;
        // Heat entering through one Dirichlet face may leave through another: the gross terms of
        // the reaction (not only their sum) set the scale of what the solver tolerance allows.
        let gross = [
            heat_in,
            robin_loss,
            stored_change,
            p.dt * b1.dirichlet_rows,
            p.dt * b0.dirichlet_load,
        ];
        let scale = gross.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
        EnergyBalance {
            heat_in,
            dirichlet_in,
            robin_loss,
            stored_change,
            stored: b1.stored,
            residual,
            relative: residual.abs() / scale,
        }
    }
}
