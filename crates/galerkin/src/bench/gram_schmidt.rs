//! `galerkin bench --gram-schmidt`: GMRES's many-vector operations on the GPU shape by shape
//! ([`MultiShape`]) — `x · v_j` for k vectors (one wait for the host, as an Arnoldi step takes it)
//! and `y += Σ c_j v_j` — each timed between CUDA events (median of `runs` after two warm-ups) with
//! its bytes against the copy bandwidth measured in the same run, and checked against the CPU.
use crate::backend::cuda::bench::timed;
use crate::backend::cuda::multi::MultiShape;
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, Cpu};
use crate::bench::max_rel_diff;
use crate::bench::timing::{guarded_gbs, Timing};
use crate::{Error, Result};

/// One (size, vectors, shape) row.
#[derive(Clone, Debug)]
pub struct GramSchmidtRow {
    pub n: usize,
    pub k: usize,
    pub shape: MultiShape,
    pub dots: Timing,
    pub add: Timing,
    /// GB/s of the bytes the operation must move at least: (k + 1)·8n for the dots, (k + 2)·8n for
    /// the combination (reading `x` or `y` again per launch is the shape's cost, not counted); `None`
    /// where that figure would exceed the copy rate measured in the run. Mostly-read traffic can
    /// (the combination at 10⁷ unknowns and k ≥ 8 draws 2 960–2 985 GB/s against a copy's 2 923–2 970
    /// on the H100, stop 70), so such a row says "at copy" instead of printing the figure.
    pub dots_gbs: Option<f64>,
    pub add_gbs: Option<f64>,
    /// Largest difference from the CPU's results, relative to their largest entry.
    pub check: f64,
}

/// A deterministic vector in [−1, 1): a Weyl sequence shifted per `seed`.
fn weyl(n: usize, seed: usize) -> Vec<f64> {
    let shift = (seed as f64 * 0.754_877_666_246_692_7).fract();
    (0..n).map(|i| ((i as f64 * 0.618_033_988_749_895 + shift).fract() * 2.0) - 1.0).collect()
}

/// Every shape at every size and vector count, `on_row` called as each row completes.
pub fn run(
    be: &CudaBackend,
    copy_gbs: f64,
    sizes: &[usize],
    ks: &[usize],
    shapes: &[MultiShape],
    runs: usize,
    mut on_row: impl FnMut(&GramSchmidtRow),
) -> Result<Vec<GramSchmidtRow>> {
    let kmax = ks.iter().copied().max().unwrap_or(0);
    if sizes.contains(&0) || ks.contains(&0) || shapes.is_empty() || runs == 0 {
        return Err(Error::invalid("--gram-schmidt needs sizes, vector counts, shapes and runs above zero"));
    }
    let mut rows = Vec::new();
    for &n in sizes {
        let host: Vec<Vec<f64>> = (0..=kmax).map(|j| weyl(n, j)).collect();
        let (x, vs) = (&host[0], &host[1..]);
        let gx = be.from_host(x)?;
        let gvs = vs.iter().map(|v| be.from_host(v)).collect::<Result<Vec<_>>>()?;
        for &k in ks {
            let c: Vec<f64> = (0..k).map(|j| 1e-3 * (j as f64 + 1.0)).collect();
            let want_dots = Cpu.dots(x, &vs[..k])?;
            let mut want_y = x.clone();
            Cpu.add_combination(&c, &vs[..k], &mut want_y)?;
            for &shape in shapes {
                let got = be.dots_shaped(&gx, &gvs[..k], shape)?;
                let mut y = be.from_host(x)?;
                be.add_combination_shaped(&c, &gvs[..k], &mut y, shape)?;
                let check = max_rel_diff(&want_dots, &got).max(max_rel_diff(&want_y, &be.to_host(&y)?));
                if !(check < 1e-10) {
                    return Err(Error::invalid(format!("--gram-schmidt: shape {} at n = {n}, k = {k} differs from the CPU by {check:.1e}", shape.name())));
                }
                let dots = timed(be, runs, || be.dots_shaped(&gx, &gvs[..k], shape).map(drop))?;
                let add = timed(be, runs, || be.add_combination_shaped(&c, &gvs[..k], &mut y, shape))?;
                let bytes = |m: usize| (8 * n * (k + m)) as f64;
                let row = GramSchmidtRow {
                    n,
                    k,
                    shape,
                    dots_gbs: guarded_gbs("many-vector dots", bytes(1), &dots, copy_gbs).ok(),
                    add_gbs: guarded_gbs("many-vector combination", bytes(2), &add, copy_gbs).ok(),
                    dots,
                    add,
                    check,
                };
                on_row(&row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}
