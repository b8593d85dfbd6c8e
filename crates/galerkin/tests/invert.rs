//! `galerkin invert` (issue 13): material updates of the heat operators equal fresh builds at every
//! level (the lattice without re-integrating); the forward model equals the heat run of the same
//! file; the small example's posterior contains the truth; an interrupted inversion resumes to the
//! same chains; bad files are errors naming the key. Written once over the backend.
mod common;
use common::rel_diff;
use galerkin::backend::{Backend, BackendKind};
use galerkin::inverse::run::{run_text, InvertOptions};
use galerkin::inverse::{Camera, HeatForward, Parameter};
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Coefficient;
use galerkin::problem::heat::config::HeatFile;
use galerkin::problem::heat::run::prepare;
use galerkin::problem::heat::{HeatLoads, HeatSetup, HeatStepper, Laser, Load, Schedule};
use galerkin::problem::linear::Boundary;
use galerkin::problem::{run_file, RunOptions};
use galerkin::space::FunctionSpace;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn examples() -> PathBuf {
    if Path::new("examples/invert-small.toml").exists() {
        Path::new("examples").to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    }
}

fn kind_of(name: &str) -> BackendKind {
    if name == "cpu" {
        BackendKind::Cpu
    } else {
        BackendKind::Cuda
    }
}

fn options(out: &Path, kind: BackendKind) -> InvertOptions {
    InvertOptions { backend: Some(kind), out_dir: out.to_path_buf(), progress: false, resume: false, stop_after: None }
}

fn small_text() -> String {
    std::fs::read_to_string(examples().join("invert-small.toml")).unwrap()
}

/// Steel with an air layer above `z0` (tags), on a box of tetrahedra.
fn tagged(mesh: &Mesh, z0: f64) -> Mesh {
    let mut m = mesh.clone();
    m.cell_tags = (0..m.num_cells())
        .map(|c| {
            let z = m.cell(c).iter().map(|&v| m.coords[v][2]).sum::<f64>() / m.cell(c).len() as f64;
            i32::from(z > z0)
        })
        .collect();
    m
}

#[test]
fn material_updates_equal_fresh_builds_at_every_level() {
    let base = generate::box_mesh(6, 5, 4, [0.0; 3], [0.02, 0.02, 0.01], CellType::Tetrahedron).unwrap();
    let (a, b) = (tagged(&base, 0.006), tagged(&base, 0.0035));
    let table = [(7850.0 * 475.0, 45.0), (1.2 * 1005.0, 0.026)];
    let per_region = |f: &dyn Fn(&(f64, f64)) -> f64| Coefficient::PerRegion(table.iter().enumerate().map(|(i, m)| (i as i32, f(m))).collect());
    let setup = HeatSetup { rhoc: per_region(&|m| m.0), k: per_region(&|m| m.1), zero_dirichlet: vec![Boundary::from("zmin")], dt: 0.2, theta: 0.5 };
    let loads = HeatLoads::default()
        .push(Load::Laser { on: vec![Boundary::from("zmax")], laser: Laser { power: 5.0, radius: 2e-3, centre: [0.01, 0.01, 0.01] }, schedule: Schedule::default() })
        .push(Load::Robin { on: vec![Boundary::from("zmax")], h: 10.0, ambient: 20.0 });
    let index_b: Vec<u8> = b.cell_tags.iter().map(|&t| t as u8).collect();
    let (sa, sb) = (Arc::new(FunctionSpace::lagrange(Arc::new(a), 1, 1).unwrap()), Arc::new(FunctionSpace::lagrange(Arc::new(b), 1, 1).unwrap()));
    let t0 = vec![20.0; sa.ndofs()];
    on_backends!(|be| {
        for level in [AssemblyLevel::Full, AssemblyLevel::Element, AssemblyLevel::Partial, AssemblyLevel::None] {
            let what = format!("{} {}", be.name(), level.name());
            let mut updated = HeatStepper::with_loads(be, sa.clone(), &setup, &loads, level).unwrap();
            let fast = updated.set_materials(&index_b, &table).unwrap();
            assert_eq!(fast, level == AssemblyLevel::None, "{what}: only the lattice relabels without integrating");
            let fresh = HeatStepper::with_loads(be, sb.clone(), &setup, &loads, level).unwrap();
            let (mut u, mut v) = (be.from_host(&t0).unwrap(), be.from_host(&t0).unwrap());
            let ru = updated.run_recorded(&mut u, 4, |_, _| Ok(())).unwrap();
            let rv = fresh.run_recorded(&mut v, 4, |_, _| Ok(())).unwrap();
            let d = rel_diff(&be.to_host(&u).unwrap(), &be.to_host(&v).unwrap());
            assert!(d < 1e-9, "{what}: updated and fresh steppers differ by {d:e}");
            for (x, y) in ru.iter().zip(&rv) {
                let (bx, by) = (x.balance.unwrap(), y.balance.unwrap());
                assert!((bx.stored_change - by.stored_change).abs() <= 1e-8 * by.stored_change.abs(), "{what}: stored heat {} against {}", bx.stored_change, by.stored_change);
                assert!(bx.relative < 1e-7, "{what}: energy balance after the update {}", bx.relative);
            }
        }
        let mut s = HeatStepper::with_loads(be, sa.clone(), &setup, &loads, AssemblyLevel::None).unwrap();
        assert!(s.set_materials(&index_b[1..], &table).is_err(), "wrong length");
        assert!(s.set_materials(&vec![2; index_b.len()], &table).is_err(), "index outside the table");
        assert!(s.set_materials(&index_b, &[(1.0, 0.0), (1.0, 1.0)]).is_err(), "zero conductivity");
    });
}

