//! Exact leave-one-out predictions of IOKR, for decoding them.

use faer::{Mat, MatRef};

use crate::IokrPath;
use crate::{Error, Result};

/// Exact leave-one-out inner products $\langle \hat h_{-i}(x_i), a_c\rangle$ of
/// IOKR for a set of rows $S$ and atoms $a_c$, for any $\lambda$, from one
/// eigendecomposition.
///
/// With the hat matrix $H = K_x(K_x + \mu I)^{-1}$, $\mu = n\lambda$, held
/// fixed when sample $i$ is left out (the refit without $i$ under okr's
/// convention uses $\lambda' = n\lambda/(n-1)$), the leave-one-out prediction
/// is
/// $$\hat h_{-i}(x_i) = \frac{\hat h(x_i) - H_{ii}\,\psi(y_i)}{1 - H_{ii}},
/// \qquad\text{so}\qquad
/// \langle \hat h_{-i}(x_i), a_c\rangle = \frac{(HG)_{ic} - H_{ii}\,G_{ic}}{1 - H_{ii}}$$
/// for atom products $G_{jc} = \langle \psi(y_j), a_c\rangle$ `(n, r)`. With
/// $K_x = V\operatorname{diag}(s)V^\top$ and $h_k = s_k/(s_k + \mu)$,
/// $(HG)_{S\cdot} = (V_{S\cdot}\operatorname{diag}(h))(V^\top G)$: one
/// `(|S|, n) x (n, r)` GEMM per $\lambda$ after $V^\top G$ is formed once.
/// $1 - H_{ii} = \sum_k V_{ik}^2\,\mu/(s_k + \mu)$ is computed without cancellation.
///
/// Decoding these products (scores $k(c, c) - 2\langle \hat h_{-i}(x_i), \psi(c)\rangle$)
/// gives the leave-one-out prediction of each row of $S$; the caller leaves a
/// candidate out for row $i$ when it is $y_i$ and no other training sample has it.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_surrogate::IokrPath;
/// use okr_surrogate::LooProducts;
/// let x = Mat::from_fn(6, 2, |i, j| ((2 * i + 3 * j) % 5) as f64);
/// let kx = Mat::from_fn(6, 6, |i, j| (-(0..2).map(|d| (x[(i, d)] - x[(j, d)]).powi(2)).sum::<f64>()).exp());
/// let path = IokrPath::new(kx.as_ref())?;
/// let g = Mat::<f64>::identity(6, 6); // linear output kernel on one-hot outputs
/// let loo = LooProducts::new(&path, &[0, 3], g.as_ref())?;
/// let p = loo.products(1e-2)?;
/// assert_eq!((p.nrows(), p.ncols()), (2, 6));
/// assert!(p[(0, 0)].abs() < 1e-12, "the left-out sample puts no weight on its own output");
/// Ok::<(), okr_surrogate::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LooProducts<'a> {
    path: &'a IokrPath,
    /// $V_{S\cdot}$ `(|S|, n)`.
    v_rows: Mat<f64>,
    /// $V^\top G$ `(n, r)`.
    projected: Mat<f64>,
    /// $G_{S\cdot}$ `(|S|, r)`.
    g_rows: Mat<f64>,
}

impl<'a> LooProducts<'a> {
    /// Prepares the rows `rows` (indices into the `n` training samples of
    /// `path`) and the atom products `g` `(n, r)`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `g` does not have `n` rows or a row index
    /// is `>= n`; [`Error::Empty`] for no rows.
    pub fn new(path: &'a IokrPath, rows: &[usize], g: MatRef<'_, f64>) -> Result<Self> {
        let n = path.n_samples();
        if g.nrows() != n {
            return Err(Error::ShapeMismatch { what: "atom product rows", expected: n, got: g.nrows() });
        }
        if rows.is_empty() {
            return Err(Error::Empty { what: "leave-one-out rows" });
        }
        if let Some(&i) = rows.iter().find(|&&i| i >= n) {
            return Err(Error::ShapeMismatch { what: "leave-one-out row below n_samples", expected: n, got: i });
        }
        let v = path.eigenvectors();
        let v_rows = Mat::from_fn(rows.len(), n, |a, k| v[(rows[a], k)]);
        let g_rows = Mat::from_fn(rows.len(), g.ncols(), |a, c| g[(rows[a], c)]);
        Ok(Self { path, v_rows, projected: path.project_atoms(g), g_rows })
    }

    /// The products `(|S|, r)` for one `lambda`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `lambda` is finite and `> 0`.
    pub fn products(&self, lambda: f64) -> Result<Mat<f64>> {
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(Error::InvalidParameter {
                name: "lambda",
                value: lambda.to_string(),
                expected: "finite and > 0",
            });
        }
        let mu = self.path.n_samples() as f64 * lambda;
        let s = self.path.eigenvalues();
        let (m, n) = (self.v_rows.nrows(), self.v_rows.ncols());
        let scaled = Mat::from_fn(m, n, |a, k| self.v_rows[(a, k)] * (s[k] / (s[k] + mu)));
        let mut out = &scaled * &self.projected;
        for a in 0..m {
            let h_ii: f64 = (0..n).map(|k| self.v_rows[(a, k)] * scaled[(a, k)]).sum();
            let one_minus_h: f64 = (0..n).map(|k| self.v_rows[(a, k)].powi(2) * (mu / (s[k] + mu))).sum();
            for c in 0..out.ncols() {
                out[(a, c)] = (out[(a, c)] - h_ii * self.g_rows[(a, c)]) / one_minus_h;
            }
        }
        Ok(out)
    }
}
