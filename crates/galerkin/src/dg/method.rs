//! Which interior penalty method, and how large its penalty is on each face.
//!
//! The bilinear form (Rivière, *Discontinuous Galerkin Methods for Solving Elliptic and Parabolic
//! Equations*, SIAM 2008, ch. 1) on faces x_f with jump [v] = v(x_f⁻) − v(x_f⁺) and average
//! {v} = (v(x_f⁻) + v(x_f⁺))/2 (at the ends [v] = ∓v, {v} = v) is
//!
//! a(u, v) = Σ_E ∫_E (a u′v′ + c u v) − Σ_f {a u′}[v] + ε Σ_f {a v′}[u] + Σ_f σ_f [u][v]
//!
//! with ε = −1 (SIPG, symmetric), +1 (NIPG) or 0 (IIPG), the sums over interior faces and the
//! Dirichlet ends (Nitsche's method: the boundary value enters the right-hand side).
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Symmetric interior penalty, ε = −1: SPD for a large enough penalty.
    #[default]
    Sipg,
    /// Non-symmetric interior penalty, ε = +1: coercive for any σ > 0.
    Nipg,
    /// Incomplete interior penalty, ε = 0.
    Iipg,
}

impl Method {
    /// ε of the bilinear form.
    pub fn epsilon(self) -> f64 {
        match self {
            Method::Sipg => -1.0,
            Method::Nipg => 1.0,
            Method::Iipg => 0.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Sipg => "sipg",
            Method::Nipg => "nipg",
            Method::Iipg => "iipg",
        }
    }

    /// Whether the matrix is symmetric (CG applies).
    pub fn symmetric(self) -> bool {
        self == Method::Sipg
    }
}

/// The factor of the penalty that depends on the degree k.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DegreeScaling {
    /// 1 (the seed: σ_f = σ/h).
    #[serde(rename = "1")]
    One,
    #[default]
    #[serde(rename = "k^2")]
    KSquared,
    #[serde(rename = "k(k+1)")]
    KTimesKPlusOne,
    #[serde(rename = "(k+1)^2")]
    KPlusOneSquared,
}

impl DegreeScaling {
    pub fn factor(self, k: usize) -> f64 {
        let k = k as f64;
        match self {
            DegreeScaling::One => 1.0,
            DegreeScaling::KSquared => k * k,
            DegreeScaling::KTimesKPlusOne => k * (k + 1.0),
            DegreeScaling::KPlusOneSquared => (k + 1.0) * (k + 1.0),
        }
    }
}

/// The length the penalty is divided by on an interior face between elements of widths h⁻ and h⁺
/// (a boundary face uses its element's width unless `none`). The numeric codes are the GPU
/// kernel's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HScaling {
    /// No division: σ_f = σ·(degree factor).
    None = 0,
    /// (h⁻ + h⁺)/2
    #[default]
    Mean = 1,
    Min = 2,
    Max = 3,
    /// 2 h⁻ h⁺ / (h⁻ + h⁺)
    Harmonic = 4,
}

impl HScaling {
    pub fn length(self, hl: f64, hr: f64) -> f64 {
        match self {
            HScaling::None => 1.0,
            HScaling::Mean => 0.5 * (hl + hr),
            HScaling::Min => hl.min(hr),
            HScaling::Max => hl.max(hr),
            HScaling::Harmonic => 2.0 * hl * hr / (hl + hr),
        }
    }
}

/// σ_f = σ · D(k) · [a(x_f)] / H_f on interior faces, and the same with `boundary_sigma` and
/// H = h of the boundary element on Dirichlet ends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Penalty {
    pub sigma: f64,
    pub boundary_sigma: f64,
    pub degree: DegreeScaling,
    pub h: HScaling,
    /// Multiply by the diffusion coefficient at the face (robust for large or varying a).
    pub times_coefficient: bool,
}

impl Default for Penalty {
    /// σ = 4 k²/h: comfortably coercive for SIPG with a ≈ 1 on meshes without abrupt size jumps.
    fn default() -> Self {
        Penalty { sigma: 4.0, boundary_sigma: 4.0, degree: DegreeScaling::KSquared, h: HScaling::Mean, times_coefficient: false }
    }
}

impl Penalty {
    /// The seed's choice: σ_f = σ/h with the same σ on the boundary.
    pub fn seed(sigma: f64) -> Penalty {
        Penalty { sigma, boundary_sigma: sigma, degree: DegreeScaling::One, h: HScaling::Mean, times_coefficient: false }
    }

    /// σ · D(k) on interior faces and on the boundary: what the GPU kernel receives.
    pub fn scaled(&self, k: usize) -> (f64, f64) {
        let d = self.degree.factor(k);
        (self.sigma * d, self.boundary_sigma * d)
    }

    /// Penalty of the interior face between elements of widths `hl`, `hr`, with a(x_f) = `a`.
    pub fn interior(&self, k: usize, hl: f64, hr: f64, a: f64) -> f64 {
        let coef = if self.times_coefficient { a } else { 1.0 };
        self.scaled(k).0 * coef / self.h.length(hl, hr)
    }

    /// Penalty of a Dirichlet end whose element has width `h`.
    pub fn boundary(&self, k: usize, h: f64, a: f64) -> f64 {
        let coef = if self.times_coefficient { a } else { 1.0 };
        let len = if self.h == HScaling::None { 1.0 } else { h };
        self.scaled(k).1 * coef / len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penalty_scalings() {
        let p = Penalty::seed(2.0);
        assert_eq!(p.interior(2, 0.1, 0.1, 7.0), 2.0 / 0.1);
        let q = Penalty { degree: DegreeScaling::KTimesKPlusOne, h: HScaling::Harmonic, times_coefficient: true, ..p };
        assert!((q.interior(2, 0.1, 0.3, 3.0) - 2.0 * 6.0 * 3.0 / 0.15).abs() < 1e-12);
        assert!((q.boundary(2, 0.2, 3.0) - 2.0 * 6.0 * 3.0 / 0.2).abs() < 1e-12);
        let n = Penalty { h: HScaling::None, ..p };
        assert_eq!(n.boundary(3, 0.01, 1.0), 2.0);
        assert_eq!((Method::Sipg.epsilon(), Method::Nipg.epsilon(), Method::Iipg.epsilon()), (-1.0, 1.0, 0.0));
        assert_eq!(serde_json::to_string(&DegreeScaling::KPlusOneSquared).unwrap(), "\"(k+1)^2\"");
    }
}
