//! A velocity sampled on a grid over the mesh's bounding box, read from a NumPy `.npy` array of
//! shape `(nx, ny, 2)` (`a[i][j]` = (βx, βy) of grid cell (i, j) along x and y, as NumPy writes
//! `np.save("v.npy", v)` from a field computed elsewhere — a flow solver's output, a measured
//! wind): each mesh cell takes the value of the grid cell holding its centroid. The result is one
//! constant vector per cell, which the scheme treats like per-region velocities.
use crate::mesh::Mesh;
use crate::{Error, Result};
use std::path::Path;

/// Per-cell velocities of `mesh` from the `.npy` file at `path`; `key` names the problem-file
/// key in every error.
pub fn per_cell_from_npy(path: &Path, mesh: &Mesh, key: &str) -> Result<Vec<[f64; 2]>> {
    let bad = |why: String| Error::config(key, format!("`{}`: {why}", path.display()));
    let bytes = crate::io::input::read_regular_file(path, "velocity file")?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| bad(e.to_string()))?;
    let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
    let fortran = npy.order() == npyz::Order::Fortran;
    let dtype = npy.dtype();
    let flat: Vec<f64> = match npy.try_data::<f64>() {
        Ok(r) => r.into_iter().collect::<std::io::Result<_>>(),
        Err(npy) => match npy.try_data::<f32>() {
            Ok(r) => r.into_iter().map(|v| v.map(f64::from)).collect::<std::io::Result<_>>(),
            Err(_) => return Err(bad(format!("dtype {dtype:?}: expected float64 or float32"))),
        },
    }
    .map_err(|e| bad(e.to_string()))?;
    let [nx, ny, 2] = shape[..] else {
        return Err(bad(format!("shape {shape:?}: expected (nx, ny, 2)")));
    };
    if nx == 0 || ny == 0 {
        return Err(bad(format!("shape {shape:?} is empty")));
    }
    let at = |i: usize, j: usize, c: usize| if fortran { flat[i + nx * (j + ny * c)] } else { flat[(i * ny + j) * 2 + c] };
    for i in 0..nx {
        for j in 0..ny {
            if !(at(i, j, 0).is_finite() && at(i, j, 1).is_finite()) {
                return Err(bad(format!("the velocity of grid cell ({i}, {j}) is not finite")));
            }
        }
    }
    let (lo, hi) = mesh.bounding_box();
    let index = |x: f64, k: usize, n: usize| {
        let s = if hi[k] > lo[k] { (x - lo[k]) / (hi[k] - lo[k]) } else { 0.0 };
        ((s * n as f64).floor().max(0.0) as usize).min(n - 1)
    };
    Ok((0..mesh.num_cells())
        .map(|c| {
            let vs = mesh.cell(c);
            let mut x = [0.0; 2];
            for &v in vs {
                x[0] += mesh.coords[v][0] / vs.len() as f64;
                x[1] += mesh.coords[v][1] / vs.len() as f64;
            }
            let (i, j) = (index(x[0], 0, nx), index(x[1], 1, ny));
            [at(i, j, 0), at(i, j, 1)]
        })
        .collect())
}
