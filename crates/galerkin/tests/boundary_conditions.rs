//! Neumann, Robin and coefficient handling: manufactured solutions with mixed conditions and a
//! variable coefficient converge optimally; a two-material bar matches its exact solution.
mod common;
use common::*;
use galerkin::mesh::CellType;
use galerkin::operator::AssemblyLevel;
use galerkin::physics::{Coefficient, Diffusion};
use galerkin::problem::{flux, scalar, LinearProblem};
use galerkin::space::FunctionSpace;
use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::sync::Arc;

#[test]
fn mixed_dirichlet_neumann_robin_with_variable_kappa() {
    // u = sin(πx) sin(πy) + x, κ = 1 + x²; Neumann on xmax, Robin (α = 2) on ymax.
    let u = |x: [f64; 3]| (PI * x[0]).sin() * (PI * x[1]).sin() + x[0];
    let grad = |x: [f64; 3]| {
        [PI * (PI * x[0]).cos() * (PI * x[1]).sin() + 1.0, PI * (PI * x[0]).sin() * (PI * x[1]).cos()]
    };
    let kappa = |x: [f64; 3]| 1.0 + x[0] * x[0];
    let f = move |x: [f64; 3]| {
        let lap = -2.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).sin();
        -(kappa(x) * lap + 2.0 * x[0] * grad(x)[0])
    };
    let alpha = 2.0;
    for degree in [1, 2] {
        let sizes: &[usize] = if degree == 1 { &[8, 16, 32] } else { &[4, 8, 16] };
        let (h, e) = study(
            CellType::Triangle,
            degree,
            1,
            sizes,
            |space| {
                LinearProblem::new(space, Diffusion::new(Coefficient::function(kappa)))
                    .source(scalar(f))
                    .dirichlet(["xmin", "ymin"], scalar(u))
                    .neumann(["xmax"], flux(move |x, n| kappa(x) * (grad(x)[0] * n[0] + grad(x)[1] * n[1])))
                    .robin(["ymax"], alpha, flux(move |x, n| kappa(x) * (grad(x)[0] * n[0] + grad(x)[1] * n[1]) + alpha * u(x)))
            },
            &scalar(u),
        );
        assert_rates(&format!("mixed BCs P{degree}"), degree, &h, &e, 0.1);
    }
}

#[test]
fn pure_neumann_on_hexes_with_reaction() {
    // −Δu + u = f with natural conditions everywhere: u = cos(πx) cos(πy) cos(πz) (zero flux).
    use galerkin::physics::{Mass, Sum};
    let u = |x: [f64; 3]| (PI * x[0]).cos() * (PI * x[1]).cos() * (PI * x[2]).cos();
    let f = move |x: [f64; 3]| (3.0 * PI * PI + 1.0) * u(x);
    let (h, e) = study(
        CellType::Hexahedron,
        2,
        1,
        &[2, 4, 8],
        |space| {
            LinearProblem::new(space, Sum(vec![Box::new(Diffusion::new(1.0)), Box::new(Mass::new(1.0, 1))])).source(scalar(f))
        },
        &scalar(u),
    );
    assert_rates("reaction-diffusion Q2", 2, &h, &e, 0.15);
}

#[test]
fn two_material_bar_is_nodally_exact() {
    // −(κu')' = 0 on [0,1], κ = 1 left of 0.5 and 10 right; u(0) = 0, u(1) = 1.
    let mesh = unit_mesh(CellType::Interval, 10);
    let mut m = (*mesh).clone();
    for c in 0..m.num_cells() {
        let x = 0.5 * (m.coords[m.cell(c)[0]][0] + m.coords[m.cell(c)[1]][0]);
        m.cell_tags[c] = if x < 0.5 { 1 } else { 2 };
    }
    let space = Arc::new(FunctionSpace::lagrange(Arc::new(m), 1, 1).unwrap());
    let kappa = Coefficient::PerRegion(BTreeMap::from([(1, 1.0), (2, 10.0)]));
    let sol = LinearProblem::new(space.clone(), Diffusion::new(kappa))
        .dirichlet(["xmin"], scalar(|_| 0.0))
        .dirichlet(["xmax"], scalar(|_| 1.0))
        .solve(AssemblyLevel::Full, &direct())
        .unwrap();
    let q = 1.0 / 0.55; // constant flux
    for (node, x) in space.dofmap.node_coords.iter().enumerate() {
        let exact = if x[0] <= 0.5 { q * x[0] } else { q * 0.5 + q * (x[0] - 0.5) / 10.0 };
        assert!((sol.u[node] - exact).abs() < 1e-12, "node at {}: {} vs {}", x[0], sol.u[node], exact);
    }
}

#[test]
fn missing_region_value_is_an_error() {
    let space = Arc::new(FunctionSpace::lagrange(unit_mesh(CellType::Triangle, 2), 1, 1).unwrap());
    let kappa = Coefficient::PerRegion(BTreeMap::from([(7, 1.0)]));
    let err = LinearProblem::new(space, Diffusion::new(kappa)).assemble(AssemblyLevel::Full).err().unwrap();
    assert!(err.to_string().contains("region 1"), "{err}");
}
