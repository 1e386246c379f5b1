//! Output embeddings: an output basis fitted from training outputs alone,
//! so that a model of any kind (a neural network, boosted trees, a ridge in
//! another language) regresses coordinates and okr decodes them ("bring your
//! own input model").
//!
//! [`EmbeddingRecipe`] names the output side (kind and kernel, resolved as
//! [`fit()`](crate::fit()) resolves them: same default widths) and the basis
//! ([`BasisChoice`]); [`fit_embedding`] gives an [`Embedding`] whose
//! [`transform`](Embedding::transform) maps outputs to coordinates
//! `(n, r)` and whose [`decode`](Embedding::decode) scores candidates
//! against predicted coordinates with okr-decode's
//! [`CoordinateDecoder`]. An embedding saves
//! to a checked file ([`Embedding::save`], [`Embedding::to_bytes`]).
//!
//! See `okr_estimators::output_basis` for the mathematics.

use std::path::Path;

use okr_decode::per_query::{PerQueryDecoder, Query, RankedQuery};
use okr_decode::{CandidateDecoder, CoordinateDecoder, Decoded};
use okr_estimators::output_basis::{BasisKind, OutputBasis};
use okr_estimators::sketch::SketchSpec;
use okr_kernels::{DenseRows, Kernel, KernelSpec, LabelSets, RankingKernel, Rankings, Rows};
use okr_surrogate::{CoordinateBasis, Coordinates};
use serde::{Deserialize, Serialize};

use crate::fit::TrainOutputs;
use crate::recipe::{OutputKind, OutputRecipe};
use crate::{Error, Result, defaults, resolve};

/// The kind of output basis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BasisChoice {
    /// Kernel PCA of the output Gram over the distinct training outputs
    /// (`n_components`: a cap on the rank; default all).
    #[default]
    Exact,
    /// A sketched basis (`n_components`: the sketch size; `sketch`: the kind).
    Sketch,
    /// Nystroem anchors among the distinct outputs (`n_components`: anchors).
    Nystroem,
}

impl std::str::FromStr for BasisChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "exact" => Ok(Self::Exact),
            "sketch" | "sketched" => Ok(Self::Sketch),
            "nystroem" => Ok(Self::Nystroem),
            _ => Err(Error::invalid("basis", s, "exact, sketch or nystroem")),
        }
    }
}

/// What to fit: the output side and the basis.
///
/// | Field | Default | Meaning |
/// |---|---|---|
/// | `output` | label sets, Gaussian kernel | output kind and kernel, widths resolved as for estimators |
/// | `basis` | `exact` | [`BasisChoice`] |
/// | `n_components` | all (exact); [`defaults::BASIS_SIZE`] (sketch, nystroem) | rank cap, sketch size or anchors, capped at the training outputs with a note |
/// | `sketch` | [`defaults::BASIS_SKETCH`] | sketch kind (`uniform`, `gaussian`, `sjlt`, ... or a whole `KIND:m` spec) |
/// | `seed` | `0` | seed of the sketch or anchor draw |
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingRecipe {
    /// The output side.
    #[serde(default)]
    pub output: OutputRecipe,
    /// The kind of basis.
    #[serde(default)]
    pub basis: BasisChoice,
    /// Rank cap (exact), sketch size (sketch) or anchors (nystroem).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_components: Option<usize>,
    /// The sketch kind of a sketched basis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<String>,
    /// Seed of the draw.
    #[serde(default)]
    pub seed: u64,
}

impl EmbeddingRecipe {
    /// The recipe as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an embedding recipe serializes")
    }

    /// Parses a recipe from JSON.
    ///
    /// # Errors
    /// [`Error::Recipe`] naming what does not parse.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::Recipe(e.to_string()))
    }
}

/// A fitted basis, by output kind (fingerprints are label sets).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum EmbeddingBasis {
    /// Label sets or fingerprints.
    Labels(OutputBasis<LabelSets, KernelSpec>),
    /// Real vectors.
    Vectors(OutputBasis<DenseRows, KernelSpec>),
    /// Rankings.
    Rankings(OutputBasis<Rankings, RankingKernel>),
}

/// A fitted output embedding: the resolved recipe, the output kind and
/// width, and the basis. It is saved as an output-basis file
/// ([`to_bytes`](Embedding::to_bytes)); the basis alone is serde.
#[derive(Debug, Clone)]
pub struct Embedding {
    recipe: EmbeddingRecipe,
    kind: OutputKind,
    width: usize,
    basis: EmbeddingBasis,
    notes: Vec<String>,
}

