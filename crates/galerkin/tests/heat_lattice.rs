//! The `none` level built straight from a box description (no mesh: `operator::level::none::direct`,
//! `problem::heat::lattice`) is the lattice the stepper recognises in the generated mesh: the same
//! step operators (against the CPU's assembled matrices), the same temperatures and PCG
//! iterations, for Kuhn tetrahedra and hexahedra, backward Euler and Crank–Nicolson; CPU and GPU
//! agree; the GPU's z-marching apply with the fused p·q matches the CPU's masked apply and dot.
mod common;
use common::*;
use galerkin::backend::{Backend, Cpu};
use galerkin::mesh::{generate, CellType};
use galerkin::operator::level::none::direct::LatticeBox;
use galerkin::operator::level::none::grid::GridData;
use galerkin::operator::{AssemblyLevel, FeBackend, Tuning};
use galerkin::physics::{Coefficient, Diffusion, Mass, Sum};
use galerkin::problem::heat::lattice::{LatticeBackend, LatticeHeat, LatticeMaterial};
use galerkin::problem::heat::{HeatSetup, HeatStepper};
use galerkin::problem::LinearProblem;
use galerkin::space::FunctionSpace;
use std::collections::BTreeMap;
use std::sync::Arc;

const MATERIALS: [LatticeMaterial; 3] = [
    LatticeMaterial { rhoc: 1.0, k: 1.0 },
    LatticeMaterial { rhoc: 0.3, k: 0.05 },
    LatticeMaterial { rhoc: 2.0, k: 7.0 },
];

/// Three materials by position (slanted layers), as an index per cell from its centroid.
fn region(c: [f64; 3]) -> u8 {
    let s = c[0] + 0.3 * c[2];
    (s > 0.35) as u8 + (s > 0.7) as u8
}

fn boxes() -> Vec<LatticeBox> {
    [CellType::Tetrahedron, CellType::Hexahedron].into_iter().map(|cell| LatticeBox::new([5, 4, 3], [0.0; 3], [1.0, 0.8, 0.5], cell).unwrap()).collect()
}

/// The same body as a generated mesh with one region per material (tag = index + 1).
fn mesh_space(bx: &LatticeBox) -> Arc<FunctionSpace> {
    let mut mesh = generate::box_mesh(bx.n[0], bx.n[1], bx.n[2], bx.lo, bx.hi, bx.cell).unwrap();
    mesh.cell_tags = (0..mesh.num_cells())
        .map(|c| {
            let v = mesh.cell(c);
            let x: [f64; 3] = std::array::from_fn(|d| v.iter().map(|&i| mesh.coords[i][d]).sum::<f64>() / v.len() as f64);
            1 + region(x) as i32
        })
        .collect();
    Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 1, 1).unwrap())
}

fn per_region(f: impl Fn(&LatticeMaterial) -> f64) -> Coefficient {
    Coefficient::PerRegion(MATERIALS.iter().enumerate().map(|(m, v)| (m as i32 + 1, f(v))).collect::<BTreeMap<_, _>>())
}

/// Smooth, not constant: a start every step of which takes PCG iterations.
fn initial(bx: &LatticeBox) -> Vec<f64> {
    (0..bx.ndofs()).map(|v| bx.node(v)).map(|x| 1.0 + x[0] * x[1] + (3.0 * x[2]).sin()).collect()
}

