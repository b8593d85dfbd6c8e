//! GPU assembly and element block Jacobi. The problem's functions are compiled into the kernel
//! (NVRTC defines from [`Formula::to_c`]), so the device evaluates β, c, f and g at its own
//! quadrature points: what crosses to the device is the mesh (vertices, cells, facet connectivity,
//! a per-cell offset into the values) and the reference tables; the pattern, matrix and
//! right-hand side are born on the device and only the solution comes back.
use super::faces::BOUNDARY;
use super::formula::Formula;
use super::problem::{AdvectionProblem, Pattern, Tables, Velocity};
use super::solve::AdvectionBackend;
use crate::backend::cuda::jit::KernelSource;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector, DeviceCsr};
use crate::backend::{Backend, LinearOperator};
use crate::mesh::CellType;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;

/// Pattern and assembly (`kernels/advection.cu`), compiled per problem.
pub const ADVECTION: KernelSource = KernelSource { file: "advection.cu", source: include_str!("../../kernels/advection.cu"), physics: false, cells: false };
/// Element block Jacobi (`kernels/advection_blocks.cu`), compiled per block size.
pub const ADVECTION_BLOCKS: KernelSource =
    KernelSource { file: "advection_blocks.cu", source: include_str!("../../kernels/advection_blocks.cu"), physics: false, cells: false };

/// Largest element block the GPU's block Jacobi takes (Q3: 16).
pub const MAX_BLOCK: usize = 16;

/// The NVRTC defines of a problem's assembly kernel.
pub fn defines(p: &AdvectionProblem, tables: &Tables) -> Vec<String> {
    let f = |v: &Formula| v.to_c();
    let (bx, by, div, percell) = match &p.velocity {
        Velocity::Field { x, y, div } => (f(x), f(y), f(div), 0),
        Velocity::PerCell(_) => ("0.0".into(), "0.0".into(), "0.0".into(), 1),
    };
    let g = if p.inflow.is_empty() {
        "0.0".to_string()
    } else {
        let arms: String = p.inflow.iter().enumerate().map(|(k, v)| format!("k=={k}?{}:", f(v))).collect();
        format!("({arms}0.0)")
    };
    vec![
        format!("ADV_NLOC={}", tables.nloc),
        format!("ADV_QUAD={}", i32::from(p.cell_type() == CellType::Quadrilateral)),
        format!("ADV_NQ={}", tables.cell_weights.len()),
        format!("ADV_NE={}", tables.edge_w.len()),
        format!("ADV_PERCELL={percell}"),
        format!("ADV_BX={bx}"),
        format!("ADV_BY={by}"),
        format!("ADV_DIV={div}"),
        format!("ADV_C={}", f(&p.reaction)),
        format!("ADV_F={}", f(&p.source)),
        format!("ADV_G={g}"),
    ]
}

/// The reference tables packed in the order `advection.cu` reads them.
pub fn packed_tables(t: &Tables) -> Vec<f64> {
    let mut v = t.cell_weights.clone();
    v.extend(t.cell_points.iter().flat_map(|p| [p[0], p[1]]));
    v.extend(&t.values);
    v.extend(t.grads.iter().flat_map(|g| *g));
    v.extend(&t.edge_s);
    v.extend(&t.edge_w);
    v.extend(&t.edge_values);
    v
}

/// A problem's data on the device, ready to assemble again and again.
pub struct DeviceAdvection {
    ncells: usize,
    nloc: usize,
    nnz: usize,
    coords: CudaSlice<f64>,
    cells: CudaSlice<u32>,
    neighbour: CudaSlice<u32>,
    info: CudaSlice<i32>,
    edge_data: CudaSlice<i32>,
    offset: CudaSlice<u32>,
    tab: CudaSlice<f64>,
    velocity: CudaSlice<f64>,
    pattern: Kernel,
    assemble: Kernel,
}

impl DeviceAdvection {
    pub fn upload(be: &CudaBackend, p: &AdvectionProblem) -> Result<DeviceAdvection> {
        let tables = Tables::new(p.cell_type(), p.degree, 0)?;
        let pat = Pattern::new(&p.faces, tables.nloc);
        let nnz = pat.nnz();
        if nnz > i32::MAX as usize || p.ndofs() > i32::MAX as usize {
            return Err(Error::Unsupported(format!("{nnz} matrix entries: the GPU's CSR uses 32-bit indices")));
        }
        let m = be.variant_module(&ADVECTION, &defines(p, &tables))?;
        let mesh = &p.mesh;
        let coords: Vec<f64> = mesh.coords.iter().flat_map(|c| [c[0], c[1]]).collect();
        let cells: Vec<u32> = mesh.cells.iter().map(|&v| v as u32).collect();
        let offset: Vec<u32> = pat.offset.iter().map(|&o| o as u32).collect();
        let velocity = match &p.velocity {
            Velocity::PerCell(v) => be.upload(&v.iter().flat_map(|b| *b).collect::<Vec<f64>>())?,
            Velocity::Field { .. } => be.upload(&[0.0])?,
        };
        Ok(DeviceAdvection {
            ncells: mesh.num_cells(),
            nloc: tables.nloc,
            nnz,
            coords: be.upload(&coords)?,
            cells: be.upload(&cells)?,
            neighbour: be.upload(&p.faces.neighbour)?,
            info: be.upload(&p.faces.info)?,
            edge_data: be.upload(&p.edge_data)?,
            offset: be.upload(&offset)?,
            tab: be.upload(&packed_tables(&tables))?,
            velocity,
            pattern: Kernel::from_module(&m, "adv_pattern")?,
            assemble: Kernel::from_module(&m, "adv_assemble")?,
        })
    }

