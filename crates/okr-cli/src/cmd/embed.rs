//! `okr embed-outputs` and `okr decode` (issue 36): flags -> one
//! [`EmbeddingRecipe`] -> `okr::embed`; reading and writing only.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use okr::TrainOutputs;
use okr::embed::{BasisChoice, Embedding, EmbeddingRecipe, fit_embedding};
use okr::recipe::{KernelRecipe, OutputKind, OutputRecipe};
use okr::surrogate::Coordinates;
use okr_kernels::{DenseRows, LabelSets};
use serde_json::json;

use crate::cli::embed::{BasisFlag, EmbedKind};
use crate::cli::{CoordDecodeArgs, EmbedArgs, OutputFormat};
use crate::config::set_threads;
use crate::output::write_result;

/// Outputs read from a file, owned.
enum Owned {
    Labels(LabelSets),
    Vectors(DenseRows),
}

impl Owned {
    fn train(&self) -> TrainOutputs<'_> {
        match self {
            Owned::Labels(l) => TrainOutputs::Labels(l),
            Owned::Vectors(v) => TrainOutputs::Vectors(v),
        }
    }
}

fn read_outputs(path: &Path, kind: OutputKind, n_labels: Option<usize>) -> Result<Owned> {
    Ok(match kind {
        OutputKind::Vector => Owned::Vectors(okr_eval::read_vectors(path)?),
        _ => {
            let Some(l) = n_labels else { bail!("label-set outputs need --label-count") };
            Owned::Labels(okr_eval::read_label_sets(path, l)?)
        }
    })
}

/// The first line of a coordinates text file.
fn tag_line(id: u64, r: usize) -> String {
    format!("# okr-coordinates basis={id:016x} components={r}")
}

/// `.npy` (version 1.0, little-endian float64, C order) of `m`.
fn write_npy(m: faer::MatRef<'_, f64>, w: &mut dyn Write) -> std::io::Result<()> {
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", m.nrows(), m.ncols());
    // Magic (6) + version (2) + length (2) + dict + padding + newline, a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let header = format!("{dict}{}\n", " ".repeat(unpadded.next_multiple_of(64) - unpadded));
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&(header.len() as u16).to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    let mut buf = Vec::with_capacity(8 * m.ncols());
    for i in 0..m.nrows() {
        buf.clear();
        for j in 0..m.ncols() {
            buf.extend_from_slice(&m[(i, j)].to_le_bytes());
        }
        w.write_all(&buf)?;
    }
    Ok(())
}

