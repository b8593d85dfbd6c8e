//! The zeroing pass under the Jacobian kernel (`HK_ZERO_AHEAD` in `kernels/hyperelastic_tc.cu`,
//! thirty-first pass in BENCHMARKS.md): the atomic scatter needs the CSR values zeroed first, a
//! pass at the copy rate (0.21 ms of the P2 Jacobian's 1.61 on the H100) while the kernel after it
//! is bound by its arithmetic and the L2's reductions, not by DRAM. Here the cells are launched in
//! chunks, in launch order, and each launch also zeroes the values that the *next* chunk's cells are
//! the first to touch (a node's three rows are contiguous: the nodes first met in that chunk); a
//! launch with no cells zeroes the first chunk's. Every value is zeroed exactly once, before any cell
//! adds to it, and the launches of one stream run in order. Measured on the H100 (stop 57,
//! BENCHMARKS.md's thirty-second pass): slower — 1.71/1.77/1.87 ms at 4/8/16 chunks against 1.61 —
//! the zeroing does not hide (its writes likely share the L2 with the scatter's reductions), and
//! each chunk adds a wave's tail; so it stays opt-in (the sweep's `aheadN` rows).
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;

/// The kernel define (with the number of chunks: `HK_ZERO_AHEAD=8`); the host reads the count.
pub const PREFIX: &str = "HK_ZERO_AHEAD";

/// The longest segment (values a block zeroes per grid-stride step).
const SEG: usize = 256;

/// The number of chunks `extra` asks for (`HK_ZERO_AHEAD=n`, n ≥ 1), None without the define.
pub fn chunks_asked(extra: &[&str]) -> Result<Option<usize>> {
    let Some(d) = extra.iter().find(|d| d.starts_with(PREFIX)) else { return Ok(None) };
    match d.strip_prefix(PREFIX).and_then(|n| n.strip_prefix('=')).map(str::parse::<usize>) {
        Some(Ok(n)) if n >= 1 => Ok(Some(n)),
        _ => Err(Error::invalid(format!("`{d}`: expected {PREFIX}=n with n ≥ 1 chunks"))),
    }
}

/// The host plan: chunk j launches cells `bounds[j]..bounds[j + 1]`; `lists[j]` are the segments
/// (offset | length << 48) zeroed before chunk j runs — by the cell-less launch for j = 0, by chunk
/// j − 1's launch otherwise. Nodes no cell touches are zeroed with the first chunk's.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub bounds: Vec<usize>,
    pub lists: Vec<Vec<u64>>,
}

impl Plan {
    /// `cell_nodes` in launch order (`nloc` per cell), `row_ptr` with 3 rows per node.
    pub fn new(cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], nchunks: usize) -> Result<Plan> {
        if nloc == 0 || row_ptr.is_empty() || (row_ptr.len() - 1) % 3 != 0 {
            return Err(Error::invalid("the zeroing plan needs cells and three CSR rows per node"));
        }
        if row_ptr.last().copied().unwrap_or(0) >= 1 << 48 {
            return Err(Error::Unsupported("the zeroing plan addresses the values with 48 bits".into()));
        }
        let ncells = cell_nodes.len() / nloc;
        let nchunks = nchunks.clamp(1, ncells.max(1));
        let bounds: Vec<usize> = (0..=nchunks).map(|j| j * ncells / nchunks).collect();
        let nnodes = (row_ptr.len() - 1) / 3;
        // (chunks visited in order: a node's first chunk is the one that finds it unset)
        let mut first = vec![usize::MAX; nnodes];
        for j in 0..nchunks {
            for &n in &cell_nodes[bounds[j] * nloc..bounds[j + 1] * nloc] {
                let f = first.get_mut(n).ok_or_else(|| Error::invalid(format!("the zeroing plan: node {n} of {nnodes}")))?;
                *f = (*f).min(j);
            }
        }
        // (nodes no cell touches: with the first chunk's)
        first.iter_mut().filter(|f| **f == usize::MAX).for_each(|f| *f = 0);
        let mut lists = vec![Vec::new(); nchunks];
        // runs of consecutive nodes first met in one chunk: one contiguous range of values each
        let mut n0 = 0;
        while n0 < nnodes {
            let j = first[n0];
            let mut n1 = n0 + 1;
            while n1 < nnodes && first[n1] == j {
                n1 += 1;
            }
            let (mut a, b) = (row_ptr[3 * n0], row_ptr[3 * n1]);
            while a < b {
                let len = (b - a).min(SEG);
                lists[j].push(a as u64 | (len as u64) << 48);
                a += len;
            }
            n0 = n1;
        }
        Ok(Plan { bounds, lists })
    }
}

