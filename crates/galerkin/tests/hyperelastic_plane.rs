//! Plane-strain hyperelasticity (2D meshes, F₃₃ = 1) on the CPU: the Jacobian of every law equals
//! central differences of the residual on P1/P2 triangles and Q1/Q2 quadrilaterals; small loads give
//! the plane-strain linear elasticity solution; an affine deformation is reproduced exactly with the
//! analytic reaction forces, and the out-of-plane stress is what the 3D law gives for F₃₃ = 1.
mod hyper_common;
use galerkin::backend::Cpu;
use galerkin::hyperelastic::element::frame_from_fibre_2d;
use galerkin::hyperelastic::law::{Law, M3};
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

/// 2D problem files: `plane` other than "strain", `plane` on a 3D mesh, 3-component vectors, a
/// component 2 and a follower pressure are refused by key.
#[test]
fn plane_strain_input_is_checked_by_key() {
    let good = STRIP.replace("LAW", "svk").replace("CELL", "triangle").replace("DEG", "1").replace("LOAD", "0.1");
    assert!(prepare_text(&good).is_ok());
    let cases: Vec<(String, &str)> = vec![
        (good.replace("kind = \"hyperelasticity\"", "kind = \"hyperelasticity\"\nplane = \"stress\""), "physics.plane"),
        (good.replace("body_force = [0.0, \"-0.1\"]", "body_force = [0.0, \"-0.1\", 0.0]"), "physics.body_force"),
        (good.replace("value = [0, 0]", "value = [0, 0]\ncomponents = [2]"), "bc[0].components"),
        (good.replace("value = [0, 0]", "value = [0, 0, 0]"), "bc[0].value"),
        (good.replace("[loads]", "[[bc]]\ntype = \"pressure\"\nboundary = \"xmax\"\nvalue = 1.0\n[loads]"), "bc[1].type"),
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
