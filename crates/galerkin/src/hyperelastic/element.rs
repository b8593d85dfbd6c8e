//! Per-cell integration of the hyperelastic residual and its consistent Jacobian, and their sum
//! over the mesh on the CPU (rayon, one colour of cell blocks at a time, entries placed through the
//! CSR slots found once with the sparsity — the same machinery as the `full` assembly level).
//!
//! In the reference configuration, with the material frame R of the cell (fibre, sheet, normal as
//! columns; the identity for isotropic laws) and rotated gradients g'_j = Rᵀ ∇_X φ_j:
//! F' = F R = R + Σ_j u_j ⊗ g'_j, r_(j,i) = ∫ P'_iA g'_jA, K_(j,i),(l,k) = ∫ g'_jA 𝔸'_iAkB g'_lB.
//! The rotation makes the anisotropic law's fibre frame the frame F is expressed in, at the cost of
//! one 3×3 product per basis function and point.
//!
//! Plane strain (2D meshes, two displacement components): F is the 3×3 gradient with F₃₃ = 1 and
//! F_α3 = F_3α = 0 (u₃ = 0, nothing depends on X₃), the laws are the 3D ones unchanged (the
//! out-of-plane stress S₃₃ is what holds ε₃₃ = 0), and only the in-plane rows and columns (i, k < 2)
//! enter the residual and the Jacobian; the frame is a rotation about X₃ (an in-plane fibre).
//! Plane stress (thin sheets): the same, with F₃₃ the thickness stretch that makes S₃₃ = 0 at each
//! point and the tangent condensed accordingly ([`Law::plane_stress`]).
use super::law::{Law, M3};
use crate::fe::{QuadratureRule, Tabulation};
use crate::linalg::CsrMatrix;
use crate::operator::assemble::{pattern, Slots};
use crate::operator::coloring::{Coloring, SharedMut};
use crate::operator::geometry::{inverse_jacobian, physical_gradient, GeometryTab};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// Volume quadrature degree: 2k on simplices (exact for a mass-type product of two P_k
/// functions; more than the stiffness needs), and the (k+1)-point Gauss product rule on tensor cells.
pub fn quadrature_degree(space: &FunctionSpace) -> usize {
    crate::operator::integrate::default_degree(space, 2 * space.element.degree())
}

/// The stiffness degree 2(k−1) on simplices (at least 1): ∇φ_i · ℂ ∇φ_j with constant ℂ is of
/// that degree on an affine cell, so the rule is exact in the small-strain (linear elasticity)
/// limit and the discrete stiffness keeps its full rank (P2 tetrahedra: 4 points instead of 14).
/// Tensor cells keep [`quadrature_degree`]. Residual and Jacobian share the rule, so the Jacobian
/// stays the exact derivative of the residual.
pub fn stiffness_quadrature_degree(space: &FunctionSpace) -> usize {
    if space.mesh.cell_type.is_simplex() {
        (2 * space.element.degree()).saturating_sub(2).max(1)
    } else {
        quadrature_degree(space)
    }
}

/// What integrating one cell needs: the space, the law, the quadrature with the basis and the
/// geometry tabulated on it, and a material frame per cell.
#[derive(Clone)]
pub struct HyperElement {
    pub space: Arc<FunctionSpace>,
    pub law: Law,
    pub quad: QuadratureRule,
    pub tab: Tabulation,
    pub geo: GeometryTab,
    /// Per cell, R with the fibre, sheet and normal directions as columns (empty: identity; in 2D
    /// a rotation about X₃).
    pub frames: Vec<M3>,
    /// 3, or 2 in plane strain or stress (also the number of displacement components).
    pub dim: usize,
    /// 2D only: plane stress (F₃₃ solved for S₃₃ = 0 at every point, [`Law::plane_stress`]) instead
    /// of plane strain (F₃₃ = 1).
    pub plane_stress: bool,
}

/// Scratch reused across cells by one thread.
#[derive(Default)]
pub struct Scratch {
    g: Vec<[f64; 3]>,
    h: Vec<f64>,
}

