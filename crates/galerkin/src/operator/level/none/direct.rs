//! The lattice operator straight from a box description — extent, blocks per axis, cell shape and
//! a material byte per cell — with no mesh and no dof map: at 5·10⁷ unknowns the unstructured box
//! (3·10⁸ tetrahedra, their connectivity, the dof map) costs tens of GB and minutes before the
//! lattice could be recognised in it, while the lattice operator itself is a byte per cell. The
//! element matrices are the exact P1 (Kuhn tetrahedra) and Q1 (box hexahedra) mass and stiffness
//! matrices of a block's template cells, scaled per material; cells, nodes and sides are numbered
//! as [`crate::mesh::generate::box_mesh`] numbers them, so the result is the operator the
//! mesh-recognised lattice ([`GridData::try_new`]) builds from that mesh.
use super::grid::{GridData, MAX_MATERIALS};
use crate::mesh::generate::block_template;
use crate::mesh::lattice::Lattice;
use crate::mesh::CellType;
use crate::{Error, Result};
use rayon::prelude::*;

/// A generated box: `n` blocks per axis over `[lo, hi]`, each block 6 Kuhn tetrahedra or one
/// hexahedron (the cells of `box_mesh`).
#[derive(Clone, Debug, PartialEq)]
pub struct LatticeBox {
    pub n: [usize; 3],
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    pub cell: CellType,
    template: Vec<Vec<usize>>,
}

/// The box's side names, as `box_mesh` tags them.
pub const SIDES: [&str; 6] = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];

impl LatticeBox {
    /// Checks the sizes (positive, indexable with the material bytes in memory), the extent
    /// (finite, non-empty) and the shape (tetrahedra or hexahedra).
    pub fn new(n: [usize; 3], lo: [f64; 3], hi: [f64; 3], cell: CellType) -> Result<LatticeBox> {
        if !matches!(cell, CellType::Tetrahedron | CellType::Hexahedron) {
            return Err(Error::Unsupported(format!("a lattice of {cell:?} cells (tetrahedra or hexahedra only)")));
        }
        for d in 0..3 {
            if n[d] == 0 {
                return Err(Error::invalid(format!("lattice box: blocks along axis {d} must be positive")));
            }
            if !(lo[d].is_finite() && hi[d].is_finite() && lo[d] < hi[d]) {
                return Err(Error::invalid(format!("lattice box: range [{}, {}] along axis {d} is empty, inverted or not finite", lo[d], hi[d])));
            }
        }
        let template = block_template(cell, 3)?;
        let too_big = || Error::OutOfMemory(format!("a lattice of {n:?} blocks has more nodes or cells than this machine can index"));
        let cells = n.iter().try_fold(template.len(), |a, &k| a.checked_mul(k)).ok_or_else(too_big)?;
        let nodes = n.iter().try_fold(1usize, |a, &k| a.checked_mul(k + 1)).ok_or_else(too_big)?;
        if cells > isize::MAX as usize / 2 || nodes > isize::MAX as usize / 64 {
            return Err(too_big());
        }
        Ok(LatticeBox { n, lo, hi, cell, template })
    }

    pub fn lattice(&self) -> Lattice {
        Lattice { n: self.n, template: self.template.clone() }
    }

    pub fn per_block(&self) -> usize {
        self.template.len()
    }

    pub fn points(&self) -> [usize; 3] {
        self.n.map(|k| k + 1)
    }

    pub fn ndofs(&self) -> usize {
        self.points().iter().product()
    }

    pub fn ncells(&self) -> usize {
        self.n.iter().product::<usize>() * self.per_block()
    }

    /// Block size along each axis.
    pub fn spacing(&self) -> [f64; 3] {
        std::array::from_fn(|d| (self.hi[d] - self.lo[d]) / self.n[d] as f64)
    }

    /// Node coordinate `i` along axis `d`, computed as `box_mesh` computes it.
    pub fn coord(&self, d: usize, i: usize) -> f64 {
        let t = i as f64 / self.n[d] as f64;
        (1.0 - t) * self.lo[d] + t * self.hi[d]
    }

    /// Coordinates of node `v` (x fastest).
    pub fn node(&self, v: usize) -> [f64; 3] {
        let [px, py, _] = self.points();
        [self.coord(0, v % px), self.coord(1, (v / px) % py), self.coord(2, v / (px * py))]
    }

