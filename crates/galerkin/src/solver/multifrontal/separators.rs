//! A compact, row-major buffer for the separator rows of the fused passes above the bottom one.
//!
//! In the transfer maps' solve ([`super::maps`]) every pass reads `b` and writes `x` at the dofs
//! its subtrees eliminate, in the column-major `n × nrhs` layout of `b` and `x`. The bottom pass
//! eliminates long runs of consecutive dofs (29 of every 32 at 1D cubic elements), but the passes
//! above eliminate the bottom subtrees' separators — 3 dofs every 32 — so each column is read and
//! written in 24-byte pieces, and the second pass ran at a fifth to a third of the copy rate.
//!
//! Here the dofs eliminated by passes 1 and up (the *separator rows*) get compact rows, in the
//! order of the passes' subtrees, of one buffer `sep` laid out row-major (`sep[row·nrhs + c]`, as
//! the contribution buffer): every row is one run of `nrhs` doubles, so the upper passes gather and
//! scatter whole lines. The bottom forward pass copies `b` at the separator rows into `sep` (each
//! separator row is *owned* by one bottom subtree among those that hold it as a Schur row; the
//! copy is read next to the subtree's own eliminated rows, in the same lines); the upper passes
//! read `b` from `sep` and overwrite it with `x` in place (a subtree gathers its rows before it
//! stores them; no other subtree of its pass reads them, later passes only read rows it does not
//! eliminate); the bottom backward pass reads its Schur rows' `x` from `sep` and writes `x` at the
//! rows it owns, next to its eliminated rows.
use super::maps::{ldm, MapLayout};
use super::subtrees::{Pass, SubtreePlan};
use super::Symbolic;

/// The fused passes with compact separator rows, and which bottom subtree copies each of them.
#[derive(Clone, Debug)]
pub struct SeparatorPlan {
    /// The passes of the [`SubtreePlan`] with `row_dof` rewritten: pass 0's Schur rows and every
    /// local row of passes 1 and up are compact rows of `sep`; pass 0's eliminated rows stay dofs.
    pub passes: Vec<Pass>,
    /// Owned rows of bottom subtree `j`: `own_loc[own_ptr[j]..own_ptr[j + 1]]` (local rows, all
    /// Schur rows) and their dofs `own_dof[..]`.
    pub own_ptr: Vec<u32>,
    pub own_loc: Vec<u32>,
    pub own_dof: Vec<u32>,
    /// Rows of `sep` (per right-hand side).
    pub rows: usize,
    /// Largest local rows plus owned rows of a bottom subtree (the bottom forward pass stages both).
    pub max_rows0: usize,
    /// Rows at their dofs ([`Self::at_dofs`]): `sep` is a row-major `x`, and the bottom backward
    /// pass stores no owned row.
    pub at_dofs: bool,
    /// Passes `0..adds_below` add their roots' contributions into `x` at their dofs
    /// ([`Self::at_dofs_adds`]; 0: none do): no table reads them from the buffer.
    pub adds_below: usize,
}

impl SeparatorPlan {
    /// The compact layout of `plan`, or `None` where it does not apply: fewer than two passes, or
    /// a row of a pass above the bottom one that no pass eliminates (nodes left to the
    /// level-by-level code), or a separator row that is no bottom subtree's Schur row.
    pub fn new(plan: &SubtreePlan, n: usize) -> Option<SeparatorPlan> {
        SeparatorPlan::build(plan, n, false)
    }

    /// [`Self::new`] with every separator row at its dof (`rows` = `n`): the layout of a row-major
    /// solve whose separator rows live in `x` itself (`CudaMultifrontal::set_sep_in_x`), where a
    /// dof's line is already whole. The same subtrees, owners and checks.
    pub fn at_dofs(plan: &SubtreePlan, n: usize) -> Option<SeparatorPlan> {
        SeparatorPlan::build(plan, n, true)
    }

