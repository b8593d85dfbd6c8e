//! Bayesian inversion by Markov chain Monte Carlo (issue 13): priors, an adaptive random-walk
//! Metropolis–Hastings chain with exact checkpoint/resume, and the diagnostics a user reads
//! (posterior mean, s.d., credible interval, effective sample size, split-R̂). The forward model is
//! any log-likelihood closure; the heat solver plugs in there.
pub mod camera;
pub mod chain;
pub mod diagnostics;
pub mod prior;
pub mod rng;

pub use camera::Camera;
pub use chain::{Chain, ChainConfig, ChainState};
pub use diagnostics::{effective_sample_size, split_rhat, Summary};
pub use prior::Prior;
pub use rng::Rng;
