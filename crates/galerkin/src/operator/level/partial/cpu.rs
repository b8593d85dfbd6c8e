//! The matrix-free apply on the CPU (`partial` and `none`): per cell, gather, the basis (sum
//! factorized on tensor cells), the pointwise operator, the transposed basis and scatter-add, cells
//! in parallel one color of blocks at a time (as the element level).
use super::{KernelTables, Pointwise};
use crate::backend::Cpu;
use crate::mesh::Mesh;
use crate::operator::coloring::{Coloring, SharedMut};
use crate::operator::geometry::{inverse_jacobian, GeometryTab};
use crate::operator::level::{LevelInput, LevelOperator};
use crate::operator::passive::PassiveData;
use crate::operator::qfunction::Composite;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// Most fields (value and gradient entries) and passive fields per point of the matrix-free levels
/// on the CPU (3D elasticity with a value term has 12; every physics here has at most 3 passive).
const MAX_FIELDS: usize = 16;
const MAX_PASSIVE: usize = 8;

/// A matrix-free operator on the CPU.
pub struct MatFree {
    mode: Pointwise,
    tables: KernelTables,
    /// Global node of kernel-order local node l of cell c: `idx[c·pd + l]`.
    idx: Vec<usize>,
    /// Signed spaces (hierarchical bases): the sign of each `idx` entry (0: a tensor slot the
    /// element lacks), [`super::cell_index`].
    sgn: Option<Vec<f64>>,
    ncomp: usize,
    ndofs: usize,
    /// Field vector length.
    mf: usize,
    /// `Stored`: the packed upper triangle of D_ref per point, `qdata[(c·qd + q)·ns + k]`.
    qdata: Vec<f64>,
    mesh: Arc<Mesh>,
    geo: GeometryTab,
    qf: Composite,
    passive: PassiveData,
    coloring: Arc<Coloring>,
    /// Scalar mass or diffusion on hexahedra: the collocated-gradient apply ([`Hex`]).
    hex: Option<Hex>,
    /// `partial` on [`Hex`] cells: W cells at a time with D stored in batch layout (`qdata` empty).
    batch: Option<super::hex_batch::HexBatch>,
    /// Tensor cells: the transposed 1D value and derivative tables (`[p][q]`).
    tensor_t: Option<(Vec<f64>, Vec<f64>)>,
    /// Other cells: the basis values, then its derivative along each reference axis, `[q·pd + l]`.
    field_tabs: Vec<Vec<f64>>,
    /// `partial` on affine cells with coefficients constant per cell (simplices): D_ref is stored
    /// once per cell without the quadrature weight, `qdata[c·ns + k]`, and scaled by w_q when
    /// applied — a `qd`-th of the memory and traffic of one D_ref per point.
    per_cell_d: bool,
    /// On affine cells with per-cell coefficients (either level), one component, and when cheaper than the quadrature loop: the
    /// symmetrized reference moments `S^{rs} = M^{rs} + M^{sr}` (`M^{rr}` on the diagonal) with
    /// `M^{rs}[i][j] = Σ_q w_q E_r(q, i) E_s(q, j)` of the fields r ≤ s (value, ∂/∂ξ_k), in the
    /// packed order of D: a cell's matrix is `Σ_k D_k S^k` (contiguous axpys), exact for any rule.
    moments: Option<Vec<f64>>,
    /// Component and derivative direction (None: the value) of each field, in the QFunction's
    /// union layout (values first).
    fields: Vec<(usize, Option<usize>)>,
}

/// The fast path of scalar mass and diffusion on hexahedra (CEED's BP1/BP3/BP5), the CPU twin of
/// `kernels/hex_matfree.cu`: B to the points by three 1D stages (none when the Gauss–Lobatto points
/// are the nodes), gradients there with the Q×Q collocated derivative, the 1 or 6 stored numbers
/// of D_ref per point, and the transposes — 6 to 12 stages instead of one B per field.
struct Hex {
    p: usize,
    q: usize,
    /// `b[i·p + a]` = φ_a(x_i); `d[i·q + j]` = ℓ_j'(x_i) on the points.
    b: Vec<f64>,
    d: Vec<f64>,
    /// Their transposes, `bt[a·q + i]` and `dt[j·q + i]`.
    bt: Vec<f64>,
    dt: Vec<f64>,
    collocated: bool,
    diffusion: bool,
}