    /// [`Self::at_dofs`] for an in-place solve whose forward passes `0..below` add their roots'
    /// contributions into `x` (which is `b`) at their dofs instead of writing them to the
    /// contribution buffer (`CudaMultifrontal::set_sep_bottom_adds`; `below` is where the walk of
    /// the passes near the root starts, which keeps the buffer): every external entry whose source
    /// is such a root's contribution row leaves the passes' tables. A pass gathers the rows it
    /// eliminates from `x` at dofs, where those contributions already are, and starts its Schur
    /// rows at zero, so each contribution still reaches exactly the pass that eliminates its dof;
    /// passes `0..below` are left without external entries (their forward is the trimmed one). At
    /// 2^20 cubic elements and 256 columns (`below` 2) that is the 0.40 GB forward 1 read from the
    /// buffer, the 0.35 GB backward 1 read again and the walk's 0.11 GB.
    pub fn at_dofs_adds(s: &Symbolic, plan: &SubtreePlan, n: usize, below: usize) -> Option<SeparatorPlan> {
        let mut sp = SeparatorPlan::build(plan, n, true)?;
        let below = below.min(plan.passes.len());
        let mut added = vec![false; plan.leaf_slots as usize];
        for p in &plan.passes[..below] {
            for j in 0..p.len() {
                let root = p.nodes[p.sub_ptr[j + 1] as usize - 1] as usize;
                let (slot, e, m) = (plan.slot[root] as usize, s.e[root] as usize, s.m[root] as usize);
                added.get_mut(slot + e..slot + m)?.iter_mut().for_each(|f| *f = true);
            }
        }
        for p in &mut sp.passes[1..] {
            let (mut ptr, mut row, mut src) = (vec![0u32], Vec::new(), Vec::new());
            for j in 0..p.len() {
                for k in p.ext_ptr[j] as usize..p.ext_ptr[j + 1] as usize {
                    if !added[p.ext_src[k] as usize] {
                        row.push(p.ext_row[k]);
                        src.push(p.ext_src[k]);
                    }
                }
                ptr.push(row.len() as u32);
            }
            (p.ext_ptr, p.ext_row, p.ext_src) = (ptr, row, src);
        }
        sp.adds_below = below;
        Some(sp)
    }

    fn build(plan: &SubtreePlan, n: usize, at_dofs: bool) -> Option<SeparatorPlan> {
        if plan.passes.len() < 2 {
            return None;
        }
        let mut compact = vec![u32::MAX; n];
        let mut rows = 0u32;
        for p in &plan.passes[1..] {
            for j in 0..p.len() {
                let r0 = p.row_ptr[j] as usize;
                for &d in &p.row_dof[r0..r0 + p.elim[j] as usize] {
                    if compact[d as usize] != u32::MAX {
                        return None;
                    }
                    compact[d as usize] = if at_dofs { d } else { rows };
                    rows += 1;
                }
            }
        }
        let rows = if at_dofs { n as u32 } else { rows };
        let mut passes = plan.passes.clone();
        for (q, p) in passes.iter_mut().enumerate() {
            for j in 0..p.len() {
                let (r0, r1, ne) = (p.row_ptr[j] as usize, p.row_ptr[j + 1] as usize, p.elim[j] as usize);
                let from = if q == 0 { r0 + ne } else { r0 };
                for d in &mut p.row_dof[from..r1] {
                    let c = compact[*d as usize];
                    if c == u32::MAX {
                        return None;
                    }
                    *d = c;
                }
            }
        }
        // Owner of each separator row: the last bottom subtree holding it as a Schur row.
        let bottom = &plan.passes[0];
        let mut owner = vec![u32::MAX; rows as usize];
        for j in 0..bottom.len() {
            let (r0, r1, ne) = (bottom.row_ptr[j] as usize, bottom.row_ptr[j + 1] as usize, bottom.elim[j] as usize);
            for i in r0 + ne..r1 {
                owner[passes[0].row_dof[i] as usize] = j as u32;
            }
        }
        if compact.iter().any(|&c| c != u32::MAX && owner[c as usize] == u32::MAX) {
            return None;
        }
        let (mut own_ptr, mut own_loc, mut own_dof) = (vec![0u32], Vec::new(), Vec::new());
        let mut max_rows0 = 0;
        for j in 0..bottom.len() {
            let (r0, r1, ne) = (bottom.row_ptr[j] as usize, bottom.row_ptr[j + 1] as usize, bottom.elim[j] as usize);
            for i in r0 + ne..r1 {
                if owner[passes[0].row_dof[i] as usize] == j as u32 {
                    own_loc.push((i - r0) as u32);
                    own_dof.push(bottom.row_dof[i]);
                }
            }
            max_rows0 = max_rows0.max(r1 - r0 + own_loc.len() - *own_ptr.last().unwrap_or(&0) as usize);
            own_ptr.push(own_loc.len() as u32);
        }
        Some(SeparatorPlan { passes, own_ptr, own_loc, own_dof, rows: rows as usize, max_rows0, at_dofs, adds_below: 0 })
    }
}

