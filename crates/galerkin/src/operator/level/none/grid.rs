//! The `none` level on a uniform lattice (the seed's fixed-grid element-by-element method): every
//! cell of [`crate::mesh::generate::box_mesh`] is a translate of one of its block's template cells,
//! so with coefficients constant per cell the element matrix of a cell is that of its (template
//! cell, material) pair. Stored: one material index (a byte) per cell and a table of
//! `materials × template cells` element matrices; connectivity and geometry are implicit in the
//! lattice. The apply runs one thread per node (a gather over the ≤ 8 blocks around it): no
//! atomics, no coloring, deterministic, and every output written once, coalesced.
use crate::mesh::lattice::Lattice;
use crate::operator::integrate::Scratch;
use crate::operator::level::{CellMaterials, LevelInput};
use crate::operator::passive::PassiveField;
use crate::Result;
use rayon::prelude::*;
use std::collections::HashMap;

/// Most distinct materials (coefficient tuples) the byte per cell can name.
pub const MAX_MATERIALS: usize = 255;

/// `node_material` of a node whose cells are not all of one material (or on the boundary).
pub const MIXED: u8 = u8::MAX;

/// What the lattice operator keeps, shared by the CPU apply and the GPU upload.
#[derive(Clone, Debug)]
pub struct GridData {
    pub lattice: Lattice,
    /// Vertices per cell.
    pub nv: usize,
    /// Material index per cell (cells in mesh order).
    pub material: Vec<u8>,
    pub nmat: usize,
    /// `table[((m·per + t)·nv + i)·nv + j]`: the element matrix of template cell t in material m.
    pub table: Vec<f64>,
    /// `corner[c·per + t]`: the local vertex of cell t at block corner c, or −1.
    pub corner: Vec<i32>,
    /// `tpl[t·nv + j]`: the block corner of local vertex j of cell t.
    pub tpl: Vec<i32>,
    /// `stencils[m·27 + q]`: the row of an interior node all of whose cells are of material m, by
    /// neighbour slot q = (dx+1) + 3(dy+1) + 9(dz+1) — the fast path of the apply, 15 (tetrahedra)
    /// or 27 (hexahedra) products instead of a gather over 24 or 8 cells. Followed (where the
    /// codes fit a byte) by the side stencils of [`GridData::march_codes`] at `nmat·(1 + f) + m`.
    pub stencils: Vec<f64>,
    /// Per node: the material of all its cells when it is interior and they share one (the
    /// stencil fast path), else [`MIXED`]. Derived from `material` once per build or update, so
    /// the apply reads one byte per node instead of the 24 (or 8) of its cells.
    pub node_material: Vec<u8>,
    /// The passive field values of each material (bits), in the order of `table`.
    pub keys: Vec<Vec<u64>>,
    /// Materials of the physics (`nmat` is this times `faces.len()`): a table material `e` is
    /// physics material `e % base_nmat` with the box-side face terms of the sides in
    /// `faces[e / base_nmat]` (a bit per side, 2·axis + high) added to its cells' matrices
    /// ([`GridData::from_box_with_faces`]: Robin's `h M_face` inside the lattice). `faces[0] = 0`.
    pub base_nmat: usize,
    pub faces: Vec<u8>,
}

/// Whether the side-stencil codes `nmat·(1 + f) + m` (f < 6) fit below [`MIXED`].
fn face_codes_fit(nmat: usize) -> bool {
    7 * nmat <= MIXED as usize
}

/// The index tables of a block template (lists of block corners per cell): `corner[c·per + t]`,
/// the local vertex of cell t at block corner c (−1 if none), and `tpl[t·nv + j]`, the block
/// corner of local vertex j of cell t. The GPU kernel gets the same tables compiled in.
pub fn index_tables(template: &[Vec<usize>]) -> (Vec<i32>, Vec<i32>) {
    let per = template.len();
    let mut corner = vec![-1; 8 * per];
    let mut tpl = Vec::with_capacity(per * template.first().map_or(0, Vec::len));
    for (t, cell) in template.iter().enumerate() {
        for (j, &c) in cell.iter().enumerate() {
            corner[c * per + t] = j as i32;
            tpl.push(c as i32);
        }
    }
    (corner, tpl)
}