impl Hex {
    fn of(integ: &crate::operator::integrate::ElementIntegrator, tables: &KernelTables) -> Option<Hex> {
        let (p, q, b, _) = tables.tensor.as_ref()?;
        let (p, q) = (*p, *q);
        let diffusion = match integ.qf.cuda_type().as_str() {
            "Mass" => false,
            "Diffusion" => true,
            _ => return None,
        };
        if integ.space.mesh.cell_type != crate::mesh::CellType::Hexahedron || integ.space.ncomp != 1 || p > q {
            return None;
        }
        let x: Vec<f64> = (0..q).map(|i| integ.basis.rule.points[i][0]).collect();
        let collocated = p == q && (0..q).all(|i| (0..p).all(|j| (b[i * p + j] - f64::from(u8::from(i == j))).abs() < 1e-13));
        let d = super::hex_cuda::collocated_derivative(&x);
        Some(Hex { p, q, bt: transpose(b, q, p), dt: transpose(&d, q, q), b: b.clone(), d, collocated, diffusion })
    }

    /// Stored numbers per point: w|J|ρ, or w|J|κ J⁻¹J⁻ᵀ packed (xx, xy, xz, yy, yz, zz).
    fn ns(&self) -> usize {
        if self.diffusion {
            6
        } else {
            1
        }
    }
}

/// Per-thread buffers of one cell's apply.
#[derive(Default)]
struct Work {
    u: Vec<f64>,
    f: Vec<f64>,
    t1: Vec<f64>,
    t2: Vec<f64>,
    d: Vec<f64>,
    /// One point's field vector in and out.
    fin: Vec<f64>,
    fout: Vec<f64>,
}

impl MatFree {
    pub fn build(input: &LevelInput, mode: Pointwise) -> Result<MatFree> {
        let integ = input.integ;
        if !integ.qf.is_symmetric() {
            return Err(Error::Unsupported("matrix-free levels of a non-symmetric physics (D is stored symmetric): use full or element".into()));
        }
        if integ.qf.field_size() > MAX_FIELDS || integ.qf.npassive() > MAX_PASSIVE {
            return Err(Error::Unsupported(format!(
                "matrix-free levels on the CPU with {} fields and {} coefficients per point (at most {MAX_FIELDS} and {MAX_PASSIVE}): use full or element",
                integ.qf.field_size(),
                integ.qf.npassive()
            )));
        }
        let tables = KernelTables::new(integ);
        let space = integ.space;
        let (idx, sgn) = super::cell_index(space, &tables.order, tables.slot_sign.as_deref());
        let hex = Hex::of(integ, &tables);
        let mut op = MatFree {
            mode,
            mf: integ.qf.field_size(),
            tables,
            idx,
            sgn,
            ncomp: space.ncomp,
            ndofs: space.ndofs(),
            qdata: Vec::new(),
            mesh: space.mesh.clone(),
            geo: integ.geo.clone(),
            qf: integ.qf.clone(),
            passive: integ.passive.clone(),
            coloring: input.coloring.clone(),
            hex,
            batch: None,
            tensor_t: None,
            field_tabs: Vec::new(),
            per_cell_d: false,
            moments: None,
            fields: Vec::new(),
        };
        let nv = if integ.qf.modes().value { op.ncomp } else { 0 };
        let dim = op.tables.dim;
        op.fields = (0..op.mf).map(|f| if f < nv { (f, None) } else { ((f - nv) / dim, Some((f - nv) % dim)) }).collect();
        let affine_cells = op.hex.is_none() && integ.geo.affine && integ.passive.per_cell();
        op.per_cell_d = mode == Pointwise::Stored && affine_cells;
        let (pd, qd) = (op.tables.pd, op.tables.qd);
        op.field_tabs = std::iter::once(op.tables.phi.clone())
            .chain((0..dim).map(|k| (0..qd * pd).map(|i| op.tables.dphi[i * dim + k]).collect()))
            .collect();
        let mf = op.mf;
        if affine_cells && op.ncomp == 1 && (mf * (mf + 1) / 2 + 1) * pd * pd < qd * (2 * mf * pd + mf * mf) {
            let tab = |f: usize| &op.field_tabs[op.fields[f].1.map_or(0, |k| k + 1)];
            let moment = |r: usize, s: usize, i: usize, j: usize| -> f64 {
                op.tables.w.iter().enumerate().map(|(q, wq)| wq * tab(r)[q * pd + i] * tab(s)[q * pd + j]).sum()
            };
            let mut m = Vec::with_capacity(mf * (mf + 1) / 2 * pd * pd);
            for r in 0..mf {
                for s in r..mf {
                    for i in 0..pd {
                        for j in 0..pd {
                            m.push(if r == s { moment(r, r, i, j) } else { moment(r, s, i, j) + moment(s, r, i, j) });
                        }
                    }
                }
            }
            op.moments = Some(m);
        }
        // Signed gathers take the one-cell path (the batches gather unsigned).
        if let (Some(h), Pointwise::Stored, true, None) = (&op.hex, mode, input.tuning.cpu_cell_batches != Some(false), &op.sgn) {
            use super::hex_batch::SumForm;
            let form = match (input.tuning.cpu_gather, input.tuning.cpu_batch_colors) {
                (Some(true), _) => SumForm::Gather,
                (_, Some(true)) => SumForm::BatchColors,
                (None, _) if gather_by_default(h.p, h.collocated, rayon::current_num_threads()) => SumForm::Gather,
                _ => SumForm::MeshColors,
            };
            op.batch = super::hex_batch::HexBatch::new(h.p, h.q, h.diffusion, h.collocated, [&h.b, &h.d, &op.tables.w], &op.coloring, &op.idx, form);
            if let Some(b) = op.batch.as_mut() {
                b.allow_kronecker(input.tuning.cpu_kronecker != Some(false));
            }
        }
        op.tensor_t = op.tables.tensor.as_ref().map(|(p1, q1, b, g)| (transpose(b, *q1, *p1), transpose(g, *q1, *p1)));
        op.setup()?;
        Ok(op)
    }

