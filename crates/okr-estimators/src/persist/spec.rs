//! [`EstimatorSpec`]: a kernel-output estimator named with its
//! hyper-parameters, checked before any data is read and fitted into the
//! [`OutputModel`] variant of the same name: what `okr fit` and the Python
//! estimators both build from their flags or parameter dicts.

use okr_kernels::{GramRows, Kernel, KernelSpec, LabelSets, Precomputed, Rows};

use super::{GramModel, Model, OutputModel};
use crate::nystroem::Anchors;
use crate::sketch::SketchSpec;
use crate::{
    Error, Fit, FitWeighted, Iokr, Kde, Nystroem, NystroemReducedRank, ParamGuard, ReducedRankIokr, Result,
    SketchedIokr, TraceNorm, TraceNormSolver,
};

/// A kernel-output estimator and its hyper-parameters, without its kernels.
///
/// Each variant sets the builder of the estimator of the same name
/// (defaults for what it leaves out); [`check`](Self::check) runs the
/// builder's checks, [`fit`](Self::fit) fits it with the given kernels.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::persist::{EstimatorSpec, Model, OutputModel};
/// use okr_kernels::{DenseRows, Features, KernelSpec, LabelSets, Linear};
/// let x = Features::from(DenseRows::new(Mat::from_fn(6, 2, |i, j| (i * 3 + j) as f64 / 7.0))?);
/// let y = LabelSets::new(3, vec![vec![0], vec![1], vec![0, 2], vec![2], vec![1], vec![0]])?;
/// let spec = EstimatorSpec::ReducedRank { rank: 2, lambda1: 1e-2, lambda2: 1e-2 };
/// spec.check()?;
/// assert!(EstimatorSpec::Iokr { lambda: -1.0 }.check().is_err());
/// let lin = || KernelSpec::from(Linear);
/// let fitted: OutputModel<LabelSets, KernelSpec> = spec.fit(lin(), lin(), &x, &y)?;
/// let model = Model::from(fitted);
/// assert_eq!(model.name(), "reduced-rank");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EstimatorSpec {
    /// IOKR with ridge `lambda`.
    Iokr {
        /// Ridge.
        lambda: f64,
    },
    /// Reduced-rank IOKR.
    ReducedRank {
        /// Rank of the projection.
        rank: usize,
        /// Ridge of the input side.
        lambda1: f64,
        /// Ridge of the reduced-rank projection.
        lambda2: f64,
    },
    /// Kernel dependency estimation.
    Kde {
        /// Number of output principal components.
        rank: usize,
        /// Ridge.
        lambda: f64,
        /// Whether the output Gram is centered.
        centered: bool,
    },
    /// SIOKR / ISOKR / SISOKR: IOKR with an input sketch, an output sketch or both.
    Sketched {
        /// Ridge.
        lambda: f64,
        /// Sketch of the inputs.
        input_sketch: Option<SketchSpec>,
        /// Sketch of the outputs.
        output_sketch: Option<SketchSpec>,
        /// Seed of the sketches.
        seed: u64,
    },
    /// Nystroem kernel ridge regression.
    Nystroem {
        /// Ridge.
        lambda: f64,
        /// How the anchors are chosen.
        anchors: Anchors,
        /// Seed of the anchor draw.
        seed: u64,
    },
    /// Nystroem reduced-rank IOKR.
    NystroemReducedRank {
        /// Rank of the projection.
        rank: usize,
        /// Ridge of the input side.
        lambda1: f64,
        /// Ridge of the reduced-rank projection.
        lambda2: f64,
        /// How the anchors are chosen.
        anchors: Anchors,
        /// The training rows the projection is computed on.
        subset: Anchors,
        /// Seed of the draws.
        seed: u64,
    },
    /// The trace-norm regularized surrogate.
    TraceNorm {
        /// Largest rank of the factorization.
        rank: usize,
        /// Trace-norm weight.
        lambda: f64,
        /// Solver.
        solver: TraceNormSolver,
        /// Seed of the initialization.
        seed: u64,
        /// Iteration budget of the solver.
        max_iter: usize,
    },
}

