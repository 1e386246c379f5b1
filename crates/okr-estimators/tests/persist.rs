//! Model files: the golden fixtures (one per `Model` variant) load, re-encode
//! to the same bytes and predict what they predicted when written; single-byte
//! mutations of each fixture either load the same model or are rejected, and
//! nothing panics (also not with the checksum recomputed over a mutated body,
//! which reaches the decoder and the validation).
//!
//! `OKR_BLESS=1 cargo test -p okr-estimators --test persist` rewrites the
//! fixtures; do it only together with a `FORMAT_VERSION` bump.

use std::path::{Path, PathBuf};

use faer::Mat;
use okr_estimators::Fit;
use okr_estimators::kae::{K2ae, Kae, Kpca, LayerKernel};
use okr_estimators::leml::{BinaryRelevance, Cplst, Leml, Loss, Targets};
use okr_estimators::nystroem::Anchors;
use okr_estimators::persist::{GramModel, IndexBase, Model, ModelInfo, OutputModel, SavedModel, VectorModel};
use okr_estimators::trace_norm::SelfHs;
use okr_estimators::trace_norm::masked::{MaskedOptions, MaskedTraceNorm, TaskEntries};
use okr_estimators::{
    Iokr, Kde, Nystroem, NystroemReducedRank, ParamGuard, ReducedRankIokr, ScoreModel, SketchedIokr, SurrogateModel,
    TraceNorm, TraceNormSolver,
};
use okr_kernels::combinators::WeightedSum;
use okr_kernels::{
    CsrRows, DenseRows, Features, Gaussian, GramRows, Graph, Graphs, Kernel, KernelSpec, LabelSets, Linear,
    Precomputed, RankingKernel, Rankings, Rows, Standardizer, Tanimoto, WlSubtree,
};
use rand::{RngExt, SeedableRng};

const N: usize = 24;
const D: usize = 4;
const L: usize = 5;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Deterministic dense inputs `(n, D)` with about half the entries zero.
fn dense(n: usize, seed: usize) -> DenseRows {
    DenseRows::new(Mat::from_fn(n, D, |i, j| {
        let v = ((i * 7 + j * 5 + seed) % 11) as f64 / 11.0 - 0.3;
        if (i + j + seed).is_multiple_of(2) { v } else { 0.0 }
    }))
    .unwrap()
}

fn sparse(n: usize, seed: usize) -> CsrRows {
    CsrRows::from_dense(dense(n, seed).as_mat()).unwrap()
}

fn labels() -> LabelSets {
    LabelSets::new(L, (0..N).map(|i| vec![i % L, (i * 3 + 1) % L]).collect()).unwrap()
}

fn gauss(gamma: f64) -> KernelSpec {
    Gaussian::new(gamma).unwrap().into()
}

fn info(labels_named: bool, index_base: Option<IndexBase>) -> ModelInfo {
    let mut info = ModelInfo::new(D, L);
    info.okr_version = "0.1.0".into();
    if labels_named {
        info.label_names = (0..L).map(|j| format!("label {j}")).collect();
    }
    info.index_base = index_base;
    info.seed = 7;
    info.fit_seconds = 0.25;
    info
}

