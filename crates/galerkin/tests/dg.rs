//! DG on an interval, CPU backend: the seed's example against an independent reference and the
//! exact solution, convergence rates of SIPG/NIPG/IIPG for k = 1…4, the assembled matrix against
//! its four pieces, every direct and Krylov solver against each other, and named errors.
mod dg_common;
use dg_common::*;
use galerkin::backend::Cpu;
use galerkin::dg::assemble::{apply_unassembled, assemble};
use galerkin::dg::convergence::study;
use galerkin::dg::{
    solve_cpu, BasisKind, BlockThomas, BlockTridiag, BoundaryCondition, CyclicReduction, DgPreconditioner, DgSolver, DirectKind, Field, HScaling,
    IntervalMesh, Method, Penalty,
};
use galerkin::solver::{DirectSolver, Factorization, SolverMethod, KrylovOptions};

fn direct(kind: DirectKind) -> DgSolver {
    DgSolver::direct(kind)
}

fn krylov(method: SolverMethod, preconditioner: DgPreconditioner) -> DgSolver {
    // 1e-11: the Krylov monitor refuses tolerances below the attainable accuracy (about 1e-13 here).
    DgSolver::Krylov { method, preconditioner, options: KrylovOptions { rtol: 1e-11, max_iter: 20_000, restart: 200, ..Default::default() } }
}

#[test]
fn seed_coefficients_match_the_independent_reference() {
    let reference = seed_reference();
    let (mut p, _) = seed(10, 2, 2.0);
    p.quadrature_points = Some(12);
    for solver in [
        direct(DirectKind::Thomas),
        direct(DirectKind::CyclicReduction),
        direct(DirectKind::FaerLu),
        // σ = 2 is below SIPG's coercivity threshold at k = 2: the matrix is symmetric but
        // indefinite, so CG does not apply; GMRES and BiCGStab do.
        krylov(SolverMethod::Gmres, DgPreconditioner::BlockJacobi),
        krylov(SolverMethod::Bicgstab, DgPreconditioner::BlockJacobi),
    ] {
        let s = solve_cpu(&p, &solver).unwrap_or_else(|e| panic!("{e}"));
        let d = max_diff(&s.coefficients, &reference);
        assert!(d < 1e-12, "{}: coefficients differ from the reference by {d:.3e}", s.solver);
    }
}

#[test]
fn seed_example_matches_the_exact_solution_for_penalties_2_to_2000() {
    for sigma in [2.0, 20.0, 200.0, 2000.0] {
        let (p, exact) = seed(10, 2, sigma);
        let s = solve_cpu(&p, &DgSolver::default()).unwrap();
        let e = galerkin::dg::errors(&p, &s.coefficients, &exact).unwrap();
        eprintln!("σ = {sigma}: L2 {:.3e}, H1 {:.3e}, max jump {:.3e}", e.l2, e.h1, e.max_jump);
        assert!(e.l2 < 2e-4 && e.h1 < 2e-2, "σ = {sigma}: L2 {:.3e} H1 {:.3e}", e.l2, e.h1);
        // A larger penalty pulls the jumps together.
        if sigma >= 200.0 {
            assert!(e.max_jump < 2e-4, "σ = {sigma}: jump {:.3e}", e.max_jump);
        }
    }
    // Refining the seed's mesh converges at the optimal rate for every penalty.
    for sigma in [2.0, 2000.0] {
        let (p, exact) = seed(10, 2, sigma);
        let t = study(&p, &exact, 3, &DgSolver::default(), None).unwrap();
        let (l2, h1) = t.last_rates();
        assert!((l2 - 3.0).abs() < 0.15 && (h1 - 2.0).abs() < 0.15, "σ = {sigma}: rates {l2:.2}, {h1:.2}");
    }
}

/// Expected rates (Rivière 2008, §2.8–2.9; Rivière, Wheeler and Girault 2001): broken H1 k for all
/// three methods; L2 k + 1 for SIPG, and for NIPG and IIPG k + 1 at odd k but only k at even k.
fn expected_l2(method: Method, k: usize) -> f64 {
    match method {
        Method::Sipg => (k + 1) as f64,
        _ if k % 2 == 1 => (k + 1) as f64,
        _ => k as f64,
    }
}

