//! Thread scaling of pure FMA throughput (no memory traffic): does this host's CPU run N threads of
//! vector FMAs N times as fast as one? Separates core count / SMT siblings / vector frequency
//! licences from anything in galerkin's kernels. Build: rustc -O -C target-feature=+avx2,+fma,+avx512f fma_probe.rs
use std::arch::x86_64::*;
use std::time::Instant;

#[target_feature(enable = "avx2,fma")]
unsafe fn avx2(n: usize) -> f64 {
    let mut a = [_mm256_set1_pd(1.0); 12];
    let (m, c) = (_mm256_set1_pd(0.999999), _mm256_set1_pd(1e-7));
    for _ in 0..n {
        for v in a.iter_mut() {
            *v = _mm256_fmadd_pd(*v, m, c);
        }
    }
    let mut s = [0.0; 4];
    for v in a {
        let mut t = [0.0; 4];
        _mm256_storeu_pd(t.as_mut_ptr(), v);
        for k in 0..4 {
            s[k] += t[k];
        }
    }
    s.iter().sum()
}

#[target_feature(enable = "avx512f")]
unsafe fn avx512(n: usize) -> f64 {
    let mut a = [_mm512_set1_pd(1.0); 12];
    let (m, c) = (_mm512_set1_pd(0.999999), _mm512_set1_pd(1e-7));
    for _ in 0..n {
        for v in a.iter_mut() {
            *v = _mm512_fmadd_pd(*v, m, c);
        }
    }
    a.iter().map(|v| _mm512_reduce_add_pd(*v)).sum()
}

fn main() {
    let threads: Vec<usize> = std::env::args().skip(1).map(|s| s.parse().unwrap()).collect();
    let threads = if threads.is_empty() { vec![1, 2, 4, 8, 16] } else { threads };
    let n = 20_000_000usize;
    for (name, lanes) in [("avx2", 4usize), ("avx512", 8)] {
        if lanes == 8 && !is_x86_feature_detected!("avx512f") {
            println!("{name}: not available");
            continue;
        }
        let mut base = 0.0;
        for &t in &threads {
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let start = Instant::now();
                std::thread::scope(|s| {
                    for _ in 0..t {
                        s.spawn(|| std::hint::black_box(unsafe { if lanes == 4 { avx2(n) } else { avx512(n) } }));
                    }
                });
                best = best.min(start.elapsed().as_secs_f64());
            }
            let gf = (t * n * 12 * lanes * 2) as f64 / best / 1e9;
            if t == threads[0] {
                base = gf / t as f64;
            }
            println!("{name} threads {t:2}: {gf:8.1} GFLOP/s  ({:5.1} per thread, {:5.2}x the first count's per-thread rate)", gf / t as f64, gf / base);
        }
    }
}