/// Each subtree's first eliminated dof if the eliminated rows (`row_dof[r0..r0 + elim]`) of every
/// subtree of `bottom` are a run of consecutive dofs in some order, as in 1D where a subtree of
/// consecutive elements eliminates the functions interior to it; else `None`. What lets
/// `mf_rows_fused_*` (`kernels/multifrontal_rows.cu`) address local row i at `d0 + i` with no `row_dof` load.
pub fn fused_bases(bottom: &Pass) -> Option<Vec<u32>> {
    (0..bottom.len())
        .map(|j| {
            let r0 = bottom.row_ptr[j] as usize;
            let rows = &bottom.row_dof[r0..r0 + bottom.elim[j] as usize];
            let d0 = rows.iter().copied().min().unwrap_or(0);
            let mut seen = vec![false; rows.len()];
            for &d in rows {
                let i = (d - d0) as usize;
                if i >= rows.len() || std::mem::replace(&mut seen[i], true) {
                    return None;
                }
            }
            Some(d0)
        })
        .collect()
}

/// The maps' solve through the compact separator rows on the CPU, one right-hand side: what the
/// kernels `mf_mapss_*` compute per column (a reference for tests). `layout` and `maps` are those
/// of the original plan (the subtrees' shapes are unchanged). With a `walk`, its passes run as its
/// steps in list order (what `mf_mapss_top` may do: any order that keeps each step after those it
/// waits for), the passes below it pass by pass. With rows at dofs ([`SeparatorPlan::at_dofs`])
/// `sep` stands for `x` itself: the bottom backward pass stores no owned row, and `x` takes the
/// separator rows as `sep` ends (what the kernels leave there). With adds
/// ([`SeparatorPlan::at_dofs_adds`]) the solve runs in place: `sep` starts as `b`, and the forward
/// passes below `adds_below` add `G·w_E` there instead of writing their roots' rows to the buffer.
#[allow(clippy::too_many_arguments)]
pub fn reference_separator_solve(s: &Symbolic, plan: &SubtreePlan, sp: &SeparatorPlan, layout: &MapLayout, maps: &[f64], walk: Option<&TopWalk>, b: &[f64], x: &mut [f64]) {
    // The adds run in place: `sep` is `x` is `b` (`b`'s rows at dofs, the separator rows among them).
    let sep = if sp.adds_below > 0 { b.to_vec() } else { vec![f64::NAN; sp.rows] };
    let mut st = RefState { sep, buf: vec![0.0; plan.leaf_slots as usize] };
    let end = walk.map_or(sp.passes.len(), |w| w.first);
    for q in 0..end {
        for j in 0..sp.passes[q].len() {
            st.step(s, plan, sp, layout, maps, q, j, false, b, x);
        }
    }
    if let Some(w) = walk {
        for i in 0..w.steps.len() / 2 {
            let (q, j, back) = ((w.steps[2 * i] & 0x7fff_ffff) as usize, w.steps[2 * i + 1] as usize, w.steps[2 * i] >> 31 != 0);
            st.step(s, plan, sp, layout, maps, q, j, back, b, x);
        }
    }
    for q in (0..end).rev() {
        for j in 0..sp.passes[q].len() {
            st.step(s, plan, sp, layout, maps, q, j, true, b, x);
        }
    }
    if sp.at_dofs {
        for &d in &sp.own_dof {
            x[d as usize] = st.sep[d as usize];
        }
    }
}

/// The separator rows and contribution buffer of [`reference_separator_solve`].
struct RefState {
    sep: Vec<f64>,
    buf: Vec<f64>,
}