    /// A new matrix (pattern and values) and right-hand side.
    pub fn assemble(&self, be: &CudaBackend) -> Result<(DeviceCsr, CudaVector)> {
        let n = self.ncells * self.nloc;
        let mut row_ptr = be.alloc::<u32>(n + 1)?;
        let mut col_idx = be.alloc::<u32>(self.nnz)?;
        let nc = self.ncells as u64;
        if nc > 0 {
            launch!(be, &self.pattern, be.grid(nc); &nc, &self.offset, &self.neighbour, &mut row_ptr, &mut col_idx)?;
        }
        let values = be.alloc::<f64>(self.nnz)?;
        let mut a = DeviceCsr::from_device_parts(n, n, row_ptr, col_idx, values)?;
        let mut rhs = be.zeros(n)?;
        self.assemble_into(be, &mut a, &mut rhs)?;
        Ok((a, rhs))
    }

    /// Values and right-hand side into existing storage (nothing allocated: the timed path).
    pub fn assemble_into(&self, be: &CudaBackend, a: &mut DeviceCsr, rhs: &mut CudaVector) -> Result<()> {
        let n = self.ncells * self.nloc;
        if a.nnz() != self.nnz || LinearOperator::<CudaBackend>::nrows(a) != n {
            return Err(Error::dim("DG advection device matrix (entries)", self.nnz, a.nnz()));
        }
        be.check("DG advection right-hand side", n, &[rhs])?;
        let nc = self.ncells as u64;
        if nc == 0 {
            return Ok(());
        }
        launch!(be, &self.assemble, be.grid(nc);
            &nc, &self.coords, &self.cells, &self.neighbour, &self.info, &self.edge_data, &self.offset,
            &self.tab, &self.velocity, &mut a.values, &mut rhs.data)
    }

    pub fn nnz(&self) -> usize {
        self.nnz
    }
}

/// The inverted element blocks on the device.
pub struct DeviceBlockJacobi {
    inverses: CudaSlice<f64>,
    apply: Kernel,
    n: usize,
}

impl LinearOperator<CudaBackend> for DeviceBlockJacobi {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("element block Jacobi", self.n, &[x, y])?;
        let n = self.n as u64;
        if n == 0 {
            return Ok(());
        }
        launch!(be, &self.apply, be.grid(n); &n, &self.inverses, &x.data, &mut y.data)
    }
}

impl AdvectionBackend for CudaBackend {
    fn element_block_jacobi(&self, a: &DeviceCsr, nloc: usize) -> Result<Box<dyn LinearOperator<CudaBackend>>> {
        if !(1..=MAX_BLOCK).contains(&nloc) {
            return Err(Error::Unsupported(format!("element blocks of {nloc} unknowns on the GPU (1 to {MAX_BLOCK})")));
        }
        let n = LinearOperator::<CudaBackend>::nrows(a);
        if n % nloc != 0 {
            return Err(Error::invalid(format!("{n} rows are not whole blocks of {nloc}")));
        }
        let m = self.variant_module(&ADVECTION_BLOCKS, &[format!("ADV_B={nloc}")])?;
        let (extract, invert, apply) =
            (Kernel::from_module(&m, "adv_blocks_extract")?, Kernel::from_module(&m, "adv_blocks_invert")?, Kernel::from_module(&m, "adv_blocks_apply")?);
        let mut inverses = self.alloc::<f64>(n * nloc)?;
        self.zero_slice(&mut inverses)?;
        let nb = (n / nloc) as u64;
        if nb > 0 {
            let nr = n as u64;
            launch!(self, &extract, self.grid(nr); &nr, &a.row_ptr, &a.col_idx, &a.values, &mut inverses)?;
            let mut bad = self.upload(&[u32::MAX])?;
            launch!(self, &invert, self.grid(nb); &nb, &mut inverses, &mut bad)?;
            let bad = self.download(&bad)?[0];
            if bad != u32::MAX {
                return Err(Error::invalid(format!("element block Jacobi: the diagonal block of cell {bad} is singular")));
            }
        }
        Ok(Box::new(DeviceBlockJacobi { inverses, apply, n }))
    }
}

/// The boundary marker as the kernel sees it.
const _: () = assert!(BOUNDARY == 0xffff_ffff);
