//! Upwind DG advection on the CPU: L2 convergence at k + 1/2 or better for P0–P3 and Q0–Q3 with a
//! non-constant velocity; per-cell conservation (each cell's residual is its net upwind flux);
//! P0 equals the upwind finite-volume matrix built by hand; GMRES and BiCGStab with element block
//! Jacobi, GMRES with point Jacobi; bad problem files.
mod advection_common;
use advection_common::*;
use galerkin::advection::assemble::assemble;
use galerkin::advection::config::AdvectionFile;
use galerkin::advection::output::l2_error;
use galerkin::advection::problem::edge_geometry;
use galerkin::advection::run::solve_cpu;
use galerkin::advection::{AdvectionProblem, Method, Precond, Velocity};
use galerkin::fe::{gauss_legendre, FiniteElement, LagrangeElement, QuadratureRule};
use galerkin::mesh::{generate, CellType};
use std::sync::Arc;

fn l2(n: usize, cell: CellType, k: usize) -> f64 {
    let (p, u) = manufactured(n, cell, k);
    let s = solve_cpu(&p, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
    l2_error(&p, &s.u, &u).unwrap().0
}

#[test]
fn l2_converges_at_k_plus_half_or_better() {
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        for k in 0..=3 {
            let n = if k == 0 { 16 } else { 6 };
            let (coarse, fine) = (l2(n, cell, k), l2(2 * n, cell, k));
            let rate = (coarse / fine).log2();
            eprintln!("{cell} k={k}: L2 {coarse:.3e} -> {fine:.3e}, rate {rate:.2}");
            assert!(rate >= k as f64 + 0.5, "{cell} k={k}: rate {rate:.3} < k + 1/2 ({coarse:.3e} -> {fine:.3e})");
            assert!(fine < 0.2 * 0.5f64.powi(k as i32 + 1), "{cell} k={k}: error {fine:.3e} too large");
        }
    }
}

/// u_h of cell `c` at physical point `x` (Newton on the cell map, then the basis).
fn value_at(p: &AdvectionProblem, el: &Option<LagrangeElement>, u: &[f64], c: usize, x: [f64; 2]) -> f64 {
    let mut xi = [0.3, 0.3, 0.0];
    for _ in 0..8 {
        let (y, j) = p.mesh.map_point(c, xi);
        let (r0, r1) = (x[0] - y[0], x[1] - y[1]);
        let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
        xi[0] += (j[1][1] * r0 - j[0][1] * r1) / det;
        xi[1] += (-j[1][0] * r0 + j[0][0] * r1) / det;
    }
    let nloc = p.nloc();
    match el {
        None => u[c],
        Some(e) => {
            let t = e.tabulate(&[xi]);
            (0..nloc).map(|i| t.values[i] * u[c * nloc + i]).sum()
        }
    }
}