fn check_against_mesh<B: FeBackend + LatticeBackend>(be: &B, bx: &LatticeBox) {
    let space = mesh_space(bx);
    assert_eq!(space.ndofs(), bx.ndofs());
    let material = bx.cell_materials(|c| Ok(region(c))).unwrap();
    assert!((0..3).all(|m| material.contains(&m)), "every material present");
    let (dt, label) = (2e-3, format!("{:?} on {}", bx.cell, be.name()));
    for theta in [1.0, 0.5] {
        let lattice = LatticeHeat::new(be, bx, material.clone(), &MATERIALS, &["zmin", "xmax"], dt, theta).unwrap();
        // Both step operators against the CPU's assembled matrices of the same physics.
        let x = test_vector(bx.ndofs());
        for (s, name) in [(theta, "implicit"), (theta - 1.0, "explicit")] {
            let physics = Sum(vec![Box::new(Mass::new(per_region(|v| v.rhoc / dt), 1)), Box::new(Diffusion::new(per_region(|v| s * v.k)))]);
            let full = LinearProblem::new(space.clone(), physics).system(&Cpu, AssemblyLevel::Full, Tuning::default()).unwrap();
            let want = full.apply_host(&x).unwrap();
            let mut y = be.zeros(x.len()).unwrap();
            let xb = be.from_host(&x).unwrap();
            if name == "implicit" { lattice.apply_implicit(&xb, &mut y).unwrap() } else { lattice.apply_explicit(&xb, &mut y).unwrap() }
            let d = rel_diff(&want, &be.to_host(&y).unwrap());
            assert!(d < 1e-12, "{label} θ = {theta}: direct {name} operator differs from the assembled one by {d:e}");
        }
        // The stepper on the mesh (recognised lattice at `none`) from the same start.
        let setup = HeatSetup { rhoc: per_region(|v| v.rhoc), k: per_region(|v| v.k), zero_dirichlet: vec!["zmin".into(), "xmax".into()], dt, theta };
        let stepper = HeatStepper::new(be, space.clone(), &setup, AssemblyLevel::None).unwrap();
        let t0 = initial(bx);
        let (mut ta, mut tb) = (be.from_host(&t0).unwrap(), be.from_host(&t0).unwrap());
        let ia = lattice.run(&mut ta, 6).unwrap();
        let ib = stepper.run(&mut tb, 6).unwrap();
        let (ta, tb) = (be.to_host(&ta).unwrap(), be.to_host(&tb).unwrap());
        let d = rel_diff(&tb, &ta);
        assert!(d < 1e-9, "{label} θ = {theta}: temperatures differ by {d:e}");
        assert!(ia.iter().all(|&i| i > 3), "{label}: every step iterates ({ia:?})");
        // Table entries by quadrature and in closed form differ in the last bits: at most one
        // iteration either way per step, and the same in total within the steps' count.
        for (a, b) in ia.iter().zip(&ib) {
            assert!(a.abs_diff(*b) <= 1, "{label} θ = {theta}: iterations {ia:?} (direct) vs {ib:?} (mesh)");
        }
        assert!(ta.iter().enumerate().all(|(v, &t)| { let p = bx.node(v); (p[2] > 0.0 && p[0] < 1.0) || t == 0.0 }), "{label}: fixed sides held at 0");
    }
}

/// The direct lattice is the mesh-recognised lattice: operators, temperatures, iterations.
#[test]
fn direct_lattice_matches_the_mesh_stepper() {
    for bx in boxes() {
        on_backends!(|be| {
            check_against_mesh(be, &bx);
        });
    }
}

/// CPU and GPU run the direct lattice to the same temperatures (the GPU's resident PCG may run up
/// to 3 iterations past convergence per solve).
#[test]
fn direct_lattice_cpu_and_gpu_agree() {
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    for bx in boxes() {
        let bx = LatticeBox::new([13, 9, 11], bx.lo, bx.hi, bx.cell).unwrap();
        let material = bx.cell_materials(|c| Ok(region(c))).unwrap();
        let t0 = initial(&bx);
        let cpu = LatticeHeat::new(&Cpu, &bx, material.clone(), &MATERIALS, &["zmin"], 1e-3, 1.0).unwrap();
        let mut tc = t0.clone();
        let ic = cpu.run(&mut tc, 5).unwrap();
        let dev = LatticeHeat::new(&gpu, &bx, material, &MATERIALS, &["zmin"], 1e-3, 1.0).unwrap();
        let mut tg = gpu.from_host(&t0).unwrap();
        let ig = dev.run(&mut tg, 5).unwrap();
        let d = rel_diff(&tc, &gpu.to_host(&tg).unwrap());
        assert!(d < 1e-9, "{:?}: CPU and GPU temperatures differ by {d:e}", bx.cell);
        for (c, g) in ic.iter().zip(&ig) {
            assert!(*g + 1 >= *c && *g <= c + 4, "{:?}: iterations CPU {ic:?} GPU {ig:?}", bx.cell);
        }
    }
}