#[test]
fn convergence_rates_for_every_method_and_degree() {
    for method in [Method::Sipg, Method::Nipg, Method::Iipg] {
        for k in 1..=4 {
            // Start coarser at high degree: at k = 4 and 64 elements the error reaches round-off
            // (cond(A)·ε ≈ 1e-10) and the last rate would measure that.
            let (p, exact) = manufactured(if k >= 4 { 2 } else { 4 }, k, method);
            let t = study(&p, &exact, 4, &direct(DirectKind::Thomas), None).unwrap();
            let (l2, h1) = t.last_rates();
            let rates: Vec<String> = t.levels.iter().map(|l| format!("{:.2e}/{:.2e}", l.l2, l.h1)).collect();
            eprintln!("{} k={k}: L2 rate {l2:.2}, H1 rate {h1:.2}  ({})", method.name(), rates.join(" "));
            let want = expected_l2(method, k);
            assert!((l2 - want).abs() < 0.2, "{} k={k}: L2 rate {l2:.2}, expected {want}", method.name());
            assert!((h1 - k as f64).abs() < 0.2, "{} k={k}: H1 rate {h1:.2}, expected {k}", method.name());
        }
    }
}

#[test]
fn assembled_matrix_is_the_operator_of_its_four_pieces() {
    for k in 1..=6 {
        for basis in [BasisKind::Legendre, BasisKind::Monomial] {
            for method in [Method::Sipg, Method::Nipg, Method::Iipg] {
                let (mut p, _) = manufactured(7, k, method);
                p.basis = basis;
                p.mesh = IntervalMesh::graded(7, -1.0, 2.0, 1.3).unwrap();
                p.penalty = Penalty { h: HScaling::Harmonic, times_coefficient: true, ..Penalty::default() };
                p.left = BoundaryCondition::Neumann(0.5);
                p.right = BoundaryCondition::Dirichlet(-1.0);
                let tab = p.tabulation().unwrap();
                let s = p.sample(&tab).unwrap();
                let (m, _) = assemble(&p, &tab, &s).unwrap();
                let x: Vec<f64> = (0..p.ndofs()).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
                let (mut y1, mut y2, mut y3) = (vec![0.0; x.len()], vec![0.0; x.len()], vec![0.0; x.len()]);
                m.apply(&x, &mut y1).unwrap();
                apply_unassembled(&p, &tab, &s, &x, &mut y2).unwrap();
                m.to_csr().unwrap().spmv(&x, &mut y3);
                let scale = max_abs(&y1);
                assert!(max_diff(&y1, &y2) < 1e-12 * scale, "k={k} {basis:?} {method:?}");
                assert!(max_diff(&y1, &y3) < 1e-13 * scale, "k={k} {basis:?} {method:?} (CSR)");
                let asym = m.asymmetry();
                match method {
                    Method::Sipg => assert!(asym < 1e-14, "SIPG k={k}: asymmetry {asym:.3e}"),
                    _ => assert!(asym > 1e-3, "{method:?} k={k}: asymmetry {asym:.3e}"),
                }
            }
        }
    }
}

#[test]
fn legendre_and_monomial_bases_give_the_same_solution() {
    for k in [1, 3, 6] {
        let (mut p, _) = manufactured(9, k, Method::Nipg);
        let legendre = solve_cpu(&p, &DgSolver::default()).unwrap();
        p.basis = BasisKind::Monomial;
        let monomial = solve_cpu(&p, &DgSolver::default()).unwrap();
        let tl = galerkin::dg::Tabulation::new(BasisKind::Legendre, k, k + 2).unwrap();
        let tm = galerkin::dg::Tabulation::new(BasisKind::Monomial, k, k + 2).unwrap();
        for i in 0..=50 {
            let x = i as f64 / 50.0;
            let (ul, _) = galerkin::dg::norms::evaluate(&p, &tl, &legendre.coefficients, x);
            let (um, _) = galerkin::dg::norms::evaluate(&p, &tm, &monomial.coefficients, x);
            // Monomials of degree 6 are badly conditioned (their Gram matrix near 1e6).
            assert!((ul - um).abs() < 1e-8, "k={k} x={x}: {ul} vs {um}");
        }
    }
}