    fn ns(&self) -> usize {
        match &self.hex {
            Some(h) => h.ns(),
            None => self.mf * (self.mf + 1) / 2,
        }
    }

    /// `Stored`: D_ref at every point, packed. Also checks every cell's geometry once.
    fn setup(&mut self) -> Result<()> {
        let (qd, ns, mf) = (self.tables.qd, self.ns(), self.mf);
        let ncells = self.mesh.num_cells();
        if self.mode == Pointwise::Recomputed {
            // Degenerate cells are found now, not inside an apply.
            return (0..ncells).into_par_iter().try_for_each(|c| (0..qd).try_for_each(|q| self.point(c, q).map(|_| ())));
        }
        if let Some(mut batch) = self.batch.take() {
            let stored = batch.store(|c, q, out| self.hex_point(c, q, out));
            self.batch = Some(batch);
            return stored;
        }
        if self.per_cell_d {
            let mut qdata = vec![0.0; ncells * ns];
            qdata.par_chunks_mut(ns).enumerate().try_for_each_init(
                || (Vec::new(), Vec::new()),
                |(d, packed), (c, cell)| -> Result<()> {
                    self.packed_cell_d(c, d, packed)?;
                    cell.copy_from_slice(packed);
                    Ok(())
                },
            )?;
            self.qdata = qdata;
            return Ok(());
        }
        let mut qdata = vec![0.0; ncells * qd * ns];
        qdata.par_chunks_mut(qd * ns).enumerate().try_for_each(|(c, cell)| -> Result<()> {
            if self.hex.is_some() {
                return (0..qd).try_for_each(|q| self.hex_point(c, q, &mut cell[q * ns..(q + 1) * ns]));
            }
            let mut d = vec![0.0; mf * mf];
            for q in 0..qd {
                self.recompute_dref(c, q, &mut d)?;
                let mut k = 0;
                for r in 0..mf {
                    for s in r..mf {
                        cell[q * ns + k] = d[r * mf + s];
                        k += 1;
                    }
                }
            }
            Ok(())
        })?;
        self.qdata = qdata;
        Ok(())
    }

    /// J⁻¹, w |det J| and the passive fields of cell c at point q.
    fn point(&self, c: usize, q: usize) -> Result<([[f64; 3]; 3], f64, [f64; MAX_PASSIVE])> {
        let dim = self.tables.dim;
        let (inv, det) = inverse_jacobian(&self.geo.jacobian(&self.mesh, c, q), dim)?;
        let mut p = [0.0; MAX_PASSIVE];
        self.passive.point(c, q, &mut p[..self.qf.npassive()]);
        Ok((inv, self.tables.w[q] * det.abs(), p))
    }

    /// `out = D_ref in` from the QFunction at cell c, point q (what `none` does per apply).
    fn ref_apply(&self, inv: &[[f64; 3]; 3], wdet: f64, p: &[f64], input: &[f64], out: &mut [f64]) {
        let (dim, n, mf) = (self.tables.dim, self.ncomp, self.mf);
        let nv = if self.qf.modes().value { n } else { 0 };
        let grad = self.qf.modes().grad;
        let mut phys = [0.0; MAX_FIELDS];
        phys[..mf].copy_from_slice(&input[..mf]);
        if grad {
            for c in 0..n {
                for k in 0..dim {
                    phys[nv + c * dim + k] = (0..dim).map(|a| inv[a][k] * input[nv + c * dim + a]).sum();
                }
            }
        }
        let mut res = [0.0; MAX_FIELDS];
        self.qf.apply(&p[..self.qf.npassive()], &phys[..mf], &mut res[..mf]);
        out[..nv].iter_mut().zip(&res).for_each(|(o, r)| *o = wdet * r);
        if grad {
            for c in 0..n {
                for a in 0..dim {
                    out[nv + c * dim + a] = wdet * (0..dim).map(|k| inv[a][k] * res[nv + c * dim + k]).sum::<f64>();
                }
            }
        }
    }

