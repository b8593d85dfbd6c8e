//! Coefficients, sources and boundary data of IGA problems: a function of position with the name
//! of the key it came from, so a value that is not finite is an error naming that key and the
//! point (`physics.a is NaN at x = 0.5`), found where it is evaluated.
use crate::expr::Expr;
use crate::{Error, Result};
use std::sync::Arc;

type Fun = dyn Fn([f64; 2]) -> f64 + Send + Sync;

/// `f(x, y)` (1D problems see `y = 0`), named by `key`.
#[derive(Clone)]
pub struct Field {
    key: String,
    f: Arc<Fun>,
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({})", self.key)
    }
}

impl Field {
    pub fn new(key: impl Into<String>, f: impl Fn([f64; 2]) -> f64 + Send + Sync + 'static) -> Field {
        Field { key: key.into(), f: Arc::new(f) }
    }
    pub fn constant(key: impl Into<String>, v: f64) -> Field {
        Field::new(key, move |_| v)
    }
    /// An expression of x, y (and z = t = 0).
    pub fn expr(key: impl Into<String>, e: Expr) -> Field {
        Field::new(key, move |p| e.eval([p[0], p[1], 0.0], 0.0))
    }
    pub fn key(&self) -> &str {
        &self.key
    }
    /// The value at `p`, unchecked.
    pub fn value(&self, p: [f64; 2]) -> f64 {
        (self.f)(p)
    }
    /// The value at `p`; a non-finite value is an error naming the key and the point.
    pub fn eval(&self, p: [f64; 2], dim: usize) -> Result<f64> {
        let v = (self.f)(p);
        if v.is_finite() {
            Ok(v)
        } else {
            let at = if dim == 1 { format!("x = {}", p[0]) } else { format!("(x, y) = ({}, {})", p[0], p[1]) };
            Err(Error::config(&self.key, format!("evaluates to {v} at {at}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_values_name_key_and_point() {
        let f = Field::expr("physics.a", Expr::parse("1/(x-0.5)").unwrap());
        assert_eq!(f.eval([0.0, 0.0], 1).unwrap(), -2.0);
        let e = f.eval([0.5, 0.0], 1).unwrap_err().to_string();
        assert!(e.contains("physics.a") && e.contains("x = 0.5") && e.contains("inf"), "{e}");
        let g = Field::constant("physics.f", f64::NAN);
        let e = g.eval([0.25, 1.0], 2).unwrap_err().to_string();
        assert!(e.contains("(x, y) = (0.25, 1)") && e.contains("NaN"), "{e}");
    }
}
