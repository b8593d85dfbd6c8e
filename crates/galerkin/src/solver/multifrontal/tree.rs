//! Elimination trees over elements, built by recursive bisection: a binary tree over an interval of
//! elements in 1D, nested dissection of the element grid in 2D (cut the longer side in the middle).
//! Leaves are the elements (node id = element id); internal nodes follow. The leaves are also
//! numbered in depth-first order, so the lowest common ancestor of a set of leaves is that of its
//! leftmost and rightmost leaf.
use crate::{Error, Result};

/// A rooted tree whose first `nleaves` nodes are the elements.
#[derive(Clone, Debug)]
pub struct EliminationTree {
    pub nleaves: usize,
    /// Parent of each node; `u32::MAX` for the root.
    pub parent: Vec<u32>,
    /// Depth-first range `[lo, hi]` of the leaves under each node.
    pub lo: Vec<u32>,
    pub hi: Vec<u32>,
    /// Depth-first position of each leaf.
    pub dfs: Vec<u32>,
    /// The leaf at each depth-first position.
    pub leaf_at: Vec<u32>,
    pub root: usize,
}

struct Builder {
    parent: Vec<u32>,
    lo: Vec<u32>,
    hi: Vec<u32>,
    dfs: Vec<u32>,
    leaf_at: Vec<u32>,
}

impl Builder {
    fn new(nleaves: usize) -> Result<Builder> {
        if nleaves == 0 {
            return Err(Error::invalid("an elimination tree needs at least one element"));
        }
        if 2 * nleaves > u32::MAX as usize {
            return Err(Error::invalid(format!("{nleaves} elements exceed the u32 node numbering of the elimination tree")));
        }
        let total = 2 * nleaves - 1;
        Ok(Builder { parent: vec![u32::MAX; total], lo: vec![0; total], hi: vec![0; total], dfs: vec![0; nleaves], leaf_at: Vec::with_capacity(nleaves) })
    }

    fn leaf(&mut self, element: usize) -> usize {
        let pos = self.leaf_at.len() as u32;
        self.leaf_at.push(element as u32);
        self.dfs[element] = pos;
        self.lo[element] = pos;
        self.hi[element] = pos;
        element
    }

    fn join(&mut self, id: usize, left: usize, right: usize) -> usize {
        self.parent[left] = id as u32;
        self.parent[right] = id as u32;
        self.lo[id] = self.lo[left];
        self.hi[id] = self.hi[right];
        id
    }

    fn finish(self, root: usize) -> EliminationTree {
        EliminationTree { nleaves: self.dfs.len(), parent: self.parent, lo: self.lo, hi: self.hi, dfs: self.dfs, leaf_at: self.leaf_at, root }
    }
}

impl EliminationTree {
    /// Binary tree over `n` elements of an interval: `[a, b)` splits at `(a + b) / 2`.
    pub fn bisection_1d(n: usize) -> Result<EliminationTree> {
        let mut b = Builder::new(n)?;
        let mut next = n;
        fn build(b: &mut Builder, next: &mut usize, lo: usize, hi: usize) -> usize {
            if hi - lo == 1 {
                return b.leaf(lo);
            }
            let mid = lo + (hi - lo) / 2;
            let l = build(b, next, lo, mid);
            let r = build(b, next, mid, hi);
            let id = *next;
            *next += 1;
            b.join(id, l, r)
        }
        let root = build(&mut b, &mut next, 0, n);
        Ok(b.finish(root))
    }

    /// Nested dissection of an `ex × ey` element grid (element `i + ex·j`): a block is cut across
    /// its longer side in the middle until single elements remain.
    pub fn nested_dissection_2d(ex: usize, ey: usize) -> Result<EliminationTree> {
        let n = ex.checked_mul(ey).ok_or_else(|| Error::invalid(format!("element grid {ex} × {ey} overflows")))?;
        let mut b = Builder::new(n)?;
        let mut next = n;
        fn build(b: &mut Builder, next: &mut usize, ex: usize, x: (usize, usize), y: (usize, usize)) -> usize {
            let (w, h) = (x.1 - x.0, y.1 - y.0);
            if w == 1 && h == 1 {
                return b.leaf(x.0 + ex * y.0);
            }
            let (l, r) = if w >= h {
                let mid = x.0 + w / 2;
                (build(b, next, ex, (x.0, mid), y), build(b, next, ex, (mid, x.1), y))
            } else {
                let mid = y.0 + h / 2;
                (build(b, next, ex, x, (y.0, mid)), build(b, next, ex, x, (mid, y.1)))
            };
            let id = *next;
            *next += 1;
            b.join(id, l, r)
        }
        let root = build(&mut b, &mut next, ex, (0, ex), (0, ey));
        Ok(b.finish(root))
    }

    pub fn num_nodes(&self) -> usize {
        self.parent.len()
    }

    /// Lowest common ancestor of the leaves at depth-first positions `a ≤ b`.
    pub fn lca_of_range(&self, a: u32, b: u32) -> usize {
        let mut node = self.leaf_at[a as usize] as usize;
        while self.hi[node] < b {
            node = self.parent[node] as usize;
        }
        node
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_is_a_balanced_binary_tree() {
        let t = EliminationTree::bisection_1d(8).unwrap();
        assert_eq!(t.num_nodes(), 15);
        assert_eq!(t.dfs, (0..8).collect::<Vec<u32>>());
        assert_eq!(t.lo[t.root], 0);
        assert_eq!(t.hi[t.root], 7);
        assert_eq!(t.parent[t.root], u32::MAX);
        assert_eq!(t.lca_of_range(3, 4), t.root);
        assert_eq!(t.lca_of_range(2, 2), 2);
        assert_eq!(t.parent[0], t.parent[1]);
        let one = EliminationTree::bisection_1d(1).unwrap();
        assert_eq!((one.num_nodes(), one.root), (1, 0));
        assert!(EliminationTree::bisection_1d(0).is_err());
    }

    #[test]
    fn nested_dissection_covers_every_element_once() {
        let t = EliminationTree::nested_dissection_2d(5, 3).unwrap();
        assert_eq!(t.num_nodes(), 29);
        let mut seen = t.leaf_at.clone();
        seen.sort();
        assert_eq!(seen, (0..15).collect::<Vec<u32>>());
        // The first cut halves x: elements 0,1 (x < 2) in the left subtree of the root.
        let root_left_hi = t.hi[(0..t.num_nodes()).find(|&v| t.parent[v] as usize == t.root).unwrap()];
        assert_eq!(root_left_hi, 5, "left half of a 5x3 grid has 2x3 = 6 elements");
    }
}