/// Calls `$then!(Variant, params)` with the builder of `$spec`'s estimator
/// on kernels `$kx`, `$ky`, so that checking and fitting set the same fields.
macro_rules! with_params {
    ($spec:expr, $kx:expr, $ky:expr, $then:ident) => {
        match $spec {
            EstimatorSpec::Iokr { lambda } => $then!(Iokr, Iokr::params($kx, $ky).lambda(*lambda)),
            EstimatorSpec::ReducedRank { rank, lambda1, lambda2 } => {
                $then!(ReducedRank, ReducedRankIokr::params($kx, $ky).rank(*rank).lambda1(*lambda1).lambda2(*lambda2))
            }
            EstimatorSpec::Kde { rank, lambda, centered } => {
                $then!(Kde, Kde::params($kx, $ky).rank(*rank).lambda(*lambda).centered(*centered))
            }
            EstimatorSpec::Sketched { lambda, input_sketch, output_sketch, seed } => $then!(
                Sketched,
                SketchedIokr::params($kx, $ky)
                    .lambda(*lambda)
                    .input_sketch(*input_sketch)
                    .output_sketch(*output_sketch)
                    .seed(*seed)
            ),
            EstimatorSpec::Nystroem { lambda, anchors, seed } => {
                $then!(Nystroem, Nystroem::params($kx, $ky).lambda(*lambda).anchors(anchors.clone()).seed(*seed))
            }
            EstimatorSpec::NystroemReducedRank { rank, lambda1, lambda2, anchors, subset, seed } => $then!(
                NystroemReducedRank,
                NystroemReducedRank::params($kx, $ky)
                    .rank(*rank)
                    .lambda1(*lambda1)
                    .lambda2(*lambda2)
                    .anchors(anchors.clone())
                    .subset(subset.clone())
                    .seed(*seed)
            ),
            EstimatorSpec::TraceNorm { rank, lambda, solver, seed, max_iter } => $then!(
                TraceNorm,
                TraceNorm::params($kx, $ky).rank(*rank).lambda(*lambda).solver(*solver).seed(*seed).max_iter(*max_iter)
            ),
        }
    };
}

impl EstimatorSpec {
    /// The estimator's name: `iokr`, `reduced-rank`, `kde`, `sketched`,
    /// `nystroem`, `nystroem-reduced-rank`, `trace-norm`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Iokr { .. } => "iokr",
            Self::ReducedRank { .. } => "reduced-rank",
            Self::Kde { .. } => "kde",
            Self::Sketched { .. } => "sketched",
            Self::Nystroem { .. } => "nystroem",
            Self::NystroemReducedRank { .. } => "nystroem-reduced-rank",
            Self::TraceNorm { .. } => "trace-norm",
        }
    }

    /// Checks the hyper-parameters as the estimator's builder does, before
    /// any data is read.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`](crate::Error) naming the first invalid value.
    pub fn check(&self) -> Result<()> {
        macro_rules! check {
            ($variant:ident, $params:expr) => {
                $params.check().map(drop)
            };
        }
        // The kernels take no part in the checks.
        with_params!(self, (), (), check)
    }

    /// Fits the estimator with input kernel `kx` and output kernel `ky` on
    /// inputs `x` and outputs `y`: feature rows with a [`KernelSpec`], or
    /// rows of a precomputed Gram ([`GramRows`]) with the [`Precomputed`]
    /// kernel, for every estimator (each evaluates the input kernel on
    /// train x train and test x train pairs only).
    ///
    /// # Errors
    /// An invalid hyper-parameter, or any error of the estimator's fit.
    pub fn fit<X, KX, Y, KY>(&self, kx: KX, ky: KY, x: &X, y: &Y) -> Result<OutputModel<Y, KY, X, KX>>
    where
        X: Rows,
        KX: Kernel<X> + Clone,
        Y: Rows,
        KY: Kernel<Y> + Clone,
    {
        macro_rules! fit {
            ($variant:ident, $params:expr) => {
                OutputModel::$variant($params.fit(x, y)?)
            };
        }
        Ok(with_params!(self, kx, ky, fit))
    }
}

impl EstimatorSpec {
    /// Whether the estimator fits with sample weights
    /// ([`fit_weighted`](Self::fit_weighted)): IOKR, reduced rank, Nystroem
    /// and the sketched estimators.
    pub fn takes_sample_weight(&self) -> bool {
        matches!(self, Self::Iokr { .. } | Self::ReducedRank { .. } | Self::Nystroem { .. } | Self::Sketched { .. })
    }

