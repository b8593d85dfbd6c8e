//! Hierarchical H1 elements on hexahedra built from integrated Legendre polynomials (the p-version
//! of Szabó and Babuška): vertex functions, edge modes (p ≥ 2), face modes (p ≥ 4 in the trunk
//! space, p ≥ 2 in the full one) and interior modes (p ≥ 6, resp. p ≥ 2).
//!
//! In 1D on `t = 2x − 1 ∈ [−1, 1]` the functions are the two linears `(1 ∓ t)/2` and the bubbles
//! `L_k(t) = √((2k−1)/2) ∫₋₁ᵗ P_{k−1}` (k ≥ 2), which vanish at both ends and satisfy
//! `L_k(−t) = (−1)^k L_k(t)`. Every 3D function is a product of three of them:
//! - vertex `v`: the linears that are 1 at `v`;
//! - edge `[va, vb]`, mode k: `L_k(s)` with `s` running from `va` to `vb`, times the linears of
//!   `va` across the edge;
//! - face `[v0, v1, v2, v3]`, mode (i, j): `L_i(s₁) L_j(s₂)` with `s₁` from `v0` towards `v1` and
//!   `s₂` from `v0` towards `v3`, times the linear of `v0` across the face;
//! - interior (i, j, k): `L_i(t_x) L_j(t_y) L_k(t_z)`.
//!
//! The trunk (serendipity) space keeps face modes with i + j ≤ p and interior modes with
//! i + j + k ≤ p: 8, 20, 32, 50, 74 functions for p = 1…5. The full space keeps every mode up to p
//! per axis, `(p + 1)³` functions. Neighbouring cells see a shared edge or face in their own local
//! frame; [`FiniteElement::orient`] says how a cell's modes map to the entity's global frame (a
//! permutation and a sign per mode), which the dof map turns into the signed restriction.
use super::{FiniteElement, Tabulation};
use crate::mesh::CellType;
use crate::{Error, Result};

/// Highest degree of the hierarchical hexahedra.
pub const MAX_HIERARCHICAL_DEGREE: usize = 8;

/// Which modes a hierarchical element keeps (`[space] modes`, `bench --hex --modes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeSet {
    /// Serendipity (trunk) space: face modes i + j ≤ p, interior modes i + j + k ≤ p.
    #[default]
    Trunk,
    /// Full tensor-product space Q_p.
    Full,
}

impl std::str::FromStr for ModeSet {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self> {
        super::parse_name(s)
    }
}

/// One 1D factor of a basis function along one axis.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Factor {
    /// `(1 − t)/2` (1 at x = 0) or `(1 + t)/2` (1 at x = 1).
    Linear(u8),
    /// `L_k(±t)`: the bubble of degree k, `flip` when its parameter runs from x = 1 to x = 0.
    Bubble { k: u8, flip: bool },
}

/// Hierarchical hexahedron of degree `p` (trunk or full mode set).
#[derive(Clone, Debug)]
pub struct HierarchicalHex {
    degree: usize,
    modes: ModeSet,
    /// Per basis function, its factor along x, y and z.
    factors: Vec<[Factor; 3]>,
    entity_dofs: Vec<Vec<Vec<usize>>>,
    /// The (i, j) modes of a face, in the order of the face's dofs (the same list for all faces).
    face_modes: Vec<(usize, usize)>,
    /// `face_rank[i·(p+1) + j]`: position of mode (i, j) in `face_modes`.
    face_rank: Vec<usize>,
}

