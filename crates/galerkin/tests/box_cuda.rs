//! The box mesh generated on the device (`mesh::box_cuda`, issue 18) against the host generator:
//! the same cells (in the generator's local vertex order), coordinates to the bit, boundary facets
//! and tags; cells in the order of the lattice blocks along the Hilbert curve, vertices by first
//! appearance; the device buffers equal to the host copy and adopted as the resident mesh; and a
//! problem run on it (GPU) solving as the host mesh's run (CPU) does; the off switch. Skips without a GPU unless
//! GALERKIN_REQUIRE_GPU=1.
use galerkin::backend::cuda::{self, CudaBackend};
use galerkin::backend::BackendKind;
use galerkin::mesh::box_cuda::{box_mesh_cuda, box_mesh_cuda_tuned, BoxTuning, DeviceBox};
use galerkin::mesh::hilbert::HilbertTable;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::problem::config::ProblemFile;
use galerkin::problem::run::{run, setup_on_device, RunOptions};
use galerkin::space::FunctionSpace;
use rayon::prelude::*;
use std::sync::Arc;

/// The GPU (runs build their box on the device by default; `GALERKIN_DEVICE_BOX=off` is tested
/// in the run test, the only one here that reads it).
fn gpu() -> Option<CudaBackend> {
    cuda::test_gpu()
}

fn bits(x: [f64; 3]) -> [u64; 3] {
    x.map(f64::to_bits)
}

/// The lattice blocks (`i + n0 (j + n1 k)`) in the order of the Hilbert curve over the 2^L cube.
fn blocks_along_the_curve(n: [usize; 3]) -> Vec<usize> {
    let inv = HilbertTable::<3>::new().inverse();
    let level = n.iter().map(|&k| usize::BITS - (k - 1).leading_zeros()).max().unwrap() as usize;
    (0..1usize << (3 * level))
        .map(|h| HilbertTable::<3>::point(&inv, h, level))
        .filter(|p| (0..3).all(|k| p[k] < n[k]))
        .map(|p| p[0] + n[0] * (p[1] + n[1] * p[2]))
        .collect()
}

