//! [`Recipe`]: one request for a model, as a serializable value. The input
//! side, the estimator, the output side and the runtime options are
//! independent choices; [`Recipe::check`] refuses only the combinations the
//! mathematics (or okr's saved models) cannot do, with the reason.
//!
//! Every field left `None` takes okr's default ([`crate::defaults`]); a fit
//! returns the *resolved* recipe with every default filled in, which model
//! files store, `okr info --json` prints and `okr fit --recipe` replays.

use serde::{Deserialize, Serialize};

use crate::catalog::{Estimator, Family, Param};

/// Reads an optional number that may be spelled `"NaN"`, `"inf"` or
/// `"-inf"` (JSON has no such numbers; front doors send them so that the
/// checks, not the JSON parser, explain why the value is invalid).
mod lenient {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Value(f64),
        Text(String),
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Count {
        Whole(u64),
        Other(f64),
    }

    /// A polynomial degree: any other number is refused with the kernel's
    /// range (Python integers beyond 64 bits arrive as floats).
    pub fn opt_degree<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Option::<Count>::deserialize(d)? {
            None => Ok(None),
            Some(Count::Whole(v)) => Ok(Some(v)),
            Some(Count::Other(v)) => Err(serde::de::Error::custom(format!(
                "invalid parameter degree = {v}: expected an integer in 1..=i32::MAX"
            ))),
        }
    }

    /// A count named `name`: any other number is refused with its range.
    fn opt_count<'de, D: Deserializer<'de>>(d: D, name: &str) -> Result<Option<usize>, D::Error> {
        match Option::<Count>::deserialize(d)? {
            None => Ok(None),
            Some(Count::Whole(v)) => usize::try_from(v).map(Some).map_err(serde::de::Error::custom),
            Some(Count::Other(v)) => {
                Err(serde::de::Error::custom(format!("invalid parameter {name} = {v}: expected an integer >= 0")))
            }
        }
    }

    macro_rules! counts {
        ($($f:ident),*) => {$(
            pub fn $f<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
                opt_count(d, stringify!($f))
            }
        )*};
    }
    counts!(rank, subset, layers, code_dim, max_iter);

    /// A list of layer widths: anything but a list of integers >= 1 is
    /// refused with the parameter's name and the value as given.
    pub fn opt_dims<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
        let Some(value) = Option::<serde_json::Value>::deserialize(d)? else { return Ok(None) };
        let dims: Option<Vec<usize>> = value.as_array().and_then(|items| {
            items.iter().map(|v| v.as_u64().and_then(|w| usize::try_from(w).ok()).filter(|&w| w >= 1)).collect()
        });
        match dims {
            Some(dims) if !dims.is_empty() => Ok(Some(dims)),
            _ => Err(serde::de::Error::custom(format!(
                "invalid parameter hidden_dims = {value}: expected a non-empty list of integers >= 1"
            ))),
        }
    }

    pub fn opt_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        match Option::<Number>::deserialize(d)? {
            None => Ok(None),
            Some(Number::Value(v)) => Ok(Some(v)),
            Some(Number::Text(t)) => match t.to_ascii_lowercase().as_str() {
                "nan" => Ok(Some(f64::NAN)),
                "inf" | "infinity" | "+inf" => Ok(Some(f64::INFINITY)),
                "-inf" | "-infinity" => Ok(Some(f64::NEG_INFINITY)),
                _ => Err(serde::de::Error::custom(format!("expected a number, got {t:?}"))),
            },
        }
    }
}
use crate::{Error, Result};

/// A request for a model: input side x estimator x output side x runtime.
///
/// JSON (every field but `estimator.name` may be left out):
/// ```json
/// {"estimator": {"name": "reduced-rank", "rank": 20, "lambda": 1e-4},
///  "input": {"kind": "features", "kernel": {"name": "gaussian"}, "standardize": "auto"},
///  "output": {"kind": "labels", "kernel": {"name": "gaussian", "sigma2": 2.5}},
///  "runtime": {"threads": 2}, "seed": 0}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The estimator and its hyper-parameters.
    pub estimator: EstimatorRecipe,
    /// How the inputs enter: features with a kernel, a precomputed Gram, or
    /// several kernels combined.
    #[serde(default)]
    pub input: InputRecipe,
    /// What is predicted, with which output kernel.
    #[serde(default)]
    pub output: OutputRecipe,
    /// Threads, memory budget and decoding precision.
    #[serde(default)]
    pub runtime: Runtime,
    /// Seed of everything random (sketches, anchors, initializations).
    #[serde(default)]
    pub seed: u64,
}

