//! One-dimensional Gauss rules on `[0,1]`: Gauss–Legendre, and the Gauss–Jacobi rules with weight
//! `(1-t)^α` whose products give collapsed (Duffy) rules on simplices — the Jacobi weight absorbs
//! the collapse Jacobian, so those rules stay exact for every degree with positive weights.

/// `n`-point Gauss–Legendre rule on `[0,1]`: nodes ascending, weights summing to 1, exact for
/// polynomials of degree `2n - 1`. `n = 0` gives an empty rule.
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    gauss_jacobi(n, 0)
}

/// `n`-point Gauss–Jacobi rule on `[0,1]` for the weight `(1-t)^alpha`: `Σ w_i f(t_i) = ∫₀¹ (1-t)^α f(t) dt`
/// exactly for polynomials `f` of degree `2n - 1`. Nodes ascending, weights positive.
pub fn gauss_jacobi(n: usize, alpha: usize) -> (Vec<f64>, Vec<f64>) {
    let a = alpha as f64;
    let mut x: Vec<f64> = Vec::with_capacity(n);
    // Newton with deflation from Chebyshev guesses (Karniadakis & Sherwin, app. B): dividing out the
    // roots already found keeps every iteration from converging to a known root.
    for k in 0..n {
        let mut r = -((2 * k + 1) as f64 * std::f64::consts::PI / (2 * n) as f64).cos();
        if let Some(&prev) = x.last() {
            r = 0.5 * (r + prev);
        }
        for _ in 0..100 {
            let (p, dp) = jacobi(n, a, r);
            let deflation: f64 = x.iter().map(|&xj| 1.0 / (r - xj)).sum();
            let delta = p / (dp - p * deflation);
            r -= delta;
            if delta.abs() < 1e-16 {
                break;
            }
        }
        x.push(r);
    }
    // On [-1,1] with β = 0, w_i = 2^{α+1} / ((1 - x_i²) P_n'(x_i)²); the map t = (1+x)/2 scales the
    // weight (1-x)^α dx by 2^{-(α+1)}, cancelling the power of two exactly.
    let weights = x
        .iter()
        .map(|&xi| {
            let (_, dp) = jacobi(n, a, xi);
            1.0 / ((1.0 - xi * xi) * dp * dp)
        })
        .collect();
    let nodes = x.iter().map(|&xi| 0.5 * (1.0 + xi)).collect();
    (nodes, weights)
}

/// `n`-point Gauss–Lobatto–Legendre rule on `[0,1]` (`n ≥ 2`): both end points and the roots of
/// `P'_{n-1}`, ascending, weights summing to 1, exact for polynomials of degree `2n - 3`. The nodes of
/// high-order tensor-product Lagrange elements (well conditioned, unlike equispaced ones), and with
/// `n = p + 1` the collocated quadrature of CEED's BP5/BP6 (basis nodes = quadrature points).
/// `n < 2` gives the 1-point midpoint rule.
pub fn gauss_lobatto(n: usize) -> (Vec<f64>, Vec<f64>) {
    if n < 2 {
        return (vec![0.5], vec![1.0]);
    }
    let m = n - 1;
    // Newton on (1 - x²) P'_m(x) from the Chebyshev–Gauss–Lobatto points, with Legendre values by
    // the three-term recurrence (Karniadakis & Sherwin, app. B).
    let mut x: Vec<f64> = (0..n).map(|i| -(std::f64::consts::PI * i as f64 / m as f64).cos()).collect();
    for xi in x.iter_mut().take(m).skip(1) {
        for _ in 0..100 {
            let (p, dp) = legendre(m, *xi);
            // d/dx[(1-x²)P'_m] = -m(m+1) P_m, so the Newton step is (1-x²)P'_m / (m(m+1) P_m).
            let delta = (1.0 - *xi * *xi) * dp / (m as f64 * (m + 1) as f64 * p);
            *xi += delta;
            if delta.abs() < 1e-16 {
                break;
            }
        }
    }
    // Symmetrize: the rule is symmetric about 0 exactly.
    for i in 0..n / 2 {
        let s = 0.5 * (x[n - 1 - i] - x[i]);
        x[i] = -s;
        x[n - 1 - i] = s;
    }
    if n % 2 == 1 {
        x[n / 2] = 0.0;
    }
    // On [-1,1]: w_i = 2 / (m (m+1) P_m(x_i)²); halved on [0,1].
    let weights = x.iter().map(|&xi| 1.0 / (m as f64 * (m + 1) as f64 * legendre(m, xi).0.powi(2))).collect();
    (x.iter().map(|&xi| 0.5 * (1.0 + xi)).collect(), weights)
}

/// Legendre polynomial `P_n(x)` and its derivative.
fn legendre(n: usize, x: f64) -> (f64, f64) {
    jacobi(n, 0.0, x)
}