/// Both GPU applies — tiles of nodes and z-marching (several z-chunks, a partial last one, a
/// partial x tile) — with 6 materials (two take their stencils from memory rather than the kernel
/// parameters), plain and masked, the marching one also with the fused x·y (twice: the arrival
/// counter resets), against the CPU lattice.
#[test]
fn gpu_applies_and_fused_dot_match_the_cpu() {
    use galerkin::operator::level::none::grid_cuda::DeviceGrid;
    use galerkin::operator::level::LevelOperator;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let bx = LatticeBox::new([37, 11, 21], [0.0; 3], [1.0, 0.4, 0.6], cell).unwrap();
        // Six materials in slabs along z and a cylinder: uniform nodes of each, and interfaces.
        let material = bx.cell_materials(|c| Ok(if (c[0] - 0.5).powi(2) + (c[2] - 0.3).powi(2) < 0.02 { 5 } else { (c[2] * 8.3) as u8 % 5 })).unwrap();
        let coef: Vec<[f64; 2]> = (0..6).map(|m| [1.0 + m as f64, 0.5 + 2.0 * m as f64]).collect();
        let g = GridData::from_box(&bx, material, &coef).unwrap();
        let free = bx.free_mask(&["xmin", "zmax"]).unwrap();
        let mut cpu = Cpu.lattice_operator(g.clone()).unwrap();
        cpu.set_dirichlet(&Cpu, &free).unwrap();
        let n = bx.ndofs();
        let x: Vec<f64> = (0..n).map(|v| (v as f64 * 0.37).sin() + 0.2).collect();
        let (xd, md) = (gpu.from_host(&x).unwrap(), gpu.from_host(&free).unwrap());
        for choice in [Some(0), Some(4), Some(7)] {
            let mut dev = DeviceGrid::from_data_with(&gpu, g.clone(), choice).unwrap();
            dev.set_dirichlet(&gpu, &free).unwrap();
            let label = format!("{cell:?} {}", if choice == Some(0) { "tiles".to_string() } else { format!("marching by {choice:?} planes") });
            for masked in [false, true] {
                let mut want = vec![0.0; n];
                if masked {
                    assert!(cpu.apply_masked(&Cpu, &x, &mut want, &free).unwrap());
                } else {
                    cpu.apply(&Cpu, &x, &mut want).unwrap();
                }
                let dot: f64 = x.iter().zip(&want).map(|(a, b)| a * b).sum();
                let mut y = gpu.zeros(n).unwrap();
                if masked {
                    assert!(dev.apply_masked(&gpu, &xd, &mut y, &md).unwrap());
                } else {
                    dev.apply(&gpu, &xd, &mut y).unwrap();
                }
                let d = rel_diff(&want, &gpu.to_host(&y).unwrap());
                assert!(d < 1e-13, "{label} masked={masked}: GPU apply differs by {d:e}");
                for round in 0..2 {
                    let mut parts = gpu.zeros(4).unwrap();
                    let mut y = gpu.zeros(n).unwrap();
                    let fused = dev.apply_dot(&gpu, &xd, &mut y, masked.then_some(&md), &mut parts).unwrap();
                    if choice == Some(0) {
                        assert!(fused.is_none(), "{label}: the tiles leave x·y to a reduction of its own");
                        continue;
                    }
                    let np = fused.expect("the marching apply fuses the dot");
                    assert_eq!(np, 1, "{label}: the total in one value");
                    let d = rel_diff(&want, &gpu.to_host(&y).unwrap());
                    assert!(d < 1e-13, "{label} masked={masked}: fused apply differs by {d:e}");
                    let got = gpu.to_host(&parts).unwrap();
                    assert!((got[0] - dot).abs() <= 1e-11 * dot.abs().max(1.0), "{label} masked={masked} round {round}: fused x·y {} vs {dot}", got[0]);
                    assert_eq!(&got[1..], &[0.0; 3], "{label}: nothing written past the total");
                }
            }
        }
    }
}

