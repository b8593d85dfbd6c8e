//! The multifrontal numeric phases on the CPU: rayon over the nodes of a level, the same level
//! order as the GPU. The factor storage holds every front in full (`m × m`, column-major): the
//! eliminated block's LU, `U_ES`, `L_SE` and, for the parent to read, the Schur complement.
use super::dense;
use super::symbolic::Symbolic;
use crate::backend::Cpu;
use crate::solver::factorization::{check_rhs_len, Factorization};
use crate::{Error, Result};
use faer::Par;
use rayon::prelude::*;
use std::sync::Arc;

/// A multifrontal LU factorization held in host memory.
pub struct CpuMultifrontal {
    sym: Arc<Symbolic>,
    storage: Vec<f64>,
    pinv: Vec<u32>,
}

/// Splits `data` into the consecutive pieces `[off[i] − base, off[i] − base + len[i])`.
fn split_at_offsets<'a, T>(mut data: &'a mut [T], base: u64, pieces: impl Iterator<Item = (u64, u64)>) -> Vec<&'a mut [T]> {
    let mut out = Vec::new();
    let mut at = base;
    for (off, len) in pieces {
        let (_, rest) = std::mem::take(&mut data).split_at_mut((off - at) as usize);
        let (piece, rest) = rest.split_at_mut(len as usize);
        out.push(piece);
        data = rest;
        at = off + len;
    }
    out
}

/// faer's parallelism for the dense work of one node: all threads when a level has fewer nodes
/// than threads (near the root), none otherwise (rayon already spreads the nodes).
fn node_par(level_nodes: usize) -> Par {
    if level_nodes < rayon::current_num_threads() { Par::rayon(0) } else { Par::Seq }
}

/// A shared output vector written at disjoint indices from several threads.
struct Disjoint {
    ptr: *mut f64,
    len: usize,
}

// SAFETY: see `write`/`read`: the solve writes each index from one node only, and reads an index
// only after the level that wrote it has finished (rayon's join orders the levels).
unsafe impl Send for Disjoint {}
unsafe impl Sync for Disjoint {}

impl Disjoint {
    /// Row `d` (`row.len()` values at `d · row.len()`) ← `row`.
    /// SAFETY: no other thread reads or writes that row during this level.
    unsafe fn write_row(&self, d: usize, row: &[f64]) {
        let at = d * row.len();
        assert!(at + row.len() <= self.len);
        unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), self.ptr.add(at), row.len()) }
    }
    /// `row` ← row `d`.
    /// SAFETY: no thread writes that row during this level.
    unsafe fn read_row(&self, d: usize, row: &mut [f64]) {
        let at = d * row.len();
        assert!(at + row.len() <= self.len);
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(at), row.as_mut_ptr(), row.len()) }
    }
}

/// `out[j·rows + i] = a[i·cols + j]` for a row-major `rows × cols` matrix `a`, in parallel blocks.
fn transpose(a: &[f64], rows: usize, cols: usize, out: &mut [f64]) {
    const B: usize = 64;
    if cols == 1 || rows == 1 {
        out.copy_from_slice(a);
        return;
    }
    out.par_chunks_mut(B * rows).enumerate().for_each(|(jb, chunk)| {
        let j0 = jb * B;
        for i0 in (0..rows).step_by(B) {
            for j in j0..(j0 + B).min(cols) {
                let dst = &mut chunk[(j - j0) * rows..(j - j0 + 1) * rows];
                for i in i0..(i0 + B).min(rows) {
                    dst[i] = a[i * cols + j];
                }
            }
        }
    });
}

