//! Transfer maps of fused subtrees: many right-hand sides as small dense products.
//!
//! A fused subtree's part of a solve is linear in its local rows `w` (see [`super::subtrees`]):
//! forward, its root's contribution rows are `w_S + G·w_E` (`E`: the rows it eliminates, `S`: its
//! root's Schur rows); backward (the forward sweep recomputed from `b`), `x_E = H·w_E + K·x_S`. The
//! maps `G` (`s × ne`) and `[H K]` (`ne × R`) are computed once per factorization, by the fused
//! sweeps themselves on unit columns, and a solve of a pass becomes a gather of `w`, a dense
//! product and a scatter — every thread accumulates independent rows, instead of a chain of
//! dependent updates through the subtree's nodes. The bytes a solve moves are those of the fused
//! sweeps (`b` twice, `x` once) plus the maps, read once per block of columns.
//!
//! Layout, per subtree at `off[pass][j]`: `[H K]ᵀ` (`R` rows of `ldm = ne` rounded up to
//! [`MAP_ROWS`], zero-padded, so that the kernels read each row in 16-byte pieces), then `Gᵀ`
//! (`ne` rows of `s`).
use super::subtrees::{gather_local, sweep_local, Pass, SubtreePlan};
use super::Symbolic;

/// The kernels accumulate the rows of `x` in blocks of this many.
pub const MAP_ROWS: usize = 16;

/// Row length of a subtree's `[H K]ᵀ`: its eliminated rows rounded up to [`MAP_ROWS`].
pub fn ldm(ne: usize) -> usize {
    ne.div_ceil(MAP_ROWS) * MAP_ROWS
}

/// Where every subtree's maps live in one buffer, and what the kernels of each pass need.
#[derive(Clone, Debug, Default)]
pub struct MapLayout {
    /// Offset (in doubles) of subtree `j` of pass `q`: `off[q][j]`.
    pub off: Vec<Vec<u64>>,
    /// Doubles of all maps.
    pub len: u64,
    /// Per pass: largest `[H K]ᵀ` and `Gᵀ` (doubles), largest eliminated block of a subtree.
    pub backward_entries: Vec<usize>,
    pub forward_entries: Vec<usize>,
    pub max_elim: Vec<usize>,
}

impl MapLayout {
    pub fn new(plan: &SubtreePlan) -> MapLayout {
        let mut l = MapLayout::default();
        for p in &plan.passes {
            let (mut off, mut bwd, mut fwd, mut emax) = (Vec::with_capacity(p.len()), 0, 0, 0);
            for j in 0..p.len() {
                let (r, ne) = ((p.row_ptr[j + 1] - p.row_ptr[j]) as usize, p.elim[j] as usize);
                off.push(l.len);
                l.len += (r * ldm(ne) + ne * (r - ne)) as u64;
                bwd = bwd.max(r * ldm(ne));
                fwd = fwd.max(ne * (r - ne));
                emax = emax.max(ne);
            }
            l.off.push(off);
            l.backward_entries.push(bwd);
            l.forward_entries.push(fwd);
            l.max_elim.push(emax);
        }
        l
    }
}

/// Subtree `j`'s maps into `out` (its slice of the buffer) from the sweeps on unit columns: what
/// the kernel `mf_maps_setup_*` computes.
fn subtree_maps<'a>(s: &Symbolic, p: &Pass, j: usize, front: &dyn Fn(usize) -> &'a [f64], perm: &dyn Fn(usize) -> Vec<u32>, out: &mut [f64]) {
    let (r, ne) = ((p.row_ptr[j + 1] - p.row_ptr[j]) as usize, p.elim[j] as usize);
    let (sr, lm) = (r - ne, ldm(ne));
    for c in 0..r {
        let unit = |w: &mut Vec<f64>| {
            w.iter_mut().for_each(|v| *v = 0.0);
            w[c] = 1.0;
        };
        let mut w = vec![0.0; r];
        if c < ne {
            unit(&mut w);
            sweep_local(s, p, j, front, perm, &mut w, false);
            out[r * lm + c * sr..][..sr].copy_from_slice(&w[ne..]);
        }
        unit(&mut w);
        sweep_local(s, p, j, front, perm, &mut w, true);
        out[c * lm..][..ne].copy_from_slice(&w[..ne]);
    }
}

/// Every subtree's maps, in the layout of [`MapLayout`] (a CPU reference of the setup kernel).
pub fn reference_maps<'a>(s: &Symbolic, plan: &SubtreePlan, layout: &MapLayout, front: &dyn Fn(usize) -> &'a [f64], perm: &dyn Fn(usize) -> Vec<u32>) -> Vec<f64> {
    let mut maps = vec![0.0; layout.len as usize];
    for (q, p) in plan.passes.iter().enumerate() {
        for j in 0..p.len() {
            subtree_maps(s, p, j, front, perm, &mut maps[layout.off[q][j] as usize..]);
        }
    }
    maps
}

/// The maps' solve on the CPU for one right-hand side, every active node fused: what the kernels
/// `mf_maps_forward` / `mf_maps_backward_*` compute per column.
pub fn reference_maps_solve(s: &Symbolic, plan: &SubtreePlan, layout: &MapLayout, maps: &[f64], b: &[f64], x: &mut [f64]) {
    let mut buf = vec![0.0; plan.leaf_slots as usize];
    let shape = |p: &Pass, j: usize| ((p.row_ptr[j + 1] - p.row_ptr[j]) as usize, p.elim[j] as usize);
    for (q, p) in plan.passes.iter().enumerate() {
        for j in 0..p.len() {
            let (r, ne) = shape(p, j);
            let w = gather_local(p, j, b, x, &buf, false);
            let gt = &maps[layout.off[q][j] as usize + r * ldm(ne)..];
            let root = p.nodes[p.sub_ptr[j + 1] as usize - 1] as usize;
            let out = (plan.slot[root] + s.e[root] as u64) as usize;
            for a in 0..r - ne {
                buf[out + a] = w[ne + a] + (0..ne).map(|i| gt[i * (r - ne) + a] * w[i]).sum::<f64>();
            }
        }
    }
    for (q, p) in plan.passes.iter().enumerate().rev() {
        for j in 0..p.len() {
            let (r, ne) = shape(p, j);
            let w = gather_local(p, j, b, x, &buf, true);
            let mt = &maps[layout.off[q][j] as usize..];
            let rows = &p.row_dof[p.row_ptr[j] as usize..p.row_ptr[j + 1] as usize];
            for (i, &d) in rows[..ne].iter().enumerate() {
                x[d as usize] = (0..r).map(|k| mt[k * ldm(ne) + i] * w[k]).sum();
            }
        }
    }
}