/// The body of an output-basis file: the recipe as one line of JSON (its
/// optional fields are not postcard's), the kind, the width and the basis.
type Body = (String, OutputKind, usize, EmbeddingBasis);

/// The basis kind of a recipe for `n` training outputs, and a note when a
/// size was capped.
fn basis_kind(recipe: &EmbeddingRecipe, n: usize, n_distinct: usize) -> Result<(BasisKind, Option<String>)> {
    let size = recipe.n_components.unwrap_or(defaults::BASIS_SIZE);
    if size == 0 {
        return Err(Error::invalid("n_components", 0, "an integer >= 1"));
    }
    match recipe.basis {
        BasisChoice::Exact => Ok((BasisKind::Exact, None)),
        BasisChoice::Nystroem => {
            let note = (size > n_distinct).then(|| format!("anchors capped at the {n_distinct} distinct outputs"));
            Ok((BasisKind::Nystroem { anchors: size.min(n_distinct) }, note))
        }
        BasisChoice::Sketch => {
            let text = recipe.sketch.clone().unwrap_or_else(|| defaults::BASIS_SKETCH.into());
            let mut spec: SketchSpec = if text.contains(':') || text == "identity" {
                text.parse()?
            } else {
                format!("{text}:{size}").parse()?
            };
            spec.check()?;
            let note = (spec.size > n).then(|| format!("sketch size {} capped at the {n} training outputs", spec.size));
            spec.size = spec.size.min(n);
            Ok((BasisKind::Sketch(spec), note))
        }
    }
}

/// Fits the embedding of `recipe` on the training outputs `y`.
///
/// # Errors
/// [`Error::Refused`] for graph outputs (no output basis yet); an invalid
/// kernel, size or sketch; the basis' errors (empty outputs, a zero Gram).
pub fn fit_embedding(recipe: &EmbeddingRecipe, y: &TrainOutputs<'_>) -> Result<Embedding> {
    let mut resolved = recipe.clone();
    let mut notes = Vec::new();
    let kernel = recipe.output.kernel_or_default();
    fn fit_one<Y: Rows, K: Kernel<Y> + Clone>(
        recipe: &EmbeddingRecipe,
        k: K,
        y: &Y,
        notes: &mut Vec<String>,
    ) -> Result<OutputBasis<Y, K>> {
        let (_, group) = y.group_duplicates();
        let n_distinct = group.iter().max().map_or(0, |&g| g + 1);
        let (kind, note) = basis_kind(recipe, y.n_rows(), n_distinct)?;
        notes.extend(note);
        let params = OutputBasis::params(k).kind(kind).n_components(match recipe.basis {
            BasisChoice::Exact => recipe.n_components,
            _ => None,
        });
        Ok(params.seed(recipe.seed).fit(y)?)
    }
    let basis = match y {
        TrainOutputs::Labels(l) | TrainOutputs::Fingerprints(l) => {
            let (k, kr, note) = resolve::label_output_kernel(&kernel, l)?;
            notes.push(format!("output kernel {}, {note}", crate::fit::describe(&k)));
            resolved.output.kernel = Some(kr);
            EmbeddingBasis::Labels(fit_one(recipe, k, *l, &mut notes)?)
        }
        TrainOutputs::Vectors(v) => {
            let (k, kr, note) = resolve::vector_output_kernel(&kernel, v)?;
            notes.push(format!("output kernel {}, {note}", crate::fit::describe(&k)));
            resolved.output.kernel = Some(kr);
            EmbeddingBasis::Vectors(fit_one(recipe, k, *v, &mut notes)?)
        }
        TrainOutputs::Rankings(r) => {
            let (k, kr) = resolve::ranking_output_kernel(&kernel, r)?;
            resolved.output.kernel = Some(kr);
            EmbeddingBasis::Rankings(fit_one(recipe, k, *r, &mut notes)?)
        }
        TrainOutputs::Graphs(_) => {
            return Err(Error::Refused("graph outputs have no output embedding yet: use okr fit".into()));
        }
    };
    resolved.output.kind = y.kind();
    let mut e = Embedding { recipe: resolved, kind: y.kind(), width: y.width(), basis, notes };
    e.recipe.n_components = Some(match &e.basis {
        EmbeddingBasis::Labels(b) => b.n_components(),
        EmbeddingBasis::Vectors(b) => b.n_components(),
        EmbeddingBasis::Rankings(b) => b.n_components(),
    });
    if recipe.basis != BasisChoice::Exact {
        // The size the basis was asked for, not the rank it kept.
        e.recipe.n_components = recipe.n_components.or(Some(defaults::BASIS_SIZE));
    }
    Ok(e)
}

