//! Plane-stress hyperelasticity (2D meshes, `plane = "stress"`: F₃₃ solved for S₃₃ = 0 at every
//! point) on the CPU: the law's local solve holds S₃₃ = 0 and its condensed tangent is the
//! derivative of the in-plane stress; the element Jacobian equals central differences of the
//! residual for every law on P1/P2 triangles and Q1/Q2 quadrilaterals; a sheet pulled by a dead
//! traction takes the analytic uniaxial stretch (found here by bisection on the 3D law, apart from
//! the solver's arithmetic); small loads give linear plane-stress elasticity (λ* = 2λμ/(λ + 2μ)).
mod hyper_common;
use galerkin::backend::Cpu;
use galerkin::hyperelastic::element::frame_from_fibre_2d;
use galerkin::hyperelastic::law::{Law, M3};
use galerkin::hyperelastic::loads::{tagged_facets, FollowerPressure};
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use galerkin::hyperelastic::HyperElement;
use galerkin::mesh::{generate::rectangle, CellType};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

/// F in the plane (F₃₃ = 1 given, ignored by the plane-stress law).
fn in_plane(a: [[f64; 2]; 2]) -> M3 {
    [[a[0][0], a[0][1], 0.0], [a[1][0], a[1][1], 0.0], [0.0, 0.0, 1.0]]
}

/// S₃₃ = 0 at the solved thickness stretch (which differs from 1), and the in-plane 𝔸 of
/// `first_piola_plane_stress` equals central differences of its in-plane P (with F₃₃ solved anew
/// at every perturbed F): the condensation is the derivative, not the 3D tangent at fixed F₃₃.
#[test]
fn the_local_solve_holds_s33_at_zero_and_its_tangent_is_the_derivative() {
    let fs = [[[1.12, 0.07], [-0.04, 0.93]], [[0.85, -0.1], [0.05, 1.2]], [[1.3, 0.0], [0.0, 1.0]]];
    for law in hyper_common::plane::laws() {
        for a in fs {
            let f = in_plane(a);
            let (l3, s, _) = law.plane_stress(&f);
            let smax = s.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(smax > 1e-2 && (l3 - 1.0).abs() > 1e-3, "{law:?} {a:?}: trivial state (S {smax:.2e}, F33 {l3})");
            assert!(s[2][2].abs() < 1e-12 * smax, "{law:?} {a:?}: S33 = {:.2e}", s[2][2]);
            let (_, aa) = law.first_piola_plane_stress(&f);
            let (_, a3) = law.first_piola(&{
                let mut g = f;
                g[2][2] = l3;
                g
            });
            let h = 1e-6;
            let (mut worst, mut scale, mut differs) = (0.0f64, 0.0f64, 0.0f64);
            for k in 0..2 {
                for l in 0..2 {
                    let (mut fp, mut fm) = (f, f);
                    fp[k][l] += h;
                    fm[k][l] -= h;
                    let (pp, _) = law.first_piola_plane_stress(&fp);
                    let (pm, _) = law.first_piola_plane_stress(&fm);
                    for i in 0..2 {
                        for j in 0..2 {
                            let fd = (pp[i][j] - pm[i][j]) / (2.0 * h);
                            let t = ((i * 3 + j) * 3 + k) * 3 + l;
                            worst = worst.max((aa[t] - fd).abs());
                            scale = scale.max(aa[t].abs());
                            differs = differs.max((a3[t] - fd).abs());
                        }
                    }
                }
            }
            assert!(worst < 1e-6 * scale, "{law:?} {a:?}: |𝔸 − FD| = {worst:.2e} of {scale:.2e}");
            assert!(differs > 1e-3 * scale, "{law:?} {a:?}: the 3D tangent at fixed F33 should not be the derivative");
        }
    }
}

/// Where no thickness stretch gives S₃₃ = 0 the state is infeasible (non-finite), not an error.
#[test]
fn an_inverted_state_has_no_plane_stress() {
    let (l3, s, _) = Law::NeoHookean { lambda: 2.1, mu: 0.9 }.plane_stress(&in_plane([[-1.0, 0.0], [0.0, 1.0]]));
    assert!(l3.is_nan() && s[0][0].is_nan(), "J < 0 in the plane: F33 {l3}, S11 {}", s[0][0]);
}

/// K = central differences of R, column by column, relative 1e-6 (each law, each 2D element).
#[test]
fn plane_stress_jacobian_equals_finite_differences() {
    hyper_common::plane::jacobian_equals_finite_differences(true);
}

