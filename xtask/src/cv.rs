//! K-fold cross-validation of IOKR with a Gaussian input kernel over a grid
//! of widths and ridges, on the training split only.
//!
//! The input width is relative to the median squared distance between
//! training points (`okr_kernels::median_sq_distance` on up to 2000 rows),
//! `gamma = c / median`. Per fold and width, the fold's Gram blocks come from
//! the Gaussian kernel's tiled path and one eigendecomposition serves every
//! `lambda` (`IokrPath`); each `lambda` costs one GEMM plus decoding.

use anyhow::Result;
use indicatif::ProgressBar;
use okr_decode::CandidateDecoder;
use okr_estimators::iokr::IokrPath;
use okr_eval::{KFold, f1_samples};
use okr_kernels::{Gaussian, Kernel, LabelSets, Linear, Rows, median_sq_distance};

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

/// What cross-validation selected.
#[derive(Debug, Clone)]
pub struct CvChoice {
    /// Median squared distance between training points.
    pub median_sq_dist: f64,
    /// Selected width multiplier.
    pub c: f64,
    /// Selected `gamma = c / median_sq_dist`.
    pub gamma: f64,
    /// Selected ridge.
    pub lambda: f64,
    /// Mean validation example-based F1 of the selection.
    pub cv_f1: f64,
    /// Mean validation F1 for every (width, lambda).
    pub grid: Vec<Vec<f64>>,
}

impl GaussianIokrCv {
    /// Number of progress steps `run` reports (one per fold and width).
    pub fn steps(&self) -> u64 {
        (self.folds * self.widths.len()) as u64
    }

    /// Runs the grid on `(x, y)` with output kernel `ky`; ties keep the first
    /// grid point (smallest width, then smallest lambda).
    pub fn run<X, KY>(&self, x: &X, y: &LabelSets, ky: &KY, pb: &ProgressBar) -> Result<CvChoice>
    where
        X: Rows,
        Linear: Kernel<X>,
        Gaussian: Kernel<X>,
        KY: Kernel<LabelSets>,
    {
        let n = x.n_rows();
        let median = median_sq_distance(x, MEDIAN_ROWS);
        anyhow::ensure!(median > 0.0, "all training inputs are identical: no kernel width can be chosen");
        let folds = KFold::new(self.folds).shuffle(self.seed).split(n)?;
        let mut grid = vec![vec![0.0; self.lambdas.len()]; self.widths.len()];
        let decoder = CandidateDecoder::new();
        for (tr, va) in &folds {
            let y_tr = y.select(tr);
            let (cand, _) = y_tr.unique();
            let g = ky.gram_block(&y_tr, &cand);
            let norms = ky.diag(&cand);
            let truth = y.select(va);
            let (x_tr, x_va) = (x.select(tr), x.select(va));
            for (wi, &c) in self.widths.iter().enumerate() {
                let kx = Gaussian::new(c / median)?;
                let k_tr = kx.gram(&x_tr);
                let k_va = kx.gram_block(&x_va, &x_tr);
                let path = IokrPath::new(k_tr.as_ref())?;
                let a = path.project_inputs(k_va.as_ref());
                let b = path.project_atoms(g.as_ref());
                for (li, &lambda) in self.lambdas.iter().enumerate() {
                    let coef = path.scaled_coefficients(a.as_ref(), lambda);
                    let decoded = decoder.decode_matrices(coef.as_ref(), b.as_ref(), &norms)?;
                    let pred = cand.select(&decoded.best());
                    grid[wi][li] += f1_samples(&truth, &pred)? / folds.len() as f64;
                }
                pb.inc(1);
            }
        }
        let (mut bw, mut bl) = (0, 0);
        for (wi, row) in grid.iter().enumerate() {
            for (li, &v) in row.iter().enumerate() {
                if v > grid[bw][bl] {
                    (bw, bl) = (wi, li);
                }
            }
        }
        Ok(CvChoice {
            median_sq_dist: median,
            c: self.widths[bw],
            gamma: self.widths[bw] / median,
            lambda: self.lambdas[bl],
            cv_f1: grid[bw][bl],
            grid,
        })
    }
}
