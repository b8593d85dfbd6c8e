//! Observed camera images on disk: CSV with one row per pixel and frame (`time,i,j,temperature`,
//! pixel (i, j) along the face's first and second in-plane axis), as `observed.csv` is written,
//! or NumPy `.npy` of shape (frames, second axis, first axis).
use crate::io::write_atomic;
use crate::{Error, Result};
use std::path::Path;

/// Writes `images` (frame after frame, `img[j·pu + i]`) as CSV.
pub fn write_csv(path: &Path, times: &[f64], pixels: (usize, usize), images: &[f64]) -> Result<()> {
    let (pu, pv) = pixels;
    write_atomic(path, |w| {
        writeln!(w, "time,i,j,temperature").map_err(|e| Error::io(path, e))?;
        for (f, &t) in times.iter().enumerate() {
            for j in 0..pv {
                for i in 0..pu {
                    writeln!(w, "{t},{i},{j},{}", images[(f * pv + j) * pu + i]).map_err(|e| Error::io(path, e))?;
                }
            }
        }
        Ok(())
    })
}

/// Reads the images of `times` × `pixels` from a CSV or `.npy` file.
pub fn read(path: &Path, times: &[f64], pixels: (usize, usize)) -> Result<Vec<f64>> {
    let (pu, pv) = pixels;
    let n = times.len() * pu * pv;
    let bad = |why: String| Error::config("data.file", format!("{}: {why}", path.display()));
    let bytes = crate::io::input::read_regular_file(path, "data file")?;
    let values = if path.extension().is_some_and(|e| e == "npy") {
        let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| bad(e.to_string()))?;
        let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
        if shape != [times.len(), pv, pu] {
            return Err(bad(format!("shape {shape:?}, expected [{}, {pv}, {pu}] (frames, pixels along the second axis, along the first)", times.len())));
        }
        if npy.order() == npyz::Order::Fortran {
            return Err(bad("Fortran-ordered arrays are not read; save with C order".into()));
        }
        match npy.into_vec::<f64>() {
            Ok(v) => v,
            Err(e) => return Err(bad(format!("expected float64 values: {e}"))),
        }
    } else {
        let text = String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))?;
        let mut v = vec![f64::NAN; n];
        for (ln, line) in text.lines().enumerate().skip(1) {
            if line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            let at = |why: &str| bad(format!("line {}: {why}", ln + 1));
            if cols.len() != 4 {
                return Err(at("expected time,i,j,temperature"));
            }
            let t: f64 = cols[0].parse().map_err(|_| at("time is not a number"))?;
            let f = times.iter().position(|&ft| (ft - t).abs() <= 1e-9 * ft.abs().max(1.0)).ok_or_else(|| at(&format!("time {t} is not one of the camera's frames {times:?}")))?;
            let i: usize = cols[1].parse().map_err(|_| at("i is not a pixel index"))?;
            let j: usize = cols[2].parse().map_err(|_| at("j is not a pixel index"))?;
            if i >= pu || j >= pv {
                return Err(at(&format!("pixel ({i}, {j}) outside the camera's {pu} × {pv}")));
            }
            v[(f * pv + j) * pu + i] = cols[3].parse().map_err(|_| at("temperature is not a number"))?;
        }
        v
    };
    if let Some(k) = values.iter().position(|x| !x.is_finite()) {
        let (f, j, i) = (k / (pu * pv), k / pu % pv, k % pu);
        return Err(bad(format!("no finite temperature for frame {f} (t = {}), pixel ({i}, {j})", times[f])));
    }
    Ok(values)
}
