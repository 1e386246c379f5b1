"""warm_start (issue 37): a second ``fit`` continues the previous one, so
that ``k`` iterations then ``k`` more equal ``2k`` iterations in one fit
(same seed, no early stop), for every iterative estimator; data of another
shape are refused with a ``ValueError``."""

import numpy as np
import pytest

import okr


def _data(n=30, d=5, l=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, l)) < 0.4).astype(int)
    Y[np.arange(n), np.arange(n) % l] = 1
    return X, Y


def _continued(make, k, fit):
    once = fit(make(2 * k, False))
    half = make(k, True)
    fit(half)
    fit(half)  # warm_start: k more iterations
    return once, half


@pytest.mark.parametrize("solver", ["gd", "als"])
def test_trace_norm_warm_start_equals_one_long_fit(solver):
    X, Y = _data()
    make = lambda k, warm: okr.TraceNormSurrogate(
        rank=3, lam=0.01, solver=solver, max_iter=k, warm_start=warm, gamma=0.2, random_state=0
    )
    once, twice = _continued(make, 5, lambda est: est.fit(X, Y))
    np.testing.assert_allclose(twice.decision_function(X), once.decision_function(X), rtol=0, atol=1e-12)
    assert twice.n_iter_ == once.n_iter_ == 10
    assert json_max_iter(twice) == 5


def json_max_iter(est):
    import json

    return json.loads(est.model_.recipe)["estimator"]["max_iter"]


@pytest.mark.parametrize("loss", ["sq", "lr"])
def test_leml_warm_start_equals_one_long_fit(loss):
    X, Y = _data(seed=1)
    make = lambda k, warm: okr.LEML(rank=2, lam=0.5, loss=loss, max_iter=k, warm_start=warm, random_state=0)
    once, twice = _continued(make, 3, lambda est: est.fit(X, Y))
    np.testing.assert_allclose(twice.decision_function(X), once.decision_function(X), rtol=0, atol=1e-12)
    assert twice.n_iter_ == once.n_iter_ == 6


@pytest.mark.parametrize("cls", [okr.KAE, okr.K2AE])
def test_autoencoder_warm_start_equals_one_long_fit(cls):
    X, _ = _data(n=20, seed=2)
    make = lambda k, warm: cls(hidden_dims=(2,), gamma=0.3, max_iter=k, warm_start=warm, random_state=0)
    once, twice = _continued(make, 8, lambda est: est.fit(X))
    np.testing.assert_allclose(twice.transform(X), once.transform(X), rtol=0, atol=1e-12)
    assert twice.n_iter_ == once.n_iter_ == 16
    assert twice.objective_ == pytest.approx(once.objective_, rel=1e-12, abs=0)


def test_warm_start_false_refits_and_a_first_fit_starts_afresh():
    X, Y = _data(seed=3)
    a = okr.LEML(rank=2, max_iter=3, random_state=0).fit(X, Y)
    b = okr.LEML(rank=2, max_iter=3, random_state=0, warm_start=True).fit(X, Y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    a.fit(X, Y)  # warm_start=False: the same 3 iterations again
    assert a.n_iter_ == 3


def test_warm_start_on_data_of_another_shape_is_a_value_error():
    X, Y = _data(seed=4)
    est = okr.TraceNormSurrogate(rank=2, max_iter=3, warm_start=True, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="training samples of a continued fit"):
        est.fit(X[:20], Y[:20])
    leml = okr.LEML(rank=2, max_iter=2, warm_start=True, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="labels of a continued fit"):
        leml.fit(X, Y[:, :3])
    kae = okr.KAE(hidden_dims=(2,), max_iter=3, warm_start=True, random_state=0).fit(X)
    with pytest.raises(ValueError, match="input features of a continued fit"):
        kae.fit(X[:, :4])
    with pytest.raises(ValueError, match="warm_start"):
        okr.LEML(warm_start="yes").fit(X, Y)


def test_verbose_logs_the_iterations_through_logging(caplog):
    """``verbose`` (issue 37): the solver's progress as ``logging`` records
    on the ``"okr"`` logger; ``verbose=0`` logs nothing."""
    import logging

    X, Y = _data(seed=5)
    with caplog.at_level(logging.INFO, logger="okr"):
        est = okr.LEML(rank=2, max_iter=4, verbose=2, random_state=0).fit(X, Y)
    records = [r.getMessage() for r in caplog.records if r.name == "okr"]
    # One record per iteration (LEML may stop early at its tolerance).
    assert [m.split(",")[0] for m in records] == ["leml"] * est.n_iter_, records
    assert records[-1].endswith(f": {est.n_iter_}/4") and "objective" in records[-1], records
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="okr"):
        okr.TraceNormSurrogate(rank=2, max_iter=30, random_state=0, verbose=1).fit(X, Y)
        okr.KAE(hidden_dims=(2,), max_iter=5, verbose=2, random_state=0).fit(X)
        okr.LEML(rank=2, max_iter=4, random_state=0).fit(X, Y)
    messages = [r.getMessage() for r in caplog.records if r.name == "okr"]
    assert any(m.startswith("trace-norm gd") and m.endswith("/30") for m in messages), messages
    assert sum(m.startswith("autoencoder") for m in messages) == 5, messages
    assert not any(m.startswith("leml") for m in messages), messages
    with pytest.raises(ValueError, match="verbose"):
        okr.LEML(verbose=-1).fit(X, Y)


def test_search_verbose_logs_the_fits_through_logging(caplog):
    """``SearchCV(verbose=...)`` (issue 37): one ``"tune: fits"`` record per
    fit of the grid with ``verbose=2``, on features and on a precomputed
    Gram; nothing with ``verbose=0``."""
    import logging

    X, Y = _data(seed=6)
    grid = dict(cv=3, lambdas=[1e-3, 1e-1], widths=[0.5, 1.0], refit=False)
    with caplog.at_level(logging.INFO, logger="okr"):
        okr.SearchCV(okr.ReducedRankIOKR(rank=3), verbose=2, **grid).fit(X, Y)
    fits = [r.getMessage() for r in caplog.records if r.name == "okr" and r.getMessage().startswith("tune: fits")]
    # One step per fold and width (a fold's ridges share its kernel): 3 x 2, numbered in order.
    assert fits == [f"tune: fits: {i}" for i in range(1, 7)], fits
    caplog.clear()
    from sklearn.metrics.pairwise import rbf_kernel

    gram = okr.ReducedRankIOKR(rank=3, kernel="precomputed")
    with caplog.at_level(logging.INFO, logger="okr"):
        okr.SearchCV(gram, verbose=2, cv=3, lambdas=[1e-3, 1e-1], refit=False).fit(rbf_kernel(X, gamma=0.5), Y)
    fits = [r.getMessage() for r in caplog.records if r.name == "okr" and r.getMessage().startswith("tune: fits")]
    # On a Gram the width is fixed: one step per fold.
    assert fits == [f"tune: fits: {i}" for i in range(1, 4)], fits
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="okr"):
        okr.SearchCV(okr.ReducedRankIOKR(rank=3), **grid).fit(X, Y)
    assert not [r for r in caplog.records if r.name == "okr"]
    with pytest.raises(ValueError, match="verbose"):
        okr.SearchCV(verbose=-1, **grid).fit(X, Y)
