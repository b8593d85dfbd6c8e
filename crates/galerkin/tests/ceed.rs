//! CEED's bake-off problems: every problem's operator at every level equals the CPU's assembled
//! matrix times a vector to round-off (Q1–Q8 Gauss–Lobatto hexahedra on distorted meshes, with
//! Gauss q = p + 2 and collocated Gauss–Lobatto q = p + 1 quadrature; P1–P3 tetrahedra), on the CPU
//! and on the GPU where one is found (the GPU runs `kernels/hex_matfree.cu` at `partial` and
//! `none`); and the BP3/BP5 discretizations converge at the optimal rate for several degrees.
mod common;
use common::*;
use galerkin::backend::Backend;
use galerkin::bench::ceed::Bp;
use galerkin::fe::{NodeFamily, QuadratureKind};
use galerkin::mesh::CellType;
use galerkin::operator::norms::error_norms;
use galerkin::operator::{AssemblyLevel, FeBackend, Tuning};
use galerkin::physics::Diffusion;
use galerkin::problem::{scalar, LinearProblem};
use galerkin::solver::precond::Preconditionable;
use galerkin::space::FunctionSpace;
use std::f64::consts::PI;
use std::sync::Arc;

/// Distorted meshes of the unit cube; with one cell, a hexahedron with one corner moved.
fn space(cell: CellType, degree: usize, n: usize, ncomp: usize) -> Arc<FunctionSpace> {
    let mut mesh = distorted(cell, n);
    if n == 1 {
        let mut m = (*mesh).clone();
        let last = m.coords.len() - 1;
        m.coords[last] = [1.1, 1.05, 0.92];
        mesh = Arc::new(m);
    }
    Arc::new(if cell.is_simplex() {
        FunctionSpace::lagrange(mesh, degree, ncomp).unwrap()
    } else {
        FunctionSpace::lagrange_with_nodes(mesh, degree, ncomp, NodeFamily::GaussLobatto).unwrap()
    })
}

/// Every level of `bp` on `be` against the CPU matrix: the product and the diagonal.
fn check<B: FeBackend>(be: &B, bp: Bp, cell: CellType, degree: usize, n: usize, levels: &[AssemblyLevel]) {
    let problem = bp.on_space(space(cell, degree, n, bp.ncomp())).unwrap();
    let a = problem.assemble(AssemblyLevel::Full).unwrap().matrix_to_host().unwrap().unwrap();
    let x = test_vector(a.nrows);
    let mut ax = vec![0.0; a.nrows];
    a.spmv(&x, &mut ax);
    for &level in levels {
        let what = format!("{} {cell} p={degree} {} {}", bp.name(), level.name(), be.name());
        let sys = problem.system(be, level, Tuning::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let d = rel_diff(&ax, &sys.apply_host(&x).unwrap());
        assert!(d < 1e-11, "{what}: A x differs from the CPU matrix's by {d:e}");
        let diag = be.to_host(&sys.operator.diagonal(be).unwrap()).unwrap();
        let d = rel_diff(&a.diagonal(), &diag);
        assert!(d < 1e-11, "{what}: diagonal differs by {d:e}");
    }
}

#[test]
fn bake_off_operators_agree_at_every_level_on_hexahedra() {
    on_backends!(|be| {
        for bp in Bp::ALL {
            for degree in [1, 2, 3] {
                check(be, bp, CellType::Hexahedron, degree, 2, &AssemblyLevel::ALL);
            }
            // Higher degrees: matrix-free levels against the CPU matrix (element matrices of
            // (p+1)⁶ entries make the assembled levels the slow part).
            check(be, bp, CellType::Hexahedron, 5, 1, &[AssemblyLevel::Partial, AssemblyLevel::None]);
        }
    });
}

#[test]
fn bake_off_operators_agree_at_q8() {
    on_backends!(|be| {
        for bp in [Bp::Bp3, Bp::Bp5] {
            check(be, bp, CellType::Hexahedron, 8, 1, &[AssemblyLevel::Partial, AssemblyLevel::None]);
        }
        check(be, Bp::Bp6, CellType::Hexahedron, 6, 1, &[AssemblyLevel::Partial, AssemblyLevel::None]);
    });
}

#[test]
fn bake_off_operators_agree_at_every_level_on_tetrahedra() {
    on_backends!(|be| {
        for bp in [Bp::Bp1, Bp::Bp2, Bp::Bp3, Bp::Bp4] {
            for degree in 1..=3 {
                check(be, bp, CellType::Tetrahedron, degree, 2, &AssemblyLevel::ALL);
            }
        }
        assert!(Bp::Bp5.on_space(space(CellType::Tetrahedron, 1, 1, 1)).is_err(), "BP5 needs hexahedra");
    });
}

/// −Δu = f with u = sin πx sin πy sin πz on Gauss–Lobatto Q_p hexahedra, solved by CG at the
/// `partial` level on both backends: L2 errors fall as h^{p+1} with Gauss (BP3) and collocated
/// Gauss–Lobatto (BP5) quadrature, and the two agree with each other to the discretization error.
#[test]
fn bake_off_diffusion_converges_at_the_optimal_rate() {
    let exact = scalar(|x| (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin());
    on_backends!(|be| {
        for (degree, sizes) in [(2, [2, 4]), (4, [2, 3]), (6, [2, 3])] {
            for kind in [QuadratureKind::Gauss, QuadratureKind::GaussLobatto] {
                let mut errs = Vec::new();
                for n in sizes {
                    let space = Arc::new(FunctionSpace::lagrange_with_nodes(unit_mesh(CellType::Hexahedron, n), degree, 1, NodeFamily::GaussLobatto).unwrap());
                    let points = if kind == QuadratureKind::Gauss { Some(2 * degree + 3) } else { None };
                    let problem = LinearProblem::new(space.clone(), Diffusion::new(1.0))
                        .source(scalar(|x| 3.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin()))
                        .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], scalar(|_| 0.0))
                        .quadrature(kind, points);
                    let sys = problem.system(be, AssemblyLevel::Partial, Tuning::default()).unwrap();
                    let u = sys.solve(&cg(1e-12)).unwrap().u;
                    errs.push(error_norms(&space, &u, &exact).unwrap().l2);
                }
                let rate = (errs[0] / errs[1]).ln() / (sizes[1] as f64 / sizes[0] as f64).ln();
                eprintln!("{} Q{degree} {kind:?}: L2 {:.3e} rate {rate:.2}", be.name(), Sci(&errs));
                assert!(rate > degree as f64 + 1.0 - 0.5, "Q{degree} {kind:?} on {}: L2 rate {rate:.2}, expected {}", be.name(), degree + 1);
            }
        }
    });
}

