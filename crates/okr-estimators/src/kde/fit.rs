use faer::Mat;
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, JitterPolicy};

use super::{Kde, KdeValidParams};
use crate::core::checks::check_training_set;
use crate::{Error, Fit, Result};

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for KdeValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = Kde<X, Y, KX, KY>;

    /// Fits KDE: eigendecomposition of $K_y$ (centred if asked), $p$ capped at
    /// its numerical rank, $G = \operatorname{diag}(\nu^{-1/2}) V_p^\top H$, then
    /// $M = (K_x + n\lambda I)^{-1} K_y G^\top$ by a Cholesky solve.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::ShapeMismatch`] for `x`/`y` row counts,
    /// [`Error::Linalg`] when a decomposition fails, [`Error::ZeroRank`] when
    /// the output Gram matrix has numerical rank 0.
    fn fit(&self, x: &X, y: &'y Y) -> Result<Kde<X, Y, KX, KY>> {
        let n = check_training_set(x, y)?;
        let (outputs, output_of) = y.group_duplicates();
        let ku = self.output_kernel.gram(&outputs);
        let ky = Mat::from_fn(n, n, |i, j| ku[(output_of[i], output_of[j])]);
        // H K_y H: subtract row and column means, add back the grand mean.
        let kc = if self.centered {
            let nf = n as f64;
            let means: Vec<f64> = (0..n).map(|i| (0..n).map(|j| ky[(i, j)]).sum::<f64>() / nf).collect();
            let grand = means.iter().sum::<f64>() / nf;
            Mat::from_fn(n, n, |i, j| ky[(i, j)] - means[i] - means[j] + grand)
        } else {
            ky.clone()
        };
        let eig = okr_linalg::eigh(kc.as_ref())?;
        let numerical_rank = eig.numerical_rank(self.rank_tolerance);
        if numerical_rank == 0 {
            return Err(Error::ZeroRank { what: "output Gram matrix K_y", tol: self.rank_tolerance });
        }
        let p = self.rank.min(numerical_rank);
        let (nu, v) = eig.into_parts();
        let mut g = Mat::from_fn(p, n, |i, j| v[(j, i)] / nu[i].sqrt());
        if self.centered {
            // G H: subtract each row's mean.
            for i in 0..p {
                let m = (0..n).map(|j| g[(i, j)]).sum::<f64>() / n as f64;
                for j in 0..n {
                    g[(i, j)] -= m;
                }
            }
        }
        let mut encoder = Mat::<f64>::zeros(p, outputs.n_rows());
        for (i, &o) in output_of.iter().enumerate() {
            for r in 0..p {
                encoder[(r, o)] += g[(r, i)];
            }
        }
        let ridge = n as f64 * self.lambda;
        let build = || {
            let mut k = self.input_kernel.gram(x);
            for i in 0..n {
                k[(i, i)] += ridge;
            }
            k
        };
        let par = faer::get_global_parallelism();
        let (chol, _) = Cholesky::factor_with(build, JitterPolicy::with_lambda(self.lambda), par)?;
        let mut predict_map = &ky * g.transpose();
        chol.solve_in_place(predict_map.as_mut(), par);
        Ok(Kde {
            params: self.clone(),
            x_train: x.clone(),
            outputs,
            output_of,
            encoder,
            predict_map,
            nu,
            numerical_rank,
        })
    }
}
