//! Prior distributions of the parameters, validated on construction.
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Prior {
    /// Uniform on [lo, hi] (the seed's prior over the plate thickness).
    Uniform { lo: f64, hi: f64 },
    Normal { mean: f64, sd: f64 },
}

impl Prior {
    /// Checks the parameters: finite, lo < hi, sd > 0.
    pub fn check(&self, name: &str) -> Result<()> {
        match *self {
            Prior::Uniform { lo, hi } if !(lo.is_finite() && hi.is_finite() && lo < hi) => {
                Err(Error::invalid(format!("prior of `{name}`: uniform needs finite lo < hi (got [{lo}, {hi}])")))
            }
            Prior::Normal { mean, sd } if !(mean.is_finite() && sd.is_finite() && sd > 0.0) => {
                Err(Error::invalid(format!("prior of `{name}`: normal needs a finite mean and sd > 0 (got {mean}, {sd})")))
            }
            _ => Ok(()),
        }
    }

    /// log density up to a constant; −∞ outside the support.
    pub fn log_density(&self, x: f64) -> f64 {
        match *self {
            Prior::Uniform { lo, hi } => {
                if (lo..=hi).contains(&x) {
                    0.0
                } else {
                    f64::NEG_INFINITY
                }
            }
            Prior::Normal { mean, sd } => -0.5 * ((x - mean) / sd).powi(2),
        }
    }

    /// A point of high prior density to start a chain from.
    pub fn center(&self) -> f64 {
        match *self {
            Prior::Uniform { lo, hi } => 0.5 * (lo + hi),
            Prior::Normal { mean, .. } => mean,
        }
    }

    /// A natural first proposal step (a tenth of the prior's spread).
    pub fn scale(&self) -> f64 {
        match *self {
            Prior::Uniform { lo, hi } => 0.1 * (hi - lo),
            Prior::Normal { sd, .. } => 0.1 * sd,
        }
    }
}
