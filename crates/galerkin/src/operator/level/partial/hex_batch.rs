//! `partial` for scalar mass and diffusion on hexahedra (CEED's BP1/BP3/BP5) on the CPU, vectorized
//! across cells as deal.II's `VectorizedArray`: [`W`] (eight) cells of one block go through the apply
//! together, every scalar of the scalar path ([`super::cpu`]'s `Hex`) a `[f64; W]` lane vector, so
//! each operation of a stage is one vector instruction however small the 1D matrices are. The
//! kernel is monomorphized per (P, Q) (const generics: every stage a fixed-size loop nest), fused
//! from gather to scatter with all intermediates in a per-thread buffer of fixed-size arrays, with
//! even/odd folding of the 1D tables (the nodes and points are symmetric about the cell centre, so
//! `M[Q−1−i][N−1−k] = ±M[i][k]`: half the multiplications), and D stored per point in the batch
//! layout (`[batch][point][k][lane]`, 6 numbers for diffusion, 1 for mass). The same source is
//! compiled three times ([`Isa`]): baseline, AVX2+FMA, and AVX-512 (one 512-bit register per lane
//! vector: half the instructions of AVX2's two, and the cores of the Xeon hosts this runs on have
//! twice AVX2's FMA throughput there), the best one found at run time taken.
use crate::operator::coloring::{Coloring, SharedMut};
use rayon::prelude::*;
use std::any::Any;
use std::ops::Range;
use std::sync::Mutex;

/// Cells per batch: one AVX-512 register (two AVX2 registers) of f64 per lane vector.
pub const W: usize = 8;
type V = [f64; W];

/// The instruction sets the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Base,
    Avx2Fma,
    Avx512,
}

impl Isa {
    pub const ALL: [Isa; 3] = [Isa::Base, Isa::Avx2Fma, Isa::Avx512];

    /// Whether this CPU runs it.
    pub fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Isa::Base => true,
                Isa::Avx2Fma => has!("avx2") && has!("fma"),
                Isa::Avx512 => has!("avx2") && has!("fma") && has!("avx512f"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Isa::Base
        }
    }

    /// The widest one this CPU runs.
    pub fn best() -> Isa {
        Isa::ALL.into_iter().rev().find(|i| i.available()).unwrap_or(Isa::Base)
    }
}

/// How the batches' results reach y.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumForm {
    /// Scattered one color of the mesh's cell blocks ([`Coloring::greedy`]: 64 to 2048 cells) at a
    /// time, blocks in parallel.
    MeshColors,
    /// Scattered one color at a time, with the batches' own colors: runs of [`batch_run`] batches
    /// (one batch, 8 cells, up to ~16 000 batches) colored by shared nodes, so that every color
    /// has hundreds of runs to spread over the threads where the mesh's blocks leave 5–60 per color
    /// (at 2·10⁵ unknowns, Q4: 8–10 blocks per color, half of 16 threads idle), at the price of
    /// more colors (7–10 instead of 4–5) and so more barriers.
    BatchColors,
    /// No colors: per node through a node map ([`Gather`]).
    Gather,
}

/// Batches per run of [`SumForm::BatchColors`]: one up to 16 383 batches, then up to eight (runs
/// of 64 cells, as the mesh's blocks' floor), so that each color keeps hundreds of runs at any
/// size without thousands of tiny tasks. A function of the mesh alone: the sums into y do not
/// depend on the thread count.
pub fn batch_run(nbatches: usize) -> usize {
    (nbatches / 2048).clamp(1, 8)
}

/// [`SumForm::BatchColors`]: `batches` (consecutive cells, in order) in runs of [`batch_run`],
/// colored first-fit so that runs of one color share no node of `idx` (`pd` per cell); per color,
/// the runs' batch ranges.
fn batch_colors(batches: &[(usize, usize)], idx: &[usize], pd: usize) -> Vec<Vec<Range<usize>>> {
    let (nb, k) = (batches.len(), batch_run(batches.len()));
    let runs = nb.div_ceil(k);
    let range = |r: usize| r * k..((r + 1) * k).min(nb);
    let cells = |r: usize| {
        let b = range(r);
        batches[b.start].0..batches[b.end - 1].0 + batches[b.end - 1].1
    };
    let nn = idx.iter().max().map_or(0, |m| m + 1);
    let colors = crate::operator::coloring::first_fit(nn, runs, |r| {
        let c = cells(r);
        let mut v = idx[c.start * pd..c.end * pd].to_vec();
        v.sort_unstable();
        v.dedup();
        v
    });
    let mut blocks = vec![Vec::new(); colors.iter().max().map_or(0, |m| m + 1)];
    for (r, &col) in colors.iter().enumerate() {
        blocks[col].push(range(r));
    }
    blocks
}

/// Whether the batched kernel exists for `p` basis functions and `q` points per axis.
pub fn supported(p: usize, q: usize) -> bool {
    kernel(p, q, Isa::Base).is_some()
}

/// The batches of one coloring and the stored D in batch layout.
pub struct HexBatch {
    p: usize,
    q: usize,
    /// 1 (mass: w|J|ρ) or 6 (diffusion: w|J|κ J⁻¹J⁻ᵀ packed xx, xy, xz, yy, yz, zz).
    ns: usize,
    collocated: bool,
    /// Row-major 1D tables: `b` (q × p), the collocated derivative `d` (q × q).
    b: Vec<f64>,
    d: Vec<f64>,
    /// Per color, per block: the range of its batch ids (the colored scatters; empty with
    /// [`Self::gather`]).
    blocks: Vec<Vec<Range<usize>>>,
    /// The gather form of the sum into y (`Tuning::cpu_gather`; see [`Gather`]); None: the colored
    /// scatter (the default).
    gather: Option<Gather>,
    /// First cell and number of cells (≤ W) of each batch.
    batches: Vec<(usize, usize)>,
    /// Batch id · W + lane of every cell.
    slot: Vec<u32>,
    /// The cells' global nodes in batch layout, `nodes[(batch·P³ + i)·W + lane]` (u32: half the
    /// bytes of the scalar path's `usize` indices, and contiguous per node of a batch).
    nodes: Vec<u32>,
    /// Quadrature weights per point (kernel order), for D stored once per cell.
    w: Vec<f64>,
    /// D stored once per cell (`qdata[(batch·ns + k)·W + lane]`, without the weight): where D at
    /// every point is w_q times one value per cell (parallelepipeds, coefficients constant per
    /// cell — checked at every point by [`Self::store`]); else per point,
    /// `qdata[((batch·Q³ + point)·ns + k)·W + lane]`.
    per_cell: bool,
    pub qdata: Vec<f64>,
    /// The 1D weights where the point weights are their tensor product (Gauss and Gauss–Lobatto
    /// rules): what [`Self::kronecker`] needs.
    w1: Option<Vec<f64>>,
    /// Whether [`Self::kronecker`] may be chosen (`Tuning::cpu_kronecker`, default true).
    kronecker_allowed: bool,
    /// The apply on the nodes (see [`kronecker`]): where D is stored once per cell, the rule is
    /// not collocated and P ≤ [`KRONECKER_MAX_P`] — the cell operator is then a sum of Kronecker
    /// products of P × P 1D matrices, applied without going through the quadrature points.
    kronecker: bool,
    isa: Isa,
    /// Largest node index (checked against the vectors' length once per apply, so the gather and
    /// scatter index without bounds checks).
    max_node: usize,
    /// One scratch per worker thread (a `Scratch<P, Q>`), kept between applies: the per-split
    /// boxes of `for_each_init` allocated and zeroed up to hundreds of KB per split and per color.
    scratch: Vec<Mutex<Option<Box<dyn Any + Send>>>>,
}

