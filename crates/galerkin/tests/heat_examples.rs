//! The heat problem files end to end on every backend (`galerkin run`'s code path): the examples
//! balance their energy every step and agree between CPU and GPU; a run restarts from its own VTU;
//! materials from a NumPy voxel array; bad keys and values are errors naming them.
mod common;
use galerkin::backend::{Backend, BackendKind};
use galerkin::mesh::{generate, CellType};
use galerkin::problem::heat::{Material, MaterialMap, Voxels};
use galerkin::problem::{run_file, RunOptions};
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    if Path::new("examples/heat-plain.toml").exists() {
        Path::new("examples").to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    }
}

fn run(problem: &Path, out: &Path, kind: BackendKind) -> serde_json::Value {
    let opts = RunOptions {
        backend: Some(kind),
        out_dir: out.to_path_buf(),
        progress: false,
    };
    run_file(problem, &opts).unwrap_or_else(|e| panic!("{}: {e}", problem.display()));
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

fn probes(out: &Path) -> Vec<Vec<f64>> {
    std::fs::read_to_string(out.join("temperature-probes.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn heat_examples_balance_and_agree_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let mut reference: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
    on_backends!(|be| {
        let kind = if be.name() == "cpu" {
            BackendKind::Cpu
        } else {
            BackendKind::Cuda
        };
        for name in ["heat-plain", "heat-gusset"] {
            let out = dir.path().join(format!("{name}-{}", be.name()));
            let r = run(&examples().join(format!("{name}.toml")), &out, kind);
            let what = format!("{name} on {}", be.name());
            let rel = r["max_balance_relative"].as_f64().unwrap();
            println!(
                "{what}: {} steps, {} iterations, balance {rel:.2e}",
                r["steps"], r["total_iterations"]
            );
            assert!(rel < 1e-7, "{what}: energy balance {rel}");
            assert!(r["per_step"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["iterations"].as_u64().unwrap() > 0));
            let p = probes(&out);
            assert!(
                out.join("temperature.pvd").exists()
                    && out.join("temperature-probes.png").exists()
                    && out.join("temperature-face-0.png").exists()
            );
            if name == "heat-gusset" {
                // 10 W for 10 s, all of it on the face: 100 J in; the corrosion made air cells.
                let heat = r["heat_in_total"].as_f64().unwrap();
                assert!((heat - 100.0).abs() < 0.5, "{what}: heat in {heat}");
                let air = r["materials"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["name"] == "air")
                    .unwrap()["cells"]
                    .as_u64()
                    .unwrap();
                assert!(air > 0);
                let last = p.last().unwrap();
                assert!(
                    last[1] > last[2] + 20.0 && last[2] > 20.0,
                    "{what}: the spot must be hottest: {last:?}"
                );
            }
            if name == "heat-plain" {
                // Heat flows from the 100 °C face: the centre warms, never beyond 100 °C.
                let last = p.last().unwrap();
                assert!(last[1] > 20.5 && last[1] < 100.0, "{what}: centre {last:?}");
            }
            match reference.iter().find(|(n, _)| n == name) {
                None => reference.push((name.to_string(), p)),
                Some((_, cpu)) => {
                    let diff = cpu
                        .iter()
                        .flatten()
                        .zip(p.iter().flatten())
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f64::max);
                    assert!(diff < 1e-6, "{what}: probes differ from the CPU by {diff}");
                }
            }
        }
    });
}

#[test]
fn a_run_restarts_from_its_own_vtu() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    run(
        &examples().join("heat-plain.toml"),
        &first,
        BackendKind::Cpu,
    );
    let end = probes(&first).last().unwrap().clone();
    let text = std::fs::read_to_string(examples().join("heat-plain.toml"))
        .unwrap()
        .replace(
            "value = 20.0\n",
            &format!(
                "vtu = \"{}\"\n",
                first.join("temperature_000060.vtu").display()
            ),
        );
    let file = dir.path().join("restart.toml");
    std::fs::write(&file, text).unwrap();
    let second = dir.path().join("second");
    run(&file, &second, BackendKind::Cpu);
    let start = &probes(&second)[0];
    assert_eq!(start[0], 0.0);
    assert_eq!(
        &start[1..],
        &end[1..],
        "the restart must begin where the first run ended"
    );
}

/// A `.npy` file of `i32` in C order.
fn write_npy(path: &Path, shape: &[usize], data: &[i32]) {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    common::write_npy(path, shape, "<i4", false, &bytes);
}

#[test]
fn voxel_materials_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.npy");
    // 2 × 1 × 2 voxels over the unit cube: material = i + 2k... index [i][j][k].
    write_npy(&p, &[2, 1, 2], &[0, 1, 1, 0]);
    let v = Voxels::read_npy(&p).unwrap();
    assert_eq!(
        (v.shape.clone(), v.index.clone()),
        (vec![2, 1, 2], vec![0, 1, 1, 0])
    );
    let mut mesh = generate::box_mesh(4, 2, 4, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap();
    let map = MaterialMap {
        materials: vec![
            Material::new("a", 1.0, 1.0, 1.0),
            Material::new("b", 2.0, 1.0, 1.0),
        ],
        voxels: Some(v),
        ..Default::default()
    };
    let f = map.assign(&mut mesh).unwrap();
    assert_eq!(f.counts, vec![16, 16]);
    for c in 0..mesh.num_cells() {
        let x: Vec<f64> = (0..3)
            .map(|k| mesh.cell(c).iter().map(|&v| mesh.coords[v][k]).sum::<f64>() / 8.0)
            .collect();
        let expect = ((x[0] < 0.5) != (x[2] < 0.5)) as i32;
        assert_eq!(mesh.cell_tags[c], expect, "cell at {x:?}");
    }
    write_npy(&p, &[2, 1, 2], &[0, 1, 7, 0]);
    let map = MaterialMap {
        voxels: Some(Voxels::read_npy(&p).unwrap()),
        ..map
    };
    let e = map.assign(&mut mesh).unwrap_err().to_string();
    assert!(
        e.contains("voxel [1, 0, 0]") && e.contains("index 7"),
        "{e}"
    );
    let bad = MaterialMap {
        materials: vec![Material::new("steel", -1.0, 1.0, 1.0)],
        ..Default::default()
    };
    let e = bad.assign(&mut mesh).unwrap_err().to_string();
    assert!(e.contains("steel") && e.contains("`k`"), "{e}");
}

#[test]
fn bad_heat_files_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(examples().join("heat-plain.toml")).unwrap();
    let cases = [
        ("steps = 60", "stepz = 60", "stepz"),
        ("theta = 0.5", "theta = 0.2", "time.theta"),
        ("k = 45.0", "k = -45.0", "material[0].k"),
        ("h = 15.0", "power = 15.0", "bc[1].power"),
        (
            "boundary = \"xmin\"",
            "boundary = \"left\"",
            "bc[0].boundary",
        ),
        ("value = 100.0", "value = \"1 +\"", "bc[0].value"),
        ("steps = 60", "steps = 60\nt_end = 600.0", "time"),
        ("face = \"xmax\"", "face = \"top\"", "output.face_map.face"),
        ("probes = [[0.05, 0.03, 0.03]", "probes = [[5.0, 0.03, 0.03]", "output.probes[0]"),
        (
            "name = \"steel\"",
            "name = \"steel\"\nshape = { kind = \"cone\" }",
            "material[0].shape.kind",
        ),
    ];
    for (from, to, key) in cases {
        assert!(base.contains(from), "{from}");
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, base.replacen(from, to, 1)).unwrap();
        let opts = RunOptions {
            backend: Some(BackendKind::Cpu),
            out_dir: dir.path().join("out"),
            progress: false,
        };
        let e = run_file(&file, &opts)
            .err()
            .unwrap_or_else(|| panic!("`{to}` must fail"))
            .to_string();
        println!("{to}: {e}");
        assert!(e.contains(key), "`{to}`: error `{e}` does not name `{key}`");
    }
}

