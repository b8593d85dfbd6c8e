//! NumPy `.npy` files as `np.save` writes them, for tests of the readers.

/// A NumPy `.npy` (format 1.0) of `shape` with dtype `descr` (e.g. `<i4`, `<f8`), in C or Fortran
/// order, holding the little-endian bytes `data`.
pub fn write_npy(path: &std::path::Path, shape: &[usize], descr: &str, fortran: bool, data: &[u8]) {
    let dims: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    let order = if fortran { "True" } else { "False" };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': ({},), }}", dims.join(", "));
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}
