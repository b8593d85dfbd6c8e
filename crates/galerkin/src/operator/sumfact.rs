//! Sum-factorized element matrices on quadrilaterals and hexahedra (and intervals). On the Gauss
//! product rule a reference row of the basis factors by axis — `φ_i(ξ) = Π_d b_{i_d}(ξ_d)`, its
//! ∂/∂ξ_l with `b'` on axis l — so for every pair of rows (r, r') the element matrix
//!
//! `K[i][j] = Σ_q D̂_q[r][r'] Π_d A^{r r'}_d[i_d][j_d][q_d]`,  `A_d[i][j][q] = X_r(q)_i X_r'(q)_j`,
//!
//! is three 1D contractions (axis 3, then 2, then 1) instead of a sum over all (p+1)^d points for
//! each of the (p+1)^{2d} pairs: `q³p² + q²p⁴ + qp⁶` operations per pair of rows in 3D instead of
//! `q³p⁶` (MFEM's element-assembly kernels and deal.II's matrix-free cell matrices do the same).
use super::integrate::ElementIntegrator;

/// 1D tables of one integrator, per axis padded to three (absent axes have one point, one basis
/// function and the factor 1).
pub struct TensorMatrix {
    /// Basis functions and points per axis.
    p: [usize; 3],
    q: [usize; 3],
    nrows: usize,
    has_value: bool,
    /// `a[axis][(r·R + r')][(i·p + j)·q + k]`.
    a: [Vec<Vec<f64>>; 3],
    /// Axis 3's tables as `[(r·R + r')][k·p² + ij]`.
    a3t: Vec<Vec<f64>>,
    /// Local dof of lexicographic index.
    lex_to_dof: Vec<usize>,
}

/// Work arrays of one thread.
#[derive(Default)]
pub struct SfScratch {
    d: Vec<f64>,
    t1: Vec<f64>,
    t2: Vec<f64>,
    k: Vec<f64>,
    koff: Vec<f64>,
}

impl TensorMatrix {
    /// The tables, when the integrator's basis is a tensor product on its Gauss product rule.
    /// Only from `min_p1d` basis functions per axis: [`LocalMatrices`] leaves Q1 (two) to the
    /// quadrature loop, which is as cheap there.
    ///
    /// [`LocalMatrices`]: super::local_matrix::LocalMatrices
    pub fn new(integ: &ElementIntegrator, has_value: bool, has_grad: bool, min_p1d: usize) -> Option<TensorMatrix> {
        let t = integ.basis.tensor.as_ref().filter(|t| t.p1d >= min_p1d)?;
        let dim = integ.space.mesh.dim;
        let nrows = usize::from(has_value) + if has_grad { dim } else { 0 };
        let (mut p, mut q) = ([1; 3], [1; 3]);
        for d in 0..dim {
            p[d] = t.p1d;
            q[d] = t.q1d;
        }
        // X_r on axis d: the derivative table where row r is ∂/∂ξ_d, the values elsewhere.
        let table = |r: usize, d: usize| -> Vec<f64> {
            if d >= dim {
                return vec![1.0];
            }
            let deriv = !(has_value && r == 0) && r - usize::from(has_value) == d;
            if deriv {
                t.g.clone()
            } else {
                t.b.clone()
            }
        };
        let a = std::array::from_fn(|d| {
            let mut per_pair = Vec::with_capacity(nrows * nrows);
            for r in 0..nrows {
                for r2 in 0..nrows {
                    let (x, y) = (table(r, d), table(r2, d));
                    let mut v = vec![0.0; p[d] * p[d] * q[d]];
                    for i in 0..p[d] {
                        for j in 0..p[d] {
                            for k in 0..q[d] {
                                v[(i * p[d] + j) * q[d] + k] = x[k * p[d] + i] * y[k * p[d] + j];
                            }
                        }
                    }
                    per_pair.push(v);
                }
            }
            per_pair
        });
        // Axis 3 is contracted first, point by point: its tables transposed to [q][ij].
        let a3t = a[2]
            .iter()
            .map(|v| {
                let (pp, qn) = (p[2] * p[2], q[2]);
                let mut t = vec![0.0; pp * qn];
                for ij in 0..pp {
                    for k in 0..qn {
                        t[k * pp + ij] = v[ij * qn + k];
                    }
                }
                t
            })
            .collect();
        Some(TensorMatrix { p, q, nrows, has_value, a, a3t, lex_to_dof: t.lex_to_dof.clone() })
    }

