//! The CLI end to end: every example runs and writes whole outputs; every bad input fails with a
//! message naming its cause and leaves no output behind.
mod support;

use std::path::Path;
use support::{fails, galerkin, repo};



fn run_example(name: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let toml = repo().join("examples").join(name);
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().to_str().unwrap(), "--quiet"]);
    assert!(ok, "{name} failed:\n{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    for o in report["outputs"].as_array().unwrap() {
        let p = Path::new(o["path"].as_str().unwrap());
        assert!(p.exists() && std::fs::metadata(p).unwrap().len() == o["bytes"].as_u64().unwrap(), "{name}: missing or different output {p:?}");
    }
    report
}

#[test]
fn poisson_2d_example_is_accurate() {
    let r = run_example("poisson-2d.toml");
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 5e-5, "{}", r["errors"]);
    assert!(r["solver"]["relative_residual"].as_f64().unwrap() <= 1e-10);
}

#[test]
fn poisson_3d_example_is_accurate() {
    let r = run_example("poisson-3d.toml");
    assert_eq!(r["space"]["degree"], 2);
    assert_eq!(r["mesh"]["cell_type"], "tetrahedron");
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 1e-3, "{}", r["errors"]);
}

#[test]
fn elasticity_3d_example_runs() {
    let r = run_example("elasticity-3d.toml");
    assert_eq!(r["space"]["components"], 3);
    assert!(r["solver"]["iterations"].as_u64().unwrap() > 0);
}

/// Every `examples/hex-p*.toml` runs; the cantilever's end deflection is beam theory's to 0.1 %
/// with ten bricks of degree 4, and the manufactured solution is met to its discretisation error.
#[test]
fn hierarchical_examples_are_accurate() {
    let names: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hex-p") && n.ends_with(".toml"))
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    for name in &names {
        let r = run_example(name);
        assert_eq!(r["space"]["family"], "hierarchical", "{name}");
    }
    let r = run_example("hex-p4-cantilever.toml");
    let tip = -r["points"][0]["value"][1].as_f64().unwrap();
    assert!((tip - 4.024e-3).abs() < 4.024e-6, "tip deflection {tip}");
    let r = run_example("hex-p3-manufactured.toml");
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 2e-3, "{}", r["errors"]);
    // p = 6 at the matrix-free partial level (the full level gives 2.301e-5 too).
    let r = run_example("hex-p6-partial.toml");
    assert_eq!(r["assembly"]["level"], "partial");
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 2.4e-5, "{}", r["errors"]);
    // A degree per region: each degree's cells integrated with their own element, listed in the notes.
    let r = run_example("hex-p2-p4-mixed.toml");
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 2e-3, "{}", r["errors"]);
    let notes: Vec<&str> = r["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.contains(&"integrated by degree groups: p = 2: 27 cells (20×20), p = 4: 27 cells (50×50)"), "{notes:?}");
}

#[test]
fn partial_assembly_example_is_accurate() {
    let r = run_example("poisson-hex-partial.toml");
    assert_eq!(r["assembly"]["level"], "partial");
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 1e-4, "{}", r["errors"]);
}

/// Q6 on 3³ cells with Gauss–Lobatto nodes and collocated quadrature: spectral accuracy (relative
/// L2 error 3.2e-8 with 6859 unknowns, where Q3 on 6³ cells gives 2.5e-5 with as many).
#[test]
fn spectral_element_example_is_accurate() {
    let r = run_example("poisson-hex-gll.toml");
    assert_eq!(r["space"]["degree"], 6);
    assert!(r["errors"]["relative_l2"].as_f64().unwrap() < 1e-7, "{}", r["errors"]);
}

#[test]
fn gmsh_example_runs() {
    let r = run_example("plate-with-hole.toml");
    assert_eq!(r["mesh"]["cell_type"], "triangle");
    assert!(r["mesh"]["cells"].as_u64().unwrap() > 500);
}


const GOOD: &str = r#"
[mesh]
generator = "rectangle"
n = [4, 4]
[physics]
kind = "poisson"
source = 1.0
[[bc]]
boundary = "xmin"
type = "dirichlet"
value = 0.0
"#;

#[test]
fn good_file_runs() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("good.toml");
    std::fs::write(&toml, GOOD).unwrap();
    let (ok, _, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().join("o").to_str().unwrap(), "--quiet"]);
    assert!(ok, "{stderr}");
}

