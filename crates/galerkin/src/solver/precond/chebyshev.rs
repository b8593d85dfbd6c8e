//! Chebyshev polynomial preconditioning on any backend: a fixed number of Chebyshev iterations on
//! `D⁻¹A` from a zero guess. The result is a fixed symmetric polynomial in `D⁻¹A`, so it is a valid
//! preconditioner for CG, and it needs only operator applications and vector updates — no
//! triangular solves — which is why it suits GPUs where SSOR/ILU do not.
use super::Jacobi;
use crate::backend::{Backend, LinearOperator};
use crate::{Error, Result};
use std::sync::Mutex;

/// `y ≈ A⁻¹ x` by `degree` Chebyshev steps on the Jacobi-scaled operator, targeting the
/// eigenvalue interval `[λmax/ratio, λmax]` of `D⁻¹A` (λmax estimated by power iteration). `D⁻¹`
/// is the point Jacobi scaling, or any fixed symmetric positive definite one given to
/// [`Chebyshev::with_scaling`] (the inverse node blocks of a vector problem).
pub struct Chebyshev<'a, B: Backend> {
    a: &'a dyn LinearOperator<B>,
    jacobi: Box<dyn LinearOperator<B> + 'a>,
    degree: usize,
    lambda_max: f64,
    lambda_min: f64,
    /// Scratch: residual, direction, temporary.
    work: Mutex<[B::Vector; 3]>,
}

