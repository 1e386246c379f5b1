//! Oracles shared by the estimator tests: kernels evaluated pair by pair
//! (independent of okr-kernels' blocks), seeded data and small helpers.
#![allow(dead_code)]

use faer::linalg::solvers::Solve;
use faer::{Mat, Par};
use okr_estimators::SurrogateModel;
use okr_kernels::{DenseRows, Kernel, Rows};

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairLinear;
impl Kernel<DenseRows> for PairLinear {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        (0..a.n_features()).map(|f| a.as_mat()[(i, f)] * b.as_mat()[(j, f)]).sum()
    }
}

/// Gaussian kernel evaluated pair by pair.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairGauss(pub f64);
impl Kernel<DenseRows> for PairGauss {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        let d: f64 = (0..a.n_features()).map(|f| (a.as_mat()[(i, f)] - b.as_mat()[(j, f)]).powi(2)).sum();
        (-self.0 * d).exp()
    }
}

pub fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

pub fn random_rows(n: usize, d: usize, seed: u64) -> DenseRows {
    let mut r = lcg(seed);
    DenseRows::new(Mat::from_fn(n, d, |_, _| r())).unwrap()
}

/// Relative max error `|a - b|_max / (1 + |b|_max)`.
pub fn rel_err(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    (a - b).norm_max() / (1.0 + b.norm_max())
}

/// Scores `<h(x_t), psi(c)>` `(n_test, n_c)` of any surrogate model.
pub fn scores<Y: Rows>(model: &impl SurrogateModel<DenseRows, Y>, x: &DenseRows, cand: &Y) -> Mat<f64> {
    let c = model.coefficients(x).unwrap();
    let mut g = Mat::zeros(model.n_atoms(), cand.n_rows());
    model.atom_products_into(cand, g.as_mut(), Par::Seq).unwrap();
    c * g
}

/// $(K + n\lambda I)^{-1}$ by a dense LU solve.
pub fn ridge_inverse(k: &Mat<f64>, lambda: f64) -> Mat<f64> {
    let n = k.nrows();
    let mut a = k.clone();
    for i in 0..n {
        a[(i, i)] += n as f64 * lambda;
    }
    a.partial_piv_lu().solve(Mat::<f64>::identity(n, n))
}
