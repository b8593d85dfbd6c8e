//! Block-tridiagonal matrices on the host: row n of blocks is `L_n x_{n−1} + D_n x_n + U_n x_{n+1}`
//! with b × b blocks (b = k + 1), each block row-major and the blocks of one kind stored one row
//! after another (`diag[n·b² + i·b + j]`). `L_0` and `U_{N−1}` are stored as zeros. The GPU keeps
//! the same matrix entry-major instead ([`super::cuda::DeviceBlockTridiag`]).
use super::dense::{self, with_block_size};
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use rayon::prelude::*;

/// Block rows per rayon task.
const ROWS_PER_TASK: usize = 4096;

#[derive(Clone, Debug, PartialEq)]
pub struct BlockTridiag {
    /// Block rows N.
    pub n: usize,
    /// Block size b.
    pub b: usize,
    pub lower: Vec<f64>,
    pub diag: Vec<f64>,
    pub upper: Vec<f64>,
}

impl BlockTridiag {
    /// An all-zero matrix, checking the byte count first.
    pub fn zeros(n: usize, b: usize) -> Result<BlockTridiag> {
        let len = n.checked_mul(b * b).filter(|l| l.checked_mul(24).is_some()).ok_or_else(|| {
            Error::invalid(format!("a block-tridiagonal matrix of {n} blocks of {b}×{b} overflows memory sizes"))
        })?;
        Ok(BlockTridiag { n, b, lower: vec![0.0; len], diag: vec![0.0; len], upper: vec![0.0; len] })
    }

    /// Scalar unknowns, N·b.
    pub fn size(&self) -> usize {
        self.n * self.b
    }

    /// Stored values, 3 N b² (the zero L_0, U_{N−1} included).
    pub fn stored(&self) -> usize {
        3 * self.n * self.b * self.b
    }

    /// Entry (row, col) of the scalar matrix.
    pub fn get(&self, row: usize, col: usize) -> f64 {
        let (b, bb) = (self.b, self.b * self.b);
        let (rn, i, cn, j) = (row / b, row % b, col / b, col % b);
        let at = |m: &[f64], n: usize| m[n * bb + i * b + j];
        match cn as isize - rn as isize {
            0 => at(&self.diag, rn),
            -1 => at(&self.lower, rn),
            1 => at(&self.upper, rn),
            _ => 0.0,
        }
    }

    /// `y = A x`, rayon over block rows.
    pub fn apply(&self, x: &[f64], y: &mut [f64]) -> Result<()> {
        if x.len() != self.size() || y.len() != self.size() {
            return Err(Error::dim("block-tridiagonal apply", self.size(), if x.len() != self.size() { x.len() } else { y.len() }));
        }
        with_block_size!(self.b, B => {
            self.apply_b::<B>(x, y);
            Ok(())
        })
    }

    fn apply_b<const B: usize>(&self, x: &[f64], y: &mut [f64]) {
        let n = self.n;
        let row = |r: usize, yr: &mut [f64]| {
            let bb = B * B;
            let mut acc = dense::matvec::<B>(&dense::load(&self.diag[r * bb..]), &x[r * B..]);
            if r > 0 {
                let l = dense::matvec::<B>(&dense::load(&self.lower[r * bb..]), &x[(r - 1) * B..]);
                acc.iter_mut().zip(l).for_each(|(a, v)| *a += v);
            }
            if r + 1 < n {
                let u = dense::matvec::<B>(&dense::load(&self.upper[r * bb..]), &x[(r + 1) * B..]);
                acc.iter_mut().zip(u).for_each(|(a, v)| *a += v);
            }
            yr.copy_from_slice(&acc);
        };
        y.par_chunks_mut(ROWS_PER_TASK * B).enumerate().for_each(|(t, chunk)| {
            for (k, yr) in chunk.chunks_mut(B).enumerate() {
                row(t * ROWS_PER_TASK + k, yr);
            }
        });
    }

