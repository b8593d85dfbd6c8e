//! Fused subtrees for solves with many right-hand sides on the GPU.
//!
//! The level-by-level solve writes every front's contribution block to memory and reads it back one
//! level up, and gathers `b` and scatters `x` one row of one node at a time. With `nrhs` columns
//! that traffic is `nrhs` times larger, so the solve is far from the bandwidth of reading `b` and
//! writing `x` once. Here the tree is cut into small subtrees, bottom-up, in *passes*: a subtree of
//! pass `q` holds whole nodes, its external children are roots of subtrees of earlier passes. One
//! thread block takes a subtree and a chunk of columns: it stages the subtree's fronts and row maps
//! in shared memory, loads `b` at the rows the subtree eliminates (consecutive dofs: coalesced) and
//! the contributions of its external children, and sweeps all its nodes with the data in shared
//! memory. The forward solve of a subtree only needs to hand its root's contribution rows up; the
//! backward kernel recomputes the subtree's forward sweep from `b` instead of storing `y` (leaving
//! the root's Schur rows, which hold `x` there, alone), which reads `b` twice and writes `x` once.
//!
//! In the forward sweep the fronts' right-hand-side rows are one vector `w` over the subtree's
//! *local rows* (the dofs it eliminates, then its root's Schur rows): extend-add is a sum, so a
//! node's Schur update `w[S] −= L_SE y_E` accumulates in place what the contribution blocks carry.
use super::Symbolic;
use crate::{Error, Result};

/// Limits of a fused subtree: local rows, largest eliminated block, staged front entries, front
/// size (fronts beyond it are left to the level-by-level code).
#[derive(Clone, Copy, Debug)]
pub struct SubtreeLimits {
    pub rows: usize,
    pub emax: usize,
    pub front_entries: usize,
    pub mmax: usize,
}

impl Default for SubtreeLimits {
    /// Sized so that rows × 65 columns plus the staged fronts fit the 48 KiB a block may use.
    fn default() -> Self {
        SubtreeLimits { rows: 40, emax: 32, front_entries: 2048, mmax: 160 }
    }
}

/// The subtrees of one pass (one launch each way), in the layout the kernels read.
#[derive(Clone, Debug, Default)]
pub struct Pass {
    /// Nodes of subtree `j`: `nodes[sub_ptr[j]..sub_ptr[j + 1]]`, children before parents (its
    /// root last).
    pub sub_ptr: Vec<u32>,
    pub nodes: Vec<u32>,
    /// Per node (indexed like `nodes`), relative to its subtree: offset of its `m × m` front in the
    /// staged fronts, of its `m` local rows in `loc`, of its `e` pivoted local rows.
    pub f_off: Vec<u32>,
    pub l_off: Vec<u32>,
    pub p_off: Vec<u32>,
    /// Local row of each front row, node after node; subtree `j`'s from `loc_ptr[j]`.
    pub loc: Vec<u32>,
    pub loc_ptr: Vec<u32>,
    /// Local rows of subtree `j`: their dofs `row_dof[row_ptr[j]..row_ptr[j + 1]]`; the first
    /// `elim[j]` are eliminated in the subtree, the rest are its root's Schur rows in front order.
    pub row_ptr: Vec<u32>,
    pub row_dof: Vec<u32>,
    pub elim: Vec<u32>,
    /// External contributions of subtree `j`: `(local row, row of the contribution buffer)`.
    pub ext_ptr: Vec<u32>,
    pub ext_row: Vec<u32>,
    pub ext_src: Vec<u64>,
    /// Largest local rows, staged front entries, staged loc entries, staged pivots, eliminated block.
    pub max_rows: usize,
    pub max_front_entries: usize,
    pub max_loc: usize,
    pub max_piv: usize,
    pub max_e: usize,
}

