//! Packed upper-triangle storage of symmetric element matrices: row r keeps entries s ≥ r, rows one
//! after another, `nd·(nd + 1)/2` doubles per cell instead of `nd²`. Scheme III writes its matrices
//! this way on the GPU (half the bytes of its write phase, issue 16); the summation, the `element`
//! level on both backends and the hybrid runs read it. This module is the layout and its CPU twin:
//! packing, unpacking (the full form, where a caller asks for it) and the packed product.
use crate::{Error, Result};
use serde::Serialize;

/// How stored element matrices are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Storage {
    /// `nd × nd`, row-major.
    #[default]
    Full,
    /// The upper triangle (s ≥ r) packed row by row; the matrix must be symmetric.
    Packed,
}

impl Storage {
    /// Doubles per cell for elements of `nd` dofs.
    pub fn doubles(self, nd: usize) -> usize {
        match self {
            Storage::Full => nd * nd,
            Storage::Packed => nd * (nd + 1) / 2,
        }
    }

    /// Offset of entry (r, s) in a cell's stored matrix; the packed case's device twin is
    /// `packed_index(nd, r, s)` in `kernels/common.cuh` (used by `element_schemes.cu` and
    /// `assembly.cu`).
    pub fn index(self, nd: usize, r: usize, s: usize) -> usize {
        match self {
            Storage::Full => r * nd + s,
            Storage::Packed => {
                let (lo, hi) = if r <= s { (r, s) } else { (s, r) };
                lo * nd - lo * lo.saturating_sub(1) / 2 + (hi - lo)
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Storage::Full => "full",
            Storage::Packed => "packed",
        }
    }
}

fn check_len(what: &str, nd: usize, per_cell: usize, len: usize) -> Result<usize> {
    if per_cell == 0 || len % per_cell != 0 {
        return Err(Error::invalid(format!("{what}: {len} doubles are not whole cells of {per_cell} ({nd} dofs per cell)")));
    }
    Ok(len / per_cell)
}

/// The upper triangles of full matrices `full` (cells of `nd²`), packed.
pub fn pack(nd: usize, full: &[f64]) -> Result<Vec<f64>> {
    let nc = check_len("packing element matrices", nd, nd * nd, full.len())?;
    let np = Storage::Packed.doubles(nd);
    let mut out = vec![0.0; nc * np];
    for (k, p) in full.chunks_exact(nd * nd).zip(out.chunks_exact_mut(np)) {
        pack_cell(nd, k, p);
    }
    Ok(out)
}

/// One cell's full matrix `k` (`nd²`) into its packed upper triangle `out` (`nd·(nd + 1)/2`).
pub fn pack_cell(nd: usize, k: &[f64], out: &mut [f64]) {
    let mut o = 0;
    for r in 0..nd {
        out[o..o + nd - r].copy_from_slice(&k[r * nd + r..(r + 1) * nd]);
        o += nd - r;
    }
}

/// The full symmetric matrices of packed upper triangles `packed`.
pub fn unpack(nd: usize, packed: &[f64]) -> Result<Vec<f64>> {
    let np = Storage::Packed.doubles(nd);
    let nc = check_len("unpacking element matrices", nd, np, packed.len())?;
    let mut out = vec![0.0; nc * nd * nd];
    for (k, p) in out.chunks_exact_mut(nd * nd).zip(packed.chunks_exact(np)) {
        for r in 0..nd {
            for s in 0..nd {
                k[r * nd + s] = p[Storage::Packed.index(nd, r, s)];
            }
        }
    }
    Ok(out)
}

/// `y = K x` for one cell's stored matrix `k` of layout `storage` (the packed rows used once for
/// their row and once, transposed, for their column).
pub fn apply_cell(storage: Storage, nd: usize, k: &[f64], x: &[f64], y: &mut [f64]) {
    match storage {
        Storage::Full => {
            for (r, yr) in y.iter_mut().enumerate().take(nd) {
                *yr = k[r * nd..(r + 1) * nd].iter().zip(x).map(|(a, b)| a * b).sum();
            }
        }
        Storage::Packed => {
            y[..nd].fill(0.0);
            let mut o = 0;
            for r in 0..nd {
                let row = &k[o..o + nd - r];
                let mut acc = row[0] * x[r];
                for (t, &v) in row.iter().enumerate().skip(1) {
                    acc += v * x[r + t];
                    y[r + t] += v * x[r];
                }
                y[r] += acc;
                o += nd - r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packing then unpacking a symmetric matrix gives it back; offsets follow the rows; the packed
    /// product equals the full one.
    #[test]
    fn packed_round_trip_and_product() {
        let nd = 7;
        let mut full = vec![0.0; 2 * nd * nd];
        for c in 0..2 {
            for r in 0..nd {
                for s in 0..nd {
                    full[c * nd * nd + r * nd + s] = (1 + c) as f64 * ((r * s + r + s) as f64).sin() + if r == s { 3.0 } else { 0.0 };
                }
            }
        }
        let p = pack(nd, &full).unwrap();
        assert_eq!(p.len(), 2 * 28);
        assert_eq!(Storage::Packed.index(nd, 1, 1), 7);
        assert_eq!(Storage::Packed.index(nd, 6, 6), 27);
        assert_eq!(Storage::Packed.index(nd, 3, 1), Storage::Packed.index(nd, 1, 3));
        assert_eq!(unpack(nd, &p).unwrap(), full);
        let x: Vec<f64> = (0..nd).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let (mut yf, mut yp) = (vec![0.0; nd], vec![0.0; nd]);
        apply_cell(Storage::Full, nd, &full[nd * nd..], &x, &mut yf);
        apply_cell(Storage::Packed, nd, &p[28..], &x, &mut yp);
        for (a, b) in yf.iter().zip(&yp) {
            assert!((a - b).abs() < 1e-14 * a.abs().max(1.0), "{a} {b}");
        }
        assert!(pack(nd, &full[1..]).is_err());
    }
}
