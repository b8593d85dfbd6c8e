//! Block cyclic reduction on the CPU (rayon): the same algorithm, level by level, as the GPU's
//! (`kernels/dg.cu`), so it is also the host reference of the device code.
//!
//! Level l has n_l block rows; its odd rows are eliminated and its even rows form level l + 1
//! (row m of level l + 1 is row 2m of level l, i.e. row m·2^{l+1} of the matrix):
//! 1. odd rows, in place: D_i ← D_i⁻¹, L_i ← D_i⁻¹ L_i, U_i ← D_i⁻¹ U_i;
//! 2. even rows i = 2m, into level l + 1: L′ = −L_i (D⁻¹L)_{i−1}, U′ = −U_i (D⁻¹U)_{i+1},
//!    D′ = D_i − L_i (D⁻¹U)_{i−1} − U_i (D⁻¹L)_{i+1}.
//! Until one row is left, whose D is inverted. ⌈log₂ N⌉ levels, each fully parallel; about twice
//! Thomas's flops. Solve: per level g_odd = D⁻¹ f_odd and f′_m = f_{2m} − L g_{2m−1} − U g_{2m+1};
//! back down, x_{2m} = x′_m and x_{2m+1} = g − (D⁻¹L) x_{2m} − (D⁻¹U) x_{2m+2}.
use super::block_tridiag::BlockTridiag;
use super::dense::{self, with_block_size, Blk};
use crate::backend::Cpu;
use crate::solver::factorization::{check_rhs_len, Factorization};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Mutex;

/// Level matrices: level 0 is the factored matrix itself (in place), then ⌈n/2⌉, ⌈n/4⌉, … rows.
pub struct CyclicReduction {
    levels: Vec<BlockTridiag>,
    /// Right-hand side and solution of every level ≥ 1, reused between solves.
    work: Mutex<Vec<(Vec<f64>, Vec<f64>)>>,
}

/// Rows of the next level.
pub fn next_rows(n: usize) -> usize {
    n.div_ceil(2)
}

/// Names the matrix row behind row `i` of level `level` in an error.
fn element_name(level: usize, i: usize) -> String {
    format!("element {} (cyclic-reduction level {level}, row {i})", i << level)
}

impl CyclicReduction {
    pub fn factor(m: &BlockTridiag) -> Result<CyclicReduction> {
        CyclicReduction::factor_owned(m.clone())
    }

    /// Factors `m` in place (level 0) plus about N more block rows for the levels above.
    pub fn factor_owned(m: BlockTridiag) -> Result<CyclicReduction> {
        let mut levels = vec![m];
        with_block_size!(levels[0].b, B => {
            loop {
                let l = levels.len() - 1;
                let cur = &mut levels[l];
                eliminate_odd::<B>(cur, l, cur.n == 1)?;
                if cur.n == 1 {
                    break;
                }
                let next = reduce_even::<B>(cur)?;
                levels.push(next);
            }
            Ok(())
        })?;
        Ok(CyclicReduction { levels, work: Mutex::new(Vec::new()) })
    }

    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    fn solve_column<const B: usize>(&self, f0: &[f64], x0: &mut [f64], work: &mut [(Vec<f64>, Vec<f64>)]) {
        let top = self.levels.len() - 1;
        // Forward: f_{l+1} from f_l, g_odd into x_l.
        for l in 0..top {
            let (lo, hi) = work.split_at_mut(l);
            let (f, x): (&[f64], &mut [f64]) = if l == 0 { (f0, &mut *x0) } else { (&lo[l - 1].0, &mut lo[l - 1].1) };
            forward::<B>(&self.levels[l], f, x, &mut hi[0].0);
        }
        // Top: x = D⁻¹ f.
        {
            let (f, x): (&[f64], &mut [f64]) = if top == 0 { (f0, &mut *x0) } else { (&work[top - 1].0, &mut work[top - 1].1) };
            let g = dense::matvec::<B>(&dense::load(&self.levels[top].diag), f);
            x[..B].copy_from_slice(&g);
        }
        // Back: x_l from x_{l+1}.
        for l in (0..top).rev() {
            let (lo, hi) = work.split_at_mut(l);
            let x: &mut [f64] = if l == 0 { &mut *x0 } else { &mut lo[l - 1].1 };
            back::<B>(&self.levels[l], &hi[0].1, x);
        }
    }
}

/// Step 1 on the odd rows (or on row 0 of the last level, `last`).
fn eliminate_odd<const B: usize>(m: &mut BlockTridiag, level: usize, last: bool) -> Result<()> {
    let bb = B * B;
    let (start, step) = if last { (0, 1) } else { (1, 2) };
    let BlockTridiag { lower, diag, upper, .. } = m;
    lower
        .par_chunks_mut(step * bb)
        .zip(diag.par_chunks_mut(step * bb))
        .zip(upper.par_chunks_mut(step * bb))
        .enumerate()
        .try_for_each(|(t, ((l, d), u))| {
            if l.len() < (start + 1) * bb {
                return Ok(()); // an even last row without odd partner
            }
            let (l, d, u) = (&mut l[start * bb..], &mut d[start * bb..], &mut u[start * bb..]);
            let inv = dense::invert::<B>(&dense::load(d))
                .map_err(|e| e.error("cyclic reduction", &element_name(level, t * step + start)))?;
            dense::store(&inv, d);
            dense::store(&dense::mul(&inv, &dense::load(l)), l);
            dense::store(&dense::mul(&inv, &dense::load(u)), u);
            Ok::<(), Error>(())
        })
}