    /// Centroid of cell `c` (block `c / per`, template cell `c % per`): the mean of its vertices.
    pub fn centroid(&self, c: usize) -> [f64; 3] {
        let per = self.per_block();
        let (b, t) = (c / per, c % per);
        let [nx, ny, _] = self.n;
        let ijk = [b % nx, (b / nx) % ny, b / (nx * ny)];
        let corners = &self.template[t];
        std::array::from_fn(|d| corners.iter().map(|&cn| self.coord(d, ijk[d] + ((cn >> d) & 1))).sum::<f64>() / corners.len() as f64)
    }

    /// The material byte of every cell from its centroid (in parallel; `f` may fail, naming why).
    pub fn cell_materials(&self, f: impl Fn([f64; 3]) -> Result<u8> + Sync) -> Result<Vec<u8>> {
        (0..self.ncells()).into_par_iter().with_min_len(4096).map(|c| f(self.centroid(c))).collect()
    }

    /// 1 on free nodes, 0 on the nodes of the named sides.
    pub fn free_mask(&self, sides: &[&str]) -> Result<Vec<f64>> {
        let mut fixed = [[false; 2]; 3];
        for s in sides {
            let k = SIDES.iter().position(|x| x == s).ok_or_else(|| Error::invalid(format!("lattice box: unknown side `{s}` (one of {})", SIDES.join(", "))))?;
            fixed[k / 2][k % 2] = true;
        }
        let p = self.points();
        Ok((0..self.ndofs())
            .into_par_iter()
            .with_min_len(4096)
            .map(|v| {
                let ijk = [v % p[0], (v / p[0]) % p[1], v / (p[0] * p[1])];
                let on = (0..3).any(|d| (fixed[d][0] && ijk[d] == 0) || (fixed[d][1] && ijk[d] == p[d] - 1));
                if on { 0.0 } else { 1.0 }
            })
            .collect())
    }

    /// The unit-coefficient mass and stiffness matrices of each template cell (`per × nv × nv`
    /// each, local vertices in the template's order).
    pub fn reference_matrices(&self) -> (Vec<f64>, Vec<f64>) {
        let h = self.spacing();
        let nv = self.template[0].len();
        let (mut mass, mut stiff) = (Vec::with_capacity(self.per_block() * nv * nv), Vec::with_capacity(self.per_block() * nv * nv));
        for cell in &self.template {
            let x: Vec<[f64; 3]> = cell.iter().map(|&c| std::array::from_fn(|d| ((c >> d) & 1) as f64 * h[d])).collect();
            match self.cell {
                CellType::Tetrahedron => tet_matrices(&x, &mut mass, &mut stiff),
                _ => hex_matrices(cell, h, &mut mass, &mut stiff),
            }
        }
        (mass, stiff)
    }
}

/// P1 on a tetrahedron: `M = |T|/20 (1 + δᵢⱼ)`, `K = |T| ∇φᵢ·∇φⱼ`.
fn tet_matrices(x: &[[f64; 3]], mass: &mut Vec<f64>, stiff: &mut Vec<f64>) {
    let e: [[f64; 3]; 3] = std::array::from_fn(|a| std::array::from_fn(|d| x[a + 1][d] - x[0][d]));
    // Rows of J⁻ᵀ... gradients of φ₁..φ₃ are the rows of the inverse of J = [e₁ e₂ e₃] (columns).
    let det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) + e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
    let cross = |a: [f64; 3], b: [f64; 3]| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    // ∇φ₁ = (e₂ × e₃)/det, ∇φ₂ = (e₃ × e₁)/det, ∇φ₃ = (e₁ × e₂)/det.
    let mut g = [[0.0; 3]; 4];
    for (a, (p, q)) in [(1, 2), (2, 0), (0, 1)].into_iter().enumerate() {
        g[a + 1] = cross(e[p], e[q]).map(|v| v / det);
    }
    g[0] = std::array::from_fn(|d| -(g[1][d] + g[2][d] + g[3][d]));
    let vol = det.abs() / 6.0;
    for i in 0..4 {
        for j in 0..4 {
            mass.push(vol / 20.0 * if i == j { 2.0 } else { 1.0 });
            stiff.push(vol * (0..3).map(|d| g[i][d] * g[j][d]).sum::<f64>());
        }
    }
}

