//! Device copies of a mesh (vertex coordinates, cell vertices) and of a space's dof map, uploaded
//! once and shared by every kernel of a run that reads them: the load vector, the assembly and the
//! error norms. At 10^7 unknowns each copy is about a gigabyte, and uploading it again for each of
//! those kernels was most of their phases.
//!
//! The backend keeps one mesh and one dof map (the last asked for). A mesh is recognised by its
//! `Arc` (a `Weak` is kept, so the slot never keeps a dropped mesh's host data alive, and a mesh
//! with a `Weak` outstanding cannot be mutated through `Arc::get_mut`); a dof map by its space's
//! identity and the address and length of its node list. The device memory goes when another mesh
//! or space takes the slot, or with [`CudaBackend::release_resident`].
use super::context::CudaBackend;
use crate::mesh::Mesh;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};
use rayon::prelude::*;
use std::sync::{Arc, Weak};

/// A device buffer shared by reference count; kernels take it like the [`CudaSlice`] it holds.
pub struct Shared<T>(Arc<CudaSlice<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> Shared<T> {
    pub fn new(s: CudaSlice<T>) -> Self {
        Shared(Arc::new(s))
    }
    /// Whether two handles share one buffer.
    pub fn same(&self, other: &Shared<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T: cudarc::driver::DeviceRepr + Default + Clone> Shared<T> {
    /// The buffer copied to the host (tests compare it with the host data).
    pub fn to_host(&self, be: &CudaBackend) -> Result<Vec<T>> {
        be.download(&self.0)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.0
    }
}

// SAFETY: passes the held slice exactly as cudarc passes a `&CudaSlice` (its device pointer, with
// its stream events); the handle, and so the buffer, outlives the launch builder's borrow.
unsafe impl<'a, 'b: 'a, T> PushKernelArg<&'b Shared<T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b Shared<T>) -> &mut Self {
        let s: &'b CudaSlice<T> = &arg.0;
        self.arg(s)
    }
}

/// A space's mesh and dof map on the device, in the layout the kernels read: coordinates `dim`
/// per vertex, `u32` vertices and nodes per cell.
#[derive(Clone)]
pub struct ResidentSpace {
    pub coords: Shared<f64>,
    pub verts: Shared<u32>,
    /// The dof map's nodes per cell: the same buffer as `verts` where they are the vertices (P1).
    pub nodes: Shared<u32>,
}

impl ResidentSpace {
    /// Whether the nodes are the vertices (P1 and Q1 spaces).
    pub fn nodes_are_verts(&self) -> bool {
        self.nodes.same(&self.verts)
    }
}

/// What the backend holds: one mesh, one dof map.
#[derive(Default)]
pub(crate) struct Slot {
    mesh: Option<(Weak<Mesh>, usize, Shared<f64>, Shared<u32>)>,
    /// (space identity, node list address, length, nodes).
    nodes: Option<(u64, usize, usize, Shared<u32>)>,
    /// A sparsity pattern built ahead for a space (same key as `nodes`), until its level takes it.
    pattern: Option<((u64, usize, usize), super::csr::DeviceCsr)>,
}

/// What identifies a space's dof map in the slot: the space, its node list's address and length.
fn space_key(space: &FunctionSpace) -> (u64, usize, usize) {
    let cn = &space.dofmap.cell_nodes;
    (space.uid(), cn.as_ptr() as usize, cn.len())
}

/// Whether `a == b`, compared in parallel chunks (slice comparisons): at 10^7 cells the P1 dof
/// map and the cells are 2.4·10^8 entries each, and an element-wise parallel iterator took half
/// a second where this runs at memory speed.
fn same_entries(a: &[usize], b: &[usize]) -> bool {
    const CHUNK: usize = 1 << 16;
    a.len() == b.len() && a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)).all(|(x, y)| x == y)
}

/// `v` as the GPU's 32-bit indices, converted in parallel (10^8 entries at 10^7 unknowns).
pub(crate) fn to_u32(v: &[usize], what: &str) -> Result<Vec<u32>> {
    v.par_iter()
        .map(|&x| u32::try_from(x).map_err(|_| Error::Unsupported(format!("{what} index {x} exceeds 32 bits on the GPU"))))
        .collect()
}