#[test]
fn bad_inputs_name_their_cause() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("misspelled key", "[mesh]\ngenrator = \"box\"\n[physics]\nkind = \"poisson\"\n", &["genrator"]),
        ("unknown section", &format!("{GOOD}\n[solvr]\nmethod = \"cg\"\n"), &["solvr"]),
        ("wrong type", &GOOD.replace("n = [4, 4]", "n = \"four\""), &["mesh.n"]),
        ("wrong count", &GOOD.replace("n = [4, 4]", "n = [4, 4, 4]"), &["mesh.n", "2"]),
        ("zero divisions", &GOOD.replace("n = [4, 4]", "n = [0, 4]"), &["mesh.n"]),
        ("bad method", &format!("{GOOD}\n[solver]\nmethod = \"cgs\"\n"), &["solver.method", "cgs"]),
        ("bad rtol", &format!("{GOOD}\n[solver]\nrtol = 2.0\n"), &["solver.rtol"]),
        ("bad degree", &format!("{GOOD}\n[space]\ndegree = 7\n"), &["space.degree"]),
        ("bad expression", &GOOD.replace("source = 1.0", "source = \"sin(pi*x\""), &["physics.source"]),
        ("unknown variable", &GOOD.replace("source = 1.0", "source = \"w*x\""), &["physics.source", "w"]),
        ("unknown boundary", &GOOD.replace("boundary = \"xmin\"", "boundary = \"left\""), &["bc[0].boundary", "left"]),
        ("missing mesh file", &GOOD.replace("generator = \"rectangle\"\nn = [4, 4]", "file = \"nope.msh\""), &["nope.msh"]),
        ("elasticity without moduli", &GOOD.replace("kind = \"poisson\"\nsource = 1.0", "kind = \"elasticity\""), &["physics", "nu"]),
        ("cuda requested", &format!("backend = \"cuda\"\n{GOOD}"), &["cuda"]),
        ("not converged", &format!("{GOOD}\n[solver]\nmax_iter = 1\n"), &["did not converge"]),
        ("toml syntax", "[mesh\n", &["line 1"]),
        ("report point outside the mesh", &format!("{GOOD}\n[output]\npoints = [[5.0, 0.5, 0.0]]\n"), &["output.points[0]", "outside the mesh"]),
        ("hierarchical on quadrilaterals", &format!("{GOOD}\n[space]\nfamily = \"hierarchical\"\n"), &["space.family", "hexahedra"]),
        ("unknown modes", &format!("{GOOD}\n[space]\nfamily = \"hierarchical\"\nmodes = \"serendip\"\n"), &["space.modes", "serendip"]),
    ];
    for (label, text, needles) in cases {
        let err = fails(text);
        for n in *needles {
            assert!(err.contains(n), "{label}: error does not mention `{n}`:\n{err}");
        }
    }
}

#[test]
fn missing_problem_file_is_reported() {
    let (ok, _, stderr) = galerkin(&["run", "/nonexistent/problem.toml"]);
    assert!(!ok && stderr.contains("/nonexistent/problem.toml"), "{stderr}");
}

#[test]
fn devices_lists_the_cpu() {
    let (ok, stdout, _) = galerkin(&["devices"]);
    assert!(ok && stdout.contains("cpu"), "{stdout}");
}

#[test]
fn bench_runs_a_small_case() {
    let (ok, stdout, stderr) = galerkin(&["bench", "--case", "poisson-p1-tet", "--dofs", "2000", "--max-iter", "20"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("poisson-p1-tet"), "{stdout}");
}

/// A bad shape is named before any GPU is looked for; without a GPU the error says there is none.
#[test]
fn gram_schmidt_bench_names_a_bad_shape() {
    let (ok, _, stderr) = galerkin(&["bench", "--gram-schmidt", "--multi-shapes", "p2,q7"]);
    assert!(!ok && stderr.contains("q7"), "{stderr}");
    let (ok, _, stderr) = galerkin(&["bench", "--gram-schmidt", "--multi-shapes", "p2/40"]);
    assert!(!ok && stderr.contains("p2/40"), "{stderr}");
}

#[test]
fn invert_stops_resumes_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("examples/invert-small.toml")).unwrap()
        .replace("burn_in = 100", "burn_in = 5").replace("samples = 300", "samples = 15").replace("chains = 2", "chains = 1");
    let file = dir.path().join("invert.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let args = |extra: &[&str]| -> Vec<String> {
        ["invert", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--backend", "cpu"].iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let a = args(&["--stop-after", "8"]);
    let (ok, stdout, stderr) = galerkin(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok && stdout.contains("stopped") && stdout.contains("8 iterations"), "{stdout}\n{stderr}");
    let a = args(&["--resume"]);
    let (ok, stdout, stderr) = galerkin(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok && !stdout.contains("stopped") && stdout.contains("corrosion.depth mean"), "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["complete"], true);
    assert_eq!(report["chains"][0]["resumed_from"], 8);
    assert_eq!(std::fs::read_to_string(out.join("chains.csv")).unwrap().lines().count(), 16);
    let (ok, _, stderr) = galerkin(&["invert", repo().join("examples/heat-plain.toml").to_str().unwrap(), "--out", dir.path().join("bad").to_str().unwrap(), "--quiet"]);
    assert!(!ok && stderr.contains("camera"), "a heat file without a camera: {stderr}");
}
