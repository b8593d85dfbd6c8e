//! Sparse linear algebra: CSR matrices (built once from the mesh graph) and their products, plus
//! the small dense kernels that block preconditioners need.
pub mod csr;
pub mod dense;

pub use csr::CsrMatrix;