/// The estimator and its hyper-parameters; `None` is okr's default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EstimatorRecipe {
    /// The estimator ([`Estimator`]'s names and aliases).
    pub name: Estimator,
    /// Ridge `lambda` of `(K + n lambda I)` (scikit-learn `alpha = n lambda`);
    /// LEML's penalty.
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// Reduced rank: ridge of the fitted values that define the subspace.
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub lambda1: Option<f64>,
    /// Reduced rank: ridge of the projected estimator.
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub lambda2: Option<f64>,
    /// Rank (reduced rank, KDE, Nystroem reduced rank, trace norm, LEML).
    #[serde(default, deserialize_with = "lenient::rank", skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// KDE: centre the output Gram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centered: Option<bool>,
    /// Trace norm: `gd`, `als` or `convex`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<String>,
    /// Input sketch `KIND:m` (SIOKR, SISOKR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_sketch: Option<String>,
    /// Output sketch `KIND:m` (ISOKR, SISOKR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_sketch: Option<String>,
    /// Nystroem anchors: a count drawn uniformly, or training indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchors: Option<AnchorsRecipe>,
    /// Nystroem reduced rank: the rows the projection is computed on (a count).
    #[serde(default, deserialize_with = "lenient::subset", skip_serializing_if = "Option::is_none")]
    pub subset: Option<usize>,
    /// LEML loss: `sq`, `lr` or `sh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// LEML: the fraction of label entries observed.
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub observed_fraction: Option<f64>,
    /// Autoencoders: the widths of the inner layers, the code last
    /// (instead of `layers` and `code_dim`).
    #[serde(default, deserialize_with = "lenient::opt_dims", skip_serializing_if = "Option::is_none")]
    pub hidden_dims: Option<Vec<usize>>,
    /// Autoencoders: number of layers.
    #[serde(default, deserialize_with = "lenient::layers", skip_serializing_if = "Option::is_none")]
    pub layers: Option<usize>,
    /// Autoencoders: code size.
    #[serde(default, deserialize_with = "lenient::code_dim", skip_serializing_if = "Option::is_none")]
    pub code_dim: Option<usize>,
    /// Iteration budget (LEML, autoencoders).
    #[serde(default, deserialize_with = "lenient::max_iter", skip_serializing_if = "Option::is_none")]
    pub max_iter: Option<usize>,
}

/// Nystroem anchors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AnchorsRecipe {
    /// A count drawn uniformly without replacement.
    Count(usize),
    /// These 0-based training indices.
    Indices(Vec<usize>),
}

/// A kernel by name with its parameters; `None` is okr's default (the
/// widths are then resolved on the data, see [`crate::resolve`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelRecipe {
    /// `gaussian` (`rbf`), `linear`, `laplacian`, `polynomial` (`poly`),
    /// `tanimoto`, `gaussian-tanimoto`; outputs also `wl` (graphs), `kendall`
    /// and `mallows` (rankings).
    pub name: String,
    /// Width `gamma` (Gaussian-type kernels, polynomial scale, Mallows `lambda`).
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub gamma: Option<f64>,
    /// Gaussian width as `sigma^2` (`gamma = 1 / (2 sigma^2)`).
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub sigma2: Option<f64>,
    /// Polynomial degree (read as any integer: one beyond the kernel's
    /// range is refused by the kernel's check, with its message).
    #[serde(default, deserialize_with = "lenient::opt_degree", skip_serializing_if = "Option::is_none")]
    pub degree: Option<u64>,
    /// Polynomial offset.
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub coef0: Option<f64>,
    /// Weisfeiler-Lehman iterations (`wl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
}

impl KernelRecipe {
    /// The kernel `name` with every parameter at its default.
    pub fn named(name: &str) -> Self {
        Self { name: name.to_string(), gamma: None, sigma2: None, degree: None, coef0: None, iterations: None }
    }

