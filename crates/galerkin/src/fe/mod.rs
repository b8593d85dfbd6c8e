//! Reference finite elements and quadrature.
//!
//! An element is defined on a reference cell (see [`crate::mesh::CellType`]) and tabulates its basis
//! functions and reference gradients at points. Dofs are attached to topological entities (vertices,
//! edges, faces, interior) so a dof map can share them between cells; the orientation of shared
//! edge/face dofs is decided from the element's nodes (see `space::dofmap`).
mod entity;
mod gauss;
pub mod hierarchical;
pub mod lagrange;
mod polynomial;
pub mod quadrature;

pub use hierarchical::{HierarchicalHex, ModeSet};
pub use lagrange::{LagrangeElement, NodeFamily};
pub use quadrature::{facet_measure, facet_rule, gauss_jacobi, gauss_legendre, gauss_lobatto, QuadratureKind, QuadratureRule};

use crate::mesh::CellType;

/// A unit enum from its problem-file name (`"trunk"`, `"gauss-lobatto"`): the same names and the
/// same "unknown variant, expected one of" message on the command line as in TOML.
pub(crate) fn parse_name<T: serde::de::DeserializeOwned>(s: &str) -> crate::Result<T> {
    use serde::de::IntoDeserializer;
    T::deserialize(s.into_deserializer()).map_err(|e: serde::de::value::Error| crate::Error::invalid(e.to_string()))
}

/// Basis values and reference gradients at a set of points.
#[derive(Clone, Debug)]
pub struct Tabulation {
    pub npoints: usize,
    pub ndofs: usize,
    /// `values[q * ndofs + i]` = φ_i(ξ_q)
    pub values: Vec<f64>,
    /// `grads[q * ndofs + i]` = ∇_ξ φ_i(ξ_q) (components beyond the cell dimension are zero)
    pub grads: Vec<[f64; 3]>,
}

/// A scalar reference element. Vector-valued spaces repeat it per component.
pub trait FiniteElement: Send + Sync + std::fmt::Debug {
    fn cell_type(&self) -> CellType;
    /// Polynomial degree (per axis on tensor cells).
    fn degree(&self) -> usize;
    fn ndofs(&self) -> usize;
    /// `entity_dofs()[d][e]`: local dofs on entity `e` of dimension `d`, with entities numbered as in
    /// `CellType::{reference_vertices, edges, faces}` and the interior as the single entity of
    /// dimension `cell.dim()`. Every local dof appears exactly once.
    fn entity_dofs(&self) -> &[Vec<Vec<usize>>];
    /// Reference coordinates of the nodes (Lagrange elements); `None` for modal elements.
    fn nodes(&self) -> Option<&[[f64; 3]]>;
    /// Basis values and reference gradients at `points`.
    fn tabulate(&self, points: &[[f64; 3]]) -> Tabulation;
    /// For tensor-product elements, the 1D tables at 1D points `x` for sum factorization:
    /// (values `b[q·p1 + i]`, derivatives `g[q·p1 + i]`, map from lexicographic index, first axis
    /// fastest, to local dof). `None` where the basis is not a tensor product.
    fn tensor_1d(&self, _x: &[f64]) -> Option<(Vec<f64>, Vec<f64>, Vec<usize>)> {
        None
    }
    /// Modal tensor-product elements (hierarchical hexahedra), whose every function is a signed
    /// product of 1D functions of one basis: that basis's tables at 1D points `x` (values
    /// `b[q·p1 + i]`, derivatives `g[q·p1 + i]`) and, per local dof, its lexicographic slot (first
    /// axis fastest) in the `p1³` products and its sign. What lets the matrix-free levels apply a
    /// modal basis by sum factorization (`operator::level::partial`). `None` elsewhere (nodal
    /// tensor elements give [`FiniteElement::tensor_1d`]).
    fn tensor_slots(&self, _x: &[f64]) -> Option<(Vec<f64>, Vec<f64>, Vec<(usize, f64)>)> {
        None
    }
    /// Modal elements (no nodes): for each dof of local entity `e` of dimension `d`, its rank in the
    /// entity's global frame and the sign (±1) relating the cell's function to the global one, when
    /// the entity's vertices (in `CellType::{edges, faces}` order) have global ids `gids`. The dof
    /// map turns these into the signed restriction. `None` for nodal elements.
    fn orient(&self, _d: usize, _e: usize, _gids: &[usize]) -> Option<Vec<(usize, f64)>> {
        None
    }
    /// Quadrature degree that integrates a mass matrix of this element exactly on affine cells.
    fn mass_quadrature_degree(&self) -> usize {
        2 * self.degree()
    }
}
