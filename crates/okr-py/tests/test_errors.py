"""Bad inputs raise ValueError carrying okr's own message."""

import numpy as np
import pytest

import okr

ALL = [
    okr.IOKR,
    okr.ReducedRankIOKR,
    okr.KDE,
    okr.SIOKR,
    okr.ISOKR,
    okr.SISOKR,
    okr.NystroemKRR,
    okr.TraceNormSurrogate,
]


def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 4)), (rng.random((40, 3)) < 0.4).astype(int)


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("lam", [0.0, -1.0, np.nan])
def test_bad_lambda(cls, lam):
    X, Y = data()
    with pytest.raises(ValueError, match=r"invalid parameter lambda1? = .*: expected a finite number > 0"):
        cls(lam=lam).fit(X, Y)


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("order", ["C", "F"])
def test_nan_in_x(cls, order):
    X, Y = data()
    X[7, 2] = np.nan
    with pytest.raises(ValueError, match=r"^dense features contains a non-finite value \(NaN or infinity\) at row 7$"):
        cls().fit(np.asarray(X, order=order), Y)
    X[7, 2] = 0.0
    model = cls().fit(X, Y)
    Xt = X[:5].copy()
    Xt[3, 0] = np.inf
    with pytest.raises(ValueError, match=r"non-finite value \(NaN or infinity\) at row 3"):
        model.predict(Xt)


@pytest.mark.parametrize("cls", ALL)
def test_row_count_mismatch(cls):
    X, Y = data()
    with pytest.raises(ValueError, match=r"^shape mismatch: number of training outputs: expected 40, got 30$"):
        cls().fit(X, Y[:30])


def test_bad_kernel_and_sketch_names():
    X, Y = data()
    with pytest.raises(ValueError, match="unknown kernel"):
        okr.IOKR(kernel="cosine").fit(X, Y)
    with pytest.raises(ValueError, match=r"^invalid parameter sketch size = 0: expected an integer >= 1$"):
        okr.SIOKR(input_sketch="gaussian:0").fit(X, Y)
    with pytest.raises(ValueError, match=r"invalid parameter rank = 0"):
        okr.ReducedRankIOKR(rank=0).fit(X, Y)


def test_wrong_feature_count_at_predict():
    X, Y = data()
    model = okr.IOKR().fit(X, Y)
    # scikit-learn's own message (its estimator checks require it).
    with pytest.raises(ValueError, match="X has 3 features, but IOKR is expecting 4 features"):
        model.predict(X[:, :3])