/// First bytes of an output-basis file.
pub const BASIS_MAGIC: &[u8; 8] = b"OKRBASIS";

/// Version of the body layout of an output-basis file.
pub const BASIS_FORMAT_VERSION: u32 = 1;

/// Dispatches `$body` on the basis with `$b` bound to it.
macro_rules! with_basis {
    ($e:expr, $b:ident => $body:expr) => {
        match &$e.basis {
            EmbeddingBasis::Labels($b) => $body,
            EmbeddingBasis::Vectors($b) => $body,
            EmbeddingBasis::Rankings($b) => $body,
        }
    };
}

impl Embedding {
    /// The resolved recipe (kernel widths and sizes filled in).
    pub fn recipe(&self) -> &EmbeddingRecipe {
        &self.recipe
    }
    /// The output kind.
    pub fn kind(&self) -> OutputKind {
        self.kind
    }
    /// The output width (labels, bits, vector length, ranked items).
    pub fn width(&self) -> usize {
        self.width
    }
    /// The fitted basis.
    pub fn basis(&self) -> &EmbeddingBasis {
        &self.basis
    }
    /// What was resolved or capped at fit (empty after loading).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// Number of coordinates per output, `r`.
    pub fn n_components(&self) -> usize {
        with_basis!(self, b => b.n_components())
    }
    /// The id that tags this basis' coordinates.
    pub fn id(&self) -> u64 {
        with_basis!(self, b => b.id())
    }
    /// Number of distinct training outputs (the default candidates).
    pub fn n_distinct(&self) -> usize {
        with_basis!(self, b => b.distinct_outputs().n_rows())
    }

    fn refuse(&self, got: OutputKind) -> Error {
        Error::Refused(format!("outputs are {}, the basis was fitted on {}", got.name(), self.kind.name()))
    }

    /// The coordinates `(n, r)` of outputs, tagged with this basis.
    ///
    /// # Errors
    /// [`Error::Refused`] for outputs of another kind; a width error of the
    /// basis.
    pub fn transform(&self, y: &TrainOutputs<'_>) -> Result<Coordinates> {
        match (&self.basis, y) {
            (EmbeddingBasis::Labels(b), TrainOutputs::Labels(l) | TrainOutputs::Fingerprints(l)) => Ok(b.transform(l)?),
            (EmbeddingBasis::Vectors(b), TrainOutputs::Vectors(v)) => Ok(b.transform(v)?),
            (EmbeddingBasis::Rankings(b), TrainOutputs::Rankings(r)) => Ok(b.transform(r)?),
            _ => Err(self.refuse(y.kind())),
        }
    }

    /// Decodes coordinates `z` against `candidates` (`None`: the distinct
    /// training outputs) with `decoder` (budget, `top_k`, precision).
    ///
    /// # Errors
    /// [`Error::Refused`] for candidates of another kind; the decoder's
    /// errors: coordinates of another width or basis, an empty candidate set.
    pub fn decode(
        &self,
        z: &Coordinates,
        candidates: Option<&TrainOutputs<'_>>,
        decoder: CandidateDecoder,
    ) -> Result<Decoded> {
        let dec = CoordinateDecoder::from(decoder);
        Ok(match (&self.basis, candidates) {
            (EmbeddingBasis::Labels(b), None) => dec.decode_training(b, z)?,
            (EmbeddingBasis::Vectors(b), None) => dec.decode_training(b, z)?,
            (EmbeddingBasis::Rankings(b), None) => dec.decode_training(b, z)?,
            (EmbeddingBasis::Labels(b), Some(TrainOutputs::Labels(c) | TrainOutputs::Fingerprints(c))) => {
                dec.decode(b, z, *c)?
            }
            (EmbeddingBasis::Vectors(b), Some(TrainOutputs::Vectors(c))) => dec.decode(b, z, *c)?,
            (EmbeddingBasis::Rankings(b), Some(TrainOutputs::Rankings(c))) => dec.decode(b, z, *c)?,
            (_, Some(c)) => return Err(self.refuse(c.kind())),
        })
    }