impl RefState {
    /// Subtree `j` of pass `q` one way.
    #[allow(clippy::too_many_arguments)]
    fn step(&mut self, s: &Symbolic, plan: &SubtreePlan, sp: &SeparatorPlan, layout: &MapLayout, maps: &[f64], q: usize, j: usize, backward: bool, b: &[f64], x: &mut [f64]) {
        let (sep, buf) = (&mut self.sep, &mut self.buf);
        let p = &sp.passes[q];
        let (r, ne) = ((p.row_ptr[j + 1] - p.row_ptr[j]) as usize, p.elim[j] as usize);
        let rows = &p.row_dof[p.row_ptr[j] as usize..p.row_ptr[j + 1] as usize];
        // Owned rows (bottom pass only).
        let owned = || sp.own_ptr[j] as usize..sp.own_ptr[j + 1] as usize;
        if !backward {
            let mut w: Vec<f64> = (0..r).map(|i| if i >= ne { 0.0 } else if q == 0 { b[rows[i] as usize] } else { sep[rows[i] as usize] }).collect();
            if q == 0 && sp.adds_below == 0 {
                for k in owned() {
                    sep[rows[sp.own_loc[k] as usize] as usize] = b[sp.own_dof[k] as usize];
                }
            }
            for k in p.ext_ptr[j] as usize..p.ext_ptr[j + 1] as usize {
                w[p.ext_row[k] as usize] += buf[p.ext_src[k] as usize];
            }
            let gt = &maps[layout.off[q][j] as usize + r * ldm(ne)..];
            let root = p.nodes[p.sub_ptr[j + 1] as usize - 1] as usize;
            let out = (plan.slot[root] + s.e[root] as u64) as usize;
            for a in 0..r - ne {
                let g = (0..ne).map(|i| gt[i * (r - ne) + a] * w[i]).sum::<f64>();
                if q < sp.adds_below {
                    sep[rows[ne + a] as usize] += g;
                } else {
                    buf[out + a] = w[ne + a] + g;
                }
            }
            return;
        }
        let mut w: Vec<f64> = (0..r).map(|i| if i < ne && q == 0 { b[rows[i] as usize] } else { sep[rows[i] as usize] }).collect();
        for k in p.ext_ptr[j] as usize..p.ext_ptr[j + 1] as usize {
            if (p.ext_row[k] as usize) < ne {
                w[p.ext_row[k] as usize] += buf[p.ext_src[k] as usize];
            }
        }
        let mt = &maps[layout.off[q][j] as usize..];
        let xe: Vec<f64> = (0..ne).map(|i| (0..r).map(|k| mt[k * ldm(ne) + i] * w[k]).sum()).collect();
        for (i, v) in xe.into_iter().enumerate() {
            if q == 0 {
                x[rows[i] as usize] = v;
            } else {
                sep[rows[i] as usize] = v;
            }
        }
        if q == 0 && !sp.at_dofs {
            for k in owned() {
                x[sp.own_dof[k] as usize] = w[sp.own_loc[k] as usize];
            }
        }
    }
}

/// Passes of at most this many subtrees (and every pass above them) run as one launch,
/// [`TopWalk`], under [`crate::solver::multifrontal::cuda::MapsKernel::SeparatorsTop`].
pub const TOP_SUBTREES: usize = 512;

/// The passes near the root as one launch: steps (direction, pass, subtree) in an order where
/// every step comes after the steps it waits for — forward, pass after pass, each subtree after
/// its external children's subtrees; backward, from the top pass down, each subtree after the
/// subtree that holds its root's parent (the top subtrees after their own forward step).
#[derive(Clone, Debug)]
pub struct TopWalk {
    /// First pass of the walk (passes `first..` are walked).
    pub first: usize,
    /// Per step: `pass | backward << 31`, then the subtree.
    pub steps: Vec<u32>,
    /// Steps that step `i` waits for: `dep[dep_ptr[i]..dep_ptr[i + 1]]`, all before `i`.
    pub dep_ptr: Vec<u32>,
    pub dep: Vec<u32>,
}

