//! Shared problem text for the hyperelastic tests: the cantilever beam (8 × 2 × 2 hexahedra,
//! clamped at x = 0, bent by a body force), whose load-stepping and Newton tables each test adds,
//! and the benchmark's cube with the fibre law.
#![allow(dead_code)]

pub mod plane;

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

/// K against central differences of the residual at `u`: the largest |K − FD| / max |K| over every
/// column, with max |K| and the residual at `u` (for a test to rule out a trivial system).
pub struct FdJacobian {
    pub error: f64,
    pub scale: f64,
    pub residual: Vec<f64>,
}

/// Assembles K and R at `u` and compares every column of K with central differences (h = 1e-6)
/// of the residual.
pub fn fd_jacobian(asm: &galerkin::hyperelastic::CpuHyper, u: &[f64]) -> FdJacobian {
    let nd = asm.el.space.ndofs();
    let mut k = asm.matrix();
    let mut r = vec![0.0; nd];
    asm.assemble(u, &mut r, Some(&mut k)).unwrap();
    fd_against(&k.to_dense(), u, r, |x, out| asm.assemble(x, out, None).unwrap())
}

/// The follower pressure's tangent at `u` (its entries added into `pattern`'s positions, load factor
/// `lf`) against central differences of its residual.
pub fn fd_pressure(p: &galerkin::hyperelastic::loads::FollowerPressure, pattern: &galerkin::linalg::CsrMatrix, u: &[f64], lf: f64) -> FdJacobian {
    let (mut r, mut kv) = (vec![0.0; u.len()], Vec::new());
    p.add(u, lf, &mut r, Some(&mut kv));
    let mut k = pattern.clone();
    k.values.iter_mut().for_each(|v| *v = 0.0);
    for (&pos, &v) in p.positions().iter().zip(&kv) {
        k.values[pos as usize] += v;
    }
    fd_against(&k.to_dense(), u, r, |x, out| {
        out.iter_mut().for_each(|v| *v = 0.0);
        p.add(x, lf, out, None)
    })
}

/// Every column of the dense `k` (n × n) against central differences (h = 1e-6) of `res` at `u`.
fn fd_against(k: &[f64], u: &[f64], residual: Vec<f64>, mut res: impl FnMut(&[f64], &mut [f64])) -> FdJacobian {
    let nd = u.len();
    let scale = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let h = 1e-6;
    let (mut rp, mut rm) = (vec![0.0; nd], vec![0.0; nd]);
    let mut worst: f64 = 0.0;
    for d in 0..nd {
        let (mut up, mut um) = (u.to_vec(), u.to_vec());
        up[d] += h;
        um[d] -= h;
        res(&up, &mut rp);
        res(&um, &mut rm);
        for row in 0..nd {
            let fd = (rp[row] - rm[row]) / (2.0 * h);
            worst = worst.max((fd - k[row * nd + d]).abs() / scale);
        }
    }
    FdJacobian { error: worst, scale, residual }
}

/// The root of `g` near `x` by Newton with a central-difference Jacobian (h = 1e-7) and Gaussian
/// elimination with partial pivoting, to |g| < 1e-15 or 50 steps: the analytic homogeneous states
/// the 2D tests compare with (a handful of unknowns, well conditioned).
pub fn fd_newton<const N: usize>(g: impl Fn([f64; N]) -> [f64; N], mut x: [f64; N]) -> [f64; N] {
    for _ in 0..50 {
        let r = g(x);
        if r.iter().all(|v| v.abs() < 1e-15) {
            break;
        }
        let h = 1e-7;
        let mut a = [[0.0; N]; N];
        for c in 0..N {
            let (mut xp, mut xm) = (x, x);
            xp[c] += h;
            xm[c] -= h;
            let (gp, gm) = (g(xp), g(xm));
            for (row, ar) in a.iter_mut().enumerate() {
                ar[c] = (gp[row] - gm[row]) / (2.0 * h);
            }
        }
        let mut b = r;
        for k in 0..N {
            let p = (k..N).max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs())).unwrap_or(k);
            a.swap(k, p);
            b.swap(k, p);
            for i in k + 1..N {
                let f = a[i][k] / a[k][k];
                for c in k..N {
                    a[i][c] -= f * a[k][c];
                }
                b[i] -= f * b[k];
            }
        }
        for k in (0..N).rev() {
            let s: f64 = (k + 1..N).map(|c| a[k][c] * b[c]).sum();
            b[k] = (b[k] - s) / a[k][k];
            x[k] -= b[k];
        }
    }
    x
}

/// A unit square in plane strain (compressible neo-Hookean, E = 3, ν = 0.3) squeezed by a follower
/// pressure `p` on x = 1, sliding on x = 0 and y = 0, free on y = 1: the exact solution is the
/// homogeneous stretch F = diag(λ₁, λ₂, 1) with P₁₁ = −p λ₂ (the force on the deformed edge) and
/// P₂₂ = 0, which every P1/P2/Q1/Q2 space reproduces.
pub fn pressed_square(cell: &str, degree: usize, p: f64, solver: &str) -> String {
    format!(
        r#"
[mesh]
generator = "rectangle"
n = [2, 3]
cell = "{cell}"
[space]
degree = {degree}
[physics]
kind = "hyperelasticity"
law = "neo-hookean"
E = 3.0
nu = 0.3
[[bc]]
type = "dirichlet"
boundary = "xmin"
value = [0, 0]
components = [0]
[[bc]]
type = "dirichlet"
boundary = "ymin"
value = [0, 0]
components = [1]
[[bc]]
type = "pressure"
boundary = "xmax"
value = {p}
[loads]
steps = 3
[newton]
rtol = 1e-11
atol = 1e-13
[solver]
method = "{solver}"
rtol = 1e-12
"#
    )
}