/// Root of a monotone `g` on [a, b] by bisection (g(a), g(b) of opposite signs).
fn bisect(mut a: f64, mut b: f64, g: impl Fn(f64) -> f64) -> f64 {
    let ga = g(a);
    assert!(ga * g(b) < 0.0, "no sign change on [{a}, {b}]");
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if (g(m) > 0.0) == (ga > 0.0) {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

/// The uniaxial stretch of an isotropic sheet under a dead traction t: F = diag(λ₁, λ₂, λ₂) with
/// S₂₂ = S₃₃ = 0 and P₁₁ = λ₁ S₁₁ = t — from the 3D law's S alone, by nested bisection.
fn uniaxial(law: &Law, t: f64) -> [f64; 2] {
    let s = |l1: f64, l2: f64| law.pk2(&[[l1, 0.0, 0.0], [0.0, l2, 0.0], [0.0, 0.0, l2]]).0;
    let lateral = |l1: f64| bisect(0.2, 1.5, |l2| s(l1, l2)[1][1]);
    let l1 = bisect(0.8, 1.6, |l1| l1 * s(l1, lateral(l1))[0][0] - t);
    [l1, lateral(l1)]
}

/// A unit square sliding on x = 0 and y = 0, pulled on x = 1 by a dead traction: the exact
/// solution is the homogeneous uniaxial stretch (every space reproduces it) — at every node to
/// 1e-9 for St. Venant–Kirchhoff and neo-Hookean, on triangles and quadrilaterals, and every
/// cell's thickness stretch (the VTU's `thickness_stretch`) is the width's. Plane strain
/// would stretch it differently (checked: the test can tell the models apart).
#[test]
fn a_pulled_sheet_takes_the_analytic_uniaxial_stretch() {
    let t = 0.6;
    for (law, name, extra) in [(Law::Svk { lambda: 1.5, mu: 0.8 }, "svk", "lambda = 1.5\nmu = 0.8"), (Law::NeoHookean { lambda: 1.5, mu: 0.8 }, "neo-hookean", "lambda = 1.5\nmu = 0.8")] {
        let [l1, l2] = uniaxial(&law, t);
        for (cell, degree) in [("triangle", 2), ("quadrilateral", 1), ("quadrilateral", 2)] {
            let text = |plane: &str| {
                format!(
                    "[mesh]\ngenerator = \"rectangle\"\nn = [3, 2]\ncell = \"{cell}\"\n[space]\ndegree = {degree}\n[physics]\nkind = \"hyperelasticity\"\nplane = \"{plane}\"\nlaw = \"{name}\"\n{extra}\n\
                     [[bc]]\ntype = \"dirichlet\"\nboundary = \"xmin\"\nvalue = [0, 0]\ncomponents = [0]\n[[bc]]\ntype = \"dirichlet\"\nboundary = \"ymin\"\nvalue = [0, 0]\ncomponents = [1]\n\
                     [[bc]]\ntype = \"traction\"\nboundary = \"xmax\"\nvalue = [{t}, 0]\n[loads]\nsteps = 3\n[newton]\nrtol = 1e-12\natol = 1e-14\n[solver]\nmethod = \"direct\"\n"
                )
            };
            let solve = |plane: &str| {
                let (_, mut prep) = prepare_text(&text(plane)).unwrap();
                let mut sys = cpu_system(&prep).unwrap();
                let (u, _, _) = solve_on(&Cpu, &mut sys, &mut prep, 3).unwrap();
                let space = prep.el.space.clone();
                let worst = space.dofmap.node_coords.iter().enumerate().fold(0.0f64, |m, (n, x)| {
                    m.max((u[2 * n] - (l1 - 1.0) * x[0]).abs()).max((u[2 * n + 1] - (l2 - 1.0) * x[1]).abs())
                });
                (worst, prep.el.thickness_stretch(&u).unwrap())
            };
            let (worst, thickness) = solve("stress");
            assert!(worst < 1e-9, "{name} {cell} P{degree}: |u − u_exact| = {worst:.2e} (λ₁ {l1}, λ₂ {l2})");
            // Isotropic and uniaxial: the thickness stretches as the width does, in every cell.
            let thickness = thickness.expect("plane stress reports F33");
            assert!(thickness.iter().all(|t| (t - l2).abs() < 1e-9), "{name} {cell}: F33 {thickness:?}, want {l2}");
            let (strain, none) = solve("strain");
            assert!(none.is_none(), "plane strain has no thickness stretch");
            assert!(strain > 1e-2, "{name} {cell}: plane strain should not take the plane-stress stretch ({strain:.2e})");
        }
    }
}

/// A small load gives linear plane-stress elasticity: the 2D elasticity physics (plane strain) with
/// λ* = 2λμ/(λ + 2μ), to O(load) relative — and not plane strain's λ.
#[test]
fn small_loads_reproduce_plane_stress_linear_elasticity() {
    let (lambda, mu) = (10.0, 4.0);
    for (law, cell, deg) in [("svk", "triangle", 2), ("neo-hookean", "quadrilateral", 2), ("neo-hookean", "triangle", 1)] {
        let (strain_gap, size) = hyper_common::plane::small_loads_match_linear_elasticity("stress", law, cell, deg, 2.0 * lambda * mu / (lambda + 2.0 * mu), lambda);
        assert!(strain_gap > 1e-2 * size, "{law} {cell} P{deg}: as close to plane strain");
    }
}

/// `plane = "stress"` on a 3D mesh, or other than strain/stress, is refused by key.
#[test]
fn plane_stress_input_is_checked_by_key() {
    let good = hyper_common::plane::strip("svk", "triangle", 1, 0.1, "stress");
    assert!(prepare_text(&good).is_ok());
    let e = prepare_text(&good.replace("plane = \"stress\"", "plane = \"membrane\"")).err().expect("an unknown model").to_string();
    assert!(e.contains("physics.plane"), "{e}");
    let box3 = "[mesh]\ngenerator = \"box\"\nn = [1, 1, 1]\n[physics]\nkind = \"hyperelasticity\"\nplane = \"stress\"\nlaw = \"svk\"\nlambda = 1.0\nmu = 1.0\n";
    assert!(prepare_text(box3).err().unwrap().to_string().contains("physics.plane"));
}

/// `Law::thickness_stretch`'s D = ∂F₃₃/∂F equals central differences of the solved F₃₃ (every law,
/// general in-plane F), and is not zero.
#[test]
fn the_thickness_stretch_derivative_equals_finite_differences() {
    for law in hyper_common::plane::laws() {
        for a in [[[1.12, 0.07], [-0.04, 0.93]], [[0.85, -0.1], [0.05, 1.2]]] {
            let f = in_plane(a);
            let (l3, d) = law.thickness_stretch(&f);
            assert_eq!(l3, law.plane_stress(&f).0);
            let h = 1e-6;
            let (mut worst, mut scale) = (0.0f64, 0.0f64);
            for i in 0..2 {
                for b in 0..2 {
                    let (mut fp, mut fm) = (f, f);
                    fp[i][b] += h;
                    fm[i][b] -= h;
                    let fd = (law.plane_stress(&fp).0 - law.plane_stress(&fm).0) / (2.0 * h);
                    worst = worst.max((fd - d[i][b]).abs());
                    scale = scale.max(d[i][b].abs());
                }
            }
            assert!(scale > 1e-2 && worst < 1e-7, "{law:?} {a:?}: |D − FD| = {worst:.2e} of {scale:.2e}");
        }
    }
}

/// The edge pressure's tangent in plane stress — its a₂ = F₃₃ e_z with F₃₃ from the cell beside the
/// edge — equals central differences of its residual (every law, fibres at an angle, P1/P2 triangles,
/// Q1/Q2 quadrilaterals), and differs from the tangent at a fixed thickness (the thickness block
/// couples the edge to its cell's inner nodes).
#[test]
fn plane_stress_pressure_tangent_equals_finite_differences() {
    for law in hyper_common::plane::laws() {
        for (cell, degree) in [(CellType::Triangle, 1), (CellType::Triangle, 2), (CellType::Quadrilateral, 1), (CellType::Quadrilateral, 2)] {
            let mesh = Arc::new(rectangle(2, 2, [0.0; 2], [1.0, 0.8], cell).unwrap());
            let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 2).unwrap());
            let frames = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre_2d([1.0, 0.3 * (c % 3) as f64 - 0.2]).unwrap()).collect() } else { Vec::new() };
            let el = HyperElement::new(space.clone(), law, frames).unwrap().plane_stress(true).unwrap();
            let pattern = galerkin::operator::assemble::sparsity(&space).unwrap();
            let facets = tagged_facets(&space, &[mesh.tag("xmax", 1).unwrap(), mesh.tag("ymax", 1).unwrap()]).unwrap();
            let p = galerkin::expr::Expr::parse("1.5 + y").unwrap();
            let stress = FollowerPressure::for_element(&el, &facets, &p, &pattern).unwrap();
            let u = space.interpolate(|x, v| {
                v[0] = 0.08 * (2.0 * x[1]).sin() + 0.05 * x[0] * x[1];
                v[1] = -0.06 * x[0] * x[1] + 0.04 * (3.0 * x[0]).cos();
            });
            let fd = hyper_common::fd_pressure(&stress, &pattern, &u, 0.7);
            assert!(fd.scale > 0.1, "{law:?} {cell:?} P{degree}: no pressure tangent");
            assert!(fd.error < 1e-6, "{law:?} {cell:?} P{degree}: plane-stress pressure tangent off by {:.2e}", fd.error);
            let fixed = FollowerPressure::new(&space, &facets, &p, &pattern).unwrap();
            let mut r = vec![0.0; u.len()];
            fixed.add(&u, 0.7, &mut r, None);
            let gap = r.iter().zip(&fd.residual).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(gap > 1e-3, "{law:?} {cell:?} P{degree}: the current thickness changed nothing ({gap:.2e})");
        }
    }
}

