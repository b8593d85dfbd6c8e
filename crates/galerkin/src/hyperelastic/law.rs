//! The three hyperelastic laws as pointwise functions of the deformation gradient F: the second
//! Piola–Kirchhoff stress S = ∂W/∂E and the material tangent ℂ = ∂S/∂E, from which the first
//! Piola–Kirchhoff stress P = F S and its consistent linearisation 𝔸 = ∂P/∂F follow
//! ([`Law::first_piola`]). F is given in the material frame of the law: for the anisotropic law the
//! fibre frame (f, s, n) of the cell (the element rotates the reference gradients into it), for the
//! isotropic laws any frame.
//!
//! - St. Venant–Kirchhoff: W = λ/2 (tr E)² + μ E:E, S = λ tr(E) I + 2μ E.
//! - Compressible neo-Hookean: W = μ/2 (I₁ − 3) − μ ln J + λ/2 (ln J)², S = μ(I − C⁻¹) + λ ln J C⁻¹.
//! - Transversely isotropic Fung law of Guccione, McCulloch and Waldman (J. Biomech. Eng. 113,
//!   1991), the form used by Usyk, LeGrice and McCulloch for ventricular and atrial myocardium:
//!   W = C/2 (e^Q − 1) + κ/2 (ln J)², with
//!   Q = b_f E_ff² + b_t (E_ss² + E_nn² + E_sn² + E_ns²) + b_fs (E_fs² + E_sf² + E_fn² + E_nf²) and E
//!   in the fibre frame; the volumetric penalty κ makes the nearly incompressible tissue
//!   compressible.
//!
//! CUDA twin: `kernels/hyperelastic_law.cuh` (same names, same arithmetic).
use serde::Serialize;

/// 3×3 matrices, row-major `m[i][j]`.
pub type M3 = [[f64; 3]; 3];
/// Fourth-order tensors, `t[((i·3 + j)·3 + k)·3 + l]`.
pub type T4 = [f64; 81];

/// A hyperelastic law with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "law", rename_all = "kebab-case")]
pub enum Law {
    Svk { lambda: f64, mu: f64 },
    NeoHookean { lambda: f64, mu: f64 },
    /// Transversely isotropic Fung law (fibre direction f = first axis of the material frame).
    Usyk { c: f64, bf: f64, bt: f64, bfs: f64, kappa: f64 },
}

#[inline]
fn idx(i: usize, j: usize, k: usize, l: usize) -> usize {
    ((i * 3 + j) * 3 + k) * 3 + l
}

pub fn det3(a: &M3) -> f64 {
    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
}

