//! Block Thomas: LU of a block-tridiagonal matrix without fill, in one sweep down the rows.
//!
//! Factor: S_0 = D_0, S_n = D_n − L_n C_{n−1} with C_n = S_n⁻¹ U_n; stored in place of the
//! matrix as (L_n, S_n⁻¹, C_n). Solve: y_n = S_n⁻¹ (f_n − L_n y_{n−1}), then
//! x_n = y_n − C_n x_{n+1} upwards. O(N b³) flops, 3 N b² stored values, strictly sequential in n;
//! right-hand sides are independent, so `solve_many` runs them on parallel threads.
use super::block_tridiag::BlockTridiag;
use super::dense::{self, with_block_size};
use crate::backend::Cpu;
use crate::solver::factorization::{check_rhs_len, Factorization};
use crate::Result;
use rayon::prelude::*;

pub struct BlockThomas {
    /// (L_n, S_n⁻¹, C_n) in the matrix's lower, diag and upper.
    f: BlockTridiag,
}

impl BlockThomas {
    /// Factors a copy of `m`.
    pub fn factor(m: &BlockTridiag) -> Result<BlockThomas> {
        BlockThomas::factor_owned(m.clone())
    }

    /// Factors `m` in its own storage (no copy). A singular S_n is an error naming element n.
    pub fn factor_owned(mut m: BlockTridiag) -> Result<BlockThomas> {
        with_block_size!(m.b, B => factor_b::<B>(&mut m))?;
        Ok(BlockThomas { f: m })
    }

    fn solve_column<const B: usize>(&self, f: &[f64], x: &mut [f64]) {
        let (n, bb, m) = (self.f.n, B * B, &self.f);
        // Forward: y_n = S_n⁻¹ (f_n − L_n y_{n−1}), y kept in x.
        let mut prev = [0.0; B];
        for r in 0..n {
            let mut t: [f64; B] = std::array::from_fn(|i| f[r * B + i]);
            if r > 0 {
                dense::sub_matvec(&mut t, &dense::load(&m.lower[r * bb..]), &prev);
            }
            prev = dense::matvec(&dense::load(&m.diag[r * bb..]), &t);
            x[r * B..(r + 1) * B].copy_from_slice(&prev);
        }
        // Backward: x_n = y_n − C_n x_{n+1}.
        for r in (0..n.saturating_sub(1)).rev() {
            let mut t: [f64; B] = std::array::from_fn(|i| x[r * B + i]);
            dense::sub_matvec(&mut t, &dense::load(&m.upper[r * bb..]), &prev);
            x[r * B..(r + 1) * B].copy_from_slice(&t);
            prev = t;
        }
    }
}

fn factor_b<const B: usize>(m: &mut BlockTridiag) -> Result<()> {
    let bb = B * B;
    let mut c_prev = [[0.0; B]; B];
    for r in 0..m.n {
        let mut s = dense::load::<B>(&m.diag[r * bb..]);
        if r > 0 {
            dense::sub_mul(&mut s, &dense::load(&m.lower[r * bb..]), &c_prev);
        }
        let inv = dense::invert(&s).map_err(|e| e.error("block Thomas", &format!("element {r} (Schur complement)")))?;
        c_prev = dense::mul(&inv, &dense::load(&m.upper[r * bb..]));
        dense::store(&inv, &mut m.diag[r * bb..]);
        dense::store(&c_prev, &mut m.upper[r * bb..]);
    }
    Ok(())
}

impl Factorization<Cpu> for BlockThomas {
    fn n(&self) -> usize {
        self.f.size()
    }
    fn name(&self) -> String {
        "block-thomas".into()
    }
    fn solve_many(&self, backend: &Cpu, nrhs: usize, b: &Vec<f64>, x: &mut Vec<f64>) -> Result<()> {
        let n = self.f.size();
        check_rhs_len(backend, "block Thomas solve", n, nrhs, b, x)?;
        if n == 0 {
            return Ok(());
        }
        with_block_size!(self.f.b, B => {
            x.par_chunks_mut(n).zip(b.par_chunks(n)).for_each(|(xc, bc)| self.solve_column::<B>(bc, xc));
            Ok(())
        })
    }
}
