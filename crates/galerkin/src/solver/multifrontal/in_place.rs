//! Whether a row-major solve through the separator rows may overwrite `b` with `x` (round 27,
//! issue 15: `CudaMultifrontal::solve_many_rows_in_place`), decided on the plan itself: every
//! launch's blocks (subtrees; the walk's steps) with the rows of `b`, `x` and `sep` each reads and
//! writes, the value each read needs (`b` or `x` of a dof) and each write leaves, applied launch
//! after launch to one buffer where `x` is `b` (and `sep` is `x` at dofs). A hazard is a read that
//! finds another value than it needs (a row overwritten before a later read of its `b`, or not yet
//! solved), two blocks of one launch touching one row where either writes (the walk: two steps
//! that no chain of waits orders), or a dof whose `x` is missing at the end.
//!
//! The kernels' side (read in `kernels/multifrontal.cu`, `maps_sep_subtree`): a block gathers a
//! chunk's lines (`b` and `sep`) into shared memory, waits for them and its barrier, and only then
//! stores that chunk's `x`; chunks of one block are disjoint columns. So a block is modelled as
//! all its reads, then all its writes.
use super::separators::{SeparatorPlan, TopWalk};
use super::subtrees::SubtreePlan;

/// How the buffers of a solve alias and which owned-row copies its bottom pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aliasing {
    /// `x` is `b` (an in-place solve).
    pub in_place: bool,
    /// The bottom forward pass copies `b` at its owned rows into `sep`.
    pub owned_forward: bool,
    /// The bottom backward pass stores its owned rows' `x` from `sep`.
    pub owned_backward: bool,
}

impl Aliasing {
    /// What the GPU runs for layout `sp` ([`super::cuda::CudaMultifrontal`]'s owned-row tables,
    /// `DevSeparators::pass`): at dofs no owned store backward (`sep` is `x`), and in place at dofs
    /// no owned copy forward either (`sep` is `b`: the row is where the copy would put it).
    pub fn of(sp: &SeparatorPlan, in_place: bool) -> Aliasing {
        Aliasing { in_place, owned_forward: !(sp.at_dofs && in_place), owned_backward: !sp.at_dofs }
    }
}

const B: u64 = 0;
const X: u64 = 1;
const S: u64 = 2;

/// One access of a block: a cell (buffer, row), whether it writes, and the value (`d + 1`: `b` of
/// dof `d`; `-(d + 1)`: its `x`) it needs or leaves.
#[derive(Clone, Copy, Debug)]
struct Access {
    cell: (u64, u32),
    write: bool,
    value: i64,
}

fn b_of(d: u32) -> i64 {
    i64::from(d) + 1
}

fn x_of(d: u32) -> i64 {
    -(i64::from(d) + 1)
}

/// The hazards of a row-major solve through `sp` (the layout of `plan`) with `alias`, its passes
/// near the root as `walk` where given (one launch), the others one launch a pass each way:
/// empty where it is safe; at most `limit` described.
pub fn hazards(plan: &SubtreePlan, sp: &SeparatorPlan, walk: Option<&TopWalk>, alias: Aliasing, limit: usize) -> Vec<String> {
    let n = plan.passes.iter().flat_map(|p| p.row_dof.iter()).map(|&d| d as usize + 1).max().unwrap_or(0);
    let mut emu = Emu { cells: vec![vec![0; n], vec![0; n], vec![0; sp.rows]], alias, at_dofs: sp.at_dofs, out: Vec::new(), limit };
    // `b` holds its values; `x` (its own buffer only out of place) and `sep` nothing yet.
    emu.cells[0] = (0..n as u32).map(b_of).collect();
    let end = walk.map_or(sp.passes.len(), |w| w.first);
    let blocks = |q: usize, back: bool| (0..sp.passes[q].len()).map(|j| step(plan, sp, alias, q, j, back)).collect::<Vec<_>>();
    for q in 0..end {
        emu.launch(&format!("forward {q}"), blocks(q, false), None);
    }
    if let Some(w) = walk {
        let n = w.steps.len() / 2;
        let steps: Vec<Vec<Access>> = (0..n).map(|i| step(plan, sp, alias, (w.steps[2 * i] & 0x7fff_ffff) as usize, w.steps[2 * i + 1] as usize, w.steps[2 * i] >> 31 != 0)).collect();
        // Steps before each step by its chain of waits, as bit sets.
        let words = n.div_ceil(64);
        let mut before = vec![0u64; n * words];
        for i in 0..n {
            for &d in &w.dep[w.dep_ptr[i] as usize..w.dep_ptr[i + 1] as usize] {
                let d = d as usize;
                before[i * words + d / 64] |= 1 << (d % 64);
                for k in 0..words {
                    before[i * words + k] |= before[d * words + k];
                }
            }
        }
        emu.launch("walk", steps, Some(&|a: usize, b: usize| before[b * words + a / 64] >> (a % 64) & 1 != 0));
    }
    for q in (0..end).rev() {
        emu.launch(&format!("backward {q}"), blocks(q, true), None);
    }
    let xs = if emu.alias.in_place { B } else { X };
    for d in 0..n as u32 {
        let v = emu.get((X, d));
        if v != x_of(d) {
            emu.note(format!("x of dof {d} missing at the end (buffer {xs} holds {v})"));
        }
    }
    emu.out
}

