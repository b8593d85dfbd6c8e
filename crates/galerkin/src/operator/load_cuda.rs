//! The load vector on the GPU (`kernels/load.cu`): the problem file's source expressions are
//! compiled into the kernel, so the source is neither interpreted nor even evaluated on the host,
//! and only a few tables cross to the device: the mesh and the dof map are the backend's resident
//! copies ([`crate::backend::cuda::resident`]), shared with the assembly and the error norms. Same rule
//! ([`ElementIntegrator::source_quadrature`]) and the same per-cell sums as the host's
//! [`crate::problem::LinearProblem`] load, which the tests compare it with; the cells' vectors meet
//! in the global one through atomics, so the sums agree to round-off, not bit for bit.
use crate::backend::cuda::jit::LOAD;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::Backend;
use crate::expr::Expr;
use crate::operator::ElementIntegrator;
use crate::{Error, Result};

/// ∫ f·φ_i for every dof, on the device, or `None` where the kernel does not apply (a component
/// not compiled to CUDA, a signed modal space, more than three components); the caller then
/// integrates on the host.
pub fn load_vector_cuda(be: &CudaBackend, integ: &ElementIntegrator, source: &[Expr]) -> Result<Option<CudaVector>> {
    let space = integ.space;
    let n = space.ncomp;
    if source.len() != n {
        return Err(Error::dim("source components", n, source.len()));
    }
    let texts: Option<Vec<&str>> = source.iter().map(|e| e.cuda_source()).collect();
    let (Some(texts), None, true) = (texts, space.dofmap.signs.as_ref(), n <= 3) else {
        return Ok(None);
    };
    let mesh = &*space.mesh;
    let (dim, nv, nloc) = (mesh.dim, mesh.cell_type.num_vertices(), space.dofmap.nodes_per_cell);
    let quad = integ.source_quadrature()?;
    let (rule, tab) = (&quad.rule, &quad.tab);
    if tab.ndofs != nloc {
        return Err(Error::dim("source tabulation per cell", nloc, tab.ndofs));
    }
    let nq = rule.points.len();
    // phi | gdn | w | gn, the layout of load.cu.
    let mut t = tab.values.clone();
    let gn = crate::operator::geometry::append_geometry_tables(&mut t, mesh.cell_type, &rule.points, dim);
    t.extend_from_slice(&rule.weights);
    t.extend(gn);

    let affine = usize::from(mesh.cell_type.is_simplex());
    let mut defines = vec![format!("DIM={dim}"), format!("NV={nv}"), format!("NLOC={nloc}"), format!("NQ={nq}"), format!("NCOMP={n}"), format!("AFFINE={affine}")];
    defines.extend(texts.iter().enumerate().map(|(c, s)| format!("F{c}={s}")));
    let _span = crate::trace::span(|| "load: module, resident data, kernel".into());
    let module = be.variant_module(&LOAD, &defines)?;
    let kernel = Kernel::from_module(&module, "load_vector")?;

    // The mesh and dof map as the backend holds them for the whole run (uploaded once).
    let r = be.resident(space)?;
    let tabd = be.upload(&t)?;
    let mut b = be.zeros(space.ndofs())?;
    let ncells = mesh.num_cells() as u64;
    if ncells > 0 {
        launch!(be, &kernel, be.grid(ncells); &ncells, &r.coords, &r.verts, &r.nodes, &tabd, &mut b.data)?;
    }
    Ok(Some(b))
}
