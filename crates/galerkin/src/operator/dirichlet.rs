//! Dirichlet conditions by symmetric elimination. Constrained rows and columns become identity and
//! the known values move to the right-hand side, so symmetric problems stay symmetric (CG and
//! Cholesky still apply). The assembled (`full`) form edits the CSR values; the matrix-free form
//! wraps any operator as `M A M + (I − M)` with `M` the 0/1 mask of free dofs (MFEM's
//! ConstrainedOperator). Both give the same linear system.
use crate::backend::{Backend, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Mutex;

/// Constrained dofs (sorted, unique) and their prescribed values.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    pub dofs: Vec<usize>,
    pub values: Vec<f64>,
}

impl Constraints {
    /// A 0/1 vector: 1 on free dofs, 0 on constrained ones.
    pub fn free_mask(&self, n: usize) -> Vec<f64> {
        // Filled in parallel (10^7 entries at 10^7 unknowns, before the first iteration).
        let mut m: Vec<f64> = (0..n).into_par_iter().map(|_| 1.0).collect();
        for &d in &self.dofs {
            m[d] = 0.0;
        }
        m
    }

    /// The vector that is the prescribed value on constrained dofs and zero elsewhere.
    pub fn lift(&self, n: usize) -> Vec<f64> {
        let mut g = vec![0.0; n];
        for (&d, &v) in self.dofs.iter().zip(&self.values) {
            g[d] = v;
        }
        g
    }
}

/// Symmetric elimination in an assembled matrix: `b -= A g` on free rows, constrained rows and
/// columns set to the identity, `b = g` on constrained rows.
pub fn eliminate(a: &mut CsrMatrix, b: &mut [f64], cons: &Constraints) -> Result<()> {
    let n = a.nrows;
    a.eliminate(b, &cons.free_mask(n), &cons.lift(n))
}

/// `M A M + (I − M)` for any operator `A` on any backend.
pub struct Constrained<B: Backend, Op> {
    pub inner: Op,
    mask: B::Vector,
    comask: B::Vector,
    scratch: Mutex<B::Vector>,
}

impl<B: Backend, Op: LinearOperator<B>> Constrained<B, Op> {
    pub fn new(backend: &B, inner: Op, cons: &Constraints) -> Result<Self> {
        let n = inner.nrows();
        let m = cons.free_mask(n);
        let cm: Vec<f64> = m.iter().map(|v| 1.0 - v).collect();
        Ok(Constrained {
            inner,
            mask: backend.from_host(&m)?,
            comask: backend.from_host(&cm)?,
            scratch: Mutex::new(backend.zeros(n)?),
        })
    }

    /// The right-hand side of the constrained system: `M (b − A g) + (I − M) g`.
    pub fn rhs(&self, backend: &B, b: &B::Vector, g: &B::Vector) -> Result<B::Vector> {
        let n = self.inner.nrows();
        let mut ag = backend.zeros(n)?;
        self.inner.apply(backend, g, &mut ag)?;
        let mut r = backend.zeros(n)?;
        backend.copy(b, &mut r)?;
        backend.axpy(-1.0, &ag, &mut r)?;
        let mut out = backend.zeros(n)?;
        backend.pointwise_mult(&self.mask, &r, &mut out)?;
        backend.pointwise_mult(&self.comask, g, &mut r)?;
        backend.axpy(1.0, &r, &mut out)?;
        Ok(out)
    }
}

impl<B: Backend, Op: LinearOperator<B>> LinearOperator<B> for Constrained<B, Op> {
    fn nrows(&self) -> usize {
        self.inner.nrows()
    }
    fn ncols(&self) -> usize {
        self.inner.ncols()
    }
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        if self.inner.apply_masked(backend, x, y, &self.mask)? {
            return Ok(());
        }
        let mut t = self.scratch.lock().map_err(|_| Error::invalid("constrained operator scratch poisoned"))?;
        backend.pointwise_mult(&self.mask, x, &mut t)?;
        self.inner.apply(backend, &t, y)?;
        backend.pointwise_mult(&self.mask, y, &mut t)?;
        backend.pointwise_mult(&self.comask, x, y)?;
        backend.axpy(1.0, &t, y)
    }
    fn apply_dot(&self, backend: &B, x: &B::Vector, y: &mut B::Vector, mask: Option<&B::Vector>, partials: &mut B::Vector) -> Result<Option<usize>> {
        match mask {
            None => self.inner.apply_dot(backend, x, y, Some(&self.mask), partials),
            Some(_) => Ok(None),
        }
    }
    fn pcg_fused(&self, backend: &B, x: &mut B::Vector, w: &mut crate::backend::PcgWork<'_, B>, k: usize, mask: Option<&B::Vector>) -> Result<bool> {
        match mask {
            None => self.inner.pcg_fused(backend, x, w, k, Some(&self.mask)),
            Some(_) => Ok(false),
        }
    }
}
