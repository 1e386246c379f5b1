//! Dense rows read in place ([`DenseSource`]): row-major and column-major
//! shared matrices give the same Gram blocks, norms and serialization as the
//! owned matrix with the same entries.

use std::sync::Arc;

use faer::{Mat, MatRef};
use okr_kernels::{DenseRows, DenseSource, Gaussian, Kernel, KernelSpec, Laplacian, Linear, Polynomial, Rows};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A matrix kept in a flat buffer in either order, as NumPy keeps C- and
/// F-ordered arrays.
#[derive(Debug)]
struct Flat {
    data: Vec<f64>,
    nrows: usize,
    ncols: usize,
    row_major: bool,
}

impl DenseSource for Flat {
    fn view(&self) -> MatRef<'_, f64> {
        if self.row_major {
            MatRef::from_row_major_slice(&self.data, self.nrows, self.ncols)
        } else {
            MatRef::from_column_major_slice(&self.data, self.nrows, self.ncols)
        }
    }
}

fn shared(m: &Mat<f64>, row_major: bool) -> DenseRows {
    let (n, d) = (m.nrows(), m.ncols());
    let data = if row_major {
        (0..n).flat_map(|i| (0..d).map(move |j| (i, j))).map(|(i, j)| m[(i, j)]).collect()
    } else {
        (0..d).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| m[(i, j)]).collect()
    };
    DenseRows::from_shared(Arc::new(Flat { data, nrows: n, ncols: d, row_major })).unwrap()
}

#[test]
fn shared_rows_match_owned_rows() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Sizes past one GEMM tile so that the tiled paths run.
    let (n, m, d) = (300, 70, 13);
    let xa = Mat::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
    let xb = Mat::from_fn(m, d, |_, _| rng.random::<f64>() - 0.5);
    let (owned_a, owned_b) = (DenseRows::new(xa.clone()).unwrap(), DenseRows::new(xb.clone()).unwrap());
    let kernels: Vec<KernelSpec> = vec![
        Linear.into(),
        Gaussian::new(0.7).unwrap().into(),
        Gaussian::new(0.7).unwrap().with_feature_weights(vec![0.5; d]).unwrap().into(),
        Laplacian::new(0.3).unwrap().into(),
        Polynomial::new(3, 0.5, 1.0).unwrap().into(),
    ];
    for row_major in [true, false] {
        let (a, b) = (shared(&xa, row_major), shared(&xb, row_major));
        assert!(a.is_shared());
        assert_eq!(a, owned_a);
        assert_eq!(a.select(&[3, 1]), owned_a.select(&[3, 1]));
        assert_eq!(a.clone().into_mat(), xa);
        assert_eq!(postcard::to_stdvec(&a).unwrap(), postcard::to_stdvec(&owned_a).unwrap());
        let back: DenseRows = postcard::from_bytes(&postcard::to_stdvec(&a).unwrap()).unwrap();
        assert!(!back.is_shared() && back == owned_a);
        for k in &kernels {
            let (got, want) = (k.gram_block(&a, &b), k.gram_block(&owned_a, &owned_b));
            let (gg, wg) = (k.gram(&a), k.gram(&owned_a));
            for (g, w) in [(&got, &want), (&gg, &wg)] {
                for j in 0..g.ncols() {
                    for i in 0..g.nrows() {
                        assert!((g[(i, j)] - w[(i, j)]).abs() <= 1e-12, "{k:?} row_major={row_major}");
                    }
                }
            }
            assert_eq!(k.diag(&a), k.diag(&owned_a));
        }
    }
}

#[test]
fn shared_rows_reject_non_finite_values() {
    let mut x = Mat::from_fn(5, 3, |i, j| (i + j) as f64);
    x[(3, 2)] = f64::NAN;
    for row_major in [true, false] {
        let flat = shared(&Mat::from_fn(5, 3, |i, j| (i + j) as f64), row_major);
        assert_eq!(flat.n_rows(), 5);
        let data: Vec<f64> = if row_major {
            (0..5).flat_map(|i| (0..3).map(move |j| (i, j))).map(|(i, j)| x[(i, j)]).collect()
        } else {
            (0..3).flat_map(|j| (0..5).map(move |i| (i, j))).map(|(i, j)| x[(i, j)]).collect()
        };
        let err = DenseRows::from_shared(Arc::new(Flat { data, nrows: 5, ncols: 3, row_major })).unwrap_err();
        assert_eq!(err.to_string(), "dense features contains a non-finite value (NaN or infinity) at row 3");
    }
}
