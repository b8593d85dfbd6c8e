//! Compressed sparse row matrices. Column indices are `u32` to cut the bytes an SpMV streams.
use crate::backend::{Cpu, LinearOperator};
use crate::{Error, Result};
use rayon::prelude::*;

/// A CSR matrix with sorted column indices in each row.
#[derive(Clone, Debug, PartialEq)]
pub struct CsrMatrix {
    pub nrows: usize,
    pub ncols: usize,
    pub row_ptr: Vec<usize>,
    pub col_idx: Vec<u32>,
    pub values: Vec<f64>,
}

impl CsrMatrix {
    /// Build from raw parts, checking sizes, bounds and sortedness.
    pub fn new(nrows: usize, ncols: usize, row_ptr: Vec<usize>, col_idx: Vec<u32>, values: Vec<f64>) -> Result<Self> {
        if row_ptr.len() != nrows + 1 {
            return Err(Error::dim("CSR row_ptr length", nrows + 1, row_ptr.len()));
        }
        if col_idx.len() != values.len() || row_ptr[nrows] != values.len() {
            return Err(Error::dim("CSR nonzeros", row_ptr[nrows], values.len()));
        }
        for r in 0..nrows {
            let row = &col_idx[row_ptr[r]..row_ptr[r + 1]];
            if row.windows(2).any(|w| w[0] >= w[1]) || row.iter().any(|&c| c as usize >= ncols) {
                return Err(Error::invalid(format!("CSR row {r} has unsorted, repeated or out-of-range columns")));
            }
        }
        Ok(CsrMatrix { nrows, ncols, row_ptr, col_idx, values })
    }

    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Position of entry (r, c) in `values`, if it is in the pattern.
    pub fn position(&self, r: usize, c: usize) -> Option<usize> {
        let s = self.row_ptr[r];
        let row = &self.col_idx[s..self.row_ptr[r + 1]];
        row.binary_search(&(c as u32)).ok().map(|k| s + k)
    }

    /// Entry (r, c), zero outside the pattern.
    pub fn get(&self, r: usize, c: usize) -> f64 {
        self.position(r, c).map_or(0.0, |k| self.values[k])
    }

    /// The main diagonal.
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.nrows).map(|r| self.get(r, r)).collect()
    }

    /// `y = A x`, rows in parallel.
    pub fn spmv(&self, x: &[f64], y: &mut [f64]) {
        y.par_iter_mut().with_min_len(4096).enumerate().for_each(|(r, yr)| {
            let (s, e) = (self.row_ptr[r], self.row_ptr[r + 1]);
            let mut acc = 0.0;
            for k in s..e {
                acc += self.values[k] * x[self.col_idx[k] as usize];
            }
            *yr = acc;
        });
    }

    /// Largest |A - Aᵀ| entry relative to the largest |A| entry (0 for a symmetric matrix).
    pub fn asymmetry(&self) -> f64 {
        let mut worst: f64 = 0.0;
        let mut big: f64 = 0.0;
        for r in 0..self.nrows {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                let c = self.col_idx[k] as usize;
                big = big.max(self.values[k].abs());
                worst = worst.max((self.values[k] - self.get(c, r)).abs());
            }
        }
        if big == 0.0 { 0.0 } else { worst / big }
    }
}

impl LinearOperator<Cpu> for CsrMatrix {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn apply(&self, _b: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        if x.len() != self.ncols || y.len() != self.nrows {
            return Err(Error::dim("CSR apply", self.ncols, x.len()));
        }
        self.spmv(x, y);
        Ok(())
    }
}
