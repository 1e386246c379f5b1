//! What decoded model selection needs from IOKR: the fold scorer interface
//! of K-fold searches ([`FoldScorer`]), the grid of every fold score and its
//! choice ([`GridSearchResult`]), and exact leave-one-out products
//! ([`LooProducts`], in `loo.rs`). okr-estimators runs the searches
//! (`okr_estimators::select`); okr-decode decodes their predictions.

use faer::MatRef;
use okr_kernels::{Kernel, Linear, Rows, median_sq_distance};
use serde::Serialize;

use crate::{Error, Result};

/// Scores IOKR's prediction on the validation rows of one fold.
///
/// With training rows $T$ and validation rows $V$ of a fold, IOKR predicts
/// $h(x_v) = \sum_{i \in T} \alpha_{vi} \psi(y_i)$ with
/// $\alpha^\top = K_{VT}(K_{TT} + n_T\lambda I)^{-1}$. The search never forms
/// $\alpha$: for atom products $G$ `(n_T, r)` (for example
/// $G_{ic} = k_y(y_i, c)$ over candidate outputs $c$) it hands the scorer the
/// factors of $\alpha^\top G = C_\lambda B$, with
/// $C_\lambda = K_{VT} V \operatorname{diag}(1/(s + n_T\lambda))$ `(n_V, n_T)` and
/// $B = V^\top G$ `(n_T, r)` computed once per fold and width.
pub trait FoldScorer {
    /// The error of scoring; okr-estimators errors convert into it.
    type Error: From<Error>;
    /// What a fold needs across widths and ridges (validation truth,
    /// candidates, atom products).
    type Fold;

    /// Prepares a fold from its training and validation row indices.
    ///
    /// # Errors
    /// Whatever preparing the outputs can fail with.
    fn prepare(&mut self, train: &[usize], validation: &[usize]) -> std::result::Result<Self::Fold, Self::Error>;

    /// The atom products $G$ `(n_T, r)` of a prepared fold.
    fn atom_products<'a>(&self, fold: &'a Self::Fold) -> MatRef<'a, f64>;

    /// Scores one prediction $C_\lambda B$ (higher is better).
    ///
    /// # Errors
    /// Whatever decoding or the metric can fail with.
    fn score(
        &mut self,
        fold: &Self::Fold,
        coefficients: MatRef<'_, f64>,
        projected_atoms: MatRef<'_, f64>,
    ) -> std::result::Result<f64, Self::Error>;
}

/// Checks the grid of a search: `widths` (multipliers $c$) and `lambdas`
/// (ridges) each non-empty, finite and $> 0$.
///
/// # Errors
/// [`Error::Empty`] for an empty list, [`Error::InvalidParameter`] for a
/// value that is not finite and positive.
pub fn check_grid(widths: &[f64], lambdas: &[f64]) -> Result<()> {
    for (name, values) in [("widths", widths), ("lambdas", lambdas)] {
        if values.is_empty() {
            return Err(Error::Empty { what: name });
        }
        if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(Error::InvalidParameter { name, value: v.to_string(), expected: "finite and > 0" });
        }
    }
    Ok(())
}

/// Checks the folds of a search on `n` rows: at least one, each with
/// training and validation rows, every index below `n`.
///
/// # Errors
/// [`Error::Empty`] for no fold or an empty side, [`Error::ShapeMismatch`]
/// for an index out of range.
pub fn check_folds(folds: &[(Vec<usize>, Vec<usize>)], n: usize) -> Result<()> {
    if folds.is_empty() {
        return Err(Error::Empty { what: "folds" });
    }
    for (train, validation) in folds {
        if train.is_empty() || validation.is_empty() {
            return Err(Error::Empty { what: "fold training or validation rows" });
        }
        if let Some(&i) = train.iter().chain(validation).find(|&&i| i >= n) {
            return Err(Error::ShapeMismatch { what: "fold row index below n_samples", expected: n, got: i });
        }
    }
    Ok(())
}

