"""okr.OutputEmbedding and okr.SurrogateRegressor: oracles against IOKR and
ISOKR, any scikit-learn regressor as a structured predictor, scikit-learn's
checks, pickling and clear errors."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.multioutput import MultiOutputRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

import okr


def _data(seed=0, n=80, d=6, l=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, l)) + 0.3 * rng.normal(size=(n, l)) > 0.4).astype(int)
    return X, Y


def _assert_same_topk(a, b, tol=1e-8):
    (oa, sa), (ob, sb) = a, b
    np.testing.assert_array_equal(oa, ob)
    np.testing.assert_allclose(sa, sb, rtol=tol, atol=tol)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_ridge_on_the_exact_basis_is_iokr(seed):
    """KernelRidge(rbf, alpha = n lam) on the exact basis at full rank gives
    IOKR's scores to 1e-8 and its decisions, against the training outputs
    and against a pool."""
    X, Y = _data(seed)
    Xtr, Ytr, Xte = X[:60], Y[:60], X[60:]
    lam, gamma, out_gamma = 1e-2, 0.2, 0.5
    iokr = okr.IOKR(lam=lam, gamma=gamma, output_gamma=out_gamma).fit(Xtr, Ytr)
    basis = okr.OutputEmbedding("exact", output_gamma=out_gamma)
    sr = okr.SurrogateRegressor(KernelRidge(kernel="rbf", gamma=gamma, alpha=60 * lam), basis).fit(Xtr, Ytr)
    _assert_same_topk(sr.predict_topk(Xte, k=4, return_scores=True), iokr.predict_topk(Xte, k=4, return_scores=True))
    np.testing.assert_array_equal(sr.predict(Xte), iokr.predict(Xte))
    pool = _data(seed + 10, n=30)[1]
    a = sr.rank_candidates(Xte, pool, k=5)
    b = iokr.rank_candidates(Xte, pool, k=5)
    for q in range(len(a)):
        np.testing.assert_array_equal(a.indices[q], b.indices[q])
        np.testing.assert_allclose(a.scores[q], b.scores[q], rtol=1e-8, atol=1e-8)
    assert sr.score(Xte, Y[60:]) == pytest.approx(iokr.score(Xte, Y[60:]), abs=1e-12)


def test_kernel_ridge_on_a_sketched_basis_is_isokr():
    """The same random_state gives ISOKR's output sketch; KernelRidge on that
    basis gives ISOKR's scores and decisions."""
    X, Y = _data(3, n=90)
    Y = Y + np.linspace(0.1, 0.5, Y.shape[1])  # vector outputs: a full-rank Gaussian Gram
    Xtr, Ytr, Xte = X[:70], Y[:70], X[70:]
    lam, gamma, out_gamma = 1e-2, 0.2, 0.5
    isokr = okr.ISOKR(output_sketch="gaussian:12", lam=lam, gamma=gamma, output_gamma=out_gamma, random_state=7)
    isokr.fit(Xtr, Ytr)
    basis = okr.OutputEmbedding("sketch", sketch="gaussian:12", output_gamma=out_gamma, random_state=7)
    sr = okr.SurrogateRegressor(KernelRidge(kernel="rbf", gamma=gamma, alpha=70 * lam), basis).fit(Xtr, Ytr)
    assert sr.output_basis_.n_components_ == 12
    _assert_same_topk(sr.predict_topk(Xte, k=3, return_scores=True), isokr.predict_topk(Xte, k=3, return_scores=True))


