//! The host side of patch assembly (`assemble_patches` in `kernels/assembly.cu`): for each patch of
//! consecutive cells, the distinct CSR values its element entries land on, which entries sum into
//! each, and whether any other patch touches that value.
//!
//! Why: the per-cell kernel issues one global atomic per element entry, and on an H100 that atomic
//! rate (about 6–8·10¹⁰/s whatever the thread layout) bounds assembly, not memory bandwidth. Summing
//! a patch's shared entries in shared memory first, and storing without atomics the values no other
//! patch touches, removes most of those atomics (3× fewer for P2 tetrahedra in patches of 61).
use super::assembly::Variant;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Shared-memory doubles per block for a patch's element matrices (48 KiB, the static limit),
/// passed to `kernels/assembly.cu` as its `PATCH_DOUBLES` define.
pub const PATCH_DOUBLES: usize = 6144;
/// Patches of fewer cells (more than 20 local dofs) save too few atomics to pay for the
/// shared-memory pass (H100: P2 elasticity in 3D, 6 cells per patch, is 17% slower than atomics).
pub const MIN_USEFUL_CELLS: usize = 15;
/// Bit 31 of a value position: no other patch adds to it, so the kernel stores instead of adding.
const EXCLUSIVE: u32 = 1 << 31;

/// Cells per patch for `nd` local dofs, or None where one cell's matrix does not fit.
pub fn patch_cells(nd: usize) -> Option<usize> {
    (cell_stride(nd) <= PATCH_DOUBLES).then(|| PATCH_DOUBLES / cell_stride(nd))
}

/// Shared-memory doubles per cell: nd² and one of padding, so that lanes (one cell each) fall on
/// different banks (`CELL_STRIDE` in the kernel).
fn cell_stride(nd: usize) -> usize {
    nd * nd + 1
}

/// Host lists of one mesh's patches, as `assemble_patches` reads them.
pub struct PatchLists {
    /// Patch p's distinct values are `pos[ptr[p]..ptr[p + 1]]`.
    pub ptr: Vec<u32>,
    /// CSR value index, with [`EXCLUSIVE`] set where only this patch touches it.
    pub pos: Vec<u32>,
    /// Offset, within the patch's `slots`, of the first entry summed into each value.
    pub start: Vec<u16>,
    /// Per patch (at `first cell · nd²`), entries `lc·(nd² + 1) + r·nd + s` of the patch's element
    /// matrices in shared memory, sorted by the value they land on.
    pub slots: Vec<u16>,
}

