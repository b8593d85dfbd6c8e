//! The patch-reduced GPU Jacobian's host tables ([`galerkin::hyperelastic::patch::Patches`]):
//! the reduction they promise on the box mesh and the CSR places they lead to (CPU only; the kernel
//! itself is checked against the CPU in `hyperelastic_cuda` and the CPU emulation in `emu/`).
use galerkin::hyperelastic::patch::{Grouping, PatchMesh, Patches, OWNED};
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
                    let e = (f0..f1).find(|&e| p.flush_meta[e] & 0x7fff == 2 * s + u32::from(flip)).unwrap();
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

/// The mesh of `box_mesh(n…)` as the patch tables read it, with its cells in Hilbert order (as the
/// locality renumbering of `run` leaves them: runs of 6 cells are then not cubes).
fn hilbert_box(n: [usize; 3], degree: usize) -> (galerkin::space::FunctionSpace, Vec<usize>, Vec<usize>, Vec<f64>, Vec<usize>, Vec<u16>) {
    let mesh = box_mesh(n[0], n[1], n[2], [0.0; 3], [1.0, 0.8, 1.2], CellType::Tetrahedron).unwrap();
    let mesh = Arc::new(galerkin::mesh::ordering::reorder_for_locality(&mesh).unwrap());
    let space = galerkin::space::FunctionSpace::lagrange(mesh.clone(), degree, 3).unwrap();
    let (pat, slots) = pattern(&space, true).unwrap();
    let coords: Vec<f64> = mesh.coords.iter().flat_map(|x| *x).collect();
    let cn = space.dofmap.cell_nodes.clone();
    (space, cn, mesh.cells.clone(), coords, pat.row_ptr, slots.unwrap().rank)
}

/// Grouped by longest edge, the cells of a renumbered box mesh form its Kuhn cubes again (every
/// patch of 6 has a cube's 210 slots and 393 directed entries, where runs of 6 consecutive cells
/// have more); a cube owns the row of its centre node (the diagonal's midpoint), 2×2×2 cubes (48
/// cells) own more rows and reduce the adds about 1.97×; every cell lies in exactly one patch, and an
/// owned row's node has all its cells in the patch.
#[test]
fn edge_patches_are_cubes_under_any_numbering() {
    let (_space, cn, cv, coords, row_ptr, rank) = hilbert_box([5, 3, 3], 2);
    let m = PatchMesh { cell_nodes: &cn, nloc: 10, cell_verts: &cv, nv: 4, coords: &coords, row_ptr: &row_ptr, rank: &rank };
    let cubes = Patches::by_edges(&m, 6).unwrap();
    assert_eq!(cubes.len(), 45);
    assert_eq!((cubes.max_cells, cubes.max_slots), (6, 210));
    assert_eq!(cubes.flush_pos.len(), 45 * 393);
    // (a cube's centre row, 27 directed entries, and the rows of nodes on the box's faces and corners
    // that only one cube touches)
    assert!(cubes.stores() >= 45 * 9 * 27 && cubes.stores() < cubes.adds() / 2, "{} stores", cubes.stores());
    let runs = Patches::grouped(&m, 6, Grouping::Runs).unwrap();
    assert!(runs.flush_pos.len() > cubes.flush_pos.len(), "runs {} cubes {}", runs.flush_pos.len(), cubes.flush_pos.len());

    let (_space, cn, cv, coords, row_ptr, rank) = hilbert_box([4, 4, 4], 2);
    let m = PatchMesh { cell_nodes: &cn, nloc: 10, cell_verts: &cv, nv: 4, coords: &coords, row_ptr: &row_ptr, rank: &rank };
    let nc = cn.len() / 10;
    let big = Patches::by_edges(&m, 48).unwrap();
    let mut seen = big.cells.clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..nc as u32).collect::<Vec<_>>());
    let gain = (nc * 100) as f64 / big.flush_pos.len() as f64;
    assert!(gain > 1.85, "2×2×2 cubes: {gain:.3}× fewer adds");
    assert!(big.stores() > Patches::by_edges(&m, 6).unwrap().stores(), "owned rows");
    for q in 0..big.len() {
        let cells: Vec<usize> = big.cells[big.ptr[q] as usize..big.ptr[q + 1] as usize].iter().map(|&c| c as usize).collect();
        for e in big.flush_ptr[q] as usize..big.flush_ptr[q + 1] as usize {
            if big.flush_meta[e] & OWNED == 0 {
                continue;
            }
            let node = (row_ptr.partition_point(|&s| s <= big.flush_pos[e] as usize) - 1) / 3;
            for c in 0..nc {
                if cn[c * 10..c * 10 + 10].contains(&node) {
                    assert!(cells.contains(&c), "patch {q} owns node {node} but not cell {c}");
                }
            }
        }
    }
}

/// The benchmark's mesh (`bench --hyper-kernel-sweep --dofs 1000000 --degrees 2`: the box of 34³
/// Kuhn cubes, renumbered for locality, P2): the adds of each grouping against the per-cell scatter's
/// (printed; run with `--ignored --nocapture`): edge patches keep a cube's 1.53× where runs of 6 fall
/// to about 1.35×, and grow with the patch.
#[test]
#[ignore = "the 10^6-unknown mesh: seconds of set-up; run for the counts of BENCHMARKS.md"]
fn patch_counts_on_the_benchmark_mesh() {
    let (_space, cn, cv, coords, row_ptr, rank) = hilbert_box([34, 34, 34], 2);
    let m = PatchMesh { cell_nodes: &cn, nloc: 10, cell_verts: &cv, nv: 4, coords: &coords, row_ptr: &row_ptr, rank: &rank };
    let per_cell = (cn.len() / 10 * 100) as f64;
    let mut gains = Vec::new();
    for (group, cells) in [(Grouping::Runs, 6), (Grouping::Edges, 6), (Grouping::Edges, 12), (Grouping::Edges, 24), (Grouping::Edges, 48)] {
        let t = std::time::Instant::now();
        let p = Patches::grouped(&m, cells, group).unwrap();
        let gain = per_cell / p.flush_pos.len() as f64;
        println!(
            "{group:?} {cells:>2}: {} patches, most slots {} ({} B), adds /{gain:.3}, stored plainly {:.1} %, set-up {:.2} s",
            p.len(),
            p.max_slots,
            72 * p.max_slots,
            100.0 * p.stores() as f64 / p.adds() as f64,
            t.elapsed().as_secs_f64()
        );
        gains.push(gain);
    }
    assert!(gains[1] > 1.5 && gains[0] < gains[1], "{gains:?}");
    assert!(gains[2] > gains[1] && gains[4] > gains[2], "{gains:?}");
}

/// [`Patches::of_space`] (what the NVRTC check sizes the tensor-core patch kernel's NSLOT by) finds
/// the Kuhn cube of a one-cube box: 6 cells and 210 slots at P2, and at P1 its 8 vertices' 27 pairs
/// (19 edges and 8 diagonal pairs).
#[test]
fn patches_of_a_space_size_the_slots() {
    let mesh = Arc::new(box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
    for (degree, slots) in [(2, 210), (1, 27)] {
        let space = galerkin::space::FunctionSpace::lagrange(mesh.clone(), degree, 3).unwrap();
        let p = Patches::of_space(&space, 6, Grouping::Edges).unwrap();
        assert_eq!((p.len(), p.max_cells, p.max_slots), (1, 6, slots), "P{degree}");
    }
}
