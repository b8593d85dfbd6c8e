//! The set-up that runs on the device (issue 18) against the host's: the load vector of a
//! problem file's source integrated by `kernels/load.cu` and the whole constrained system a run
//! solves (matrix values and right-hand side after Dirichlet elimination), on P1/P2 simplices and
//! Q1/Q2 hexahedra, scalar and vector fields, variable coefficients and non-zero boundary data.
//! Skips without a GPU unless GALERKIN_REQUIRE_GPU=1.
use galerkin::backend::cuda::{self, CudaBackend};
use galerkin::backend::Backend;
use galerkin::operator::load_cuda::load_vector_cuda;
use galerkin::operator::{AssemblyLevel, ElementIntegrator, Tuning};
use galerkin::problem::config::ProblemFile;
use galerkin::problem::run::setup;

fn gpu() -> Option<CudaBackend> {
    cuda::test_gpu()
}

/// A problem file: mesh, degree, physics lines, boundary data.
fn problem(mesh: &str, degree: usize, physics: &str, bc_value: &str) -> String {
    format!(
        "backend = \"cpu\"\n[mesh]\n{mesh}\n[space]\ndegree = {degree}\n[physics]\n{physics}\n\
         [[bc]]\nboundary = [\"xmin\", \"ymax\"]\ntype = \"dirichlet\"\nvalue = {bc_value}\n[output]\nvtu = false\nreport = false\nplot = false\n"
    )
}

fn cases() -> Vec<(&'static str, String)> {
    let poisson = "kind = \"poisson\"\nkappa = \"1 + x^2 + y*z\"\nsource = \"3*pi^2*sin(pi*x)*sin(pi*y)*cos(pi*z) + x*y\"";
    let tets = "generator = \"box\"\ncell = \"tetrahedron\"\nn = [5, 4, 3]\nupper = [1.0, 2.0, 0.5]";
    let hexes = "generator = \"box\"\ncell = \"hexahedron\"\nn = [4, 3, 3]";
    let tris = "generator = \"rectangle\"\ncell = \"triangle\"\nn = [7, 5]";
    let bc = "\"sin(x) + y^2 - z\"";
    vec![
        ("P1 tetrahedra", problem(tets, 1, poisson, bc)),
        ("P2 tetrahedra", problem(tets, 2, poisson, bc)),
        ("Q1 hexahedra", problem(hexes, 1, poisson, bc)),
        ("Q2 hexahedra", problem(hexes, 2, poisson, bc)),
        ("P2 triangles", problem(tris, 2, "kind = \"poisson\"\nkappa = 2.5\nsource = \"exp(x)*cos(3*y)\"", "\"x*y\"")),
        (
            "P2 elasticity on triangles",
            problem(tris, 2, "kind = \"elasticity\"\nE = 10.0\nnu = 0.3\nbody_force = [\"x*y\", \"-1 - sin(x)\"]", "[\"0.01*y\", 0.0]"),
        ),
        (
            "Q1 elasticity on hexahedra",
            problem(hexes, 1, "kind = \"elasticity\"\nE = 10.0\nnu = 0.3\nbody_force = [\"x\", \"y*z\", 2.0]", "[0.0, \"0.1*x\", 0.0]"),
        ),
    ]
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// The device load vector equals the host's to 1e-12 relative (only the order of the sums differs).
#[test]
fn device_load_vector_equals_the_host_load() {
    let Some(be) = gpu() else { return };
    for (name, text) in cases() {
        let pf = ProblemFile::parse(&text, name).unwrap();
        let s = setup(&pf, std::path::Path::new("."), false).unwrap();
        let p = &s.problem;
        let exprs = p.source_exprs.as_ref().unwrap_or_else(|| panic!("{name}: the source was not kept as expressions"));
        let integ = ElementIntegrator::with_quadrature(&p.space, p.physics.as_ref(), p.quadrature_degree, p.quadrature).unwrap();
        let dev = load_vector_cuda(&be, &integ, exprs).unwrap().unwrap_or_else(|| panic!("{name}: no device load"));
        let dev = be.to_host(&dev).unwrap();
        let host = p.load_only().unwrap();
        assert_eq!(dev.len(), host.len(), "{name}");
        let scale = max_abs(&host);
        assert!(scale > 1e-6, "{name}: a load vector of zeros proves nothing");
        let diff = dev.iter().zip(&host).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff <= 1e-12 * scale, "{name}: device load differs from the host's by {diff:e} (scale {scale:e})");
    }
}

