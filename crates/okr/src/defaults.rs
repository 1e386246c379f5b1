//! Every default of okr, in one place, for every front door.
//!
//! | setting | default | why |
//! |---|---|---|
//! | ridge `lambda`, every kernel-output estimator | `1e-3` | the estimators' builders; `(K + n lambda I)` |
//! | IOKR `lambda` on label sets and fingerprints | chosen by closed-form leave-one-out F1 over [`LOO_LAMBDAS`] on up to [`LOO_ROWS`] rows | exact LOO from one eigendecomposition costs about one fit; it beats any fixed value across the benchmarks |
//! | reduced-rank `lambda1`, `lambda2` | `lambda`, then `lambda1` | one ridge unless the user separates them |
//! | rank: reduced rank, KDE, Nystroem reduced rank | [`RANK`] = 64, capped at the numerical rank | the builders; enough for Bibtex's 159 labels at a fraction of a full fit |
//! | rank: trace norm | [`TRACE_NORM_RANK`] = 10, capped at `n` | the builder (the paper's factorization rank); `O(n^2 r)` per iteration |
//! | trace-norm solver | `gd` | factorized gradient descent: no `n x n` eigendecomposition |
//! | trace-norm iterations | [`TRACE_NORM_MAX_ITER`] = 10000, stopping early at relative change `1e-8` | the builder; a budget, as LEML's |
//! | Nystroem anchors | [`ANCHORS`] = 1000 uniform, capped at `n` | the builders |
//! | Nystroem reduced-rank subset | [`SUBSET`] = 2000, capped at `n` | the builder |
//! | sketch sizes | as given, capped at `n` (with a warning) | a sketch of more than `n` rows adds nothing |
//! | KDE `centered` | `false` | the paper's uncentred KPCA |
//! | input kernel | Gaussian, `gamma = 1 / (2 median ||x - x'||^2)` on the (standardized) features, at most 2000 rows | the median heuristic, scale-free |
//! | polynomial kernel | degree [`POLY_DEGREE`] = 3, `gamma = 1 / n_features`, `coef0` = 1 | scikit-learn's convention |
//! | Laplacian, Gaussian-Tanimoto widths | the median heuristic, as the Gaussian | |
//! | output kernel, label sets and fingerprints | Gaussian, `sigma^2` = mean labels (set bits) per training point | a unit change of one label is then a fixed fraction of a typical set |
//! | output kernel, vectors | Gaussian, median heuristic on the training outputs | |
//! | graphs | WL subtree, [`WL_ITERATIONS`] = 3, normalized | |
//! | rankings | Kendall; Mallows `lambda = 1 / n_pairs` | |
//! | LEML rank | [`LEML_RANK`] = 10, capped at the labels | the builder |
//! | LEML `lambda` | [`LEML_LAMBDA`] = 0.1 | the builder; LEML's penalty is not divided by `n` (leml-full's validation chose 30 on Bibtex and Delicious: tune it) |
//! | LEML loss, iterations | `sq`, [`LEML_MAX_ITER`] = 10, stopping early at relative change [`LEML_TOL`] | the builder; the tolerance makes a large `max_iter` a budget |
//! | KAE / K2AE | [`KAE_LAYERS`] = 2 layers, code [`KAE_CODE_DIM`] = 2, `lambda` = [`LAMBDA`], [`KAE_MAX_ITER`] = 500 Adam steps | the builder |
//! | KAE first-layer Gaussian width | the KAE paper's median rule on the layer's inputs (`1 / median`) | spec 5.2; K2AE's kernel takes okr's widths |
//! | standardization | dense non-binary features standardized; binary and sparse as given | the CLI's and xtask's default; the Python estimators set `standardize=False` by default (preprocessing is a pipeline step in scikit-learn); the autoencoders standardize only when asked (they reconstruct their inputs) |
//! | combined kernels | uniform weights `1/p` | |
//! | seed | 0 | |
//! | threads | every core, capped at the cores | |
//! | decoding memory budget | [`MEMORY_BUDGET_MIB`] = 1024 MiB | |
//! | decoding precision | `f64` | |

/// The ridge of every kernel-output estimator when not given (the builders').
pub const LAMBDA: f64 = 1e-3;

/// Ridges the closed-form leave-one-out choice of IOKR's `lambda` scans.
pub const LOO_LAMBDAS: [f64; 8] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1];

/// Training rows whose leave-one-out predictions score a ridge (a seeded subset beyond this).
pub const LOO_ROWS: usize = 2000;

