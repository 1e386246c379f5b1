"""Property suite for the Python boundary (hypothesis): every public
estimator of okr is fitted on generated inputs and parameters, then used to
predict or transform. Each example must end in a clean ``ValueError`` /
``TypeError`` or in a result of the right shape with finite values: never
an abort, a ``PanicException`` (a ``BaseException``) or any other
exception.

Each example is valid in all but at most one place, its hostile dimension
(none in half of the examples): the inputs (dtype object or complex, 1-D
or 3-D, empty, one sample, no feature, NaN or infinity, values near 1e-300
or 1e300), the targets (-1/+1, 1/2, NaN, a 2 in a sparse indicator, a
wrong row count, 3-D), the test inputs (another width, NaN), or one
parameter (out of range, beyond 64 bits, of the wrong type). So every
hostile value meets otherwise valid data and reaches okr's deeper code,
and half of the examples exercise the computations themselves; valid
inputs still vary in dtype (float64, float32, integers, booleans), layout
(C, F, CSR, CSC, COO), sparsity, identical rows, and size.

2,000 examples per estimator, derandomized (the same examples on every
run, so CI is reproducible) and without an example database (nothing is
written into the repository); data are tiny so that the suite runs in
about a minute (``OKR_HYPOTHESIS_EXAMPLES`` lowers the count for a quick
local run).
"""

import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import okr

EXAMPLES = int(os.environ.get("OKR_HYPOTHESIS_EXAMPLES", "2000"))

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)

# The outcomes an example may end in, besides a correct result.
CLEAN = (ValueError, TypeError)

# Strategies are built once, at import: hypothesis validates every new
# strategy object, which costs more than an okr fit on this data.
SEED = st.integers(0, 2**32 - 1)
N_TEST = st.integers(1, 3)


def param(valid, invalid):
    """A parameter: ``(strategy of valid values, strategy of invalid ones)``."""
    return st.sampled_from(valid), st.sampled_from(invalid)


BIG = [10**6, 2**31, 10**12, 2**63, 10**30, -(10**30)]
LAM = param([1e-3, 1e-2, 0.1, 1.0, 10.0], [0.0, -1.0, np.nan, np.inf, -np.inf, 1e300, 1e-300, "1", None])
GAMMA = param([None, None, 0.5, 1e-2, 3.0], [0.0, -1.0, np.nan, np.inf, 1e300, "1", [1.0]])
COEF0 = param([0.0, 1.0, 2.5], [-1.0, np.nan, np.inf, "1"])
KERNEL = param(
    ["gaussian", "rbf", "linear", "laplacian", "polynomial", "tanimoto", "gaussian-tanimoto"],
    ["cosine", "", 3, None, "GAUSSIAN"],
)
DEGREE = param([1, 2, 3], [0, -2, 10**12, 10**30, 2.5, "2"])
N_JOBS = param([None, 1, -1, 2], [0, -(10**30), 10**30, 10**6, 1.5, "2", True])
PRECISION = param(["f64", "f32"], ["f16", None, 32])
COUNT = param([1, 2, 3, 5, 8], [0, -3, *BIG, 2.5, "3"])
ITERS = param([1, 2, 3], [0, -1, 10**30, 1.5])
SEEDS = param([None, 0, 7], [-1, 2**40, "0"])
SKETCH = param(
    ["uniform:3", "gaussian:2", "rademacher:4", "sjlt:2", "uniform:50", None],
    ["uniform:0", "gaussian:-1", "bogus:3", "uniform", 3, "uniform:99999999999999999999"],
)
HIDDEN = param([(1,), (2,), (2, 1), (2, 2, 1), 2], [(), (0,), (-1,), (9,), (10**30,), (2**25,), (1.5,), ("2",), None])
LOSS = param(["sq", "lr", "sh"], ["hinge", None])
SOLVER = param(["gd", "als", "convex"], ["newton", None])
BOOL = param([False, True], ["yes", None])