/// The accesses of subtree `j` of pass `q` one way (the kernels' `maps_sep_issue` and
/// `maps_sep_chunk`, row-major).
fn step(plan: &SubtreePlan, sp: &SeparatorPlan, alias: Aliasing, q: usize, j: usize, backward: bool) -> Vec<Access> {
    let (p, po) = (&sp.passes[q], &plan.passes[q]);
    let (r0, r1, ne) = (p.row_ptr[j] as usize, p.row_ptr[j + 1] as usize, p.elim[j] as usize);
    let read = |cell, value| Access { cell, write: false, value };
    let write = |cell, value| Access { cell, write: true, value };
    let mut a = Vec::new();
    for i in r0..r1 {
        let (row, dof) = (p.row_dof[i], po.row_dof[i]);
        let at = if q == 0 && i < r0 + ne { (B, dof) } else { (S, row) };
        if i < r0 + ne {
            a.push(read(at, b_of(dof)));
        } else if backward {
            a.push(read(at, x_of(dof)));
        }
    }
    let owned = sp.own_ptr[j] as usize..sp.own_ptr[j + 1] as usize;
    if q == 0 && !backward && alias.owned_forward {
        for k in owned.clone() {
            a.push(read((B, sp.own_dof[k]), b_of(sp.own_dof[k])));
        }
    }
    if backward {
        for i in r0..r0 + ne {
            let (row, dof) = (p.row_dof[i], po.row_dof[i]);
            a.push(write(if q == 0 { (X, dof) } else { (S, row) }, x_of(dof)));
        }
    }
    if q == 0 && backward && alias.owned_backward {
        for k in owned.clone() {
            a.push(write((X, sp.own_dof[k]), x_of(sp.own_dof[k])));
        }
    }
    if q == 0 && !backward && alias.owned_forward {
        for k in owned {
            let row = p.row_dof[r0 + sp.own_loc[k] as usize];
            a.push(write((S, row), b_of(sp.own_dof[k])));
        }
    }
    a
}

/// The buffers' rows as the launches leave them, and the hazards found.
struct Emu {
    cells: Vec<Vec<i64>>,
    alias: Aliasing,
    at_dofs: bool,
    out: Vec<String>,
    limit: usize,
}

impl Emu {
    /// The buffer a cell lives in: `x` is `b` in place, `sep` is `x` at dofs.
    fn resolve(&self, (buf, row): (u64, u32)) -> (usize, usize) {
        let buf = if buf == S && self.at_dofs { X } else { buf };
        let buf = if buf == X && self.alias.in_place { B } else { buf };
        (buf as usize, row as usize)
    }

    fn get(&self, cell: (u64, u32)) -> i64 {
        let (b, r) = self.resolve(cell);
        self.cells[b][r]
    }

    fn note(&mut self, s: String) {
        if self.out.len() < self.limit {
            self.out.push(s);
        }
    }

    /// One launch: its blocks' conflicts (unless `ordered(a, b)`: block `a` finishes before `b`
    /// starts), then the blocks in order, each its reads then its writes.
    fn launch(&mut self, label: &str, blocks: Vec<Vec<Access>>, ordered: Option<&dyn Fn(usize, usize) -> bool>) {
        let mut touch: Vec<((usize, usize), usize, bool)> = blocks.iter().enumerate().flat_map(|(k, a)| a.iter().map(move |x| (x.cell, k, x.write))).map(|(c, k, w)| (self.resolve(c), k, w)).collect();
        touch.sort_unstable();
        for group in touch.chunk_by(|a, b| a.0 == b.0) {
            for (i, a) in group.iter().enumerate() {
                for b in &group[i + 1..] {
                    let apart = a.1 != b.1 && (a.2 || b.2) && !ordered.is_some_and(|o| o(a.1.min(b.1), a.1.max(b.1)));
                    if apart {
                        self.note(format!("{label}: blocks {} and {} both touch buffer {} row {}, one writing, unordered", a.1, b.1, a.0 .0, a.0 .1));
                    }
                }
            }
        }
        for (k, acc) in blocks.iter().enumerate() {
            for x in acc.iter().filter(|x| !x.write) {
                let v = self.get(x.cell);
                if v != x.value {
                    self.note(format!("{label}: block {k} reads buffer {} row {} for {} but finds {v}", x.cell.0, x.cell.1, x.value));
                }
            }
            for x in acc.iter().filter(|x| x.write) {
                let (b, r) = self.resolve(x.cell);
                self.cells[b][r] = x.value;
            }
        }
    }
}
