//! A symmetric multigrid V-cycle on any backend, given the operators of every level, the
//! prolongations between them (restriction is their transpose, stored as its own matrix: a backend
//! has no transposed SpMV) and a solver of the coarsest level. Smoothing is Chebyshev on `D⁻¹A`,
//! `D` the diagonal or the node blocks of each level ([`Chebyshev`], the same polynomial before and after the coarse correction), so the cycle is a
//! fixed symmetric operator and a valid preconditioner for CG: with `S` the smoother, `P` the
//! prolongation and `C` the coarse cycle, `I − MA = (I − SA)(I − P C Pᵀ A)(I − SA)`.
//! Everything but the coarsest solve runs on the backend (SpMV and vector updates only).
use super::Chebyshev;
use crate::backend::{Backend, LinearOperator};
use crate::solver::DirectSolver;
use crate::{Error, Result};
use std::sync::Mutex;

/// The smoother's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmootherOptions {
    /// Chebyshev degree (operator applications per smoothing: degree − 1).
    pub degree: usize,
    /// The smoothed part of the spectrum of `D⁻¹A`: [λmax/ratio, λmax].
    pub ratio: f64,
}

/// One level below the finest: its operator and the transfers to and from the level above.
pub struct CoarseLevel<'a, B: Backend> {
    pub a: &'a dyn LinearOperator<B>,
    /// `D⁻¹` of its smoother: the inverse diagonal ([`super::Jacobi`]) or node blocks
    /// ([`super::BlockJacobi`]).
    pub scaling: Box<dyn LinearOperator<B> + 'a>,
    /// This level → the finer one.
    pub prolong: &'a dyn LinearOperator<B>,
    /// The finer level → this one (the prolongation's transpose).
    pub restrict: &'a dyn LinearOperator<B>,
}

/// The V-cycle, `y = M x ≈ A⁻¹ x`.
pub struct Multigrid<'a, B: Backend> {
    ops: Vec<&'a dyn LinearOperator<B>>,
    prolong: Vec<&'a dyn LinearOperator<B>>,
    restrict: Vec<&'a dyn LinearOperator<B>>,
    /// Every level but the coarsest.
    smoothers: Vec<Chebyshev<'a, B>>,
    coarse: Box<dyn LinearOperator<B> + 'a>,
    /// Per level: right-hand side, iterate, residual, temporary.
    work: Mutex<Vec<[B::Vector; 4]>>,
}

impl<'a, B: Backend> Multigrid<'a, B> {
    /// `fine` with its smoother's `D⁻¹`, the coarser `levels` (finest first) and the solver of the last.
    pub fn new(be: &B, fine: &'a dyn LinearOperator<B>, fine_scaling: Box<dyn LinearOperator<B> + 'a>, levels: Vec<CoarseLevel<'a, B>>, coarse: Box<dyn LinearOperator<B> + 'a>, sm: SmootherOptions) -> Result<Self> {
        let Some(last) = levels.last() else { return Err(Error::invalid("multigrid needs at least one coarse level")) };
        if coarse.nrows() != last.a.nrows() {
            return Err(Error::dim("multigrid coarse solver rows", last.a.nrows(), coarse.nrows()));
        }
        let mut ops = vec![fine];
        let (mut prolong, mut restrict) = (Vec::new(), Vec::new());
        let mut smoothers = vec![Chebyshev::with_scaling(be, fine, fine_scaling, sm.degree, sm.ratio)?];
        let last_level = levels.len() - 1;
        for (l, lv) in levels.into_iter().enumerate() {
            let finer = ops[l].nrows();
            if lv.prolong.nrows() != finer || lv.prolong.ncols() != lv.a.nrows() || lv.restrict.nrows() != lv.a.nrows() || lv.restrict.ncols() != finer {
                return Err(Error::invalid(format!("multigrid level {}: transfers of {}×{} and {}×{} between {finer} and {} unknowns", l + 1, lv.prolong.nrows(), lv.prolong.ncols(), lv.restrict.nrows(), lv.restrict.ncols(), lv.a.nrows())));
            }
            ops.push(lv.a);
            prolong.push(lv.prolong);
            restrict.push(lv.restrict);
            if l < last_level {
                smoothers.push(Chebyshev::with_scaling(be, lv.a, lv.scaling, sm.degree, sm.ratio)?);
            }
        }
        let work = ops.iter().map(|a| Ok([be.zeros(a.nrows())?, be.zeros(a.nrows())?, be.zeros(a.nrows())?, be.zeros(a.nrows())?])).collect::<Result<Vec<_>>>()?;
        Ok(Multigrid { ops, prolong, restrict, smoothers, coarse, work: Mutex::new(work) })
    }

    /// Levels, the finest included.
    pub fn levels(&self) -> usize {
        self.ops.len()
    }

    /// The V-cycle from level `l` down: `work[0]` is level `l`'s, its right-hand side in, its
    /// iterate out.
    fn cycle(&self, be: &B, work: &mut [[B::Vector; 4]], l: usize) -> Result<()> {
        let (here, below) = work.split_at_mut(1);
        let [b, x, r, t] = &mut here[0];
        if l + 1 == self.ops.len() {
            return self.coarse.apply(be, b, x);
        }
        let (a, s) = (self.ops[l], &self.smoothers[l]);
        // Pre-smoothing from zero, the residual, the coarse correction.
        s.apply(be, b, x)?;
        a.apply(be, x, t)?;
        be.copy(b, r)?;
        be.axpy(-1.0, t, r)?;
        self.restrict[l].apply(be, r, &mut below[0][0])?;
        self.cycle(be, below, l + 1)?;
        self.prolong[l].apply(be, &below[0][1], t)?;
        be.axpy(1.0, t, x)?;
        // Post-smoothing of the new residual.
        a.apply(be, x, t)?;
        be.copy(b, r)?;
        be.axpy(-1.0, t, r)?;
        s.apply(be, r, t)?;
        be.axpy(1.0, t, x)
    }
}

impl<B: Backend> LinearOperator<B> for Multigrid<'_, B> {
    fn nrows(&self) -> usize {
        self.ops[0].nrows()
    }
    fn ncols(&self) -> usize {
        self.ops[0].nrows()
    }
    fn apply(&self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        let mut work = self.work.lock().map_err(|_| Error::invalid("multigrid scratch poisoned"))?;
        be.copy(x, &mut work[0][0])?;
        self.cycle(be, &mut work, 0)?;
        be.copy(&work[0][1], y)
    }
}

/// The coarsest level's solve: a sparse Cholesky factor on the host, applied through a host round
/// trip (a few thousand unknowns: microseconds next to the fine level's smoothing).
pub struct HostCholesky {
    factor: DirectSolver,
    n: usize,
}

impl HostCholesky {
    /// Factors the (symmetric, eliminated) coarsest operator; an indefinite one is an error.
    pub fn new(a: &crate::linalg::CsrMatrix) -> Result<Self> {
        Ok(HostCholesky { factor: DirectSolver::cholesky(a)?, n: a.nrows })
    }
}

impl<B: Backend> LinearOperator<B> for HostCholesky {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        let mut h = be.to_host(x)?;
        self.factor.solve_in_place(&mut h)?;
        be.copy(&be.from_host(&h)?, y)
    }
}
