//! The tabulated basis of a DG element: degree-k polynomials on the reference interval ξ ∈ [−1, 1]
//! (x = x_mid + ξ h/2), their values and ξ-derivatives at the Gauss points and at the two ends.
//!
//! Two families span the same space:
//! - `legendre` (default): ψ_j = √((2j+1)/2) P_j(ξ), orthonormal on [−1, 1], so the mass matrix is
//!   (h/2)·I and the blocks stay well conditioned at high degree;
//! - `monomial`: ψ_j = ξ^j = (2(x − x_mid)/h)^j, the seed's scaled monomials (1, 2(x−x_m)/h,
//!   4(x−x_m)²/h², …), whose coefficients are the seed's unknowns.
use crate::fe::gauss_legendre;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Highest supported degree (blocks of 7).
pub const MAX_DEGREE: usize = 6;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BasisKind {
    #[default]
    Legendre,
    Monomial,
}

impl BasisKind {
    pub fn name(self) -> &'static str {
        match self {
            BasisKind::Legendre => "legendre",
            BasisKind::Monomial => "monomial",
        }
    }

    /// Values and ξ-derivatives of the `k + 1` basis functions at `xi`.
    pub fn eval(self, k: usize, xi: f64, values: &mut [f64], derivs: &mut [f64]) {
        match self {
            BasisKind::Monomial => {
                let mut p = 1.0;
                for j in 0..=k {
                    values[j] = p;
                    derivs[j] = if j == 0 { 0.0 } else { j as f64 * xi.powi(j as i32 - 1) };
                    p *= xi;
                }
            }
            BasisKind::Legendre => {
                // P_{j+1} = ((2j+1) ξ P_j − j P_{j−1})/(j+1);  P'_{j+1} = P'_{j−1} + (2j+1) P_j.
                let (mut p0, mut p1) = (1.0, xi);
                let (mut d0, mut d1) = (0.0, 1.0);
                for j in 0..=k {
                    let norm = ((2 * j + 1) as f64 / 2.0).sqrt();
                    let (p, d) = if j == 0 { (p0, d0) } else { (p1, d1) };
                    values[j] = norm * p;
                    derivs[j] = norm * d;
                    if j >= 1 {
                        let jf = j as f64;
                        let p2 = ((2.0 * jf + 1.0) * xi * p1 - jf * p0) / (jf + 1.0);
                        let d2 = d0 + (2.0 * jf + 1.0) * p1;
                        (p0, p1, d0, d1) = (p1, p2, d1, d2);
                    }
                }
            }
        }
    }
}

/// Basis values and derivatives at the Gauss points and the element ends, one table shared by
/// every element (and uploaded once to the GPU).
#[derive(Clone, Debug)]
pub struct Tabulation {
    pub kind: BasisKind,
    pub degree: usize,
    /// Gauss points on [−1, 1] and their weights (summing to 2).
    pub points: Vec<f64>,
    pub weights: Vec<f64>,
    /// `phi[q·b + j]` = ψ_j(ξ_q), `dphi` its ξ-derivative.
    pub phi: Vec<f64>,
    pub dphi: Vec<f64>,
    /// At ξ = −1 (left end) and ξ = +1 (right end).
    pub phi_left: Vec<f64>,
    pub dphi_left: Vec<f64>,
    pub phi_right: Vec<f64>,
    pub dphi_right: Vec<f64>,
}

