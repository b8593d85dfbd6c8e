//! Values of a field at arbitrary points: the cell holding a point (bounding-box test, then the
//! inverse of the cell's P1/Q1 geometry map by Newton's method) and the weights of the element's
//! basis there, so a probe is a dot product with a sparse vector built once.
use super::FunctionSpace;
use crate::operator::geometry::inverse_jacobian;

/// Newton steps of the inverse map (exact in one for affine cells).
const NEWTON_STEPS: usize = 30;

impl FunctionSpace {
    /// The cell holding `x` and the reference coordinates of `x` in it, or `None` outside the
    /// mesh (points on a boundary count as inside, to a relative tolerance of 1e-9).
    pub fn locate(&self, x: [f64; 3]) -> Option<(usize, [f64; 3])> {
        let mesh = &*self.mesh;
        let (dim, cell) = (mesh.dim, mesh.cell_type);
        let (lo, hi) = mesh.bounding_box();
        let tol = 1e-9 * (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        let nv = cell.num_vertices();
        let (mut vals, mut grads) = (vec![0.0; nv], vec![[0.0; 3]; nv]);
        let centre = {
            let rv = cell.reference_vertices();
            let mut c = [0.0; 3];
            rv.iter().for_each(|v| (0..3).for_each(|k| c[k] += v[k] / rv.len() as f64));
            c
        };
        for c in 0..mesh.num_cells() {
            let xv: Vec<[f64; 3]> = mesh.cell(c).iter().map(|&v| mesh.coords[v]).collect();
            if (0..dim).any(|k| xv.iter().all(|p| p[k] < x[k] - tol) || xv.iter().all(|p| p[k] > x[k] + tol)) {
                continue;
            }
            let mut xi = centre;
            let mut converged = false;
            for _ in 0..NEWTON_STEPS {
                cell.geometry_basis(xi, &mut vals, &mut grads);
                let (mut r, mut j) = ([0.0; 3], [[0.0; 3]; 3]);
                for (a, p) in xv.iter().enumerate() {
                    for k in 0..dim {
                        r[k] += vals[a] * p[k];
                        for b in 0..dim {
                            j[k][b] += p[k] * grads[a][b];
                        }
                    }
                }
                (0..dim).for_each(|k| r[k] -= x[k]);
                let Ok((inv, _)) = inverse_jacobian(&j, dim) else { break };
                let mut step = 0.0f64;
                for a in 0..dim {
                    let d: f64 = (0..dim).map(|b| inv[a][b] * r[b]).sum();
                    xi[a] -= d;
                    step = step.max(d.abs());
                }
                if step < 1e-13 {
                    converged = true;
                    break;
                }
            }
            if converged && inside(cell, xi, 1e-9) {
                return Some((c, xi));
            }
        }
        None
    }

    /// `(node, weight)` pairs with u(x) = Σ weight · u[node] for a field of this space (per
    /// component: node `i` holds dofs `i·ncomp … i·ncomp + ncomp − 1`); `None` outside the mesh.
    pub fn point_weights(&self, x: [f64; 3]) -> Option<Vec<(usize, f64)>> {
        let (c, xi) = self.locate(x)?;
        let tab = self.element.tabulate(&[xi]);
        Some(self.dofmap.cell(c).iter().zip(&tab.values).enumerate().map(|(i, (&n, &w))| (n, w * self.dofmap.sign(c, i))).collect())
    }

    /// [`Self::point_weights`] of every point of a problem file's list `key` (found before any
    /// expensive work); a point outside the mesh is an error naming `key[j]`.
    pub fn points_weights(&self, points: &[[f64; 3]], key: &str) -> crate::Result<Vec<Vec<(usize, f64)>>> {
        points
            .iter()
            .enumerate()
            .map(|(j, &p)| self.point_weights(p).ok_or_else(|| crate::Error::config(format!("{key}[{j}]"), format!("{p:?} lies outside the mesh"))))
            .collect()
    }
}

/// Whether reference point `xi` lies in the reference cell (to `tol`).
fn inside(cell: crate::mesh::CellType, xi: [f64; 3], tol: f64) -> bool {
    let d = cell.dim();
    if cell.is_simplex() {
        xi[..d].iter().all(|&v| v >= -tol) && xi[..d].iter().sum::<f64>() <= 1.0 + tol
    } else {
        xi[..d].iter().all(|&v| v >= -tol && v <= 1.0 + tol)
    }
}

#[cfg(test)]
mod tests {
    use crate::mesh::{generate, CellType, Mesh};
    use crate::space::FunctionSpace;
    use std::sync::Arc;

