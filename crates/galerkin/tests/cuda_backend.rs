//! The CUDA backend against the CPU backend and against mathematics, on a real GPU. Without one,
//! each test prints "SKIPPED: no CUDA GPU: <reason>" and passes, unless GALERKIN_REQUIRE_GPU=1
//! (scripts/gpu-check.sh sets it), which makes a missing GPU a failure.
mod common;
use common::Rng;
use galerkin::backend::cuda::multi::{MultiKernel, MultiShape, MULTI};
use galerkin::backend::cuda::{self, bench, CudaBackend, DeviceCsr, SpmvPath};
use galerkin::backend::{Backend, Cpu, LinearOperator};
use galerkin::linalg::CsrMatrix;

/// The first GPU, or `None` (after saying why) when there is none and none is required.
fn gpu() -> Option<CudaBackend> {
    cuda::test_gpu()
}

/// ‖a − b‖₂ / ‖b‖₂ (absolute when b = 0); NaN anywhere (an unwritten poisoned entry) gives infinity.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        if x.is_nan() || y.is_nan() {
            return f64::INFINITY;
        }
        num += (x - y) * (x - y);
        den += y * y;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

/// A device vector of NaNs: any entry a kernel forgets to write shows up in the comparison.
fn poisoned(gpu: &CudaBackend, n: usize) -> cuda::CudaVector {
    gpu.from_host(&vec![f64::NAN; n]).unwrap()
}

const SIZES: [usize; 3] = [1, 31, 1_000_003];

/// GMRES's many-vector operations (`dots`, `add_combination`: 32 vectors a launch) equal the CPU's
/// one-at-a-time loops, for 1, 32 and 70 vectors (groups of 32, a partial group) at every size, in
/// every kernel shape and with 7 vectors a launch too (`galerkin bench --gram-schmidt`'s shapes).
#[test]
fn many_vector_operations_match_the_cpu_backend() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng(7);
    for n in SIZES {
        for k in [1, 32, 70] {
            let vs: Vec<Vec<f64>> = (0..k).map(|_| rng.vec(n)).collect();
            let (x, c) = (rng.vec(n), rng.vec(k));
            let gvs: Vec<_> = vs.iter().map(|v| g.from_host(v).unwrap()).collect();
            let gx = g.from_host(&x).unwrap();
            let (want, got) = (Cpu.dots(&x, &vs).unwrap(), g.dots(&gx, &gvs).unwrap());
            assert_eq!(got.len(), k);
            assert!(rel_diff(&got, &want) < 1e-12, "dots n={n} k={k}: {:.2e}", rel_diff(&got, &want));
            let (mut cy, mut gy) = (x.clone(), g.from_host(&x).unwrap());
            Cpu.add_combination(&c, &vs, &mut cy).unwrap();
            g.add_combination(&c, &gvs, &mut gy).unwrap();
            let e = rel_diff(&g.to_host(&gy).unwrap(), &cy);
            assert!(e < 1e-12, "add_combination n={n} k={k}: {e:.2e}");
            for kernel in MultiKernel::ALL {
                for group in [MULTI, 7] {
                    let shape = MultiShape { kernel, group };
                    let got = g.dots_shaped(&gx, &gvs, shape).unwrap();
                    assert!(rel_diff(&got, &want) < 1e-12, "dots {} n={n} k={k}: {:.2e}", shape.name(), rel_diff(&got, &want));
                    let mut gy = poisoned(&g, n);
                    g.copy(&gx, &mut gy).unwrap();
                    g.add_combination_shaped(&c, &gvs, &mut gy, shape).unwrap();
                    let e = rel_diff(&g.to_host(&gy).unwrap(), &cy);
                    assert!(e < 1e-12, "add_combination {} n={n} k={k}: {e:.2e}", shape.name());
                }
            }
        }
    }
    let gx = g.from_host(&[1.0, 2.0]).unwrap();
    assert!(g.add_combination(&[1.0], &[], &mut g.zeros(2).unwrap()).is_err(), "coefficients without vectors");
    assert!(g.dots(&gx, &[g.zeros(3).unwrap()]).is_err(), "a vector of another length");
    for group in [0, MULTI + 1] {
        let (shape, v) = (MultiShape { kernel: MultiKernel::P1, group }, [g.zeros(2).unwrap()]);
        assert!(g.dots_shaped(&gx, &v, shape).is_err(), "{group} vectors a launch");
        assert!(g.add_combination_shaped(&[1.0], &v, &mut g.zeros(2).unwrap(), shape).is_err(), "{group} vectors a launch");
    }
}

