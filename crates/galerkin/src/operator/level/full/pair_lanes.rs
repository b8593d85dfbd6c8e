//! Scheme III's engine for cells of few functions — trilinear hexahedra, p = 1: 8 functions, 8
//! points, 24 × 24 elasticity matrices — on the CUDA cores (`kernels/pair_lanes.cu`; issue 16,
//! round 12). At p = 1 the tensor-core tiles are the wrong tool: the floor (24 MB of packed
//! triangles for 10 000 cells) is 6 µs, below a launch of their grid, and the eleventh round's
//! time split showed the kernel bound by each cell's chain of dependent loads, not by its
//! multiplies. Here a block takes a group of `lanes` consecutive cells, a lane per (cell, node
//! pair) sums the pair's nine moments from the gradients in shared memory and forms its block by
//! the physics' `QF::block`, and the group's matrices, one contiguous stretch of the output, leave
//! in 16-byte stores of consecutive lanes. Selected by [`TiledConfig::lanes`] (the sweep's
//! [`TiledConfig::pair_lanes_shapes`]); same layouts and matrices as the tiled kernel.
use super::cuda::{DeviceAssembler, Variant};
use super::schemes::TiledConfig;
use crate::backend::cuda::jit::PAIR_LANES;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// Static shared memory a block may declare.
const MAX_STATIC_SHARED: usize = 48 * 1024;

/// The launch of a pair-lane shape: threads (a lane per (cell, pair a ≤ b), whole warps), the
/// block's shared bytes (`pair_lanes.cu`'s REGION: coordinates and gradients, the staged matrices
/// over them) and the blocks per SM its registers are held to (the resident grid's blocks per SM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PairLaunch {
    pub threads: usize,
    pub smem: usize,
    pub min_blocks: usize,
}

/// [`PairLaunch`] of shape `cfg` for variant `v`; blocks per SM from `cfg.min_blocks`, else as
/// many as 64 registers per thread allow.
pub(crate) fn pair_shape(v: &Variant, cfg: TiledConfig) -> PairLaunch {
    let cells = cfg.lanes.max(1);
    let threads = (v.nloc * (v.nloc + 1) / 2 * cells).div_ceil(32) * 32;
    let geometry = cells * (v.nv * v.dim + v.dim * v.nq * v.nloc + 8 + v.nq * v.dim * v.dim);
    let staged = cells * cfg.storage().doubles(v.nloc * v.ncomp);
    let min_blocks = if cfg.min_blocks > 0 { cfg.min_blocks } else { (65536 / (64 * threads)).max(1) };
    PairLaunch { threads, smem: 8 * ((geometry.max(staged) + 1) & !1), min_blocks }
}

/// The defines of `pair_lanes.cu` for variant `v` and shape `cfg`.
pub(crate) fn pair_defines(v: &Variant, cfg: TiledConfig) -> Vec<String> {
    let l = pair_shape(v, cfg);
    let mut d: Vec<String> = [
        ("DIM", v.dim),
        ("NV", v.nv),
        ("NLOC", v.nloc),
        ("NQ", v.nq),
        ("NCOMP", v.ncomp),
        ("PL_CELLS", cfg.lanes.max(1)),
        ("PL_MIN_BLOCKS", l.min_blocks),
        ("PACKED", usize::from(cfg.packed)),
        ("STREAM_STORES", usize::from(cfg.streaming)),
        ("SKIP_PARTS", usize::from(cfg.skip & 7)),
        ("PL_FUSE", usize::from(cfg.fuse)),
    ]
    .iter()
    .map(|(k, x)| format!("{k}={x}"))
    .collect();
    d.push(format!("QF={}", v.qf));
    d
}

