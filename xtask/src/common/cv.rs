//! K-fold cross-validation of IOKR with a Gaussian input kernel over a grid
//! of widths and ridges, on the training split only, through the library's
//! [`GaussianIokrSearch`] with example-based F1 of the decoded candidates as
//! the fold score ([`DecodedScorer`]).

use anyhow::Result;
use indicatif::ProgressBar;
use okr_decode::select::DecodedScorer;
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::SurrogateModel;
use okr_estimators::select::{GaussianIokrSearch, GridSearchResult};
use okr_eval::{KFold, f1_samples};
use okr_kernels::{Gaussian, Kernel, LabelSets, Linear, Rows};

use super::timing::{Timed, timed};

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

/// Example-based F1 of the candidates (a fold's distinct training label
/// sets) decoded on the fold's validation rows.
pub fn decoded_f1<'a, KY>(
    y: &'a LabelSets,
    ky: &'a KY,
) -> DecodedScorer<'a, KY, impl FnMut(&LabelSets, &LabelSets) -> Result<f64>> {
    DecodedScorer::new(y, ky, |t: &LabelSets, p: &LabelSets| -> Result<f64> { Ok(f1_samples(t, p)?) })
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
        search.run(x, &folds, &mut decoded_f1(y, ky), &mut || pb.inc(1))
    }
}

/// Example-based F1 of `model` decoding the rows of `x` over `candidates`
/// (the best candidate per row, f64 scores) against the true label sets `y`.
pub fn decode_f1<X: Rows, M: SurrogateModel<X, LabelSets>>(
    model: &M,
    x: &X,
    y: &LabelSets,
    candidates: &LabelSets,
) -> Result<f64> {
    decode_f1_by(CandidateDecoder::new(), model, x, y, candidates)
}

/// As [`decode_f1`], with the decoder `decoder` (a forced chain order, say).
pub fn decode_f1_by<X: Rows, M: SurrogateModel<X, LabelSets>>(
    decoder: CandidateDecoder,
    model: &M,
    x: &X,
    y: &LabelSets,
    candidates: &LabelSets,
) -> Result<f64> {
    let best = decoder.decode(model, x, candidates)?.best();
    Ok(f1_samples(y, &candidates.select(&best))?)
}

/// Fits with `fit`, then decodes the rows of `x_test` over `candidates`
/// (f64 scores): the decoded rows, the fit's timing and the decode's.
pub fn fit_then_decode<X: Rows, M: SurrogateModel<X, LabelSets>>(
    fit: impl FnOnce() -> okr_estimators::Result<M>,
    x_test: &X,
    candidates: &LabelSets,
) -> Result<(Decoded, Timed, Timed)> {
    let (model, fit_time) = timed(fit);
    let model = model?;
    let (decoded, decode_time) = timed(|| CandidateDecoder::new().decode(&model, x_test, candidates));
    Ok((decoded?, fit_time, decode_time))
}
