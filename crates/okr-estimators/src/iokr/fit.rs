use faer::Par;
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, JitterPolicy};

use super::{Iokr, IokrValidParams};
use crate::core::checks::check_training_set;
use crate::{Fit, Result};

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for IokrValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = Iokr<X, Y, KX, KY>;

    /// Fits IOKR: computes $K_x$ on `x`, adds $n\lambda$ to its diagonal and
    /// factors it by Cholesky (with a jitter retry). Costs one Gram matrix and
    /// $n^3/3$ flops; the fitted model keeps `x`, the distinct outputs of `y`
    /// (its atoms) and the factor.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for no samples, [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `x` and
    /// `y` have different numbers of rows, [`Error::Linalg`](crate::Error::Linalg) when the kernel
    /// matrix does not factor (it names `lambda`).
    fn fit(&self, x: &X, y: &'y Y) -> Result<Iokr<X, Y, KX, KY>> {
        let n = check_training_set(x, y)?;
        let ridge = n as f64 * self.lambda;
        // The Gram is rebuilt only if a jittered retry is needed.
        let build = || {
            let mut k = self.input_kernel.gram(x);
            for i in 0..n {
                k[(i, i)] += ridge;
            }
            k
        };
        let (chol, info) = Cholesky::factor_with(build, JitterPolicy::with_lambda(self.lambda), Par::rayon(0))?;
        let (atoms, atom_of) = y.group_duplicates();
        Ok(Iokr { params: self.clone(), x_train: x.clone(), atoms, atom_of, chol, info })
    }
}
