//! Property-based tests of the two readers of user files, the TOML problem loader and the Gmsh
//! reader: mutated inputs (values replaced by hostile tokens, lines dropped or repeated, bytes
//! flipped, files cut short) must give `Ok` or an `Err`, never a panic, and what is accepted must
//! be usable (the problem sets up, the mesh validates and finds its boundary facets). Bounded in
//! cases so that CI runs them in seconds (stable Rust, no cargo-fuzz needed).
use galerkin::mesh::gmsh::parse_msh_with_notes;
use galerkin::mesh::Mesh;
use galerkin::problem::config::ProblemFile;
use proptest::prelude::*;
use std::path::Path;

const PROBLEM: &str = r#"title = "fuzz"
backend = "cpu"
[mesh]
generator = "rectangle"
cell = "triangle"
n = [3, 2]
lower = [0.0, 0.0]
upper = [1.0, 2.0]
[space]
degree = 2
[physics]
kind = "poisson"
kappa = "1 + x^2"
source = 1.0
reaction = 0.5
[[bc]]
boundary = ["xmin", "ymax"]
type = "dirichlet"
value = "x*y"
[[bc]]
boundary = 2
type = "robin"
alpha = 1.0
value = 0.0
[exact]
solution = "x"
[solver]
method = "cg"
preconditioner = "jacobi"
rtol = 1e-8
max_iter = 50
restart = 10
nullspace = "none"
[assembly]
level = "full"
[output]
name = "u"
"#;

/// Values and fragments that have broken parsers before.
const TOKENS: &[&str] = &[
    "0", "-1", "1", "2", "3", "1.5", "1e309", "-1e309", "nan", "inf", "-inf", "9223372036854775807", "-9223372036854775808",
    "18446744073709551616", "\"\"", "\"x/0\"", "\"0/0\"", "\"sin(\"", "\"w*x\"", "[]", "[[]]", "{}", "{ regions = { 1 = -1 } }",
    "{ regions = { x = 1 } }", "\"box\"", "\"interval\"", "\"hexahedron\"", "\"quadrilateral\"", "\"direct\"", "\"gmres\"",
    "\"bicgstab\"", "\"constant\"", "\"element\"", "\"elasticity\"", "\"projection\"", "\"neumann\"", "\"robin\"", "true", "=",
    "[", "]", "\n[mesh]\n", "\n[[bc]]\n", "\"\\u0000\"", "[1, 2, 3]", "[0, 0]", "[1, 1]", "[-1, 1]", "[\"x\", \"y\"]", "\"../x\"",
    "[99]", "-7", "\"xmin\"", "\"domain\"",
];

const KEYS: &[&str] = &[
    "n", "degree", "kind", "kappa", "source", "reaction", "rho", "E", "nu", "lambda", "mu", "body_force", "boundary", "type",
    "value", "alpha", "components", "solution", "method", "preconditioner", "rtol", "atol", "max_iter", "restart", "nullspace",
    "level", "quadrature_degree", "name", "generator", "cell", "lower", "upper", "grading", "file", "reorder", "family",
];