@pytest.mark.parametrize(
    "regressor",
    [
        Ridge(alpha=1.0),
        KernelRidge(kernel="rbf", alpha=0.1),
        MLPRegressor(hidden_layer_sizes=(16,), max_iter=300, random_state=0),
        MultiOutputRegressor(HistGradientBoostingRegressor(max_iter=20, random_state=0)),
    ],
    ids=["ridge", "kernel-ridge", "mlp", "hist-gradient-boosting"],
)
@pytest.mark.parametrize("basis", ["exact", "sketch", "nystroem"])
def test_any_regressor_is_a_structured_predictor(regressor, basis):
    """Predictions are training outputs, top-k scores are sorted and agree
    with the first choice, and the F1 beats predicting nothing."""
    X, Y = _data(4, n=100)
    emb = okr.OutputEmbedding(basis, n_components=None if basis == "exact" else 20, random_state=0)
    sr = okr.SurrogateRegressor(regressor, emb).fit(X[:80], Y[:80])
    pred = sr.predict(X[80:])
    assert pred.shape == (20, 5) and set(np.unique(pred)) <= {0, 1}
    train_rows = {tuple(r) for r in Y[:80]}
    assert all(tuple(r) in train_rows for r in pred)
    top, scores = sr.predict_topk(X[80:], k=3, return_scores=True)
    np.testing.assert_array_equal(top[:, 0], pred)
    assert np.all(np.diff(scores, axis=1) >= 0)
    assert sr.score(X[80:], Y[80:]) > 0.2
    back = pickle.loads(pickle.dumps(sr))
    np.testing.assert_array_equal(back.predict(X[80:]), pred)


def test_class_labels_and_vectors():
    X, Y = _data(5, n=90)
    classes = np.array(["a", "b", "c"])[Y[:, :3].sum(axis=1) % 3]
    sr = okr.SurrogateRegressor(Ridge(alpha=0.1)).fit(X, classes)
    assert set(sr.predict(X)) <= {"a", "b", "c"}
    V = X[:, :2] @ np.array([[1.0, 0.5, 0.2], [0.3, -1.0, 2.0]])
    sr = okr.SurrogateRegressor(KernelRidge(kernel="rbf", alpha=1e-3), okr.OutputEmbedding("nystroem", n_components=30))
    sr.fit(X, V)
    assert sr.predict(X).shape == (90, 3)
    assert sr.score(X, V) > 0.5


def test_output_embedding_transform():
    """Exact coordinates reproduce the output Gram; a sparse indicator gives
    the dense one's coordinates; the transform pickles."""
    _, Y = _data(6)
    emb = okr.OutputEmbedding(output_kernel="linear").fit(Y)
    Z = emb.transform(Y)
    np.testing.assert_allclose(Z @ Z.T, Y @ Y.T, atol=1e-9)
    np.testing.assert_allclose(okr.OutputEmbedding(output_kernel="linear").fit_transform(sp.csr_matrix(Y)), Z, atol=1e-12)
    back = pickle.loads(pickle.dumps(emb))
    np.testing.assert_array_equal(back.transform(Y), Z)
    assert emb.get_feature_names_out().shape == (emb.n_components_,)


def test_bad_input_is_a_clear_error(tmp_path):
    X, Y = _data(7)
    sr = okr.SurrogateRegressor(Ridge()).fit(X, Y)
    with pytest.raises(ValueError, match="coordinate columns vs basis components"):
        sr.model_.decode(np.zeros((2, sr.output_basis_.n_components_ + 1)))
    with pytest.raises(ValueError, match="non-finite"):
        sr.model_.decode(np.full((2, sr.output_basis_.n_components_), np.nan))
    with pytest.raises(ValueError, match="basis"):
        okr.OutputEmbedding("pca").fit(Y)
    with pytest.raises(ValueError, match="n_components"):
        okr.OutputEmbedding("sketch", n_components=0).fit(Y)
    emb = okr.OutputEmbedding().fit(Y)
    with pytest.raises(ValueError, match="0/1"):
        emb.transform(Y * 2.5)
    path = tmp_path / "basis.okrb"
    emb.save(path)
    assert okr._okr.Embedding.load(str(path)).id == emb.embedding_.id
    (tmp_path / "junk").write_bytes(b"not a basis")
    with pytest.raises(ValueError, match="not an okr output-basis file"):
        okr._okr.Embedding.load(str(tmp_path / "junk"))


@parametrize_with_checks(
    [
        okr.OutputEmbedding(),
        okr.OutputEmbedding("nystroem", n_components=10, random_state=0),
        okr.SurrogateRegressor(Ridge()),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
