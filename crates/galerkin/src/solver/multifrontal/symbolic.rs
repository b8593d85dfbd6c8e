//! Symbolic multifrontal analysis: from the element restriction and an elimination tree over the
//! elements, which dofs each tree node eliminates and the rows of its frontal matrix.
//!
//! A dof is *fully assembled* at the lowest common ancestor of the elements that hold it, and is
//! eliminated there. A leaf's front is its element's dofs; an internal node's front is the union
//! of its children's uneliminated rows (the seed's *merge*); its first `e` rows are the dofs it
//! eliminates (*eliminate*), the other `s = m − e` rows are passed up as the Schur complement.
//! Internal nodes that would eliminate nothing are contracted into their parent (their children are
//! adopted), so every internal node does real work.
//!
//! Node numbering: leaves `0..nelem` are the elements; internal nodes follow in processing order,
//! grouped in levels by depth, deepest first, the root last. Every node of a level depends only on
//! leaves and on the level before it, so a level is one parallel step (one GPU launch).
use super::tree::EliminationTree;
use crate::{Error, Result};
use rayon::prelude::*;
use std::ops::Range;

/// The frontal structure of a factorization, shared by the CPU and GPU numeric phases.
#[derive(Clone, Debug)]
pub struct Symbolic {
    /// Unknowns.
    pub n: usize,
    pub nelem: usize,
    /// Dofs per element.
    pub k: usize,
    /// Front size `m` and eliminated rows `e` of each node.
    pub m: Vec<u32>,
    pub e: Vec<u32>,
    /// Global dof of each front row: `front_dofs[dofs_off[v]..][..m]`, eliminated rows first.
    pub dofs_off: Vec<u64>,
    pub front_dofs: Vec<u32>,
    /// Offset of each node's `m × m` column-major front in the factor storage; the leaves come
    /// first, in element order, so the element matrices fill `0..leaf_len`.
    pub front_off: Vec<u64>,
    pub storage_len: u64,
    pub leaf_len: u64,
    /// Offset of each node's `e` pivot positions (row `i` of its eliminated block went to
    /// position `pinv[i]`).
    pub pinv_off: Vec<u64>,
    /// Children of each node (CSR).
    pub child_ptr: Vec<u32>,
    pub child_idx: Vec<u32>,
    /// Parent of each node (`u32::MAX` at the root).
    pub parent: Vec<u32>,
    /// For each non-root node: the positions of its `s` Schur rows in its parent's front.
    pub map_off: Vec<u64>,
    pub maps: Vec<u32>,
    /// Leaves whose element order differs from their front order (they eliminate a dof of their
    /// own): `(leaf, front position of each local dof)`.
    pub leaf_perms: Vec<(u32, Vec<u32>)>,
    /// Internal nodes of each level, deepest level first; the last level is the root alone.
    pub levels: Vec<Range<u32>>,
    /// Leaves that eliminate dofs (factorized before the first level).
    pub factor_leaves: Vec<u32>,
    /// Whether a node carries right-hand-side data in the forward solve (it, or a descendant,
    /// eliminates something).
    pub active: Vec<bool>,
    /// Row offset of each active node's slot in its solve buffer (the leaf buffer for leaves,
    /// its level's buffer for internal nodes); slots hold `m` rows.
    pub slot: Vec<u64>,
    pub leaf_slots: u64,
    pub level_slots: u64,
}