#[test]
fn vector_operations_match_the_cpu_backend() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng(1);
    for n in SIZES {
        let (x, y, d) = (rng.vec(n), rng.vec(n), rng.vec(n));
        let (a, b) = (rng.uniform() * 3.0, rng.uniform() * 3.0);
        let (gx, gd) = (g.from_host(&x).unwrap(), g.from_host(&d).unwrap());
        assert_eq!(g.to_host(&gx).unwrap(), x, "round trip n={n}");
        assert_eq!(g.len(&gx), n);

        let mut gy = poisoned(&g, n);
        g.copy(&gx, &mut gy).unwrap();
        assert_eq!(g.to_host(&gy).unwrap(), x, "copy n={n}");

        g.fill(&mut gy, a).unwrap();
        assert!(
            g.to_host(&gy).unwrap().iter().all(|&v| v == a),
            "fill n={n}"
        );
        assert!(
            g.to_host(&g.zeros(n).unwrap())
                .unwrap()
                .iter()
                .all(|&v| v == 0.0),
            "zeros n={n}"
        );

        // Single roundings: bit-identical to the CPU.
        let (mut cy, mut gy) = (y.clone(), g.from_host(&y).unwrap());
        Cpu.scale(a, &mut cy).unwrap();
        g.scale(a, &mut gy).unwrap();
        assert_eq!(g.to_host(&gy).unwrap(), cy, "scale n={n}");
        let mut gz = poisoned(&g, n);
        let mut cz = vec![0.0; n];
        Cpu.pointwise_mult(&d, &x, &mut cz).unwrap();
        g.pointwise_mult(&gd, &gx, &mut gz).unwrap();
        assert_eq!(g.to_host(&gz).unwrap(), cz, "pointwise_mult n={n}");

        // The GPU fuses a·x + y into one rounding; the CPU rounds twice.
        let (mut cy, mut gy) = (y.clone(), g.from_host(&y).unwrap());
        Cpu.axpy(a, &x, &mut cy).unwrap();
        g.axpy(a, &gx, &mut gy).unwrap();
        assert!(
            rel_diff(&g.to_host(&gy).unwrap(), &cy) < 1e-15,
            "axpy n={n}"
        );
        let (mut cy, mut gy) = (y.clone(), g.from_host(&y).unwrap());
        Cpu.axpby(a, &x, b, &mut cy).unwrap();
        g.axpby(a, &gx, b, &mut gy).unwrap();
        assert!(
            rel_diff(&g.to_host(&gy).unwrap(), &cy) < 1e-15,
            "axpby n={n}"
        );

        let gyy = g.from_host(&y).unwrap();
        let (dot, cdot) = (g.dot(&gx, &gyy).unwrap(), Cpu.dot(&x, &y).unwrap());
        // Relative to Σ|x_i y_i|, the scale of the rounding errors of both summation orders.
        let scale: f64 = x.iter().zip(&y).map(|(p, q)| (p * q).abs()).sum();
        assert!(
            (dot - cdot).abs() <= 1e-12 * scale,
            "dot n={n}: {dot} vs {cdot}"
        );
        let (nrm, cnrm) = (g.norm2(&gx).unwrap(), Cpu.norm2(&x).unwrap());
        assert!(
            (nrm - cnrm).abs() <= 1e-12 * cnrm,
            "norm2 n={n}: {nrm} vs {cnrm}"
        );
    }
}