/// Q1 on a box cell of sides `h`: tensor products of the 1D matrices `h/6 [2 1; 1 2]` and
/// `1/h [1 −1; −1 1]`; local vertex j sits at block corner `corners[j]`.
fn hex_matrices(corners: &[usize], h: [f64; 3], mass: &mut Vec<f64>, stiff: &mut Vec<f64>) {
    let m1 = |d: usize, a: usize, b: usize| h[d] / 6.0 * if a == b { 2.0 } else { 1.0 };
    let k1 = |d: usize, a: usize, b: usize| if a == b { 1.0 / h[d] } else { -1.0 / h[d] };
    for &ci in corners {
        for &cj in corners {
            let (a, b) = (|d: usize| (ci >> d) & 1, |d: usize| (cj >> d) & 1);
            let m: [f64; 3] = std::array::from_fn(|d| m1(d, a(d), b(d)));
            let k: [f64; 3] = std::array::from_fn(|d| k1(d, a(d), b(d)));
            mass.push(m[0] * m[1] * m[2]);
            stiff.push(k[0] * m[1] * m[2] + m[0] * k[1] * m[2] + m[0] * m[1] * k[2]);
        }
    }
}

impl GridData {
    /// The lattice operator of `a M + b K` on `bx` with `(a, b) = coefficients[material[c]]` in
    /// cell c (mass and conduction coefficients per material; cells in `box_mesh` order).
    pub fn from_box(bx: &LatticeBox, material: Vec<u8>, coefficients: &[[f64; 2]]) -> Result<GridData> {
        if material.len() != bx.ncells() {
            return Err(Error::dim("lattice box material bytes (one per cell)", bx.ncells(), material.len()));
        }
        let nmat = coefficients.len();
        if nmat == 0 || nmat > MAX_MATERIALS {
            return Err(Error::invalid(format!("lattice box: {nmat} materials (1 to {MAX_MATERIALS})")));
        }
        if let Some((m, c)) = coefficients.iter().enumerate().find(|(_, c)| !c.iter().all(|v| v.is_finite())) {
            return Err(Error::invalid(format!("lattice box: material {m} has coefficients {c:?}, not finite")));
        }
        if let Some(c) = material.par_iter().position_any(|&m| m as usize >= nmat) {
            return Err(Error::invalid(format!("lattice box: cell {c} has material {} of {nmat}", material[c])));
        }
        let (mass, stiff) = bx.reference_matrices();
        let table: Vec<f64> = coefficients.iter().flat_map(|&[a, b]| mass.iter().zip(&stiff).map(move |(m, k)| a * m + b * k)).collect();
        let keys = coefficients.iter().map(|c| c.iter().map(|v| v.to_bits()).collect()).collect();
        let nv = bx.template[0].len();
        Ok(GridData::from_parts(bx.lattice(), nv, material, nmat, table, keys))
    }