/// Checks the element matrices (`nelem · k²` finite values) and copies them into the leaf part of
/// a new factor storage, in front order.
pub(crate) fn leaf_fronts(sym: &Symbolic, element_matrices: &[f64], storage: &mut [f64]) -> Result<()> {
    let k = sym.k;
    if element_matrices.len() != sym.leaf_len as usize {
        return Err(Error::dim("multifrontal element matrices (elements × k²)", sym.leaf_len as usize, element_matrices.len()));
    }
    if let Some(i) = element_matrices.iter().position(|v| !v.is_finite()) {
        return Err(Error::Factorization(format!("element matrix {} has a non-finite entry ({})", i / (k * k), element_matrices[i])));
    }
    storage[..element_matrices.len()].copy_from_slice(element_matrices);
    for (leaf, pos) in &sym.leaf_perms {
        let at = *leaf as usize * k * k;
        let block = &mut storage[at..at + k * k];
        let old = block.to_vec();
        for b in 0..k {
            for a in 0..k {
                block[pos[a] as usize + pos[b] as usize * k] = old[a + b * k];
            }
        }
    }
    Ok(())
}

/// The error of a zero or non-finite pivot at step `step` of node `v`.
pub(crate) fn singular(sym: &Symbolic, v: usize, step: usize) -> Error {
    Error::Factorization(format!(
        "zero or non-finite pivot while eliminating dof {} (step {step} of a front of {} rows): the matrix is singular",
        sym.dofs(v)[step],
        sym.m[v]
    ))
}

/// The dof-major work space of a solve: `b` transposed, `x` (dof-major) and the contribution
/// slots of the leaves and of two levels (ping-pong).
struct SolveWork {
    nrhs: usize,
    bt: Vec<f64>,
    xt: Vec<f64>,
    leaf_buf: Vec<f64>,
    bufs: [Vec<f64>; 2],
}

impl SolveWork {
    /// Checks the sizes; `None` for no right-hand side.
    fn new(sym: &Symbolic, nrhs: usize, b: &[f64], x: &[f64]) -> Result<Option<SolveWork>> {
        let n = sym.n;
        if b.len() != n * nrhs || x.len() != n * nrhs {
            return Err(Error::dim("multifrontal right-hand sides", n * nrhs, b.len().min(x.len())));
        }
        if nrhs == 0 {
            return Ok(None);
        }
        // Work dof-major (row d holds the nrhs values of dof d): every row access below is a
        // contiguous, vectorizable slice.
        let mut bt = vec![0.0; n * nrhs];
        transpose(b, nrhs, n, &mut bt);
        let level = sym.level_slots as usize * nrhs;
        Ok(Some(SolveWork { nrhs, bt, xt: vec![0.0; n * nrhs], leaf_buf: vec![0.0; sym.leaf_slots as usize * nrhs], bufs: [vec![0.0; level], vec![0.0; level]] }))
    }
}

/// The slot pieces (`m × nrhs` each) of the nodes `range` in `buf`: one per active node, `None`
/// for the others.
fn slot_pieces<'a>(sym: &Symbolic, range: std::ops::Range<usize>, nrhs: usize, buf: &'a mut [f64]) -> Vec<Option<&'a mut [f64]>> {
    let active: Vec<usize> = range.clone().filter(|&v| sym.active[v]).collect();
    let mut pieces = split_at_offsets(buf, 0, active.iter().map(|&v| (sym.slot[v] * nrhs as u64, sym.m[v] as u64 * nrhs as u64))).into_iter();
    range.map(|v| if sym.active[v] { pieces.next() } else { None }).collect()
}

