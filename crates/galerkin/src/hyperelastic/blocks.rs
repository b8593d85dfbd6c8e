//! Node-block storage of the Jacobian (round 25, kernel define `HK_SCATTER_BLOCKS`;
//! `kernels/hyperelastic_blocks.cu`). The 24th pass found the column scatter bound by the L2's
//! sectors: in CSR a cell's 900 adds are 300 pieces of 24 bytes (a column node's 3 components in
//! one row), each across 1 or 2 sectors. Here the same nonzeros are stored by node pairs, the nine
//! values of block (n, m) contiguous (72 bytes: exactly 3 sectors at any 8-byte offset), so the
//! kernel adds whole blocks. The values are a permutation of CSR's: node n's values start at the
//! same offset (9 × its first block) in both, so the kernel's row starts are CSR's `row_ptr[3n]`
//! and the column ranks are the same. A solver uses the matrix through [`DeviceBlocks::spmv`] or
//! after [`DeviceBlocks::to_csr`] (the `GALERKIN_HYPER_SCHEME=blocks` path converts every assembly).
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig};
use std::sync::{Arc, OnceLock};

/// The kernel define of the block storage (with the column walk, [`super::cuda::TC_COLS`]).
pub const TC_BLOCKS: &[&str] = &["HK_SCATTER_BLOCKS"];

/// The nodes of a square pattern of 3 rows a node whose values 32-bit positions index; an error
/// naming `user` (the scheme that needs it) otherwise.
pub(super) fn node_rows(p: &CsrMatrix, user: &str) -> Result<usize> {
    if p.nrows % 3 != 0 || p.nrows != p.ncols || p.row_ptr.len() != p.nrows + 1 {
        return Err(Error::invalid(format!("{user} needs a square pattern of 3 rows a node, not {} × {}", p.nrows, p.ncols)));
    }
    if p.nnz() > u32::MAX as usize {
        return Err(Error::Unsupported(format!("{user} indexes {} values with 32 bits", p.nnz())));
    }
    Ok(p.nrows / 3)
}

