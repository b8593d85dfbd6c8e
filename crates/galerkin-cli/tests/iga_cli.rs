//! `galerkin run` on B-spline problem files: every `examples/iga-*.toml` runs and writes whole
//! outputs with the expected accuracy; every bad input fails with an error naming its key (and
//! line) and leaves no output behind.
mod support;

use std::path::{Path, PathBuf};
use support::{fails, galerkin, repo};



fn run(toml: &Path) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().to_str().unwrap(), "--quiet", "--backend", "cpu"]);
    assert!(ok, "{} failed:\n{stdout}\n{stderr}", toml.display());
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    for o in report["outputs"].as_array().unwrap() {
        let p = Path::new(o["path"].as_str().unwrap());
        assert!(p.exists() && std::fs::metadata(p).unwrap().len() > 0, "{}: missing output {p:?}", toml.display());
    }
    assert!(report["solver"]["relative_residual"].as_f64().unwrap() < 1e-10, "{}", report["solver"]);
    report
}

#[test]
fn every_iga_example_runs() {
    let mut examples: Vec<PathBuf> = std::fs::read_dir(repo().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("iga-"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 4, "{examples:?}");
    for ex in examples {
        let r = run(&ex);
        let name = ex.file_name().unwrap().to_str().unwrap().to_string();
        match name.as_str() {
            "iga-seed-benchmark.toml" => {
                let e = r["errors"]["relative_h1"].as_f64().unwrap();
                assert!(e < 1e-10, "seed benchmark: relative H1 error {e}");
                assert_eq!(r["space"]["degree"][0], 5);
                assert!(r["solver"]["multifrontal"]["levels"].as_u64().unwrap() >= 8);
            }
            "iga-poisson-2d.toml" => {
                assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 1e-6, "{}", r["errors"]);
                assert!(r["outputs"].as_array().unwrap().iter().any(|o| o["path"].as_str().unwrap().ends_with(".vtu")));
            }
            "iga-knots-robin.toml" => assert_eq!(r["space"]["min_continuity"][0], 0),
            _ => {}
        }
    }
}

const GOOD: &str = r#"
[space]
family = "bspline"
degree = 2
elements = 8
[physics]
kind = "advection-diffusion-reaction"
f = 1.0
[bc]
left = { type = "dirichlet", value = 0.0 }
right = { type = "neumann", gamma = 0.0 }
"#;

const GOOD_2D: &str = r#"
[space]
family = "bspline"
degree = 2
elements = [4, 3]
[physics]
kind = "poisson"
f = 1.0
[bc]
value = 0.0
"#;


#[test]
fn good_files_run() {
    for text in [GOOD, GOOD_2D] {
        let dir = tempfile::tempdir().unwrap();
        let toml = dir.path().join("good.toml");
        std::fs::write(&toml, text).unwrap();
        let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().join("o").to_str().unwrap(), "--quiet"]);
        assert!(ok && stdout.contains("B-splines"), "{stdout}\n{stderr}");
    }
}

