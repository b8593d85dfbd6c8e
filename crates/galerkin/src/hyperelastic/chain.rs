//! Chains of face neighbours for the Jacobian kernel's carried scatter (thirty-fourth pass, kernel
//! define `HK_CHAIN`): a warp integrates a segment of cells in turn, each the previous one's face
//! neighbour, and keeps the node pairs both share (a face: 6 × 6 node blocks of a P2 tetrahedron's
//! 10 × 10) in shared memory for the next cell instead of adding them to the matrix: a value the two
//! cells share reaches the L2's atomic unit once where it reached it twice. The scatter of every
//! per-cell scheme is bound by that unit on the H100 (thirty-third pass), so fewer adds is what could
//! shorten it. Measured (stop 59, BENCHMARKS.md's thirty-fourth pass): −28 % of the L2 reductions but
//! slower everywhere — a warp holds its segment for as many cell-times, so the cells in flight (and
//! the L2 lines holding partial sums) multiply by the segment's length, and the carry costs
//! registers. Opt-in, kept tested for what it measured.
//!
//! Built on the host once per mesh: a greedy walk over the face graph (Warnsdorff's rule: go on to
//! the free neighbour with the fewest free neighbours, so that the walk leaves few cells stranded),
//! segments of at most `max_len` cells, in the cells' given order otherwise (the walk starts at the
//! first free cell: a locality-ordered mesh keeps its locality).

use crate::error::{Error, Result};
use std::collections::HashMap;

/// The kernel define of the carried scatter (with the default's, `GALERKIN_HYPER_SCHEME=chain`, the
/// sweep's `… chain …` rows).
pub const TC_CHAIN: &[&str] = &["HK_CHAIN"];

/// The host-only extra naming the segments' length (`HK_CHAIN_LEN=n`; [`DEFAULT_LEN`] without it).
pub const LEN_PREFIX: &str = "HK_CHAIN_LEN=";

/// Cells a segment: 33.6 % of the node blocks carried on the sweep's mesh (16: 14.7 cells a segment
/// on average; 8: 31.2 %, 32: 34.6 %), with blocks enough for every SM (16 000 at 10⁶ unknowns).
/// (Shorter segments measured faster on the H100 — 2 cells 1.77 ms, 16 cells 2.65 — none as fast as
/// the default.)
pub const DEFAULT_LEN: usize = 16;

/// The segment length the extras ask for: [`DEFAULT_LEN`] unless one is `HK_CHAIN_LEN=n` (n ≥ 1).
pub fn len_asked(extra: &[&str]) -> Result<usize> {
    match extra.iter().find_map(|d| d.strip_prefix(LEN_PREFIX)) {
        None => Ok(DEFAULT_LEN),
        Some(n) => n.parse::<usize>().ok().filter(|&n| n >= 1).ok_or_else(|| Error::invalid(format!("{LEN_PREFIX}`{n}`: expected a segment length ≥ 1"))),
    }
}

/// The most nodes a link carries (a P2 triangle face's 6; 4 bits per local index).
pub const MAX_SHARED: usize = 6;

/// Cells in segment order with each segment's range and the link of every position to the next.
#[derive(Clone, Debug)]
pub struct Chains {
    /// `order[k]`: the cell (in the given numbering) at position k.
    pub order: Vec<u32>,
    /// Segment s covers positions `seg_ptr[s]..seg_ptr[s + 1]`.
    pub seg_ptr: Vec<u32>,
    /// Position k's link to position k + 1 of its segment (0 at a segment's end): the shared nodes'
    /// local indices in cell k (4 bits each, from bit 0, ascending), the same nodes' local indices
    /// in cell k + 1 (from bit 24, in the same order), and the mask of the first (bits 48–63); the
    /// count is the mask's population.
    pub links: Vec<u64>,
}

/// The shared-node mask of a link (bit i: local node i of the cell is carried to the next).
pub fn link_mask(link: u64) -> u16 {
    (link >> 48) as u16
}

/// The link from the cell with local nodes `a` to the cell with local nodes `b`: their common nodes
/// (at most [`MAX_SHARED`], in `a`'s local order); 0 where they share none.
pub fn link(a: &[usize], b: &[usize]) -> Result<u64> {
    if a.len() > 16 || b.len() > 16 {
        return Err(Error::Unsupported(format!("a chain link indexes local nodes with 4 bits, not {} and {}", a.len(), b.len())));
    }
    let mut v = 0u64;
    let mut s = 0;
    for (i, n) in a.iter().enumerate() {
        if let Some(j) = b.iter().position(|m| m == n) {
            if s == MAX_SHARED {
                break;
            }
            v |= (i as u64) << (4 * s) | (j as u64) << (24 + 4 * s) | 1u64 << (48 + i);
            s += 1;
        }
    }
    Ok(v)
}