/// The launch of a warp per node (the block storage's and the upper-triangle scatter's passes).
pub(super) fn warp_per_node(nnodes: u64) -> Result<LaunchConfig> {
    const THREADS: u32 = 256;
    let blocks = u32::try_from((nnodes * 32).div_ceil(THREADS as u64)).map_err(|_| Error::Unsupported(format!("{nnodes} nodes in one launch")))?;
    Ok(LaunchConfig { grid_dim: (blocks.max(1), 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 })
}

/// The node-block structure of a node-blocked CSR pattern of 3 components (3 rows per node with
/// the same sorted column nodes). Read-only once formed: the CSR positions are cached from it.
#[derive(Clone, Debug)]
pub struct NodeBlocks {
    /// Block rows: node n's blocks are `ptr[n] .. ptr[n + 1]`.
    ptr: Vec<u32>,
    /// Block columns: the column node of each block.
    col: Vec<u32>,
    /// [`Self::csr_positions`], formed on first use (round 28: once a pattern, not each
    /// conversion; the device path never needs it).
    positions: OnceLock<Vec<usize>>,
}

impl NodeBlocks {
    /// The blocks of `p`; an error naming the node where `p` is not node-blocked with 3
    /// components, or where its values outgrow 32-bit positions.
    pub fn of(p: &CsrMatrix) -> Result<NodeBlocks> {
        let nodes = node_rows(p, "node-block storage")?;
        let bad = |n: usize, what: &str| Error::invalid(format!("node-block storage needs whole 3 × 3 node blocks: node {n}'s {what}"));
        let mut ptr = Vec::with_capacity(nodes + 1);
        let mut col = Vec::with_capacity(p.nnz() / 9);
        ptr.push(0u32);
        for n in 0..nodes {
            let (s, len) = (p.row_ptr[3 * n], p.row_ptr[3 * n + 1] - p.row_ptr[3 * n]);
            if len % 3 != 0 || s != 9 * col.len() {
                return Err(bad(n, "first row"));
            }
            let first = &p.col_idx[s..s + len];
            if !first.chunks(3).all(|c| c[0] % 3 == 0 && c[1] == c[0] + 1 && c[2] == c[0] + 2) {
                return Err(bad(n, "columns are not whole nodes"));
            }
            if let Some(a) = (1..3).find(|&a| p.col_idx[p.row_ptr[3 * n + a]..p.row_ptr[3 * n + a + 1]] != *first) {
                return Err(bad(n, &format!("row {a} differs from its first")));
            }
            col.extend(p.col_idx[s..s + len].iter().step_by(3).map(|&c| c / 3));
            ptr.push(col.len() as u32);
        }
        Ok(NodeBlocks { ptr, col, positions: OnceLock::new() })
    }

    /// Block rows: node n's blocks are `ptr()[n] .. ptr()[n + 1]`.
    pub fn ptr(&self) -> &[u32] {
        &self.ptr
    }

    /// Block columns: the column node of each block.
    pub fn col(&self) -> &[u32] {
        &self.col
    }

    /// The kernel's row starts (the shape of CSR's 3 rows a node): 9 × node n's first block + 3a.
    pub fn rows(&self) -> Vec<u32> {
        let mut r: Vec<u32> = self.ptr[..self.ptr.len() - 1].iter().flat_map(|&q| (0..3).map(move |a| 9 * q + 3 * a)).collect();
        r.push(9 * self.ptr[self.ptr.len() - 1]);
        r
    }

    /// The CSR position of each value in block order (node n's block q, entry (a, b) ↦ its row
    /// (n, a), column (col[q], b)); formed on the first call (the blocks cannot change after
    /// [`Self::of`]).
    pub fn csr_positions(&self) -> &[usize] {
        self.positions.get_or_init(|| self.form_positions())
    }

    fn form_positions(&self) -> Vec<usize> {
        let mut to = vec![0; 9 * self.col.len()];
        for n in 0..self.ptr.len() - 1 {
            let (q0, len) = (self.ptr[n] as usize, (self.ptr[n + 1] - self.ptr[n]) as usize);
            for e in 0..9 * len {
                let (q, a, b) = (e / 9, e % 9 / 3, e % 3);
                to[9 * q0 + e] = 9 * q0 + 3 * len * a + 3 * q + b;
            }
        }
        to
    }

    /// Values in block order → CSR order (host).
    pub fn to_csr(&self, v: &[f64]) -> Result<Vec<f64>> {
        if v.len() != 9 * self.col.len() {
            return Err(Error::dim("node-block values", 9 * self.col.len(), v.len()));
        }
        let mut out = vec![0.0; v.len()];
        for (i, &to) in self.csr_positions().iter().enumerate() {
            out[to] = v[i];
        }
        Ok(out)
    }

    /// Values in CSR order → block order (host).
    pub fn from_csr(&self, v: &[f64]) -> Result<Vec<f64>> {
        if v.len() != 9 * self.col.len() {
            return Err(Error::dim("CSR values", 9 * self.col.len(), v.len()));
        }
        Ok(self.csr_positions().iter().map(|&to| v[to]).collect())
    }
}

/// The L2 sectors (32 bytes) that one warp of the column walk touches a cell, counted on the
/// pattern `p`, the cells' `nloc` nodes and their column ranks (`rank[(c·nloc + i)·nloc + j]`), the
/// values' base 256-byte aligned, summed over the cells: (CSR: a warp add per row (i, a), lanes
/// (j, b); blocks: per node row i, 3 adds of 32 consecutive entries of its 9·nloc in block order).
/// Sectors shared by two adds of one cell count twice (as the L2 sees them: separate requests);
/// with `group` < 32, so do those of two groups of `group` lanes of one add (were the adds sent
/// in such groups: a hypothesis for Nsight Compute's higher count of CSR's sectors). With `skip`
/// (a mask per cell, [`super::chain`]'s carried nodes), the entries between two masked nodes are not
/// added.
pub fn scatter_sectors(p: &CsrMatrix, cell_nodes: &[usize], nloc: usize, rank: &[u16], group: usize, skip: Option<&[u16]>) -> (usize, usize) {
    let mut set: Vec<(usize, usize)> = Vec::with_capacity(32);
    let g = group.clamp(1, 32);
    let count = |set: &mut Vec<(usize, usize)>| {
        set.sort_unstable();
        set.dedup();
        let n = set.len();
        set.clear();
        n
    };
    let (mut csr, mut blk) = (0, 0);
    for (c, nodes) in cell_nodes.chunks(nloc).enumerate() {
        let rk = |i: usize, j: usize| rank[(c * nloc + i) * nloc + j] as usize;
        let m = skip.map_or(0, |s| s[c]);
        let kept = |i: usize, j: usize| (m >> i) & (m >> j) & 1 == 0;
        for (i, &ni) in nodes.iter().enumerate() {
            for a in 0..3 {
                let start = p.row_ptr[3 * ni + a];
                for j in (0..nloc).filter(|&j| kept(i, j)) {
                    for b in 0..3 {
                        set.push(((3 * j + b) / g, (start + 3 * rk(i, j) + b) / 4));
                    }
                }
                csr += count(&mut set);
            }
            let start = p.row_ptr[3 * ni];
            for t in 0..(9 * nloc).div_ceil(32) {
                for e in (32 * t..(32 * t + 32).min(9 * nloc)).filter(|&e| kept(i, e / 9)) {
                    set.push(((e - 32 * t) / g, (start + 9 * rk(i, e / 9) + e % 9) / 4));
                }
                blk += count(&mut set);
            }
        }
    }
    (csr, blk)
}

/// The block structure on the device with its two passes (compiled in the assembly kernel's
/// module, `kernels/hyperelastic_blocks.cu`).
pub struct DeviceBlocks {
    pub host: NodeBlocks,
    spmv: Kernel,
    to_csr: Kernel,
    nnodes: u64,
    /// The kernel's row starts ([`NodeBlocks::rows`]), passed as its `row_ptr`.
    pub(crate) rows: CudaSlice<u32>,
    ptr: CudaSlice<u32>,
    col: CudaSlice<u32>,
}

impl DeviceBlocks {
    pub fn new(be: &CudaBackend, module: &Arc<CudaModule>, p: &CsrMatrix) -> Result<DeviceBlocks> {
        let host = NodeBlocks::of(p)?;
        let (rows, ptr) = (be.upload(&host.rows())?, be.upload(&host.ptr)?);
        let col = be.upload(if host.col.is_empty() { &[0u32][..] } else { &host.col })?;
        let kernel = |name: &'static str| Kernel::from_module(module, name);
        let (spmv, to_csr) = (kernel("hyper_blocks_spmv")?, kernel("hyper_blocks_to_csr")?);
        Ok(DeviceBlocks { nnodes: (host.ptr.len() - 1) as u64, rows, ptr, col, spmv, to_csr, host })
    }

    fn check(&self, what: &str, vals: &CudaSlice<f64>) -> Result<()> {
        if vals.len() != 9 * self.host.col.len() {
            return Err(Error::dim(what, 9 * self.host.col.len(), vals.len()));
        }
        Ok(())
    }

    /// y = A x with `vals` in block order.
    pub fn spmv(&self, be: &CudaBackend, vals: &CudaSlice<f64>, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        self.check("node-block values", vals)?;
        be.check("node-block product", 3 * self.nnodes as usize, &[x, y])?;
        launch!(be, &self.spmv, warp_per_node(self.nnodes)?; &self.nnodes, &self.ptr, &self.col, vals, &x.data, &mut y.data)
    }

    /// `dst` = the values of `src` (block order) in CSR order.
    pub fn to_csr(&self, be: &CudaBackend, src: &CudaSlice<f64>, dst: &mut CudaSlice<f64>) -> Result<()> {
        self.check("node-block values", src)?;
        self.check("CSR values", dst)?;
        launch!(be, &self.to_csr, warp_per_node(self.nnodes)?; &self.nnodes, &self.ptr, src, &mut *dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate::box_mesh, CellType};
    use crate::operator::assemble::pattern;
    use crate::space::FunctionSpace;

    fn p2(n: usize) -> (CsrMatrix, Vec<usize>, Vec<u16>) {
        let mesh = Arc::new(box_mesh(n, n, n, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
        let space = FunctionSpace::lagrange(mesh, 2, 3).unwrap();
        let (p, slots) = pattern(&space, true).unwrap();
        (p, space.dofmap.cell_nodes.clone(), slots.unwrap().rank)
    }

    /// The block order is a permutation of CSR's that keeps each node's values at the same offset,
    /// block (n, col[q]) at 9·(ptr[n] + q) with the row-major 3 × 3 entries; the kernel's rows are
    /// CSR's row starts of each node; a pattern that is not node-blocked is refused by name.
    #[test]
    fn blocks_permute_the_csr_values() {
        let (p, _, _) = p2(2);
        let nb = NodeBlocks::of(&p).unwrap();
        assert_eq!(9 * nb.col.len(), p.nnz());
        let to = nb.csr_positions();
        let mut seen = vec![false; p.nnz()];
        for n in 0..p.nrows / 3 {
            assert_eq!(nb.rows()[3 * n] as usize, p.row_ptr[3 * n], "node {n}'s offset");
            for q in nb.ptr[n] as usize..nb.ptr[n + 1] as usize {
                for (a, b) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))) {
                    let at = to[9 * q + 3 * a + b];
                    assert!((p.row_ptr[3 * n + a]..p.row_ptr[3 * n + a + 1]).contains(&at), "({n}, {q}, {a}, {b}): row");
                    assert_eq!(p.col_idx[at], 3 * nb.col[q] + b as u32, "({n}, {q}, {a}, {b}): column");
                    assert!(!seen[at]);
                    seen[at] = true;
                }
            }
        }
        let v: Vec<f64> = (0..p.nnz()).map(|i| i as f64 * 0.5 - 3.0).collect();
        assert_eq!(nb.to_csr(&nb.from_csr(&v).unwrap()).unwrap(), v);
        // The positions are formed once and reused: two calls agree, and with a fresh copy's.
        assert!(std::ptr::eq(nb.csr_positions(), nb.csr_positions()));
        assert_eq!(nb.to_csr(&v).unwrap(), nb.to_csr(&v).unwrap());
        assert_eq!(nb.from_csr(&v).unwrap(), NodeBlocks::of(&p).unwrap().from_csr(&v).unwrap());
        assert!(nb.to_csr(&v[1..]).is_err());
        let mut bad = p.clone();
        bad.col_idx.swap(0, 1);
        assert!(NodeBlocks::of(&bad).unwrap_err().to_string().contains("node 0"));
    }

    /// [`blocks_take_fewer_sectors`] on the kernel sweep's mesh (34³ boxes of 6 tetrahedra: 235 824 P2
    /// cells, 985 527 unknowns; a few seconds: `--ignored`).
    #[test]
    #[ignore]
    fn blocks_take_fewer_sectors_at_a_million_dofs() {
        sectors_of(34);
    }

    /// Counted on a P2 box (the estimate of round 25, BENCHMARKS.md): whole blocks take fewer L2
    /// sectors than CSR's row pieces (361 against 290 a cell here: neighbouring column nodes are
    /// often adjacent in a row, which merges CSR's pieces too) — at most 32 a node row (every
    /// block 3, the 2 cut ones 4), at least 1 a block.
    #[test]
    fn blocks_take_fewer_sectors() {
        sectors_of(6);
    }

    fn sectors_of(n: usize) {
        let (p, cells, rank) = p2(n);
        let ncells = cells.len() / 10;
        for g in [16, 8] {
            let (csr, blk) = scatter_sectors(&p, &cells, 10, &rank, g, None);
            eprintln!("P2 box {n}³, lanes sent {g} at a time: sectors a cell CSR {:.1}, blocks {:.1}", csr as f64 / ncells as f64, blk as f64 / ncells as f64);
        }
        let (csr, blk) = scatter_sectors(&p, &cells, 10, &rank, 32, None);
        let (c, b) = (csr as f64 / ncells as f64, blk as f64 / ncells as f64);
        eprintln!("P2 box {n}³, {ncells} cells: sectors a cell CSR {c:.1}, blocks {b:.1} ({:.2}×)", c / b);
        assert!(b <= 10.0 * (8.0 * 3.0 + 2.0 * 4.0) && b >= 10.0 * 10.0 && c > 1.15 * b, "CSR {c:.1}, blocks {b:.1}");
    }
}
