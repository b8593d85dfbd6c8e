//! Dense work on one frontal matrix, on the CPU: partial elimination of its first `e` rows and
//! columns, and the forward/backward substitution of a block of right-hand sides. Small fronts use
//! plain loops (the same algorithm as the GPU kernels, `kernels/multifrontal.cu`); large ones use
//! faer's blocked LU, triangular solves and matrix products.
//!
//! A front `F` is `m × m`, column-major. Pivots are searched among the eliminated rows only (the
//! other rows are not fully assembled yet): `P F_EE = L U`, `U_ES = L⁻¹ P F_ES`,
//! `L_SE = F_SE U⁻¹`, and the Schur complement `F_SS − L_SE U_ES` replaces `F_SS` for the parent.
//! Right-hand sides are stored row by row (`r[i·nrhs + c]`), rows in front order.
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch, PartialPivLuParams};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve as tri;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};

/// Fronts with more rows than this use faer's blocked kernels.
pub const BLOCKED_MIN: usize = 96;

/// Eliminates the first `e` rows and columns of `f` in place. On success `pinv[i]` is the pivot
/// position of eliminated row `i`. `Err(k)`: the pivot of step `k` is zero or not finite.
pub fn eliminate(f: &mut [f64], m: usize, e: usize, pinv: &mut [u32], par: Par) -> Result<(), usize> {
    if m > BLOCKED_MIN && e > 0 {
        eliminate_blocked(f, m, e, pinv, par)
    } else {
        eliminate_unblocked(f, m, e, pinv)
    }
}

/// Right-looking elimination with row swaps among the first `e` rows.
pub fn eliminate_unblocked(f: &mut [f64], m: usize, e: usize, pinv: &mut [u32]) -> Result<(), usize> {
    let mut perm: Vec<u32> = (0..e as u32).collect();
    for k in 0..e {
        let col = &f[k * m..k * m + e];
        let mut piv = k;
        for i in k + 1..e {
            if col[i].abs() > col[piv].abs() {
                piv = i;
            }
        }
        let pv = f[piv + k * m];
        if pv == 0.0 || !pv.is_finite() {
            return Err(k);
        }
        if piv != k {
            for j in 0..m {
                f.swap(k + j * m, piv + j * m);
            }
            perm.swap(k, piv);
        }
        let inv = 1.0 / pv;
        for i in k + 1..m {
            f[i + k * m] *= inv;
        }
        for j in k + 1..m {
            let ukj = f[k + j * m];
            if ukj == 0.0 {
                continue;
            }
            let (head, tail) = f.split_at_mut(j * m);
            let lk = &head[k * m..(k + 1) * m];
            let cj = &mut tail[..m];
            for i in k + 1..m {
                cj[i] -= lk[i] * ukj;
            }
        }
    }
    for (pos, &row) in perm.iter().enumerate() {
        pinv[row as usize] = pos as u32;
    }
    Ok(())
}

fn front_mut(f: &mut [f64], m: usize) -> MatMut<'_, f64> {
    MatMut::from_column_major_slice_mut(f, m, m)
}

