//! Model selection by a task metric of decoded outputs: the fold scorer of
//! K-fold searches ([`DecodedScorer`]) and closed-form leave-one-out
//! decoding ([`loo_grid`]) for IOKR on label sets.
//!
//! The metric is the caller's (`okr_eval::f1_samples` in okr's CLI and
//! experiments): a function of the true and the decoded label sets, higher
//! is better.

use faer::{Mat, MatRef};
use okr_kernels::{Kernel, LabelSets, Linear, Rows};
use okr_surrogate::{
    FoldScorer, GridSearchResult, IokrPath, KernelExpansion, LooProducts, check_folds, check_grid, search_median,
};

use crate::{CandidateDecoder, Error};

/// Scores a fold's validation predictions by decoding them over the fold's
/// candidates (the distinct label sets of its training rows) and applying
/// `metric(truth, decoded)`.
///
/// # Example
/// ```
/// use okr_decode::select::DecodedScorer;
/// use okr_estimators::select::GaussianIokrSearch;
/// use okr_kernels::{DenseRows, Gaussian, LabelSets};
/// let x = DenseRows::from_rows(&(0..12).map(|i| vec![i as f64, (i % 3) as f64]).collect::<Vec<_>>())?;
/// let y = LabelSets::new(2, (0..12).map(|i| if i < 6 { vec![0] } else { vec![1] }).collect())?;
/// let ky = Gaussian::new(0.5)?;
/// // Accuracy of the decoded sets.
/// let accuracy = |t: &LabelSets, p: &LabelSets| -> Result<f64, okr_decode::Error> {
///     Ok(t.iter().zip(p.iter()).filter(|(a, b)| a == b).count() as f64 / t.n_rows() as f64)
/// };
/// let mut scorer = DecodedScorer::new(&y, &ky, accuracy);
/// let folds = vec![((0..12).step_by(2).collect(), (1..12).step_by(2).collect())];
/// let result = GaussianIokrSearch::new(vec![0.5, 1.0], vec![1e-3]).run(&x, &folds, &mut scorer, &mut || {})?;
/// assert_eq!(result.best_score(), 1.0);
/// # use okr_kernels::Rows;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DecodedScorer<'a, KY, M> {
    y: &'a LabelSets,
    ky: &'a KY,
    metric: M,
    decoder: CandidateDecoder,
}

impl<'a, KY, M> DecodedScorer<'a, KY, M> {
    /// Scores folds of the label sets `y` under the output kernel `ky` with `metric`.
    pub fn new(y: &'a LabelSets, ky: &'a KY, metric: M) -> Self {
        Self { y, ky, metric, decoder: CandidateDecoder::new() }
    }
}

/// A prepared fold of [`DecodedScorer`].
pub struct DecodedFold {
    candidates: LabelSets,
    g: Mat<f64>,
    norms: Vec<f64>,
    truth: LabelSets,
}

impl<KY, M, E> FoldScorer for DecodedScorer<'_, KY, M>
where
    KY: Kernel<LabelSets>,
    M: FnMut(&LabelSets, &LabelSets) -> Result<f64, E>,
    E: From<okr_surrogate::Error> + From<Error>,
{
    type Error = E;
    type Fold = DecodedFold;

    fn prepare(&mut self, train: &[usize], validation: &[usize]) -> Result<DecodedFold, E> {
        let y_tr = self.y.select(train);
        let (candidates, _) = y_tr.unique();
        let g = self.ky.gram_block(&y_tr, &candidates);
        let norms = self.ky.diag(&candidates);
        Ok(DecodedFold { candidates, g, norms, truth: self.y.select(validation) })
    }

    fn atom_products<'f>(&self, fold: &'f DecodedFold) -> MatRef<'f, f64> {
        fold.g.as_ref()
    }

    fn score(
        &mut self,
        fold: &DecodedFold,
        coefficients: MatRef<'_, f64>,
        projected: MatRef<'_, f64>,
    ) -> Result<f64, E> {
        let decoded = self.decoder.decode_matrices(coefficients, projected, &fold.norms)?;
        (self.metric)(&fold.truth, &fold.candidates.select(&decoded.best()))
    }
}

