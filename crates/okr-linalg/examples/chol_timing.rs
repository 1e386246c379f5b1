//! Times the Cholesky factorization against faer's raw routine and DGEMM.
//! `cargo run --release -p okr-linalg --example chol_timing -- N`
use std::time::Instant;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{LltParams, cholesky_in_place, cholesky_in_place_scratch};
use faer::{Accum, Mat, Par, Spec};
use okr_linalg::{Cholesky, JitterPolicy};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(4880);
    let x = Mat::from_fn(n, 64, |i, j| (((i * 31 + j * 17) % 101) as f64) / 101.0);
    let mut a = &x * x.transpose();
    for i in 0..n {
        a[(i, i)] += 1.0;
    }
    let flops = (n as f64).powi(3) / 3.0;
    let mut c = Mat::<f64>::zeros(n, n);
    let t = Instant::now();
    faer::linalg::matmul::matmul(c.as_mut(), Accum::Replace, a.as_ref(), a.as_ref(), 1.0, Par::rayon(0));
    println!("dgemm n={n}: {:.1} GFLOP/s", 2.0 * (n as f64).powi(3) / t.elapsed().as_secs_f64() / 1e9);
    for (bs, rt) in [(0, 0), (64, 64), (128, 128), (256, 64), (512, 128)] {
        let mut m = a.clone();
        let params: Spec<LltParams, f64> = if bs == 0 {
            Default::default()
        } else {
            LltParams { block_size: bs, recursion_threshold: rt, ..faer::Auto::<f64>::auto() }.into()
        };
        let mut buf = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, Par::rayon(0), params));
        let t = Instant::now();
        cholesky_in_place(m.as_mut(), Default::default(), Par::rayon(0), MemStack::new(&mut buf), params).unwrap();
        let s = t.elapsed().as_secs_f64();
        println!("faer llt block={bs} rec={rt}: {s:.3} s, {:.1} GFLOP/s", flops / s / 1e9);
    }
    let t = Instant::now();
    let _ = Cholesky::factor_in_place(a.clone(), JitterPolicy::default(), Par::rayon(0)).unwrap();
    let s = t.elapsed().as_secs_f64();
    println!("okr factor_in_place (incl. clone): {s:.3} s, {:.1} GFLOP/s", flops / s / 1e9);
}
