//! Shared systems for the multifrontal tests: 1D and 2D B-spline systems (symmetric and not, with
//! uniform, non-uniform and repeated knots) and a check of a factorization against faer's sparse
//! LU on many right-hand sides, written once over the backend.
#![allow(dead_code)]
use galerkin::backend::Backend;
use galerkin::iga::{self, Adr1d, ElementSystem, EndCondition, Field, KnotVector, Physics2d, Problem2d, Space1d, Space2d};
use galerkin::solver::multifrontal::separators::SeparatorPlan;
use galerkin::solver::multifrontal::subtrees::{SubtreeLimits, SubtreePlan};
use galerkin::solver::multifrontal::Symbolic;
use galerkin::solver::{DirectSolver, Factorization};

pub struct Case {
    pub name: String,
    pub sys: ElementSystem,
    pub sym: Symbolic,
}

fn case_1d(name: &str, problem: &Adr1d, space: &Space1d) -> Case {
    let sys = problem.assemble(space, space.degree() + 1).unwrap();
    Case { name: name.into(), sym: iga::symbolic_1d(space).unwrap(), sys }
}

fn case_2d(name: &str, problem: &Problem2d, space: &Space2d) -> Case {
    let sys = problem.assemble(space, space.x.degree().max(space.y.degree()) + 1).unwrap();
    Case { name: name.into(), sym: iga::symbolic_2d(space).unwrap(), sys }
}

pub fn poisson() -> Problem2d {
    Problem2d {
        physics: Physics2d::Poisson { kappa: Field::new("kappa", |p| 1.0 + p[0] * p[1]), dirichlet: Field::new("g", |p| (p[0] - 2.0 * p[1]).sin()) },
        f: Field::new("f", |p| (3.0 * p[0]).cos() + p[1]),
    }
}

/// Small systems covering the shapes the solver must handle.
pub fn small_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let seed = iga::seed::problem();
    for p in 1..=5 {
        for n in [1, 2, 37, 64] {
            out.push(case_1d(&format!("seed p={p} N={n}"), &seed, &Space1d::uniform(p, n, 0.0, 1.0).unwrap()));
        }
    }
    // Non-uniform breakpoints with C0 and C1 knots, Robin at both ends, strong advection.
    let kv = KnotVector::new(3, vec![0.0, 0.0, 0.0, 0.0, 0.1, 0.1, 0.1, 0.25, 0.4, 0.4, 0.7, 0.9, 1.0, 1.0, 1.0, 1.0]).unwrap();
    let robin = Adr1d {
        a: Field::constant("a", 0.01),
        b: Field::new("b", |p| 3.0 + p[0]),
        c: Field::constant("c", 1.0),
        f: Field::new("f", |p| p[0].exp()),
        left: EndCondition::Robin { beta: 2.0, gamma: 1.0 },
        right: EndCondition::Robin { beta: 0.5, gamma: -1.0 },
    };
    out.push(case_1d("robin C0/C1 knots", &robin, &Space1d::new(kv)));
    out.push(case_1d("seed C0 quartics", &seed, &Space1d::new(KnotVector::uniform(4, 9, 0, 0.0, 1.0).unwrap())));
    for p in 1..=3 {
        let s = Space2d::new(Space1d::uniform(p, 6, 0.0, 1.0).unwrap(), Space1d::uniform(p, 5, 0.0, 2.0).unwrap());
        out.push(case_2d(&format!("poisson p={p} 6x5"), &poisson(), &s));
    }
    let mixed = Space2d::new(Space1d::new(KnotVector::uniform(2, 7, 0, 0.0, 1.0).unwrap()), Space1d::uniform(3, 4, -1.0, 1.0).unwrap());
    out.push(case_2d("poisson C0 x / C2 y", &poisson(), &mixed));
    let proj = Problem2d { physics: Physics2d::Projection, f: Field::new("f", |p| (p[0] * p[1]).exp()) };
    out.push(case_2d("projection p=2 4x7", &proj, &Space2d::new(Space1d::uniform(2, 4, 0.0, 1.0).unwrap(), Space1d::uniform(2, 7, 0.0, 1.0).unwrap())));
    out
}

