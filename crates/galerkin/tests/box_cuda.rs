//! The box mesh generated on the device (`mesh::box_cuda`, issue 18) against the host generator:
//! the same cells (in the generator's local vertex order), coordinates to the bit, boundary facets
//! and tags; cells in the order of the lattice blocks along the Hilbert curve, vertices by first
//! appearance; the device buffers equal to the host copy and adopted as the resident mesh; and a
//! problem run on it (GPU) solving as the host mesh's run (CPU) does. Skips without a GPU unless
//! GALERKIN_REQUIRE_GPU=1.
use galerkin::backend::cuda::{self, CudaBackend};
use galerkin::backend::BackendKind;
use galerkin::mesh::box_cuda::box_mesh_cuda;
use galerkin::mesh::hilbert::HilbertTable;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::problem::config::ProblemFile;
use galerkin::problem::run::{run, setup_on_device, RunOptions};

/// The GPU, with runs set to build their box on the device (opt-in, `GALERKIN_DEVICE_BOX`).
fn gpu() -> Option<CudaBackend> {
    std::env::set_var("GALERKIN_DEVICE_BOX", "on");
    cuda::test_gpu()
}

fn bits(x: [f64; 3]) -> [u64; 3] {
    x.map(f64::to_bits)
}

fn cell_coords(m: &Mesh, c: usize) -> Vec<[u64; 3]> {
    m.cell(c).iter().map(|&v| bits(m.coords[v])).collect()
}