/// The stretches (λ₁, λ₂, λ₃) of a sheet squeezed in plane stress by a follower pressure p on
/// x = 1, free on y = 1: P₁₁ = −p λ₂ λ₃ (the force on the deformed edge of the current thickness),
/// S₂₂ = S₃₃ = 0 — from the 3D law; with `thickness = false` the edge keeps its reference thickness
/// (P₁₁ = −p λ₂), for the contrast.
fn squeezed_sheet(law: &Law, p: f64, thickness: bool) -> [f64; 3] {
    hyper_common::fd_newton(
        |l: [f64; 3]| {
            let (s, _) = law.pk2(&[[l[0], 0.0, 0.0], [0.0, l[1], 0.0], [0.0, 0.0, l[2]]]);
            [l[0] * s[0][0] + p * l[1] * if thickness { l[2] } else { 1.0 }, s[1][1], s[2][2]]
        },
        [1.0; 3],
    )
}

/// A follower pressure squeezes a plane-stress sheet into the analytic homogeneous stretch at every
/// node (P1, P2 triangles, Q1, Q2 quadrilaterals; GMRES and the direct solver), the VTU's thickness
/// stretch is λ₃ in every cell, and an edge of fixed thickness would miss the stretch by far more
/// than the tolerance.
#[test]
fn a_pressed_sheet_takes_the_analytic_stretch() {
    let p = 0.3;
    for (cell, degree, solver) in [("triangle", 1, "direct"), ("triangle", 2, "gmres"), ("quadrilateral", 1, "gmres"), ("quadrilateral", 2, "direct")] {
        let text = hyper_common::pressed_square(cell, degree, p, solver).replace("kind = \"hyperelasticity\"", "kind = \"hyperelasticity\"\nplane = \"stress\"");
        let (_, mut prep) = prepare_text(&text).unwrap();
        assert!(prep.el.plane_stress && !prep.pressure.is_empty());
        let l = squeezed_sheet(&prep.el.law, p, true);
        let fixed = squeezed_sheet(&prep.el.law, p, false);
        assert!(l[0] < 0.95 && l[1] > 1.02 && l[2] > 1.02, "{cell}: stretches {l:?}");
        assert!((l[0] - fixed[0]).abs() > 1e-3, "{cell}: the thickness should matter ({l:?} against {fixed:?})");
        let mut sys = cpu_system(&prep).unwrap();
        let (u, reps, _) = solve_on(&Cpu, &mut sys, &mut prep, 3).unwrap();
        assert_eq!(reps.len(), 3);
        let space = prep.el.space.clone();
        let worst = space.dofmap.node_coords.iter().enumerate().fold(0.0f64, |m, (n, x)| (0..2).fold(m, |m, i| m.max((u[n * 2 + i] - (l[i] - 1.0) * x[i]).abs())));
        assert!(worst < 1e-9, "{cell} P{degree} {solver}: |u − (λ − 1) x| = {worst:.2e}, λ = {l:?}");
        let t = prep.el.thickness_stretch(&u).unwrap().expect("plane stress reports F33");
        assert!(t.iter().all(|v| (v - l[2]).abs() < 1e-9), "{cell} P{degree}: F33 {t:?}, want {}", l[2]);
    }
}
