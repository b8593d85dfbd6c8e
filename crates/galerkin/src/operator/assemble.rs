//! The CSR sparsity of a space, built once from the mesh graph, and load vectors summed in
//! parallel, one color at a time, with no locks in the hot loop (the matrix itself is the `full`
//! level's, [`super::level::full`]).
use super::coloring::{Coloring, SharedMut};
use super::integrate::Scratch;
use super::restriction::ElementRestriction;
use crate::linalg::CsrMatrix;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use rayon::prelude::*;

/// The CSR pattern of `space`'s operators: dof (n, a) couples to (m, b) when nodes n and m share a
/// cell, for all components a, b. Values are zero.
pub fn sparsity(space: &FunctionSpace) -> Result<CsrMatrix> {
    let dm = &space.dofmap;
    let nn = dm.num_nodes;
    let ncomp = space.ncomp;
    if nn * ncomp > u32::MAX as usize {
        return Err(Error::Unsupported(format!("{} dofs exceed the 32-bit column index range", nn * ncomp)));
    }
    // node -> cells adjacency (CSR)
    let mut start = vec![0usize; nn + 1];
    for &n in &dm.cell_nodes {
        start[n + 1] += 1;
    }
    for i in 0..nn {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut cells = vec![0usize; dm.cell_nodes.len()];
    let npc = dm.nodes_per_cell;
    for (k, &n) in dm.cell_nodes.iter().enumerate() {
        cells[fill[n]] = k / npc;
        fill[n] += 1;
    }
    // Neighbours per node: a thread-local marker array dedups before sorting the ~15–80 survivors.
    let neighbours: Vec<Vec<u32>> = (0..nn)
        .into_par_iter()
        .with_min_len(4096)
        .map_init(
            || vec![u32::MAX; nn],
            |mark, n| {
                let mut v: Vec<u32> = Vec::with_capacity(32);
                for &c in &cells[start[n]..start[n + 1]] {
                    for &m in dm.cell(c) {
                        if mark[m] != n as u32 {
                            mark[m] = n as u32;
                            v.push(m as u32);
                        }
                    }
                }
                v.sort_unstable();
                v
            },
        )
        .collect();
    let mut row_ptr = Vec::with_capacity(nn * ncomp + 1);
    row_ptr.push(0usize);
    for nb in &neighbours {
        for _ in 0..ncomp {
            let last = row_ptr[row_ptr.len() - 1];
            row_ptr.push(last + nb.len() * ncomp);
        }
    }
    let nnz = row_ptr[nn * ncomp];
    let mut col_idx = vec![0u32; nnz];
    let cp = SharedMut(col_idx.as_mut_ptr());
    neighbours.par_iter().enumerate().for_each(|(n, nb)| {
        let cp = cp;
        for a in 0..ncomp {
            let s = row_ptr[n * ncomp + a];
            for (k, &m) in nb.iter().enumerate() {
                for b in 0..ncomp {
                    // SAFETY: each (n, a) row owns the disjoint range row_ptr[n*ncomp+a]..next.
                    unsafe { *cp.0.add(s + k * ncomp + b) = m * ncomp as u32 + b as u32 };
                }
            }
        }
    });
    let values = vec![0.0; nnz];
    Ok(CsrMatrix { nrows: nn * ncomp, ncols: nn * ncomp, row_ptr, col_idx, values })
}

/// Sum per-cell vectors `f(cell, local)` into a global vector (colored, parallel).
pub fn assemble_vector(
    space: &FunctionSpace,
    coloring: &Coloring,
    cells_mask: Option<&[bool]>,
    f: impl Fn(usize, &mut Scratch, &mut [f64]) -> Result<()> + Sync,
) -> Result<Vec<f64>> {
    let r = ElementRestriction::new(space);
    let nd = r.elem_size();
    let mut b = vec![0.0; space.ndofs()];
    let bp = SharedMut(b.as_mut_ptr());
    let len = b.len();
    for color in &coloring.blocks {
        color.par_iter().try_for_each_init(
            || (Scratch::default(), vec![0.0; nd]),
            |(s, be), cells| -> Result<()> {
                let bp = bp;
                for c in cells.clone() {
                    if cells_mask.is_some_and(|m| !m[c]) {
                        continue;
                    }
                    be.fill(0.0);
                    f(c, s, be)?;
                    // SAFETY: blocks of one color share no dof.
                    let global = unsafe { std::slice::from_raw_parts_mut(bp.0, len) };
                    r.scatter_add(c, be, global);
                }
                Ok(())
            },
        )?;
    }
    Ok(b)
}
