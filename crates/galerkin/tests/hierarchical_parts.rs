//! Cells integrated in parts: a mixed-degree mesh grouped by degree (each group with its own
//! element, so a cell costs its own degree) gives the variable-degree space's matrix on its free
//! dofs and the same solution; the GPU's grouped matrix equals the CPU's for every scheme; and the
//! cells split between several GPUs give the CPU's matrix.
mod common;
use common::*;
use galerkin::fe::{ModeSet, QuadratureKind};
use galerkin::linalg::CsrMatrix;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::assemble::sparsity;
use galerkin::operator::degree_groups::{add_parts_cpu, degree_groups};
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Elasticity;
use galerkin::problem::{vector, LinearProblem};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

const LAMBDA: f64 = 1.2;
const MU: f64 = 0.7;

/// The seed's mixed mesh on n³ cells: degree `lo` for x < ½, `hi` beyond; vertex lists rotated
/// (signed modes), interior vertices moved off the grid when `distort`.
fn mixed_mesh(n: usize, distort: bool, lo: usize, hi: usize) -> (Arc<Mesh>, Vec<usize>) {
    let base = if distort { distorted(CellType::Hexahedron, n) } else { unit_mesh(CellType::Hexahedron, n) };
    let mesh = Arc::new(generate::rotate_hexahedra(&base, 5).unwrap());
    let degrees = (0..mesh.num_cells())
        .map(|c| {
            let x: f64 = mesh.cell(c).iter().map(|&v| mesh.coords[v][0]).sum::<f64>() / 8.0;
            if x < 0.5 { lo } else { hi }
        })
        .collect();
    (mesh, degrees)
}

fn cpu_matrix(parts: &[&FunctionSpace], pattern: &CsrMatrix) -> CsrMatrix {
    let mut a = pattern.clone();
    a.values.iter_mut().for_each(|v| *v = 0.0);
    add_parts_cpu(parts, &Elasticity::lame(LAMBDA, MU, 3), QuadratureKind::Gauss, &mut a).unwrap();
    a
}

/// Grouped by degree, the p = 1 cells carry 8 functions and the p = 3 cells 32 (not 32 each); on
/// affine cells (where each group's Gauss rule is exact) the grouped matrix equals the
/// highest-degree-everywhere matrix on every free (not frozen) dof, and the variable-degree
/// solution solves the grouped system: its free rows' residual vanishes to round-off.
#[test]
fn degree_groups_give_the_variable_degree_matrix_and_solution() {
    let (mesh, degrees) = mixed_mesh(4, false, 1, 3);
    let space = Arc::new(FunctionSpace::hierarchical_variable(mesh.clone(), &degrees, ModeSet::Trunk, 3).unwrap());
    let groups = degree_groups(&space, &degrees, ModeSet::Trunk).unwrap();
    let sizes: Vec<(usize, usize, usize)> = groups.iter().map(|g| (g.degree, g.cells.len(), g.space.dofmap.nodes_per_cell)).collect();
    assert_eq!(sizes, vec![(1, 32, 8), (3, 32, 32)]);
    let pattern = sparsity(&space).unwrap();
    let parts: Vec<&FunctionSpace> = groups.iter().map(|g| &g.space).collect();
    let grouped = cpu_matrix(&parts, &pattern);
    let whole = cpu_matrix(&[&space], &pattern);
    let frozen: std::collections::HashSet<usize> = space.frozen.iter().copied().collect();
    let free = |dof: usize| !frozen.contains(&(dof / 3));
    let scale = whole.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut worst = 0.0f64;
    for r in (0..whole.nrows).filter(|&r| free(r)) {
        for k in whole.row_ptr[r]..whole.row_ptr[r + 1] {
            if free(whole.col_idx[k] as usize) {
                worst = worst.max((whole.values[k] - grouped.values[k]).abs());
            }
        }
    }
    eprintln!("grouped vs highest-degree matrix on free dofs: max difference {:.1e} of {scale:.1e}", worst);
    assert!(worst < 1e-12 * scale, "grouped matrix differs on free dofs by {worst:e}");
    // A Dirichlet problem with smooth, non-polynomial data and no load.
    let g = |x: [f64; 3]| [(1.3 * x[1]).sin() * x[2], (0.7 * x[0] + x[2]).cos(), (x[0] * x[1]).exp() - 1.0];
    let problem = LinearProblem::new(space.clone(), Elasticity::lame(LAMBDA, MU, 3)).dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], vector(g));
    let u = problem.solve(AssemblyLevel::Full, &direct()).unwrap().u;
    let constrained: std::collections::HashSet<usize> = problem.constraints().unwrap().dofs.into_iter().collect();
    let mut au = vec![0.0; u.len()];
    grouped.spmv(&u, &mut au);
    let unorm = u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let res = (0..u.len()).filter(|r| !constrained.contains(r)).map(|r| au[r].abs()).fold(0.0, f64::max);
    eprintln!("variable-degree solution in the grouped system: free-row residual {res:.1e} (scale {:.1e})", scale * unorm);
    assert!(res < 1e-10 * scale * unorm, "the variable-degree solution does not solve the grouped system: {res:e}");
    assert!(unorm > 0.1, "the test field is not trivial");
}

