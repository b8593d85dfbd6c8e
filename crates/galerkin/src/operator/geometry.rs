//! Geometric factors at a point: inverse Jacobian and determinant of the reference-to-physical
//! map, for cells of dimension 1, 2 or 3.
use crate::{Error, Result};

/// `det J` of the leading dim×dim block alone (load vectors need no inverse). Fails on a singular
/// map (degenerate cell).
#[inline]
pub fn jacobian_det(j: &[[f64; 3]; 3], dim: usize) -> Result<f64> {
    let det = match dim {
        1 => j[0][0],
        2 => j[0][0] * j[1][1] - j[0][1] * j[1][0],
        _ => {
            j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
                + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0])
        }
    };
    if det == 0.0 || !det.is_finite() {
        return Err(Error::invalid(format!("singular element map (det J = {det})")));
    }
    Ok(det)
}

/// `J⁻¹` (leading dim×dim block) and `det J`. Fails on a singular map (degenerate cell).
#[inline]
pub fn inverse_jacobian(j: &[[f64; 3]; 3], dim: usize) -> Result<([[f64; 3]; 3], f64)> {
    let mut inv = [[0.0; 3]; 3];
    let det = jacobian_det(j, dim)?;
    let r = 1.0 / det;
    match dim {
        1 => inv[0][0] = r,
        2 => {
            inv[0][0] = j[1][1] * r;
            inv[0][1] = -j[0][1] * r;
            inv[1][0] = -j[1][0] * r;
            inv[1][1] = j[0][0] * r;
        }
        _ => {
            inv[0][0] = (j[1][1] * j[2][2] - j[1][2] * j[2][1]) * r;
            inv[0][1] = (j[0][2] * j[2][1] - j[0][1] * j[2][2]) * r;
            inv[0][2] = (j[0][1] * j[1][2] - j[0][2] * j[1][1]) * r;
            inv[1][0] = (j[1][2] * j[2][0] - j[1][0] * j[2][2]) * r;
            inv[1][1] = (j[0][0] * j[2][2] - j[0][2] * j[2][0]) * r;
            inv[1][2] = (j[0][2] * j[1][0] - j[0][0] * j[1][2]) * r;
            inv[2][0] = (j[1][0] * j[2][1] - j[1][1] * j[2][0]) * r;
            inv[2][1] = (j[0][1] * j[2][0] - j[0][0] * j[2][1]) * r;
            inv[2][2] = (j[0][0] * j[1][1] - j[0][1] * j[1][0]) * r;
        }
    }
    Ok((inv, det))
}

/// Physical gradient from a reference gradient: `∇x φ = J⁻ᵀ ∇ξ φ`.
#[inline]
pub fn physical_gradient(inv: &[[f64; 3]; 3], gref: [f64; 3], dim: usize) -> [f64; 3] {
    let mut g = [0.0; 3];
    for (k, gk) in g.iter_mut().enumerate().take(dim) {
        for j in 0..dim {
            *gk += inv[j][k] * gref[j];
        }
    }
    g
}

