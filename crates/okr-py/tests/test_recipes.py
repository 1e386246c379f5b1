"""Recipes across front doors (issue 33): the Python estimators and
``okr fit`` resolve the same recipe field by field, a model file of
``okr fit`` opens in Python (``okr.load``) and predicts what ``okr predict``
predicts (with its stored standardizer), and a model saved from Python
predicts the same through ``okr predict``. Runs the ``okr`` binary of this
checkout (OKR_BIN, or target/debug or target/release)."""

import json
import os
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import okr

ROOT = Path(__file__).resolve().parents[3]

# Each Python class with the hyper-parameters that make its fit small.
CASES = [
    (okr.IOKR, {}),
    (okr.ReducedRankIOKR, {}),
    (okr.KDE, {}),
    (okr.SIOKR, {"random_state": 0}),
    (okr.ISOKR, {"random_state": 1}),
    (okr.SISOKR, {"random_state": 2}),
    (okr.NystroemKRR, {"random_state": 3}),
    (okr.NystroemReducedRankIOKR, {"random_state": 4}),
    (okr.TraceNormSurrogate, {"random_state": 5}),
]


def _okr_bin():
    for p in [os.environ.get("OKR_BIN"), ROOT / "target/debug/okr", ROOT / "target/release/okr"]:
        if p and Path(p).is_file():
            return str(p)
    pytest.skip("no okr binary: run `cargo build -p okr-cli` (cargo xtask test builds it)")


