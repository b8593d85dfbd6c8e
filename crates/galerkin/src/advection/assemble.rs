//! CPU assembly (rayon over cells) of the upwind DG system in conservative form:
//!
//! Σ_K [ −∫_K u β·∇v + ∫_K (c − ∇·β) u v + ∫_∂K (β·n) û v ] = Σ_K ∫_K f v,
//!
//! with û the upwind trace (the cell's own value where β·n ≥ 0, the neighbour's or the inflow data
//! g where β·n < 0). Each cell writes only its own rows — its block and its neighbours' blocks —
//! so cells run in parallel without locks, and testing with the cell's indicator (v = 1 on K)
//! leaves exactly the net upwind flux ∫_∂K (β·n) û plus ∫_K (c − ∇·β) u: conservative per cell by
//! construction, whatever the quadrature. The GPU kernel (`kernels/advection.cu`) is its twin.
use super::faces::BOUNDARY;
use super::problem::{block_position, edge_geometry, AdvectionProblem, Pattern, Tables, Velocity};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use rayon::prelude::*;

/// The matrix pattern (row pointers and columns) of the DG space.
pub fn pattern_csr(p: &AdvectionProblem, pat: &Pattern) -> Result<(Vec<usize>, Vec<u32>)> {
    let nloc = p.nloc();
    let n = p.mesh.num_cells();
    if p.ndofs() > u32::MAX as usize {
        return Err(Error::Unsupported(format!("{} unknowns exceed 32-bit column indices", p.ndofs())));
    }
    let mut row_ptr = vec![0usize; n * nloc + 1];
    row_ptr[1..].par_chunks_mut(nloc).enumerate().for_each(|(c, rows)| {
        let width = (pat.offset[c + 1] - pat.offset[c]) / nloc;
        for (i, r) in rows.iter_mut().enumerate() {
            *r = pat.offset[c] + (i + 1) * width;
        }
    });
    let mut col_idx = vec![0u32; pat.nnz()];
    split_by(&mut col_idx, &pat.offset).into_par_iter().enumerate().for_each(|(c, slab)| {
        let mut cells: Vec<usize> = std::iter::once(c).chain(p.faces.neighbours(c)).collect();
        cells.sort_unstable();
        let cols: Vec<u32> = cells.iter().flat_map(|&m| (0..nloc).map(move |j| (m * nloc + j) as u32)).collect();
        for row in slab.chunks_mut(cols.len()) {
            row.copy_from_slice(&cols);
        }
    });
    Ok((row_ptr, col_idx))
}

/// `data` cut into the consecutive pieces `offset[c]..offset[c+1]`.
pub fn split_by<'a, T>(data: &'a mut [T], offset: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(offset.len().saturating_sub(1));
    let mut rest = data;
    for w in offset.windows(2) {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        out.push(a);
        rest = b;
    }
    out
}

/// The assembled matrix and right-hand side.
pub fn assemble(p: &AdvectionProblem) -> Result<(CsrMatrix, Vec<f64>)> {
    let nloc = p.nloc();
    let tables = Tables::new(p.cell_type(), p.degree, 0)?;
    let pat = Pattern::new(&p.faces, nloc);
    let (row_ptr, col_idx) = pattern_csr(p, &pat)?;
    let mut values = vec![0.0; pat.nnz()];
    let mut rhs = vec![0.0; p.ndofs()];
    split_by(&mut values, &pat.offset)
        .into_par_iter()
        .zip(rhs.par_chunks_mut(nloc))
        .enumerate()
        .for_each(|(c, (slab, b))| cell_rows(p, &tables, c, slab, b));
    let n = p.ndofs();
    Ok((CsrMatrix { nrows: n, ncols: n, row_ptr, col_idx, values }, rhs))
}

/// Cell `c`'s rows: `slab` is its `nloc × width` values (row-major), `b` its right-hand side.
fn cell_rows(p: &AdvectionProblem, t: &Tables, c: usize, slab: &mut [f64], b: &mut [f64]) {
    let nloc = t.nloc;
    let width = slab.len() / nloc;
    let own = block_position(&p.faces, c, c) * nloc;
    let mut g = vec![[0.0; 2]; nloc];
    // Volume: −φ_j β·∇φ_i + (c − ∇·β) φ_j φ_i and f φ_i.
    for (q, xi) in t.cell_points.iter().enumerate() {
        let (x3, jac) = p.mesh.map_point(c, *xi);
        let x = [x3[0], x3[1]];
        let det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
        let w = t.cell_weights[q] * det.abs();
        let (beta, div) = match &p.velocity {
            Velocity::Field { x: bx, y: by, div } => ([bx.eval(x), by.eval(x)], div.eval(x)),
            Velocity::PerCell(v) => (v[c], 0.0),
        };
        let react = p.reaction.eval(x) - div;
        let f = p.source.eval(x);
        let phi = &t.values[q * nloc..(q + 1) * nloc];
        for (i, gi) in g.iter_mut().enumerate() {
            let r = t.grads[q * nloc + i];
            // ∇φ = J⁻ᵀ ∇_ξ φ
            *gi = [(jac[1][1] * r[0] - jac[1][0] * r[1]) / det, (-jac[0][1] * r[0] + jac[0][0] * r[1]) / det];
        }
        for i in 0..nloc {
            let bg = beta[0] * g[i][0] + beta[1] * g[i][1];
            let row = &mut slab[i * width + own..i * width + own + nloc];
            for (j, a) in row.iter_mut().enumerate() {
                *a += w * phi[j] * (react * phi[i] - bg);
            }
            b[i] += w * f * phi[i];
        }
    }
    // Edges: (β·n)⁺ φ_j φ_i on the own block, (β·n)⁻ φ_j^N φ_i on the neighbour's, or the inflow
    // data to the right-hand side.
    let fpc = p.faces.per_cell;
    let nq = t.edge_s.len();
    for lf in 0..fpc {
        let e = edge_geometry(&p.mesh, c, lf);
        let m = p.faces.neighbour[c * fpc + lf];
        let info = p.faces.info[c * fpc + lf];
        let data = p.edge_data[c * fpc + lf];
        let nb = (m != BOUNDARY).then(|| (block_position(&p.faces, c, m as usize) * nloc, (info & 3) as usize, (info >> 2) as usize));
        for q in 0..nq {
            let x = e.point(t.edge_s[q]);
            let w = t.edge_w[q] * e.length;
            let bn = p.normal_velocity(c, lf, x, e.normal);
            let (bp, bm) = (bn.max(0.0), bn.min(0.0));
            let phi = &t.edge_values[(lf * 2 * nq + q) * nloc..][..nloc];
            for i in 0..nloc {
                let row = &mut slab[i * width..(i + 1) * width];
                for j in 0..nloc {
                    row[own + j] += w * bp * phi[j] * phi[i];
                }
                if let Some((pos, lfn, flip)) = nb {
                    let phn = &t.edge_values[((lfn * 2 + flip) * nq + q) * nloc..][..nloc];
                    for j in 0..nloc {
                        row[pos + j] += w * bm * phn[j] * phi[i];
                    }
                } else if bm < 0.0 && data >= 0 {
                    b[i] -= w * bm * p.inflow[data as usize].eval(x) * phi[i];
                }
            }
        }
    }
}