impl Tabulation {
    /// Tabulates degree `k` at a `q`-point Gauss rule (exact for polynomials of degree 2q − 1).
    pub fn new(kind: BasisKind, k: usize, q: usize) -> Result<Tabulation> {
        if !(1..=MAX_DEGREE).contains(&k) {
            return Err(Error::invalid(format!("DG degree must be 1 to {MAX_DEGREE}, got {k}")));
        }
        if q == 0 || q > 64 {
            return Err(Error::invalid(format!("DG quadrature points must be 1 to 64, got {q}")));
        }
        let b = k + 1;
        let (t, w) = gauss_legendre(q);
        let points: Vec<f64> = t.iter().map(|t| 2.0 * t - 1.0).collect();
        let weights: Vec<f64> = w.iter().map(|w| 2.0 * w).collect();
        let mut phi = vec![0.0; q * b];
        let mut dphi = vec![0.0; q * b];
        for (i, &xi) in points.iter().enumerate() {
            kind.eval(k, xi, &mut phi[i * b..(i + 1) * b], &mut dphi[i * b..(i + 1) * b]);
        }
        let end = |xi: f64| {
            let (mut v, mut d) = (vec![0.0; b], vec![0.0; b]);
            kind.eval(k, xi, &mut v, &mut d);
            (v, d)
        };
        let (phi_left, dphi_left) = end(-1.0);
        let (phi_right, dphi_right) = end(1.0);
        Ok(Tabulation { kind, degree: k, points, weights, phi, dphi, phi_left, dphi_left, phi_right, dphi_right })
    }

    /// Functions per element, `k + 1`.
    pub fn nbasis(&self) -> usize {
        self.degree + 1
    }

    pub fn npoints(&self) -> usize {
        self.points.len()
    }

    /// Σ_j c_j ψ_j(ξ) and its ξ-derivative, for any ξ.
    pub fn evaluate(&self, coef: &[f64], xi: f64) -> (f64, f64) {
        let b = self.nbasis();
        let (mut v, mut d) = ([0.0; MAX_DEGREE + 1], [0.0; MAX_DEGREE + 1]);
        self.kind.eval(self.degree, xi, &mut v[..b], &mut d[..b]);
        coef.iter().zip(&v[..b]).zip(&d[..b]).fold((0.0, 0.0), |(u, du), ((c, v), d)| (u + c * v, du + c * d))
    }

    /// The table in the layout the GPU kernel reads: weights[q], phi[q·b], dphi[q·b], then the
    /// left and right end values and derivatives (b each).
    pub fn packed(&self) -> Vec<f64> {
        [&self.weights, &self.phi, &self.dphi, &self.phi_left, &self.dphi_left, &self.phi_right, &self.dphi_right]
            .into_iter()
            .flatten()
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legendre_basis_is_orthonormal_and_monomials_match_the_seed() {
        for k in 1..=MAX_DEGREE {
            let t = Tabulation::new(BasisKind::Legendre, k, k + 2).unwrap();
            let b = k + 1;
            for i in 0..b {
                for j in 0..b {
                    let m: f64 = (0..t.npoints()).map(|q| t.weights[q] * t.phi[q * b + i] * t.phi[q * b + j]).sum();
                    assert!((m - if i == j { 1.0 } else { 0.0 }).abs() < 1e-13, "k={k} ({i},{j}): {m}");
                }
            }
            // P_j(±1) = (±1)^j and P_j'(±1) = (±1)^{j+1} j(j+1)/2.
            for j in 0..b {
                let n = ((2 * j + 1) as f64 / 2.0).sqrt();
                let s = if j % 2 == 0 { 1.0 } else { -1.0 };
                assert!((t.phi_right[j] - n).abs() < 1e-13 && (t.phi_left[j] - s * n).abs() < 1e-13);
                let d = n * (j * (j + 1)) as f64 / 2.0;
                assert!((t.dphi_right[j] - d).abs() < 1e-12 && (t.dphi_left[j] + s * d).abs() < 1e-12, "k={k} j={j}");
            }
        }
        let m = Tabulation::new(BasisKind::Monomial, 2, 3).unwrap();
        assert_eq!(m.phi_left, vec![1.0, -1.0, 1.0]);
        assert_eq!(m.dphi_right, vec![0.0, 1.0, 2.0]);
        let (u, du) = m.evaluate(&[1.0, 2.0, 3.0], 0.5);
        assert!((u - (1.0 + 1.0 + 0.75)).abs() < 1e-15 && (du - (2.0 + 3.0)).abs() < 1e-15);
    }

    #[test]
    fn degrees_and_rules_are_checked() {
        assert!(Tabulation::new(BasisKind::Legendre, 0, 2).is_err());
        assert!(Tabulation::new(BasisKind::Legendre, 7, 9).is_err());
        assert!(Tabulation::new(BasisKind::Monomial, 2, 0).is_err());
    }
}
