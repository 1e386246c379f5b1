"""``okr.CombinedKernel``: several input kernels combined with uniform or
ALIGNF weights, as ``okr fit --input-kernels ... --mkl ...``. The same
recipe, weights and predictions as the CLI's fit of the same rows; ALIGNF
weights equal a brute-force solution of the alignment problem; the kernel
works inside pipelines and ``GridSearchCV`` with ``GroupKFold``."""

import itertools
import json
import pickle

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import okr
from test_recipes import _csv, _data, _run

KERNELS = ["gaussian", "linear", "laplacian:0.2"]


def _fit_both(tmp_path, weighting, est_cls=okr.IOKR, flags=(), **params):
    X, Y = _data(50, 7)
    est = est_cls(kernel=okr.CombinedKernel(KERNELS, weighting=weighting), lam=1e-2, **params).fit(X, Y)
    train = _csv(tmp_path / "train.csv", X, Y)
    model = tmp_path / "m.okr"
    _run("fit", "--train", train, "--label-count", 3, "--no-standardize", "--lambda", 1e-2,
         "--input-kernels", ",".join(KERNELS), "--mkl", weighting, *flags, "-m", model)
    return X, Y, est, model


@pytest.mark.parametrize("weighting", ["uniform", "alignf"])
def test_combined_kernel_equals_okr_fit_input_kernels(tmp_path, weighting):
    X, Y, est, model = _fit_both(tmp_path, weighting)
    cli = json.loads(_run("info", "--json", model))["recipe"]
    py = json.loads(est.model_.recipe)
    assert cli == py
    assert py["input"]["kind"] == "combined" and py["input"]["mkl"] == weighting
    np.testing.assert_allclose(est.kernel_weights_, cli["input"]["weights"], rtol=0, atol=1e-10)
    if weighting == "uniform":
        np.testing.assert_allclose(est.kernel_weights_, [1 / 3] * 3, rtol=0, atol=1e-15)
    # The CLI's model, opened in Python, predicts what the Python fit predicts.
    loaded = okr.load(model)
    np.testing.assert_allclose(loaded.kernel_weights_, est.kernel_weights_, rtol=0, atol=1e-10)
    Xt, _ = _data(20, 8)
    (_, s_py), (_, s_cli) = (m.predict_topk(Xt, k=3, return_scores=True) for m in (est, loaded))
    np.testing.assert_allclose(s_py, s_cli, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(est.predict(Xt), loaded.predict(Xt))
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.kernel_weights_, est.kernel_weights_)
    np.testing.assert_array_equal(back.predict_topk(Xt, k=3, return_scores=True)[1], s_py)
    # okr.from_recipe rebuilds the kernel (with the recorded weights).
    again = okr.from_recipe(py)
    assert isinstance(again.kernel, okr.CombinedKernel)
    np.testing.assert_allclose(again.fit(X, Y).kernel_weights_, est.kernel_weights_, rtol=0, atol=1e-12)


def _gram(name, gamma, A, B):
    if name == "linear":
        return A @ B.T
    if name == "gaussian":
        return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    if name == "laplacian":
        return np.exp(-gamma * np.abs(A[:, None, :] - B[None, :, :]).sum(-1))
    raise AssertionError(name)


def _alignf_brute_force(grams, target):
    """ALIGNF by enumerating the active sets of min_{v >= 0} v'Mv - 2v'a
    (Cortes et al. 2012, Proposition 9), then w = v / ||v||."""
    n = target.shape[0]
    H = np.eye(n) - 1.0 / n
    C = [H @ g @ H for g in grams]
    T = H @ target @ H
    M = np.array([[np.sum(a * b) for b in C] for a in C])
    a = np.array([np.sum(c * T) for c in C])
    best, best_val = None, np.inf
    for r in range(1, len(C) + 1):
        for S in itertools.combinations(range(len(C)), r):
            S = list(S)
            v = np.zeros(len(C))
            try:
                v[S] = np.linalg.solve(M[np.ix_(S, S)], a[S])
            except np.linalg.LinAlgError:
                continue
            if np.any(v < -1e-12):
                continue
            v = np.maximum(v, 0)
            val = v @ M @ v - 2 * v @ a
            if val < best_val:
                best, best_val = v, val
    return best / np.linalg.norm(best)


