//! The host side of patch assembly (`assemble_patches` in `kernels/assembly.cu`): for each patch of
//! cells, consecutive along a space-filling curve, the distinct pairs of CSR values (a_RC, a_CR)
//! its element entries land on, which entries of the cells' upper triangles sum into each, and
//! whether any other patch touches them.
//!
//! Why: the per-cell kernel issues one global atomic per element entry, and on an H100 that atomic
//! rate (about 6–8·10¹⁰/s whatever the thread layout) bounds assembly, not memory bandwidth. Summing
//! a patch's shared entries in shared memory first, and storing without atomics the values no other
//! patch touches, removes most of those atomics. Element matrices are symmetric, so a patch keeps
//! only their upper triangles and sums each pair of transposed values once: half the shared memory,
//! the integration, the shared-memory reads and the lists.
use super::cuda::Variant;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Shared-memory doubles per block for a patch's element triangles, passed to
/// `kernels/assembly.cu` as its `PATCH_DOUBLES` define: 24 KiB where that holds 32 cells, else 48
/// KiB (the static limit). Four blocks of 256 threads fit an SM either way (registers bound them),
/// and on an H100 the smaller patches are faster where they hold enough cells (P2 tetrahedra: 55
/// cells in 0.725 ms against 111 in 0.793 ms at 10⁶ unknowns). `tuned`
/// ([`Tuning::patch_doubles`](crate::operator::level::Tuning)) overrides it (256 to 6144).
pub fn patch_doubles(nloc: usize, ncomp: usize, tuned: Option<usize>) -> usize {
    const SMALL: usize = 3072;
    const MAX: usize = 6144;
    if let Some(d) = tuned {
        return d.clamp(256, MAX);
    }
    if (SMALL - 1) / cell_stride(nloc, ncomp) >= 32 { SMALL } else { MAX }
}

/// Bit 31 of a value position: no other patch adds to it, so the kernel stores instead of adding.
const EXCLUSIVE: u32 = 1 << 31;

/// Cells per patch for `nloc` nodes of `ncomp` components, or None where one cell's triangle does
/// not fit. One double after the patch's triangles stays zero: the padding slot.
pub fn patch_cells(nloc: usize, ncomp: usize, tuned: Option<usize>) -> Option<usize> {
    let (stride, doubles) = (cell_stride(nloc, ncomp), patch_doubles(nloc, ncomp, tuned));
    (stride < doubles).then(|| (doubles - 1) / stride)
}

/// Cells per patch of variant `v`: as many as fit (`patch_cells`), trimmed to whole rounds of the
/// block's threads where they fill one or more. `assemble_patches` integrates a cell with
/// `items_per_cell` threads, so 55 P2 tetrahedra (5 row pairs each) would make 275 items for 256
/// threads: a second round for 19 of them, while the other threads wait at the barrier. 51 cells
/// take one (H100: P2 Poisson in 3D 0.672 against 0.685 ms, 2D 0.238 against 0.269 ms).
pub fn fitted_patch_cells(v: &Variant) -> Option<usize> {
    let max = patch_cells(v.nloc, v.ncomp, v.tuning.patch_doubles)?;
    let items = if v.reftensor { v.nloc.div_ceil(2) } else { v.threads_per_cell() };
    Some(fit_rounds(max, items, crate::backend::cuda::jit::BLOCK_SIZE as usize))
}

/// At most `max` cells of `items` threads each, trimmed to whole rounds of a `block`; never 0 (a
/// cell of more items than the block has threads, scalar trunk p = 6, takes its rounds alone: 0
/// cells would have stopped the kernel's compile at its `PATCH >= 1` assertion).
fn fit_rounds(max: usize, items: usize, block: usize) -> usize {
    let rounds = max * items / block;
    if rounds == 0 { max } else { (rounds * block / items).clamp(1, max) }
}

/// Shared-memory doubles per cell: the node blocks (i ≤ j) of the upper triangle, ncomp² each,
/// rounded up to odd so that lanes (one cell each) fall on different banks (`CELL_STRIDE` in the
/// kernel).
fn cell_stride(nloc: usize, ncomp: usize) -> usize {
    (nloc * (nloc + 1) / 2 * ncomp * ncomp) | 1
}