/// The CPU's `partial` on hexahedra vectorized across cells (batches of eight, even/odd stages)
/// equals the cell-at-a-time path to round-off, product and diagonal, on a 3×3×3 mesh (27 cells:
/// the last batch has three lanes) for BP1, BP3 and BP5 at p = 2 and 3; the batched path is the one
/// taken (its stored D is padded to whole batches).
#[test]
fn batched_partial_equals_the_cell_at_a_time_path() {
    let be = &galerkin::backend::Cpu;
    for bp in [Bp::Bp1, Bp::Bp3, Bp::Bp5] {
        for degree in [2, 3] {
            let problem = bp.on_space(space(CellType::Hexahedron, degree, 3, 1)).unwrap();
            let scalar = Tuning { cpu_cell_batches: Some(false), ..Tuning::default() };
            let one = problem.system(be, AssemblyLevel::Partial, scalar).unwrap();
            let four = problem.system(be, AssemblyLevel::Partial, Tuning::default()).unwrap();
            let what = format!("{} p={degree}", bp.name());
            assert!(four.storage_bytes() > one.storage_bytes(), "{what}: the batched path was not taken");
            let x = test_vector(galerkin::backend::LinearOperator::nrows(&one.operator));
            let d = rel_diff(&one.apply_host(&x).unwrap(), &four.apply_host(&x).unwrap());
            assert!(d < 1e-13, "{what}: batched A x differs from the scalar path's by {d:e}");
            let d = rel_diff(&one.operator.diagonal(be).unwrap(), &four.operator.diagonal(be).unwrap());
            assert!(d < 1e-13, "{what}: batched diagonal differs by {d:e}");
        }
    }
}

