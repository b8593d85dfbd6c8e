//! The CSR sparsity of a space, built once from the mesh graph, and load vectors summed in
//! parallel, one color at a time, with no locks in the hot loop (the matrix itself is the `full`
//! level's, [`super::level::full`]).
use super::coloring::{Coloring, SharedMut};
use super::integrate::Scratch;
use crate::linalg::CsrMatrix;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// The CSR pattern of `space`'s operators: dof (n, a) couples to (m, b) when nodes n and m share a
/// cell, for all components a, b. Values are zero.
pub fn sparsity(space: &FunctionSpace) -> Result<CsrMatrix> {
    Ok(pattern(space, false)?.0)
}

/// Where each element entry lands in the CSR values, found once with the pattern:
/// `rank[(c·npc + i)·npc + j]` is the rank of node j of cell c among the column nodes of node i's
/// rows, so entry ((i, a), (j, b)) of cell c sits at `row_ptr[node_i·ncomp + a] + rank·ncomp + b`.
/// The hot loop then adds without searching.
pub struct Slots<R = u16> {
    pub rank: Vec<R>,
    pub nodes_per_cell: usize,
}

/// The integer type of [`Slots::rank`]: `u16` always fits (at most 65 536 column nodes per row),
/// `u8` where every row has at most 256 (half the fresh pages and half the reads of the scatter).
pub trait Rank: Copy + Send + Sync + Default + 'static {
    /// Most column nodes per row that the type can rank.
    const MAX_ROW: usize;
    fn from_u32(r: u32) -> Self;
    fn index(self) -> usize;
}

/// `Rank` for an unsigned integer type: it ranks up to 2^BITS column nodes per row.
macro_rules! rank_impl {
    ($($t:ty),*) => {$(
        impl Rank for $t {
            const MAX_ROW: usize = 1 << <$t>::BITS;
            #[inline]
            fn from_u32(r: u32) -> Self {
                r as $t
            }
            #[inline]
            fn index(self) -> usize {
                self as usize
            }
        }
    )*};
}
rank_impl!(u8, u16);

/// [`Slots`] in the narrowest type the mesh allows ([`pattern_compact`]).
pub enum CompactSlots {
    Narrow(Slots<u8>),
    Wide(Slots<u16>),
}