impl HierarchicalHex {
    pub fn new(degree: usize, modes: ModeSet) -> Result<Self> {
        if !(1..=MAX_HIERARCHICAL_DEGREE).contains(&degree) {
            return Err(Error::invalid(format!(
                "hierarchical hexahedra have degree 1 to {MAX_HIERARCHICAL_DEGREE}, got {degree}"
            )));
        }
        let p = degree;
        let verts = CellType::Hexahedron.reference_vertices();
        let corner = |v: usize| -> [u8; 3] { [verts[v][0] as u8, verts[v][1] as u8, verts[v][2] as u8] };
        let keep2 = |i: usize, j: usize| match modes {
            ModeSet::Trunk => i + j <= p,
            ModeSet::Full => true,
        };
        let keep3 = |i: usize, j: usize, k: usize| match modes {
            ModeSet::Trunk => i + j + k <= p,
            ModeSet::Full => true,
        };
        let face_modes: Vec<(usize, usize)> =
            (2..=p).flat_map(|j| (2..=p).map(move |i| (i, j))).filter(|&(i, j)| keep2(i, j)).collect();

        let mut factors = Vec::new();
        let mut entity_dofs = vec![Vec::new(); 4];
        for v in 0..8 {
            let c = corner(v);
            entity_dofs[0].push(vec![factors.len()]);
            factors.push([Factor::Linear(c[0]), Factor::Linear(c[1]), Factor::Linear(c[2])]);
        }
        for e in CellType::Hexahedron.edges() {
            let (a, b) = (corner(e[0]), corner(e[1]));
            let axis = (0..3).find(|&d| a[d] != b[d]).unwrap_or(0);
            let mut dofs = Vec::new();
            for k in 2..=p {
                let mut f = [Factor::Linear(a[0]), Factor::Linear(a[1]), Factor::Linear(a[2])];
                f[axis] = Factor::Bubble { k: k as u8, flip: a[axis] == 1 };
                dofs.push(factors.len());
                factors.push(f);
            }
            entity_dofs[1].push(dofs);
        }
        for face in CellType::Hexahedron.faces() {
            let (o, a1, a3) = (corner(face[0]), corner(face[1]), corner(face[3]));
            let ax1 = (0..3).find(|&d| o[d] != a1[d]).unwrap_or(0);
            let ax2 = (0..3).find(|&d| o[d] != a3[d]).unwrap_or(1);
            let mut dofs = Vec::new();
            for &(i, j) in &face_modes {
                let mut f = [Factor::Linear(o[0]), Factor::Linear(o[1]), Factor::Linear(o[2])];
                f[ax1] = Factor::Bubble { k: i as u8, flip: o[ax1] == 1 };
                f[ax2] = Factor::Bubble { k: j as u8, flip: o[ax2] == 1 };
                dofs.push(factors.len());
                factors.push(f);
            }
            entity_dofs[2].push(dofs);
        }
        let mut interior = Vec::new();
        for k in 2..=p {
            for j in 2..=p {
                for i in 2..=p {
                    if keep3(i, j, k) {
                        interior.push(factors.len());
                        let b = |m: usize| Factor::Bubble { k: m as u8, flip: false };
                        factors.push([b(i), b(j), b(k)]);
                    }
                }
            }
        }
        entity_dofs[3].push(interior);
        let mut face_rank = vec![0; (p + 1) * (p + 1)];
        for (r, &(i, j)) in face_modes.iter().enumerate() {
            face_rank[i * (p + 1) + j] = r;
        }
        Ok(HierarchicalHex { degree, modes, factors, entity_dofs, face_modes, face_rank })
    }

    pub fn modes(&self) -> ModeSet {
        self.modes
    }

    /// Where each function of `lower` (a degree no higher, the same modes) sits among this
    /// element's: the basis is hierarchical, so the lower one's functions are some of these,
    /// identical function by function. Lets a cell of degree q in a variable-degree space be
    /// integrated with the degree-q element (`operator::degree_groups`).
    pub fn embedding(&self, lower: &HierarchicalHex) -> Result<Vec<usize>> {
        lower
            .factors
            .iter()
            .map(|f| {
                self.factors.iter().position(|g| g == f).ok_or_else(|| {
                    Error::invalid(format!(
                        "the {:?} hierarchical hexahedron of degree {} is not part of that of degree {} ({:?})",
                        lower.modes, lower.degree, self.degree, self.modes
                    ))
                })
            })
            .collect()
    }