/// The marching apply's own Jacobi-PCG loops (`grid_cuda` `pcg`, D⁻¹ per node code): the ring
/// loop (march with p·q, update, direction: the default) and the fused one (the direction update
/// and x inside the march), against the CPU and against the GPU's generic loop (tiles): six
/// materials (codes 4 and 5 take their stencils from memory), non-zero Dirichlet values on two
/// sides, a source, Crank–Nicolson; the same temperatures, iterations within the resident loop's
/// slack, and the loop taken (its iteration count grows).
/// The tests that set the process-wide PCG loop run one at a time (each asserts which loop ran).
static LOOP_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn gpu_lattice_pcg_loops_match_the_cpu_and_the_generic_loop() {
    use galerkin::operator::level::none::grid_cuda::{lattice_pcg_iterations, set_pcg_loop, PcgLoop};
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let _one = LOOP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mats: Vec<LatticeMaterial> = (0..6).map(|m| LatticeMaterial { rhoc: 0.5 + 0.3 * m as f64, k: 0.2 + 1.5 * m as f64 }).collect();
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let bx = LatticeBox::new([23, 9, 17], [0.0; 3], [1.0, 0.4, 0.7], cell).unwrap();
        let material = bx.cell_materials(|c| Ok(if (c[0] - 0.5).powi(2) + (c[2] - 0.3).powi(2) < 0.02 { 5 } else { (c[2] * 8.3) as u8 % 5 })).unwrap();
        let g: Vec<f64> = (0..bx.ndofs()).map(|v| bx.node(v)).map(|x| 1.0 + x[0] - 0.5 * x[1]).collect();
        let t0 = initial(&bx);
        let setup = |be_heat: &mut dyn FnMut(&[f64], &[f64])| {
            let f = LatticeHeat::<Cpu>::load_vector(&Cpu, &bx, material.clone(), &[2.0, 0.0, 1.0, 0.5, 3.0, 1.0]).unwrap();
            be_heat(&g, &f);
        };
        let mut cpu = LatticeHeat::new(&Cpu, &bx, material.clone(), &mats, &["zmin", "xmax"], 2e-3, 0.5).unwrap();
        setup(&mut |g, f| {
            cpu.set_dirichlet_values(g).unwrap();
            cpu.set_source(f).unwrap();
        });
        let mut tc = t0.clone();
        let ic = cpu.run(&mut tc, 5).unwrap();
        for (choice, mode) in [(Some(0), PcgLoop::Ring), (Some(4), PcgLoop::Ring), (Some(6), PcgLoop::Ring), (Some(4), PcgLoop::Fused), (Some(6), PcgLoop::Fused)] {
            let label = format!("{cell:?} {choice:?} {mode:?}");
            // Process-wide; other tests are valid under either loop (this one sets them in turn, the
            // other test that sets it waits on LOOP_LOCK).
            set_pcg_loop(mode);
            let mut dev = LatticeHeat::new_with(&gpu, &bx, material.clone(), &mats, &["zmin", "xmax"], 2e-3, 0.5, choice).unwrap();
            setup(&mut |g, f| {
                dev.set_dirichlet_values(g).unwrap();
                dev.set_source(f).unwrap();
            });
            let before = lattice_pcg_iterations(mode);
            let mut tg = gpu.from_host(&t0).unwrap();
            let ig = dev.run(&mut tg, 5).unwrap();
            let ran = lattice_pcg_iterations(mode) - before;
            if choice != Some(0) {
                assert!(ran >= ig.iter().sum::<usize>(), "{label}: the lattice loop ran {ran} of {ig:?} iterations");
            }
            let d = rel_diff(&tc, &gpu.to_host(&tg).unwrap());
            assert!(d < 1e-9, "{label}: CPU and GPU temperatures differ by {d:e}");
            for (c, g) in ic.iter().zip(&ig) {
                assert!(*g + 1 >= *c && *g <= c + 4, "{label}: iterations CPU {ic:?} GPU {ig:?}");
            }
        }
        set_pcg_loop(PcgLoop::Ring);
    }
}

/// The Robin face terms of the test below as a matrix (the mesh path's facet integration on a slab
/// per side, `problem::heat::faces`).
fn robin_matrix(bx: &LatticeBox, h: &[f64; 6]) -> galerkin::linalg::CsrMatrix {
    use galerkin::operator::level::none::direct::SIDES;
    use galerkin::problem::heat::{HeatLoads, Load};
    use galerkin::problem::linear::Boundary;
    let loads = (0..6).filter(|&s| h[s] != 0.0).map(|s| Load::Robin { on: vec![Boundary::Name(SIDES[s].into())], h: h[s], ambient: 0.0 }).collect();
    galerkin::problem::heat::faces::face_terms(bx, &HeatLoads { loads }, true).unwrap().robin.unwrap()
}