    /// Ranks pooled per-query candidate sets: query `q` is row
    /// `test_row` of `z` against the pool rows `indices` (its true
    /// candidate at position `truth`, if known), as
    /// [`PerQueryDecoder::rank_all`]. `pool` `None` is the distinct training
    /// outputs.
    ///
    /// # Errors
    /// As [`decode`](Self::decode), and the per-query decoder's errors
    /// (a row or pool index out of range, an empty query).
    pub fn rank_pooled(
        &self,
        ranker: &PerQueryDecoder,
        z: &Coordinates,
        pool: Option<&TrainOutputs<'_>>,
        queries: Vec<(String, usize, Vec<usize>, Option<usize>)>,
    ) -> Result<Vec<RankedQuery>> {
        let dec = CoordinateDecoder::new();
        fn queries_of<Y: Rows>(queries: Vec<(String, usize, Vec<usize>, Option<usize>)>) -> Vec<Query<Y>> {
            queries.into_iter().map(|(id, row, idx, truth)| Query::pooled(id, row, idx, truth)).collect()
        }
        Ok(match (&self.basis, pool) {
            (EmbeddingBasis::Labels(b), None) => {
                dec.rank_all(ranker, b, z, Some(b.distinct_outputs()), queries_of(queries))?
            }
            (EmbeddingBasis::Vectors(b), None) => {
                dec.rank_all(ranker, b, z, Some(b.distinct_outputs()), queries_of(queries))?
            }
            (EmbeddingBasis::Rankings(b), None) => {
                dec.rank_all(ranker, b, z, Some(b.distinct_outputs()), queries_of(queries))?
            }
            (EmbeddingBasis::Labels(b), Some(TrainOutputs::Labels(c) | TrainOutputs::Fingerprints(c))) => {
                dec.rank_all(ranker, b, z, Some(*c), queries_of(queries))?
            }
            (EmbeddingBasis::Vectors(b), Some(TrainOutputs::Vectors(c))) => {
                dec.rank_all(ranker, b, z, Some(*c), queries_of(queries))?
            }
            (EmbeddingBasis::Rankings(b), Some(TrainOutputs::Rankings(c))) => {
                dec.rank_all(ranker, b, z, Some(*c), queries_of(queries))?
            }
            (_, Some(c)) => return Err(self.refuse(c.kind())),
        })
    }