# The finite KAE's first layer: gaussian, linear or polynomial.
KAE_KERNEL = param(["gaussian", "rbf", "linear", "polynomial"], ["laplacian", "tanimoto", "cosine", 3])

KERNEL_PARAMS = {"kernel": KERNEL, "gamma": GAMMA, "degree": DEGREE, "coef0": COEF0, "n_jobs": N_JOBS}
SURROGATE_PARAMS = {
    **KERNEL_PARAMS,
    "lam": LAM,
    "output_kernel": KERNEL,
    "output_gamma": GAMMA,
    "precision": PRECISION,
}
ESTIMATORS = {
    okr.IOKR: SURROGATE_PARAMS,
    okr.ReducedRankIOKR: {**SURROGATE_PARAMS, "rank": COUNT, "lam2": GAMMA},
    okr.KDE: {**SURROGATE_PARAMS, "rank": COUNT, "centered": BOOL},
    okr.SIOKR: {**SURROGATE_PARAMS, "input_sketch": SKETCH, "random_state": SEEDS},
    okr.ISOKR: {**SURROGATE_PARAMS, "output_sketch": SKETCH, "random_state": SEEDS},
    okr.SISOKR: {**SURROGATE_PARAMS, "input_sketch": SKETCH, "output_sketch": SKETCH, "random_state": SEEDS},
    okr.NystroemKRR: {**SURROGATE_PARAMS, "n_components": COUNT, "random_state": SEEDS},
    okr.NystroemReducedRankIOKR: {
        **SURROGATE_PARAMS,
        "n_components": COUNT,
        "subset_size": COUNT,
        "rank": COUNT,
        "random_state": SEEDS,
    },
    okr.TraceNormSurrogate: {**SURROGATE_PARAMS, "rank": COUNT, "solver": SOLVER, "random_state": SEEDS},
    okr.LEML: {"rank": COUNT, "lam": LAM, "loss": LOSS, "max_iter": ITERS, "random_state": SEEDS, "n_jobs": N_JOBS},
    okr.KAE: {**KERNEL_PARAMS, "kernel": KAE_KERNEL, "hidden_dims": HIDDEN, "lam": LAM, "max_iter": ITERS, "random_state": SEEDS},
    okr.K2AE: {**KERNEL_PARAMS, "hidden_dims": HIDDEN, "lam": LAM, "max_iter": ITERS, "random_state": SEEDS},
    okr.KPCA: {**KERNEL_PARAMS, "n_components": COUNT},
}
CODE_MODELS = (okr.KAE, okr.K2AE, okr.KPCA)
# The hostile dimension of an example: none half of the time.
HOSTILE = {cls: st.sampled_from(["none"] * (len(p) + 3) + ["X", "Y", "Xt", *p]) for cls, p in ESTIMATORS.items()}


def _pick(rng, options):
    return options[rng.integers(len(options))]


