//! The assembly levels and solvers agree: `full` and `element` give the same operator and the same
//! solution, assembled matrices are symmetric, and direct and iterative solutions agree.
mod common;
use common::*;
use galerkin::backend::{Cpu, LinearOperator};
use galerkin::mesh::CellType;
use galerkin::operator::AssemblyLevel;
use galerkin::physics::{Diffusion, Elasticity};
use galerkin::problem::linear::SystemOperator;
use galerkin::problem::{scalar, vector, LinearProblem, SolverConfig, SolverMethod};
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
fn full_and_element_levels_apply_the_same_operator() {
    for (cell, degree) in [(CellType::Tetrahedron, 2), (CellType::Hexahedron, 1), (CellType::Quadrilateral, 3), (CellType::Triangle, 2)] {
        let p = elasticity_problem(cell, degree);
        let full = p.assemble(AssemblyLevel::Full).unwrap();
        let elem = p.assemble(AssemblyLevel::Element).unwrap();
        let n = full.ndofs();
        let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect();
        let (mut y1, mut y2) = (vec![0.0; n], vec![0.0; n]);
        let a = match &full.operator {
            SystemOperator::Full(a) => a,
            _ => unreachable!(),
        };
        assert!(a.asymmetry() < 1e-13, "{cell}: assembled matrix not symmetric ({:e})", a.asymmetry());
        a.apply(&Cpu, &x, &mut y1).unwrap();
        match &elem.operator {
            SystemOperator::Element(op) => op.apply(&Cpu, &x, &mut y2).unwrap(),
            _ => unreachable!(),
        }
        let scale = y1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = y1.iter().zip(&y2).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff < 1e-12 * scale, "{cell}: levels differ by {diff:e}");
        let rdiff = full.rhs.iter().zip(&elem.rhs).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(rdiff < 1e-12 * full.rhs.iter().fold(0.0f64, |m, v| m.max(v.abs())), "{cell}: right-hand sides differ");
        let (d1, d2) = (full.diagonal(), elem.diagonal());
        assert!(d1.iter().zip(&d2).all(|(a, b)| (a - b).abs() < 1e-12 * scale), "{cell}: diagonals differ");
    }
}

#[test]
fn all_solvers_agree_with_the_direct_solution() {
    let p = elasticity_problem(CellType::Hexahedron, 2);
    let reference = p.solve(AssemblyLevel::Full, &direct()).unwrap().u;
    let norm = reference.iter().map(|v| v * v).sum::<f64>().sqrt();
    let opts = KrylovOptions { rtol: 1e-11, max_iter: 5000, restart: 100, ..Default::default() };
    for (level, method, pc) in [
        (AssemblyLevel::Full, SolverMethod::Cg, PreconditionerKind::Jacobi),
        (AssemblyLevel::Full, SolverMethod::Cg, PreconditionerKind::BlockJacobi),
        (AssemblyLevel::Full, SolverMethod::Cg, PreconditionerKind::Ssor),
        (AssemblyLevel::Full, SolverMethod::Gmres, PreconditionerKind::Ilu0),
        (AssemblyLevel::Full, SolverMethod::Bicgstab, PreconditionerKind::Jacobi),
        (AssemblyLevel::Element, SolverMethod::Cg, PreconditionerKind::Jacobi),
        (AssemblyLevel::Element, SolverMethod::Cg, PreconditionerKind::BlockJacobi),
        (AssemblyLevel::Element, SolverMethod::Gmres, PreconditionerKind::None),
        (AssemblyLevel::Full, SolverMethod::Cg, PreconditionerKind::Chebyshev),
        (AssemblyLevel::Element, SolverMethod::Cg, PreconditionerKind::Chebyshev),
    ] {
        let cfg = SolverConfig { method, preconditioner: pc, options: opts.clone() };
        let sol = p.solve(level, &cfg).unwrap_or_else(|e| panic!("{level:?} {method:?} {pc:?}: {e}"));
        let err = sol.u.iter().zip(&reference).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt() / norm;
        assert!(err < 1e-8, "{level:?} {method:?} {pc:?}: relative difference {err:e}");
    }
}

#[test]
fn element_level_needs_no_matrix_but_rejects_matrix_preconditioners() {
    let space = Arc::new(FunctionSpace::lagrange(unit_mesh(CellType::Triangle, 4), 1, 1).unwrap());
    let p = LinearProblem::new(space, Diffusion::new(1.0)).source(scalar(|_| 1.0)).dirichlet(["xmin"], scalar(|_| 0.0));
    let cfg = SolverConfig { method: SolverMethod::Cg, preconditioner: PreconditionerKind::Ilu0, options: KrylovOptions::default() };
    let err = p.solve(AssemblyLevel::Element, &cfg).err().unwrap();
    assert!(err.to_string().contains("full"), "{err}");
}