impl HexBatch {
    /// The batches and the stored D's layout, with `tabs` = [B, the collocated derivative, the
    /// point weights] and `idx` the cells' global nodes in kernel order. [`SumForm::Gather`]:
    /// batches of W consecutive cells summed into y through a node map ([`Gather`]; where the
    /// map's positions would not fit in u32, the mesh's colors instead);
    /// [`SumForm::BatchColors`]: batches of W consecutive cells in runs colored by shared nodes;
    /// [`SumForm::MeshColors`]: `coloring`'s blocks, each cut into runs of W cells. None where no
    /// kernel is built for (p, q), the tables lack the mirror symmetry of even/odd, or a node index
    /// does not fit in u32.
    #[allow(clippy::too_many_arguments)]
    pub fn new(p: usize, q: usize, diffusion: bool, collocated: bool, tabs: [&[f64]; 3], coloring: &Coloring, idx: &[usize], form: SumForm) -> Option<HexBatch> {
        let [b, d, w] = tabs;
        let (pd, ncells) = (p * p * p, idx.len() / (p * p * p).max(1));
        if !supported(p, q) || !mirrored(b, q, p, 1.0) || !mirrored(d, q, q, -1.0) || w.len() != q * q * q || idx.iter().any(|&i| i > u32::MAX as usize) {
            return None;
        }
        let gather = form == SumForm::Gather && ncells.div_ceil(W) * pd * W <= u32::MAX as usize;
        let (mut blocks, mut batches, mut slot) = (Vec::new(), Vec::new(), vec![0u32; ncells]);
        let mut cut = |cells: Range<usize>, batches: &mut Vec<(usize, usize)>| {
            for start in cells.clone().step_by(W) {
                let n = W.min(cells.end - start);
                for l in 0..n {
                    slot[start + l] = (batches.len() * W + l) as u32;
                }
                batches.push((start, n));
            }
        };
        if gather {
            cut(0..ncells, &mut batches);
        } else if form == SumForm::BatchColors {
            cut(0..ncells, &mut batches);
            blocks = batch_colors(&batches, idx, pd);
        } else {
            for color in &coloring.blocks {
                let mut ranges = Vec::with_capacity(color.len());
                for cells in color {
                    let first = batches.len();
                    cut(cells.clone(), &mut batches);
                    ranges.push(first..batches.len());
                }
                blocks.push(ranges);
            }
        }
        let mut nodes = vec![0u32; batches.len() * pd * W];
        nodes.par_chunks_mut(pd * W).zip(&batches).for_each(|(bn, &(first, n))| {
            for i in 0..pd {
                for l in 0..W {
                    // Padding lanes repeat lane 0's nodes (read, never written).
                    bn[i * W + l] = idx[(first + if l < n { l } else { 0 }) * pd + i] as u32;
                }
            }
        });
        let max_node = idx.iter().copied().max().unwrap_or(0);
        let gather = gather.then(|| Gather::new(&nodes, &batches, pd, if ncells == 0 { 0 } else { max_node + 1 }));
        Some(HexBatch {
            p,
            q,
            ns: if diffusion { 6 } else { 1 },
            collocated,
            b: b.to_vec(),
            d: d.to_vec(),
            blocks,
            gather,
            batches,
            slot,
            nodes,
            w: w.to_vec(),
            per_cell: false,
            qdata: Vec::new(),
            w1: weights_1d(w, q),
            kronecker_allowed: true,
            kronecker: false,
            isa: Isa::best(),
            max_node,
            scratch: (0..rayon::current_num_threads().max(64)).map(|_| Mutex::new(None)).collect(),
        })
    }

    /// Whether y is summed by the gather form ([`Gather`]) rather than a colored scatter.
    pub fn gathers(&self) -> bool {
        self.gather.is_some()
    }

    /// The colored scatter's runs of batches per color (empty in the gather form).
    pub fn colors(&self) -> &[Vec<Range<usize>>] {
        &self.blocks
    }

    /// The cells of batch `b` (first cell, count).
    pub fn batch_cells(&self, b: usize) -> (usize, usize) {
        self.batches[b]
    }

    /// Fills [`Self::qdata`] with `point(cell, q, out)` (the `ns` numbers of a cell at a point).
    pub fn store(&mut self, point: impl Fn(usize, usize, &mut [f64]) -> crate::Result<()> + Sync) -> crate::Result<()> {
        let (qd, ns) = (self.q * self.q * self.q, self.ns);
        let mut qdata = vec![0.0; self.batches.len() * qd * ns * W];
        qdata.par_chunks_mut(qd * ns * W).zip(&self.batches).try_for_each(|(batch, &(first, n))| -> crate::Result<()> {
            let mut out = [0.0; 6];
            for l in 0..n {
                for i in 0..qd {
                    point(first + l, i, &mut out[..ns])?;
                    for k in 0..ns {
                        batch[(i * ns + k) * W + l] = out[k];
                    }
                }
            }
            Ok(())
        })?;
        // One D per cell where every point's is w_q times the first point's over w_0.
        let w = &self.w;
        let uniform = qdata.par_chunks(qd * ns * W).zip(&self.batches).all(|(batch, &(_, n))| {
            (0..n).all(|l| {
                let at = |i: usize, k: usize| batch[(i * ns + k) * W + l] / w[i];
                let scale = (0..ns).fold(0.0f64, |a, k| a.max(at(0, k).abs()));
                (1..qd).all(|i| (0..ns).all(|k| (at(i, k) - at(0, k)).abs() <= 1e-13 * scale))
            })
        });
        self.per_cell = uniform;
        self.kronecker = self.kronecker_allowed && uniform && !self.collocated && self.w1.is_some() && self.p <= KRONECKER_MAX_P;
        self.qdata = if uniform {
            let mut cells = vec![0.0; self.batches.len() * ns * W];
            cells.par_chunks_mut(ns * W).zip(qdata.par_chunks(qd * ns * W)).for_each(|(c, batch)| {
                for (v, b) in c.iter_mut().zip(&batch[..ns * W]) {
                    *v = b / w[0];
                }
            });
            cells
        } else {
            qdata
        };
        Ok(())
    }

    /// The stored numbers of cell c at point i.
    pub fn point(&self, c: usize, i: usize, out: &mut [f64]) {
        let s = self.slot[c] as usize;
        let (batch, lane, qd) = (s / W, s % W, self.q * self.q * self.q);
        for (k, o) in out[..self.ns].iter_mut().enumerate() {
            *o = if self.per_cell { self.w[i] * self.qdata[(batch * self.ns + k) * W + lane] } else { self.qdata[((batch * qd + i) * self.ns + k) * W + lane] };
        }
    }

    /// Whether D is stored once per cell (see [`Self::per_cell`]).
    pub fn d_per_cell(&self) -> bool {
        self.per_cell
    }

    /// Allows (the default) or forbids the apply on the nodes ([`kronecker`]); takes effect at the
    /// next [`Self::store`].
    pub fn allow_kronecker(&mut self, allowed: bool) {
        self.kronecker_allowed = allowed;
    }

    /// Whether the apply runs on the nodes ([`kronecker`]) rather than through the points.
    pub fn kronecker(&self) -> bool {
        self.kronecker
    }

    /// Bytes kept: D, the batch-layout node indices and, in the gather form, its map and the
    /// batches' results (written and read again every apply).
    pub fn storage_bytes(&self) -> usize {
        self.qdata.len() * 8 + self.nodes.len() * 4 + self.gather.as_ref().map_or(0, Gather::bytes)
    }

    /// The kernels' instruction set ([`Isa::best`] unless set by [`Self::set_isa`]).
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Runs the kernels compiled for `isa` (to compare the twins); an error where this CPU lacks it.
    pub fn set_isa(&mut self, isa: Isa) -> crate::Result<()> {
        if !isa.available() {
            return Err(crate::Error::Unsupported(format!("{isa:?} kernels on this CPU")));
        }
        self.isa = isa;
        Ok(())
    }