/// Jacobi polynomial `P_n^{(α,0)}(x)` and its derivative, by the three-term recurrence and its
/// derivative (avoids the `1/(1-x²)` of the closed derivative formula near the endpoints).
fn jacobi(n: usize, a: f64, x: f64) -> (f64, f64) {
    if n == 0 {
        return (1.0, 0.0);
    }
    let (mut p0, mut d0) = (1.0, 0.0);
    let (mut p1, mut d1) = (0.5 * ((a + 2.0) * x + a), 0.5 * (a + 2.0));
    for m in 2..=n {
        let m = m as f64;
        let s = 2.0 * m + a;
        let c1 = 2.0 * m * (m + a) * (s - 2.0);
        let c2 = (s - 1.0) * s * (s - 2.0);
        let c3 = (s - 1.0) * a * a;
        let c4 = 2.0 * (m + a - 1.0) * (m - 1.0) * s;
        let p2 = ((c2 * x + c3) * p1 - c4 * p0) / c1;
        let d2 = ((c2 * x + c3) * d1 + c2 * p1 - c4 * d0) / c1;
        (p0, d0, p1, d1) = (p1, d1, p2, d2);
    }
    (p1, d1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factorial(n: usize) -> f64 {
        (1..=n).map(|i| i as f64).product()
    }

    #[test]
    fn legendre_two_points_match_closed_form() {
        let (t, w) = gauss_legendre(2);
        let h = 0.5 / 3f64.sqrt();
        assert!((t[0] - (0.5 - h)).abs() < 1e-16 && (t[1] - (0.5 + h)).abs() < 1e-16);
        assert!((w[0] - 0.5).abs() < 1e-16 && (w[1] - 0.5).abs() < 1e-16);
    }

    #[test]
    fn legendre_symmetric_exact_to_2n_minus_1_and_not_beyond() {
        for n in 1..=60 {
            let (t, w) = gauss_legendre(n);
            assert_eq!(t.len(), n);
            for i in 0..n {
                assert!(
                    (t[i] + t[n - 1 - i] - 1.0).abs() < 1e-15,
                    "n={n} node {i} asymmetric"
                );
                assert!(
                    (w[i] - w[n - 1 - i]).abs() < 1e-14,
                    "n={n} weight {i} asymmetric"
                );
                assert!(w[i] > 0.0 && t[i] > 0.0 && t[i] < 1.0);
            }
            assert!(
                t.windows(2).all(|p| p[0] < p[1]),
                "n={n} nodes not ascending"
            );
            let integral = |m: i32| t.iter().zip(&w).map(|(x, w)| w * x.powi(m)).sum::<f64>();
            for m in 0..2 * n as i32 {
                let exact = 1.0 / (m + 1) as f64;
                assert!(
                    (integral(m) - exact).abs() < 1e-14 * n as f64,
                    "n={n} t^{m}"
                );
            }
            if n <= 6 {
                // Not exact beyond: the Gauss error for t^{2n} is (n!)⁴ / ((2n+1) ((2n)!)²).
                let m = 2 * n as i32;
                let error = 1.0 / (m + 1) as f64 - integral(m);
                let expected =
                    factorial(n).powi(4) / ((2 * n + 1) as f64 * factorial(2 * n).powi(2));
                assert!(
                    (error - expected).abs() < 1e-9 * expected,
                    "n={n}: error {error}"
                );
            }
        }
        assert!(gauss_legendre(0).0.is_empty());
    }

    #[test]
    fn lobatto_rules_have_end_points_and_integrate_to_2n_minus_3() {
        let (t, w) = gauss_lobatto(3);
        assert!((t[0]).abs() < 1e-16 && (t[1] - 0.5).abs() < 1e-16 && (t[2] - 1.0).abs() < 1e-16);
        assert!((w[0] - 1.0 / 6.0).abs() < 1e-15 && (w[1] - 2.0 / 3.0).abs() < 1e-15);
        for n in 2..=20 {
            let (t, w) = gauss_lobatto(n);
            assert!(t[0] == 0.0 && t[n - 1] == 1.0 && t.windows(2).all(|p| p[0] < p[1]), "n={n}");
            assert!(w.iter().all(|&w| w > 0.0));
            let integral = |m: i32| t.iter().zip(&w).map(|(x, w)| w * x.powi(m)).sum::<f64>();
            for m in 0..=(2 * n as i32 - 3) {
                assert!((integral(m) - 1.0 / (m + 1) as f64).abs() < 1e-14 * n as f64, "n={n} t^{m}");
            }
            // Not exact beyond 2n - 3 (the error of t^{2n-2} on [0,1] is visible while n is small).
            let m = 2 * n as i32 - 2;
            assert!(n > 6 || (integral(m) - 1.0 / (m + 1) as f64).abs() > 1e-10, "n={n} exact at t^{m}");
        }
    }

    #[test]
    fn jacobi_rules_integrate_weighted_monomials() {
        for alpha in 0..=3 {
            for n in 1..=25 {
                let (t, w) = gauss_jacobi(n, alpha);
                assert!(w.iter().all(|&w| w > 0.0));
                for m in 0..2 * n {
                    let got: f64 = t.iter().zip(&w).map(|(x, w)| w * x.powi(m as i32)).sum();
                    // ∫₀¹ (1-t)^α t^m dt = α! m! / (α + m + 1)!
                    let exact = factorial(alpha) * factorial(m) / factorial(alpha + m + 1);
                    assert!(
                        (got - exact).abs() < 1e-13 * exact.max(1e-3),
                        "α={alpha} n={n} m={m}"
                    );
                }
            }
        }
    }
}