/// Offset of node block (i, j), i ≤ j, in a cell's row-major upper triangle (`upper_block`).
fn upper_block(nloc: usize, i: usize, j: usize) -> usize {
    i * nloc - i * i.saturating_sub(1) / 2 + (j - i)
}

/// Runs of a patch's pairs (in CSR order) that [`PatchLists::build`] sorts longest list first:
/// all of them on linear elements (nloc = dim + 1), none (1) otherwise. Sorting pads the slices
/// far less (P2 tetrahedra: 1.15× the entries instead of 3.3×, where a vertex's diagonal sums
/// two dozen cells and most pairs one or two) but scatters a warp's stores over the patch's rows.
/// On an H100 at 10⁶ unknowns that made P1 faster (3D Poisson 0.577 → 0.494 ms, elasticity 1.49 →
/// 1.31 ms) and P2/P3 slower (3D Poisson P2 0.640 → 0.670 ms, P3 1.08 → 1.24 ms; BENCHMARKS.md).
/// [`Tuning::patch_sort_window`](crate::operator::level::Tuning) overrides it for tuning sweeps.
fn sort_window(v: &Variant) -> usize {
    v.tuning.patch_sort_window.unwrap_or(if v.nloc <= v.dim + 1 { usize::MAX } else { 1 }).max(1)
}

/// Pairs a warp sums together: one slice of the lists.
const SLICE: usize = 32;

/// Host lists of one mesh's patches, as `assemble_patches` reads them.
///
/// A patch's value pairs are cut into slices of 32 (one per warp); a slice's entry lists are
/// stored column by column (entry k of its 32 pairs side by side, padded with the zero slot to the
/// slice's longest list), so a warp's index loads are coalesced. The pairs go in CSR order, so a
/// warp's stores land in few rows, except on linear elements, where they go longest list first
/// ([`sort_window`]).
pub struct PatchLists {
    /// The cells in patch order: patch p is `order[p·cells .. (p+1)·cells]`.
    pub order: Vec<u32>,
    /// Patch p's value pairs are `pos[ptr[p]..ptr[p + 1]]`.
    pub ptr: Vec<u32>,
    /// Patch p's first slice; its pair r is in slice `slice_ptr[p] + r / 32`.
    pub slice_ptr: Vec<u32>,
    /// Slice s's entry lists are `slots[slice_base[s]..slice_base[s + 1]]`, 32 per column.
    pub slice_base: Vec<u32>,
    /// CSR index of a_RC (R ≤ C), with [`EXCLUSIVE`] set where only this patch touches it.
    pub pos: Vec<u32>,
    /// CSR index of a_CR (equal to `pos` on the diagonal), exclusive with a_RC.
    pub tpos: Vec<u32>,
    /// Shared-memory slots of the entries of each pair, sliced as above.
    pub slots: Vec<u16>,
    /// The zero slot that pads short lists.
    zero: u16,
    /// Element entries per assembly (cells · nd²), what the atomic kernel adds one by one.
    entries: usize,
}

/// One patch's lists before they are concatenated: pos, tpos, slice widths, sliced slots.
type PatchPart = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u16>);