/// faer: LU of the `e × m` panel of eliminated rows (which also gives `U_ES`), then
/// `L_SE = F_SE U⁻¹` and the Schur update.
fn eliminate_blocked(f: &mut [f64], m: usize, e: usize, pinv: &mut [u32], par: Par) -> Result<(), usize> {
    let mut perm = vec![0usize; e];
    let mut perm_inv = vec![0usize; e];
    let params: faer::Spec<PartialPivLuParams, f64> = Default::default();
    let mut mem = faer::dyn_stack::MemBuffer::new(lu_in_place_scratch::<usize, f64>(e, m, par, params));
    let stack = faer::dyn_stack::MemStack::new(&mut mem);
    lu_in_place(front_mut(f, m).subrows_mut(0, e), &mut perm, &mut perm_inv, par, stack, params);
    if let Some(k) = (0..e).find(|&k| {
        let d = f[k + k * m];
        d == 0.0 || !d.is_finite()
    }) {
        return Err(k);
    }
    let (top, bottom) = front_mut(f, m).split_at_row_mut(e);
    let (u_ee, u_es) = top.split_at_col_mut(e);
    let (mut l_se, s_ss) = bottom.split_at_col_mut(e);
    // X U = F_SE  ⇔  Uᵀ Xᵀ = F_SEᵀ, with Uᵀ lower triangular.
    tri::solve_lower_triangular_in_place(u_ee.rb().transpose(), l_se.rb_mut().transpose_mut(), par);
    matmul(s_ss, Accum::Add, l_se.rb(), u_es.rb(), -1.0, par);
    for (i, &p) in perm_inv.iter().enumerate() {
        pinv[i] = p as u32;
    }
    Ok(())
}

/// `r_E ← L⁻¹ r_E`, `r_S ← r_S − L_SE r_E` (the eliminated rows of `r` already permuted).
pub fn forward(f: &[f64], m: usize, e: usize, r: &mut [f64], nrhs: usize, par: Par) {
    if m > BLOCKED_MIN && e > 0 {
        let a = MatRef::from_column_major_slice(f, m, m);
        let (mut re, rs) = MatMut::from_row_major_slice_mut(r, m, nrhs).split_at_row_mut(e);
        tri::solve_unit_lower_triangular_in_place(a.submatrix(0, 0, e, e), re.rb_mut(), par);
        matmul(rs, Accum::Add, a.submatrix(e, 0, m - e, e), re.rb(), -1.0, par);
        return;
    }
    for k in 0..e {
        let (head, tail) = r.split_at_mut((k + 1) * nrhs);
        let rk = &head[k * nrhs..];
        for i in k + 1..m {
            let l = f[i + k * m];
            if l != 0.0 {
                let ri = &mut tail[(i - k - 1) * nrhs..(i - k) * nrhs];
                ri.iter_mut().zip(rk).for_each(|(a, b)| *a -= l * b);
            }
        }
    }
}