/// The fixtures: a name and the model with its metadata.
fn build() -> Vec<(&'static str, SavedModel)> {
    let xd = Features::Dense(dense(N, 0));
    let xs = Features::Sparse(sparse(N, 0));
    let y = labels();
    let ky = || KernelSpec::from(Linear);
    let one = Some(IndexBase::OneBased);
    let saved = |m: Model, i: ModelInfo| SavedModel::new(m, i).unwrap();
    let mut out = Vec::new();

    // IOKR on standardized dense inputs.
    let st = Standardizer::fit(&xd).unwrap();
    let xz = st.transform_features(&xd).unwrap();
    let iokr = Iokr::params(gauss(0.5), ky()).lambda(1e-2).fit(&xz, &y).unwrap();
    let mut i = info(true, None);
    i.standardizer = Some(st);
    out.push(("iokr", saved(Model::Iokr(iokr), i)));

    let rr = ReducedRankIokr::params(gauss(0.7), ky()).rank(3).lambda1(1e-2).lambda2(1e-3).fit(&xs, &y).unwrap();
    out.push(("reduced_rank", saved(Model::ReducedRank(rr), info(false, one))));

    let kde = Kde::params(gauss(0.5), gauss(0.3)).rank(2).lambda(1e-2).centered(true).fit(&xd, &y).unwrap();
    out.push(("kde", saved(Model::Kde(kde), info(true, None))));

    let weighted: KernelSpec =
        Gaussian::new(0.4).unwrap().with_feature_weights(vec![1.0, 0.5, 2.0, 1.0]).unwrap().into();
    let sk = SketchedIokr::params(weighted, ky())
        .lambda(1e-2)
        .input_sketch(Some("uniform:10".parse().unwrap()))
        .output_sketch(Some("gaussian:4".parse().unwrap()))
        .seed(3)
        .fit(&xs, &y)
        .unwrap();
    out.push(("sketched", saved(Model::Sketched(sk), info(false, Some(IndexBase::ZeroBased)))));

    let ny = Nystroem::params(gauss(0.5), ky()).lambda(1e-2).anchors(Anchors::Uniform(8)).seed(1).fit(&xd, &y).unwrap();
    out.push(("nystroem", saved(Model::Nystroem(ny), info(false, None))));

    let nrr = NystroemReducedRank::params(gauss(0.5), gauss(0.5))
        .anchors(Anchors::Uniform(10))
        .subset(Anchors::Uniform(16))
        .rank(2)
        .fit(&xs, &y)
        .unwrap();
    out.push(("nystroem_rr", saved(Model::NystroemReducedRank(nrr), info(false, one))));

    let tn = TraceNorm::params(gauss(0.5), ky())
        .rank(3)
        .lambda(1e-2)
        .solver(TraceNormSolver::Als)
        .seed(2)
        .fit(&xd, &y)
        .unwrap();
    out.push(("trace_norm", saved(Model::TraceNorm(tn), info(true, None))));

    let csr = sparse(N, 0);
    let leml = Leml::params().rank(2).lambda(0.1).loss(Loss::Squared).max_iter(3).fit(&csr, Targets::Full(&y)).unwrap();
    out.push(("leml", saved(Model::Leml(leml), info(true, one))));

    let br = BinaryRelevance::params().lambda(0.1).loss(Loss::Logistic).fit(&csr, Targets::Full(&y)).unwrap();
    out.push(("binary_relevance", saved(Model::BinaryRelevance(br), info(false, one))));

    let cplst = Cplst::params().rank(2).center(true).bias(true).fit(&csr, &y).unwrap();
    out.push(("cplst", saved(Model::Cplst(cplst), info(false, one))));

    let kae = Kae::params()
        .hidden_dims(vec![2])
        .kernels(vec![LayerKernel::GaussianMedian])
        .lambdas(vec![1e-3])
        .max_iter(20)
        .seed(4)
        .fit(dense(N, 0).as_mat())
        .unwrap();
    out.push(("kae", saved(Model::Kae(kae), info(false, None))));

    let k2ae = K2ae::params()
        .hidden_dims(vec![2])
        .kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
        .max_iter(10)
        .check()
        .unwrap()
        .fit_k2ae_rows(KernelSpec::from(Tanimoto), &xs)
        .unwrap();
    out.push(("k2ae", saved(Model::K2ae(k2ae), info(false, one))));

    // Ranking baselines: D user features, L tasks.
    let users: Vec<Vec<(usize, f64)>> = (0..N)
        .map(|u| (0..L).filter(|t| (u + t) % 3 != 0).map(|t| (t, ((u * t) % 5) as f64 - 2.0)).collect())
        .collect();
    let entries = TaskEntries::from_users(L, users).unwrap();
    let self_hs = SelfHs::params().lambda(0.5).check().unwrap().fit(dense(N, 0).as_mat(), &entries).unwrap();
    out.push(("self_hs", saved(Model::SelfHs(self_hs), info(false, None))));
    let opts = MaskedOptions { rank: 2, max_iter: 20, ..MaskedOptions::default() };
    let masked = MaskedTraceNorm::fit(&dense(N, 0).as_mat().to_owned(), &entries, &opts, None).unwrap();
    out.push(("masked_trace_norm", saved(Model::MaskedTraceNorm(masked), info(false, None))));

    let gram = Linear.gram(&dense(N, 0));
    let kpca = Kpca::fit(gram.as_ref(), 2).unwrap();
    out.push(("kpca", saved(Model::Kpca(kpca), info(false, None))));

    // Vector outputs (format 5): p = 3 dimensional targets.
    let targets = DenseRows::new(Mat::from_fn(N, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.4)).unwrap();
    let iokr_v = Iokr::params(gauss(0.5), gauss(0.8)).lambda(1e-2).fit(&xs, &targets).unwrap();
    let mut i = ModelInfo::new(D, 3);
    i.okr_version = "0.1.0".into();
    i.label_names = vec!["x".into(), "y".into(), "z".into()];
    out.push(("vectors_iokr", saved(Model::Vectors(VectorModel::Iokr(iokr_v)), i)));

    // Format 6: a combined input kernel (multiple kernel learning) ...
    let combined: KernelSpec =
        WeightedSum::new(vec![0.6, 0.8], vec![gauss(0.5), KernelSpec::from(Linear)]).unwrap().into();
    let iokr_mkl = Iokr::params(combined, ky()).lambda(1e-2).fit(&xd, &y).unwrap();
    out.push(("iokr_mkl", saved(Model::Iokr(iokr_mkl), info(false, None))));
    // ... and models on a precomputed Gram: the inputs are rows of K(train, train).
    let g = GramRows::train(Gaussian::new(0.5).unwrap().gram(&dense(N, 0))).unwrap();
    let gram_info = || {
        let mut i = ModelInfo::new(N, L);
        i.okr_version = "0.1.0".into();
        i
    };
    let gram_iokr = Iokr::params(Precomputed, ky()).lambda(1e-2).fit(&g, &y).unwrap();
    out.push(("gram_iokr", saved(Model::Gram(GramModel::Iokr(gram_iokr)), gram_info())));
    let gram_sk = SketchedIokr::params(Precomputed, gauss(0.5))
        .lambda(1e-2)
        .input_sketch(Some("uniform:10".parse().unwrap()))
        .output_sketch(Some("gaussian:4".parse().unwrap()))
        .seed(3)
        .fit(&g, &y)
        .unwrap();
    out.push(("gram_sketched", saved(Model::Gram(GramModel::Sketched(gram_sk)), gram_info())));

    // Format 7: graph outputs (WL kernel) and ranking outputs (Kendall, Mallows).
    let out_info = |labels: usize| {
        let mut i = ModelInfo::new(D, labels);
        i.okr_version = "0.1.0".into();
        i
    };
    let wl = WlSubtree::new(2).normalized(true);
    let graphs_iokr = Iokr::params(gauss(0.5), wl).lambda(1e-2).fit(&xd, &graphs()).unwrap();
    out.push(("graphs_iokr", saved(Model::Graphs(OutputModel::Iokr(graphs_iokr)), out_info(0))));
    let kendall = Iokr::params(gauss(0.5), RankingKernel::Kendall).lambda(1e-2).fit(&xs, &rankings()).unwrap();
    out.push(("rankings_iokr", saved(Model::Rankings(OutputModel::Iokr(kendall)), out_info(4))));
    let mallows = Nystroem::params(gauss(0.5), RankingKernel::mallows(0.4).unwrap())
        .lambda(1e-2)
        .anchors(Anchors::Uniform(8))
        .seed(1)
        .fit(&xd, &rankings())
        .unwrap();
    out.push(("rankings_nystroem", saved(Model::Rankings(OutputModel::Nystroem(mallows)), out_info(4))));

    // Format 9: every estimator and output kind on a precomputed Gram.
    let gram_kde = Kde::params(Precomputed, ky()).rank(3).lambda(1e-2).fit(&g, &y).unwrap();
    out.push(("gram_kde", saved(Model::Gram(GramModel::Kde(gram_kde)), gram_info())));
    let gram_vectors = Iokr::params(Precomputed, gauss(0.8)).lambda(1e-2).fit(&g, &targets).unwrap();
    let mut i = gram_info();
    i.n_labels = 3;
    out.push(("gram_vectors_iokr", saved(Model::GramVectors(OutputModel::Iokr(gram_vectors)), i)));
    let wl = WlSubtree::new(2).normalized(true);
    let gram_graphs = ReducedRankIokr::params(Precomputed, wl).rank(3).lambda1(1e-2).lambda2(1e-2).fit(&g, &graphs());
    let mut i = gram_info();
    i.n_labels = 0;
    out.push(("gram_graphs_rr", saved(Model::GramGraphs(OutputModel::ReducedRank(gram_graphs.unwrap())), i)));
    let gram_rankings = TraceNorm::params(Precomputed, RankingKernel::Kendall)
        .rank(3)
        .lambda(1e-2)
        .solver(TraceNormSolver::Als)
        .seed(2)
        .fit(&g, &rankings())
        .unwrap();
    let mut i = gram_info();
    i.n_labels = 4;
    out.push(("gram_rankings_tn", saved(Model::GramRankings(OutputModel::TraceNorm(gram_rankings)), i)));
    out
}

