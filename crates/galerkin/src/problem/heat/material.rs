//! Heterogeneous material: a material index per cell (stored in `mesh.cell_tags`) and a small
//! property table, so ρc and k are [`Coefficient::PerRegion`] (index → value), never doubles per
//! element.
//!
//! Cells are assigned, in this order (later steps win on the cells they select):
//! 1. the background: material 0 everywhere;
//! 2. a voxel array ([`Voxels`]): the material index of the voxel holding the cell's centroid;
//! 3. rules ([`Rule`]) in order: a [`Shape`] (by cell centroid) or Gmsh physical groups (the
//!    cell's original region tag);
//! 4. a corrosion profile ([`Corrosion`]): cells behind the corroded surface become the filler.
use crate::mesh::Mesh;
use crate::physics::Coefficient;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Thermal properties of one material (SI units).
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// Conductivity (W/(m·K)).
    pub k: f64,
    /// Density (kg/m³).
    pub rho: f64,
    /// Specific heat (J/(kg·K)).
    pub c: f64,
}

impl Material {
    pub fn new(name: &str, k: f64, rho: f64, c: f64) -> Material {
        Material {
            name: name.into(),
            k,
            rho,
            c,
        }
    }

    /// Still air at room temperature: the default corrosion filler.
    pub fn air() -> Material {
        Material::new("air", 0.026, 1.2, 1005.0)
    }

    pub fn rhoc(&self) -> f64 {
        self.rho * self.c
    }

    /// Positive, finite values; the error names the material and the property.
    pub fn check(&self) -> Result<()> {
        for (key, v) in [("k", self.k), ("rho", self.rho), ("c", self.c)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(format!(
                    "material `{}`: `{key}` must be positive and finite (got {v})",
                    self.name
                )));
            }
        }
        Ok(())
    }
}

/// A region of space, tested at cell centroids.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// `from ≤ x[axis] < to`.
    Layer {
        axis: usize,
        from: f64,
        to: f64,
    },
    Sphere {
        centre: [f64; 3],
        radius: f64,
    },
    /// Distance to the line through `centre` along `axis` below `radius`, with `from ≤ x[axis] < to`.
    Cylinder {
        centre: [f64; 3],
        axis: usize,
        radius: f64,
        from: f64,
        to: f64,
    },
    /// `lower ≤ x < upper` componentwise.
    Box {
        lower: [f64; 3],
        upper: [f64; 3],
    },
}

impl Shape {
    pub fn contains(&self, x: [f64; 3]) -> bool {
        match *self {
            Shape::Layer { axis, from, to } => from <= x[axis] && x[axis] < to,
            Shape::Sphere { centre, radius } => dist2(x, centre, None) < radius * radius,
            Shape::Cylinder {
                centre,
                axis,
                radius,
                from,
                to,
            } => from <= x[axis] && x[axis] < to && dist2(x, centre, Some(axis)) < radius * radius,
            Shape::Box { lower, upper } => (0..3).all(|k| lower[k] <= x[k] && x[k] < upper[k]),
        }
    }

    fn check(&self) -> std::result::Result<(), String> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        match self {
            Shape::Layer { axis, from, to }
                if *axis < 3 && !from.is_nan() && !to.is_nan() && from < to =>
            {
                Ok(())
            }
            Shape::Layer { .. } => Err("a layer needs axis 0..2 (x, y, z) and from < to".into()),
            Shape::Sphere { centre, radius }
                if finite(centre) && *radius > 0.0 && radius.is_finite() =>
            {
                Ok(())
            }
            Shape::Sphere { .. } => {
                Err("a sphere needs a finite centre and a positive radius".into())
            }
            Shape::Cylinder {
                centre,
                axis,
                radius,
                from,
                to,
            } if finite(centre)
                && *axis < 3
                && *radius > 0.0
                && radius.is_finite()
                && from < to =>
            {
                Ok(())
            }
            Shape::Cylinder { .. } => Err(
                "a cylinder needs a finite centre, axis 0..2, a positive radius and from < to"
                    .into(),
            ),
            Shape::Box { lower, upper }
                if finite(lower) && finite(upper) && (0..3).all(|k| lower[k] < upper[k]) =>
            {
                Ok(())
            }
            Shape::Box { .. } => {
                Err("a box needs finite corners with lower < upper in every coordinate".into())
            }
        }
    }
}