/// The GPU's grouped matrix (each group integrated by its own kernel variant, summed colour by
/// colour or with atomics into one matrix) equals the CPU's grouped matrix for every scheme, on
/// distorted cells.
#[test]
fn gpu_degree_groups_match_the_cpu() {
    use galerkin::operator::level::full::parts::PartsAssembler;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Scatter;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let (mesh, degrees) = mixed_mesh(3, true, 1, 3);
    let space = FunctionSpace::hierarchical_variable(mesh, &degrees, ModeSet::Trunk, 3).unwrap();
    let groups = degree_groups(&space, &degrees, ModeSet::Trunk).unwrap();
    let pattern = sparsity(&space).unwrap();
    let parts: Vec<&FunctionSpace> = groups.iter().map(|g| &g.space).collect();
    let want = cpu_matrix(&parts, &pattern);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    for scatter in [Scatter::Colored, Scatter::Atomic] {
        let mut asm = PartsAssembler::new(&gpu, &parts, &physics, QuadratureKind::Gauss, &pattern, scatter).unwrap();
        for scheme in Integration::ALL {
            asm.assemble(&gpu, scheme).unwrap();
            let got = asm.matrix_to_host(&gpu).unwrap();
            assert_eq!(got.col_idx, want.col_idx);
            let d = rel_diff(&want.values, &got.values);
            eprintln!("grouped p = 1, 3 on the GPU, {} {}: relative difference {d:.1e}", scheme.name(), scatter.name());
            assert!(d < 1e-12, "{} {}: grouped GPU matrix differs from the CPU's by {d:e}", scheme.name(), scatter.name());
        }
    }
}

/// The GPUs this machine has for the multi-GPU test: every visible one; with a single GPU, two
/// backends on it (the split, the partial matrices and their sum still run), with a skip notice;
/// none: `None` (a failure under GALERKIN_REQUIRE_GPU=1). GALERKIN_REQUIRE_GPUS=n fails with fewer
/// than n GPUs.
fn test_gpus() -> Option<Vec<galerkin::backend::cuda::CudaBackend>> {
    use galerkin::backend::cuda::{probe, CudaBackend};
    let first = galerkin::backend::cuda::test_gpu()?;
    let count = probe().map(|d| d.len()).unwrap_or(1);
    if let Some(n) = std::env::var("GALERKIN_REQUIRE_GPUS").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
        assert!(count >= n, "GALERKIN_REQUIRE_GPUS={n} but only {count} CUDA GPU(s) are visible");
    }
    let mut gpus = vec![first];
    if count < 2 {
        eprintln!("SKIPPED (in part): fewer than 2 GPUs; the split runs on two backends of GPU 0");
        gpus.push(CudaBackend::new(0).expect("a second backend on GPU 0"));
    } else {
        for i in 1..count {
            gpus.push(CudaBackend::new(i).unwrap_or_else(|e| panic!("GPU {i} is visible but unusable: {e}")));
        }
    }
    Some(gpus)
}

