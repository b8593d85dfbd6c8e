//! A DG problem −(a u′)′ + c u = f on an interval: mesh, degree and basis, method and penalty,
//! coefficients and the condition at each end; and the coefficients sampled at the quadrature
//! points, checked (a > 0, c ≥ 0, all finite) with errors that name the key and the point.
use super::basis::{BasisKind, Tabulation};
use super::mesh::IntervalMesh;
use super::method::{Method, Penalty};
use crate::expr::Expr;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// A scalar function of x: a number, a parsed expression, or a closure.
#[derive(Clone)]
pub enum Field {
    Const(f64),
    Expr(Expr),
    Fn(Arc<dyn Fn(f64) -> f64 + Send + Sync>),
}

impl Field {
    pub fn func(f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Field {
        Field::Fn(Arc::new(f))
    }

    pub fn eval(&self, x: f64) -> f64 {
        match self {
            Field::Const(v) => *v,
            Field::Expr(e) => e.eval([x, 0.0, 0.0], 0.0),
            Field::Fn(f) => f(x),
        }
    }

    /// The value when it is the same everywhere (no sampling, no upload).
    pub fn constant(&self) -> Option<f64> {
        match self {
            Field::Const(v) => Some(*v),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Field::Const(v) => write!(f, "{v}"),
            Field::Expr(e) => write!(f, "{:?}", e.source()),
            Field::Fn(_) => f.write_str("<closure>"),
        }
    }
}

/// Condition at one end of the interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BoundaryCondition {
    /// u = value, imposed weakly (Nitsche) with the boundary penalty.
    Dirichlet(f64),
    /// Outward flux a ∂u/∂n = value (at the left end n = −1: −a u′ = value).
    Neumann(f64),
}

impl BoundaryCondition {
    /// 0 = Dirichlet, 1 = Neumann, and the value: what the GPU kernel receives.
    pub fn code(self) -> (i32, f64) {
        match self {
            BoundaryCondition::Dirichlet(v) => (0, v),
            BoundaryCondition::Neumann(v) => (1, v),
        }
    }
}

/// Problem-file keys of the coefficients, used in error messages.
pub const KEY_A: &str = "physics.kappa";
pub const KEY_C: &str = "physics.reaction";
pub const KEY_F: &str = "physics.source";

/// Everything that defines the discrete problem.
#[derive(Clone, Debug)]
pub struct DgProblem {
    pub mesh: IntervalMesh,
    pub degree: usize,
    pub basis: BasisKind,
    /// Gauss points per element; `None`: k + 2 (exact for the mass matrix with a linear c).
    pub quadrature_points: Option<usize>,
    pub method: Method,
    pub penalty: Penalty,
    /// Diffusion a(x) ≥ a0 > 0, reaction c(x) ≥ 0, source f(x).
    pub a: Field,
    pub c: Field,
    pub f: Field,
    pub left: BoundaryCondition,
    pub right: BoundaryCondition,
}

impl DgProblem {
    /// −u″ = 0 with homogeneous Dirichlet ends, SIPG, Legendre basis, default penalty: set the
    /// fields that differ.
    pub fn new(mesh: IntervalMesh, degree: usize) -> DgProblem {
        DgProblem {
            mesh,
            degree,
            basis: BasisKind::Legendre,
            quadrature_points: None,
            method: Method::Sipg,
            penalty: Penalty::default(),
            a: Field::Const(1.0),
            c: Field::Const(0.0),
            f: Field::Const(0.0),
            left: BoundaryCondition::Dirichlet(0.0),
            right: BoundaryCondition::Dirichlet(0.0),
        }
    }

    /// Unknowns per element, k + 1.
    pub fn block(&self) -> usize {
        self.degree + 1
    }

    pub fn ndofs(&self) -> usize {
        self.mesh.len() * self.block()
    }

    pub fn npoints(&self) -> usize {
        self.quadrature_points.unwrap_or(self.degree + 2)
    }