/// The neighbour slot (0..27) of block corner `cj` seen from a node at block corner `c`.
pub fn slot(c: usize, cj: usize) -> usize {
    let d = |k: usize| ((cj >> k) & 1) + 1 - ((c >> k) & 1);
    d(0) + 3 * d(1) + 9 * d(2)
}

impl GridData {
    /// The lattice form of `input`, or `None` where it does not apply: not degree 1 scalar, not a
    /// recognised lattice, a coefficient varying inside cells, or more than [`MAX_MATERIALS`]
    /// distinct coefficient tuples.
    pub fn try_new(input: &LevelInput) -> Result<Option<GridData>> {
        let integ = input.integ;
        let space = integ.space;
        let mesh = &*space.mesh;
        let nv = mesh.cell_type.num_vertices();
        if space.element.degree() != 1 || space.ncomp != 1 || space.dofmap.nodes_per_cell != nv || !integ.passive.per_cell() {
            return Ok(None);
        }
        let Some(lattice) = Lattice::recognize(mesh) else { return Ok(None) };
        let per = lattice.per_block();
        // Materials: distinct tuples of the per-cell coefficient values, numbered in order of
        // first appearance.
        let fields = &integ.passive.fields;
        let value = |f: &PassiveField, c: usize| match f {
            PassiveField::Constant(v) => *v,
            PassiveField::PerCell(v) => v[c],
            PassiveField::PerPoint(_) => f64::NAN,
        };
        let ncells = mesh.num_cells();
        let mut ids: HashMap<Vec<u64>, u8> = HashMap::new();
        let mut reps: Vec<usize> = Vec::new();
        let mut keys: Vec<Vec<u64>> = Vec::new();
        let mut material = Vec::with_capacity(ncells);
        for c in 0..ncells {
            let key: Vec<u64> = fields.iter().map(|f| value(f, c).to_bits()).collect();
            let next = ids.len();
            let id = match ids.get(&key) {
                Some(&id) => id,
                None if next < MAX_MATERIALS => {
                    ids.insert(key.clone(), next as u8);
                    keys.push(key);
                    reps.push(c);
                    next as u8
                }
                None => return Ok(None),
            };
            material.push(id);
        }
        let nmat = reps.len();
        // One representative cell per (material, template cell): the first cell of that pair.
        let mut rep = vec![usize::MAX; nmat * per];
        for (c, &m) in material.iter().enumerate() {
            let slot = &mut rep[m as usize * per + c % per];
            if *slot == usize::MAX {
                *slot = c;
            }
        }
        let mut table = vec![0.0; nmat * per * nv * nv];
        table.par_chunks_mut(nv * nv).zip(rep.par_iter()).try_for_each_init(Scratch::default, |s, (ke, &c)| {
            if c == usize::MAX { Ok(()) } else { integ.volume_matrix(c, s, ke) }
        })?;
        Ok(Some(GridData::from_parts(lattice, nv, material, nmat, table, keys)))
    }

    /// The lattice operator from its stored parts (the material byte of every cell in block order,
    /// the `nmat × per` element matrices and each material's key): the index tables, the uniform
    /// stencils and the node codes derived. Shared by the mesh-recognised and the direct builds
    /// ([`super::direct`]).
    pub fn from_parts(lattice: Lattice, nv: usize, material: Vec<u8>, nmat: usize, table: Vec<f64>, keys: Vec<Vec<u64>>) -> GridData {
        Self::from_parts_with_faces(lattice, nv, material, nmat, table, keys, vec![0])
    }

