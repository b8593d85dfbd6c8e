//! The `partial` level: the pointwise operator `D` in reference coordinates (`w |det J| Tᵀ D T`,
//! symmetric, packed) stored per quadrature point, the basis applied on the fly — sum factorized on
//! quadrilaterals and hexahedra, the tabulated basis on simplices. On the CPU ([`cpu`]) and the GPU
//! ([`cuda`]); the `none` level ([`super::none`]) is the same apply with `D` re-evaluated from the
//! mesh and coefficients at every point instead of stored ([`Pointwise::Recomputed`]).
pub mod cpu;
pub mod cuda;
pub mod hex_batch;
pub mod hex_cuda;

use crate::operator::integrate::ElementIntegrator;

/// Where the pointwise operator of a matrix-free apply comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pointwise {
    /// Stored per quadrature point (`partial`).
    Stored,
    /// Re-evaluated per apply from vertex coordinates and passive data (`none`).
    Recomputed,
}

/// The basis and geometry tables of a matrix-free apply, with local dofs in kernel order
/// (lexicographic on tensor cells).
pub struct KernelTables {
    /// `order[l]` is the element's local dof at kernel position l.
    pub order: Vec<usize>,
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
        let order = basis.kernel_order();
        let mut phi = Vec::with_capacity(nq * nloc);
        let mut dphi = Vec::with_capacity(nq * nloc * dim);
        for q in 0..nq {
            for &dof in &order {
                phi.push(basis.tab.values[q * nloc + dof]);
                dphi.extend_from_slice(&basis.tab.grads[q * nloc + dof][..dim]);
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
        let tensor = basis.tensor.as_ref().map(|t| (t.p1d, t.q1d, t.b.clone(), t.g.clone()));
        KernelTables { order, tensor, pd: nloc, qd: nq, dim, phi, dphi, gdn, nv, w: basis.rule.weights.clone() }
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
