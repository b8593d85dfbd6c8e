//! Polynomial building blocks for elements: monomial spaces `P_k` / `Q_k`, 1D Lagrange polynomials,
//! and a small dense inverse for Vandermonde matrices.

/// Exponents `[a, b, c]` of the monomials `x^a y^b z^c` spanning `P_k` (total degree `≤ k`, when
/// `total`) or `Q_k` (each exponent `≤ k`) in `dim` variables; unused variables get exponent 0.
pub(crate) fn exponents(dim: usize, k: usize, total: bool) -> Vec<[usize; 3]> {
    let mut out = Vec::new();
    let range = |d: usize| if d < dim { 0..=k } else { 0..=0 };
    for c in range(2) {
        for b in range(1) {
            for a in range(0) {
                if !total || a + b + c <= k {
                    out.push([a, b, c]);
                }
            }
        }
    }
    out
}

/// Value and gradient of `x^e` at `x`.
pub(crate) fn monomial(e: [usize; 3], x: [f64; 3]) -> (f64, [f64; 3]) {
    let pow = |i: usize| x[i].powi(e[i] as i32);
    let dpow = |i: usize| {
        if e[i] == 0 {
            0.0
        } else {
            e[i] as f64 * x[i].powi(e[i] as i32 - 1)
        }
    };
    let p = [pow(0), pow(1), pow(2)];
    let grad = [
        dpow(0) * p[1] * p[2],
        p[0] * dpow(1) * p[2],
        p[0] * p[1] * dpow(2),
    ];
    (p[0] * p[1] * p[2], grad)
}

/// Values and derivatives at `x` of the Lagrange polynomials on `nodes` (product form: exact at the
/// nodes themselves, no division by `x - x_m`).
pub(crate) fn lagrange_1d(nodes: &[f64], x: f64, values: &mut [f64], derivs: &mut [f64]) {
    for (i, &xi) in nodes.iter().enumerate() {
        let mut v = 1.0;
        let mut d = 0.0;
        for (_, &xm) in nodes.iter().enumerate().filter(|&(m, _)| m != i) {
            // Product rule on ∏ (x - x_m)/(x_i - x_m), accumulated left to right.
            let f = (x - xm) / (xi - xm);
            d = d * f + v / (xi - xm);
            v *= f;
        }
        values[i] = v;
        derivs[i] = d;
    }
}

/// Inverse of the row-major `n × n` matrix `a` by Gauss–Jordan elimination with partial pivoting;
/// `None` when a pivot vanishes relative to the matrix scale (singular to working precision).
pub(crate) fn invert(n: usize, a: &[f64]) -> Option<Vec<f64>> {
    let mut m = a.to_vec();
    let mut inv = vec![0.0; n * n];
    for i in 0..n {
        inv[i * n + i] = 1.0;
    }
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    for col in 0..n {
        let piv =
            (col..n).max_by(|&r, &s| m[r * n + col].abs().total_cmp(&m[s * n + col].abs()))?;
        if m[piv * n + col].abs() <= 1e-14 * scale {
            return None;
        }
        for j in 0..n {
            m.swap(col * n + j, piv * n + j);
            inv.swap(col * n + j, piv * n + j);
        }
        let p = m[col * n + col];
        for j in 0..n {
            m[col * n + j] /= p;
            inv[col * n + j] /= p;
        }
        for r in (0..n).filter(|&r| r != col) {
            let f = m[r * n + col];
            if f != 0.0 {
                for j in 0..n {
                    m[r * n + j] -= f * m[col * n + j];
                    inv[r * n + j] -= f * inv[col * n + j];
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_dimensions() {
        // dim P_k = C(k+d, d), dim Q_k = (k+1)^d
        assert_eq!(exponents(3, 3, true).len(), 20);
        assert_eq!(exponents(2, 2, true).len(), 6);
        assert_eq!(exponents(3, 3, false).len(), 64);
        assert_eq!(exponents(1, 3, true).len(), 4);
    }

    #[test]
    fn lagrange_1d_is_cardinal_and_differentiates_exactly() {
        let nodes = [0.0, 0.2, 0.7, 1.0];
        let (mut v, mut d) = ([0.0; 4], [0.0; 4]);
        for (j, &xj) in nodes.iter().enumerate() {
            lagrange_1d(&nodes, xj, &mut v, &mut d);
            for (i, &vi) in v.iter().enumerate() {
                assert_eq!(vi, if i == j { 1.0 } else { 0.0 });
            }
        }
        // Interpolating x³ reproduces it and its derivative 3x².
        let x = 0.37;
        lagrange_1d(&nodes, x, &mut v, &mut d);
        let f: f64 = nodes.iter().zip(&v).map(|(n, v)| n.powi(3) * v).sum();
        let df: f64 = nodes.iter().zip(&d).map(|(n, d)| n.powi(3) * d).sum();
        assert!((f - x.powi(3)).abs() < 1e-15 && (df - 3.0 * x * x).abs() < 1e-14);
    }

    #[test]
    fn invert_recovers_identity_and_rejects_singular() {
        let a = [4.0, 1.0, 2.0, 0.0, 0.0, 3.0, 1.0, 5.0, 1.0];
        let inv = invert(3, &a).expect("nonsingular");
        for i in 0..3 {
            for j in 0..3 {
                let p: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
                assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-15);
            }
        }
        assert!(invert(2, &[1.0, 2.0, 2.0, 4.0]).is_none());
    }
}
