//! Fibres per cell from the mesh file: a Gmsh MSH 4.1 (and 2.2) file written here with a `$ElementData` view
//! of 3 components per element gives each cell its vector (through the reader's element tags and
//! the locality renumbering), so a run with `fibre = { element_data = "fibres" }` equals a run with
//! the same field as expressions; a missing view, a wrong component count, a missing element and
//! zero or non-finite vectors are errors that name the key, the view and the element.
use galerkin::backend::Cpu;
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use std::path::{Path, PathBuf};

/// The fibre field both runs use: a function of the cell centroid (in 2D, the x, y part counts).
fn fibre(x: f64, y: f64) -> [f64; 3] {
    [1.0, 0.5 * y - 0.25 + 0.3 * x, 0.7]
}

/// An nx × ny quadrilateral mesh of [0, 2] × [0, 1] in MSH 4.1 (ASCII), with the physical curve
/// "left" (x = 0) and the surface "body"; element tags start at 101 and run backwards, so they are
/// neither cell indices nor in cell order. `view` writes the `$ElementData` section(s).
fn write_msh(path: &Path, nx: usize, ny: usize, view: impl Fn(&[(usize, [f64; 2])]) -> String) {
    write_msh_version(path, nx, ny, false, view)
}

/// [`write_msh`] in MSH 4.1 or, with `v22`, the legacy MSH 2.2 layout (same tags, same view).
fn write_msh_version(path: &Path, nx: usize, ny: usize, v22: bool, view: impl Fn(&[(usize, [f64; 2])]) -> String) {
    let (hx, hy) = (2.0 / nx as f64, 1.0 / ny as f64);
    let node = |i: usize, j: usize| 1 + j * (nx + 1) + i;
    let nn = (nx + 1) * (ny + 1);
    let version = if v22 { "2.2" } else { "4.1" };
    let mut s = format!("$MeshFormat\n{version} 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n1 1 \"left\"\n2 2 \"body\"\n$EndPhysicalNames\n");
    if v22 {
        s += &format!("$Nodes\n{nn}\n");
        for j in 0..=ny {
            for i in 0..=nx {
                s += &format!("{} {} {} 0\n", node(i, j), i as f64 * hx, j as f64 * hy);
            }
        }
    } else {
        s += "$Entities\n0 1 1 0\n1 0 0 0 0 1 0 1 1 0\n1 0 0 0 2 1 0 1 2 0\n$EndEntities\n";
        s += &format!("$Nodes\n1 {nn} 1 {nn}\n2 1 0 {nn}\n");
        for k in 1..=nn {
            s += &format!("{k}\n");
        }
        for j in 0..=ny {
            for i in 0..=nx {
                s += &format!("{} {} 0\n", i as f64 * hx, j as f64 * hy);
            }
        }
    }
    s += "$EndNodes\n";
    let nq = nx * ny;
    let mut quads = Vec::new();
    let mut tag = 101 + nq + ny;
    for j in 0..ny {
        for i in 0..nx {
            quads.push((tag, [node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)], [(i as f64 + 0.5) * hx, (j as f64 + 0.5) * hy]));
            tag -= 1;
        }
    }
    let lines: Vec<(usize, [usize; 2])> = (0..ny).map(|j| (101 + j, [node(0, j), node(0, j + 1)])).collect();
    if v22 {
        // tag type ntags physical elementary nodes…
        s += &format!("$Elements\n{}\n", nq + ny);
        for (t, v) in &lines {
            s += &format!("{t} 1 2 1 1 {} {}\n", v[0], v[1]);
        }
        for (t, v, _) in &quads {
            s += &format!("{t} 3 2 2 1 {} {} {} {}\n", v[0], v[1], v[2], v[3]);
        }
        s += "$EndElements\n";
        let cells: Vec<(usize, [f64; 2])> = quads.iter().map(|(t, _, c)| (*t, *c)).collect();
        s += &view(&cells);
        std::fs::write(path, s).unwrap();
        return;
    }
    s += &format!("$Elements\n2 {} 101 {}\n1 1 1 {ny}\n", nq + ny, 101 + nq + ny);
    for (t, v) in &lines {
        s += &format!("{t} {} {}\n", v[0], v[1]);
    }
    s += &format!("2 1 3 {nq}\n");
    for (t, v, _) in &quads {
        s += &format!("{t} {} {} {} {}\n", v[0], v[1], v[2], v[3]);
    }
    s += "$EndElements\n";
    let cells: Vec<(usize, [f64; 2])> = quads.iter().map(|(t, _, c)| (*t, *c)).collect();
    s += &view(&cells);
    std::fs::write(path, s).unwrap();
}

