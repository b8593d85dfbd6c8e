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
