//! The `partial` level: the pointwise operator `D` in reference coordinates (`w |det J| Tᵀ D T`,
//! symmetric, packed) stored per quadrature point, the basis applied on the fly — sum factorized on
//! quadrilaterals and hexahedra, the tabulated basis on simplices. On the CPU ([`cpu`]) and the GPU
//! ([`cuda`]); the `none` level ([`super::none`]) is the same apply with `D` re-evaluated from the
//! mesh and coefficients at every point instead of stored ([`Pointwise::Recomputed`]).
pub mod cpu;
pub mod cuda;
pub mod hex_batch;
pub mod hex_cuda;

use crate::operator::basis::TensorBasis;
use crate::operator::integrate::ElementIntegrator;

/// Where the pointwise operator of a matrix-free apply comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pointwise {
    /// Stored per quadrature point (`partial`).
    Stored,
    /// Re-evaluated per apply from vertex coordinates and passive data (`none`).
    Recomputed,
}

/// The 1D tables the matrix-free levels apply B with on tensor cells: the nodal basis's own
/// ([`crate::operator::basis::Basis::tensor`], no signs) or, for a modal basis whose functions
/// are signed products of one 1D basis (hierarchical hexahedra, trunk or full), that basis's
/// `p1³` products as kernel positions — `lex_to_dof[l]` the local dof in slot l (`usize::MAX`
/// where the element lacks it) and the sign of slot l (±1, 0 where absent). The cell's vector
/// embeds into the tensor grid with the absent slots held at zero, and the nodal machinery (sum
/// factorization, `hex_matfree.cu`) applies unchanged.
pub fn tensor_of(integ: &ElementIntegrator) -> Option<(TensorBasis, Option<Vec<f64>>)> {
    let basis = &integ.basis;
    if let Some(t) = &basis.tensor {
        return Some((t.clone(), None));
    }
    let cell = integ.space.mesh.cell_type;
    if cell != crate::mesh::CellType::Hexahedron {
        return None;
    }
    let x = crate::operator::basis::product_points_1d(cell, &basis.rule)?;
    let (b, g, slots) = integ.space.element.tensor_slots(&x)?;
    let (q1, nloc) = (x.len(), basis.nloc);
    let p1 = b.len() / q1;
    let mut lex_to_dof = vec![usize::MAX; p1 * p1 * p1];
    let mut sign = vec![0.0; p1 * p1 * p1];
    for (dof, &(slot, s)) in slots.iter().enumerate() {
        if slot >= lex_to_dof.len() || lex_to_dof[slot] != usize::MAX || slots.len() != nloc {
            return None;
        }
        (lex_to_dof[slot], sign[slot]) = (dof, s);
    }
    // Every value and gradient of the tabulation reproduced by the signed products, or no tables.
    let tab = &basis.tab;
    let vmax = tab.values.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let gmax = tab.grads.iter().flatten().fold(1.0f64, |m, v| m.max(v.abs()));
    for q in 0..basis.nq() {
        let qi = [q % q1, q / q1 % q1, q / (q1 * q1)];
        for (slot, &dof) in lex_to_dof.iter().enumerate().filter(|(_, &d)| d != usize::MAX) {
            let si = [slot % p1, slot / p1 % p1, slot / (p1 * p1)];
            let f = |a: usize, d: bool| if d { g[qi[a] * p1 + si[a]] } else { b[qi[a] * p1 + si[a]] };
            let v = sign[slot] * f(0, false) * f(1, false) * f(2, false);
            if (v - tab.values[q * nloc + dof]).abs() > 1e-12 * vmax {
                return None;
            }
            for k in 0..3 {
                let gk = sign[slot] * (0..3).map(|a| f(a, a == k)).product::<f64>();
                if (gk - tab.grads[q * nloc + dof][k]).abs() > 1e-12 * gmax {
                    return None;
                }
            }
        }
    }
    Some((TensorBasis { p1d: p1, q1d: q1, b, g, lex_to_dof }, Some(sign)))
}

/// Each cell's nodes at the kernel positions `order` (local dofs, `usize::MAX` for a slot the
/// element lacks: the cell's first node stands there) and, where the space is signed or has
/// absent slots, the sign of each (cell, position): the slot's sign times the restriction's, 0
/// where absent — so a gather reads ±x (0) and a scatter adds ±y (nothing).
pub fn cell_index(space: &crate::space::FunctionSpace, order: &[usize], slot_sign: Option<&[f64]>) -> (Vec<usize>, Option<Vec<f64>>) {
    let (dm, ncells) = (&space.dofmap, space.mesh.num_cells());
    let nloc = dm.nodes_per_cell;
    let idx = (0..ncells)
        .flat_map(|c| order.iter().map(move |&l| dm.cell_nodes[c * nloc + if l == usize::MAX { 0 } else { l }]))
        .collect();
    if slot_sign.is_none() && dm.signs.is_none() {
        return (idx, None);
    }
    let sgn = (0..ncells)
        .flat_map(|c| {
            order.iter().enumerate().map(move |(k, &l)| {
                let slot = slot_sign.map_or(1.0, |s| s[k]);
                if l == usize::MAX {
                    0.0
                } else {
                    slot * dm.signs.as_ref().map_or(1.0, |s| s[c * nloc + l])
                }
            })
        })
        .collect();
    (idx, Some(sgn))
}