    pub fn tabulation(&self) -> Result<Tabulation> {
        Tabulation::new(self.basis, self.degree, self.npoints())
    }

    /// Checks what sampling cannot: the penalty and the boundary values.
    pub fn check(&self) -> Result<()> {
        let p = &self.penalty;
        for (key, v) in [("space.penalty", p.sigma), ("space.boundary_penalty", p.boundary_sigma)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::config(key, format!("must be a non-negative number, got {v}")));
            }
        }
        for (key, bc) in [("bc.xmin", self.left), ("bc.xmax", self.right)] {
            let (BoundaryCondition::Dirichlet(v) | BoundaryCondition::Neumann(v)) = bc;
            if !v.is_finite() {
                return Err(Error::config(key, format!("boundary value is {v}")));
            }
        }
        Ok(())
    }

    /// The coefficients at every quadrature point (and a at every vertex), checked.
    pub fn sample(&self, tab: &Tabulation) -> Result<Samples> {
        self.check()?;
        let both_neumann = matches!((self.left, self.right), (BoundaryCondition::Neumann(_), BoundaryCondition::Neumann(_)));
        let a_q = sample_points(&self.a, KEY_A, &self.mesh, tab, Check::Positive)?;
        let c_q = sample_points(&self.c, KEY_C, &self.mesh, tab, Check::NonNegative)?;
        let f_q = sample_points(&self.f, KEY_F, &self.mesh, tab, Check::Finite)?;
        let a_nodes = match self.a.constant() {
            Some(v) => Sampled::constant(v),
            None => {
                let v: Vec<f64> = self.mesh.nodes().par_iter().map(|&x| self.a.eval(x)).collect();
                check_values(&v, KEY_A, Check::Positive, |i| self.mesh.nodes()[i])?;
                Sampled { values: v, stride: 1 }
            }
        };
        if both_neumann && c_q.values.iter().all(|&c| c == 0.0) {
            return Err(Error::config(
                "bc",
                "Neumann conditions at both ends with c = 0 leave u determined only up to a constant: \
                 make one end Dirichlet or give a reaction c > 0",
            ));
        }
        Ok(Samples { a_q, c_q, f_q, a_nodes })
    }
}

/// Memory a DG run needs for `n` elements of degree `k`, `q` points and `sampled` non-constant
/// coefficient fields, on the host and (with `gpu`) on the device, checked before anything is built.
pub fn memory_estimate(n: usize, k: usize, q: usize, sampled: usize, gpu: bool) -> (crate::memory::Estimate, Option<crate::memory::Estimate>) {
    let (n, b, q) = (n as f64, (k + 1) as f64, q as f64);
    let matrix = 24.0 * b * b * n;
    let vector = 8.0 * b * n;
    let mut host = crate::memory::Estimate::default();
    host.add("mesh", 8.0 * (n + 1.0));
    host.add("coefficient samples", 8.0 * n * q * sampled as f64 + 8.0 * (n + 1.0));
    if gpu {
        host.add("solution", 2.0 * vector);
        let mut device = crate::memory::Estimate::default();
        device.add("mesh and samples", 8.0 * (n + 1.0) * 2.0 + 8.0 * n * q * sampled as f64);
        device.add("matrix", matrix);
        device.add("matrix copy for the residual check", matrix);
        device.add("cyclic-reduction levels", matrix);
        device.add("vectors", 8.0 * vector);
        (host, Some(device))
    } else {
        host.add("matrix", matrix);
        host.add("factorization (matrix copy and levels)", 2.0 * matrix);
        host.add("vectors", 8.0 * vector);
        (host, None)
    }
}

/// Values of one field: one per element and point (`values[e·stride + q]`), or a single value for
/// all (`stride == 0`), which is what crosses to the GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    pub values: Vec<f64>,
    pub stride: usize,
}

impl Sampled {
    pub fn constant(v: f64) -> Sampled {
        Sampled { values: vec![v], stride: 0 }
    }