    /// The embedding as the bytes of an output-basis file: [`BASIS_MAGIC`],
    /// the format version and the body length (little-endian `u32`, `u64`),
    /// the body's CRC-32, then the body (postcard).
    ///
    /// # Errors
    /// [`Error::Refused`] if the body does not serialize.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let body: (String, OutputKind, usize, &EmbeddingBasis) =
            (self.recipe.to_json(), self.kind, self.width, &self.basis);
        let body = postcard::to_stdvec(&body).map_err(|e| Error::Refused(format!("cannot encode the basis: {e}")))?;
        let mut out = Vec::with_capacity(24 + body.len());
        out.extend_from_slice(BASIS_MAGIC);
        out.extend_from_slice(&BASIS_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Reads the bytes of [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`Error::Refused`] naming what is wrong: not an output-basis file (an
    /// okr model file is named as such), a newer version, a cut or corrupted
    /// body.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bad = |msg: String| Error::Refused(msg);
        if bytes.len() < 8 || &bytes[..8] != BASIS_MAGIC {
            if bytes.starts_with(okr_estimators::persist::MAGIC) {
                return Err(
                    bad("this is an okr model file, not an output basis (okr embed-outputs writes one)".into()),
                );
            }
            return Err(bad("not an okr output-basis file (okr embed-outputs writes one)".into()));
        }
        if bytes.len() < 24 {
            return Err(bad(format!("output-basis file cut in its header ({} of 24 bytes)", bytes.len())));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != BASIS_FORMAT_VERSION {
            return Err(bad(format!(
                "output-basis format version {version}: this okr reads version {BASIS_FORMAT_VERSION}"
            )));
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let crc = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes"));
        let body = &bytes[24..];
        if body.len() as u64 != len {
            return Err(bad(format!("output-basis body of {} bytes, the header says {len}", body.len())));
        }
        if crc32fast::hash(body) != crc {
            return Err(bad("output-basis file corrupted (checksum mismatch)".into()));
        }
        let (recipe, kind, width, basis): Body =
            postcard::from_bytes(body).map_err(|e| bad(format!("output-basis body does not decode: {e}")))?;
        let recipe = EmbeddingRecipe::from_json(&recipe)?;
        Ok(Self { recipe, kind, width, basis, notes: Vec::new() })
    }

    /// Writes the embedding to `path` atomically.
    ///
    /// # Errors
    /// [`Error::Refused`] naming the path for an I/O failure.
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes()?;
        okr_io::write_atomic(path, |w| std::io::Write::write_all(w, &bytes))
            .map_err(|e| Error::Refused(format!("cannot write {}: {e}", path.display())))
    }

    /// Reads an embedding written by [`save`](Self::save).
    ///
    /// # Errors
    /// [`Error::Refused`] naming the path, as [`from_bytes`](Self::from_bytes).
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::Refused(format!("cannot read {}: {e}", path.display())))?;
        Self::from_bytes(&bytes).map_err(|e| Error::Refused(format!("{}: {e}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;
    use crate::recipe::KernelRecipe;

    fn labels() -> LabelSets {
        LabelSets::new(5, (0..30).map(|i| (0..5).filter(|l| (i * 7 + l * 3) % 4 == 0).collect()).collect()).unwrap()
    }

    /// Each basis kind fits, transforms to `r` columns, decodes its own
    /// training coordinates, and survives the file round trip.
    #[test]
    fn fit_transform_decode_and_round_trip() {
        let y = labels();
        let out = TrainOutputs::Labels(&y);
        for (basis, n) in
            [(BasisChoice::Exact, None), (BasisChoice::Sketch, Some(8)), (BasisChoice::Nystroem, Some(50))]
        {
            let recipe = EmbeddingRecipe { basis, n_components: n, ..Default::default() };
            let e = fit_embedding(&recipe, &out).unwrap();
            let z = e.transform(&out).unwrap();
            assert_eq!(z.width(), e.n_components());
            let d = e.decode(&z, None, CandidateDecoder::new()).unwrap();
            assert_eq!(d.n_rows(), 30);
            let back = Embedding::from_bytes(&e.to_bytes().unwrap()).unwrap();
            assert_eq!(back.id(), e.id());
            assert_eq!(back.recipe(), e.recipe());
            assert_eq!(back.decode(&z, None, CandidateDecoder::new()).unwrap(), d);
            if basis == BasisChoice::Exact {
                // Full rank: every training output decodes to itself (its distinct row).
                let (distinct, of) = y.group_duplicates();
                assert_eq!(distinct.n_rows(), e.n_distinct());
                assert_eq!(d.best(), of);
            }
        }
        let nys = fit_embedding(
            &EmbeddingRecipe { basis: BasisChoice::Nystroem, n_components: Some(50), ..Default::default() },
            &out,
        )
        .unwrap();
        assert!(nys.notes().iter().any(|n| n.contains("anchors capped")), "{:?}", nys.notes());
    }

    /// Outputs of another kind, a file of another kind and a corrupted file
    /// are one clear error each.
    #[test]
    fn wrong_kind_and_bad_files_are_refused() {
        let y = labels();
        let e = fit_embedding(&EmbeddingRecipe::default(), &TrainOutputs::Labels(&y)).unwrap();
        let v = DenseRows::new(Mat::zeros(3, 5)).unwrap();
        let err = e.transform(&TrainOutputs::Vectors(&v)).unwrap_err().to_string();
        assert!(err.contains("outputs are vector, the basis was fitted on labels"), "{err}");
        let mut bytes = e.to_bytes().unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(Embedding::from_bytes(&bytes).unwrap_err().to_string().contains("checksum"));
        assert!(Embedding::from_bytes(b"hello").unwrap_err().to_string().contains("not an okr output-basis"));
        let recipe = EmbeddingRecipe {
            output: OutputRecipe { kind: OutputKind::Labels, kernel: Some(KernelRecipe::named("linear")) },
            ..Default::default()
        };
        assert!(fit_embedding(&recipe, &TrainOutputs::Labels(&y)).is_ok());
        let bad = EmbeddingRecipe { basis: BasisChoice::Sketch, sketch: Some("nonsense".into()), ..Default::default() };
        assert!(fit_embedding(&bad, &TrainOutputs::Labels(&y)).is_err());
    }
}
