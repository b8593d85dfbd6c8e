//! The steady advection–reaction problem β·∇u + c u = f with inflow data u = g where β·n < 0, and
//! its discontinuous Lagrange space: dofs of cell c are `c·nloc .. (c+1)·nloc`, so element blocks
//! are contiguous rows and block Jacobi is the backend's node-block Jacobi with blocks of `nloc`.
use super::faces::{Faces, BOUNDARY};
use super::formula::Formula;
use crate::fe::{gauss_legendre, FiniteElement, LagrangeElement, QuadratureRule};
use crate::mesh::{CellType, Mesh};
use crate::{Error, Result};
use std::sync::Arc;

/// Highest polynomial degree (P3 / Q3).
pub const MAX_DEGREE: usize = 3;

/// The velocity β.
#[derive(Clone, Debug)]
pub enum Velocity {
    /// Components as functions of (x, y), with their divergence (symbolic).
    Field { x: Formula, y: Formula, div: Formula },
    /// One constant vector per cell (divergence-free inside cells); on an interior edge the normal
    /// velocity is the mean of the two cells' (single-valued, so the scheme stays conservative).
    PerCell(Vec<[f64; 2]>),
}

impl Velocity {
    /// From two formulas (the divergence derived here).
    pub fn field(x: Formula, y: Formula) -> Result<Velocity> {
        let div = Formula::plus(x.derivative(0)?, y.derivative(1)?);
        Ok(Velocity::Field { x, y, div })
    }
}

/// A whole problem: mesh, faces, degree, coefficients and inflow data.
#[derive(Clone, Debug)]
pub struct AdvectionProblem {
    pub mesh: Arc<Mesh>,
    pub faces: Faces,
    pub degree: usize,
    pub velocity: Velocity,
    pub reaction: Formula,
    pub source: Formula,
    /// Inflow data, indexed by [`AdvectionProblem::edge_data`].
    pub inflow: Vec<Formula>,
    /// Per (cell, local edge): the index into `inflow` of a boundary edge's data, −1 where there is
    /// none (an error if the flow enters there) and on interior edges.
    pub edge_data: Vec<i32>,
}

impl AdvectionProblem {
    /// `bc[k] = (boundary tag, data)`; `default_inflow` on every other boundary edge.
    pub fn new(
        mesh: Arc<Mesh>,
        degree: usize,
        velocity: Velocity,
        reaction: Formula,
        source: Formula,
        bc: Vec<(i32, Formula)>,
        default_inflow: Option<Formula>,
    ) -> Result<AdvectionProblem> {
        if degree > MAX_DEGREE {
            return Err(Error::config("space.degree", format!("DG advection supports degrees 0 to {MAX_DEGREE}, not {degree}")));
        }
        let faces = Faces::new(&mesh)?;
        if let Velocity::PerCell(v) = &velocity {
            if v.len() != mesh.num_cells() {
                return Err(Error::dim("per-cell velocity (cells)", mesh.num_cells(), v.len()));
            }
            if let Some(c) = v.iter().position(|b| !b[0].is_finite() || !b[1].is_finite()) {
                return Err(Error::invalid(format!("per-cell velocity of cell {c} is not finite")));
            }
        }
        let mut inflow: Vec<Formula> = bc.iter().map(|(_, f)| f.clone()).collect();
        let default = default_inflow.map(|f| {
            inflow.push(f);
            inflow.len() as i32 - 1
        });
        let edge_data = faces
            .neighbour
            .iter()
            .zip(&faces.info)
            .map(|(&m, &tag)| {
                if m != BOUNDARY {
                    return -1;
                }
                bc.iter().rposition(|(t, _)| *t == tag).map(|k| k as i32).or(default).unwrap_or(-1)
            })
            .collect();
        let p = AdvectionProblem { mesh, faces, degree, velocity, reaction, source, inflow, edge_data };
        p.check_inflow_data()?;
        Ok(p)
    }