    /// The name in its canonical spelling (`rbf` -> `gaussian`, `poly` -> `polynomial`).
    pub fn canonical_name(&self) -> String {
        let n = self.name.trim().to_ascii_lowercase().replace('_', "-");
        match n.as_str() {
            "rbf" => "gaussian".into(),
            "poly" => "polynomial".into(),
            _ => n,
        }
    }

    /// Whether the kernel has a Gaussian-type width (`gamma` or `sigma2`).
    pub fn has_gaussian_width(&self) -> bool {
        matches!(self.canonical_name().as_str(), "gaussian" | "laplacian" | "gaussian-tanimoto")
    }

    /// Checks that only the parameters the kernel reads are set.
    fn check(&self, side: &str) -> Result<()> {
        let name = self.canonical_name();
        let vector = ["gaussian", "linear", "laplacian", "polynomial", "tanimoto", "gaussian-tanimoto"];
        let structured = ["wl", "kendall", "mallows"];
        if !vector.contains(&name.as_str()) && !structured.contains(&name.as_str()) {
            return Err(Error::Refused(format!(
                "unknown kernel {:?} for the {side} (expected gaussian, linear, laplacian, polynomial, tanimoto, \
                 gaussian-tanimoto, wl, kendall or mallows)",
                self.name
            )));
        }
        let gaussian = self.has_gaussian_width();
        let takes_gamma = gaussian || name == "polynomial" || name == "mallows";
        let refuse = |param: &str, why: &str| Err(Error::Refused(format!("{side} kernel {name}: {param} {why}")));
        if self.gamma.is_some() && !takes_gamma {
            return refuse("gamma", "does not apply (it has no width)");
        }
        if self.sigma2.is_some() && !gaussian {
            return refuse("sigma2", "does not apply (only to kernels with a Gaussian width)");
        }
        if self.gamma.is_some() && self.sigma2.is_some() {
            return refuse("gamma", "and sigma2 are both given: give one width");
        }
        if (self.degree.is_some() || self.coef0.is_some()) && name != "polynomial" {
            return refuse("degree / coef0", "apply to the polynomial kernel only");
        }
        if self.iterations.is_some() && name != "wl" {
            return refuse("iterations", "apply to the wl kernel only");
        }
        for (param, v) in [("gamma", self.gamma), ("sigma2", self.sigma2)] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(Error::invalid(format!("{side} kernel {param}"), v, "a finite number > 0"));
            }
        }
        if let Some(c) = self.coef0
            && !(c.is_finite() && c >= 0.0)
        {
            return Err(Error::invalid(format!("{side} kernel coef0"), c, "a finite number >= 0"));
        }
        if let Some(h) = self.iterations
            && h > okr_estimators::persist::MAX_WL_ITERATIONS
        {
            return Err(Error::invalid(
                "wl iterations",
                h,
                format!("at most {}", okr_estimators::persist::MAX_WL_ITERATIONS),
            ));
        }
        if self.degree == Some(0) {
            return Err(Error::invalid(format!("{side} kernel degree"), 0, "an integer >= 1"));
        }
        Ok(())
    }

    /// Whether this is a graph or ranking kernel.
    pub fn is_structured(&self) -> bool {
        matches!(self.canonical_name().as_str(), "wl" | "kendall" | "mallows")
    }
}

impl Default for KernelRecipe {
    fn default() -> Self {
        Self::named("gaussian")
    }
}

/// Whether dense features are standardized before the input kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standardize {
    /// Dense features that are not all 0/1 are standardized; binary and
    /// sparse features are used as given.
    #[default]
    Auto,
    /// Always (sparse data stays sparse: Gaussian feature weights).
    Yes,
    /// Never.
    No,
}

/// How several input kernels are weighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mkl {
    /// Equal weights `1/p`.
    #[default]
    Uniform,
    /// Centred alignment with the output Gram (ALIGNF, Cortes et al. 2012).
    Alignf,
}