/// The median squared distance $m$ between the rows of `x` (at most `rows`
/// evenly spaced rows), the scale of a search's width multipliers
/// ($\gamma = c / m$).
///
/// # Errors
/// [`Error::InvalidParameter`] for fewer than 2 `rows` (`median_rows` of the
/// searches), a median that is not finite (the squared distances overflow)
/// or not positive (the inputs are all identical: no width can be chosen).
pub fn search_median<X: Rows>(x: &X, rows: usize) -> Result<f64>
where
    Linear: Kernel<X>,
{
    if rows < 2 {
        return Err(Error::InvalidParameter { name: "median_rows", value: rows.to_string(), expected: ">= 2" });
    }
    let median = median_sq_distance(x, rows);
    if !median.is_finite() {
        return Err(Error::InvalidParameter {
            name: "median squared distance",
            value: median.to_string(),
            expected: "finite (the squared distances between training inputs overflow: scale the features)",
        });
    }
    if median <= 0.0 {
        return Err(Error::InvalidParameter {
            name: "median squared distance",
            value: median.to_string(),
            expected: "> 0 (training inputs are all identical: no kernel width can be chosen)",
        });
    }
    Ok(median)
}

/// Every score of a grid search over input kernels and ridges (okr-estimators'
/// `GaussianIokrSearch` and `WidthLineSearch`, okr-decode's `loo_grid`) and its choice.
#[derive(Debug, Clone, PartialEq)]
pub struct GridSearchResult {
    /// Median squared distance $m$ between training inputs.
    pub median_sq_dist: f64,
    /// Width multipliers $c$ of the grid.
    pub widths: Vec<f64>,
    /// Ridges $\lambda$ of the grid.
    pub lambdas: Vec<f64>,
    /// Score of every fold: `fold_scores[w][l][f]` for width `w`, ridge `l`, fold `f`.
    pub fold_scores: Vec<Vec<Vec<f64>>>,
    /// Mean over folds, `mean[w][l]`: $\sum_f s_f / k$ accumulated in fold order.
    pub mean: Vec<Vec<f64>>,
    /// Population standard deviation over folds, `std[w][l]`.
    pub std: Vec<Vec<f64>>,
    /// Index of the chosen width in `widths`.
    pub best_width: usize,
    /// Index of the chosen ridge in `lambdas`.
    pub best_lambda: usize,
}

/// The first cell of largest mean (smallest width index, then smallest ridge index).
fn best_cell(mean: &[Vec<f64>]) -> (usize, usize) {
    let (mut best_width, mut best_lambda, mut best) = (0, 0, f64::NEG_INFINITY);
    for (wi, row) in mean.iter().enumerate() {
        for (li, &v) in row.iter().enumerate() {
            if v > best {
                (best_width, best_lambda, best) = (wi, li, v);
            }
        }
    }
    (best_width, best_lambda)
}

impl GridSearchResult {
    /// A result from every fold score, `fold_scores[w][l][f]` (the same
    /// number of folds in every cell): means, standard deviations and the choice.
    pub fn from_fold_scores(
        median_sq_dist: f64,
        widths: Vec<f64>,
        lambdas: Vec<f64>,
        fold_scores: Vec<Vec<Vec<f64>>>,
    ) -> Self {
        // Summed as s_f / k in fold order, so that the means (and the choice)
        // do not depend on how the folds were accumulated.
        let mean: Vec<Vec<f64>> = fold_scores
            .iter()
            .map(|row| row.iter().map(|s| s.iter().fold(0.0, |m, v| m + v / s.len() as f64)).collect())
            .collect();
        let std = fold_scores
            .iter()
            .zip(&mean)
            .map(|(row, means)| {
                row.iter()
                    .zip(means)
                    .map(|(s, m)| (s.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / s.len() as f64).sqrt())
                    .collect()
            })
            .collect();
        let (best_width, best_lambda) = best_cell(&mean);
        Self { median_sq_dist, widths, lambdas, fold_scores, mean, std, best_width, best_lambda }
    }

