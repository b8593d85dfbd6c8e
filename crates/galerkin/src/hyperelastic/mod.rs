//! Nonlinear (hyperelastic) solid mechanics by Newton's method: St. Venant–Kirchhoff, compressible
//! neo-Hookean and the transversely isotropic Fung law of cardiac tissue (Guccione/Usyk) with a
//! fibre direction per cell; residual and consistent Jacobian assembled on the CPU (rayon) or
//! entirely on the GPU (`kernels/hyperelastic*.cu`), the same Newton loop (line search, load steps)
//! over the [`crate::backend::Backend`] trait; problem files `[physics] kind = "hyperelasticity"`.
/// The [`KernelSource`](crate::backend::cuda::jit::KernelSource) of a hyperelastic kernel file: the
/// law, the `hyper_assemble` sources (`hyperelastic.cu`: the shared prologue; `hyperelastic_scatter.cuh`;
/// the column-pair scheme `hyperelastic_pairs.cu`; the tensor-core scheme `hyperelastic_tc.cuh` and
/// `hyperelastic_tc.cu`), `hyperelastic_pressure.cu` (the follower pressure's kernels), then the files
/// of `kernels/` after the colon in order (the name before it names the source in messages and
/// caches), each behind a `#line` so NVRTC's messages name the right file and line. One list for
/// every hyperelastic module, so a new header or kernel cannot drift between them.
macro_rules! hyper_kernel_source {
    ($name:literal: $($file:literal),+) => {
        hyper_kernel_source!(@ $name: "hyperelastic_law.cuh", "hyperelastic.cu", "hyperelastic_scatter.cuh", "hyperelastic_pairs.cu",
            "hyperelastic_tc.cuh", "hyperelastic_tc.cu", "hyperelastic_pressure.cu", $($file),+)
    };
    (@ $name:literal: $($file:literal),+) => {
        crate::backend::cuda::jit::KernelSource {
            file: $name,
            source: concat!($("#line 1 \"", $file, "\"\n", include_str!(concat!("../../kernels/", $file)), "\n"),+),
            physics: false,
            cells: false,
        }
    };
}

pub mod bench;
pub mod blocks;
pub mod chain;
pub mod config;
pub mod cuda;
pub mod element;
pub mod forcing;
pub mod lattice;
pub mod law;
pub mod loads;
pub mod mesh;
pub mod moments;
pub mod multigrid;
pub mod newton;
pub mod patch;
pub mod recompute;
pub mod ahead;
pub mod run;
pub mod system;
pub(crate) mod thickness;
pub mod upper;
pub mod variants;

pub use element::{frame_from_fibre, CpuHyper, HyperElement};
pub use system::CpuSystem;
pub use law::Law;
pub use newton::{EwStart, Forcing, HyperSystem, LinearPrecond, LoadStepReport, Loading, NewtonOptions, EW_START, EW_START_TIGHT};

#[cfg(test)]
mod tests {
    /// The macro's `hyper_assemble` files (read back from the `#line` markers of the joined source,
    /// between the law and the pressure kernels) are `kernels/hyper_assemble.files`, the list the CPU
    /// emulation and the host scripts read, so the five copies of stop 67 cannot drift apart.
    #[test]
    fn the_assemble_file_list_is_the_macros() {
        let src = super::cuda::HYPERELASTIC.source;
        let joined: Vec<&str> = src.lines().filter_map(|l| l.strip_prefix("#line 1 \"")?.strip_suffix('"')).collect();
        let (law, pressure) = (joined.iter().position(|f| *f == "hyperelastic_law.cuh"), joined.iter().position(|f| *f == "hyperelastic_pressure.cu"));
        let (Some(law), Some(pressure)) = (law, pressure) else { panic!("no law or pressure file in {joined:?}") };
        let listed: Vec<&str> = include_str!("../../kernels/hyper_assemble.files").lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        assert_eq!(joined[law + 1..pressure], listed[..], "hyper_kernel_source! and kernels/hyper_assemble.files differ");
    }
}
