//! GPU assembly checked against the CPU assembly: every element (P1–P3 on intervals, triangles and
//! tetrahedra, Q1–Q3 on quadrilaterals and hexahedra, on distorted meshes) with every physics that
//! has a GPU form and coefficients constant, per region and as functions; every scatter (atomic,
//! colored, rows, patch); the element level; Dirichlet elimination with Robin and Neumann terms; and solves.
//! Skips without a GPU unless GALERKIN_REQUIRE_GPU=1.
mod common;
use common::*;
use galerkin::backend::cuda::{self, CudaBackend, Scatter};
use galerkin::backend::{Backend, LinearOperator};
use galerkin::linalg::CsrMatrix;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::{AssemblyLevel, Coloring, ElementIntegrator, ElementMatrices};
use galerkin::physics::{Coefficient, Diffusion, Elasticity, Mass, PointwisePhysics, Sum};
use galerkin::problem::linear::SystemOperator;
use galerkin::problem::{flux, scalar, LinearProblem};
use galerkin::solver::precond::PreconditionerKind;
use galerkin::space::FunctionSpace;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A mesh of `cell` with interior vertices moved off the grid, so tensor cells are not
/// parallelograms and the non-affine Jacobian path is exercised.
fn distorted(cell: CellType, n: usize) -> Arc<Mesh> {
    let mut m: Mesh = match cell.dim() {
        1 => generate::interval(n, 0.0, 1.0),
        2 => generate::rectangle(n, n, [0.0; 2], [1.0; 2], cell),
        _ => generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], cell),
    }
    .unwrap();
    let h = 1.0 / n as f64;
    for (i, x) in m.coords.iter_mut().enumerate() {
        let interior = (0..m.dim).all(|k| x[k] > 1e-9 && x[k] < 1.0 - 1e-9);
        if interior {
            for (k, xk) in x.iter_mut().enumerate().take(m.dim) {
                *xk += 0.2 * h * (((i * 7 + k * 3) % 5) as f64 / 4.0 - 0.5);
            }
        }
    }
    Arc::new(m)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale
}

/// The physics cases for a space of `ncomp` components in `dim` dimensions.
fn physics_cases(dim: usize, ncomp: usize) -> Vec<(&'static str, Box<dyn PointwisePhysics>)> {
    let kappa_fn = Coefficient::function(|x| 1.0 + x[0] * x[0] + 0.5 * x[1]);
    let region: Coefficient = Coefficient::PerRegion(BTreeMap::from([(1, 2.5)]));
    if ncomp == 1 {
        vec![
            ("diffusion κ=const", Box::new(Diffusion::new(1.7))),
            ("diffusion κ(region)", Box::new(Diffusion::new(region))),
            ("diffusion κ(x) + mass", Box::new(Sum(vec![Box::new(Diffusion::new(kappa_fn.clone())), Box::new(Mass::new(0.3, 1))]))),
            ("mass ρ(x)", Box::new(Mass::new(kappa_fn, 1))),
        ]
    } else {
        vec![
            ("elasticity", Box::new(Elasticity::lame(1.3, 0.8, dim))),
            (
                "elasticity μ(x) + mass",
                Box::new(Sum(vec![
                    Box::new(Elasticity::lame(1.3, Coefficient::function(|x| 1.0 + x[1]), dim)),
                    Box::new(Mass::new(0.5, dim)),
                ])),
            ),
        ]
    }
}

fn cpu_matrix(problem: &LinearProblem) -> CsrMatrix {
    match problem.assemble(AssemblyLevel::Full).unwrap().operator {
        SystemOperator::Full(a) => a,
        _ => unreachable!(),
    }
}

