use faer::Par;
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, JitterPolicy};

use super::{Iokr, IokrValidParams};
use crate::core::checks::{check_sample_weight, check_training_set};
use crate::{Fit, FitWeighted, Result};

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
        self.fit_ridge(x, y, n, |_| n as f64 * self.lambda)
    }
}

impl<'y, X, Y, KX, KY> FitWeighted<X, &'y Y> for IokrValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    /// Fits weighted IOKR (see [`FitWeighted`]): the Cholesky factor of
    /// $K_x + n_w\lambda W^{-1}$, $n_w = \sum_i w_i$, in place of
    /// $K_x + n\lambda I$, so that $\alpha(x) = (K_x + n_w\lambda W^{-1})^{-1}k_x(x)$.
    ///
    /// This is the weighted normal equation
    /// $(W K_x + n_w\lambda I)\alpha = W k$ divided by $W$, and equals the
    /// symmetric form $W^{1/2}(W^{1/2}K_xW^{1/2} + n_w\lambda I)^{-1}W^{1/2}$;
    /// it keeps IOKR's model (one factor, the same prediction path and model
    /// file), and with weights checked `> 0` the diagonal
    /// $n_w\lambda/w_i = \lambda\, n_w / w_i$ is finite and positive. Unit
    /// weights give [`fit`](Fit::fit) exactly (the same diagonal, bit for bit).
    ///
    /// # Errors
    /// As [`fit`](Fit::fit), and those of [`check_sample_weight`](crate::check_sample_weight).
    fn fit_weighted(&self, x: &X, y: &'y Y, sample_weight: &[f64]) -> Result<Iokr<X, Y, KX, KY>> {
        let n = check_training_set(x, y)?;
        let total = check_sample_weight(sample_weight, n)?;
        // lambda * (n_w / w_i): n_w / w_i is exactly n for unit weights.
        self.fit_ridge(x, y, n, |i| self.lambda * (total / sample_weight[i]))
    }
}

impl<KX: Clone, KY: Clone> IokrValidParams<KX, KY> {
    /// The IOKR fit with `ridge(i)` added to the diagonal entry `i` of $K_x$.
    fn fit_ridge<X, Y>(&self, x: &X, y: &Y, n: usize, ridge: impl Fn(usize) -> f64) -> Result<Iokr<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
    {
        // The Gram is rebuilt only if a jittered retry is needed.
        let build = || {
            let mut k = self.input_kernel.gram(x);
            for i in 0..n {
                k[(i, i)] += ridge(i);
            }
            k
        };
        let (chol, info) = Cholesky::factor_with(build, JitterPolicy::with_lambda(self.lambda), Par::rayon(0))?;
        let (atoms, atom_of) = y.group_duplicates();
        Ok(Iokr { params: self.clone(), x_train: x.clone(), atoms, atom_of, chol, info })
    }
}