/// Cells split unevenly between the GPUs (speeds 1 : 1.7 : …), each summing its share into its
/// own partial matrix, the partial matrices added on the host: the CPU's matrix, for the tiled
/// and the default kernels.
#[test]
fn multi_gpu_matrix_matches_the_cpu() {
    use galerkin::operator::level::full::parts::MultiGpuAssembler;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Scatter;
    let Some(gpus) = test_gpus() else { return };
    let mesh = Arc::new(generate::rotate_hexahedra(&distorted(CellType::Hexahedron, 3), 7).unwrap());
    let space = FunctionSpace::hierarchical(mesh, 3, ModeSet::Trunk, 3).unwrap();
    let pattern = sparsity(&space).unwrap();
    let want = cpu_matrix(&[&space], &pattern);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    let speeds: Vec<f64> = (0..gpus.len()).map(|i| 1.0 + 0.7 * i as f64).collect();
    let mut multi = MultiGpuAssembler::new(&gpus, &space, &physics, QuadratureKind::Gauss, &pattern, Scatter::Colored, &speeds).unwrap();
    let shares: Vec<usize> = multi.cells.iter().map(Vec::len).collect();
    assert_eq!(shares.iter().sum::<usize>(), 27);
    assert!(shares.iter().all(|&n| n > 0), "every GPU gets cells: {shares:?}");
    for scheme in [Integration::Tiled, Integration::Default] {
        multi.run(scheme, true).unwrap();
        let got = multi.matrix_to_host().unwrap();
        let d = rel_diff(&want.values, &got.values);
        eprintln!("{} GPUs (cells {shares:?}), {}: relative difference {d:.1e}", gpus.len(), scheme.name());
        assert!(d < 1e-12, "multi-GPU {} matrix differs from the CPU's by {d:e}", scheme.name());
    }
}

/// The example problem file with a degree per region (`examples/hex-p2-p4-mixed.toml`: degree 4
/// for x < 1, 2 beyond, on affine bricks), set up as `galerkin run` does.
fn mixed_example() -> galerkin::problem::run::Setup {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let path = if dir.exists() { dir } else { std::path::PathBuf::from("examples") }.join("hex-p2-p4-mixed.toml");
    let (_, s) = galerkin::problem::run::setup_file(&path, false).unwrap();
    let groups = s.space.cell_degrees.as_ref().expect("region_degrees marks the space for grouped integration").summary(1).unwrap();
    assert_eq!(groups, vec![(2, 27, 20), (4, 27, 50)]);
    s
}

/// `[space] region_degrees` in a problem file: the `full` level integrates each degree's cells with
/// their own element (20 and 50 functions, not 50 everywhere) and the solution is the one the
/// degree-4 element in every cell gives (the problem path before grouping) to 1e-10.
#[test]
fn problem_file_degrees_are_integrated_by_groups() {
    let s = mixed_example();
    let grouped = s.problem.solve(AssemblyLevel::Full, &direct()).unwrap().u;
    let mut plain = (*s.problem.space).clone();
    plain.cell_degrees = None;
    let mut problem = s.problem;
    problem.space = Arc::new(plain);
    let whole = problem.solve(AssemblyLevel::Full, &direct()).unwrap().u;
    let d = rel_diff(&whole, &grouped);
    eprintln!("problem file, grouped vs degree 4 everywhere: relative difference {d:.1e}");
    assert!(d < 1e-10, "grouped solution differs by {d:e}");
    assert!(whole.iter().any(|v| v.abs() > 0.1), "the test field is not trivial");
}

/// The same problem file on the GPU: the grouped `full` matrix (constraints eliminated) equals the
/// CPU's, and CG on the device reaches the CPU's direct solution.
#[test]
fn gpu_problem_file_degrees_match_the_cpu() {
    use galerkin::operator::Tuning;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let s = mixed_example();
    let cpu = s.problem.system(&galerkin::backend::Cpu, AssemblyLevel::Full, Tuning::default()).unwrap();
    let dev = s.problem.system(&gpu, AssemblyLevel::Full, Tuning::default()).unwrap();
    let (want, got) = (cpu.matrix_to_host().unwrap().unwrap(), dev.matrix_to_host().unwrap().unwrap());
    assert_eq!(want.col_idx, got.col_idx);
    let d = rel_diff(&want.values, &got.values);
    eprintln!("problem file, grouped matrix GPU vs CPU: relative difference {d:.1e}");
    assert!(d < 1e-12, "grouped GPU matrix differs from the CPU's by {d:e}");
    let u_cpu = cpu.solve(&direct()).unwrap().u;
    let u_gpu = dev.solve(&cg(1e-13)).unwrap().u;
    let d = rel_diff(&u_cpu, &u_gpu);
    eprintln!("problem file, grouped solution GPU (CG) vs CPU (direct): relative difference {d:.1e}");
    assert!(d < 1e-9, "GPU solution differs by {d:e}");
}
