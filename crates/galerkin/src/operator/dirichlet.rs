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
        let mut m = vec![1.0; n];
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
    if b.len() != a.nrows {
        return Err(Error::dim("right-hand side", a.nrows, b.len()));
    }
    let n = a.nrows;
    let mask = cons.free_mask(n);
    let g = cons.lift(n);
    let CsrMatrix { row_ptr, col_idx, values, .. } = a;
    let rows: Vec<(usize, usize)> = (0..n).map(|r| (row_ptr[r], row_ptr[r + 1])).collect();
    // Split the values into per-row slices so rows can be edited in parallel.
    let mut slices: Vec<&mut [f64]> = Vec::with_capacity(n);
    let mut rest: &mut [f64] = values;
    for &(s, e) in &rows {
        let (head, tail) = rest.split_at_mut(e - s);
        slices.push(head);
        rest = tail;
    }
    slices.par_iter_mut().zip(b.par_iter_mut()).enumerate().for_each(|(r, (vals, br))| {
        let cols = &col_idx[rows[r].0..rows[r].1];
        if mask[r] == 0.0 {
            for (v, &c) in vals.iter_mut().zip(cols) {
                *v = if c as usize == r { 1.0 } else { 0.0 };
            }
            *br = g[r];
        } else {
            for (v, &c) in vals.iter_mut().zip(cols) {
                if mask[c as usize] == 0.0 {
                    *br -= *v * g[c as usize];
                    *v = 0.0;
                }
            }
        }
    });
    Ok(())
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
        let mut t = self.scratch.lock().map_err(|_| Error::invalid("constrained operator scratch poisoned"))?;
        backend.pointwise_mult(&self.mask, x, &mut t)?;
        self.inner.apply(backend, &t, y)?;
        backend.pointwise_mult(&self.mask, y, &mut t)?;
        backend.pointwise_mult(&self.comask, x, y)?;
        backend.axpy(1.0, &t, y)
    }
}