#[test]
fn problem_file_flux_schedule_source_voxels_and_gmsh_regions() {
    let dir = tempfile::tempdir().unwrap();
    write_npy(&dir.path().join("m.npy"), &[2, 1, 1], &[0, 1]);
    // Backward Euler, Δt = 0.1: the flux 5·(1 + t) is on for 3.5 steps, so the heat put in is
    // 5·0.01·0.1·(1.1 + 1.2 + 1.3 + 0.5·1.4) from the flux plus 2·0.01·0.4 from the source.
    let text = r#"
[mesh]
generator = "box"
cell = "hexahedron"
n = [10, 1, 1]
upper = [1.0, 0.1, 0.1]
[physics]
kind = "heat"
source = 2.0
[time]
dt = 0.1
steps = 4
[initial]
expression = "20 + x"
[[material]]
name = "a"
k = 1.0
rho = 1.0
c = 2.0
[[material]]
name = "b"
k = 3.0
rho = 1.0
c = 4.0
[voxels]
file = "m.npy"
[[bc]]
type = "flux"
boundary = "xmin"
value = 5.0
factor = "1 + t"
on = 0.0
off = 0.35
[output]
pvd = false
"#;
    let file = dir.path().join("flux.toml");
    std::fs::write(&file, text).unwrap();
    let r = run(&file, &dir.path().join("out"), BackendKind::Cpu);
    let expect = 5.0 * 0.01 * 0.1 * 4.3 + 2.0 * 0.01 * 0.4;
    let (heat, stored) = (
        r["heat_in_total"].as_f64().unwrap(),
        r["stored_change_total"].as_f64().unwrap(),
    );
    assert!(
        (heat - expect).abs() < 1e-12 * expect,
        "heat in {heat} vs {expect}"
    );
    assert!(
        (stored - expect).abs() < 1e-8 * expect,
        "stored {stored} vs {expect}"
    );
    let cells: Vec<u64> = r["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["cells"].as_u64().unwrap())
        .collect();
    assert_eq!(cells, vec![5, 5]);
    // Gmsh physical group by name.
    let msh = [
        "tests/data/cube_tet.msh",
        "crates/galerkin/tests/data/cube_tet.msh",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.exists())
    .unwrap()
    .canonicalize()
    .unwrap();
    let text = format!(
        "[mesh]\nfile = \"{}\"\n[physics]\nkind = \"heat\"\n[time]\ndt = 0.1\nsteps = 1\n[[material]]\nname = \"a\"\nk = 1.0\nrho = 1.0\nc = 1.0\n[[material]]\nname = \"b\"\nk = 2.0\nrho = 1.0\nc = 1.0\nregions = [\"solid\"]\n[[bc]]\ntype = \"robin\"\nboundary = \"xmin\"\nh = 2.0\nambient = 1.0\n[output]\npvd = false\n",
        msh.display()
    );
    std::fs::write(&file, text).unwrap();
    let r = run(&file, &dir.path().join("out2"), BackendKind::Cpu);
    let cells: Vec<u64> = r["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["cells"].as_u64().unwrap())
        .collect();
    assert!(cells[0] == 0 && cells[1] > 0, "{cells:?}");
    assert!(
        r["max_balance_relative"].as_f64().unwrap() < 1e-8
            && r["heat_in_total"].as_f64().unwrap() == 0.0
    );
}

#[test]
fn face_maps_interpolate_linearly_on_tetrahedra_and_hexahedra() {
    use galerkin::problem::heat::output::FaceMap;
    use galerkin::space::FunctionSpace;
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let mesh = generate::box_mesh(3, 4, 2, [0.0; 3], [1.0, 2.0, 0.5], cell).unwrap();
        let space = FunctionSpace::lagrange(Arc::new(mesh), 1, 1).unwrap();
        // A linear field is drawn exactly: extremes at the outermost pixel centres (200 × 100 grid
        // on the 1 × 2 face zmax, pixel size 0.01), not at the nodes.
        let u = space.interpolate(|x, v| v[0] = 3.0 * x[0] - x[1]);
        let map = FaceMap::new(&space, "zmax", 200).unwrap();
        let (min, max) = map.draw(&dir.path().join("m.png"), &u, 0.0).unwrap();
        assert!(
            (min - (3.0 * 0.005 - 1.995)).abs() < 1e-12
                && (max - (3.0 * 0.995 - 0.005)).abs() < 1e-12,
            "{cell:?}: {min} {max}"
        );
    }
}