#[test]
fn bad_iga_inputs_name_their_key_and_line() {
    let cases: &[(&str, String, &[&str])] = &[
        ("degree 0", GOOD.replace("degree = 2", "degree = 0"), &["space.degree", "1 to 8", "line 4"]),
        ("degree 9", GOOD.replace("degree = 2", "degree = 9"), &["space.degree", "got 9"]),
        ("degree type", GOOD.replace("degree = 2", "degree = \"two\""), &["space.degree", "integer"]),
        ("continuity too high", GOOD.replace("elements = 8", "elements = 8\ncontinuity = 2"), &["space.continuity", "0 to p - 1 = 1"]),
        ("no elements", GOOD.replace("elements = 8", ""), &["space", "exactly one of"]),
        ("elements and knots", GOOD.replace("elements = 8", "elements = 8\nknots = [0, 0, 0, 1, 1, 1]"), &["space", "elements and knots"]),
        ("zero elements", GOOD.replace("elements = 8", "elements = 0"), &["space.elements", "1 to"]),
        ("decreasing knots", GOOD.replace("elements = 8", "knots = [0, 0, 0, 0.6, 0.4, 1, 1, 1]"), &["space.knots", "non-decreasing", "knot 4 (0.4)", "line 5"]),
        ("short end multiplicity", GOOD.replace("elements = 8", "knots = [0, 0, 0.5, 1, 1, 1]"), &["space.knots", "first knot 0 is repeated 2 times"]),
        ("interior multiplicity", GOOD.replace("elements = 8", "knots = [0, 0, 0, 0.5, 0.5, 0.5, 1, 1, 1]"), &["space.knots", "repeated 3 times"]),
        ("too few functions", GOOD.replace("elements = 8", "knots = [0, 0, 1, 1]"), &["space.knots", "p + 1 = 3 basis functions"]),
        ("knots with continuity", GOOD.replace("elements = 8", "knots = [0, 0, 0, 1, 1, 1]\ncontinuity = 1"), &["space.continuity", "not used with `knots`"]),
        ("breakpoints repeat", GOOD.replace("elements = 8", "breakpoints = [0, 0.5, 0.5, 1]"), &["space.breakpoints", "increase strictly"]),
        ("lower with knots", GOOD.replace("elements = 8", "knots = [0, 0, 0, 1, 1, 1]\nlower = 0.0"), &["space.lower", "only used with `elements`"]),
        ("empty domain", GOOD.replace("elements = 8", "elements = 8\nupper = 0.0"), &["space.upper", "domain"]),
        ("misspelled key", GOOD.replace("elements = 8", "elemnts = 8"), &["elemnts"]),
        ("unknown kind", GOOD.replace("advection-diffusion-reaction", "heat"), &["physics.kind", "heat"]),
        ("bad expression", GOOD.replace("f = 1.0", "f = \"sin(x\""), &["physics.f", "line 8"]),
        ("unknown variable", GOOD.replace("f = 1.0", "f = \"w*x\""), &["physics.f", "w"]),
        ("coefficient of another kind", GOOD.replace("f = 1.0", "f = 1.0\nkappa = 2.0"), &["physics.kappa", "not a coefficient"]),
        ("non-finite coefficient", GOOD.replace("f = 1.0", "f = 1.0\na = \"sqrt(x - 0.5)\""), &["physics.a", "NaN at x = 0.0"]),
        ("missing source", GOOD.replace("f = 1.0", ""), &["physics.f", "missing"]),
        ("missing end", GOOD.replace("right = { type = \"neumann\", gamma = 0.0 }", ""), &["bc.right", "missing"]),
        ("robin without beta", GOOD.replace("type = \"neumann\"", "type = \"robin\""), &["bc.right.beta", "missing"]),
        ("dirichlet with gamma", GOOD.replace("value = 0.0 }", "value = 0.0, gamma = 1.0 }"), &["bc.left.gamma"]),
        ("source and derive", format!("{GOOD}\n[exact]\nsolution = \"x\"\nderive = true\n"), &["physics.f", "derive"]),
        ("bad exact", format!("{GOOD}\n[exact]\nsolution = \"x +* 2\"\n"), &["exact.solution"]),
        ("singular", GOOD.replace("type = \"dirichlet\", value = 0.0", "type = \"neumann\", gamma = 0.0"), &["singular"]),
        ("2D count", GOOD_2D.replace("elements = [4, 3]", "elements = [4, 3, 2]"), &["space.elements", "expected 2 integers"]),
        ("2D knots shape", GOOD_2D.replace("elements = [4, 3]", "knots = [0, 0, 0, 1, 1, 1]"), &["space.knots", "2 lists"]),
        ("2D end conditions", GOOD_2D.replace("value = 0.0", "left = { type = \"dirichlet\", value = 0.0 }"), &["bc.left", "bc.value"]),
        ("2D missing value", GOOD_2D.replace("value = 0.0", ""), &["bc.value", "missing"]),
        ("projection with bc", GOOD_2D.replace("kind = \"poisson\"", "kind = \"projection\""), &["bc.value", "no boundary condition"]),
        ("bad quadrature", format!("{GOOD}\n[solver]\nquadrature = 0\n"), &["solver.quadrature", "1 to 64"]),
        ("bad method", format!("{GOOD}\n[solver]\nmethod = \"qr\"\n"), &["solver.method", "qr"]),
        ("bad output name", format!("{GOOD}\n[output]\nname = \"a/b\"\n"), &["output.name"]),
        ("cuda requested", format!("backend = \"cuda\"\n{GOOD}\n[solver]\nmethod = \"lu\"\n"), &["cuda", "CPU"]),
    ];
    for (label, text, needles) in cases {
        let err = fails(text);
        for n in *needles {
            assert!(err.contains(n), "{label}: error does not mention `{n}`:\n{err}");
        }
    }
}

#[test]
fn bench_iga_runs_a_small_sweep_and_writes_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let (json, png) = (dir.path().join("b.json"), dir.path().join("b.png"));
    let (ok, stdout, stderr) = galerkin(&[
        "bench-iga", "--degrees", "2", "--elements", "16,64,256", "--grid", "8", "--degrees-2d", "2", "--rhs", "1,4", "--rhs-elements", "64", "--reps", "1",
        "--full-degrees", "2", "--json", json.to_str().unwrap(), "--plot", png.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["rows"].as_array().unwrap().len(), 4);
    assert!(r["rows"][0]["cpu"]["factor"]["median"].as_f64().unwrap() > 0.0);
    assert!(r["rows"][0]["max_backward_error"].as_f64().unwrap() < 1e-12);
    assert_eq!(r["rhs"].as_array().unwrap().len(), 2);
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}