/// Rank of reduced rank, KDE and Nystroem reduced rank.
pub const RANK: usize = 64;

/// Rank of the trace-norm surrogate.
pub const TRACE_NORM_RANK: usize = 10;

/// Nystroem anchors.
pub const ANCHORS: usize = 1000;

/// Nystroem reduced rank: the rows the projection is computed on.
pub const SUBSET: usize = 2000;

/// Polynomial kernel degree.
pub const POLY_DEGREE: u32 = 3;

/// Polynomial kernel offset.
pub const POLY_COEF0: f64 = 1.0;

/// Weisfeiler-Lehman iterations of the graph output kernel.
pub const WL_ITERATIONS: usize = 3;

/// LEML's rank (capped at the number of labels).
pub const LEML_RANK: usize = 10;

/// LEML's penalty `lambda`.
pub const LEML_LAMBDA: f64 = 0.1;

/// LEML's alternating iterations.
pub const LEML_MAX_ITER: usize = 10;

/// LEML stops when the objective changes by less than this, relatively.
pub const LEML_TOL: f64 = 1e-6;

/// LEML's loss.
pub const LEML_LOSS: &str = "sq";

/// Autoencoder layers (one inner layer: the code).
pub const KAE_LAYERS: usize = 2;

/// Autoencoder code width.
pub const KAE_CODE_DIM: usize = 2;

/// Autoencoder Adam steps.
pub const KAE_MAX_ITER: usize = 500;

/// Decoding memory budget in MiB.
pub const MEMORY_BUDGET_MIB: usize = 1024;

/// The trace-norm solver.
pub const TRACE_NORM_SOLVER: &str = "gd";

/// Trace-norm iteration budget (GD, ALS, convex).
pub const TRACE_NORM_MAX_ITER: usize = 10_000;

/// Atoms of a sketched or Nystroem output basis (`okr embed-outputs`,
/// `okr.OutputEmbedding`) when no size is given: as the estimators'
/// anchors, enough for the label sets of Bibtex and Corel5k, capped at the
/// training outputs.
pub const BASIS_SIZE: usize = ANCHORS;

/// The sketch kind of a sketched output basis: uniform sub-sampling, the
/// sub-sampled basis of DSOKR (El Ahmad et al. 2024).
pub const BASIS_SKETCH: &str = "uniform";

#[cfg(test)]
mod tests {
    use okr_estimators::nystroem::Anchors;
    use okr_estimators::{Iokr, Kde, Nystroem, NystroemReducedRank, ParamGuard, ReducedRankIokr, TraceNorm};

    use super::*;

    /// The defaults are the builders' where a builder has one.
    #[test]
    fn defaults_are_the_builders() {
        assert_eq!(Iokr::params((), ()).check().unwrap().lambda(), LAMBDA);
        let kde = Kde::params((), ()).check().unwrap();
        assert_eq!((kde.rank(), kde.lambda()), (RANK, LAMBDA));
        let rr = ReducedRankIokr::params((), ()).check().unwrap();
        assert_eq!(rr.rank(), RANK);
        let ny = Nystroem::params((), ()).check().unwrap();
        assert_eq!((ny.lambda(), ny.anchors()), (LAMBDA, &Anchors::Uniform(ANCHORS)));
        let nrr = NystroemReducedRank::params((), ()).check().unwrap();
        assert_eq!((nrr.rank(), nrr.subset()), (RANK, &Anchors::Uniform(SUBSET)));
        let tn = TraceNorm::params((), ()).check().unwrap();
        assert_eq!((tn.rank(), tn.max_iter()), (TRACE_NORM_RANK, TRACE_NORM_MAX_ITER));
        let leml = okr_estimators::leml::Leml::params().check().unwrap();
        assert_eq!((leml.rank(), leml.lambda(), leml.max_iter()), (LEML_RANK, LEML_LAMBDA, LEML_MAX_ITER));
        assert_eq!(leml.loss(), okr_estimators::leml::Loss::from_name(LEML_LOSS).unwrap());
        let kae = okr_estimators::kae::KaeParams::default();
        let kae = okr_estimators::ParamGuard::check_ref(&kae).unwrap();
        assert_eq!((kae.n_layers(), kae.max_iter()), (KAE_LAYERS, KAE_MAX_ITER));
        assert_eq!(kae.hidden_dims(), &[KAE_CODE_DIM]);
        assert_eq!(kae.lambdas(), &[LAMBDA]);
    }
}