    #[inline(always)]
    pub fn at(&self, e: usize, q: usize) -> f64 {
        self.values[e * self.stride + q * usize::from(self.stride != 0)]
    }

    /// Bytes this field takes in memory.
    pub fn bytes(&self) -> usize {
        8 * self.values.len()
    }
}

/// a, c, f at the quadrature points and a at the vertices.
#[derive(Clone, Debug)]
pub struct Samples {
    pub a_q: Sampled,
    pub c_q: Sampled,
    pub f_q: Sampled,
    pub a_nodes: Sampled,
}

#[derive(Clone, Copy)]
enum Check {
    Positive,
    NonNegative,
    Finite,
}

fn check_values(v: &[f64], key: &str, check: Check, x_of: impl Fn(usize) -> f64 + Sync) -> Result<()> {
    let bad = |x: f64| match check {
        Check::Positive => !(x > 0.0 && x.is_finite()),
        Check::NonNegative => !(x >= 0.0 && x.is_finite()),
        Check::Finite => !x.is_finite(),
    };
    if let Some(i) = v.par_iter().position_first(|&x| bad(x)) {
        let what = match check {
            Check::Positive => "must be positive and finite (a ≥ a0 > 0)",
            Check::NonNegative => "must be non-negative and finite",
            Check::Finite => "must be finite",
        };
        return Err(Error::config(key, format!("{what}, got {} at x = {}", v[i], x_of(i))));
    }
    Ok(())
}

fn sample_points(field: &Field, key: &str, mesh: &IntervalMesh, tab: &Tabulation, check: Check) -> Result<Sampled> {
    let q = tab.npoints();
    let x_of = |i: usize| {
        let (e, p) = (i / q, i % q);
        let (x0, x1) = (mesh.nodes()[e], mesh.nodes()[e + 1]);
        0.5 * (x0 + x1) + 0.5 * (x1 - x0) * tab.points[p]
    };
    if let Some(v) = field.constant() {
        check_values(&[v], key, check, |_| mesh.nodes()[0])?;
        return Ok(Sampled::constant(v));
    }
    let values: Vec<f64> = (0..mesh.len() * q).into_par_iter().map(|i| field.eval(x_of(i))).collect();
    check_values(&values, key, check, x_of)?;
    Ok(Sampled { values, stride: q })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_are_checked_with_key_and_point() {
        let mut p = DgProblem::new(IntervalMesh::uniform(4, 0.0, 1.0).unwrap(), 2);
        let tab = p.tabulation().unwrap();
        p.a = Field::Expr(Expr::parse("x - 0.5").unwrap());
        let e = p.sample(&tab).unwrap_err().to_string();
        assert!(e.contains("physics.kappa") && e.contains("positive") && e.contains("x = 0."), "{e}");
        p.a = Field::Const(1.0);
        p.c = Field::Const(-1.0);
        let e = p.sample(&tab).unwrap_err().to_string();
        assert!(e.contains("physics.reaction") && e.contains("-1"), "{e}");
        p.c = Field::Const(0.0);
        p.f = Field::Expr(Expr::parse("1/(x-x)").unwrap());
        let e = p.sample(&tab).unwrap_err().to_string();
        assert!(e.contains("physics.source") && e.contains("finite"), "{e}");
        p.f = Field::Const(1.0);
        p.left = BoundaryCondition::Neumann(0.0);
        p.right = BoundaryCondition::Neumann(1.0);
        let e = p.sample(&tab).unwrap_err().to_string();
        assert!(e.contains("Neumann") && e.contains("constant"), "{e}");
        p.c = Field::func(|x| x);
        let s = p.sample(&tab).unwrap();
        assert_eq!(s.c_q.stride, 4);
        assert_eq!(s.a_q, Sampled::constant(1.0));
        p.penalty.sigma = -1.0;
        assert!(p.sample(&tab).unwrap_err().to_string().contains("space.penalty"));
    }
}