def matrix(draw, hostile, n=None, d=None):
    """Inputs from one seed: ``n x d`` (drawn when ``None``), float64,
    float32, integers or booleans, dense in C or F order or CSR / CSC / COO,
    with zeros and identical rows; ``hostile``: one of dtype object or
    complex, 1-D or 3-D, empty, one sample, no feature, a NaN or an
    infinity, values near 1e-300 or 1e300."""
    rng = np.random.default_rng(draw(SEED))
    n = int(rng.integers(2, 8)) if n is None else n
    d = int(rng.integers(1, 5)) if d is None else d
    how = _pick(rng, ["dtype", "ndim", "n", "d", "special", "scale"]) if hostile else None
    if how == "n":
        n = int(rng.integers(0, 2))
    if how == "d":
        d = 0
    a = rng.normal(size=(n, d)) * (_pick(rng, [1e-300, 1e-160, 1e154, 1e300]) if how == "scale" else 1.0)
    a[rng.random((n, d)) < _pick(rng, [0.0, 0.0, 0.5, 0.9])] = 0.0
    if n >= 3 and rng.integers(4) == 0:
        a[1] = a[0]  # identical rows
    if how == "special" and a.size:
        a.flat[rng.integers(a.size)] = _pick(rng, [np.nan, np.inf, -np.inf, 1e308])
    if how == "ndim":
        return a.ravel() if rng.integers(2) else a.reshape(n, d, 1)
    dtypes = [np.complex128, object] if how == "dtype" else [np.float64] * 3 + [np.float32, np.int64, np.bool_]
    dtype = _pick(rng, dtypes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = a.astype(dtype)
    layout = _pick(rng, ["C", "C", "F", "csr", "csc", "coo"])
    if layout in ("C", "F") or dtype in (object, np.complex128):
        return np.asarray(a, order="F" if layout == "F" else "C")
    return {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix}[layout](a)


def target(draw, hostile, n, vectors=True):
    """Targets for ``n`` rows from one seed: a 0/1 or boolean indicator
    (dense or sparse), class labels (integers or strings) or vector
    outputs; ``hostile``: -1/+1, 1/2, NaN, a 2 in a sparse indicator, a
    wrong row count, 3-D. No vector outputs unless ``vectors`` (LEML)."""
    rng = np.random.default_rng(draw(SEED))
    rows = int(rng.integers(0, 8)) if hostile and rng.integers(6) == 0 else n
    l = int(rng.integers(1, 5))
    bits = rng.random((rows, l)) < _pick(rng, [0.0, 0.3, 0.6, 1.0])
    if hostile and rows == n:
        kind = _pick(rng, ["pm1", "12", "nan", "3d", "sparse2", "vector-nan"])
        if kind == "pm1":
            return np.where(bits, 1, -1)
        if kind == "12":
            return np.where(bits, 2, 1)
        if kind == "nan":
            y = bits.astype(np.float64)
            y.flat[0] = np.nan
            return y
        if kind == "3d":
            return bits.reshape(rows, l, 1).astype(int)
        if kind == "vector-nan":
            y = rng.normal(size=(rows, l))
            y.flat[0] = np.nan
            return y
        return sp.csr_matrix(np.where(bits, 2, 0))
    kind = _pick(rng, ["indicator", "indicator", "sparse", "bool", "classes", "strings"] + ["vectors"] * vectors)
    if kind == "indicator":
        return bits.astype(_pick(rng, [np.int64, np.float64, np.int8]))
    if kind == "sparse":
        return sp.csr_matrix(bits.astype(np.int64))
    if kind == "bool":
        return bits
    if kind == "classes":
        return bits[:, 0].astype(int) + bits[:, -1].astype(int)
    if kind == "strings":
        return np.array(["a", "b", "c"])[bits[:, 0].astype(int) + bits[:, -1].astype(int)]
    return rng.normal(size=(rows, l))


@st.composite
def cases(draw, cls):
    """``(estimator, X, Y, Xt, hostile)`` for ``cls``, hostile in at most one place."""
    hostile = draw(HOSTILE[cls])
    params = {name: draw(invalid if hostile == name else valid) for name, (valid, invalid) in ESTIMATORS[cls].items()}
    X = matrix(draw, hostile == "X")
    n = X.shape[0]
    d = X.shape[1] if X.ndim == 2 else 1
    Y = None if cls in CODE_MODELS else target(draw, hostile == "Y", n, vectors=cls is not okr.LEML)
    Xt = matrix(draw, False, n=draw(N_TEST), d=d)
    if hostile == "Xt":
        how = draw(st.sampled_from(["hostile", "width", "empty"]))
        Xt = {
            "hostile": lambda: matrix(draw, True, n=draw(N_TEST), d=d),
            "width": lambda: matrix(draw, False, d=d + 1),
            "empty": lambda: matrix(draw, False, n=0, d=d),
        }[how]()
        if Xt.ndim != 2:
            Xt = np.full((1, d), np.nan)
    return cls(**params), X, Y, Xt, hostile


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def _finite(a):
    a = a.toarray() if sp.issparse(a) else np.asarray(a)
    return a.dtype.kind not in "fc" or bool(np.all(np.isfinite(a)))


def check_supervised(est, X, Y, Xt):
    """Fit then predict: a clean exception or predictions of the right shape."""
    try:
        _quiet(est.fit, X, Y)
    except CLEAN as e:
        return f"fit refused ({type(e).__name__})"
    try:
        pred = _quiet(est.predict, Xt)
    except CLEAN as e:
        return f"predict refused ({type(e).__name__})"
    n_test = Xt.shape[0]
    if est._mode == "classes":
        assert pred.shape == (n_test,)
        assert set(np.asarray(pred).tolist()) <= set(est.classes_.tolist())
    else:
        assert pred.shape == (n_test, est.n_outputs_), (pred.shape, n_test, est.n_outputs_)
        assert _finite(pred)
        if est._mode == "labels":
            values = pred.toarray() if sp.issparse(pred) else np.asarray(pred)
            assert np.all((values == 0) | (values == 1))
    # The other entry points on a share of the examples each (by the test
    # rows' count, 1 to 3), to keep the suite within its time.
    if n_test == 2:
        scores = _quiet(est.decision_function, Xt)
        assert scores.shape[0] == n_test and _finite(scores)
    if n_test == 3 and not isinstance(est, okr.LEML):
        pool = est.classes_ if est._mode == "classes" else est.candidates_
        ranked = _quiet(est.rank_candidates, Xt, pool, None, k=2)
        n_pool = len(pool) if est._mode == "classes" else pool.shape[0]
        assert [len(i) for i in ranked.indices] == [min(2, n_pool)] * n_test
        assert all(_finite(s) for s in ranked.scores)
    return f"predicted ({est._mode})"


def code_width(est, X):
    """The code width: ``min(n_components, n_samples)`` for kernel PCA, the
    last inner layer's width for the autoencoders."""
    if isinstance(est, okr.KPCA):
        return min(int(est.n_components), X.shape[0])
    dims = est.hidden_dims if np.ndim(est.hidden_dims) else [est.hidden_dims]
    return int(list(dims)[-1])


def check_codes(est, X, Xt):
    """Fit then transform: a clean exception or finite codes ``(n, width)``."""
    try:
        _quiet(est.fit, X)
    except CLEAN as e:
        return f"fit refused ({type(e).__name__})"
    assert est.embedding_.shape == (X.shape[0], code_width(est, X)) and _finite(est.embedding_)
    try:
        codes = _quiet(est.transform, Xt)
    except CLEAN as e:
        return f"transform refused ({type(e).__name__})"
    assert codes.shape == (Xt.shape[0], code_width(est, X)), (codes.shape, Xt.shape)
    assert _finite(codes)
    if Xt.shape[0] == 2 and not isinstance(est, okr.KPCA):
        assert np.isfinite(_quiet(est.score, Xt))
    return "transformed"


@pytest.mark.parametrize("cls", list(ESTIMATORS), ids=lambda c: c.__name__)
def test_every_estimator_ends_in_a_clean_error_or_a_correct_result(cls):
    outcomes = {}

    @SETTINGS
    @given(case=cases(cls))
    def run(case):
        est, X, Y, Xt, hostile = case
        outcome = check_codes(est, X, Xt) if cls in CODE_MODELS else check_supervised(est, X, Y, Xt)
        event(outcome)
        key = "valid" if hostile == "none" else "hostile"
        outcomes.setdefault(key, {}).setdefault(outcome, 0)
        outcomes[key][outcome] += 1

    run()
    # The suite must exercise the computations, not only the checks: most
    # valid examples end in a result.
    valid = outcomes.get("valid", {})
    done = sum(v for k, v in valid.items() if not k.endswith("refused (ValueError)") and "refused" not in k)
    assert done >= 0.5 * sum(valid.values()), outcomes
