//! The pointwise pieces of the DG operator, written once for the CPU assembly and the
//! element-by-element check (their CUDA twin is `kernels/dg.cu`, checked against this in tests):
//! - volume physics at a quadrature point: a u′v′ + c u v, as the weights of (ψ_i′ψ_j′, ψ_iψ_j);
//! - face terms: −{a u′}[v] + ε{a v′}[u] + σ[u][v] between the traces of two sides (or one side
//!   at a Dirichlet end), and the Nitsche and Neumann terms of the right-hand side.
use super::basis::Tabulation;
use super::dense::Blk;

/// Weights of ψ_i′ψ_j′ (in ξ) and of ψ_iψ_j at one quadrature point of an element of width `h`
/// (x = x_m + ξh/2: dx = h/2 dξ, d/dx = 2/h d/dξ), with quadrature weight `w` on [−1, 1].
#[inline(always)]
pub fn volume_point(a: f64, c: f64, w: f64, h: f64) -> (f64, f64) {
    (2.0 * a * w / h, 0.5 * c * w * h)
}

/// ∫_E a ψ_i′ψ_j′ + c ψ_iψ_j over element of width `h`, with the coefficients at its points.
#[inline(always)]
pub fn volume_block<const B: usize>(tab: &Tabulation, h: f64, a: impl Fn(usize) -> f64, c: impl Fn(usize) -> f64) -> Blk<B> {
    let mut k = [[0.0; B]; B];
    for q in 0..tab.npoints() {
        let (dd, vv) = volume_point(a(q), c(q), tab.weights[q], h);
        let phi = &tab.phi[q * B..(q + 1) * B];
        let dphi = &tab.dphi[q * B..(q + 1) * B];
        for i in 0..B {
            let (gi, vi) = (dd * dphi[i], vv * phi[i]);
            for j in 0..B {
                k[i][j] += gi * dphi[j] + vi * phi[j];
            }
        }
    }
    k
}

/// The trace of one side on a face: the jump sign s (+1 for the element left of the face, whose
/// right end it is; −1 for the element right of it), values ψ_j and physical derivatives ψ_j′.
#[derive(Clone, Copy, Debug)]
pub struct Side<const B: usize> {
    pub s: f64,
    pub v: [f64; B],
    pub d: [f64; B],
}

impl<const B: usize> Side<B> {
    /// The right end (ξ = +1) of an element of width `h`: it lies left of the face, s = +1.
    pub fn left_of_face(tab: &Tabulation, h: f64) -> Side<B> {
        Side::new(1.0, &tab.phi_right, &tab.dphi_right, h)
    }
    /// The left end (ξ = −1) of an element of width `h`: it lies right of the face, s = −1.
    pub fn right_of_face(tab: &Tabulation, h: f64) -> Side<B> {
        Side::new(-1.0, &tab.phi_left, &tab.dphi_left, h)
    }
    fn new(s: f64, v: &[f64], d: &[f64], h: f64) -> Side<B> {
        let mut side = Side { s, v: [0.0; B], d: [0.0; B] };
        for j in 0..B {
            side.v[j] = v[j];
            side.d[j] = 2.0 / h * d[j];
        }
        side
    }
}

/// The face block coupling test functions of side `e` with trial functions of side `g`:
/// `M_ij = w·a·(−d_g,j s_e v_e,i + ε d_e,i s_g v_g,j) + σ s_e s_g v_e,i v_g,j`, with average
/// weight w = 1/2 on interior faces and 1 at a Dirichlet end.
#[inline(always)]
pub fn face_block<const B: usize>(wa: f64, eps: f64, sigma: f64, e: &Side<B>, g: &Side<B>) -> Blk<B> {
    let mut m = [[0.0; B]; B];
    for i in 0..B {
        for j in 0..B {
            m[i][j] = wa * (-g.d[j] * e.s * e.v[i] + eps * e.d[i] * g.s * g.v[j]) + sigma * e.s * g.s * e.v[i] * g.v[j];
        }
    }
    m
}

/// Right-hand side of a Dirichlet end u = g (Nitsche): ε a ψ_i′ s g + σ ψ_i g.
#[inline(always)]
pub fn dirichlet_rhs<const B: usize>(a: f64, eps: f64, sigma: f64, side: &Side<B>, g: f64) -> [f64; B] {
    std::array::from_fn(|i| eps * a * side.d[i] * side.s * g + sigma * side.v[i] * g)
}

/// Right-hand side of a Neumann end with outward flux g: g ψ_i.
#[inline(always)]
pub fn neumann_rhs<const B: usize>(side: &Side<B>, g: f64) -> [f64; B] {
    std::array::from_fn(|i| g * side.v[i])
}

/// ∫_E f ψ_i over an element of width `h`, with f at its points.
#[inline(always)]
pub fn load<const B: usize>(tab: &Tabulation, h: f64, f: impl Fn(usize) -> f64) -> [f64; B] {
    let mut r = [0.0; B];
    for q in 0..tab.npoints() {
        let w = 0.5 * h * tab.weights[q] * f(q);
        for (i, ri) in r.iter_mut().enumerate() {
            *ri += w * tab.phi[q * B + i];
        }
    }
    r
}
