//! What the plane-strain and plane-stress tests share: the laws, the Jacobian-against-central-
//! differences sweep over the 2D elements, and the sagging strip whose small-load solution is linear
//! elasticity.
use galerkin::backend::Cpu;
use galerkin::hyperelastic::element::frame_from_fibre_2d;
use galerkin::hyperelastic::law::Law;
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use galerkin::hyperelastic::{CpuHyper, HyperElement};
use galerkin::mesh::{generate::rectangle, CellType};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

pub fn laws() -> [Law; 3] {
    [
        Law::Svk { lambda: 1.3, mu: 0.7 },
        Law::NeoHookean { lambda: 2.1, mu: 0.9 },
        Law::Usyk { c: 0.876, bf: 18.48, bt: 3.58, bfs: 1.627, kappa: 50.0 },
    ]
}

/// K = central differences of R, column by column, relative 1e-6, for each law on P1/P2 triangles
/// and Q1/Q2 quadrilaterals (plane stress where `stress`, else plane strain).
pub fn jacobian_equals_finite_differences(stress: bool) {
    for law in laws() {
        for (cell, degree) in [(CellType::Triangle, 1), (CellType::Triangle, 2), (CellType::Quadrilateral, 1), (CellType::Quadrilateral, 2)] {
            let mesh = Arc::new(rectangle(2, 2, [0.0; 2], [1.0, 0.8], cell).unwrap());
            let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 2).unwrap());
            let frames = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre_2d([1.0, 0.3 * (c % 3) as f64 - 0.2]).unwrap()).collect() } else { Vec::new() };
            let asm = CpuHyper::new(HyperElement::new(space.clone(), law, frames).unwrap().plane_stress(stress).unwrap()).unwrap();
            let u = space.interpolate(|x, v| {
                v[0] = 0.08 * (2.0 * x[1]).sin() + 0.05 * x[0] * x[1];
                v[1] = -0.06 * x[0] * x[1] + 0.04 * (3.0 * x[0]).cos();
            });
            let super::FdJacobian { error: worst, scale, residual: r } = super::fd_jacobian(&asm, &u);
            assert!(scale > 1e-3 && r.iter().any(|v| v.abs() > 1e-6), "{law:?} {cell:?}: trivial system");
            assert!(worst < 1e-6, "{law:?} {cell:?} P{degree} (stress {stress}): |K − FD| / max|K| = {worst:.2e}");
        }
    }
}

/// A strip 4 × 1 clamped at x = 0 sagging under a body force −`load` in y, with Lamé's λ = 10, μ = 4
/// and a tight Newton (one load step, the direct solver).
pub fn strip(law: &str, cell: &str, degree: usize, load: f64, plane: &str) -> String {
    format!(
        r#"
[mesh]
generator = "rectangle"
n = [8, 2]
lower = [0.0, 0.0]
upper = [4.0, 1.0]
cell = "{cell}"
[space]
degree = {degree}
[physics]
kind = "hyperelasticity"
plane = "{plane}"
law = "{law}"
lambda = 10.0
mu = 4.0
body_force = [0.0, "-{load}"]
[[bc]]
type = "dirichlet"
boundary = "xmin"
value = [0, 0]
[loads]
steps = 1
[newton]
rtol = 1e-11
atol = 1e-13
[solver]
method = "direct"
"#
    )
}

/// A small load on [`strip`] gives the 2D linear elasticity solution (the elasticity physics, plane
/// strain, with `lambda_linear` for λ and μ = 4) to O(load) relative; returns (the largest
/// difference to the linear solution of `other_lambda`, the size of the solution) so that the caller
/// can show the other model is farther.
pub fn small_loads_match_linear_elasticity(plane: &str, law: &str, cell: &str, degree: usize, lambda_linear: f64, other_lambda: f64) -> (f64, f64) {
    use galerkin::operator::AssemblyLevel;
    use galerkin::physics::Elasticity;
    use galerkin::problem::{vector, LinearProblem};
    let load = 1e-5;
    let (_, mut prep) = prepare_text(&strip(law, cell, degree, load, plane)).unwrap();
    assert_eq!((prep.el.dim, prep.el.plane_stress), (2, plane == "stress"));
    let mut sys = cpu_system(&prep).unwrap();
    let (u, reps, _) = solve_on(&Cpu, &mut sys, &mut prep, 1).unwrap();
    assert!(reps[0].iterations.len() <= 3, "{law}: {} Newton iterations for a tiny load", reps[0].iterations.len());
    let space = prep.el.space.clone();
    let linear = |l: f64| {
        let cfg = galerkin::problem::linear::SolverConfig { method: galerkin::solver::SolverMethod::Direct, ..Default::default() };
        LinearProblem::new(space.clone(), Elasticity::lame(l, 4.0, 2))
            .source(vector(move |_| [0.0, -load, 0.0]))
            .dirichlet(["xmin"], vector(|_| [0.0; 3]))
            .solve(AssemblyLevel::Full, &cfg)
            .unwrap()
            .u
    };
    let gap = |v: &[f64]| u.iter().zip(v).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let want = linear(lambda_linear);
    let size = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(size > 1e-5, "{law}: the strip should sag");
    assert!(gap(&want) < 1e-3 * size, "{law} {cell} P{degree} plane {plane}: nonlinear vs linear {:.3e} of {size:.3e}", gap(&want));
    (gap(&linear(other_lambda)), size)
}
