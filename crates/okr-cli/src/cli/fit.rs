//! `okr fit`'s arguments and the kernel and estimator choices they name.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use okr_estimators::sketch::SketchSpec;

use super::args::{DataArgs, GRAM_FILES};
use super::outputs::{OutputFileArgs, OutputKindFlag, StructuredArgs};
use super::spectra_gram::SpectraKernelArgs;

/// Parses `KIND:m[:PARAM]` (see `SketchSpec`).
fn parse_sketch(text: &str) -> Result<SketchSpec, String> {
    text.parse().map_err(|e: okr_estimators::Error| e.to_string())
}

/// One kernel of `--input-kernels`: `KIND[:GAMMA]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelItem {
    /// The kind, as `--input-kernel`.
    pub kind: KernelKind,
    /// Its gamma, if given.
    pub gamma: Option<f64>,
}

/// `--input-kernels`: the kernels to combine.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelList(pub Vec<KernelItem>);

/// Parses `KIND[:GAMMA],...` (kinds as `--input-kernel`).
fn parse_kernel_list(text: &str) -> Result<KernelList, String> {
    let items = text
        .split(',')
        .map(|item| {
            let (kind, gamma) = match item.split_once(':') {
                Some((k, g)) => (k, Some(g.parse::<f64>().map_err(|e| format!("gamma {g:?} of {item:?}: {e}"))?)),
                None => (item, None),
            };
            let kind = KernelKind::from_str(kind.trim(), true)
                .map_err(|_| format!("unknown kernel {kind:?} (expected one of the --input-kernel kinds)"))?;
            Ok(KernelItem { kind, gamma })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if items.iter().any(|k| k.gamma.is_some_and(|g| !(g.is_finite() && g > 0.0))) {
        return Err("every GAMMA must be a finite number > 0".into());
    }
    Ok(KernelList(items))
}

/// Kernels on vectors, and the graph and ranking output kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelKind {
    /// exp(-gamma ||x - y||^2).
    Gaussian,
    /// <x, y>.
    Linear,
    /// exp(-gamma ||x - y||_1).
    Laplacian,
    /// (gamma <x, y> + coef0)^degree.
    Polynomial,
    /// <x, y> / (|x|^2 + |y|^2 - <x, y>).
    Tanimoto,
    /// Gaussian on the Tanimoto distance.
    GaussianTanimoto,
    /// Weisfeiler-Lehman subtree kernel on graphs, normalized (--output-kind graph only).
    Wl,
    /// Kendall tau on rankings (--output-kind ranking only).
    Kendall,
    /// Mallows kernel exp(-lambda n_discordant) on rankings (--output-kind ranking only).
    Mallows,
}

/// The estimators of `okr fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EstimatorKind {
    /// Kernel ridge with input and output kernels, (K + n lambda I) solved by Cholesky.
    Iokr,
    /// IOKR projected on the top --rank directions of its fitted values (--lambda1, --lambda2).
    ReducedRank,
    /// Kernel dependency estimation: output kernel PCA with --rank directions, then ridge (--lambda).
    Kde,
    /// LEML (Yu et al. 2014): label scores x^T W H^T of rank --rank, penalty --lambda/2 (|W|^2 + |H|^2),
    /// --loss sq|lr|sh, optionally trained on --observed-fraction of the labels. A score model:
    /// predict/eval threshold or rank its label scores instead of decoding candidates.
    Leml,
    /// Trace-norm regularized surrogate (LR-SELF): rank --rank factors, weight --lambda, --solver.
    TraceNorm,
    /// Kernel autoencoder on dense inputs (labels ignored): --layers layers, inner width
    /// --code-dim, first kernel --input-kernel (gaussian, linear or polynomial), Gaussian
    /// inner kernels, penalty --lambda on every layer, last layer by kernel ridge.
    Kae,
    /// Gram-only kernel autoencoder (K2AE): sees the inputs only through --input-kernel (any
    /// kernel, dense or sparse), reconstructs them in that kernel's RKHS.
    K2ae,
    /// Sketched-input IOKR: ridge on the span of an --input-sketch of the inputs.
    Siokr,
    /// Sketched-output IOKR: IOKR projected on an --output-sketch of the outputs.
    Isokr,
    /// Sketched input and output (--input-sketch and --output-sketch); trains in O(n m^2).
    Sisokr,
    /// Nystroem kernel ridge on --anchors (a count drawn uniformly, or a file of indices).
    Nystroem,
    /// Nystroem reduced-rank IOKR: reduced rank --rank on --anchors, the projection computed
    /// on --subset training rows (--lambda1, --lambda2).
    NystroemReducedRank,
}