    fn recompute_dref(&self, c: usize, q: usize, d: &mut [f64]) -> Result<()> {
        let mf = self.mf;
        let (inv, wdet, p) = self.point(c, q)?;
        let (mut e, mut col) = ([0.0; MAX_FIELDS], [0.0; MAX_FIELDS]);
        for s in 0..mf {
            e.fill(0.0);
            e[s] = 1.0;
            self.ref_apply(&inv, wdet, &p, &e[..mf], &mut col[..mf]);
            for r in 0..mf {
                d[r * mf + s] = col[r];
            }
        }
        Ok(())
    }

    /// D_ref (row-major mf × mf) at cell c, point q.
    fn dref(&self, c: usize, q: usize, d: &mut [f64]) -> Result<()> {
        match self.mode {
            Pointwise::Recomputed => self.recompute_dref(c, q, d),
            Pointwise::Stored if self.hex.is_some() => {
                // Scalar: D_ref is the one value (mass) or the 3×3 (diffusion) stored per point.
                let ns = self.ns();
                let mut from_batch = [0.0; 6];
                let packed = match &self.batch {
                    Some(b) => {
                        b.point(c, q, &mut from_batch[..ns]);
                        &from_batch[..ns]
                    }
                    None => &self.qdata[(c * self.tables.qd + q) * ns..][..ns],
                };
                if ns == 1 {
                    d[0] = packed[0];
                } else {
                    let idx = [[0, 1, 2], [1, 3, 4], [2, 4, 5]];
                    for r in 0..3 {
                        for s in 0..3 {
                            d[r * 3 + s] = packed[idx[r][s]];
                        }
                    }
                }
                Ok(())
            }
            Pointwise::Stored => {
                let mf = self.mf;
                let (packed, scale) = self.stored_d(c, q);
                let mut k = 0;
                for r in 0..mf {
                    for s in r..mf {
                        d[r * mf + s] = scale * packed[k];
                        d[s * mf + r] = scale * packed[k];
                        k += 1;
                    }
                }
                Ok(())
            }
        }
    }

    /// The packed D_ref stored for cell c, point q, and the factor it takes there (w_q when stored
    /// per cell).
    #[inline]
    fn stored_d(&self, c: usize, q: usize) -> (&[f64], f64) {
        let ns = self.ns();
        if self.per_cell_d {
            (&self.qdata[c * ns..(c + 1) * ns], self.tables.w[q])
        } else {
            (&self.qdata[(c * self.tables.qd + q) * ns..][..ns], 1.0)
        }
    }

    /// Component and derivative direction (None: the value) of field f.
    #[inline]
    fn field(&self, f: usize) -> (usize, Option<usize>) {
        self.fields[f]
    }

    /// `w.u` (ncomp × pd) → `w.f` (mf × qd): B applied, by sum factorization on tensor cells.
    fn interpolate(&self, w: &mut Work) {
        let (pd, qd, dim) = (self.tables.pd, self.tables.qd, self.tables.dim);
        w.f.resize(self.mf * qd, 0.0);
        for f in 0..self.mf {
            let (comp, dir) = self.field(f);
            let u = &w.u[comp * pd..(comp + 1) * pd];
            match &self.tables.tensor {
                Some((p1, q1, b, g)) => {
                    let mut dims = [1usize; 3];
                    dims[..dim].fill(*p1);
                    w.t1.clear();
                    w.t1.extend_from_slice(u);
                    for a in 0..dim {
                        let m = if dir == Some(a) { g } else { b };
                        dims = stage_into(a, m, *p1, *q1, dims, &w.t1, &mut w.t2);
                        std::mem::swap(&mut w.t1, &mut w.t2);
                    }
                    w.f[f * qd..(f + 1) * qd].copy_from_slice(&w.t1[..qd]);
                }
                None => {
                    let tab = &self.field_tabs[dir.map_or(0, |k| k + 1)];
                    for (fq, row) in w.f[f * qd..(f + 1) * qd].iter_mut().zip(tab.chunks_exact(pd)) {
                        *fq = row.iter().zip(u).map(|(b, x)| b * x).sum();
                    }
                }
            }
        }
    }