/// The whole system a run solves: the GPU's (device load, device assembly, device elimination)
/// equals the CPU's, matrix values and right-hand side, to 1e-12 relative.
#[test]
fn device_system_equals_the_host_system() {
    let Some(be) = gpu() else { return };
    for (name, text) in cases() {
        let pf = ProblemFile::parse(&text, name).unwrap();
        let s = setup(&pf, std::path::Path::new("."), false).unwrap();
        let p = &s.problem;
        let host = p.assemble(AssemblyLevel::Full).unwrap();
        let dev = p.system(&be, AssemblyLevel::Full, Tuning::default()).unwrap();
        assert!(!host.constraints.dofs.is_empty(), "{name}: no Dirichlet dofs");
        let (hb, db) = (host.rhs_to_host().unwrap(), dev.rhs_to_host().unwrap());
        let scale = max_abs(&hb);
        let diff = db.iter().zip(&hb).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff <= 1e-12 * scale, "{name}: rhs differs by {diff:e} (scale {scale:e})");
        let (ha, da) = (host.matrix_to_host().unwrap().unwrap(), dev.matrix_to_host().unwrap().unwrap());
        assert_eq!((&ha.row_ptr, &ha.col_idx), (&da.row_ptr, &da.col_idx), "{name}: patterns differ");
        let scale = max_abs(&ha.values);
        let diff = da.values.iter().zip(&ha.values).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff <= 1e-12 * scale, "{name}: matrix differs by {diff:e} (scale {scale:e})");
    }
}

/// A source the device cannot take (a Neumann load next to it) still assembles on the GPU, through
/// the host load, to the CPU's right-hand side.
#[test]
fn facet_loads_fall_back_to_the_host_load() {
    let Some(be) = gpu() else { return };
    let text = "backend = \"cpu\"\n[mesh]\ngenerator = \"box\"\ncell = \"tetrahedron\"\nn = [4, 4, 4]\n[space]\ndegree = 1\n\
                [physics]\nkind = \"poisson\"\nsource = \"x + y\"\n[[bc]]\nboundary = [\"xmin\"]\ntype = \"dirichlet\"\nvalue = 0.0\n\
                [[bc]]\nboundary = [\"xmax\"]\ntype = \"neumann\"\nvalue = \"1 + y\"\n[output]\nvtu = false\nreport = false\nplot = false\n";
    let pf = ProblemFile::parse(text, "neumann").unwrap();
    let s = setup(&pf, std::path::Path::new("."), false).unwrap();
    let host = s.problem.assemble(AssemblyLevel::Full).unwrap().rhs_to_host().unwrap();
    let dev = s.problem.system(&be, AssemblyLevel::Full, Tuning::default()).unwrap().rhs_to_host().unwrap();
    let scale = max_abs(&host);
    let diff = dev.iter().zip(&host).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(diff <= 1e-12 * scale, "rhs differs by {diff:e}");
}