impl Symbolic {
    /// Analyses `nelem = element_dofs.len() / k` elements of `k` dofs each over `n` unknowns with
    /// `tree` (whose leaves are the elements). Errors name a dof that no element holds, an element
    /// that holds a dof twice or out of range, or a tree that does not fit the elements.
    pub fn new(n: usize, k: usize, element_dofs: &[u32], tree: &EliminationTree) -> Result<Symbolic> {
        if k == 0 || element_dofs.len() % k != 0 {
            return Err(Error::invalid(format!("element restriction of {} entries is not a multiple of {k} dofs per element", element_dofs.len())));
        }
        let nelem = element_dofs.len() / k;
        if tree.nleaves != nelem {
            return Err(Error::dim("elimination tree leaves (elements)", nelem, tree.nleaves));
        }
        if n == 0 || n > u32::MAX as usize {
            return Err(Error::invalid(format!("multifrontal solver: {n} unknowns is outside 1..2^32")));
        }
        // 1. Depth-first leaf range of each dof; its elimination node is the LCA of that range.
        let mut lo = vec![u32::MAX; n];
        let mut hi = vec![0u32; n];
        for (el, dofs) in element_dofs.chunks(k).enumerate() {
            let pos = tree.dfs[el];
            for (a, &d) in dofs.iter().enumerate() {
                let d = d as usize;
                if d >= n {
                    return Err(Error::invalid(format!("element {el} holds dof {d}, but there are only {n} unknowns")));
                }
                if dofs[..a].contains(&(d as u32)) {
                    return Err(Error::invalid(format!("element {el} holds dof {d} twice")));
                }
                lo[d] = lo[d].min(pos);
                hi[d] = hi[d].max(pos);
            }
        }
        if let Some(d) = lo.iter().position(|&l| l == u32::MAX) {
            return Err(Error::Factorization(format!("dof {d} belongs to no element: the matrix is singular")));
        }
        let elim_orig: Vec<u32> = (0..n).into_par_iter().map(|d| tree.lca_of_range(lo[d], hi[d]) as u32).collect();
        drop((lo, hi));

        // 2. Contract internal nodes that eliminate nothing into their parents.
        let nt = tree.num_nodes();
        let mut ecount = vec![0u32; nt];
        for &v in &elim_orig {
            ecount[v as usize] += 1;
        }
        let kept = |v: usize| v < nelem || ecount[v] > 0 || v == tree.root;
        let mut kparent = vec![u32::MAX; nt];
        for v in 0..nt {
            if v != tree.root && kept(v) {
                let mut p = tree.parent[v] as usize;
                while !kept(p) {
                    p = tree.parent[p] as usize;
                }
                kparent[v] = p as u32;
            }
        }
        // Depths of kept nodes (parents have larger ids than children in the bisection trees, but
        // do not rely on it: memoized walk to the root).
        let mut depth = vec![u32::MAX; nt];
        depth[tree.root] = 0;
        for v in 0..nt {
            if !kept(v) || depth[v] != u32::MAX {
                continue;
            }
            let mut path = vec![v];
            let mut p = kparent[v] as usize;
            while depth[p] == u32::MAX {
                path.push(p);
                p = kparent[p] as usize;
            }
            let mut d = depth[p];
            for &q in path.iter().rev() {
                d += 1;
                depth[q] = d;
            }
        }
        // 3. New numbering: leaves as they are, internal kept nodes by depth, deepest first.
        let mut internal: Vec<usize> = (nelem..nt).filter(|&v| kept(v)).collect();
        if tree.root < nelem {
            internal.clear(); // a single element: the root is a leaf
        }
        internal.sort_by_key(|&v| (std::cmp::Reverse(depth[v]), v));
        let nnodes = nelem + internal.len();
        let mut new_id = vec![u32::MAX; nt];
        for v in 0..nelem {
            new_id[v] = v as u32;
        }
        for (i, &v) in internal.iter().enumerate() {
            new_id[v] = (nelem + i) as u32;
        }
        let mut levels: Vec<Range<u32>> = Vec::new();
        for (i, &v) in internal.iter().enumerate() {
            let id = (nelem + i) as u32;
            match levels.last_mut() {
                Some(r) if depth[internal[r.start as usize - nelem]] == depth[v] => r.end = id + 1,
                _ => levels.push(id..id + 1),
            }
        }
        let parent: Vec<u32> = (0..nnodes)
            .map(|i| {
                let v = if i < nelem { i } else { internal[i - nelem] };
                if kparent[v] == u32::MAX { u32::MAX } else { new_id[kparent[v] as usize] }
            })
            .collect();
        let elim: Vec<u32> = elim_orig.iter().map(|&v| new_id[v as usize]).collect();
        drop(elim_orig);
        let (child_ptr, child_idx) = group_by(&parent, nnodes);

        // 4. Fronts: leaves (eliminated local dofs first, then the rest, in local order), then
        // internal nodes level by level (eliminated dofs sorted, then Schur dofs sorted).
        let mut m = vec![0u32; nnodes];
        let mut e = vec![0u32; nnodes];
        let mut dofs_off = vec![0u64; nnodes];
        let mut front_dofs: Vec<u32> = Vec::with_capacity(element_dofs.len() * 2);
        let mut leaf_perms = Vec::new();
        for (el, dofs) in element_dofs.chunks(k).enumerate() {
            dofs_off[el] = front_dofs.len() as u64;
            let own: Vec<usize> = (0..k).filter(|&a| elim[dofs[a] as usize] as usize == el).collect();
            m[el] = k as u32;
            e[el] = own.len() as u32;
            if own.is_empty() {
                front_dofs.extend_from_slice(dofs);
            } else {
                let rest: Vec<usize> = (0..k).filter(|a| !own.contains(a)).collect();
                let order: Vec<usize> = own.iter().chain(&rest).copied().collect();
                let mut pos = vec![0u32; k];
                for (f, &a) in order.iter().enumerate() {
                    pos[a] = f as u32;
                    front_dofs.push(dofs[a]);
                }
                leaf_perms.push((el as u32, pos));
            }
        }
        for r in &levels {
            let fronts: Vec<(Vec<u32>, u32)> = (r.start..r.end)
                .into_par_iter()
                .map(|v| {
                    let mut f: Vec<u32> = Vec::new();
                    for &c in &child_idx[child_ptr[v as usize] as usize..child_ptr[v as usize + 1] as usize] {
                        let c = c as usize;
                        let start = (dofs_off[c] + e[c] as u64) as usize;
                        f.extend_from_slice(&front_dofs[start..(dofs_off[c] + m[c] as u64) as usize]);
                    }
                    f.sort_unstable();
                    f.dedup();
                    let (mut own, rest): (Vec<u32>, Vec<u32>) = f.into_iter().partition(|&d| elim[d as usize] == v);
                    let ne = own.len() as u32;
                    own.extend(rest);
                    (own, ne)
                })
                .collect();
            for (i, (f, ne)) in fronts.into_iter().enumerate() {
                let v = r.start as usize + i;
                dofs_off[v] = front_dofs.len() as u64;
                m[v] = f.len() as u32;
                e[v] = ne;
                front_dofs.extend(f);
            }
        }
        let root = nnodes - 1;
        let eliminated: u64 = e.iter().map(|&x| x as u64).sum();
        if eliminated != n as u64 || m[root] != e[root] {
            return Err(Error::Factorization(format!(
                "internal: symbolic analysis eliminates {eliminated} of {n} dofs and leaves {} at the root",
                m[root] - e[root]
            )));
        }

        // 5. Extend-add maps: child Schur rows -> positions in the parent's front (eliminated part
        // and Schur part of an internal front are each sorted).
        let map_len: Vec<u64> = (0..nnodes).map(|v| if parent[v] == u32::MAX { 0 } else { (m[v] - e[v]) as u64 }).collect();
        let map_off = prefix(&map_len);
        let maps: Vec<u32> = (0..nnodes)
            .into_par_iter()
            .flat_map_iter(|v| {
                let p = parent[v];
                let rows: &[u32] = if p == u32::MAX {
                    &[]
                } else {
                    &front_dofs[(dofs_off[v] + e[v] as u64) as usize..(dofs_off[v] + m[v] as u64) as usize]
                };
                let (pe, pm) = if p == u32::MAX { (0, 0) } else { (e[p as usize] as usize, m[p as usize] as usize) };
                let pf: &[u32] = if p == u32::MAX { &[] } else { &front_dofs[dofs_off[p as usize] as usize..][..pm] };
                rows.iter().map(move |d| {
                    let (own, rest) = pf.split_at(pe);
                    match own.binary_search(d) {
                        Ok(i) => i as u32,
                        Err(_) => (pe + rest.binary_search(d).unwrap_or(usize::MAX - pe)) as u32,
                    }
                })
            })
            .collect();
        if let Some(i) = maps.iter().position(|&q| q == u32::MAX) {
            return Err(Error::Factorization(format!("internal: Schur row {i} has no place in its parent's front")));
        }

        // 6. Storage and pivots, solve slots.
        let front_off = prefix(&m.iter().map(|&x| x as u64 * x as u64).collect::<Vec<_>>());
        let storage_len = front_off[nnodes - 1] + m[nnodes - 1] as u64 * m[nnodes - 1] as u64;
        let leaf_len = (nelem * k * k) as u64;
        let pinv_off = prefix(&e.iter().map(|&x| x as u64).collect::<Vec<_>>());
        let mut active = vec![false; nnodes];
        for v in 0..nnodes {
            // Children precede parents in the numbering.
            let kids = &child_idx[child_ptr[v] as usize..child_ptr[v + 1] as usize];
            active[v] = e[v] > 0 || kids.iter().any(|&c| active[c as usize]);
        }
        let mut slot = vec![u64::MAX; nnodes];
        let mut leaf_slots = 0u64;
        for v in 0..nelem {
            if active[v] {
                slot[v] = leaf_slots;
                leaf_slots += m[v] as u64;
            }
        }
        let mut level_slots = 0u64;
        for r in &levels {
            let mut used = 0u64;
            for v in r.start as usize..r.end as usize {
                if active[v] {
                    slot[v] = used;
                    used += m[v] as u64;
                }
            }
            level_slots = level_slots.max(used);
        }
        let factor_leaves = (0..nelem as u32).filter(|&v| e[v as usize] > 0).collect();
        Ok(Symbolic {
            n,
            nelem,
            k,
            m,
            e,
            dofs_off,
            front_dofs,
            front_off,
            storage_len,
            leaf_len,
            pinv_off,
            child_ptr,
            child_idx,
            parent,
            map_off,
            maps,
            leaf_perms,
            levels,
            factor_leaves,
            active,
            slot,
            leaf_slots,
            level_slots,
        })
    }

