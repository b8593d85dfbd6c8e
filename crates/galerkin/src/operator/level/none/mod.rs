//! The `none` level: nothing stored beyond the mesh, dof map and passive data; geometry and the
//! pointwise operator are recomputed at every quadrature point of every apply (the QFunction's
//! `apply` runs inside the kernel). The apply itself is the matrix-free one of [`super::partial`].
pub mod cpu;
pub mod cuda;