    /// `w.f` → `w.u`: Bᵀ, summed over each component's fields.
    fn integrate(&self, w: &mut Work) {
        let (pd, qd, dim) = (self.tables.pd, self.tables.qd, self.tables.dim);
        w.u.iter_mut().for_each(|v| *v = 0.0);
        for f in 0..self.mf {
            let (comp, dir) = self.field(f);
            match (&self.tables.tensor, &self.tensor_t) {
                (Some((p1, q1, _, _)), Some((b, g))) => {
                    let mut dims = [1usize; 3];
                    dims[..dim].fill(*q1);
                    w.t1.clear();
                    w.t1.extend_from_slice(&w.f[f * qd..(f + 1) * qd]);
                    for a in (0..dim).rev() {
                        let m = if dir == Some(a) { g } else { b };
                        dims = stage_into(a, m, *q1, *p1, dims, &w.t1, &mut w.t2);
                        std::mem::swap(&mut w.t1, &mut w.t2);
                    }
                    for l in 0..pd {
                        w.u[comp * pd + l] += w.t1[l];
                    }
                }
                _ => {
                    let tab = &self.field_tabs[dir.map_or(0, |k| k + 1)];
                    let u = &mut w.u[comp * pd..(comp + 1) * pd];
                    for (&fq, row) in w.f[f * qd..(f + 1) * qd].iter().zip(tab.chunks_exact(pd)) {
                        u.iter_mut().zip(row).for_each(|(o, b)| *o += fq * b);
                    }
                }
            }
        }
    }

    #[inline]
    fn basis_entry(&self, q: usize, l: usize, dir: Option<usize>) -> f64 {
        let pd = self.tables.pd;
        match dir {
            None => self.tables.phi[q * pd + l],
            Some(k) => self.tables.dphi[(q * pd + l) * self.tables.dim + k],
        }
    }

    /// The [`Hex`] numbers of cell c at point q.
    fn hex_point(&self, c: usize, q: usize, out: &mut [f64]) -> Result<()> {
        let (inv, det) = inverse_jacobian(&self.geo.jacobian(&self.mesh, c, q), 3)?;
        let wdet = self.tables.w[q] * det.abs() * self.passive.at(0, c, q);
        if out.len() == 1 {
            out[0] = wdet;
        } else {
            let mut k = 0;
            for a in 0..3 {
                for b in a..3 {
                    out[k] = wdet * (0..3).map(|m| inv[a][m] * inv[b][m]).sum::<f64>();
                    k += 1;
                }
            }
        }
        Ok(())
    }

    /// [`Hex`]: `w.u` (p³ values) ← (Bᵀ D B) `w.u`.
    /// With the sizes as constants for the common (p, q) pairs, so that every stage's loops are
    /// unrolled (2–3× faster at Q2–Q3 than with run-time sizes).
    fn hex_apply(&self, h: &Hex, c: usize, w: &mut Work) -> Result<()> {
        macro_rules! fixed {
            ($(($p:literal, $q:literal)),*) => {
                match (h.p, h.q) {
                    $(($p, $q) => self.hex_body(h, c, w, $p, $q),)*
                    (p, q) => self.hex_body(h, c, w, p, q),
                }
            };
        }
        fixed!((2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 6), (6, 6), (6, 7), (7, 7), (7, 8), (8, 8), (8, 9), (9, 9), (9, 10))
    }

