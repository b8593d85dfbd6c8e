//! Adaptive random-walk Metropolis–Hastings. The proposal is θ' = θ + s ⊙ ξ, ξ standard normal;
//! during burn-in each log sᵢ follows a Robbins–Monro step towards the target acceptance rate
//! (0.44, optimal in one dimension), then s is frozen so the recorded chain is a true Markov chain.
//! The whole state (θ, its log posterior, s, the RNG, counters and samples) is plain data: a
//! checkpoint is that state written atomically, and a resumed chain draws exactly the numbers an
//! uninterrupted one would, so it ends bit for bit the same.
use super::prior::Prior;
use super::rng::Rng;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a chain does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainConfig {
    pub burn_in: usize,
    pub samples: usize,
    /// Acceptance rate the step adapts to during burn-in.
    pub target_acceptance: f64,
    pub seed: u64,
    /// Iterations between checkpoints (0: only at the end).
    pub checkpoint_every: usize,
}

impl ChainConfig {
    pub fn check(&self) -> Result<()> {
        if self.samples == 0 {
            return Err(Error::invalid("MCMC: `samples` must be at least 1"));
        }
        if !(self.target_acceptance > 0.0 && self.target_acceptance < 1.0) {
            return Err(Error::invalid(format!("MCMC: `target_acceptance` must lie in (0, 1) (got {})", self.target_acceptance)));
        }
        Ok(())
    }
}

/// Everything a chain is, serializable (the checkpoint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainState {
    pub config: ChainConfig,
    pub theta: Vec<f64>,
    pub log_posterior: f64,
    /// Proposal step per parameter.
    pub step: Vec<f64>,
    pub rng: Rng,
    /// Iterations done (burn-in included).
    pub iteration: usize,
    /// Accepted proposals during burn-in and after it.
    pub accepted_burn_in: usize,
    pub accepted: usize,
    /// Recorded samples (after burn-in), one θ each.
    pub samples: Vec<Vec<f64>>,
}

impl ChainState {
    /// Acceptance rate of the recorded samples (NaN before the first).
    pub fn recorded_acceptance(&self) -> f64 {
        if self.samples.is_empty() {
            f64::NAN
        } else {
            self.accepted as f64 / self.samples.len() as f64
        }
    }

    /// Acceptance rate of the burn-in iterations done so far.
    pub fn burn_in_acceptance(&self) -> f64 {
        self.accepted_burn_in as f64 / self.config.burn_in.min(self.iteration).max(1) as f64
    }
}

/// A chain over parameters with the given priors.
#[derive(Debug)]
pub struct Chain<'p> {
    priors: &'p [Prior],
    pub state: ChainState,
}

/// The log likelihood of θ: the forward model and the data (an error stops the chain).
pub type LogLikelihood<'a> = dyn FnMut(&[f64]) -> Result<f64> + 'a;

fn log_prior(priors: &[Prior], theta: &[f64]) -> f64 {
    priors.iter().zip(theta).map(|(p, &x)| p.log_density(x)).sum()
}

