//! Scalar coefficient fields: constant, per region (Gmsh physical group), or a function of position
//! (a Rust closure or a parsed expression).
use crate::mesh::Mesh;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A scalar field evaluated at quadrature points.
#[derive(Clone)]
pub enum Coefficient {
    Constant(f64),
    /// One value per region tag; cells with other tags are an error caught by [`Coefficient::check`].
    PerRegion(BTreeMap<i32, f64>),
    Function(Arc<dyn Fn([f64; 3]) -> f64 + Send + Sync>),
}

impl Coefficient {
    /// A coefficient from a closure of the physical point.
    pub fn function(f: impl Fn([f64; 3]) -> f64 + Send + Sync + 'static) -> Self {
        Coefficient::Function(Arc::new(f))
    }

    #[inline]
    pub fn eval(&self, x: [f64; 3], region: i32) -> f64 {
        match self {
            Coefficient::Constant(v) => *v,
            Coefficient::PerRegion(m) => m.get(&region).copied().unwrap_or(f64::NAN),
            Coefficient::Function(f) => f(x),
        }
    }

    /// Check that every region of `mesh` has a value; `name` says which coefficient in the error.
    pub fn check(&self, mesh: &Mesh, name: &str) -> Result<()> {
        if let Coefficient::PerRegion(m) = self {
            if let Some(t) = mesh.cell_tags.iter().find(|t| !m.contains_key(t)) {
                return Err(Error::invalid(format!(
                    "coefficient `{name}` has no value for region {t} (it has {:?})",
                    m.keys().collect::<Vec<_>>()
                )));
            }
        }
        if let Coefficient::Constant(v) = self {
            if !v.is_finite() {
                return Err(Error::invalid(format!("coefficient `{name}` is not finite ({v})")));
            }
        }
        Ok(())
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, Coefficient::Constant(_))
    }
}

impl From<f64> for Coefficient {
    fn from(v: f64) -> Self {
        Coefficient::Constant(v)
    }
}

impl std::fmt::Debug for Coefficient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coefficient::Constant(v) => write!(f, "Constant({v})"),
            Coefficient::PerRegion(m) => write!(f, "PerRegion({m:?})"),
            Coefficient::Function(_) => write!(f, "Function(..)"),
        }
    }
}
