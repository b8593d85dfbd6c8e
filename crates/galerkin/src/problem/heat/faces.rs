//! Heat flux, Gaussian laser and Robin convection on the sides of a direct-lattice box
//! ([`super::direct`]): the load vectors and the Robin face mass `F = Σ h ∫ φᵢ φⱼ ds` of each side,
//! computed by the mesh path's own facet integration ([`super::loads::assemble`], the Robin form of
//! [`LinearProblem`]) on a slab one block thick along that side — the box's cells next to it, the
//! same vertices and quadrature points — then scattered to the lattice's nodes. A side of 215²
//! blocks is a mesh of 2.8·10⁵ tetrahedra: no mesh of the whole box is built.
use super::loads::{self, HeatLoads, Load, Schedule};
use crate::linalg::CsrMatrix;
use crate::mesh::generate::box_mesh;
use crate::operator::level::none::direct::{LatticeBox, SIDES};
use crate::operator::AssemblyLevel;
use crate::physics::Mass;
use crate::problem::linear::{flux, Boundary, LinearProblem};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use std::sync::Arc;

/// The face terms of a box: Robin's `F` (when some side has one and it was asked for) and the
/// loads with their schedules.
pub struct FaceTerms {
    pub robin: Option<CsrMatrix>,
    pub loads: Vec<(Vec<f64>, Schedule)>,
}

/// Robin's `h` summed per box side ([`SIDES`] order) over the Robin conditions of `loads`: what
/// the lattice's element matrices take ([`super::lattice::LatticeHeat::new_robin`]).
pub fn robin_sides(loads: &HeatLoads) -> Result<[f64; 6]> {
    let mut h = [0.0; 6];
    for load in &loads.loads {
        if let Load::Robin { on, h: hv, .. } = load {
            for side in sides_of(on)? {
                h[side] += hv;
            }
        }
    }
    Ok(h)
}

/// The slab of `bx` along side `side` (index into [`SIDES`]) with P1/Q1 on it, and the lattice node
/// of each of its dofs.
fn slab(bx: &LatticeBox, side: usize) -> Result<(Arc<FunctionSpace>, Vec<usize>)> {
    let (d, high) = (side / 2, side % 2 == 1);
    let mut n = bx.n;
    n[d] = 1;
    let (mut lo, mut hi) = (bx.lo, bx.hi);
    if high {
        lo[d] = bx.coord(d, bx.n[d] - 1);
    } else {
        hi[d] = bx.coord(d, 1);
    }
    let mesh = box_mesh(n[0], n[1], n[2], lo, hi, bx.cell)?;
    let space = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 1, 1)?);
    let h = bx.spacing();
    let p = bx.points();
    let map = space
        .dofmap
        .node_coords
        .iter()
        .map(|x| {
            let idx: [usize; 3] = std::array::from_fn(|a| {
                if a == d {
                    let local = ((x[a] - lo[a]) / (hi[a] - lo[a])).round() as usize;
                    if high { bx.n[d] - 1 + local } else { local }
                } else {
                    ((x[a] - bx.lo[a]) / h[a]).round() as usize
                }
            });
            idx[0] + p[0] * (idx[1] + p[1] * idx[2])
        })
        .collect();
    Ok((space, map))
}

/// The sides of a condition's boundaries (names of box sides; anything else is refused by the plan).
fn sides_of(on: &[Boundary]) -> Result<Vec<usize>> {
    on.iter()
        .map(|b| match b {
            Boundary::Name(s) => SIDES.iter().position(|x| x == s).ok_or_else(|| Error::invalid(format!("`{s}` is not a box side"))),
            other => Err(Error::invalid(format!("boundary {other:?} is not a box side by name"))),
        })
        .collect()
}

/// The flux, laser and Robin terms of `loads` on `bx` (Dirichlet and sources are not face terms);
/// Robin's face mass as a matrix only with `robin_matrix` (else the lattice holds it).
pub fn face_terms(bx: &LatticeBox, loads: &HeatLoads, robin_matrix: bool) -> Result<FaceTerms> {
    let n = bx.ndofs();
    let mut slabs: Vec<Option<(Arc<FunctionSpace>, Vec<usize>)>> = vec![None; 6];
    let mut triplets: Vec<(usize, usize, f64)> = Vec::new();
    let mut out = Vec::new();
    for load in &loads.loads {
        let (on, robin) = match load {
            Load::Flux { on, .. } | Load::Laser { on, .. } => (on, None),
            Load::Robin { on, h, .. } => (on, Some(*h)),
            Load::Dirichlet { .. } | Load::Source { .. } => continue,
        };
        let mut vector = vec![0.0; n];
        let mut schedule = Schedule::default();
        for side in sides_of(on)? {
            if slabs[side].is_none() {
                slabs[side] = Some(slab(bx, side)?);
            }
            let Some((space, map)) = &slabs[side] else { continue };
            let one = Boundary::Name(SIDES[side].to_string());
            let single = match load {
                Load::Flux { q, schedule, .. } => Load::Flux { on: vec![one.clone()], q: q.clone(), schedule: schedule.clone() },
                Load::Laser { laser, schedule, .. } => Load::Laser { on: vec![one.clone()], laser: *laser, schedule: schedule.clone() },
                Load::Robin { h, ambient, .. } => Load::Robin { on: vec![one.clone()], h: *h, ambient: *ambient },
                _ => continue,
            };
            let (host, _) = loads::assemble(space, &HeatLoads { loads: vec![single] })?;
            for hl in host {
                hl.vector.iter().zip(map).for_each(|(v, &node)| vector[node] += v);
                schedule = hl.schedule;
            }
            if let Some(h) = robin.filter(|_| robin_matrix) {
                let sys = LinearProblem::new(space.clone(), Mass::new(0.0, 1)).robin([one], h, flux(|_, _| 0.0)).assemble(AssemblyLevel::Full)?;
                let a = sys.matrix_to_host()?.ok_or_else(|| Error::invalid("Robin face terms: the full level kept no matrix"))?;
                for r in 0..a.nrows {
                    let (cols, vals) = a.row(r);
                    for (&c, &v) in cols.iter().zip(vals) {
                        if v != 0.0 {
                            triplets.push((map[r], map[c as usize], v));
                        }
                    }
                }
            }
        }
        out.push((vector, schedule));
    }
    let robin = (!triplets.is_empty()).then(|| CsrMatrix::from_triplets(n, n, &triplets)).transpose()?;
    Ok(FaceTerms { robin, loads: out })
}
