//! Nonlinear (hyperelastic) solid mechanics by Newton's method: St. Venant–Kirchhoff, compressible
//! neo-Hookean and the transversely isotropic Fung law of cardiac tissue (Guccione/Usyk) with a
//! fibre direction per cell; residual and consistent Jacobian assembled on the CPU (rayon) or
//! entirely on the GPU (`kernels/hyperelastic.cu`), the same Newton loop (line search, load steps)
//! over the [`crate::backend::Backend`] trait; problem files `[physics] kind = "hyperelasticity"`.
pub mod bench;
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
pub mod run;
pub mod system;

pub use element::{frame_from_fibre, CpuHyper, HyperElement};
pub use system::CpuSystem;
pub use law::Law;
pub use newton::{EwStart, Forcing, HyperSystem, LinearPrecond, LoadStepReport, Loading, NewtonOptions, EW_START, EW_START_TIGHT};
