//! Plane-strain hyperelasticity (2D meshes, F₃₃ = 1) on the CPU: the Jacobian of every law equals
//! central differences of the residual on P1/P2 triangles and Q1/Q2 quadrilaterals; small loads give
//! the plane-strain linear elasticity solution; an affine deformation is reproduced exactly with the
//! analytic reaction forces, and the out-of-plane stress is what the 3D law gives for F₃₃ = 1; the
//! follower pressure on edges has its consistent tangent and squeezes a square into the analytic
//! homogeneous stretch.
mod hyper_common;
use galerkin::backend::Cpu;
use galerkin::hyperelastic::element::frame_from_fibre_2d;
use galerkin::hyperelastic::law::{Law, M3};
use galerkin::hyperelastic::loads::{tagged_facets, FollowerPressure};
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use galerkin::hyperelastic::{CpuHyper, HyperElement};
use galerkin::mesh::{generate::rectangle, CellType};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

fn laws() -> [Law; 3] {
    [
        Law::Svk { lambda: 1.3, mu: 0.7 },
        Law::NeoHookean { lambda: 2.1, mu: 0.9 },
        Law::Usyk { c: 0.876, bf: 18.48, bt: 3.58, bfs: 1.627, kappa: 50.0 },
    ]
}

/// K = central differences of R, column by column, relative 1e-6 (each law, each 2D element).
#[test]
fn plane_strain_jacobian_equals_finite_differences() {
    for law in laws() {
        for (cell, degree) in [(CellType::Triangle, 1), (CellType::Triangle, 2), (CellType::Quadrilateral, 1), (CellType::Quadrilateral, 2)] {
            let mesh = Arc::new(rectangle(2, 2, [0.0; 2], [1.0, 0.8], cell).unwrap());
            let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 2).unwrap());
            let frames = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre_2d([1.0, 0.3 * (c % 3) as f64 - 0.2]).unwrap()).collect() } else { Vec::new() };
            let asm = CpuHyper::new(HyperElement::new(space.clone(), law, frames).unwrap()).unwrap();
            let u = space.interpolate(|x, v| {
                v[0] = 0.08 * (2.0 * x[1]).sin() + 0.05 * x[0] * x[1];
                v[1] = -0.06 * x[0] * x[1] + 0.04 * (3.0 * x[0]).cos();
            });
            let hyper_common::FdJacobian { error: worst, scale, residual: r } = hyper_common::fd_jacobian(&asm, &u);
            assert!(scale > 1e-3 && r.iter().any(|v| v.abs() > 1e-6), "{law:?} {cell:?}: trivial system");
            assert!(worst < 1e-6, "{law:?} {cell:?} P{degree}: |K − FD| / max|K| = {worst:.2e}");
        }
    }
}

const STRIP: &str = r#"
[mesh]
generator = "rectangle"
n = [8, 2]
lower = [0.0, 0.0]
upper = [4.0, 1.0]
cell = "CELL"
[space]
degree = DEG
[physics]
kind = "hyperelasticity"
law = "LAW"
lambda = 10.0
mu = 4.0
body_force = [0.0, "-LOAD"]
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
"#;

/// A small load gives the plane-strain linear elasticity solution with the same λ, μ (the
/// existing 2D elasticity physics), to O(load) relative.
#[test]
fn small_loads_reproduce_plane_strain_linear_elasticity() {
    use galerkin::operator::AssemblyLevel;
    use galerkin::physics::Elasticity;
    use galerkin::problem::{vector, LinearProblem};
    let load = 1e-5;
    for (law, cell, deg) in [("svk", "triangle", 2), ("neo-hookean", "quadrilateral", 2), ("svk", "quadrilateral", 1)] {
        let text = STRIP.replace("LAW", law).replace("CELL", cell).replace("DEG", &deg.to_string()).replace("LOAD", &format!("{load}"));
        let (_, mut prep) = prepare_text(&text).unwrap();
        assert_eq!(prep.el.dim, 2);
        let mut sys = cpu_system(&prep).unwrap();
        let (u, reps, _) = solve_on(&Cpu, &mut sys, &mut prep, 1).unwrap();
        assert!(reps[0].iterations.len() <= 3, "{law}: {} Newton iterations for a tiny load", reps[0].iterations.len());
        let space = prep.el.space.clone();
        let cfg = galerkin::problem::linear::SolverConfig { method: galerkin::solver::SolverMethod::Direct, ..Default::default() };
        let lin = LinearProblem::new(space.clone(), Elasticity::lame(10.0, 4.0, 2))
            .source(vector(move |_| [0.0, -load, 0.0]))
            .dirichlet(["xmin"], vector(|_| [0.0; 3]))
            .solve(AssemblyLevel::Full, &cfg)
            .unwrap();
        let diff = u.iter().zip(&lin.u).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        let size = lin.u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(size > 1e-5, "{law}: the strip should sag");
        assert!(diff < 1e-3 * size, "{law} {cell} P{deg}: nonlinear vs linear {diff:.3e} of {size:.3e}");
    }
}

