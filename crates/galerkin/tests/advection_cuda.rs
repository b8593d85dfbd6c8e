//! DG advection on the GPU, checked against the CPU backend: the device-assembled pattern, matrix
//! and right-hand side (expression and per-cell velocities, triangles and quadrilaterals, P0–P3),
//! element block Jacobi, GMRES and BiCGStab with block Jacobi and GMRES with point Jacobi (which the
//! seed saw fail on its GPU backend), and the examples. Skips without a GPU unless
//! GALERKIN_REQUIRE_GPU=1.
mod advection_common;
use advection_common::*;
use galerkin::advection::assemble::assemble;
use galerkin::advection::cuda::DeviceAdvection;
use galerkin::advection::output::l2_error;
use galerkin::advection::run::{solve_cpu, solve_cuda};
use galerkin::advection::{AdvectionBackend, Method, Precond};
use galerkin::backend::cuda::{self, CudaBackend};
use galerkin::backend::{Backend, Cpu};
use galerkin::mesh::CellType;

fn gpu() -> Option<CudaBackend> {
    cuda::test_gpu()
}

#[test]
fn gpu_assembly_equals_cpu_assembly() {
    let Some(be) = gpu() else { return };
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        for k in 0..=3 {
            for (name, p) in [("manufactured", manufactured(5, cell, k).0), ("rotating", rotating(6, cell, k)), ("per-cell", per_cell(5, cell, k))] {
                let (a, b) = assemble(&p).unwrap();
                let dev = DeviceAdvection::upload(&be, &p).unwrap();
                let (da, db) = dev.assemble(&be).unwrap();
                let h = be.matrix_to_host(&da).unwrap();
                assert_eq!(h.row_ptr, a.row_ptr, "{name} {cell} k={k}: row pointers");
                assert_eq!(h.col_idx, a.col_idx, "{name} {cell} k={k}: columns");
                let d = max_diff(&h.values, &a.values) / max_abs(&a.values);
                assert!(d < 1e-13, "{name} {cell} k={k}: values differ by {d:.2e}");
                let hb = be.to_host(&db).unwrap();
                let d = max_diff(&hb, &b) / max_abs(&b).max(1e-300);
                assert!(d < 1e-13, "{name} {cell} k={k}: right-hand sides differ by {d:.2e}");
            }
        }
    }
}

#[test]
fn element_block_jacobi_matches_the_cpu() {
    let Some(be) = gpu() else { return };
    for (cell, k) in [(CellType::Triangle, 1), (CellType::Triangle, 3), (CellType::Quadrilateral, 2), (CellType::Quadrilateral, 3)] {
        let p = rotating(5, cell, k);
        let (a, _) = assemble(&p).unwrap();
        let x: Vec<f64> = (0..p.ndofs()).map(|i| (i as f64 * 0.37).sin()).collect();
        let cpu = Cpu.element_block_jacobi(&a, p.nloc()).unwrap();
        let mut y = vec![0.0; p.ndofs()];
        cpu.apply(&Cpu, &x, &mut y).unwrap();
        let da = be.upload_matrix(&a).unwrap();
        let m = be.element_block_jacobi(&da, p.nloc()).unwrap();
        let dx = be.from_host(&x).unwrap();
        let mut dy = be.zeros(p.ndofs()).unwrap();
        m.apply(&be, &dx, &mut dy).unwrap();
        let d = max_diff(&be.to_host(&dy).unwrap(), &y) / max_abs(&y);
        assert!(d < 1e-11, "{cell} k={k}: block Jacobi differs by {d:.2e}");
    }
}

#[test]
fn gpu_solvers_converge_and_agree_with_the_cpu() {
    let Some(be) = gpu() else { return };
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        let (p, u) = manufactured(10, cell, 2);
        let reference = solve_cpu(&p, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
        let e_cpu = l2_error(&p, &reference.u, &u).unwrap().0;
        for (m, pc) in [(Method::Gmres, Precond::BlockJacobi), (Method::Bicgstab, Precond::BlockJacobi), (Method::Gmres, Precond::Jacobi)] {
            let s = solve_cuda(&be, &p, &config(m, pc)).unwrap();
            assert!(s.stats.relative_residual <= 1e-12, "{cell} {m:?} + {pc:?} on the GPU: {}", s.stats.relative_residual);
            let d = max_diff(&s.u, &reference.u) / max_abs(&reference.u);
            assert!(d < 1e-9, "{cell} {m:?} + {pc:?}: GPU solution differs from the CPU's by {d:.2e}");
            let e = l2_error(&p, &s.u, &u).unwrap().0;
            assert!((e - e_cpu).abs() <= 1e-6 * e_cpu, "{cell} {m:?} + {pc:?}: L2 {e:.6e} vs CPU {e_cpu:.6e}");
            eprintln!("{cell} {m:?} + {pc:?} on the GPU: {} iterations", s.stats.iterations);
        }
    }
}

#[test]
fn gpu_convergence_rate() {
    let Some(be) = gpu() else { return };
    for k in 1..=3 {
        let err = |n| {
            let (p, u) = manufactured(n, CellType::Triangle, k);
            let s = solve_cuda(&be, &p, &config(Method::Gmres, Precond::BlockJacobi)).unwrap();
            l2_error(&p, &s.u, &u).unwrap().0
        };
        let rate = (err(8) / err(16)).log2();
        assert!(rate >= k as f64 + 0.5, "GPU P{k}: rate {rate:.3}");
    }
}

#[test]
fn examples_on_the_gpu_match_the_cpu() {
    let Some(_be) = gpu() else { return };
    // GALERKIN_EXAMPLES where the binary runs away from its source tree (the device machine).
    let root = std::env::var_os("GALERKIN_EXAMPLES").map(std::path::PathBuf::from).unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"));
    for name in ["advection-rotating.toml", "advection-quads.toml"] {
        let mut errors = Vec::new();
        for backend in [galerkin::backend::BackendKind::Cpu, galerkin::backend::BackendKind::Cuda] {
            let dir = tempfile::tempdir().unwrap();
            let opts = galerkin::problem::RunOptions { backend: Some(backend), out_dir: dir.path().to_path_buf(), progress: false };
            let r = galerkin::problem::run_file(&root.join(name), &opts).unwrap();
            assert!(r.solver.relative_residual <= 1e-10, "{name} {backend:?}");
            errors.push(r.errors.unwrap().relative_l2);
        }
        eprintln!("{name}: relative L2 CPU {:.4e}, GPU {:.4e}", errors[0], errors[1]);
        assert!(errors[0] < 2e-4 && (errors[0] - errors[1]).abs() < 1e-3 * errors[0], "{name}: {errors:?}");
    }
}