/// The basis and geometry tables of a matrix-free apply, with local dofs in kernel order
/// (lexicographic on tensor cells).
pub struct KernelTables {
    /// `order[l]` is the element's local dof at kernel position l (`usize::MAX`: a tensor slot the
    /// modal element lacks, see [`tensor_of`]).
    pub order: Vec<usize>,
    /// The sign of each kernel position's function ([`tensor_of`]), where not all +1.
    pub slot_sign: Option<Vec<f64>>,
    /// With sum factorization: basis functions and points per axis and the 1D tables.
    pub tensor: Option<(usize, usize, Vec<f64>, Vec<f64>)>,
    /// Basis functions and points per cell.
    pub pd: usize,
    pub qd: usize,
    pub dim: usize,
    /// `phi[q·pd + l]`, `dphi[(q·pd + l)·dim + k]`: reference values and gradients.
    pub phi: Vec<f64>,
    pub dphi: Vec<f64>,
    /// Geometry basis gradients `gdn[(q·nv + v)·dim + k]` and quadrature weights.
    pub gdn: Vec<f64>,
    pub nv: usize,
    pub w: Vec<f64>,
}

impl KernelTables {
    pub fn new(integ: &ElementIntegrator) -> KernelTables {
        let basis = &integ.basis;
        let (dim, nloc, nq) = (basis.dim, basis.nloc, basis.nq());
        let tensor_basis = tensor_of(integ);
        let order = tensor_basis.as_ref().map_or_else(|| basis.kernel_order(), |(t, _)| t.lex_to_dof.clone());
        let slot_sign = tensor_basis.as_ref().and_then(|(_, s)| s.clone());
        let pd = order.len();
        let mut phi = Vec::with_capacity(nq * pd);
        let mut dphi = Vec::with_capacity(nq * pd * dim);
        for q in 0..nq {
            for (l, &dof) in order.iter().enumerate() {
                match (&tensor_basis, &slot_sign) {
                    // Slots of a modal basis: the unsigned products (the sign is the restriction's).
                    (Some((t, _)), Some(_)) => {
                        let (p1, q1) = (t.p1d, t.q1d);
                        let (qi, si) = ([q % q1, q / q1 % q1, q / (q1 * q1)], [l % p1, l / p1 % p1, l / (p1 * p1)]);
                        let f = |a: usize, d: bool| if d { t.g[qi[a] * p1 + si[a]] } else { t.b[qi[a] * p1 + si[a]] };
                        phi.push(f(0, false) * f(1, false) * f(2, false));
                        dphi.extend((0..dim).map(|k| (0..3).map(|a| f(a, a == k)).product::<f64>()));
                    }
                    _ => {
                        phi.push(basis.tab.values[q * nloc + dof]);
                        dphi.extend_from_slice(&basis.tab.grads[q * nloc + dof][..dim]);
                    }
                }
            }
        }
        let cell = integ.space.mesh.cell_type;
        let nv = cell.num_vertices();
        let (mut vals, mut grads) = (vec![0.0; nv], vec![[0.0; 3]; nv]);
        let mut gdn = Vec::with_capacity(nq * nv * dim);
        for p in &basis.rule.points {
            cell.geometry_basis(*p, &mut vals, &mut grads);
            for g in &grads {
                gdn.extend_from_slice(&g[..dim]);
            }
        }
        let tensor = tensor_basis.map(|(t, _)| (t.p1d, t.q1d, t.b, t.g));
        KernelTables { order, slot_sign, tensor, pd, qd: nq, dim, phi, dphi, gdn, nv, w: basis.rule.weights.clone() }
    }

    /// The tables as `kernels/matfree.cu` reads them: `[b1 | g1] | phi | dphi | gdn | w`.
    pub fn device_tab(&self) -> Vec<f64> {
        let mut t = Vec::new();
        if let Some((_, _, b, g)) = &self.tensor {
            t.extend_from_slice(b);
            t.extend_from_slice(g);
        }
        for part in [&self.phi, &self.dphi, &self.gdn, &self.w] {
            t.extend_from_slice(part);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fe::ModeSet;
    use crate::mesh::{generate, CellType};
    use crate::physics::Diffusion;
    use crate::space::FunctionSpace;
    use std::sync::Arc;

    /// Hierarchical hexahedra, trunk and full p = 1…8, on Gauss and the seed's rules: every function
    /// finds its own signed tensor slot ((p + 1)³ slots, the trunk's others absent), and the
    /// tables reproduce the tabulation (checked inside [`tensor_of`]).
    #[test]
    fn hierarchical_bases_embed_in_tensor_slots() {
        let mesh = Arc::new(generate::box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap());
        let physics = Diffusion::new(1.0);
        for modes in [ModeSet::Trunk, ModeSet::Full] {
            for p in 1..=crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE {
                let space = FunctionSpace::hierarchical(mesh.clone(), p, modes, 1).unwrap();
                for degree in [None, Some(3 * p - 2)] {
                    let integ = ElementIntegrator::new(&space, &physics, degree).unwrap();
                    let (t, sign) = tensor_of(&integ).unwrap_or_else(|| panic!("{modes:?} p = {p}: no tensor slots"));
                    let sign = sign.expect("signed slots");
                    assert_eq!((t.p1d, t.lex_to_dof.len()), (p + 1, (p + 1).pow(3)));
                    let present = t.lex_to_dof.iter().filter(|&&d| d != usize::MAX).count();
                    assert_eq!(present, integ.basis.nloc, "{modes:?} p = {p}");
                    assert!(t.lex_to_dof.iter().zip(&sign).all(|(&d, &s)| (d == usize::MAX) == (s == 0.0)));
                    let tables = KernelTables::new(&integ);
                    assert_eq!((tables.pd, tables.order.len()), ((p + 1).pow(3), (p + 1).pow(3)));
                }
            }
        }
    }
}