/// u = (F − I) X on the whole boundary of a square: Newton reproduces the affine field at every
/// node and the reaction on x = 1 equals ∫ P N dA = P[:, 0] (unit edge, unit thickness) for every
/// law, with P from the 3D law at F₃₃ = 1 (and for the fibre law, F in its in-plane frame).
#[test]
fn homogeneous_plane_deformation_reproduces_the_analytic_stress() {
    let f2 = [[1.08, 0.05], [-0.03, 0.96]];
    for (law, extra) in [
        ("svk", "lambda = 1.5\nmu = 0.8"),
        ("neo-hookean", "E = 3.0\nnu = 0.3"),
        ("usyk", "C = 0.876\nbf = 18.48\nbt = 3.58\nbfs = 1.627\nkappa = 20.0\nfibre = [\"1\", \"0.5\"]"),
    ] {
        for cell in ["triangle", "quadrilateral"] {
            let value = (0..2).map(|i| format!("\"{} * x + {} * y\"", f2[i][0] - if i == 0 { 1.0 } else { 0.0 }, f2[i][1] - if i == 1 { 1.0 } else { 0.0 })).collect::<Vec<_>>().join(", ");
            let text = format!(
                "[mesh]\ngenerator = \"rectangle\"\nn = [2, 3]\ncell = \"{cell}\"\n[space]\ndegree = 2\n[physics]\nkind = \"hyperelasticity\"\nplane = \"strain\"\nlaw = \"{law}\"\n{extra}\n\
                 [[bc]]\ntype = \"dirichlet\"\nboundary = [\"xmin\", \"xmax\", \"ymin\", \"ymax\"]\nvalue = [{value}]\n[loads]\nsteps = 2\n[solver]\nmethod = \"direct\"\n"
            );
            let (_, mut prep) = prepare_text(&text).unwrap();
            let mut sys = cpu_system(&prep).unwrap();
            let (u, _, _) = solve_on(&Cpu, &mut sys, &mut prep, 2).unwrap();
            let space = prep.el.space.clone();
            for (node, x) in space.dofmap.node_coords.iter().enumerate() {
                for i in 0..2 {
                    let want = f2[i][0] * x[0] + f2[i][1] * x[1] - x[i];
                    assert!((u[node * 2 + i] - want).abs() < 1e-10, "{law} {cell}: node {node} comp {i}");
                }
            }
            let mut r = vec![0.0; u.len()];
            sys.asm.assemble(&u, &mut r, None).unwrap();
            let face = space.boundary_nodes(&[space.mesh.tag("xmax", 1).unwrap()]).unwrap();
            let lv = prep.el.law;
            let rf: M3 = if lv.anisotropic() { prep.el.frames[0] } else { [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] };
            let f: M3 = [[f2[0][0], f2[0][1], 0.0], [f2[1][0], f2[1][1], 0.0], [0.0, 0.0, 1.0]];
            let mut fr = [[0.0; 3]; 3];
            for i in 0..3 {
                for a in 0..3 {
                    fr[i][a] = (0..3).map(|k| f[i][k] * rf[k][a]).sum();
                }
            }
            let (pp, _) = lv.first_piola(&fr);
            // The out-of-plane stress that keeps ε₃₃ = 0 is not zero (it is plane strain).
            assert!(pp[2][2].abs() > 1e-3, "{law}: P33 = {}", pp[2][2]);
            for i in 0..2 {
                let p_i0: f64 = (0..3).map(|a| pp[i][a] * rf[0][a]).sum();
                let reaction: f64 = face.iter().map(|&n| r[n * 2 + i]).sum();
                assert!((reaction - p_i0).abs() < 1e-9 * p_i0.abs().max(1.0), "{law} {cell}: reaction {i} {reaction} vs P_{i}0 {p_i0}");
            }
        }
    }
}

