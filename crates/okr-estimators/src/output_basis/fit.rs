use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use okr_kernels::{Kernel, Rows};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{BasisKind, OutputBasis, OutputBasisParams, OutputBasisValidParams};
use crate::sketch::{Sketch, distinct_uniform};
use crate::{Error, ParamGuard, Result};

impl<KY> OutputBasisParams<KY> {
    /// Checks the parameters, then fits on the training outputs `y`
    /// ([`OutputBasisValidParams::fit`]).
    ///
    /// # Errors
    /// An invalid parameter, then as [`OutputBasisValidParams::fit`].
    pub fn fit<Y: Rows>(&self, y: &Y) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        self.check_ref()?.fit(y)
    }

    /// Checks the parameters, then fits with a given output sketch
    /// ([`OutputBasisValidParams::fit_with_sketch`]).
    ///
    /// # Errors
    /// An invalid parameter, then as [`OutputBasisValidParams::fit_with_sketch`].
    pub fn fit_with_sketch<Y: Rows>(&self, y: &Y, sketch: &Sketch) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        self.check_ref()?.fit_with_sketch(y, sketch)
    }
}

impl<KY> OutputBasisValidParams<KY> {
    /// Fits the basis on the training outputs `y`.
    ///
    /// The atoms to orthonormalize are $a_s = \sum_i R_{si}\,\psi(y_i)$: the
    /// distinct outputs ([`BasisKind::Exact`]), Nystroem anchors, or a sketch
    /// $R_Y$ drawn from `ChaCha8Rng::seed_from_u64(seed)` exactly as ISOKR
    /// and SISOKR draw theirs (repeated outputs merged), so that the same seed
    /// gives the same sketch. With $E = R K_y R^\top = V W V^\top$ (eigenvalues
    /// non-increasing), the basis keeps the $r$ components with
    /// $w_j > \mathrm{rtol}\, w_1$ (at most `n_components`) and
    /// $$e_j = w_j^{-1/2} \sum_s V_{sj}\, a_s,\qquad B = W_r^{-1/2} V_r^\top R,$$
    /// orthonormal in $\mathcal H_y$. Time $O(|S|\, m\, \kappa + m^3)$ for
    /// $m$ atoms over $|S|$ support outputs ($\kappa$ per kernel entry); the
    /// exact basis has $m = |S| = $ the number of distinct outputs.
    ///
    /// # Errors
    /// [`Error::Empty`] for no outputs, [`Error::InvalidParameter`] for a
    /// sketch larger than the outputs allow, [`Error::ZeroRank`] when the
    /// atoms' Gram is zero (every output has $k(y, y) = 0$),
    /// [`Error::Linalg`] for a failed eigendecomposition.
    pub fn fit<Y: Rows>(&self, y: &Y) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        if y.n_rows() == 0 {
            return Err(Error::Empty { what: "training outputs" });
        }
        let (distinct, output_of) = y.group_duplicates();
        match self.kind {
            BasisKind::Exact => self.fit_atoms(&distinct, distinct.clone()),
            BasisKind::Nystroem { anchors } => {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                let mut idx = distinct_uniform(distinct.n_rows(), anchors, &mut rng);
                idx.sort_unstable();
                self.fit_atoms(&distinct, distinct.select(&idx))
            }
            BasisKind::Sketch(spec) => {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                let ry = Sketch::draw_for_kernel(&spec, &self.kernel, y, self.lambda, &mut rng)?;
                let ry = ry.merge_duplicate_columns(&output_of).unwrap_or(ry);
                self.fit_sketch(y, &distinct, &ry)
            }
        }
    }

    /// Fits the sketched basis of a given output sketch `sketch`
    /// `(m, y.n_rows())`, whatever [`BasisKind`] the parameters name (the
    /// sketch is used as it is, repeated outputs not merged).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when the sketch does not have one column per
    /// output; otherwise as [`fit`](Self::fit).
    pub fn fit_with_sketch<Y: Rows>(&self, y: &Y, sketch: &Sketch) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        if y.n_rows() == 0 {
            return Err(Error::Empty { what: "training outputs" });
        }
        if sketch.ncols() != y.n_rows() {
            return Err(Error::ShapeMismatch {
                what: "sketch columns vs training outputs",
                expected: y.n_rows(),
                got: sketch.ncols(),
            });
        }
        let (distinct, _) = y.group_duplicates();
        self.fit_sketch(y, &distinct, sketch)
    }

    fn fit_sketch<Y: Rows>(&self, y: &Y, distinct: &Y, ry: &Sketch) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        let support = y.select(ry.support());
        let rs = ry.support_matrix();
        // E = R_S K(S, S) R_S^T from R_S K(S, S) (m, |S|), computed in tiles.
        let rk = ry.sketch_cross_from_support(&self.kernel, &support, &support, Par::rayon(0));
        let mut e = Mat::zeros(ry.nrows(), ry.nrows());
        matmul(e.as_mut(), Accum::Replace, rk.as_ref(), rs.transpose(), 1.0, Par::rayon(0));
        self.finish(distinct, support, e, Some(rs))
    }

    /// The basis over the atoms `atoms` themselves ($R = I$).
    fn fit_atoms<Y: Rows>(&self, distinct: &Y, atoms: Y) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        let e = self.kernel.gram(&atoms);
        self.finish(distinct, atoms, e, None)
    }

    /// Orthonormalizes the atoms of Gram `e` written over `support` by `rs`
    /// (`None`: the identity).
    fn finish<Y: Rows>(
        &self,
        distinct: &Y,
        support: Y,
        mut e: Mat<f64>,
        rs: Option<Mat<f64>>,
    ) -> Result<OutputBasis<Y, KY>>
    where
        KY: Kernel<Y> + Clone,
    {
        okr_linalg::products::symmetrize_in_place(e.as_mut());
        let eig = okr_linalg::eigh(e.as_ref())?;
        let w = eig.values();
        let top = w.first().copied().unwrap_or(0.0);
        let mut r = if top > 0.0 { w.iter().take_while(|&&v| v > self.rtol * top).count() } else { 0 };
        if r == 0 {
            return Err(Error::ZeroRank { what: "output Gram of the basis atoms", tol: self.rtol });
        }
        if let Some(cap) = self.n_components {
            r = r.min(cap);
        }
        let v = eig.vectors().subcols(0, r);
        // W_r^{-1/2} V_r^T (r, m).
        let scaled = Mat::from_fn(r, v.nrows(), |j, s| v[(s, j)] / w[j].sqrt());
        let weights = match &rs {
            Some(rs) => {
                let mut b = Mat::zeros(r, rs.ncols());
                matmul(b.as_mut(), Accum::Replace, scaled.as_ref(), rs.as_ref(), 1.0, Par::rayon(0));
                b
            }
            None => scaled,
        };
        Ok(OutputBasis::new(self.clone(), distinct.clone(), support, weights, w[..r].to_vec()))
    }
}
