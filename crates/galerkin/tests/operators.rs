//! Solvers on every level and backend: assembled matrices are symmetric, every Krylov method and
//! preconditioner agrees with the direct solution at every assembly level on the CPU and the GPU,
//! and what cannot run somewhere (SSOR, ILU(0) and direct solves without a matrix or off the CPU)
//! says why. Written once over the backend.
mod common;
use common::*;
use galerkin::backend::Backend;
use galerkin::mesh::CellType;
use galerkin::operator::{AssemblyLevel, Tuning};
use galerkin::physics::Elasticity;
use galerkin::problem::{vector, LinearProblem, SolverConfig, SolverMethod};
use galerkin::solver::precond::PreconditionerKind;
use galerkin::solver::KrylovOptions;
use galerkin::space::FunctionSpace;
use std::sync::Arc;

fn elasticity_problem(cell: CellType, degree: usize) -> LinearProblem {
    let dim = cell.dim();
    let space = Arc::new(FunctionSpace::lagrange(unit_mesh(cell, 3), degree, dim).unwrap());
    LinearProblem::new(space, Elasticity::young_poisson(100.0, 0.25, dim).unwrap())
        .source(vector(|x| [x[1], -x[0], 1.0]))
        .dirichlet(["xmin"], vector(|x| [0.01 * x[1], 0.0, 0.02]))
}

#[test]
fn assembled_matrices_are_symmetric() {
    for (cell, degree) in [(CellType::Tetrahedron, 2), (CellType::Hexahedron, 1), (CellType::Quadrilateral, 3), (CellType::Triangle, 2)] {
        let a = elasticity_problem(cell, degree).assemble(AssemblyLevel::Full).unwrap().matrix_to_host().unwrap().unwrap();
        assert!(a.asymmetry() < 1e-13, "{cell}: assembled matrix not symmetric ({:e})", a.asymmetry());
    }
}

#[test]
fn every_solver_and_preconditioner_agrees_on_every_level_and_backend() {
    let p = elasticity_problem(CellType::Hexahedron, 2);
    let reference = p.solve(AssemblyLevel::Full, &direct()).unwrap().u;
    let norm = reference.iter().map(|v| v * v).sum::<f64>().sqrt();
    let opts = KrylovOptions { rtol: 1e-11, max_iter: 5000, restart: 100, ..Default::default() };
    let cases = [
        (SolverMethod::Cg, PreconditionerKind::None),
        (SolverMethod::Cg, PreconditionerKind::Jacobi),
        (SolverMethod::Cg, PreconditionerKind::BlockJacobi),
        (SolverMethod::Cg, PreconditionerKind::Chebyshev),
        (SolverMethod::Cg, PreconditionerKind::Ssor),
        (SolverMethod::Gmres, PreconditionerKind::Ilu0),
        (SolverMethod::Bicgstab, PreconditionerKind::Jacobi),
        (SolverMethod::Gmres, PreconditionerKind::BlockJacobi),
        (SolverMethod::Direct, PreconditionerKind::None),
    ];
    on_backends!(|be| {
        for level in AssemblyLevel::ALL {
            let sys = p.system(be, level, Tuning::default()).unwrap();
            for (method, pc) in cases {
                let what = format!("{} {} {method:?} {pc:?}", be.name(), level.name());
                let needs_matrix = method == SolverMethod::Direct || matches!(pc, PreconditionerKind::Ssor | PreconditionerKind::Ilu0);
                let cfg = SolverConfig { method, preconditioner: pc, options: opts.clone() };
                match sys.solve(&cfg) {
                    Ok(sol) => {
                        let err = sol.u.iter().zip(&reference).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt() / norm;
                        assert!(err < 1e-8, "{what}: relative difference {err:e}");
                        assert!(!needs_matrix || (level == AssemblyLevel::Full && be.name() == "cpu"), "{what}: should have been refused");
                    }
                    Err(e) => {
                        assert!(needs_matrix, "{what}: {e}");
                        let msg = e.to_string();
                        assert!(msg.contains("full") || msg.contains("CPU"), "{what}: unhelpful error {msg}");
                    }
                }
            }
        }
    });
}