/// Robin convection inside the lattice's element matrices (`LatticeHeat::new_robin`,
/// `GridData::from_box_with_faces`: face materials per block, side stencils with the face mass)
/// is the face matrix beside the lattice (`set_face_terms`): the same step operators (1e-13),
/// temperatures (1e-10) and iterations on the CPU, and on the GPU with the tiles, the march with
/// the ring loop and the fused loop; three sides meeting at an edge and a corner, a Dirichlet side
/// next to them; Robin on all six sides with two materials (54 face materials: no side stencils,
/// the march on the gather there); too many face materials decline (`None`). The GPU runs solve to
/// rtol 1e-12 (their iterates then agree with the CPU's to round-off, not to the solver tolerance).
#[test]
fn robin_inside_the_lattice_matches_the_face_matrix() {
    use galerkin::operator::level::none::grid_cuda::{set_pcg_loop, PcgLoop};
    let gpu = galerkin::backend::cuda::test_gpu();
    let _one = LOOP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let bx = LatticeBox::new([11, 7, 9], [0.0; 3], [1.0, 0.6, 0.8], cell).unwrap();
        let material = bx.cell_materials(|c| Ok(region(c))).unwrap();
        let cases: [(&[LatticeMaterial], [f64; 6]); 2] = [(&MATERIALS, [3.0, 0.0, 0.0, 1.5, 0.0, 7.0]), (&MATERIALS[..2], [2.0, 1.0, 0.5, 4.0, 3.0, 6.0])];
        for (mats, h) in cases {
            let material: Vec<u8> = material.iter().map(|&m| m % mats.len() as u8).collect();
            let f = robin_matrix(&bx, &h);
            let t0 = initial(&bx);
            for theta in [1.0, 0.5] {
                let label = format!("{cell:?} {} materials h {h:?} θ = {theta}", mats.len());
                let mut want = LatticeHeat::new(&Cpu, &bx, material.clone(), mats, &["zmin"], 2e-3, theta).unwrap();
                want.set_face_terms(&f).unwrap();
                let got = LatticeHeat::new_robin(&Cpu, &bx, material.clone(), mats, &["zmin"], &h, 2e-3, theta, None).unwrap().expect("face materials fit");
                let x = test_vector(bx.ndofs());
                let (mut a, mut b) = (vec![0.0; x.len()], vec![0.0; x.len()]);
                want.apply_implicit(&x, &mut a).unwrap();
                got.apply_implicit(&x, &mut b).unwrap();
                assert!(rel_diff(&a, &b) < 1e-13, "{label}: implicit operators differ by {:e}", rel_diff(&a, &b));
                want.apply_explicit(&x, &mut a).unwrap();
                got.apply_explicit(&x, &mut b).unwrap();
                assert!(rel_diff(&a, &b) < 1e-13, "{label}: explicit operators differ by {:e}", rel_diff(&a, &b));
                let (mut tw, mut tg) = (t0.clone(), t0.clone());
                let iw = want.run(&mut tw, 4).unwrap();
                let ig = got.run(&mut tg, 4).unwrap();
                assert!(rel_diff(&tw, &tg) < 1e-10, "{label}: temperatures differ by {:e}", rel_diff(&tw, &tg));
                assert!(iw.iter().zip(&ig).all(|(a, b)| a.abs_diff(*b) <= 1), "{label}: iterations {iw:?} against {ig:?}");
                let Some(gpu) = &gpu else { continue };
                let mut tight = LatticeHeat::new_robin(&Cpu, &bx, material.clone(), mats, &["zmin"], &h, 2e-3, theta, None).unwrap().unwrap();
                tight.options.rtol = 1e-12;
                let mut tc = t0.clone();
                let ic = tight.run(&mut tc, 4).unwrap();
                let xg = gpu.from_host(&x).unwrap();
                for (choice, mode) in [(Some(0), PcgLoop::Ring), (Some(4), PcgLoop::Ring), (Some(4), PcgLoop::Fused)] {
                    let what = format!("{label} GPU {choice:?} {mode:?}");
                    set_pcg_loop(mode);
                    let mut dev = LatticeHeat::new_robin(gpu, &bx, material.clone(), mats, &["zmin"], &h, 2e-3, theta, choice).unwrap().unwrap();
                    dev.options.rtol = 1e-12;
                    // The GPU's step operators (side stencils with the face mass) against the CPU's.
                    let mut yg = gpu.zeros(x.len()).unwrap();
                    dev.apply_implicit(&xg, &mut yg).unwrap();
                    got.apply_implicit(&x, &mut b).unwrap();
                    let d = rel_diff(&b, &gpu.to_host(&yg).unwrap());
                    assert!(d < 1e-13, "{what}: implicit operators differ by {d:e}");
                    dev.apply_explicit(&xg, &mut yg).unwrap();
                    got.apply_explicit(&x, &mut b).unwrap();
                    let d = rel_diff(&b, &gpu.to_host(&yg).unwrap());
                    assert!(d < 1e-13, "{what}: explicit operators differ by {d:e}");
                    let mut td = gpu.from_host(&t0).unwrap();
                    let id = dev.run(&mut td, 4).unwrap();
                    let d = rel_diff(&tc, &gpu.to_host(&td).unwrap());
                    eprintln!("{what}: temperatures differ by {d:e}, iterations CPU {ic:?} GPU {id:?}");
                    assert!(d < 1e-10, "{what}: temperatures differ by {d:e}");
                    for (c, g) in ic.iter().zip(&id) {
                        assert!(*g + 1 >= *c && *g <= c + 4, "{what}: iterations CPU {ic:?} GPU {id:?}");
                    }
                }
                set_pcg_loop(PcgLoop::Ring);
            }
        }
        // 10 materials × 27 side sets do not fit the byte per cell.
        let ten: Vec<LatticeMaterial> = (0..10).map(|m| LatticeMaterial { rhoc: 1.0 + m as f64, k: 1.0 }).collect();
        let mat10: Vec<u8> = (0..bx.ncells()).map(|c| (c % 10) as u8).collect();
        assert!(LatticeHeat::new_robin(&Cpu, &bx, mat10, &ten, &[], &[1.0; 6], 1e-3, 1.0, None).unwrap().is_none());
    }
}