    fn mesh(cell: CellType) -> Mesh {
        if cell.dim() == 3 {
            generate::box_mesh(3, 4, 2, [0.0; 3], [1.0, 2.0, 0.5], cell).unwrap()
        } else {
            generate::rectangle(3, 4, [0.0, 0.0], [1.0, 2.0], cell).unwrap()
        }
    }

    const POINTS: [[f64; 3]; 5] = [[0.31, 0.77, 0.12], [0.5, 1.0, 0.25], [0.0, 0.0, 0.0], [1.0, 2.0, 0.5], [0.93, 0.05, 0.44]];

    #[test]
    fn point_weights_reproduce_fields_the_space_holds_exactly() {
        for (cell, degree) in [(CellType::Tetrahedron, 1), (CellType::Tetrahedron, 2), (CellType::Hexahedron, 1), (CellType::Hexahedron, 2), (CellType::Triangle, 2), (CellType::Quadrilateral, 1)] {
            let s = FunctionSpace::lagrange(Arc::new(mesh(cell)), degree, 1).unwrap();
            let f = |x: [f64; 3]| 1.0 + 2.0 * x[0] - x[1] + 0.5 * x[2] + if degree > 1 { 0.3 * x[0] * x[0] - 0.2 * x[1] * x[2] } else { 0.0 };
            let u = s.interpolate(|x, v| v[0] = f(x));
            for x in POINTS {
                let x = if cell.dim() == 2 { [x[0], x[1], 0.0] } else { x };
                let w = s.point_weights(x).unwrap_or_else(|| panic!("{cell:?}: {x:?} not found"));
                let v: f64 = w.iter().map(|&(n, a)| a * u[n]).sum();
                assert!((v - f(x)).abs() < 1e-10, "{cell:?} degree {degree} at {x:?}: {v} against {}", f(x));
            }
            assert!(s.point_weights([5.0, 0.0, 0.0]).is_none(), "outside");
        }
    }

    #[test]
    fn points_are_found_in_distorted_hexahedra() {
        let mut m = mesh(CellType::Hexahedron);
        let (lo, hi) = m.bounding_box();
        for p in &mut m.coords {
            if (0..3).all(|k| p[k] > lo[k] + 1e-12 && p[k] < hi[k] - 1e-12) {
                p[0] += 0.07 * (3.0 * p[1]).sin();
                p[2] += 0.03 * (5.0 * p[0]).cos();
            }
        }
        let s = FunctionSpace::lagrange(Arc::new(m), 1, 1).unwrap();
        let mesh = &*s.mesh;
        for x in POINTS {
            let (c, xi) = s.locate(x).unwrap_or_else(|| panic!("{x:?} not found"));
            let (mut v, mut g) = (vec![0.0; 8], vec![[0.0; 3]; 8]);
            mesh.cell_type.geometry_basis(xi, &mut v, &mut g);
            let back: Vec<f64> = (0..3).map(|k| mesh.cell(c).iter().zip(&v).map(|(&n, w)| w * mesh.coords[n][k]).sum()).collect();
            assert!((0..3).all(|k| (back[k] - x[k]).abs() < 1e-10), "{x:?} maps back to {back:?}");
            let w = s.point_weights(x).unwrap();
            assert!((w.iter().map(|p| p.1).sum::<f64>() - 1.0).abs() < 1e-12, "partition of unity");
        }
    }
}