/// Every cell, coordinate and boundary facet of the device box `dev` is the host generator's
/// (`host`), in the documented order; the device buffers hold the host copy; the P1 (and, where
/// `p2`, P2) dof maps and Dirichlet nodes on both meshes put their nodes at the same points (bit
/// for bit at vertices, to 1e-12 elsewhere). Checked in parallel (10^7 cells in the large test).
fn assert_is_the_host_box(be: &CudaBackend, dev: &DeviceBox, host: &Mesh, n: [usize; 3], p2: bool, name: &str) {
    let m = &dev.mesh;
    assert_eq!((m.num_cells(), m.num_vertices(), m.boundary.len()), (host.num_cells(), host.num_vertices(), host.boundary.len()), "{name}");
    assert_eq!((&m.cell_tags, &m.tag_names), (&host.cell_tags, &host.tag_names), "{name}");
    // Cells: block after block along the curve, each block's cells in template order.
    let order = blocks_along_the_curve(n);
    let per = host.num_cells() / order.len();
    let nv = m.cell_type.num_vertices();
    let host_cell = |c: usize| order[c / per] * per + c % per;
    let bad = (0..m.num_cells()).into_par_iter().find_first(|&c| {
        let h = host_cell(c);
        (0..nv).any(|i| bits(m.coords[m.cells[c * nv + i]]) != bits(host.coords[host.cells[h * nv + i]]))
    });
    if let Some(c) = bad {
        panic!("{name}: cell {c} is not host cell {} (block {}, template cell {})", host_cell(c), order[c / per], c % per);
    }
    // Vertices by first appearance, and every host coordinate present exactly once.
    let mut next = 0;
    for (k, &v) in m.cells.iter().enumerate() {
        assert!(v <= next, "{name}: vertex {v} at position {k} appears before vertex {next}");
        next = next.max(v + 1);
    }
    assert_eq!(next, m.num_vertices(), "{name}: vertices never used");
    let mut a: Vec<[u64; 3]> = m.coords.par_iter().map(|&x| bits(x)).collect();
    let mut b: Vec<[u64; 3]> = host.coords.par_iter().map(|&x| bits(x)).collect();
    a.par_sort_unstable();
    b.par_sort_unstable();
    assert!(a == b, "{name}: the coordinates differ from the host's");
    // Boundary facets: the host's list, renumbered.
    let bad = m.boundary.par_iter().zip(&host.boundary).position_first(|(f, g)| {
        f.tag != g.tag || f.vertices.len() != g.vertices.len() || f.vertices.iter().zip(&g.vertices).any(|(&u, &v)| bits(m.coords[u]) != bits(host.coords[v]))
    });
    assert!(bad.is_none(), "{name}: boundary facet {bad:?} differs");
    // The device buffers are the host copy.
    let coords = dev.coords.to_host(be).unwrap();
    let verts = dev.verts.to_host(be).unwrap();
    assert!(coords == m.coords.as_flattened(), "{name}: device coordinates differ from the host copy");
    assert!(verts.len() == m.cells.len() && verts.par_iter().zip(&m.cells).all(|(&a, &b)| a as usize == b), "{name}: device cells differ from the host copy");
    // The dof maps (one pass for P1, the general one for P2) and the Dirichlet nodes.
    for degree in if p2 { vec![1, 2] } else { vec![1] } {
        let sd = FunctionSpace::lagrange(Arc::new(m.clone()), degree, 1).unwrap();
        let sh = FunctionSpace::lagrange(Arc::new(host.clone()), degree, 1).unwrap();
        assert_eq!((sd.ndofs(), sd.dofmap.nodes_per_cell), (sh.ndofs(), sh.dofmap.nodes_per_cell), "{name}: P{degree}");
        let nl = sd.dofmap.nodes_per_cell;
        let (dd, dh) = (&sd.dofmap, &sh.dofmap);
        // Vertex nodes are the vertices, bit for bit; a face or cell node of Q2 is a weighted sum
        // of its entity's vertices taken in their global order, which differs between the two
        // numberings, so it may differ in the last bit.
        let key = |x: [f64; 3]| if degree == 1 { bits(x) } else { x.map(|v| (v * 1e12).round().to_bits()) };
        let bad = (0..m.num_cells()).into_par_iter().find_first(|&c| {
            let h = host_cell(c);
            (0..nl).any(|i| key(dd.node_coords[dd.cell_nodes[c * nl + i]]) != key(dh.node_coords[dh.cell_nodes[h * nl + i]]))
        });
        assert!(bad.is_none(), "{name}: P{degree} dof map of cell {bad:?} differs from the host's");
        let tags: Vec<i32> = (1..=6).collect();
        let at = |s: &FunctionSpace| {
            let mut x: Vec<[u64; 3]> = s.boundary_nodes(&tags).unwrap().par_iter().map(|&k| key(s.dofmap.node_coords[k])).collect();
            x.par_sort_unstable();
            x
        };
        assert!(at(&sd) == at(&sh), "{name}: P{degree} Dirichlet nodes differ from the host's");
    }
}