/// The in-plane frame of plane strain: columns f (normalised, in the plane), its rotation by 90°
/// about X₃, and X₃ — the law is transversely isotropic about f, so the sheet direction may be
/// either of the other two; with this choice the out-of-plane axis is the third one.
pub fn frame_from_fibre_2d(f: [f64; 2]) -> Result<M3> {
    let n = (f[0] * f[0] + f[1] * f[1]).sqrt();
    if !(n > 0.0 && n.is_finite()) {
        return Err(Error::invalid(format!("in-plane fibre direction {f:?} has no length")));
    }
    let (c, s) = (f[0] / n, f[1] / n);
    Ok([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
}

/// An orthonormal frame with `f` (normalised) as its first column; the other two complete it (the
/// law is transversely isotropic about f, so which pair does not matter).
pub fn frame_from_fibre(f: [f64; 3]) -> Result<M3> {
    let n = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
    if !(n > 0.0 && n.is_finite()) {
        return Err(Error::invalid(format!("fibre direction {f:?} has no length")));
    }
    let f = [f[0] / n, f[1] / n, f[2] / n];
    // The axis least aligned with f, orthogonalised.
    let k = (0..3).min_by(|&a, &b| f[a].abs().total_cmp(&f[b].abs())).unwrap_or(0);
    let mut s = [0.0; 3];
    s[k] = 1.0;
    let d = f[k];
    let mut s = [s[0] - d * f[0], s[1] - d * f[1], s[2] - d * f[2]];
    let ns = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt();
    s.iter_mut().for_each(|v| *v /= ns);
    let t = [f[1] * s[2] - f[2] * s[1], f[2] * s[0] - f[0] * s[2], f[0] * s[1] - f[1] * s[0]];
    Ok([[f[0], s[0], t[0]], [f[1], s[1], t[1]], [f[2], s[2], t[2]]])
}

impl HyperElement {
    /// `frames`: one per cell for the anisotropic law (see [`frame_from_fibre`]), or empty.
    pub fn new(space: Arc<FunctionSpace>, law: Law, frames: Vec<M3>) -> Result<HyperElement> {
        HyperElement::with_degree(space, law, frames, None)
    }

    /// As [`Self::new`] with a quadrature of `degree` (None: [`quadrature_degree`]; see also
    /// [`stiffness_quadrature_degree`]).
    pub fn with_degree(space: Arc<FunctionSpace>, law: Law, frames: Vec<M3>, degree: Option<usize>) -> Result<HyperElement> {
        let dim = space.mesh.dim;
        if space.ncomp != dim || !(dim == 2 || dim == 3) {
            return Err(Error::Unsupported(format!("hyperelasticity in {}D with {} components (3D, or 2D plane strain, with as many components as dimensions)", dim, space.ncomp)));
        }
        if dim == 2 {
            for (c, r) in frames.iter().enumerate() {
                if r[2] != [0.0, 0.0, 1.0] || r[0][2] != 0.0 || r[1][2] != 0.0 {
                    return Err(Error::invalid(format!("plane strain: the frame of cell {c} is not a rotation about X₃ (use frame_from_fibre_2d)")));
                }
            }
        }
        if !frames.is_empty() && frames.len() != space.mesh.num_cells() {
            return Err(Error::dim("fibre frames (one per cell)", space.mesh.num_cells(), frames.len()));
        }
        if law.anisotropic() && frames.is_empty() {
            return Err(Error::invalid("the anisotropic law needs a fibre direction per cell"));
        }
        let quad = QuadratureRule::new(space.mesh.cell_type, degree.unwrap_or_else(|| quadrature_degree(&space)))?;
        let tab = space.element.tabulate(&quad.points);
        let geo = GeometryTab::new(space.mesh.cell_type, &quad.points);
        Ok(HyperElement { space, law, quad, tab, geo, frames, dim, plane_stress: false })
    }

    /// Plane stress instead of plane strain (`on`; 2D only).
    pub fn plane_stress(mut self, on: bool) -> Result<HyperElement> {
        if on && self.dim != 2 {
            return Err(Error::Unsupported(format!("plane stress on a {}D mesh (2D only)", self.dim)));
        }
        self.plane_stress = on;
        Ok(self)
    }

    pub fn nloc(&self) -> usize {
        self.tab.ndofs
    }

    /// The frame of cell `c`.
    pub fn frame(&self, c: usize) -> M3 {
        self.frames.get(c).copied().unwrap_or([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    }

    /// F' = F R at point `q` of cell `c` (the rotated gradients left in `s.g`) and the point's weight
    /// w·|det J|; `id` carries the inverse Jacobian between the points of an affine cell.
    fn point(&self, c: usize, q: usize, uc: &[f64], s: &mut Scratch, id: &mut Option<([[f64; 3]; 3], f64)>) -> Result<(M3, f64)> {
        let (nloc, d) = (self.nloc(), self.dim);
        s.g.resize(nloc, [0.0; 3]);
        let (inv, det) = match *id {
            Some(v) if self.geo.affine => v,
            _ => {
                let v = inverse_jacobian(&self.geo.jacobian(&self.space.mesh, c, q), d)?;
                *id = Some(v);
                v
            }
        };
        let r = self.frame(c);
        for j in 0..nloc {
            let g = physical_gradient(&inv, self.tab.grads[q * nloc + j], d);
            s.g[j] = [0, 1, 2].map(|a| g[0] * r[0][a] + g[1] * r[1][a] + g[2] * r[2][a]);
        }
        let mut f = r;
        for (j, gj) in s.g.iter().enumerate() {
            for (i, fi) in f.iter_mut().enumerate().take(d) {
                for (fa, ga) in fi.iter_mut().zip(gj) {
                    *fa += uc[j * d + i] * ga;
                }
            }
        }
        Ok((f, self.quad.weights[q] * det.abs()))
    }

    /// Plane stress: the thickness stretch F₃₃ of each cell at `u` (the state, node-interleaved),
    /// averaged over its quadrature points (NaN where the law has none); `None` in plane strain and 3D.
    pub fn thickness_stretch(&self, u: &[f64]) -> Result<Option<Vec<f64>>> {
        if !self.plane_stress {
            return Ok(None);
        }
        let (d, dm) = (self.dim, &self.space.dofmap);
        if u.len() != self.space.ndofs() {
            return Err(Error::dim("hyperelastic state", self.space.ndofs(), u.len()));
        }
        let out = (0..self.space.mesh.num_cells())
            .into_par_iter()
            .map_init(
                || (Scratch::default(), vec![0.0; d * dm.nodes_per_cell]),
                |(s, uc), c| -> Result<f64> {
                    for (i, &n) in dm.cell(c).iter().enumerate() {
                        uc[i * d..i * d + d].copy_from_slice(&u[n * d..n * d + d]);
                    }
                    let (mut sum, mut vol, mut id) = (0.0, 0.0, None);
                    for q in 0..self.quad.weights.len() {
                        let (f, w) = self.point(c, q, uc, s, &mut id)?;
                        sum += w * self.law.thickness_stretch(&f).0; // (no condensed tangent formed)
                        vol += w;
                    }
                    Ok(sum / vol)
                },
            )
            .collect::<Result<Vec<f64>>>()?;
        Ok(Some(out))
    }

    /// Residual `re` (d·nloc, overwritten) and, if asked, the Jacobian `ke` ((d·nloc)², row-major,
    /// overwritten) of cell `c` at the cell displacements `uc` (node-interleaved, d = [`Self::dim`]
    /// components). A state where the law is undefined gives non-finite entries.
    pub fn cell(&self, c: usize, uc: &[f64], s: &mut Scratch, re: &mut [f64], mut ke: Option<&mut [f64]>) -> Result<()> {
        let nloc = self.nloc();
        let d = self.dim;
        let nd = d * nloc;
        re[..nd].fill(0.0);
        if let Some(k) = ke.as_deref_mut() {
            k[..nd * nd].fill(0.0);
        }
        s.g.resize(nloc, [0.0; 3]);
        s.h.resize(nloc * 27, 0.0);
        let mut id = None;
        for q in 0..self.quad.weights.len() {
            let (f, w) = self.point(c, q, uc, s, &mut id)?;
            let (p, aa) = if self.plane_stress { self.law.first_piola_plane_stress(&f) } else { self.law.first_piola(&f) };
            for j in 0..nloc {
                for i in 0..d {
                    re[j * d + i] += w * (p[i][0] * s.g[j][0] + p[i][1] * s.g[j][1] + p[i][2] * s.g[j][2]);
                }
            }
            if let Some(ke) = ke.as_deref_mut() {
                // h[l][i][A][k] = Σ_B 𝔸_iAkB g'_lB, then K += w g'_jA h[l][i][A][k].
                for l in 0..nloc {
                    let gl = s.g[l];
                    for i in 0..3 {
                        for a in 0..3 {
                            for k in 0..3 {
                                let b = ((i * 3 + a) * 3 + k) * 3;
                                s.h[((l * 3 + i) * 3 + a) * 3 + k] = aa[b] * gl[0] + aa[b + 1] * gl[1] + aa[b + 2] * gl[2];
                            }
                        }
                    }
                }
                for j in 0..nloc {
                    let gj = s.g[j];
                    for i in 0..d {
                        let row = &mut ke[(j * d + i) * nd..(j * d + i + 1) * nd];
                        for l in 0..nloc {
                            for k in 0..d {
                                let h = &s.h[(l * 3 + i) * 9 + k..];
                                row[l * d + k] += w * (gj[0] * h[0] + gj[1] * h[3] + gj[2] * h[6]);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The CPU assembler: CSR pattern, slots and colouring found once; residual and Jacobian summed
/// in parallel without locks.
pub struct CpuHyper {
    pub el: HyperElement,
    pub pattern: CsrMatrix,
    slots: Slots,
    coloring: Coloring,
}

impl CpuHyper {
    pub fn new(el: HyperElement) -> Result<CpuHyper> {
        let (pattern, slots) = pattern(&el.space, true)?;
        let slots = slots.ok_or_else(|| Error::invalid("sparsity pattern without slots"))?;
        let coloring = Coloring::greedy(&el.space.mesh);
        Ok(CpuHyper { el, pattern, slots, coloring })
    }

    /// A zero matrix with the Jacobian's sparsity.
    pub fn matrix(&self) -> CsrMatrix {
        self.pattern.clone()
    }

    /// `r = internal forces at u` (overwritten) and, if given, `k = Jacobian` (values overwritten).
    pub fn assemble(&self, u: &[f64], r: &mut [f64], mut k: Option<&mut CsrMatrix>) -> Result<()> {
        let space = &self.el.space;
        let dm = &space.dofmap;
        let d = self.el.dim;
        let (npc, nd) = (dm.nodes_per_cell, d * dm.nodes_per_cell);
        if u.len() != space.ndofs() || r.len() != space.ndofs() {
            return Err(Error::dim("hyperelastic state", space.ndofs(), u.len().min(r.len())));
        }
        r.fill(0.0);
        if let Some(k) = k.as_deref_mut() {
            if k.nnz() != self.pattern.nnz() {
                return Err(Error::dim("hyperelastic Jacobian entries", self.pattern.nnz(), k.nnz()));
            }
            k.values.fill(0.0);
        }
        let rp = SharedMut(r.as_mut_ptr());
        let kp = k.as_mut().map(|k| SharedMut(k.values.as_mut_ptr()));
        let row_ptr = &self.pattern.row_ptr;
        let want_k = kp.is_some();
        for color in &self.coloring.blocks {
            color.par_iter().try_for_each_init(
                || (Scratch::default(), vec![0.0; nd], vec![0.0; nd], vec![0.0; if want_k { nd * nd } else { 0 }]),
                |(s, uc, re, ke), cells| -> Result<()> {
                    let (rp, kp) = (&rp, &kp);
                    for c in cells.clone() {
                        let nodes = dm.cell(c);
                        for (i, &n) in nodes.iter().enumerate() {
                            uc[i * d..i * d + d].copy_from_slice(&u[n * d..n * d + d]);
                        }
                        self.el.cell(c, uc, s, re, if want_k { Some(&mut ke[..]) } else { None })?;
                        for (i, &n) in nodes.iter().enumerate() {
                            for a in 0..d {
                                // SAFETY: blocks of one colour share no node, so no two threads
                                // touch the same entry.
                                unsafe { *rp.0.add(n * d + a) += re[i * d + a] };
                            }
                        }
                        if let Some(kp) = kp {
                            let rank = &self.slots.rank[c * npc * npc..(c + 1) * npc * npc];
                            for (i, &ni) in nodes.iter().enumerate() {
                                for a in 0..d {
                                    let base = row_ptr[ni * d + a];
                                    let row = &ke[(i * d + a) * nd..(i * d + a + 1) * nd];
                                    for (j, &rk) in rank[i * npc..(i + 1) * npc].iter().enumerate() {
                                        for b in 0..d {
                                            // SAFETY: as above, rows of one colour's nodes are disjoint.
                                            unsafe { *kp.0.add(base + rk as usize * d + b) += row[j * d + b] };
                                        }
                                    }
                                }
                            }
                        }
                    }
                    Ok(())
                },
            )?;
        }
        Ok(())
    }
}
