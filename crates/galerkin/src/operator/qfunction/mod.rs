//! Pointwise physics written once ("QFunctions", libCEED's word): what happens at one quadrature
//! point, declared by its inputs (field value and/or gradient), its passive fields (coefficients,
//! sampled per cell or per point) and two entry points:
//! - [`QFunction::apply`], the action `out += D(p) in` on field vectors — what the matrix-free
//!   levels (`partial`, `none`) evaluate, and, for linear physics, also the linearised form a
//!   Newton solve will need ([`QFunction::linearised`]);
//! - [`QFunction::block`], the same linearised form as a bilinear form on one pair of scalar basis
//!   functions — what the assembled levels (`full`, `element`) sum.
//!
//! Each QFunction has a CUDA twin in `kernels/qf/<name>.cuh` with the same names and arithmetic,
//! used by every GPU kernel; `tests/qfunction_parity.rs` evaluates both on random inputs
//! ([`parity::cuda_eval`] on the GPU) and CI compiles the twins with NVRTC, so the two cannot drift
//! apart.
//!
//! Field vectors are `[u_0..u_{n-1}]` (with `VALUE`) followed by `[∂_0 u_0, …, ∂_{d-1} u_{n-1}]`
//! (with `GRAD`): index `n + c·d + k` is `∂_k u_c` when both are present.
mod diffusion;
mod elasticity;
mod mass;
pub mod parity;

pub use diffusion::DiffusionQf;
pub use elasticity::ElasticityQf;
pub use mass::MassQf;

use crate::physics::{Coefficient, EvalModes};

/// Quadrature-weighted moments of one pair of scalar basis functions (φ_i, φ_j) at a point.
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    /// Quadrature weight times |det J|.
    pub w: f64,
    pub vi: f64,
    pub vj: f64,
    /// Physical gradients.
    pub gi: [f64; 3],
    pub gj: [f64; 3],
    pub dim: usize,
}

impl Pair {
    /// `w φ_i φ_j`
    #[inline]
    pub fn vv(&self) -> f64 {
        self.w * self.vi * self.vj
    }
    /// `w ∇φ_i·∇φ_j`
    #[inline]
    pub fn dot(&self) -> f64 {
        self.w * (0..self.dim).map(|k| self.gi[k] * self.gj[k]).sum::<f64>()
    }
    /// `w ∂_k φ_i ∂_l φ_j`
    #[inline]
    pub fn gg(&self, k: usize, l: usize) -> f64 {
        self.w * self.gi[k] * self.gj[l]
    }
}

/// One pointwise physics term. See the module documentation; implementations are stateless (their
/// coefficients are bound by [`crate::physics`]), so one static instance serves every operator.
pub trait QFunction: Send + Sync + 'static {
    /// The CUDA twin: a struct in `kernels/qf/` with this name.
    fn cuda_name(&self) -> &'static str;
    fn modes(&self) -> EvalModes;
    /// Names of the passive fields, in the order `p` holds them (and the CUDA twin reads them).
    fn passive(&self) -> &'static [&'static str];
    /// Whether [`QFunction::block`] reads every `gg(k, l)`, not only `dot()` (decides how much of
    /// the reference tensors the GPU keeps on affine cells).
    fn full_gradient(&self) -> bool;
    fn is_symmetric(&self) -> bool {
        true
    }
    /// `out += D(p) in` for `ncomp` components in `dim` dimensions.
    fn apply(&self, dim: usize, ncomp: usize, p: &[f64], input: &[f64], out: &mut [f64]);
    /// `e[a·ncomp + b] += (φ_i e_a)ᵀ D(p) (φ_j e_b)` from the pair's moments.
    fn block(&self, dim: usize, ncomp: usize, p: &[f64], pair: &Pair, e: &mut [f64]);
    /// The linearised action at `state` (a Newton step's Jacobian): `out += D'(p, state) dir`. Linear
    /// physics is its own linearisation.
    fn linearised(&self, dim: usize, ncomp: usize, p: &[f64], _state: &[f64], dir: &[f64], out: &mut [f64]) {
        self.apply(dim, ncomp, p, dir, out)
    }
}

/// A QFunction bound to coefficient fields: one term of a physics.
#[derive(Clone)]
pub struct Term {
    pub qf: &'static dyn QFunction,
    /// One coefficient per passive field of `qf`.
    pub fields: Vec<Coefficient>,
}

/// The sum of a physics' terms, as the operator evaluates it: modes are the union, passive fields
/// follow term by term. The CUDA side is the nested `Sum<A, Sum<B, C>>` of the twins.
#[derive(Clone)]
pub struct Composite {
    pub terms: Vec<Term>,
    pub ncomp: usize,
    pub dim: usize,
}

impl Composite {
    pub fn new(terms: Vec<Term>, ncomp: usize, dim: usize) -> Composite {
        Composite { terms, ncomp, dim }
    }

