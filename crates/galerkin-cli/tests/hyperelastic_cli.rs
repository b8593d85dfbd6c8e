//! `galerkin run` on the hyperelastic examples: both converge at every load step with full Newton
//! steps near the solution, write a VTU per step and a PVD, and do what their physics says — the
//! twisted beam's mid-length section turns by half the end's angle at every step (symmetry), the
//! pressurised fibre-reinforced shell inflates monotonically and stiffens (each pressure increment
//! moves the wall less than the one before, the exponential Fung law); the plane-strain fibre strip
//! with fibres from the mesh file's `$ElementData` equals the same strip with the fibre field as
//! expressions; the plane-strain tube under a follower pressure is Lamé's tube at small pressure
//! and softens as it inflates; the plane-stress rubber sheet narrows by ν σ/E at a small pull (plane
//! strain's ν(1 + ν) σ/E with the same file); the plane-stress membrane's hole widens under its follower
//! pressure. Bad files fail by key.
mod support;

use std::path::Path;
use support::{fails, galerkin, repo};

fn run_example(name: &str, backend: &str) -> serde_json::Value {
    run_path(&repo().join("examples").join(name), name, backend)
}

fn run_path(toml: &Path, name: &str, backend: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().to_str().unwrap(), "--quiet", "--backend", backend]);
    assert!(ok, "{name} failed:\n{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    let outputs = report["outputs"].as_array().unwrap();
    for o in outputs {
        let p = Path::new(o["path"].as_str().unwrap());
        assert!(p.exists() && std::fs::metadata(p).unwrap().len() == o["bytes"].as_u64().unwrap(), "{name}: missing or different output {p:?}");
    }
    let steps = report["load_steps"].as_array().unwrap();
    let vtus = outputs.iter().filter(|o| o["path"].as_str().unwrap().ends_with(".vtu")).count();
    assert_eq!(vtus, steps.len(), "{name}: one VTU per load step");
    assert!(outputs.iter().any(|o| o["path"].as_str().unwrap().ends_with(".pvd")));
    for s in steps {
        let r: Vec<f64> = s["residuals"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(r.last().unwrap() / r[0] < 1e-9, "{name}: step {} did not converge: {r:?}", s["step"]);
        let last = s["iterations"].as_array().unwrap().last().unwrap();
        assert_eq!(last["step_length"].as_f64().unwrap(), 1.0, "{name}: full Newton steps near the solution");
        assert!(last["linear_iterations"].as_u64().unwrap() > 0);
    }
    report
}

/// The mid-length point (2, 1, 0.5) turns about the axis by half of the end's t·60° at every step.
#[test]
fn twisted_beam_turns_half_way_at_mid_length() {
    let r = run_example("hyperelastic-twisted-beam.toml", "cpu");
    let d = r["points"][0]["displacement"].as_array().unwrap();
    assert_eq!(d.len(), 4);
    for (k, u) in d.iter().enumerate() {
        let (dy, dz) = (u[1].as_f64().unwrap(), u[2].as_f64().unwrap());
        let angle = (dz).atan2(0.5 + dy).to_degrees();
        let want = 30.0 * (k + 1) as f64 / 4.0;
        assert!((angle - want).abs() < 0.05, "step {}: mid-length turned {angle:.3}°, want {want}°", k + 1);
    }
}

/// The wall moves outward at every step, and by less at each (strain stiffening).
#[test]
fn inflated_shell_inflates_and_stiffens() {
    let r = run_example("hyperelastic-inflated-shell.toml", "cpu");
    assert_eq!(r["law"]["law"], "usyk");
    let x: Vec<f64> = r["points"][0]["x"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let radial = |u: &serde_json::Value| -> f64 {
        let n = [x[0], x[1], x[2] / 1.4 / 1.4];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        (0..3).map(|k| u[k].as_f64().unwrap() * n[k] / len).sum()
    };
    let w: Vec<f64> = r["points"][0]["displacement"].as_array().unwrap().iter().map(radial).collect();
    assert_eq!(w.len(), 5);
    let mut prev = (0.0, f64::INFINITY);
    for (k, &wk) in w.iter().enumerate() {
        let inc = wk - prev.0;
        assert!(inc > 0.0 && inc < prev.1, "step {}: radial displacement {w:?} not growing with shrinking increments", k + 1);
        prev = (wk, inc);
    }
    assert!(w[4] > 0.05 && w[4] < 0.2, "{w:?}");
}

/// Plane strain with fibres per cell from `$ElementData`: converges at every step, sags, and gives
/// the displacement of the same problem with the fibre angle (y − 1/2)·120° as expressions, to
/// 1e-9 relative (the file's vectors are that field at the cell centroids).
#[test]
fn fibre_strip_from_element_data_equals_the_expression_field() {
    let r = run_example("hyperelastic-fibre-strip.toml", "cpu");
    assert_eq!(r["law"]["law"], "usyk");
    let text = std::fs::read_to_string(repo().join("examples/hyperelastic-fibre-strip.toml")).unwrap();
    let mesh = repo().join("examples/meshes/fibre-strip.msh");
    let expr = text
        .replace("file = \"meshes/fibre-strip.msh\"", &format!("file = {:?}", mesh.display().to_string()))
        .replace("fibre = { element_data = \"fibres\" }", "fibre = [\"cos((y - 0.5) * 2 * pi / 3)\", \"sin((y - 0.5) * 2 * pi / 3)\"]");
    assert_ne!(expr, text);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("strip-expr.toml");
    std::fs::write(&p, expr).unwrap();
    let q = run_path(&p, "strip-expr.toml", "cpu");
    let tip = |r: &serde_json::Value| -> Vec<Vec<f64>> {
        r["points"][0]["displacement"].as_array().unwrap().iter().map(|u| u.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()).collect()
    };
    let (a, b) = (tip(&r), tip(&q));
    assert_eq!(a.len(), 3);
    let sag = a[2][1];
    assert!(sag < -0.05 && a[2][2] == 0.0, "the free end should sag in the plane: {a:?}");
    for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
        assert!((x - y).abs() <= 1e-9 * sag.abs(), "element data {a:?} vs expressions {b:?}");
    }
}

/// Lamé's thick-walled tube in plane strain, u_r(r) = (1 + ν) p a² / (E (b² − a²)) ((1 − 2ν) r + b²/r),
/// at p = 10⁻⁴ = 10⁻⁵ E (to 0.1 % on the straight-sided Q2 ring of 24 sectors; it is 0.06 %); at the
/// example's p = 1 the follower pressure softens the tube: each equal pressure increment moves the
/// inner wall further than the one before, and the wall stays on the x axis.
#[test]
fn pressurised_tube_is_lames_tube_and_softens() {
    let r = run_example("hyperelastic-pressurised-tube.toml", "cpu");
    let ux: Vec<f64> = r["points"][0]["displacement"].as_array().unwrap().iter().map(|u| u[0].as_f64().unwrap()).collect();
    assert_eq!(ux.len(), 4);
    let mut prev = (0.0, 0.0);
    for (k, &u) in ux.iter().enumerate() {
        assert!(u - prev.0 > prev.1, "step {}: inner wall {ux:?} should move by more at each step", k + 1);
        prev = (u, u - prev.0);
    }
    for p in r["points"].as_array().unwrap() {
        assert!(p["displacement"].as_array().unwrap().iter().all(|u| u[1].as_f64().unwrap().abs() < 1e-12), "off the symmetry line: {p}");
    }
    let text = std::fs::read_to_string(repo().join("examples/hyperelastic-pressurised-tube.toml")).unwrap();
    let small = text.replace("value = 1.0", "value = 1e-4").replace("steps = 4", "steps = 1");
    assert_ne!(small, text);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lame.toml");
    std::fs::write(&path, small).unwrap();
    let q = run_path(&path, "lame.toml", "cpu");
    let (e, nu, p, a, b) = (10.0, 0.3, 1e-4, 1.0, 1.5);
    let lame = |x: f64| (1.0 + nu) * p * a * a / (e * (b * b - a * a)) * ((1.0 - 2.0 * nu) * x + b * b / x);
    for pt in q["points"].as_array().unwrap() {
        let x = pt["x"][0].as_f64().unwrap();
        let u = pt["displacement"][0][0].as_f64().unwrap();
        assert!((u / lame(x) - 1.0).abs() < 1e-3, "r = {x}: u_r {u:.6e} against Lamé's {:.6e}", lame(x));
    }
}

/// The plane-stress rubber sheet lengthens and narrows at every load step; at a small pull σ its
/// middle is in uniaxial tension: the half-width shrinks by ν σ/E (to 0.2 %; 0.03 % measured), and the same file in
/// plane strain gives ν(1 + ν) σ/E instead (ε₃₃ = 0 there).
#[test]
fn rubber_sheet_narrows_as_plane_stress_says() {
    let r = run_example("hyperelastic-rubber-sheet.toml", "cpu");
    let comp = |r: &serde_json::Value, p: usize, i: usize| -> Vec<f64> { r["points"][p]["displacement"].as_array().unwrap().iter().map(|u| u[i].as_f64().unwrap()).collect() };
    let (width, length) = (comp(&r, 0, 1), comp(&r, 1, 0));
    assert_eq!(width.len(), 5);
    for k in 1..5 {
        assert!(width[k] < width[k - 1] && length[k] > length[k - 1], "step {}: width {width:?}, length {length:?}", k + 1);
    }
    let text = std::fs::read_to_string(repo().join("examples/hyperelastic-rubber-sheet.toml")).unwrap();
    let (e, nu, sigma) = (1.0, 0.45, 1e-3);
    for (plane, factor) in [("stress", nu), ("strain", nu * (1.0 + nu))] {
        let small = text.replace("value = [0.4, 0]", &format!("value = [{sigma}, 0]")).replace("steps = 5", "steps = 1").replace("plane = \"stress\"", &format!("plane = \"{plane}\""));
        let small = small.replace("[newton]\nrtol = 1e-10", "[newton]\nrtol = 1e-12\natol = 1e-14");
        assert!(small.contains(&format!("{sigma}")) && small.contains(&format!("plane = \"{plane}\"")) && small.contains("rtol = 1e-12"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.toml");
        std::fs::write(&path, small).unwrap();
        let q = run_path(&path, "small.toml", "cpu");
        let lateral = comp(&q, 0, 1)[0] / 0.5;
        let want = -factor * sigma / e;
        assert!((lateral / want - 1.0).abs() < 2e-3, "plane {plane}: lateral strain {lateral:.4e}, want {want:.4e}");
    }
}

/// The plane-stress membrane inflated by a follower pressure on its hole (the edge of the current
/// thickness, F₃₃ from the cells beside it): converges quadratically at every step (`run_path`), and
/// the hole widens in x and y at every step, its right point at the first step by about p a (1 + ν)/E,
/// a hole's in a wide plate (within 25 %, 7 % measured: the plate's edges are 1.5 radii away; its
/// top point, nearer the free wall, moves 50 % more).
#[test]
fn inflated_membrane_widens_its_hole() {
    let r = run_example("hyperelastic-inflated-membrane.toml", "cpu");
    let comp = |p: usize, i: usize| -> Vec<f64> { r["points"][p]["displacement"].as_array().unwrap().iter().map(|u| u[i].as_f64().unwrap()).collect() };
    let (right, top) = (comp(0, 0), comp(1, 1));
    assert_eq!(right.len(), 4);
    for k in 0..4 {
        let prev = if k == 0 { (0.0, 0.0) } else { (right[k - 1], top[k - 1]) };
        assert!(right[k] > prev.0 && top[k] > prev.1, "step {}: hole's right {right:?}, top {top:?}", k + 1);
    }
    let estimate = 0.15 / 4.0 * 0.2 * 1.45 / 1.0;
    assert!((right[0] / estimate - 1.0).abs() < 0.25, "first step: {:.4e} against {estimate:.4e}", right[0]);
}

#[test]
fn bad_hyperelastic_files_fail_by_key() {
    let good = std::fs::read_to_string(repo().join("examples/hyperelastic-twisted-beam.toml")).unwrap();
    for (text, key) in [
        (good.replace("nu = 0.3", "nu = 0.7"), "physics.nu"),
        (good.replace("steps = 4", "steps = 4\nramp = 2"), "ramp"),
        (good.replace("[newton]\nrtol = 1e-9", "[newton]\nrtol = 2.0"), "newton.rtol"),
        (good.replace("method = \"cg\"", "method = \"lu\""), "solver.method"),
    ] {
        let e = fails(&text);
        assert!(e.contains(key), "error for `{key}` does not name it: {e}");
    }
    let tube = std::fs::read_to_string(repo().join("examples/hyperelastic-pressurised-tube.toml")).unwrap();
    for (text, key) in [
        (tube.replace("outer = 1.5", "outer = 0.5"), "ring.inner"),
        (tube.replace("phi = [0.0, 90.0]", "phi = [0.0, 400.0]"), "ring.phi"),
        (tube.replace("n = [4, 24]", "n = [0, 24]"), "ring.n"),
        (tube.replace("cell = \"quadrilateral\"", "cell = \"hexahedron\""), "ring.cell"),
        (tube.replace("[ring]", "[mesh]\ngenerator = \"rectangle\"\n[ring]"), "ring"),
        (tube.replace("value = 1.0", "value = [1.0, 0.0]"), "bc[2].value"),
    ] {
        let e = fails(&text);
        assert!(e.contains(key), "error for `{key}` does not name it: {e}");
    }
}
