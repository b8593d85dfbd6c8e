//! Krylov methods × preconditioners on model problems, checked against sparse direct solutions.
use super::testing::{convection_diffusion_2d, laplacian_2d, rhs};
use super::*;
use crate::backend::{Backend, Cpu, Identity, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::Error;

fn opts(rtol: f64) -> KrylovOptions {
    KrylovOptions {
        rtol,
        atol: 0.0,
        max_iter: 5000,
        ..KrylovOptions::default()
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn rel_error(x: &[f64], reference: &[f64]) -> f64 {
    let diff: Vec<f64> = x.iter().zip(reference).map(|(a, b)| a - b).collect();
    norm(&diff) / norm(reference)
}

fn true_residual(a: &CsrMatrix, x: &[f64], b: &[f64]) -> f64 {
    let mut ax = vec![0.0; b.len()];
    a.spmv(x, &mut ax);
    norm(&ax.iter().zip(b).map(|(p, q)| q - p).collect::<Vec<_>>())
}

/// Every preconditioner that applies to `a`, by name. Block Jacobi uses 2×2 blocks (n is even).
fn preconditioners(a: &CsrMatrix) -> Vec<(&'static str, Box<dyn LinearOperator<Cpu> + '_>)> {
    let params = PrecondParams {
        block_size: 2,
        omega: 1.2,
    };
    let mut all: Vec<(&'static str, Box<dyn LinearOperator<Cpu> + '_>)> = [
        ("none", PreconditionerKind::None),
        ("jacobi", PreconditionerKind::Jacobi),
        ("block-jacobi", PreconditionerKind::BlockJacobi),
        ("ssor", PreconditionerKind::Ssor),
        ("ilu0", PreconditionerKind::Ilu0),
    ]
    .into_iter()
    .map(|(name, kind)| (name, kind.build(a, &params).unwrap()))
    .collect();
    all.push(("direct", Box::new(DirectSolver::lu(a).unwrap())));
    all
}

/// Solves with every method × preconditioner and compares with the direct solution.
fn check_all(a: &CsrMatrix, methods: &[SolverMethod], reference: &[f64], b: &[f64]) {
    for (pname, m) in preconditioners(a) {
        for &method in methods {
            let mut x = vec![0.0; a.nrows];
            let stats = method
                .solve(&Cpu, a, m.as_ref(), &b.to_vec(), &mut x, &opts(1e-12))
                .unwrap_or_else(|e| panic!("{method:?}+{pname}: {e}"));
            let err = rel_error(&x, reference);
            assert!(err < 1e-8, "{method:?}+{pname}: relative error {err:.2e}");
            // The reported final residual is the true one.
            let r = true_residual(a, &x, b);
            assert!(
                (stats.final_residual - r).abs() <= 1e-6 * r + 1e-14 * norm(b),
                "{method:?}+{pname}"
            );
            assert!(stats.relative_residual <= 1e-12);
            assert_eq!(stats.residual_history.len(), stats.iterations + 1);
            if pname == "direct" {
                assert!(
                    stats.iterations <= 2,
                    "{method:?} with exact preconditioner: {}",
                    stats.iterations
                );
            }
        }
    }
}

#[test]
fn all_combinations_match_direct_solution_on_laplacian() {
    let a = laplacian_2d(30);
    let b = rhs(a.nrows);
    let reference = DirectSolver::cholesky(&a).unwrap().solve(&b).unwrap();
    check_all(
        &a,
        &[
            SolverMethod::Cg,
            SolverMethod::Gmres,
            SolverMethod::Bicgstab,
        ],
        &reference,
        &b,
    );
}

#[test]
fn all_combinations_match_direct_solution_on_convection_diffusion() {
    let a = convection_diffusion_2d(30, 40.0);
    assert!(a.asymmetry() > 0.1);
    let b = rhs(a.nrows);
    let reference = DirectSolver::lu(&a).unwrap().solve(&b).unwrap();
    check_all(
        &a,
        &[SolverMethod::Gmres, SolverMethod::Bicgstab],
        &reference,
        &b,
    );
}

#[test]
fn cg_iteration_counts_follow_theory_and_preconditioner_quality() {
    let m = 30;
    let a = laplacian_2d(m);
    let b = rhs(a.nrows);
    let params = PrecondParams::default();
    let count = |kind: PreconditionerKind| {
        let p = kind.build(&a, &params).unwrap();
        let mut x = vec![0.0; a.nrows];
        cg(&Cpu, &a, p.as_ref(), &b, &mut x, &opts(1e-8))
            .unwrap()
            .iterations
    };
    let jacobi = count(PreconditionerKind::Jacobi);
    // κ = cot²(πh/2) and CG's bound k ≤ ½√κ ln(2/ε); a smooth right-hand side needs a fair share.
    let h = 1.0 / (m as f64 + 1.0);
    let kappa = (1.0 / (std::f64::consts::PI * h / 2.0).tan()).powi(2);
    let bound = 0.5 * kappa.sqrt() * (2.0 / 1e-8f64).ln();
    assert!(
        (jacobi as f64) <= bound && (jacobi as f64) >= 0.25 * bound,
        "Jacobi CG: {jacobi} vs bound {bound:.0}"
    );
    let ssor = count(PreconditionerKind::Ssor);
    let ilu = count(PreconditionerKind::Ilu0);
    assert!(
        ssor < jacobi && ilu < jacobi,
        "jacobi {jacobi}, ssor {ssor}, ilu0 {ilu}"
    );
}

#[test]
fn gmres_with_full_restart_converges_within_n_iterations() {
    let a = convection_diffusion_2d(8, 40.0);
    let n = a.nrows;
    let b = rhs(n);
    let o = KrylovOptions {
        rtol: 1e-10,
        atol: 0.0,
        max_iter: n,
        restart: n,
        progress: false,
    };
    let mut x = vec![0.0; n];
    let stats = gmres(&Cpu, &a, &Identity(n), &b, &mut x, &o).unwrap();
    assert!(stats.iterations <= n, "{}", stats.iterations);
    assert!(true_residual(&a, &x, &b) <= 1e-10 * norm(&b));
    // Estimates never increase within the (single) cycle: GMRES minimizes the residual.
    assert!(stats
        .residual_history
        .windows(2)
        .take(stats.iterations - 1)
        .all(|w| w[1] <= w[0] * (1.0 + 1e-12)));
}

#[test]
fn short_restart_gmres_recomputes_true_residual() {
    let a = convection_diffusion_2d(15, 40.0);
    let b = rhs(a.nrows);
    let o = KrylovOptions {
        restart: 5,
        ..opts(1e-10)
    };
    let mut x = vec![0.0; a.nrows];
    let stats = gmres(
        &Cpu,
        &a,
        &Jacobi::new(&Cpu, &a.diagonal()).unwrap(),
        &b,
        &mut x,
        &o,
    )
    .unwrap();
    assert!(stats.iterations > 5, "needs several cycles");
    // The entry closing each cycle is a true residual; the last one is what is reported.
    let r = true_residual(&a, &x, &b);
    assert!((stats.final_residual - r).abs() <= 1e-10 * r);
}

#[test]
fn nonzero_initial_guess_is_used() {
    let a = laplacian_2d(12);
    let b = rhs(a.nrows);
    let exact = DirectSolver::cholesky(&a).unwrap().solve(&b).unwrap();
    for method in [
        SolverMethod::Cg,
        SolverMethod::Gmres,
        SolverMethod::Bicgstab,
    ] {
        let mut x = exact.clone();
        let s = method
            .solve(&Cpu, &a, &Identity(a.nrows), &b, &mut x, &opts(1e-8))
            .unwrap();
        assert_eq!(s.iterations, 0, "{method:?} starts from the solution");
        let mut x: Vec<f64> = exact.iter().map(|v| v * 1.01).collect();
        let s = method
            .solve(&Cpu, &a, &Identity(a.nrows), &b, &mut x, &opts(1e-10))
            .unwrap();
        assert!(
            rel_error(&x, &exact) < 1e-8 && s.initial_residual < 0.05 * norm(&b),
            "{method:?}"
        );
    }
}

#[test]
fn cg_detects_indefinite_operator() {
    let mut a = laplacian_2d(10);
    for k in a.diagonal_positions().unwrap() {
        a.values[k] -= 6.0;
    }
    let b = vec![1.0; a.nrows];
    let mut x = vec![0.0; a.nrows];
    let err = cg(&Cpu, &a, &Identity(a.nrows), &b, &mut x, &opts(1e-8)).unwrap_err();
    match err {
        Error::NotConverged {
            reason, history, ..
        } => {
            assert!(reason.contains("positive definite"), "{reason}");
            assert!(!history.is_empty());
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn iteration_limit_reports_history() {
    let a = laplacian_2d(20);
    let b = rhs(a.nrows);
    for method in [
        SolverMethod::Cg,
        SolverMethod::Gmres,
        SolverMethod::Bicgstab,
    ] {
        let mut x = vec![0.0; a.nrows];
        let o = KrylovOptions {
            max_iter: 3,
            ..opts(1e-12)
        };
        match method.solve(&Cpu, &a, &Identity(a.nrows), &b, &mut x, &o) {
            Err(Error::NotConverged {
                iterations,
                history,
                reason,
                relative_residual,
                ..
            }) => {
                assert_eq!((iterations, history.len()), (3, 4), "{method:?}");
                assert!(reason.contains("iteration limit"), "{reason}");
                assert!((relative_residual - history[3] / norm(&b)).abs() < 1e-15);
                if method == SolverMethod::Gmres {
                    assert!(history[3] < history[0], "GMRES minimizes the residual");
                }
            }
            other => panic!("{method:?}: expected NotConverged, got {other:?}"),
        }
    }
}

#[test]
fn bicgstab_reports_breakdown() {
    // r̂·(A r̂) = 0 at the first step for this permutation matrix.
    let a = CsrMatrix::from_triplets(2, 2, &[(0, 1, 1.0), (1, 0, 1.0)]).unwrap();
    let mut x = vec![0.0; 2];
    let err = bicgstab(
        &Cpu,
        &a,
        &Identity(2),
        &vec![1.0, 0.0],
        &mut x,
        &opts(1e-10),
    )
    .unwrap_err();
    assert!(err.to_string().contains("breakdown"), "{err}");
}

#[test]
fn zero_rhs_and_bad_sizes() {
    let a = laplacian_2d(5);
    for method in [
        SolverMethod::Cg,
        SolverMethod::Gmres,
        SolverMethod::Bicgstab,
    ] {
        let mut x = vec![3.0; 25];
        let s = method
            .solve(&Cpu, &a, &Identity(25), &vec![0.0; 25], &mut x, &opts(1e-8))
            .unwrap();
        assert!(x.iter().all(|&v| v == 0.0) && s.iterations == 0);
        let err = method
            .solve(&Cpu, &a, &Identity(25), &vec![1.0; 24], &mut x, &opts(1e-8))
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Dimension {
                    expected: 25,
                    got: 24,
                    ..
                }
            ),
            "{err}"
        );
        let err = method
            .solve(&Cpu, &a, &Identity(7), &vec![1.0; 25], &mut x, &opts(1e-8))
            .unwrap_err();
        assert!(matches!(err, Error::Dimension { .. }), "{err}");
    }
    let o = KrylovOptions {
        restart: 0,
        ..opts(1e-8)
    };
    assert!(gmres(
        &Cpu,
        &a,
        &Identity(25),
        &vec![1.0; 25],
        &mut vec![0.0; 25],
        &o
    )
    .is_err());
    let o = KrylovOptions {
        rtol: f64::NAN,
        ..opts(1e-8)
    };
    assert!(cg(
        &Cpu,
        &a,
        &Identity(25),
        &vec![1.0; 25],
        &mut vec![0.0; 25],
        &o
    )
    .is_err());
}

#[test]
fn jacobi_works_through_the_generic_backend_and_progress_bar_runs() {
    fn solve_generic<B: Backend>(
        backend: &B,
        a: &dyn LinearOperator<B>,
        diag: &[f64],
        b: &[f64],
    ) -> Vec<f64> {
        let m = Jacobi::new(backend, &backend.from_host(diag).unwrap()).unwrap();
        let bv = backend.from_host(b).unwrap();
        let mut x = backend.zeros(b.len()).unwrap();
        let o = KrylovOptions {
            progress: true,
            ..opts(1e-10)
        };
        cg(backend, a, &m, &bv, &mut x, &o).unwrap();
        backend.to_host(&x).unwrap()
    }
    let a = laplacian_2d(10);
    let b = rhs(a.nrows);
    let x = solve_generic(&Cpu, &a, &a.diagonal(), &b);
    assert!(true_residual(&a, &x, &b) <= 1e-10 * norm(&b) * 1.0001);
}

#[test]
fn gmres_refuses_a_restart_basis_that_cannot_fit() {
    // GMRES(n) on 500² unknowns needs 8·n² bytes ≈ 500 GB of basis and Hessenberg: refused with
    // the estimate before anything is allocated.
    let a = laplacian_2d(500);
    let n = a.nrows;
    let b = rhs(n);
    let o = KrylovOptions { restart: 1_000_000_000, ..opts(1e-8) };
    let mut x = vec![0.0; n];
    match gmres(&Cpu, &a, &Identity(n), &b, &mut x, &o) {
        Err(Error::OutOfMemory(m)) => assert!(m.contains("GMRES basis") && m.contains("GMRES(250000)"), "{m}"),
        other => panic!("expected out of memory, got {:?}", other.map(|s| s.iterations)),
    }
}