/// Surface measure and unit normal of a facet at a point, from the cell Jacobian and the facet's
/// reference tangents (d−1 of them; none for the point facets of an interval). The normal is
/// oriented away from `inward`, a vector pointing into the cell.
pub fn facet_measure_normal(j: &[[f64; 3]; 3], tangents: &[[f64; 3]], dim: usize, inward: [f64; 3]) -> (f64, [f64; 3]) {
    let mul = |t: [f64; 3]| {
        let mut v = [0.0; 3];
        for (i, vi) in v.iter_mut().enumerate() {
            *vi = (0..3).map(|k| j[i][k] * t[k]).sum();
        }
        v
    };
    let (measure, mut n) = match dim {
        1 => (1.0, [1.0, 0.0, 0.0]),
        2 => {
            let t = mul(tangents[0]);
            let l = (t[0] * t[0] + t[1] * t[1]).sqrt();
            (l, [t[1] / l, -t[0] / l, 0.0])
        }
        _ => {
            let (a, b) = (mul(tangents[0]), mul(tangents[1]));
            let c = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
            let l = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
            (l, [c[0] / l, c[1] / l, c[2] / l])
        }
    };
    if n[0] * inward[0] + n[1] * inward[1] + n[2] * inward[2] > 0.0 {
        n = [-n[0], -n[1], -n[2]];
    }
    (measure, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_times_jacobian_is_identity() {
        let j = [[2.0, 0.3, -0.1], [0.1, 1.5, 0.2], [0.0, -0.4, 0.9]];
        for dim in 1..=3 {
            let (inv, det) = inverse_jacobian(&j, dim).unwrap();
            assert!(det.abs() > 0.1);
            for a in 0..dim {
                for b in 0..dim {
                    let s: f64 = (0..dim).map(|k| inv[a][k] * j[k][b]).sum();
                    assert!((s - if a == b { 1.0 } else { 0.0 }).abs() < 1e-14);
                }
            }
        }
        assert!(inverse_jacobian(&[[0.0; 3]; 3], 3).is_err());
    }

    #[test]
    fn facet_normal_points_outward() {
        let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        // Facet z = 0 of the unit cube, tangents along x and y; inward is +z.
        let (m, n) = facet_measure_normal(&id, &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 3, [0.0, 0.0, 1.0]);
        assert!((m - 1.0).abs() < 1e-15 && (n[2] + 1.0).abs() < 1e-15);
        let (m, n) = facet_measure_normal(&id, &[[0.0, 2.0, 0.0]], 2, [-1.0, 0.0, 0.0]);
        assert!((m - 2.0).abs() < 1e-15 && (n[0] - 1.0).abs() < 1e-15);
    }
}

/// The GPU kernels' geometry tables at `points`: the geometry basis gradients `gdn[NQ][NV][DIM]`
/// appended to `t`, and its values `gn[NQ][NV]` returned (for the kernels that map points and place
/// them after the weights).
pub fn append_geometry_tables(t: &mut Vec<f64>, cell: crate::mesh::CellType, points: &[[f64; 3]], dim: usize) -> Vec<f64> {
    let nv = cell.num_vertices();
    let (mut vals, mut grads) = (vec![0.0; nv], vec![[0.0; 3]; nv]);
    let mut gn = Vec::with_capacity(points.len() * nv);
    for p in points {
        cell.geometry_basis(*p, &mut vals, &mut grads);
        for g in &grads {
            t.extend_from_slice(&g[..dim]);
        }
        gn.extend_from_slice(&vals);
    }
    gn
}

/// The geometry basis (P1/Q1 on the cell's vertices) tabulated at fixed reference points, so the
/// hot loops map points and form Jacobians without re-evaluating shape functions.
#[derive(Clone, Debug)]
pub struct GeometryTab {
    nv: usize,
    values: Vec<f64>,
    grads: Vec<[f64; 3]>,
    /// Affine cells (simplices) have one Jacobian per cell.
    pub affine: bool,
}

impl GeometryTab {
    pub fn new(cell: crate::mesh::CellType, points: &[[f64; 3]]) -> Self {
        let nv = cell.num_vertices();
        let mut values = vec![0.0; points.len() * nv];
        let mut grads = vec![[0.0; 3]; points.len() * nv];
        for (q, p) in points.iter().enumerate() {
            cell.geometry_basis(*p, &mut values[q * nv..(q + 1) * nv], &mut grads[q * nv..(q + 1) * nv]);
        }
        GeometryTab { nv, values, grads, affine: cell.is_simplex() }
    }

    /// Physical point of reference point `q` in cell `c`.
    #[inline]
    pub fn point(&self, mesh: &crate::mesh::Mesh, c: usize, q: usize) -> [f64; 3] {
        let mut x = [0.0; 3];
        for (a, &v) in mesh.cell(c).iter().enumerate() {
            let (w, p) = (self.values[q * self.nv + a], mesh.coords[v]);
            x[0] += w * p[0];
            x[1] += w * p[1];
            x[2] += w * p[2];
        }
        x
    }

    /// The coordinates of cell `c`'s geometry vertices, gathered once for [`Self::jacobian_at`].
    #[inline]
    pub fn cell_coords(&self, mesh: &crate::mesh::Mesh, c: usize, xv: &mut Vec<[f64; 3]>) {
        xv.clear();
        xv.extend(mesh.cell(c).iter().map(|&v| mesh.coords[v]));
    }

    /// Physical point of reference point `q` of the cell with vertex coordinates `xv`.
    #[inline]
    pub fn point_at(&self, xv: &[[f64; 3]], q: usize) -> [f64; 3] {
        let mut x = [0.0; 3];
        for (p, &w) in xv.iter().zip(&self.values[q * self.nv..(q + 1) * self.nv]) {
            x[0] += w * p[0];
            x[1] += w * p[1];
            x[2] += w * p[2];
        }
        x
    }

    /// Jacobian at reference point `q` of the cell with vertex coordinates `xv`.
    #[inline]
    pub fn jacobian_at(&self, xv: &[[f64; 3]], q: usize) -> [[f64; 3]; 3] {
        let mut j = [[0.0; 3]; 3];
        for (p, g) in xv.iter().zip(&self.grads[q * self.nv..(q + 1) * self.nv]) {
            for i in 0..3 {
                for k in 0..3 {
                    j[i][k] += p[i] * g[k];
                }
            }
        }
        j
    }

    /// Jacobian `∂x_i/∂ξ_j` at reference point `q` of cell `c`.
    #[inline]
    pub fn jacobian(&self, mesh: &crate::mesh::Mesh, c: usize, q: usize) -> [[f64; 3]; 3] {
        let mut j = [[0.0; 3]; 3];
        for (a, &v) in mesh.cell(c).iter().enumerate() {
            let (g, p) = (self.grads[q * self.nv + a], mesh.coords[v]);
            for i in 0..3 {
                for k in 0..3 {
                    j[i][k] += p[i] * g[k];
                }
            }
        }
        j
    }
}