    /// [`GridData::from_parts`] of a table whose materials carry box-side face terms: `nmat` =
    /// physics materials × `faces.len()` (see [`GridData::faces`]).
    pub fn from_parts_with_faces(lattice: Lattice, nv: usize, material: Vec<u8>, nmat: usize, table: Vec<f64>, keys: Vec<Vec<u64>>, faces: Vec<u8>) -> GridData {
        let per = lattice.per_block();
        let base_nmat = nmat / faces.len().max(1);
        let (corner, tpl) = index_tables(&lattice.template);
        // Interior stencils, then (where the codes fit in a byte) those of a node on side f
        // (2·axis + high) with every cell of material m, at code nmat·(1 + f) + m: only the blocks
        // on the lattice's side of it (corner bit of the axis 0 on the low side, 1 on the high).
        let kinds = if face_codes_fit(nmat) { 7 } else { 1 };
        let mut stencils = vec![0.0; kinds * nmat * 27];
        for (code, st) in stencils.chunks_mut(27).enumerate() {
            let (m, kind) = (code % nmat, code / nmat);
            for c in 0..8 {
                if kind > 0 && ((c >> ((kind - 1) / 2)) & 1) != (kind - 1) % 2 {
                    continue;
                }
                for t in 0..per {
                    let li = corner[c * per + t];
                    if li < 0 {
                        continue;
                    }
                    let row = &table[((m * per + t) * nv + li as usize) * nv..][..nv];
                    for (j, a) in row.iter().enumerate() {
                        st[slot(c, tpl[t * nv + j] as usize)] += a;
                    }
                }
            }
        }
        let mut g = GridData { lattice, nv, material, nmat, table, corner, tpl, stencils, node_material: Vec::new(), keys, base_nmat, faces };
        g.node_material = g.node_materials();
        g
    }

    fn node_materials(&self) -> Vec<u8> {
        (0..self.ndofs()).into_par_iter().map(|v| self.uniform_material(v).map_or(MIXED, |m| m as u8)).collect()
    }

    /// The node codes of the Dirichlet-masked operator (`free[v]`: node v is not fixed):
    /// `node_material` with every node that is fixed or has a fixed neighbour sent to the gather
    /// ([`MIXED`]), so the uniform-stencil path needs no mask.
    pub fn masked_node_material(&self, free: &[bool]) -> Vec<u8> {
        self.masked_codes(&self.node_material, free)
    }

    /// [`GridData::masked_node_material`] of any codes (`base`: `node_material` or [`GridData::march_codes`]).
    pub fn masked_codes(&self, base: &[u8], free: &[bool]) -> Vec<u8> {
        let p = self.lattice.points();
        (0..self.ndofs())
            .into_par_iter()
            .map(|v| {
                let m = base[v];
                if m == MIXED {
                    return MIXED;
                }
                let ijk = [v % p[0], (v / p[0]) % p[1], v / (p[0] * p[1])];
                // Every neighbour on the lattice (an interior node has all 26).
                let r = |d: usize| ijk[d].saturating_sub(1)..=(ijk[d] + 1).min(p[d] - 1);
                for k in r(2) {
                    for j in r(1) {
                        for i in r(0) {
                            if !free[i + p[0] * (j + p[1] * k)] {
                                return MIXED;
                            }
                        }
                    }
                }
                m
            })
            .collect()
    }

