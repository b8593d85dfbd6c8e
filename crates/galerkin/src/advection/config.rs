//! The problem-file schema of a DG advection run (`[space] family = "dg"` with
//! `[physics] kind = "advection"`), checked key by key like the other schemas: unknown keys, wrong
//! types and impossible values are errors naming the dotted key.
use super::formula::Formula;
use super::problem::{AdvectionProblem, Velocity, MAX_DEGREE};
use super::solve::{Method, Precond, SolverConfig};
use crate::problem::config::{check_output_name, deserialize, BackendKind, MeshConfig};
use crate::solver::KrylovOptions;
use crate::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Whether a problem file is a DG advection problem: `[physics] kind = "advection"` (checked
/// before the 1D DG detector, which claims every `family = "dg"`).
pub fn is_advection(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("physics")?.get("kind")?.as_str().map(|k| k == "advection"))
        .unwrap_or(false)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdvectionFile {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub backend: BackendKind,
    pub mesh: MeshConfig,
    pub space: SpaceKeys,
    pub physics: PhysicsKeys,
    #[serde(default)]
    pub bc: Vec<BcKeys>,
    pub exact: Option<ExactKeys>,
    #[serde(default)]
    pub solver: SolverKeys,
    #[serde(default)]
    pub output: OutputKeys,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceKeys {
    /// `dg`.
    pub family: String,
    pub degree: usize,
}

/// `velocity = ["expr", "expr"]`, `velocity = { regions = { <tag or name> = [bx, by], … } }`, or
/// `velocity = { npy = "file.npy" }` (a `(nx, ny, 2)` grid over the mesh's bounding box, relative
/// to the problem file; see `velocity_grid`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum VelocityKeys {
    Field([toml::Value; 2]),
    Regions { regions: BTreeMap<String, [f64; 2]> },
    Grid { npy: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsKeys {
    /// `advection`.
    pub kind: String,
    pub velocity: VelocityKeys,
    /// c (default 0).
    pub reaction: Option<toml::Value>,
    /// f (default 0).
    pub source: Option<toml::Value>,
    /// Inflow data wherever the flow enters and no `[[bc]]` names the boundary.
    pub inflow: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum BoundaryKeys {
    One(crate::problem::linear::Boundary),
    Many(Vec<crate::problem::linear::Boundary>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BcKeys {
    pub boundary: BoundaryKeys,
    /// Inflow value g (number or expression); used where β·n < 0.
    pub value: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactKeys {
    pub solution: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverKeys {
    pub method: Method,
    pub preconditioner: Precond,
    pub rtol: f64,
    pub atol: f64,
    pub max_iter: usize,
    pub restart: usize,
}

impl Default for SolverKeys {
    fn default() -> Self {
        SolverKeys { method: Method::Gmres, preconditioner: Precond::BlockJacobi, rtol: 1e-10, atol: 1e-50, max_iter: 2000, restart: 50 }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputKeys {
    pub name: String,
    pub vtu: bool,
    pub report: bool,
    pub plot: bool,
}

impl Default for OutputKeys {
    fn default() -> Self {
        OutputKeys { name: "solution".into(), vtu: true, report: true, plot: true }
    }
}

/// A parsed file turned into library objects.
pub struct AdvectionSetup {
    pub problem: AdvectionProblem,
    pub exact: Option<Formula>,
    pub solver: SolverConfig,
    pub notes: Vec<String>,
}

impl AdvectionFile {
    pub fn parse(text: &str, source: &str) -> Result<AdvectionFile> {
        let f: AdvectionFile = deserialize(text, source)?;
        if f.space.family != "dg" {
            return Err(Error::config("space.family", format!("advection runs on the discontinuous space: expected `dg`, got `{}`", f.space.family)));
        }
        if f.physics.kind != "advection" {
            return Err(Error::config("physics.kind", "expected `advection`"));
        }
        if f.space.degree > MAX_DEGREE {
            return Err(Error::config("space.degree", format!("DG advection supports degrees 0 to {MAX_DEGREE}, not {}", f.space.degree)));
        }
        let s = &f.solver;
        if !(s.rtol > 0.0 && s.rtol < 1.0) {
            return Err(Error::config("solver.rtol", format!("must lie in (0, 1), got {}", s.rtol)));
        }
        if !(s.atol >= 0.0) {
            return Err(Error::config("solver.atol", format!("must be ≥ 0, got {}", s.atol)));
        }
        if s.max_iter == 0 || s.restart == 0 {
            return Err(Error::config(if s.max_iter == 0 { "solver.max_iter" } else { "solver.restart" }, "must be at least 1"));
        }
        check_output_name(&f.output.name)?;
        if let Some(c) = f.mesh.cell {
            if !matches!(c, crate::mesh::CellType::Triangle | crate::mesh::CellType::Quadrilateral) {
                return Err(Error::config("mesh.cell", format!("DG advection runs on triangles or quadrilaterals, not {c}s")));
            }
        }
        if f.mesh.generator.is_some_and(|g| g != crate::problem::config::Generator::Rectangle) {
            return Err(Error::config("mesh.generator", "DG advection is 2D: use `rectangle` or a Gmsh file"));
        }
        // Every expression is checked before the mesh is built.
        f.formulas()?;
        Ok(f)
    }

    fn formulas(&self) -> Result<(Option<[Formula; 2]>, Formula, Formula, Option<Formula>, Vec<Formula>, Option<Formula>)> {
        let p = &self.physics;
        let opt = |v: &Option<toml::Value>, key: &str| v.as_ref().map(|v| Formula::from_toml(v, key)).transpose();
        let velocity = match &p.velocity {
            VelocityKeys::Field([x, y]) => Some([Formula::from_toml(x, "physics.velocity[0]")?, Formula::from_toml(y, "physics.velocity[1]")?]),
            VelocityKeys::Regions { .. } | VelocityKeys::Grid { .. } => None,
        };
        let reaction = opt(&p.reaction, "physics.reaction")?.unwrap_or(Formula::Num(0.0));
        let source = opt(&p.source, "physics.source")?.unwrap_or(Formula::Num(0.0));
        let inflow = opt(&p.inflow, "physics.inflow")?;
        let bc = self.bc.iter().enumerate().map(|(i, b)| Formula::from_toml(&b.value, &format!("bc[{i}].value"))).collect::<Result<Vec<_>>>()?;
        let exact = self.exact.as_ref().map(|e| Formula::from_toml(&e.solution, "exact.solution")).transpose()?;
        Ok((velocity, reaction, source, inflow, bc, exact))
    }

    /// Bytes a run of a generated mesh needs, before it is built: (host, device) — the device
    /// holds the matrix and the Krylov vectors when `gpu`, the host everything otherwise (mesh,
    /// connectivity and tables always). `None` for a Gmsh file (its reader checks its size).
    pub fn memory_estimate(&self, gpu: bool) -> Option<(crate::memory::Estimate, crate::memory::Estimate)> {
        let n = self.mesh.n.as_ref()?;
        let quads = self.mesh.cell == Some(crate::mesh::CellType::Quadrilateral);
        let cells = n.iter().map(|&d| d as f64).product::<f64>() * if quads { 1.0 } else { 2.0 };
        let k = self.space.degree as f64;
        let (nloc, faces) = if quads { ((k + 1.0) * (k + 1.0), 4.0) } else { ((k + 1.0) * (k + 2.0) / 2.0, 3.0) };
        let dofs = cells * nloc;
        let nnz = cells * nloc * nloc * (1.0 + faces);
        let (mut host, mut device) = (crate::memory::Estimate::default(), crate::memory::Estimate::default());
        host.add("mesh, facet connectivity and sort keys", cells * (faces * 40.0 + 64.0));
        host.add("solution", 8.0 * dofs);
        let linear = if gpu { &mut device } else { &mut host };
        linear.add("matrix (CSR values, columns, row pointers)", 12.0 * nnz + 8.0 * dofs);
        linear.add("Krylov vectors and block Jacobi", 8.0 * dofs * (self.solver.restart as f64 + 6.0 + nloc));
        Some((host, device))
    }

    /// Builds the mesh (relative paths against `base`) and the problem.
    pub fn setup(&self, base: &Path) -> Result<AdvectionSetup> {
        let (velocity, reaction, source, inflow, bc_values, exact) = self.formulas()?;
        let (mesh, mut notes) = crate::problem::run::build_mesh_from(&self.mesh, base)?;
        if mesh.dim != 2 {
            return Err(Error::config("mesh", format!("DG advection is 2D; this mesh has dimension {}", mesh.dim)));
        }
        let mesh = if self.mesh.reorder.unwrap_or(true) { crate::mesh::ordering::reorder_for_locality(&mesh)? } else { mesh };
        let velocity = match (velocity, &self.physics.velocity) {
            (Some([x, y]), _) => Velocity::field(x, y).map_err(|e| Error::config("physics.velocity", e.to_string()))?,
            (None, VelocityKeys::Field(_)) => return Err(Error::config("physics.velocity", "expected two expressions")),
            (None, VelocityKeys::Regions { regions }) => {
                let mut by_tag = BTreeMap::new();
                for (name, v) in regions {
                    let key = format!("physics.velocity.regions.{name}");
                    let tag = match name.parse::<i32>() {
                        Ok(t) => t,
                        Err(_) => mesh.tag(name, 2).map_err(|e| Error::config(&key, e.to_string()))?,
                    };
                    if v.iter().any(|c| !c.is_finite()) {
                        return Err(Error::config(&key, "components must be finite"));
                    }
                    by_tag.insert(tag, *v);
                }
                let cells = mesh
                    .cell_tags
                    .iter()
                    .enumerate()
                    .map(|(c, t)| by_tag.get(t).copied().ok_or_else(|| Error::config("physics.velocity.regions", format!("cell {c} has region tag {t}, which the table does not list"))))
                    .collect::<Result<Vec<_>>>()?;
                Velocity::PerCell(cells)
            }
            (None, VelocityKeys::Grid { npy }) => Velocity::PerCell(super::velocity_grid::per_cell_from_npy(&base.join(npy), &mesh, "physics.velocity.npy")?),
        };
        let mut bc = Vec::new();
        for (i, (b, value)) in self.bc.iter().zip(bc_values).enumerate() {
            let list = match &b.boundary {
                BoundaryKeys::One(x) => vec![x.clone()],
                BoundaryKeys::Many(v) => v.clone(),
            };
            for x in list {
                let tag = match x {
                    crate::problem::linear::Boundary::Id(t) => t,
                    crate::problem::linear::Boundary::Name(n) => mesh.tag(&n, 1).map_err(|e| Error::config(format!("bc[{i}].boundary"), e.to_string()))?,
                };
                if !mesh.boundary.iter().any(|f| f.tag == tag) {
                    return Err(Error::config(format!("bc[{i}].boundary"), format!("no boundary facet has tag {tag}")));
                }
                bc.push((tag, value.clone()));
            }
        }
        let problem = AdvectionProblem::new(Arc::new(mesh), self.space.degree, velocity, reaction, source, bc, inflow)?;
        let s = &self.solver;
        let solver = SolverConfig {
            method: s.method,
            preconditioner: s.preconditioner,
            options: KrylovOptions { rtol: s.rtol, atol: s.atol, max_iter: s.max_iter, restart: s.restart, progress: false },
        };
        notes.retain(|n| !n.is_empty());
        Ok(AdvectionSetup { problem, exact, solver, notes })
    }
}
