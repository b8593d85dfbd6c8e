//! Heat problem files on the direct lattice (`problem::heat::direct`): a generated box at level
//! `none` with Dirichlet sides, a constant source, an expression start, shapes and corrosion runs
//! without the mesh and gives the mesh path's temperatures (every node of the last frame, to
//! 1e-10) and probes, for Kuhn tetrahedra and hexahedra, on the CPU and the GPU; its `.vti` frames
//! parse back and the PVD lists them; Robin convection, a heat flux with a time factor and a
//! Gaussian laser switched on and off inside steps give the mesh path's temperatures too; what the
//! lattice lacks runs on the mesh with the reason in the report.
mod common;
use common::rel_diff;
use galerkin::backend::{Backend, BackendKind};
use galerkin::io::vti::read_vti;
use galerkin::mesh::{generate, CellType};
use galerkin::problem::heat::output::read_vtu_point_field;
use galerkin::problem::heat::run::run_text_on;
use galerkin::problem::RunOptions;
use std::path::Path;

const FILE: &str = r#"
title = "direct lattice"
[mesh]
generator = "box"
cell = "CELL"
n = [6, 5, 4]
upper = [1.0, 0.8, 0.5]
[physics]
kind = "heat"
source = 3.0
[time]
dt = 0.01
steps = 6
theta = 0.5
output_every = 2
[initial]
expression = "1 + x*y + sin(3*z)"
[[material]]
name = "a"
k = 1.0
rho = 1.0
c = 1.0
[[material]]
name = "b"
k = 0.05
rho = 0.5
c = 0.6
shape = { kind = "layer", axis = "z", from = 0.3, to = 1.0 }
[[material]]
name = "c"
k = 7.0
rho = 2.0
c = 1.0
shape = { kind = "sphere", centre = [0.5, 0.4, 0.2], radius = 0.25 }
[corrosion]
face = "zmin"
depth = 0.15
radius = 0.3
[[bc]]
type = "dirichlet"
boundary = "zmin"
value = 2.0
[[bc]]
type = "dirichlet"
boundary = ["xmax"]
value = "x + y"
[solver]
rtol = 1e-13
[assembly]
level = "none"
[output]
probes = [[0.5, 0.4, 0.25], [0.13, 0.77, 0.41]]
"#;

fn cell_name(cell: CellType) -> &'static str {
    if cell == CellType::Hexahedron {
        "hexahedron"
    } else {
        "tetrahedron"
    }
}

fn run(text: &str, dir: &Path, kind: BackendKind, lattice: bool) -> serde_json::Value {
    let file = dir.join("problem.toml");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(&file, text).unwrap();
    let opts = RunOptions { backend: Some(kind), out_dir: dir.join("out"), progress: false };
    run_text_on(text, &file, &opts, lattice).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap()).unwrap()
}

