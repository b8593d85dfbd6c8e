//! Bayesian inversion by Markov chain Monte Carlo (issue 13): priors, an adaptive random-walk
//! Metropolis–Hastings chain with exact checkpoint/resume, the diagnostics a user reads
//! (posterior mean, s.d., credible interval, effective sample size, split-R̂), the thermal camera,
//! and the heat forward model whose only per-sample change is the material of every cell
//! ([`forward`]); [`run`] is `galerkin invert`.
pub mod camera;
pub mod chain;
pub mod config;
pub mod data;
pub mod diagnostics;
pub mod forward;
pub mod plots;
pub mod prior;
pub mod rng;
pub mod run;

pub use camera::Camera;
pub use chain::{Chain, ChainConfig, ChainState};
pub use diagnostics::{effective_sample_size, split_rhat, Summary};
pub use forward::{HeatForward, Parameter};
pub use prior::Prior;
pub use rng::Rng;
pub use run::{InvertOptions, InvertReport};
