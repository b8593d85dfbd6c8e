//! The `element` level: element matrices stored and applied cell by cell, on the CPU ([`cpu`]) and
//! the GPU ([`cuda`]).
pub mod cpu;
pub mod cuda;
pub mod packed;