/// Forward step of node `v` (factorized front `front`, pivot positions `pinv`) into its slot `r`
/// (`m × nrhs`): place its eliminated rows of `b` and its children's contributions, eliminate,
/// store `y` at its dofs in `x`.
#[allow(clippy::too_many_arguments)]
fn forward_node(sym: &Symbolic, v: usize, front: &[f64], pinv: &[u32], r: &mut [f64], nrhs: usize, leaf_buf: &[f64], prev: &[f64], b: &[f64], x: &Disjoint, par: Par) {
    let (m, e) = (sym.m[v] as usize, sym.e[v] as usize);
    let dofs = sym.dofs(v);
    r.fill(0.0);
    for i in 0..e {
        let d = dofs[i] as usize;
        r[pinv[i] as usize * nrhs..][..nrhs].copy_from_slice(&b[d * nrhs..(d + 1) * nrhs]);
    }
    for &c in sym.children(v) {
        let c = c as usize;
        if !sym.active[c] {
            continue;
        }
        let src = if c < sym.nelem { leaf_buf } else { prev };
        let ce = sym.e[c] as usize;
        let child = &src[(sym.slot[c] as usize + ce) * nrhs..];
        for (a, &q) in sym.map(c).iter().enumerate() {
            let q = q as usize;
            let row = if q < e { pinv[q] as usize } else { q };
            r[row * nrhs..(row + 1) * nrhs].iter_mut().zip(&child[a * nrhs..(a + 1) * nrhs]).for_each(|(t, s)| *t += s);
        }
    }
    dense::forward(front, m, e, r, nrhs, par);
    for i in 0..e {
        // SAFETY: dof i is eliminated by node v only; nothing reads it during this level.
        unsafe { x.write_row(dofs[i] as usize, &r[i * nrhs..(i + 1) * nrhs]) };
    }
}

impl CpuMultifrontal {
    /// Factorizes the matrix `Σ_e R_eᵀ K_e R_e` given by its element matrices (`k × k`
    /// column-major each, in the element order of `sym`).
    pub fn factor(sym: Arc<Symbolic>, element_matrices: &[f64]) -> Result<CpuMultifrontal> {
        let mut f = CpuMultifrontal::empty(sym);
        f.refactor(element_matrices)?;
        Ok(f)
    }

    /// Storage for a factorization of `sym`, not yet factorized.
    fn empty(sym: Arc<Symbolic>) -> CpuMultifrontal {
        CpuMultifrontal { storage: vec![0.0; sym.storage_len as usize], pinv: vec![0u32; sym.n], sym }
    }

    /// Factorizes new element matrices (same structure) in the storage of this factorization.
    pub fn refactor(&mut self, element_matrices: &[f64]) -> Result<()> {
        self.factor_with(element_matrices, None)
    }

    /// Factorizes (as [`Self::factor`]) and solves `nrhs` right-hand sides known now in one go
    /// ([`Self::factor_and_solve`]); the factorization is returned for later solves.
    pub fn factor_and_solve_new(sym: Arc<Symbolic>, element_matrices: &[f64], nrhs: usize, b: &[f64], x: &mut [f64]) -> Result<CpuMultifrontal> {
        let mut f = CpuMultifrontal::empty(sym);
        f.factor_and_solve(element_matrices, nrhs, b, x)?;
        Ok(f)
    }

    /// Factorizes new element matrices (as [`Self::refactor`]) and solves `nrhs` right-hand sides
    /// known now (`b`, `x` as in [`Self::solve_into`]) with the forward elimination inside the
    /// factorization: each node's forward step runs in the same parallel step as its elimination,
    /// right after it, on the front just written (in cache), so only the backward pass remains
    /// after the factorization. The factorization is kept for later solves. The CPU twin of
    /// [`crate::solver::multifrontal::CudaMultifrontal::factor_and_solve`].
    pub fn factor_and_solve(&mut self, element_matrices: &[f64], nrhs: usize, b: &[f64], x: &mut [f64]) -> Result<()> {
        match SolveWork::new(&self.sym, nrhs, b, x)? {
            None => self.refactor(element_matrices),
            Some(mut work) => {
                self.factor_with(element_matrices, Some(&mut work))?;
                self.backward(work, x)
            }
        }
    }