impl PatchLists {
    /// Builds the lists from the dof map (`cell_nodes`, nloc per cell), the node-blocked CSR rows
    /// (`row_ptr`, with `nnz` values) and `kpos`, the rank of node j among node i's columns for
    /// every (cell, i, j).
    pub fn build(v: &Variant, cell_nodes: &[u32], row_ptr: &[usize], kpos: &[u16], nnz: usize) -> Result<PatchLists> {
        let (nloc, ncomp, nd) = (v.nloc, v.ncomp, v.elem_size());
        let patch = patch_cells(nd).ok_or_else(|| {
            Error::Unsupported(format!(
                "patch assembly keeps a patch's element matrices in shared memory (at most {} local dofs per cell, here {nd}): use atomic",
                (PATCH_DOUBLES as f64).sqrt() as usize
            ))
        })?;
        if nnz >= EXCLUSIVE as usize {
            return Err(Error::Unsupported(format!("patch assembly of {nnz} values (at most 2^31)")));
        }
        let ncells = cell_nodes.len() / nloc;
        let lists: Vec<(Vec<u32>, Vec<u16>, Vec<u16>)> = (0..ncells.div_ceil(patch))
            .into_par_iter()
            .map(|p| {
                let (c0, c1) = (p * patch, ((p + 1) * patch).min(ncells));
                let mut entries: Vec<(u32, u16)> = Vec::with_capacity((c1 - c0) * nd * nd);
                for c in c0..c1 {
                    for i in 0..nloc {
                        let node = cell_nodes[c * nloc + i] as usize;
                        for a in 0..ncomp {
                            let row = row_ptr[node * ncomp + a];
                            for j in 0..nloc {
                                let col0 = row + kpos[(c * nloc + i) * nloc + j] as usize * ncomp;
                                for b in 0..ncomp {
                                    let slot = (c - c0) * cell_stride(nd) + (i * ncomp + a) * nd + j * ncomp + b;
                                    entries.push(((col0 + b) as u32, slot as u16));
                                }
                            }
                        }
                    }
                }
                entries.sort_unstable();
                let (mut pos, mut start) = (Vec::new(), Vec::new());
                for (k, e) in entries.iter().enumerate() {
                    if k == 0 || e.0 != entries[k - 1].0 {
                        pos.push(e.0);
                        start.push(k as u16);
                    }
                }
                (pos, start, entries.into_iter().map(|e| e.1).collect())
            })
            .collect();
        let touches: Vec<AtomicU32> = (0..nnz).map(|_| AtomicU32::new(0)).collect();
        lists.par_iter().for_each(|(pos, _, _)| {
            for &q in pos {
                touches[q as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        let total: usize = lists.iter().map(|l| l.0.len()).sum();
        if total > u32::MAX as usize {
            return Err(Error::Unsupported(format!("patch assembly of {total} patch values (at most 2^32)")));
        }
        let mut out = PatchLists { ptr: vec![0], pos: Vec::with_capacity(total), start: Vec::with_capacity(total), slots: Vec::new() };
        out.slots.reserve(ncells * nd * nd);
        for (pos, start, slots) in lists {
            out.pos.extend(pos.iter().map(|&q| if touches[q as usize].load(Ordering::Relaxed) == 1 { q | EXCLUSIVE } else { q }));
            out.start.extend(start);
            out.slots.extend(slots);
            out.ptr.push(out.pos.len() as u32);
        }
        Ok(out)
    }

    /// Global atomics per assembly over element entries: what the patches save.
    pub fn atomic_fraction(&self) -> f64 {
        let atomics = self.pos.iter().filter(|&&q| q & EXCLUSIVE == 0).count();
        atomics as f64 / self.slots.len().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `n` 1D P1 cells: its tridiagonal pattern's row pointers, the cells and their kpos.
    fn chain(n: usize) -> (Vec<usize>, Vec<u32>, Vec<u16>) {
        let mut row_ptr = vec![0];
        for i in 0..=n {
            row_ptr.push(row_ptr[i] + 1 + usize::from(i > 0) + usize::from(i < n));
        }
        let cells: Vec<u32> = (0..n).flat_map(|c| [c as u32, c as u32 + 1]).collect();
        // Rank of node j among node i's columns (i-1, i, i+1 where they exist).
        let rank = |i: usize, j: usize| (j + usize::from(i > 0) - i) as u16;
        let kpos = (0..n).flat_map(|c| [rank(c, c), rank(c, c + 1), rank(c + 1, c), rank(c + 1, c + 1)]).collect();
        (row_ptr, cells, kpos)
    }

    const P1: Variant = Variant { dim: 1, nv: 2, nloc: 2, nq: 2, ncomp: 1, affine: true, diffusion: true, mass: false, elasticity: false, reftensor: true };

    /// One patch: shared entries are summed there and every value is stored, none added.
    #[test]
    fn one_patch_sums_its_shared_entries() {
        assert_eq!(patch_cells(2), Some(1228));
        let (row_ptr, cells, kpos) = chain(4);
        let l = PatchLists::build(&P1, &cells, &row_ptr, &kpos, 13).unwrap();
        assert_eq!((l.ptr.clone(), l.slots.len()), (vec![0, 13], 16));
        assert_eq!(l.atomic_fraction(), 0.0);
        // The diagonal of node 1 (value 3) sums entry (cell 0, 1, 1) = slot 3 and (cell 1, 0, 0) = slot 5.
        let k = l.pos.iter().position(|&q| q & !EXCLUSIVE == 3).unwrap();
        assert_eq!(&l.slots[l.start[k] as usize..l.start[k + 1] as usize], &[3, 5]);
    }

    /// Three patches: only the diagonals of the two nodes between patches are added atomically, and
    /// every entry of a patch is summed exactly once.
    #[test]
    fn only_values_between_patches_are_atomic() {
        let patch = patch_cells(2).unwrap();
        let n = 2 * patch + 600;
        let (row_ptr, cells, kpos) = chain(n);
        let nnz = row_ptr[n + 1];
        let l = PatchLists::build(&P1, &cells, &row_ptr, &kpos, nnz).unwrap();
        assert_eq!(l.ptr.len(), 4);
        let shared: Vec<u32> = l.pos.iter().filter(|&&q| q & EXCLUSIVE == 0).copied().collect();
        // Each appears in the lists of both patches around it.
        let (a, b) = (row_ptr[patch] as u32 + 1, row_ptr[2 * patch] as u32 + 1);
        assert_eq!(shared, vec![a, a, b, b]);
        assert_eq!(l.slots.len(), 4 * n);
        // The first patch's slots are its cells' 4 entries at stride 5, each once.
        let mut first = l.slots[..4 * patch].to_vec();
        first.sort_unstable();
        assert!(first.iter().enumerate().all(|(k, &s)| s as usize == k / 4 * 5 + k % 4));
        // Too large a cell is refused with a pointer to the atomic scatter.
        let e = PatchLists::build(&Variant { nloc: 80, ..P1 }, &[], &row_ptr, &[], nnz).err().unwrap();
        assert!(e.to_string().contains("atomic"), "{e}");
    }
}