def _run(*args):
    out = subprocess.run([_okr_bin(), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _data(n, seed, dense_features=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1.0, 3.0, 0.5, 2.0] + [0.0, 5.0, -1.0, 0.0]
    Y = (X[:, :3] + 0.3 * rng.normal(size=(n, 3)) > [0.0, 5.0, -1.0]).astype(np.int64)
    Y[Y.sum(axis=1) == 0, 0] = 1
    return X, Y


def _csv(path, X, Y=None):
    cols = [X] if Y is None else [X, Y]
    rows = np.hstack(cols)
    with open(path, "w") as f:
        for r in rows:
            f.write(",".join(repr(float(v)) if i < X.shape[1] else str(int(v)) for i, v in enumerate(r)) + "\n")
    return path


def _cli_flags(est):
    """The CLI flags of a Python estimator's non-default choices."""
    name = json.loads(est.model_.recipe)["estimator"]["name"]
    flags = ["--estimator", name]
    p = est.get_params()
    for py, flag in (("input_sketch", "--input-sketch"), ("output_sketch", "--output-sketch")):
        if p.get(py) is not None:
            flags += [flag, p[py]]
    return flags


@pytest.mark.parametrize("cls,params", CASES, ids=[c.__name__ for c, _ in CASES])
def test_python_and_okr_fit_resolve_the_same_recipe(tmp_path, cls, params):
    X, Y = _data(40, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sizes capped at n
        est = cls(**params).fit(X, Y)
    py = json.loads(est.model_.recipe)
    train = _csv(tmp_path / "train.csv", X, Y)
    model = tmp_path / "m.okr"
    _run("fit", "--train", train, "--label-count", 3, "--no-standardize", "--seed", py["seed"],
         *_cli_flags(est), "-m", model)
    cli = json.loads(_run("info", "--json", model))["recipe"]
    assert cli == py
    # Field by field, as the defaults table says (a failure names the field).
    for key in ("estimator", "input", "output", "seed"):
        assert cli[key] == py[key], key
    # okr.from_recipe rebuilds the same request.
    again = okr.from_recipe(py)
    assert isinstance(again, cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again.fit(X, Y)
    assert json.loads(again.model_.recipe) == py


@pytest.mark.parametrize("sparse_cli", [False, True])
def test_a_cli_model_opened_with_okr_load_predicts_as_okr_predict(tmp_path, sparse_cli):
    X, Y = _data(50, 1)
    Xt, _ = _data(15, 2)
    model = tmp_path / "m.okr"
    if sparse_cli:
        # svmlight: sparse rows, standardized as Gaussian feature weights inside the kernel.
        def svm(path, X, Y=None):
            with open(path, "w") as f:
                for i, row in enumerate(X):
                    labels = ",".join(str(j) for j in np.flatnonzero(Y[i])) if Y is not None else ""
                    feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
                    f.write(f"{labels} {feats}\n")
            return path
        train, test = svm(tmp_path / "t.svm", X, Y), svm(tmp_path / "x.svm", Xt, np.zeros((15, 3)))
        _run("fit", "--train", train, "--label-count", 3, "--estimator", "reduced-rank", "--standardize", "-m", model)
        pred = _run("predict", "-m", model, "-i", test, "--output-format", "indicator")
        est = okr.load(model)
        import scipy.sparse as sp
        got = est.predict(sp.csr_matrix(Xt))
    else:
        train, test = _csv(tmp_path / "t.csv", X, Y), _csv(tmp_path / "x.csv", Xt)
        # Dense non-binary features: the model stores a standardizer.
        _run("fit", "--train", train, "--label-count", 3, "--estimator", "kde", "-m", model)
        assert json.loads(_run("info", "--json", model))["standardized"]
        pred = _run("predict", "-m", model, "-i", test, "--label-count", 0, "--output-format", "indicator")
        est = okr.load(model)
        assert isinstance(est, okr.KDE)
        got = est.predict(Xt)
    want = np.array([[int(v) for v in line.split(",")] for line in pred.strip().splitlines()])
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_model_saved_from_python_predicts_the_same_through_okr_predict(tmp_path):
    X, Y = _data(45, 3)
    Xt, _ = _data(12, 4)
    est = okr.NystroemKRR(random_state=0, lam=1e-2).fit(X, Y)
    est.save(tmp_path / "py.okr")
    test = _csv(tmp_path / "x.csv", Xt)
    pred = _run("predict", "-m", tmp_path / "py.okr", "-i", test, "--label-count", 0, "--output-format", "indicator")
    want = np.array([[int(v) for v in line.split(",")] for line in pred.strip().splitlines()])
    np.testing.assert_array_equal(est.predict(Xt), want)
    back = okr.load(tmp_path / "py.okr")
    np.testing.assert_array_equal(back.predict(Xt), want)
    assert back.get_params()["random_state"] == json.loads(est.model_.recipe)["seed"]


def test_vector_models_open_in_python(tmp_path):
    X, _ = _data(30, 5)
    V = np.column_stack([X[:, 0] ** 2, X[:, 1] - X[:, 2]])
    model = tmp_path / "v.okr"
    train = _csv(tmp_path / "t.csv", X)
    vec = tmp_path / "v.csv"
    np.savetxt(vec, V, delimiter=",", fmt="%.17g")
    _run("fit", "--train", train, "--label-count", 0, "--output-kind", "vector", "--outputs", vec, "-m", model)
    test = _csv(tmp_path / "x.csv", X[:7])
    pred = _run("predict", "-m", model, "-i", test, "--label-count", 0)
    want = np.array([[float(v) for v in line.split(",")] for line in pred.strip().splitlines()])
    np.testing.assert_array_equal(okr.load(model).predict(X[:7]), want)


@pytest.mark.parametrize(
    "est,flags",
    [
        (okr.LEML(random_state=0), ["--estimator", "leml"]),
        (okr.LEML(rank=2, lam=0.5, loss="lr", random_state=1), ["--estimator", "leml", "--rank", "2", "--lambda", "0.5", "--loss", "lr"]),
        (okr.KAE(max_iter=20, random_state=0), ["--estimator", "kae", "--max-iter", "20", "--no-standardize"]),
        (okr.K2AE(max_iter=20, random_state=0), ["--estimator", "k2ae", "--max-iter", "20", "--no-standardize"]),
    ],
    ids=["leml", "leml-set", "kae", "k2ae"],
)
def test_leml_and_autoencoders_resolve_the_same_recipe_as_okr_fit(tmp_path, est, flags):
    """LEML and the autoencoders go through the same recipe layer: the
    Python model's recipe equals the one ``okr fit`` stores, field by field."""
    X, Y = _data(40, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, Y) if isinstance(est, okr.LEML) else est.fit(X)
    py = json.loads(est.model_.recipe)
    train = _csv(tmp_path / "train.csv", X, Y)
    model = tmp_path / "m.okr"
    _run("fit", "--train", train, "--label-count", 3, "--seed", py["seed"], *flags, "-m", model)
    cli = json.loads(_run("info", "--json", model))["recipe"]
    for key in ("estimator", "input", "output", "seed"):
        assert cli[key] == py[key], key