/// The input side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum InputRecipe {
    /// Feature rows with an input kernel.
    Features {
        /// The input kernel.
        #[serde(default)]
        kernel: KernelRecipe,
        /// Standardization of the features.
        #[serde(default)]
        standardize: Standardize,
    },
    /// A precomputed training Gram `K(train, train)`; predictions take test x train blocks.
    Gram,
    /// MS/MS spectra with the probability product kernel
    /// ([`okr_kernels::Ppk`]), fitted by [`crate::fit_spectra`]: the
    /// training Gram is computed from the spectra, then fitted as
    /// [`InputRecipe::Gram`] is, so the model is a Gram model (predictions
    /// take the test x train block of the same kernel, which
    /// [`SpectraKernelRecipe::ppk`] computes).
    Spectra {
        /// The kernel's parameters.
        #[serde(default)]
        kernel: SpectraKernelRecipe,
    },
    /// Several kernels on the features, combined with weights.
    Combined {
        /// The kernels.
        kernels: Vec<KernelRecipe>,
        /// How they are weighted.
        #[serde(default)]
        mkl: Mkl,
        /// The weights used (filled in by a fit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        weights: Option<Vec<f64>>,
        /// Standardization of the features.
        #[serde(default)]
        standardize: Standardize,
    },
}

/// The probability product kernel of MS/MS spectra ([`okr_kernels::Ppk`],
/// Heinonen et al. 2012), by its parameters; `None` is the kernel's default
/// ([`okr_kernels::PpkParams`], the one place `okr gram`'s defaults also
/// come from). A fit records every value it used.
///
/// JSON: `{"kind": "spectra", "kernel": {"peak_width": 0.01,
/// "peak_weights": "intensity", "precursor_width": 0.01}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpectraKernelRecipe {
    /// Peak width `sigma_m` in m/z: the standard deviation of each peak's Gaussian.
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub peak_width: Option<f64>,
    /// Mixture weights of the peaks: `uniform`, `intensity` or `sqrt-intensity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_weights: Option<String>,
    /// Width of the relative intensity as a second coordinate (none: m/z only).
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub intensity_width: Option<f64>,
    /// Width of the Gaussian on the precursor m/z (none: no precursor term).
    #[serde(default, deserialize_with = "lenient::opt_f64", skip_serializing_if = "Option::is_none")]
    pub precursor_width: Option<f64>,
}

impl SpectraKernelRecipe {
    /// The checked kernel, the unset parameters at their defaults.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown `peak_weights`; the kernel's
    /// [`okr_kernels::Error::InvalidParameter`] for a width out of range.
    pub fn ppk(&self) -> Result<okr_kernels::Ppk> {
        let mut p = okr_kernels::Ppk::params();
        if let Some(w) = self.peak_width {
            p = p.peak_width(w);
        }
        if let Some(name) = &self.peak_weights {
            let w = okr_kernels::PeakWeights::from_name(name)
                .ok_or_else(|| Error::invalid("peak_weights", name, "uniform, intensity or sqrt-intensity"))?;
            p = p.weights(w);
        }
        Ok(p.intensity_width(self.intensity_width).precursor_width(self.precursor_width).check()?)
    }

    /// The recipe of `ppk` with every parameter written out (what a fit records).
    pub fn of(ppk: &okr_kernels::Ppk) -> Self {
        Self {
            peak_width: Some(ppk.peak_width()),
            peak_weights: Some(ppk.weights().name().to_string()),
            intensity_width: ppk.intensity_width(),
            precursor_width: ppk.precursor_width(),
        }
    }
}

impl Default for InputRecipe {
    fn default() -> Self {
        InputRecipe::Features { kernel: KernelRecipe::default(), standardize: Standardize::Auto }
    }
}

/// What the model predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputKind {
    /// Label sets.
    #[default]
    Labels,
    /// Binary fingerprints (label sets whose labels are the bits).
    Fingerprint,
    /// Real vectors.
    Vector,
    /// Labelled graphs.
    Graph,
    /// Rankings of a fixed set of items.
    Ranking,
}

impl OutputKind {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            OutputKind::Labels => "labels",
            OutputKind::Fingerprint => "fingerprint",
            OutputKind::Vector => "vector",
            OutputKind::Graph => "graph",
            OutputKind::Ranking => "ranking",
        }
    }
}

/// The output side: kind and kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputRecipe {
    /// What is predicted.
    #[serde(default)]
    pub kind: OutputKind,
    /// The output kernel (default: Gaussian; `wl` for graphs, `kendall` for rankings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelRecipe>,
}

