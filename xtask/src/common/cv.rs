//! K-fold cross-validation of IOKR with a Gaussian input kernel over a grid
//! of widths and ridges, on the training split only, through the library's
//! [`GaussianIokrSearch`] with example-based F1 of the decoded candidates as
//! the fold score.

use anyhow::Result;
use faer::{Mat, MatRef};
use indicatif::ProgressBar;
use okr_decode::CandidateDecoder;
use okr_estimators::select::{FoldScorer, GaussianIokrSearch, GridSearchResult};
use okr_eval::{KFold, f1_samples};
use okr_kernels::{Gaussian, Kernel, LabelSets, Linear, Rows};

/// Rows sampled for the median squared distance.
pub const MEDIAN_ROWS: usize = 2000;

/// The grid and protocol.
#[derive(Debug, Clone)]
pub struct GaussianIokrCv {
    /// Width multipliers `c` (`gamma = c / median squared distance`).
    pub widths: Vec<f64>,
    /// Ridge values `lambda`.
    pub lambdas: Vec<f64>,
    /// Number of folds.
    pub folds: usize,
    /// Seed of the fold shuffle.
    pub seed: u64,
}

/// Example-based F1 of the candidates (the distinct training label sets of
/// the fold) decoded on a fold's validation rows.
pub struct DecodedF1<'a, KY> {
    y: &'a LabelSets,
    ky: &'a KY,
    decoder: CandidateDecoder,
}

impl<'a, KY> DecodedF1<'a, KY> {
    /// Scores folds of the label sets `y` under the output kernel `ky`.
    pub fn new(y: &'a LabelSets, ky: &'a KY) -> Self {
        Self { y, ky, decoder: CandidateDecoder::new() }
    }
}

/// A prepared fold of [`DecodedF1`].
pub struct F1Fold {
    candidates: LabelSets,
    g: Mat<f64>,
    norms: Vec<f64>,
    truth: LabelSets,
}

impl<KY: Kernel<LabelSets>> FoldScorer for DecodedF1<'_, KY> {
    type Error = anyhow::Error;
    type Fold = F1Fold;

    fn prepare(&mut self, train: &[usize], validation: &[usize]) -> Result<F1Fold> {
        let y_tr = self.y.select(train);
        let (candidates, _) = y_tr.unique();
        let g = self.ky.gram_block(&y_tr, &candidates);
        let norms = self.ky.diag(&candidates);
        Ok(F1Fold { candidates, g, norms, truth: self.y.select(validation) })
    }

    fn atom_products<'a>(&self, fold: &'a F1Fold) -> MatRef<'a, f64> {
        fold.g.as_ref()
    }

    fn score(&mut self, fold: &F1Fold, coefficients: MatRef<'_, f64>, projected: MatRef<'_, f64>) -> Result<f64> {
        let decoded = self.decoder.decode_matrices(coefficients, projected, &fold.norms)?;
        Ok(f1_samples(&fold.truth, &fold.candidates.select(&decoded.best()))?)
    }
}

/// The cross-validation grid of the quick run.
pub fn quick_cv(seed: u64) -> GaussianIokrCv {
    GaussianIokrCv {
        widths: vec![0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
        lambdas: vec![1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1],
        folds: 3,
        seed,
    }
}

impl GaussianIokrCv {
    /// Number of progress steps `run` reports (one per fold and width).
    pub fn steps(&self) -> u64 {
        (self.folds * self.widths.len()) as u64
    }

    /// Runs the grid on `(x, y)` with output kernel `ky`; ties keep the first
    /// grid point (smallest width, then smallest lambda).
    pub fn run<X, KY>(&self, x: &X, y: &LabelSets, ky: &KY, pb: &ProgressBar) -> Result<GridSearchResult>
    where
        X: Rows,
        Linear: Kernel<X>,
        Gaussian: Kernel<X>,
        KY: Kernel<LabelSets>,
    {
        let folds = KFold::new(self.folds).shuffle(self.seed).split(x.n_rows())?;
        let search = GaussianIokrSearch::new(self.widths.clone(), self.lambdas.clone()).median_rows(MEDIAN_ROWS);
        let mut scorer = DecodedF1::new(y, ky);
        search.run(x, &folds, &mut scorer, &mut || pb.inc(1))
    }
}