    pub fn cell_type(&self) -> CellType {
        self.mesh.cell_type
    }

    /// Local dofs per cell.
    pub fn nloc(&self) -> usize {
        let k = self.degree;
        match self.cell_type() {
            CellType::Triangle => (k + 1) * (k + 2) / 2,
            _ => (k + 1) * (k + 1),
        }
    }

    pub fn ndofs(&self) -> usize {
        self.nloc() * self.mesh.num_cells()
    }

    /// The normal velocity β·n at point `x` of edge `lf` of cell `c` with outward unit normal `n`.
    pub fn normal_velocity(&self, c: usize, lf: usize, x: [f64; 2], n: [f64; 2]) -> f64 {
        match &self.velocity {
            Velocity::Field { x: bx, y: by, .. } => bx.eval(x) * n[0] + by.eval(x) * n[1],
            Velocity::PerCell(v) => {
                let m = self.faces.neighbour[c * self.faces.per_cell + lf];
                let b = if m == BOUNDARY { v[c] } else { [0.5 * (v[c][0] + v[m as usize][0]), 0.5 * (v[c][1] + v[m as usize][1])] };
                b[0] * n[0] + b[1] * n[1]
            }
        }
    }

    /// Every boundary edge where the flow enters (β·n < 0 at a quadrature point) must have data.
    fn check_inflow_data(&self) -> Result<()> {
        let f = self.faces.per_cell;
        let (s, _) = gauss_legendre(self.degree + 2);
        for (k, &m) in self.faces.neighbour.iter().enumerate() {
            if m != BOUNDARY || self.edge_data[k] >= 0 {
                continue;
            }
            let (c, lf) = (k / f, k % f);
            let e = edge_geometry(&self.mesh, c, lf);
            if s.iter().any(|&t| self.normal_velocity(c, lf, e.point(t), e.normal) < 0.0) {
                let tag = self.faces.info[k];
                return Err(Error::config(
                    "bc",
                    format!("the flow enters through boundary tag {tag} (cell {c}, edge {lf}) but no [[bc]] gives its inflow value and `physics.inflow` is not set"),
                ));
            }
        }
        Ok(())
    }
}

/// A straight edge of a cell: first vertex, tangent (to the second), length and outward normal.
#[derive(Clone, Copy, Debug)]
pub struct EdgeGeometry {
    pub a: [f64; 2],
    pub t: [f64; 2],
    pub length: f64,
    pub normal: [f64; 2],
}

impl EdgeGeometry {
    pub fn point(&self, s: f64) -> [f64; 2] {
        [self.a[0] + s * self.t[0], self.a[1] + s * self.t[1]]
    }
}

/// Edge `lf` of cell `c`; the normal points away from the cell's vertex centroid.
pub fn edge_geometry(mesh: &Mesh, c: usize, lf: usize) -> EdgeGeometry {
    let cv = mesh.cell(c);
    let [ia, ib] = mesh.cell_type.edges()[lf];
    let (a, b) = (mesh.coords[cv[ia]], mesh.coords[cv[ib]]);
    let t = [b[0] - a[0], b[1] - a[1]];
    let length = t[0].hypot(t[1]);
    let mut normal = [t[1] / length, -t[0] / length];
    let nv = cv.len() as f64;
    let centroid = cv.iter().fold([0.0; 2], |s, &v| [s[0] + mesh.coords[v][0] / nv, s[1] + mesh.coords[v][1] / nv]);
    let mid = [0.5 * (a[0] + b[0]) - centroid[0], 0.5 * (a[1] + b[1]) - centroid[1]];
    if normal[0] * mid[0] + normal[1] * mid[1] < 0.0 {
        normal = [-normal[0], -normal[1]];
    }
    EdgeGeometry { a: [a[0], a[1]], t, length, normal }
}

