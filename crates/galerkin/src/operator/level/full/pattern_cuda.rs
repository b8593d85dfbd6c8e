//! The CSR sparsity pattern of a dof map built on the device (`kernels/pattern.cu`), from the
//! resident dof map: no host pass over 10^7 nodes and no upload of its column indices. Node -> cell
//! incidences are counted and filled with atomics; one thread per node gathers its cells' nodes
//! into a sorted list without repeats, once for the row lengths and once, after the host has summed
//! them into row pointers (a scan of one number per node), for the columns. The rows and their
//! order are those of [`crate::operator::assemble::sparsity`] (tested equal).
use crate::backend::cuda::jit::PATTERN;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, DeviceCsr, Shared};
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// The most distinct neighbours one thread's list holds; beyond, the host builds the pattern.
const MAX_LIST: usize = 1024;
/// The smallest list capacity compiled.
const COMMON_CAP: usize = 128;

/// The pattern of `space` (its cell nodes `nodes` on the device) as a device CSR matrix with zero
/// values, or `None` where the lists would not fit ([`MAX_LIST`]) and the host must build it.
pub fn device_pattern(be: &CudaBackend, space: &FunctionSpace, nodes: &Shared<u32>) -> Result<Option<DeviceCsr>> {
    let dm = &space.dofmap;
    let (nn, npc, ncomp) = (dm.num_nodes, dm.nodes_per_cell, space.ncomp);
    let ninc = dm.cell_nodes.len();
    if nn == 0 || ninc == 0 || nn * ncomp > i32::MAX as usize || ninc > u32::MAX as usize || nodes.len() != ninc {
        return Ok(None);
    }
    // Incidences per node: their largest count bounds a row's distinct nodes (count × npc).
    // The counting kernel comes from the variant most meshes end up using (lists of 128: P1 and
    // Q1 in 3D), so they compile one module.
    let counting = module(be, npc, ncomp, COMMON_CAP)?;
    let mut cnt = be.alloc::<u32>(nn)?;
    be.zero_slice(&mut cnt)?;
    let ninc64 = ninc as u64;
    launch!(be, &Kernel::from_module(&counting, "count_incidences")?, be.grid(ninc64); &ninc64, nodes, &mut cnt)?;
    let counts = be.download(&cnt)?;
    let most = counts.iter().copied().max().unwrap_or(0) as usize;
    let bound = (most * npc).min(nn);
    if bound > MAX_LIST {
        return Ok(None);
    }
    let cap = bound.next_power_of_two().max(COMMON_CAP);
    let mut start = Vec::with_capacity(nn + 1);
    start.push(0u32);
    let mut s = 0u32;
    for &c in &counts {
        s += c;
        start.push(s);
    }
    drop(counts);
    let m = if cap == COMMON_CAP { counting } else { module(be, npc, ncomp, cap)? };
    let k = |name| Kernel::from_module(&m, name);
    let start = be.upload(&start)?;
    let mut fill = cnt;
    be.zero_slice(&mut fill)?;
    let mut cells = be.alloc::<u32>(ninc)?;
    launch!(be, &k("fill_incidences")?, be.grid(ninc64); &ninc64, nodes, &start, &mut fill, &mut cells)?;
    drop(fill);
    let nn64 = nn as u64;
    let mut lens = be.alloc::<u32>(nn)?;
    let mut overflow = be.upload(&[0u32])?;
    launch!(be, &k("row_lengths")?, be.grid(nn64); &nn64, &start, &cells, nodes, &mut lens, &mut overflow)?;
    if be.download(&overflow)?[0] != 0 {
        return Err(Error::invalid("device sparsity: a row outgrew the bound of its node's incidences"));
    }
    // Row pointers: node n's ncomp rows each hold len(n)·ncomp entries.
    let lens_h = be.download(&lens)?;
    drop(lens);
    let mut row_ptr = Vec::with_capacity(nn * ncomp + 1);
    row_ptr.push(0u32);
    let mut at = 0usize;
    for &l in &lens_h {
        for _ in 0..ncomp {
            at += l as usize * ncomp;
            if at > i32::MAX as usize {
                return Err(Error::Unsupported(format!("a device CSR pattern of more than {} nonzeros", i32::MAX)));
            }
            row_ptr.push(at as u32);
        }
    }
    drop(lens_h);
    let row_ptr = be.upload(&row_ptr)?;
    let mut col_idx = be.alloc::<u32>(at)?;
    launch!(be, &k("row_columns")?, be.grid(nn64); &nn64, &start, &cells, nodes, &row_ptr, &mut col_idx)?;
    let mut values = be.alloc::<f64>(at)?;
    be.zero_slice(&mut values)?;
    Ok(Some(DeviceCsr::from_device_parts(nn * ncomp, nn * ncomp, row_ptr, col_idx, values)?))
}

/// [`device_pattern`] of `space` from the backend's resident dof map.
pub fn device_pattern_of(be: &CudaBackend, space: &FunctionSpace) -> Result<Option<DeviceCsr>> {
    device_pattern(be, space, &be.resident(space)?.nodes)
}

fn module(be: &CudaBackend, npc: usize, ncomp: usize, cap: usize) -> Result<std::sync::Arc<cudarc::driver::CudaModule>> {
    be.variant_module(&PATTERN, &defines(npc, ncomp, cap))
}

/// The defines of one variant (nodes per cell, components, list capacity).
pub fn defines(npc: usize, ncomp: usize, cap: usize) -> Vec<String> {
    vec![format!("NPC={npc}"), format!("NCOMP={ncomp}"), format!("MAXU={cap}")]
}
