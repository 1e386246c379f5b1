//! Predicting with a loaded model on a small made-up input: what the
//! mutation tests and the model-loader fuzz target run after a file loads,
//! so that a file that passes validation but breaks prediction is found.

use faer::{Mat, Par};
use okr_kernels::{CsrRows, Features, GramRows, Kernel, LabelSets, Rows};

use super::format::{HEADER_LEN, seal};
use super::{Model, OutputModel, SavedModel};
use crate::{ScoreModel, SurrogateModel};

/// Runs every prediction path of the model on two rows (one with the first
/// and last feature set, one empty) and two label sets. Errors are fine;
/// a panic is a bug (of validation or of the estimator).
pub fn probe(saved: &SavedModel) {
    let (d, l) = (saved.info.n_features, saved.info.n_labels);
    let ends = |w: usize| if w == 0 { Vec::new() } else { vec![0, w - 1] };
    let x = CsrRows::from_rows(d, vec![ends(d).into_iter().map(|j| (j, 0.5)).collect(), Vec::new()])
        .expect("indices below the width");
    let mut x = Features::Sparse(x);
    if let Some(st) = &saved.info.standardizer
        && let Ok(z) = st.transform_features(&x)
    {
        x = z;
    }
    let y = LabelSets::new(l, vec![ends(l), Vec::new()]).expect("labels below the count");
    let dense = || x.to_dense();
    match &saved.model {
        Model::Iokr(m) => surrogate(m, &x, &y, m.atoms()),
        Model::ReducedRank(m) => surrogate(m, &x, &y, m.distinct_outputs()),
        Model::Kde(m) => surrogate(m, &x, &y, m.distinct_outputs()),
        Model::Sketched(m) => surrogate(m, &x, &y, m.distinct_outputs()),
        Model::Nystroem(m) => surrogate(m, &x, &y, m.distinct_outputs()),
        Model::NystroemReducedRank(m) => surrogate(m, &x, &y, m.distinct_outputs()),
        Model::TraceNorm(m) => {
            surrogate(m, &x, &y, m.distinct_outputs());
            let _ = m.alpha(&x);
        }
        Model::Leml(m) => scores(m, &x),
        Model::BinaryRelevance(m) => scores(m, &x),
        Model::Cplst(m) => scores(m, &x),
        Model::Kae(m) => {
            let _ = m.encode(dense().as_ref());
            let _ = m.reconstruction_error(dense().as_ref());
        }
        Model::K2ae(m) => {
            let _ = m.encode(&x);
            let _ = m.test_distortion(&x);
        }
        Model::SelfHs(m) => {
            let _ = m.predict(dense().as_ref());
        }
        Model::MaskedTraceNorm(m) => {
            let z = m.embed(dense().as_ref());
            assert_eq!(z.nrows(), 2);
            if m.b().nrows() > 0 {
                let _ = m.predict(dense().as_ref(), 0, 0);
            }
        }
        Model::Vectors(m) => outputs(m, &x),
        Model::Graphs(m) => outputs(m, &x),
        Model::Rankings(m) => outputs(m, &x),
        Model::Gram(m) => {
            if let Ok(test) = gram_rows(m.n_train()) {
                surrogate(m.surrogate(), &test, &y, m.candidates());
            }
        }
        Model::GramVectors(m) => gram_outputs(m),
        Model::GramGraphs(m) => gram_outputs(m),
        Model::GramRankings(m) => gram_outputs(m),
        Model::Kpca(m) => {
            let n = m.vectors().nrows();
            let _ = m.transform(Mat::from_fn(2, n, |i, j| ((i + j) % 3) as f64).as_ref());
            let _ = m.train_codes();
        }
    }
}

fn surrogate<X: Rows, M: SurrogateModel<X, LabelSets> + ?Sized>(m: &M, x: &X, y: &LabelSets, outputs: &LabelSets) {
    let Ok(c) = m.coefficients(x) else { return };
    assert_eq!((c.nrows(), c.ncols()), (x.n_rows(), m.n_atoms()), "coefficient shape");
    let candidates = outputs.slice(0..outputs.n_rows().min(8));
    let mut g = Mat::zeros(m.n_atoms(), candidates.n_rows());
    let _ = m.atom_products_into(&candidates, g.as_mut(), Par::Seq);
    let _ = m.output_sq_norms(&candidates);
    let _ = m.atom_gram();
    let _ = m.rkhs_sq_errors_from(c.as_ref(), y);
}

/// Two test rows of a Gram on `n_train` training samples.
fn gram_rows(n_train: usize) -> okr_kernels::Result<GramRows> {
    GramRows::test(Mat::from_fn(2, n_train, |i, j| ((i + j) % 3) as f64 / 3.0), None)
}

/// A model with outputs other than label sets fitted on a Gram.
fn gram_outputs<Y: Rows + 'static, KY: Kernel<Y> + 'static>(model: &super::GramOutputModel<Y, KY>) {
    if let Ok(test) = gram_rows(model.n_train()) {
        outputs(model, &test);
    }
}

/// A model with outputs other than label sets, scored against its first training outputs.
fn outputs<Y, KY, X, KX>(model: &OutputModel<Y, KY, X, KX>, x: &X)
where
    Y: Rows + 'static,
    KY: Kernel<Y> + 'static,
    X: Rows + 'static,
    KX: Kernel<X> + 'static,
{
    let m = model.surrogate();
    let Ok(c) = m.coefficients(x) else { return };
    assert_eq!((c.nrows(), c.ncols()), (x.n_rows(), m.n_atoms()), "coefficient shape");
    let candidates = model.candidates();
    let candidates = candidates.slice(0..candidates.n_rows().min(8));
    let mut g = Mat::zeros(m.n_atoms(), candidates.n_rows());
    let _ = m.atom_products_into(&candidates, g.as_mut(), Par::Seq);
    let _ = m.output_sq_norms(&candidates);
    let _ = m.atom_gram();
    let _ = m.rkhs_sq_errors_from(c.as_ref(), &candidates.slice(0..candidates.n_rows().min(2)));
}

fn scores<M: ScoreModel<CsrRows>>(m: &M, x: &Features) {
    if let Ok(x) = x.to_sparse_rows()
        && let Ok(s) = m.scores(&x)
    {
        assert_eq!((s.nrows(), s.ncols()), (2, m.n_labels()), "score shape");
    }
}

/// The model-loader fuzz target: loads `data` as a model file, then loads
/// its body again under a fresh header (so that mutated bodies reach the
/// decoder and the validation instead of stopping at the checksum), and
/// probes whatever loads.
pub fn fuzz_model_file(data: &[u8]) {
    if let Ok(saved) = SavedModel::from_bytes(data) {
        probe(&saved);
    }
    if data.len() > HEADER_LEN
        && let Ok(saved) = SavedModel::from_bytes(&seal(&data[HEADER_LEN..]))
    {
        probe(&saved);
    }
}
