//! Manufactured solutions: every Lagrange family and degree converges at the optimal rates
//! (L2 ≈ k+1, H1 ≈ k) in 1D, 2D and 3D, for Poisson with non-homogeneous Dirichlet data; and the
//! matrix-free levels (`partial`, `none`) keep the rates on distorted meshes, on every backend.
mod common;
use common::*;
use galerkin::mesh::CellType;
use galerkin::backend::Backend;
use galerkin::operator::norms::error_norms;
use galerkin::operator::{AssemblyLevel, Tuning};
use galerkin::physics::Diffusion;
use galerkin::problem::{scalar, LinearProblem};
use galerkin::space::FunctionSpace;
use std::sync::Arc;
use std::f64::consts::PI;

/// u = sin(πx) sin(πy) sin(πz) + x y + z (restricted to the cell dimension): −Δu = dπ²·(product).
fn manufactured(dim: usize) -> (galerkin::operator::VectorFn, galerkin::operator::VectorFn) {
    let u = move |x: [f64; 3]| {
        let s: f64 = (0..dim).map(|k| (PI * x[k]).sin()).product();
        s + x[0] * x[1] + x[2]
    };
    let f = move |x: [f64; 3]| dim as f64 * PI * PI * (0..dim).map(|k| (PI * x[k]).sin()).product::<f64>();
    (scalar(u), scalar(f))
}

fn poisson_study(cell: CellType, degree: usize, sizes: &[usize]) {
    let dim = cell.dim();
    let (u, f) = manufactured(dim);
    let sides: Vec<&str> = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"][..2 * dim].to_vec();
    let (h, e) = study(
        cell,
        degree,
        1,
        sizes,
        |space| LinearProblem::new(space, Diffusion::new(1.0)).source(f.clone()).dirichlet(sides.clone(), u.clone()),
        &u,
    );
    assert_rates(&format!("{cell} P/Q{degree}"), degree, &h, &e, 0.1);
}

#[test]
fn interval_p1_p2_p3() {
    poisson_study(CellType::Interval, 1, &[8, 16, 32, 64]);
    poisson_study(CellType::Interval, 2, &[8, 16, 32, 64]);
    poisson_study(CellType::Interval, 3, &[8, 16, 32, 64]);
}

#[test]
fn triangle_p1() {
    poisson_study(CellType::Triangle, 1, &[8, 16, 32, 64]);
}

#[test]
fn triangle_p2_p3() {
    poisson_study(CellType::Triangle, 2, &[4, 8, 16, 32]);
    poisson_study(CellType::Triangle, 3, &[4, 8, 16]);
}

#[test]
fn quadrilateral_q1_q2_q3() {
    poisson_study(CellType::Quadrilateral, 1, &[8, 16, 32, 64]);
    poisson_study(CellType::Quadrilateral, 2, &[4, 8, 16, 32]);
    poisson_study(CellType::Quadrilateral, 3, &[4, 8, 16]);
}

#[test]
fn tetrahedron_p1() {
    poisson_study(CellType::Tetrahedron, 1, &[4, 8, 16, 24]);
}

#[test]
fn tetrahedron_p2() {
    poisson_study(CellType::Tetrahedron, 2, &[2, 4, 8, 12]);
}

#[test]
fn tetrahedron_p3() {
    poisson_study(CellType::Tetrahedron, 3, &[3, 6, 9, 12]);
}

#[test]
fn hexahedron_q1() {
    poisson_study(CellType::Hexahedron, 1, &[4, 8, 16, 24]);
}

#[test]
fn hexahedron_q2_q3() {
    poisson_study(CellType::Hexahedron, 2, &[2, 4, 8, 12]);
    poisson_study(CellType::Hexahedron, 3, &[2, 4, 6, 8]);
}

/// CG + Jacobi at the `partial` and `none` levels on distorted meshes: P3 triangles, Q2
/// quadrilaterals (sum factorized), P2 tetrahedra and Q2 hexahedra, on the CPU and the GPU.
#[test]
fn matrix_free_levels_keep_the_rates() {
    let cases: [(CellType, usize, &[usize]); 4] = [
        (CellType::Triangle, 3, &[4, 8, 16]),
        (CellType::Quadrilateral, 2, &[4, 8, 16]),
        (CellType::Tetrahedron, 2, &[2, 4, 8]),
        (CellType::Hexahedron, 2, &[2, 4, 8]),
    ];
    on_backends!(|be| {
        for (cell, degree, sizes) in cases {
            let dim = cell.dim();
            let (u, f) = manufactured(dim);
            let sides: Vec<&str> = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"][..2 * dim].to_vec();
            for level in [AssemblyLevel::Partial, AssemblyLevel::None] {
                let (mut hs, mut errs) = (Vec::new(), Vec::new());
                for &n in sizes {
                    let space = Arc::new(FunctionSpace::lagrange(distorted(cell, n), degree, 1).unwrap());
                    let sys = LinearProblem::new(space.clone(), Diffusion::new(1.0))
                        .source(f.clone())
                        .dirichlet(sides.clone(), u.clone())
                        .system(be, level, Tuning::default())
                        .unwrap();
                    let sol = sys.solve(&cg(1e-13)).unwrap();
                    errs.push(error_norms(&space, &sol.u, &u).unwrap());
                    hs.push(1.0 / n as f64);
                }
                assert_rates(&format!("{} {} {cell} P/Q{degree}", be.name(), level.name()), degree, &hs, &errs, 0.15);
            }
        }
    });
}