    /// The degree each function belongs to: 1 for vertices, k for edge mode k, and for face and
    /// interior modes i + j (+ k) in the trunk space, max(i, j (, k)) in the full one. A cell of
    /// degree q < p uses the functions of degree ≤ q (what variable-p spaces keep).
    pub fn function_degrees(&self) -> Vec<usize> {
        self.factors
            .iter()
            .map(|f| {
                let ks: Vec<usize> = f.iter().filter_map(|x| if let Factor::Bubble { k, .. } = x { Some(*k as usize) } else { None }).collect();
                match (ks.len(), self.modes) {
                    (0, _) => 1,
                    (1, _) => ks[0],
                    (_, ModeSet::Trunk) => ks.iter().sum(),
                    (_, ModeSet::Full) => ks.iter().copied().max().unwrap_or(1),
                }
            })
            .collect()
    }

    /// Number of scalar functions of the trunk or full space of degree `p`.
    pub fn count(p: usize, modes: ModeSet) -> usize {
        match modes {
            ModeSet::Full => (p + 1).pow(3),
            ModeSet::Trunk => {
                let face = if p >= 4 { (p - 2) * (p - 3) / 2 } else { 0 };
                let interior = if p >= 6 { (p - 3) * (p - 4) * (p - 5) / 6 } else { 0 };
                8 + 12 * (p - 1) + 6 * face + interior
            }
        }
    }
}

/// `(L_k(t), dL_k/dt)` for k = 0..=p at `t`, with L_0, L_1 unused (the linears are separate).
/// `dL_k/dt = √((2k−1)/2) P_{k−1}(t)` and `L_k = √((2k−1)/2) (P_k − P_{k−2})/(2k−1)`.
fn bubbles(p: usize, t: f64, val: &mut [f64], der: &mut [f64]) {
    // Legendre P_0..P_p by the three-term recurrence.
    let mut leg = [0.0; MAX_HIERARCHICAL_DEGREE + 1];
    leg[0] = 1.0;
    if p >= 1 {
        leg[1] = t;
    }
    for n in 2..=p {
        leg[n] = ((2 * n - 1) as f64 * t * leg[n - 1] - (n - 1) as f64 * leg[n - 2]) / n as f64;
    }
    for k in 2..=p {
        let s = ((2 * k - 1) as f64 / 2.0).sqrt();
        val[k] = s * (leg[k] - leg[k - 2]) / (2 * k - 1) as f64;
        der[k] = s * leg[k - 1];
    }
}

impl FiniteElement for HierarchicalHex {
    fn cell_type(&self) -> CellType {
        CellType::Hexahedron
    }

    fn degree(&self) -> usize {
        self.degree
    }

    fn ndofs(&self) -> usize {
        self.factors.len()
    }

    fn entity_dofs(&self) -> &[Vec<Vec<usize>>] {
        &self.entity_dofs
    }

    fn nodes(&self) -> Option<&[[f64; 3]]> {
        None
    }

    fn tabulate(&self, points: &[[f64; 3]]) -> Tabulation {
        let n = self.factors.len();
        let p = self.degree;
        let mut values = vec![0.0; points.len() * n];
        let mut grads = vec![[0.0; 3]; points.len() * n];
        let (mut bv, mut bd) = ([[0.0; MAX_HIERARCHICAL_DEGREE + 1]; 3], [[0.0; MAX_HIERARCHICAL_DEGREE + 1]; 3]);
        for (q, x) in points.iter().enumerate() {
            for a in 0..3 {
                bubbles(p, 2.0 * x[a] - 1.0, &mut bv[a], &mut bd[a]);
            }
            // Value and x-derivative of one factor along axis a (d/dx = 2 d/dt).
            let eval = |f: Factor, a: usize| -> (f64, f64) {
                match f {
                    Factor::Linear(0) => (1.0 - x[a], -1.0),
                    Factor::Linear(_) => (x[a], 1.0),
                    Factor::Bubble { k, flip } => {
                        let k = k as usize;
                        if flip {
                            // L_k(−t) = (−1)^k L_k(t); its derivative picks up (−1)^(k+1).
                            let s = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
                            (s * bv[a][k], -2.0 * s * bd[a][k])
                        } else {
                            (bv[a][k], 2.0 * bd[a][k])
                        }
                    }
                }
            };
            for (i, f) in self.factors.iter().enumerate() {
                let (v0, d0) = eval(f[0], 0);
                let (v1, d1) = eval(f[1], 1);
                let (v2, d2) = eval(f[2], 2);
                values[q * n + i] = v0 * v1 * v2;
                grads[q * n + i] = [d0 * v1 * v2, v0 * d1 * v2, v0 * v1 * d2];
            }
        }
        Tabulation { npoints: points.len(), ndofs: n, values, grads }
    }

