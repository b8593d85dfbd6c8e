//! Reference cells: vertex coordinates and local topology (edges, faces, facets).
//!
//! Vertex orderings follow VTK and Gmsh for linear cells, so meshes read from `.msh` and written to
//! VTU need no reordering. Reference domains are the unit simplex and the unit cube `[0,1]^d`.

/// The cell shapes galerkin meshes are made of (one shape per mesh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Interval,
    Triangle,
    Quadrilateral,
    Tetrahedron,
    Hexahedron,
}

impl CellType {
    /// Every cell shape, lowest dimension first.
    pub const ALL: [CellType; 5] =
        [CellType::Interval, CellType::Triangle, CellType::Quadrilateral, CellType::Tetrahedron, CellType::Hexahedron];

    /// Topological dimension.
    pub fn dim(self) -> usize {
        match self {
            CellType::Interval => 1,
            CellType::Triangle | CellType::Quadrilateral => 2,
            CellType::Tetrahedron | CellType::Hexahedron => 3,
        }
    }

    pub fn num_vertices(self) -> usize {
        self.reference_vertices().len()
    }

    pub fn is_simplex(self) -> bool {
        matches!(self, CellType::Interval | CellType::Triangle | CellType::Tetrahedron)
    }

    /// Reference vertex coordinates (unused components are zero).
    pub fn reference_vertices(self) -> &'static [[f64; 3]] {
        match self {
            CellType::Interval => &[[0., 0., 0.], [1., 0., 0.]],
            CellType::Triangle => &[[0., 0., 0.], [1., 0., 0.], [0., 1., 0.]],
            CellType::Quadrilateral => &[[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]],
            CellType::Tetrahedron => &[[0., 0., 0.], [1., 0., 0.], [0., 1., 0.], [0., 0., 1.]],
            CellType::Hexahedron => &[
                [0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.],
                [0., 0., 1.], [1., 0., 1.], [1., 1., 1.], [0., 1., 1.],
            ],
        }
    }

    /// Local edges as pairs of local vertices.
    pub fn edges(self) -> &'static [[usize; 2]] {
        match self {
            CellType::Interval => &[[0, 1]],
            CellType::Triangle => &[[1, 2], [0, 2], [0, 1]],
            CellType::Quadrilateral => &[[0, 1], [1, 2], [3, 2], [0, 3]],
            CellType::Tetrahedron => &[[2, 3], [1, 3], [1, 2], [0, 3], [0, 2], [0, 1]],
            CellType::Hexahedron => &[
                [0, 1], [1, 2], [3, 2], [0, 3], [4, 5], [5, 6],
                [7, 6], [4, 7], [0, 4], [1, 5], [2, 6], [3, 7],
            ],
        }
    }

    /// Local 2D faces (only for 3D cells), vertices ordered around the face.
    /// Triangle faces of a tet: face `i` is opposite vertex `i`.
    pub fn faces(self) -> &'static [&'static [usize]] {
        match self {
            CellType::Tetrahedron => &[&[1, 2, 3], &[0, 2, 3], &[0, 1, 3], &[0, 1, 2]],
            CellType::Hexahedron => &[
                &[0, 3, 2, 1], // z = 0
                &[4, 5, 6, 7], // z = 1
                &[0, 1, 5, 4], // y = 0
                &[3, 7, 6, 2], // y = 1
                &[0, 4, 7, 3], // x = 0
                &[1, 2, 6, 5], // x = 1
            ],
            _ => &[],
        }
    }

    /// Facets (entities of dimension `dim - 1`) as lists of local vertices.
    pub fn facets(self) -> Vec<Vec<usize>> {
        match self.dim() {
            1 => vec![vec![0], vec![1]],
            2 => self.edges().iter().map(|e| e.to_vec()).collect(),
            _ => self.faces().iter().map(|f| f.to_vec()).collect(),
        }
    }

    /// The shape of this cell's facets (`None` for intervals, whose facets are points).
    pub fn facet_type(self) -> Option<CellType> {
        match self {
            CellType::Interval => None,
            CellType::Triangle | CellType::Quadrilateral => Some(CellType::Interval),
            CellType::Tetrahedron => Some(CellType::Triangle),
            CellType::Hexahedron => Some(CellType::Quadrilateral),
        }
    }

    /// VTK cell type id for linear cells.
    pub fn vtk_id(self) -> u8 {
        match self {
            CellType::Interval => 3,
            CellType::Triangle => 5,
            CellType::Quadrilateral => 9,
            CellType::Tetrahedron => 10,
            CellType::Hexahedron => 12,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CellType::Interval => "interval",
            CellType::Triangle => "triangle",
            CellType::Quadrilateral => "quadrilateral",
            CellType::Tetrahedron => "tetrahedron",
            CellType::Hexahedron => "hexahedron",
        }
    }

    /// Evaluate the linear (P1/Q1) geometry shape functions and their reference gradients at `xi`.
    /// Used for the geometric map of every cell: affine on simplices, multilinear on quads/hexes.
    pub fn geometry_basis(self, xi: [f64; 3], values: &mut [f64], grads: &mut [[f64; 3]]) {
        let [x, y, z] = xi;
        match self {
            CellType::Interval => {
                values[..2].copy_from_slice(&[1. - x, x]);
                grads[0] = [-1., 0., 0.];
                grads[1] = [1., 0., 0.];
            }
            CellType::Triangle => {
                values[..3].copy_from_slice(&[1. - x - y, x, y]);
                grads[0] = [-1., -1., 0.];
                grads[1] = [1., 0., 0.];
                grads[2] = [0., 1., 0.];
            }
            CellType::Tetrahedron => {
                values[..4].copy_from_slice(&[1. - x - y - z, x, y, z]);
                grads[0] = [-1., -1., -1.];
                grads[1] = [1., 0., 0.];
                grads[2] = [0., 1., 0.];
                grads[3] = [0., 0., 1.];
            }
            CellType::Quadrilateral | CellType::Hexahedron => {
                let d = self.dim();
                let _ = (x, y, z);
                for (v, r) in self.reference_vertices().iter().enumerate() {
                    // Multilinear: product over axes of (xi or 1 - xi), derivative by product rule.
                    let f = |m: usize| if r[m] > 0.5 { (xi[m], 1.0) } else { (1.0 - xi[m], -1.0) };
                    let mut g = [0.0; 3];
                    for (k, gk) in g.iter_mut().enumerate().take(d) {
                        *gk = (0..d).map(|m| if m == k { f(m).1 } else { f(m).0 }).product();
                    }
                    values[v] = (0..d).map(|m| f(m).0).product();
                    grads[v] = g;
                }
            }
        }
    }
}

impl std::fmt::Display for CellType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