/// Small boxes against the host generator, with the default step sizes and with scan tiles of
/// 256 items and download chunks of a few items (so that they cross several tiles, several passes
/// of the tile sums' scan and hundreds of chunks, as only 10^7 cells do at the defaults), three
/// times each (a race shows as a difference between rounds).
#[test]
fn device_box_is_the_host_box_along_the_curve() {
    let Some(be) = gpu() else { return };
    let cases = [
        ([5, 4, 3], [0.0, -1.0, 0.25], [1.0, 2.0, 0.5], CellType::Tetrahedron),
        ([4, 3, 3], [0.0; 3], [1.0; 3], CellType::Hexahedron),
        ([1, 1, 1], [0.0; 3], [1.0; 3], CellType::Tetrahedron),
        ([17, 3, 9], [0.0; 3], [0.3, 0.7, 1.1], CellType::Tetrahedron),
        ([33, 32, 31], [-1.0; 3], [1.0; 3], CellType::Tetrahedron),
        ([21, 19, 23], [0.0; 3], [2.0, 1.0, 1.5], CellType::Hexahedron),
    ];
    let tunings = [BoxTuning::default(), BoxTuning { scan_items: 1, download_chunk: 1000 }, BoxTuning { scan_items: 3, download_chunk: 7 }];
    for (n, lo, hi, cell) in cases {
        let host = generate::box_mesh(n[0], n[1], n[2], lo, hi, cell).unwrap();
        let mut first: Option<(Vec<[f64; 3]>, Vec<usize>)> = None;
        for (t, tuning) in tunings.iter().enumerate() {
            for round in 0..3 {
                let name = format!("{n:?} {cell}, tuning {tuning:?}, round {round}");
                let dev = box_mesh_cuda_tuned(&be, n, lo, hi, cell, *tuning).unwrap().unwrap_or_else(|| panic!("{name}: not built on the device"));
                if t == 0 && round == 0 {
                    galerkin::mesh::validate::validate(&dev.mesh).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_is_the_host_box(&be, &dev, &host, n, true, &name);
                    first = Some((dev.mesh.coords.clone(), dev.mesh.cells.clone()));
                } else {
                    // Every tuning and round builds the same mesh, bit for bit.
                    let (c, v) = first.as_ref().unwrap();
                    assert!(dev.mesh.coords.iter().zip(c).all(|(a, b)| bits(*a) == bits(*b)) && dev.mesh.cells == *v, "{name}: differs from the first build");
                    let coords = dev.coords.to_host(&be).unwrap();
                    let verts = dev.verts.to_host(&be).unwrap();
                    assert!(coords == dev.mesh.coords.as_flattened(), "{name}: device coordinates differ from the host copy");
                    assert!(verts.iter().zip(&dev.mesh.cells).all(|(&a, &b)| a as usize == b), "{name}: device cells differ from the host copy");
                }
            }
        }
    }
    // Shapes left to the host: other cells, a lattice far flatter than its curve's cube.
    assert!(box_mesh_cuda(&be, [2, 2, 2], [0.0; 3], [1.0; 3], CellType::Triangle).unwrap().is_none());
    assert!(box_mesh_cuda(&be, [512, 2, 2], [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap().is_none());
    assert!(box_mesh_cuda(&be, [0, 2, 2], [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap().is_none());
    // A tuning out of range is refused, not launched.
    for bad in [BoxTuning { scan_items: 0, download_chunk: 8 }, BoxTuning { scan_items: 17, download_chunk: 8 }, BoxTuning { scan_items: 8, download_chunk: 0 }] {
        assert!(box_mesh_cuda_tuned(&be, [2, 2, 2], [0.0; 3], [1.0; 3], CellType::Tetrahedron, bad).is_err(), "{bad:?}");
    }
}

/// The box, 215³ blocks of 6 tetrahedra (6·10^7 cells, 10^7 vertices: 117 scan tiles of
/// the curve, 116 458 of the first appearances, 29 download chunks of the cells), against the host
/// generator, twice. At the defaults this is the only size that crosses the chunks; the download
/// race that changed the 10⁷ run's answer showed here only. About a minute on the H100 machine's
/// 16 cores (the device run includes it with --include-ignored); hours on 2 cores.
#[test]
#[ignore = "10^7 cells: run on the GPU machine with --include-ignored"]
fn device_box_at_215_cubed_is_the_host_box() {
    let Some(be) = gpu() else { return };
    let n = [215; 3];
    let host = generate::box_mesh(n[0], n[1], n[2], [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap();
    for round in 0..2 {
        let dev = box_mesh_cuda(&be, n, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap().expect("215³ built on the device");
        assert_is_the_host_box(&be, &dev, &host, n, false, &format!("215³, round {round}"));
    }
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
    // The off switch: the host builds and reorders the box (no other test here reads it).
    let pf = ProblemFile::parse(&problem(1, 5, true), "box").unwrap();
    std::env::set_var("GALERKIN_DEVICE_BOX", "off");
    let s = setup_on_device(&pf, std::path::Path::new("."), false, &be);
    std::env::remove_var("GALERKIN_DEVICE_BOX");
    let s = s.unwrap();
    assert!(!s.mesh_parts.contains_key("device_box.device") && s.mesh_parts.contains_key("build"), "{:?}", s.mesh_parts);
}