    /// The 1D basis `(1 − x), x, L_2(2x − 1) … L_p(2x − 1)` (index 0, 1, k): a function's slot
    /// holds its three factors' indices, its sign the (−1)^k of each flipped bubble.
    fn tensor_slots(&self, x: &[f64]) -> Option<(Vec<f64>, Vec<f64>, Vec<(usize, f64)>)> {
        let n1 = self.degree + 1;
        let (mut b, mut g) = (vec![0.0; x.len() * n1], vec![0.0; x.len() * n1]);
        let (mut bv, mut bd) = ([0.0; MAX_HIERARCHICAL_DEGREE + 1], [0.0; MAX_HIERARCHICAL_DEGREE + 1]);
        for (q, &xq) in x.iter().enumerate() {
            bubbles(self.degree, 2.0 * xq - 1.0, &mut bv, &mut bd);
            let (row, drow) = (&mut b[q * n1..(q + 1) * n1], &mut g[q * n1..(q + 1) * n1]);
            (row[0], drow[0], row[1], drow[1]) = (1.0 - xq, -1.0, xq, 1.0);
            for k in 2..n1 {
                (row[k], drow[k]) = (bv[k], 2.0 * bd[k]);
            }
        }
        let slots = self
            .factors
            .iter()
            .map(|f| {
                let (mut slot, mut sign) = (0, 1.0);
                for fa in f.iter().rev() {
                    let i = match *fa {
                        Factor::Linear(v) => usize::from(v),
                        Factor::Bubble { k, flip } => {
                            if flip && k % 2 == 1 {
                                sign = -sign;
                            }
                            k as usize
                        }
                    };
                    slot = slot * n1 + i;
                }
                (slot, sign)
            })
            .collect();
        Some((b, g, slots))
    }

    fn orient(&self, d: usize, _e: usize, gids: &[usize]) -> Option<Vec<(usize, f64)>> {
        let parity = |k: usize, flipped: bool| if flipped && k % 2 == 1 { -1.0 } else { 1.0 };
        match d {
            1 => {
                let reversed = gids[0] > gids[1];
                Some((2..=self.degree).map(|k| (k - 2, parity(k, reversed))).collect())
            }
            2 => {
                // Global frame: origin at the smallest vertex id, first axis towards its smaller
                // neighbour. Cycle positions 0..4 sit at local (s₁, s₂) = (0,0), (1,0), (1,1), (0,1).
                let pos = [(0u8, 0u8), (1, 0), (1, 1), (0, 1)];
                let m = (0..4).min_by_key(|&k| gids[k]).unwrap_or(0);
                let (prev, next) = ((m + 3) % 4, (m + 1) % 4);
                let toward = if gids[next] < gids[prev] { next } else { prev };
                let (o, t) = (pos[m], pos[toward]);
                let swap = o.0 == t.0; // the first global axis runs along local s₂
                Some(
                    self.face_modes
                        .iter()
                        .map(|&(i, j)| {
                            let sign = parity(i, o.0 == 1) * parity(j, o.1 == 1);
                            let g = if swap { (j, i) } else { (i, j) };
                            let rank = self.face_rank[g.0 * (self.degree + 1) + g.1];
                            (rank, sign)
                        })
                        .collect(),
                )
            }
            _ => None,
        }
    }