/// The device sparsity pattern (`kernels/pattern.cu`) is the host's exactly: P1–P3 simplices in 2D
/// and 3D, Q1–Q3 hexahedra, scalar and blocked (elasticity) dofs, a hierarchical space.
#[test]
fn device_pattern_equals_the_host_pattern() {
    use galerkin::mesh::{generate, CellType};
    use galerkin::operator::assemble::sparsity;
    use galerkin::operator::level::full::pattern_cuda::device_pattern_of;
    use galerkin::space::FunctionSpace;
    use std::sync::Arc;
    let Some(be) = gpu() else { return };
    let tets = Arc::new(generate::box_mesh(4, 3, 3, [0.0; 3], [1.0, 2.0, 0.5], CellType::Tetrahedron).unwrap());
    let hexes = Arc::new(generate::box_mesh(3, 3, 2, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap());
    let tris = Arc::new(generate::rectangle(6, 5, [0.0; 2], [1.0; 2], CellType::Triangle).unwrap());
    let mut spaces = Vec::new();
    for (mesh, degrees) in [(&tets, 1..=3), (&hexes, 1..=3), (&tris, 1..=3)] {
        for k in degrees {
            spaces.push((format!("{} degree {k}", mesh.cell_type), FunctionSpace::lagrange(mesh.clone(), k, 1).unwrap()));
        }
    }
    spaces.push(("P2 elasticity on tetrahedra".into(), FunctionSpace::lagrange(tets.clone(), 2, 3).unwrap()));
    spaces.push(("Q1 elasticity on hexahedra".into(), FunctionSpace::lagrange(hexes.clone(), 1, 3).unwrap()));
    spaces.push(("P1 elasticity on triangles".into(), FunctionSpace::lagrange(tris.clone(), 1, 2).unwrap()));
    spaces.push(("hierarchical Q4".into(), FunctionSpace::hierarchical(hexes.clone(), 4, Default::default(), 1).unwrap()));
    for (name, space) in &spaces {
        let host = sparsity(space).unwrap();
        let dev = device_pattern_of(&be, space).unwrap().unwrap_or_else(|| panic!("{name}: no device pattern"));
        let dev = dev.to_host(&be).unwrap();
        assert_eq!((dev.nrows, dev.ncols), (host.nrows, host.ncols), "{name}");
        assert!(dev.row_ptr == host.row_ptr, "{name}: row pointers differ");
        assert!(dev.col_idx == host.col_idx, "{name}: column indices differ");
        assert!(dev.values.iter().all(|&v| v == 0.0), "{name}: values not zeroed");
    }
}

/// A pattern built ahead of its level (`keep_pattern`, what a run's set-up does beside the host's
/// integrator) is taken by its own space only, once, and is the host's pattern; another space's
/// take finds none (and drops it), so no level can assemble into another space's pattern.
#[test]
fn a_kept_pattern_serves_only_its_own_space() {
    use galerkin::mesh::{generate, CellType};
    use galerkin::operator::assemble::sparsity;
    use galerkin::operator::level::full::pattern_cuda::device_pattern_of;
    use galerkin::space::FunctionSpace;
    use std::sync::Arc;
    let Some(be) = gpu() else { return };
    let mesh = Arc::new(generate::box_mesh(4, 3, 3, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
    let (p1, p2) = (FunctionSpace::lagrange(mesh.clone(), 1, 1).unwrap(), FunctionSpace::lagrange(mesh, 2, 1).unwrap());
    let ahead = |s: &FunctionSpace| device_pattern_of(&be, s).unwrap().expect("a device pattern");
    be.keep_pattern(&p1, ahead(&p1));
    assert!(be.take_pattern(&p2).is_none(), "P2 took the pattern kept for P1");
    assert!(be.take_pattern(&p1).is_none(), "a pattern taken by another space's attempt was kept");
    be.keep_pattern(&p1, ahead(&p1));
    let kept = be.take_pattern(&p1).expect("the kept pattern").to_host(&be).unwrap();
    let host = sparsity(&p1).unwrap();
    assert!(kept.row_ptr == host.row_ptr && kept.col_idx == host.col_idx, "the kept pattern is not P1's");
    assert!(be.take_pattern(&p1).is_none(), "taken twice");
}

/// A node with more neighbours than one thread's list holds (a fan of 1100 triangles) makes the
/// device pattern decline, and the GPU assembly then takes the host's pattern: same matrix.
#[test]
fn crowded_nodes_fall_back_to_the_host_pattern() {
    use galerkin::mesh::{CellType, Mesh};
    use galerkin::operator::level::full::pattern_cuda::device_pattern_of;
    use galerkin::physics::Diffusion;
    use galerkin::problem::linear::{scalar, LinearProblem};
    use galerkin::space::FunctionSpace;
    use std::sync::Arc;
    let Some(be) = gpu() else { return };
    let n = 1100;
    let mut coords = vec![[0.0; 3]];
    coords.extend((0..n).map(|k| {
        let a = 2.0 * std::f64::consts::PI * k as f64 / n as f64;
        [a.cos(), a.sin(), 0.0]
    }));
    let cells: Vec<usize> = (0..n).flat_map(|k| [0, 1 + k, 1 + (k + 1) % n]).collect();
    let boundary = (0..n).map(|k| galerkin::mesh::BoundaryFacet { vertices: vec![1 + k, 1 + (k + 1) % n], tag: 1 }).collect();
    let names = std::collections::BTreeMap::from([("rim".to_string(), (1, 1))]);
    let mesh = Arc::new(Mesh::new(CellType::Triangle, coords, cells, None, boundary, names).unwrap());
    let space = Arc::new(FunctionSpace::lagrange(mesh, 1, 1).unwrap());
    assert!(device_pattern_of(&be, &space).unwrap().is_none(), "1100 neighbours fit a list of 1024?");
    let p = LinearProblem::new(space, Diffusion::new(1.0)).source(scalar(|x| 1.0 + x[0])).dirichlet(["rim"], scalar(|x| x[1]));
    let host = p.assemble(AssemblyLevel::Full).unwrap().matrix_to_host().unwrap().unwrap();
    let dev = p.system(&be, AssemblyLevel::Full, Tuning::default()).unwrap().matrix_to_host().unwrap().unwrap();
    assert_eq!((&host.row_ptr, &host.col_idx), (&dev.row_ptr, &dev.col_idx));
    let diff = dev.values.iter().zip(&host.values).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(diff <= 1e-12 * max_abs(&host.values), "matrix differs by {diff:e}");
}

/// The mesh and dof map are uploaded once per mesh and space and shared (a P1 space's nodes are
/// its vertices' buffer), hold the host's data, and go with another mesh or a release.
#[test]
fn resident_copies_are_shared_and_exact() {
    use galerkin::mesh::{generate, CellType};
    use galerkin::space::FunctionSpace;
    use std::sync::Arc;
    let Some(be) = gpu() else { return };
    let mesh = Arc::new(generate::box_mesh(3, 2, 2, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
    let p1 = FunctionSpace::lagrange(mesh.clone(), 1, 1).unwrap();
    let p2 = FunctionSpace::lagrange(mesh.clone(), 2, 1).unwrap();
    let a = be.resident(&p1).unwrap();
    let b = be.resident(&p1).unwrap();
    assert!(a.coords.same(&b.coords) && a.verts.same(&b.verts) && a.nodes.same(&b.nodes), "uploaded twice");
    assert!(a.nodes_are_verts(), "P1 nodes are the vertices");
    let c = be.resident(&p2).unwrap();
    assert!(c.coords.same(&a.coords) && c.verts.same(&a.verts) && !c.nodes_are_verts());
    let u32s = |v: &[usize]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
    assert_eq!(c.nodes.to_host(&be).unwrap(), u32s(&p2.dofmap.cell_nodes));
    assert_eq!(c.verts.to_host(&be).unwrap(), u32s(&mesh.cells));
    let flat: Vec<f64> = mesh.coords.iter().flatten().copied().collect();
    assert!(c.coords.to_host(&be).unwrap() == flat);
    // A clone of the space with its own node list is not taken for the original.
    let p2b = p2.clone();
    assert!(!be.resident(&p2b).unwrap().nodes.same(&c.nodes));
    be.release_resident();
    assert!(!be.resident(&p1).unwrap().verts.same(&a.verts), "release kept the old copies");
    let other = Arc::new(generate::box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
    let q = FunctionSpace::lagrange(other, 1, 1).unwrap();
    assert_eq!(be.resident(&q).unwrap().verts.len(), 8 * 6 * 4);
}
