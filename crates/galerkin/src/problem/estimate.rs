//! How much memory a problem will need, estimated from its sizes before anything large is
//! allocated, and how much the machine (or the GPU) has: a problem that cannot fit is refused at
//! once, naming both, instead of aborting minutes later on a failed allocation.
//!
//! The estimate follows the data structures the pipeline builds (mesh and its renumbered copy, dof
//! map and its entity tables, sparsity pattern and CSR matrix or element matrices, load vector,
//! Krylov vectors and GMRES basis, preconditioner, direct-solver fill) with per-shape row lengths
//! measured on structured meshes; it is meant to be within a small factor of the peak resident
//! size, which is what decides whether a run can finish. All arithmetic is in `f64`, so absurd
//! sizes from a problem file give an absurd estimate, never an overflow.
use crate::mesh::CellType;
use crate::operator::AssemblyLevel;
use crate::problem::linear::SolverMethod;
use crate::solver::precond::PreconditionerKind;
use crate::memory::Estimate;

/// The sizes the estimate is made from.
#[derive(Clone, Debug)]
pub struct ProblemShape {
    pub cell: CellType,
    pub cells: f64,
    pub vertices: f64,
    pub boundary_facets: f64,
    pub degree: usize,
    pub ncomp: usize,
    pub level: AssemblyLevel,
    pub method: SolverMethod,
    pub preconditioner: PreconditionerKind,
    pub restart: usize,
    /// The mesh is renumbered (a second copy exists while it is built).
    pub reorder: bool,
}

impl ProblemShape {
    /// Scalar nodes of the space: vertices plus the dofs on edges, faces and cell interiors, with
    /// entity counts from Euler's formula for the cell shape.
    pub fn nodes(&self) -> f64 {
        let (k, v, c) = (self.degree as f64, self.vertices, self.cells);
        let km = (k - 1.0).max(0.0);
        match self.cell {
            CellType::Interval => v + c * km,
            CellType::Triangle => v + km * (v + c) + c * km * (k - 2.0).max(0.0) / 2.0,
            CellType::Quadrilateral => v + km * (v + c) + c * km * km,
            // E ≈ V + C, F ≈ 2C for tetrahedral meshes.
            CellType::Tetrahedron => {
                v + km * (v + c) + 2.0 * c * km * (k - 2.0).max(0.0) / 2.0 + c * km * (k - 2.0).max(0.0) * (k - 3.0).max(0.0) / 6.0
            }
            // E ≈ V + 2C, F ≈ 3C for hexahedral meshes.
            CellType::Hexahedron => v + km * (v + 2.0 * c) + 3.0 * c * km * km + c * km * km * km,
        }
    }

    pub fn dofs(&self) -> f64 {
        self.nodes() * self.ncomp as f64
    }

    /// Mean nonzeros per scalar row: (k+2)^d on tensor cells, measured on Kuhn/diagonal-split
    /// simplex meshes otherwise.
    fn row_length(&self) -> f64 {
        let k = self.degree.clamp(1, 3);
        match self.cell {
            CellType::Interval => (k + 2) as f64,
            CellType::Quadrilateral => ((k + 2) * (k + 2)) as f64,
            CellType::Hexahedron => ((k + 2) * (k + 2) * (k + 2)) as f64,
            CellType::Triangle => [7.0, 11.5, 17.0][k - 1],
            CellType::Tetrahedron => [15.0, 28.5, 48.0][k - 1],
        }
    }

    /// Matrix nonzeros.
    pub fn nnz(&self) -> f64 {
        self.nodes() * self.row_length() * (self.ncomp * self.ncomp) as f64
    }

    fn local_dofs(&self) -> f64 {
        crate::fe::LagrangeElement::new(self.cell, self.degree.clamp(1, 3)).map_or(8.0, |e| crate::fe::FiniteElement::ndofs(&e) as f64)
    }

    /// Host memory of the whole run.
    pub fn host(&self) -> Estimate {
        let mut e = Estimate::default();
        let (c, v, b) = (self.cells, self.vertices, self.boundary_facets);
        let nv = self.cell.num_vertices() as f64;
        let nvf = self.cell.facet_type().map_or(1.0, |f| f.num_vertices() as f64);
        let mesh = 24.0 * v + 8.0 * nv * c + 4.0 * c + b * (48.0 + 8.0 * nvf);
        e.add("mesh", mesh * if self.reorder { 2.0 } else { 1.0 });
        let (nodes, dofs, nloc) = (self.nodes(), self.dofs(), self.local_dofs());
        let entities = if self.degree > 1 { c * (self.cell.edges().len() + self.cell.faces().len()) as f64 * 40.0 } else { 0.0 };
        e.add("dof map", 8.0 * nloc * c + 24.0 * nodes + entities);
        let nnz = self.nnz();
        let elem = nloc * self.ncomp as f64;
        match self.level {
            AssemblyLevel::Full => {
                // CSR (8 B value + 4 B column) plus the neighbour lists and node-to-cell table
                // alive while the pattern is built.
                e.add("matrix", 12.0 * nnz + 8.0 * dofs + 8.0 * nloc * c + nodes * (24.0 + 4.0 * (self.row_length() * 1.2).max(32.0)));
            }
            _ => e.add("element matrices", 8.0 * elem * elem * c),
        }
        e.add("load vector and constraints", 40.0 * dofs);
        let m = (self.restart as f64).min(dofs).max(1.0);
        let krylov = match self.method {
            SolverMethod::Cg => 6.0,
            SolverMethod::Bicgstab => 9.0,
            SolverMethod::Gmres => m + 5.0,
            SolverMethod::Direct => 3.0,
        };
        e.add("solver vectors", 8.0 * dofs * krylov);
        if self.method == SolverMethod::Gmres {
            e.add("GMRES Hessenberg matrix", 8.0 * (m + 1.0) * m);
        }
        if self.method == SolverMethod::Direct {
            e.add("direct factor (fill estimate)", 8.0 * direct_fill(self.cell.dim(), dofs, nnz));
        } else {
            let pc = match self.preconditioner {
                PreconditionerKind::None => 0.0,
                PreconditionerKind::Jacobi | PreconditionerKind::Ssor => 8.0 * dofs,
                PreconditionerKind::BlockJacobi => 8.0 * dofs * self.ncomp as f64,
                PreconditionerKind::Chebyshev => 40.0 * dofs,
                PreconditionerKind::Ilu0 => 8.0 * nnz + 16.0 * dofs,
            };
            e.add("preconditioner", pc);
        }
        // The VTU writer holds point and cell arrays and their base64 text.
        e.add("output", 2.4 * (24.0 * v + 8.0 * v * self.ncomp as f64 + (8.0 * nv + 9.0) * c));
        e
    }