#[test]
fn direct_and_krylov_solvers_agree() {
    let cases = [
        (Method::Sipg, vec![SolverMethod::Cg, SolverMethod::Gmres, SolverMethod::Bicgstab]),
        (Method::Nipg, vec![SolverMethod::Gmres, SolverMethod::Bicgstab]),
        (Method::Iipg, vec![SolverMethod::Gmres, SolverMethod::Bicgstab]),
    ];
    for (method, krylovs) in cases {
        let (p, _) = manufactured(40, 2, method);
        let reference = solve_cpu(&p, &direct(DirectKind::Thomas)).unwrap().coefficients;
        let scale = max_abs(&reference);
        for kind in [DirectKind::CyclicReduction, DirectKind::FaerLu] {
            let s = solve_cpu(&p, &direct(kind)).unwrap();
            assert!(max_diff(&s.coefficients, &reference) < 1e-11 * scale, "{method:?} {kind:?}");
        }
        for m in krylovs {
            let pres = if m == SolverMethod::Cg {
                vec![DgPreconditioner::None, DgPreconditioner::Jacobi, DgPreconditioner::BlockJacobi]
            } else {
                vec![DgPreconditioner::Jacobi, DgPreconditioner::BlockJacobi]
            };
            for pre in pres {
                let s = solve_cpu(&p, &krylov(m, pre)).unwrap_or_else(|e| panic!("{method:?} {m:?} {pre:?}: {e}"));
                let d = max_diff(&s.coefficients, &reference);
                assert!(d < 1e-8 * scale, "{method:?} {m:?} {pre:?}: {d:.3e} after {} iterations", s.stats.iterations);
            }
        }
    }
    // CG on a non-symmetric method is refused before it runs.
    let (p, _) = manufactured(8, 2, Method::Iipg);
    let e = solve_cpu(&p, &krylov(SolverMethod::Cg, DgPreconditioner::None)).unwrap_err().to_string();
    assert!(e.contains("solver.method") && e.contains("symmetric"), "{e}");
}

#[test]
fn factorizations_solve_many_right_hand_sides_for_any_size() {
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 33, 1000] {
        for k in [1, 4] {
            let (p, _) = manufactured(n, k, Method::Nipg);
            let (m, rhs) = galerkin::dg::solve::system_cpu(&p).unwrap();
            let size = m.size();
            let nrhs = 3;
            let b: Vec<f64> = (0..nrhs).flat_map(|r| rhs.iter().map(move |v| v * (r as f64 + 1.0) - r as f64)).collect();
            let csr = m.to_csr().unwrap();
            let norm_a = (0..csr.nrows).map(|r| csr.row(r).1.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
            let solvers: Vec<Box<dyn Factorization<Cpu>>> = vec![
                Box::new(BlockThomas::factor(&m).unwrap()),
                Box::new(CyclicReduction::factor(&m).unwrap()),
                Box::new(DirectSolver::lu(&m.to_csr().unwrap()).unwrap()),
            ];
            for f in &solvers {
                let mut x = vec![0.0; size * nrhs];
                f.solve_many(&Cpu, nrhs, &b, &mut x).unwrap();
                for r in 0..nrhs {
                    let mut ax = vec![0.0; size];
                    m.apply(&x[r * size..(r + 1) * size], &mut ax).unwrap();
                    // Backward stability: ‖b − Ax‖ ≤ c·ε·‖A‖‖x‖.
                    let res = max_diff(&ax, &b[r * size..(r + 1) * size]);
                    let bound = 1e-13 * norm_a * max_abs(&x[r * size..(r + 1) * size]);
                    assert!(res < bound, "{} n={n} k={k} rhs {r}: residual {res:.3e} > {bound:.3e}", f.name());
                }
                let mut short = vec![0.0; size];
                assert!(f.solve_many(&Cpu, nrhs, &b, &mut short).is_err(), "{}: wrong sizes accepted", f.name());
            }
        }
    }
}

