//! Plane-strain hyperelasticity (2D meshes, F₃₃ = 1) on the CPU: the Jacobian of every law equals
//! central differences of the residual on P1/P2 triangles and Q1/Q2 quadrilaterals; small loads give
//! the plane-strain linear elasticity solution; an affine deformation is reproduced exactly with the
//! analytic reaction forces, and the out-of-plane stress is what the 3D law gives for F₃₃ = 1; the
//! follower pressure on edges has its consistent tangent and squeezes a square into the analytic
//! homogeneous stretch.
mod hyper_common;
use galerkin::backend::Cpu;
use galerkin::hyperelastic::law::{Law, M3};
use galerkin::hyperelastic::loads::{tagged_facets, FollowerPressure};
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use galerkin::mesh::{generate::rectangle, CellType};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

/// K = central differences of R, column by column, relative 1e-6 (each law, each 2D element).
#[test]
fn plane_strain_jacobian_equals_finite_differences() {
    hyper_common::plane::jacobian_equals_finite_differences(false);
}

/// A small load gives the plane-strain linear elasticity solution with the same λ, μ (the
/// existing 2D elasticity physics), to O(load) relative.
#[test]
fn small_loads_reproduce_plane_strain_linear_elasticity() {
    for (law, cell, deg) in [("svk", "triangle", 2), ("neo-hookean", "quadrilateral", 2), ("svk", "quadrilateral", 1)] {
        hyper_common::plane::small_loads_match_linear_elasticity("strain", law, cell, deg, 10.0, 10.0);
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
    let good = hyper_common::plane::strip("svk", "triangle", 1, 0.1, "strain");
    assert!(prepare_text(&good).is_ok());
    let cases: Vec<(String, &str)> = vec![
        (good.replace("plane = \"strain\"", "plane = \"membrane\""), "physics.plane"),
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
/// P₁₁ = −p λ₂ (the pressure acts on the deformed edge, of length λ₂) and P₂₂ = 0.
fn pressed_stretches(law: &Law, p: f64) -> [f64; 2] {
    hyper_common::fd_newton(
        |l: [f64; 2]| {
            let (pp, _) = law.first_piola(&[[l[0], 0.0, 0.0], [0.0, l[1], 0.0], [0.0, 0.0, 1.0]]);
            [pp[0][0] + p * l[1], pp[1][1]]
        },
        [1.0; 2],
    )
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
