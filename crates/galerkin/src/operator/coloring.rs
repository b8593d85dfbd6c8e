//! Cell coloring: cells of one color share no vertex, hence no dof, so their element
//! contributions can be summed into a global matrix or vector in parallel without locks or
//! atomics. Greedy first-fit over cells in order, which gives ~8 colors on structured hexes and a
//! few dozen on tetrahedra.
use crate::mesh::Mesh;

/// Cells grouped by color.
#[derive(Clone, Debug)]
pub struct Coloring {
    pub colors: Vec<Vec<usize>>,
}

impl Coloring {
    pub fn greedy(mesh: &Mesh) -> Coloring {
        let nv = mesh.num_vertices();
        // Per vertex: bit set of the colors already used by cells touching it (in 64-color words).
        let mut used: Vec<u64> = vec![0; nv];
        let mut words = 1usize;
        let mut color_of = vec![0usize; mesh.num_cells()];
        let mut ncolors = 0;
        for c in 0..mesh.num_cells() {
            let verts = mesh.cell(c);
            let mut chosen = None;
            for w in 0..words {
                let mut busy = 0u64;
                for &v in verts {
                    busy |= used[v * words + w];
                }
                if busy != u64::MAX {
                    chosen = Some(w * 64 + (!busy).trailing_zeros() as usize);
                    break;
                }
            }
            let col = match chosen {
                Some(col) => col,
                None => {
                    // All words full: widen the bit sets by one word.
                    let mut wider = vec![0u64; nv * (words + 1)];
                    for v in 0..nv {
                        wider[v * (words + 1)..v * (words + 1) + words].copy_from_slice(&used[v * words..(v + 1) * words]);
                    }
                    used = wider;
                    words += 1;
                    (words - 1) * 64
                }
            };
            for &v in verts {
                used[v * words + col / 64] |= 1 << (col % 64);
            }
            color_of[c] = col;
            ncolors = ncolors.max(col + 1);
        }
        let mut colors = vec![Vec::new(); ncolors];
        for (c, &col) in color_of.iter().enumerate() {
            colors[col].push(c);
        }
        Coloring { colors }
    }

    pub fn num_colors(&self) -> usize {
        self.colors.len()
    }
}

/// A raw pointer that may be shared between threads. Used only where a coloring guarantees the
/// threads write disjoint entries.
#[derive(Clone, Copy)]
pub(crate) struct SharedMut<T>(pub *mut T);
unsafe impl<T> Send for SharedMut<T> {}
unsafe impl<T> Sync for SharedMut<T> {}
