//! The batched large fronts of the GPU multifrontal solver (`kernels/multifrontal_batched.cu`: a
//! block per front, every large front of a level in one launch) equal faer's sparse LU and the CPU
//! multifrontal to round-off: 2D p = 1, 2, 3 with several fronts above 160 rows on one level, a
//! nonsymmetric system that needs pivoting, 1, 3 and 70 right-hand sides, batched at every level
//! and at the default threshold (cuSOLVER above it), against the per-node library path. Skips
//! without a GPU (fails with GALERKIN_REQUIRE_GPU=1).
mod iga_common;

use galerkin::backend::cuda::test_gpu;
use galerkin::backend::Backend;
use galerkin::iga::{self, Space1d, Space2d};
use galerkin::solver::multifrontal::cuda::{batch_pays, LargeFronts, BLOCK_MAX};
use galerkin::solver::multifrontal::{CpuMultifrontal, CudaMultifrontal, Symbolic};
use galerkin::solver::Factorization;
use iga_common::{check_against_faer, poisson, right_hand_sides, Case};
use std::sync::Arc;

fn square(name: &str, p: usize, nx: usize, ny: usize) -> Case {
    let space = Space2d::new(Space1d::uniform(p, nx, 0.0, 1.0).unwrap(), Space1d::uniform(p, ny, 0.0, 1.0).unwrap());
    let sys = poisson().assemble(&space, p + 1).unwrap();
    Case { name: name.into(), sym: iga::symbolic_2d(&space).unwrap(), sys }
}

/// Poisson plus a dominant skew-symmetric part per element: nonsymmetric, nonsingular (its
/// symmetric part is the SPD stiffness), and off-diagonal entries larger than the diagonal, so
/// partial pivoting exchanges rows in most fronts.
fn skew(p: usize, n: usize) -> Case {
    let mut c = square(&format!("skew p={p} {n}x{n}"), p, n, n);
    let k = c.sys.k;
    for (el, a) in c.sys.matrices.chunks_mut(k * k).enumerate() {
        for i in 0..k {
            for j in 0..i {
                let s = 4.0 * (((el * 131 + i * 17 + j * 29) as f64 * 0.618_033_988_7).fract() - 0.5);
                a[i * k + j] += s;
                a[j * k + i] -= s;
            }
        }
    }
    c
}

/// 2D systems with several fronts above [`BLOCK_MAX`] rows on one level.
fn cases() -> Vec<Case> {
    vec![square("poisson p=1 224x224", 1, 224, 224), square("poisson p=2 64x64", 2, 64, 64), square("poisson p=3 48x40", 3, 48, 40), skew(2, 64)]
}

/// Largest number of fronts above [`BLOCK_MAX`] rows that eliminate something on one level.
fn large_per_level(s: &Symbolic) -> usize {
    s.levels.iter().map(|r| r.clone().filter(|&v| s.m[v as usize] as usize > BLOCK_MAX && s.e[v as usize] > 0).count()).max().unwrap_or(0)
}

#[test]
fn batched_cases_put_several_large_fronts_on_one_level() {
    for c in cases() {
        let k = large_per_level(&c.sym);
        eprintln!("{}: {k} fronts above {BLOCK_MAX} rows on one level", c.name);
        assert!(k >= 4, "{}: at most {k} fronts above {BLOCK_MAX} rows on a level", c.name);
    }
}

/// The cost model batches levels of many mid-sized fronts and leaves a lone root front, or a few
/// fronts of thousands of rows, to the libraries.
#[test]
fn batching_pays_for_many_mid_sized_fronts_only() {
    assert!(batch_pays(&[(256, 64); 64]));
    assert!(batch_pays(&[(200, 40); 512]));
    assert!(!batch_pays(&[(1500, 750)]));
    assert!(!batch_pays(&[(2300, 600); 4]));
}

#[test]
fn gpu_batched_large_fronts_equal_faer_lu_and_the_cpu() {
    let Some(be) = test_gpu() else { return };
    for case in cases() {
        let sym = Arc::new(case.sym.clone());
        let cpu = CpuMultifrontal::factor(sym.clone(), &case.sys.matrices).unwrap();
        let mut f = CudaMultifrontal::factor(&be, sym, &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(f.large_fronts(), LargeFronts::default());
        for mode in [LargeFronts::Auto, LargeFronts::Batched { min_nodes: 1 }, LargeFronts::Batched { min_nodes: 4 }, LargeFronts::PerNode] {
            f.set_large_fronts(mode);
            f.refactor(&be).unwrap_or_else(|e| panic!("{} {mode:?}: {e}", case.name));
            for nrhs in [1, 3, 70] {
                check_against_faer(&be, &f, &case, nrhs);
            }
            // GPU = CPU multifrontal (same tree, same pivoting rule) on 3 right-hand sides.
            let nrhs = 3;
            let b = right_hand_sides(&case.sys, nrhs);
            let mut xc = vec![0.0; b.len()];
            cpu.solve_into(nrhs, &b, &mut xc).unwrap();
            let mut xd = be.zeros(b.len()).unwrap();
            f.solve_many(&be, nrhs, &be.from_host(&b).unwrap(), &mut xd).unwrap();
            let xg = be.to_host(&xd).unwrap();
            let scale = xc.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = xc.iter().zip(&xg).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff <= 1e-11 * scale, "{} {mode:?}: GPU vs CPU {diff:.3e} (scale {scale:.3e})", case.name);
        }
    }
}

/// A factorization by one kind of large fronts is solved by the other (both leave the same factors
/// and pivots).
#[test]
fn gpu_batched_and_per_node_factors_are_interchangeable() {
    let Some(be) = test_gpu() else { return };
    let case = skew(2, 64);
    let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    f.set_large_fronts(LargeFronts::Batched { min_nodes: 1 });
    f.refactor(&be).unwrap();
    f.set_large_fronts(LargeFronts::PerNode);
    check_against_faer(&be, &f, &case, 3);
    f.refactor(&be).unwrap();
    f.set_large_fronts(LargeFronts::Batched { min_nodes: 1 });
    check_against_faer(&be, &f, &case, 3);
}

/// Batched, the launches of a factorization and of a solve no longer grow with the number of
/// large fronts: from 64² to 256² elements (p = 1) they grow by a bounded number per added level,
/// while the per-node path adds calls for every large front.
#[test]
fn gpu_batched_launches_grow_like_the_tree_depth() {
    let Some(be) = test_gpu() else { return };
    let mut rows = Vec::new();
    for n in [64usize, 256] {
        let c = square(&format!("p=1 {n}"), 1, n, n);
        let levels = c.sym.levels.len();
        let mut f = CudaMultifrontal::factor(&be, Arc::new(c.sym), &c.sys.matrices).unwrap();
        f.set_large_fronts(LargeFronts::Batched { min_nodes: 1 });
        let batched = f.launches();
        f.set_large_fronts(LargeFronts::PerNode);
        rows.push((levels, batched, f.launches()));
    }
    let (l0, b0, p0) = rows[0];
    let (l1, b1, p1) = rows[1];
    let added = l1 - l0;
    assert!(added > 0);
    assert!(b1.0 - b0.0 <= 12 * added && b1.1 - b0.1 <= 16 * added, "batched launches {b0:?} → {b1:?} over {added} more levels");
    assert!(p1.0 - p0.0 > b1.0 - b0.0, "per-node launches {p0:?} → {p1:?} should grow faster than batched {b0:?} → {b1:?}");
}
