//! Small dense blocks of the block-tridiagonal solvers, as `[[f64; B]; B]` with `B = k + 1 ≤ 7` a
//! compile-time size, so the loops unroll and the blocks stay in registers. Inversion is
//! Gauss–Jordan with partial pivoting: NIPG and IIPG blocks are not symmetric, and a Schur
//! complement of a badly penalized SIPG matrix need not be definite either.
use crate::Error;

/// A `B × B` block, row-major.
pub type Blk<const B: usize> = [[f64; B]; B];

/// Relative pivot size below which a block counts as singular: `|pivot| ≤ PIVOT_TOL · B · max|a_ij|`.
pub const PIVOT_TOL: f64 = 64.0 * f64::EPSILON;

/// Runs `$body` with `$B` bound to the block size `$b` as a constant (2 ..= 7, i.e. degrees 1..=6).
macro_rules! with_block_size {
    ($b:expr, $B:ident => $body:expr) => {
        match $b {
            2 => { const $B: usize = 2; $body }
            3 => { const $B: usize = 3; $body }
            4 => { const $B: usize = 4; $body }
            5 => { const $B: usize = 5; $body }
            6 => { const $B: usize = 6; $body }
            7 => { const $B: usize = 7; $body }
            other => Err($crate::Error::invalid(format!(
                "DG block size {other} is not supported (degrees 1 to 6 give blocks of 2 to 7)"
            ))),
        }
    };
}
pub(crate) use with_block_size;

/// The block stored row-major at the start of `s`.
#[inline(always)]
pub fn load<const B: usize>(s: &[f64]) -> Blk<B> {
    let mut a = [[0.0; B]; B];
    for (r, row) in a.iter_mut().enumerate() {
        row.copy_from_slice(&s[r * B..(r + 1) * B]);
    }
    a
}

/// Writes `a` row-major to the start of `s`.
#[inline(always)]
pub fn store<const B: usize>(a: &Blk<B>, s: &mut [f64]) {
    for (r, row) in a.iter().enumerate() {
        s[r * B..(r + 1) * B].copy_from_slice(row);
    }
}

/// `a · b`
#[inline(always)]
pub fn mul<const B: usize>(a: &Blk<B>, b: &Blk<B>) -> Blk<B> {
    let mut c = [[0.0; B]; B];
    for i in 0..B {
        for k in 0..B {
            let aik = a[i][k];
            for j in 0..B {
                c[i][j] += aik * b[k][j];
            }
        }
    }
    c
}

/// `c -= a · b`
#[inline(always)]
pub fn sub_mul<const B: usize>(c: &mut Blk<B>, a: &Blk<B>, b: &Blk<B>) {
    let p = mul(a, b);
    for i in 0..B {
        for j in 0..B {
            c[i][j] -= p[i][j];
        }
    }
}

/// `-a`
#[inline(always)]
pub fn neg<const B: usize>(mut a: Blk<B>) -> Blk<B> {
    a.iter_mut().flatten().for_each(|v| *v = -*v);
    a
}

/// `y = a · x` for the `B` values at the start of `x`.
#[inline(always)]
pub fn matvec<const B: usize>(a: &Blk<B>, x: &[f64]) -> [f64; B] {
    let mut y = [0.0; B];
    for i in 0..B {
        let mut s = 0.0;
        for j in 0..B {
            s += a[i][j] * x[j];
        }
        y[i] = s;
    }
    y
}

/// `y -= a · x`
#[inline(always)]
pub fn sub_matvec<const B: usize>(y: &mut [f64; B], a: &Blk<B>, x: &[f64]) {
    let p = matvec(a, x);
    for i in 0..B {
        y[i] -= p[i];
    }
}

/// Why a block could not be inverted: the column whose best pivot was too small, that pivot and
/// the block's largest entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Singular {
    pub column: usize,
    pub pivot: f64,
    pub scale: f64,
}

impl Singular {
    /// The error a solver reports, naming which block failed (`what`, e.g. "element 17").
    pub fn error(&self, solver: &str, what: &str) -> Error {
        Error::Factorization(format!(
            "{solver}: the {what} diagonal block is singular (best pivot {:.3e} in column {} against \
             entries up to {:.3e}); check the penalty (SIPG needs σ large enough), the coefficients and \
             the boundary conditions (two Neumann ends need c > 0)",
            self.pivot, self.column, self.scale
        ))
    }
}

/// `a⁻¹` by Gauss–Jordan elimination with partial pivoting.
#[inline(always)]
pub fn invert<const B: usize>(a: &Blk<B>) -> std::result::Result<Blk<B>, Singular> {
    let mut m = *a;
    let mut inv = [[0.0; B]; B];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let scale = m.iter().flatten().fold(0.0f64, |s, v| s.max(v.abs()));
    let tol = PIVOT_TOL * B as f64 * scale;
    for k in 0..B {
        let mut p = k;
        for r in k + 1..B {
            if m[r][k].abs() > m[p][k].abs() {
                p = r;
            }
        }
        let pivot = m[p][k];
        // `!(x > tol)` also catches NaN.
        if !(pivot.abs() > tol) || !scale.is_finite() {
            return Err(Singular { column: k, pivot, scale });
        }
        m.swap(k, p);
        inv.swap(k, p);
        let d = 1.0 / pivot;
        for j in 0..B {
            m[k][j] *= d;
            inv[k][j] *= d;
        }
        for r in 0..B {
            if r != k {
                let f = m[r][k];
                for j in 0..B {
                    m[r][j] -= f * m[k][j];
                    inv[r][j] -= f * inv[k][j];
                }
            }
        }
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_a_nonsymmetric_block_needs_pivoting_and_is_exact() {
        // Zero leading entry: fails without row exchanges.
        let a: Blk<3> = [[0.0, 2.0, 1.0], [1.0, -1.0, 4.0], [3.0, 0.5, -2.0]];
        let inv = invert(&a).unwrap();
        let id = mul(&a, &inv);
        for i in 0..3 {
            for j in 0..3 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((id[i][j] - e).abs() < 1e-14, "{id:?}");
            }
        }
        let x = [1.0, -2.0, 0.5];
        let y = matvec(&a, &x);
        let back = matvec(&inv, &y);
        assert!(back.iter().zip(&x).all(|(p, q)| (p - q).abs() < 1e-14));
    }

    #[test]
    fn singular_and_nan_blocks_are_reported_not_inverted() {
        let a: Blk<2> = [[1.0, 2.0], [2.0, 4.0]];
        let s = invert(&a).unwrap_err();
        assert_eq!(s.column, 1);
        let msg = s.error("block-thomas", "element 7").to_string();
        assert!(msg.contains("element 7") && msg.contains("singular"), "{msg}");
        assert!(invert(&[[f64::NAN, 0.0], [0.0, 1.0]]).is_err());
        assert!(invert(&[[0.0; 2]; 2]).is_err());
    }

    #[test]
    fn dispatch_covers_degrees_one_to_six() {
        fn size<const B: usize>() -> crate::Result<usize> {
            Ok(B)
        }
        for b in 2..=7 {
            assert_eq!(with_block_size!(b, B => size::<B>()).unwrap(), b);
        }
        assert!(with_block_size!(8usize, B => size::<B>()).is_err());
    }
}