#[test]
fn forward_model_equals_the_heat_run_of_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let probes = [[0.0, 0.0, 0.0127], [0.003, 0.0, 0.0127], [0.0, 0.0, 0.0]];
    let text = small_text().replace("[solver]\nrtol = 1e-8", "[solver]\nrtol = 1e-11") + "\n[output]\nprobes = [[0.0, 0.0, 0.0127], [0.003, 0.0, 0.0127], [0.0, 0.0, 0.0]]\npvd = false\n";
    let file = dir.path().join("forward.toml");
    std::fs::write(&file, &text).unwrap();
    on_backends!(|be| {
        let out = dir.path().join(format!("run-{}", be.name()));
        run_file(&file, &RunOptions { backend: Some(kind_of(be.name())), out_dir: out.clone(), progress: false }).unwrap();
        let csv = std::fs::read_to_string(out.join("temperature-probes.csv")).unwrap();
        let last: Vec<f64> = csv.lines().last().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
        assert!((last[0] - 10.0).abs() < 1e-9, "the run ends at t_end = 10 s (a frame time)");

        let f = HeatFile::parse(&text, "forward.toml").unwrap();
        let p = prepare(&f, dir.path()).unwrap();
        let camera = Camera::new(&p.space, "zmax", (8, 8), 3, 0.1, 0.1).unwrap();
        let weights: Vec<Vec<(usize, f64)>> = probes.iter().map(|&x| p.space.point_weights(x).unwrap()).collect();
        let mut fwd = HeatForward::new(be, &f, &p, camera, &[5.0, 10.0], &[Parameter::CorrosionDepth]).unwrap();
        // A sample elsewhere first, so the run at the file's depth follows a material update.
        fwd.images(&[3e-3]).unwrap();
        let images = fwd.images(&[6.35e-3]).unwrap();
        assert_eq!(images.len(), 2 * 64);
        let state = fwd.state_to_host().unwrap();
        for (k, w) in weights.iter().enumerate() {
            let (a, b) = (w.iter().map(|&(n, c)| c * state[n]).sum::<f64>(), last[1 + k]);
            assert!((a - b).abs() <= 1e-7 * b.abs(), "{}: probe {k}: forward model {a} against the heat run {b}", be.name());
        }
        assert!(images.iter().all(|&t| t > 20.0), "the laser warms every pixel");
    });
}

