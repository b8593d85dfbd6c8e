//! Block coloring: blocks of cells of one color share no vertex, hence no dof, so their element
//! contributions can be summed into a global matrix or vector in parallel without locks or
//! atomics. Greedy first-fit over blocks of consecutive cells.
use crate::mesh::Mesh;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Colorings made so far in this process: with the block, the stamp of [`STAMP`] (never 0).
static COLORINGS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Per thread, per vertex: the (coloring, block) that last listed it.
    static STAMP: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Blocks of consecutive cells grouped by color.
#[derive(Clone, Debug)]
pub struct Coloring {
    /// Runs of consecutive cells per color: a CPU thread takes a whole block, so the matrix rows
    /// it touches stay in cache, which per-cell colors would spread over the whole mesh.
    pub blocks: Vec<Vec<std::ops::Range<usize>>>,
}

/// Most consecutive cells per block in [`Coloring::blocks`].
pub const BLOCK_CELLS: usize = 2048;

/// Cells per block for a mesh of `ncells`: [`BLOCK_CELLS`] on large meshes; smaller (down to 64)
/// where that would leave too few blocks per color to keep the threads busy — a P2 mesh of 25 000
/// cells had 12 blocks in all, so a 16-thread assembly ran no faster than one thread. A function
/// of the mesh alone, so results do not depend on the thread count.
pub fn block_cells(ncells: usize) -> usize {
    (ncells / 256).clamp(64, BLOCK_CELLS)
}

impl Coloring {
    /// First-fit colors of blocks of [`block_cells`] cells: blocks of one color share no vertex.
    pub fn greedy(mesh: &Mesh) -> Coloring {
        let ncells = mesh.num_cells();
        let size = block_cells(ncells);
        let nblocks = ncells.div_ceil(size);
        let range = |b: usize| b * size..((b + 1) * size).min(ncells);
        // The blocks' vertex sets in parallel; only the first-fit pass over blocks is serial.
        // Each thread keeps a stamp per vertex (this coloring and the block that last listed it),
        // so a block's distinct vertices are collected in one pass over its cells: no sort (which
        // took most of the coloring's 0.04 s at 1.3·10⁶ tetrahedra) and no list with repeats.
        // Stored as `u32` (half the fresh pages); the order within a set does not change
        // first-fit's colors.
        let nv = mesh.num_vertices();
        let call = COLORINGS.fetch_add(1, Ordering::Relaxed) + 1;
        let sets: Vec<Vec<u32>> = (0..nblocks)
            .into_par_iter()
            .map(|b| {
                let key = (call << 32) | b as u64;
                STAMP.with(|stamp| {
                    let mut stamp = stamp.borrow_mut();
                    if stamp.len() < nv {
                        stamp.resize(nv, 0);
                    }
                    let mut set = Vec::new();
                    for c in range(b) {
                        for &v in mesh.cell(c) {
                            if stamp[v] != key {
                                stamp[v] = key;
                                set.push(v as u32);
                            }
                        }
                    }
                    set
                })
            })
            .collect();
        let block_colors = first_fit(nv, nblocks, |b| sets[b].iter().map(|&v| v as usize).collect());
        let mut blocks = vec![Vec::new(); block_colors.iter().max().map_or(0, |m| m + 1)];
        for (b, &col) in block_colors.iter().enumerate() {
            blocks[col].push(range(b));
        }
        Coloring { blocks }
    }

    pub fn num_colors(&self) -> usize {
        self.blocks.len()
    }
}

/// Per-cell first-fit colors, as lists of cells per color: cells of one color share no vertex. The
/// GPU runs one launch per color with one thread group per cell, where blocks of 2048 cells would
/// leave too few independent cells per color to fill the device.
pub fn cell_colors(mesh: &Mesh) -> Vec<Vec<u32>> {
    let colors = first_fit(mesh.num_vertices(), mesh.num_cells(), |c| mesh.cell(c).to_vec());
    let mut lists = vec![Vec::new(); colors.iter().max().map_or(0, |m| m + 1)];
    for (c, &col) in colors.iter().enumerate() {
        lists[col].push(c as u32);
    }
    lists
}

/// First-fit coloring of `n` items so that items sharing a vertex differ in color; per vertex a
/// bit set of the colors already used around it, widened 64 colors at a time.
pub(crate) fn first_fit(nv: usize, n: usize, verts: impl Fn(usize) -> Vec<usize>) -> Vec<usize> {
    // Zeroed by writes: a zeroed allocation's pages fault twice here (read, then write).
    let mut used: Vec<u64> = Vec::with_capacity(nv);
    used.resize(nv, 0);
    let mut words = 1usize;
    let mut color_of = vec![0usize; n];
    for (i, color) in color_of.iter_mut().enumerate() {
        let vs = verts(i);
        let mut chosen = None;
        for w in 0..words {
            let busy = vs.iter().fold(0u64, |b, &v| b | used[v * words + w]);
            if busy != u64::MAX {
                chosen = Some(w * 64 + (!busy).trailing_zeros() as usize);
                break;
            }
        }
        let col = match chosen {
            Some(col) => col,
            None => {
                let mut wider = vec![0u64; nv * (words + 1)];
                for v in 0..nv {
                    wider[v * (words + 1)..v * (words + 1) + words].copy_from_slice(&used[v * words..(v + 1) * words]);
                }
                used = wider;
                words += 1;
                (words - 1) * 64
            }
        };
        for &v in &vs {
            used[v * words + col / 64] |= 1 << (col % 64);
        }
        *color = col;
    }
    color_of
}

/// A raw pointer that may be shared between threads. Used only where a coloring guarantees the
/// threads write disjoint entries.
#[derive(Clone, Copy)]
pub(crate) struct SharedMut<T>(pub *mut T);
unsafe impl<T> Send for SharedMut<T> {}
unsafe impl<T> Sync for SharedMut<T> {}
