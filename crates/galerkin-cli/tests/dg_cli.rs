//! `galerkin run` on DG problem files: every `examples/dg-*.toml` runs and writes whole outputs (CSV,
//! PNGs, convergence table, report); bad DG files fail with errors naming the key, and write nothing.
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn galerkin(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_galerkin")).args(args).output().expect("run galerkin");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn run(toml: &Path, dir: &Path) -> serde_json::Value {
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.to_str().unwrap(), "--quiet", "--backend", "cpu"]);
    assert!(ok, "{toml:?} failed:\n{stdout}\n{stderr}");
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn every_dg_example_runs_and_converges() {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dg-") && n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 3 && names.contains(&"dg-seed.toml".to_string()), "{names:?}");
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        let r = run(&repo().join("examples").join(&name), dir.path());
        // Each output is listed with its size and hash, and matches the file on disk.
        for o in r["outputs"].as_array().unwrap() {
            let p = Path::new(o["path"].as_str().unwrap());
            assert!(p.exists(), "{name}: missing output {p:?}");
            assert_eq!(std::fs::metadata(p).unwrap().len(), o["bytes"].as_u64().unwrap(), "{name}: {p:?} is not the file the report lists");
            assert_eq!(o["sha256"].as_str().unwrap().len(), 64);
        }
        let rel = r["errors"]["l2"].as_f64().unwrap() / r["errors"]["l2_exact"].as_f64().unwrap();
        assert!(rel < 1e-3, "{name}: relative L2 error {rel:.3e}");
        // The convergence table's last rates: L2 at least k (k + 1 for SIPG and odd k), H1 k.
        let k = r["degree"].as_f64().unwrap();
        let last = r["convergence"]["levels"].as_array().unwrap().last().unwrap().clone();
        let (l2, h1) = (last["rate_l2"].as_f64().unwrap(), last["rate_h1"].as_f64().unwrap());
        assert!(l2 > k - 0.2 && (h1 - k).abs() < 0.2, "{name}: rates {l2:.2} {h1:.2}");
        // The CSV has a header and both ends of every element, so each interface appears twice.
        let csv = PathBuf::from(r["outputs"][0]["path"].as_str().unwrap());
        assert_eq!(csv.extension().unwrap(), "csv", "{name}");
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.starts_with("x,element,u_h,u_exact\n"), "{name}");
        assert!(text.lines().count() > 2 * r["elements"].as_u64().unwrap() as usize, "{name}: too few samples");
        assert!(dir.path().join("convergence.json").exists() && dir.path().join("convergence.png").exists(), "{name}");
    }
}

#[test]
fn seed_example_reports_the_seed_scheme() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&repo().join("examples/dg-seed.toml"), dir.path());
    assert_eq!(r["method"], "sipg");
    assert_eq!(r["epsilon"], -1.0);
    assert_eq!(r["basis"], "monomial");
    assert_eq!(r["elements"], 10);
    assert_eq!(r["dofs"], 30);
    assert_eq!(r["penalty"]["sigma"], 2.0);
    assert!(r["asymmetry"].as_f64().unwrap() < 1e-14, "SIPG must be symmetric");
    assert!(r["errors"]["l2"].as_f64().unwrap() < 2e-4);
}

/// A good DG file with `patch` applied (a `(from, to)` replacement).
fn variant(from: &str, to: &str) -> String {
    let good = std::fs::read_to_string(repo().join("examples/dg-seed.toml")).unwrap();
    assert!(good.contains(from), "test setup: `{from}` not in dg-seed.toml");
    good.replacen(from, to, 1)
}

fn fails(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("bad.toml");
    std::fs::write(&toml, text).unwrap();
    let out = dir.path().join("out");
    let (ok, _, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--backend", "cpu"]);
    assert!(!ok, "expected failure for:\n{text}");
    assert!(!stderr.contains("panicked"), "panic instead of an error:\n{stderr}");
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(), "outputs written despite the error");
    stderr
}

#[test]
fn bad_dg_files_name_their_key() {
    let cases: Vec<(String, &[&str])> = vec![
        (variant("penalty = 2.0", "penalti = 2.0"), &["space", "penalti", "line"]),
        (variant("penalty = 2.0", "penalty = -1.0"), &["space.penalty", "non-negative"]),
        (variant("degree = 2", "degree = 7"), &["space.degree", "1 to 6"]),
        (variant("method = \"sipg\"", "method = \"ldg\""), &["space.method", "ldg"]),
        (variant("basis = \"monomial\"", "basis = \"bernstein\""), &["space.basis"]),
        (variant("penalty_degree = \"1\"", "penalty_degree = \"k^3\""), &["space.penalty_degree"]),
        (variant("kappa = 1.0", "kappa = \"x - 0.5\""), &["physics.kappa", "positive", "x = "]),
        (variant("kappa = 1.0", "kappa = 1.0\nreaction = \"-1\""), &["physics.reaction", "non-negative"]),
        (variant("kappa = 1.0", "kappa = \"1/(x - x)\""), &["physics.kappa"]),
        (variant("source = \"exp", "source = \"sin(y\" # \"exp"), &["expression"]),
        (variant("n = 10", "n = 0"), &["mesh.n"]),
        (variant("n = 10", "n = 10\nrandom = 1.5"), &["mesh.random"]),
        (variant("n = 10", "n = 10\ngrading = -2.0"), &["mesh.grading"]),
        (variant("generator = \"interval\"", "generator = \"box\""), &["mesh.generator", "interval"]),
        (variant("boundary = \"xmax\"", "boundary = \"xmin\""), &["bc[1].boundary", "second condition"]),
        (variant("boundary = \"xmax\"", "boundary = \"ymax\""), &["bc[1].boundary"]),
        (variant("type = \"dirichlet\"\nvalue = 0.0", "type = \"robin\"\nvalue = 0.0"), &["bc[1].type"]),
        (variant("method = \"direct\"", "method = \"cg\"\n[space2]"), &["space2"]),
        (variant("[solver]\nmethod = \"direct\"", "[solver]\nmethod = \"direct\"\nrtol = 2.0"), &["solver.rtol"]),
        (variant("method = \"sipg\"", "method = \"nipg\"").replace("method = \"direct\"", "method = \"cg\""), &["solver.method", "symmetric"]),
        (variant("convergence = 4", "convergence = 40"), &["output.convergence"]),
        (variant("name = \"dg-seed\"", "name = \"a/b\""), &["output.name"]),
        (variant("solution = \"(1 - x)", "solution = \"(1 - q)"), &["exact.solution", "`q`"]),
    ];
    for (text, needles) in cases {
        let err = fails(&text);
        for n in needles {
            assert!(err.contains(n), "error for case {needles:?} does not contain `{n}`:\n{err}");
        }
    }
    // Both ends need a condition.
    let text = variant("[[bc]]\nboundary = \"xmax\"\ntype = \"dirichlet\"\nvalue = 0.0\n", "");
    assert!(fails(&text).contains("xmax"));
    // Thomas cannot run on the GPU: asked for explicitly, that is an error, not a silent switch.
    let text = variant("method = \"direct\"", "method = \"direct\"\ndirect = \"thomas\"");
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("t.toml");
    std::fs::write(&toml, &text).unwrap();
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().join("o").to_str().unwrap(), "--quiet", "--backend", "auto"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("block-thomas"), "{stdout}");
}
