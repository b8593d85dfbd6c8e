//! The `full` level: a global CSR matrix, assembled on the CPU ([`cpu`]) or the GPU ([`cuda`],
//! with the patch lists of [`patches`]).
pub mod cpu;
pub mod cuda;
pub mod grouped;
pub mod pair_lanes;
pub mod parts;
pub mod patches;
pub mod pattern_cuda;
pub mod pipe_rounds;
pub mod schemes;
pub mod tensor_tables;