/// `N` small labelled graphs: paths of 2 to 5 nodes, every third one closed into a cycle.
fn graphs() -> Graphs {
    Graphs::new(
        (0..N)
            .map(|i| {
                let n = 2 + i % 4;
                let mut edges: Vec<(usize, usize)> = (1..n).map(|v| (v - 1, v)).collect();
                if i % 3 == 0 {
                    edges.push((0, n - 1));
                }
                Graph::new((0..n).map(|v| ((i * v + v) % 3) as u32).collect(), &edges).unwrap()
            })
            .collect(),
    )
}

/// `N` rankings of 4 items (repeating, so that they group into fewer atoms).
fn rankings() -> Rankings {
    let perms = [[0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [0, 3, 1, 2]];
    Rankings::new(4, (0..N).map(|i| perms[(i * 7) % 5].to_vec()).collect()).unwrap()
}

/// What a model predicts on fixed test inputs, flattened.
fn predictions(saved: &SavedModel) -> Vec<f64> {
    let mut x = Features::Dense(dense(5, 3));
    if let Some(st) = &saved.info.standardizer {
        x = st.transform_features(&x).unwrap();
    }
    let flat = |m: Mat<f64>| {
        (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| (i, j))).map(|(i, j)| m[(i, j)]).collect::<Vec<_>>()
    };
    fn surrogate<X: Rows>(m: &(impl SurrogateModel<X, LabelSets> + ?Sized), x: &X, outputs: &LabelSets) -> Mat<f64> {
        let c = m.coefficients(x).unwrap();
        let cand = outputs.slice(0..outputs.n_rows().min(5));
        let mut g = Mat::zeros(m.n_atoms(), cand.n_rows());
        m.atom_products_into(&cand, g.as_mut(), faer::Par::Seq).unwrap();
        c * g
    }
    let csr = || x.to_sparse_rows().unwrap();
    let d = || x.to_dense();
    flat(match &saved.model {
        Model::Iokr(m) => surrogate(m, &x, m.atoms()),
        Model::ReducedRank(m) => surrogate(m, &x, m.distinct_outputs()),
        Model::Kde(m) => surrogate(m, &x, m.distinct_outputs()),
        Model::Sketched(m) => surrogate(m, &x, m.distinct_outputs()),
        Model::Nystroem(m) => surrogate(m, &x, m.distinct_outputs()),
        Model::NystroemReducedRank(m) => surrogate(m, &x, m.distinct_outputs()),
        Model::TraceNorm(m) => surrogate(m, &x, m.distinct_outputs()),
        Model::Leml(m) => m.scores(&csr()).unwrap(),
        Model::BinaryRelevance(m) => m.scores(&csr()).unwrap(),
        Model::Cplst(m) => m.scores(&csr()).unwrap(),
        Model::Kae(m) => m.encode(d().as_ref()).unwrap(),
        Model::K2ae(m) => m.encode(&x).unwrap(),
        Model::SelfHs(m) => m.predict(d().as_ref()).unwrap(),
        Model::MaskedTraceNorm(m) => m.embed(d().as_ref()),
        Model::Kpca(m) => m.transform(Linear.gram_block(&dense(5, 3), &dense(N, 0)).as_ref()).unwrap(),
        Model::Gram(m) => {
            let test =
                GramRows::test(Gaussian::new(0.5).unwrap().gram_block(&dense(5, 3), &dense(N, 0)), None).unwrap();
            surrogate(m.surrogate(), &test, m.candidates())
        }
        Model::Vectors(m) => outputs(m, &x),
        Model::Graphs(m) => outputs(m, &x),
        Model::Rankings(m) => outputs(m, &x),
        Model::GramVectors(m) => outputs(m, &gram_test()),
        Model::GramGraphs(m) => outputs(m, &gram_test()),
        Model::GramRankings(m) => outputs(m, &gram_test()),
        other => panic!("no predictions for {}", other.name()),
    })
}