impl PatchLists {
    /// Builds the lists from the dof map (`cell_nodes`, nloc per cell), the node-blocked CSR rows
    /// (`row_ptr`, with `nnz` values), `kpos` (the rank of node j among node i's columns for every
    /// (cell, i, j)) and `order`, the cells in patch order.
    pub fn build(v: &Variant, cell_nodes: &[u32], row_ptr: &[usize], kpos: &[u16], nnz: usize, order: Vec<u32>) -> Result<PatchLists> {
        let (nloc, ncomp, nd) = (v.nloc, v.ncomp, v.elem_size());
        let patch = fitted_patch_cells(v).ok_or_else(|| {
            Error::Unsupported(format!(
                "patch assembly keeps a patch's element triangles in shared memory ({} doubles per cell, at most {}): use atomic",
                cell_stride(nloc, ncomp),
                patch_doubles(nloc, ncomp, v.tuning.patch_doubles) - 1
            ))
        })?;
        if nnz >= EXCLUSIVE as usize {
            return Err(Error::Unsupported(format!("patch assembly of {nnz} values (at most 2^31)")));
        }
        let ncells = cell_nodes.len() / nloc;
        if order.len() != ncells {
            return Err(Error::dim("patch cell order", ncells, order.len()));
        }
        let stride = cell_stride(nloc, ncomp);
        let window = sort_window(v);
        let zero = (patch * stride) as u16;
        let lists: Vec<PatchPart> = order
            .par_chunks(patch)
            .map(|cells| {
                // (a_RC, a_CR, slot) for every local (r, s) whose global row R ≤ column C.
                let mut entries: Vec<(u32, u32, u16)> = Vec::with_capacity(cells.len() * nd * (nd + 1) / 2);
                for (lc, &c) in cells.iter().enumerate() {
                    let c = c as usize;
                    let nodes = &cell_nodes[c * nloc..(c + 1) * nloc];
                    if (1..nloc).any(|i| nodes[..i].contains(&nodes[i])) {
                        return Err(Error::Unsupported(format!("patch assembly of cell {c}, which repeats a node: use atomic")));
                    }
                    for i in 0..nloc {
                        for j in 0..nloc {
                            let (ni, nj) = (nodes[i] as usize * ncomp, nodes[j] as usize * ncomp);
                            let (kij, kji) = (kpos[(c * nloc + i) * nloc + j] as usize, kpos[(c * nloc + j) * nloc + i] as usize);
                            for a in 0..ncomp {
                                for b in 0..ncomp {
                                    if ni + a > nj + b {
                                        continue;
                                    }
                                    let pos = row_ptr[ni + a] + kij * ncomp + b;
                                    let tpos = row_ptr[nj + b] + kji * ncomp + a;
                                    // The stored triangle holds block (min, max); a_(ia)(jb) = a_(jb)(ia).
                                    let local = if i <= j {
                                        (upper_block(nloc, i, j) * ncomp + a) * ncomp + b
                                    } else {
                                        (upper_block(nloc, j, i) * ncomp + b) * ncomp + a
                                    };
                                    entries.push((pos as u32, tpos as u32, (lc * stride + local) as u16));
                                }
                            }
                        }
                    }
                }
                entries.sort_unstable();
                // Each pair's run of entries, in CSR order, then longest first within windows.
                let mut runs: Vec<&[(u32, u32, u16)]> = entries.chunk_by(|x, y| x.0 == y.0).collect();
                for w in runs.chunks_mut(window) {
                    w.sort_by_key(|r| std::cmp::Reverse(r.len()));
                }
                let (mut widths, mut slots) = (Vec::new(), Vec::new());
                for slice in runs.chunks(SLICE) {
                    let width = slice.iter().map(|r| r.len()).max().unwrap_or(0);
                    widths.push(width as u32);
                    for k in 0..width {
                        slots.extend((0..SLICE).map(|lane| slice.get(lane).and_then(|r| r.get(k)).map_or(zero, |e| e.2)));
                    }
                }
                Ok((runs.iter().map(|r| r[0].0).collect(), runs.iter().map(|r| r[0].1).collect(), widths, slots))
            })
            .collect::<Result<_>>()?;
        let touches: Vec<AtomicU32> = (0..nnz).map(|_| AtomicU32::new(0)).collect();
        lists.par_iter().for_each(|(pos, ..)| {
            for &q in pos {
                touches[q as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        let total: usize = lists.iter().map(|l| l.0.len()).sum();
        let nslots: usize = lists.iter().map(|l| l.3.len()).sum();
        if total.max(nslots) > u32::MAX as usize {
            return Err(Error::Unsupported(format!("patch assembly of {total} value pairs and {nslots} slots (at most 2^32)")));
        }
        let mut out = PatchLists {
            order,
            ptr: vec![0],
            slice_ptr: vec![0],
            slice_base: vec![0],
            pos: Vec::with_capacity(total),
            tpos: Vec::with_capacity(total),
            slots: Vec::with_capacity(nslots),
            zero,
            entries: ncells * nd * nd,
        };
        for (pos, tpos, widths, slots) in lists {
            out.pos.extend(pos.iter().map(|&q| if touches[q as usize].load(Ordering::Relaxed) == 1 { q | EXCLUSIVE } else { q }));
            out.tpos.extend(tpos);
            for w in widths {
                let base = *out.slice_base.last().unwrap_or(&0);
                out.slice_base.push(base + w * SLICE as u32);
            }
            out.slots.extend(slots);
            out.ptr.push(out.pos.len() as u32);
            out.slice_ptr.push(out.slice_base.len() as u32 - 1);
        }
        Ok(out)
    }

    /// The slots summed into pair `r` of patch `p` (padding left out).
    pub fn pair_slots(&self, p: usize, r: usize) -> Vec<u16> {
        let s = self.slice_ptr[p] as usize + r / SLICE;
        let (b, e) = (self.slice_base[s] as usize, self.slice_base[s + 1] as usize);
        self.slots[b..e].iter().skip(r % SLICE).step_by(SLICE).copied().filter(|&x| x != self.zero).collect()
    }

    /// Global atomics per assembly over element entries: what the patches save.
    pub fn atomic_fraction(&self) -> f64 {
        let atomics: usize = self
            .pos
            .iter()
            .zip(&self.tpos)
            .filter(|(&q, _)| q & EXCLUSIVE == 0)
            .map(|(&q, &t)| if q == t { 1 } else { 2 })
            .sum();
        atomics as f64 / self.entries.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, ordering::hilbert_cell_order, CellType};
    use crate::space::FunctionSpace;
    use std::sync::Arc;

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

    fn identity(n: usize) -> Vec<u32> {
        (0..n as u32).collect()
    }

    fn p1() -> Variant {
        Variant { dim: 1, nv: 2, nloc: 2, nq: 2, ncomp: 1, affine: true, qf: "Diffusion".into(), full_gradient: false, reftensor: true, tuning: Default::default() }
    }

    /// One patch: each transposed pair is summed once (3 of a cell's 4 entries are listed), and
    /// every value is stored, none added.
    #[test]
    fn one_patch_sums_its_shared_entries_once_per_pair() {
        // 1023 cells fit; three rounds of 256 threads take 768 (one row pair each).
        assert_eq!((patch_cells(2, 1, None), fitted_patch_cells(&p1())), (Some(1023), Some(768)));
        // P2 tetrahedra: 55 fit in 24 KiB, 51 make one round of 5 row pairs each.
        let p2 = Variant { dim: 3, nv: 4, nloc: 10, ncomp: 1, ..p1() };
        assert_eq!((patch_cells(10, 1, None), fitted_patch_cells(&p2)), (Some(55), Some(51)));
        let (row_ptr, cells, kpos) = chain(4);
        let l = PatchLists::build(&p1(), &cells, &row_ptr, &kpos, 13, identity(4)).unwrap();
        // 5 diagonals and 4 off-diagonal pairs in one slice, two entries deep (the three inner
        // diagonals sum two cells each; the rest are padded with the zero slot).
        assert_eq!((l.ptr.clone(), l.slice_base.clone(), l.zero), (vec![0, 9], vec![0, 64], 768 * 3));
        assert_eq!(l.atomic_fraction(), 0.0);
        let find = |q: u32| l.pos.iter().position(|&p| p & !EXCLUSIVE == q).unwrap();
        // The diagonal of node 1 (value 3) sums (cell 0, 1, 1) = slot 2 and (cell 1, 0, 0) = slot 3.
        let k = find(3);
        assert_eq!((l.pair_slots(0, k), l.tpos[k]), (vec![2, 3], 3));
        // a_01 (value 1) and a_10 (value 2) are one pair, from the upper entry of cell 0 (slot 1).
        let k = find(1);
        assert_eq!((l.pair_slots(0, k), l.tpos[k]), (vec![1], 2));
        assert!(l.pos.iter().all(|&p| p & !EXCLUSIVE != 2), "a_10 is written through its pair");
    }

    /// Three patches: only the diagonals of the two nodes between patches are added atomically; a
    /// patch order that scatters neighbours makes almost every diagonal atomic.
    #[test]
    fn only_values_between_patches_are_atomic() {
        let patch = fitted_patch_cells(&p1()).unwrap();
        let n = 2 * patch + 600;
        let (row_ptr, cells, kpos) = chain(n);
        let nnz = row_ptr[n + 1];
        let l = PatchLists::build(&p1(), &cells, &row_ptr, &kpos, nnz, identity(n)).unwrap();
        assert_eq!(l.ptr.len(), 4);
        let shared: Vec<u32> = l.pos.iter().filter(|&&q| q & EXCLUSIVE == 0).copied().collect();
        // Each appears in the lists of both patches around it.
        let (a, b) = (row_ptr[patch] as u32 + 1, row_ptr[2 * patch] as u32 + 1);
        assert_eq!(shared, vec![a, a, b, b]);
        assert_eq!(l.atomic_fraction(), 4.0 / (4 * n) as f64);
        // The first patch's slots are its cells' 3 triangle entries at stride 3, each once.
        let mut first: Vec<u16> = (0..l.ptr[1] as usize).flat_map(|r| l.pair_slots(0, r)).collect();
        first.sort_unstable();
        assert!(first.len() == 3 * patch && first.iter().enumerate().all(|(k, &s)| s as usize == k));
        // Even cells, then odd ones: the two patches share every inner node's diagonal.
        let n = 2 * patch;
        let (row_ptr, cells, kpos) = chain(n);
        let order: Vec<u32> = (0..n as u32).step_by(2).chain((1..n as u32).step_by(2)).collect();
        let l = PatchLists::build(&p1(), &cells, &row_ptr, &kpos, row_ptr[n + 1], order).unwrap();
        assert_eq!(l.atomic_fraction(), (2 * (n - 1)) as f64 / (4 * n) as f64);
        // Too large a cell is refused with a pointer to the atomic scatter, and so is a wrong order.
        let e = PatchLists::build(&Variant { nloc: 120, ..p1() }, &[], &row_ptr, &[], nnz, vec![]).err().unwrap();
        assert!(e.to_string().contains("atomic"), "{e}");
        assert!(PatchLists::build(&p1(), &cells, &row_ptr, &kpos, row_ptr[n + 1], identity(n - 1)).is_err());
    }

    /// What `assemble_patches` computes, on the host: the upper triangles of symmetric element
    /// matrices in "shared memory", one sum per listed pair, written to both values. Checks that a
    /// value stored without an atomic is written by no other pair.
    fn emulate_kernel(l: &PatchLists, v: &Variant, ke: &dyn Fn(usize) -> Vec<f64>, nnz: usize) -> Vec<f64> {
        let (nloc, ncomp, nd) = (v.nloc, v.ncomp, v.elem_size());
        let (patch, stride, nsym) = (fitted_patch_cells(v).unwrap(), cell_stride(nloc, ncomp), nd * (nd + 1) / 2);
        let (mut values, mut writes) = (vec![0.0; nnz], vec![0u32; nnz]);
        let mut stored = vec![false; nnz];
        for (p, cells) in l.order.chunks(patch).enumerate() {
            let mut e = vec![f64::NAN; patch * stride + 1];
            for (lc, &c) in cells.iter().enumerate() {
                let k = ke(c as usize);
                for i in 0..nloc {
                    for j in i..nloc {
                        for a in 0..ncomp {
                            for b in 0..ncomp {
                                e[lc * stride + (upper_block(nloc, i, j) * ncomp + a) * ncomp + b] = k[(i * ncomp + a) * nd + j * ncomp + b];
                            }
                        }
                    }
                }
            }
            e[l.zero as usize] = 0.0;
            let (u0, u1) = (l.ptr[p] as usize, l.ptr[p + 1] as usize);
            let mut listed = 0;
            for u in u0..u1 {
                // What a lane of the warp of slice (u - u0) / 32 reads, padding included.
                let (r, s) = (u - u0, l.slice_ptr[p] as usize + (u - u0) / SLICE);
                let (b, end) = (l.slice_base[s] as usize, l.slice_base[s + 1] as usize);
                let sum: f64 = l.slots[b + r % SLICE..end].iter().step_by(SLICE).map(|&k| e[k as usize]).sum();
                listed += l.pair_slots(p, r).len();
                let (pos, exclusive) = ((l.pos[u] & !EXCLUSIVE) as usize, l.pos[u] & EXCLUSIVE != 0);
                let targets = if l.tpos[u] as usize == pos { vec![pos] } else { vec![pos, l.tpos[u] as usize] };
                for q in targets {
                    values[q] += sum;
                    writes[q] += 1;
                    stored[q] |= exclusive;
                }
            }
            assert_eq!(listed, cells.len() * nsym, "every triangle entry of a patch is listed once");
        }
        assert!((0..nnz).all(|q| !stored[q] || writes[q] == 1), "a stored value is also written by another pair");
        values
    }

    /// The lists reproduce direct assembly for vector P2 triangles and scalar P2 tetrahedra, in
    /// mesh and Hilbert order, and Hilbert patches need fewer atomics.
    #[test]
    fn patch_lists_reproduce_direct_assembly() {
        let cases = [
            (generate::rectangle(40, 40, [0.0; 2], [1.0; 2], CellType::Triangle).unwrap(), 2),
            (generate::box_mesh(8, 8, 8, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap(), 1),
        ];
        for (mesh, ncomp) in cases {
            let mesh = Arc::new(mesh);
            let space = FunctionSpace::lagrange(mesh.clone(), 2, ncomp).unwrap();
            let a = crate::operator::assemble::sparsity(&space).unwrap();
            let nloc = space.dofmap.nodes_per_cell;
            let nd = nloc * ncomp;
            let v = Variant { dim: mesh.dim, nv: mesh.dim + 1, nloc, nq: 1, ncomp, affine: true, qf: "Diffusion".into(), full_gradient: ncomp > 1, reftensor: true, tuning: Default::default() };
            let nodes: Vec<u32> = space.dofmap.cell_nodes.iter().map(|&n| n as u32).collect();
            let mut kpos = Vec::new();
            for c in 0..mesh.num_cells() {
                for i in 0..nloc {
                    let row = nodes[c * nloc + i] as usize * ncomp;
                    let cols = &a.col_idx[a.row_ptr[row]..a.row_ptr[row + 1]];
                    for j in 0..nloc {
                        kpos.push((cols.binary_search(&(nodes[c * nloc + j] * ncomp as u32)).unwrap() / ncomp) as u16);
                    }
                }
            }
            // Symmetric, different in every cell and entry.
            let ke = |c: usize| {
                let mut k = vec![0.0; nd * nd];
                for r in 0..nd {
                    for s in 0..nd {
                        k[r * nd + s] = ((c * 131 + r.min(s) * 17 + r.max(s) * 7) as f64).sin();
                    }
                }
                k
            };
            let mut direct = vec![0.0; a.nnz()];
            for c in 0..mesh.num_cells() {
                let k = ke(c);
                for i in 0..nloc {
                    for j in 0..nloc {
                        let col0 = kpos[(c * nloc + i) * nloc + j] as usize * ncomp;
                        for x in 0..ncomp {
                            for y in 0..ncomp {
                                direct[a.row_ptr[nodes[c * nloc + i] as usize * ncomp + x] + col0 + y] += k[(i * ncomp + x) * nd + j * ncomp + y];
                            }
                        }
                    }
                }
            }
            let mut fractions = Vec::new();
            for order in [identity(mesh.num_cells()), hilbert_cell_order(&mesh)] {
                let l = PatchLists::build(&v, &nodes, &a.row_ptr, &kpos, a.nnz(), order).unwrap();
                assert!(l.ptr.len() > 2, "several patches");
                let got = emulate_kernel(&l, &v, &ke, a.nnz());
                let err = got.iter().zip(&direct).map(|(g, d)| (g - d).abs()).fold(0.0, f64::max);
                assert!(err < 1e-12, "{ncomp} components: patch sums differ from direct assembly by {err}");
                fractions.push(l.atomic_fraction());
            }
            eprintln!("{ncomp} components: atomics per entry in mesh and Hilbert order {fractions:?}");
            assert!(fractions[1] < 0.8 * fractions[0], "Hilbert patches should need fewer atomics: {fractions:?}");
        }
    }
}

#[cfg(test)]
mod fit_tests {
    use super::fit_rounds;

    #[test]
    fn patches_keep_at_least_one_cell() {
        assert_eq!(fit_rounds(55, 5, 256), 51); // P2 tetrahedra: one round of the block
        assert_eq!(fit_rounds(10, 5, 256), 10); // fewer items than the block: all that fit
        assert_eq!(fit_rounds(1, 300, 256), 1); // one cell wider than the block (was 0)
        assert_eq!(fit_rounds(2, 300, 256), 1);
    }
}