#[test]
fn small_example_posterior_contains_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    on_backends!(|be| {
        let out = dir.path().join(be.name());
        let r = run_text(&small_text(), &examples().join("invert-small.toml"), &options(&out, kind_of(be.name()))).unwrap();
        let what = be.name();
        assert!(r.complete);
        assert_eq!(r.forward.reintegrated, 0, "{what}: the lattice relabels every sample");
        let p = &r.parameters[0];
        let s = p.posterior.as_ref().unwrap();
        println!("{what}: mean {:.4e}, sd {:.2e}, 95% {:?}, ESS {:.0}, R-hat {:.3}, {} runs, {:.4} s per run", s.mean, s.sd, s.interval95, s.ess, s.rhat, r.forward.runs, r.forward.seconds_per_run);
        assert_eq!(p.truth_within_two_sd, Some(true), "{what}: truth 3.175e-3 not within 2 sd of {} ± {}", s.mean, s.sd);
        assert!(s.interval95[0] < s.mean && s.mean < s.interval95[1]);
        assert!(s.ess > 40.0 && s.rhat < 1.1, "{what}: ESS {} R-hat {}", s.ess, s.rhat);
        for c in &r.chains {
            assert!(c.acceptance_rate > 0.15 && c.acceptance_rate < 0.75, "{what}: acceptance {}", c.acceptance_rate);
        }
        let csv = std::fs::read_to_string(out.join("chains.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 2 * 300);
        for f in ["trace-corrosion-depth.png", "histogram-corrosion-depth.png", "fit.png", "observed.csv", "report.json"] {
            assert!(out.join(f).metadata().unwrap().len() > 100, "{what}: {f}");
        }
        // The observed images read back from the CSV the run wrote drive the same chain.
        let again = small_text().replace("[data.synthetic]\ntruth = [3.175e-3]\nn = [16, 16, 10]\nseed = 7", &format!("[data]\nfile = \"{}\"", out.join("observed.csv").display()))
            .replace("samples = 300", "samples = 20").replace("burn_in = 100", "burn_in = 5").replace("chains = 2", "chains = 1");
        let r2 = run_text(&again, &examples().join("invert-small.toml"), &options(&dir.path().join(format!("{what}-file")), kind_of(what))).unwrap();
        assert!(r2.data.truth.is_none() && r2.complete);
    });
}

#[test]
fn interrupted_inversion_resumes_to_the_same_chains() {
    let dir = tempfile::tempdir().unwrap();
    let text = small_text().replace("samples = 300", "samples = 30").replace("burn_in = 100", "burn_in = 10");
    let file = examples().join("invert-small.toml");
    let whole = dir.path().join("whole");
    run_text(&text, &file, &options(&whole, BackendKind::Cpu)).unwrap();
    let cut = dir.path().join("cut");
    let mut o = options(&cut, BackendKind::Cpu);
    o.stop_after = Some(25);
    let first = run_text(&text, &file, &o).unwrap();
    assert!(!first.complete && first.chains.len() == 2 && first.chains.iter().all(|c| c.iterations == 25));
    o.stop_after = Some(10);
    o.resume = true;
    let second = run_text(&text, &file, &o).unwrap();
    assert!(!second.complete && second.chains.iter().all(|c| c.iterations == 35 && c.resumed_from == Some(25)));
    o.stop_after = None;
    let last = run_text(&text, &file, &o).unwrap();
    assert!(last.complete && last.chains.iter().all(|c| c.resumed_from == Some(35) && c.iterations == 40));
    let read = |d: &Path| std::fs::read_to_string(d.join("chains.csv")).unwrap();
    assert_eq!(read(&whole), read(&cut), "the resumed chains are the uninterrupted ones");
    // Another [mcmc] table does not silently continue the old chains.
    let changed = text.replace("seed = 3", "seed = 4");
    let e = run_text(&changed, &file, &o).unwrap_err().to_string();
    assert!(e.contains("checkpoint"), "{e}");
}

#[test]
fn bad_inversion_files_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let file = examples().join("invert-small.toml");
    let base = small_text();
    let cases: [(&str, &str, &str); 8] = [
        ("[data.synthetic]\ntruth = [3.175e-3]\nn = [16, 16, 10]\nseed = 7", "", "data"),
        ("hi = 0.0127", "hi = 0.02", "parameter[0].prior"),
        ("sigma = 0.1", "sigma = 0.0", "sigma"),
        ("name = \"corrosion.depth\"", "name = \"corrosion.width\"", "parameter[0].name"),
        ("frames = [5.0, 10.0]", "frames = [5.0, 10.25]", "camera.frames"),
        ("truth = [3.175e-3]", "truth = [3.175e-3, 1.0]", "data.synthetic.truth"),
        ("[data.synthetic]\ntruth = [3.175e-3]\nn = [16, 16, 10]\nseed = 7", "[data]\nfile = \"missing.csv\"", "missing.csv"),
        ("chains = 2", "chains = 0", "mcmc.chains"),
    ];
    for (from, to, want) in cases {
        assert!(base.contains(from), "{from}");
        let e = run_text(&base.replace(from, to), &file, &options(dir.path(), BackendKind::Cpu)).unwrap_err().to_string();
        assert!(e.contains(want), "`{to}`: error `{e}` does not name `{want}`");
    }
}