/// The fixed test rows of the Gram models: `K(test, train)` of the Gaussian kernel.
fn gram_test() -> GramRows {
    GramRows::test(Gaussian::new(0.5).unwrap().gram_block(&dense(5, 3), &dense(N, 0)), None).unwrap()
}

/// Coefficients times atom products on the first (at most 5) training outputs.
fn outputs<Y, KY, X, KX>(m: &OutputModel<Y, KY, X, KX>, x: &X) -> Mat<f64>
where
    Y: Rows + 'static,
    KY: Kernel<Y> + 'static,
    X: Rows + 'static,
    KX: Kernel<X> + 'static,
{
    let s = m.surrogate();
    let c = s.coefficients(x).unwrap();
    let cand = m.candidates().slice(0..m.candidates().n_rows().min(5));
    let mut g = Mat::zeros(s.n_atoms(), cand.n_rows());
    s.atom_products_into(&cand, g.as_mut(), faer::Par::Seq).unwrap();
    c * g
}

fn bless() {
    std::fs::create_dir_all(fixtures()).unwrap();
    for (name, saved) in build() {
        let dir = fixtures();
        std::fs::write(dir.join(format!("{name}.okrmodel")), saved.to_bytes().unwrap()).unwrap();
        let json = serde_json::to_string_pretty(&predictions(&saved)).unwrap();
        std::fs::write(dir.join(format!("{name}.predictions.json")), json + "\n").unwrap();
    }
}