/// Squared distance from `x` to `c`, leaving out coordinate `skip`.
fn dist2(x: [f64; 3], c: [f64; 3], skip: Option<usize>) -> f64 {
    (0..3)
        .filter(|&k| Some(k) != skip)
        .map(|k| (x[k] - c[k]).powi(2))
        .sum()
}

/// Which cells a rule selects.
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    Shape(Shape),
    /// Cells whose original region tag (Gmsh physical group) is in the list.
    Regions(Vec<i32>),
}

/// Cells selected by `selector` get material `material`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub selector: Selector,
    pub material: usize,
}

/// The corroded surface's shape in the face plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Profile {
    /// Axisymmetric pit: ρ = in-plane distance from the centre.
    Pit,
    /// A groove along `axis` (in the face plane): ρ = distance across it.
    Groove { axis: usize },
}

/// Material lost behind a parabolic surface on one face of the bounding box, replaced by a filler.
///
/// With `s` the distance of a point from the face (into the body) and `ρ` its in-plane distance
/// from `centre` (pit) or across the groove's axis (groove), the corroded depth is
/// `d(ρ) = depth · (1 − ρ²/radius²)` for `ρ < radius` (0 outside): a parabola of depth `depth`
/// at the centre, meeting the face at `ρ = radius` (half-width of the corroded zone). Cells whose
/// centroid has `s < d(ρ)` become `filler`.
#[derive(Clone, Debug, PartialEq)]
pub struct Corrosion {
    /// Axis normal to the face and whether it is the upper (`xmax`…) or lower (`xmin`…) face.
    pub axis: usize,
    pub upper: bool,
    pub depth: f64,
    pub radius: f64,
    pub centre: [f64; 3],
    pub profile: Profile,
    pub filler: usize,
}

impl Corrosion {
    /// Parses a box face name (`xmin` … `zmax`) into (axis, upper).
    pub fn face(name: &str) -> Option<(usize, bool)> {
        let axis = "xyz".find(name.get(..1)?)?;
        match name.get(1..)? {
            "min" => Some((axis, false)),
            "max" => Some((axis, true)),
            _ => None,
        }
    }

    /// Gives the filler to every cell of `tags` whose centroid lies in the corroded part.
    pub fn apply<T: Copy + Send + Sync + TryFrom<usize>>(&self, centroids: &[[f64; 3]], lo: [f64; 3], hi: [f64; 3], tags: &mut [T]) {
        let Ok(filler) = T::try_from(self.filler) else { return };
        tags.par_iter_mut().zip(centroids.par_iter()).with_min_len(4096).for_each(|(t, &x)| {
            if self.corroded(x, lo, hi) {
                *t = filler;
            }
        });
    }

    pub fn corroded(&self, x: [f64; 3], lo: [f64; 3], hi: [f64; 3]) -> bool {
        let a = self.axis;
        let s = if self.upper {
            hi[a] - x[a]
        } else {
            x[a] - lo[a]
        };
        let rho2 = match self.profile {
            Profile::Pit => dist2(x, self.centre, Some(a)),
            Profile::Groove { axis } => (0..3)
                .filter(|&k| k != a && k != axis)
                .map(|k| (x[k] - self.centre[k]).powi(2))
                .sum(),
        };
        let r2 = self.radius * self.radius;
        rho2 < r2 && s < self.depth * (1.0 - rho2 / r2)
    }

    /// Depth ≥ 0 (0: no corrosion), radius > 0, a valid face and groove axis.
    pub fn check(&self) -> std::result::Result<(), String> {
        if !(self.depth.is_finite()
            && self.depth >= 0.0
            && self.radius.is_finite()
            && self.radius > 0.0)
        {
            return Err(format!(
                "depth must be finite and non-negative, radius positive and finite (got {} and {})",
                self.depth, self.radius
            ));
        }
        if self.axis > 2 || self.centre.iter().any(|c| !c.is_finite()) {
            return Err("the face axis must be 0..2 and the centre finite".into());
        }
        if let Profile::Groove { axis } = self.profile {
            if axis > 2 || axis == self.axis {
                return Err("a groove's axis must lie in the corroded face".into());
            }
        }
        Ok(())
    }
}

/// A voxel array of material indices over the mesh's bounding box: `index[i][j][k]` (C order)
/// for voxel (i, j, k) along x, y, z (a 2D array for 2D meshes).
#[derive(Clone, Debug, PartialEq)]
pub struct Voxels {
    pub shape: Vec<usize>,
    pub index: Vec<i64>,
}

