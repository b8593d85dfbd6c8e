//! The thermal camera of the seed's inverse problem: a grid of pixels over one face of the body,
//! each reporting the temperature averaged over its area (sampled at `sub × sub` points per pixel
//! of the piecewise linear field), plus i.i.d. Gaussian noise of s.d. σ, rounded to a resolution.
//! Its log likelihood for an observed image treats the rounding as uniform noise of variance
//! δ²/12 added to σ².
use super::rng::Rng;
use crate::problem::heat::output::FaceMap;
use crate::space::FunctionSpace;
use crate::{Error, Result};

#[derive(Clone)]
pub struct Camera {
    map: FaceMap,
    pixels: (usize, usize),
    sub: usize,
    /// Noise s.d. (°C) and rounding step (°C, 0: none).
    pub sigma: f64,
    pub resolution: f64,
}

impl Camera {
    /// A camera of `pixels` over face `face` (xmin … zmax), `sub` samples per pixel and axis.
    pub fn new(space: &FunctionSpace, face: &str, pixels: (usize, usize), sub: usize, sigma: f64, resolution: f64) -> Result<Camera> {
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(Error::invalid(format!("camera: the noise level sigma must be positive and finite (got {sigma})")));
        }
        if !(resolution.is_finite() && resolution >= 0.0) {
            return Err(Error::invalid(format!("camera: the rounding step must be finite and non-negative (got {resolution})")));
        }
        if pixels.0 == 0 || pixels.1 == 0 || sub == 0 {
            return Err(Error::invalid(format!("camera: needs at least one pixel and one sample per pixel (got {pixels:?}, {sub})")));
        }
        let map = FaceMap::with_grid(space, face, (pixels.0 * sub, pixels.1 * sub))?;
        Ok(Camera { map, pixels, sub, sigma, resolution })
    }

    pub fn pixels(&self) -> (usize, usize) {
        self.pixels
    }

    /// The noiseless image of the nodal field `u`: each pixel's mean over its samples.
    pub fn image(&self, u: &[f64]) -> Vec<f64> {
        let v = self.map.values(u);
        let (nu, _) = self.map.grid();
        let (pu, pv) = self.pixels;
        let k = self.sub;
        let mut img = vec![0.0; pu * pv];
        for j in 0..pv {
            for i in 0..pu {
                let mut s = 0.0;
                for b in 0..k {
                    for a in 0..k {
                        s += v[(j * k + b) * nu + i * k + a];
                    }
                }
                img[j * pu + i] = s / (k * k) as f64;
            }
        }
        img
    }

    /// A recorded image of `u`: noise from `rng`, then rounding.
    pub fn observe(&self, u: &[f64], rng: &mut Rng) -> Vec<f64> {
        self.record(self.image(u), rng)
    }

    /// What the camera records of the noiseless image `image`: noise from `rng`, then rounding.
    pub fn record(&self, image: Vec<f64>, rng: &mut Rng) -> Vec<f64> {
        image
            .into_iter()
            .map(|t| {
                let noisy = t + self.sigma * rng.normal();
                if self.resolution > 0.0 {
                    (noisy / self.resolution).round() * self.resolution
                } else {
                    noisy
                }
            })
            .collect()
    }

    /// log p(observed | predicted image), up to a constant.
    pub fn log_likelihood(&self, observed: &[f64], predicted: &[f64]) -> Result<f64> {
        if observed.len() != predicted.len() {
            return Err(Error::dim("camera image", predicted.len(), observed.len()));
        }
        let var = self.sigma * self.sigma + self.resolution * self.resolution / 12.0;
        Ok(-0.5 * observed.iter().zip(predicted).map(|(o, p)| (o - p) * (o - p)).sum::<f64>() / var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, CellType};
    use std::sync::Arc;

    fn space() -> FunctionSpace {
        let m = generate::box_mesh(6, 5, 2, [0.0; 3], [0.02, 0.02, 0.0127], CellType::Tetrahedron).unwrap();
        FunctionSpace::lagrange(Arc::new(m), 1, 1).unwrap()
    }

    #[test]
    fn pixels_average_a_linear_field_exactly_and_noise_has_its_level() {
        let s = space();
        let u: Vec<f64> = s.dofmap.node_coords.iter().map(|x| 20.0 + 300.0 * x[0] - 150.0 * x[1] + 40.0 * x[2]).collect();
        let cam = Camera::new(&s, "zmax", (8, 4), 3, 0.1, 0.1).unwrap();
        let img = cam.image(&u);
        for j in 0..4 {
            for i in 0..8 {
                // Pixel centre on the zmax face of [0, 0.02]².
                let (x, y) = ((i as f64 + 0.5) * 0.02 / 8.0, (j as f64 + 0.5) * 0.02 / 4.0);
                let want = 20.0 + 300.0 * x - 150.0 * y + 40.0 * 0.0127;
                assert!((img[j * 8 + i] - want).abs() < 1e-10, "pixel ({i}, {j}): {} against {want}", img[j * 8 + i]);
            }
        }
        let cam = Camera::new(&s, "zmax", (40, 40), 1, 0.1, 0.1).unwrap();
        let mut rng = Rng::new(1);
        let (img, obs) = (cam.image(&u), cam.observe(&u, &mut rng));
        assert!(obs.iter().all(|o| ((o / 0.1).round() * 0.1 - o).abs() < 1e-9), "rounded to 0.1");
        let n = obs.len() as f64;
        let var = obs.iter().zip(&img).map(|(o, p)| (o - p).powi(2)).sum::<f64>() / n;
        let want = 0.01 + 0.01 / 12.0;
        assert!((var / want - 1.0).abs() < 0.15, "noise variance {var} against {want}");
        assert!(cam.log_likelihood(&obs, &img).unwrap() > cam.log_likelihood(&obs, &img.iter().map(|v| v + 0.2).collect::<Vec<_>>()).unwrap());
    }

    #[test]
    fn bad_cameras_are_errors() {
        let s = space();
        assert!(Camera::new(&s, "zmax", (4, 4), 1, 0.0, 0.1).err().is_some_and(|e| e.to_string().contains("sigma")));
        assert!(Camera::new(&s, "zmax", (0, 4), 1, 0.1, 0.1).is_err());
        assert!(Camera::new(&s, "top", (4, 4), 1, 0.1, 0.1).is_err());
        let cam = Camera::new(&s, "zmax", (4, 4), 1, 0.1, 0.0).unwrap();
        assert!(cam.log_likelihood(&[0.0; 3], &[0.0; 16]).is_err());
    }
}
