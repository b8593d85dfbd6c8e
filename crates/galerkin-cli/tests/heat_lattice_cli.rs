//! `galerkin run examples/heat-lattice.toml`: a heat problem file on the direct lattice (no mesh)
//! follows the exact decay of its mode, writes `.vti` frames listed by the PVD, and says so.
mod support;

use support::{galerkin, repo};

#[test]
fn heat_lattice_example_decays_at_the_exact_rate() {
    let dir = tempfile::tempdir().unwrap();
    let toml = repo().join("examples/heat-lattice.toml");
    let (ok, stdout, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", dir.path().to_str().unwrap(), "--quiet"]);
    assert!(ok, "heat-lattice failed:\n{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(report["path"], "lattice", "{report}");
    let csv = std::fs::read_to_string(dir.path().join("temperature-probes.csv")).unwrap();
    let last: Vec<f64> = csv.lines().last().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    let (t, u) = (last[0], last[1]);
    let exact = (-3.0 * std::f64::consts::PI.powi(2) * t).exp();
    assert!((t - 0.05).abs() < 1e-12, "last probe time {t}");
    assert!((u - exact).abs() < 0.02 * exact, "centre {u} against exp(-3π²t) = {exact}");
    let pvd = std::fs::read_to_string(dir.path().join("temperature.pvd")).unwrap();
    for step in [0, 10, 20] {
        let f = format!("temperature_{step:06}.vti");
        assert!(pvd.contains(&f) && dir.path().join(&f).exists(), "frame {f}");
    }
    assert!(!dir.path().join("temperature_000020.vtu").exists(), "no VTU on the lattice");
}