fn probes(dir: &Path) -> Vec<f64> {
    std::fs::read_to_string(dir.join("out/temperature-probes.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .flat_map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()).collect::<Vec<_>>())
        .collect()
}

/// The first backend's (CPU) lattice temperatures are kept; every later backend's (GPU) must equal
/// them to 1e-10.
fn same_as_first_backend(first: &mut Option<Vec<f64>>, t: &[f64], label: &str) {
    match first {
        None => *first = Some(t.to_vec()),
        Some(c) => {
            let d = rel_diff(c, t);
            assert!(d < 1e-10, "{label}: the GPU lattice differs from the CPU's by {d:e}");
        }
    }
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// The same file on the direct lattice and on the mesh: same temperatures and probes.
#[test]
fn problem_files_on_the_direct_lattice_match_the_mesh_path() {
    let dir = tempfile::tempdir().unwrap();
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let text = FILE.replace("CELL", cell_name(cell));
        let mesh = generate::box_mesh(6, 5, 4, [0.0; 3], [1.0, 0.8, 0.5], cell).unwrap();
        let mut lattice_cpu: Option<Vec<f64>> = None;
        on_backends!(|be| {
            let kind = if be.name() == "cpu" { BackendKind::Cpu } else { BackendKind::Cuda };
            let label = format!("{cell:?} on {}", be.name());
            let (dl, dm) = (dir.path().join(format!("{label}-lattice")), dir.path().join(format!("{label}-mesh")));
            let rl = run(&text, &dl, kind, true);
            let rm = run(&text, &dm, kind, false);
            assert_eq!(rl["path"], "lattice", "{label}");
            assert_eq!(rm["path"], "mesh (asked for)", "{label}");
            assert_eq!(rl["dofs"], rm["dofs"]);
            assert_eq!(rl["cells"], rm["cells"]);
            // The materials per cell (shapes and corrosion at the centroids) are the mesh's.
            for (a, b) in rl["materials"].as_array().unwrap().iter().zip(rm["materials"].as_array().unwrap()) {
                assert_eq!(a["cells"], b["cells"], "{label}: cells of `{}`", a["name"]);
            }
            let air = rl["materials"].as_array().unwrap().iter().find(|m| m["name"] == "air").unwrap()["cells"].as_u64().unwrap();
            assert!(air > 0, "{label}: the corrosion made air cells");
            // Every frame of the PVD is a .vti that parses back on the box's grid.
            let pvd = std::fs::read_to_string(dl.join("out/temperature.pvd")).unwrap();
            for step in [0, 2, 4, 6] {
                assert!(pvd.contains(&format!("temperature_{step:06}.vti")), "{label}: PVD lists step {step}");
            }
            let (grid, fields) = read_vti(&dl.join("out/temperature_000006.vti")).unwrap();
            assert_eq!(grid.points, [7, 6, 5]);
            assert!((grid.spacing[1] - 0.16).abs() < 1e-15 && grid.origin == [0.0; 3]);
            assert_eq!(fields[0].0, "temperature");
            let tl = &fields[0].1;
            let tm = read_vtu_point_field(&dm.join("out/temperature_000006.vtu"), "temperature", &mesh).unwrap();
            let d = rel_diff(&tm, tl);
            println!("{label}: {} iterations (lattice) vs {} (mesh), last frame differs by {d:.2e}", rl["total_iterations"], rm["total_iterations"]);
            assert!(d < 1e-10, "{label}: temperatures differ by {d:e}");
            // Fixed sides at their values, the rest moved.
            for (v, x) in mesh.coords.iter().enumerate() {
                if x[0] == 1.0 {
                    assert!((tl[v] - (x[0] + x[1])).abs() < 1e-14, "{label}: xmax node {v}");
                } else if x[2] == 0.0 {
                    assert_eq!(tl[v], 2.0, "{label}: zmin node {v}");
                }
            }
            let (pl, pm) = (probes(&dl), probes(&dm));
            let dp = max_abs_diff(&pl, &pm);
            assert!(dp < 1e-10, "{label}: probes differ by {dp:e}");
            let steps = rl["per_step"].as_array().unwrap();
            assert_eq!(steps.len(), 6);
            assert!(steps.iter().all(|s| s["iterations"].as_u64().unwrap() > 2), "{label}: every step iterates");
            same_as_first_backend(&mut lattice_cpu, tl, &label);
        });
        drop(lattice_cpu);
    }
}

/// What the lattice does not take runs on the mesh, and the report says why.
#[test]
fn unsupported_conditions_fall_back_to_the_mesh_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let base = FILE.replace("CELL", "tetrahedron").replace("steps = 6", "steps = 1");
    let laser = format!("{base}\n[[bc]]\ntype = \"laser\"\nboundary = 6\npower = 1.0\nradius = 0.1\ncentre = [0.5, 0.4, 0.5]\n");
    let cases = [
        (laser, "mesh (boundary Id(6) is not a box side by name)"),
        (base.replace("source = 3.0", "source = \"x\""), "mesh (a source expression)"),
        (base.replace("level = \"none\"", "level = \"partial\""), "mesh (assembly level `partial`)"),
        (base.replace("value = \"x + y\"", "value = \"x + t\""), "mesh (bc[1].value: a Dirichlet value changing in time)"),
    ];
    for (k, (text, why)) in cases.iter().enumerate() {
        let r = run(text, &dir.path().join(format!("case{k}")), BackendKind::Cpu, true);
        assert_eq!(r["path"], *why);
    }
}

/// Robin convection on two sides, a flux of x with a time factor, a Gaussian laser switched on and
/// off inside steps: the lattice's face terms give the mesh path's temperatures (CPU, GPU).
#[test]
fn robin_flux_and_laser_on_the_direct_lattice_match_the_mesh_path() {
    let dir = tempfile::tempdir().unwrap();
    let faces = r#"
[[bc]]
type = "robin"
boundary = ["ymin", "xmin"]
h = 25.0
ambient = 0.5
[[bc]]
type = "flux"
boundary = "ymax"
value = "3 * x"
factor = "1 + 10 * t"
[[bc]]
type = "laser"
boundary = "zmax"
power = 2.0
radius = 0.2
centre = [0.5, 0.4, 0.5]
on = 0.005
off = 0.037
"#;
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let text = format!("{}{faces}", FILE.replace("CELL", cell_name(cell)));
        let mesh = generate::box_mesh(6, 5, 4, [0.0; 3], [1.0, 0.8, 0.5], cell).unwrap();
        let dp = dir.path().join(format!("{cell:?}-no-faces"));
        run(&FILE.replace("CELL", cell_name(cell)), &dp, BackendKind::Cpu, true);
        let plain = read_vti(&dp.join("out/temperature_000006.vti")).unwrap().1.remove(0).1;
        let mut lattice_cpu: Option<Vec<f64>> = None;
        on_backends!(|be| {
            let kind = if be.name() == "cpu" { BackendKind::Cpu } else { BackendKind::Cuda };
            let label = format!("{cell:?} faces on {}", be.name());
            let (dl, dm) = (dir.path().join(format!("{label}-lattice")), dir.path().join(format!("{label}-mesh")));
            let rl = run(&text, &dl, kind, true);
            let rm = run(&text, &dm, kind, false);
            assert_eq!(rl["path"], "lattice", "{label}");
            let (_, fields) = read_vti(&dl.join("out/temperature_000006.vti")).unwrap();
            let tl = &fields[0].1;
            let tm = read_vtu_point_field(&dm.join("out/temperature_000006.vtu"), "temperature", &mesh).unwrap();
            // Without the face terms the temperatures differ by far more than the tolerance.
            assert!(rel_diff(&plain, tl) > 1e-4, "{label}: the face terms change the temperatures");
            let d = rel_diff(&tm, tl);
            println!("{label}: {} iterations (lattice) vs {} (mesh), last frame differs by {d:.2e}", rl["total_iterations"], rm["total_iterations"]);
            assert!(d < 1e-10, "{label}: temperatures differ by {d:e}");
            let dp = max_abs_diff(&probes(&dl), &probes(&dm));
            assert!(dp < 1e-10, "{label}: probes differ by {dp:e}");
            same_as_first_backend(&mut lattice_cpu, tl, &label);
        });
        drop(lattice_cpu);
    }
}