#[test]
fn each_cell_residual_is_its_net_upwind_flux() {
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        for k in [0, 1, 3] {
            // Polynomial data, so every integral below is exact and the check is to round-off.
            let mesh = generate::rectangle(5, 4, [0.0, 0.0], [1.0, 0.8], cell).unwrap();
            let (bx, by) = (formula(BETA[0]), formula(BETA[1]));
            let (c, f, g) = (formula("1 + x"), formula("1 + x*y"), formula("x + 2*y"));
            let p = AdvectionProblem::new(Arc::new(mesh), k, Velocity::field(bx.clone(), by.clone()).unwrap(), c.clone(), f.clone(), vec![], Some(g.clone())).unwrap();
            let (a, b) = assemble(&p).unwrap();
            let nloc = p.nloc();
            let u: Vec<f64> = (0..p.ndofs()).map(|i| ((i * 37 % 101) as f64 / 50.0 - 1.0) * (1.0 + 0.1 * (i % 7) as f64)).collect();
            let mut au = vec![0.0; p.ndofs()];
            a.spmv(&u, &mut au);
            let el = if k == 0 { None } else { Some(LagrangeElement::new(cell, k).unwrap()) };
            let rule = QuadratureRule::new(cell, 2 * k + 6).unwrap();
            let (s, w) = gauss_legendre(k + 5);
            let mut total = 0.0;
            for cc in 0..p.mesh.num_cells() {
                // Volume: ∫ (c − ∇·β) u − f; edges: ∫ (β·n) û with û the upwind value.
                let (mut flux, mut source) = (0.0, 0.0);
                for (q, xi) in rule.points.iter().enumerate() {
                    let (x, j) = p.mesh.map_point(cc, *xi);
                    let x = [x[0], x[1]];
                    let dw = rule.weights[q] * (j[0][0] * j[1][1] - j[0][1] * j[1][0]).abs();
                    flux += dw * (c.eval(x) - 0.2) * value_at(&p, &el, &u, cc, x);
                    source += dw * f.eval(x);
                }
                let f_per = p.faces.per_cell;
                for lf in 0..f_per {
                    let e = edge_geometry(&p.mesh, cc, lf);
                    let m = p.faces.neighbour[cc * f_per + lf];
                    for (sq, wq) in s.iter().zip(&w) {
                        let x = e.point(*sq);
                        let bn = bx.eval(x) * e.normal[0] + by.eval(x) * e.normal[1];
                        let up = if bn >= 0.0 {
                            value_at(&p, &el, &u, cc, x)
                        } else if m != galerkin::advection::faces::BOUNDARY {
                            value_at(&p, &el, &u, m as usize, x)
                        } else {
                            source -= wq * e.length * bn * g.eval(x);
                            0.0
                        };
                        flux += wq * e.length * bn * up;
                    }
                }
                let rows = cc * nloc..(cc + 1) * nloc;
                let (row_au, row_b): (f64, f64) = (au[rows.clone()].iter().sum(), b[rows].iter().sum());
                assert!((row_au - flux).abs() < 1e-12 * (1.0 + flux.abs()), "{cell} k={k} cell {cc}: Σ rows of A u = {row_au}, flux balance {flux}");
                assert!((row_b - source).abs() < 1e-12 * (1.0 + source.abs()), "{cell} k={k} cell {cc}: Σ rows of b = {row_b}, sources {source}");
                total += row_au;
            }
            // Interior fluxes cancel: the sum over cells is the boundary outflow plus the volume terms.
            assert!(total.is_finite());
        }
    }
}

#[test]
fn p0_is_the_upwind_finite_volume_scheme() {
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        let mesh = generate::rectangle(6, 5, [0.0, 0.0], [1.0, 1.0], cell).unwrap();
        // Divergence-free and β·n of one sign along every edge (so the flux is |e| β(mid)·n).
        let (bx, by) = (formula("1 + 0.5*y"), formula("0.5 + 0.5*x"));
        let p = AdvectionProblem::new(Arc::new(mesh), 0, Velocity::field(bx.clone(), by.clone()).unwrap(), formula("2"), formula("3"), vec![], Some(formula("1.5"))).unwrap();
        let (a, b) = assemble(&p).unwrap();
        let n = p.mesh.num_cells();
        let mut fv = vec![0.0; n * n];
        let mut rhs = vec![0.0; n];
        let fpc = p.faces.per_cell;
        for c in 0..n {
            let v: Vec<[f64; 3]> = p.mesh.cell(c).iter().map(|&i| p.mesh.coords[i]).collect();
            // Shoelace area.
            let area = 0.5 * (0..v.len()).map(|i| v[i][0] * v[(i + 1) % v.len()][1] - v[(i + 1) % v.len()][0] * v[i][1]).sum::<f64>().abs();
            fv[c * n + c] += 2.0 * area;
            rhs[c] += 3.0 * area;
            for lf in 0..fpc {
                let e = edge_geometry(&p.mesh, c, lf);
                let mid = e.point(0.5);
                let flux = e.length * (bx.eval(mid) * e.normal[0] + by.eval(mid) * e.normal[1]);
                fv[c * n + c] += flux.max(0.0);
                match p.faces.neighbour[c * fpc + lf] {
                    galerkin::advection::faces::BOUNDARY => rhs[c] -= flux.min(0.0) * 1.5,
                    m => fv[c * n + m as usize] += flux.min(0.0),
                }
            }
        }
        let dense = a.to_dense();
        let scale = max_abs(&fv);
        assert!(max_diff(&dense, &fv) < 1e-13 * scale, "{cell}: P0 matrix differs from upwind FV by {:.2e}", max_diff(&dense, &fv));
        assert!(max_diff(&b, &rhs) < 1e-13 * max_abs(&rhs), "{cell}: right-hand sides differ");
    }
}