impl Voxels {
    /// Reads a NumPy `.npy` array of integers (any integer dtype, C or Fortran order).
    pub fn read_npy(path: &Path) -> Result<Voxels> {
        let bytes = crate::io::input::read_regular_file(path, "voxel file")?;
        let bad = |why: String| Error::invalid(format!("voxel file `{}`: {why}", path.display()));
        let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| bad(e.to_string()))?;
        let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
        let fortran = npy.order() == npyz::Order::Fortran;
        let dtype = npy.dtype();
        macro_rules! try_int {
            ($npy:expr, $($t:ty),*) => {{
                let npy = $npy;
                $(
                    let npy = match npy.try_data::<$t>() {
                        Ok(r) => return Voxels::from_flat(shape, fortran, r.into_iter().map(|v| v.map(|x| x as i64)).collect::<std::io::Result<Vec<i64>>>().map_err(|e| bad(e.to_string()))?).map_err(bad),
                        Err(npy) => npy,
                    };
                )*
                drop(npy);
            }};
        }
        try_int!(npy, i64, i32, i16, i8, u64, u32, u16, u8);
        Err(bad(format!(
            "dtype {dtype:?} is not an integer type (material indices are integers)"
        )))
    }

    fn from_flat(
        shape: Vec<usize>,
        fortran: bool,
        flat: Vec<i64>,
    ) -> std::result::Result<Voxels, String> {
        if shape.is_empty() || shape.len() > 3 || shape.contains(&0) {
            return Err(format!(
                "shape {shape:?}: expected a non-empty 2D or 3D array"
            ));
        }
        let index = if fortran {
            // Reorder to C order.
            let n = flat.len();
            let mut c = vec![0; n];
            for (f, v) in flat.into_iter().enumerate() {
                let mut rem = f;
                let mut idx = vec![0; shape.len()];
                for (d, &s) in shape.iter().enumerate() {
                    idx[d] = rem % s;
                    rem /= s;
                }
                let ci = idx.iter().zip(&shape).fold(0, |acc, (&i, &s)| acc * s + i);
                c[ci] = v;
            }
            c
        } else {
            flat
        };
        Ok(Voxels { shape, index })
    }

    /// The voxel (as a multi-index and flat index) holding `x` in the box `[lo, hi]`.
    fn locate(&self, x: [f64; 3], lo: [f64; 3], hi: [f64; 3]) -> (Vec<usize>, usize) {
        let idx: Vec<usize> = self
            .shape
            .iter()
            .enumerate()
            .map(|(d, &s)| {
                let f = if hi[d] > lo[d] {
                    (x[d] - lo[d]) / (hi[d] - lo[d])
                } else {
                    0.0
                };
                ((f * s as f64).floor().max(0.0) as usize).min(s - 1)
            })
            .collect();
        let flat = idx
            .iter()
            .zip(&self.shape)
            .fold(0, |acc, (&i, &s)| acc * s + i);
        (idx, flat)
    }
}

/// What a material assignment needs: the table and how cells choose from it.
#[derive(Clone, Debug, Default)]
pub struct MaterialMap {
    pub materials: Vec<Material>,
    pub voxels: Option<Voxels>,
    pub rules: Vec<Rule>,
    pub corrosion: Option<Corrosion>,
}

/// ρc and k as per-index tables.
#[derive(Debug)]
pub struct MaterialFields {
    pub rhoc: Coefficient,
    pub k: Coefficient,
    /// Cells per material.
    pub counts: Vec<usize>,
}

fn centroid(mesh: &Mesh, c: usize) -> [f64; 3] {
    let vs = mesh.cell(c);
    let mut x = [0.0; 3];
    for &v in vs {
        (0..3).for_each(|k| x[k] += mesh.coords[v][k] / vs.len() as f64);
    }
    x
}

impl MaterialMap {
    /// Checks the materials, the rules and the corrosion against the table.
    pub fn validate(&self) -> Result<()> {
        let nm = self.materials.len();
        if nm == 0 {
            return Err(Error::invalid("no material given"));
        }
        for m in &self.materials {
            m.check()?;
        }
        let name_of = |i: usize| self.materials[i].name.clone();
        for (i, r) in self.rules.iter().enumerate() {
            if r.material >= nm {
                return Err(Error::invalid(format!(
                    "rule {i} names material {} of {nm}",
                    r.material
                )));
            }
            if let Selector::Shape(s) = &r.selector {
                s.check().map_err(|why| {
                    Error::invalid(format!("material `{}`: {why}", name_of(r.material)))
                })?;
            }
        }
        if let Some(c) = &self.corrosion {
            c.check()
                .map_err(|why| Error::invalid(format!("corrosion: {why}")))?;
            if c.filler >= nm {
                return Err(Error::invalid(format!(
                    "corrosion filler is material {} of {nm}",
                    c.filler
                )));
            }
        }
        Ok(())
    }