/// K-fold search of any estimator's input width and ridge by refitting it:
/// for every fold, width multiplier $c$ and ridge $\lambda$, the caller's
/// `fit(x_T, y_T, gamma, lambda)` is fitted on the fold's training rows with
/// $\gamma = c / m$ ($m$ the median squared distance between training inputs,
/// over at most `median_rows` evenly spaced rows), its predictions on the
/// validation rows are decoded over the fitted model's candidates (its
/// distinct training outputs: label sets, vectors, graphs, rankings) and
/// scored by `metric(truth, decoded)`, higher is better (negate an error).
///
/// For IOKR, `okr_estimators::select::GaussianIokrSearch` with a
/// [`DecodedScorer`] gives the same scores from one eigendecomposition per
/// fold and width; this search costs one fit per cell and serves every
/// estimator (Nystroem, sketched, reduced-rank, KDE, trace norm).
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `widths` | - | multipliers $c$ | finite, $> 0$ |
/// | `lambdas` | - | ridges $\lambda$ | finite, $> 0$ |
/// | `median_rows` | 2000 | rows sampled for $m$ | $\ge 2$ |
///
/// The choice is the grid point of largest mean fold score; ties keep the
/// first (smallest index in `widths`, then in `lambdas`).
///
/// # Example
/// ```
/// use okr_decode::select::RefitSearch;
/// use okr_estimators::{Fit, nystroem::{Anchors, Nystroem}};
/// use okr_kernels::{DenseRows, Gaussian, LabelSets};
/// let x = DenseRows::from_rows(&(0..12).map(|i| vec![i as f64, (i % 3) as f64]).collect::<Vec<_>>())?;
/// let y = LabelSets::new(2, (0..12).map(|i| if i < 6 { vec![0] } else { vec![1] }).collect())?;
/// let ky = Gaussian::new(0.5)?;
/// type BoxError = Box<dyn std::error::Error>;
/// let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, BoxError> {
///     let params = Nystroem::params(Gaussian::new(gamma)?, ky.clone()).lambda(lambda).anchors(Anchors::Uniform(4));
///     Ok(params.fit(x, y)?)
/// };
/// let accuracy = |t: &LabelSets, p: &LabelSets| -> Result<f64, BoxError> {
///     Ok(t.iter().zip(p.iter()).filter(|(a, b)| a == b).count() as f64 / t.n_rows() as f64)
/// };
/// let folds = vec![((0..12).step_by(2).collect(), (1..12).step_by(2).collect())];
/// let result = RefitSearch::new(vec![0.5, 1.0], vec![1e-3]).run(&x, &y, &folds, fit, accuracy, &mut || {})?;
/// assert_eq!(result.best_score(), 1.0);
/// # use okr_kernels::Rows;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RefitSearch {
    widths: Vec<f64>,
    lambdas: Vec<f64>,
    median_rows: usize,
    decoder: CandidateDecoder,
    error_score: Option<f64>,
}

impl RefitSearch {
    /// A search over width multipliers `widths` and ridges `lambdas`.
    pub fn new(widths: Vec<f64>, lambdas: Vec<f64>) -> Self {
        Self { widths, lambdas, median_rows: 2000, decoder: CandidateDecoder::new(), error_score: None }
    }

    /// The score of a cell that fails (its fit, the decoding of its
    /// validation rows or its metric; NaN: the cell is never chosen), instead
    /// of ending the search with its error, as scikit-learn's `error_score`:
    /// a ridge too small for one estimator should not end the search of the
    /// others. When every cell of the grid fails, the first error is returned.
    pub fn error_score(mut self, score: f64) -> Self {
        self.error_score = Some(score);
        self
    }

    /// Rows sampled for the median heuristic (evenly spaced).
    pub fn median_rows(mut self, rows: usize) -> Self {
        self.median_rows = rows;
        self
    }