    /// `y = A x`, or with `mask` (1 free, 0 fixed) the Dirichlet-masked `y = M A M x + (I − M) x`:
    /// the mask applied in the gather and in one parallel pass after the scatter.
    pub fn apply(&self, x: &[f64], y: &mut [f64], mask: Option<&[f64]>) -> crate::Result<()> {
        let run = kernel(self.p, self.q, self.isa).ok_or_else(|| crate::Error::Unsupported(format!("batched hexahedron kernel for p = {}, q = {}", self.p, self.q)))?;
        // The kernels index x, y and the mask without bounds checks: every node must be inside.
        let short = [Some(x.len()), Some(y.len()), mask.map(|m| m.len())].into_iter().flatten().find(|&l| l <= self.max_node || l != x.len());
        if let Some(len) = short {
            return Err(crate::Error::dim("batched hexahedron apply", self.max_node + 1, len));
        }
        const CHUNK: usize = 8192;
        if let Some(g) = &self.gather {
            // Every batch writes its own slice of the results; each node then sums its entries.
            let mut ye = g.ye.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            run(self, x, &mut ye, mask);
            g.sum(&ye, x, y, mask, CHUNK);
            return Ok(());
        }
        y.par_chunks_mut(CHUNK).for_each(|c| c.fill(0.0));
        run(self, x, y, mask);
        if let Some(m) = mask {
            y.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK).zip(m.par_chunks(CHUNK))).for_each(|(yc, (xc, mc))| {
                for ((yv, xv), mv) in yc.iter_mut().zip(xc).zip(mc) {
                    *yv = mv * *yv + (1.0 - mv) * xv;
                }
            });
        }
        Ok(())
    }
}

/// The gather form of the sum into y: every batch stores its P³ × W results in its own slice of
/// `ye` (batch layout, no sharing), then each node sums its entries there through a map built at
/// set-up — no colors, no barriers between them, no atomics, and the batches split evenly over
/// the threads whatever their number (the colored scatter runs one color at a time, ~5–30 blocks
/// of very unequal counts per color at 2·10⁵ unknowns, so 16 threads idle at every color's end).
/// The sum also applies the Dirichlet mask and overwrites y, so y needs no zero fill and no
/// masked pass after. Deterministic: each node sums its entries in a fixed order.
struct Gather {
    /// Node i's entries are `ye[pos[k]]` for k in `start[i]..start[i + 1]` (ascending).
    start: Vec<u32>,
    pos: Vec<u32>,
    /// The batches' results, `ye[(batch·P³ + i)·W + lane]` (padding lanes written, never read).
    ye: Mutex<Vec<f64>>,
}