    /// The cell centroids the rules are evaluated at.
    pub fn centroids(mesh: &Mesh) -> Vec<[f64; 3]> {
        (0..mesh.num_cells()).into_par_iter().map(|c| centroid(mesh, c)).collect()
    }

    /// The material of every cell from the voxels and the rules, before corrosion (`centroids`
    /// from [`MaterialMap::centroids`]).
    pub fn base_indices(&self, mesh: &Mesh, centroids: &[[f64; 3]]) -> Result<Vec<i32>> {
        let nm = self.materials.len();
        let (lo, hi) = mesh.bounding_box();
        let original = &mesh.cell_tags;
        let mut tags = vec![0i32; mesh.num_cells()];
        if let Some(v) = &self.voxels {
            if v.shape.len() != mesh.dim {
                return Err(Error::invalid(format!(
                    "the voxel array has {} axes but the mesh is {}D",
                    v.shape.len(),
                    mesh.dim
                )));
            }
            for (c, t) in tags.iter_mut().enumerate() {
                let (idx, flat) = v.locate(centroids[c], lo, hi);
                let m = v.index[flat];
                if m < 0 || m as usize >= nm {
                    return Err(Error::invalid(format!("voxel {idx:?} holds material index {m}, but only {nm} materials are defined (0..{})", nm - 1)));
                }
                *t = m as i32;
            }
        }
        for r in &self.rules {
            tags.par_iter_mut().enumerate().for_each(|(c, t)| {
                let hit = match &r.selector {
                    Selector::Shape(s) => s.contains(centroids[c]),
                    Selector::Regions(rs) => rs.contains(&original[c]),
                };
                if hit {
                    *t = r.material as i32;
                }
            });
        }
        Ok(tags)
    }

    /// The material index at centroid `x` of a 3D box `[lo, hi]` without a mesh (the direct
    /// lattice): the voxels, the shape rules in order, then the corrosion — as [`Self::base_indices`]
    /// and [`Self::assign`] decide a mesh cell's. Region rules need a mesh (an error here).
    pub fn index_at(&self, x: [f64; 3], lo: [f64; 3], hi: [f64; 3]) -> Result<i32> {
        let nm = self.materials.len();
        let mut t = 0i32;
        if let Some(v) = &self.voxels {
            if v.shape.len() != 3 {
                return Err(Error::invalid(format!("the voxel array has {} axes but the box is 3D", v.shape.len())));
            }
            let (idx, flat) = v.locate(x, lo, hi);
            let m = v.index[flat];
            if m < 0 || m as usize >= nm {
                return Err(Error::invalid(format!("voxel {idx:?} holds material index {m}, but only {nm} materials are defined (0..{})", nm - 1)));
            }
            t = m as i32;
        }
        for r in &self.rules {
            match &r.selector {
                Selector::Shape(s) if s.contains(x) => t = r.material as i32,
                Selector::Shape(_) => {}
                Selector::Regions(_) => return Err(Error::invalid("material regions need a mesh")),
            }
        }
        if let Some(c) = &self.corrosion {
            if c.corroded(x, lo, hi) {
                t = c.filler as i32;
            }
        }
        Ok(t)
    }

    /// Sets `mesh.cell_tags` to the material index of every cell and returns the property tables.
    pub fn assign(&self, mesh: &mut Mesh) -> Result<MaterialFields> {
        self.validate()?;
        let nm = self.materials.len();
        let (lo, hi) = mesh.bounding_box();
        let centroids = Self::centroids(mesh);
        let mut tags = self.base_indices(mesh, &centroids)?;
        if let Some(cor) = &self.corrosion {
            cor.apply(&centroids, lo, hi, &mut tags);
        }
        let mut counts = vec![0; nm];
        tags.iter().for_each(|&t| counts[t as usize] += 1);
        mesh.cell_tags = tags;
        let table = |f: &dyn Fn(&Material) -> f64| {
            Coefficient::PerRegion(
                self.materials
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (i as i32, f(m)))
                    .collect::<BTreeMap<_, _>>(),
            )
        };
        Ok(MaterialFields {
            rhoc: table(&|m| m.rhoc()),
            k: table(&|m| m.k),
            counts,
        })
    }
}