/// The batched `partial`'s three sums into y agree to round-off: the gather form (`cpu_gather`:
/// each node sums its cells' results through a node map, no colors), the scatter with the batches'
/// own colors (`cpu_batch_colors`) and the default scatter with the mesh's colors, product with the
/// Dirichlet mask and diagonal, BP1/BP3/BP5 at p = 2 and 4 on a distorted 5×5×5 mesh (several
/// colors; 125 cells, a partial last batch); the gather's map is the one kept.
#[test]
fn batched_partial_gather_equals_the_colored_scatter() {
    let be = &galerkin::backend::Cpu;
    // The scatter pinned: from 8 threads the default at p ≥ 3 is the gather form.
    let base = Tuning { cpu_gather: Some(false), ..Tuning::default() };
    for bp in [Bp::Bp1, Bp::Bp3, Bp::Bp5] {
        for degree in [2, 4] {
            let problem = bp.on_space(space(CellType::Hexahedron, degree, 5, 1)).unwrap();
            let colored = problem.system(be, AssemblyLevel::Partial, base).unwrap();
            let gathered = problem.system(be, AssemblyLevel::Partial, Tuning { cpu_gather: Some(true), ..base }).unwrap();
            let batch_colored = problem.system(be, AssemblyLevel::Partial, Tuning { cpu_batch_colors: Some(true), ..base }).unwrap();
            let what = format!("{} p={degree}", bp.name());
            assert!(gathered.storage_bytes() > colored.storage_bytes(), "{what}: the gather form was not taken");
            let x = test_vector(galerkin::backend::LinearOperator::nrows(&colored.operator));
            let d = rel_diff(&colored.apply_host(&x).unwrap(), &gathered.apply_host(&x).unwrap());
            assert!(d < 1e-13, "{what}: the gathered A x differs from the colored scatter's by {d:e}");
            let d = rel_diff(&colored.operator.diagonal(be).unwrap(), &gathered.operator.diagonal(be).unwrap());
            assert!(d < 1e-13, "{what}: the gathered diagonal differs by {d:e}");
            let d = rel_diff(&colored.apply_host(&x).unwrap(), &batch_colored.apply_host(&x).unwrap());
            assert!(d < 1e-13, "{what}: A x with the batches' colors differs from the mesh colors' by {d:e}");
        }
    }
}

/// On parallelepipeds with a constant coefficient the batched `partial` stores D once per cell (6
/// numbers, scaled by each point's weight in the apply) instead of at every point: the product
/// (Dirichlet-masked, fused in the gather) and the diagonal still equal the cell-at-a-time path's
/// to round-off, with a fraction of its memory; on a 3×3×3 box (a partial last batch), BP1/BP3/BP5
/// at p = 1, 2, 3 (BP1 and BP3 at p ≤ 2 take the apply on the nodes, Kronecker products of 1D
/// matrices; the same with `cpu_kronecker = false`, through the points, must agree too).
#[test]
fn batched_partial_stores_d_once_per_cell_on_parallelepipeds() {
    let be = &galerkin::backend::Cpu;
    // The scatter pinned: from 8 threads the default at p ≥ 3 is the gather form.
    let base = Tuning { cpu_gather: Some(false), ..Tuning::default() };
    for bp in [Bp::Bp1, Bp::Bp3, Bp::Bp5] {
        for degree in [1, 2, 3] {
            let problem = bp.on_space(Arc::new(galerkin::bench::ceed::bp_space(CellType::Hexahedron, degree, 3, 1).unwrap())).unwrap();
            let scalar = Tuning { cpu_cell_batches: Some(false), ..base };
            let one = problem.system(be, AssemblyLevel::Partial, scalar).unwrap();
            let four = problem.system(be, AssemblyLevel::Partial, base).unwrap();
            let what = format!("{} p={degree}", bp.name());
            // Per point the scalar path keeps q³·ns numbers per cell; per cell, ns.
            assert!(4 * four.storage_bytes() < 3 * one.storage_bytes(), "{what}: D was not stored once per cell ({} vs {} bytes)", four.storage_bytes(), one.storage_bytes());
            let x = test_vector(galerkin::backend::LinearOperator::nrows(&one.operator));
            let d = rel_diff(&one.apply_host(&x).unwrap(), &four.apply_host(&x).unwrap());
            assert!(d < 1e-13, "{what}: per-cell-D A x differs from the scalar path's by {d:e}");
            let d = rel_diff(&one.operator.diagonal(be).unwrap(), &four.operator.diagonal(be).unwrap());
            assert!(d < 1e-13, "{what}: per-cell-D diagonal differs by {d:e}");
            let points = problem.system(be, AssemblyLevel::Partial, Tuning { cpu_kronecker: Some(false), ..base }).unwrap();
            let d = rel_diff(&points.apply_host(&x).unwrap(), &four.apply_host(&x).unwrap());
            assert!(d < 1e-13, "{what}: the apply on the nodes differs from the one through the points by {d:e}");
        }
    }
}