fn is_npy(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// `okr embed-outputs`.
pub fn embed(a: &EmbedArgs) -> Result<()> {
    set_threads(a.threads)?;
    if let Some(out) = &a.output {
        okr_eval::check_not_input(
            out,
            &[("output file", a.outputs.as_path()), ("basis file", a.save_basis.as_path())],
        )?;
    }
    let kind = match a.output_kind {
        EmbedKind::Labels => OutputKind::Labels,
        EmbedKind::Vector => OutputKind::Vector,
    };
    let mut kernel = KernelRecipe::named(&a.output_kernel);
    kernel.gamma = a.output_gamma;
    let recipe = EmbeddingRecipe {
        output: OutputRecipe { kind, kernel: Some(kernel) },
        basis: match a.basis {
            BasisFlag::Exact => BasisChoice::Exact,
            BasisFlag::Sketch => BasisChoice::Sketch,
            BasisFlag::Nystroem => BasisChoice::Nystroem,
        },
        n_components: a.n_components,
        sketch: a.sketch.clone(),
        seed: a.seed,
    };
    let y = read_outputs(&a.outputs, kind, a.label_count)?;
    let e = fit_embedding(&recipe, &y.train())?;
    for note in e.notes() {
        eprintln!("okr: {note}");
    }
    let z = e.transform(&y.train())?;
    e.save(&a.save_basis)?;
    let values = z.values();
    match &a.output {
        Some(p) if is_npy(p) => okr_eval::write_atomic(p, |w| write_npy(values, w))?,
        _ => write_result(a.output.as_deref(), |w| {
            writeln!(w, "{}", tag_line(e.id(), e.n_components()))?;
            for i in 0..values.nrows() {
                let row: Vec<f64> = values.row(i).iter().copied().collect();
                writeln!(w, "{}", okr_eval::rows::format_values(&row))?;
            }
            Ok(())
        })?,
    }
    Ok(())
}

/// The coordinates of `path`, tagged when a text file's first line names a basis.
fn read_coordinates(path: &Path) -> Result<Coordinates> {
    if is_npy(path) {
        return Ok(Coordinates::new(okr_kernels::read_gram_npy(path)?)?);
    }
    let first = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let values = okr_kernels::read_gram_text(path)?;
    let id = match first.strip_prefix("# okr-coordinates basis=") {
        Some(rest) => {
            let hex = rest.split_whitespace().next().unwrap_or("");
            Some(u64::from_str_radix(hex, 16).with_context(|| format!("{}:1: bad basis id {hex:?}", path.display()))?)
        }
        None => None,
    };
    Ok(match id {
        Some(id) => Coordinates::of_basis(values, id)?,
        None => Coordinates::new(values)?,
    })
}

/// `okr decode`.
pub fn decode(a: &CoordDecodeArgs) -> Result<()> {
    set_threads(a.threads)?;
    match a.output_format {
        OutputFormat::Indicator | OutputFormat::Csv if a.top_k > 1 => {
            bail!("--top-k {} needs --output-format labels or json (an indicator row holds one label set)", a.top_k)
        }
        OutputFormat::Labels | OutputFormat::Indicator if a.scores => {
            bail!("--scores needs --output-format csv or json")
        }
        _ => {}
    }
    if let Some(out) = &a.output {
        let mut inputs = vec![("coordinates file", a.coordinates.as_path()), ("basis file", a.basis.as_path())];
        inputs.extend(a.candidates.as_deref().map(|c| ("candidate file", c)));
        okr_eval::check_not_input(out, &inputs)?;
    }
    let e = Embedding::load(&a.basis)?;
    let z = read_coordinates(&a.coordinates).with_context(|| format!("coordinates {}", a.coordinates.display()))?;
    let candidates = match &a.candidates {
        Some(p) => Some(read_outputs(p, e.kind(), Some(e.width()))?),
        None => None,
    };
    let budget = a.memory_budget.saturating_mul(1 << 20);
    let dec = okr_decode::CandidateDecoder::new().memory_budget(budget).precision(a.precision).top_k(a.top_k);
    let decoded = e.decode(&z, candidates.as_ref().map(Owned::train).as_ref(), dec)?;
    let n = decoded.n_rows();
    let mut text = Vec::new();
    match (e.basis(), &candidates) {
        (okr::embed::EmbeddingBasis::Vectors(b), c) => {
            if matches!(a.output_format, OutputFormat::Csv | OutputFormat::Indicator) {
                bail!("vector outputs are written with --output-format labels (the decoded vectors) or json");
            }
            let c = match c {
                Some(Owned::Vectors(v)) => v.as_mat(),
                _ => okr::surrogate::CoordinateBasis::distinct_outputs(b).as_mat(),
            };
            let row = |j: usize| (0..c.ncols()).map(|f| c[(j, f)]).collect::<Vec<f64>>();
            for t in 0..n {
                let (top, scores) = (decoded.top(t), decoded.top_scores(t));
                if a.output_format == OutputFormat::Json {
                    let best = top.first().map(|&j| row(j));
                    writeln!(text, "{}", json!({ "candidate_ids": top, "scores": scores, "output": best }))?;
                } else {
                    let shown: Vec<String> = top.iter().map(|&j| okr_eval::rows::format_values(&row(j))).collect();
                    writeln!(text, "{}", shown.join(";"))?;
                }
            }
        }
        (okr::embed::EmbeddingBasis::Labels(b), c) => {
            let sets = match c {
                Some(Owned::Labels(l)) => l,
                _ => okr::surrogate::CoordinateBasis::distinct_outputs(b),
            };
            let predicted = okr_eval::predictions::Predicted {
                names: (0..e.width()).map(|j| format!("label_{j}")).collect(),
                ranked: (0..n).map(|t| decoded.top(t).iter().map(|&c| sets.set(c).to_vec()).collect()).collect(),
                ranked_scores: a.scores.then(|| (0..n).map(|t| decoded.top_scores(t).to_vec()).collect()),
                label_scores: None,
            };
            okr_eval::predictions::write_predictions(a.output_format.into(), &predicted, &mut text)?;
        }
        (okr::embed::EmbeddingBasis::Rankings(_), _) => bail!("ranking bases are not written by okr embed-outputs"),
    }
    write_result(a.output.as_deref(), |w| w.write_all(&text))
}