impl<'a, B: Backend> Chebyshev<'a, B> {
    /// `diagonal` of `a`; `degree` ≥ 1 polynomial steps; `ratio` > 1 sets λmin = λmax/ratio.
    pub fn new(backend: &B, a: &'a dyn LinearOperator<B>, diagonal: &B::Vector, degree: usize, ratio: f64) -> Result<Self>
    where
        B: 'a,
    {
        Self::with_scaling(backend, a, Box::new(Jacobi::new(backend, diagonal)?), degree, ratio)
    }

    /// As [`Chebyshev::new`] on `scaling · A` instead of `D⁻¹A`.
    pub fn with_scaling(backend: &B, a: &'a dyn LinearOperator<B>, jacobi: Box<dyn LinearOperator<B> + 'a>, degree: usize, ratio: f64) -> Result<Self> {
        if degree == 0 || !(ratio > 1.0) {
            return Err(Error::invalid(format!("Chebyshev needs degree >= 1 and ratio > 1 (got {degree}, {ratio})")));
        }
        let n = a.nrows();
        let lambda_max = 1.1 * estimate_lambda_max(backend, a, jacobi.as_ref(), n, 20)?;
        let work = Mutex::new([backend.zeros(n)?, backend.zeros(n)?, backend.zeros(n)?]);
        Ok(Chebyshev { a, jacobi, degree, lambda_max, lambda_min: lambda_max / ratio, work })
    }

    /// The estimated largest eigenvalue of `D⁻¹A` (with its 10% safety margin).
    pub fn lambda_max(&self) -> f64 {
        self.lambda_max
    }
}

/// Power iteration on `D⁻¹A` from a deterministic non-constant start vector.
fn estimate_lambda_max<B: Backend>(backend: &B, a: &dyn LinearOperator<B>, m: &dyn LinearOperator<B>, n: usize, iters: usize) -> Result<f64> {
    let start: Vec<f64> = (0..n).map(|i| 1.0 + ((i * 7919) % 97) as f64 / 97.0).collect();
    let mut v = backend.from_host(&start)?;
    let (mut av, mut w) = (backend.zeros(n)?, backend.zeros(n)?);
    let mut lambda = 0.0;
    for _ in 0..iters {
        let norm = backend.norm2(&v)?;
        if norm == 0.0 || !norm.is_finite() {
            return Err(Error::invalid("Chebyshev: power iteration broke down"));
        }
        backend.scale(1.0 / norm, &mut v)?;
        a.apply(backend, &v, &mut av)?;
        m.apply(backend, &av, &mut w)?;
        lambda = backend.dot(&v, &w)?;
        std::mem::swap(&mut v, &mut w);
    }
    if !(lambda > 0.0 && lambda.is_finite()) {
        return Err(Error::invalid(format!("Chebyshev: estimated λmax = {lambda}; is the operator positive definite?")));
    }
    Ok(lambda)
}

impl<B: Backend> LinearOperator<B> for Chebyshev<'_, B> {
    fn nrows(&self) -> usize {
        self.a.nrows()
    }
    fn ncols(&self) -> usize {
        self.a.ncols()
    }
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        let mut guard = self.work.lock().map_err(|_| Error::invalid("Chebyshev scratch poisoned"))?;
        let [r, d, t] = &mut *guard;
        let theta = 0.5 * (self.lambda_max + self.lambda_min);
        let delta = 0.5 * (self.lambda_max - self.lambda_min);
        // Step 1: y = D⁻¹x / θ, r = x − A y.
        self.jacobi.apply(backend, x, d)?;
        backend.scale(1.0 / theta, d)?;
        backend.copy(d, y)?;
        backend.copy(x, r)?;
        let sigma = theta / delta;
        let mut rho_old = 1.0 / sigma;
        for _ in 1..self.degree {
            self.a.apply(backend, d, t)?;
            backend.axpy(-1.0, t, r)?;
            let rho = 1.0 / (2.0 * sigma - rho_old);
            self.jacobi.apply(backend, r, t)?;
            backend.axpby(2.0 * rho / delta, t, rho * rho_old, d)?;
            backend.axpy(1.0, d, y)?;
            rho_old = rho;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Cpu;
    use crate::linalg::CsrMatrix;
    use crate::solver::{cg, KrylovOptions};

    fn laplacian(n: usize) -> CsrMatrix {
        let mut t = Vec::new();
        for i in 0..n {
            for j in 0..n {
                let r = i * n + j;
                t.push((r, r, 4.0));
                if i > 0 { t.push((r, r - n, -1.0)); }
                if i + 1 < n { t.push((r, r + n, -1.0)); }
                if j > 0 { t.push((r, r - 1, -1.0)); }
                if j + 1 < n { t.push((r, r + 1, -1.0)); }
            }
        }
        CsrMatrix::from_triplets(n * n, n * n, &t).unwrap()
    }

    #[test]
    fn power_iteration_finds_lambda_max() {
        // D⁻¹A of the 5-point Laplacian has λmax = 1 + cos(π/(n+1)).
        let n = 30;
        let a = laplacian(n);
        let c = Chebyshev::new(&Cpu, &a, &a.diagonal(), 3, 30.0).unwrap();
        let exact = 1.0 + (std::f64::consts::PI / (n + 1) as f64).cos();
        let est = c.lambda_max() / 1.1;
        assert!(est <= exact * (1.0 + 1e-12) && est > 0.9 * exact, "{est} vs {exact}");
    }

    #[test]
    fn chebyshev_pcg_beats_jacobi_pcg_and_is_symmetric() {
        let a = laplacian(40);
        let n = a.nrows;
        let b: Vec<f64> = (0..n).map(|i| ((i * 31) % 17) as f64 - 8.0).collect();
        let opts = KrylovOptions { rtol: 1e-10, ..Default::default() };
        let jac = Jacobi::new(&Cpu, &a.diagonal()).unwrap();
        let mut x1 = vec![0.0; n];
        let s1 = cg(&Cpu, &a, &jac, &b, &mut x1, &opts).unwrap();
        let cheb = Chebyshev::new(&Cpu, &a, &a.diagonal(), 4, 30.0).unwrap();
        let mut x2 = vec![0.0; n];
        let s2 = cg(&Cpu, &a, &cheb, &b, &mut x2, &opts).unwrap();
        assert!(s2.iterations * 2 < s1.iterations, "chebyshev {} vs jacobi {}", s2.iterations, s1.iterations);
        let err = x1.iter().zip(&x2).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-7, "{err}");
        // Symmetry of the preconditioner: u·M v = v·M u.
        let u: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
        let v: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 2.0).collect();
        let (mut mu, mut mv) = (vec![0.0; n], vec![0.0; n]);
        cheb.apply(&Cpu, &u, &mut mu).unwrap();
        cheb.apply(&Cpu, &v, &mut mv).unwrap();
        let (p, q) = (v.iter().zip(&mu).map(|(a, b)| a * b).sum::<f64>(), u.iter().zip(&mv).map(|(a, b)| a * b).sum::<f64>());
        assert!((p - q).abs() < 1e-10 * p.abs().max(1.0), "{p} vs {q}");
    }
}
