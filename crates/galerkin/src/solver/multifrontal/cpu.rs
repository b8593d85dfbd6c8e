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

impl CpuMultifrontal {
    /// Factorizes the matrix `Σ_e R_eᵀ K_e R_e` given by its element matrices (`k × k`
    /// column-major each, in the element order of `sym`).
    pub fn factor(sym: Arc<Symbolic>, element_matrices: &[f64]) -> Result<CpuMultifrontal> {
        let mut f = CpuMultifrontal { storage: vec![0.0; sym.storage_len as usize], pinv: vec![0u32; sym.n], sym };
        f.refactor(element_matrices)?;
        Ok(f)
    }

    /// Factorizes new element matrices (same structure) in the storage of this factorization.
    pub fn refactor(&mut self, element_matrices: &[f64]) -> Result<()> {
        let CpuMultifrontal { sym, storage, pinv } = self;
        let sym: &Symbolic = sym;
        leaf_fronts(sym, element_matrices, storage)?;
        let k2 = (sym.k * sym.k) as u64;
        let nleaf = sym.nelem;
        // Leaves that own dofs, in parallel.
        {
            let (leaf_area, _) = storage.split_at_mut(sym.leaf_len as usize);
            let leaf_pinv_len = sym.pinv_off.get(nleaf).copied().unwrap_or(sym.n as u64);
            let pins = split_at_offsets(&mut pinv[..leaf_pinv_len as usize], 0, (0..nleaf).map(|v| (sym.pinv_off[v], sym.e[v] as u64)));
            leaf_area
                .par_chunks_mut(k2 as usize)
                .zip(pins)
                .enumerate()
                .filter(|(v, _)| sym.e[*v] > 0)
                .try_for_each(|(v, (f, p))| dense::eliminate(f, sym.k, sym.e[v] as usize, p, Par::Seq).map_err(|s| singular(sym, v, s)))?;
        }
        for r in &sym.levels {
            let (start, end) = (r.start as usize, r.end as usize);
            let (done, rest) = storage.split_at_mut(sym.front_off[start] as usize);
            let fronts = split_at_offsets(rest, sym.front_off[start], (start..end).map(|v| (sym.front_off[v], sym.m[v] as u64 * sym.m[v] as u64)));
            let (_, pin_rest) = pinv.split_at_mut(sym.pinv_off[start] as usize);
            let pins = split_at_offsets(pin_rest, sym.pinv_off[start], (start..end).map(|v| (sym.pinv_off[v], sym.e[v] as u64)));
            let par = node_par(end - start);
            let done: &[f64] = done;
            fronts.into_par_iter().zip(pins).enumerate().try_for_each(|(i, (f, p))| {
                let v = start + i;
                assemble(sym, v, done, f);
                dense::eliminate(f, sym.m[v] as usize, sym.e[v] as usize, p, par).map_err(|s| singular(sym, v, s))
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

    /// Forward step of node `v` into its slot `r` (`m × nrhs`): place its eliminated rows of `b`
    /// and its children's contributions, eliminate, store `y` at its dofs in `x`.
    #[allow(clippy::too_many_arguments)]
    fn forward_node(&self, v: usize, r: &mut [f64], nrhs: usize, leaf_buf: &[f64], prev: &[f64], b: &[f64], x: &Disjoint, par: Par) {
        let sym = &*self.sym;
        let (m, e) = (sym.m[v] as usize, sym.e[v] as usize);
        let (dofs, pinv) = (sym.dofs(v), self.pinv(v));
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
        dense::forward(self.front(v), m, e, r, nrhs, par);
        for i in 0..e {
            // SAFETY: dof i is eliminated by node v only; nothing reads it during this level.
            unsafe { x.write_row(dofs[i] as usize, &r[i * nrhs..(i + 1) * nrhs]) };
        }
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
        let sym = &*self.sym;
        let n = sym.n;
        if b.len() != n * nrhs || x.len() != n * nrhs {
            return Err(Error::dim("multifrontal right-hand sides", n * nrhs, b.len().min(x.len())));
        }
        if nrhs == 0 {
            return Ok(());
        }
        // Work dof-major (row d holds the nrhs values of dof d): every row access below is a
        // contiguous, vectorizable slice.
        let mut bt = vec![0.0; n * nrhs];
        transpose(b, nrhs, n, &mut bt);
        let b = &bt[..];
        let mut xt = vec![0.0; n * nrhs];
        let out = Disjoint { ptr: xt.as_mut_ptr(), len: xt.len() };
        let mut leaf_buf = vec![0.0; sym.leaf_slots as usize * nrhs];
        let mut bufs = [vec![0.0; sym.level_slots as usize * nrhs], vec![0.0; sym.level_slots as usize * nrhs]];
        let leaves: Vec<usize> = (0..sym.nelem).filter(|&v| sym.active[v]).collect();
        let slots = |vs: &[usize]| vs.iter().map(|&v| (sym.slot[v] * nrhs as u64, sym.m[v] as u64 * nrhs as u64)).collect::<Vec<_>>();
        // Forward: leaves, then levels deepest first.
        {
            let pieces = split_at_offsets(&mut leaf_buf, 0, slots(&leaves).into_iter());
            leaves.par_iter().zip(pieces).for_each(|(&v, r)| self.forward_node(v, r, nrhs, &[], &[], b, &out, Par::Seq));
        }
        for (i, r) in sym.levels.iter().enumerate() {
            let nodes: Vec<usize> = (r.start as usize..r.end as usize).filter(|&v| sym.active[v]).collect();
            let (first, second) = bufs.split_at_mut(1);
            let (cur, prev) = if i % 2 == 0 { (&mut first[0], &second[0]) } else { (&mut second[0], &first[0]) };
            let pieces = split_at_offsets(cur, 0, slots(&nodes).into_iter());
            let par = node_par(nodes.len());
            nodes.par_iter().zip(pieces).for_each(|(&v, r)| self.forward_node(v, r, nrhs, &leaf_buf, prev, b, &out, par));
        }
        // Backward: root level first, then down, then the leaves.
        for r in sym.levels.iter().rev() {
            let nodes: Vec<usize> = (r.start as usize..r.end as usize).filter(|&v| sym.e[v] > 0).collect();
            let pieces = split_at_offsets(&mut bufs[0], 0, slots(&nodes).into_iter());
            let par = node_par(nodes.len());
            nodes.par_iter().zip(pieces).for_each(|(&v, r)| self.backward_node(v, r, nrhs, &out, par));
        }
        let owners: Vec<usize> = leaves.iter().copied().filter(|&v| sym.e[v] > 0).collect();
        let pieces = split_at_offsets(&mut leaf_buf, 0, slots(&owners).into_iter());
        owners.par_iter().zip(pieces).for_each(|(&v, r)| self.backward_node(v, r, nrhs, &out, Par::Seq));
        transpose(&xt, n, nrhs, x);
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
