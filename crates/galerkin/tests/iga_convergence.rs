//! IGA convergence: the seed's 1D benchmark at rate p in H1 for p = 1…5 (errors integrated with one
//! Gauss point more than the solver uses), about 1e-10 near 1000 elements for p = 5 as the seed
//! reports; 2D manufactured solutions with rate p + 1 in L2 and p in H1 (Poisson with a variable
//! coefficient and non-homogeneous Dirichlet data, and the L2 projection). Solved with the
//! multifrontal solver on the CPU.
use galerkin::iga::{self, seed, Field, Physics2d, Problem2d, Space1d, Space2d, Spline1d, Spline2d};
use galerkin::solver::multifrontal::CpuMultifrontal;
use std::sync::Arc;

fn rates(h: &[f64], e: &[f64]) -> Vec<f64> {
    (1..h.len()).map(|i| (e[i - 1] / e[i]).ln() / (h[i - 1] / h[i]).ln()).collect()
}

fn sci(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:.2e}")).collect::<Vec<_>>().join(", ")
}

fn solve_1d(p: usize, n: usize) -> Spline1d {
    let space = Space1d::uniform(p, n, 0.0, 1.0).unwrap();
    let sys = seed::problem().assemble(&space, p + 1).unwrap();
    let f = CpuMultifrontal::factor(Arc::new(iga::symbolic_1d(&space).unwrap()), &sys.matrices).unwrap();
    let mut u = vec![0.0; sys.ndofs];
    f.solve_into(1, &sys.rhs, &mut u).unwrap();
    Spline1d::new(space, u).unwrap()
}

#[test]
fn seed_benchmark_converges_at_rate_p_in_h1() {
    for p in 1..=5 {
        let ns: Vec<usize> = [128, 256, 512, 1024].iter().map(|n| n * if p == 1 { 4 } else { 1 }).collect();
        let mut h = Vec::new();
        let mut err = Vec::new();
        for &n in &ns {
            let uh = solve_1d(p, n);
            let e = uh.errors(&seed::u, &seed::du, p + 2).unwrap();
            h.push(1.0 / n as f64);
            err.push(e.relative_h1());
        }
        let r = rates(&h, &err);
        eprintln!("p = {p}: relative H1 errors {}, rates {r:.3?}", sci(&err));
        for (i, &ri) in r.iter().enumerate() {
            assert!((ri - p as f64).abs() < 0.15, "p = {p}: rate {ri:.3} between N = {} and {} (errors {err:?})", ns[i], ns[i + 1]);
        }
    }
}

#[test]
fn seed_benchmark_reaches_1e_10_near_1000_quintic_elements() {
    let e = solve_1d(5, 1000).errors(&seed::u, &seed::du, 7).unwrap();
    eprintln!("p = 5, N = 1000: relative H1 error {:.3e}, L2 {:.3e}", e.relative_h1(), e.relative_l2());
    assert!(e.relative_h1() < 3e-10 && e.relative_h1() > 1e-12, "{}", e.relative_h1());
}

fn u2(p: [f64; 2]) -> f64 {
    (2.0 * p[0] + p[1]).sin() + p[0] * p[1]
}
fn grad2(p: [f64; 2]) -> [f64; 2] {
    let c = (2.0 * p[0] + p[1]).cos();
    [2.0 * c + p[1], c + p[0]]
}

fn solve_2d(problem: &Problem2d, p: usize, n: usize) -> Spline2d {
    let space = Space2d::new(Space1d::uniform(p, n, 0.0, 1.0).unwrap(), Space1d::uniform(p, n, 0.0, 1.0).unwrap());
    let sys = problem.assemble(&space, p + 1).unwrap();
    let f = CpuMultifrontal::factor(Arc::new(iga::symbolic_2d(&space).unwrap()), &sys.matrices).unwrap();
    let mut u = vec![0.0; sys.ndofs];
    f.solve_into(1, &sys.rhs, &mut u).unwrap();
    Spline2d::new(space, u).unwrap()
}

fn check_2d_rates(problem: &Problem2d, what: &str) {
    for p in 1..=3 {
        let ns = [4usize, 8, 16, 32];
        let (mut h, mut l2, mut h1) = (Vec::new(), Vec::new(), Vec::new());
        for &n in &ns {
            let e = solve_2d(problem, p, n).errors(&u2, &grad2, p + 2).unwrap();
            h.push(1.0 / n as f64);
            l2.push(e.l2);
            h1.push(e.h1_semi);
        }
        let (rl2, rh1) = (rates(&h, &l2), rates(&h, &h1));
        eprintln!("{what} p = {p}: L2 {} rates {rl2:.2?}; H1 {} rates {rh1:.2?}", sci(&l2), sci(&h1));
        let (last_l2, last_h1) = (rl2[rl2.len() - 1], rh1[rh1.len() - 1]);
        assert!((last_l2 - (p + 1) as f64).abs() < 0.2, "{what} p = {p}: L2 rate {last_l2:.3}");
        assert!((last_h1 - p as f64).abs() < 0.2, "{what} p = {p}: H1 rate {last_h1:.3}");
    }
}

#[test]
fn poisson_2d_converges_at_p_plus_1_in_l2_and_p_in_h1() {
    // −∇·(κ∇u) = f with κ = 1 + xy: f = −(κ Δu + ∇κ·∇u), Δu = −5 sin(2x + y).
    let f = |p: [f64; 2]| {
        let g = grad2(p);
        -((1.0 + p[0] * p[1]) * (-5.0 * (2.0 * p[0] + p[1]).sin()) + p[1] * g[0] + p[0] * g[1])
    };
    let problem = Problem2d {
        physics: Physics2d::Poisson { kappa: Field::new("kappa", |p| 1.0 + p[0] * p[1]), dirichlet: Field::new("g", u2) },
        f: Field::new("f", f),
    };
    check_2d_rates(&problem, "poisson");
}

#[test]
fn l2_projection_2d_converges_at_p_plus_1() {
    let problem = Problem2d { physics: Physics2d::Projection, f: Field::new("f", u2) };
    check_2d_rates(&problem, "projection");
}