    /// Joins two searches over different widths with the same ridges, folds
    /// and median: widths sorted ascending, every score kept, the choice made
    /// again (ties keep the smallest width, then the smallest ridge).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the ridges, the median or the number
    /// of folds differ, or a width appears in both.
    pub fn merge(self, other: GridSearchResult) -> Result<GridSearchResult> {
        let folds = |r: &GridSearchResult| r.fold_scores.first().and_then(|w| w.first()).map_or(0, Vec::len);
        let mismatch = |what: &'static str| Error::InvalidParameter {
            name: "merged grid searches",
            value: what.to_string(),
            expected: "the same ridges, median squared distance and folds, and distinct widths",
        };
        if self.lambdas != other.lambdas {
            return Err(mismatch("different ridges"));
        }
        if self.median_sq_dist != other.median_sq_dist {
            return Err(mismatch("different median squared distances"));
        }
        if folds(&self) != folds(&other) {
            return Err(mismatch("different numbers of folds"));
        }
        if other.widths.iter().any(|w| self.widths.contains(w)) {
            return Err(mismatch("a width in both"));
        }
        let (median_sq_dist, lambdas) = (self.median_sq_dist, self.lambdas.clone());
        let mut rows: Vec<(f64, Vec<Vec<f64>>)> = self
            .widths
            .into_iter()
            .zip(self.fold_scores)
            .chain(other.widths.into_iter().zip(other.fold_scores))
            .collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (widths, fold_scores) = rows.into_iter().unzip();
        Ok(Self::from_fold_scores(median_sq_dist, widths, lambdas, fold_scores))
    }

    /// The chosen multiplier $c$.
    pub fn c(&self) -> f64 {
        self.widths[self.best_width]
    }

    /// The chosen $\gamma = c / m$.
    pub fn gamma(&self) -> f64 {
        self.c() / self.median_sq_dist
    }

    /// The chosen ridge $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambdas[self.best_lambda]
    }

    /// Mean fold score of the choice.
    pub fn best_score(&self) -> f64 {
        self.mean[self.best_width][self.best_lambda]
    }

    /// Every cell of the grid, widths outer and ridges inner (the order of
    /// `fold_scores`), with its $\gamma = c / m$; serializes as one record per
    /// cell (what `okr tune --json` prints).
    ///
    /// # Example
    /// ```
    /// use okr_surrogate::GridSearchResult;
    /// let scores = vec![vec![vec![0.25, 0.75]], vec![vec![0.5, 0.5]]];
    /// let r = GridSearchResult::from_fold_scores(2.0, vec![0.5, 1.0], vec![1e-3], scores);
    /// let cells = r.cells();
    /// assert_eq!((cells.len(), cells[1].gamma, cells[0].mean, cells[0].std), (2, 0.5, 0.5, 0.25));
    /// ```
    pub fn cells(&self) -> Vec<GridCell> {
        let mut out = Vec::with_capacity(self.widths.len() * self.lambdas.len());
        for (wi, &c) in self.widths.iter().enumerate() {
            for (li, &lambda) in self.lambdas.iter().enumerate() {
                out.push(GridCell {
                    c,
                    gamma: c / self.median_sq_dist,
                    lambda,
                    mean: self.mean[wi][li],
                    std: self.std[wi][li],
                    fold_scores: self.fold_scores[wi][li].clone(),
                });
            }
        }
        out
    }
}

/// One cell of a [`GridSearchResult`]: a width multiplier and a ridge with
/// the mean, the population standard deviation and every fold score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridCell {
    /// Width multiplier $c$.
    pub c: f64,
    /// $\gamma = c / m$, $m$ the median squared distance.
    pub gamma: f64,
    /// Ridge $\lambda$.
    pub lambda: f64,
    /// Mean fold score.
    pub mean: f64,
    /// Population standard deviation of the fold scores.
    pub std: f64,
    /// Score of every fold.
    pub fold_scores: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_the_grid_order() {
        let scores = vec![vec![vec![0.1, 0.3], vec![0.2, 0.2]], vec![vec![0.9, 0.7], vec![0.0, 0.4]]];
        let r = GridSearchResult::from_fold_scores(4.0, vec![1.0, 2.0], vec![1e-2, 1e-1], scores.clone());
        let cells = r.cells();
        assert_eq!(cells.len(), 4);
        for (k, cell) in cells.iter().enumerate() {
            let (wi, li) = (k / 2, k % 2);
            assert_eq!((cell.c, cell.lambda), (r.widths[wi], r.lambdas[li]));
            assert_eq!(cell.gamma, r.widths[wi] / 4.0);
            assert_eq!(cell.fold_scores, scores[wi][li]);
            let mean = scores[wi][li].iter().sum::<f64>() / 2.0;
            assert!((cell.mean - mean).abs() < 1e-15);
            let sd = (scores[wi][li].iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
            assert!((cell.std - sd).abs() < 1e-15);
        }
        // The best cell (width 2, ridge 1e-2, mean 0.8) is the one of largest mean.
        let best = cells.iter().max_by(|a, b| a.mean.total_cmp(&b.mean)).unwrap();
        assert_eq!((best.c, best.lambda), (r.c(), r.lambda()));
    }
}
