//! CPU backend: `Vec<f64>` vectors, rayon-parallel vector operations.
//!
//! Vectors shorter than [`PAR_MIN_LEN`] run as plain loops: below that size thread start-up costs
//! more than the arithmetic. Reductions always split vectors into fixed [`CHUNK`]-sized pieces
//! (independent of the thread count) and add the partial sums in order, so a dot product is
//! bit-for-bit reproducible from run to run and across thread counts.
use super::{Backend, LinearOperator};
use crate::linalg::{dense, CsrMatrix};
use crate::{Error, Result};
use rayon::prelude::*;

/// Length from which vector operations run on rayon threads.
pub const PAR_MIN_LEN: usize = 16 * 1024;
/// Work unit of a parallel operation and of a reduction's partial sums.
pub const CHUNK: usize = 8 * 1024;

/// The CPU backend (rayon threads). Stateless; construct with `Cpu`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu;

fn same_len(op: &str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::dim(format!("cpu {op}"), expected, got))
    }
}

/// Serial dot product with four accumulators (breaks the add dependency chain, so it vectorizes and
/// loses less accuracy than one running sum).
fn dot_serial(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (xc, xr) = x.split_at(x.len() - x.len() % 4);
    let (yc, yr) = y.split_at(xc.len());
    for (a, b) in xc.chunks_exact(4).zip(yc.chunks_exact(4)) {
        for k in 0..4 {
            acc[k] += a[k] * b[k];
        }
    }
    let tail: f64 = xr.iter().zip(yr).map(|(a, b)| a * b).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Applies `f` elementwise to `y` (mutable) and `x`, in parallel chunks for long vectors.
fn zip_mut(y: &mut [f64], x: &[f64], f: impl Fn(&mut f64, f64) + Sync) {
    if y.len() < PAR_MIN_LEN {
        y.iter_mut().zip(x).for_each(|(yi, &xi)| f(yi, xi));
    } else {
        y.par_chunks_mut(CHUNK)
            .zip(x.par_chunks(CHUNK))
            .for_each(|(yc, xc)| yc.iter_mut().zip(xc).for_each(|(yi, &xi)| f(yi, xi)));
    }
}

/// Sums `f` over aligned `CHUNK`-sized pieces, in chunk order (deterministic).
fn chunked_sum(n: usize, f: impl Fn(std::ops::Range<usize>) -> f64 + Sync) -> f64 {
    let nchunks = n.div_ceil(CHUNK);
    let range = |c: usize| c * CHUNK..((c + 1) * CHUNK).min(n);
    if n < PAR_MIN_LEN {
        (0..nchunks).map(|c| f(range(c))).sum()
    } else {
        let partial: Vec<f64> = (0..nchunks).into_par_iter().map(|c| f(range(c))).collect();
        partial.iter().sum()
    }
}

impl LinearOperator<Cpu> for CsrMatrix {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn apply(&self, _b: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        if x.len() != self.ncols {
            return Err(Error::dim("CSR apply (input)", self.ncols, x.len()));
        }
        if y.len() != self.nrows {
            return Err(Error::dim("CSR apply (output)", self.nrows, y.len()));
        }
        self.spmv(x, y);
        Ok(())
    }
}

/// Checks that `len` holds whole `b × b` blocks.
fn check_blocks(b: usize, len: usize) -> Result<()> {
    if b == 0 || len % (b * b) != 0 {
        return Err(Error::invalid(format!("{len} block entries are not whole {b}×{b} blocks")));
    }
    Ok(())
}

impl Backend for Cpu {
    type Vector = Vec<f64>;
    type Matrix = CsrMatrix;

    fn upload_matrix(&self, a: &CsrMatrix) -> Result<CsrMatrix> {
        Ok(a.clone())
    }
    fn matrix_to_host(&self, a: &CsrMatrix) -> Result<CsrMatrix> {
        Ok(a.clone())
    }
    fn matrix_nnz(&self, a: &CsrMatrix) -> usize {
        a.nnz()
    }
    fn matrix_diagonal(&self, a: &CsrMatrix) -> Result<Vec<f64>> {
        Ok(a.diagonal())
    }
    fn matrix_node_blocks(&self, a: &CsrMatrix, b: usize) -> Result<Vec<f64>> {
        check_blocks(b, a.nrows * b)?;
        Ok(a.node_blocks(b))
    }
    fn eliminate(&self, a: &mut CsrMatrix, rhs: &mut Vec<f64>, free_mask: &Vec<f64>, lift: &Vec<f64>) -> Result<()> {
        a.eliminate(rhs, free_mask, lift)
    }
    fn invert_blocks(&self, b: usize, blocks: &mut Vec<f64>) -> Result<Option<usize>> {
        check_blocks(b, blocks.len())?;
        Ok(blocks
            .par_chunks_mut(b * b)
            .enumerate()
            .filter_map(|(k, blk)| (dense::invert_in_place(blk, b).is_none() || blk.iter().any(|v| !v.is_finite())).then_some(k))
            .min())
    }
    fn apply_blocks(&self, b: usize, blocks: &Vec<f64>, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        check_blocks(b, blocks.len())?;
        let n = blocks.len() / b;
        same_len("apply_blocks x", n, x.len())?;
        same_len("apply_blocks y", n, y.len())?;
        y.par_chunks_mut(b)
            .zip(x.par_chunks(b))
            .zip(blocks.par_chunks(b * b))
            .with_min_len(2048)
            .for_each(|((yc, xc), m)| dense::matvec(m, b, xc, yc));
        Ok(())
    }
    fn blocks_diagonal(&self, b: usize, blocks: &Vec<f64>) -> Result<Vec<f64>> {
        check_blocks(b, blocks.len())?;
        Ok((0..blocks.len() / b).map(|r| blocks[(r / b) * b * b + (r % b) * (b + 1)]).collect())
    }
    fn name(&self) -> &str {
        "cpu"
    }
    fn zeros(&self, n: usize) -> Result<Vec<f64>> {
        Ok(vec![0.0; n])
    }
    fn from_host(&self, x: &[f64]) -> Result<Vec<f64>> {
        Ok(x.to_vec())
    }
    fn to_host(&self, x: &Vec<f64>) -> Result<Vec<f64>> {
        Ok(x.clone())
    }
    fn len(&self, x: &Vec<f64>) -> usize {
        x.len()
    }
    fn copy(&self, src: &Vec<f64>, dst: &mut Vec<f64>) -> Result<()> {
        same_len("copy", dst.len(), src.len())?;
        zip_mut(dst, src, |d, s| *d = s);
        Ok(())
    }
    fn fill(&self, x: &mut Vec<f64>, value: f64) -> Result<()> {
        if x.len() < PAR_MIN_LEN {
            x.fill(value);
        } else {
            x.par_chunks_mut(CHUNK).for_each(|c| c.fill(value));
        }
        Ok(())
    }
    fn dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64> {
        same_len("dot", x.len(), y.len())?;
        Ok(chunked_sum(x.len(), |r| dot_serial(&x[r.clone()], &y[r])))
    }
    fn axpy(&self, a: f64, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        same_len("axpy", y.len(), x.len())?;
        zip_mut(y, x, |yi, xi| *yi += a * xi);
        Ok(())
    }
    fn axpby(&self, a: f64, x: &Vec<f64>, b: f64, y: &mut Vec<f64>) -> Result<()> {
        same_len("axpby", y.len(), x.len())?;
        zip_mut(y, x, |yi, xi| *yi = a * xi + b * *yi);
        Ok(())
    }
    fn scale(&self, a: f64, x: &mut Vec<f64>) -> Result<()> {
        if x.len() < PAR_MIN_LEN {
            x.iter_mut().for_each(|v| *v *= a);
        } else {
            x.par_chunks_mut(CHUNK)
                .for_each(|c| c.iter_mut().for_each(|v| *v *= a));
        }
        Ok(())
    }
    fn pointwise_mult(&self, d: &Vec<f64>, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        same_len("pointwise_mult", y.len(), x.len())?;
        same_len("pointwise_mult", y.len(), d.len())?;
        let kernel = |yc: &mut [f64], dc: &[f64], xc: &[f64]| {
            yc.iter_mut()
                .zip(dc.iter().zip(xc))
                .for_each(|(yi, (di, xi))| *yi = di * xi)
        };
        if y.len() < PAR_MIN_LEN {
            kernel(y, d, x);
        } else {
            y.par_chunks_mut(CHUNK)
                .zip(d.par_chunks(CHUNK).zip(x.par_chunks(CHUNK)))
                .for_each(|(yc, (dc, xc))| kernel(yc, dc, xc));
        }
        Ok(())
    }
    /// One pass over the four vectors instead of three; the chunked partial sums of `r·r` keep the
    /// result identical to `dot(r, r)` after the unfused updates.
    fn cg_update(
        &self,
        alpha: f64,
        p: &Vec<f64>,
        q: &Vec<f64>,
        x: &mut Vec<f64>,
        r: &mut Vec<f64>,
    ) -> Result<f64> {
        let n = x.len();
        same_len("cg_update (p)", n, p.len())?;
        same_len("cg_update (q)", n, q.len())?;
        same_len("cg_update (r)", n, r.len())?;
        let kernel = |xc: &mut [f64], rc: &mut [f64], pc: &[f64], qc: &[f64]| {
            for ((xi, ri), (pi, qi)) in xc.iter_mut().zip(rc.iter_mut()).zip(pc.iter().zip(qc)) {
                *xi += alpha * pi;
                *ri -= alpha * qi;
            }
            dot_serial(rc, rc)
        };
        let chunks = x
            .chunks_mut(CHUNK)
            .zip(r.chunks_mut(CHUNK))
            .zip(p.chunks(CHUNK).zip(q.chunks(CHUNK)));
        if n < PAR_MIN_LEN {
            Ok(chunks
                .map(|((xc, rc), (pc, qc))| kernel(xc, rc, pc, qc))
                .sum())
        } else {
            let partial: Vec<f64> = x
                .par_chunks_mut(CHUNK)
                .zip(r.par_chunks_mut(CHUNK))
                .zip(p.par_chunks(CHUNK).zip(q.par_chunks(CHUNK)))
                .map(|((xc, rc), (pc, qc))| kernel(xc, rc, pc, qc))
                .collect();
            Ok(partial.iter().sum())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random values in [-1, 1) (no RNG dependency).
    fn pseudo(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    fn kahan_dot(x: &[f64], y: &[f64]) -> f64 {
        let (mut sum, mut c) = (0.0f64, 0.0f64);
        for (a, b) in x.iter().zip(y) {
            let t = a * b - c;
            let s = sum + t;
            c = (s - sum) - t;
            sum = s;
        }
        sum
    }

    #[test]
    fn parallel_dot_matches_kahan_and_is_deterministic() {
        for &n in &[7usize, 1000, PAR_MIN_LEN + 3, 200_000] {
            let x = pseudo(n, 1);
            let y = pseudo(n, 2);
            let d = Cpu.dot(&x, &y).unwrap();
            let k = kahan_dot(&x, &y);
            let scale = x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum::<f64>();
            assert!((d - k).abs() <= 1e-12 * scale, "n={n}: {d} vs {k}");
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            let d3 = pool.install(|| Cpu.dot(&x, &y).unwrap());
            assert_eq!(
                d.to_bits(),
                d3.to_bits(),
                "dot must not depend on the thread count"
            );
        }
    }

    #[test]
    fn fused_cg_update_equals_unfused_sequence() {
        for &n in &[5usize, 100_003] {
            let p = pseudo(n, 3);
            let q = pseudo(n, 4);
            let (mut x1, mut r1) = (pseudo(n, 5), pseudo(n, 6));
            let (mut x2, mut r2) = (x1.clone(), r1.clone());
            let alpha = 0.37;
            let rr = Cpu.cg_update(alpha, &p, &q, &mut x1, &mut r1).unwrap();
            Cpu.axpy(alpha, &p, &mut x2).unwrap();
            Cpu.axpy(-alpha, &q, &mut r2).unwrap();
            let rr2 = Cpu.dot(&r2, &r2).unwrap();
            assert_eq!(x1, x2);
            assert_eq!(r1, r2);
            assert_eq!(rr.to_bits(), rr2.to_bits(), "{rr} vs {rr2}");
        }
    }

    #[test]
    fn vector_ops_compute_the_right_values_and_check_sizes() {
        let n = PAR_MIN_LEN + 17;
        let x = pseudo(n, 7);
        let mut y = pseudo(n, 8);
        let y0 = y.clone();
        Cpu.axpby(2.0, &x, -0.5, &mut y).unwrap();
        assert!(y
            .iter()
            .zip(&x)
            .zip(&y0)
            .all(|((v, a), b)| *v == 2.0 * a - 0.5 * b));
        let mut z = vec![0.0; n];
        Cpu.pointwise_mult(&x, &y0, &mut z).unwrap();
        assert!(z.iter().zip(&x).zip(&y0).all(|((v, a), b)| *v == a * b));
        Cpu.scale(3.0, &mut z).unwrap();
        assert_eq!(z[5], 3.0 * x[5] * y0[5]);
        Cpu.fill(&mut z, 1.5).unwrap();
        assert!((Cpu.norm2(&z).unwrap() - 1.5 * (n as f64).sqrt()).abs() < 1e-9);
        assert!(matches!(
            Cpu.dot(&x, &vec![0.0; 3]),
            Err(Error::Dimension { .. })
        ));
        assert!(matches!(
            Cpu.axpy(1.0, &x, &mut vec![0.0; 3]),
            Err(Error::Dimension { .. })
        ));
    }

    #[test]
    fn csr_apply_and_node_block_operations_check_sizes() {
        let a = CsrMatrix::from_triplets(4, 4, &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 3.0), (2, 2, 4.0), (3, 3, 5.0), (3, 2, -1.0)]).unwrap();
        let mut bad = vec![0.0; 3];
        assert!(matches!(a.apply(&Cpu, &vec![1.0; 4], &mut bad), Err(Error::Dimension { .. })));
        // 2×2 node blocks, inverted and applied: M⁻¹ (M x) = x.
        let mut blocks = Cpu.matrix_node_blocks(&a, 2).unwrap();
        assert_eq!(blocks, vec![2.0, 1.0, 1.0, 3.0, 4.0, 0.0, -1.0, 5.0]);
        assert_eq!(Cpu.blocks_diagonal(2, &blocks).unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
        let x = vec![1.0, -2.0, 0.5, 3.0];
        let mut ax = vec![0.0; 4];
        a.apply(&Cpu, &x, &mut ax).unwrap();
        assert_eq!(Cpu.invert_blocks(2, &mut blocks).unwrap(), None);
        let mut back = vec![0.0; 4];
        Cpu.apply_blocks(2, &blocks, &ax, &mut back).unwrap();
        assert!(back.iter().zip(&x).all(|(p, q)| (p - q).abs() < 1e-14), "{back:?}");
        let mut singular = vec![1.0, 2.0, 2.0, 4.0, 1.0, 0.0, 0.0, 1.0];
        assert_eq!(Cpu.invert_blocks(2, &mut singular).unwrap(), Some(0));
    }
}