    pub fn num_nodes(&self) -> usize {
        self.m.len()
    }
    pub fn root(&self) -> usize {
        self.m.len() - 1
    }
    pub fn children(&self, v: usize) -> &[u32] {
        &self.child_idx[self.child_ptr[v] as usize..self.child_ptr[v + 1] as usize]
    }
    /// Global dofs of node `v`'s front rows.
    pub fn dofs(&self, v: usize) -> &[u32] {
        &self.front_dofs[self.dofs_off[v] as usize..][..self.m[v] as usize]
    }
    /// Positions of node `v`'s Schur rows in its parent's front.
    pub fn map(&self, v: usize) -> &[u32] {
        &self.maps[self.map_off[v] as usize..][..(self.m[v] - self.e[v]) as usize]
    }
    /// Largest front.
    pub fn max_front(&self) -> usize {
        self.m.iter().copied().max().unwrap_or(0) as usize
    }
    /// Dense flops of the factorization: `Σ (2/3 e³ + 2e²s + 2es²)` over nodes (LU of the
    /// eliminated block, the two triangular solves and the Schur update), counting a fused
    /// multiply-add as two.
    pub fn factor_flops(&self) -> f64 {
        self.m.iter().zip(&self.e).map(|(&m, &e)| {
            let (e, s) = (e as f64, (m - e) as f64);
            2.0 / 3.0 * e * e * e + 2.0 * e * e * s + 2.0 * e * s * s
        }).sum()
    }
    /// Dense flops of one forward + backward solve for one right-hand side: `Σ 2e(e + 2s)`.
    pub fn solve_flops(&self) -> f64 {
        self.m.iter().zip(&self.e).map(|(&m, &e)| 2.0 * e as f64 * (e as f64 + 2.0 * (m - e) as f64)).sum()
    }
}