/// Systems whose fronts near the root exceed `m` rows (blocked/library paths).
pub fn large_front_cases() -> Vec<Case> {
    vec![
        case_2d("poisson p=2 48x48", &poisson(), &Space2d::new(Space1d::uniform(2, 48, 0.0, 1.0).unwrap(), Space1d::uniform(2, 48, 0.0, 1.0).unwrap())),
        case_2d("poisson p=3 64x40", &poisson(), &Space2d::new(Space1d::uniform(3, 64, 0.0, 1.0).unwrap(), Space1d::uniform(3, 40, 0.0, 1.0).unwrap())),
    ]
}

/// `nrhs` right-hand sides: the system's own, then deterministic pseudo-random ones.
pub fn right_hand_sides(sys: &ElementSystem, nrhs: usize) -> Vec<f64> {
    let n = sys.ndofs;
    let mut b = sys.rhs.clone();
    b.extend((n..n * nrhs).map(|i| ((i as f64 * 0.754_877_666).fract() - 0.5) * (1.0 + (i % 7) as f64)));
    b
}

/// Solves `nrhs` right-hand sides with `fact` on `backend` and with faer's sparse LU of the
/// assembled matrix; asserts agreement to round-off (relative to the solution's size).
pub fn check_against_faer<B: Backend>(backend: &B, fact: &dyn Factorization<B>, case: &Case, nrhs: usize) {
    let n = case.sys.ndofs;
    let b = right_hand_sides(&case.sys, nrhs);
    let bd = backend.from_host(&b).unwrap();
    let mut xd = backend.zeros(n * nrhs).unwrap();
    fact.solve_many(backend, nrhs, &bd, &mut xd).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_equals_faer(case, nrhs, &backend.to_host(&xd).unwrap(), &backend.name());
}

/// Asserts that `x` holds the solutions of [`right_hand_sides`]`(.., nrhs)` as faer's sparse LU of
/// the assembled matrix gives them, to round-off (relative to the solution's size); `what` names
/// the solver in failures.
pub fn assert_equals_faer(case: &Case, nrhs: usize, x: &[f64], what: &str) {
    let n = case.sys.ndofs;
    let b = right_hand_sides(&case.sys, nrhs);
    let lu = DirectSolver::lu(&case.sys.to_csr().unwrap()).unwrap();
    for c in 0..nrhs {
        let reference = lu.solve(&b[c * n..(c + 1) * n]).unwrap();
        let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = reference.iter().zip(&x[c * n..(c + 1) * n]).fold(0.0f64, |m, (r, v)| m.max((r - v).abs()));
        assert!(diff <= 1e-10 * scale, "{} rhs {c}/{nrhs} on {what}: max difference {diff:.3e} (solution scale {scale:.3e})", case.name);
    }
}

/// Column-major `n × nrhs` values (column `c` at `c·n`) in row-major order (row `r` at `r·nrhs`).
pub fn to_rows(v: &[f64], n: usize, nrhs: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * nrhs];
    for c in 0..nrhs {
        for r in 0..n {
            out[r * nrhs + c] = v[c * n + r];
        }
    }
    out
}

/// Row-major `n × nrhs` values in column-major order (the inverse of [`to_rows`]: row-major
/// `n × nrhs` is column-major `nrhs × n`, so it is that matrix's transpose).
pub fn to_columns(v: &[f64], n: usize, nrhs: usize) -> Vec<f64> {
    to_rows(v, nrhs, n)
}

/// Cubic and quartic B-splines of the seed problem on `elements` uniform elements (several fused
/// passes and the separator layout on the GPU from a few thousand elements).
pub fn seed_1d(p: usize, elements: usize) -> Case {
    case_1d(&format!("seed p={p} N={elements}"), &iga::seed::problem(), &Space1d::uniform(p, elements, 0.0, 1.0).unwrap())
}

/// Issue 15's system, which its count tests read: the 1D cubic 2^20-element symbolic factorization.
pub fn issue15_symbolic() -> Symbolic {
    iga::symbolic_1d(&Space1d::uniform(3, 1 << 20, 0.0, 1.0).unwrap()).unwrap()
}

/// Issue 15's plan: [`issue15_symbolic`], its subtree plan (default limits) and its separator plan.
pub fn issue15_plan() -> (Symbolic, SubtreePlan, SeparatorPlan) {
    let sym = issue15_symbolic();
    let plan = SubtreePlan::new(&sym, SubtreeLimits::default()).unwrap();
    let sp = SeparatorPlan::new(&plan, sym.n).unwrap();
    (sym, plan, sp)
}
