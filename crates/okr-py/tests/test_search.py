"""``okr.SearchCV``: the search of ``okr tune`` from Python. The same grid
and choice as ``okr tune`` on the same data (one search in okr's library),
``GridSearchCV``'s attribute shapes, grouped folds that keep every group in
one fold, and clean errors."""

import json

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

import okr
from test_recipes import _csv, _data, _run


@pytest.mark.parametrize(
    "cv,est",
    [("3", okr.IOKR()), ("loo", okr.IOKR()), ("gcv-rkhs", okr.IOKR()), ("3", okr.ReducedRankIOKR(rank=4))],
    ids=["iokr-3fold", "iokr-loo", "iokr-gcv", "rr-3fold"],
)
def test_search_equals_okr_tune(tmp_path, cv, est):
    X, Y = _data(60, 3)
    lambdas, widths = [1e-4, 1e-2, 1e-1], [0.25, 1.0, 4.0]
    search = okr.SearchCV(est, cv=cv if cv != "3" else 3, lambdas=lambdas, widths=widths).fit(X, Y)
    train = _csv(tmp_path / "train.csv", X, Y)
    name = json.loads(search.best_estimator_.model_.recipe)["estimator"]["name"]
    flags = ["--estimator", name] + (["--rank", "4"] if name == "reduced-rank" else [])
    out = _run(
        "tune", "--train", train, "--label-count", 3, "--no-standardize", "--cv", cv, *flags,
        "--lambdas", ",".join(map(str, lambdas)), "--widths", ",".join(map(str, widths)),
        "--json", "-m", tmp_path / "m.okr",
    )
    cli = json.loads(out)
    cells = cli["grid"]["cells"]
    assert len(search.cv_results_["params"]) == len(cells) == 9
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], [c["mean"] for c in cells], rtol=1e-12)
    assert search.best_params_["lam"] == cli["chosen"]["lambda"]
    assert search.best_params_["gamma"] == pytest.approx(cli["chosen"]["gamma"], rel=1e-12)
    assert search.best_score_ == pytest.approx(cli["chosen"]["mean"], rel=1e-12)
    assert search.cv_results_["rank_test_score"][search.best_index_] == 1


def test_results_are_shaped_like_grid_search_cv():
    X, Y = _data(45, 4)
    lambdas, widths = [1e-3, 1e-1], [0.5, 2.0]
    search = okr.SearchCV(okr.IOKR(), cv=3, lambdas=lambdas, widths=widths).fit(X, Y)
    gamma = search.best_params_["gamma"]
    grid = GridSearchCV(okr.IOKR(gamma=gamma), {"lam": lambdas}, cv=3).fit(X, Y)
    for key in ("params", "mean_test_score", "std_test_score", "rank_test_score", "split0_test_score"):
        assert key in search.cv_results_ and key in grid.cv_results_, key
    assert len(search.cv_results_["params"]) == 4
    assert set(search.best_params_) == {"gamma", "lam"}
    # The refit is the estimator with the choice, on every row.
    ref = okr.IOKR(lam=search.best_params_["lam"], gamma=gamma).fit(X, Y)
    np.testing.assert_array_equal(search.predict(X), ref.predict(X))
    assert search.score(X, Y) == ref.score(X, Y)
    assert search.predict_topk(X, k=2).shape == ref.predict_topk(X, k=2).shape


def test_groups_keep_duplicates_in_one_fold():
    """Every row twice: ungrouped folds see most validation rows' twins in
    training (each decoded exactly at a tiny ridge); grouped folds do not."""
    X, Y = _data(40, 5)
    X2, Y2 = np.vstack([X, X]), np.vstack([Y, Y])
    groups = np.concatenate([np.arange(40), np.arange(40)])
    kw = dict(cv=4, lambdas=[1e-8], widths=[8.0])
    leaky = okr.SearchCV(okr.IOKR(), **kw).fit(X2, Y2)
    grouped = okr.SearchCV(okr.IOKR(), **kw).fit(X2, Y2, groups=groups)
    assert leaky.best_score_ > 0.75
    assert grouped.best_score_ < leaky.best_score_ - 0.1
    assert "grouped" in grouped.criterion_


def test_bad_searches_raise_okrs_message():
    X, Y = _data(30, 6)
    with pytest.raises(ValueError, match="lambda is what okr tune chooses"):
        okr.SearchCV(okr.IOKR(lam=1e-3)).fit(X, Y)
    with pytest.raises(ValueError, match="closed form of IOKR"):
        okr.SearchCV(okr.KDE(), cv="loo").fit(X, Y)
    with pytest.raises(ValueError, match="groups need K-fold"):
        okr.SearchCV(okr.IOKR(), cv="loo").fit(X, Y, groups=np.arange(30))
    with pytest.raises(ValueError, match="invalid cv"):
        okr.SearchCV(okr.IOKR(), cv=1).fit(X, Y)
    with pytest.raises(ValueError, match="lambdas value"):
        okr.SearchCV(okr.IOKR(), lambdas=[-1.0]).fit(X, Y)
    with pytest.raises(TypeError, match="kernel-output estimators"):
        okr.SearchCV(okr.LEML()).fit(X, Y)