impl Default for OutputRecipe {
    fn default() -> Self {
        Self { kind: OutputKind::Labels, kernel: None }
    }
}

impl OutputRecipe {
    /// The output kernel, or the kind's default.
    pub fn kernel_or_default(&self) -> KernelRecipe {
        self.kernel.clone().unwrap_or_else(|| match self.kind {
            OutputKind::Graph => KernelRecipe::named("wl"),
            OutputKind::Ranking => KernelRecipe::named("kendall"),
            _ => KernelRecipe::default(),
        })
    }
}

/// Runtime options: how, not what (they never change a model's body).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runtime {
    /// Worker threads (default: every core; capped at the cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Decoding memory budget in MiB (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_budget_mib: Option<usize>,
    /// Decoding precision, `f64` (default) or `f32`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
}

impl EstimatorRecipe {
    /// The estimator with every hyper-parameter at its default.
    pub fn new(name: Estimator) -> Self {
        Self {
            name,
            lambda: None,
            lambda1: None,
            lambda2: None,
            rank: None,
            centered: None,
            solver: None,
            input_sketch: None,
            output_sketch: None,
            anchors: None,
            subset: None,
            loss: None,
            observed_fraction: None,
            hidden_dims: None,
            layers: None,
            code_dim: None,
            max_iter: None,
        }
    }

    /// The parameters that are set, with whether each is.
    fn given(&self) -> [(Param, bool); 15] {
        [
            (Param::Rank, self.rank.is_some()),
            (Param::Centered, self.centered.is_some()),
            (Param::Solver, self.solver.is_some()),
            (Param::Lambda1, self.lambda1.is_some()),
            (Param::Lambda2, self.lambda2.is_some()),
            (Param::InputSketch, self.input_sketch.is_some()),
            (Param::OutputSketch, self.output_sketch.is_some()),
            (Param::Anchors, self.anchors.is_some()),
            (Param::Subset, self.subset.is_some()),
            (Param::Loss, self.loss.is_some()),
            (Param::ObservedFraction, self.observed_fraction.is_some()),
            (Param::Layers, self.layers.is_some()),
            (Param::CodeDim, self.code_dim.is_some()),
            (Param::HiddenDims, self.hidden_dims.is_some()),
            (Param::MaxIter, self.max_iter.is_some()),
        ]
    }

    /// The first parameter that is set but that the estimator does not take.
    pub fn misplaced(&self) -> Option<Param> {
        self.given().into_iter().find(|&(p, given)| given && !self.name.takes(p)).map(|(p, _)| p)
    }
}

impl Recipe {
    /// A recipe for `estimator` with every other choice at its default
    /// (features with a Gaussian kernel, label-set outputs).
    pub fn new(estimator: Estimator) -> Self {
        Self {
            estimator: EstimatorRecipe::new(estimator),
            input: InputRecipe::default(),
            output: OutputRecipe::default(),
            runtime: Runtime::default(),
            seed: 0,
        }
    }

    /// Sets the ridge.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.estimator.lambda = Some(lambda);
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the input side.
    pub fn input(mut self, input: InputRecipe) -> Self {
        self.input = input;
        self
    }

    /// Sets the output side.
    pub fn output(mut self, output: OutputRecipe) -> Self {
        self.output = output;
        self
    }