impl TopWalk {
    /// The walk of the passes from the first one above the bottom pass with at most
    /// `max_subtrees` subtrees whose passes above all have as few, or `None` if there is none.
    pub fn new(s: &Symbolic, plan: &SubtreePlan, max_subtrees: usize) -> Option<TopWalk> {
        let np = plan.passes.len();
        let mut first = np;
        while first > 1 && plan.passes[first - 1].len() <= max_subtrees {
            first -= 1;
        }
        if first == np {
            return None;
        }
        // Forward step of the subtree holding each node (walked passes only).
        let mut step_of = vec![u32::MAX; s.num_nodes()];
        let mut steps = Vec::new();
        for (q, p) in plan.passes.iter().enumerate().skip(first) {
            for j in 0..p.len() {
                for &v in &p.nodes[p.sub_ptr[j] as usize..p.sub_ptr[j + 1] as usize] {
                    step_of[v as usize] = (steps.len() / 2) as u32;
                }
                steps.extend([q as u32, j as u32]);
            }
        }
        let nf = steps.len() / 2;
        let (mut dep_ptr, mut dep) = (vec![0u32], Vec::new());
        for i in 0..nf {
            let (q, j) = (steps[2 * i] as usize, steps[2 * i + 1] as usize);
            let p = &plan.passes[q];
            let mut kids: Vec<u32> = p.nodes[p.sub_ptr[j] as usize..p.sub_ptr[j + 1] as usize]
                .iter()
                .flat_map(|&v| s.children(v as usize).iter().map(|&c| step_of[c as usize]))
                .filter(|&c| c != u32::MAX && c != i as u32)
                .collect();
            kids.sort_unstable();
            kids.dedup();
            dep.extend(kids);
            dep_ptr.push(dep.len() as u32);
        }
        // Backward: top pass first; the step of subtree (forward step f) is bstep[f].
        let mut bstep = vec![0u32; nf];
        let mut order: Vec<usize> = (0..nf).collect();
        order.sort_by_key(|&f| std::cmp::Reverse(steps[2 * f]));
        for (k, &f) in order.iter().enumerate() {
            bstep[f] = (nf + k) as u32;
        }
        for &f in &order {
            let (q, j) = (steps[2 * f] as usize, steps[2 * f + 1] as usize);
            let p = &plan.passes[q];
            let root = p.nodes[p.sub_ptr[j + 1] as usize - 1] as usize;
            let up = s.parent[root];
            let above = if up == u32::MAX { u32::MAX } else { step_of[up as usize] };
            dep.push(if above == u32::MAX { f as u32 } else { bstep[above as usize] });
            dep_ptr.push(dep.len() as u32);
        }
        for &f in &order {
            steps.extend([steps[2 * f] | 1 << 31, steps[2 * f + 1]]);
        }
        Some(TopWalk { first, steps, dep_ptr, dep })
    }

