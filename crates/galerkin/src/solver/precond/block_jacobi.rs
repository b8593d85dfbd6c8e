//! Point-block Jacobi (CPU): inverts the `b×b` diagonal block of every node once, then applies the
//! inverses independently. For vector problems (elasticity, Stokes velocity) with node-interleaved
//! dofs this captures the coupling between components that scalar Jacobi throws away.
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::{dense, CsrMatrix};
use crate::{Error, Result};
use rayon::prelude::*;

/// Nodes per parallel task.
const NODE_CHUNK: usize = 2048;

/// `y = blockdiag(A)⁻¹ x` with dofs numbered node by node (`node·b + component`).
pub struct BlockJacobi {
    block_size: usize,
    /// Row-major `b×b` inverse per node.
    inverses: Vec<f64>,
}

impl BlockJacobi {
    /// Extracts and inverts the diagonal blocks of a square matrix whose size is a multiple of
    /// `block_size`.
    pub fn from_csr(a: &CsrMatrix, block_size: usize) -> Result<Self> {
        if a.nrows != a.ncols {
            return Err(Error::dim(
                "block Jacobi: square matrix (columns)",
                a.nrows,
                a.ncols,
            ));
        }
        check_block_size(block_size, a.nrows, "matrix rows")?;
        let bs = block_size;
        let mut blocks = vec![0.0; a.nrows * bs];
        blocks
            .par_chunks_mut(bs * bs)
            .enumerate()
            .for_each(|(node, blk)| {
                for i in 0..bs {
                    let (cols, vals) = a.row(node * bs + i);
                    for (&c, &v) in cols.iter().zip(vals) {
                        let c = c as usize;
                        if c / bs == node {
                            blk[i * bs + c % bs] = v;
                        }
                    }
                }
            });
        Self::from_blocks(bs, blocks)
    }

    /// Takes the diagonal blocks directly (row-major `b×b` per node, e.g. from an assembly-free
    /// operator) and inverts them; a singular block is an error naming its node.
    pub fn from_blocks(block_size: usize, mut blocks: Vec<f64>) -> Result<Self> {
        if block_size == 0 {
            return Err(Error::invalid(
                "block Jacobi: block size must be at least 1",
            ));
        }
        let bb = block_size * block_size;
        if blocks.len() % bb != 0 {
            return Err(Error::invalid(format!(
                "block Jacobi: {} block entries is not a multiple of {block_size}×{block_size}",
                blocks.len()
            )));
        }
        let singular = blocks
            .par_chunks_mut(bb)
            .enumerate()
            .filter_map(|(node, blk)| {
                dense::invert_in_place(blk, block_size)
                    .is_none()
                    .then_some(node)
            })
            .min();
        if let Some(node) = singular {
            return Err(Error::invalid(format!(
                "block Jacobi: diagonal block of node {node} is singular"
            )));
        }
        Ok(BlockJacobi {
            block_size,
            inverses: blocks,
        })
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// The inverted blocks (row-major `b×b` per node), e.g. to upload to a device.
    pub fn inverses(&self) -> &[f64] {
        &self.inverses
    }
}

fn check_block_size(block_size: usize, n: usize, what: &str) -> Result<()> {
    if block_size == 0 || n % block_size != 0 {
        return Err(Error::invalid(format!(
            "block Jacobi: {what} ({n}) is not a multiple of block size {block_size}"
        )));
    }
    Ok(())
}

impl LinearOperator<Cpu> for BlockJacobi {
    fn nrows(&self) -> usize {
        self.inverses.len() / self.block_size
    }
    fn ncols(&self) -> usize {
        self.nrows()
    }
    fn apply(&self, _: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        let (n, bs) = (LinearOperator::<Cpu>::nrows(self), self.block_size);
        if x.len() != n || y.len() != n {
            return Err(Error::dim(
                "block Jacobi apply",
                n,
                if x.len() != n { x.len() } else { y.len() },
            ));
        }
        y.par_chunks_mut(bs)
            .zip(x.par_chunks(bs))
            .zip(self.inverses.par_chunks(bs * bs))
            .with_min_len(NODE_CHUNK)
            .for_each(|((yc, xc), inv)| dense::matvec(inv, bs, xc, yc));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_exact_inverse_on_block_diagonal_matrix() {
        // Two-component problem, 50 nodes, coupled 2×2 blocks and no coupling between nodes.
        let nodes = 50;
        let mut t = Vec::new();
        for k in 0..nodes {
            let (i, f) = (2 * k, k as f64);
            t.extend([
                (i, i, 3.0 + f),
                (i, i + 1, 1.0 + 0.1 * f),
                (i + 1, i, -2.0),
                (i + 1, i + 1, 4.0),
            ]);
        }
        let a = CsrMatrix::from_triplets(2 * nodes, 2 * nodes, &t).unwrap();
        let bj = BlockJacobi::from_csr(&a, 2).unwrap();
        let x: Vec<f64> = (0..2 * nodes).map(|i| (i as f64).cos()).collect();
        let mut ax = vec![0.0; 2 * nodes];
        a.spmv(&x, &mut ax);
        let mut y = vec![0.0; 2 * nodes];
        bj.apply(&Cpu, &ax, &mut y).unwrap();
        for (yi, xi) in y.iter().zip(&x) {
            assert!((yi - xi).abs() < 1e-14, "{yi} vs {xi}");
        }
    }

    #[test]
    fn singular_block_and_bad_sizes_are_named() {
        let blocks = vec![1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 0.0, 0.0, 0.0, 0.0];
        let err = BlockJacobi::from_blocks(2, blocks).err().unwrap();
        assert!(err.to_string().contains("node 1"), "{err}");
        let a = CsrMatrix::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)]).unwrap();
        assert!(BlockJacobi::from_csr(&a, 2).is_err());
        assert!(BlockJacobi::from_blocks(2, vec![1.0; 6]).is_err());
    }
}