/// Groups the indices `i` by `key[i]` (keys `u32::MAX` are left out) into CSR over `nkeys` keys:
/// the indices of key `k` are `idx[ptr[k]..ptr[k + 1]]`, ascending.
pub(crate) fn group_by(key: &[u32], nkeys: usize) -> (Vec<u32>, Vec<u32>) {
    let mut ptr = vec![0u32; nkeys + 1];
    for &k in key.iter().filter(|&&k| k != u32::MAX) {
        ptr[k as usize + 1] += 1;
    }
    for i in 0..nkeys {
        ptr[i + 1] += ptr[i];
    }
    let mut fill = ptr.clone();
    let mut idx = vec![0u32; ptr[nkeys] as usize];
    for (i, &k) in key.iter().enumerate().filter(|(_, &k)| k != u32::MAX) {
        idx[fill[k as usize] as usize] = i as u32;
        fill[k as usize] += 1;
    }
    (ptr, idx)
}

fn prefix(len: &[u64]) -> Vec<u64> {
    let mut off = Vec::with_capacity(len.len());
    let mut acc = 0u64;
    for &l in len {
        off.push(acc);
        acc += l;
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform C^(p-1) splines on `n` elements: element e holds dofs e..=e+p.
    fn spline_1d(n: usize, p: usize) -> Vec<u32> {
        (0..n).flat_map(|e| (0..=p).map(move |i| (e + i) as u32)).collect()
    }

    #[test]
    fn cubic_splines_on_16_elements() {
        let (n, p) = (16, 3);
        let sym = Symbolic::new(n + p, p + 1, &spline_1d(n, p), &EliminationTree::bisection_1d(n).unwrap()).unwrap();
        // Interior pairs of elements eliminate nothing and are contracted (only the two boundary
        // pairs stay: they own dofs 1 and 17); quads eliminate 1 dof inside, then 3 = p per node.
        let sizes: Vec<u32> = sym.levels.iter().map(|r| r.end - r.start).collect();
        assert_eq!(sizes, vec![2, 4, 2, 1]);
        let interior = sym.levels[1].start as usize + 1;
        assert_eq!(sym.children(interior).len(), 4);
        assert_eq!((sym.m[interior], sym.e[interior]), (7, 1));
        let half = sym.levels[2].start as usize;
        assert_eq!((sym.m[half], sym.e[half]), (6, 3), "no left neighbour: S = 8..=10 only");
        assert_eq!(sym.m[sym.root()], sym.e[sym.root()]);
        // The boundary elements eliminate their end dof.
        assert_eq!(sym.factor_leaves, vec![0, 15]);
        assert!(sym.active[0] && !sym.active[1]);
        // Every dof eliminated once; every map entry points into the Schur or eliminated rows of
        // the parent at the same dof.
        let mut seen = vec![0; n + p];
        for v in 0..sym.num_nodes() {
            for &d in &sym.dofs(v)[..sym.e[v] as usize] {
                seen[d as usize] += 1;
            }
            if v != sym.root() {
                let pd = sym.dofs(sym.parent[v] as usize);
                for (a, &q) in sym.map(v).iter().enumerate() {
                    assert_eq!(pd[q as usize], sym.dofs(v)[sym.e[v] as usize + a]);
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
    }

    #[test]
    fn nested_dissection_of_bilinear_elements() {
        let (ex, ey) = (4, 3);
        let nx = ex + 1;
        let dofs: Vec<u32> = (0..ey)
            .flat_map(|j| (0..ex).flat_map(move |i| [(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)].map(|(a, b)| (a + nx * b) as u32)))
            .collect();
        let sym = Symbolic::new(nx * (ey + 1), 4, &dofs, &EliminationTree::nested_dissection_2d(ex, ey).unwrap()).unwrap();
        assert_eq!(sym.e.iter().sum::<u32>() as usize, 20);
        assert_eq!(sym.factor_leaves, vec![0, 3, 8, 11], "the four corner elements own their corner dof");
        assert!(sym.levels.last().unwrap().len() == 1);
    }

    #[test]
    fn bad_restrictions_are_errors() {
        let t = EliminationTree::bisection_1d(2).unwrap();
        assert!(Symbolic::new(3, 2, &[0, 1, 1, 3], &t).unwrap_err().to_string().contains("only 3 unknowns"));
        assert!(Symbolic::new(3, 2, &[0, 0, 1, 2], &t).unwrap_err().to_string().contains("twice"));
        assert!(Symbolic::new(4, 2, &[0, 1, 1, 2], &t).unwrap_err().to_string().contains("dof 3 belongs to no element"));
        assert!(Symbolic::new(3, 2, &[0, 1, 1], &t).is_err());
    }
}