/// A `$ElementData` section: `name`, `nc` components, values from `f` for the listed cells.
fn section(name: &str, nc: usize, cells: &[(usize, [f64; 2])], f: impl Fn([f64; 2]) -> Vec<f64>) -> String {
    let mut s = format!("$ElementData\n1\n\"{name}\"\n1\n0.0\n3\n0\n{nc}\n{}\n", cells.len());
    for (t, c) in cells {
        let v: Vec<String> = f(*c).iter().map(|x| format!("{x:?}")).collect();
        s += &format!("{t} {}\n", v.join(" "));
    }
    s + "$EndElementData\n"
}

/// A directory of one test's own (the tests run in parallel and each removes its directory).
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("galerkin-fibres-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn problem(msh: &Path, fibre_key: &str) -> String {
    format!(
        "[mesh]\nfile = {:?}\n[space]\ndegree = 2\n[physics]\nkind = \"hyperelasticity\"\nlaw = \"usyk\"\nC = 0.876\nbf = 18.48\nbt = 3.58\nbfs = 1.627\nkappa = 20.0\n\
         fibre = {fibre_key}\nbody_force = [0.0, -0.3]\n[[bc]]\ntype = \"dirichlet\"\nboundary = \"left\"\nvalue = [0, 0]\n[loads]\nsteps = 1\n[solver]\nmethod = \"direct\"\n",
        msh.display().to_string()
    )
}

#[test]
fn element_data_fibres_equal_the_same_field_as_expressions() {
    let d = dir("expressions");
    let msh = d.join("strip.msh");
    // Two sections of the first time step (as a partitioned file has) and a later time step that
    // must be ignored.
    write_msh(&msh, 6, 3, |cells| {
        let (a, b) = cells.split_at(7);
        section("fibres", 3, a, |c| fibre(c[0], c[1]).to_vec())
            + &section("other", 1, cells, |_| vec![1.0])
            + &section("fibres", 3, b, |c| fibre(c[0], c[1]).to_vec())
            + &section("fibres", 3, cells, |_| vec![0.0, 1.0, 0.0]).replace("3\n0\n3\n", "3\n1\n3\n")
    });
    let (_, mut from_file) = prepare_text(&problem(&msh, "{ element_data = \"fibres\" }")).unwrap();
    let (_, mut from_expr) = prepare_text(&problem(&msh, "[\"1\", \"0.5 * y - 0.25 + 0.3 * x\"]")).unwrap();
    assert_eq!(from_file.el.frames.len(), 18);
    for (c, (a, b)) in from_file.el.frames.iter().zip(&from_expr.el.frames).enumerate() {
        for i in 0..3 {
            for k in 0..3 {
                assert!((a[i][k] - b[i][k]).abs() < 1e-14, "cell {c}: frame from the file {a:?}, from the expression {b:?}");
            }
        }
    }
    // The fibres vary from cell to cell, so a wrong cell order would show.
    assert!((from_file.el.frames[0][1][0] - from_file.el.frames[17][1][0]).abs() > 0.1);
    // The same mesh and view in MSH 2.2 give the same frames.
    let msh22 = d.join("strip22.msh");
    write_msh_version(&msh22, 6, 3, true, |cells| section("fibres", 3, cells, |c| fibre(c[0], c[1]).to_vec()));
    let (_, from_22) = prepare_text(&problem(&msh22, "{ element_data = \"fibres\" }")).unwrap();
    assert_eq!(from_22.el.frames, from_file.el.frames, "MSH 2.2 and 4.1 frames differ");
    assert_eq!(from_22.el.space.mesh.cells, from_file.el.space.mesh.cells);
    let mut s1 = cpu_system(&from_file).unwrap();
    let mut s2 = cpu_system(&from_expr).unwrap();
    let (u1, _, _) = solve_on(&Cpu, &mut s1, &mut from_file, 1).unwrap();
    let (u2, _, _) = solve_on(&Cpu, &mut s2, &mut from_expr, 1).unwrap();
    let big = u2.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(big > 1e-3);
    assert!(u1.iter().zip(&u2).all(|(a, b)| (a - b).abs() <= 1e-12 * big));
}

