//! Linear elasticity: the patch test is exact to round-off on distorted meshes, and a slender
//! cantilever's tip deflection matches Timoshenko beam theory.
mod common;
use common::*;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Elasticity;
use galerkin::problem::{vector, LinearProblem};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

/// Move interior vertices by up to 15% of h (deterministic pseudo-random) and re-validate.
fn distort(mesh: &Mesh, h: f64) -> Mesh {
    let mut coords = mesh.coords.clone();
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as f64 / (1u64 << 31) as f64) - 0.5
    };
    for p in coords.iter_mut() {
        let interior = (0..mesh.dim).all(|k| p[k] > 1e-12 && p[k] < 1.0 - 1e-12);
        let d: Vec<f64> = (0..mesh.dim).map(|_| 0.3 * h * rnd()).collect();
        if interior {
            for k in 0..mesh.dim {
                p[k] += d[k];
            }
        }
    }
    Mesh::new(mesh.cell_type, coords, mesh.cells.clone(), Some(mesh.cell_tags.clone()), mesh.boundary.clone(), mesh.tag_names.clone())
        .expect("distorted mesh stays valid")
}

#[test]
fn patch_test_is_exact() {
    for (cell, degree) in [
        (CellType::Triangle, 1),
        (CellType::Quadrilateral, 1),
        (CellType::Triangle, 2),
        (CellType::Quadrilateral, 2),
        (CellType::Tetrahedron, 1),
        (CellType::Hexahedron, 1),
        (CellType::Tetrahedron, 2),
    ] {
        let dim = cell.dim();
        let n = 4;
        let mesh = Arc::new(distort(&unit_mesh(cell, n), 1.0 / n as f64));
        let space = Arc::new(FunctionSpace::lagrange(mesh, degree, dim).unwrap());
        let exact = move |x: [f64; 3]| {
            [0.1 + 0.2 * x[0] - 0.3 * x[1] + 0.05 * x[2], -0.2 + 0.1 * x[0] + 0.4 * x[1] - 0.1 * x[2], 0.3 - 0.1 * x[0] + 0.2 * x[1] + 0.15 * x[2]]
        };
        let sides: Vec<&str> = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"][..2 * dim].to_vec();
        let sol = LinearProblem::new(space.clone(), Elasticity::young_poisson(210.0, 0.3, dim).unwrap())
            .dirichlet(sides, vector(exact))
            .solve(AssemblyLevel::Full, &direct())
            .unwrap();
        let mut worst: f64 = 0.0;
        for (node, x) in space.dofmap.node_coords.iter().enumerate() {
            let e = exact(*x);
            for c in 0..dim {
                worst = worst.max((sol.u[node * dim + c] - e[c]).abs());
            }
        }
        assert!(worst < 1e-11, "{cell} degree {degree}: patch test error {worst:e}");
    }
}

/// Mean vertical (y) displacement over the nodes of the end x = l.
fn mean_end_deflection(space: &FunctionSpace, u: &[f64], l: f64) -> f64 {
    let n = space.ncomp;
    let end: Vec<usize> = (0..space.dofmap.num_nodes).filter(|&i| (space.dofmap.node_coords[i][0] - l).abs() < 1e-9).collect();
    end.iter().map(|&i| u[i * n + 1]).sum::<f64>() / end.len() as f64
}

#[test]
fn cantilever_tip_deflection_matches_beam_theory() {
    let (l, h, w, e, nu, p) = (10.0, 1.0, 1.0, 1000.0, 0.0, 1.0);
    let mesh = Arc::new(generate::box_mesh(40, 4, 4, [0.0; 3], [l, h, w], CellType::Hexahedron).unwrap());
    let space = Arc::new(FunctionSpace::lagrange(mesh, 2, 3).unwrap());
    let sol = LinearProblem::new(space.clone(), Elasticity::young_poisson(e, nu, 3).unwrap())
        .dirichlet(["xmin"], vector(|_| [0.0; 3]))
        .neumann(["xmax"], std::sync::Arc::new(move |_x, _n, t: &mut [f64]| {
            t.copy_from_slice(&[0.0, -p / (h * w), 0.0]);
        }))
        .solve(AssemblyLevel::Full, &cg(1e-10))
        .unwrap();
    let tip = -mean_end_deflection(&space, &sol.u, l);
    let theory = timoshenko(p, l, h, w, e, nu);
    let rel = (tip - theory).abs() / theory;
    eprintln!("cantilever tip {tip:.5} vs Timoshenko {theory:.5} ({:.2}%)", rel * 100.0);
    assert!(rel < 0.005, "tip deflection {tip} vs beam theory {theory}");
}

#[test]
fn plane_strain_cantilever_matches_beam_theory() {
    // 2D plane strain with ν = 0 equals plane stress: a beam of unit width.
    let (l, h, e, p) = (10.0, 1.0, 1000.0, 1.0);
    let mesh = Arc::new(generate::rectangle(80, 8, [0.0; 2], [l, h], CellType::Quadrilateral).unwrap());
    let space = Arc::new(FunctionSpace::lagrange(mesh, 2, 2).unwrap());
    let sol = LinearProblem::new(space.clone(), Elasticity::young_poisson(e, 0.0, 2).unwrap())
        .dirichlet(["xmin"], vector(|_| [0.0; 3]))
        .neumann(["xmax"], std::sync::Arc::new(move |_x, _n, t: &mut [f64]| t.copy_from_slice(&[0.0, -p / h])))
        .solve(AssemblyLevel::Full, &direct())
        .unwrap();
    let tip = -mean_end_deflection(&space, &sol.u, l);
    let theory = timoshenko(p, l, h, 1.0, e, 0.0);
    assert!((tip - theory).abs() / theory < 0.02, "2D tip {tip} vs {theory}");
}