    #[inline(always)]
    fn hex_body(&self, h: &Hex, c: usize, w: &mut Work, p: usize, q: usize) -> Result<()> {
        let (qd, pd) = (q * q * q, p * p * p);
        // B: u → values at the points, in w.t1 (w.u itself when the nodes are the points).
        w.t1.clear();
        w.t1.extend_from_slice(&w.u[..pd]);
        if !h.collocated {
            let mut dims = [p; 3];
            for a in 0..3 {
                dims = stage_into(a, &h.b, p, q, dims, &w.t1, &mut w.t2);
                std::mem::swap(&mut w.t1, &mut w.t2);
            }
        }
        let mut dpt = [0.0; 6];
        let stored = self.mode == Pointwise::Stored;
        let ns = h.ns();
        if h.diffusion {
            // Gradients at the points (w.f: 3 fields), D, transposed gradients summed into w.t1.
            if w.f.len() < 3 * qd {
                w.f.resize(3 * qd, 0.0);
            }
            for (a, f) in w.f[..3 * qd].chunks_exact_mut(qd).enumerate() {
                stage(a, &h.d, q, q, [q; 3], &w.t1[..qd], f, false);
            }
            let (f0, rest) = w.f.split_at_mut(qd);
            let (f1, f2) = rest.split_at_mut(qd);
            for i in 0..qd {
                let d: &[f64] = if stored {
                    &self.qdata[(c * qd + i) * ns..(c * qd + i + 1) * ns]
                } else {
                    self.hex_point(c, i, &mut dpt)?;
                    &dpt
                };
                let g = [f0[i], f1[i], f2[i]];
                f0[i] = d[0] * g[0] + d[1] * g[1] + d[2] * g[2];
                f1[i] = d[1] * g[0] + d[3] * g[1] + d[4] * g[2];
                f2[i] = d[2] * g[0] + d[4] * g[1] + d[5] * g[2];
            }
            for (a, f) in w.f[..3 * qd].chunks_exact(qd).enumerate() {
                stage(a, &h.dt, q, q, [q; 3], f, &mut w.t1[..qd], a > 0);
            }
        } else {
            for i in 0..qd {
                let d = if stored {
                    self.qdata[c * qd + i]
                } else {
                    self.hex_point(c, i, &mut dpt[..1])?;
                    dpt[0]
                };
                w.t1[i] *= d;
            }
        }
        // Bᵀ back to the nodes.
        if !h.collocated {
            let mut dims = [q; 3];
            for a in (0..3).rev() {
                dims = stage_into(a, &h.bt, q, p, dims, &w.t1, &mut w.t2);
                std::mem::swap(&mut w.t1, &mut w.t2);
            }
        }
        w.u[..pd].copy_from_slice(&w.t1[..pd]);
        Ok(())
    }

    /// [`Self::moments`]: the cell matrix `K = Σ_k D_k S^k`, then `w.u` ← K `w.u`.
    fn moments_apply(m: &[f64], packed: &[f64], pd: usize, w: &mut Work) {
        w.t2.clear();
        w.t2.resize(pd * pd, 0.0);
        for (&d, sk) in packed.iter().zip(m.chunks_exact(pd * pd)) {
            w.t2.iter_mut().zip(sk).for_each(|(k, s)| *k += d * s);
        }
        w.t1.clear();
        w.t1.extend(w.t2.chunks_exact(pd).map(|row| row.iter().zip(&w.u[..pd]).map(|(k, u)| k * u).sum::<f64>()));
        std::mem::swap(&mut w.u, &mut w.t1);
    }

    /// The packed D_ref of an affine cell with per-cell coefficients, without the weight (`d` is
    /// scratch).
    fn packed_cell_d(&self, c: usize, d: &mut Vec<f64>, packed: &mut Vec<f64>) -> Result<()> {
        let mf = self.mf;
        d.resize(mf * mf, 0.0);
        self.recompute_dref(c, 0, d)?;
        let w0 = self.tables.w[0];
        packed.clear();
        for r in 0..mf {
            packed.extend((r..mf).map(|s| d[r * mf + s] / w0));
        }
        Ok(())
    }

    /// One cell: `w.u` ← (Bᵀ D B) `w.u`.
    fn cell_apply(&self, c: usize, w: &mut Work) -> Result<()> {
        if let Some(h) = &self.hex {
            return self.hex_apply(h, c, w);
        }
        let (qd, mf) = (self.tables.qd, self.mf);
        if let Some(m) = &self.moments {
            if self.mode == Pointwise::Stored {
                let (packed, _) = self.stored_d(c, 0);
                return Ok(Self::moments_apply(m, packed, self.tables.pd, w));
            }
            // `none`: the cell's D_ref (geometry and coefficients) recomputed once per apply.
            let mut d = std::mem::take(&mut w.d);
            let mut packed = std::mem::take(&mut w.fin);
            self.packed_cell_d(c, &mut d, &mut packed)?;
            Self::moments_apply(m, &packed, self.tables.pd, w);
            (w.d, w.fin) = (d, packed);
            return Ok(());
        }
        self.interpolate(w);
        w.fin.resize(mf, 0.0);
        w.fout.resize(mf, 0.0);
        for q in 0..qd {
            for f in 0..mf {
                w.fin[f] = w.f[f * qd + q];
            }
            match self.mode {
                Pointwise::Recomputed => {
                    let (inv, wdet, p) = self.point(c, q)?;
                    self.ref_apply(&inv, wdet, &p, &w.fin, &mut w.fout);
                }
                Pointwise::Stored => {
                    // D_ref is symmetric and packed by rows of its upper triangle.
                    let (packed, scale) = self.stored_d(c, q);
                    let (inp, out) = (&w.fin, &mut w.fout);
                    out.fill(0.0);
                    let mut k = 0;
                    for r in 0..mf {
                        for s in r..mf {
                            let v = scale * packed[k];
                            out[r] += v * inp[s];
                            if s != r {
                                out[s] += v * inp[r];
                            }
                            k += 1;
                        }
                    }
                }
            }
            for f in 0..mf {
                w.f[f * qd + q] = w.fout[f];
            }
        }
        self.integrate(w);
        Ok(())
    }