    /// The node codes of the GPU's marching apply: `node_material` inside, and on the boundary
    /// the side stencil's code `nmat·(1 + f) + m` of a node on exactly one side f (2·axis + high)
    /// whose cells share material m ([`MIXED`] on edges, corners, mixed nodes, or where the
    /// codes do not fit a byte). The march reads neighbours from shared planes whose entries off
    /// the lattice are zero, so the side stencils' zero weights outside need no test; the CPU and
    /// the tile kernel (neighbours from global memory) keep `node_material`.
    pub fn march_codes(&self) -> Vec<u8> {
        if !face_codes_fit(self.nmat) {
            return self.node_material.clone();
        }
        let [nx, ny, nz] = self.lattice.n;
        let p = self.lattice.points();
        let per = self.lattice.per_block();
        (0..self.ndofs())
            .into_par_iter()
            .with_min_len(4096)
            .map(|v| {
                let ijk = [v % p[0], (v / p[0]) % p[1], v / (p[0] * p[1])];
                let sides: Vec<usize> = (0..3).filter_map(|d| if ijk[d] == 0 { Some(2 * d) } else if ijk[d] == p[d] - 1 { Some(2 * d + 1) } else { None }).collect();
                match sides.as_slice() {
                    [] => return self.node_material[v],
                    [_] => {}
                    _ => return MIXED,
                }
                let mut m0 = None;
                for c in 0..8usize {
                    let off = [c & 1, (c >> 1) & 1, c >> 2];
                    if (0..3).any(|d| ijk[d] < off[d] || ijk[d] - off[d] >= [nx, ny, nz][d]) {
                        continue;
                    }
                    let block = (ijk[0] - off[0]) + nx * ((ijk[1] - off[1]) + ny * (ijk[2] - off[2]));
                    for t in 0..per {
                        if self.corner[c * per + t] < 0 {
                            continue;
                        }
                        let Some(m) = self.reduced(self.material[block * per + t], 1u8 << sides[0]) else { return MIXED };
                        match m0 {
                            None => m0 = Some(m),
                            Some(x) if x != m => return MIXED,
                            _ => {}
                        }
                    }
                }
                m0.map_or(MIXED, |m| (self.nmat * (1 + sides[0]) + m as usize) as u8)
            })
            .collect()
    }

    /// Takes the cell materials `m` when every material of it is one of the table's (same field
    /// values, bit for bit): only the material bytes change, no integration. `false`: unchanged.
    pub fn relabel(&mut self, m: &CellMaterials) -> bool {
        if m.index.len() != self.material.len() || self.faces.len() > 1 {
            return false;
        }
        let ids: Option<Vec<u8>> = m
            .values
            .iter()
            .map(|v| {
                let key: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
                self.keys.iter().position(|k| *k == key).map(|i| i as u8)
            })
            .collect();
        let Some(ids) = ids else { return false };
        if m.index.iter().any(|&i| i as usize >= ids.len()) {
            return false;
        }
        self.material.par_iter_mut().zip(m.index.par_iter()).with_min_len(4096).for_each(|(c, &i)| *c = ids[i as usize]);
        self.node_material = self.node_materials();
        true
    }

    pub fn ndofs(&self) -> usize {
        self.lattice.points().iter().product()
    }

    /// Table material `e` as seen from a node on the sides `sides` (bits): the physics material
    /// with only those sides' face terms (a node's row of a cell holds the face terms of the sides
    /// it lies on, nothing else), so nodes whose cells differ only in faces elsewhere stay on the
    /// stencil path. `None` where that combination is not in the table.
    fn reduced(&self, e: u8, sides: u8) -> Option<u8> {
        if self.faces.len() <= 1 {
            return Some(e);
        }
        let (m, f) = (e as usize % self.base_nmat, self.faces[e as usize / self.base_nmat] & sides);
        self.faces.iter().position(|&x| x == f).map(|ci| (m + self.base_nmat * ci) as u8)
    }

    /// Bytes kept: the material bytes (per cell and per node), the table and the uniform stencils.
    pub fn storage_bytes(&self) -> usize {
        self.material.len() + self.node_material.len() + (self.table.len() + self.stencils.len()) * 8
    }

    /// Calls `f(row, base)` for every (cell, local vertex) at node `v`: `row` is that vertex's row
    /// of the cell's matrix and `base` the vertex at corner 0 of the cell's block.
    #[inline(always)]
    fn around(&self, v: usize, mut f: impl FnMut(usize, &[f64], usize)) {
        let [nx, ny, nz] = self.lattice.n;
        let [px, py, _] = self.lattice.points();
        let (per, nv) = (self.lattice.per_block(), self.nv);
        let (i, j, k) = (v % px, (v / px) % py, v / (px * py));
        for c in 0..8 {
            let (a, b, d) = (c & 1, (c >> 1) & 1, c >> 2);
            if i < a || j < b || k < d || i - a >= nx || j - b >= ny || k - d >= nz {
                continue;
            }
            let (bi, bj, bk) = (i - a, j - b, k - d);
            let block = bi + nx * (bj + ny * bk);
            let base = bi + px * (bj + py * bk);
            for t in 0..per {
                let li = self.corner[c * per + t];
                if li < 0 {
                    continue;
                }
                let m = self.material[block * per + t] as usize;
                let at = ((m * per + t) * nv + li as usize) * nv;
                f(t, &self.table[at..at + nv], base);
            }
        }
    }

