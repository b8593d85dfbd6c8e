//! Compressed sparse row matrices. Column indices are `u32` to cut the bytes an SpMV streams.
//!
//! The fields are public for zero-copy access by assemblers and kernels; the invariants checked by
//! [`CsrMatrix::new`] (monotone `row_ptr`, sorted in-range columns) must be kept by anyone who
//! mutates them, because the methods here rely on them.
use crate::{Error, Result};
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use rayon::prelude::*;

/// Rows per parallel SpMV task: large enough to amortize scheduling, small enough to balance.
const SPMV_ROW_CHUNK: usize = 1024;
/// Below this many rows an SpMV runs serially.
const SPMV_PAR_MIN_ROWS: usize = 4 * SPMV_ROW_CHUNK;

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
    pub fn new(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<usize>,
        col_idx: Vec<u32>,
        values: Vec<f64>,
    ) -> Result<Self> {
        if row_ptr.len() != nrows + 1 {
            return Err(Error::dim("CSR row_ptr length", nrows + 1, row_ptr.len()));
        }
        if col_idx.len() != values.len() || row_ptr[nrows] != values.len() {
            return Err(Error::dim("CSR nonzeros", row_ptr[nrows], values.len()));
        }
        if row_ptr[0] != 0 {
            return Err(Error::invalid(format!(
                "CSR row_ptr[0] is {}, expected 0",
                row_ptr[0]
            )));
        }
        if ncols > u32::MAX as usize + 1 {
            return Err(Error::invalid(format!(
                "CSR with {ncols} columns exceeds u32 column indices"
            )));
        }
        if let Some(r) = (0..nrows).find(|&r| row_ptr[r] > row_ptr[r + 1]) {
            return Err(Error::invalid(format!("CSR row_ptr decreases at row {r}")));
        }
        for r in 0..nrows {
            let row = &col_idx[row_ptr[r]..row_ptr[r + 1]];
            if row.windows(2).any(|w| w[0] >= w[1]) || row.iter().any(|&c| c as usize >= ncols) {
                return Err(Error::invalid(format!(
                    "CSR row {r} has unsorted, repeated or out-of-range columns"
                )));
            }
        }
        Ok(CsrMatrix {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// Build from `(row, col, value)` triplets in any order; duplicates are summed (as in assembly).
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        triplets: &[(usize, usize, f64)],
    ) -> Result<Self> {
        if ncols > u32::MAX as usize + 1 {
            return Err(Error::invalid(format!(
                "CSR with {ncols} columns exceeds u32 column indices"
            )));
        }
        let mut count = vec![0usize; nrows + 1];
        for (k, &(r, c, _)) in triplets.iter().enumerate() {
            if r >= nrows || c >= ncols {
                return Err(Error::invalid(format!(
                    "triplet {k} at ({r}, {c}) lies outside the {nrows}x{ncols} matrix"
                )));
            }
            count[r + 1] += 1;
        }
        for r in 0..nrows {
            count[r + 1] += count[r];
        }
        // Bucket by row, then sort each row by column and merge duplicates.
        let mut next = count.clone();
        let mut entries = vec![(0u32, 0.0f64); triplets.len()];
        for &(r, c, v) in triplets {
            entries[next[r]] = (c as u32, v);
            next[r] += 1;
        }
        let mut row_ptr = Vec::with_capacity(nrows + 1);
        let mut col_idx = Vec::with_capacity(triplets.len());
        let mut values = Vec::with_capacity(triplets.len());
        row_ptr.push(0);
        for r in 0..nrows {
            let row = &mut entries[count[r]..count[r + 1]];
            row.sort_unstable_by_key(|e| e.0);
            let start = col_idx.len();
            for &(c, v) in row.iter() {
                if col_idx.len() > start && col_idx.last() == Some(&c) {
                    if let Some(last) = values.last_mut() {
                        *last += v;
                    }
                } else {
                    col_idx.push(c);
                    values.push(v);
                }
            }
            row_ptr.push(col_idx.len());
        }
        Ok(CsrMatrix {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        })
    }

    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Column indices and values of row `r`.
    pub fn row(&self, r: usize) -> (&[u32], &[f64]) {
        let (s, e) = (self.row_ptr[r], self.row_ptr[r + 1]);
        (&self.col_idx[s..e], &self.values[s..e])
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
        (0..self.nrows.min(self.ncols))
            .map(|r| self.get(r, r))
            .collect()
    }

    /// The `b × b` diagonal blocks of node-interleaved rows, row-major block after block.
    pub fn node_blocks(&self, b: usize) -> Vec<f64> {
        let mut blocks = vec![0.0; self.nrows * b];
        blocks.par_chunks_mut(b * b).enumerate().for_each(|(node, blk)| {
            for i in 0..b {
                let (cols, vals) = self.row(node * b + i);
                for (&c, &v) in cols.iter().zip(vals) {
                    if c as usize / b == node {
                        blk[i * b + c as usize % b] = v;
                    }
                }
            }
        });
        blocks
    }

    /// Symmetric elimination of the rows with `free_mask[r] == 0`: `rhs -= A·lift` on free rows
    /// (constrained columns zeroed), identity rows with `rhs = lift` on constrained ones.
    pub fn eliminate(&mut self, rhs: &mut [f64], free_mask: &[f64], lift: &[f64]) -> Result<()> {
        let n = self.nrows;
        for (what, len) in [("right-hand side", rhs.len()), ("free mask", free_mask.len()), ("lift", lift.len())] {
            if len != n {
                return Err(Error::dim(format!("elimination {what}"), n, len));
            }
        }
        let CsrMatrix { row_ptr, col_idx, values, .. } = self;
        let rows: Vec<(usize, usize)> = (0..n).map(|r| (row_ptr[r], row_ptr[r + 1])).collect();
        // Split the values into per-row slices so rows can be edited in parallel.
        let mut slices: Vec<&mut [f64]> = Vec::with_capacity(n);
        let mut rest: &mut [f64] = values;
        for &(s, e) in &rows {
            let (head, tail) = rest.split_at_mut(e - s);
            slices.push(head);
            rest = tail;
        }
        slices.par_iter_mut().zip(rhs.par_iter_mut()).enumerate().for_each(|(r, (vals, br))| {
            let cols = &col_idx[rows[r].0..rows[r].1];
            if free_mask[r] == 0.0 {
                for (v, &c) in vals.iter_mut().zip(cols) {
                    *v = if c as usize == r { 1.0 } else { 0.0 };
                }
                *br = lift[r];
            } else {
                for (v, &c) in vals.iter_mut().zip(cols) {
                    if free_mask[c as usize] == 0.0 {
                        *br -= *v * lift[c as usize];
                        *v = 0.0;
                    }
                }
            }
        });
        Ok(())
    }

    /// Position of every diagonal entry in `values`; errors naming the first row without one
    /// (factorizations and smoothers divide by the diagonal).
    pub fn diagonal_positions(&self) -> Result<Vec<usize>> {
        if self.nrows != self.ncols {
            return Err(Error::dim(
                "square matrix (columns)",
                self.nrows,
                self.ncols,
            ));
        }
        (0..self.nrows)
            .map(|r| {
                self.position(r, r).ok_or_else(|| {
                    Error::invalid(format!(
                        "row {r} has no diagonal entry in the sparsity pattern"
                    ))
                })
            })
            .collect()
    }

    /// `y = A x`, chunks of rows in parallel. Panics if the slice lengths do not match the matrix;
    /// the checked entry point is [`LinearOperator::apply`].
    pub fn spmv(&self, x: &[f64], y: &mut [f64]) {
        assert!(
            x.len() == self.ncols && y.len() == self.nrows,
            "CSR spmv size mismatch"
        );
        let rows = |first: usize, yc: &mut [f64]| {
            for (i, yr) in yc.iter_mut().enumerate() {
                let (cols, vals) = self.row(first + i);
                *yr = vals.iter().zip(cols).map(|(v, &c)| v * x[c as usize]).sum();
            }
        };
        if self.nrows < SPMV_PAR_MIN_ROWS {
            rows(0, y);
        } else {
            y.par_chunks_mut(SPMV_ROW_CHUNK)
                .enumerate()
                .for_each(|(k, yc)| rows(k * SPMV_ROW_CHUNK, yc));
        }
    }

    /// `Aᵀ` in CSR form (a counting sort by column, so rows come out sorted).
    pub fn transpose(&self) -> CsrMatrix {
        let mut row_ptr = vec![0usize; self.ncols + 1];
        for &c in &self.col_idx {
            row_ptr[c as usize + 1] += 1;
        }
        for c in 0..self.ncols {
            row_ptr[c + 1] += row_ptr[c];
        }
        let mut next = row_ptr.clone();
        let mut col_idx = vec![0u32; self.nnz()];
        let mut values = vec![0.0; self.nnz()];
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                let k = next[c as usize];
                col_idx[k] = r as u32;
                values[k] = v;
                next[c as usize] += 1;
            }
        }
        CsrMatrix {
            nrows: self.ncols,
            ncols: self.nrows,
            row_ptr,
            col_idx,
            values,
        }
    }

    /// Row-major dense copy (tests and tiny problems only).
    pub fn to_dense(&self) -> Vec<f64> {
        let mut d = vec![0.0; self.nrows * self.ncols];
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                d[r * self.ncols + c as usize] = v;
            }
        }
        d
    }

    /// The same matrix as a faer column-major sparse matrix (for faer's sparse factorizations).
    /// The CSC arrays of `A` are exactly the CSR arrays of `Aᵀ`.
    pub fn to_faer(&self) -> SparseColMat<usize, f64> {
        let t = self.transpose();
        let row_idx = t.col_idx.iter().map(|&r| r as usize).collect();
        let symbolic =
            SymbolicSparseColMat::new_checked(self.nrows, self.ncols, t.row_ptr, None, row_idx);
        SparseColMat::new(symbolic, t.values)
    }

    /// Largest |A - Aᵀ| entry relative to the largest |A| entry (0 for a symmetric matrix).
    pub fn asymmetry(&self) -> f64 {
        let mut worst: f64 = 0.0;
        let mut big: f64 = 0.0;
        for r in 0..self.nrows {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                let c = self.col_idx[k] as usize;
                big = big.max(self.values[k].abs());
                let mirror = if c < self.nrows { self.get(c, r) } else { 0.0 };
                worst = worst.max((self.values[k] - mirror).abs());
            }
        }
        if big == 0.0 {
            0.0
        } else {
            worst / big
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::solvers::Solve;

    fn sample() -> CsrMatrix {
        // [ 4 0 1 ]
        // [ 0 3 0 ]      given with a duplicate (0,0) split 3 + 1 and out-of-order entries
        // [ 2 0 5 ]
        // [ 0 7 0 ]
        let t = [
            (2, 2, 5.0),
            (0, 0, 3.0),
            (1, 1, 3.0),
            (0, 2, 1.0),
            (2, 0, 2.0),
            (0, 0, 1.0),
            (3, 1, 7.0),
        ];
        CsrMatrix::from_triplets(4, 3, &t).unwrap()
    }

    #[test]
    fn from_triplets_sorts_and_sums_duplicates() {
        let a = sample();
        assert_eq!(a.row_ptr, vec![0, 2, 3, 5, 6]);
        assert_eq!(a.col_idx, vec![0, 2, 1, 0, 2, 1]);
        assert_eq!(a.values, vec![4.0, 1.0, 3.0, 2.0, 5.0, 7.0]);
        assert_eq!(
            a.to_dense(),
            vec![4.0, 0.0, 1.0, 0.0, 3.0, 0.0, 2.0, 0.0, 5.0, 0.0, 7.0, 0.0]
        );
        // The result satisfies the checked constructor's invariants.
        assert!(
            CsrMatrix::new(4, 3, a.row_ptr.clone(), a.col_idx.clone(), a.values.clone()).is_ok()
        );
        let err = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 5, 1.0)]).unwrap_err();
        assert!(err.to_string().contains("triplet 1"), "{err}");
    }

    #[test]
    fn new_rejects_bad_row_ptr() {
        assert!(CsrMatrix::new(2, 2, vec![0, 2, 1], vec![0], vec![1.0]).is_err());
        assert!(CsrMatrix::new(1, 2, vec![1, 1], vec![0], vec![1.0]).is_err());
    }

    #[test]
    fn transpose_matches_dense_transpose() {
        let a = sample();
        let t = a.transpose();
        let (d, dt) = (a.to_dense(), t.to_dense());
        for r in 0..4 {
            for c in 0..3 {
                assert_eq!(d[r * 3 + c], dt[c * 4 + r]);
            }
        }
        assert_eq!(t.transpose(), a);
    }

    #[test]
    fn spmv_matches_dense_product_serial_and_parallel() {
        // A long banded matrix so the parallel path runs.
        let n = 3 * SPMV_PAR_MIN_ROWS + 5;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0 + i as f64 * 1e-3));
            if i + 7 < n {
                t.push((i, i + 7, -0.5));
                t.push((i + 7, i, 0.25));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.1).sin()).collect();
        let mut y = vec![0.0; n];
        a.spmv(&x, &mut y);
        for i in [0, 1, 6, 7, n / 2, n - 8, n - 1] {
            let mut e = (2.0 + i as f64 * 1e-3) * x[i];
            if i + 7 < n {
                e += -0.5 * x[i + 7];
            }
            if i >= 7 {
                e += 0.25 * x[i - 7];
            }
            assert!((y[i] - e).abs() < 1e-14, "row {i}");
        }
    }

    #[test]
    fn faer_conversion_preserves_entries() {
        let a = CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 0, 4.0),
                (0, 1, 1.0),
                (1, 0, 1.0),
                (1, 1, 3.0),
                (2, 2, 2.0),
            ],
        )
        .unwrap();
        let f = a.to_faer();
        let lu = f.sp_lu().unwrap();
        // Solve A x = A·[1,2,3] and recover [1,2,3].
        let mut rhs = faer::Mat::<f64>::from_fn(3, 1, |i, _| [6.0, 7.0, 6.0][i]);
        lu.solve_in_place(rhs.as_mut());
        for (i, e) in [1.0, 2.0, 3.0].iter().enumerate() {
            assert!((rhs[(i, 0)] - e).abs() < 1e-14);
        }
        assert_eq!(a.asymmetry(), 0.0);
    }
}