fn check_space(be: &CudaBackend, cell: CellType, degree: usize, ncomp: usize) {
    let mesh = distorted(cell, if cell.dim() == 3 { 2 } else { 3 });
    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, ncomp).unwrap());
    for (name, physics) in physics_cases(mesh.dim, ncomp) {
        let label = format!("{cell:?} degree {degree} {name}");
        let problem = LinearProblem { space: space.clone(), physics, source: None, bcs: Vec::new(), quadrature_degree: None };
        let cpu = cpu_matrix(&problem);
        // Row assembly exists on the reference-tensor path only (simplices, per-cell coefficients).
        let reftensor = cell.is_simplex() && !name.contains("(x)");
        // Patch assembly needs the upper triangle of a cell's matrix to fit in 48 KiB of shared memory.
        let fits = cuda::patches::patch_cells(space.dofmap.nodes_per_cell, ncomp).is_some();
        for scatter in [Scatter::Atomic, Scatter::Colored, Scatter::Rows, Scatter::Patch] {
            let sys = match problem.assemble_cuda(be, AssemblyLevel::Full, scatter) {
                Err(e) if (scatter == Scatter::Rows && !reftensor) || (scatter == Scatter::Patch && !fits) => {
                    assert!(e.to_string().contains("atomic"), "{label}: unhelpful error {e}");
                    continue;
                }
                r => r.unwrap_or_else(|e| panic!("{label} ({}): {e}", scatter.name())),
            };
            let gpu = sys.matrix_to_host().unwrap().unwrap();
            assert_eq!(gpu.col_idx, cpu.col_idx, "{label}: pattern");
            let d = rel_diff(&cpu.values, &gpu.values);
            assert!(d < 1e-12, "{label} ({}): GPU and CPU matrices differ by {d:e} (relative to the largest entry)", scatter.name());
        }
        // Element level: the stored matrices and the operator.
        let integ = ElementIntegrator::new(&space, problem.physics.as_ref(), None).unwrap();
        let host = ElementMatrices::assemble(&integ, Arc::new(Coloring::greedy(&mesh))).unwrap();
        let asm = cuda::DeviceAssembler::new(be, &integ).unwrap();
        let dev = asm.element_matrices(be).unwrap();
        let d = rel_diff(&host.matrices, &dev.to_host(be).unwrap());
        assert!(d < 1e-12, "{label}: GPU element matrices differ by {d:e}");
        let x: Vec<f64> = (0..space.ndofs()).map(|i| ((i * 37 % 101) as f64 / 50.0) - 1.0).collect();
        let mut y_cpu = vec![0.0; x.len()];
        LinearOperator::apply(&host, &galerkin::backend::Cpu, &x, &mut y_cpu).unwrap();
        let xd = be.from_host(&x).unwrap();
        let mut yd = be.zeros(x.len()).unwrap();
        dev.apply(be, &xd, &mut yd).unwrap();
        let d = rel_diff(&y_cpu, &be.to_host(&yd).unwrap());
        assert!(d < 1e-12, "{label}: GPU element-level apply differs by {d:e}");
        let d = rel_diff(&host.diagonal(), &dev.diagonal(be).unwrap());
        assert!(d < 1e-12, "{label}: GPU element-level diagonal differs by {d:e}");
    }
}

#[test]
fn scalar_matrices_match_the_cpu_for_every_element_and_degree() {
    let Some(be) = cuda::test_gpu() else { return };
    for cell in CellType::ALL {
        for degree in 1..=3 {
            check_space(&be, cell, degree, 1);
        }
    }
}

#[test]
fn elasticity_matrices_match_the_cpu_in_2d_and_3d() {
    let Some(be) = cuda::test_gpu() else { return };
    for cell in CellType::ALL.into_iter().filter(|c| c.dim() > 1) {
        for degree in 1..=3 {
            check_space(&be, cell, degree, cell.dim());
        }
    }
}

/// Patch assembly across many patches (Hilbert-ordered cells; values between patches added
/// atomically, the others stored) matches the CPU: scalar and vector, reference-tensor and
/// quadrature (hexahedra) variants.
#[test]
fn patch_scatter_over_many_patches_matches_the_cpu() {
    let Some(be) = cuda::test_gpu() else { return };
    let cases = [
        (CellType::Tetrahedron, 2, 1, 6),
        (CellType::Tetrahedron, 1, 3, 8),
        (CellType::Triangle, 2, 2, 16),
        (CellType::Triangle, 1, 1, 40),
        (CellType::Hexahedron, 1, 1, 12),
    ];
    for (cell, degree, ncomp, n) in cases {
        let mesh = distorted(cell, n);
        let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, ncomp).unwrap());
        let per_patch = cuda::patches::patch_cells(space.dofmap.nodes_per_cell, ncomp).unwrap();
        assert!(mesh.num_cells() > 3 * per_patch, "{cell:?}: {} cells make too few patches of {per_patch}", mesh.num_cells());
        let (name, physics) = physics_cases(mesh.dim, ncomp).swap_remove(0);
        let problem = LinearProblem { space, physics, source: None, bcs: Vec::new(), quadrature_degree: None };
        let cpu = cpu_matrix(&problem);
        let gpu = problem.assemble_cuda(&be, AssemblyLevel::Full, Scatter::Patch).unwrap().matrix_to_host().unwrap().unwrap();
        let d = rel_diff(&cpu.values, &gpu.values);
        eprintln!("{cell:?} P{degree} {name}: {} patches, difference {d:.1e}", mesh.num_cells().div_ceil(per_patch));
        assert!(d < 1e-12, "{cell:?} P{degree} {name}: patch assembly differs from the CPU by {d:e}");
    }
}