fn fixture_names() -> Vec<&'static str> {
    build().into_iter().map(|(n, _)| n).collect()
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(format!("{name}.okrmodel")))
        .unwrap_or_else(|e| panic!("fixture {name}: {e} (write the fixtures with OKR_BLESS=1)"))
}

/// Every variant has a fixture, and each loads, re-encodes to its bytes and
/// predicts what it predicted when written. A change of a persisted type
/// without a `FORMAT_VERSION` bump fails here.
#[test]
fn golden_model_files_load_and_predict_as_written() {
    if std::env::var_os("OKR_BLESS").is_some() {
        bless();
    }
    let names = fixture_names();
    let mut variants: Vec<String> = Vec::new();
    for name in &names {
        let bytes = read(name);
        let saved = SavedModel::from_bytes(&bytes).unwrap_or_else(|e| {
            panic!("fixture {name} no longer loads ({e}): a persisted type changed; bump FORMAT_VERSION and re-bless")
        });
        assert_eq!(
            saved.to_bytes().unwrap(),
            bytes,
            "fixture {name} re-encodes differently: a persisted type changed; bump FORMAT_VERSION and re-bless"
        );
        let text = std::fs::read_to_string(fixtures().join(format!("{name}.predictions.json"))).unwrap();
        let want: Vec<f64> = serde_json::from_str(&text).unwrap();
        let got = predictions(&saved);
        assert_eq!(got.len(), want.len(), "{name}");
        let scale = 1.0 + want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-9 * scale, "{name}: predicts {g}, the fixture {w}");
        }
        variants.push(saved.model.name());
    }
    // One fixture per variant (22, with `Model::Gram` three times: IOKR,
    // sketched and KDE, and `Model::Rankings` twice: Kendall and Mallows)
    // and one for the weighted-sum input kernel.
    let n_fixtures = 26;
    assert_eq!(names.len(), n_fixtures, "a Model variant without a fixture");
    eprintln!("loaded {} fixtures: {}", variants.len(), variants.join(", "));
}

/// Formats 5, 6 and 7 only appended variants and 8 appended the recipe, so
/// the version-7 golden files (kept under `fixtures/v7/`, written before the
/// recipe) load, with no recipe, and predict what they predicted; the same
/// bodies under versions 4 to 6 load too; a version-3 file asks for a refit.
#[test]
fn earlier_format_files_still_load() {
    let v7 = fixtures().join("v7");
    // The variants of formats 8 and 9 have no version-7 file.
    for name in fixture_names().into_iter().filter(|n| v7.join(format!("{n}.okrmodel")).exists()) {
        let bytes = std::fs::read(v7.join(format!("{name}.okrmodel"))).unwrap();
        assert_eq!(bytes[8..12], 7u32.to_le_bytes(), "{name}");
        for version in [4u32, 5, 6, 7] {
            let mut v = bytes.clone();
            v[8..12].copy_from_slice(&version.to_le_bytes());
            let saved = SavedModel::from_bytes(&v).unwrap_or_else(|e| panic!("{name} at format {version}: {e}"));
            assert!(saved.recipe().is_none(), "{name}");
            let text = std::fs::read_to_string(v7.join(format!("{name}.predictions.json"))).unwrap();
            let want: Vec<f64> = serde_json::from_str(&text).unwrap();
            let got = predictions(&saved);
            let scale = 1.0 + want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-9 * scale), "{name} at {version}");
            // Re-encoded at the current format: the same body and a recipe of None.
            assert_eq!(saved.to_bytes().unwrap()[HEADER..], resealed(&bytes)[HEADER..], "{name}");
        }
    }
    let mut v3 = read("iokr");
    v3[8..12].copy_from_slice(&3u32.to_le_bytes());
    let err = SavedModel::from_bytes(&v3).unwrap_err().to_string();
    assert!(err.contains("older okr (format 3") && err.contains("refit"), "{err}");
}