    /// The factorization, with the forward pass of `work` fused into it where given.
    fn factor_with(&mut self, element_matrices: &[f64], mut work: Option<&mut SolveWork>) -> Result<()> {
        let CpuMultifrontal { sym, storage, pinv } = self;
        let sym: &Symbolic = sym;
        leaf_fronts(sym, element_matrices, storage)?;
        let k2 = (sym.k * sym.k) as u64;
        let nleaf = sym.nelem;
        let nrhs = work.as_ref().map_or(0, |w| w.nrhs);
        let out = work.as_mut().map(|w| Disjoint { ptr: w.xt.as_mut_ptr(), len: w.xt.len() });
        // Leaves that own dofs, in parallel (and every active leaf's forward step).
        {
            let (leaf_area, _) = storage.split_at_mut(sym.leaf_len as usize);
            let leaf_pinv_len = sym.pinv_off.get(nleaf).copied().unwrap_or(sym.n as u64);
            let pins = split_at_offsets(&mut pinv[..leaf_pinv_len as usize], 0, (0..nleaf).map(|v| (sym.pinv_off[v], sym.e[v] as u64)));
            let (slots, b) = match work.as_mut() {
                Some(w) => (slot_pieces(sym, 0..nleaf, nrhs, &mut w.leaf_buf), &w.bt[..]),
                None => ((0..nleaf).map(|_| None).collect(), &[][..]),
            };
            leaf_area.par_chunks_mut(k2 as usize).zip(pins).zip(slots).enumerate().try_for_each(|(v, ((f, p), r))| {
                if sym.e[v] > 0 {
                    dense::eliminate(f, sym.k, sym.e[v] as usize, p, Par::Seq).map_err(|s| singular(sym, v, s))?;
                }
                if let (Some(r), Some(out)) = (r, out.as_ref()) {
                    forward_node(sym, v, f, p, r, nrhs, &[], &[], b, out, Par::Seq);
                }
                Ok::<(), Error>(())
            })?;
        }
        for (i, r) in sym.levels.iter().enumerate() {
            let (start, end) = (r.start as usize, r.end as usize);
            let (done, rest) = storage.split_at_mut(sym.front_off[start] as usize);
            let fronts = split_at_offsets(rest, sym.front_off[start], (start..end).map(|v| (sym.front_off[v], sym.m[v] as u64 * sym.m[v] as u64)));
            let (_, pin_rest) = pinv.split_at_mut(sym.pinv_off[start] as usize);
            let pins = split_at_offsets(pin_rest, sym.pinv_off[start], (start..end).map(|v| (sym.pinv_off[v], sym.e[v] as u64)));
            let par = node_par(end - start);
            let done: &[f64] = done;
            let (slots, leaf_buf, prev, b) = match work.as_mut() {
                Some(w) => {
                    let SolveWork { bt, leaf_buf, bufs, .. } = &mut **w;
                    let (first, second) = bufs.split_at_mut(1);
                    let (cur, prev) = if i % 2 == 0 { (&mut first[0], &second[0]) } else { (&mut second[0], &first[0]) };
                    (slot_pieces(sym, start..end, nrhs, cur), &leaf_buf[..], &prev[..], &bt[..])
                }
                None => ((start..end).map(|_| None).collect(), &[][..], &[][..], &[][..]),
            };
            fronts.into_par_iter().zip(pins).zip(slots).enumerate().try_for_each(|(i, ((f, p), r))| {
                let v = start + i;
                assemble(sym, v, done, f);
                dense::eliminate(f, sym.m[v] as usize, sym.e[v] as usize, p, par).map_err(|s| singular(sym, v, s))?;
                if let (Some(r), Some(out)) = (r, out.as_ref()) {
                    forward_node(sym, v, f, p, r, nrhs, leaf_buf, prev, b, out, par);
                }
                Ok::<(), Error>(())
            })?;
        }
        Ok(())
    }

    pub fn symbolic(&self) -> &Arc<Symbolic> {
        &self.sym
    }