impl KernelKind {
    /// Whether the kernel is a graph or ranking kernel (`wl`, `kendall`, `mallows`).
    pub fn is_structured(self) -> bool {
        matches!(self, KernelKind::Wl | KernelKind::Kendall | KernelKind::Mallows)
    }
}

impl EstimatorKind {
    /// The name as given to `--estimator`.
    pub fn name(self) -> &'static str {
        match self {
            EstimatorKind::Iokr => "iokr",
            EstimatorKind::ReducedRank => "reduced-rank",
            EstimatorKind::Kde => "kde",
            EstimatorKind::Leml => "leml",
            EstimatorKind::TraceNorm => "trace-norm",
            EstimatorKind::Kae => "kae",
            EstimatorKind::K2ae => "k2ae",
            EstimatorKind::Siokr => "siokr",
            EstimatorKind::Isokr => "isokr",
            EstimatorKind::Sisokr => "sisokr",
            EstimatorKind::Nystroem => "nystroem",
            EstimatorKind::NystroemReducedRank => "nystroem-reduced-rank",
        }
    }
}

/// The long help of `okr fit --input-gram`.
const INPUT_GRAM_HELP: &str = "Precomputed training Gram K(train, train) instead of a kernel on \
the features. Row i belongs to row i of the training file, which gives the labels (its features \
are not used). The matrix must be square and symmetric up to 1e-8 times its largest entry. For \
--estimator iokr, reduced-rank, siokr, isokr, sisokr and nystroem; the model keeps no training \
features, so predict, eval and rank take the test x train Gram with --input-gram-test instead \
of test features.";

/// The long help of `okr fit --input-spectra`.
const INPUT_SPECTRA_HELP: &str = "MS/MS spectra (MGF or MSP, by the extension .mgf / .msp) as \
the inputs: spectrum i belongs to row i of the training file, which gives the outputs (its \
features are not used). okr computes the training Gram of the probability product kernel (the \
one `okr gram` writes, with --peak-width, --peak-weights, --intensity-width and \
--precursor-width; unset ones take okr gram's defaults) and fits it as --input-gram fits a \
Gram file; the recipe (okr info --json) records every kernel parameter and `okr fit --recipe` \
replays it with --input-spectra. The model stores no spectra: predict, eval and rank take the \
test x train Gram with --input-gram-test, written by `okr gram -i TEST --columns TRAIN` with \
the same kernel parameters. For the estimators that take --input-gram.";

/// The long help of `--input-gram-test`.
/// Multiple kernel learning methods of `--mkl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MklKind {
    /// Equal weights 1/p.
    Uniform,
    /// Centred kernel alignment with the output Gram (ALIGNF).
    Alignf,
}

/// Losses of `--estimator leml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossKind {
    /// Squared loss (full labels: {0,1} targets, threshold 0.5; missing labels: ±1, threshold 0).
    Sq,
    /// Logistic loss on ±1 targets (threshold 0).
    Lr,
    /// Squared hinge loss on ±1 targets (threshold 0).
    Sh,
}

/// Solvers of `--estimator trace-norm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceNormSolverKind {
    /// Factorized gradient descent with Armijo backtracking, O(n^2 r) per iteration.
    Gd,
    /// Alternating least squares on the factorization (one n x n eigendecomposition).
    Als,
    /// Exact convex solver (FISTA + singular value soft thresholding); ignores --rank.
    Convex,
}

