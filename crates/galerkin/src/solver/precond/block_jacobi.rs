//! Point-block Jacobi on any backend: inverts the `b×b` diagonal block of every node once (on the
//! backend), then applies the inverses independently. For vector problems (elasticity) with
//! node-interleaved dofs this captures the coupling between components that scalar Jacobi throws
//! away. The blocks come from whatever the operator offers: a CSR matrix, element matrices or a
//! matrix-free level, all on the backend.
use crate::backend::{Backend, Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};

/// `y = blockdiag(A)⁻¹ x` with dofs numbered node by node (`node·b + component`).
pub struct BlockJacobi<B: Backend> {
    block_size: usize,
    /// Row-major `b×b` inverse per node.
    inverses: B::Vector,
    n: usize,
}

impl<B: Backend> BlockJacobi<B> {
    /// Inverts the node blocks (row-major `b×b` per node, on the backend); a singular block is an
    /// error naming its node.
    pub fn new(backend: &B, block_size: usize, mut blocks: B::Vector) -> Result<Self> {
        let len = backend.len(&blocks);
        if block_size == 0 || len % (block_size * block_size) != 0 {
            return Err(Error::invalid(format!("block Jacobi: {len} block entries are not whole {block_size}×{block_size} blocks")));
        }
        if let Some(node) = backend.invert_blocks(block_size, &mut blocks)? {
            return Err(Error::invalid(format!("block Jacobi: diagonal block of node {node} is singular")));
        }
        Ok(BlockJacobi { block_size, inverses: blocks, n: len / block_size })
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }
}

impl BlockJacobi<Cpu> {
    /// From the diagonal blocks of a square CPU matrix whose size is a multiple of `block_size`.
    pub fn from_csr(a: &CsrMatrix, block_size: usize) -> Result<Self> {
        if a.nrows != a.ncols {
            return Err(Error::dim("block Jacobi: square matrix (columns)", a.nrows, a.ncols));
        }
        if block_size == 0 || a.nrows % block_size != 0 {
            return Err(Error::invalid(format!("block Jacobi: matrix rows ({}) is not a multiple of block size {block_size}", a.nrows)));
        }
        BlockJacobi::new(&Cpu, block_size, a.node_blocks(block_size))
    }

    /// From host blocks (row-major `b×b` per node).
    pub fn from_blocks(block_size: usize, blocks: Vec<f64>) -> Result<Self> {
        BlockJacobi::new(&Cpu, block_size, blocks)
    }

    /// The inverted blocks.
    pub fn inverses(&self) -> &[f64] {
        &self.inverses
    }
}

impl<B: Backend> LinearOperator<B> for BlockJacobi<B> {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        backend.apply_blocks(self.block_size, &self.inverses, x, y)
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