#[test]
fn krylov_solvers_converge_and_agree() {
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        let p = rotating(12, cell, 2);
        let reference = solve_cpu(&p, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
        assert!(reference.stats.relative_residual <= 1e-12);
        for (m, pc) in [(Method::Bicgstab, Precond::BlockJacobi), (Method::Gmres, Precond::Jacobi), (Method::Gmres, Precond::None)] {
            let s = solve_cpu(&p, &config(m, pc)).unwrap();
            assert!(s.stats.relative_residual <= 1e-12, "{cell} {m:?} + {pc:?}: {}", s.stats.relative_residual);
            let d = max_diff(&s.u, &reference.u) / max_abs(&reference.u);
            assert!(d < 1e-9, "{cell} {m:?} + {pc:?} differs from GMRES + block Jacobi by {d:.2e}");
            eprintln!("{cell} {m:?} + {pc:?}: {} iterations (block Jacobi GMRES: {})", s.stats.iterations, reference.stats.iterations);
        }
    }
}

#[test]
fn block_jacobi_is_exact_on_a_flow_aligned_sweep_within_one_cell() {
    // One cell: block Jacobi is the exact inverse, so GMRES needs one iteration.
    let mesh = generate::rectangle(1, 1, [0.0, 0.0], [1.0, 1.0], CellType::Quadrilateral).unwrap();
    let p = AdvectionProblem::new(Arc::new(mesh), 3, Velocity::field(formula("1"), formula("0.5")).unwrap(), formula("1"), formula("x"), vec![], Some(formula("0"))).unwrap();
    let s = solve_cpu(&p, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
    assert!(s.stats.iterations <= 1, "{} iterations", s.stats.iterations);
}

#[test]
fn per_cell_velocity_is_conservative_and_solves() {
    let p = per_cell(8, CellType::Triangle, 1);
    let (a, _) = assemble(&p).unwrap();
    // With c = 1 and piecewise-constant β (∇·β = 0 inside cells), A·1 per cell is |K| + Σ_e ∫ β̄·n,
    // and summing over all cells the interior fluxes cancel: Σ A·1 = area + boundary outflow.
    let ones = vec![1.0; p.ndofs()];
    let mut a1 = vec![0.0; p.ndofs()];
    a.spmv(&ones, &mut a1);
    let fpc = p.faces.per_cell;
    let Velocity::PerCell(v) = &p.velocity else { panic!() };
    let mut outflow = 0.0;
    for (k, &m) in p.faces.neighbour.iter().enumerate() {
        if m == galerkin::advection::faces::BOUNDARY {
            let e = edge_geometry(&p.mesh, k / fpc, k % fpc);
            outflow += e.length * (v[k / fpc][0] * e.normal[0] + v[k / fpc][1] * e.normal[1]).max(0.0);
        }
    }
    let sum: f64 = a1.iter().sum();
    assert!((sum - (1.0 + outflow)).abs() < 1e-12, "Σ A·1 = {sum}, expected {}", 1.0 + outflow);
    let s = solve_cpu(&p, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
    assert!(s.stats.relative_residual <= 1e-12);
}

fn parse_err(text: &str) -> String {
    let e = match AdvectionFile::parse(text, "t.toml") {
        Err(e) => e,
        Ok(f) => f.setup(std::path::Path::new(".")).err().expect("setup should fail"),
    };
    e.to_string()
}

const GOOD: &str = r#"
[mesh]
generator = "rectangle"
cell = "triangle"
n = [4, 4]
[space]
family = "dg"
degree = 1
[physics]
kind = "advection"
velocity = ["1", "0.5"]
inflow = "1"
"#;

#[test]
fn bad_problem_files_are_named() {
    assert!(AdvectionFile::parse(GOOD, "t.toml").unwrap().setup(std::path::Path::new(".")).is_ok());
    assert!(galerkin::advection::config::is_advection(GOOD));
    assert!(!galerkin::advection::config::is_advection("[space]\nfamily = \"dg\"\n"));
    let cases = [
        (GOOD.replace("degree = 1", "degree = 4"), "space.degree"),
        (GOOD.replace("n = [4, 4]", "n = [4, 4]\ncolour = 1"), "colour"),
        (GOOD.replace("\"0.5\"", "\"0.5 + t\""), "physics.velocity[1]"),
        (GOOD.replace("\"0.5\"", "\"foo(x)\""), "physics.velocity[1]"),
        (GOOD.replace("kind = \"advection\"", "kind = \"advection\"\nreaction = nan"), "physics.reaction"),
        (GOOD.replace("inflow = \"1\"", ""), "bc"),
        (GOOD.replace("family = \"dg\"", "family = \"lagrange\""), "space.family"),
        (GOOD.replace("cell = \"triangle\"", "cell = \"tetrahedron\""), "mesh.cell"),
        (GOOD.replace("inflow = \"1\"", "inflow = \"1\"\n[solver]\nmethod = \"cg\""), "solver.method"),
        (GOOD.replace("inflow = \"1\"", "inflow = \"1\"\n[solver]\nrtol = 2.0"), "solver.rtol"),
        (GOOD.replace("inflow = \"1\"", "inflow = \"1\"\n[[bc]]\nboundary = \"nowhere\"\nvalue = 1"), "bc[0].boundary"),
        (GOOD.replace("velocity = [\"1\", \"0.5\"]", "velocity = { regions = { 7 = [1.0, 0.0] } }"), "physics.velocity.regions"),
        (GOOD.replace("velocity = [\"1\", \"0.5\"]", "velocity = [\"abs(x)\", \"1\"]"), "physics.velocity"),
    ];
    // Far too big for any machine: refused before the mesh is built, naming the memory.
    let huge = GOOD.replace("n = [4, 4]", "n = [4000000, 4000000]");
    let opts = galerkin::problem::RunOptions { backend: Some(galerkin::backend::BackendKind::Cpu), out_dir: std::env::temp_dir().join("adv-huge"), progress: false };
    let e = galerkin::advection::run::run_text(&huge, std::path::Path::new("huge.toml"), &opts).err().expect("too big").to_string();
    assert!(e.contains("out of memory") && e.contains("host"), "{e}");
    for (text, key) in cases {
        let e = parse_err(&text);
        assert!(e.contains(key), "expected an error naming `{key}`, got: {e}");
    }
    // Per-region velocity (the generator names its cells `domain`).
    let regions = GOOD.replace("velocity = [\"1\", \"0.5\"]", "velocity = { regions = { domain = [1.0, 0.25] } }");
    assert!(AdvectionFile::parse(&regions, "t.toml").unwrap().setup(std::path::Path::new(".")).is_ok());
}

#[test]
fn gmsh_mesh_with_per_region_velocity_reproduces_a_linear_solution() {
    // β = (1, 0.2) on the region `plate` of a Gmsh mesh with a hole; u = x − 5y + 3 has β·∇u = 0,
    // so with c = 1, f = u every degree ≥ 1 reproduces it (the flow enters through `left`, the
    // lower wall and the upstream half of the hole, whose data come from `inflow`).
    let text = r#"
[mesh]
file = "meshes/plate-with-hole.msh"
[space]
family = "dg"
degree = 1
[physics]
kind = "advection"
velocity = { regions = { plate = [1.0, 0.2] } }
reaction = 1
source = "x - 5*y + 3"
inflow = "x - 5*y + 3"
[[bc]]
boundary = "left"
value = "x - 5*y + 3"
"#;
    let examples = std::env::var_os("GALERKIN_EXAMPLES").map(std::path::PathBuf::from).unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"));
    let s = AdvectionFile::parse(text, "plate.toml").unwrap().setup(&examples).unwrap();
    assert!(matches!(s.problem.velocity, Velocity::PerCell(_)));
    let sol = solve_cpu(&s.problem, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
    let (err, norm) = l2_error(&s.problem, &sol.u, &formula("x - 5*y + 3")).unwrap();
    assert!(err < 1e-9 * norm, "relative L2 error {:.2e} on {} cells", err / norm, s.problem.mesh.num_cells());
}

#[path = "common/npy.rs"]
mod npy;

/// `values` as a float64 `.npy`.
fn write_npy(path: &std::path::Path, shape: &[usize], fortran: bool, values: &[f64]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy::write_npy(path, shape, "<f8", fortran, &bytes);
}

#[test]
fn velocity_grid_from_npy_gives_each_cell_its_grid_value() {
    // β(i, j) = (1 + i, 0.5 + j/4) on a 4 × 4 grid over the unit square; an 8 × 8 mesh puts every
    // cell inside one grid cell, so each cell's velocity is known from its centroid. C and Fortran
    // order give the same field. A grid of rows, β = (1 + j/4, 0), has a single-valued normal
    // velocity on every edge of the mesh (divergence-free), so u = 1 (c = f = 1, inflow 1) solves
    // ∇·(βu) + u = 1 exactly and the scheme reproduces it.
    let dir = tempfile::tempdir().unwrap();
    let (nx, ny) = (4, 4);
    let value = |i: usize, j: usize, c: usize| if c == 0 { 1.0 + i as f64 } else { 0.5 + j as f64 / 4.0 };
    let c_order: Vec<f64> = (0..nx).flat_map(|i| (0..ny).flat_map(move |j| (0..2).map(move |c| value(i, j, c)))).collect();
    let f_order: Vec<f64> = (0..2).flat_map(|c| (0..ny).flat_map(move |j| (0..nx).map(move |i| value(i, j, c)))).collect();
    write_npy(&dir.path().join("v.npy"), &[nx, ny, 2], false, &c_order);
    write_npy(&dir.path().join("vf.npy"), &[nx, ny, 2], true, &f_order);
    let text = GOOD.replace("n = [4, 4]", "n = [8, 8]").replace("velocity = [\"1\", \"0.5\"]", "velocity = { npy = \"v.npy\" }").replace("inflow = \"1\"", "inflow = \"1\"\nreaction = 1\nsource = \"1\"");
    for file in ["v.npy", "vf.npy"] {
        let s = AdvectionFile::parse(&text.replace("v.npy", file), "t.toml").unwrap().setup(dir.path()).unwrap();
        let Velocity::PerCell(v) = &s.problem.velocity else { panic!("{file}: not per cell") };
        let mesh = &s.problem.mesh;
        for (c, vc) in v.iter().enumerate() {
            let xc: Vec<f64> = (0..2).map(|k| mesh.cell(c).iter().map(|&p| mesh.coords[p][k]).sum::<f64>() / 3.0).collect();
            let (i, j) = ((4.0 * xc[0]).floor() as usize, (4.0 * xc[1]).floor() as usize);
            assert_eq!(*vc, [value(i, j, 0), value(i, j, 1)], "{file}: cell {c} at {xc:?}");
        }
    }
    let rows: Vec<f64> = (0..nx).flat_map(|_| (0..ny).flat_map(move |j| [1.0 + j as f64 / 4.0, 0.0])).collect();
    write_npy(&dir.path().join("rows.npy"), &[nx, ny, 2], false, &rows);
    let s = AdvectionFile::parse(&text.replace("v.npy", "rows.npy"), "t.toml").unwrap().setup(dir.path()).unwrap();
    let sol = solve_cpu(&s.problem, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
    let (err, norm) = l2_error(&s.problem, &sol.u, &formula("1")).unwrap();
    assert!(err < 1e-10 * norm, "relative L2 error {:.2e}", err / norm);
    // Bad grids: the error names the key and the fault.
    write_npy(&dir.path().join("shape.npy"), &[4, 4, 3], false, &vec![1.0; 48]);
    let mut nan = c_order.clone();
    nan[(2 * ny + 1) * 2 + 1] = f64::NAN;
    write_npy(&dir.path().join("nan.npy"), &[nx, ny, 2], false, &nan);
    for (file, want) in [("shape.npy", "expected (nx, ny, 2)"), ("nan.npy", "grid cell (2, 1)"), ("missing.npy", "missing.npy")] {
        let e = AdvectionFile::parse(&text.replace("v.npy", file), "t.toml").unwrap().setup(dir.path()).err().expect(file).to_string();
        assert!(e.contains(want) && (file == "missing.npy" || e.contains("physics.velocity.npy")), "{file}: {e}");
    }
}