impl Gather {
    /// The map of `nodes` (batch layout) over `nn` nodes; the caller checks that the positions fit
    /// in u32.
    fn new(nodes: &[u32], batches: &[(usize, usize)], pd: usize, nn: usize) -> Gather {
        let mut start = vec![0u32; nn + 1];
        let valid = |f: &mut dyn FnMut(usize, u32)| {
            for (bid, &(_, n)) in batches.iter().enumerate() {
                for i in 0..pd {
                    let e = (bid * pd + i) * W;
                    for l in 0..n {
                        f(e + l, nodes[e + l]);
                    }
                }
            }
        };
        valid(&mut |_, node| start[node as usize + 1] += 1);
        for i in 0..nn {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut pos = vec![0u32; start[nn] as usize];
        valid(&mut |e, node| {
            let k = &mut next[node as usize];
            pos[*k as usize] = e as u32;
            *k += 1;
        });
        Gather { start, pos, ye: Mutex::new(vec![0.0; batches.len() * pd * W]) }
    }

    fn bytes(&self) -> usize {
        (self.start.len() + self.pos.len()) * 4 + self.ye.lock().map_or(0, |v| v.len() * 8)
    }

    /// `y[i] = Σ ye[pos]` over node i's entries, or with `mask` `m_i Σ + (1 − m_i) x_i`; nodes
    /// beyond the map (in no cell) get 0 (masked: x_i).
    fn sum(&self, ye: &[f64], x: &[f64], y: &mut [f64], mask: Option<&[f64]>, chunk: usize) {
        let nn = self.start.len() - 1;
        y.par_chunks_mut(chunk).enumerate().for_each(|(c, yc)| {
            for (k, yv) in yc.iter_mut().enumerate() {
                let i = c * chunk + k;
                let s = if i < nn {
                    let (a, b) = (self.start[i] as usize, self.start[i + 1] as usize);
                    // SAFETY: every position is inside ye (built from its batches in `new`).
                    self.pos[a..b].iter().fold(0.0, |s, &e| s + unsafe { *ye.get_unchecked(e as usize) })
                } else {
                    0.0
                };
                *yv = match mask {
                    Some(m) => m[i] * s + (1.0 - m[i]) * x[i],
                    None => s,
                };
            }
        });
    }
}

/// Largest P (nodes per axis) of the apply on the nodes: its 17 P × P stages per cell (4 along x,
/// 9 along y, 4 along z) cost about half the flops of the quadrature-point path's stages, D and
/// transposes at P = 2, 3 (Q = P + 1), and no fewer beyond (the point path's stages fold even/odd
/// from five inputs).
pub const KRONECKER_MAX_P: usize = 3;

/// The 1D weights of a tensor-product rule from its `q`³ point weights (kernel order, x fastest),
/// or None where they are not a tensor product to 1e-13.
fn weights_1d(w: &[f64], q: usize) -> Option<Vec<f64>> {
    if q == 0 || w.len() != q * q * q || w[0] <= 0.0 {
        return None;
    }
    let w0 = w[0].cbrt();
    let w1: Vec<f64> = (0..q).map(|i| w[i] / (w0 * w0)).collect();
    let scale = w.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let tensor = (0..q * q * q).all(|i| (w[i] - w1[i % q] * w1[i / q % q] * w1[i / (q * q)]).abs() <= 1e-13 * scale);
    tensor.then_some(w1)
}

type Kernel = fn(&HexBatch, &[f64], &mut [f64], Option<&[f64]>);

/// The monomorphized apply of (p, q): one per pair of the two CEED rules (q = p and q = p + 1
/// points per axis for p basis functions, i.e. BP5's collocated and BP1/BP3's Gauss rule).
fn kernel(p: usize, q: usize, isa: Isa) -> Option<Kernel> {
    macro_rules! pairs {
        ($(($p:literal, $q:literal)),*) => {
            match (p, q, isa) {
                $(($p, $q, Isa::Base) => Some(apply_all::<$p, $q, BASE> as Kernel),
                  ($p, $q, Isa::Avx2Fma) => Some(apply_all::<$p, $q, AVX2> as Kernel),
                  ($p, $q, Isa::Avx512) => Some(apply_all::<$p, $q, AVX512> as Kernel),)*
                _ => None,
            }
        };
    }
    pairs!((2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 6), (6, 6), (6, 7), (7, 7), (7, 8), (8, 8), (8, 9), (9, 9), (9, 10))
}

/// Lane vectors and arrays of them: what a stage multiplies by a table entry and sums.
trait Lanes: Copy {
    fn axpy<const F: bool>(&mut self, c: f64, x: &Self);
    fn set(&mut self, c: f64, x: &Self);
}

impl Lanes for f64 {
    #[inline(always)]
    fn axpy<const F: bool>(&mut self, c: f64, x: &f64) {
        *self = if F { c.mul_add(*x, *self) } else { *self + c * x };
    }
    #[inline(always)]
    fn set(&mut self, c: f64, x: &f64) {
        *self = c * x;
    }
}

impl<T: Lanes, const N: usize> Lanes for [T; N] {
    #[inline(always)]
    fn axpy<const F: bool>(&mut self, c: f64, x: &Self) {
        for (s, v) in self.iter_mut().zip(x) {
            s.axpy::<F>(c, v);
        }
    }
    #[inline(always)]
    fn set(&mut self, c: f64, x: &Self) {
        for (s, v) in self.iter_mut().zip(x) {
            s.set(c, v);
        }
    }
}

/// `out[o] (+)= Σ_k m[o][k] x[k]` along one axis (T: a lane vector, a line or a plane of them).
#[inline(always)]
fn stage<T: Lanes, const NI: usize, const NO: usize, const F: bool, const ACC: bool>(m: &[[f64; NI]; NO], x: &[T; NI], out: &mut [T; NO]) {
    for (o, row) in out.iter_mut().zip(m) {
        if ACC {
            o.axpy::<F>(row[0], &x[0]);
        } else {
            o.set(row[0], &x[0]);
        }
        for k in 1..NI {
            o.axpy::<F>(row[k], &x[k]);
        }
    }
}

/// From this many inputs per stage the even/odd form ([`stage_eo`]) is used: below, the sums and
/// differences it adds cost what the halved products save.
const EO_MIN: usize = 5;

/// A 1D table (NO × NI, row-major) and its even/odd form. The nodes and points are symmetric about
/// the cell centre, so `m[NO−1−o][NI−1−k] = s·m[o][k]` (s = 1 for B, −1 for the derivative): for
/// rows `o < ⌈NO/2⌉` and `k < NI/2`, `ev[o][k] = ½(m[o][k] + m[o][NI−1−k])`,
/// `od[o][k] = ½(m[o][k] − m[o][NI−1−k])` (the middle column, NI odd, whole in `ev`).
#[derive(Clone, Copy)]
struct Table<const NI: usize, const NO: usize> {
    m: [[f64; NI]; NO],
    ev: [[f64; NI]; NO],
    od: [[f64; NI]; NO],
    sign: f64,
}

impl<const NI: usize, const NO: usize> Table<NI, NO> {
    fn of(m: [[f64; NI]; NO], sign: f64) -> Self {
        let (mut ev, mut od) = ([[0.0; NI]; NO], [[0.0; NI]; NO]);
        for o in 0..NO.div_ceil(2) {
            for k in 0..NI / 2 {
                let (a, b) = (m[o][k], m[o][NI - 1 - k]);
                ev[o][k] = 0.5 * (a + b);
                od[o][k] = 0.5 * (a - b);
            }
            if NI % 2 == 1 {
                ev[o][NI / 2] = m[o][NI / 2];
            }
        }
        Table { m, ev, od, sign }
    }
}

/// Whether `m` (rows × cols, row-major) has the mirror symmetry `m[r−1−o][c−1−k] = s·m[o][k]`.
pub fn mirrored(m: &[f64], rows: usize, cols: usize, sign: f64) -> bool {
    let scale = m.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    (0..rows).all(|o| (0..cols).all(|k| (m[(rows - 1 - o) * cols + cols - 1 - k] - sign * m[o * cols + k]).abs() <= 1e-12 * scale))
}

/// [`stage`] in even/odd form: with `e_k = x_k + x_{NI−1−k}`, `d_k = x_k − x_{NI−1−k}` (k < NI/2;
/// `e` holds the middle input), `E_o = Σ ev[o][k] e_k`, `O_o = Σ od[o][k] d_k`:
/// `out[o] = E_o + O_o` and `out[NO−1−o] = s (E_o − O_o)` — about half the products.
#[inline(always)]
fn stage_eo<T: Lanes, const NI: usize, const NO: usize, const F: bool, const ACC: bool>(m: &Table<NI, NO>, x: &[T; NI], out: &mut [T; NO]) {
    let (ne, nd) = (NI.div_ceil(2), NI / 2);
    let e: [T; NI] = std::array::from_fn(|k| {
        let mut v = x[k];
        if k < nd {
            v.axpy::<false>(1.0, &x[NI - 1 - k]);
        }
        v
    });
    let d: [T; NI] = std::array::from_fn(|k| {
        let mut v = x[k];
        if k < nd {
            v.axpy::<false>(-1.0, &x[NI - 1 - k]);
        }
        v
    });
    for o in 0..NO.div_ceil(2) {
        let mut ev = e[0];
        ev.set(m.ev[o][0], &e[0]);
        for k in 1..ne {
            ev.axpy::<F>(m.ev[o][k], &e[k]);
        }
        let mut od = d[0];
        od.set(m.od[o][0], &d[0]);
        for k in 1..nd {
            od.axpy::<F>(m.od[o][k], &d[k]);
        }
        let mirror = NO - 1 - o;
        if ACC {
            out[o].axpy::<false>(1.0, &ev);
        } else {
            out[o] = ev;
        }
        out[o].axpy::<false>(1.0, &od);
        if mirror != o {
            if ACC {
                out[mirror].axpy::<false>(m.sign, &ev);
            } else {
                out[mirror].set(m.sign, &ev);
            }
            out[mirror].axpy::<false>(-m.sign, &od);
        }
    }
}

/// A stage with `m`: even/odd from [`EO_MIN`] inputs.
#[inline(always)]
fn contract<T: Lanes, const NI: usize, const NO: usize, const F: bool, const ACC: bool>(m: &Table<NI, NO>, x: &[T; NI], out: &mut [T; NO]) {
    if NI >= EO_MIN {
        stage_eo::<T, NI, NO, F, ACC>(m, x, out)
    } else {
        stage::<T, NI, NO, F, ACC>(&m.m, x, out)
    }
}

/// The 1D tables of one (P, Q): B (Q × P, sign +1), Bᵀ, the collocated derivative D (Q × Q,
/// sign −1) and Dᵀ.
struct Tables<const P: usize, const Q: usize> {
    b: Table<P, Q>,
    bt: Table<Q, P>,
    d: Table<Q, Q>,
    dt: Table<Q, Q>,
    /// The apply on the nodes' 1D matrices (with G = D B the derivative at the points, W the 1D
    /// weights): M = BᵀWB, K = GᵀWG, E = BᵀWG, F = GᵀWB = Eᵀ.
    kron: Option<[Table<P, P>; 4]>,
}

impl<const P: usize, const Q: usize> Tables<P, Q> {
    fn of(h: &HexBatch) -> Self {
        let b = std::array::from_fn(|i| std::array::from_fn(|a| h.b[i * P + a]));
        let bt = std::array::from_fn(|a| std::array::from_fn(|i| h.b[i * P + a]));
        let d = std::array::from_fn(|i| std::array::from_fn(|j| h.d[i * Q + j]));
        let dt = std::array::from_fn(|j| std::array::from_fn(|i| h.d[i * Q + j]));
        let kron = h.w1.as_ref().filter(|_| h.kronecker).map(|w1| {
            let g: [[f64; P]; Q] = std::array::from_fn(|i| std::array::from_fn(|a| (0..Q).map(|j| h.d[i * Q + j] * h.b[j * P + a]).sum()));
            let bm: [[f64; P]; Q] = std::array::from_fn(|i| std::array::from_fn(|a| h.b[i * P + a]));
            let pair = |l: &[[f64; P]; Q], r: &[[f64; P]; Q], sign: f64| {
                Table::of(std::array::from_fn(|a| std::array::from_fn(|c| (0..Q).map(|i| w1[i] * l[i][a] * r[i][c]).sum())), sign)
            };
            [pair(&bm, &bm, 1.0), pair(&g, &g, 1.0), pair(&bm, &g, -1.0), pair(&g, &bm, -1.0)]
        });
        Tables { b: Table::of(b, 1.0), bt: Table::of(bt, 1.0), d: Table::of(d, -1.0), dt: Table::of(dt, -1.0), kron }
    }
}

type Cube<const A: usize, const B: usize, const C: usize> = [[[V; A]; B]; C];

/// One thread's intermediates of a batch (indexed [z][y][x]).
struct Scratch<const P: usize, const Q: usize> {
    u: Cube<P, P, P>,
    s1: Cube<Q, P, P>,
    s2: Cube<Q, Q, P>,
    t: Cube<Q, Q, Q>,
    g: [Cube<Q, Q, Q>; 3],
    /// The apply on the nodes' intermediates ([`kronecker`]).
    k: [Cube<P, P, P>; 9],
}

impl<const P: usize, const Q: usize> Scratch<P, Q> {
    fn boxed() -> Box<Self> {
        // Built on the heap: up to ~400 KB at Q = 10.
        let z = [0.0; W];
        Box::new(Scratch { u: [[[z; P]; P]; P], s1: [[[z; Q]; P]; P], s2: [[[z; Q]; Q]; P], t: [[[z; Q]; Q]; Q], g: [[[[z; Q]; Q]; Q]; 3], k: [[[[z; P]; P]; P]; 9] })
    }
}

/// 3D stages along x (within lines), y (lines of a plane) and z (planes, one column of lines at
/// a time so that the even/odd sums stay small).
#[inline(always)]
fn along_x<const NI: usize, const NO: usize, const Y: usize, const Z: usize, const F: bool, const ACC: bool>(m: &Table<NI, NO>, x: &Cube<NI, Y, Z>, out: &mut Cube<NO, Y, Z>) {
    for (xp, op) in x.iter().zip(out.iter_mut()) {
        for (xl, ol) in xp.iter().zip(op.iter_mut()) {
            contract::<V, NI, NO, F, ACC>(m, xl, ol);
        }
    }
}

#[inline(always)]
fn along_y<const X: usize, const NI: usize, const NO: usize, const Z: usize, const F: bool, const ACC: bool>(m: &Table<NI, NO>, x: &Cube<X, NI, Z>, out: &mut Cube<X, NO, Z>) {
    for (xp, op) in x.iter().zip(out.iter_mut()) {
        contract::<[V; X], NI, NO, F, ACC>(m, xp, op);
    }
}

#[inline(always)]
fn along_z<const X: usize, const Y: usize, const NI: usize, const NO: usize, const F: bool, const ACC: bool>(m: &Table<NI, NO>, x: &Cube<X, Y, NI>, out: &mut Cube<X, Y, NO>) {
    if NI < EO_MIN {
        // The plain form reads the planes in place (no copy of the column in and out).
        for j in 0..Y {
            for (o, row) in out.iter_mut().zip(&m.m) {
                let acc = &mut o[j];
                if ACC {
                    acc.axpy::<F>(row[0], &x[0][j]);
                } else {
                    acc.set(row[0], &x[0][j]);
                }
                for k in 1..NI {
                    acc.axpy::<F>(row[k], &x[k][j]);
                }
            }
        }
        return;
    }
    for j in 0..Y {
        let col: [[V; X]; NI] = std::array::from_fn(|k| x[k][j]);
        let mut res: [[V; X]; NO] = std::array::from_fn(|k| if ACC { out[k][j] } else { [[0.0; W]; X] });
        contract::<[V; X], NI, NO, F, ACC>(m, &col, &mut res);
        for (k, r) in res.iter().enumerate() {
            out[k][j] = *r;
        }
    }
}

/// `out = d · x` per lane.
#[inline(always)]
fn scaled<const P: usize>(x: &Cube<P, P, P>, d: &V, out: &mut Cube<P, P, P>) {
    for (o, v) in out.as_flattened_mut().as_flattened_mut().iter_mut().zip(x.as_flattened().as_flattened()) {
        for l in 0..W {
            o[l] = d[l] * v[l];
        }
    }
}

/// The apply on the nodes, `s.u ← A_cell s.u`, where D is one symmetric 3 × 3 matrix per cell
/// (packed xx, xy, xz, yy, yz, zz) and the weights a tensor product: then
/// `A_cell = Σ_ij D_ij T_ij` with `T_ij = Z ⊗ Y ⊗ X` built from the 1D matrices M = BᵀWB,
/// K = GᵀWG, E = BᵀWG, F = GᵀWB (along an axis: K where both derivatives are, F where only the
/// test function's is, E where only the trial function's is, M where neither is): T_xx = M⊗M⊗K,
/// T_xy = M⊗E⊗F, T_yx = M⊗F⊗E, T_xz = E⊗M⊗F, T_zx = F⊗M⊗E, T_yz = E⊗F⊗M, T_zy = F⊗E⊗M, and
/// so on. Grouped by the z factor: 4 stages along x, 9 along y (each input scaled by its D_ij),
/// 4 along z, all P × P — never at the quadrature points. Mass (one number per cell): d·M⊗M⊗M.
#[inline(always)]
fn kronecker<const P: usize, const Q: usize, const F: bool>(h: &HexBatch, t: &Tables<P, Q>, s: &mut Scratch<P, Q>, bid: usize) {
    let Some([m, k, e, f]) = &t.kron else { return };
    let d = &h.qdata[bid * h.ns * W..(bid + 1) * h.ns * W];
    let dv = |i: usize| -> V { std::array::from_fn(|l| d[i * W + l]) };
    let [xm, xk, xe, xf, a, zm, zk, ze, zf] = &mut s.k;
    if h.ns == 1 {
        along_x::<P, P, P, P, F, false>(m, &s.u, xm);
        along_y::<P, P, P, P, F, false>(m, xm, a);
        along_z::<P, P, P, P, F, false>(m, a, xk);
        scaled(xk, &dv(0), &mut s.u);
        return;
    }
    let [dxx, dxy, dxz, dyy, dyz, dzz] = std::array::from_fn(dv);
    along_x::<P, P, P, P, F, false>(m, &s.u, xm);
    along_x::<P, P, P, P, F, false>(k, &s.u, xk);
    along_x::<P, P, P, P, F, false>(e, &s.u, xe);
    along_x::<P, P, P, P, F, false>(f, &s.u, xf);
    // z factor K: T_zz.
    scaled(xm, &dzz, a);
    along_y::<P, P, P, P, F, false>(m, a, zk);
    // z factor E: T_xz = E⊗M⊗F, T_yz = E⊗F⊗M.
    scaled(xf, &dxz, a);
    along_y::<P, P, P, P, F, false>(m, a, ze);
    scaled(xm, &dyz, a);
    along_y::<P, P, P, P, F, true>(f, a, ze);
    // z factor F: T_zx = F⊗M⊗E, T_zy = F⊗E⊗M.
    scaled(xe, &dxz, a);
    along_y::<P, P, P, P, F, false>(m, a, zf);
    scaled(xm, &dyz, a);
    along_y::<P, P, P, P, F, true>(e, a, zf);
    // z factor M: T_xx = M⊗M⊗K, T_yy = M⊗K⊗M, T_xy = M⊗E⊗F, T_yx = M⊗F⊗E.
    scaled(xk, &dxx, a);
    along_y::<P, P, P, P, F, false>(m, a, zm);
    scaled(xm, &dyy, a);
    along_y::<P, P, P, P, F, true>(k, a, zm);
    scaled(xf, &dxy, a);
    along_y::<P, P, P, P, F, true>(e, a, zm);
    scaled(xe, &dxy, a);
    along_y::<P, P, P, P, F, true>(f, a, zm);
    along_z::<P, P, P, P, F, false>(m, zm, &mut s.u);
    along_z::<P, P, P, P, F, true>(k, zk, &mut s.u);
    along_z::<P, P, P, P, F, true>(e, ze, &mut s.u);
    along_z::<P, P, P, P, F, true>(f, zf, &mut s.u);
}

/// One batch: gather, B, gradients, D, transposes, Bᵀ, scatter.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn batch<const P: usize, const Q: usize, const F: bool>(h: &HexBatch, t: &Tables<P, Q>, s: &mut Scratch<P, Q>, bid: usize, x: &[f64], mask: Option<&[f64]>, y: SharedMut<f64>, ylen: usize) {
    let n = h.batches[bid].1;
    let pd = P * P * P;
    let nodes = &h.nodes[bid * pd * W..(bid + 1) * pd * W];
    {
        let u = s.u.as_flattened_mut().as_flattened_mut();
        // SAFETY (the loads below): every node is below x's (and the mask's) length (checked in
        // `apply`). Whole batches and the mask's presence are decided once per batch, so that the
        // lane loops are plain gathers.
        match (mask, n == W) {
            (None, true) => {
                for (ui, ni) in u.iter_mut().zip(nodes.chunks_exact(W)) {
                    for l in 0..W {
                        ui[l] = unsafe { *x.get_unchecked(ni[l] as usize) };
                    }
                }
            }
            (Some(m), true) => {
                for (ui, ni) in u.iter_mut().zip(nodes.chunks_exact(W)) {
                    for l in 0..W {
                        let j = ni[l] as usize;
                        ui[l] = unsafe { *m.get_unchecked(j) * *x.get_unchecked(j) };
                    }
                }
            }
            _ => {
                for (ui, ni) in u.iter_mut().zip(nodes.chunks_exact(W)) {
                    for l in 0..W {
                        let j = ni[l] as usize;
                        let xj = unsafe { *x.get_unchecked(j) };
                        ui[l] = if l < n { mask.map_or(xj, |m| unsafe { *m.get_unchecked(j) } * xj) } else { 0.0 };
                    }
                }
            }
        }
    }
    if h.kronecker {
        kronecker::<P, Q, F>(h, t, s, bid);
    } else {
        through_points::<P, Q, F>(h, t, s, bid);
    }
    let u = s.u.as_flattened().as_flattened();
    if h.gather.is_some() {
        // The gather form: y is this apply's `ye`, whose slice of this batch no other batch writes.
        // SAFETY: `ye` holds every batch's P³ × W results (built in `Gather::new`).
        let ye = unsafe { std::slice::from_raw_parts_mut(y.0.add(bid * pd * W), pd * W) };
        ye.copy_from_slice(u.as_flattened());
        return;
    }
    // SAFETY: the batches of one color's blocks share no node; `y` is `ylen` long.
    let y = unsafe { std::slice::from_raw_parts_mut(y.0, ylen) };
    for (ui, ni) in u.iter().zip(nodes.chunks_exact(W)) {
        for l in 0..n {
            // SAFETY: every node is below y's length (checked in `apply`).
            unsafe { *y.get_unchecked_mut(ni[l] as usize) += ui[l] };
        }
    }
}

