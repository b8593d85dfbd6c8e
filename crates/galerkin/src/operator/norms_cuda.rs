//! Error norms on the GPU (`kernels/norms.cu`): the problem file's exact solution is compiled into
//! the kernel (its expressions as CUDA text, differentiated exactly through `Dual3`), so no
//! expression is interpreted per point and only the solution and a few tables cross to the device
//! (the mesh and dof map are the backend's resident copies, [`crate::backend::cuda::resident`]). Same quadrature (degree 2k + 4) and the same sums as [`super::norms`], which the
//! tests compare it with.
use super::norms::ErrorNorms;
use crate::backend::cuda::jit::NORMS;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::expr::Expr;
use crate::fe::QuadratureRule;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// ‖u − u_h‖_L2, |u − u_h|_H1 and ‖u‖_L2 on the device, or `None` where the kernel does not apply
/// (a component's expression not compiled, signed modal spaces, more than three components); the
/// caller then computes them on the host.
pub fn error_norms_cuda(be: &CudaBackend, space: &FunctionSpace, u: &[f64], exact: &[Expr]) -> Result<Option<ErrorNorms>> {
    if u.len() != space.ndofs() {
        return Err(Error::dim("solution vector", space.ndofs(), u.len()));
    }
    let n = space.ncomp;
    if exact.len() != n {
        return Err(Error::dim("exact solution components", n, exact.len()));
    }
    let sources: Option<Vec<&str>> = exact.iter().map(|e| e.cuda_source()).collect();
    let (Some(sources), None, true) = (sources, space.dofmap.signs.as_ref(), n <= 3) else {
        return Ok(None);
    };
    let mesh = &*space.mesh;
    let (dim, nv, nloc) = (mesh.dim, mesh.cell_type.num_vertices(), space.dofmap.nodes_per_cell);
    let rule = QuadratureRule::new(mesh.cell_type, 2 * space.element.degree() + 4)?;
    let tab = space.element.tabulate(&rule.points);
    let nq = rule.points.len();
    // phi | dphi | gdn | w | gn, the layout of norms.cu.
    let mut t = tab.values.clone();
    for g in &tab.grads {
        t.extend_from_slice(&g[..dim]);
    }
    let gn = crate::operator::geometry::append_geometry_tables(&mut t, mesh.cell_type, &rule.points, dim);
    t.extend_from_slice(&rule.weights);
    t.extend(gn);

    let mut defines = vec![format!("DIM={dim}"), format!("NV={nv}"), format!("NLOC={nloc}"), format!("NQ={nq}"), format!("NCOMP={n}")];
    defines.extend(sources.iter().enumerate().map(|(c, s)| format!("U{c}={s}")));
    let module = be.variant_module(&NORMS, &defines)?;
    let kernel = Kernel::from_module(&module, "error_norms")?;

    // The mesh and dof map the load and the assembly read, still on the device.
    let r = be.resident(space)?;
    let (ud, tabd) = (be.upload(u)?, be.upload(&t)?);
    let ncells = mesh.num_cells() as u64;
    let cfg = be.grid(ncells);
    let mut partial = be.alloc::<f64>(cfg.grid_dim.0 as usize * 3)?;
    launch!(be, &kernel, cfg; &ncells, &r.coords, &r.verts, &r.nodes, &ud, &tabd, &mut partial)?;
    let p = be.download(&partial)?;
    let sum = |k: usize| p.iter().skip(k).step_by(3).sum::<f64>();
    Ok(Some(ErrorNorms { l2: sum(0).sqrt(), h1_semi: sum(1).sqrt(), l2_exact: sum(2).sqrt() }))
}