    /// Adds the element matrix of the pulled-back operators `dq` (`[q][(a·R + r)·(n·R) + b·R + r']`,
    /// points in product order, first axis fastest) into `ke` (`[((i·n + a)·n + b)·nloc + j]`).
    /// With `symmetric` (a symmetric QFunction), a scalar problem computes the pairs r ≤ r' only
    /// and adds each off-diagonal pair's transpose for (r', r).
    pub fn element_matrix(&self, n: usize, nr: usize, symmetric: bool, dq: &[f64], s: &mut SfScratch, ke: &mut [f64]) {
        debug_assert_eq!(nr, self.nrows);
        let _ = self.has_value;
        let ([p1, p2, p3], [q1, q2, q3]) = (self.p, self.q);
        let (nq, width) = (q1 * q2 * q3, n * nr);
        let (pp1, pp2, pp3) = (p1 * p1, p2 * p2, p3 * p3);
        let nloc = p1 * p2 * p3;
        s.d.resize(nq, 0.0);
        s.t1.resize(q1 * q2 * pp3, 0.0);
        s.t2.resize(q1 * pp2 * pp3, 0.0);
        s.k.resize(pp1 * pp2 * pp3, 0.0);
        s.koff.resize(pp1 * pp2 * pp3, 0.0);
        let half = symmetric && n == 1;
        for a in 0..n {
            for b in 0..n {
                s.k.fill(0.0);
                s.koff.fill(0.0);
                let mut any = false;
                for r in 0..nr {
                    for r2 in if half { r..nr } else { 0..nr } {
                        let col = (a * nr + r) * width + b * nr + r2;
                        let mut nonzero = false;
                        for (k, d) in s.d.iter_mut().enumerate() {
                            *d = dq[k * width * width + col];
                            nonzero |= *d != 0.0;
                        }
                        if !nonzero {
                            continue;
                        }
                        any = true;
                        let pair = r * nr + r2;
                        let (a1, a2, a3) = (&self.a[0][pair], &self.a[1][pair], &self.a3t[pair]);
                        // Axis 3: T1[q1 + q1·q2][ij3] = Σ_q3 D[.. q3] A3[ij3][q3]
                        s.t1.fill(0.0);
                        for qq in 0..q1 * q2 {
                            let t1 = &mut s.t1[qq * pp3..(qq + 1) * pp3];
                            for k in 0..q3 {
                                let dv = s.d[qq + q1 * q2 * k];
                                for (t, &av) in t1.iter_mut().zip(&a3[k * pp3..(k + 1) * pp3]) {
                                    *t += dv * av;
                                }
                            }
                        }
                        // Axis 2: T2[k1][ij2][ij3] = Σ_q2 A2[ij2][q2] T1[k1 + q1·q2][ij3]
                        s.t2.fill(0.0);
                        for k1 in 0..q1 {
                            for k2 in 0..q2 {
                                let t1 = &s.t1[(k1 + q1 * k2) * pp3..(k1 + q1 * k2 + 1) * pp3];
                                for ij2 in 0..pp2 {
                                    let w = a2[ij2 * q2 + k2];
                                    let t2 = &mut s.t2[(k1 * pp2 + ij2) * pp3..(k1 * pp2 + ij2 + 1) * pp3];
                                    for (o, &x) in t2.iter_mut().zip(t1) {
                                        *o += w * x;
                                    }
                                }
                            }
                        }
                        // Axis 1: K[ij1][ij2·ij3] += Σ_q1 A1[ij1][q1] T2[q1][..]
                        let inner = pp2 * pp3;
                        let target = if half && r2 > r { &mut s.koff } else { &mut s.k };
                        for ij1 in 0..pp1 {
                            let out = &mut target[ij1 * inner..(ij1 + 1) * inner];
                            for k1 in 0..q1 {
                                let w = a1[ij1 * q1 + k1];
                                for (o, &x) in out.iter_mut().zip(&s.t2[k1 * inner..(k1 + 1) * inner]) {
                                    *o += w * x;
                                }
                            }
                        }
                    }
                }
                if !any {
                    continue;
                }
                // K[(i1 j1)(i2 j2)(i3 j3)] -> ke[((dof(i)·n + a)·n + b)·nloc + dof(j)]
                for i1 in 0..p1 {
                    for j1 in 0..p1 {
                        for i2 in 0..p2 {
                            for j2 in 0..p2 {
                                let base = ((i1 * p1 + j1) * pp2 + i2 * p2 + j2) * pp3;
                                let base_t = ((j1 * p1 + i1) * pp2 + j2 * p2 + i2) * pp3;
                                for i3 in 0..p3 {
                                    let di = self.lex_to_dof[i1 + p1 * (i2 + p2 * i3)];
                                    let row = ((di * n + a) * n + b) * nloc;
                                    for j3 in 0..p3 {
                                        let dj = self.lex_to_dof[j1 + p1 * (j2 + p2 * j3)];
                                        let mut v = s.k[base + i3 * p3 + j3];
                                        if half {
                                            v += s.koff[base + i3 * p3 + j3] + s.koff[base_t + j3 * p3 + i3];
                                        }
                                        ke[row + dj] += v;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