/// Bad boxes and materials are errors naming the cause.
#[test]
fn bad_boxes_are_errors() {
    let e = LatticeBox::new([4, 0, 3], [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap_err().to_string();
    assert!(e.contains("axis 1"), "{e}");
    let e = LatticeBox::new([4, 4, 3], [0.0; 3], [1.0, -1.0, 1.0], CellType::Tetrahedron).unwrap_err().to_string();
    assert!(e.contains("axis 1"), "{e}");
    let bx = LatticeBox::new([2, 2, 2], [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap();
    let e = bx.free_mask(&["top"]).unwrap_err().to_string();
    assert!(e.contains("`top`"), "{e}");
    let e = GridData::from_box(&bx, vec![0, 0, 0, 0, 0, 0, 0, 2], &[[1.0, 1.0]; 2]).unwrap_err().to_string();
    assert!(e.contains("cell 7"), "{e}");
    let e = GridData::from_box(&bx, vec![0; 7], &[[1.0, 1.0]]).unwrap_err().to_string();
    assert!(e.contains("8") && e.contains("7"), "{e}");
    let e = LatticeHeat::new(&Cpu, &bx, vec![0; 8], &[LatticeMaterial { rhoc: 1.0, k: -1.0 }], &[], 1e-3, 1.0).err().unwrap().to_string();
    assert!(e.contains("material 0"), "{e}");
}

/// `bench --heat` times its `none` rows on the direct lattice and the other levels on the mesh:
/// the same body (unknowns, cells) and the same PCG work (iterations within one per step).
#[test]
fn bench_lattice_rows_time_the_mesh_problem() {
    use galerkin::bench::heat::{run, HeatBenchConfig};
    let cfg = HeatBenchConfig { dofs: vec![2000], steps: 3, levels: vec![AssemblyLevel::None, AssemblyLevel::Full], cpu_max_dofs: usize::MAX, runs: 1, dt: 1e-3 };
    let rows = run(&cfg, None, |_| Ok(())).unwrap();
    assert_eq!(rows.len(), 2);
    let (none, full) = (&rows[0], &rows[1]);
    assert_eq!((none.level.as_str(), full.level.as_str()), ("none", "full"));
    assert_eq!((none.dofs, none.cells), (full.dofs, full.cells), "same body");
    assert!(none.iterations > 3 * cfg.steps, "the steps iterate ({})", none.iterations);
    assert!(none.iterations.abs_diff(full.iterations) <= cfg.steps, "iterations: none {} full {}", none.iterations, full.iterations);
}