    /// [`fit`](Self::fit) with a weight per training sample (see
    /// [`FitWeighted`](crate::FitWeighted)).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an estimator without a weighted fit
    /// (KDE, Nystroem reduced rank, trace norm; see
    /// [`takes_sample_weight`](Self::takes_sample_weight)), the errors of
    /// [`check_sample_weight`](crate::check_sample_weight) and of the fit.
    pub fn fit_weighted<X, KX, Y, KY>(
        &self,
        kx: KX,
        ky: KY,
        x: &X,
        y: &Y,
        sample_weight: &[f64],
    ) -> Result<OutputModel<Y, KY, X, KX>>
    where
        X: Rows,
        KX: Kernel<X> + Clone,
        Y: Rows,
        KY: Kernel<Y> + Clone,
    {
        macro_rules! fit_weighted {
            (Iokr, $params:expr) => {
                OutputModel::Iokr(FitWeighted::fit_weighted(&$params, x, y, sample_weight)?)
            };
            (ReducedRank, $params:expr) => {
                OutputModel::ReducedRank(FitWeighted::fit_weighted(&$params, x, y, sample_weight)?)
            };
            (Nystroem, $params:expr) => {
                OutputModel::Nystroem(FitWeighted::fit_weighted(&$params, x, y, sample_weight)?)
            };
            (Sketched, $params:expr) => {
                OutputModel::Sketched(FitWeighted::fit_weighted(&$params, x, y, sample_weight)?)
            };
            ($other:ident, $params:expr) => {{
                drop($params);
                return Err(Error::InvalidParameter {
                    name: "sample_weight",
                    value: format!("given to {}", self.name()),
                    expected: "no weights, or an estimator with a weighted fit (iokr, reduced-rank, nystroem, sketched)",
                });
            }};
        }
        Ok(with_params!(self, kx, ky, fit_weighted))
    }

    /// Continues the trace-norm model `previous` with this specification's
    /// hyper-parameters for its `max_iter` more iterations (see
    /// [`FitFrom`](crate::FitFrom)).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an estimator other than trace norm
    /// (the others are not iterative); the errors of
    /// [`FitFrom::fit_from`](crate::FitFrom::fit_from).
    pub fn fit_from<X, KX, Y, KY>(
        &self,
        kx: KX,
        ky: KY,
        x: &X,
        y: &Y,
        previous: &TraceNorm<X, Y, KX, KY>,
    ) -> Result<OutputModel<Y, KY, X, KX>>
    where
        X: Rows,
        KX: Kernel<X> + Clone,
        Y: Rows,
        KY: Kernel<Y> + Clone,
    {
        macro_rules! fit_from {
            (TraceNorm, $params:expr) => {
                OutputModel::TraceNorm(crate::FitFrom::fit_from(&$params, previous, x, y)?)
            };
            ($other:ident, $params:expr) => {{
                drop($params);
                return Err(Error::InvalidParameter {
                    name: "estimator",
                    value: self.name().into(),
                    expected: "an iterative estimator to continue a fit (trace-norm)",
                });
            }};
        }
        Ok(with_params!(self, kx, ky, fit_from))
    }

    /// Fits the estimator on a precomputed training Gram `x` with output
    /// kernel `ky` and label-set outputs `y`: [`fit`](Self::fit) with the
    /// [`Precomputed`] kernel, as the model file saves it.
    ///
    /// # Errors
    /// An invalid hyper-parameter, or any error of the estimator's fit.
    pub fn fit_gram(&self, ky: KernelSpec, x: &GramRows, y: &LabelSets) -> Result<GramModel> {
        Ok(GramModel::from(self.fit(Precomputed, ky, x, y)?))
    }
}