    /// Node `v`'s factorized `m × m` front (column-major).
    pub fn front(&self, v: usize) -> &[f64] {
        let m = self.sym.m[v] as usize;
        &self.storage[self.sym.front_off[v] as usize..][..m * m]
    }

    /// Pivot position of each of node `v`'s eliminated rows.
    pub fn pinv(&self, v: usize) -> &[u32] {
        &self.pinv[self.sym.pinv_off[v] as usize..][..self.sym.e[v] as usize]
    }

    /// Backward step of node `v` (with `e > 0`) using `r` as work space.
    fn backward_node(&self, v: usize, r: &mut [f64], nrhs: usize, x: &Disjoint, par: Par) {
        let sym = &*self.sym;
        let (m, e) = (sym.m[v] as usize, sym.e[v] as usize);
        let dofs = sym.dofs(v);
        for (i, &d) in dofs.iter().enumerate() {
            // SAFETY: the Schur dofs were finished by ancestors (earlier levels) and the
            // eliminated ones hold this node's forward result; no one writes them now.
            unsafe { x.read_row(d as usize, &mut r[i * nrhs..(i + 1) * nrhs]) };
        }
        dense::backward(self.front(v), m, e, r, nrhs, par);
        for (i, &d) in dofs[..e].iter().enumerate() {
            // SAFETY: as in `forward_node`.
            unsafe { x.write_row(d as usize, &r[i * nrhs..(i + 1) * nrhs]) };
        }
    }

    /// Solves for `nrhs` right-hand sides stored one after another in `b`, into `x`.
    pub fn solve_into(&self, nrhs: usize, b: &[f64], x: &mut [f64]) -> Result<()> {
        let Some(mut work) = SolveWork::new(&self.sym, nrhs, b, x)? else { return Ok(()) };
        self.forward(&mut work);
        self.backward(work, x)
    }

    /// The forward pass with the factorization as it is: leaves, then levels deepest first.
    fn forward(&self, w: &mut SolveWork) {
        let sym = &*self.sym;
        let nrhs = w.nrhs;
        let out = Disjoint { ptr: w.xt.as_mut_ptr(), len: w.xt.len() };
        let b = &w.bt[..];
        let fwd = |v: usize, r: Option<&mut [f64]>, leaf_buf: &[f64], prev: &[f64], par: Par| {
            if let Some(r) = r {
                forward_node(sym, v, self.front(v), self.pinv(v), r, nrhs, leaf_buf, prev, b, &out, par);
            }
        };
        let slots = slot_pieces(sym, 0..sym.nelem, nrhs, &mut w.leaf_buf);
        slots.into_par_iter().enumerate().for_each(|(v, r)| fwd(v, r, &[], &[], Par::Seq));
        for (i, r) in sym.levels.iter().enumerate() {
            let (start, end) = (r.start as usize, r.end as usize);
            let (first, second) = w.bufs.split_at_mut(1);
            let (cur, prev) = if i % 2 == 0 { (&mut first[0], &second[0]) } else { (&mut second[0], &first[0]) };
            let par = node_par((start..end).filter(|&v| sym.active[v]).count());
            let leaf_buf = &w.leaf_buf[..];
            slot_pieces(sym, start..end, nrhs, cur).into_par_iter().enumerate().for_each(|(i, r)| fwd(start + i, r, leaf_buf, prev, par));
        }
    }