#[test]
fn dot_is_exact_on_representable_sums_and_deterministic() {
    let Some(g) = gpu() else { return };
    // Σ i·1 for i < n is an exact integer in f64: any lost or doubled element shows.
    let n = 3_000_001usize;
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let (gx, ones) = (
        g.from_host(&x).unwrap(),
        g.from_host(&vec![1.0; n]).unwrap(),
    );
    let expected = (n as f64) * (n as f64 - 1.0) / 2.0;
    let first = g.dot(&gx, &ones).unwrap();
    assert_eq!(first, expected);
    let mut rng = Rng(7);
    let r = g.from_host(&rng.vec(n)).unwrap();
    let a = g.dot(&r, &gx).unwrap();
    for _ in 0..5 {
        assert_eq!(
            g.dot(&r, &gx).unwrap().to_bits(),
            a.to_bits(),
            "reduction order must be fixed"
        );
    }
}

#[test]
fn fused_cg_update_matches_the_unfused_sequence() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng(2);
    for n in SIZES {
        let (p, q, x, r) = (rng.vec(n), rng.vec(n), rng.vec(n), rng.vec(n));
        let alpha = 0.731;
        let (gp, gq) = (g.from_host(&p).unwrap(), g.from_host(&q).unwrap());
        let (mut fx, mut fr) = (g.from_host(&x).unwrap(), g.from_host(&r).unwrap());
        let rr = g.cg_update(alpha, &gp, &gq, &mut fx, &mut fr).unwrap();
        let (mut ux, mut ur) = (x.clone(), r.clone());
        let urr = Cpu.cg_update(alpha, &p, &q, &mut ux, &mut ur).unwrap();
        assert!(rel_diff(&g.to_host(&fx).unwrap(), &ux) < 1e-15, "x n={n}");
        assert!(rel_diff(&g.to_host(&fr).unwrap(), &ur) < 1e-15, "r n={n}");
        assert!((rr - urr).abs() <= 1e-12 * urr, "r·r n={n}: {rr} vs {urr}");
        // And it is the r·r of the r it left behind.
        assert!((rr - g.dot(&fr, &fr).unwrap()).abs() <= 1e-14 * rr, "n={n}");
    }
}

