//! Shared problem text for the hyperelastic tests: the cantilever beam (8 × 2 × 2 hexahedra,
//! clamped at x = 0, bent by a body force), whose load-stepping and Newton tables each test adds.
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