/// 2D problem files: `plane` other than "strain" or "stress", `plane` on a 3D mesh, 3-component vectors, a
/// component 2, a pressure given as a vector or on an unknown boundary are refused by key.
#[test]
fn plane_strain_input_is_checked_by_key() {
    let good = STRIP.replace("LAW", "svk").replace("CELL", "triangle").replace("DEG", "1").replace("LOAD", "0.1");
    assert!(prepare_text(&good).is_ok());
    let cases: Vec<(String, &str)> = vec![
        (good.replace("kind = \"hyperelasticity\"", "kind = \"hyperelasticity\"\nplane = \"membrane\""), "physics.plane"),
        (good.replace("body_force = [0.0, \"-0.1\"]", "body_force = [0.0, \"-0.1\", 0.0]"), "physics.body_force"),
        (good.replace("value = [0, 0]", "value = [0, 0]\ncomponents = [2]"), "bc[0].components"),
        (good.replace("value = [0, 0]", "value = [0, 0, 0]"), "bc[0].value"),
        (good.replace("[loads]", "[[bc]]\ntype = \"pressure\"\nboundary = \"xmax\"\nvalue = [1.0, 2.0]\n[loads]"), "bc[1].value"),
        (good.replace("[loads]", "[[bc]]\ntype = \"pressure\"\nboundary = \"nowhere\"\nvalue = 1.0\n[loads]"), "nowhere"),
    ];
    for (text, key) in cases {
        match prepare_text(&text) {
            Ok(_) => panic!("accepted a file that should fail at `{key}`:\n{text}"),
            Err(e) => assert!(e.to_string().contains(key), "error for `{key}` does not name it: {e}"),
        }
    }
    let box3 = "[mesh]\ngenerator = \"box\"\nn = [1, 1, 1]\n[physics]\nkind = \"hyperelasticity\"\nplane = \"strain\"\nlaw = \"svk\"\nlambda = 1.0\nmu = 1.0\n";
    assert!(prepare_text(box3).err().unwrap().to_string().contains("physics.plane"));
}

/// The edge pressure's tangent equals central differences of its residual (P1/P2 triangles, Q1/Q2
/// quadrilaterals), and at u = 0 its resultant is λ ∫ p n ds on the undeformed edge.
#[test]
fn plane_strain_pressure_tangent_equals_finite_differences() {
    for (cell, degree) in [(CellType::Triangle, 1), (CellType::Triangle, 2), (CellType::Quadrilateral, 1), (CellType::Quadrilateral, 2)] {
        let mesh = Arc::new(rectangle(2, 2, [0.0; 2], [1.0, 0.8], cell).unwrap());
        let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 2).unwrap());
        let pattern = galerkin::operator::assemble::sparsity(&space).unwrap();
        let tags = vec![mesh.tag("xmax", 1).unwrap(), mesh.tag("ymax", 1).unwrap()];
        let p = galerkin::expr::Expr::parse("1.5 + y").unwrap();
        let both = FollowerPressure::new(&space, &tagged_facets(&space, &tags).unwrap(), &p, &pattern).unwrap();
        let u = space.interpolate(|x, v| {
            v[0] = 0.08 * (2.0 * x[1]).sin() + 0.05 * x[0] * x[1];
            v[1] = -0.06 * x[0] * x[1] + 0.04 * (3.0 * x[0]).cos();
        });
        let nd = space.ndofs();
        let hyper_common::FdJacobian { error: worst, scale, .. } = hyper_common::fd_pressure(&both, &pattern, &u, 0.7);
        assert!(scale > 0.1, "{cell:?} P{degree}: no pressure tangent");
        assert!(worst < 1e-6, "{cell:?} P{degree}: pressure tangent off by {worst:.2e}");
        // On x = 1 (length 0.8, outward +x) at u = 0: λ ∫ (1.5 + y) dy = 0.7 · 1.52 in x, none in y.
        let right = FollowerPressure::new(&space, &tagged_facets(&space, &tags[..1]).unwrap(), &p, &pattern).unwrap();
        let mut r0 = vec![0.0; nd];
        right.add(&vec![0.0; nd], 0.7, &mut r0, None);
        let fx: f64 = r0.iter().step_by(2).sum();
        let fy: f64 = r0.iter().skip(1).step_by(2).sum();
        assert!((fx - 0.7 * 1.52).abs() < 1e-12 && fy.abs() < 1e-12, "{cell:?} P{degree}: resultant ({fx}, {fy})");
    }
}

