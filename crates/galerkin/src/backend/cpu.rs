//! CPU backend: `Vec<f64>` vectors, rayon-parallel vector operations.
use super::Backend;
use crate::Result;

/// The CPU backend (rayon threads). Stateless; construct with `Cpu`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu;

impl Backend for Cpu {
    type Vector = Vec<f64>;
    fn name(&self) -> &str {
        "cpu"
    }
    fn zeros(&self, n: usize) -> Result<Vec<f64>> {
        Ok(vec![0.0; n])
    }
    fn from_host(&self, x: &[f64]) -> Result<Vec<f64>> {
        Ok(x.to_vec())
    }
    fn to_host(&self, x: &Vec<f64>) -> Result<Vec<f64>> {
        Ok(x.clone())
    }
    fn len(&self, x: &Vec<f64>) -> usize {
        x.len()
    }
    fn copy(&self, src: &Vec<f64>, dst: &mut Vec<f64>) -> Result<()> {
        dst.copy_from_slice(src);
        Ok(())
    }
    fn fill(&self, x: &mut Vec<f64>, value: f64) -> Result<()> {
        x.fill(value);
        Ok(())
    }
    fn dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64> {
        Ok(x.iter().zip(y).map(|(a, b)| a * b).sum())
    }
    fn axpy(&self, a: f64, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        y.iter_mut().zip(x).for_each(|(yi, xi)| *yi += a * xi);
        Ok(())
    }
    fn axpby(&self, a: f64, x: &Vec<f64>, b: f64, y: &mut Vec<f64>) -> Result<()> {
        y.iter_mut().zip(x).for_each(|(yi, xi)| *yi = a * xi + b * *yi);
        Ok(())
    }
    fn scale(&self, a: f64, x: &mut Vec<f64>) -> Result<()> {
        x.iter_mut().for_each(|v| *v *= a);
        Ok(())
    }
    fn pointwise_mult(&self, d: &Vec<f64>, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        y.iter_mut().zip(d.iter().zip(x)).for_each(|(yi, (di, xi))| *yi = di * xi);
        Ok(())
    }
}