/// Format 9 only appended variants, so the version-8 golden files (kept
/// under `fixtures/v8/`) load and predict what they predicted, and re-encode
/// to the same body.
#[test]
fn format_8_files_still_load() {
    let v8 = fixtures().join("v8");
    let mut n = 0;
    for name in fixture_names().into_iter().filter(|n| v8.join(format!("{n}.okrmodel")).exists()) {
        let bytes = std::fs::read(v8.join(format!("{name}.okrmodel"))).unwrap();
        assert_eq!(bytes[8..12], 8u32.to_le_bytes(), "{name}");
        let saved = SavedModel::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name} at format 8: {e}"));
        let text = std::fs::read_to_string(v8.join(format!("{name}.predictions.json"))).unwrap();
        let want: Vec<f64> = serde_json::from_str(&text).unwrap();
        let got = predictions(&saved);
        let scale = 1.0 + want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-9 * scale), "{name}");
        assert_eq!(saved.to_bytes().unwrap()[12..], bytes[12..], "{name}");
        n += 1;
    }
    assert_eq!(n, 22);
}

/// Bytes of the header: magic, version, length, checksum.
const HEADER: usize = 24;

/// A version-7 file as the current format writes the same model: the body
/// followed by an absent recipe (one zero byte), with its length and checksum.
fn resealed(v7: &[u8]) -> Vec<u8> {
    let mut body = v7[HEADER..].to_vec();
    body.push(0);
    let mut out = v7[..8].to_vec();
    out.extend_from_slice(&okr_estimators::persist::FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// A stored recipe survives the round trip; a damaged one is refused.
#[test]
fn the_recipe_round_trips_and_a_cut_one_is_refused() {
    let (_, saved) = build().into_iter().next().unwrap();
    let with = saved.with_recipe(Some(r#"{"estimator":{"name":"iokr","lambda":0.1}}"#.into()));
    let bytes = with.to_bytes().unwrap();
    let back = SavedModel::from_bytes(&bytes).unwrap();
    assert_eq!(back.recipe(), with.recipe());
    assert_eq!(back.describe()["recipe"]["estimator"]["lambda"], 0.1);
    // The recipe's length byte cut off: the body no longer decodes.
    let mut body = bytes[HEADER..bytes.len() - 1].to_vec();
    body.truncate(body.len() - 40);
    let mut cut = bytes[..8].to_vec();
    cut.extend_from_slice(&okr_estimators::persist::FORMAT_VERSION.to_le_bytes());
    cut.extend_from_slice(&(body.len() as u64).to_le_bytes());
    cut.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    cut.extend_from_slice(&body);
    let err = SavedModel::from_bytes(&cut).unwrap_err().to_string();
    assert!(err.starts_with("corrupt model file"), "{err}");
}

/// A fresh fit saves and loads back to the same bytes, with the metadata.
#[test]
fn save_and_load_round_trip_through_a_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, saved) in build() {
        let path = dir.path().join(format!("{name}.okrmodel"));
        saved.save(&path).unwrap();
        let back = SavedModel::load(&path).unwrap();
        assert_eq!(back.to_bytes().unwrap(), saved.to_bytes().unwrap(), "{name}");
        assert_eq!(back.info, saved.info, "{name}");
        assert_eq!(back.model.name(), saved.model.name());
    }
    let err = SavedModel::load(&dir.path().join("missing")).unwrap_err().to_string();
    assert!(err.starts_with("cannot read ") && err.contains("missing"), "{err}");
    let err = SavedModel::load(dir.path()).unwrap_err().to_string();
    assert!(err.starts_with("cannot read "), "{err}");
}

/// A device or a file that is not a model is refused from its first bytes
/// (reading all of `/dev/zero` would never end).
#[cfg(unix)]
#[test]
fn load_refuses_an_endless_device_from_its_header() {
    let err = SavedModel::load(Path::new("/dev/zero")).unwrap_err();
    assert!(matches!(err, okr_estimators::persist::Error::NotAModel), "{err}");
}

/// A regular file whose length disagrees with its header is refused as
/// truncated or extended.
#[test]
fn load_names_a_truncated_or_extended_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_, saved) = build().into_iter().next().unwrap();
    let bytes = saved.to_bytes().unwrap();
    let path = dir.path().join("m.okrmodel");
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let err = SavedModel::load(&path).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"extra");
    std::fs::write(&path, &longer).unwrap();
    let err = SavedModel::load(&path).unwrap_err().to_string();
    assert!(err.contains("5 trailing bytes"), "{err}");
}