/// The plan on the device.
pub(super) struct DeviceAhead {
    pub bounds: Vec<usize>,
    /// (segments, count) per chunk; a one-entry dummy where a chunk has none.
    pub lists: Vec<(CudaSlice<u64>, u32)>,
}

impl DeviceAhead {
    pub fn new(be: &CudaBackend, plan: &Plan) -> Result<DeviceAhead> {
        let lists = plan
            .lists
            .iter()
            .map(|l| {
                let n = u32::try_from(l.len()).map_err(|_| Error::Unsupported(format!("{} zeroing segments in one launch", l.len())))?;
                Ok((be.upload(if l.is_empty() { &[0u64][..] } else { l })?, n))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceAhead { bounds: plan.bounds.clone(), lists })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value is zeroed exactly once, and before any cell of its chunk or a later one touches it.
    #[test]
    fn every_value_zeroed_once_before_its_first_cell() {
        // a strip of P1-like cells of 4 nodes (shared faces), nodes numbered along the strip but with
        // one node touched only late and one by no cell
        let nloc = 4;
        let mut cells = Vec::new();
        for c in 0..40usize {
            cells.extend([c, c + 1, c + 2, if c == 35 { 50 } else { c + 3 }]);
        }
        let nnodes = 52;
        // node n has 3 rows of (n % 5 + 2) · 3 values
        let mut row_ptr = vec![0usize];
        for n in 0..nnodes {
            for _ in 0..3 {
                row_ptr.push(row_ptr.last().unwrap() + (n % 5 + 2) * 3 + if n == 7 { 300 } else { 0 });
            }
        }
        for nchunks in [1, 3, 7, 40, 100] {
            let p = Plan::new(&cells, nloc, &row_ptr, nchunks).unwrap();
            let k = p.bounds.len() - 1;
            assert_eq!((p.bounds[0], p.bounds[k]), (0, 40));
            assert_eq!(p.lists.len(), k);
            let total = *row_ptr.last().unwrap();
            let mut zeroed_by = vec![usize::MAX; total];
            for (j, l) in p.lists.iter().enumerate() {
                for &z in l {
                    let (a, len) = ((z & 0xffff_ffff_ffff) as usize, (z >> 48) as usize);
                    assert!(len >= 1 && len <= SEG);
                    for v in a..a + len {
                        assert_eq!(zeroed_by[v], usize::MAX, "value {v} zeroed twice");
                        zeroed_by[v] = j;
                    }
                }
            }
            assert!(zeroed_by.iter().all(|&j| j != usize::MAX), "{nchunks} chunks: a value never zeroed");
            for j in 0..k {
                for &n in &cells[p.bounds[j] * nloc..p.bounds[j + 1] * nloc] {
                    for v in row_ptr[3 * n]..row_ptr[3 * n + 3] {
                        assert!(zeroed_by[v] <= j, "{nchunks} chunks: node {n}'s value {v} zeroed for chunk {} after chunk {j} adds", zeroed_by[v]);
                    }
                }
            }
        }
        assert!(Plan::new(&cells, nloc, &row_ptr[..5], 2).is_err());
        assert_eq!(chunks_asked(&["HK_ZERO_AHEAD=8", "X"]).unwrap(), Some(8));
        assert_eq!(chunks_asked(&["X"]).unwrap(), None);
        assert!(chunks_asked(&["HK_ZERO_AHEAD=0"]).is_err());
        assert!(chunks_asked(&["HK_ZERO_AHEAD"]).is_err());
    }
}