impl DeviceAssembler {
    /// The launch of pair-lane shape `cfg` on cells `0..nc`: a block per group of `cfg.lanes`
    /// cells, or (`cfg.resident`) SMs × blocks per SM, or `grid` blocks where given, each looping
    /// over groups a grid apart.
    pub(crate) fn pair_launch_config(&self, be: &CudaBackend, cfg: TiledConfig, nc: u64, grid: Option<u64>) -> Result<LaunchConfig> {
        let l = pair_shape(&self.variant, cfg);
        let v = &self.variant;
        let fuse = usize::from(cfg.fuse);
        if fuse > 0 && (v.nloc % fuse != 0 || cfg.lanes.max(1) * v.nq * fuse > l.threads) {
            return Err(Error::invalid(format!("pair-lane shape {}: {fuse} lanes per point must divide the {} functions and fit the {} threads", cfg.label(), v.nloc, l.threads)));
        }
        if l.threads > 1024 || l.smem > MAX_STATIC_SHARED || self.variant.dim != 3 {
            return Err(Error::Unsupported(format!(
                "pair-lane shape {}: {} threads and {} bytes of shared memory per block for {} functions (at most 1024 and {MAX_STATIC_SHARED}, 3D cells)",
                cfg.label(),
                l.threads,
                l.smem,
                self.variant.nloc
            )));
        }
        let groups = nc.div_ceil(cfg.lanes.max(1) as u64).max(1);
        let blocks = match grid {
            Some(g) => g.max(1),
            None if cfg.resident => u64::from(be.device().multiprocessors.max(1)) * l.min_blocks as u64,
            None => groups,
        }
        .min(groups)
        .min(i32::MAX as u64) as u32;
        Ok(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (l.threads as u32, 1, 1), shared_mem_bytes: 0 })
    }

    /// Element matrices of cells `0..nc` by pair-lane shape `cfg` into `out` (its storage).
    pub(crate) fn launch_pair_lanes(&self, be: &CudaBackend, cfg: TiledConfig, nc: u64, out: &mut CudaSlice<f64>, grid: Option<u64>) -> Result<()> {
        let lc = self.pair_launch_config(be, cfg, nc, grid)?;
        if nc == 0 {
            return Ok(());
        }
        let module = be.variant_module(&PAIR_LANES, &pair_defines(&self.variant, cfg))?;
        let k = Kernel::from_module(&module, "matrices_pair_lanes")?;
        launch!(be, &k, lc; &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs, &self.tab, &self.coef, &self.meta, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::level::Tuning;

    fn p1(ncomp: usize) -> Variant {
        Variant { dim: 3, nv: 8, nloc: 8, nq: 8, ncomp, affine: false, qf: "Elasticity".into(), full_gradient: true, reftensor: false, tuning: Tuning::default() }
    }

    /// A lane per (cell, pair): 36 pairs × 8 cells = 288 threads (9 warps), 4 cells 144 → 160;
    /// the staged packed matrices (300 doubles a cell) lie over the coordinates, gradients and
    /// J⁻¹ (24 + 200 + 72 a cell) and set the shared memory; full ones (576) too; every sweep
    /// shape fits.
    #[test]
    fn pair_lane_shapes_take_a_lane_per_pair() {
        let v = p1(3);
        let base = TiledConfig::pair_lanes_shapes(8)[0];
        let s8 = pair_shape(&v, TiledConfig { lanes: 8, min_blocks: 0, ..base });
        assert_eq!((s8.threads, s8.smem, s8.min_blocks), (288, 8 * 8 * 300, 3));
        let s4 = pair_shape(&v, TiledConfig { lanes: 4, min_blocks: 8, ..base });
        assert_eq!((s4.threads, s4.smem, s4.min_blocks), (160, 4 * 8 * 300, 8));
        let full = pair_shape(&v, TiledConfig { lanes: 8, packed: false, ..base });
        assert_eq!(full.smem, 8 * 8 * 576);
        // Diffusion: the geometry (24 + 200 + 72) outgrows the packed 8 × 8 triangles (36).
        assert_eq!(pair_shape(&p1(1), TiledConfig { lanes: 8, ..base }).smem, 8 * 8 * 296);
        for cfg in TiledConfig::pair_lanes_shapes(8) {
            let l = pair_shape(&v, cfg);
            assert!(cfg.lanes > 0 && l.threads <= 1024 && l.smem <= MAX_STATIC_SHARED, "{}: {l:?}", cfg.label());
            assert!(l.threads >= 36 * cfg.lanes && l.threads % 32 == 0, "{}: {l:?}", cfg.label());
        }
    }
}
