//! The CPU `full` level's element → CSR slots in their two widths: `pattern_compact` takes `u8`
//! ranks exactly where no row can have more than 256 column nodes (else `u16`), gives the pattern
//! and the ranks that `pattern` gives, and every rank names the CSR column of its cell node, so the
//! scatter adds each element entry where it belongs.
use galerkin::mesh::{generate, CellType};
use galerkin::operator::assemble::{pattern, pattern_compact, CompactSlots};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

#[test]
fn narrow_and_wide_ranks_name_the_right_columns() {
    // (cell, degree, components, narrow expected): a vertex inside the 3³ box lies in 24 Kuhn
    // tetrahedra or 8 hexahedra, so P3 (24·19 + 1 = 457) and Q3 (8·63 + 1 = 505) need `u16`.
    let cases = [
        (CellType::Tetrahedron, 1, 1, true),
        (CellType::Tetrahedron, 1, 3, true),
        (CellType::Tetrahedron, 2, 1, true),
        (CellType::Hexahedron, 1, 1, true),
        (CellType::Hexahedron, 2, 1, true),
        (CellType::Tetrahedron, 3, 1, false),
        (CellType::Hexahedron, 3, 1, false),
    ];
    for (cell, degree, ncomp, narrow) in cases {
        let mesh = Arc::new(generate::box_mesh(3, 3, 3, [0.0; 3], [1.0; 3], cell).unwrap());
        let space = FunctionSpace::lagrange(mesh, degree, ncomp).unwrap();
        let what = format!("{cell:?} degree {degree} ncomp {ncomp}");
        let (a, wide) = pattern(&space, true).unwrap();
        let wide = wide.unwrap().rank;
        let (b, compact) = pattern_compact(&space).unwrap();
        assert_eq!((&a.row_ptr, &a.col_idx), (&b.row_ptr, &b.col_idx), "{what}: patterns differ");
        let ranks: Vec<usize> = match &compact {
            CompactSlots::Narrow(s) => s.rank.iter().map(|&r| r as usize).collect(),
            CompactSlots::Wide(s) => s.rank.iter().map(|&r| r as usize).collect(),
        };
        assert_eq!(matches!(compact, CompactSlots::Narrow(_)), narrow, "{what}: rank width");
        assert!(ranks.iter().zip(&wide).all(|(&r, &w)| r == w as usize), "{what}: ranks differ from `pattern`'s");
        let (dm, n, npc) = (&space.dofmap, ncomp, space.dofmap.nodes_per_cell);
        let mut longest = 0;
        for c in 0..dm.num_cells() {
            for (i, &ni) in dm.cell(c).iter().enumerate() {
                let row = ni * n + n - 1;
                longest = longest.max((b.row_ptr[row + 1] - b.row_ptr[row]) / n);
                for (j, &nj) in dm.cell(c).iter().enumerate() {
                    let r = ranks[(c * npc + i) * npc + j];
                    for b2 in 0..n {
                        let col = b.col_idx[b.row_ptr[row] + r * n + b2] as usize;
                        assert_eq!(col, nj * n + b2, "{what}: cell {c} entry ({i}, {j}) lands in column {col}");
                    }
                }
            }
        }
        assert!(narrow == (longest <= 256) || !narrow, "{what}: {longest} column nodes in a narrow table");
    }
}
