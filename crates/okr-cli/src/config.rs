//! From parsed flags to okr objects: data readers, kernels, threads.

use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_eval::{CsvHeader, Dataset, Features, SvmlightOptions, read_arff, read_csv, read_svmlight, read_xc};
use okr_kernels::{Gaussian, GaussianTanimoto, KernelSpec, LabelSets, Laplacian, Linear, Polynomial, Tanimoto};

use crate::cli::{DataArgs, Format, KernelKind};

/// The width of the data a model expects, to read test files consistently.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Number of features.
    pub n_features: usize,
    /// Number of labels.
    pub n_labels: usize,
}

/// Resolves `--format auto` from the file extension.
fn resolve_format(path: &Path, format: Format) -> Result<Format> {
    if format != Format::Auto {
        return Ok(format);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    Ok(match ext.as_str() {
        "arff" => Format::Arff,
        "svm" | "svmlight" | "libsvm" => Format::Svmlight,
        "xc" => Format::Xc,
        "csv" => Format::Csv,
        _ => {
            bail!("cannot tell the format of {} from its extension; pass --format arff|svmlight|xc|csv", path.display())
        }
    })
}

/// Reads a data file as `args` says. `shape` (from a model) fixes the
/// widths of formats that do not declare them and is checked for the others.
pub fn read_data(path: &Path, args: &DataArgs, shape: Option<Shape>) -> Result<Dataset> {
    let label_count = || -> Result<usize> {
        args.label_count.or(shape.map(|s| s.n_labels)).with_context(|| {
            format!("{}: --label-count is required for this format (number of label columns)", path.display())
        })
    };
    let data = match resolve_format(path, args.format)? {
        Format::Arff => read_arff(path, label_count()?)?,
        Format::Csv => read_csv(path, label_count()?, CsvHeader::Detect)?,
        Format::Xc => read_xc(path)?,
        Format::Svmlight => {
            let mut opts = SvmlightOptions::new(args.zero_based);
            if let Some(s) = shape {
                opts = opts.n_features(s.n_features).n_labels(s.n_labels);
            } else if let Some(l) = args.label_count {
                // Labels absent from a training file still count.
                opts = opts.n_labels(l);
            }
            read_svmlight(path, &opts)?
        }
        Format::Auto => unreachable!("resolved above"),
    };
    if data.n_samples() == 0 {
        bail!("{}: the file has no data rows", path.display());
    }
    if let Some(s) = shape {
        if data.n_features() != s.n_features {
            bail!(
                "{}: has {} features but the model was trained on {}",
                path.display(),
                data.n_features(),
                s.n_features
            );
        }
        if data.n_labels() != s.n_labels {
            bail!("{}: has {} labels but the model was trained on {}", path.display(), data.n_labels(), s.n_labels);
        }
    }
    Ok(data)
}

/// Reads a candidate file: one label set per line, comma-separated 0-based
/// labels; an empty line is the empty set; `#` starts a comment line.
pub fn read_candidates(path: &Path, n_labels: usize) -> Result<LabelSets> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut sets = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let mut set = Vec::new();
        for tok in line.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let l: usize = tok.parse().with_context(|| {
                format!("{}:{}: expected a 0-based label index, found {tok:?}", path.display(), lineno + 1)
            })?;
            if l >= n_labels {
                bail!("{}:{}: label {l} out of range (the model has {n_labels} labels)", path.display(), lineno + 1);
            }
            set.push(l);
        }
        sets.push(set);
    }
    if sets.is_empty() {
        bail!("{}: the candidate file is empty (expected one label set per line)", path.display());
    }
    Ok(LabelSets::new(n_labels, sets)?)
}

/// Parameters of a vector kernel from flags.
pub struct KernelFlags {
    /// Kind.
    pub kind: KernelKind,
    /// gamma, if given.
    pub gamma: Option<f64>,
    /// sigma^2, if given.
    pub sigma2: Option<f64>,
    /// Polynomial degree.
    pub degree: u32,
    /// Polynomial offset.
    pub coef0: f64,
}

/// Builds a kernel; `default_gamma` is used when neither gamma nor sigma^2 is given.
pub fn build_kernel(f: &KernelFlags, default_gamma: impl FnOnce() -> f64, what: &str) -> Result<KernelSpec> {
    let gamma = || -> Result<f64> {
        Ok(match (f.gamma, f.sigma2) {
            (Some(g), _) => g,
            (None, Some(s2)) => {
                if !(s2.is_finite() && s2 > 0.0) {
                    bail!("invalid {what} sigma2 = {s2}: expected a finite number > 0");
                }
                1.0 / (2.0 * s2)
            }
            (None, None) => default_gamma(),
        })
    };
    let spec: KernelSpec = match f.kind {
        KernelKind::Linear => Linear::new().into(),
        KernelKind::Tanimoto => Tanimoto::new().into(),
        KernelKind::Gaussian => Gaussian::new(gamma()?).with_context(|| format!("{what} kernel"))?.into(),
        KernelKind::Laplacian => Laplacian::new(gamma()?).with_context(|| format!("{what} kernel"))?.into(),
        KernelKind::GaussianTanimoto => {
            GaussianTanimoto::new(gamma()?).with_context(|| format!("{what} kernel"))?.into()
        }
        KernelKind::Polynomial => {
            let g = f.gamma.unwrap_or(1.0);
            Polynomial::new(f.degree, g, f.coef0).with_context(|| format!("{what} kernel"))?.into()
        }
    };
    Ok(spec)
}

/// Median squared distance between training rows, on at most 2000 evenly
/// spaced rows (deterministic); the Gaussian default is `gamma = 1 / (2 median)`.
pub fn median_heuristic_gamma(x: &Features) -> f64 {
    let m = match x {
        Features::Dense(d) => okr_kernels::median_sq_distance(d, 2000),
        Features::Sparse(s) => okr_kernels::median_sq_distance(s, 2000),
    };
    if m > 0.0 { 1.0 / (2.0 * m) } else { 1.0 }
}

/// Sets the global rayon pool size (faer uses it too).
pub fn set_threads(threads: Option<usize>) -> Result<()> {
    if let Some(t) = threads {
        if t == 0 {
            bail!("invalid --threads 0: expected at least 1");
        }
        rayon::ThreadPoolBuilder::new().num_threads(t).build_global().context("cannot configure the thread pool")?;
    }
    Ok(())
}
