//! Shared problem text for the hyperelastic tests: the cantilever beam (8 × 2 × 2 hexahedra,
//! clamped at x = 0, bent by a body force), whose load-stepping and Newton tables each test adds,
//! and the benchmark's cube with the fibre law.
#![allow(dead_code)]

/// The beam's mesh, law, body force −`load` in z and clamped end, as a problem-file head.
pub fn beam_head(law: &str, load: f64) -> String {
    format!(
        r#"
[mesh]
generator = "box"
n = [8, 2, 2]
lower = [0.0, 0.0, 0.0]
upper = [4.0, 1.0, 1.0]
cell = "hexahedron"
[physics]
kind = "hyperelasticity"
law = "{law}"
lambda = 10.0
mu = 4.0
body_force = [0.0, 0.0, "-{load}"]
[[bc]]
type = "dirichlet"
boundary = "xmin"
value = [0, 0, 0]
"#
    )
}

/// The benchmark's cube (`hyperelastic::bench`): P_k tetrahedra, the fibre law, clamped at x = 0,
/// solved by CG with `precond`.
pub fn usyk_cube(n: usize, degree: usize, precond: &str) -> String {
    format!(
        r#"
[mesh]
generator = "box"
n = [{n}, {n}, {n}]
cell = "tetrahedron"
[space]
degree = {degree}
[physics]
kind = "hyperelasticity"
law = "usyk"
C = 0.876
bf = 18.48
bt = 3.58
bfs = 1.627
kappa = 50.0
fibre = ["1", "0.5 * z - 0.25", "0.2"]
body_force = [0.0, 0.0, -0.2]
[[bc]]
type = "dirichlet"
boundary = "xmin"
value = [0, 0, 0]
[loads]
steps = 1
[newton]
rtol = 1e-8
forcing = "eisenstat-walker"
[solver]
method = "cg"
preconditioner = "{precond}"
rtol = 1e-8
max_iter = 100000
"#
    )
}