    /// The recipe as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a recipe always serializes")
    }

    /// A recipe from JSON.
    ///
    /// # Errors
    /// [`Error::Recipe`] with serde's message (unknown fields are refused).
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::Recipe(e.to_string()))
    }

    /// Checks the choices against each other before any data is read:
    /// parameters the estimator does not take, kernels and their
    /// parameters, combinations that cannot be fitted (with the reason).
    ///
    /// # Errors
    /// [`Error::Refused`] or [`Error::Invalid`] naming the choice.
    pub fn check(&self) -> Result<()> {
        let e = self.estimator.name;
        if let Some(p) = self.estimator.misplaced() {
            let takers: Vec<&str> = p.estimators().iter().map(|e| e.name()).collect();
            return Err(Error::Refused(format!(
                "{} does not apply to estimator {e} (only to {})",
                p.name(),
                takers.join(", ")
            )));
        }
        let family = e.family();
        match &self.input {
            InputRecipe::Features { kernel, .. } => {
                kernel.check("input")?;
                if kernel.is_structured() {
                    return Err(Error::Refused(format!(
                        "input kernel {} is a graph or ranking kernel: okr's inputs are feature vectors",
                        kernel.canonical_name()
                    )));
                }
            }
            InputRecipe::Gram | InputRecipe::Spectra { .. } => {
                if let InputRecipe::Spectra { kernel } = &self.input {
                    kernel.ppk()?;
                }
                if !e.takes_gram() {
                    let why = match family {
                        Family::LabelScores => "it is linear in the features",
                        _ => "it reconstructs the features",
                    };
                    let what = match self.input {
                        InputRecipe::Gram => "a precomputed Gram",
                        _ => "spectra (a Gram of the probability product kernel)",
                    };
                    return Err(Error::Refused(format!(
                        "{what} does not apply to estimator {e} ({why}; every kernel-output estimator takes one)"
                    )));
                }
            }
            InputRecipe::Combined { kernels, weights, .. } => {
                if family != Family::KernelOutput {
                    return Err(Error::Refused(format!("combined input kernels do not apply to estimator {e}")));
                }
                if kernels.is_empty() {
                    return Err(Error::Refused("combined input kernels: the list is empty".into()));
                }
                for k in kernels {
                    k.check("input")?;
                    if k.is_structured() || k.sigma2.is_some() {
                        return Err(Error::Refused(format!(
                            "combined input kernel {}: give vector kernels with gamma (not sigma2)",
                            k.canonical_name()
                        )));
                    }
                }
                if let Some(w) = weights
                    && (w.len() != kernels.len() || w.iter().any(|v| !(v.is_finite() && *v >= 0.0)))
                {
                    return Err(Error::Refused(format!(
                        "combined input kernels: {} weights for {} kernels (finite and >= 0 each)",
                        w.len(),
                        kernels.len()
                    )));
                }
            }
        }
        if family != Family::KernelOutput {
            if self.output.kind != OutputKind::Labels {
                return Err(Error::Refused(format!(
                    "{} outputs need a kernel-output estimator, not {e}",
                    self.output.kind.name()
                )));
            }
            if self.output.kernel.is_some() {
                let why = if family == Family::LabelScores {
                    "it is linear in the features"
                } else {
                    "it has no output kernel"
                };
                return Err(Error::Refused(format!("an output kernel does not apply to estimator {e} ({why})")));
            }
            // Standardization does not matter to LEML (features as given); a kernel does.
            let kernel_given = match &self.input {
                InputRecipe::Features { kernel, .. } => *kernel != KernelRecipe::default(),
                _ => true,
            };
            if e == Estimator::Leml && kernel_given {
                return Err(Error::Refused(
                    "an input kernel does not apply to estimator leml (it is linear in the features)".into(),
                ));
            }
        }
        let ky = self.output.kernel_or_default();
        ky.check("output")?;
        let wanted: &[&str] = match self.output.kind {
            OutputKind::Graph => &["wl"],
            OutputKind::Ranking => &["kendall", "mallows"],
            _ => &[],
        };
        let name = ky.canonical_name();
        if !wanted.is_empty() && !wanted.contains(&name.as_str()) {
            return Err(Error::Refused(format!(
                "{} outputs need output kernel {} (not {name})",
                self.output.kind.name(),
                wanted.join(" or ")
            )));
        }
        if wanted.is_empty() && ky.is_structured() {
            return Err(Error::Refused(format!(
                "output kernel {name} is a graph or ranking kernel: it needs graph or ranking outputs"
            )));
        }
        if let Some(p) = &self.runtime.precision
            && !matches!(p.as_str(), "f64" | "f32")
        {
            return Err(Error::invalid("precision", p, "f64 or f32"));
        }
        if self.runtime.threads == Some(0) {
            return Err(Error::invalid("threads", 0, "at least 1"));
        }
        if self.runtime.memory_budget_mib == Some(0) {
            return Err(Error::invalid("memory budget", 0, "at least 1 MiB"));
        }
        match family {
            Family::KernelOutput => crate::resolve::estimator_spec(
                self,
                usize::MAX,
                self.estimator.lambda.unwrap_or(crate::defaults::LAMBDA),
            )
            .map(drop),
            Family::LabelScores => crate::label_scores::leml_params(self, usize::MAX).map(drop),
            Family::Autoencoder => crate::autoencoders::params(self).map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_unknown_fields() {
        let mut r = Recipe::new(Estimator::Sisokr).lambda(1e-4).seed(3);
        r.estimator.input_sketch = Some("uniform:100".into());
        r.estimator.output_sketch = Some("gaussian:20".into());
        r.input = InputRecipe::Combined {
            kernels: vec![KernelRecipe::named("gaussian"), KernelRecipe::named("linear")],
            mkl: Mkl::Alignf,
            weights: None,
            standardize: Standardize::No,
        };
        r.output = OutputRecipe { kind: OutputKind::Fingerprint, kernel: Some(KernelRecipe::named("tanimoto")) };
        let back = Recipe::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let minimal = Recipe::from_json(r#"{"estimator": {"name": "rr"}}"#).unwrap();
        assert_eq!(minimal, Recipe::new(Estimator::ReducedRank));
        let err = Recipe::from_json(r#"{"estimator": {"name": "iokr", "lamda": 1}}"#).unwrap_err().to_string();
        assert!(err.contains("unknown field `lamda`"), "{err}");
        let err = Recipe::from_json(r#"{"estimator": {"name": "svm"}}"#).unwrap_err().to_string();
        assert!(err.contains("unknown estimator"), "{err}");
        // Non-finite numbers spelled as text reach the checks, which explain them.
        let nan = Recipe::from_json(r#"{"estimator": {"name": "iokr", "lambda": "NaN"}}"#).unwrap();
        assert!(nan.estimator.lambda.unwrap().is_nan());
        assert!(nan.check().unwrap_err().to_string().contains("lambda = NaN"));
        let inf = Recipe::from_json(r#"{"estimator": {"name": "kde", "lambda": "-inf"}}"#).unwrap();
        assert_eq!(inf.estimator.lambda, Some(f64::NEG_INFINITY));
        assert!(Recipe::from_json(r#"{"estimator": {"name": "kde", "lambda": "big"}}"#).is_err());
    }

    #[test]
    fn check_refuses_what_cannot_be_fitted_with_the_reason() {
        let mut r = Recipe::new(Estimator::Iokr);
        r.estimator.rank = Some(3);
        assert!(r.check().unwrap_err().to_string().contains("rank does not apply to estimator iokr"));
        let r = Recipe::new(Estimator::Leml).input(InputRecipe::Gram);
        assert!(r.check().unwrap_err().to_string().contains("precomputed Gram does not apply to estimator leml"));
        for kind in [OutputKind::Vector, OutputKind::Graph, OutputKind::Ranking] {
            let r = Recipe::new(Estimator::Kde).input(InputRecipe::Gram).output(OutputRecipe { kind, kernel: None });
            r.check().unwrap();
        }
        let r = Recipe::new(Estimator::Iokr)
            .output(OutputRecipe { kind: OutputKind::Graph, kernel: Some(KernelRecipe::named("gaussian")) });
        assert!(r.check().unwrap_err().to_string().contains("graph outputs need output kernel wl"));
        let r = Recipe::new(Estimator::Iokr).output(OutputRecipe { kind: OutputKind::Graph, kernel: None });
        r.check().unwrap();
        let mut k = KernelRecipe::named("linear");
        k.gamma = Some(0.5);
        let r = Recipe::new(Estimator::Iokr).input(InputRecipe::Features { kernel: k, standardize: Standardize::Auto });
        assert!(r.check().unwrap_err().to_string().contains("gamma does not apply"));
        let r = Recipe::new(Estimator::Siokr);
        assert!(
            r.check().unwrap_err().to_string().contains("siokr needs an input sketch input_sketch"),
            "{:?}",
            r.check()
        );
        let r = Recipe::new(Estimator::Iokr).lambda(-1.0);
        assert!(r.check().unwrap_err().to_string().contains("lambda"));
        let r = Recipe::new(Estimator::Leml)
            .output(OutputRecipe { kind: OutputKind::Labels, kernel: Some(KernelRecipe::named("linear")) });
        assert!(r.check().unwrap_err().to_string().contains("linear in the features"));
    }
}