impl Chains {
    /// The chains of `cell_verts` (`nv` vertices per cell: the face graph of simplices, faces of
    /// nv − 1 vertices) with the links from `cell_nodes` (`nloc` per cell), segments of at most
    /// `max_len` cells.
    pub fn build(cell_verts: &[usize], nv: usize, cell_nodes: &[usize], nloc: usize, max_len: usize) -> Result<Chains> {
        if nv < 2 || nloc == 0 || max_len == 0 || cell_verts.len() % nv != 0 || cell_nodes.len() != cell_verts.len() / nv * nloc {
            return Err(Error::invalid(format!("chains of {} vertex and {} node entries ({nv} and {nloc} a cell, segments of {max_len})", cell_verts.len(), cell_nodes.len())));
        }
        let n = cell_verts.len() / nv;
        if n > u32::MAX as usize {
            return Err(Error::Unsupported(format!("chains index {n} cells with 32 bits")));
        }
        // The face graph: a face (sorted vertices without one) seen twice joins its two cells.
        let mut faces: HashMap<Vec<usize>, u32> = HashMap::with_capacity(n * nv);
        let mut nbr = vec![u32::MAX; n * nv];
        for c in 0..n {
            let v = &cell_verts[c * nv..(c + 1) * nv];
            for skip in 0..nv {
                let mut f: Vec<usize> = v.iter().enumerate().filter(|&(k, _)| k != skip).map(|(_, &x)| x).collect();
                f.sort_unstable();
                match faces.remove(&f) {
                    Some(o) => {
                        let o = o as usize;
                        let slot = (0..nv).find(|&k| nbr[o * nv + k] == u32::MAX).ok_or_else(|| Error::invalid(format!("cell {o} has more than {nv} face neighbours")))?;
                        nbr[o * nv + slot] = c as u32;
                        nbr[c * nv + skip] = o as u32;
                    }
                    None => {
                        faces.insert(f, c as u32);
                    }
                }
            }
        }
        let mut free = vec![true; n];
        let mut deg: Vec<u8> = (0..n).map(|c| nbr[c * nv..(c + 1) * nv].iter().filter(|&&x| x != u32::MAX).count() as u8).collect();
        let (mut order, mut seg_ptr) = (Vec::with_capacity(n), vec![0u32]);
        for start in 0..n {
            if !free[start] {
                continue;
            }
            let (mut cur, mut len) = (start, 0);
            loop {
                free[cur] = false;
                for &o in nbr[cur * nv..(cur + 1) * nv].iter().filter(|&&x| x != u32::MAX) {
                    deg[o as usize] -= 1;
                }
                order.push(cur as u32);
                len += 1;
                if len == max_len {
                    break;
                }
                let next = nbr[cur * nv..(cur + 1) * nv].iter().filter(|&&x| x != u32::MAX && free[x as usize]).min_by_key(|&&x| (deg[x as usize], x));
                match next {
                    Some(&x) => cur = x as usize,
                    None => break,
                }
            }
            seg_ptr.push(order.len() as u32);
        }
        let mut links = vec![0u64; n];
        for s in 0..seg_ptr.len() - 1 {
            for k in seg_ptr[s] as usize..seg_ptr[s + 1] as usize - 1 {
                let (a, b) = (order[k] as usize, order[k + 1] as usize);
                links[k] = link(&cell_nodes[a * nloc..(a + 1) * nloc], &cell_nodes[b * nloc..(b + 1) * nloc])?;
            }
        }
        Ok(Chains { order, seg_ptr, links })
    }

    /// Segments.
    pub fn len(&self) -> usize {
        self.seg_ptr.len() - 1
    }

