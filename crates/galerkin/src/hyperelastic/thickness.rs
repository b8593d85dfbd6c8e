//! A follower pressure's edge in plane stress: the force acts on the deformed edge *of the current
//! thickness*, n da = F₃₃ (a₁ × e_z) ds per unit reference thickness, and F₃₃ is not a nodal
//! unknown — at each edge point it is the plane-stress law's thickness stretch of the cell beside
//! the edge, evaluated at that point (F = R + Σ_L u_L ⊗ g'_L over the cell's nodes L,
//! [`Law::thickness_stretch`]). So the residual's a₂ = e_z becomes F₃₃ e_z, and the Jacobian gains
//! `λ p w φ_j (a₁ × e_z)_i ∂F₃₃/∂u_(L,k)` with ∂F₃₃/∂u_(L,k) = Σ_β D_kβ g'_Lβ — a (2 m) × (2 nloc)
//! block coupling the edge's nodes to every node of its cell (entries the cell's block already has).
use super::element::HyperElement;
use super::law::{Law, M3};
use super::loads::FlatThickness;
use crate::linalg::CsrMatrix;
use crate::operator::geometry::{inverse_jacobian, physical_gradient};
use crate::{Error, Result};

/// One pressure edge's cell, as the thickness stretch at the edge's points needs it.
#[derive(Clone)]
pub(super) struct EdgeThickness {
    law: Law,
    /// The cell's material frame R (F' = R + Σ_L u_L ⊗ g'_L).
    frame: M3,
    /// The cell's nodes.
    pub nodes: Vec<usize>,
    /// Per edge point, the cell's gradients in the frame, g'_L = Rᵀ ∇φ_L (in-plane part), [point][L].
    pub g: Vec<Vec<[f64; 2]>>,
    /// CSR positions of the (2 m) × (2 nloc) entries (edge node rows, cell node columns), row-major.
    pub pos: Vec<usize>,
}

impl EdgeThickness {
    /// Cell `c` of `el` at the edge's reference points `xi`, for the edge's `facet_nodes` (rows).
    pub fn new(
        el: &HyperElement,
        c: usize,
        xi: &[[f64; 3]],
        facet_nodes: &[usize],
        pattern: &CsrMatrix,
    ) -> Result<EdgeThickness> {
        let (space, mesh) = (&el.space, &*el.space.mesh);
        let tab = space.element.tabulate(xi);
        let nloc = tab.ndofs;
        let frame = el.frame(c);
        let mut g = Vec::with_capacity(xi.len());
        for (q, &x) in xi.iter().enumerate() {
            let (_, jac) = mesh.map_point(c, x);
            let (inv, _) = inverse_jacobian(&jac, 2)?;
            g.push(
                (0..nloc)
                    .map(|l| {
                        let p = physical_gradient(&inv, tab.grads[q * nloc + l], 2);
                        [0, 1].map(|a| p[0] * frame[0][a] + p[1] * frame[1][a])
                    })
                    .collect(),
            );
        }
        let nodes = space.dofmap.cell(c).to_vec();
        let mut pos = Vec::with_capacity(4 * facet_nodes.len() * nloc);
        for &ni in facet_nodes {
            for a in 0..2 {
                for &nj in &nodes {
                    for b in 0..2 {
                        let (r, col) = (ni * 2 + a, nj * 2 + b);
                        pos.push(pattern.position(r, col).ok_or_else(|| {
                            Error::invalid(format!(
                                "pressure entry ({r}, {col}) missing from the sparsity"
                            ))
                        })?);
                    }
                }
            }
        }
        Ok(EdgeThickness {
            law: el.law,
            frame,
            nodes,
            g,
            pos,
        })
    }

    /// Appends this edge's records to `out` ([`FlatThickness`]'s layout).
    pub fn flatten(&self, out: &mut FlatThickness) -> Result<()> {
        for &n in &self.nodes {
            out.nodes.push(
                u32::try_from(n)
                    .map_err(|_| Error::Unsupported(format!("node {n} exceeds 32 bits")))?,
            );
        }
        out.frames.extend(self.frame.iter().flatten());
        out.grads.extend(self.g.iter().flatten().flatten());
        out.positions.extend(self.pos.iter().map(|&p| p as u64));
        Ok(())
    }

    /// F₃₃ and D = ∂F₃₃/∂F' at edge point `q` of state `u`.
    pub fn at(&self, u: &[f64], q: usize) -> (f64, [[f64; 2]; 2]) {
        let mut f = self.frame;
        for (&n, gl) in self.nodes.iter().zip(&self.g[q]) {
            for (i, fi) in f.iter_mut().enumerate().take(2) {
                fi[0] += u[n * 2 + i] * gl[0];
                fi[1] += u[n * 2 + i] * gl[1];
            }
        }
        self.law.thickness_stretch(&f)
    }

    /// `kt[(j, i), (L, k)] += coef[j][i] ∂F₃₃/∂u_(L,k)` at point `q` (kt row-major, 2m × 2nloc).
    pub fn add_jacobian(&self, q: usize, d: &[[f64; 2]; 2], coef: &[[f64; 2]], kt: &mut [f64]) {
        let nc = 2 * self.nodes.len();
        for (j, cj) in coef.iter().enumerate() {
            for (i, &c) in cj.iter().enumerate() {
                let row = &mut kt[(j * 2 + i) * nc..(j * 2 + i + 1) * nc];
                for (l, gl) in self.g[q].iter().enumerate() {
                    for (k, dk) in d.iter().enumerate() {
                        row[l * 2 + k] += c * (dk[0] * gl[0] + dk[1] * gl[1]);
                    }
                }
            }
        }
    }
}