impl From<OutputModel<LabelSets, KernelSpec>> for Model {
    /// The label-set variant of the same estimator.
    fn from(m: OutputModel<LabelSets, KernelSpec>) -> Self {
        match m {
            OutputModel::Iokr(m) => Model::Iokr(m),
            OutputModel::ReducedRank(m) => Model::ReducedRank(m),
            OutputModel::Kde(m) => Model::Kde(m),
            OutputModel::Sketched(m) => Model::Sketched(m),
            OutputModel::Nystroem(m) => Model::Nystroem(m),
            OutputModel::NystroemReducedRank(m) => Model::NystroemReducedRank(m),
            OutputModel::TraceNorm(m) => Model::TraceNorm(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;
    use okr_kernels::{DenseRows, Features, Gaussian, Linear};

    use super::*;
    use crate::SurrogateModel;
    use crate::sketch::SketchKind;

    fn data() -> (Features, LabelSets) {
        let x = Features::from(DenseRows::new(Mat::from_fn(8, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 3.0)).unwrap());
        let y = LabelSets::new(3, (0..8).map(|i| vec![i % 3, (i + 1) % 3]).collect()).unwrap();
        (x, y)
    }

    fn every_spec() -> Vec<EstimatorSpec> {
        let sketch = Some(SketchSpec::new(SketchKind::Uniform, 4));
        vec![
            EstimatorSpec::Iokr { lambda: 0.1 },
            EstimatorSpec::ReducedRank { rank: 2, lambda1: 0.1, lambda2: 0.2 },
            EstimatorSpec::Kde { rank: 2, lambda: 0.1, centered: true },
            EstimatorSpec::Sketched { lambda: 0.1, input_sketch: sketch, output_sketch: sketch, seed: 3 },
            EstimatorSpec::Nystroem { lambda: 0.1, anchors: Anchors::Uniform(4), seed: 3 },
            EstimatorSpec::NystroemReducedRank {
                rank: 2,
                lambda1: 0.1,
                lambda2: 0.2,
                anchors: Anchors::Uniform(4),
                subset: Anchors::Uniform(6),
                seed: 3,
            },
            EstimatorSpec::TraceNorm { rank: 2, lambda: 0.1, solver: TraceNormSolver::Als, seed: 3, max_iter: 10_000 },
        ]
    }

    /// Each spec fits the estimator of its name, with the parameters given
    /// (the same coefficients as the builder fitted by hand).
    #[test]
    fn each_spec_fits_its_estimator() {
        let (x, y) = data();
        let kx = || KernelSpec::from(Gaussian::new(0.5).unwrap());
        let ky = || KernelSpec::from(Linear);
        let names = ["iokr", "reduced-rank", "kde", "sisokr", "nystroem", "nystroem-reduced-rank", "trace-norm"];
        for (spec, name) in every_spec().into_iter().zip(names) {
            spec.check().unwrap();
            let model = Model::from(spec.fit(kx(), ky(), &x, &y).unwrap());
            assert_eq!(model.name(), name);
        }
        let by_hand = ReducedRankIokr::params(kx(), ky()).rank(2).lambda1(0.1).lambda2(0.2).fit(&x, &y).unwrap();
        let Model::ReducedRank(from_spec) = Model::from(every_spec()[1].fit(kx(), ky(), &x, &y).unwrap()) else {
            panic!("reduced rank")
        };
        assert_eq!(from_spec.params_used(), by_hand.params_used());
        assert_eq!(from_spec.coefficients(&x).unwrap(), by_hand.coefficients(&x).unwrap());
    }

    /// On a Gram, every estimator fits the same model as on the features
    /// the Gram was computed from.
    #[test]
    fn gram_fits_equal_feature_fits() {
        let (x, y) = data();
        let kx = KernelSpec::from(Gaussian::new(0.5).unwrap());
        let gram = GramRows::train(kx.gram(&x)).unwrap();
        let lin = || KernelSpec::from(Linear);
        for spec in every_spec() {
            let g = spec.fit_gram(lin(), &gram, &y).unwrap();
            let test = GramRows::test(kx.gram(&x), None).unwrap();
            let on_gram = g.surrogate().coefficients(&test).unwrap();
            let model = Model::from(spec.fit(kx.clone(), lin(), &x, &y).unwrap());
            assert_eq!(Model::Gram(g).name(), model.name());
            let on_features = model.surrogate().unwrap().coefficients(&x).unwrap();
            let diff = (&on_gram - &on_features).norm_max();
            assert!(diff < 1e-8, "{}: {diff}", spec.name());
        }
    }

    #[test]
    fn bad_values_fail_the_check_and_the_fit() {
        let (x, y) = data();
        let lin = || KernelSpec::from(Linear);
        for spec in [
            EstimatorSpec::Iokr { lambda: f64::NAN },
            EstimatorSpec::ReducedRank { rank: 0, lambda1: 0.1, lambda2: 0.1 },
            EstimatorSpec::Kde { rank: 2, lambda: -1.0, centered: false },
            EstimatorSpec::Sketched {
                lambda: 0.1,
                input_sketch: Some(SketchSpec::new(SketchKind::Uniform, 0)),
                output_sketch: None,
                seed: 0,
            },
            EstimatorSpec::Nystroem { lambda: 0.1, anchors: Anchors::Uniform(0), seed: 0 },
            EstimatorSpec::TraceNorm {
                rank: 2,
                lambda: 0.0,
                solver: TraceNormSolver::Convex,
                seed: 0,
                max_iter: 10_000,
            },
        ] {
            assert!(spec.check().is_err(), "{spec:?}");
            assert!(spec.fit(lin(), lin(), &x, &y).is_err(), "{spec:?}");
        }
    }
}
