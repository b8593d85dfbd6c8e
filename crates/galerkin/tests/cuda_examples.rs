//! Every example problem and a convergence study solved on the GPU and checked against the CPU
//! backend: the GPU solution satisfies the CPU-assembled system to the solver tolerance, agrees
//! with the CPU solution, and converges at the same rates. Skips without a GPU unless
//! GALERKIN_REQUIRE_GPU=1.
mod common;
use common::*;
use galerkin::backend::cuda;
use galerkin::mesh::CellType;
use galerkin::operator::norms::error_norms;
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Diffusion;
use galerkin::problem::linear::SystemOperator;
use galerkin::problem::run::setup_file;
use galerkin::problem::{scalar, LinearProblem};
use galerkin::space::FunctionSpace;
use std::f64::consts::PI;
use std::path::Path;
use std::sync::Arc;

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

#[test]
fn examples_agree_between_cpu_and_gpu() {
    let Some(be) = cuda::test_gpu() else { return };
    // From the repository root (where the GPU bundle runs) or from the crate's source folder.
    let dir = if Path::new("examples/poisson-2d.toml").exists() {
        Path::new("examples").to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    };
    for name in ["poisson-2d.toml", "poisson-3d.toml", "elasticity-3d.toml", "plate-with-hole.toml"] {
        let (_, s) = setup_file(&dir.join(name), false).unwrap();
        let system = s.problem.assemble(AssemblyLevel::Full).unwrap();
        let cpu = system.solve(&s.config).unwrap();
        let gpu = system.solve_cuda(&be, &s.config).unwrap();
        let a = match &system.operator {
            SystemOperator::Full(a) => a,
            _ => unreachable!(),
        };
        // A GPU solution's residual in the CPU system and its distance to the CPU solution.
        let rtol = s.config.options.rtol;
        let check = |what: &str, u: &[f64], iterations: usize| {
            let mut r = vec![0.0; a.nrows];
            a.spmv(u, &mut r);
            let res = norm(&r.iter().zip(&system.rhs).map(|(x, b)| b - x).collect::<Vec<_>>()) / norm(&system.rhs);
            let diff = norm(&cpu.u.iter().zip(u).map(|(x, y)| x - y).collect::<Vec<_>>()) / norm(&cpu.u);
            eprintln!("{name} {what}: residual in the CPU system {res:.2e}, |u_gpu - u_cpu|/|u_cpu| {diff:.2e}, iterations cpu {} gpu {iterations}", cpu.stats.iterations);
            assert!(res <= 10.0 * rtol, "{name} {what}: GPU relative residual {res:e} > 10 rtol");
            assert!(diff < 1e-6, "{name} {what}: GPU and CPU solutions differ by {diff:e}");
        };
        check("CPU-assembled", &gpu.u, gpu.stats.iterations);
        // The whole pipeline on the GPU: assembled there too, at both assembly levels.
        for level in [AssemblyLevel::Full, AssemblyLevel::Element] {
            let mut config = s.config.clone();
            if level == AssemblyLevel::Element && config.preconditioner == galerkin::solver::precond::PreconditionerKind::BlockJacobi {
                config.preconditioner = galerkin::solver::precond::PreconditionerKind::Jacobi;
            }
            let dev = s.problem.assemble_cuda(&be, level, cuda::Scatter::Atomic).unwrap();
            let sol = dev.solve(&config).unwrap();
            check(&format!("GPU-assembled {level:?}"), &sol.u, sol.stats.iterations);
        }
    }
}

#[test]
fn convergence_rates_are_unchanged_on_the_gpu() {
    let Some(be) = cuda::test_gpu() else { return };
    let u = |x: [f64; 3]| (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin() + x[0] * x[1];
    let f = |x: [f64; 3]| 3.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin();
    let sides = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];
    let (mut hs, mut errs) = (Vec::new(), Vec::new());
    for n in [4, 8, 16] {
        let space = Arc::new(FunctionSpace::lagrange(unit_mesh(CellType::Tetrahedron, n), 2, 1).unwrap());
        let system = LinearProblem::new(space.clone(), Diffusion::new(1.0))
            .source(scalar(f))
            .dirichlet(sides, scalar(u))
            .assemble(AssemblyLevel::Full)
            .unwrap();
        let sol = system.solve_cuda(&be, &cg(1e-12)).unwrap();
        errs.push(error_norms(&space, &sol.u, &scalar(u)).unwrap());
        hs.push(1.0 / n as f64);
    }
    assert_rates("GPU tet P2", 2, &hs, &errs, 0.1);
}