/// `s.u ← A_cell s.u` through the quadrature points: B, gradients, D, transposes, Bᵀ.
#[inline(always)]
fn through_points<const P: usize, const Q: usize, const F: bool>(h: &HexBatch, t: &Tables<P, Q>, s: &mut Scratch<P, Q>, bid: usize) {
    let (pd, qd) = (P * P * P, Q * Q * Q);
    // Values at the points in s.t (P = Q collocated: the nodes are the points).
    if h.collocated && P == Q {
        let (u, tt) = (s.u.as_flattened().as_flattened(), s.t.as_flattened_mut().as_flattened_mut());
        tt.copy_from_slice(&u[..qd]);
    } else {
        along_x::<P, Q, P, P, F, false>(&t.b, &s.u, &mut s.s1);
        along_y::<Q, P, Q, P, F, false>(&t.b, &s.s1, &mut s.s2);
        along_z::<Q, Q, P, Q, F, false>(&t.b, &s.s2, &mut s.t);
    }
    let per = if h.per_cell { h.ns * W } else { qd * h.ns * W };
    let qdata = &h.qdata[bid * per..(bid + 1) * per];
    if h.ns == 6 {
        {
            let [g0, g1, g2] = &mut s.g;
            along_x::<Q, Q, Q, Q, F, false>(&t.d, &s.t, g0);
            along_y::<Q, Q, Q, Q, F, false>(&t.d, &s.t, g1);
            along_z::<Q, Q, Q, Q, F, false>(&t.d, &s.t, g2);
        }
        let [g0, g1, g2] = &mut s.g;
        let (g0, g1, g2) = (g0.as_flattened_mut().as_flattened_mut(), g1.as_flattened_mut().as_flattened_mut(), g2.as_flattened_mut().as_flattened_mut());
        if h.per_cell {
            // The cell's 6 numbers stay in registers; each point scales by its weight.
            let d: [V; 6] = std::array::from_fn(|k| std::array::from_fn(|l| qdata[k * W + l]));
            for (i, &wq) in h.w[..qd].iter().enumerate() {
                let (a, b, c) = (g0[i], g1[i], g2[i]);
                for l in 0..W {
                    let (a, b, c) = (wq * a[l], wq * b[l], wq * c[l]);
                    g0[i][l] = d[0][l] * a + d[1][l] * b + d[2][l] * c;
                    g1[i][l] = d[1][l] * a + d[3][l] * b + d[4][l] * c;
                    g2[i][l] = d[2][l] * a + d[4][l] * b + d[5][l] * c;
                }
            }
        } else {
            for (i, dq) in qdata.chunks_exact(6 * W).enumerate() {
                let (a, b, c) = (g0[i], g1[i], g2[i]);
                for l in 0..W {
                    let d = |k: usize| dq[k * W + l];
                    g0[i][l] = d(0) * a[l] + d(1) * b[l] + d(2) * c[l];
                    g1[i][l] = d(1) * a[l] + d(3) * b[l] + d(4) * c[l];
                    g2[i][l] = d(2) * a[l] + d(4) * b[l] + d(5) * c[l];
                }
            }
        }
        along_x::<Q, Q, Q, Q, F, false>(&t.dt, &s.g[0], &mut s.t);
        along_y::<Q, Q, Q, Q, F, true>(&t.dt, &s.g[1], &mut s.t);
        along_z::<Q, Q, Q, Q, F, true>(&t.dt, &s.g[2], &mut s.t);
    } else if h.per_cell {
        let d: V = std::array::from_fn(|l| qdata[l]);
        for (ti, &wq) in s.t.as_flattened_mut().as_flattened_mut().iter_mut().zip(&h.w[..qd]) {
            for l in 0..W {
                ti[l] *= wq * d[l];
            }
        }
    } else {
        for (ti, dq) in s.t.as_flattened_mut().as_flattened_mut().iter_mut().zip(qdata.chunks_exact(W)) {
            for l in 0..W {
                ti[l] *= dq[l];
            }
        }
    }
    if h.collocated && P == Q {
        let (tt, u) = (s.t.as_flattened().as_flattened(), s.u.as_flattened_mut().as_flattened_mut());
        u.copy_from_slice(&tt[..pd]);
    } else {
        along_z::<Q, Q, Q, P, F, false>(&t.bt, &s.t, &mut s.s2);
        along_y::<Q, Q, P, P, F, false>(&t.bt, &s.s2, &mut s.s1);
        along_x::<Q, P, P, P, F, false>(&t.bt, &s.s1, &mut s.u);
    }
}