    /// The decoder of the validation rows (memory budget, precision).
    pub fn decoder(mut self, decoder: CandidateDecoder) -> Self {
        self.decoder = decoder;
        self
    }

    /// Runs the search on inputs `x` and outputs `y` with the given
    /// `folds` (pairs of training and validation row indices); `on_step` is
    /// called after each fold and width (`folds.len() * widths.len()` calls).
    ///
    /// # Errors
    /// [`okr_surrogate::Error::InvalidParameter`] or
    /// [`okr_surrogate::Error::Empty`] for a bad grid, fewer than 2
    /// `median_rows`, no folds, a fold with an empty side, an index out of
    /// range, `x` and `y` of different lengths, or inputs that are all
    /// identical (no width to scale); the fit's, decoding's and metric's errors.
    #[allow(clippy::too_many_arguments)]
    pub fn run<X, Y, S, F, M, E>(
        &self,
        x: &X,
        y: &Y,
        folds: &[(Vec<usize>, Vec<usize>)],
        mut fit: F,
        mut metric: M,
        on_step: &mut dyn FnMut(),
    ) -> Result<GridSearchResult, E>
    where
        X: Rows,
        Y: Rows,
        Linear: Kernel<X>,
        S: KernelExpansion<X, Y>,
        F: FnMut(&X, &Y, f64, f64) -> Result<S, E>,
        M: FnMut(&Y, &Y) -> Result<f64, E>,
        E: From<okr_surrogate::Error> + From<Error>,
    {
        check_grid(&self.widths, &self.lambdas)?;
        let n = x.n_rows();
        if y.n_rows() != n {
            let what = "outputs, one per input row";
            return Err(okr_surrogate::Error::ShapeMismatch { what, expected: n, got: y.n_rows() }.into());
        }
        check_folds(folds, n)?;
        let median = search_median(x, self.median_rows)?;
        let (nw, nl) = (self.widths.len(), self.lambdas.len());
        let mut fold_scores = vec![vec![Vec::with_capacity(folds.len()); nl]; nw];
        let (mut first_error, mut fitted) = (None, 0usize);
        for (train, validation) in folds {
            let (x_tr, y_tr, x_va) = (x.select(train), y.select(train), x.select(validation));
            let truth = y.select(validation);
            for (wi, &c) in self.widths.iter().enumerate() {
                for (li, &lambda) in self.lambdas.iter().enumerate() {
                    // A cell that fails (its fit, decoding or metric) scores
                    // `error_score` when one is set, else ends the search.
                    let mut cell = || -> Result<f64, E> {
                        let model = fit(&x_tr, &y_tr, c / median, lambda)?;
                        let candidates = model.training_outputs();
                        let best = self.decoder.decode(&model, &x_va, candidates)?.best();
                        metric(&truth, &candidates.select(&best))
                    };
                    match (cell(), self.error_score) {
                        (Ok(score), _) => {
                            fitted += 1;
                            fold_scores[wi][li].push(score);
                        }
                        (Err(e), None) => return Err(e),
                        (Err(e), Some(score)) => {
                            first_error.get_or_insert(e);
                            fold_scores[wi][li].push(score);
                        }
                    }
                }
                on_step();
            }
        }
        match first_error {
            Some(e) if fitted == 0 => Err(e),
            _ => Ok(GridSearchResult::from_fold_scores(median, self.widths.clone(), self.lambdas.clone(), fold_scores)),
        }
    }
}