/// Reference tables of the discontinuous space: the basis at the cell rule's points and at the
/// edge Gauss points of every local edge, walked both ways.
#[derive(Clone, Debug)]
pub struct Tables {
    pub nloc: usize,
    pub cell_points: Vec<[f64; 3]>,
    pub cell_weights: Vec<f64>,
    /// `[q·nloc + i]`
    pub values: Vec<f64>,
    /// Reference gradients `[q·nloc + i]`.
    pub grads: Vec<[f64; 2]>,
    /// Edge parameters on [0, 1] and weights (summing to 1).
    pub edge_s: Vec<f64>,
    pub edge_w: Vec<f64>,
    /// `[((lf·2 + flip)·nq + q)·nloc + i]`: φ_i at parameter s_q (flip: 1 − s_q) of edge lf.
    pub edge_values: Vec<f64>,
}

impl Tables {
    /// Cell rule exact to degree `2k + 2` and `k + 2` Gauss points per edge (`extra` raises both,
    /// for error norms).
    pub fn new(cell: CellType, degree: usize, extra: usize) -> Result<Tables> {
        let rule = QuadratureRule::new(cell, 2 * degree + 2 + extra)?;
        let element = if degree == 0 { None } else { Some(LagrangeElement::new(cell, degree)?) };
        let nloc = element.as_ref().map_or(1, |e| e.ndofs());
        let tab = |pts: &[[f64; 3]]| -> (Vec<f64>, Vec<[f64; 2]>) {
            match &element {
                None => (vec![1.0; pts.len()], vec![[0.0; 2]; pts.len()]),
                Some(e) => {
                    let t = e.tabulate(pts);
                    (t.values, t.grads.iter().map(|g| [g[0], g[1]]).collect())
                }
            }
        };
        let (values, grads) = tab(&rule.points);
        let (edge_s, edge_w) = gauss_legendre(degree + 2 + extra / 2);
        let reference = cell.reference_vertices();
        let mut pts = Vec::new();
        for [ia, ib] in cell.edges() {
            let (a, b) = (reference[*ia], reference[*ib]);
            for flip in [false, true] {
                for &s in &edge_s {
                    let s = if flip { 1.0 - s } else { s };
                    pts.push([a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]), 0.0]);
                }
            }
        }
        let (edge_values, _) = tab(&pts);
        Ok(Tables { nloc, cell_points: rule.points, cell_weights: rule.weights, values, grads, edge_s, edge_w, edge_values })
    }

    /// φ_i at the cell's reference vertices, `[v·nloc + i]` (output).
    pub fn vertex_values(cell: CellType, degree: usize) -> Result<Vec<f64>> {
        let pts = cell.reference_vertices().to_vec();
        Ok(if degree == 0 { vec![1.0; pts.len()] } else { LagrangeElement::new(cell, degree)?.tabulate(&pts).values })
    }
}

/// The DG sparsity: the row block of cell c holds its own block and its edge neighbours' blocks,
/// columns ascending. `offset[c]` is where cell c's `nloc × width` values start.
#[derive(Clone, Debug)]
pub struct Pattern {
    pub offset: Vec<usize>,
}

impl Pattern {
    pub fn new(faces: &Faces, nloc: usize) -> Pattern {
        let n = faces.num_cells();
        let mut offset = Vec::with_capacity(n + 1);
        let mut at = 0usize;
        offset.push(0);
        for c in 0..n {
            at += nloc * nloc * (1 + faces.neighbours(c).count());
            offset.push(at);
        }
        Pattern { offset }
    }

    pub fn nnz(&self) -> usize {
        *self.offset.last().unwrap_or(&0)
    }
}

/// The position of cell `m` among `{c} ∪ neighbours(c)` sorted ascending (the column block).
pub fn block_position(faces: &Faces, c: usize, m: usize) -> usize {
    usize::from(c < m) + faces.neighbours(c).filter(|&o| o < m).count()
}
