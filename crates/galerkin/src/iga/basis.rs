//! Cox–de Boor evaluation of the `p + 1` B-splines non-zero on a knot span, and of their
//! derivatives (Piegl & Tiller, *The NURBS Book*, algorithms A2.2 and A2.3). Fixed-size work arrays
//! (degree at most [`MAX_DEGREE`]) keep evaluation free of allocation: it runs at every quadrature
//! point of every element.
use super::knots::{KnotVector, MAX_DEGREE};

const W: usize = MAX_DEGREE + 1;

/// Values and derivatives of the `p + 1` B-splines non-zero on one span at one point:
/// `ders[k][i]` is the k-th derivative of `N_{span − p + i}`.
#[derive(Clone, Copy, Debug)]
pub struct BasisValues {
    pub span: usize,
    pub ders: [[f64; W]; 3],
}

/// Values `N_{span−p..=span}(x)` (A2.2: the triangular Cox–de Boor table, one row at a time).
pub fn basis_funs(kv: &KnotVector, span: usize, x: f64) -> [f64; W] {
    let p = kv.degree();
    let t = kv.knots();
    let mut n = [0.0; W];
    let (mut left, mut right) = ([0.0; W], [0.0; W]);
    n[0] = 1.0;
    for j in 1..=p {
        left[j] = x - t[span + 1 - j];
        right[j] = t[span + j] - x;
        let mut saved = 0.0;
        for r in 0..j {
            let temp = n[r] / (right[r + 1] + left[j - r]);
            n[r] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        n[j] = saved;
    }
    n
}

/// Values and derivatives up to order `nders ≤ 2` (A2.3), at `x` in span `span`.
pub fn ders_basis_funs(kv: &KnotVector, span: usize, x: f64, nders: usize) -> BasisValues {
    let p = kv.degree();
    let t = kv.knots();
    let nd = nders.min(2);
    // ndu[j][r]: basis functions (upper triangle incl. diagonal) and knot differences (lower).
    let mut ndu = [[0.0; W]; W];
    let (mut left, mut right) = ([0.0; W], [0.0; W]);
    ndu[0][0] = 1.0;
    for j in 1..=p {
        left[j] = x - t[span + 1 - j];
        right[j] = t[span + j] - x;
        let mut saved = 0.0;
        for r in 0..j {
            ndu[j][r] = right[r + 1] + left[j - r];
            let temp = ndu[r][j - 1] / ndu[j][r];
            ndu[r][j] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        ndu[j][j] = saved;
    }
    let mut ders = [[0.0; W]; 3];
    for j in 0..=p {
        ders[0][j] = ndu[j][p];
    }
    let mut a = [[0.0; W]; 2];
    for r in 0..=p {
        let (mut s1, mut s2) = (0usize, 1usize);
        a[0][0] = 1.0;
        for k in 1..=nd.min(p) {
            let mut d = 0.0;
            let rk = r as isize - k as isize;
            let pk = p - k;
            if r >= k {
                a[s2][0] = a[s1][0] / ndu[pk + 1][rk as usize];
                d = a[s2][0] * ndu[rk as usize][pk];
            }
            let j1 = if rk >= -1 { 1 } else { (-rk) as usize };
            let j2 = if r as isize - 1 <= pk as isize { k - 1 } else { p - r };
            for j in j1..=j2 {
                let idx = (rk + j as isize) as usize;
                a[s2][j] = (a[s1][j] - a[s1][j - 1]) / ndu[pk + 1][idx];
                d += a[s2][j] * ndu[idx][pk];
            }
            if r <= pk {
                a[s2][k] = -a[s1][k - 1] / ndu[pk + 1][r];
                d += a[s2][k] * ndu[r][pk];
            }
            ders[k][r] = d;
            std::mem::swap(&mut s1, &mut s2);
        }
    }
    let mut factor = p as f64;
    for k in 1..=nd.min(p) {
        for j in 0..=p {
            ders[k][j] *= factor;
        }
        factor *= (p - k) as f64;
    }
    BasisValues { span, ders }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knot_vectors() -> Vec<KnotVector> {
        let mut v = Vec::new();
        for p in 1..=MAX_DEGREE {
            v.push(KnotVector::uniform(p, 7, p - 1, -0.5, 1.5).unwrap());
            // Non-uniform breakpoints, C0 (every interior knot repeated p times).
            v.push(KnotVector::from_breakpoints(p, &[0.0, 0.1, 0.15, 0.6, 0.61, 1.0], 0).unwrap());
        }
        // Mixed multiplicities.
        v.push(KnotVector::new(3, vec![0.0, 0.0, 0.0, 0.0, 0.2, 0.5, 0.5, 0.7, 0.7, 0.7, 1.0, 1.0, 1.0, 1.0]).unwrap());
        v
    }

    fn points(kv: &KnotVector) -> Vec<f64> {
        let (a, b) = kv.domain();
        (0..=97).map(|i| a + (b - a) * (i as f64 / 97.0)).collect()
    }

    #[test]
    fn partition_of_unity_and_nonnegativity() {
        for kv in knot_vectors() {
            let p = kv.degree();
            for x in points(&kv) {
                let span = kv.find_span(x);
                let n = basis_funs(&kv, span, x);
                let sum: f64 = n[..=p].iter().sum();
                assert!((sum - 1.0).abs() < 1e-13, "p={p} x={x}: sum {sum}");
                assert!(n[..=p].iter().all(|&v| v >= -1e-15), "p={p} x={x}: {n:?}");
                let d = ders_basis_funs(&kv, span, x, 2);
                for i in 0..=p {
                    assert!((d.ders[0][i] - n[i]).abs() < 1e-14);
                }
                // Derivatives of a partition of unity sum to zero.
                let s1: f64 = d.ders[1][..=p].iter().sum();
                let s2: f64 = d.ders[2][..=p].iter().sum();
                let scale = d.ders[1][..=p].iter().map(|v| v.abs()).sum::<f64>().max(1.0);
                assert!(s1.abs() < 1e-11 * scale, "p={p} x={x}: Σ N' = {s1}");
                let scale2 = d.ders[2][..=p].iter().map(|v| v.abs()).sum::<f64>().max(1.0);
                assert!(s2.abs() < 1e-10 * scale2, "p={p} x={x}: Σ N'' = {s2}");
            }
        }
    }

    /// The value of global basis function `g` at `x` (0 outside its span's functions).
    fn global(kv: &KnotVector, g: usize, x: f64, k: usize) -> f64 {
        let span = kv.find_span(x);
        let p = kv.degree();
        if g + p < span || g > span {
            return 0.0;
        }
        ders_basis_funs(kv, span, x, 2).ders[k][g + p - span]
    }

    #[test]
    fn derivatives_match_central_differences_inside_spans() {
        for kv in knot_vectors() {
            let p = kv.degree();
            let bp = kv.breakpoints();
            for x in points(&kv) {
                // A step relative to the element width keeps the truncation error of the central
                // difference (h/w)² times the derivative's scale on tiny elements too.
                let span = kv.find_span(x);
                let w = kv.knots()[span + 1] - kv.knots()[span];
                let h = 1e-5 * w;
                // Stay away from breakpoints, where derivatives may jump (C0 knots).
                if bp.iter().any(|&t| (x - t).abs() < 10.0 * h) {
                    continue;
                }
                let d = ders_basis_funs(&kv, span, x, 2);
                let scale = |k: usize| d.ders[k][..=p].iter().map(|v| v.abs()).fold(1.0, f64::max);
                for g in 0..kv.num_basis() {
                    let fd1 = (global(&kv, g, x + h, 0) - global(&kv, g, x - h, 0)) / (2.0 * h);
                    let d1 = global(&kv, g, x, 1);
                    assert!((fd1 - d1).abs() < 1e-7 * scale(1), "p={p} g={g} x={x}: {d1} vs {fd1}");
                    if p >= 2 {
                        let fd2 = (global(&kv, g, x + h, 1) - global(&kv, g, x - h, 1)) / (2.0 * h);
                        let d2 = global(&kv, g, x, 2);
                        assert!((fd2 - d2).abs() < 1e-7 * scale(2), "p={p} g={g} x={x}: {d2} vs {fd2}");
                    }
                }
            }
        }
    }

    #[test]
    fn continuity_at_knots_follows_multiplicity() {
        // C1 at 0.2 (single knot, p = 2): values and first derivatives agree from both sides;
        // C0 at 0.5 (double knot): values agree, derivatives jump for some function.
        let kv = KnotVector::new(2, vec![0.0, 0.0, 0.0, 0.2, 0.5, 0.5, 1.0, 1.0, 1.0]).unwrap();
        let e = 1e-9;
        for g in 0..kv.num_basis() {
            for t in [0.2, 0.5] {
                let (l, r) = (global(&kv, g, t - e, 0), global(&kv, g, t + e, 0));
                assert!((l - r).abs() < 1e-7, "g={g} t={t}");
            }
            let (l, r) = (global(&kv, g, 0.2 - e, 1), global(&kv, g, 0.2 + e, 1));
            assert!((l - r).abs() < 1e-6, "g={g}: derivative jumps at a simple knot");
        }
        let jumps = (0..kv.num_basis()).any(|g| (global(&kv, g, 0.5 - e, 1) - global(&kv, g, 0.5 + e, 1)).abs() > 1.0);
        assert!(jumps, "a double knot of a quadratic must allow a derivative jump");
        // Interpolation at the ends of an open knot vector.
        assert_eq!(global(&kv, 0, 0.0, 0), 1.0);
        assert_eq!(global(&kv, kv.num_basis() - 1, 1.0, 0), 1.0);
    }

    #[test]
    fn linear_splines_are_hat_functions() {
        let kv = KnotVector::uniform(1, 4, 0, 0.0, 1.0).unwrap();
        for x in points(&kv) {
            for g in 0..kv.num_basis() {
                let hat = (1.0 - (4.0 * x - g as f64).abs()).max(0.0);
                assert!((global(&kv, g, x, 0) - hat).abs() < 1e-14, "g={g} x={x}");
            }
        }
    }
}