impl Pass {
    pub fn len(&self) -> usize {
        self.sub_ptr.len().saturating_sub(1)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a node's contribution rows live in a solve: nowhere (inactive), in its level's buffer, or
/// in the contribution buffer (`leaf_buf`: leaves and fused roots, each with its own slot).
pub const IN_LEVEL: u8 = 1;
pub const IN_LEAF_BUF: u8 = 2;

/// A partition of the (active part of the) tree into fused subtrees and the rest.
#[derive(Clone, Debug)]
pub struct SubtreePlan {
    pub passes: Vec<Pass>,
    /// Whether each node is in a fused subtree.
    pub fused: Vec<bool>,
    /// Where each node's contribution rows live ([`IN_LEVEL`], [`IN_LEAF_BUF`], 0 = inactive) and
    /// their slot there; the leaf buffer holds `leaf_slots` rows per right-hand side.
    pub place: Vec<u8>,
    pub slot: Vec<u64>,
    pub leaf_slots: u64,
}

impl SubtreePlan {
    pub fn new(s: &Symbolic, lim: SubtreeLimits) -> Result<SubtreePlan> {
        let nn = s.num_nodes();
        // 1. Greedy, bottom-up (children precede parents): a node joins the open subtrees of its
        // children of the latest pass if the merged subtree stays within the limits, else it starts
        // a subtree of the next pass (its children's subtrees close).
        const UPPER: u32 = u32::MAX;
        let mut pass = vec![UPPER; nn];
        let mut joined = vec![false; nn]; // node's subtree was merged into its parent's
        let mut open_elim = vec![0usize; nn];
        let mut open_f = vec![0usize; nn];
        for v in 0..nn {
            if !s.active[v] {
                continue;
            }
            let (m, e) = (s.m[v] as usize, s.e[v] as usize);
            let kids = || s.children(v).iter().map(|&c| c as usize).filter(|&c| s.active[c]);
            let cand = m <= lim.mmax && e <= lim.emax && m <= lim.rows && m * m <= lim.front_entries;
            if !cand || kids().any(|c| pass[c] == UPPER) {
                continue;
            }
            let q = kids().map(|c| pass[c]).max();
            let elim: usize = kids().filter(|&c| Some(pass[c]) == q).map(|c| open_elim[c]).sum();
            let fe: usize = kids().filter(|&c| Some(pass[c]) == q).map(|c| open_f[c]).sum();
            if m + elim <= lim.rows && m * m + fe <= lim.front_entries {
                pass[v] = q.unwrap_or(0);
                open_elim[v] = e + elim;
                open_f[v] = m * m + fe;
                for c in s.children(v) {
                    let c = *c as usize;
                    if s.active[c] && Some(pass[c]) == q {
                        joined[c] = true;
                    }
                }
            } else {
                pass[v] = q.map_or(0, |q| q + 1);
                open_elim[v] = e;
                open_f[v] = m * m;
            }
        }
        // 2. Subtree roots and members (parents first: a joined node belongs to its parent's root).
        let mut root_of = vec![u32::MAX; nn];
        for v in (0..nn).rev() {
            if pass[v] == UPPER {
                continue;
            }
            root_of[v] = if joined[v] { root_of[s.parent[v] as usize] } else { v as u32 };
        }
        let npass = pass.iter().filter(|&&p| p != UPPER).map(|&p| p as usize + 1).max().unwrap_or(0);
        // Members of each root (ascending: children first).
        let (mem_ptr, mem) = super::symbolic::group_by(&root_of, nn);
        // 3. Contribution slots: fused roots that are internal nodes move to the leaf buffer.
        let mut place: Vec<u8> = (0..nn).map(|v| if !s.active[v] { 0 } else if v < s.nelem { IN_LEAF_BUF } else { IN_LEVEL }).collect();
        let mut slot = s.slot.clone();
        let mut leaf_slots = s.leaf_slots;
        for v in s.nelem..nn {
            if root_of[v] == v as u32 && s.parent[v] != u32::MAX {
                place[v] = IN_LEAF_BUF;
                slot[v] = leaf_slots;
                leaf_slots += s.m[v] as u64;
            }
        }
        // 4. The passes' tables.
        let mut passes = vec![Pass::default(); npass];
        let mut local = vec![u32::MAX; s.n];
        for r in 0..nn {
            if root_of[r] != r as u32 {
                continue;
            }
            let nodes = &mem[mem_ptr[r] as usize..mem_ptr[r + 1] as usize];
            let p = &mut passes[pass[r] as usize];
            if p.sub_ptr.is_empty() {
                p.sub_ptr.push(0);
                p.loc_ptr.push(0);
                p.row_ptr.push(0);
                p.ext_ptr.push(0);
            }
            // Local rows: eliminated dofs ascending, then the root's Schur rows in front order.
            let mut rows: Vec<u32> = nodes.iter().flat_map(|&v| s.dofs(v as usize)[..s.e[v as usize] as usize].iter().copied()).collect();
            rows.sort_unstable();
            let ne = rows.len();
            rows.extend_from_slice(&s.dofs(r)[s.e[r] as usize..]);
            for (i, &d) in rows.iter().enumerate() {
                local[d as usize] = i as u32;
            }
            let (mut fo, mut lo, mut po) = (0u32, 0u32, 0u32);
            for &v in nodes {
                let v = v as usize;
                p.nodes.push(v as u32);
                p.f_off.push(fo);
                p.l_off.push(lo);
                p.p_off.push(po);
                for &d in s.dofs(v) {
                    let l = local[d as usize];
                    if l == u32::MAX {
                        return Err(Error::Factorization(format!("internal: dof {d} of node {v} is not a row of its fused subtree")));
                    }
                    p.loc.push(l);
                }
                for &c in s.children(v) {
                    let c = c as usize;
                    if !s.active[c] || root_of[c] == r as u32 {
                        continue;
                    }
                    if place[c] != IN_LEAF_BUF || pass[c] >= pass[r] {
                        return Err(Error::Factorization(format!("internal: child {c} of fused node {v} is not a root of an earlier pass")));
                    }
                    let ec = s.e[c] as u64;
                    for (a, &q) in s.map(c).iter().enumerate() {
                        p.ext_row.push(local[s.dofs(v)[q as usize] as usize]);
                        p.ext_src.push(slot[c] + ec + a as u64);
                    }
                }
                let (m, e) = (s.m[v], s.e[v]);
                fo += m * m;
                lo += m;
                po += e;
                p.max_e = p.max_e.max(e as usize);
            }
            for &d in &rows {
                local[d as usize] = u32::MAX;
            }
            p.max_rows = p.max_rows.max(rows.len());
            p.max_front_entries = p.max_front_entries.max(fo as usize);
            p.max_loc = p.max_loc.max(lo as usize);
            p.max_piv = p.max_piv.max(po as usize);
            p.row_dof.extend(rows);
            p.elim.push(ne as u32);
            p.sub_ptr.push(p.nodes.len() as u32);
            p.loc_ptr.push(p.loc.len() as u32);
            p.row_ptr.push(p.row_dof.len() as u32);
            p.ext_ptr.push(p.ext_row.len() as u32);
        }
        let fused = pass.iter().map(|&p| p != UPPER).collect();
        Ok(SubtreePlan { passes, fused, place, slot, leaf_slots })
    }

    /// Nodes in fused subtrees.
    pub fn fused_nodes(&self) -> usize {
        self.fused.iter().filter(|&&f| f).count()
    }
}

/// The sweeps of subtree `j` of pass `p` over its local rows `w` (one column, already holding `b`
/// at the eliminated rows plus the external contributions): forward, the root's Schur rows
/// accumulate its contribution; `backward`, the forward sweep with the root's Schur rows held (they
/// hold `x` there), then the backward sweep: `w` at the eliminated rows becomes `x`. What
/// `kernels/multifrontal.cu` computes per column. `front(v)` is node `v`'s factorized front,
/// `perm(v)` the front row at each pivot position.
pub fn sweep_local<'a>(s: &Symbolic, p: &Pass, j: usize, front: &dyn Fn(usize) -> &'a [f64], perm: &dyn Fn(usize) -> Vec<u32>, w: &mut [f64], backward: bool) {
    let ne = p.elim[j] as usize;
    let range = p.sub_ptr[j] as usize..p.sub_ptr[j + 1] as usize;
    let loc0 = p.loc_ptr[j] as usize;
    for i in range.clone() {
        let v = p.nodes[i] as usize;
        let (m, e) = (s.m[v] as usize, s.e[v] as usize);
        let (f, loc, pm) = (front(v), &p.loc[loc0 + p.l_off[i] as usize..][..m], perm(v));
        let mut r: Vec<f64> = (0..e).map(|k| w[loc[pm[k] as usize] as usize]).collect();
        for k in 0..e {
            for i2 in k + 1..e {
                r[i2] -= f[i2 + k * m] * r[k];
            }
        }
        for i2 in e..m {
            // Backward: the root's Schur rows already hold x.
            if !backward || (loc[i2] as usize) < ne {
                w[loc[i2] as usize] -= (0..e).map(|k| f[i2 + k * m] * r[k]).sum::<f64>();
            }
        }
        for k in 0..e {
            w[loc[k] as usize] = r[k];
        }
    }
    if !backward {
        return;
    }
    for i in range.rev() {
        let v = p.nodes[i] as usize;
        let (m, e) = (s.m[v] as usize, s.e[v] as usize);
        let (f, loc) = (front(v), &p.loc[loc0 + p.l_off[i] as usize..][..m]);
        let mut r: Vec<f64> = (0..e).map(|k| w[loc[k] as usize]).collect();
        for l in e..m {
            let xl = w[loc[l] as usize];
            for k in 0..e {
                r[k] -= f[k + l * m] * xl;
            }
        }
        for k in (0..e).rev() {
            r[k] /= f[k + k * m];
            for i2 in 0..k {
                r[i2] -= f[i2 + k * m] * r[k];
            }
        }
        for k in 0..e {
            w[loc[k] as usize] = r[k];
        }
    }
}

/// Subtree `j`'s local rows for one column: `b` at the eliminated rows, `x` at the root's Schur
/// rows (`backward`) or 0, plus the external children's contributions from `buf` (backward only at
/// the eliminated rows).
pub fn gather_local(p: &Pass, j: usize, b: &[f64], x: &[f64], buf: &[f64], backward: bool) -> Vec<f64> {
    let rows = &p.row_dof[p.row_ptr[j] as usize..p.row_ptr[j + 1] as usize];
    let ne = p.elim[j] as usize;
    let mut w: Vec<f64> = rows.iter().enumerate().map(|(i, &d)| if i < ne { b[d as usize] } else if backward { x[d as usize] } else { 0.0 }).collect();
    for k in p.ext_ptr[j] as usize..p.ext_ptr[j + 1] as usize {
        if !backward || (p.ext_row[k] as usize) < ne {
            w[p.ext_row[k] as usize] += buf[p.ext_src[k] as usize];
        }
    }
    w
}

/// The fused kernels' solve on the CPU, one right-hand side, every active node fused (a reference
/// for tests): passes forward (each root's Schur rows to the contribution buffer), then backward.
pub fn reference_solve<'a>(
    s: &Symbolic,
    plan: &SubtreePlan,
    front: &dyn Fn(usize) -> &'a [f64],
    perm: &dyn Fn(usize) -> Vec<u32>,
    b: &[f64],
    x: &mut [f64],
) {
    let mut buf = vec![0.0; plan.leaf_slots as usize];
    for p in &plan.passes {
        for j in 0..p.len() {
            let mut w = gather_local(p, j, b, x, &buf, false);
            sweep_local(s, p, j, front, perm, &mut w, false);
            let ne = p.elim[j] as usize;
            let root = p.nodes[p.sub_ptr[j + 1] as usize - 1] as usize;
            let out = (plan.slot[root] + s.e[root] as u64) as usize;
            buf[out..out + w.len() - ne].copy_from_slice(&w[ne..]);
        }
    }
    for p in plan.passes.iter().rev() {
        for j in 0..p.len() {
            let mut w = gather_local(p, j, b, x, &buf, true);
            sweep_local(s, p, j, front, perm, &mut w, true);
            let rows = &p.row_dof[p.row_ptr[j] as usize..p.row_ptr[j + 1] as usize];
            for (i, &d) in rows[..p.elim[j] as usize].iter().enumerate() {
                x[d as usize] = w[i];
            }
        }
    }
}