impl<'p> Chain<'p> {
    /// A fresh chain started at `start` (default: the priors' centres).
    pub fn new(priors: &'p [Prior], config: ChainConfig, start: Option<Vec<f64>>, loglik: &mut LogLikelihood) -> Result<Chain<'p>> {
        config.check()?;
        if priors.is_empty() {
            return Err(Error::invalid("MCMC: no parameter to infer"));
        }
        for (i, p) in priors.iter().enumerate() {
            p.check(&format!("parameter {i}"))?;
        }
        let theta = start.unwrap_or_else(|| priors.iter().map(Prior::center).collect());
        if theta.len() != priors.len() {
            return Err(Error::dim("MCMC start point", priors.len(), theta.len()));
        }
        let lp = log_prior(priors, &theta);
        if lp == f64::NEG_INFINITY {
            return Err(Error::invalid(format!("MCMC: the start point {theta:?} lies outside the prior")));
        }
        let log_posterior = lp + Self::likelihood(loglik, &theta)?;
        let step = priors.iter().map(Prior::scale).collect();
        let rng = Rng::new(config.seed);
        Ok(Chain { priors, state: ChainState { config, theta, log_posterior, step, rng, iteration: 0, accepted_burn_in: 0, accepted: 0, samples: Vec::new() } })
    }

    /// The chain of a checkpoint.
    pub fn resume(priors: &'p [Prior], state: ChainState) -> Result<Chain<'p>> {
        state.config.check()?;
        if state.theta.len() != priors.len() || state.step.len() != priors.len() {
            return Err(Error::dim("MCMC checkpoint parameters", priors.len(), state.theta.len()));
        }
        Ok(Chain { priors, state })
    }

    /// Reads a checkpoint written by [`Chain::run`].
    pub fn load(path: &Path) -> Result<ChainState> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::invalid(format!("cannot read checkpoint {}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| Error::invalid(format!("checkpoint {} is damaged: {e}", path.display())))
    }

    fn likelihood(loglik: &mut LogLikelihood, theta: &[f64]) -> Result<f64> {
        let l = loglik(theta)?;
        if l.is_nan() || l == f64::INFINITY {
            return Err(Error::invalid(format!("MCMC: the log likelihood at θ = {theta:?} is {l}")));
        }
        Ok(l)
    }

    pub fn done(&self) -> bool {
        self.state.iteration >= self.state.config.burn_in + self.state.config.samples
    }

    /// Acceptance rate of the recorded part (burn-in's while still in it).
    pub fn acceptance_rate(&self) -> f64 {
        if self.state.samples.is_empty() {
            self.state.burn_in_acceptance()
        } else {
            self.state.recorded_acceptance()
        }
    }

    /// One Metropolis–Hastings iteration.
    pub fn advance(&mut self, loglik: &mut LogLikelihood) -> Result<()> {
        let s = &mut self.state;
        let proposal: Vec<f64> = s.theta.iter().zip(&s.step).map(|(t, h)| t + h * s.rng.normal()).collect();
        // Drawn whether or not the proposal is inside the prior: the stream does not depend on it.
        let u = s.rng.uniform();
        let lp = log_prior(self.priors, &proposal);
        let accept = if lp == f64::NEG_INFINITY {
            false
        } else {
            let post = lp + Self::likelihood(loglik, &proposal)?;
            if u.ln() < post - s.log_posterior {
                s.theta = proposal;
                s.log_posterior = post;
                true
            } else {
                false
            }
        };
        let in_burn_in = s.iteration < s.config.burn_in;
        if in_burn_in {
            s.accepted_burn_in += usize::from(accept);
            let gain = 1.0 / (1.0 + s.iteration as f64).powf(0.6);
            let a = if accept { 1.0 } else { 0.0 };
            for h in &mut s.step {
                *h *= (gain * (a - s.config.target_acceptance)).exp();
            }
        } else {
            s.accepted += usize::from(accept);
            s.samples.push(s.theta.clone());
        }
        s.iteration += 1;
        Ok(())
    }

    /// Runs to the end, writing the state to `checkpoint` (atomically) every
    /// `checkpoint_every` iterations and at the end; `each` sees the state after every iteration
    /// (progress) and may stop the run with an error.
    pub fn run(&mut self, loglik: &mut LogLikelihood, checkpoint: Option<&Path>, each: impl FnMut(&Chain) -> Result<()>) -> Result<()> {
        self.run_for(loglik, checkpoint, usize::MAX, each).map(|_| ())
    }

    /// As [`Chain::run`] for at most `budget` iterations (a time-boxed run: the checkpoint is
    /// also written where it stops, and [`Chain::resume`] goes on from there). Returns the
    /// iterations done.
    pub fn run_for(&mut self, loglik: &mut LogLikelihood, checkpoint: Option<&Path>, budget: usize, mut each: impl FnMut(&Chain) -> Result<()>) -> Result<usize> {
        let mut done = 0;
        while !self.done() && done < budget {
            self.advance(loglik)?;
            done += 1;
            let every = self.state.config.checkpoint_every;
            if let Some(path) = checkpoint {
                if (every > 0 && self.state.iteration % every == 0) || self.done() || done == budget {
                    self.save(path)?;
                }
            }
            each(self)?;
        }
        Ok(done)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        crate::io::write_json(path, &self.state)
    }
}