#[test]
fn bad_element_data_is_refused_naming_view_and_element() {
    let d = dir("bad");
    let cases: Vec<(&str, Box<dyn Fn(&[(usize, [f64; 2])]) -> String>, &str, &[&str])> = vec![
        ("none.msh", Box::new(|_: &[(usize, [f64; 2])]| String::new()), "fibres", &["no $ElementData view named `fibres`", "no $ElementData"]),
        ("wrong-name.msh", Box::new(|c: &[(usize, [f64; 2])]| section("directions", 3, c, |_| vec![1.0, 0.0, 0.0])), "fibres", &["no $ElementData view named `fibres`", "`directions`"]),
        ("two-comps.msh", Box::new(|c: &[(usize, [f64; 2])]| section("fibres", 2, c, |_| vec![1.0, 0.0])), "fibres", &["has 2 components", "3 are needed"]),
        ("missing.msh", Box::new(|c: &[(usize, [f64; 2])]| section("fibres", 3, &c[1..], |_| vec![1.0, 0.0, 0.0])), "fibres", &["no value for element"]),
        ("zero.msh", Box::new(|c: &[(usize, [f64; 2])]| section("fibres", 3, c, |x| if x[0] > 1.5 { vec![0.0, 0.0, 1.0] } else { vec![1.0, 0.0, 0.0] })), "fibres", &["has no length", "view `fibres`"]),
        ("nan.msh", Box::new(|c: &[(usize, [f64; 2])]| section("fibres", 3, c, |x| if x[1] > 0.5 { vec![f64::NAN, 0.0, 0.0] } else { vec![1.0, 0.0, 0.0] })), "fibres", &["non-finite", "view `fibres`"]),
    ];
    for (file, view, name, want) in cases {
        let msh = d.join(file);
        write_msh(&msh, 3, 2, view);
        let e = match prepare_text(&problem(&msh, &format!("{{ element_data = \"{name}\" }}"))) {
            Ok(_) => panic!("{file}: accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("physics.fibre.element_data"), "{file}: error does not name the key: {e}");
        for w in want {
            assert!(e.contains(w), "{file}: error lacks `{w}`: {e}");
        }
    }
    // The element missing from the view is named by its Gmsh tag (the first quadrilateral, 101 + 6 + 2).
    let msh = d.join("missing.msh");
    write_msh(&msh, 3, 2, |c| section("fibres", 3, &c[1..], |_| vec![1.0, 0.0, 0.0]));
    let e = prepare_text(&problem(&msh, "{ element_data = \"fibres\" }")).err().unwrap().to_string();
    assert!(e.contains("element 109"), "{e}");
    // Key errors: a table without element_data, an unknown key, element data without a mesh file.
    let msh = d.join("ok.msh");
    write_msh(&msh, 3, 2, |c| section("fibres", 3, c, |_| vec![1.0, 0.0, 0.0]));
    assert!(prepare_text(&problem(&msh, "{ element_data = \"fibres\" }")).is_ok());
    assert!(prepare_text(&problem(&msh, "{ view = \"fibres\" }")).err().unwrap().to_string().contains("physics.fibre.view"));
    let gen = problem(&msh, "{ element_data = \"fibres\" }").replace(&format!("file = {:?}", msh.display().to_string()), "generator = \"rectangle\"\nn = [2, 2]");
    assert!(prepare_text(&gen).err().unwrap().to_string().contains("physics.fibre.element_data"));
    let _ = std::fs::remove_dir_all(&d);
}