#[test]
fn the_seed_study_file_is_valid() {
    let text = std::fs::read_to_string(examples().join("invert-corrosion.toml")).unwrap();
    let heat = HeatFile::parse(&text, "invert-corrosion.toml").unwrap();
    let inv = galerkin::inverse::config::InvertFile::parse(&text, "invert-corrosion.toml").unwrap();
    assert_eq!(inv.mcmc.chains * inv.mcmc.samples, 2500, "the seed's 2,500 recorded samples");
    assert_eq!(inv.mcmc.burn_in, 200);
    let steps = galerkin::inverse::forward::frame_steps(&inv.camera.unwrap().frames, heat.time.dt).unwrap();
    assert_eq!(*steps.last().unwrap(), 100);
}

/// A float64 `.npy` in C order.
fn write_npy_f64(path: &Path, shape: &[usize], data: &[f64]) {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    common::write_npy(path, shape, "<f8", false, &bytes);
}

#[test]
fn observed_images_from_csv_and_npy_agree_and_bad_files_are_named() {
    use galerkin::inverse::data;
    let dir = tempfile::tempdir().unwrap();
    let (times, pixels) = ([2.0, 4.5], (3, 2));
    let images: Vec<f64> = (0..12).map(|k| 20.0 + 0.1 * k as f64).collect();
    let csv = dir.path().join("obs.csv");
    data::write_csv(&csv, &times, pixels, &images).unwrap();
    assert_eq!(data::read(&csv, &times, pixels).unwrap(), images);
    let npy = dir.path().join("obs.npy");
    write_npy_f64(&npy, &[2, 2, 3], &images);
    assert_eq!(data::read(&npy, &times, pixels).unwrap(), images);
    write_npy_f64(&npy, &[2, 3, 2], &images);
    let e = data::read(&npy, &times, pixels).unwrap_err().to_string();
    assert!(e.contains("shape"), "{e}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let short: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
    std::fs::write(&csv, short).unwrap();
    let e = data::read(&csv, &times, pixels).unwrap_err().to_string();
    assert!(e.contains("no finite temperature") && e.contains("frame 1"), "{e}");
    std::fs::write(&csv, "time,i,j,temperature\n3.0,0,0,20\n").unwrap();
    let e = data::read(&csv, &times, pixels).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("frames"), "{e}");
}