/// `r_E ← U⁻¹ (r_E − U_ES r_S)`: `r` holds the forward result in its eliminated rows and the
/// solution at the Schur rows.
pub fn backward(f: &[f64], m: usize, e: usize, r: &mut [f64], nrhs: usize, par: Par) {
    if m > BLOCKED_MIN && e > 0 {
        let a = MatRef::from_column_major_slice(f, m, m);
        let (mut re, rs) = MatMut::from_row_major_slice_mut(r, m, nrhs).split_at_row_mut(e);
        matmul(re.rb_mut(), Accum::Add, a.submatrix(0, e, e, m - e), rs.rb(), -1.0, par);
        tri::solve_upper_triangular_in_place(a.submatrix(0, 0, e, e), re, par);
        return;
    }
    let (re, rs) = r.split_at_mut(e * nrhs);
    for l in e..m {
        let xl = &rs[(l - e) * nrhs..(l - e + 1) * nrhs];
        for k in 0..e {
            let u = f[k + l * m];
            if u != 0.0 {
                re[k * nrhs..(k + 1) * nrhs].iter_mut().zip(xl).for_each(|(a, b)| *a -= u * b);
            }
        }
    }
    for k in (0..e).rev() {
        let (head, tail) = re.split_at_mut(k * nrhs);
        let xk = &mut tail[..nrhs];
        let inv = 1.0 / f[k + k * m];
        xk.iter_mut().for_each(|v| *v *= inv);
        for i in 0..k {
            let u = f[i + k * m];
            if u != 0.0 {
                head[i * nrhs..(i + 1) * nrhs].iter_mut().zip(xk.iter()).for_each(|(a, b)| *a -= u * b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic non-symmetric m × m matrix whose leading e × e block needs pivoting.
    fn front(m: usize) -> Vec<f64> {
        (0..m * m)
            .map(|idx| {
                let (i, j) = (idx % m, idx / m);
                // A hash in [-0.5, 0.5): full rank with probability one; small diagonal entries
                // on every third row force row exchanges.
                let w = ((i as f64 * 12.9898 + j as f64 * 78.233).sin() * 43758.5453).fract() * 0.5;
                if i == j { w * 1e-3 + if i % 3 == 0 { 0.0 } else { 2.0 } } else { w }
            })
            .collect()
    }

    fn check(m: usize, e: usize, nrhs: usize) {
        let a = front(m);
        let mut blocked = a.clone();
        let mut plain = a.clone();
        let (mut p1, mut p2) = (vec![0u32; e], vec![0u32; e]);
        eliminate_unblocked(&mut plain, m, e, &mut p1).unwrap();
        eliminate(&mut blocked, m, e, &mut p2, Par::Seq).unwrap();
        // The Schur complements agree (pivot choices may differ on ties, the complement does not).
        for j in e..m {
            for i in e..m {
                let (x, y) = (plain[i + j * m], blocked[i + j * m]);
                assert!((x - y).abs() < 1e-11 * (1.0 + x.abs()), "m={m} e={e} ({i},{j}): {x} vs {y}");
            }
        }
        // Solve the whole front (e = m-eliminated part, then the Schur part by plain elimination)
        // and check A x = b.
        let b: Vec<f64> = (0..m * nrhs).map(|i| ((i * 31) % 11) as f64 - 5.0).collect();
        for (f, pinv) in [(&plain, &p1), (&blocked, &p2)] {
            let mut fs = f.clone();
            let mut ps = vec![0u32; m - e];
            // Eliminate the Schur block in place as its own front (rows e.., columns e..).
            let s = m - e;
            let mut schur: Vec<f64> = (0..s * s).map(|idx| f[(e + idx % s) + (e + idx / s) * m]).collect();
            eliminate_unblocked(&mut schur, s, s, &mut ps).unwrap();
            for idx in 0..s * s {
                fs[(e + idx % s) + (e + idx / s) * m] = schur[idx];
            }
            let mut r = vec![0.0; m * nrhs];
            for i in 0..m {
                let row = if i < e { pinv[i] as usize } else { i };
                r[row * nrhs..(row + 1) * nrhs].copy_from_slice(&b[i * nrhs..(i + 1) * nrhs]);
            }
            forward(&fs, m, e, &mut r, nrhs, Par::Seq);
            let reduced = r[e * nrhs..].to_vec();
            for i in 0..s {
                let row = e + ps[i] as usize;
                r[row * nrhs..(row + 1) * nrhs].copy_from_slice(&reduced[i * nrhs..(i + 1) * nrhs]);
            }
            forward(&schur, s, s, &mut r[e * nrhs..], nrhs, Par::Seq);
            backward(&schur, s, s, &mut r[e * nrhs..], nrhs, Par::Seq);
            backward(&fs, m, e, &mut r, nrhs, Par::Seq);
            for c in 0..nrhs {
                for i in 0..m {
                    let ax: f64 = (0..m).map(|j| a[i + j * m] * r[j * nrhs + c]).sum();
                    assert!((ax - b[i * nrhs + c]).abs() < 1e-9, "m={m} e={e} row {i} rhs {c}: {ax} vs {}", b[i * nrhs + c]);
                }
            }
        }
    }

    #[test]
    fn unblocked_and_blocked_elimination_solve_the_front() {
        check(7, 3, 1);
        check(9, 9, 3);
        check(150, 40, 5);
        check(130, 130, 2);
    }

    #[test]
    fn zero_pivot_is_reported_with_its_step() {
        let mut f = vec![1.0, 2.0, 0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 1.0];
        let mut p = vec![0u32; 2];
        assert_eq!(eliminate_unblocked(&mut f, 3, 2, &mut p), Err(1));
    }
}
