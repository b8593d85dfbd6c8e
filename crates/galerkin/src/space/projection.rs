//! Interpolation into modal spaces (hierarchical bases), whose dofs are not point values:
//! projection-based interpolation entity by entity, as in the p-version. Vertex dofs take the
//! function's values; then each edge, face and interior takes the L2 projection, over that entity,
//! of what the lower-dimensional dofs leave. Shared entities see the same data from every cell, so
//! the result is one conforming function, and it is exact on the space (a function of the space
//! is reproduced to round-off).
use super::dofmap::local_entities;
use super::FunctionSpace;
use crate::fe::gauss_legendre;
use faer::linalg::solvers::Solve;
use rayon::prelude::*;

/// Reference points and weights (reference measure) of a Gauss rule on the entity with reference
/// vertices `rv`: an edge `[a, b]`, a quadrilateral face `[v0, v1, v2, v3]` or the whole cell.
fn entity_rule(rv: &[[f64; 3]], n: usize) -> (Vec<[f64; 3]>, Vec<f64>) {
    let (x, w) = gauss_legendre(n);
    let at = |o: [f64; 3], axes: &[[f64; 3]], s: &[f64]| {
        let mut p = o;
        for (a, &t) in axes.iter().zip(s) {
            for k in 0..3 {
                p[k] += t * (a[k] - o[k]);
            }
        }
        p
    };
    let mut pts = Vec::new();
    let mut wts = Vec::new();
    match rv.len() {
        2 => {
            for i in 0..n {
                pts.push(at(rv[0], &[rv[1]], &[x[i]]));
                wts.push(w[i]);
            }
        }
        4 => {
            for j in 0..n {
                for i in 0..n {
                    pts.push(at(rv[0], &[rv[1], rv[3]], &[x[i], x[j]]));
                    wts.push(w[i] * w[j]);
                }
            }
        }
        _ => {
            for k in 0..n {
                for j in 0..n {
                    for i in 0..n {
                        pts.push([x[i], x[j], x[k]]);
                        wts.push(w[i] * w[j] * w[k]);
                    }
                }
            }
        }
    }
    (pts, wts)
}

impl FunctionSpace {
    /// Projection-based interpolation of `f` (`ncomp` values at a point) into a modal space, on
    /// `cells` (the dofs of other cells stay zero).
    pub(crate) fn project_modal(&self, f: &(impl Fn([f64; 3], &mut [f64]) + Sync), cells: &[usize]) -> Vec<f64> {
        let (n, dm, el) = (self.ncomp, &self.dofmap, &*self.element);
        let cell = self.mesh.cell_type;
        let rv = cell.reference_vertices();
        let nloc = el.ndofs();
        let ent = el.entity_dofs();
        let npts = el.degree() + 2;
        // Per entity dimension ≥ 1: (entity dofs, rule points, weights, tabulation at the points).
        let mut stages = Vec::new();
        for d in 1..ent.len() {
            for (e, verts) in local_entities(cell, d).iter().enumerate() {
                let dofs = match ent[d].get(e) {
                    Some(v) if !v.is_empty() => v.clone(),
                    _ => continue,
                };
                let corners: Vec<[f64; 3]> = verts.iter().map(|&v| rv[v]).collect();
                let (pts, wts) = entity_rule(&corners, npts);
                let tab = el.tabulate(&pts);
                stages.push((dofs, pts, wts, tab));
            }
        }
        let frozen: std::collections::HashSet<usize> = self.frozen.iter().copied().collect();
        let local: Vec<Vec<f64>> = cells
            .par_iter()
            .map(|&c| {
                let cell = dm.cell(c);
                let mut u = vec![0.0; nloc * n];
                let mut buf = vec![0.0; n];
                for (v, dofs) in ent[0].iter().enumerate() {
                    f(self.mesh.map_point(c, rv[v]).0, &mut buf);
                    u[dofs[0] * n..dofs[0] * n + n].copy_from_slice(&buf);
                }
                for (all, pts, wts, tab) in &stages {
                    // A variable-degree space projects onto the modes it keeps.
                    let dofs: Vec<usize> = all.iter().copied().filter(|&i| !frozen.contains(&cell[i])).collect();
                    let m = dofs.len();
                    if m == 0 {
                        continue;
                    }
                    let gram = faer::Mat::from_fn(m, m, |a, b| {
                        (0..pts.len()).map(|q| wts[q] * tab.values[q * nloc + dofs[a]] * tab.values[q * nloc + dofs[b]]).sum::<f64>()
                    });
                    let mut rhs = faer::Mat::<f64>::zeros(m, n);
                    for (q, &xi) in pts.iter().enumerate() {
                        f(self.mesh.map_point(c, xi).0, &mut buf);
                        let row = &tab.values[q * nloc..(q + 1) * nloc];
                        for k in 0..n {
                            let uh: f64 = (0..nloc).map(|i| u[i * n + k] * row[i]).sum();
                            let r = wts[q] * (buf[k] - uh);
                            for (a, &i) in dofs.iter().enumerate() {
                                rhs[(a, k)] += r * row[i];
                            }
                        }
                    }
                    if let Ok(llt) = gram.llt(faer::Side::Lower) {
                        let x = llt.solve(&rhs);
                        for (a, &i) in dofs.iter().enumerate() {
                            for k in 0..n {
                                u[i * n + k] = x[(a, k)];
                            }
                        }
                    }
                }
                u
            })
            .collect();
        let mut out = vec![0.0; self.ndofs()];
        for (&c, u) in cells.iter().zip(&local) {
            for (i, &node) in dm.cell(c).iter().enumerate() {
                let s = dm.sign(c, i);
                for k in 0..n {
                    out[node * n + k] = s * u[i * n + k];
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::fe::{HierarchicalHex, ModeSet};
    use crate::mesh::{generate, CellType};
    use crate::space::FunctionSpace;
    use std::sync::Arc;

    /// A polynomial of the space is reproduced exactly (the H1 error is measured against finite
    /// differences of the exact field, hence its looser bound), across cells whose shared edges and faces
    /// are seen in different orientations (a twisted vertex numbering).
    #[test]
    fn projection_reproduces_the_space_on_a_shuffled_mesh() {
        let mesh = generate::box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap();
        let mesh = Arc::new(generate::rotate_hexahedra(&mesh, 17).unwrap());
        for (p, modes) in [(3, ModeSet::Trunk), (4, ModeSet::Trunk), (3, ModeSet::Full)] {
            let el = Arc::new(HierarchicalHex::new(p, modes).unwrap());
            let space = FunctionSpace::new(mesh.clone(), el, 2).unwrap();
            let f = move |x: [f64; 3], o: &mut [f64]| {
                o[0] = x[0].powi(3) - 2.0 * x[1] * x[2] + x[2].powi(2) * x[0];
                o[1] = 1.0 + x[1].powi(p as i32) - x[0] * x[1] * x[2];
            };
            let u = space.interpolate(f);
            let exact: crate::operator::VectorFn = Arc::new(move |x, o| f(x, o));
            let err = crate::operator::norms::error_norms(&space, &u, &exact).unwrap();
            assert!(err.l2 < 1e-12 && err.h1_semi < 1e-8, "p = {p} {modes:?}: {err:?}");
        }
    }
}
