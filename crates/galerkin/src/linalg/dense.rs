//! Small dense kernels on row-major `n×n` blocks (block Jacobi, per-node systems). Blocks are a few
//! rows at most, so straightforward Gauss–Jordan beats calling into a BLAS.

/// Inverts the row-major `n×n` matrix `a` in place by Gauss–Jordan elimination with partial
/// pivoting. Returns `None` (leaving `a` unspecified) when a pivot is zero or below
/// `n·ε·max|a|`, i.e. the block is singular to working precision, or when `a` is not finite.
pub fn invert_in_place(a: &mut [f64], n: usize) -> Option<()> {
    if a.len() != n * n {
        return None;
    }
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if !scale.is_finite() || scale == 0.0 {
        return None;
    }
    let tiny = n as f64 * f64::EPSILON * scale;
    let mut perm: Vec<usize> = (0..n).collect();
    for k in 0..n {
        let p = (k..n).max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))?;
        if a[p * n + k].abs() <= tiny {
            return None;
        }
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
            perm.swap(k, p);
        }
        // Gauss–Jordan step storing the inverse in place: column k becomes the inverse's column.
        let pivot = a[k * n + k];
        a[k * n + k] = 1.0;
        for j in 0..n {
            a[k * n + j] /= pivot;
        }
        for i in (0..n).filter(|&i| i != k) {
            let f = a[i * n + k];
            if f != 0.0 {
                a[i * n + k] = 0.0;
                for j in 0..n {
                    a[i * n + j] -= f * a[k * n + j];
                }
            }
        }
    }
    unpermute_columns(a, n, &perm);
    Some(())
}

/// What was inverted is `B = P A` (row `k` of `B` is row `perm[k]` of `A`); `A⁻¹ = B⁻¹ P`, i.e.
/// column `k` of `B⁻¹` is column `perm[k]` of `A⁻¹`.
fn unpermute_columns(a: &mut [f64], n: usize, perm: &[usize]) {
    let mut row = vec![0.0; n];
    for i in 0..n {
        row.copy_from_slice(&a[i * n..(i + 1) * n]);
        for (k, &p) in perm.iter().enumerate() {
            a[i * n + p] = row[k];
        }
    }
}

/// `y = A x` for a row-major `n×n` block.
pub fn matvec(a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
    for (i, yi) in y.iter_mut().enumerate().take(n) {
        *yi = a[i * n..(i + 1) * n]
            .iter()
            .zip(x)
            .map(|(aij, xj)| aij * xj)
            .sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_times_matrix_is_identity_with_pivoting() {
        // Zero leading entry forces a row swap.
        let a = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 4.0];
        let mut inv = a;
        invert_in_place(&mut inv, 3).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let s: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
                assert!(
                    (s - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14,
                    "({i},{j}) = {s}"
                );
            }
        }
        let mut y = [0.0; 3];
        matvec(&inv, 3, &[3.0, 2.0, 7.0], &mut y);
        // A·[1,1,1] = [3,2,7]
        assert!(y.iter().all(|v| (v - 1.0).abs() < 1e-14), "{y:?}");
    }

    #[test]
    fn singular_block_is_rejected() {
        let mut a = [1.0, 2.0, 2.0, 4.0];
        assert!(invert_in_place(&mut a, 2).is_none());
        let mut z = [0.0; 4];
        assert!(invert_in_place(&mut z, 2).is_none());
    }
}