    /// `y = A x` on the CPU: one parallel task per x-line of nodes, the lattice's shape fixed at
    /// compile time so the loops over cells and vertices unroll.
    pub fn apply(&self, x: &[f64], y: &mut [f64]) {
        self.apply_with(x, y, None)
    }

    /// `y = M A M x + (I − M) x` with `M = diag(mask)` in one pass (the Dirichlet-masked operator).
    pub fn apply_masked(&self, x: &[f64], y: &mut [f64], mask: &[f64]) {
        self.apply_with(x, y, Some(mask))
    }

    fn apply_with(&self, x: &[f64], y: &mut [f64], mask: Option<&[f64]>) {
        match (self.lattice.per_block(), self.nv) {
            (6, 4) => self.apply_fixed::<6, 4>(x, y, mask),
            (1, 8) => self.apply_fixed::<1, 8>(x, y, mask),
            _ => self.apply_any(x, y, mask),
        }
    }

    fn apply_fixed<const PER: usize, const NV: usize>(&self, x: &[f64], y: &mut [f64], mask: Option<&[f64]>) {
        let xm = |n: usize| mask.map_or(x[n], |m| m[n] * x[n]);
        let finish = |v: usize, s: f64| mask.map_or(s, |m| m[v] * s + (1.0 - m[v]) * x[v]);
        let [nx, ny, nz] = self.lattice.n;
        let [px, py, _] = self.lattice.points();
        // Vertex offsets from a block's corner-0 vertex, and the local vertex of each (corner, cell).
        let off: [[usize; NV]; PER] = std::array::from_fn(|t| std::array::from_fn(|j| self.lattice.corner_vertex(0, self.tpl[t * NV + j] as usize)));
        let corner: [[i32; PER]; 8] = std::array::from_fn(|c| std::array::from_fn(|t| self.corner[c * PER + t]));
        let (table, material) = (&self.table, &self.material);
        // Fast path: the neighbour offsets of the uniform stencils' nonzero slots.
        let slots: Vec<(usize, isize)> = (0..27)
            .filter(|&q| self.stencils.chunks(27).any(|st| st[q] != 0.0))
            .map(|q| (q, (q % 3) as isize - 1 + px as isize * ((q / 3 % 3) as isize - 1) + (px * py) as isize * ((q / 9) as isize - 1)))
            .collect();
        y.par_chunks_mut(px).enumerate().for_each(|(line, yl)| {
            let (j, k) = (line % py, line / py);
            for (i, yv) in yl.iter_mut().enumerate() {
                let v = i + px * line;
                let m = self.node_material[v];
                if m != MIXED {
                    let st = &self.stencils[m as usize * 27..][..27];
                    *yv = finish(v, slots.iter().map(|&(q, o)| st[q] * xm((v as isize + o) as usize)).sum());
                    continue;
                }
                let mut s = 0.0;
                for (c, cc) in corner.iter().enumerate() {
                    let (a, b, d) = (c & 1, (c >> 1) & 1, c >> 2);
                    if i < a || j < b || k < d || i - a >= nx || j - b >= ny || k - d >= nz {
                        continue;
                    }
                    let (bi, bj, bk) = (i - a, j - b, k - d);
                    let block = (bi + nx * (bj + ny * bk)) * PER;
                    let base = bi + px * (bj + py * bk);
                    for t in 0..PER {
                        let li = cc[t];
                        if li < 0 {
                            continue;
                        }
                        let m = material[block + t] as usize;
                        let row = &table[((m * PER + t) * NV + li as usize) * NV..][..NV];
                        for jv in 0..NV {
                            s += row[jv] * xm(base + off[t][jv]);
                        }
                    }
                }
                *yv = finish(v, s);
            }
        });
    }