/// The stretches (λ₁, λ₂) of a square squeezed by a follower pressure p on x = 1 and free on y = 1:
/// P₁₁ = −p λ₂ (the pressure acts on the deformed edge, of length λ₂) and P₂₂ = 0, by Newton with
/// a central-difference 2 × 2 Jacobian.
fn pressed_stretches(law: &Law, p: f64) -> [f64; 2] {
    let g = |l: [f64; 2]| {
        let (pp, _) = law.first_piola(&[[l[0], 0.0, 0.0], [0.0, l[1], 0.0], [0.0, 0.0, 1.0]]);
        [pp[0][0] + p * l[1], pp[1][1]]
    };
    let mut l = [1.0, 1.0];
    for _ in 0..50 {
        let r = g(l);
        if r[0].abs().max(r[1].abs()) < 1e-15 {
            break;
        }
        let h = 1e-7;
        let mut j = [[0.0; 2]; 2];
        for c in 0..2 {
            let (mut lp, mut lm) = (l, l);
            lp[c] += h;
            lm[c] -= h;
            let (gp, gm) = (g(lp), g(lm));
            for row in 0..2 {
                j[row][c] = (gp[row] - gm[row]) / (2.0 * h);
            }
        }
        let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
        l[0] -= (j[1][1] * r[0] - j[0][1] * r[1]) / det;
        l[1] -= (j[0][0] * r[1] - j[1][0] * r[0]) / det;
    }
    l
}

/// A follower pressure squeezes a square into the analytic homogeneous stretch at every node (P1,
/// P2 triangles, Q1, Q2 quadrilaterals; GMRES and the direct solver), which a dead traction of the
/// same size would miss by far more than the tolerance.
#[test]
fn follower_pressure_squeezes_a_square_into_the_analytic_stretch() {
    let p = 0.3;
    for (cell, degree, solver) in [("triangle", 1, "direct"), ("triangle", 2, "gmres"), ("quadrilateral", 1, "gmres"), ("quadrilateral", 2, "direct")] {
        let text = hyper_common::pressed_square(cell, degree, p, solver);
        let (_, mut prep) = prepare_text(&text).unwrap();
        assert!(!prep.pressure.is_empty());
        let l = pressed_stretches(&prep.el.law, p);
        // Dead: P₁₁ = −p; follower: P₁₁ = −p λ₂ — they differ by p (λ₂ − 1), here ≈ 10⁻².
        assert!(l[0] < 0.95 && l[1] > 1.02, "{cell}: stretches {l:?}");
        let mut sys = cpu_system(&prep).unwrap();
        let (u, reps, _) = solve_on(&Cpu, &mut sys, &mut prep, 3).unwrap();
        assert_eq!(reps.len(), 3);
        let space = prep.el.space.clone();
        let mut worst: f64 = 0.0;
        for (node, x) in space.dofmap.node_coords.iter().enumerate() {
            for i in 0..2 {
                worst = worst.max((u[node * 2 + i] - (l[i] - 1.0) * x[i]).abs());
            }
        }
        assert!(worst < 1e-9, "{cell} P{degree} {solver}: |u − (λ − 1) x| = {worst:.2e}, λ = {l:?}");
    }
}
