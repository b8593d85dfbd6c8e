//! The moments scheme's host side (`galerkin::hyperelastic::moments`): where it applies, its
//! table and its shared memory. Its kernel is checked against the CPU in `hyperelastic_cuda` and in
//! the CPU emulation (`tests/emu/hyperelastic_schemes.sh`).
use galerkin::hyperelastic::element::stiffness_quadrature_degree;
use galerkin::hyperelastic::moments::{applies, defines, shared_bytes, tables};
use galerkin::hyperelastic::{HyperElement, Law};
use galerkin::mesh::{generate::box_mesh, CellType};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

fn element(cell: CellType, degree: usize, rule: Option<usize>) -> HyperElement {
    let mesh = Arc::new(box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], cell).unwrap());
    let space = Arc::new(FunctionSpace::lagrange(mesh, degree, 3).unwrap());
    let rule = rule.map(|d| if d == 0 { stiffness_quadrature_degree(&space) } else { d });
    HyperElement::with_degree(space, Law::Svk { lambda: 1.0, mu: 1.0 }, Vec::new(), rule).unwrap()
}

/// P2 tetrahedra at the full (14 points), stiffness (4) and degree-1 (1) rules: the tabulated
/// gradients are the kernel's formula from λ and ∇λ (so the scheme applies), the table is the
/// standard one with 4 barycentrics per point appended (summing to 1), the shared memory is the
/// moments' (10 528 B per cell), 5 cells per block exceed 48 KiB; P1 tetrahedra and P2 hexahedra
/// are refused by name.
#[test]
fn applies_to_p2_tetrahedra_only() {
    for (rule, nq) in [(None, 14), (Some(0), 4), (Some(1), 1)] {
        let p2 = element(CellType::Tetrahedron, 2, rule);
        assert_eq!(p2.quad.len(), nq);
        assert!(applies(&p2));
        assert_eq!(shared_bytes(&p2, 1), 10_528);
        assert!(defines(&p2, 2).unwrap().contains(&"HM_WPB=2".to_string()));
        let (t, base) = (tables(&p2), galerkin::hyperelastic::cuda::tables(&p2).len());
        assert_eq!(t.len(), base + 4 * nq);
        for lam in t[base..].chunks(4) {
            assert!((lam.iter().sum::<f64>() - 1.0).abs() < 1e-14 && lam.iter().all(|&l| l >= 0.0));
        }
    }
    assert!(defines(&element(CellType::Tetrahedron, 2, None), 5).is_err());
    for (cell, degree) in [(CellType::Tetrahedron, 1), (CellType::Hexahedron, 2)] {
        let el = element(cell, degree, None);
        assert!(!applies(&el));
        let e = defines(&el, 1).unwrap_err().to_string();
        assert!(e.contains("moments scheme") && e.contains("P2 tetrahedra"), "{e}");
    }
}
