//! Sparse linear algebra: CSR matrices (built once from the mesh graph) and their products.
pub mod csr;

pub use csr::CsrMatrix;