#[derive(Clone, Debug)]
enum Edit {
    /// Replace the value of line `i` (after `=`) by a token.
    Value(usize, usize),
    /// Insert `key = token` before line `i`.
    Insert(usize, usize, usize),
    Delete(usize),
    Repeat(usize),
    /// Cut the text at this fraction of its length.
    Truncate(f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (0..64usize, 0..TOKENS.len()).prop_map(|(i, t)| Edit::Value(i, t)),
        2 => (0..64usize, 0..KEYS.len(), 0..TOKENS.len()).prop_map(|(i, k, t)| Edit::Insert(i, k, t)),
        1 => (0..64usize).prop_map(Edit::Delete),
        1 => (0..64usize).prop_map(Edit::Repeat),
        1 => (0.0..1.0f64).prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for e in edits {
        let n = lines.len().max(1);
        match *e {
            Edit::Value(i, t) if !lines.is_empty() => {
                let l = &mut lines[i % n];
                if let Some(eq) = l.find('=') {
                    *l = format!("{}= {}", &l[..eq], TOKENS[t]);
                }
            }
            Edit::Insert(i, k, t) => lines.insert(i % n, format!("{} = {}", KEYS[k], TOKENS[t])),
            Edit::Delete(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Edit::Repeat(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::Truncate(f) => {
                let joined = lines.join("\n");
                let mut cut = (f * joined.len() as f64) as usize;
                while !joined.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines = joined[..cut].lines().map(str::to_string).collect();
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// Cases per property: `default` in CI (seconds), more with `GALERKIN_FUZZ_CASES=N` for a long hunt.
fn cases(default: u32) -> u32 {
    std::env::var("GALERKIN_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Small enough to set up and assemble in a fraction of a millisecond.
fn tiny(pf: &ProblemFile) -> bool {
    pf.mesh.file.is_none() && pf.mesh.n.as_ref().is_some_and(|n| n.iter().try_fold(1usize, |a, &k| a.checked_mul(k.max(1))).is_some_and(|p| p <= 64))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(4000), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn problem_files_load_or_fail_cleanly(edits in proptest::collection::vec(edit(), 1..5)) {
        let text = apply(PROBLEM, &edits);
        if let Ok(pf) = ProblemFile::parse(&text, "fuzz.toml") {
            if tiny(&pf) {
                if let Ok(s) = galerkin::problem::run::setup(&pf, Path::new("."), false) {
                    let _ = s.problem.assemble(pf.assembly.level).and_then(|sys| sys.solve(&s.config));
                }
            }
        }
    }
}

/// Two triangles on the unit square, one tagged boundary edge (as in the reader's unit tests).
const SQUARE: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n1 1 \"left\"\n2 2 \"plate\"\n$EndPhysicalNames\n\
$Entities\n0 1 1 0\n1 0 0 0 0 1 0 1 1 0\n1 0 0 0 1 1 0 1 2 0\n$EndEntities\n\
$Nodes\n2 4 1 4\n1 1 0 2\n1\n4\n0 0 0\n0 1 0\n2 1 0 2\n2\n3\n1 0 0\n1 1 0\n$EndNodes\n\
$Elements\n2 3 1 3\n1 1 1 1\n1 1 4\n2 1 2 2\n2 1 2 3\n3 1 3 4\n$EndElements\n";

const MSH_TOKENS: &[&str] = &[
    "0", "1", "-1", "2", "3", "4", "5", "8", "15", "99", "4294967296", "18446744073709551615", "-2147483648", "nan", "inf",
    "1e308", "-0", "0.5", "$EndNodes", "$Entities", "$Nodes", "$EndElements", "abc", "\"", "",
];

/// Accepted meshes must be usable: validated (by construction) and with their boundary facets found.
fn usable(m: &Mesh) -> Result<(), TestCaseError> {
    prop_assert!(m.num_cells() > 0);
    prop_assert!(m.boundary_facet_cells().is_ok());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(20000), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn ascii_meshes_read_or_fail_cleanly(edits in proptest::collection::vec((0..200usize, 0..MSH_TOKENS.len(), 0..4u8), 1..5)) {
        let mut tokens: Vec<String> = SQUARE.split(' ').flat_map(|s| s.split('\n')).map(str::to_string).collect();
        for &(i, t, op) in &edits {
            if tokens.is_empty() {
                break;
            }
            let n = tokens.len();
            match op {
                0 => tokens[i % n] = MSH_TOKENS[t].to_string(),
                1 if tokens.len() > 1 => { tokens.remove(i % n); }
                2 => { let x = tokens[i % n].clone(); tokens.insert(i % n, x); }
                _ => tokens.truncate(i % n),
            }
        }
        let text = tokens.join("\n");
        if let Ok((m, _)) = parse_msh_with_notes(text.as_bytes(), "fuzz.msh") {
            usable(&m)?;
        }
    }

    #[test]
    fn binary_meshes_read_or_fail_cleanly(edits in proptest::collection::vec((0..12000usize, any::<u8>(), 0..3u8), 1..6)) {
        let mut data = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/square_tri_binary.msh")).unwrap();
        for &(i, b, op) in &edits {
            if data.is_empty() {
                break;
            }
            let n = data.len();
            match op {
                0 => data[i % n] = b,
                1 => data[i % n] ^= 1 << (b % 8),
                _ => data.truncate(i % n),
            }
        }
        if let Ok((m, _)) = parse_msh_with_notes(&data, "fuzz.msh") {
            usable(&m)?;
        }
    }

    /// A structured triangulation written with random node tags and random orientations reads as
    /// the same domain: every cell positive, total area 1, the inverted ones counted in a note.
    #[test]
    fn orientation_and_node_tags_do_not_change_the_domain(k in 1..5usize, offset in 1..1000usize, flips in proptest::collection::vec(any::<bool>(), 50)) {
        let n = k + 1;
        let tag = |i: usize, j: usize| offset + 7 * (i + n * j);
        let mut nodes = String::new();
        for j in 0..n {
            for i in 0..n {
                nodes.push_str(&format!("{}\n", tag(i, j)));
            }
        }
        for j in 0..n {
            for i in 0..n {
                nodes.push_str(&format!("{} {} 0\n", i as f64 / k as f64, j as f64 / k as f64));
            }
        }
        let mut elems = String::new();
        let mut count = 0;
        let mut flipped = 0;
        for j in 0..k {
            for i in 0..k {
                for t in [[tag(i, j), tag(i + 1, j), tag(i + 1, j + 1)], [tag(i, j), tag(i + 1, j + 1), tag(i, j + 1)]] {
                    let f = flips[count % flips.len()];
                    flipped += f as usize;
                    count += 1;
                    let (b, c) = if f { (t[2], t[1]) } else { (t[1], t[2]) };
                    elems.push_str(&format!("{} {} {} {}\n", 10 * count, t[0], b, c));
                }
            }
        }
        let text = format!(
            "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 {nn} 1 {mx}\n2 1 0 {nn}\n{nodes}$EndNodes\n$Elements\n1 {count} 1 {mx2}\n2 1 2 {count}\n{elems}$EndElements\n",
            nn = n * n, mx = tag(n - 1, n - 1), mx2 = 10 * count
        );
        let (m, notes) = parse_msh_with_notes(text.as_bytes(), "grid.msh").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let area: f64 = (0..m.num_cells()).map(|c| galerkin::mesh::validate::det_jacobian(m.cell_type, &m.map_point(c, [0.0; 3]).1) / 2.0).sum();
        prop_assert!((area - 1.0).abs() < 1e-12, "area {}", area);
        prop_assert_eq!(notes.len(), (flipped > 0) as usize);
        if flipped > 0 {
            let expected = format!("{flipped} of {count} cells");
            prop_assert!(notes[0].contains(&expected), "{:?}", notes);
        }
    }
}
