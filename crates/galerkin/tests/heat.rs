//! Transient heat: the separable mode sin(πx)sin(πy)sin(πz) decays like exp(−3π²αt); backward
//! Euler converges at first order in Δt, Crank–Nicolson at second; every assembly level agrees.
mod common;
use common::*;
use galerkin::backend::{Backend, Cpu};
use galerkin::mesh::CellType;
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Coefficient;
use galerkin::problem::heat::{HeatSetup, HeatStepper};
use galerkin::space::FunctionSpace;
use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::sync::Arc;

const FACES: [&str; 6] = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];

fn setup(rhoc: Coefficient, k: Coefficient, dt: f64, theta: f64) -> HeatSetup {
    HeatSetup {
        rhoc,
        k,
        zero_dirichlet: FACES.iter().map(|&f| f.into()).collect(),
        dt,
        theta,
    }
}

fn mode(space: &FunctionSpace) -> Vec<f64> {
    space.interpolate(|x, v| v[0] = (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin())
}

/// Temperature after `t_end` with `steps` steps (α = k/ρc = 1).
fn solve(
    space: &Arc<FunctionSpace>,
    theta: f64,
    t_end: f64,
    steps: usize,
    level: AssemblyLevel,
    rhoc: Coefficient,
    k: Coefficient,
) -> Vec<f64> {
    let s = HeatStepper::new(
        &Cpu,
        space.clone(),
        &setup(rhoc, k, t_end / steps as f64, theta),
        level,
    )
    .unwrap();
    let mut t = Cpu.from_host(&mode(space)).unwrap();
    let its = s.run(&mut t, steps).unwrap();
    assert!(
        its.iter().all(|&i| i > 0),
        "every step must iterate: {its:?}"
    );
    Cpu.to_host(&t).unwrap()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn time_order_of_backward_euler_and_crank_nicolson() {
    let space =
        Arc::new(FunctionSpace::lagrange(unit_mesh(CellType::Tetrahedron, 4), 2, 1).unwrap());
    let centre = space
        .dofmap
        .node_coords
        .iter()
        .position(|x| x.iter().all(|c| (c - 0.5).abs() < 1e-12))
        .unwrap();
    let t_end = 0.05;
    for (theta, order) in [(1.0, 1.0), (0.5, 2.0)] {
        let u: Vec<Vec<f64>> = [8, 16, 32, 64]
            .iter()
            .map(|&n| {
                solve(
                    &space,
                    theta,
                    t_end,
                    n,
                    AssemblyLevel::Partial,
                    1.0.into(),
                    1.0.into(),
                )
            })
            .collect();
        // Successive differences remove the (Δt-independent) space error: their ratio is 2^order.
        let d: Vec<f64> = u.windows(2).map(|w| max_diff(&w[0], &w[1])).collect();
        let rate = (d[1] / d[2]).log2();
        println!("theta {theta}: differences {d:?}, rate {rate:.3}");
        assert!(
            (rate - order).abs() < 0.15,
            "theta {theta}: rate {rate} expected {order}"
        );
        let exact = (-3.0 * PI * PI * t_end).exp();
        let err = (u[3][centre] - exact).abs() / exact;
        println!(
            "theta {theta}: centre {} exact {exact} relative error {err:.2e}",
            u[3][centre]
        );
        assert!(
            err < if theta == 1.0 { 0.05 } else { 0.01 },
            "theta {theta}: amplitude error {err}"
        );
    }
}

#[test]
fn levels_agree_and_two_equal_regions_equal_uniform() {
    let space =
        Arc::new(FunctionSpace::lagrange(unit_mesh(CellType::Tetrahedron, 3), 2, 1).unwrap());
    let uniform = solve(
        &space,
        0.5,
        0.02,
        4,
        AssemblyLevel::Full,
        2.0.into(),
        3.0.into(),
    );
    let scale = uniform.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
    assert!(scale > 0.1, "the mode must not vanish: {scale}");
    for level in AssemblyLevel::ALL {
        let u = solve(&space, 0.5, 0.02, 4, level, 2.0.into(), 3.0.into());
        assert!(
            max_diff(&u, &uniform) < 1e-8 * scale,
            "{level:?} differs by {}",
            max_diff(&u, &uniform)
        );
    }
    // The same material as two regions (alternate cells tagged 1 and 2) with equal values.
    let mut mesh = (*unit_mesh(CellType::Tetrahedron, 3)).clone();
    mesh.cell_tags
        .iter_mut()
        .enumerate()
        .for_each(|(c, t)| *t = 1 + (c % 2) as i32);
    let split = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 2, 1).unwrap());
    let region = |v: f64| Coefficient::PerRegion(BTreeMap::from([(1, v), (2, v)]));
    let two = solve(
        &split,
        0.5,
        0.02,
        4,
        AssemblyLevel::Partial,
        region(2.0),
        region(3.0),
    );
    assert!(max_diff(&two, &uniform) < 1e-8 * scale);
    // A different capacity must change the answer (the comparison above can fail).
    let other = solve(
        &space,
        0.5,
        0.02,
        4,
        AssemblyLevel::Partial,
        2.2.into(),
        3.0.into(),
    );
    assert!(max_diff(&other, &uniform) > 1e-4 * scale);
}
