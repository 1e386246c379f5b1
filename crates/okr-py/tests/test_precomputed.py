"""``kernel="precomputed"`` with scikit-learn's convention: ``fit(K_train,
Y)``, ``predict(K_test_train)``, and the pairwise tag, so that
cross-validation slices the Gram by rows and columns. The oracle: the same
estimator with ``kernel="gaussian"`` on the features the Gram came from."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, GroupKFold

import okr
from test_recipes import _data

GAMMA = 0.15


@pytest.mark.parametrize(
    "make",
    [
        lambda kernel, **k: okr.IOKR(kernel=kernel, lam=1e-3, **k),
        lambda kernel, **k: okr.ReducedRankIOKR(kernel=kernel, lam=1e-3, rank=4, **k),
        lambda kernel, **k: okr.NystroemKRR(kernel=kernel, lam=1e-3, n_components=20, random_state=0, **k),
        lambda kernel, **k: okr.SIOKR(kernel=kernel, lam=1e-3, input_sketch="uniform:25", random_state=0, **k),
        lambda kernel, **k: okr.KDE(kernel=kernel, lam=1e-3, rank=3, **k),
        lambda kernel, **k: okr.NystroemReducedRankIOKR(
            kernel=kernel, lam=1e-3, rank=3, n_components=20, subset_size=40, random_state=0, **k
        ),
        lambda kernel, **k: okr.TraceNormSurrogate(kernel=kernel, lam=1e-3, rank=3, solver="als", random_state=0, **k),
    ],
    ids=["iokr", "reduced-rank", "nystroem", "siokr-subsample", "kde", "nystroem-reduced-rank", "trace-norm"],
)
def test_a_precomputed_gram_fits_the_same_model_as_its_features(make):
    X, Y = _data(50, 7)
    Xt, _ = _data(12, 8)
    feat = make("gaussian", gamma=GAMMA).fit(X, Y)
    gram = make("precomputed").fit(rbf_kernel(X, gamma=GAMMA), Y)
    Kt = rbf_kernel(Xt, X, gamma=GAMMA)
    a, b = gram.decision_function(Kt), feat.decision_function(Xt)
    assert np.max(np.abs(a - b)) <= 1e-10 * (1 + np.max(np.abs(b)))
    np.testing.assert_array_equal(gram.predict(Kt), feat.predict(Xt))
    np.testing.assert_array_equal(gram.predict_topk(Kt, k=3), feat.predict_topk(Xt, k=3))
    assert gram.__sklearn_tags__().input_tags.pairwise
    assert not feat.__sklearn_tags__().input_tags.pairwise


def test_grid_search_with_grouped_folds_slices_the_gram():
    X, Y = _data(60, 9)
    groups = np.arange(60) // 3
    grid = {"lam": [1e-4, 1e-2, 1e-1]}
    cv = GroupKFold(n_splits=3)
    feat = GridSearchCV(okr.IOKR(gamma=GAMMA), grid, cv=cv).fit(X, Y, groups=groups)
    gram = GridSearchCV(okr.IOKR(kernel="precomputed"), grid, cv=cv).fit(rbf_kernel(X, gamma=GAMMA), Y, groups=groups)
    np.testing.assert_allclose(gram.cv_results_["mean_test_score"], feat.cv_results_["mean_test_score"], atol=1e-12)
    assert gram.best_params_ == feat.best_params_


def test_precomputed_errors_are_okrs_messages():
    X, Y = _data(30, 10)
    K = rbf_kernel(X, gamma=GAMMA)
    bad = K.copy()
    bad[0, 1] += 0.5
    with pytest.raises(ValueError, match="symmetric"):
        okr.IOKR(kernel="precomputed").fit(bad, Y)
    with pytest.raises(ValueError, match="columns of the training Gram"):
        okr.IOKR(kernel="precomputed").fit(K[:, :20], Y)
    model = okr.IOKR(kernel="precomputed", lam=1e-3).fit(K, Y)
    with pytest.raises(ValueError, match="30 features"):
        model.predict(K[:5, :20])


@pytest.mark.parametrize(
    "make",
    [
        lambda kernel, **k: okr.IOKR(kernel=kernel, lam=1e-3, **k),
        lambda kernel, **k: okr.KDE(kernel=kernel, lam=1e-3, rank=2, **k),
        lambda kernel, **k: okr.ISOKR(kernel=kernel, lam=1e-3, output_sketch="gaussian:8", random_state=0, **k),
    ],
    ids=["iokr", "kde", "isokr"],
)
@pytest.mark.parametrize("outputs", ["vectors", "fingerprints"])
def test_vector_and_fingerprint_outputs_on_a_gram_equal_the_features(make, outputs):
    X, Y = _data(50, 11)
    Xt, _ = _data(12, 12)
    if outputs == "vectors":
        Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * 0.2, np.cos(X[:, 3])])
        extra = {"output_gamma": 0.5}
    else:
        extra = {"output_kernel": "tanimoto"}
    feat = make("gaussian", gamma=GAMMA, **extra).fit(X, Y)
    gram = make("precomputed", **extra).fit(rbf_kernel(X, gamma=GAMMA), Y)
    Kt = rbf_kernel(Xt, X, gamma=GAMMA)
    a, b = gram.decision_function(Kt), feat.decision_function(Xt)
    assert np.max(np.abs(a - b)) <= 1e-10 * (1 + np.max(np.abs(b)))
    np.testing.assert_array_equal(gram.predict(Kt), feat.predict(Xt))
    np.testing.assert_array_equal(gram.predict_topk(Kt, k=3), feat.predict_topk(Xt, k=3))



def test_search_on_a_gram_scores_the_grid_of_the_features_at_its_width():
    X, Y = _data(45, 14)
    groups = np.arange(45) // 3
    lambdas = [1e-4, 1e-2, 1e-1]
    feat = okr.SearchCV(okr.IOKR(), cv=3, lambdas=lambdas, widths=[0.7]).fit(X, Y, groups=groups)
    gamma = float(feat.cv_results_["param_gamma"][0])
    K = rbf_kernel(X, gamma=gamma)
    gram = okr.SearchCV(okr.IOKR(kernel="precomputed"), cv=3, lambdas=lambdas).fit(K, Y, groups=groups)
    np.testing.assert_allclose(gram.cv_results_["mean_test_score"], feat.cv_results_["mean_test_score"], atol=1e-10)
    assert gram.best_params_["lam"] == feat.best_params_["lam"]
    Xt, _ = _data(8, 15)
    np.testing.assert_array_equal(gram.predict(rbf_kernel(Xt, X, gamma=gamma)), feat.predict(Xt))