    /// No segments (no cells).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The node blocks (i, j) of the cells' element matrices that the links carry instead of adding:
    /// Σ over the links of (shared nodes)².
    pub fn carried_blocks(&self) -> usize {
        self.links.iter().map(|&l| (link_mask(l).count_ones() as usize).pow(2)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate::box_mesh, CellType};
    use crate::space::FunctionSpace;
    use std::sync::Arc;

    fn p2(n: usize) -> (Vec<usize>, Vec<usize>, FunctionSpace) {
        let mesh = Arc::new(box_mesh(n, n, n, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
        let space = FunctionSpace::lagrange(mesh.clone(), 2, 3).unwrap();
        (mesh.cells.clone(), space.dofmap.cell_nodes.clone(), space)
    }

    /// The column walk's L2 sectors a cell (CSR, node blocks) in the mesh's order without chains and
    /// in the chains' order with their carried blocks skipped ([`super::super::blocks::scatter_sectors`]).
    fn sectors(space: &FunctionSpace, ch: &Chains) -> [f64; 4] {
        let (p, slots) = crate::operator::assemble::pattern(space, true).unwrap();
        let rank = slots.unwrap().rank;
        let nodes = &space.dofmap.cell_nodes;
        let nc = nodes.len() / 10;
        let (c0, b0) = super::super::blocks::scatter_sectors(&p, nodes, 10, &rank, 32, None);
        let cn: Vec<usize> = ch.order.iter().flat_map(|&c| nodes[c as usize * 10..c as usize * 10 + 10].iter().copied()).collect();
        let rk: Vec<u16> = ch.order.iter().flat_map(|&c| rank[c as usize * 100..c as usize * 100 + 100].iter().copied()).collect();
        let skip: Vec<u16> = ch.links.iter().map(|&l| link_mask(l)).collect();
        let (c1, b1) = super::super::blocks::scatter_sectors(&p, &cn, 10, &rk, 32, Some(&skip));
        [c0, b0, c1, b1].map(|x| x as f64 / nc as f64)
    }

    /// Every cell once; each segment a walk of face neighbours (6 shared P2 nodes, the links' local
    /// indices naming the same global nodes in both cells); the segments mostly full.
    fn check(n: usize, len: usize) -> Chains {
        let (verts, nodes, space) = p2(n);
        let ch = Chains::build(&verts, 4, &nodes, 10, len).unwrap();
        let nc = verts.len() / 4;
        let mut seen = vec![false; nc];
        for &c in &ch.order {
            assert!(!std::mem::replace(&mut seen[c as usize], true), "cell {c} twice");
        }
        assert!(seen.iter().all(|&s| s));
        for s in 0..ch.len() {
            let (a, b) = (ch.seg_ptr[s] as usize, ch.seg_ptr[s + 1] as usize);
            assert!(b > a && b - a <= len);
            assert_eq!(ch.links[b - 1], 0, "segment {s} ends without a link");
            for k in a..b - 1 {
                let l = ch.links[k];
                assert_eq!(link_mask(l).count_ones(), 6, "position {k}: a P2 face");
                let (ca, cb) = (ch.order[k] as usize, ch.order[k + 1] as usize);
                for t in 0..6 {
                    let (i, j) = ((l >> (4 * t)) & 15, (l >> (24 + 4 * t)) & 15);
                    assert!(link_mask(l) >> i & 1 == 1);
                    assert_eq!(nodes[ca * 10 + i as usize], nodes[cb * 10 + j as usize], "position {k}, shared node {t}");
                }
            }
        }
        let mean = nc as f64 / ch.len() as f64;
        eprintln!("P2 box {n}³, segments of ≤ {len}: {} segments, {mean:.2} cells each, {:.1} % of the node blocks carried", ch.len(), 100.0 * ch.carried_blocks() as f64 / (100 * nc) as f64);
        assert!(mean > 0.75 * len as f64, "segments of {mean:.2} cells on average, of at most {len}");
        let [c0, b0, c1, b1] = sectors(&space, &ch);
        eprintln!("  L2 sectors a cell: CSR {c0:.1} → {c1:.1} ({:.2}), blocks {b0:.1} → {b1:.1} ({:.2})", c1 / c0, b1 / b0);
        if len >= 8 {
            assert!(c1 < 0.8 * c0 && b1 < 0.8 * b0, "CSR {c0:.1} → {c1:.1}, blocks {b0:.1} → {b1:.1}");
        }
        ch
    }

    #[test]
    fn chains_walk_face_neighbours() {
        check(5, 8);
        check(4, 16);
        // A segment of one cell carries nothing.
        assert_eq!(check(3, 1).carried_blocks(), 0);
    }

    /// On the kernel sweep's mesh (34³ boxes of 6 tetrahedra, 235 824 P2 cells; `--ignored`).
    #[test]
    #[ignore]
    fn chains_at_a_million_dofs() {
        for len in [4, 8, 16, 32] {
            check(34, len);
        }
    }

    #[test]
    fn segment_lengths_are_read_from_the_extras() {
        assert_eq!(len_asked(&["HK_CHAIN"]).unwrap(), DEFAULT_LEN);
        assert_eq!(len_asked(&["HK_CHAIN", "HK_CHAIN_LEN=8"]).unwrap(), 8);
        for bad in ["HK_CHAIN_LEN=0", "HK_CHAIN_LEN=x"] {
            assert!(len_asked(&[bad]).unwrap_err().to_string().contains("segment length"), "{bad}");
        }
    }

    #[test]
    fn links_name_the_shared_nodes() {
        assert_eq!(link(&[7, 3, 9], &[9, 1, 7]).unwrap(), (2 << 24) | (2 << 4) | (0 << 28) | 1 << 48 | 1 << 50);
        assert_eq!(link(&[1, 2], &[3, 4]).unwrap(), 0);
        assert!(link(&[0; 17], &[0]).is_err());
        assert!(Chains::build(&[0, 1, 2], 4, &[], 10, 8).is_err());
    }
}