    /// The material of every cell around interior node `v` when they all share one.
    fn uniform_material(&self, v: usize) -> Option<usize> {
        let [nx, ny, nz] = self.lattice.n;
        let [px, py, _] = self.lattice.points();
        let (i, j, k) = (v % px, (v / px) % py, v / (px * py));
        if i == 0 || j == 0 || k == 0 || i >= nx || j >= ny || k >= nz {
            return None;
        }
        let per = self.lattice.per_block();
        let mut m0 = None;
        for c in 0..8 {
            let block = ((i - (c & 1)) + nx * ((j - ((c >> 1) & 1)) + ny * (k - (c >> 2)))) * per;
            for t in 0..per {
                if self.corner[c * per + t] < 0 {
                    continue;
                }
                let m = self.reduced(self.material[block + t], 0)?;
                match m0 {
                    None => m0 = Some(m),
                    Some(m0) if m0 != m => return None,
                    _ => {}
                }
            }
        }
        m0.map(usize::from)
    }

    fn apply_any(&self, x: &[f64], y: &mut [f64], mask: Option<&[f64]>) {
        let nv = self.nv;
        let xm = |n: usize| mask.map_or(x[n], |m| m[n] * x[n]);
        y.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, yv)| {
            let mut s = 0.0;
            self.around(v, |t, row, base| {
                for (j, a) in row.iter().enumerate() {
                    s += a * xm(self.lattice.corner_vertex(base, self.tpl[t * nv + j] as usize));
                }
            });
            *yv = mask.map_or(s, |m| m[v] * s + (1.0 - m[v]) * x[v]);
        });
    }

    /// The diagonal of `A`, without assembly.
    pub fn diagonal(&self) -> Vec<f64> {
        let nv = self.nv;
        let mut d = vec![0.0; self.ndofs()];
        d.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, dv)| {
            self.around(v, |t, row, base| {
                for (j, a) in row.iter().enumerate() {
                    if self.lattice.corner_vertex(base, self.tpl[t * nv + j] as usize) == v {
                        *dv += a;
                    }
                }
            });
        });
        d
    }
}

/// The lattice operator on the CPU.
pub struct CpuGrid(pub GridData);

impl crate::operator::level::LevelOperator<crate::backend::Cpu> for CpuGrid {
    fn apply(&self, _be: &crate::backend::Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        let n = self.0.ndofs();
        if x.len() != n || y.len() != n {
            return Err(crate::Error::dim("lattice operator vectors", n, if x.len() != n { x.len() } else { y.len() }));
        }
        self.0.apply(x, y);
        Ok(())
    }
    fn node_blocks(&self, _be: &crate::backend::Cpu) -> Result<Vec<f64>> {
        Ok(self.0.diagonal())
    }
    fn storage_bytes(&self) -> usize {
        self.0.storage_bytes()
    }
    fn includes_boundary(&self) -> bool {
        false
    }
    fn update(&mut self, _be: &crate::backend::Cpu, input: &LevelInput) -> Result<()> {
        self.0 = GridData::try_new(input)?.ok_or_else(|| crate::Error::invalid("the lattice operator's update no longer has per-cell coefficients on the lattice"))?;
        Ok(())
    }
    fn set_materials(&mut self, _be: &crate::backend::Cpu, m: &CellMaterials) -> Result<bool> {
        Ok(self.0.relabel(m))
    }
    fn apply_masked(&self, _be: &crate::backend::Cpu, x: &Vec<f64>, y: &mut Vec<f64>, mask: &Vec<f64>) -> Result<bool> {
        let n = self.0.ndofs();
        if x.len() != n || y.len() != n || mask.len() != n {
            return Err(crate::Error::dim("lattice operator masked vectors", n, [x.len(), y.len(), mask.len()].into_iter().find(|&l| l != n).unwrap_or(n)));
        }
        self.0.apply_masked(x, y, mask);
        Ok(true)
    }
}