/// Every cell, coordinate and boundary facet of the device box is the host generator's, in the
/// documented order, and the device buffers hold the host copy.
#[test]
fn device_box_is_the_host_box_along_the_curve() {
    let Some(be) = gpu() else { return };
    let inv = HilbertTable::<3>::new().inverse();
    let cases = [
        ([5, 4, 3], [0.0, -1.0, 0.25], [1.0, 2.0, 0.5], CellType::Tetrahedron),
        ([4, 3, 3], [0.0; 3], [1.0; 3], CellType::Hexahedron),
        ([1, 1, 1], [0.0; 3], [1.0; 3], CellType::Tetrahedron),
        ([17, 3, 9], [0.0; 3], [0.3, 0.7, 1.1], CellType::Tetrahedron),
        ([33, 32, 31], [-1.0; 3], [1.0; 3], CellType::Tetrahedron),
    ];
    for (n, lo, hi, cell) in cases {
        let name = format!("{n:?} {cell}");
        let host = generate::box_mesh(n[0], n[1], n[2], lo, hi, cell).unwrap();
        let dev = box_mesh_cuda(&be, n, lo, hi, cell).unwrap().unwrap_or_else(|| panic!("{name}: not built on the device"));
        let m = &dev.mesh;
        galerkin::mesh::validate::validate(m).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((m.num_cells(), m.num_vertices(), m.boundary.len()), (host.num_cells(), host.num_vertices(), host.boundary.len()), "{name}");
        assert_eq!((&m.cell_tags, &m.tag_names), (&host.cell_tags, &host.tag_names), "{name}");
        // Cells: block after block along the curve, each block's cells in template order.
        let level = n.iter().map(|&k| usize::BITS - (k - 1).leading_zeros()).max().unwrap() as usize;
        let per = host.num_cells() / (n[0] * n[1] * n[2]);
        let mut c = 0;
        for h in 0..1usize << (3 * level) {
            let p = HilbertTable::<3>::point(&inv, h, level);
            if (0..3).any(|k| p[k] >= n[k]) {
                continue;
            }
            let b = p[0] + n[0] * (p[1] + n[1] * p[2]);
            for t in 0..per {
                assert_eq!(cell_coords(m, c), cell_coords(&host, b * per + t), "{name}: cell {c} (block {p:?}, template cell {t})");
                c += 1;
            }
        }
        assert_eq!(c, m.num_cells(), "{name}");
        // Vertices by first appearance, and every host coordinate present exactly once.
        let mut next = 0;
        for &v in &m.cells {
            assert!(v <= next, "{name}: vertex {v} appears before vertex {next}");
            next = next.max(v + 1);
        }
        let mut a: Vec<[u64; 3]> = m.coords.iter().map(|&x| bits(x)).collect();
        let mut b: Vec<[u64; 3]> = host.coords.iter().map(|&x| bits(x)).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert!(a == b, "{name}: the coordinates differ from the host's");
        // Boundary facets: the host's list, renumbered.
        for (f, g) in m.boundary.iter().zip(&host.boundary) {
            let fc: Vec<[u64; 3]> = f.vertices.iter().map(|&v| bits(m.coords[v])).collect();
            let gc: Vec<[u64; 3]> = g.vertices.iter().map(|&v| bits(host.coords[v])).collect();
            assert_eq!((fc, f.tag), (gc, g.tag), "{name}: boundary facet");
        }
        // The device buffers are the host copy.
        let coords = dev.coords.to_host(&be).unwrap();
        let verts = dev.verts.to_host(&be).unwrap();
        assert!(coords == m.coords.as_flattened(), "{name}: device coordinates");
        assert!(verts.iter().zip(&m.cells).all(|(&a, &b)| a as usize == b) && verts.len() == m.cells.len(), "{name}: device cells");
    }
    // Shapes left to the host: other cells, a lattice far flatter than its curve's cube.
    assert!(box_mesh_cuda(&be, [2, 2, 2], [0.0; 3], [1.0; 3], CellType::Triangle).unwrap().is_none());
    assert!(box_mesh_cuda(&be, [512, 2, 2], [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap().is_none());
    assert!(box_mesh_cuda(&be, [0, 2, 2], [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap().is_none());
}

fn problem(degree: usize, n: usize, reorder: bool) -> String {
    format!(
        "backend = \"cpu\"\n[mesh]\ngenerator = \"box\"\nn = [{n}, {}, {}]\nupper = [1.0, 1.5, 0.75]\nreorder = {reorder}\n\
         [space]\ndegree = {degree}\n[physics]\nkind = \"poisson\"\nkappa = \"1 + x^2\"\nsource = \"-(2*x*y + 6*x^2 + 2)\"\n\
         [[bc]]\nboundary = [\"xmin\", \"xmax\", \"ymin\", \"ymax\", \"zmin\", \"zmax\"]\ntype = \"dirichlet\"\nvalue = \"x*y - z + x^2\"\n\
         [exact]\nsolution = \"x*y - z + x^2\"\n[solver]\nmethod = \"cg\"\npreconditioner = \"jacobi\"\nrtol = 1e-12\n\
         [output]\nvtu = false\nreport = false\nplot = false\npoints = [[0.31, 0.77, 0.4], [0.5, 0.5, 0.5], [0.9, 0.1, 0.2]]\n",
        n + 1,
        n - 1
    )
}

/// A run on the GPU (mesh built on the device and adopted as the resident mesh) gives the CPU
/// run's solution on the host mesh: errors against `[exact]` and point values to round-off, P1 and
/// P2; and the set-up on the device is that mesh (no upload).
#[test]
fn a_run_on_the_device_box_solves_as_on_the_host() {
    let Some(be) = gpu() else { return };
    for degree in [1, 2] {
        let text = problem(degree, 9, true);
        let pf = ProblemFile::parse(&text, "box").unwrap();
        let s = setup_on_device(&pf, std::path::Path::new("."), false, &be).unwrap();
        assert!(s.mesh_parts.contains_key("device_box.device"), "P{degree}: the box was not built on the device: {:?}", s.mesh_parts);
        let res = be.resident(&s.space).unwrap();
        let (c, v) = be.resident_mesh(&s.space.mesh).unwrap();
        assert!(res.coords.same(&c) && res.verts.same(&v), "P{degree}: resident copies differ");
        assert!(v.to_host(&be).unwrap().iter().zip(&s.space.mesh.cells).all(|(&a, &b)| a as usize == b), "P{degree}: resident cells");
        assert_eq!(res.nodes_are_verts(), degree == 1);
        drop((s, res, c, v));
        let go = |backend| {
            let dir = tempfile::tempdir().unwrap();
            let opts = RunOptions { backend: Some(backend), out_dir: dir.path().to_path_buf(), progress: false };
            run(&pf, std::path::Path::new("."), &opts).unwrap()
        };
        let (gpu, cpu) = (go(BackendKind::Cuda), go(BackendKind::Cpu));
        assert!(gpu.backend.starts_with("cuda"), "{}", gpu.backend);
        let (eg, ec) = (gpu.errors.unwrap(), cpu.errors.unwrap());
        assert!((eg.l2 - ec.l2).abs() <= 1e-9 * ec.l2 && (eg.h1_semi - ec.h1_semi).abs() <= 1e-9 * ec.h1_semi, "P{degree}: errors {eg:?} vs {ec:?}");
        // A sanity bound so the comparison is of real solutions (u quadratic: P2 exact, P1 close).
        assert!(ec.relative_l2 < if degree == 1 { 0.1 } else { 0.01 }, "P{degree}: {ec:?}");
        for (a, b) in gpu.points.iter().zip(&cpu.points) {
            assert!(a.value.iter().zip(&b.value).all(|(x, y)| (x - y).abs() <= 1e-9), "P{degree}: at {:?}: {:?} vs {:?}", a.x, a.value, b.value);
        }
        assert_eq!(gpu.points.len(), 3);
        assert!(gpu.timings.solve_ready > 0.0 && gpu.timings.solve_ready < gpu.timings.total);
    }
    // `reorder = false` keeps the host generator's lattice order: not built on the device.
    let pf = ProblemFile::parse(&problem(1, 5, false), "box").unwrap();
    let s = setup_on_device(&pf, std::path::Path::new("."), false, &be).unwrap();
    assert!(!s.mesh_parts.contains_key("device_box.device"));
}