def test_alignf_weights_equal_a_brute_force_alignment():
    X, Y = _data(50, 7)
    est = okr.IOKR(kernel=okr.CombinedKernel(KERNELS, weighting="alignf"), lam=1e-2).fit(X, Y)
    r = json.loads(est.model_.recipe)
    grams = [_gram(k["name"], k.get("gamma"), X, X) for k in r["input"]["kernels"]]
    ky = r["output"]["kernel"]
    assert ky["name"] == "gaussian"
    target = _gram("gaussian", ky["gamma"], Y.astype(float), Y.astype(float))
    want = _alignf_brute_force(grams, target)
    np.testing.assert_allclose(est.kernel_weights_, want, rtol=0, atol=1e-10)
    # Not a trivial case: the weights are not uniform.
    assert np.ptp(want) > 1e-3


@pytest.mark.parametrize("cls", [okr.ReducedRankIOKR, okr.NystroemKRR])
def test_other_estimators_and_vector_outputs_combine_kernels(cls):
    X, Y = _data(40, 3)
    params = {"rank": 2} if cls is okr.ReducedRankIOKR else {"n_components": 20, "random_state": 0}
    est = cls(kernel=okr.CombinedKernel(["gaussian", "linear"], weighting="alignf"), lam=1e-2, **params)
    est.fit(X, Y)
    assert est.kernel_weights_.shape == (2,) and np.all(est.kernel_weights_ >= 0)
    V = X[:, :2] * 0.5 + 1.0  # vector outputs
    vec = okr.IOKR(kernel=okr.CombinedKernel(["gaussian", "linear"], weighting="alignf"), lam=1e-2).fit(X, V)
    assert vec.kernel_weights_.shape == (2,)
    assert vec.predict(X).shape == V.shape


def test_combined_kernel_in_a_pipeline_and_grid_search_with_group_kfold():
    X, Y = _data(60, 11)
    groups = np.arange(60) // 3
    pipe = make_pipeline(StandardScaler(), okr.IOKR(kernel=okr.CombinedKernel(["gaussian", "linear"])))
    grid = {"iokr__kernel__weighting": ["uniform", "alignf"], "iokr__lam": [1e-3, 1e-1]}
    search = GridSearchCV(pipe, grid, cv=GroupKFold(n_splits=3)).fit(X, Y, groups=groups)
    assert len(search.cv_results_["params"]) == 4
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = search.best_estimator_[-1]
    assert best.kernel.weighting == search.best_params_["iokr__kernel__weighting"]
    assert best.kernel_weights_.shape == (2,)
    # One cell recomputed by hand: each fold fits (and weights) on its own rows.
    i = search.best_index_
    for f, (tr, va) in enumerate(GroupKFold(n_splits=3).split(X, Y, groups)):
        p = search.cv_results_["params"][i]
        est = make_pipeline(
            StandardScaler(),
            okr.IOKR(kernel=okr.CombinedKernel(["gaussian", "linear"], weighting=p["iokr__kernel__weighting"]),
                     lam=p["iokr__lam"]),
        ).fit(X[tr], Y[tr])
        assert search.cv_results_[f"split{f}_test_score"][i] == pytest.approx(est.score(X[va], Y[va]), abs=1e-12)


def test_combined_kernel_errors_are_clear():
    X, Y = _data(30, 2)
    with pytest.raises(ValueError, match="invalid weighting"):
        okr.IOKR(kernel=okr.CombinedKernel(["gaussian"], weighting="easy")).fit(X, Y)
    with pytest.raises(ValueError, match="gamma applies to a single input kernel"):
        okr.IOKR(kernel=okr.CombinedKernel(["gaussian", "linear"]), gamma=0.5).fit(X, Y)
    with pytest.raises(ValueError, match="the list is empty"):
        okr.IOKR(kernel=okr.CombinedKernel([])).fit(X, Y)
    with pytest.raises(ValueError, match="2 weights for 3 kernels"):
        okr.IOKR(kernel=okr.CombinedKernel(KERNELS, weights=[0.5, 0.5])).fit(X, Y)
    with pytest.raises(ValueError, match="precomputed Grams cannot be combined yet"):
        okr.IOKR(kernel=okr.CombinedKernel(["precomputed", "gaussian"])).fit(X, Y)
    with pytest.raises(ValueError, match="invalid kernel"):
        okr.IOKR(kernel=okr.CombinedKernel(["gaussian:wide"])).fit(X, Y)