/// The instruction set of an [`apply_all`] as a const parameter.
const BASE: u8 = 0;
const AVX2: u8 = 1;
const AVX512: u8 = 2;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn batch_avx2<const P: usize, const Q: usize>(h: &HexBatch, t: &Tables<P, Q>, s: &mut Scratch<P, Q>, bid: usize, x: &[f64], mask: Option<&[f64]>, y: SharedMut<f64>, ylen: usize) {
    batch::<P, Q, true>(h, t, s, bid, x, mask, y, ylen)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn batch_avx512<const P: usize, const Q: usize>(h: &HexBatch, t: &Tables<P, Q>, s: &mut Scratch<P, Q>, bid: usize, x: &[f64], mask: Option<&[f64]>, y: SharedMut<f64>, ylen: usize) {
    batch::<P, Q, true>(h, t, s, bid, x, mask, y, ylen)
}

/// Batches per parallel task of the gather form: 32 cells, so that 16 threads get ~100 tasks each
/// at 2·10⁵ unknowns (Q2) and the last tasks end together.
const GATHER_BATCHES: usize = 4;

/// Every batch: in the gather form all at once in tasks of [`GATHER_BATCHES`], each writing its
/// own slice of `y` (the gather's `ye`); else one color of blocks at a time, blocks in parallel.
/// Each worker thread has its own scratch kept in [`HexBatch::scratch`].
fn apply_all<const P: usize, const Q: usize, const I: u8>(h: &HexBatch, x: &[f64], y: &mut [f64], mask: Option<&[f64]>) {
    let t = Tables::<P, Q>::of(h);
    let (ylen, yp) = (y.len(), SharedMut(y.as_mut_ptr()));
    let run = |batches: Range<usize>| {
        let yp = yp;
        let slot = &h.scratch[rayon::current_thread_index().unwrap_or(0) % h.scratch.len()];
        let mut guard = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !guard.as_ref().is_some_and(|b| b.is::<Scratch<P, Q>>()) {
            *guard = Some(Scratch::<P, Q>::boxed());
        }
        let Some(s) = guard.as_mut().and_then(|b| b.downcast_mut::<Scratch<P, Q>>()) else { return };
        for bid in batches {
            #[cfg(target_arch = "x86_64")]
            match I {
                // SAFETY: `I` is only chosen when the CPU has these features ([`Isa::available`]).
                AVX512 => unsafe { batch_avx512::<P, Q>(h, &t, s, bid, x, mask, yp, ylen) },
                AVX2 => unsafe { batch_avx2::<P, Q>(h, &t, s, bid, x, mask, yp, ylen) },
                _ => batch::<P, Q, false>(h, &t, s, bid, x, mask, yp, ylen),
            }
            #[cfg(not(target_arch = "x86_64"))]
            batch::<P, Q, false>(h, &t, s, bid, x, mask, yp, ylen);
        }
    };
    if h.gather.is_some() {
        let nb = h.batches.len();
        (0..nb.div_ceil(GATHER_BATCHES)).into_par_iter().for_each(|c| run(c * GATHER_BATCHES..((c + 1) * GATHER_BATCHES).min(nb)));
        return;
    }
    for color in &h.blocks {
        color.par_iter().for_each(|batches| run(batches.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table with the mirror symmetry `m[r−1−o][c−1−k] = s·m[o][k]` from arbitrary numbers.
    fn mirror_table(rows: usize, cols: usize, sign: f64, seed: f64) -> Vec<f64> {
        let raw: Vec<f64> = (0..rows * cols).map(|i| ((i as f64 + seed) * 0.7548776662).sin()).collect();
        (0..rows * cols).map(|i| {
            let (o, k) = (i / cols, i % cols);
            0.5 * (raw[i] + sign * raw[(rows - 1 - o) * cols + cols - 1 - k])
        }).collect()
    }

    /// The baseline, AVX2 and AVX-512 twins (those this CPU runs) give the same product to
    /// round-off, per-point and per-cell D, masked and not, on 21 cells in two colors of blocks
    /// (partial last batches), for a collocated and a Gauss pair: each twin is the same source,
    /// but only the best one runs in the other tests.
    #[test]
    fn instruction_set_twins_agree() {
        for (p, q, collocated) in [(3, 4, false), (3, 3, true), (5, 6, false)] {
            let (pd, ncells, ndofs) = (p * p * p, 21, 400);
            let idx: Vec<usize> = (0..ncells * pd).map(|i| (i * 37 + i / pd * 11) % ndofs).collect();
            // Cells that share a node must not run in parallel: one block per color.
            let coloring = Coloring { blocks: vec![vec![0..13], vec![13..21]] };
            let (b, d) = (mirror_table(q, p, 1.0, 0.3), mirror_table(q, q, -1.0, 1.1));
            let w: Vec<f64> = (0..q * q * q).map(|i| 0.5 + 0.01 * i as f64).collect();
            let x: Vec<f64> = (0..ndofs).map(|i| (i as f64 * 0.37).cos()).collect();
            let mask: Vec<f64> = (0..ndofs).map(|i| if i % 9 == 0 { 0.0 } else { 1.0 }).collect();
            for per_cell in [false, true] {
                let mut h = HexBatch::new(p, q, true, collocated, [&b, &d, &w], &coloring, &idx, SumForm::MeshColors).expect("batched kernel");
                h.store(|c, i, out| {
                    for (k, o) in out.iter_mut().enumerate() {
                        let cell = 1.0 + 0.1 * c as f64 + 0.01 * k as f64 + if k == 0 || k == 3 || k == 5 { 2.0 } else { 0.0 };
                        *o = w[i] * if per_cell { cell } else { cell + 0.05 * (i as f64).sin() };
                    }
                    Ok(())
                })
                .unwrap();
                assert_eq!(h.d_per_cell(), per_cell);
                let mut reference: Option<Vec<f64>> = None;
                for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
                    h.set_isa(isa).unwrap();
                    let mut y = vec![0.0; ndofs];
                    h.apply(&x, &mut y, Some(&mask)).unwrap();
                    let mut y2 = vec![0.0; ndofs];
                    h.apply(&x, &mut y2, None).unwrap();
                    y.extend(y2);
                    match &reference {
                        None => reference = Some(y),
                        Some(r) => {
                            let scale = r.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                            let diff = r.iter().zip(&y).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
                            assert!(scale > 0.5 && diff < 1e-13 * scale, "p={p} q={q} {isa:?}: differs from the baseline by {diff:e} (scale {scale:e})");
                        }
                    }
                }
                // A vector shorter than the largest node is refused, not read out of bounds.
                let short = h.max_node;
                let mut y = vec![0.0; short];
                assert!(h.apply(&x[..short], &mut y, None).is_err());
            }
        }
    }

    /// The gather form (batches of consecutive cells, each node summing its entries through the
    /// node map) and the scatter with the batches' own colors equal the scatter with the mesh's
    /// colors to round-off, for diffusion and mass, D per point and per cell, masked and not, on
    /// 45 cells (a partial last batch) whose nodes leave some of the vector's entries in no cell
    /// (0, or x where masked); each form is the one taken.
    #[test]
    fn gather_equals_the_colored_scatter() {
        for (p, q, collocated, diffusion) in [(3, 4, false, true), (3, 3, true, true), (4, 5, false, false), (2, 3, false, true)] {
            let (pd, ncells, nodes_used, ndofs) = (p * p * p, 45, 500, 520);
            let idx: Vec<usize> = (0..ncells * pd).map(|i| (i * 37 + i / pd * 11) % nodes_used).collect();
            // Cells sharing a node must not run in parallel in the colored form: one block per color.
            let coloring = Coloring { blocks: (0..ncells).step_by(10).map(|c| vec![c..(c + 10).min(ncells)]).collect() };
            let (b, d) = (mirror_table(q, p, 1.0, 0.3), mirror_table(q, q, -1.0, 1.1));
            let w: Vec<f64> = (0..q * q * q).map(|i| 0.5 + 0.01 * i as f64).collect();
            let x: Vec<f64> = (0..ndofs).map(|i| (i as f64 * 0.37).cos()).collect();
            let mask: Vec<f64> = (0..ndofs).map(|i| if i % 9 == 0 { 0.0 } else { 1.0 }).collect();
            for per_cell in [false, true] {
                let mut products = Vec::new();
                for form in [SumForm::MeshColors, SumForm::Gather, SumForm::BatchColors] {
                    let mut h = HexBatch::new(p, q, diffusion, collocated, [&b, &d, &w], &coloring, &idx, form).expect("batched kernel");
                    assert_eq!(h.gathers(), form == SumForm::Gather);
                    // The batches' own colors: every batch a run of its own (45 cells), not the
                    // mesh's five blocks.
                    assert_eq!(h.colors().iter().map(Vec::len).sum::<usize>(), if form == SumForm::BatchColors { 6 } else if form == SumForm::Gather { 0 } else { 5 });
                    h.store(|c, i, out| {
                        for (k, o) in out.iter_mut().enumerate() {
                            let cell = 1.0 + 0.1 * c as f64 + 0.01 * k as f64 + if k == 0 || k == 3 || k == 5 { 2.0 } else { 0.0 };
                            *o = w[i] * if per_cell { cell } else { cell + 0.05 * (i as f64).sin() };
                        }
                        Ok(())
                    })
                    .unwrap();
                    let mut y = vec![f64::NAN; ndofs];
                    h.apply(&x, &mut y, Some(&mask)).unwrap();
                    // Twice without the mask: the second apply must not add to the first's results.
                    let mut y2 = vec![f64::NAN; ndofs];
                    h.apply(&x, &mut y2, None).unwrap();
                    h.apply(&x, &mut y2, None).unwrap();
                    assert!(y2[nodes_used..].iter().all(|&v| v == 0.0), "{form:?}: a node in no cell is not 0");
                    assert!((nodes_used..ndofs).all(|i| y[i] == if mask[i] == 0.0 { x[i] } else { 0.0 }), "{form:?}: masked nodes in no cell");
                    y.extend(y2);
                    products.push(y);
                }
                let scale = products[0].iter().fold(0.0f64, |a, v| a.max(v.abs()));
                for (form, other) in ["gather", "batch colors"].iter().zip(&products[1..]) {
                    let diff = products[0].iter().zip(other).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
                    assert!(scale > 0.5 && diff < 1e-13 * scale, "p={p} q={q} per_cell={per_cell}: {form} differs from the mesh-colored scatter by {diff:e} (scale {scale:e})");
                }
            }
        }
    }

    /// The apply on the nodes (Kronecker products of the 1D matrices M, K, E, F) equals the apply
    /// through the quadrature points to round-off, diffusion and mass with D once per cell, masked
    /// and not, for (P, Q) = (2, 3) and (3, 4) with tables of the mirror symmetry but otherwise
    /// arbitrary and tensor-product weights; it is the path taken, and not where D varies per
    /// point, the rule is collocated or the weights are no tensor product.
    #[test]
    fn kronecker_equals_the_apply_through_the_points() {
        for (p, q, diffusion) in [(2, 3, true), (3, 4, true), (3, 4, false), (2, 3, false)] {
            let (pd, ncells, ndofs) = (p * p * p, 21, 300);
            let idx: Vec<usize> = (0..ncells * pd).map(|i| (i * 37 + i / pd * 11) % ndofs).collect();
            let coloring = Coloring { blocks: vec![vec![0..13], vec![13..21]] };
            let (b, d) = (mirror_table(q, p, 1.0, 0.3), mirror_table(q, q, -1.0, 1.1));
            let w1: Vec<f64> = (0..q).map(|i| 0.5 + 0.1 * (i.min(q - 1 - i)) as f64).collect();
            let w: Vec<f64> = (0..q * q * q).map(|i| w1[i % q] * w1[i / q % q] * w1[i / (q * q)]).collect();
            let x: Vec<f64> = (0..ndofs).map(|i| (i as f64 * 0.37).cos()).collect();
            let mask: Vec<f64> = (0..ndofs).map(|i| if i % 9 == 0 { 0.0 } else { 1.0 }).collect();
            let ns = if diffusion { 6 } else { 1 };
            let point = |c: usize, i: usize, out: &mut [f64]| {
                for (k, o) in out.iter_mut().enumerate() {
                    // A symmetric positive D per cell (diagonal entries dominant), times the weight.
                    *o = w[i] * (0.2 + 0.1 * c as f64 + 0.03 * k as f64 + if ns == 1 || k == 0 || k == 3 || k == 5 { 2.0 } else { 0.0 });
                }
                Ok(())
            };
            let mut products = Vec::new();
            for allowed in [false, true] {
                let mut h = HexBatch::new(p, q, diffusion, false, [&b, &d, &w], &coloring, &idx, SumForm::MeshColors).expect("batched kernel");
                h.allow_kronecker(allowed);
                h.store(point).unwrap();
                assert!(h.d_per_cell());
                assert_eq!(h.kronecker(), allowed, "p={p} q={q}: the apply on the nodes taken: {}", h.kronecker());
                let mut y = vec![0.0; ndofs];
                h.apply(&x, &mut y, Some(&mask)).unwrap();
                let mut y2 = vec![0.0; ndofs];
                h.apply(&x, &mut y2, None).unwrap();
                y.extend(y2);
                products.push(y);
            }
            let scale = products[0].iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let diff = products[0].iter().zip(&products[1]).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
            assert!(scale > 0.5 && diff < 1e-13 * scale, "p={p} q={q} diffusion={diffusion}: the apply on the nodes differs by {diff:e} (scale {scale:e})");
            // Not taken: D per point, collocated, weights that are no tensor product.
            let mut h = HexBatch::new(p, q, diffusion, false, [&b, &d, &w], &coloring, &idx, SumForm::MeshColors).expect("batched kernel");
            h.store(|c, i, out| {
                point(c, i, out)?;
                out[0] += 0.01 * (i as f64).sin();
                Ok(())
            })
            .unwrap();
            assert!(!h.kronecker(), "p={p} q={q}: taken with D per point");
            let mut w_bad = w.clone();
            w_bad[1] *= 1.5;
            let mut h = HexBatch::new(p, q, diffusion, false, [&b, &d, &w_bad], &coloring, &idx, SumForm::MeshColors).expect("batched kernel");
            h.store(|c, i, out| {
                for (k, o) in out.iter_mut().enumerate() {
                    *o = w_bad[i] * (1.0 + 0.1 * c as f64 + if k == 0 || k == 3 || k == 5 { 2.0 } else { 0.0 });
                }
                Ok(())
            })
            .unwrap();
            assert!(h.d_per_cell() && !h.kronecker(), "p={p} q={q}: taken with weights that are no tensor product");
        }
        let (b, d) = (mirror_table(3, 3, 1.0, 0.3), mirror_table(3, 3, -1.0, 1.1));
        let w = vec![1.0; 27];
        let idx: Vec<usize> = (0..8 * 27).map(|i| i % 50).collect();
        let mut h = HexBatch::new(3, 3, true, true, [&b, &d, &w], &Coloring { blocks: vec![vec![0..1], vec![1..2], vec![2..3], vec![3..4], vec![4..5], vec![5..6], vec![6..7], vec![7..8]] }, &idx, SumForm::MeshColors).expect("batched kernel");
        h.store(|_, i, out| {
            out.fill(0.0);
            out[0] = w[i];
            Ok(())
        })
        .unwrap();
        assert!(h.d_per_cell() && !h.kronecker(), "taken on a collocated rule");
    }

    /// The batches' own colors on a 24×24×3 grid of Q1 cells (1 728 cells, 216 batches, lexicographic
    /// as the box meshes): runs of one color share no node, every batch is in exactly one run,
    /// and the colors are few with many runs each (what balances the threads).
    #[test]
    fn batch_colors_share_no_node_within_a_color() {
        let (nx, ny, nz) = (24, 24, 3);
        let node = |i: usize, j: usize, k: usize| (k * (ny + 1) + j) * (nx + 1) + i;
        let idx: Vec<usize> = (0..nx * ny * nz)
            .flat_map(|c| {
                let (i, j, k) = (c % nx, c / nx % ny, c / (nx * ny));
                (0..8).map(move |v| node(i + (v & 1), j + (v >> 1 & 1), k + (v >> 2)))
            })
            .collect();
        let (b, d, w) = (mirror_table(2, 2, 1.0, 0.3), mirror_table(2, 2, -1.0, 1.1), vec![1.0; 8]);
        let h = HexBatch::new(2, 2, true, true, [&b, &d, &w], &Coloring { blocks: Vec::new() }, &idx, SumForm::BatchColors).expect("batched kernel");
        let colors = h.colors();
        let mut seen = vec![0usize; 216];
        for (c, runs) in colors.iter().enumerate() {
            let mut owner = vec![usize::MAX; node(nx, ny, nz) + 1];
            for (r, run) in runs.iter().enumerate() {
                for bid in run.clone() {
                    seen[bid] += 1;
                    let (first, n) = h.batch_cells(bid);
                    for &v in &idx[first * 8..(first + n) * 8] {
                        assert!(owner[v] == usize::MAX || owner[v] == r, "color {c}: runs {} and {r} share node {v}", owner[v]);
                        owner[v] = r;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "a batch is in no run or in several");
        assert!(colors.len() <= 12, "{} colors", colors.len());
        let most = colors.iter().map(Vec::len).max().unwrap_or(0);
        assert!(most >= 24, "the largest color has {most} runs");
    }
}