/// The best candidate per row of `products` `(m, n_c)` under the scores
/// `norms[c] - 2 products[a, c]`, leaving out candidate `exclude[a]` for row
/// `a`; ties go to the lowest index.
///
/// # Errors
/// [`Error::NoCandidates`] when a row has no candidate left;
/// [`Error::NonFiniteScore`] for a NaN or infinite score.
///
/// # Example
/// ```
/// let p = faer::mat![[1.0, 0.5], [0.0, 2.0]];
/// let best = okr_decode::select::best_excluding(p.as_ref(), &[1.0, 1.0], &[Some(0), None])?;
/// assert_eq!(best, [1, 1]);
/// Ok::<(), okr_decode::Error>(())
/// ```
pub fn best_excluding(
    products: MatRef<'_, f64>,
    norms: &[f64],
    exclude: &[Option<usize>],
) -> Result<Vec<usize>, Error> {
    let mut best = Vec::with_capacity(products.nrows());
    for a in 0..products.nrows() {
        let mut choice: Option<(usize, f64)> = None;
        for (c, &norm) in norms.iter().enumerate().take(products.ncols()) {
            if exclude.get(a).copied().flatten() == Some(c) {
                continue;
            }
            let s = norm - 2.0 * products[(a, c)];
            if !s.is_finite() {
                return Err(Error::NonFiniteScore { row: a });
            }
            if choice.is_none_or(|(_, b)| s < b) {
                choice = Some((c, s));
            }
        }
        best.push(choice.ok_or(Error::NoCandidates)?.0);
    }
    Ok(best)
}

/// Closed-form leave-one-out search over input kernels and ridges for IOKR
/// on label sets: for each input kernel (one eigendecomposition of its
/// training Gram each) and every ridge of `lambdas`, the exact leave-one-out
/// predictions ([`LooProducts`]) of the training rows `rows` are decoded over
/// the distinct training label sets (a row's own set left out when no other
/// row has it, as a refit without the row would not know it) and scored by
/// `metric(truth, decoded)`.
///
/// The result has one "fold" (the rows); `widths` labels the kernels in it
/// (width multipliers for Gaussian kernels) and `median_sq_dist` is passed
/// through.
///
/// # Errors
/// [`Error::Empty`](okr_surrogate::Error::Empty) for no kernel, ridge or row; the
/// decomposition's, decoding's and metric's errors.
#[allow(clippy::too_many_arguments)]
pub fn loo_grid<X, KX, KY, M, E>(
    x: &X,
    y: &LabelSets,
    kernels: &[(f64, KX)],
    ky: &KY,
    lambdas: &[f64],
    rows: &[usize],
    median_sq_dist: f64,
    mut metric: M,
    on_step: &mut dyn FnMut(),
) -> Result<GridSearchResult, E>
where
    X: Rows,
    KX: Kernel<X>,
    KY: Kernel<LabelSets>,
    M: FnMut(&LabelSets, &LabelSets) -> Result<f64, E>,
    E: From<okr_surrogate::Error> + From<Error>,
{
    if kernels.is_empty() || lambdas.is_empty() {
        return Err(okr_surrogate::Error::Empty { what: "kernels or ridges of the leave-one-out search" }.into());
    }
    let (candidates, index) = y.group_duplicates();
    let g = ky.gram_block(y, &candidates);
    let norms = ky.diag(&candidates);
    let mut count = vec![0usize; candidates.n_rows()];
    index.iter().for_each(|&c| count[c] += 1);
    let exclude: Vec<Option<usize>> = rows.iter().map(|&i| (count[index[i]] == 1).then_some(index[i])).collect();
    let truth = y.select(rows);
    let mut fold_scores = Vec::with_capacity(kernels.len());
    for (_, kx) in kernels {
        let path = IokrPath::new(kx.gram(x).as_ref())?;
        let loo = LooProducts::new(&path, rows, g.as_ref())?;
        let mut row = Vec::with_capacity(lambdas.len());
        for &lambda in lambdas {
            let best = best_excluding(loo.products(lambda)?.as_ref(), &norms, &exclude)?;
            row.push(vec![metric(&truth, &candidates.select(&best))?]);
        }
        fold_scores.push(row);
        on_step();
    }
    let widths = kernels.iter().map(|(c, _)| *c).collect();
    Ok(GridSearchResult::from_fold_scores(median_sq_dist, widths, lambdas.to_vec(), fold_scores))
}
