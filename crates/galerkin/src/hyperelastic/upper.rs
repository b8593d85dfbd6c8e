//! The upper-triangle scatter (twenty-first pass, kernel define `HK_UPPER`; `kernels/hyperelastic_upper.cu`):
//! the Jacobian is symmetric, so the tensor-core kernel adds only the entries of the global upper
//! triangle (≈ 55 % of the element matrices' adds, and of the L2 reduction sectors that bound the
//! scatter), only those values are zeroed before it, and one pass after it writes every lower entry
//! from its transpose through a map built here once with the pattern: the same full CSR matrix,
//! exactly symmetric.
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig};
use std::sync::Arc;

/// The kernel define of the upper-triangle scatter.
pub const TC_UPPER: &[&str] = &["HK_UPPER"];

/// The fill's map of a node-blocked CSR pattern (3 rows per node with the same sorted column
/// nodes, the diagonal block among them): node m's lower blocks (column nodes n < m, the first
/// `lo_ptr[m + 1] − lo_ptr[m]` of its row) and, for each, `lo_src` = (the position of the upper
/// block (n, m)'s entry (0, 0), the row length of n), flat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpperMap {
    pub lo_ptr: Vec<u32>,
    pub lo_src: Vec<u32>,
}

impl UpperMap {
    /// The map of `p`; an error naming the node where `p` is not node-blocked with 3 components,
    /// lacks a diagonal block or a transposed block, or where its values outgrow 32-bit positions.
    pub fn of(p: &CsrMatrix) -> Result<UpperMap> {
        let bad = |what: String| Error::invalid(format!("the upper-triangle scatter needs a symmetric node-blocked pattern of 3 components: {what}"));
        let nodes = super::blocks::node_rows(p, "the upper-triangle scatter")?;
        // node n's column nodes (from its first row) and the row length
        let cols = |n: usize| p.col_idx[p.row_ptr[3 * n]..p.row_ptr[3 * n + 1]].iter().step_by(3).map(|&c| c as usize / 3);
        let mut lo_ptr = Vec::with_capacity(nodes + 1);
        let mut lo_src = Vec::new();
        lo_ptr.push(0u32);
        for m in 0..nodes {
            let len = p.row_ptr[3 * m + 1] - p.row_ptr[3 * m];
            if (0..3).any(|a| p.row_ptr[3 * m + a + 1] - p.row_ptr[3 * m + a] != len) || len % 3 != 0 {
                return Err(bad(format!("node {m}'s rows differ in length")));
            }
            let lo = cols(m).take_while(|&n| n < m).count();
            if cols(m).nth(lo) != Some(m) {
                return Err(bad(format!("node {m} has no diagonal block")));
            }
            for n in cols(m).take(lo) {
                let rank = cols(n).position(|c| c == m).ok_or_else(|| bad(format!("node {n} lacks the block ({n}, {m})")))?;
                lo_src.extend([(p.row_ptr[3 * n] + 3 * rank) as u32, (p.row_ptr[3 * n + 1] - p.row_ptr[3 * n]) as u32]);
            }
            lo_ptr.push((lo_src.len() / 2) as u32);
        }
        Ok(UpperMap { lo_ptr, lo_src })
    }

    /// Lower blocks (node pairs n < m) the fill writes.
    pub fn lower_blocks(&self) -> usize {
        self.lo_src.len() / 2
    }
}

/// The map on the device and the two passes (compiled in the assembly kernel's module).
pub struct DeviceUpper {
    zero: Kernel,
    fill: Kernel,
    nnodes: u64,
    lo_ptr: CudaSlice<u32>,
    lo_src: CudaSlice<u32>,
}

impl DeviceUpper {
    pub fn new(be: &CudaBackend, module: &Arc<CudaModule>, p: &CsrMatrix) -> Result<DeviceUpper> {
        let map = UpperMap::of(p)?;
        Ok(DeviceUpper {
            zero: Kernel::from_module(module, "hyper_upper_zero")?,
            fill: Kernel::from_module(module, "hyper_upper_fill")?,
            nnodes: (map.lo_ptr.len() - 1) as u64,
            lo_ptr: be.upload(&map.lo_ptr)?,
            lo_src: be.upload(if map.lo_src.is_empty() { &[0u32, 0][..] } else { &map.lo_src })?,
        })
    }

    fn cfg(&self) -> Result<LaunchConfig> {
        super::blocks::warp_per_node(self.nnodes)
    }

    /// Zeroes the values the kernel adds to (each row's upper part).
    pub fn zero(&self, be: &CudaBackend, row_ptr: &CudaSlice<u32>, vals: &mut CudaSlice<f64>) -> Result<()> {
        launch!(be, &self.zero, self.cfg()?; &self.nnodes, row_ptr, &self.lo_ptr, &mut *vals)
    }

    /// Writes every lower value from its transposed upper one.
    pub fn fill(&self, be: &CudaBackend, row_ptr: &CudaSlice<u32>, vals: &mut CudaSlice<f64>) -> Result<()> {
        launch!(be, &self.fill, self.cfg()?; &self.nnodes, row_ptr, &self.lo_ptr, &self.lo_src, &mut *vals)
    }
}