    /// Steps each way.
    pub fn len(&self) -> usize {
        self.steps.len() / 4
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// What chaining pass 1 into the bottom forward pass needs ([`chain_deps`]): per bottom subtree
/// `j` the pass-1 subtrees that read its stores, `dep[dep_ptr[j]..dep_ptr[j + 1]]`, and per
/// pass-1 subtree how many bottom subtrees it reads, `need`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainDeps {
    pub dep_ptr: Vec<u32>,
    pub dep: Vec<u32>,
    pub need: Vec<u32>,
}

/// Which bottom subtrees each subtree of pass 1 reads in a forward solve through the separator
/// rows of `sp`: those holding its nodes' external children (their roots' contribution rows) and
/// the owners of the rows it eliminates (b copied into `sep`). `None` where that is not the whole
/// story — fewer than two passes, an external child outside the bottom pass, or a pass-1 subtree
/// that reads no bottom subtree (nothing would start it).
pub fn chain_deps(s: &Symbolic, plan: &SubtreePlan, sp: &SeparatorPlan) -> Option<ChainDeps> {
    let (p0, p1) = (plan.passes.first()?, plan.passes.get(1)?);
    let holder = |p: &Pass| {
        let mut of = vec![u32::MAX; s.num_nodes()];
        for j in 0..p.len() {
            for &v in &p.nodes[p.sub_ptr[j] as usize..p.sub_ptr[j + 1] as usize] {
                of[v as usize] = j as u32;
            }
        }
        of
    };
    let (in0, in1) = (holder(p0), holder(p1));
    let mut owner = vec![u32::MAX; sp.rows];
    for j in 0..p0.len() {
        let r0 = sp.passes[0].row_ptr[j] as usize;
        for k in sp.own_ptr[j] as usize..sp.own_ptr[j + 1] as usize {
            owner[sp.passes[0].row_dof[r0 + sp.own_loc[k] as usize] as usize] = j as u32;
        }
    }
    let mut readers: Vec<Vec<u32>> = vec![Vec::new(); p0.len()];
    let mut need = Vec::with_capacity(p1.len());
    for jj in 0..p1.len() {
        let mut kids = Vec::new();
        for &v in &p1.nodes[p1.sub_ptr[jj] as usize..p1.sub_ptr[jj + 1] as usize] {
            for &c in s.children(v as usize) {
                if in1[c as usize] == jj as u32 {
                    continue;
                }
                match in0[c as usize] {
                    u32::MAX => return None,
                    k => kids.push(k),
                }
            }
        }
        let q = &sp.passes[1];
        let r0 = q.row_ptr[jj] as usize;
        kids.extend(q.row_dof[r0..r0 + q.elim[jj] as usize].iter().map(|&r| owner[r as usize]).filter(|&o| o != u32::MAX));
        kids.sort_unstable();
        kids.dedup();
        if kids.is_empty() {
            return None;
        }
        need.push(kids.len() as u32);
        for k in kids {
            readers[k as usize].push(jj as u32);
        }
    }
    let mut dep_ptr = vec![0u32];
    let mut dep = Vec::new();
    for r in readers {
        dep.extend(r);
        dep_ptr.push(dep.len() as u32);
    }
    Some(ChainDeps { dep_ptr, dep, need })
}

/// [`reference_separator_solve`] (no walk) with pass 1 chained into the bottom forward pass as
/// `mf_mapss*_chain` runs it: the bottom subtrees in reverse order (an order the kernel may take),
/// each pass-1 subtree right after the last bottom subtree it reads by `deps` — so a read that
/// `deps` misses sees NaN or a stale row (a reference for tests of [`chain_deps`]).
#[allow(clippy::too_many_arguments)]
pub fn reference_chained_solve(s: &Symbolic, plan: &SubtreePlan, sp: &SeparatorPlan, layout: &MapLayout, maps: &[f64], deps: &ChainDeps, b: &[f64], x: &mut [f64]) {
    let mut st = RefState { sep: vec![f64::NAN; sp.rows], buf: vec![f64::NAN; plan.leaf_slots as usize] };
    let mut count = vec![0u32; deps.need.len()];
    for j in (0..sp.passes[0].len()).rev() {
        st.step(s, plan, sp, layout, maps, 0, j, false, b, x);
        for &jj in &deps.dep[deps.dep_ptr[j] as usize..deps.dep_ptr[j + 1] as usize] {
            count[jj as usize] += 1;
            if count[jj as usize] == deps.need[jj as usize] {
                st.step(s, plan, sp, layout, maps, 1, jj as usize, false, b, x);
            }
        }
    }
    for q in 2..sp.passes.len() {
        for j in 0..sp.passes[q].len() {
            st.step(s, plan, sp, layout, maps, q, j, false, b, x);
        }
    }
    for q in (0..sp.passes.len()).rev() {
        for j in 0..sp.passes[q].len() {
            st.step(s, plan, sp, layout, maps, q, j, true, b, x);
        }
    }
}

impl SeparatorPlan {
    /// Rows a block of pass `q`'s trimmed forward kernels stages (`CudaMultifrontal::set_sep_trim`,
    /// round 30): a subtree's eliminated rows, its root's result rows (the Schur count) over them,
    /// and on the bottom pass its owned rows after both — the most `max(elim, schur) + owned` of a
    /// subtree, where the default stages every local row and the owned rows (`max_rows0`).
    pub fn trim_rows(&self, q: usize) -> usize {
        let p = &self.passes[q];
        (0..p.len())
            .map(|j| {
                let (ne, r) = (p.elim[j] as usize, (p.row_ptr[j + 1] - p.row_ptr[j]) as usize);
                let own = if q == 0 { (self.own_ptr[j + 1] - self.own_ptr[j]) as usize } else { 0 };
                ne.max(r - ne) + own
            })
            .max()
            .unwrap_or(0)
    }
}