impl CompactSlots {
    /// Entries of the rank table (cells · npc²).
    pub fn len(&self) -> usize {
        match self {
            CompactSlots::Narrow(s) => s.rank.len(),
            CompactSlots::Wide(s) => s.rank.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Nodes per parallel task of the node pass.
const NODE_CHUNK: usize = 512;

thread_local! {
    /// Per thread, per node of the space: a marker (reset after each row) and a rank.
    static NODE_SCRATCH: std::cell::RefCell<(Vec<u32>, Vec<u32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Node → incidence lists (CSR): node n's incidences `c·npc + i` are `inc[start[n]..start[n + 1]]`.
struct Incidences {
    start: Vec<u32>,
    inc: Vec<u32>,
}

impl Incidences {
    /// Counted and filled in parallel with atomics (the order of a node's incidences does not
    /// matter: its columns are sorted by the node pass).
    fn new(space: &FunctionSpace) -> Result<Incidences> {
        let dm = &space.dofmap;
        let nn = dm.num_nodes;
        if nn * space.ncomp > u32::MAX as usize || dm.cell_nodes.len() > u32::MAX as usize {
            return Err(Error::Unsupported(format!("{} dofs or {} cell nodes exceed the 32-bit index range", nn * space.ncomp, dm.cell_nodes.len())));
        }
        let counts: Vec<AtomicU32> = (0..nn + 1).into_par_iter().map(|_| AtomicU32::new(0)).collect();
        dm.cell_nodes.par_iter().for_each(|&n| {
            counts[n + 1].fetch_add(1, Ordering::Relaxed);
        });
        let mut start: Vec<u32> = counts.into_par_iter().map(AtomicU32::into_inner).collect();
        for i in 0..nn {
            start[i + 1] += start[i];
        }
        let fill: Vec<AtomicU32> = start[..nn].par_iter().map(|&s| AtomicU32::new(s)).collect();
        let mut inc = vec![0u32; dm.cell_nodes.len()];
        let ip = SharedMut(inc.as_mut_ptr());
        dm.cell_nodes.par_iter().enumerate().for_each(|(k, &n)| {
            let ip = ip;
            let at = fill[n].fetch_add(1, Ordering::Relaxed);
            // SAFETY: every fetch_add hands out a distinct slot of node n's range.
            unsafe { *ip.0.add(at as usize) = k as u32 };
        });
        Ok(Incidences { start, inc })
    }

    /// An upper bound of the column nodes of any row: a node in d cells of `npc` nodes couples to
    /// at most d·(npc − 1) + 1 nodes.
    fn max_row(&self, npc: usize) -> usize {
        let most = self.start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) as usize;
        most * npc.saturating_sub(1) + 1
    }
}

/// The CSR pattern of `space` and, with `with_slots`, the [`Slots`] of every element entry, in one
/// parallel pass over the nodes: each node visits its cells (node → cell incidences), collects its
/// column nodes with a marker, sorts them, and ranks its cells' nodes among them. No locks: a node
/// owns its row and its incidences.
pub fn pattern(space: &FunctionSpace, with_slots: bool) -> Result<(CsrMatrix, Option<Slots>)> {
    node_pass(space, Incidences::new(space)?, with_slots)
}

/// The CSR pattern and the [`Slots`] as [`pattern`] finds them, the ranks in `u8` where no row can
/// have more than 256 column nodes (P1–P2 tetrahedra, Q1–Q2 hexahedra of a structured mesh), else
/// in `u16`.
pub fn pattern_compact(space: &FunctionSpace) -> Result<(CsrMatrix, CompactSlots)> {
    let inc = Incidences::new(space)?;
    let missing = || Error::invalid("pattern without slots");
    if inc.max_row(space.dofmap.nodes_per_cell) <= u8::MAX_ROW {
        let (a, s) = node_pass::<u8>(space, inc, true)?;
        Ok((a, CompactSlots::Narrow(s.ok_or_else(missing)?)))
    } else {
        let (a, s) = node_pass::<u16>(space, inc, true)?;
        Ok((a, CompactSlots::Wide(s.ok_or_else(missing)?)))
    }
}

/// The node pass of [`pattern`] over the incidences `ic`, ranks of type `R`.
fn node_pass<R: Rank>(space: &FunctionSpace, ic: Incidences, with_slots: bool) -> Result<(CsrMatrix, Option<Slots<R>>)> {
    let dm = &space.dofmap;
    let nn = dm.num_nodes;
    let ncomp = space.ncomp;
    let npc = dm.nodes_per_cell;
    let ncells = dm.num_cells();
    let (start, inc) = (&ic.start[..], &ic.inc[..]);
    let mut rank = if with_slots { vec![R::default(); ncells * npc * npc] } else { Vec::new() };
    let rp = SharedMut(rank.as_mut_ptr());
    let nchunks = nn.div_ceil(NODE_CHUNK);
    // Per chunk: column nodes of its rows, one list after the other, and each row's length.
    let chunks: Vec<(Vec<u32>, Vec<u32>)> = (0..nchunks)
        .into_par_iter()
        .map(|ch| -> Result<(Vec<u32>, Vec<u32>)> {
            let rp = rp;
            NODE_SCRATCH.with(|scratch| {
                let mut scratch = scratch.borrow_mut();
                let (mark, ranks) = &mut *scratch;
                if mark.len() < nn {
                    mark.resize(nn, u32::MAX);
                    ranks.resize(nn, 0);
                }
                let nodes = ch * NODE_CHUNK..((ch + 1) * NODE_CHUNK).min(nn);
                let mut cols: Vec<u32> = Vec::with_capacity(nodes.len() * 32);
                let mut lens = Vec::with_capacity(nodes.len());
                for n in nodes {
                    let s0 = cols.len();
                    let incs = &inc[start[n] as usize..start[n + 1] as usize];
                    for &k in incs {
                        for &m in dm.cell(k as usize / npc) {
                            if mark[m] != n as u32 {
                                mark[m] = n as u32;
                                cols.push(m as u32);
                            }
                        }
                    }
                    let row = &mut cols[s0..];
                    row.sort_unstable();
                    for (r, &m) in row.iter().enumerate() {
                        mark[m as usize] = u32::MAX;
                        ranks[m as usize] = r as u32;
                    }
                    if row.len() > R::MAX_ROW {
                        return Err(Error::Unsupported(format!("node {n} couples to {} nodes (at most {})", row.len(), R::MAX_ROW)));
                    }
                    lens.push(row.len() as u32);
                    if with_slots {
                        for &k in incs {
                            let c = k as usize / npc;
                            for (j, &m) in dm.cell(c).iter().enumerate() {
                                // SAFETY: incidence k = c·npc + i belongs to node n only, so this
                                // task alone writes the slots (k·npc .. k·npc + npc).
                                unsafe { *rp.0.add(k as usize * npc + j) = R::from_u32(ranks[m]) };
                            }
                        }
                    }
                }
                Ok((cols, lens))
            })
        })
        .collect::<Result<_>>()?;
    // Row pointers: node n's ncomp rows each hold len(n)·ncomp entries.
    let mut row_ptr = Vec::with_capacity(nn * ncomp + 1);
    row_ptr.push(0usize);
    let mut chunk_start = Vec::with_capacity(nchunks);
    for (_, lens) in &chunks {
        chunk_start.push(row_ptr.len() - 1);
        for &l in lens {
            for _ in 0..ncomp {
                let last = row_ptr[row_ptr.len() - 1];
                row_ptr.push(last + l as usize * ncomp);
            }
        }
    }
    let nnz = row_ptr[nn * ncomp];
    // The incidences are no longer needed: where they hold enough entries (P1, one component:
    // 4 per tetrahedron against about 2.6 columns per tetrahedron) their pages become the column
    // indices instead of fresh ones (page faults cost ~7 µs each on a VM).
    // Both arrays are written whole by the parallel pass below, so neither is zeroed first.
    let Incidences { inc: mut col_idx, .. } = ic;
    col_idx.clear();
    if col_idx.capacity() < nnz {
        col_idx = Vec::new(); // the incidences freed before the fresh allocation
        col_idx.reserve_exact(nnz);
    }
    // The values are zeroed here by writes, row by row beside the column indices: a zeroed
    // allocation left untouched maps its pages to the zero page on the scatter's first read (`+=`)
    // and faults again on its first write — two faults per page instead of one.
    let mut values: Vec<f64> = Vec::with_capacity(nnz);
    let (cp, vp) = (SharedMut(col_idx.as_mut_ptr()), SharedMut(values.as_mut_ptr()));
    chunks.par_iter().zip(&chunk_start).for_each(|((cols, lens), &r0)| {
        let (cp, vp) = (cp, vp);
        let mut off = 0;
        for (k, &l) in lens.iter().enumerate() {
            let nb = &cols[off..off + l as usize];
            off += l as usize;
            for a in 0..ncomp {
                let s = row_ptr[r0 + k * ncomp + a];
                for (t, &m) in nb.iter().enumerate() {
                    for b in 0..ncomp {
                        // SAFETY: row (n, a) owns the disjoint range row_ptr[n·ncomp + a]..next,
                        // within the capacity of both arrays (nnz).
                        unsafe {
                            *cp.0.add(s + t * ncomp + b) = m * ncomp as u32 + b as u32;
                            vp.0.add(s + t * ncomp + b).write(0.0);
                        }
                    }
                }
            }
        }
    });
    // SAFETY: the rows cover 0..nnz (row_ptr runs from 0 to nnz), so every column index and
    // value was written.
    unsafe {
        col_idx.set_len(nnz);
        values.set_len(nnz);
    }
    col_idx.shrink_to_fit();
    let slots = with_slots.then_some(Slots { rank, nodes_per_cell: npc });
    Ok((CsrMatrix { nrows: nn * ncomp, ncols: nn * ncomp, row_ptr, col_idx, values }, slots))
}

/// Sum per-cell vectors `f(cell, local)` into a global vector (colored, parallel); cells outside
/// `cells_mask` are skipped.
pub fn assemble_vector(
    space: &FunctionSpace,
    coloring: &Coloring,
    cells_mask: Option<&[bool]>,
    f: impl Fn(usize, &mut Scratch, &mut [f64]) -> Result<()> + Sync,
) -> Result<Vec<f64>> {
    assemble_vector_groups(space, coloring, 1, |cells, s, be| {
        let c = cells.start;
        if cells_mask.is_some_and(|m| !m[c]) {
            return Ok(false);
        }
        f(c, s, be).map(|()| true)
    })
}

/// Sum per-cell vectors into a global vector (colored, parallel), `group` consecutive cells of a
/// block at a time: `f(cells, scratch, local)` adds cell `cells.start + k`'s vector into
/// `local[k·nd..(k + 1)·nd]` (zeroed before) and says whether there is anything to sum.
pub fn assemble_vector_groups(
    space: &FunctionSpace,
    coloring: &Coloring,
    group: usize,
    f: impl Fn(std::ops::Range<usize>, &mut Scratch, &mut [f64]) -> Result<bool> + Sync,
) -> Result<Vec<f64>> {
    let (n, dm) = (space.ncomp, &space.dofmap);
    let nd = dm.nodes_per_cell * n;
    let group = group.max(1);
    let mut b = vec![0.0; space.ndofs()];
    let bp = SharedMut(b.as_mut_ptr());
    let len = b.len();
    for color in &coloring.blocks {
        color.par_iter().try_for_each_init(
            || (Scratch::default(), vec![0.0; nd * group]),
            |(s, be), cells| -> Result<()> {
                let bp = bp;
                for start in cells.clone().step_by(group) {
                    let part = start..(start + group).min(cells.end);
                    let local = &mut be[..part.len() * nd];
                    local.fill(0.0);
                    if !f(part.clone(), s, local)? {
                        continue;
                    }
                    // SAFETY: blocks of one color share no dof.
                    let global = unsafe { std::slice::from_raw_parts_mut(bp.0, len) };
                    for (c, be) in part.zip(local.chunks_exact(nd)) {
                        for (i, &node) in dm.cell(c).iter().enumerate() {
                            let s = dm.sign(c, i);
                            for a in 0..n {
                                global[node * n + a] += s * be[i * n + a];
                            }
                        }
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok(b)
}
