//! The patch-reduced GPU Jacobian's host tables ([`galerkin::hyperelastic::patch::Patches`]):
//! the reduction they promise on the box mesh and the CSR places they lead to (CPU only; the kernel
//! itself is checked against the CPU in `hyperelastic_cuda` and the CPU emulation in `emu/`).
use galerkin::hyperelastic::patch::Patches;
use galerkin::mesh::{generate::box_mesh, CellType};
use galerkin::operator::assemble::pattern;
use std::sync::Arc;

/// On the box mesh, runs of 6 cells are Kuhn cubes: P2, a cube's 6 tetrahedra (27 nodes) have
/// 393 distinct directed node pairs of 600, i.e. 210 slots (upper pairs with the diagonal); every
/// element entry maps to a slot whose flush places are the CSR places of the per-cell scatter
/// (each directed entry of a patch once), and the flush places of one patch are distinct.
#[test]
fn cube_patches_reduce_and_land_where_the_cells_do() {
    let mesh = Arc::new(box_mesh(3, 2, 2, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
    let space = galerkin::space::FunctionSpace::lagrange(mesh.clone(), 2, 3).unwrap();
    let (pat, slots) = pattern(&space, true).unwrap();
    let rank = slots.unwrap().rank;
    let nloc = 10;
    let cn = &space.dofmap.cell_nodes;
    let p = Patches::consecutive(cn, nloc, &pat.row_ptr, &rank, 6).unwrap();
    assert_eq!(p.len(), 12);
    assert_eq!((p.max_cells, p.max_slots), (6, 210));
    assert_eq!(p.flush_pos.len(), 12 * 393);
    for q in 0..p.len() {
        let (f0, f1) = (p.flush_ptr[q] as usize, p.flush_ptr[q + 1] as usize);
        let mut places: Vec<usize> = Vec::new();
        for e in f0..f1 {
            let len = (p.flush_meta[e] >> 16) as usize;
            for a in 0..3 {
                for b in 0..3 {
                    places.push(p.flush_pos[e] as usize + a * len + b);
                }
            }
        }
        places.sort_unstable();
        let n = places.len();
        places.dedup();
        assert_eq!(places.len(), n, "patch {q}: a place flushed twice");
        // Every entry of every cell of the patch lands on one of the patch's places, through its slot.
        for c in p.ptr[q] as usize..p.ptr[q + 1] as usize {
            for i in 0..nloc {
                for j in i..nloc {
                    let sf = p.pslot[c * 55 + i * nloc - i * i.saturating_sub(1) / 2 + j - i];
                    let (s, flip) = ((sf >> 1) as u32, sf & 1 == 1);
                    let (ni, nj) = (cn[c * nloc + i], cn[c * nloc + j]);
                    assert_eq!(flip, ni > nj);
                    let want = pat.row_ptr[3 * ni] + 3 * rank[(c * nloc + i) * nloc + j] as usize;
                    // The slot's directed entry whose row is node i's.
                    let e = (f0..f1).find(|&e| p.flush_meta[e] & 0xffff == 2 * s + u32::from(flip)).unwrap();
                    assert_eq!(p.flush_pos[e] as usize, want, "cell {c} pair ({i}, {j})");
                    assert_eq!((p.flush_meta[e] >> 16) as usize, pat.row_ptr[3 * ni + 1] - pat.row_ptr[3 * ni]);
                }
            }
        }
    }
    // The same cells one per patch: no reduction (100 directed pairs per cell).
    let single = Patches::consecutive(cn, nloc, &pat.row_ptr, &rank, 1).unwrap();
    assert_eq!(single.flush_pos.len(), 72 * 100);
    assert!(Patches::consecutive(cn, nloc, &pat.row_ptr, &rank, 0).is_err());
}
