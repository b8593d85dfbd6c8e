//! The `none` level: nothing stored beyond the mesh, dof map and passive data. On a uniform lattice
//! with coefficients constant per cell ([`grid`]) that is a byte of material per cell and one
//! element matrix per (template cell, material), the connectivity implicit; elsewhere geometry and
//! the pointwise operator are recomputed at every quadrature point of every apply (the
//! QFunction's `apply` runs inside the kernel, the matrix-free apply of [`super::partial`]).
pub mod cpu;
pub mod cuda;
pub mod direct;
pub mod grid;
pub mod grid_cuda;
