use okr_kernels::{Kernel, Rows};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Anchors, Nystroem, NystroemParams, NystroemValidParams};
use crate::projection::check_training_set;
use crate::sketch::distinct_uniform;
use crate::sketched::{RidgeSystem, sum_rows_by_group};
use crate::{Error, ParamGuard, Result};

impl<KX: Clone, KY: Clone> NystroemValidParams<KX, KY> {
    /// Fits Nystroem KRR (spec reduced-rank 1.7):
    /// $\alpha(x) = K_{nm}(K_{nm}^\top K_{nm} + n\lambda K_{mm})^\dagger k_m(x)$,
    /// the KRR estimator restricted to the span of the anchors' features.
    /// Stores $W = (K_{nm}^\top K_{nm} + n\lambda K_{mm})^\dagger K_{nm}^\top P$
    /// `(m, n_distinct)` so that $C = K(x, \text{anchors})\, W$, computed in
    /// the stable form $W = \Phi (F^\top F + n\lambda I)^{-1} F^\top P$ with
    /// $K_{mm} = V \operatorname{diag}(w) V^\top$, $\Phi = V_r \operatorname{diag}(w_r^{-1/2})$
    /// (eigenvalues at or below `pinv_rtol * max` dropped) and $F = K_{nm}\Phi$.
    /// Time $O(n m d + n m^2 + m^3)$, memory $O(n m)$.
    ///
    /// # Errors
    /// [`Error::Empty`] / [`Error::ShapeMismatch`] for the training pair,
    /// [`Error::InvalidParameter`] for an anchor index `>= n`,
    /// [`Error::ZeroRank`] for a zero system, [`Error::Linalg`].
    pub fn fit<X, Y>(&self, x: &X, y: &Y) -> Result<Nystroem<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        let n = check_training_set(x, y)?;
        let anchor_indices = match &self.anchors {
            Anchors::Uniform(m) => {
                let mut idx = distinct_uniform(n, *m, &mut ChaCha8Rng::seed_from_u64(self.seed));
                idx.sort_unstable();
                idx
            }
            Anchors::Given(v) => {
                if let Some(&bad) = v.iter().find(|&&i| i >= n) {
                    return Err(Error::InvalidParameter {
                        name: "anchors",
                        value: format!("index {bad}"),
                        expected: "training indices < n_samples",
                    });
                }
                v.clone()
            }
        };
        let anchors = x.select(&anchor_indices);
        let knm = self.input_kernel.gram_block(x, &anchors);
        let kmm = self.input_kernel.gram(&anchors);
        let ridge = n as f64 * self.lambda;
        let system = RidgeSystem::new(knm.as_ref(), kmm.as_ref(), ridge, self.lambda, self.pinv_rtol)?;
        let rank = system.rank();
        let (outputs, output_of) = y.group_duplicates();
        let at_p = sum_rows_by_group(knm.as_ref(), &output_of, outputs.n_rows()).transpose().to_owned();
        let w = system.core(system.whiten(at_p));
        Ok(Nystroem { params: self.clone(), anchors, anchor_indices, weights: w, outputs, output_of, rank })
    }
}

impl<KX: Clone, KY: Clone> NystroemParams<KX, KY> {
    /// Checks the parameters, then fits (see [`NystroemValidParams::fit`]).
    ///
    /// # Errors
    /// An invalid parameter, or any error of [`NystroemValidParams::fit`].
    pub fn fit<X, Y>(&self, x: &X, y: &Y) -> Result<Nystroem<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        self.check_ref()?.fit(x, y)
    }
}
