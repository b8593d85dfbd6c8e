//! The matrix-free levels of hierarchical hexahedra (issue 16): `partial` and `none` apply the
//! basis by sum factorization through its signed tensor slots (`operator::level::partial::tensor_of`)
//! and solve what the assembled `full` level solves — CG to the same solution, the manufactured
//! problem to the same errors — on the CPU and (where a GPU is found) on the GPU. The operator
//! itself (apply, diagonal, node blocks at p = 1…8) is checked in `tests/levels.rs`.
use super::*;
use galerkin::operator::Tuning;
use galerkin::problem::LinearProblem;

/// The manufactured elasticity problem of [`super::manufactured`] on `space`.
fn problem(space: Arc<FunctionSpace>) -> LinearProblem {
    let (exact, force) = manufactured();
    LinearProblem::new(space, Elasticity::lame(LAMBDA, MU, 3))
        .source(force)
        .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], Arc::new(move |x, u: &mut [f64]| exact(x, u)))
}

/// CG (Jacobi: the matrix-free diagonal) at `partial` and `none` converges to the `full` level's
/// solution, with the same L2 and H1 errors, trunk p = 2, 4, 6 and full p = 3, 5 on rotated,
/// distorted cells.
#[test]
fn matrix_free_levels_solve_to_the_full_solution() {
    let (exact, _) = manufactured();
    for (p, modes) in [(2, ModeSet::Trunk), (4, ModeSet::Trunk), (6, ModeSet::Trunk), (3, ModeSet::Full), (5, ModeSet::Full)] {
        let space = hier(twisted(2, true), p, modes);
        let pr = problem(space.clone());
        let want = pr.assemble(AssemblyLevel::Full).unwrap().solve(&cg(1e-12)).unwrap();
        let e_full = error_norms(&space, &want.u, &exact).unwrap();
        for level in [AssemblyLevel::Partial, AssemblyLevel::None] {
            let got = pr.assemble(level).unwrap().solve(&cg(1e-12)).unwrap();
            let d = rel_diff(&want.u, &got.u);
            assert!(d < 1e-9, "{modes:?} p = {p} {}: solution differs from full's by {d:e}", level.name());
            let e = error_norms(&space, &got.u, &exact).unwrap();
            assert!((e.l2 - e_full.l2).abs() < 1e-9 * e.l2_exact && (e.h1_semi - e_full.h1_semi).abs() < 1e-7 * e_full.h1_semi, "{modes:?} p = {p} {}: {e:?} vs {e_full:?}", level.name());
        }
    }
}

/// On the GPU, `partial` and `none` (the hexahedral mass/diffusion kernel for Poisson, the
/// general one for elasticity: shared memory allocated at launch from Q5 on) solve to the CPU
/// `full` level's solution: elasticity trunk p = 3, 5 and full p = 4, Poisson trunk p = 6.
#[test]
fn gpu_matrix_free_levels_match_the_cpu() {
    use galerkin::physics::Diffusion;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let mesh = twisted(2, true);
    for (p, modes) in [(3, ModeSet::Trunk), (5, ModeSet::Trunk), (4, ModeSet::Full)] {
        let pr = problem(hier(mesh.clone(), p, modes));
        let want = pr.assemble(AssemblyLevel::Full).unwrap().solve(&cg(1e-12)).unwrap();
        for level in [AssemblyLevel::Partial, AssemblyLevel::None] {
            let got = pr.system(&gpu, level, Tuning::default()).unwrap().solve(&cg(1e-12)).unwrap();
            let d = rel_diff(&want.u, &got.u);
            assert!(d < 1e-9, "elasticity {modes:?} p = {p} {}: GPU solution differs from the CPU's by {d:e}", level.name());
        }
    }
    let space = Arc::new(FunctionSpace::hierarchical(mesh, 6, ModeSet::Trunk, 1).unwrap());
    let pr = LinearProblem::new(space, Diffusion::new(1.0))
        .source(galerkin::problem::scalar(|x| x[0] * x[1] + 1.0))
        .dirichlet(["xmin", "ymax"], galerkin::problem::scalar(|x| x[2] + x[0] * x[0]));
    let want = pr.assemble(AssemblyLevel::Full).unwrap().solve(&cg(1e-12)).unwrap();
    for level in [AssemblyLevel::Partial, AssemblyLevel::None] {
        let got = pr.system(&gpu, level, Tuning::default()).unwrap().solve(&cg(1e-12)).unwrap();
        let d = rel_diff(&want.u, &got.u);
        assert!(d < 1e-9, "Poisson trunk p = 6 {}: GPU solution differs from the CPU's by {d:e}", level.name());
    }
}