    /// The same matrix in CSR (for faer's sparse LU and the generic tools), 3b² N − 2b² entries.
    pub fn to_csr(&self) -> Result<CsrMatrix> {
        let (n, b, bb) = (self.n, self.b, self.b * self.b);
        let size = self.size();
        let mut row_ptr = Vec::with_capacity(size + 1);
        let mut col_idx = Vec::with_capacity(self.stored());
        let mut values = Vec::with_capacity(self.stored());
        row_ptr.push(0);
        for r in 0..n {
            for i in 0..b {
                for (m, cn) in [(&self.lower, r.wrapping_sub(1)), (&self.diag, r), (&self.upper, r + 1)] {
                    if cn < n {
                        for j in 0..b {
                            col_idx.push(u32::try_from(cn * b + j).map_err(|_| Error::invalid("CSR column index exceeds u32"))?);
                            values.push(m[r * bb + i * b + j]);
                        }
                    }
                }
                row_ptr.push(col_idx.len());
            }
        }
        CsrMatrix::new(size, size, row_ptr, col_idx, values)
    }

    /// max |A − Aᵀ| / max |A|: zero (to round-off) for SIPG.
    pub fn asymmetry(&self) -> f64 {
        let (b, bb) = (self.b, self.b * self.b);
        let scale = self.diag.iter().chain(&self.lower).chain(&self.upper).fold(0.0f64, |m, v| m.max(v.abs()));
        let mut worst = 0.0f64;
        for r in 0..self.n {
            for i in 0..b {
                for j in 0..b {
                    worst = worst.max((self.diag[r * bb + i * b + j] - self.diag[r * bb + j * b + i]).abs());
                    if r + 1 < self.n {
                        // (U_r)_{ij} pairs with (L_{r+1})_{ji}.
                        worst = worst.max((self.upper[r * bb + i * b + j] - self.lower[(r + 1) * bb + j * b + i]).abs());
                    }
                }
            }
        }
        if scale > 0.0 {
            worst / scale
        } else {
            0.0
        }
    }

    /// The scalar diagonal (Jacobi preconditioning).
    pub fn diagonal(&self) -> Vec<f64> {
        let (b, bb) = (self.b, self.b * self.b);
        (0..self.size()).map(|k| self.diag[(k / b) * bb + (k % b) * (b + 1)]).collect()
    }
}

impl LinearOperator<Cpu> for BlockTridiag {
    fn nrows(&self) -> usize {
        self.size()
    }
    fn ncols(&self) -> usize {
        self.size()
    }
    fn apply(&self, _: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        BlockTridiag::apply(self, x, y)
    }
}

/// Element block Jacobi: `y_n = D_n⁻¹ x_n`, the inverses computed once (with pivoting; a singular
/// diagonal block is an error naming its element).
pub struct BlockJacobi {
    pub b: usize,
    pub inverses: Vec<f64>,
}

impl BlockJacobi {
    pub fn new(m: &BlockTridiag) -> Result<BlockJacobi> {
        let bb = m.b * m.b;
        let mut inverses = m.diag.clone();
        with_block_size!(m.b, B => inverses.par_chunks_mut(bb).enumerate().try_for_each(|(e, blk)| {
            let inv = dense::invert::<B>(&dense::load(blk)).map_err(|s| s.error("block Jacobi", &format!("element {e}")))?;
            dense::store(&inv, blk);
            Ok(())
        }))?;
        Ok(BlockJacobi { b: m.b, inverses })
    }
}

impl LinearOperator<Cpu> for BlockJacobi {
    fn nrows(&self) -> usize {
        self.inverses.len() / self.b
    }
    fn ncols(&self) -> usize {
        self.nrows()
    }
    fn apply(&self, _: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        if x.len() != self.nrows() || y.len() != self.nrows() {
            return Err(Error::dim("block Jacobi apply", self.nrows(), x.len().min(y.len())));
        }
        let bb = self.b * self.b;
        with_block_size!(self.b, B => {
            y.par_chunks_mut(B).zip(x.par_chunks(B)).zip(self.inverses.par_chunks(bb)).for_each(|((yr, xr), inv)| {
                yr.copy_from_slice(&dense::matvec::<B>(&dense::load(inv), xr));
            });
            Ok(())
        })
    }
}