/// Inverse of a symmetric (or any) 3×3 matrix with determinant `d`.
fn inv3(a: &M3, d: f64) -> M3 {
    let r = 1.0 / d;
    [
        [(a[1][1] * a[2][2] - a[1][2] * a[2][1]) * r, (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * r, (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * r],
        [(a[1][2] * a[2][0] - a[1][0] * a[2][2]) * r, (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * r, (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * r],
        [(a[1][0] * a[2][1] - a[1][1] * a[2][0]) * r, (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * r, (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * r],
    ]
}

/// `S += a X + b I` and `ℂ += c X⊗X + 2e 𝕀_X`, `𝕀_X = ½(X_IK X_JL + X_IL X_JK)`: the shape of every
/// term built on C⁻¹ (neo-Hookean, the volumetric penalty) and on I (St. Venant–Kirchhoff).
fn add_iso(s: &mut M3, t: &mut T4, x: &M3, a: f64, b: f64, c: f64, e: f64) {
    for i in 0..3 {
        for j in 0..3 {
            s[i][j] += a * x[i][j] + if i == j { b } else { 0.0 };
            for k in 0..3 {
                for l in 0..3 {
                    t[idx(i, j, k, l)] += c * x[i][j] * x[k][l] + e * (x[i][k] * x[j][l] + x[i][l] * x[j][k]);
                }
            }
        }
    }
}

impl Law {
    /// Whether the law needs a fibre frame.
    pub fn anisotropic(&self) -> bool {
        matches!(self, Law::Usyk { .. })
    }

    /// The CUDA twin's law number (`LAW` define).
    pub fn cuda_id(&self) -> u32 {
        match self {
            Law::Svk { .. } => 0,
            Law::NeoHookean { .. } => 1,
            Law::Usyk { .. } => 2,
        }
    }

    /// Parameters in the order the CUDA twin reads them.
    pub fn params(&self) -> [f64; 5] {
        match *self {
            Law::Svk { lambda, mu } | Law::NeoHookean { lambda, mu } => [lambda, mu, 0.0, 0.0, 0.0],
            Law::Usyk { c, bf, bt, bfs, kappa } => [c, bf, bt, bfs, kappa],
        }
    }

    /// Strain energy density W(F) (tests differentiate it); `NaN` where J ≤ 0 for laws with ln J.
    pub fn energy(&self, f: &M3) -> f64 {
        let e = green(f);
        let j = det3(f);
        match *self {
            Law::Svk { lambda, mu } => {
                let tr = e[0][0] + e[1][1] + e[2][2];
                let ee: f64 = (0..3).flat_map(|i| (0..3).map(move |k| (i, k))).map(|(i, k)| e[i][k] * e[i][k]).sum();
                0.5 * lambda * tr * tr + mu * ee
            }
            Law::NeoHookean { lambda, mu } => {
                if j <= 0.0 {
                    return f64::NAN;
                }
                let i1 = 2.0 * (e[0][0] + e[1][1] + e[2][2]) + 3.0;
                0.5 * mu * (i1 - 3.0) - mu * j.ln() + 0.5 * lambda * j.ln().powi(2)
            }
            Law::Usyk { c, bf, bt, bfs, kappa } => {
                if j <= 0.0 {
                    return f64::NAN;
                }
                let q = fung_q(&e, bf, bt, bfs);
                0.5 * c * (q.exp() - 1.0) + 0.5 * kappa * j.ln().powi(2)
            }
        }
    }

    /// S(F) and ℂ(F) = ∂S/∂E (with both minor symmetries). Non-finite where the law is undefined
    /// (J ≤ 0 for the laws with ln J, overflow of e^Q): the caller treats that state as infeasible.
    pub fn pk2(&self, f: &M3) -> (M3, T4) {
        let e = green(f);
        let mut s = [[0.0; 3]; 3];
        let mut t = [0.0; 81];
        let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        match *self {
            Law::Svk { lambda, mu } => {
                let tr = e[0][0] + e[1][1] + e[2][2];
                add_iso(&mut s, &mut t, &e, 2.0 * mu, lambda * tr, 0.0, 0.0);
                add_iso(&mut [[0.0; 3]; 3], &mut t, &id, 0.0, 0.0, lambda, mu);
            }
            Law::NeoHookean { lambda, mu } | Law::Usyk { kappa: lambda, c: mu, .. } => {
                let j = det3(f);
                if j <= 0.0 || !j.is_finite() {
                    return ([[f64::NAN; 3]; 3], [f64::NAN; 81]);
                }
                let cm = right_cauchy_green(f);
                let ci = inv3(&cm, j * j);
                let lj = j.ln();
                if let Law::Usyk { c, bf, bt, bfs, kappa } = *self {
                    // Volumetric penalty κ/2 (ln J)²: S = κ ln J C⁻¹, ℂ = κ C⁻¹⊗C⁻¹ − 2κ ln J 𝕀.
                    add_iso(&mut s, &mut t, &ci, kappa * lj, 0.0, kappa, -kappa * lj);
                    // Fung part: S_ab = C e^Q B_ab E_ab, ℂ = C e^Q (2 (B∘E)⊗(B∘E) + B_ab 𝕀_ab,cd).
                    let b = fung_weights(bf, bt, bfs);
                    let eq = c * fung_q(&e, bf, bt, bfs).exp();
                    let mut be = [[0.0; 3]; 3];
                    for i in 0..3 {
                        for k in 0..3 {
                            be[i][k] = b[i][k] * e[i][k];
                            s[i][k] += eq * be[i][k];
                        }
                    }
                    for i in 0..3 {
                        for jj in 0..3 {
                            for k in 0..3 {
                                for l in 0..3 {
                                    let sym = 0.5 * b[i][jj] * (f64::from(u8::from(i == k && jj == l)) + f64::from(u8::from(i == l && jj == k)));
                                    t[idx(i, jj, k, l)] += eq * (2.0 * be[i][jj] * be[k][l] + sym);
                                }
                            }
                        }
                    }
                } else {
                    // μ(I − C⁻¹) + λ ln J C⁻¹; ℂ = λ C⁻¹⊗C⁻¹ + 2(μ − λ ln J) 𝕀_{C⁻¹}.
                    add_iso(&mut s, &mut t, &ci, lambda * lj - mu, mu, lambda, mu - lambda * lj);
                }
            }
        }
        (s, t)
    }

    /// P = F S and 𝔸 = ∂P/∂F, `𝔸_iJkL = δ_ik S_JL + F_iI ℂ_IJKL F_kK`.
    pub fn first_piola(&self, f: &M3) -> (M3, T4) {
        let (s, c) = self.pk2(f);
        push_forward(f, &s, &c)
    }

    /// Plane stress: the thickness stretch F₃₃ that makes S₃₃ = 0 (F's in-plane block given, F_α3 =
    /// F_3α = 0), by Newton on E₃₃ (∂S₃₃/∂E₃₃ = ℂ₃₃₃₃) from F₃₃ = 1, and S and the condensed tangent
    /// ℂ̃ = ℂ − ℂ_··33 ⊗ ℂ_33·· / ℂ₃₃₃₃ there (∂S/∂E with S₃₃ held at zero: E₃₃ follows the in-plane
    /// strain). Non-finite where the local Newton fails (ℂ₃₃₃₃ ≤ 0, the law undefined, or no
    /// convergence in [`PLANE_STRESS_ITERS`] steps): the caller treats that state as infeasible.
    pub fn plane_stress(&self, f: &M3) -> (f64, M3, T4) {
        let Some((l3, s, mut c)) = self.plane_stress_state(f) else {
            return (f64::NAN, [[f64::NAN; 3]; 3], [f64::NAN; 81]);
        };
        let k = c[idx(2, 2, 2, 2)];
        let z: [f64; 9] = std::array::from_fn(|m| c[idx(m / 3, m % 3, 2, 2)]);
        for (m, t) in c.chunks_exact_mut(9).enumerate() {
            for (n, v) in t.iter_mut().enumerate() {
                *v -= z[m] * z[n] / k;
            }
        }
        (l3, s, c)
    }

    /// The local solve of [`Self::plane_stress`]: F₃₃ and, there, S and the tangent ℂ before its
    /// condensation; `None` where it fails.
    fn plane_stress_state(&self, f: &M3) -> Option<(f64, M3, T4)> {
        let mut fl = *f;
        let mut l3 = 1.0f64;
        for _ in 0..PLANE_STRESS_ITERS {
            fl[2][2] = l3;
            let (s, c) = self.pk2(&fl);
            let k = c[idx(2, 2, 2, 2)];
            let de = -s[2][2] / k;
            if !(k > 0.0 && de.is_finite()) {
                return None;
            }
            let e33 = 0.5 * (l3 * l3 - 1.0);
            if de.abs() <= PLANE_STRESS_TOL * (1.0 + e33.abs()) {
                return Some((l3, s, c));
            }
            // Halve a step that would make the thickness stretch non-positive (1 + 2E₃₃ ≤ 0).
            let mut step = de;
            while 1.0 + 2.0 * (e33 + step) <= 0.0 {
                step *= 0.5;
            }
            l3 = (1.0 + 2.0 * (e33 + step)).sqrt();
        }
        None
    }

    /// Plane stress: the thickness stretch F₃₃ ([`Self::plane_stress`]) and its derivative
    /// D_iβ = ∂F₃₃/∂F_iβ (in-plane i, β) — E₃₃ follows the in-plane strain so that S₃₃ stays zero:
    /// dE₃₃ = −ℂ_αβ33 dE_αβ / ℂ₃₃₃₃ with dE = sym(Fᵀ dF), and dF₃₃ = dE₃₃ / F₃₃, so
    /// D_iβ = −F_iα ℂ_αβ33 / (ℂ₃₃₃₃ F₃₃). What a follower pressure needs: the loaded edge's current
    /// thickness. NaN where [`Self::plane_stress`] finds no F₃₃.
    pub fn thickness_stretch(&self, f: &M3) -> (f64, [[f64; 2]; 2]) {
        let Some((l3, _, c)) = self.plane_stress_state(f) else {
            return (f64::NAN, [[f64::NAN; 2]; 2]);
        };
        let k = c[idx(2, 2, 2, 2)] * l3;
        let d = std::array::from_fn(|i| std::array::from_fn(|b| -(f[i][0] * c[idx(0, b, 2, 2)] + f[i][1] * c[idx(1, b, 2, 2)]) / k));
        (l3, d)
    }

    /// P and 𝔸 of plane stress ([`Self::plane_stress`]): the in-plane rows and columns are the
    /// response with S₃₃ = 0 (F₃₃ enters no in-plane entry: F_α3 = 0).
    pub fn first_piola_plane_stress(&self, f: &M3) -> (M3, T4) {
        let (l3, s, c) = self.plane_stress(f);
        let mut fl = *f;
        fl[2][2] = l3;
        push_forward(&fl, &s, &c)
    }
}

/// Local Newton steps of plane stress at most (quadratic convergence takes 3–6 from F₃₃ = 1 at
/// strains of order one; the CUDA twin has the same bound).
pub const PLANE_STRESS_ITERS: usize = 30;
/// Convergence of the local Newton: |ΔE₃₃| ≤ tol (1 + |E₃₃|) (the state is then exact to rounding:
/// the step before it was quadratic).
pub const PLANE_STRESS_TOL: f64 = 1e-13;

/// P = F S and 𝔸 = ∂P/∂F from S and ℂ: `𝔸_iJkL = δ_ik S_JL + F_iI ℂ_IJKL F_kK`.
fn push_forward(f: &M3, s: &M3, c: &T4) -> (M3, T4) {
    let mut p = [[0.0; 3]; 3];
    for i in 0..3 {
        for jj in 0..3 {
            p[i][jj] = (0..3).map(|k| f[i][k] * s[k][jj]).sum();
        }
    }
    // T_iJKL = F_iI ℂ_IJKL, then 𝔸_iJkL = T_iJKL F_kK + δ_ik S_JL.
    let mut tt = [0.0; 81];
    for i in 0..3 {
        for jj in 0..3 {
            for k in 0..3 {
                for l in 0..3 {
                    tt[idx(i, jj, k, l)] = (0..3).map(|m| f[i][m] * c[idx(m, jj, k, l)]).sum();
                }
            }
        }
    }
    let mut a = [0.0; 81];
    for i in 0..3 {
        for jj in 0..3 {
            for k in 0..3 {
                for l in 0..3 {
                    let v: f64 = (0..3).map(|m| tt[idx(i, jj, m, l)] * f[k][m]).sum();
                    a[idx(i, jj, k, l)] = v + if i == k { s[jj][l] } else { 0.0 };
                }
            }
        }
    }
    (p, a)
}

/// E = ½(FᵀF − I).
pub fn green(f: &M3) -> M3 {
    let c = right_cauchy_green(f);
    let mut e = [[0.0; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            e[i][k] = 0.5 * (c[i][k] - if i == k { 1.0 } else { 0.0 });
        }
    }
    e
}

/// C = FᵀF.
pub fn right_cauchy_green(f: &M3) -> M3 {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            c[i][k] = (0..3).map(|m| f[m][i] * f[m][k]).sum();
        }
    }
    c
}

/// The weights B_ab of Q = Σ B_ab E_ab² in the fibre frame (f, s, n).
fn fung_weights(bf: f64, bt: f64, bfs: f64) -> M3 {
    [[bf, bfs, bfs], [bfs, bt, bt], [bfs, bt, bt]]
}

fn fung_q(e: &M3, bf: f64, bt: f64, bfs: f64) -> f64 {
    let b = fung_weights(bf, bt, bfs);
    (0..3).flat_map(|i| (0..3).map(move |k| (i, k))).map(|(i, k)| b[i][k] * e[i][k] * e[i][k]).sum()
}
