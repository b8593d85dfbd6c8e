//! galerkin: a finite element toolkit whose whole pipeline — mesh, element integration, assembly or
//! assembly-free operators, linear solvers, output — runs on CPU cores (rayon) and NVIDIA GPUs.
//!
//! Data flows as `mesh -> space -> operator -> solver -> io`; every operator is
//! `A = Rᵀ Bᵀ D B R` (element restriction, basis, pointwise physics, assembly level) and every
//! solver is written once over the [`backend::Backend`] trait.
pub mod advection;
pub mod backend;
pub mod bench;
pub mod dg;
pub mod error;
pub mod expr;
pub mod fe;
pub mod hyperelastic;
pub mod iga;
pub mod inverse;
pub mod io;
pub mod linalg;
pub mod memory;
pub mod mesh;
pub mod operator;
pub mod physics;
pub mod problem;
pub mod process;
pub mod solver;
pub mod space;
pub mod trace;

pub use error::{Error, Result};