    pub fn modes(&self) -> EvalModes {
        let mut m = EvalModes { value: false, grad: false };
        for t in &self.terms {
            m.value |= t.qf.modes().value;
            m.grad |= t.qf.modes().grad;
        }
        m
    }

    /// Field vector length.
    pub fn field_size(&self) -> usize {
        self.modes().size(self.ncomp, self.dim)
    }

    /// Every passive field, term after term.
    pub fn fields(&self) -> Vec<&Coefficient> {
        self.terms.iter().flat_map(|t| t.fields.iter()).collect()
    }

    pub fn npassive(&self) -> usize {
        self.terms.iter().map(|t| t.fields.len()).sum()
    }

    pub fn full_gradient(&self) -> bool {
        self.terms.iter().any(|t| t.qf.full_gradient())
    }

    pub fn is_symmetric(&self) -> bool {
        self.terms.iter().all(|t| t.qf.is_symmetric())
    }

    /// The CUDA type, e.g. `Sum<Diffusion,Mass>`.
    pub fn cuda_type(&self) -> String {
        fn nest(names: &[&str]) -> String {
            match names {
                [one] => one.to_string(),
                [first, rest @ ..] => format!("Sum<{first},{}>", nest(rest)),
                [] => String::new(),
            }
        }
        nest(&self.terms.iter().map(|t| t.qf.cuda_name()).collect::<Vec<_>>())
    }

    /// Offset of a term's part in the union field vector (mirrors `Sum::offset` in qfunction.cuh).
    fn offset(&self, t: &Term) -> usize {
        if self.modes().value && !t.qf.modes().value {
            self.ncomp
        } else {
            0
        }
    }

    /// `out += D(p) in` on union field vectors.
    pub fn apply(&self, p: &[f64], input: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for t in &self.terms {
            let (o, n) = (self.offset(t), t.qf.modes().size(self.ncomp, self.dim));
            t.qf.apply(self.dim, self.ncomp, &p[k..k + t.fields.len()], &input[o..o + n], &mut out[o..o + n]);
            k += t.fields.len();
        }
    }

    /// `e += ` the ncomp×ncomp block of the pair.
    pub fn block(&self, p: &[f64], pair: &Pair, e: &mut [f64]) {
        let mut k = 0;
        for t in &self.terms {
            t.qf.block(self.dim, self.ncomp, &p[k..k + t.fields.len()], pair, e);
            k += t.fields.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block of every QFunction equals the pair's basis vectors pushed through `apply`:
    /// e[a][b] = (B_i e_a)ᵀ D (B_j e_b). This ties the two entry points together on the host; the
    /// parity test ties each to its CUDA twin.
    #[test]
    fn block_is_apply_on_basis_pairs() {
        let k = |v: f64| Coefficient::Constant(v);
        for dim in 1..=3 {
            let cases: Vec<(Vec<Term>, usize)> = vec![
                (vec![Term { qf: &DiffusionQf, fields: vec![k(1.7)] }], 1),
                (vec![Term { qf: &DiffusionQf, fields: vec![k(0.7)] }, Term { qf: &MassQf, fields: vec![k(2.5)] }], 2),
                (vec![Term { qf: &ElasticityQf, fields: vec![k(1.3), k(0.8)] }, Term { qf: &MassQf, fields: vec![k(0.4)] }], dim),
            ];
            for (terms, ncomp) in cases {
                let q = Composite::new(terms, ncomp, dim);
                let p: Vec<f64> = q.fields().iter().map(|c| c.eval([0.0; 3], 0)).collect();
                let m = q.field_size();
                let modes = q.modes();
                let pair = Pair { w: 0.37, vi: 0.6, vj: -1.2, gi: [0.3, -0.8, 1.1], gj: [-0.5, 0.9, 0.2], dim };
                let mut e = vec![0.0; ncomp * ncomp];
                q.block(&p, &pair, &mut e);
                let field = |v: f64, g: [f64; 3], c: usize| {
                    let mut f = vec![0.0; m];
                    let nv = if modes.value { ncomp } else { 0 };
                    if modes.value {
                        f[c] = v;
                    }
                    if modes.grad {
                        for kk in 0..dim {
                            f[nv + c * dim + kk] = g[kk];
                        }
                    }
                    f
                };
                for a in 0..ncomp {
                    for b in 0..ncomp {
                        let mut out = vec![0.0; m];
                        q.apply(&p, &field(pair.vj, pair.gj, b), &mut out);
                        let want: f64 = pair.w * field(pair.vi, pair.gi, a).iter().zip(&out).map(|(x, y)| x * y).sum::<f64>();
                        assert!((e[a * ncomp + b] - want).abs() < 1e-14, "dim {dim} {}: ({a},{b}) {} vs {want}", q.cuda_type(), e[a * ncomp + b]);
                    }
                }
            }
        }
    }
}