    /// Device memory of a GPU run (mesh tables, positions, CSR or element matrices, vectors).
    pub fn device(&self) -> Estimate {
        let mut e = Estimate::default();
        let (c, v) = (self.cells, self.vertices);
        let (dofs, nloc) = (self.dofs(), self.local_dofs());
        let elem = nloc * self.ncomp as f64;
        e.add("mesh and dof map", 4.0 * (self.cell.num_vertices() as f64 + nloc) * c + 24.0 * v);
        match self.level {
            AssemblyLevel::Full => {
                e.add("matrix", 12.0 * self.nnz() + 8.0 * dofs);
                e.add("element positions", 2.0 * elem * elem * c);
            }
            _ => e.add("element matrices", 8.0 * elem * elem * c),
        }
        let m = (self.restart as f64).min(dofs).max(1.0);
        let vectors = match self.method {
            SolverMethod::Gmres => m + 8.0,
            SolverMethod::Bicgstab => 12.0,
            _ => 10.0,
        };
        e.add("vectors", 8.0 * dofs * vectors);
        e
    }
}

/// Entries of a sparse Cholesky factor with a fill-reducing ordering: about n log n in 2D and
/// n^(4/3) in 3D (nested-dissection bounds), scaled by the row length. Measured against faer's
/// symbolic factorization on structured meshes; [`crate::solver::DirectSolver`] checks the exact
/// count before the numeric factorization.
pub fn direct_fill(dim: usize, n: f64, nnz: f64) -> f64 {
    let row = (nnz / n.max(1.0)).max(1.0);
    match dim {
        1 => nnz,
        2 => (0.7 * row * n * n.max(2.0).log2()).max(nnz),
        _ => (1.2 * row * n.powf(4.0 / 3.0)).max(nnz),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{check, Available};
    use crate::mesh::generate;
    use crate::space::FunctionSpace;
    use std::sync::Arc;

    fn shape(cell: CellType, cells: usize, vertices: usize, degree: usize, ncomp: usize) -> ProblemShape {
        ProblemShape {
            cell,
            cells: cells as f64,
            vertices: vertices as f64,
            boundary_facets: 0.0,
            degree,
            ncomp,
            level: AssemblyLevel::Full,
            method: SolverMethod::Cg,
            preconditioner: PreconditionerKind::Jacobi,
            restart: 50,
            reorder: true,
        }
    }

    /// The node and nonzero counts the estimate uses agree with real spaces within 25%.
    #[test]
    fn sizes_match_real_spaces() {
        let meshes = [
            generate::rectangle(12, 10, [0.0; 2], [1.0; 2], CellType::Triangle).unwrap(),
            generate::rectangle(12, 10, [0.0; 2], [1.0; 2], CellType::Quadrilateral).unwrap(),
            generate::box_mesh(6, 5, 4, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap(),
            generate::box_mesh(6, 5, 4, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap(),
        ];
        for mesh in meshes {
            let mesh = Arc::new(mesh);
            for k in 1..=3 {
                let space = FunctionSpace::lagrange(mesh.clone(), k, 1).unwrap();
                let s = shape(mesh.cell_type, mesh.num_cells(), mesh.num_vertices(), k, 1);
                let nodes = space.dofmap.num_nodes as f64;
                assert!((s.nodes() / nodes - 1.0).abs() < 0.25, "{} P{k}: {} nodes estimated, {nodes} real", mesh.cell_type, s.nodes());
                let nnz = crate::operator::assemble::sparsity(&space).unwrap().nnz() as f64;
                // Small meshes have relatively more boundary rows (shorter): allow the estimate above.
                assert!(s.nnz() / nnz > 0.9 && s.nnz() / nnz < 1.8, "{} P{k}: nnz {} estimated, {nnz} real", mesh.cell_type, s.nnz());
            }
        }
    }

    #[test]
    fn absurd_sizes_are_refused_not_overflowed() {
        let s = shape(CellType::Tetrahedron, usize::MAX, usize::MAX, 3, 3);
        let e = s.host();
        assert!(e.total().is_finite() && e.total() > 1e20);
        let avail = Available { bytes: 8e9, source: "test".into() };
        let msg = check("host", &e, Some(&avail)).unwrap_err().to_string();
        assert!(msg.contains("out of memory") && msg.contains("mesh"), "{msg}");
        let gmres = ProblemShape { method: SolverMethod::Gmres, restart: 1_000_000_000, ..shape(CellType::Triangle, 2_000_000, 1_000_000, 1, 1) };
        let msg = check("host", &gmres.host(), Some(&avail)).unwrap_err().to_string();
        assert!(msg.contains("GMRES"), "{msg}");
    }

}