    fn mass_quadrature_degree(&self) -> usize {
        2 * self.degree
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::solvers::SolveLstsq;

    #[test]
    fn trunk_and_full_counts_match_the_p_version() {
        for (p, n) in [(1, 8), (2, 20), (3, 32), (4, 50), (5, 74), (6, 105)] {
            let e = HierarchicalHex::new(p, ModeSet::Trunk).unwrap();
            assert_eq!(e.ndofs(), n, "trunk p = {p}");
            assert_eq!(HierarchicalHex::count(p, ModeSet::Trunk), n);
        }
        for p in 1..=MAX_HIERARCHICAL_DEGREE {
            assert_eq!(HierarchicalHex::new(p, ModeSet::Full).unwrap().ndofs(), (p + 1).pow(3));
        }
        assert!(HierarchicalHex::new(0, ModeSet::Trunk).is_err());
        assert!(HierarchicalHex::new(9, ModeSet::Full).is_err());
    }

    /// Gradients equal central differences of the values, and every non-vertex function vanishes
    /// at all eight corners (so vertex values are the field's values there).
    #[test]
    fn gradients_and_vertex_values() {
        let e = HierarchicalHex::new(6, ModeSet::Full).unwrap();
        let x = [0.3, 0.71, 0.45];
        let h = 1e-6;
        let t = e.tabulate(&[x]);
        for a in 0..3 {
            let (mut xp, mut xm) = (x, x);
            xp[a] += h;
            xm[a] -= h;
            let (tp, tm) = (e.tabulate(&[xp]), e.tabulate(&[xm]));
            for i in 0..e.ndofs() {
                let fd = (tp.values[i] - tm.values[i]) / (2.0 * h);
                assert!((fd - t.grads[i][a]).abs() < 1e-7 * (1.0 + fd.abs()), "dof {i} axis {a}: {fd} vs {}", t.grads[i][a]);
            }
        }
        let corners = e.tabulate(CellType::Hexahedron.reference_vertices());
        for v in 0..8 {
            for i in 0..e.ndofs() {
                let want = if i == v { 1.0 } else { 0.0 };
                assert!((corners.values[v * e.ndofs() + i] - want).abs() < 1e-14);
            }
        }
    }

    /// The trunk space of degree p contains every polynomial of total degree ≤ p (what gives it
    /// rate p): least squares of x^a y^b z^c on a point cloud leaves no residual.
    #[test]
    fn trunk_space_contains_total_degree_p() {
        let p = 5;
        let e = HierarchicalHex::new(p, ModeSet::Trunk).unwrap();
        let pts: Vec<[f64; 3]> = (0..400)
            .map(|k| {
                let f = |s: f64| (s * 0.618_033_988_75).fract();
                [f(k as f64 + 0.1), f(k as f64 * 1.3 + 0.2), f(k as f64 * 1.7 + 0.3)]
            })
            .collect();
        let t = e.tabulate(&pts);
        let n = e.ndofs();
        let a = faer::Mat::from_fn(pts.len(), n, |q, i| t.values[q * n + i]);
        let qr = a.col_piv_qr();
        for (ea, eb, ec) in [(5, 0, 0), (2, 2, 1), (1, 1, 3), (0, 4, 1), (1, 2, 2)] {
            let b = faer::Mat::from_fn(pts.len(), 1, |q, _| pts[q][0].powi(ea) * pts[q][1].powi(eb) * pts[q][2].powi(ec));
            let c = qr.solve_lstsq(&b);
            let r = &a * &c - &b;
            assert!(r.norm_l2() < 1e-10, "x^{ea} y^{eb} z^{ec}: residual {}", r.norm_l2());
        }
    }
}