#[test]
fn singular_blocks_are_errors_that_name_the_element() {
    let (p, _) = manufactured(12, 2, Method::Sipg);
    let (mut m, _) = galerkin::dg::solve::system_cpu(&p).unwrap();
    let bb = 9;
    m.diag[5 * bb..6 * bb].fill(0.0);
    m.lower[5 * bb..6 * bb].fill(0.0);
    m.upper[5 * bb..6 * bb].fill(0.0);
    let e = BlockThomas::factor(&m).err().unwrap().to_string();
    assert!(e.contains("element 5") && e.contains("singular"), "{e}");
    let e = CyclicReduction::factor(&m).err().unwrap().to_string();
    assert!(e.contains("element 5") && e.contains("singular"), "{e}");
    let e = galerkin::dg::block_tridiag::BlockJacobi::new(&m).err().unwrap().to_string();
    assert!(e.contains("element 5"), "{e}");
    // NaN blocks too.
    let mut m2 = BlockTridiag::zeros(3, 2).unwrap();
    m2.diag.fill(f64::NAN);
    assert!(BlockThomas::factor(&m2).is_err());
}

#[test]
fn sipg_with_too_small_a_penalty_is_not_positive_definite_and_cg_says_so() {
    let (mut p, _) = manufactured(30, 3, Method::Sipg);
    p.penalty = Penalty::seed(0.01);
    let r = solve_cpu(&p, &krylov(SolverMethod::Cg, DgPreconditioner::None));
    if let Err(e) = r {
        let e = e.to_string();
        assert!(e.contains("positive definite") || e.contains("converge"), "{e}");
    }
    // Direct solvers with pivoting still solve it (it is indefinite, not singular).
    let s = solve_cpu(&p, &direct(DirectKind::Thomas)).unwrap();
    assert!(s.stats.relative_residual < 1e-10);
}

#[test]
fn pure_neumann_with_reaction_and_high_degree() {
    // −u″ + u = f with u = cos(πx) + 2: zero flux at both ends.
    let mut p = galerkin::dg::DgProblem::new(IntervalMesh::uniform(6, 0.0, 1.0).unwrap(), 6);
    let pi = std::f64::consts::PI;
    p.c = Field::Const(1.0);
    p.f = Field::func(move |x| (pi * pi + 1.0) * (pi * x).cos() + 2.0);
    p.left = BoundaryCondition::Neumann(0.0);
    p.right = BoundaryCondition::Neumann(0.0);
    let exact = galerkin::dg::Exact { u: Field::func(move |x| (pi * x).cos() + 2.0), du: None };
    let s = solve_cpu(&p, &DgSolver::default()).unwrap();
    let e = galerkin::dg::errors(&p, &s.coefficients, &exact).unwrap();
    assert!(e.l2 < 1e-7 && e.h1 < 1e-5, "{e:?}");
    // Without the reaction the problem is singular: a named error before any solve.
    p.c = Field::Const(0.0);
    let e = solve_cpu(&p, &DgSolver::default()).unwrap_err().to_string();
    assert!(e.contains("Neumann") && e.contains("c > 0"), "{e}");
}

#[test]
fn cyclic_reduction_with_one_refinement_is_as_accurate_as_thomas() {
    // cond(A) grows like N²; cyclic reduction's forward error grows faster than Thomas's, and one
    // step of iterative refinement (the default) removes the difference.
    let (p, exact) = galerkin::dg::bench::seed_problem(400_000, 2).unwrap();
    let err = |solver: DgSolver| galerkin::dg::errors(&p, &solve_cpu(&p, &solver).unwrap().coefficients, &exact).unwrap().l2;
    let thomas = err(direct(DirectKind::Thomas));
    let plain = err(DgSolver::Direct { kind: DirectKind::CyclicReduction, refine: Some(0) });
    let refined = err(direct(DirectKind::CyclicReduction));
    eprintln!("L2 at 4e5 elements: Thomas {thomas:.3e}, cyclic reduction {plain:.3e}, refined {refined:.3e}");
    assert!(plain > 2.0 * thomas, "the test no longer shows the effect: {plain:.3e} vs {thomas:.3e}");
    assert!(refined < 1.5 * thomas, "refinement did not help: {refined:.3e} vs Thomas {thomas:.3e}");
}
