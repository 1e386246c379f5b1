"""``fit(X, y, sample_weight=...)`` (issue 37, item 2): the weighted ridge
against scikit-learn's ``KernelRidge(sample_weight=...)`` to 1e-8, integer
weights against repeated rows, and okr's refusals as ``ValueError``."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

import okr

WEIGHTED = [
    lambda: okr.IOKR(lam=1e-2, gamma=0.15, output_kernel="linear"),
    lambda: okr.ReducedRankIOKR(rank=2, lam=1e-2, gamma=0.15, output_kernel="linear"),
    lambda: okr.NystroemKRR(n_components=15, lam=1e-2, gamma=0.15, output_kernel="linear", random_state=0),
    lambda: okr.SIOKR(input_sketch="gaussian:15", lam=1e-2, gamma=0.15, output_kernel="linear", random_state=0),
    lambda: okr.ISOKR(output_sketch="gaussian:2", lam=1e-2, gamma=0.15, output_kernel="linear", random_state=0),
    lambda: okr.SISOKR(
        input_sketch="gaussian:15", output_sketch="gaussian:2", lam=1e-2, gamma=0.15, output_kernel="linear",
        random_state=0,
    ),
]


def data(n=40, d=5, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = np.sin(X[:, :k]) + 0.1 * rng.normal(size=(n, k))
    w = rng.uniform(0.2, 3.0, size=n)
    return X, Y, w, rng.normal(size=(7, d))


def test_iokr_equals_weighted_kernel_ridge():
    """okr's lam maps to KernelRidge's alpha = lam * sum(w), gamma to gamma."""
    X, Y, w, Xt = data()
    lam, gamma = 1e-2, 0.15
    model = okr.IOKR(lam=lam, gamma=gamma, output_kernel="linear").fit(X, Y, sample_weight=w)
    ridge = KernelRidge(alpha=lam * w.sum(), kernel="rbf", gamma=gamma).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(model.decision_function(Xt), ridge.predict(Xt), rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.decision_function(X), ridge.predict(X), rtol=0, atol=1e-8)
    # The weights matter: the unweighted fit differs.
    plain = okr.IOKR(lam=lam, gamma=gamma, output_kernel="linear").fit(X, Y)
    assert np.abs(plain.decision_function(Xt) - model.decision_function(Xt)).max() > 1e-4


def test_integer_weights_equal_repeated_rows():
    X, Y, _, Xt = data(seed=1)
    w = 1 + np.arange(len(X)) % 3
    rows = np.repeat(np.arange(len(X)), w)
    make = lambda: okr.IOKR(lam=1e-3, gamma=0.2, output_kernel="linear")  # noqa: E731
    weighted = make().fit(X, Y, sample_weight=w)
    repeated = make().fit(X[rows], Y[rows])
    np.testing.assert_allclose(weighted.decision_function(Xt), repeated.decision_function(Xt), rtol=0, atol=1e-10)
    rr = lambda: okr.ReducedRankIOKR(rank=2, lam=1e-2, gamma=0.2, output_kernel="linear")  # noqa: E731
    np.testing.assert_allclose(
        rr().fit(X, Y, sample_weight=w).decision_function(Xt),
        rr().fit(X[rows], Y[rows]).decision_function(Xt),
        rtol=0,
        atol=1e-8,
    )


@pytest.mark.parametrize("make", WEIGHTED)
def test_unit_and_scaled_weights(make):
    X, Y, w, Xt = data(seed=2)
    plain = make().fit(X, Y).decision_function(Xt)
    np.testing.assert_allclose(make().fit(X, Y, sample_weight=np.ones(len(X))).decision_function(Xt), plain, atol=1e-10)
    np.testing.assert_allclose(make().fit(X, Y, sample_weight=1.0).decision_function(Xt), plain, atol=1e-10)
    a = make().fit(X, Y, sample_weight=w).decision_function(Xt)
    b = make().fit(X, Y, sample_weight=list(5.0 * w)).decision_function(Xt)
    np.testing.assert_allclose(a, b, atol=1e-9)
    assert np.abs(a - plain).max() > 1e-6


@pytest.mark.parametrize("make", WEIGHTED)
@pytest.mark.parametrize(
    "bad, message",
    [
        ("zero", "invalid sample weight 0 of sample 3"),
        ("negative", "invalid sample weight -1 of sample 3"),
        ("nan", "invalid sample weight NaN of sample 3"),
        ("short", "number of sample weights: expected 40, got 39"),
    ],
)
def test_bad_weights_raise_okr_message(make, bad, message):
    X, Y, _, _ = data()
    w = np.ones(len(X))
    if bad == "short":
        w = w[:-1]
    else:
        w[3] = {"zero": 0.0, "negative": -1.0, "nan": np.nan}[bad]
    with pytest.raises(ValueError, match=message):
        make().fit(X, Y, sample_weight=w)


def test_estimators_without_weighted_fit_have_no_sample_weight():
    import inspect

    for cls in [okr.KDE, okr.NystroemReducedRankIOKR, okr.TraceNormSurrogate, okr.LEML]:
        assert "sample_weight" not in inspect.signature(cls.fit).parameters, cls
    for cls in [okr.IOKR, okr.ReducedRankIOKR, okr.NystroemKRR, okr.SIOKR, okr.ISOKR, okr.SISOKR]:
        assert "sample_weight" in inspect.signature(cls.fit).parameters, cls


def test_label_sets_without_lam_warn_and_take_the_default():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 4))
    Y = (rng.random((30, 4)) < 0.4).astype(np.int64)
    with pytest.warns(UserWarning, match="leave-one-out choice of lambda is unweighted"):
        model = okr.IOKR().fit(X, Y, sample_weight=rng.uniform(0.5, 2.0, 30))
    assert "0.001" in model.model_.recipe or "1e-3" in model.model_.recipe