#[test]
fn empty_vectors_and_mismatched_lengths() {
    let Some(g) = gpu() else { return };
    let (e, mut f) = (g.zeros(0).unwrap(), g.zeros(0).unwrap());
    assert_eq!(g.dot(&e, &e).unwrap(), 0.0);
    g.axpy(1.0, &e, &mut f).unwrap();
    assert!(g.to_host(&f).unwrap().is_empty());
    let (a, mut b) = (g.zeros(5).unwrap(), g.zeros(6).unwrap());
    let err = g.axpy(1.0, &a, &mut b).unwrap_err();
    assert!(
        matches!(
            err,
            galerkin::Error::Dimension {
                expected: 6,
                got: 5,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn vectors_of_another_backend_are_refused() {
    let Some(g) = gpu() else { return };
    let other = CudaBackend::new(0).unwrap();
    let (x, mut y) = (other.zeros(4).unwrap(), g.zeros(4).unwrap());
    let err = g.copy(&x, &mut y).unwrap_err().to_string();
    assert!(err.contains("another CUDA backend"), "{err}");
}

#[test]
fn out_of_memory_says_how_much_was_asked_and_is_free() {
    let Some(g) = gpu() else { return };
    let err = g
        .zeros(1 << 47)
        .err()
        .expect("2^50 bytes cannot be allocated")
        .to_string();
    assert!(err.contains(&format!("{} bytes", 1u64 << 50)), "{err}");
    assert!(err.contains("free"), "{err}");
    // The device is still usable afterwards.
    let v = g.from_host(&[1.0, 2.0]).unwrap();
    assert_eq!(g.dot(&v, &v).unwrap(), 5.0);
}

#[test]
fn probe_reports_a_plausible_device() {
    let Some(g) = gpu() else { return };
    let d = g.device();
    assert!(d.compute_capability >= (7, 0), "{d:?}");
    assert!(
        d.multiprocessors > 0 && d.free_memory <= d.total_memory && d.total_memory > 1 << 30,
        "{d:?}"
    );
    eprintln!("device: {d:?}");
}

/// 3D Laplacian-like matrix on an m³ grid with the 7-point (faces) or, with `full`, the 27-point
/// stencil; random off-diagonal values so that no symmetry hides a transposed index.
fn stencil(m: usize, full: bool, rng: &mut Rng) -> CsrMatrix {
    let n = m * m * m;
    let (mut row_ptr, mut col_idx, mut values) = (vec![0], vec![], vec![]);
    for k in 0..m {
        for j in 0..m {
            for i in 0..m {
                for dk in -1i64..=1 {
                    for dj in -1i64..=1 {
                        for di in -1i64..=1 {
                            let off = di.abs() + dj.abs() + dk.abs();
                            let (ii, jj, kk) = (i as i64 + di, j as i64 + dj, k as i64 + dk);
                            let inside = [ii, jj, kk].iter().all(|&c| (0..m as i64).contains(&c));
                            if inside && (full || off <= 1) {
                                col_idx.push(
                                    (kk as usize * m * m + jj as usize * m + ii as usize) as u32,
                                );
                                values.push(if off == 0 { 26.0 } else { rng.uniform() });
                            }
                        }
                    }
                }
                row_ptr.push(col_idx.len());
            }
        }
    }
    CsrMatrix::new(n, n, row_ptr, col_idx, values).unwrap()
}

/// Rows of random length 0..=max_len (some empty, some far longer than a warp).
fn random_rows(nrows: usize, ncols: usize, max_len: usize, rng: &mut Rng) -> CsrMatrix {
    let (mut row_ptr, mut col_idx, mut values) = (vec![0], vec![], vec![]);
    for _ in 0..nrows {
        let len = rng.below(max_len + 1).min(ncols);
        let mut cols: Vec<u32> = (0..len).map(|_| rng.below(ncols) as u32).collect();
        cols.sort_unstable();
        cols.dedup();
        values.extend(cols.iter().map(|_| rng.uniform()));
        col_idx.extend(cols);
        row_ptr.push(col_idx.len());
    }
    CsrMatrix::new(nrows, ncols, row_ptr, col_idx, values).unwrap()
}

#[test]
fn spmv_matches_the_cpu_for_every_variant_and_cusparse() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng(3);
    let matrices = [
        ("7-point 40³", stencil(40, false, &mut rng)),
        ("27-point 30³", stencil(30, true, &mut rng)),
        (
            "random rows ≤ 250",
            random_rows(20_011, 17_003, 250, &mut rng),
        ),
        ("random rows ≤ 9", random_rows(1_003, 50_000, 9, &mut rng)),
    ];
    for (name, a) in &matrices {
        let x = rng.vec(a.ncols);
        let mut reference = vec![0.0; a.nrows];
        a.spmv(&x, &mut reference);
        let gx = g.from_host(&x).unwrap();
        let mut m = DeviceCsr::from_host(&g, a).unwrap();
        let mean = a.nnz() as f64 / a.nrows as f64;
        assert_eq!(m.threads_per_row(), cuda::csr::threads_per_row_for(mean));
        for threads in [4, 8, 16, 32] {
            m.set_threads_per_row(threads).unwrap();
            let mut gy = poisoned(&g, a.nrows);
            m.apply(&g, &gx, &mut gy).unwrap();
            let err = rel_diff(&g.to_host(&gy).unwrap(), &reference);
            assert!(
                err < 1e-13,
                "{name}, {threads} threads/row: relative error {err:e}"
            );
        }
        let mut gy = poisoned(&g, a.nrows);
        m.spmv_with(&g, SpmvPath::CuSparse, &gx, &mut gy).unwrap();
        let err = rel_diff(&g.to_host(&gy).unwrap(), &reference);
        assert!(err < 1e-13, "{name}, cuSPARSE: relative error {err:e}");
        let m = m.with_path(SpmvPath::CuSparse);
        let mut gy2 = poisoned(&g, a.nrows);
        m.apply(&g, &gx, &mut gy2).unwrap();
        assert_eq!(
            g.to_host(&gy2).unwrap(),
            g.to_host(&gy).unwrap(),
            "{name}: cuSPARSE ALG2 is deterministic"
        );
    }
}

#[test]
fn spmv_rejects_wrong_sizes_and_bad_matrices() {
    let Some(g) = gpu() else { return };
    let a = stencil(4, false, &mut Rng(4));
    let m = DeviceCsr::from_host(&g, &a).unwrap();
    let (x, mut y) = (g.zeros(a.ncols + 1).unwrap(), g.zeros(a.nrows).unwrap());
    assert!(matches!(
        m.apply(&g, &x, &mut y),
        Err(galerkin::Error::Dimension { .. })
    ));
    let mut bad = a.clone();
    bad.col_idx[5] = a.ncols as u32; // fields are public: the upload must re-check them
    let err = DeviceCsr::from_host(&g, &bad)
        .err()
        .expect("out-of-range column")
        .to_string();
    assert!(err.contains("nonzero 5"), "{err}");
}

/// Inverse of a b×b row-major matrix by Gauss–Jordan with partial pivoting.
fn invert(m: &[f64], b: usize) -> Vec<f64> {
    let mut a = m.to_vec();
    let mut inv: Vec<f64> = (0..b * b)
        .map(|k| if k / b == k % b { 1.0 } else { 0.0 })
        .collect();
    for c in 0..b {
        let p = (c..b)
            .max_by(|&i, &j| a[i * b + c].abs().total_cmp(&a[j * b + c].abs()))
            .unwrap();
        for k in 0..b {
            a.swap(c * b + k, p * b + k);
            inv.swap(c * b + k, p * b + k);
        }
        let d = a[c * b + c];
        for k in 0..b {
            a[c * b + k] /= d;
            inv[c * b + k] /= d;
        }
        for r in (0..b).filter(|&r| r != c) {
            let f = a[r * b + c];
            for k in 0..b {
                a[r * b + k] -= f * a[c * b + k];
                inv[r * b + k] -= f * inv[c * b + k];
            }
        }
    }
    inv
}

/// y_k = M_k x_k for node-interleaved blocks, on the CPU.
fn block_apply(blocks: &[f64], b: usize, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|dof| {
            let node = dof / b;
            (0..b).map(|j| blocks[dof * b + j] * x[node * b + j]).sum()
        })
        .collect()
}

#[test]
fn node_block_operations_match_the_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng(5);
    for b in 1..=3 {
        let nodes = 100_003;
        // Diagonally dominant blocks D_k and their inverses.
        let d: Vec<f64> = (0..nodes * b * b)
            .map(|k| rng.uniform() + if (k % (b * b)) % (b + 1) == 0 { 4.0 } else { 0.0 })
            .collect();
        let inv: Vec<f64> = d.chunks(b * b).flat_map(|blk| invert(blk, b)).collect();
        let mut gd = g.from_host(&d).unwrap();
        assert_eq!(g.invert_blocks(b, &mut gd).unwrap(), None);
        assert!(rel_diff(&g.to_host(&gd).unwrap(), &inv) < 1e-13, "b={b}: inverses differ");
        let x = rng.vec(nodes * b);
        let mut gy = poisoned(&g, nodes * b);
        g.apply_blocks(b, &gd, &g.from_host(&x).unwrap(), &mut gy).unwrap();
        let y = g.to_host(&gy).unwrap();
        assert!(rel_diff(&y, &block_apply(&inv, b, &x)) < 1e-15, "b={b}: differs from the CPU product");
        // D (D⁻¹ x) = x: the blocks really invert the diagonal blocks.
        assert!(rel_diff(&block_apply(&d, b, &y), &x) < 1e-13, "b={b}: D·(D⁻¹x) ≠ x");
        let diag = g.to_host(&g.blocks_diagonal(b, &g.from_host(&d).unwrap()).unwrap()).unwrap();
        assert_eq!(diag, Cpu.blocks_diagonal(b, &d).unwrap(), "b={b}: block diagonals");
    }
    // A singular block is found by index; a block size the kernels lack is an error.
    let mut bad = g.from_host(&[1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 4.0]).unwrap();
    assert_eq!(g.invert_blocks(2, &mut bad).unwrap(), Some(1));
    assert!(g.invert_blocks(4, &mut g.zeros(16).unwrap()).is_err());
    // CSR diagonal, node blocks and elimination against the CPU's.
    let mut rng = Rng(11);
    let a = stencil(12, true, &mut rng);
    let ga = g.upload_matrix(&a).unwrap();
    assert_eq!(g.to_host(&g.matrix_diagonal(&ga).unwrap()).unwrap(), a.diagonal());
    assert_eq!(g.to_host(&g.matrix_node_blocks(&ga, 3).unwrap()).unwrap(), Cpu.matrix_node_blocks(&a, 3).unwrap());
    let mask: Vec<f64> = (0..a.nrows).map(|i| if i % 7 == 0 { 0.0 } else { 1.0 }).collect();
    let lift = rng.vec(a.nrows);
    let rhs = rng.vec(a.nrows);
    let (mut ca, mut crhs) = (a.clone(), rhs.clone());
    Cpu.eliminate(&mut ca, &mut crhs, &mask, &lift).unwrap();
    let (mut ga, mut grhs) = (ga, g.from_host(&rhs).unwrap());
    g.eliminate(&mut ga, &mut grhs, &g.from_host(&mask).unwrap(), &g.from_host(&lift).unwrap()).unwrap();
    assert!(rel_diff(&g.to_host(&grhs).unwrap(), &crhs) < 1e-14, "eliminated right-hand side");
    assert_eq!(g.matrix_to_host(&ga).unwrap(), ca, "eliminated matrix");
}

/// Jacobi-preconditioned CG written once over the traits, as the solvers are; returns iterations.
fn pcg<B: Backend>(
    be: &B,
    a: &dyn LinearOperator<B>,
    inv_diag: &B::Vector,
    b: &B::Vector,
    x: &mut B::Vector,
) -> usize {
    let n = a.nrows();
    let (mut r, mut z, mut p, mut q) = (
        be.zeros(n).unwrap(),
        be.zeros(n).unwrap(),
        be.zeros(n).unwrap(),
        be.zeros(n).unwrap(),
    );
    be.copy(b, &mut r).unwrap();
    be.fill(x, 0.0).unwrap();
    be.pointwise_mult(inv_diag, &r, &mut z).unwrap();
    be.copy(&z, &mut p).unwrap();
    let (bnorm, mut rz) = (be.norm2(b).unwrap(), be.dot(&r, &z).unwrap());
    for it in 1..=1000 {
        a.apply(be, &p, &mut q).unwrap();
        let alpha = rz / be.dot(&p, &q).unwrap();
        let rr = be.cg_update(alpha, &p, &q, x, &mut r).unwrap();
        if rr.sqrt() <= 1e-10 * bnorm {
            return it;
        }
        be.pointwise_mult(inv_diag, &r, &mut z).unwrap();
        let rz_new = be.dot(&r, &z).unwrap();
        be.axpby(1.0, &z, rz_new / rz, &mut p).unwrap();
        rz = rz_new;
    }
    panic!("PCG did not converge");
}

#[test]
fn preconditioned_cg_on_the_gpu_solves_poisson_like_the_cpu() {
    let Some(g) = gpu() else { return };
    // SPD: the 7-point Laplacian (6 on the diagonal, −1 off it) on a 30³ grid.
    let mut a = stencil(30, false, &mut Rng(6));
    for r in 0..a.nrows {
        for k in a.row_ptr[r]..a.row_ptr[r + 1] {
            a.values[k] = if a.col_idx[k] as usize == r {
                6.0
            } else {
                -1.0
            };
        }
    }
    let x_true = Rng(8).vec(a.nrows);
    let mut b = vec![0.0; a.nrows];
    a.spmv(&x_true, &mut b);
    let inv_diag: Vec<f64> = a.diagonal().iter().map(|d| 1.0 / d).collect();

    let mut x_cpu = vec![0.0; a.nrows];
    let it_cpu = pcg(&Cpu, &a, &inv_diag, &b, &mut x_cpu);
    let m = DeviceCsr::from_host(&g, &a).unwrap();
    let mut gx = g.zeros(a.nrows).unwrap();
    let it_gpu = pcg(
        &g,
        &m,
        &g.from_host(&inv_diag).unwrap(),
        &g.from_host(&b).unwrap(),
        &mut gx,
    );
    let x_gpu = g.to_host(&gx).unwrap();
    assert!(
        rel_diff(&x_gpu, &x_true) < 1e-8,
        "GPU solution error {:e}",
        rel_diff(&x_gpu, &x_true)
    );
    assert!(
        it_gpu.abs_diff(it_cpu) <= 1,
        "iterations: GPU {it_gpu}, CPU {it_cpu}"
    );
}

#[test]
fn bench_bandwidth_and_spmv_throughput() {
    let Some(g) = gpu() else { return };
    let bw = bench::bandwidth(&g).unwrap();
    eprintln!(
        "bandwidth: copy {:.0} GB/s, triad {:.0} GB/s",
        bw.copy_gbs, bw.triad_gbs
    );
    // Any GPU this backend targets moves > 100 GB/s; > 20 TB/s would mean a timing bug.
    for v in [bw.copy_gbs, bw.triad_gbs] {
        assert!(v > 100.0 && v < 20_000.0, "{bw:?}");
    }
    assert!(bench::measure_bandwidth(&g).is_ok());
    let mut rng = Rng(9);
    for (name, a) in [
        ("7-point 160³", stencil(160, false, &mut rng)),
        ("27-point 100³", stencil(100, true, &mut rng)),
    ] {
        // The bench refuses any figure above the copy bandwidth measured in the same run.
        let ceiling = bw.copy_gbs.max(bw.triad_gbs);
        let [(own_t, own), (_, vendor)] = bench::spmv_bench(&g, &a, 20, ceiling).unwrap();
        assert!(own_t.runs == 20 && own_t.min <= own_t.median && own_t.median <= own_t.max);
        eprintln!(
            "spmv {name} ({} MB): own {own:.0} GB/s ({:.0}% of copy), cuSPARSE {vendor:.0} GB/s",
            bench::spmv_bytes(&a) / 1_000_000,
            100.0 * own / ceiling
        );
        assert!(own > 0.0 && vendor > 0.0 && own <= ceiling);
    }
}

/// The device-resident Jacobi-PCG (`solver::jacobi_cg`: scalars on the device, residuals read
/// once per batch) solves what the CPU's host-driven CG solves, to the same tolerance, within a
/// batch of iterations of its count; an indefinite operator is an error, not a wrong answer.
#[test]
fn resident_jacobi_cg_matches_the_cpu_solve() {
    use galerkin::solver::{cg::PCG_BATCH, jacobi_cg, Jacobi, KrylovOptions};
    let Some(g) = gpu() else { return };
    let mut a = stencil(24, false, &mut Rng(6));
    for r in 0..a.nrows {
        for k in a.row_ptr[r]..a.row_ptr[r + 1] {
            a.values[k] = if a.col_idx[k] as usize == r { 6.0 + (r % 5) as f64 } else { -1.0 };
        }
    }
    let x_true = Rng(9).vec(a.nrows);
    let mut b = vec![0.0; a.nrows];
    a.spmv(&x_true, &mut b);
    let opts = KrylovOptions { rtol: 1e-11, ..KrylovOptions::default() };
    let mut x_cpu = vec![0.0; a.nrows];
    let cpu = jacobi_cg(&Cpu, &a, &Jacobi::new(&Cpu, &a.diagonal()).unwrap(), &b, &mut x_cpu, &opts).unwrap();
    let m = DeviceCsr::from_host(&g, &a).unwrap();
    let jac = Jacobi::new(&g, &g.from_host(&a.diagonal()).unwrap()).unwrap();
    let mut gx = g.zeros(a.nrows).unwrap();
    let gpu_stats = jacobi_cg(&g, &m, &jac, &g.from_host(&b).unwrap(), &mut gx, &opts).unwrap();
    let x_gpu = g.to_host(&gx).unwrap();
    assert!(rel_diff(&x_gpu, &x_true) < 1e-9, "resident PCG error {:e}", rel_diff(&x_gpu, &x_true));
    assert!(rel_diff(&x_gpu, &x_cpu) < 1e-9);
    assert!(gpu_stats.relative_residual <= 1e-11, "reported residual {:e}", gpu_stats.relative_residual);
    let (ic, ig) = (cpu.iterations, gpu_stats.iterations);
    assert!(ig >= ic && ig < ic + PCG_BATCH + 2, "iterations: CPU {ic}, resident GPU {ig}");
    // A negative definite operator (−A) is refused by the device-side check.
    let mut neg = a.clone();
    neg.values.iter_mut().for_each(|v| *v = -*v);
    let mneg = DeviceCsr::from_host(&g, &neg).unwrap();
    let jneg = Jacobi::new(&g, &g.from_host(&a.diagonal()).unwrap()).unwrap();
    let mut gx = g.zeros(a.nrows).unwrap();
    let err = jacobi_cg(&g, &mneg, &jneg, &g.from_host(&b).unwrap(), &mut gx, &opts).unwrap_err();
    assert!(err.to_string().contains("positive definite"), "{err}");
}

/// Error norms on the device, with the exact solution compiled into the kernel, equal the host's
/// (exact gradients by forward-mode differentiation on both sides) on distorted tetrahedra,
/// triangles and a vector field on quadrilateral-faced hexahedra; a component given as a number
/// also compiles.
#[test]
fn error_norms_on_the_device_match_the_host() {
    use galerkin::expr::Expr;
    use galerkin::mesh::CellType;
    use galerkin::operator::norms::{error_norms_exact, ExactFn};
    use galerkin::operator::norms_cuda::error_norms_cuda;
    use galerkin::space::FunctionSpace;
    let Some(be) = gpu() else { return };
    let cases: [(CellType, usize, usize, Vec<&str>); 3] = [
        (CellType::Tetrahedron, 4, 1, vec!["sin(pi*x)*sin(pi*y)*sin(pi*z)"]),
        (CellType::Triangle, 8, 2, vec!["exp(-x^2)*atan2(y + 1, x + 2)"]),
        (CellType::Hexahedron, 3, 2, vec!["x*y^2", "1.5", "cos(z)*max(x, 0.3)"]),
    ];
    for (cell, n, degree, srcs) in cases {
        let mesh = common::distorted(cell, n);
        let space = FunctionSpace::lagrange(mesh, degree, srcs.len()).unwrap();
        let exprs: Vec<Expr> = srcs.iter().map(|s| Expr::parse(s).unwrap()).collect();
        let u = common::test_vector(space.ndofs());
        let host_exprs = exprs.clone();
        let exact: ExactFn = std::sync::Arc::new(move |xs: &[[f64; 3]], v: &mut [f64], g: &mut [[f64; 3]]| {
            let n = host_exprs.len();
            for (p, x) in xs.iter().enumerate() {
                for (c, e) in host_exprs.iter().enumerate() {
                    (v[p * n + c], g[p * n + c]) = e.eval_grad(*x, 0.0, 1e-7);
                }
            }
        });
        let cpu = error_norms_exact(&space, &u, &exact).unwrap();
        let gpu = error_norms_cuda(&be, &space, &u, &exprs).unwrap().expect("compiled expressions run on the device");
        for (what, a, b) in [("L2", gpu.l2, cpu.l2), ("H1", gpu.h1_semi, cpu.h1_semi), ("exact L2", gpu.l2_exact, cpu.l2_exact)] {
            assert!((a - b).abs() <= 1e-11 * b.abs(), "{cell} P{degree} {what}: GPU {a} vs CPU {b}");
        }
    }
}