/// Step 2: the even rows reduced into a new level.
fn reduce_even<const B: usize>(m: &BlockTridiag) -> Result<BlockTridiag> {
    let bb = B * B;
    let n = m.n;
    let mut next = BlockTridiag::zeros(next_rows(n), B)?;
    let blk = |a: &[f64], i: usize| -> Blk<B> { dense::load(&a[i * bb..]) };
    let BlockTridiag { lower, diag, upper, .. } = &mut next;
    lower
        .par_chunks_mut(bb)
        .zip(diag.par_chunks_mut(bb))
        .zip(upper.par_chunks_mut(bb))
        .enumerate()
        .for_each(|(mi, ((nl, nd), nu))| {
            let i = 2 * mi;
            let (li, ui) = (blk(&m.lower, i), blk(&m.upper, i));
            let mut d = blk(&m.diag, i);
            if i >= 1 {
                dense::sub_mul(&mut d, &li, &blk(&m.upper, i - 1));
                dense::store(&dense::neg(dense::mul(&li, &blk(&m.lower, i - 1))), nl);
            }
            if i + 1 < n {
                dense::sub_mul(&mut d, &ui, &blk(&m.lower, i + 1));
                dense::store(&dense::neg(dense::mul(&ui, &blk(&m.upper, i + 1))), nu);
            }
            dense::store(&d, nd);
        });
    Ok(next)
}

/// g_odd = D⁻¹ f_odd (into x's odd rows) and the next level's right-hand side.
fn forward<const B: usize>(m: &BlockTridiag, f: &[f64], x: &mut [f64], f_next: &mut [f64]) {
    let (bb, n) = (B * B, m.n);
    let g = |i: usize| dense::matvec::<B>(&dense::load(&m.diag[i * bb..]), &f[i * B..]);
    f_next.par_chunks_mut(B).zip(x.par_chunks_mut(2 * B)).enumerate().for_each(|(mi, (fo, xc))| {
        let i = 2 * mi;
        let mut r: [f64; B] = std::array::from_fn(|c| f[i * B + c]);
        if i >= 1 {
            dense::sub_matvec(&mut r, &dense::load(&m.lower[i * bb..]), &g(i - 1));
        }
        if i + 1 < n {
            let gi = g(i + 1);
            dense::sub_matvec(&mut r, &dense::load(&m.upper[i * bb..]), &gi);
            xc[B..2 * B].copy_from_slice(&gi);
        }
        fo.copy_from_slice(&r);
    });
}

/// x_{2m} = x′_m, x_{2m+1} = g − (D⁻¹L) x_{2m} − (D⁻¹U) x_{2m+2}.
fn back<const B: usize>(m: &BlockTridiag, x_next: &[f64], x: &mut [f64]) {
    let (bb, n) = (B * B, m.n);
    x.par_chunks_mut(2 * B).enumerate().for_each(|(mi, xc)| {
        let i = 2 * mi;
        xc[..B].copy_from_slice(&x_next[mi * B..(mi + 1) * B]);
        if i + 1 < n {
            let mut t: [f64; B] = std::array::from_fn(|c| xc[B + c]);
            dense::sub_matvec(&mut t, &dense::load(&m.lower[(i + 1) * bb..]), &x_next[mi * B..]);
            if i + 2 < n {
                dense::sub_matvec(&mut t, &dense::load(&m.upper[(i + 1) * bb..]), &x_next[(mi + 1) * B..]);
            }
            xc[B..].copy_from_slice(&t);
        }
    });
}

impl Factorization<Cpu> for CyclicReduction {
    fn n(&self) -> usize {
        self.levels[0].size()
    }
    fn name(&self) -> String {
        "cyclic-reduction".into()
    }
    fn solve_many(&self, backend: &Cpu, nrhs: usize, b: &Vec<f64>, x: &mut Vec<f64>) -> Result<()> {
        let n = self.n();
        check_rhs_len(backend, "cyclic reduction solve", n, nrhs, b, x)?;
        if n == 0 {
            return Ok(());
        }
        let mut work = self.work.lock().unwrap_or_else(|p| p.into_inner());
        if work.len() + 1 != self.levels.len() {
            *work = self.levels[1..].iter().map(|l| (vec![0.0; l.size()], vec![0.0; l.size()])).collect();
        }
        with_block_size!(self.levels[0].b, B => {
            for (bc, xc) in b.chunks(n).zip(x.chunks_mut(n)) {
                self.solve_column::<B>(bc, xc, &mut work);
            }
            Ok(())
        })
    }
}