    /// The backward pass after [`Self::forward`] (or a fused factorization): root level first,
    /// then down, then the leaves; `x` from the dof-major result.
    fn backward(&self, mut w: SolveWork, x: &mut [f64]) -> Result<()> {
        let sym = &*self.sym;
        let (n, nrhs) = (sym.n, w.nrhs);
        let out = Disjoint { ptr: w.xt.as_mut_ptr(), len: w.xt.len() };
        let slots = |vs: &[usize]| vs.iter().map(|&v| (sym.slot[v] * nrhs as u64, sym.m[v] as u64 * nrhs as u64)).collect::<Vec<_>>();
        for r in sym.levels.iter().rev() {
            let nodes: Vec<usize> = (r.start as usize..r.end as usize).filter(|&v| sym.e[v] > 0).collect();
            let pieces = split_at_offsets(&mut w.bufs[0], 0, slots(&nodes).into_iter());
            let par = node_par(nodes.len());
            nodes.par_iter().zip(pieces).for_each(|(&v, r)| self.backward_node(v, r, nrhs, &out, par));
        }
        let owners: Vec<usize> = (0..sym.nelem).filter(|&v| sym.active[v] && sym.e[v] > 0).collect();
        let pieces = split_at_offsets(&mut w.leaf_buf, 0, slots(&owners).into_iter());
        owners.par_iter().zip(pieces).for_each(|(&v, r)| self.backward_node(v, r, nrhs, &out, Par::Seq));
        transpose(&w.xt, n, nrhs, x);
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::Factorization(format!("solution entry {} of right-hand side {} is not finite", i % n, i / n)));
        }
        Ok(())
    }
}

/// Zeroes node `v`'s front `f` and adds its children's Schur complements (extend-add).
fn assemble(sym: &Symbolic, v: usize, done: &[f64], f: &mut [f64]) {
    let m = sym.m[v] as usize;
    f.fill(0.0);
    for &c in sym.children(v) {
        let c = c as usize;
        let (mc, ec) = (sym.m[c] as usize, sym.e[c] as usize);
        let child = &done[sym.front_off[c] as usize..][..mc * mc];
        let map = sym.map(c);
        for (b, &qb) in map.iter().enumerate() {
            let col = &child[(ec + b) * mc + ec..(ec + b + 1) * mc];
            let dst = qb as usize * m;
            for (a, &qa) in map.iter().enumerate() {
                f[dst + qa as usize] += col[a];
            }
        }
    }
}

impl CpuMultifrontal {
    /// The CPU twin of [`super::CudaMultifrontal::solve_many_rows`]: `b` and `x` row-major
    /// (`b[row · nrhs + c]`), `n × nrhs`. It transposes into the column-major solve and back (two
    /// extra copies: the CPU sweep is not limited by the layout).
    pub fn solve_many_rows(&self, backend: &Cpu, nrhs: usize, b: &[f64], x: &mut [f64]) -> Result<()> {
        let n = self.sym.n;
        let want = n.checked_mul(nrhs).ok_or_else(|| Error::invalid(format!("multifrontal row-major solve: {n} × {nrhs} values overflow")))?;
        if b.len() != want || x.len() != want {
            return Err(Error::invalid(format!(
                "multifrontal row-major solve: b has {} and x {} values, expected n × nrhs = {n} × {nrhs} = {want}",
                b.len(),
                x.len()
            )));
        }
        let mut bc = vec![0.0; want];
        for (r, row) in b.chunks_exact(nrhs.max(1)).enumerate().take(n) {
            for (c, &v) in row.iter().enumerate() {
                bc[c * n + r] = v;
            }
        }
        let mut xc = vec![0.0; want];
        self.solve_many(backend, nrhs, &bc, &mut xc)?;
        for (r, row) in x.chunks_exact_mut(nrhs.max(1)).enumerate().take(n) {
            for (c, v) in row.iter_mut().enumerate() {
                *v = xc[c * n + r];
            }
        }
        Ok(())
    }
}

impl Factorization<Cpu> for CpuMultifrontal {
    fn n(&self) -> usize {
        self.sym.n
    }
    fn name(&self) -> String {
        "multifrontal".into()
    }
    fn solve_many(&self, backend: &Cpu, nrhs: usize, b: &Vec<f64>, x: &mut Vec<f64>) -> Result<()> {
        check_rhs_len(backend, "multifrontal solve", self.sym.n, nrhs, b, x)?;
        self.solve_into(nrhs, b, x)
    }
}