/// Metadata that contradicts the model is refused when saving.
#[test]
fn inconsistent_metadata_is_refused() {
    let (_, saved) = build().swap_remove(0);
    let mut wrong_width = saved.info.clone();
    wrong_width.n_features = D + 1;
    wrong_width.standardizer = None;
    let err = SavedModel::new(saved.model.clone(), wrong_width).unwrap_err().to_string();
    assert!(err.contains("reads 4 features"), "{err}");
    let mut names = saved.info.clone();
    names.label_names.pop();
    let err = SavedModel::new(saved.model.clone(), names).unwrap_err().to_string();
    assert!(err.contains("4 label names for 5 labels"), "{err}");
}

/// Mutations tried per fixture (a seeded sample of the single-byte ones).
const MUTATIONS: usize = 2500;

/// Every sampled single-byte mutation of every fixture either loads the same
/// model or is rejected with a one-line "corrupt model file" (or header)
/// error; with the checksum recomputed over the mutated body, whatever loads
/// predicts without a panic.
#[test]
fn single_byte_mutations_are_rejected_or_harmless() {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20_000);
    let (mut rejected, mut resealed_loads, mut panics, mut silent) = (0usize, 0usize, Vec::new(), Vec::new());
    for name in fixture_names() {
        let bytes = read(name);
        for _ in 0..MUTATIONS {
            let at = rng.random_range(0..bytes.len());
            let mut m = bytes.clone();
            m[at] ^= rng.random_range(1..=255u8);
            match std::panic::catch_unwind(|| SavedModel::from_bytes(&m).map(|s| s.to_bytes().unwrap())) {
                Ok(Ok(re)) if re == bytes => {}
                Ok(Ok(_)) => silent.push(format!("{name}: byte {at}")),
                Ok(Err(e)) if e.to_string().contains('\n') => silent.push(format!("{name}: two-line error {e}")),
                Ok(Err(_)) => rejected += 1,
                Err(_) => panics.push(format!("{name}: byte {at} (load)")),
            }
            // The same mutation with a valid checksum: decoding and validation must hold.
            let header = 24;
            if at >= header {
                let body = &m[header..];
                let mut sealed = bytes[..header].to_vec();
                sealed[20..24].copy_from_slice(&crc32fast::hash(body).to_le_bytes());
                sealed.extend_from_slice(body);
                if SavedModel::from_bytes(&sealed).is_ok() {
                    resealed_loads += 1;
                }
                if std::panic::catch_unwind(|| okr_estimators::persist::fuzz_model_file(&sealed)).is_err() {
                    panics.push(format!("{name}: byte {at} (resealed body)"));
                }
            }
        }
    }
    std::panic::set_hook(quiet);
    eprintln!(
        "{} mutations: {rejected} rejected, {resealed_loads} resealed bodies loaded and predicted, {} panics",
        MUTATIONS * fixture_names().len(),
        panics.len()
    );
    assert!(panics.is_empty(), "{panics:?}");
    assert!(silent.is_empty(), "mutated files that load another model: {silent:?}");
}

/// Found inputs of `cargo xtask fuzz model` replay without a panic.
#[test]
fn fuzz_regressions_replay_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions/model");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| okr_estimators::persist::fuzz_model_file(&bytes));
        assert!(outcome.is_ok(), "{} panics again", path.display());
    }
}