/// Poisson with Dirichlet, Neumann and Robin sides and a variable κ.
fn mixed_problem(cell: CellType, degree: usize, n: usize) -> LinearProblem {
    let space = Arc::new(FunctionSpace::lagrange(distorted(cell, n), degree, 1).unwrap());
    LinearProblem::new(space, Diffusion::new(Coefficient::function(|x| 1.0 + x[0])))
        .source(scalar(|x| 1.0 + x[1]))
        .dirichlet(["xmin", "ymin"], scalar(|x| x[1] * x[1] + x[0]))
        .neumann(["xmax"], flux(|x, _| x[1]))
        .robin(["ymax"], 2.0, flux(|_, _| 1.0))
}

#[test]
fn dirichlet_robin_and_neumann_match_the_cpu_system() {
    let Some(be) = cuda::test_gpu() else { return };
    for (cell, degree) in [(CellType::Triangle, 2), (CellType::Quadrilateral, 3), (CellType::Tetrahedron, 1), (CellType::Hexahedron, 2)] {
        let p = mixed_problem(cell, degree, 4);
        let cpu = p.assemble(AssemblyLevel::Full).unwrap();
        let SystemOperator::Full(a) = &cpu.operator else { unreachable!() };
        for scatter in [Scatter::Atomic, Scatter::Colored, Scatter::Patch] {
            let gpu = p.assemble_cuda(&be, AssemblyLevel::Full, scatter).unwrap();
            let m = gpu.matrix_to_host().unwrap().unwrap();
            let dm = rel_diff(&a.values, &m.values);
            let db = rel_diff(&cpu.rhs, &gpu.rhs_to_host().unwrap());
            eprintln!("{cell:?} P{degree} {}: matrix {dm:.1e}, rhs {db:.1e}", scatter.name());
            assert!(dm < 1e-12 && db < 1e-12, "{cell:?} P{degree}: eliminated system differs (matrix {dm:e}, rhs {db:e})");
        }
    }
}

#[test]
fn gpu_assembled_solves_match_the_cpu_with_every_preconditioner() {
    let Some(be) = cuda::test_gpu() else { return };
    let p = mixed_problem(CellType::Tetrahedron, 2, 4);
    let reference = p.assemble(AssemblyLevel::Full).unwrap().solve(&direct()).unwrap().u;
    for level in [AssemblyLevel::Full, AssemblyLevel::Element] {
        let sys = p.assemble_cuda(&be, level, Scatter::Atomic).unwrap();
        for pc in [PreconditionerKind::None, PreconditionerKind::Jacobi, PreconditionerKind::Chebyshev, PreconditionerKind::BlockJacobi] {
            let mut config = cg(1e-11);
            config.preconditioner = pc;
            match sys.solve(&config) {
                Ok(sol) => {
                    let d = rel_diff(&reference, &sol.u);
                    eprintln!("{level:?} {pc:?}: {} iterations, difference {d:.1e}", sol.stats.iterations);
                    assert!(d < 1e-8, "{level:?} {pc:?}: GPU-assembled solution differs by {d:e}");
                }
                Err(e) => {
                    // Block Jacobi needs the assembled matrix; everything else must work.
                    assert!(level == AssemblyLevel::Element && pc == PreconditionerKind::BlockJacobi, "{level:?} {pc:?}: {e}");
                    assert!(e.to_string().contains("full"), "unhelpful error: {e}");
                }
            }
        }
    }
}

#[test]
fn gpu_assembly_keeps_the_convergence_rates() {
    let Some(be) = cuda::test_gpu() else { return };
    use galerkin::operator::norms::error_norms;
    use std::f64::consts::PI;
    let u = |x: [f64; 3]| (PI * x[0]).sin() * (PI * x[1]).sin() + x[0] * x[1];
    let f = |x: [f64; 3]| 2.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).sin();
    for (cell, degree) in [(CellType::Triangle, 3), (CellType::Quadrilateral, 2)] {
        let (mut hs, mut errs) = (Vec::new(), Vec::new());
        for n in [4, 8, 16] {
            let space = Arc::new(FunctionSpace::lagrange(distorted(cell, n), degree, 1).unwrap());
            let sys = LinearProblem::new(space.clone(), Diffusion::new(1.0))
                .source(scalar(f))
                .dirichlet(["xmin", "xmax", "ymin", "ymax"], scalar(u))
                .assemble_cuda(&be, AssemblyLevel::Full, Scatter::Atomic)
                .unwrap();
            let sol = sys.solve(&cg(1e-13)).unwrap();
            errs.push(error_norms(&space, &sol.u, &scalar(u)).unwrap());
            hs.push(1.0 / n as f64);
        }
        assert_rates(&format!("GPU-assembled {cell:?} degree {degree}"), degree, &hs, &errs, 0.15);
    }
}
