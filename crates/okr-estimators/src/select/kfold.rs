//! K-fold search over Gaussian widths and ridge values for IOKR.

use faer::MatRef;
use okr_kernels::{Gaussian, Kernel, Linear, Rows, median_sq_distance};

use crate::iokr::IokrPath;
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

/// K-fold search of IOKR's Gaussian input width and ridge.
///
/// For every fold, width multiplier $c$ and ridge $\lambda$, IOKR with input
/// kernel $\exp(-\gamma\|x - x'\|^2)$, $\gamma = c / m$ ($m$ the median squared
/// distance between training inputs, over at most `median_rows` evenly spaced
/// rows) and ridge $(K + n_T\lambda I)$ is fitted on the fold's training rows
/// and scored on its validation rows. One eigendecomposition per fold and
/// width serves every $\lambda$ ([`IokrPath`]).
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `widths` | - | multipliers $c$ | finite, $> 0$ |
/// | `lambdas` | - | ridges $\lambda$ | finite, $> 0$ |
/// | `median_rows` | 2000 | rows sampled for $m$ | $\ge 2$ |
///
/// The choice is the grid point of largest mean fold score; ties keep the
/// first (smallest index in `widths`, then in `lambdas`).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianIokrSearch {
    widths: Vec<f64>,
    lambdas: Vec<f64>,
    median_rows: usize,
}

/// Every score of a [`GaussianIokrSearch`] and its choice.
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
}

impl GaussianIokrSearch {
    /// A search over width multipliers `widths` and ridges `lambdas`.
    pub fn new(widths: Vec<f64>, lambdas: Vec<f64>) -> Self {
        Self { widths, lambdas, median_rows: 2000 }
    }

    /// Rows sampled for the median heuristic (evenly spaced).
    pub fn median_rows(mut self, rows: usize) -> Self {
        self.median_rows = rows;
        self
    }

    /// Width multipliers of the grid.
    pub fn widths(&self) -> &[f64] {
        &self.widths
    }

    /// Ridges of the grid.
    pub fn lambdas(&self) -> &[f64] {
        &self.lambdas
    }

    fn check(&self) -> Result<()> {
        let bad = |name: &'static str, v: &[f64]| {
            if v.is_empty() {
                return Err(Error::Empty { what: name });
            }
            match v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                Some(x) => Err(Error::InvalidParameter { name, value: x.to_string(), expected: "finite and > 0" }),
                None => Ok(()),
            }
        };
        bad("widths", &self.widths)?;
        bad("lambdas", &self.lambdas)?;
        if self.median_rows < 2 {
            return Err(Error::InvalidParameter {
                name: "median_rows",
                value: self.median_rows.to_string(),
                expected: ">= 2",
            });
        }
        Ok(())
    }

    /// Runs the search on inputs `x` with the given `folds` (pairs of training
    /// and validation row indices); `on_step` is called after each fold and
    /// width (`folds.len() * widths.len()` calls).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] or [`Error::Empty`] for a bad grid, no
    /// folds, a fold with an empty side or an index out of range, or inputs
    /// that are all identical (no width to scale); decomposition errors;
    /// the scorer's errors.
    pub fn run<X, S>(
        &self,
        x: &X,
        folds: &[(Vec<usize>, Vec<usize>)],
        scorer: &mut S,
        on_step: &mut dyn FnMut(),
    ) -> std::result::Result<GridSearchResult, S::Error>
    where
        X: Rows,
        Linear: Kernel<X>,
        Gaussian: Kernel<X>,
        S: FoldScorer,
    {
        self.check()?;
        if folds.is_empty() {
            return Err(Error::Empty { what: "folds" }.into());
        }
        let n = x.n_rows();
        for (tr, va) in folds {
            if tr.is_empty() || va.is_empty() {
                return Err(Error::Empty { what: "fold training or validation rows" }.into());
            }
            if let Some(&i) = tr.iter().chain(va).find(|&&i| i >= n) {
                return Err(Error::ShapeMismatch { what: "fold row index below n_samples", expected: n, got: i }.into());
            }
        }
        let median = median_sq_distance(x, self.median_rows);
        if !(median > 0.0 && median.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "median squared distance",
                value: median.to_string(),
                expected: "> 0 (training inputs are all identical: no kernel width can be chosen)",
            }
            .into());
        }
        let k = folds.len();
        let (nw, nl) = (self.widths.len(), self.lambdas.len());
        let mut fold_scores = vec![vec![Vec::with_capacity(k); nl]; nw];
        for (tr, va) in folds {
            let fold = scorer.prepare(tr, va)?;
            let (x_tr, x_va) = (x.select(tr), x.select(va));
            for (wi, &c) in self.widths.iter().enumerate() {
                let kx = Gaussian::new(c / median).map_err(Error::from)?;
                let k_tr = kx.gram(&x_tr);
                let k_va = kx.gram_block(&x_va, &x_tr);
                let path = IokrPath::new(k_tr.as_ref())?;
                let a = path.project_inputs(k_va.as_ref());
                let b = path.project_atoms(scorer.atom_products(&fold));
                for (li, &lambda) in self.lambdas.iter().enumerate() {
                    let coef = path.scaled_coefficients(a.as_ref(), lambda);
                    fold_scores[wi][li].push(scorer.score(&fold, coef.as_ref(), b.as_ref())?);
                }
                on_step();
            }
        }
        Ok(GridSearchResult::from_fold_scores(median, self.widths.clone(), self.lambdas.clone(), fold_scores))
    }
}