    /// Runs `f(cell, work, out)` over the cells, one color of blocks at a time, with `out` the
    /// global vector (blocks of one color share no node).
    fn for_cells(&self, out: &mut [f64], f: impl Fn(usize, &mut Work, &mut [f64]) -> Result<()> + Sync) -> Result<()> {
        let op = SharedMut(out.as_mut_ptr());
        let len = out.len();
        for color in &self.coloring.blocks {
            color.par_iter().try_for_each_init(Work::default, |w, cells| -> Result<()> {
                let op = op;
                for c in cells.clone() {
                    // SAFETY: blocks of one color share no node, hence no entry of `out`.
                    let global = unsafe { std::slice::from_raw_parts_mut(op.0, len) };
                    f(c, w, global)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// One stage of sum factorization along axis `a`: `out[..o..] (+)= Σ_k c[o·nin + k] in[..k..]`
/// (added to `out` when `acc`), with `c` the 1D matrix (nout × nin, row-major: the basis table, or
/// its transpose from [`transpose`]) and `out` exactly the output's size. Each axis gets the loop
/// order that keeps the innermost loop contiguous: small dot products along axis 0, row and plane
/// `axpy`s along axes 1 and 2 (vectorized); the first term assigns, so `out` needs no zeroing.
#[inline(always)]
fn stage(a: usize, c: &[f64], nin: usize, nout: usize, dims: [usize; 3], input: &[f64], out: &mut [f64], acc: bool) {
    debug_assert_eq!(dims[a], nin);
    debug_assert_eq!(c.len(), nin * nout);
    debug_assert_eq!(out.len() * nin, input.len() * nout);
    let axpy = |y: &mut [f64], ck: f64, x: &[f64]| y.iter_mut().zip(x).for_each(|(yv, xv)| *yv += ck * xv);
    let first = |y: &mut [f64], ck: f64, x: &[f64]| {
        if acc {
            axpy(y, ck, x)
        } else {
            y.iter_mut().zip(x).for_each(|(yv, xv)| *yv = ck * xv)
        }
    };
    // Along axis 1 the "rows" are the d0-long lines of one x2-plane, along axis 2 whole planes.
    let (line, lines_in) = match a {
        0 => {
            for (x, y) in input.chunks_exact(nin).zip(out.chunks_exact_mut(nout)) {
                for (yo, row) in y.iter_mut().zip(c.chunks_exact(nin)) {
                    let v: f64 = row.iter().zip(x).map(|(ck, xk)| ck * xk).sum();
                    *yo = if acc { *yo + v } else { v };
                }
            }
            return;
        }
        1 => (dims[0], dims[0] * nin),
        _ => (dims[0] * dims[1], input.len()),
    };
    for (x, y) in input.chunks_exact(lines_in).zip(out.chunks_exact_mut(line * nout)) {
        for (yo, row) in y.chunks_exact_mut(line).zip(c.chunks_exact(nin)) {
            let mut xs = x.chunks_exact(line);
            if let Some(x0) = xs.next() {
                first(yo, row[0], x0);
            }
            for (&ck, xk) in row[1..].iter().zip(xs) {
                axpy(yo, ck, xk);
            }
        }
    }
}

/// [`stage`] from `input` into the work vector `out` (grown when too short); returns the new dims.
#[inline(always)]
fn stage_into(a: usize, c: &[f64], nin: usize, nout: usize, dims: [usize; 3], input: &[f64], out: &mut Vec<f64>) -> [usize; 3] {
    let mut od = dims;
    od[a] = nout;
    let n = od[0] * od[1] * od[2];
    if out.len() < n {
        out.resize(n, 0.0);
    }
    stage(a, c, nin, nout, dims, &input[..dims[0] * dims[1] * dims[2]], &mut out[..n], false);
    od
}

/// `m` (rows × cols, row-major) transposed.
fn transpose(m: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols * rows).map(|i| m[(i % rows) * cols + i / rows]).collect()
}

impl crate::backend::LinearOperator<Cpu> for MatFree {
    fn nrows(&self) -> usize {
        self.ndofs
    }
    fn ncols(&self) -> usize {
        self.ndofs
    }
    fn apply(&self, _be: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        if x.len() != self.ndofs || y.len() != self.ndofs {
            return Err(Error::dim("matrix-free apply", self.ndofs, x.len().min(y.len())));
        }
        if let Some(b) = &self.batch {
            return b.apply(x, y, None);
        }
        y.fill(0.0);
        let (pd, n) = (self.tables.pd, self.ncomp);
        self.for_cells(y, |c, w, y| {
            w.u.resize(n * pd, 0.0);
            let nodes = &self.idx[c * pd..(c + 1) * pd];
            let sgn = self.sgn.as_ref().map(|s| &s[c * pd..(c + 1) * pd]);
            let sign = |l: usize| sgn.map_or(1.0, |s| s[l]);
            for comp in 0..n {
                for (l, &node) in nodes.iter().enumerate() {
                    w.u[comp * pd + l] = sign(l) * x[node * n + comp];
                }
            }
            self.cell_apply(c, w)?;
            for comp in 0..n {
                for (l, &node) in nodes.iter().enumerate() {
                    y[node * n + comp] += sign(l) * w.u[comp * pd + l];
                }
            }
            Ok(())
        })
    }
}

impl LevelOperator<Cpu> for MatFree {
    fn apply(&self, be: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        crate::backend::LinearOperator::apply(self, be, x, y)
    }
    /// Σ_q (B e_a)ᵀ D_ref (B e_b) per (cell, node), summed into the nodes.
    fn node_blocks(&self, _be: &Cpu) -> Result<Vec<f64>> {
        let (pd, qd, n, mf) = (self.tables.pd, self.tables.qd, self.ncomp, self.mf);
        let mut blocks = vec![0.0; self.ndofs * n];
        self.for_cells(&mut blocks, |c, w, blocks| {
            w.d.resize(mf * mf, 0.0);
            let mut acc = vec![0.0; pd * n * n];
            let mut bf = vec![0.0; mf];
            for q in 0..qd {
                self.dref(c, q, &mut w.d)?;
                for l in 0..pd {
                    for (f, b) in bf.iter_mut().enumerate() {
                        *b = self.basis_entry(q, l, self.field(f).1);
                    }
                    for r in 0..mf {
                        for s in 0..mf {
                            acc[(l * n + self.field(r).0) * n + self.field(s).0] += bf[r] * w.d[r * mf + s] * bf[s];
                        }
                    }
                }
            }
            for l in 0..pd {
                let node = self.idx[c * pd + l];
                // s² = 1, or 0 for an absent slot.
                let s2 = self.sgn.as_ref().map_or(1.0, |s| s[c * pd + l] * s[c * pd + l]);
                for k in 0..n * n {
                    blocks[node * n * n + k] += s2 * acc[l * n * n + k];
                }
            }
            Ok(())
        })?;
        Ok(blocks)
    }
    fn storage_bytes(&self) -> usize {
        let passive: usize = self.passive.device_layout().0.len() * 8;
        let batched = self.batch.as_ref().map_or(0, |b| b.storage_bytes());
        self.qdata.len() * 8 + batched + self.idx.len() * 8 + self.sgn.as_ref().map_or(0, |s| s.len() * 8) + if self.mode == Pointwise::Recomputed { passive } else { 0 }
    }
    /// The batched hexahedron path applies the Dirichlet mask in its gather (one pass after).
    fn apply_masked(&self, _be: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>, mask: &Vec<f64>) -> Result<bool> {
        let Some(b) = &self.batch else { return Ok(false) };
        if x.len() != self.ndofs || y.len() != self.ndofs || mask.len() != self.ndofs {
            return Err(Error::dim("masked matrix-free apply", self.ndofs, [x.len(), y.len(), mask.len()].into_iter().find(|&l| l != self.ndofs).unwrap_or(self.ndofs)));
        }
        b.apply(x, y, Some(mask))?;
        Ok(true)
    }
    fn includes_boundary(&self) -> bool {
        false
    }
    fn update(&mut self, _be: &Cpu, input: &LevelInput) -> Result<()> {
        self.passive = input.integ.passive.clone();
        self.setup()
    }
}

/// Whether the batches are summed by the gather form when the tuning leaves it open: from 8
/// threads at degree ≥ 4, and at degree 3 on a Gauss rule. There the mesh's colour blocks are too
/// coarse to keep the threads busy; measured on the H100 host's 16 cores (BENCHMARKS.md, issue 11
/// op8): BP3 p = 3 / p = 4 1.59 / 1.23 ms gathered against 1.75 / 2.08 ms colored on 16 threads,
/// 2.42 / 2.09 against 2.57 / 2.29 on 8, while BP5 (collocated) p = 3 loses (0.943 against 0.873
/// ms) and the colored scatter wins below 8 threads. `p` is nodes per axis (degree + 1).
fn gather_by_default(p: usize, collocated: bool, threads: usize) -> bool {
    threads >= 8 && (p >= 5 || (p == 4 && !collocated))
}
