//! Transient heat conduction ρc ∂T/∂t − ∇·(k∇T) = Q by the θ-method (issue 12).
//!
//! - [`stepper`]: the time loop over the one finite element operator (any level, any backend);
//! - [`loads`]: Dirichlet temperatures, heat flux, Gaussian laser, Robin convection, sources;
//! - [`balance`]: the energy balance of each step;
//! - [`material`]: heterogeneous material as a material index per cell and a property table;
//! - [`config`], [`run`], [`output`]: the `[physics] kind = "heat"` problem file.
pub mod balance;
pub mod loads;
pub mod material;
pub mod stepper;
pub mod lattice;
pub mod direct;
pub mod faces;

pub use balance::{EnergyBalance, StepRecord};
pub use loads::{HeatLoads, Laser, Load, Schedule};
pub use material::{Corrosion, Material, MaterialMap, Profile, Rule, Selector, Shape, Voxels};
pub use stepper::{HeatSetup, HeatStepper};
pub mod config;
pub mod output;
pub mod run;
