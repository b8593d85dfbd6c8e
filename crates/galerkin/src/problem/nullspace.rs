//! Singular systems: a problem with only Neumann conditions and no reaction term determines u up to
//! a constant (elasticity: up to rigid motions), and its assembled matrix has the constant in its
//! null space. Such a system is found by one product `A·1` after assembly and refused with the
//! reason, or, when the problem file asks for it (`[solver] nullspace = "constant"`), solved with
//! the constant removed: the load is projected onto the range (`b ⊥ 1`), the solve is made unique
//! (Krylov: consistent system; direct: one dof pinned), and the solution's mean is set to zero.
use crate::backend::{Backend, LinearOperator};
use crate::fe::QuadratureRule;
use crate::mesh::validate::det_jacobian;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// `‖A e‖/‖e‖` at or below this fraction of `‖A w‖/‖w‖` (w a rough vector) makes `e` a null vector.
const NULL_TOL: f64 = 1e-10;

/// The components `c` for which the constant field `e_c` (1 on component c of every node) is in the
/// null space of `a`: empty for a regular problem.
pub fn constant_null_components<B: Backend>(be: &B, a: &dyn LinearOperator<B>, ncomp: usize) -> Result<Vec<usize>> {
    let n = a.nrows();
    if n == 0 || ncomp == 0 {
        return Ok(Vec::new());
    }
    let mut y = be.zeros(n)?;
    // A rough reference vector (Weyl sequence in [-1, 1)): its image measures ‖A‖.
    let w: Vec<f64> = (0..n).map(|i| ((i as f64 * 0.618_033_988_749_895).fract() * 2.0) - 1.0).collect();
    a.apply(be, &be.from_host(&w)?, &mut y)?;
    let scale = be.norm2(&y)? / w.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut null = Vec::new();
    for c in 0..ncomp {
        let e: Vec<f64> = (0..n).map(|i| if i % ncomp == c { 1.0 } else { 0.0 }).collect();
        a.apply(be, &be.from_host(&e)?, &mut y)?;
        let ratio = be.norm2(&y)? / ((n / ncomp) as f64).sqrt();
        if ratio <= NULL_TOL * scale {
            null.push(c);
        }
    }
    Ok(null)
}

/// The error for a singular problem the file did not allow.
pub fn singular_error(ncomp: usize) -> Error {
    if ncomp == 1 {
        Error::config(
            "bc",
            "the problem is singular: the solution is determined only up to an additive constant (only Neumann \
             conditions, no Dirichlet or Robin condition and no reaction term). Add a Dirichlet condition, or set \
             `[solver] nullspace = \"constant\"` to solve for the solution of zero mean",
        )
    } else {
        Error::config(
            "bc",
            "the problem is singular: rigid-body motions are not constrained (no Dirichlet condition). Add a \
             Dirichlet condition that fixes the body (`nullspace = \"constant\"` is for scalar problems)",
        )
    }
}

/// Project `b` onto the complement of the constant (`b −= mean(b)`); returns the mean removed,
/// relative to the largest |b| entry, for the report.
pub fn project_out_constant(b: &mut [f64]) -> f64 {
    if b.is_empty() {
        return 0.0;
    }
    let mean = b.iter().sum::<f64>() / b.len() as f64;
    let big = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    b.iter_mut().for_each(|v| *v -= mean);
    if big > 0.0 {
        mean.abs() / big
    } else {
        0.0
    }
}

/// `∫ u dx / |Ω|` of a scalar finite element function.
pub fn mean_value(space: &FunctionSpace, u: &[f64]) -> Result<f64> {
    if u.len() != space.ndofs() || space.ncomp != 1 {
        return Err(Error::dim("mean value: scalar solution vector", space.ndofs(), u.len()));
    }
    let mesh = &*space.mesh;
    let rule = QuadratureRule::new(mesh.cell_type, space.element.degree().max(1))?;
    let tab = space.element.tabulate(&rule.points);
    let nloc = tab.ndofs;
    let (mut integral, mut volume) = (0.0, 0.0);
    for c in 0..mesh.num_cells() {
        let nodes = space.dofmap.cell(c);
        for (q, (&xi, &wq)) in rule.points.iter().zip(&rule.weights).enumerate() {
            let w = wq * det_jacobian(mesh.cell_type, &mesh.map_point(c, xi).1).abs();
            let uh: f64 = (0..nloc).map(|i| u[nodes[i]] * space.dofmap.sign(c, i) * tab.values[q * nloc + i]).sum();
            integral += w * uh;
            volume += w;
        }
    }
    Ok(if volume > 0.0 { integral / volume } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Cpu;
    use crate::mesh::{generate, CellType};
    use crate::physics::{Diffusion, Elasticity, Mass, Sum};
    use crate::problem::linear::{scalar, vector, LinearProblem};
    use crate::operator::AssemblyLevel;
    use std::sync::Arc;

    fn null_of(p: LinearProblem, ncomp: usize) -> Vec<usize> {
        let sys = p.assemble(AssemblyLevel::Full).unwrap();
        constant_null_components(&Cpu, &sys.operator, ncomp).unwrap()
    }

    #[test]
    fn detects_pure_neumann_and_free_bodies_only() {
        let mesh = Arc::new(generate::rectangle(6, 5, [0.0; 2], [2.0, 1.0], CellType::Triangle).unwrap());
        let s1 = Arc::new(FunctionSpace::lagrange(mesh.clone(), 2, 1).unwrap());
        assert_eq!(null_of(LinearProblem::new(s1.clone(), Diffusion::new(3.0)).source(scalar(|_| 1.0)), 1), vec![0]);
        let with_bc = LinearProblem::new(s1.clone(), Diffusion::new(3.0)).dirichlet(["xmin"], scalar(|_| 0.0));
        assert!(null_of(with_bc, 1).is_empty());
        let reaction = LinearProblem::new(s1.clone(), Sum(vec![Box::new(Diffusion::new(1.0)), Box::new(Mass::new(1e-3, 1))]));
        assert!(null_of(reaction, 1).is_empty());
        let s2 = Arc::new(FunctionSpace::lagrange(mesh, 1, 2).unwrap());
        let free = LinearProblem::new(s2.clone(), Elasticity::young_poisson(1.0, 0.3, 2).unwrap());
        assert_eq!(null_of(free, 2), vec![0, 1]);
        let clamped = LinearProblem::new(s2, Elasticity::young_poisson(1.0, 0.3, 2).unwrap()).dirichlet(["xmin"], vector(|_| [0.0; 3]));
        assert!(null_of(clamped, 2).is_empty());
    }

    #[test]
    fn projection_and_mean() {
        let mut b = vec![1.0, 2.0, 3.0, 6.0];
        let rel = project_out_constant(&mut b);
        assert!((rel - 0.5).abs() < 1e-15 && b.iter().sum::<f64>().abs() < 1e-14);
        let mesh = Arc::new(generate::rectangle(4, 3, [0.0; 2], [2.0, 1.0], CellType::Quadrilateral).unwrap());
        let space = FunctionSpace::lagrange(mesh, 2, 1).unwrap();
        // ∫ (1 + x) over [0,2]×[0,1] / 2 = 2.
        let u = space.interpolate(|x, o| o[0] = 1.0 + x[0]);
        assert!((mean_value(&space, &u).unwrap() - 2.0).abs() < 1e-13);
    }
}