    /// [`GridData::from_box`] with `face[s]·∫ φᵢ φⱼ ds` added on box side s ([`SIDES`] order; 0:
    /// none) — Robin's `θ h M_face` inside the lattice: the cells of a block on such sides take a
    /// material of their own (physics material × the set of those sides the block touches,
    /// [`GridData::faces`]) whose element matrices hold the face mass of their faces on the
    /// sides, so every apply, the Jacobi diagonal and the side stencils include the face terms
    /// with nothing else stored. `None` where the materials this makes do not fit a byte (the
    /// caller keeps the face terms beside the lattice).
    pub fn from_box_with_faces(bx: &LatticeBox, material: Vec<u8>, coefficients: &[[f64; 2]], face: &[f64; 6]) -> Result<Option<GridData>> {
        if let Some(s) = face.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(format!("lattice box: the face coefficient of side `{}` is not finite", SIDES[s])));
        }
        let active: u8 = (0..6).filter(|&s| face[s] != 0.0).fold(0, |a, s| a | 1 << s);
        if active == 0 {
            return Self::from_box(bx, material, coefficients).map(Some);
        }
        let base = Self::from_box(bx, material, coefficients)?;
        let (nmat, per, nv) = (coefficients.len(), bx.per_block(), base.nv);
        // The side set of every block (the sides with face terms it touches).
        let [nx, ny, nz] = bx.n;
        let block_sides = |b: usize| -> u8 {
            let ijk = [b % nx, (b / nx) % ny, b / (nx * ny)];
            (0..3).fold(0u8, |a, d| a | u8::from(ijk[d] == 0) << (2 * d) | u8::from(ijk[d] == bx.n[d] - 1) << (2 * d + 1)) & active
        };
        // Combinations: none first, every single side (the side stencils' reduced materials), then
        // those of the blocks (edges, corners).
        let mut faces: Vec<u8> = std::iter::once(0).chain((0..6).filter(|&s| active >> s & 1 == 1).map(|s| 1u8 << s)).collect();
        for b in 0..nx * ny * nz {
            let ijk = [b % nx, (b / nx) % ny, b / (nx * ny)];
            if (0..3).all(|d| ijk[d] != 0 && ijk[d] != bx.n[d] - 1) {
                continue;
            }
            let f = block_sides(b);
            if !faces.contains(&f) {
                faces.push(f);
            }
        }
        if nmat * faces.len() > MAX_MATERIALS {
            return Ok(None);
        }
        let fm = bx.face_masses();
        let mut table = Vec::with_capacity(faces.len() * base.table.len());
        for &f in &faces {
            let mut t = base.table.clone();
            for m in 0..nmat {
                for c in 0..per {
                    let ke = &mut t[(m * per + c) * nv * nv..][..nv * nv];
                    for (s, w) in face.iter().enumerate() {
                        if f >> s & 1 == 1 {
                            ke.iter_mut().zip(&fm[s][c * nv * nv..][..nv * nv]).for_each(|(a, b)| *a += w * b);
                        }
                    }
                }
            }
            table.extend(t);
        }
        let index: Vec<u8> = {
            let combo = |f: u8| faces.iter().position(|&x| x == f).unwrap_or(0);
            let material = base.material;
            material.par_iter().enumerate().with_min_len(4096).map(|(c, &m)| (m as usize + nmat * combo(block_sides(c / per))) as u8).collect()
        };
        let keys = faces.iter().flat_map(|&f| base.keys.iter().map(move |k| k.iter().copied().chain([u64::from(f)]).collect())).collect();
        Ok(Some(GridData::from_parts_with_faces(bx.lattice(), nv, index, nmat * faces.len(), table, keys, faces)))
    }
}

impl LatticeBox {
    /// Per side ([`SIDES`] order), per template cell: its unit face mass `∫ φᵢ φⱼ ds` on that side
    /// (`nv × nv`, zero where the cell has no face there) — P1 on a triangle `A/12 (1 + δᵢⱼ)`, Q1
    /// on a rectangle the tensor product of `h/6 [2 1; 1 2]`.
    pub fn face_masses(&self) -> Vec<Vec<f64>> {
        let h = self.spacing();
        let nv = self.template[0].len();
        (0..6)
            .map(|s| {
                let (d, hi) = (s / 2, s % 2);
                let mut out = vec![0.0; self.per_block() * nv * nv];
                for (t, cell) in self.template.iter().enumerate() {
                    let on: Vec<usize> = (0..nv).filter(|&j| (cell[j] >> d) & 1 == hi).collect();
                    let ke = &mut out[t * nv * nv..][..nv * nv];
                    let x = |c: usize| -> [f64; 3] { std::array::from_fn(|a| ((c >> a) & 1) as f64 * h[a]) };
                    match (self.cell, on.len()) {
                        (CellType::Tetrahedron, 3) => {
                            let (a, b, c) = (x(cell[on[0]]), x(cell[on[1]]), x(cell[on[2]]));
                            let (u, v): ([f64; 3], [f64; 3]) = (std::array::from_fn(|k| b[k] - a[k]), std::array::from_fn(|k| c[k] - a[k]));
                            let n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
                            let area = 0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                            for &i in &on {
                                for &j in &on {
                                    ke[i * nv + j] = area / 12.0 * if i == j { 2.0 } else { 1.0 };
                                }
                            }
                        }
                        (CellType::Hexahedron, 4) => {
                            for &i in &on {
                                for &j in &on {
                                    ke[i * nv + j] = (0..3)
                                        .filter(|&a| a != d)
                                        .map(|a| h[a] / 6.0 * if (cell[i] >> a) & 1 == (cell[j] >> a) & 1 { 2.0 } else { 1.0 })
                                        .product();
                                }
                            }
                        }
                        _ => {}
                    }
                }
                out
            })
            .collect()
    }
}
