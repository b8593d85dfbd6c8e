//! The seed's benchmark: `u(x) = x·sin(15x)·cos(24x)` on [0, 1] with `a = sin x`, `b = x`,
//! `c = −x`, `u(0) = 0` and the Robin condition `a(1)u′(1) + βu(1) = γ` with `β = 0`; `f` and `γ`
//! are derived from `u` (closed forms below). Used by the tests, `galerkin bench --iga` and
//! `examples/iga-seed-benchmark.toml` (which derives the same data symbolically from the exact
//! solution).
use super::adr1d::{Adr1d, EndCondition};
use super::field::Field;

/// `u(x) = x sin(15x) cos(24x)`.
pub fn u(x: f64) -> f64 {
    x * (15.0 * x).sin() * (24.0 * x).cos()
}

/// `u′(x)`.
pub fn du(x: f64) -> f64 {
    let (s, c, s2, c2) = ((15.0 * x).sin(), (15.0 * x).cos(), (24.0 * x).sin(), (24.0 * x).cos());
    s * c2 + 15.0 * x * c * c2 - 24.0 * x * s * s2
}

/// `u″(x)`.
pub fn d2u(x: f64) -> f64 {
    let (s, c, s2, c2) = ((15.0 * x).sin(), (15.0 * x).cos(), (24.0 * x).sin(), (24.0 * x).cos());
    30.0 * c * c2 - 48.0 * s * s2 - x * (801.0 * s * c2 + 720.0 * c * s2)
}

/// `f = −(a u′)′ + b u′ + c u = −(cos x · u′ + sin x · u″) + x u′ − x u`.
pub fn f(x: f64) -> f64 {
    -(x.cos() * du(x) + x.sin() * d2u(x)) + x * du(x) - x * u(x)
}

/// The seed's problem on [0, 1] with `β = 0`, `γ = a(1) u′(1)`.
pub fn problem() -> Adr1d {
    Adr1d {
        a: Field::new("physics.a", |p| p[0].sin()),
        b: Field::new("physics.b", |p| p[0]),
        c: Field::new("physics.c", |p| -p[0]),
        f: Field::new("physics.f", |p| f(p[0])),
        left: EndCondition::Dirichlet(u(0.0)),
        right: EndCondition::Robin { beta: 0.0, gamma: 1f64.sin() * du(1.0) },
    }
}
