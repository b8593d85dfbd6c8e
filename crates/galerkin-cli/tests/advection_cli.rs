//! `galerkin run` on the DG advection examples: each runs on the CPU, reaches its error, writes
//! whole outputs (VTU, residual plot, report) and prints the summary; a bad file fails naming the
//! key and writes nothing.
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn galerkin(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_galerkin")).args(args).output().expect("run galerkin");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// (example, backend, largest relative L2 error).
const EXAMPLES: [(&str, f64); 2] = [("advection-rotating.toml", 2e-4), ("advection-quads.toml", 1e-4)];

fn check(name: &str, backend: &str, bound: f64) {
    let dir = tempfile::tempdir().unwrap();
    let toml = repo().join("examples").join(name);
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().to_str().unwrap(), "--quiet", "--backend", backend]);
    assert!(ok, "{name} on {backend} failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("space        dg degree 2") && stdout.contains("block-jacobi"), "{name}: summary\n{stdout}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    let rel = r["errors"]["relative_l2"].as_f64().unwrap();
    eprintln!("{name} on {backend}: relative L2 error {rel:.3e}, {} iterations", r["solver"]["iterations"]);
    assert!(rel < bound, "{name} on {backend}: relative L2 error {rel:.3e} ≥ {bound:.1e}");
    assert!(r["solver"]["relative_residual"].as_f64().unwrap() <= 1e-10);
    let vtu = std::fs::read_to_string(dir.path().join("solution.vtu")).unwrap();
    assert!(vtu.contains("<VTKFile") && vtu.contains("Name=\"u\"") && vtu.contains("Name=\"u_mean\""), "{name}: VTU");
    for o in r["outputs"].as_array().unwrap() {
        let p = Path::new(o["path"].as_str().unwrap());
        assert_eq!(std::fs::metadata(p).unwrap().len(), o["bytes"].as_u64().unwrap(), "{name}: {p:?}");
    }
}

#[test]
fn advection_examples_reach_their_error_on_the_cpu() {
    for (name, bound) in EXAMPLES {
        check(name, "cpu", bound);
    }
}

/// The same files on the GPU (`auto` picks it); skipped without one unless GALERKIN_REQUIRE_GPU=1.
#[test]
fn advection_examples_on_the_gpu() {
    if galerkin::backend::cuda::test_gpu().is_none() {
        return;
    }
    for (name, bound) in EXAMPLES {
        check(name, "auto", bound);
    }
}

#[test]
fn bad_advection_file_names_the_key_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("examples/advection-quads.toml")).unwrap().replace("degree = 2", "degree = 7");
    let toml = dir.path().join("bad.toml");
    std::fs::write(&toml, text).unwrap();
    let out = dir.path().join("out");
    let (ok, _, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu"]);
    assert!(!ok && stderr.contains("space.degree"), "{stderr}");
    assert!(!out.join("report.json").exists());
}