/// Arguments of `okr fit`.
#[derive(Debug, Clone, Args)]
pub struct FitArgs {
    /// Training file (or --dataset).
    #[arg(long = "train", id = "train", value_name = "PATH", required_unless_present = "dataset")]
    pub train_file: Option<PathBuf>,
    /// The training file, from --train or --dataset (set before the command runs).
    #[arg(skip)]
    pub train: PathBuf,
    /// A benchmark data set by name (`okr data list`): its training file in OKR_DATA_DIR
    /// and its label count.
    #[arg(long, value_name = "NAME")]
    pub dataset: Option<String>,
    /// How to read the training file.
    #[command(flatten)]
    pub data: DataArgs,
    /// Where to write the model (written atomically); -o/--output also name it, as the
    /// model is what fit writes.
    #[arg(long, short = 'm', short_alias = 'o', alias = "output", value_name = "PATH")]
    pub model: PathBuf,
    /// Estimator.
    #[arg(long, value_enum, default_value_t = EstimatorKind::Iokr, value_name = "NAME")]
    pub estimator: EstimatorKind,
    /// A weight per training row: a file of one number per line (iokr, reduced-rank,
    /// nystroem, siokr, isokr, sisokr).
    ///
    /// The weighted ridge: sum_i w_i ||h(x_i) - psi(y_i)||^2 + (sum_i w_i) lambda ||h||^2,
    /// so integer weights equal repeating the rows and unit weights change nothing.
    /// One finite number > 0 per training row, in the order of the rows (blank lines and
    /// lines starting with # are skipped); a zero, negative, NaN or missing weight is an
    /// error. The weights are not stored in the model or its recipe.
    #[arg(long, value_name = "PATH")]
    pub sample_weights: Option<PathBuf>,
    /// Ridge parameter lambda > 0; the system is (K + n*lambda*I) (scikit-learn alpha = n*lambda).
    ///
    /// Default for iokr: chosen by closed-form leave-one-out example-based F1 over
    /// 1e-8, 1e-7, ..., 1e-1 (exact leave-one-out predictions from one eigendecomposition,
    /// decoded, on up to 2000 training rows); for the other estimators 1e-3.
    #[arg(long, value_name = "LAMBDA", allow_hyphen_values = true)]
    pub lambda: Option<f64>,
    /// Rank: reduced-rank, kde and nystroem-reduced-rank output directions (default 64,
    /// capped at the numerical rank), trace-norm factors (default 10), leml label-space rank
    /// (default: the number of labels, at most 64).
    #[arg(long, value_name = "P")]
    pub rank: Option<usize>,
    /// KDE: centre the output kernel before its KPCA (Weston et al.'s variant); default uncentred.
    #[arg(long)]
    pub centered: bool,
    /// Trace-norm solver (default gd; trace-norm only).
    ///
    /// The objective is (1/n) sum_i |A B* phi(x_i) - psi(y_i)|^2 + lambda (|A|^2 + |B|^2),
    /// i.e. 2 lambda times the trace norm of G = A B*.
    #[arg(long, value_enum, value_name = "SOLVER")]
    pub solver: Option<TraceNormSolverKind>,
    /// Reduced-rank: ridge of the fitted values that define the subspace (default: --lambda).
    #[arg(long, value_name = "LAMBDA", allow_hyphen_values = true)]
    pub lambda1: Option<f64>,
    /// Reduced-rank: ridge of the projected estimator (default: --lambda1).
    #[arg(long, value_name = "LAMBDA", allow_hyphen_values = true)]
    pub lambda2: Option<f64>,
    /// siokr, sisokr: input sketch KIND:m (e.g. uniform:1000).
    ///
    /// KIND is gaussian, rademacher, uniform (sub-sampling), leverage
    /// (approximate ridge leverage scores), sparse-gaussian[:p],
    /// sparse-rademacher[:p] (p-sparsified, default p = 8/n), sjlt[:s]
    /// (default s = 4) or identity; all scaled so that E[R^T R] = I. Sparse
    /// kinds compute only the Gram columns they touch.
    #[arg(long, value_name = "KIND:m", value_parser = parse_sketch)]
    pub input_sketch: Option<SketchSpec>,
    /// isokr, sisokr: output sketch KIND:m (e.g. gaussian:100); kinds as --input-sketch.
    #[arg(long, value_name = "KIND:m", value_parser = parse_sketch)]
    pub output_sketch: Option<SketchSpec>,
    /// nystroem, nystroem-reduced-rank: anchors, a count m (drawn uniformly with --seed;
    /// default 1000, capped at n) or a file of 0-based training indices (one per line or
    /// comma separated).
    #[arg(long, value_name = "M|PATH")]
    pub anchors: Option<String>,
    /// nystroem-reduced-rank: training rows the projection is computed on (default 2000,
    /// capped at n).
    #[arg(long, value_name = "N")]
    pub subset: Option<usize>,
    /// Input kernel.
    #[arg(long, value_enum, default_value_t = KernelKind::Gaussian, value_name = "KERNEL")]
    pub input_kernel: KernelKind,
    /// Input kernel gamma (Gaussian, Laplacian, polynomial, Gaussian-Tanimoto); --gamma is an alias.
    ///
    /// Default for Gaussian kernels: 1 / (2 * median squared distance between training
    /// points), computed on the (standardized) training inputs (at most 2000 rows).
    #[arg(
        long = "input-gamma",
        alias = "gamma",
        value_name = "GAMMA",
        allow_hyphen_values = true,
        conflicts_with = "sigma2"
    )]
    pub gamma: Option<f64>,
    /// Input Gaussian width sigma^2 (gamma = 1 / (2 sigma^2)); --sigma2 is an alias.
    #[arg(long = "input-sigma2", alias = "sigma2", value_name = "SIGMA2", allow_hyphen_values = true)]
    pub sigma2: Option<f64>,
    /// Polynomial input kernel degree (default 3, gamma 1 / n_features; --input-kernel
    /// polynomial only).
    #[arg(long, value_name = "DEGREE")]
    pub degree: Option<u32>,
    /// Polynomial input kernel offset (default 1; --input-kernel polynomial only).
    #[arg(long, value_name = "COEF0", allow_hyphen_values = true)]
    pub coef0: Option<f64>,
    /// Precomputed training Gram K(train, train) (.npy or text) instead of a kernel on the features.
    #[arg(long, value_name = "PATH", long_help = format!("{INPUT_GRAM_HELP}\n\n{GRAM_FILES}"))]
    pub input_gram: Option<PathBuf>,
    /// MS/MS spectra (MGF or MSP, by the extension) as the inputs, with the probability
    /// product kernel of --peak-width, --peak-weights, --intensity-width, --precursor-width.
    #[arg(long, value_name = "PATH", conflicts_with = "input_gram", long_help = INPUT_SPECTRA_HELP)]
    pub input_spectra: Option<PathBuf>,
    /// The kernel of --input-spectra.
    #[command(flatten)]
    pub spectra_kernel: SpectraKernelArgs,
    /// Several input kernels KIND[:GAMMA],... combined by --mkl (e.g. gaussian:0.5,linear).
    ///
    /// Kinds as --input-kernel. A Gaussian-type kernel without GAMMA gets the median
    /// heuristic; polynomial takes --degree and --coef0 (GAMMA default 1 / n_features). The weights are
    /// stored in the model (okr info shows them) and predict applies the same combination.
    #[arg(long, value_name = "K1,K2,...", value_parser = parse_kernel_list)]
    pub input_kernels: Option<KernelList>,
    /// How --input-kernels are weighted: uniform (1/p each, the default) or alignf.
    ///
    /// alignf: the non-negative weights of unit norm maximizing the centred alignment of
    /// the combined training Gram with the output Gram (Cortes et al. 2012).
    #[arg(long, value_enum, value_name = "METHOD")]
    pub mkl: Option<MklKind>,
    /// What the model predicts: label sets, fingerprints, vectors, graphs or rankings (see --help).
    #[arg(long, value_enum, default_value_t = OutputKindFlag::Labels, value_name = "KIND")]
    pub output_kind: OutputKindFlag,
    /// The training outputs of --output-kind fingerprint, vector and graph.
    #[command(flatten)]
    pub output_file: OutputFileArgs,
    /// Graph and ranking output kernel parameters.
    #[command(flatten)]
    pub structured: StructuredArgs,
    /// Output kernel on label vectors, fingerprints or vectors; wl for graphs, kendall or
    /// mallows for rankings.
    #[arg(long, value_enum, default_value_t = KernelKind::Gaussian, value_name = "KERNEL")]
    pub output_kernel: KernelKind,
    /// Output kernel gamma.
    #[arg(long, value_name = "GAMMA", allow_hyphen_values = true, conflicts_with = "output_sigma2")]
    pub output_gamma: Option<f64>,
    /// Output Gaussian width sigma^2; default: mean number of labels (set bits) per
    /// training point; vectors: the median squared distance between training outputs.
    #[arg(long, value_name = "SIGMA2", allow_hyphen_values = true)]
    pub output_sigma2: Option<f64>,
    /// Standardize features with the training mean and standard deviation, whatever
    /// they are (sparse data stays sparse: the Gaussian kernel gets per-feature weights).
    ///
    /// Default: dense features that are not all 0/1 are standardized; binary and
    /// sparse features are used as given.
    #[arg(long, conflicts_with = "no_standardize")]
    pub standardize: bool,
    /// Use the features as given (no standardization).
    #[arg(long)]
    pub no_standardize: bool,
    /// LEML: loss.
    #[arg(long, value_enum, value_name = "LOSS")]
    pub loss: Option<LossKind>,
    /// LEML: train on a random fraction F of the n*L label entries (each observed with probability F,
    /// seeded by --seed; observed values ±1), to study missing labels. Default: all labels.
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub observed_fraction: Option<f64>,
    /// Kernel autoencoders: number of layers L >= 2 (default 2: code after layer 1 of 2, or
    /// the first of the L - 1 inner layers of width --code-dim).
    #[arg(long, value_name = "L")]
    pub layers: Option<usize>,
    /// Kernel autoencoders: width of the inner layers, the code size (default 2).
    #[arg(long, value_name = "P")]
    pub code_dim: Option<usize>,
    /// Iteration budget: LEML alternating iterations (one W-step and one H-step each;
    /// default 10, at most 1000000; LEML stops earlier once an iteration lowers its
    /// objective by less than 1e-6 relative); KAE / K2AE maximum number of gradient
    /// (Adam) steps (default 500); trace-norm solver iterations (default 10000, stopping
    /// earlier at a relative change below 1e-8).
    #[arg(long, value_name = "N")]
    pub max_iter: Option<usize>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Seed for anything random (recorded in the model).
    #[arg(long, default_value_t = 0, value_name = "SEED")]
    pub seed: u64,
    /// Fit the recipe of a JSON file instead of the estimator and kernel flags.
    ///
    /// A recipe (estimator, input side, output side, seed) as `okr info --json` prints it
    /// under "recipe" (that whole output is accepted too): refitting a model's recipe on
    /// the same data gives the same model. The data flags (--train, --label-count,
    /// --outputs, --input-gram, ...) still name the files.
    #[arg(long, value_name = "PATH")]
    pub recipe: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::{fit, parse};
    use crate::cli::{Cli, Command, Format};
    use clap::Parser;

    #[test]
    fn fit_defaults() {
        let f = fit(&[]);
        assert_eq!(f.lambda, None);
        assert_eq!(f.input_kernel, KernelKind::Gaussian);
        assert_eq!(f.output_kernel, KernelKind::Gaussian);
        assert_eq!(f.estimator, EstimatorKind::Iokr);
        assert_eq!((f.rank, f.lambda1, f.lambda2), (None, None, None));
        assert_eq!((f.degree, f.coef0, f.layers, f.code_dim), (None, None, None, None));
        assert_eq!(f.data.format, Format::Auto);
        assert!(!f.standardize && f.gamma.is_none() && f.threads.is_none());
    }

    #[test]
    fn fit_flags() {
        let f = fit(&["--lambda", "1e-5", "--gamma", "0.25", "--input-kernel", "polynomial", "--degree", "3"]);
        assert_eq!((f.lambda, f.gamma, f.degree), (Some(1e-5), Some(0.25), Some(3)));
        assert_eq!(f.input_kernel, KernelKind::Polynomial);
        let f = fit(&["--sigma2", "4", "--coef0", "0.5", "--output-kernel", "linear", "--output-gamma", "2"]);
        assert_eq!((f.sigma2, f.coef0, f.output_gamma), (Some(4.0), Some(0.5), Some(2.0)));
        let f = fit(&["--output-sigma2", "2.4", "--standardize", "--threads", "2", "--seed", "7"]);
        assert_eq!((f.output_sigma2, f.standardize, f.threads, f.seed), (Some(2.4), true, Some(2), 7));
        let f = fit(&["--format", "arff", "--label-count", "159", "--zero-based"]);
        assert_eq!((f.data.format, f.data.label_count, f.data.zero_based), (Format::Arff, Some(159), true));
        let f = fit(&["--input-kernel", "gaussian-tanimoto", "--estimator", "iokr"]);
        assert_eq!(f.input_kernel, KernelKind::GaussianTanimoto);
    }

    #[test]
    fn sample_weights_flag() {
        assert_eq!(fit(&[]).sample_weights, None);
        assert_eq!(fit(&["--sample-weights", "w.txt"]).sample_weights, Some(PathBuf::from("w.txt")));
    }

    #[test]
    fn estimator_flag() {
        assert_eq!(fit(&["--estimator", "reduced-rank"]).estimator, EstimatorKind::ReducedRank);
        assert_eq!(fit(&["--estimator", "kde"]).estimator, EstimatorKind::Kde);
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--estimator", "pca"]).is_err());
    }

    #[test]
    fn leml_flags() {
        let f = fit(&["--estimator", "leml", "--loss", "lr", "--rank", "32", "--observed-fraction", "0.2"]);
        assert_eq!(
            (f.estimator, f.loss, f.rank, f.observed_fraction),
            (EstimatorKind::Leml, Some(LossKind::Lr), Some(32), Some(0.2))
        );
        assert_eq!(fit(&["--loss", "sh"]).loss, Some(LossKind::Sh));
        assert_eq!(fit(&["--max-iter", "3"]).max_iter, Some(3));
        assert_eq!(fit(&[]).max_iter, None);
        assert_eq!(fit(&["--observed-fraction", "-1"]).observed_fraction, Some(-1.0), "reaches validation");
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--loss", "hinge"]).is_err());
    }

    #[test]
    fn trace_norm_flags() {
        let f = fit(&["--estimator", "trace-norm", "--solver", "convex", "--rank", "5"]);
        assert_eq!(
            (f.estimator, f.solver, f.rank),
            (EstimatorKind::TraceNorm, Some(TraceNormSolverKind::Convex), Some(5))
        );
        assert_eq!(fit(&[]).solver, None, "gd unless given; given with another estimator is an error");
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--solver", "sgd"]).is_err());
    }

    #[test]
    fn autoencoder_flags() {
        let f = fit(&["--estimator", "k2ae", "--layers", "3", "--code-dim", "10", "--max-iter", "50"]);
        assert_eq!((f.estimator, f.layers, f.code_dim, f.max_iter), (EstimatorKind::K2ae, Some(3), Some(10), Some(50)));
        assert_eq!(fit(&["--estimator", "kae"]).estimator, EstimatorKind::Kae);
        assert_eq!((fit(&[]).layers, fit(&[]).code_dim), (None, None));
        match parse(&["encode", "--model", "m.okr", "--input", "x.csv", "--label-count", "0", "-o", "c.csv"]).command {
            Command::Encode(e) => assert_eq!((e.data.label_count, e.output), (Some(0), Some(PathBuf::from("c.csv")))),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn sketched_estimator_flags() {
        assert_eq!(fit(&["--estimator", "siokr"]).estimator, EstimatorKind::Siokr);
        assert_eq!(fit(&["--estimator", "isokr"]).estimator, EstimatorKind::Isokr);
        assert_eq!(fit(&["--estimator", "sisokr"]).estimator, EstimatorKind::Sisokr);
        assert_eq!(fit(&["--estimator", "nystroem"]).estimator, EstimatorKind::Nystroem);
    }

    #[test]
    fn sketch_flags() {
        use okr_estimators::sketch::SketchKind;
        let f = fit(&["--input-sketch", "uniform:1000", "--output-sketch", "sjlt:50:2"]);
        assert_eq!(f.input_sketch, Some(SketchSpec::new(SketchKind::Uniform, 1000)));
        assert_eq!(f.output_sketch, Some(SketchSpec::new(SketchKind::Sjlt { s: 2 }, 50)));
        assert!(fit(&[]).input_sketch.is_none());
        for bad in ["uniform", "uniform:0", "nope:3", "sparse-gaussian:10:2"] {
            let r = Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--input-sketch", bad]);
            assert!(r.is_err(), "{bad}");
        }
    }

    #[test]
    fn subset_flag() {
        assert_eq!(fit(&["--subset", "500"]).subset, Some(500));
        assert_eq!(fit(&[]).subset, None);
        assert_eq!(fit(&["--estimator", "nystroem-reduced-rank"]).estimator, EstimatorKind::NystroemReducedRank);
    }

    #[test]
    fn recipe_flag() {
        assert_eq!(fit(&["--recipe", "r.json"]).recipe, Some(PathBuf::from("r.json")));
        assert_eq!(fit(&[]).recipe, None);
    }

    #[test]
    fn anchors_flag() {
        assert_eq!(fit(&["--anchors", "500"]).anchors.as_deref(), Some("500"));
        assert_eq!(fit(&["--anchors", "idx.txt"]).anchors.as_deref(), Some("idx.txt"));
        assert!(fit(&[]).anchors.is_none());
    }

    #[test]
    fn input_gram_flag() {
        assert_eq!(fit(&["--input-gram", "k.npy"]).input_gram, Some(PathBuf::from("k.npy")));
        assert!(fit(&[]).input_gram.is_none());
    }

    #[test]
    fn input_kernels_flag() {
        let f = fit(&["--input-kernels", "gaussian:0.5,linear,Laplacian"]);
        let k = f.input_kernels.unwrap().0;
        assert_eq!(k[0], KernelItem { kind: KernelKind::Gaussian, gamma: Some(0.5) });
        assert_eq!(k[1], KernelItem { kind: KernelKind::Linear, gamma: None });
        assert_eq!(k[2].kind, KernelKind::Laplacian);
        for bad in ["rbf", "gaussian:x", "gaussian:-1", "linear,"] {
            let r = Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--input-kernels", bad]);
            assert!(r.is_err(), "{bad}");
        }
    }

    #[test]
    fn mkl_flag() {
        assert_eq!(fit(&["--mkl", "alignf"]).mkl, Some(MklKind::Alignf));
        assert_eq!(fit(&["--mkl", "uniform"]).mkl, Some(MklKind::Uniform));
        assert_eq!(fit(&[]).mkl, None);
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--mkl", "easy"]).is_err());
    }

    #[test]
    fn rank_flag() {
        assert_eq!(fit(&["--rank", "8"]).rank, Some(8));
        assert_eq!(fit(&["--rank", "0"]).rank, Some(0), "0 reaches validation");
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--rank", "-1"]).is_err());
    }

    #[test]
    fn lambda1_flag() {
        assert_eq!(fit(&["--lambda1", "1e-4"]).lambda1, Some(1e-4));
        assert_eq!(fit(&["--lambda1", "-1"]).lambda1, Some(-1.0));
    }

    #[test]
    fn lambda2_flag() {
        assert_eq!(fit(&["--lambda2", "1e-6"]).lambda2, Some(1e-6));
        assert_eq!(fit(&["--lambda2", "-1"]).lambda2, Some(-1.0));
    }

    #[test]
    fn negative_numbers_reach_validation() {
        // Parsed as values, so `okr fit` can explain the valid range.
        assert_eq!(fit(&["--lambda", "-1e-3"]).lambda, Some(-1e-3));
        assert_eq!(fit(&["--gamma", "-2"]).gamma, Some(-2.0));
    }

    #[test]
    fn conflicting_widths_are_rejected() {
        let r = Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--gamma", "1", "--sigma2", "2"]);
        assert!(r.is_err());
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a"]).is_err(), "--model is required");
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--lambda", "x"]).is_err());
    }
}