/// The mesh's vertex coordinates, `dim` per vertex, as the kernels read them (built in parallel).
pub(crate) fn flat_coords(mesh: &Mesh, dim: usize) -> Vec<f64> {
    let mut out = vec![0.0; mesh.coords.len() * dim];
    out.par_chunks_mut(dim.max(1)).zip(&mesh.coords).for_each(|(o, x)| o.copy_from_slice(&x[..o.len()]));
    out
}

impl CudaBackend {
    /// `mesh`'s coordinates (`mesh.dim` per vertex) and cell vertices on the device, uploaded on
    /// the first call for this mesh.
    pub fn resident_mesh(&self, mesh: &Arc<Mesh>) -> Result<(Shared<f64>, Shared<u32>)> {
        let mut slot = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((w, dim, c, v)) = &slot.mesh {
            if w.upgrade().is_some_and(|m| Arc::ptr_eq(&m, mesh)) && *dim == mesh.dim {
                return Ok((c.clone(), v.clone()));
            }
        }
        // Another mesh: its buffers (and the dof map on it) go first, so both never coexist.
        *slot = Slot::default();
        let _span = crate::trace::span(|| "resident mesh upload".into());
        let coords = if mesh.dim == 3 { self.upload(mesh.coords.as_flattened())? } else { self.upload(&flat_coords(mesh, mesh.dim))? };
        let verts = self.upload(&to_u32(&mesh.cells, "vertex")?)?;
        let (c, v) = (Shared::new(coords), Shared::new(verts));
        slot.mesh = Some((Arc::downgrade(mesh), mesh.dim, c.clone(), v.clone()));
        Ok((c, v))
    }

    /// Makes `coords` (3 per vertex) and `verts` the resident copies of `mesh`, built on the device
    /// (`mesh::box_cuda`), so no kernel uploads them.
    pub fn adopt_resident_mesh(&self, mesh: &Arc<Mesh>, coords: Shared<f64>, verts: Shared<u32>) {
        let mut slot = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        *slot = Slot::default();
        slot.mesh = Some((Arc::downgrade(mesh), mesh.dim, coords, verts));
    }

    /// `space`'s mesh and dof map on the device, uploaded on the first call for them; a dof map
    /// whose nodes are the mesh's vertices (P1, Q1) shares their buffer.
    pub fn resident(&self, space: &FunctionSpace) -> Result<ResidentSpace> {
        let (coords, verts) = self.resident_mesh(&space.mesh)?;
        let cn = &space.dofmap.cell_nodes;
        let key = space_key(space);
        let mut slot = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((uid, ptr, len, nodes)) = &slot.nodes {
            if (*uid, *ptr, *len) == key {
                return Ok(ResidentSpace { coords, verts, nodes: nodes.clone() });
            }
        }
        slot.nodes = None;
        let _span = crate::trace::span(|| "resident dof map (compare or upload)".into());
        let nodes = if space.dofmap.nodes_are_cells || same_entries(cn, &space.mesh.cells) { verts.clone() } else { Shared::new(self.upload(&to_u32(cn, "node")?)?) };
        slot.nodes = Some((key.0, key.1, key.2, nodes.clone()));
        Ok(ResidentSpace { coords, verts, nodes })
    }

    /// Keeps `pattern`, built ahead for `space`, until [`Self::take_pattern`] (or until another
    /// mesh or space takes the slot, or [`Self::release_resident`]).
    pub fn keep_pattern(&self, space: &FunctionSpace, pattern: super::csr::DeviceCsr) {
        self.resident.lock().unwrap_or_else(|e| e.into_inner()).pattern = Some((space_key(space), pattern));
    }

    /// The pattern kept for `space`, if one is (a kept pattern of another space is dropped).
    pub fn take_pattern(&self, space: &FunctionSpace) -> Option<super::csr::DeviceCsr> {
        let kept = self.resident.lock().unwrap_or_else(|e| e.into_inner()).pattern.take()?;
        (kept.0 == space_key(space)).then_some(kept.1)
    }

    /// Drops the backend's device copies of the last mesh and dof map (kernels and operators that
    /// still hold them keep theirs until they are dropped).
    pub fn release_resident(&self) {
        *self.resident.lock().unwrap_or_else(|e| e.into_inner()) = Slot::default();
    }
}
