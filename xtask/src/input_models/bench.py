"""One method of `cargo xtask reproduce input-models`, in its own process:
prints one JSON object with fit, predict and decode seconds and the metric.

    python bench.py METHOD DATASET OUT_DIR

METHOD: okr-iokr, okr-sisokr (okr's estimators), ridge, mlp, hgb (a
scikit-learn regressor on a sketched output basis through
okr.SurrogateRegressor), gemm (numpy's DGEMM rate). DATASET: bibtex,
corel5k (label sets, example-based F1), usps (bottom half of the digit from
the top half: vector outputs, the RBF loss 2 - 2 k(yhat, y)).
"""

import json
import os
import sys
import time

import numpy as np

BASIS = 800  # sketched basis of ridge and the MLP (uniform sub-sampling, as DSOKR)
BASIS_HGB = 32  # gradient boosting fits one model per coordinate


def gemm():
    n = 2000
    a, b = np.random.default_rng(0).normal(size=(2, n, n))
    a @ b
    best = np.inf
    for _ in range(5):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return {"gflops": 2.0 * n**3 / best / 1e9}


def load(name):
    import okr

    root = okr.data_dir()
    if name in ("bibtex", "corel5k"):
        L = {"bibtex": 159, "corel5k": 374}[name]
        file = "Corel5k" if name == "corel5k" else name  # Mulan's spelling
        X, Y = okr.load_arff(os.path.join(root, name, f"{file}-train.arff"), L)
        Xt, Yt = okr.load_arff(os.path.join(root, name, f"{file}-test.arff"), L)
        dense = lambda m: m.toarray() if hasattr(m, "toarray") else np.asarray(m)
        return dense(X), dense(Y).astype(np.int8), dense(Xt), dense(Yt).astype(np.int8), "labels"
    # USPS: `label v1 .. v256` per line; top half -> bottom half.
    def read(split):
        a = np.loadtxt(os.path.join(root, "usps", f"usps_{split}.txt"))
        return a[:, 1:129], a[:, 129:]

    X, Y = read("train")
    Xt, Yt = read("test")
    return X, Y, Xt, Yt, "vectors"


def output_gamma(Y, kind):
    """okr's defaults, made explicit so every method shares one output kernel."""
    if kind == "labels":
        return 1.0 / (2.0 * max(1.0, Y.sum(axis=1).mean()))
    idx = np.random.default_rng(0).choice(len(Y), size=min(len(Y), 1000), replace=False)
    S = Y[idx]
    d = ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1)
    return 1.0 / (2.0 * np.median(d[np.triu_indices(len(S), 1)]))


def metric(Y, P, kind, og):
    if kind == "labels":
        inter = (Y * P).sum(axis=1)
        size = Y.sum(axis=1) + P.sum(axis=1)
        return "f1_samples", float(np.mean(np.divide(2.0 * inter, size, out=np.zeros(len(size)), where=size > 0)))
    return "rbf_loss", float(np.mean(2.0 - 2.0 * np.exp(-og * ((Y - P) ** 2).sum(axis=1))))


def main(method, name):
    if method == "gemm":
        return gemm()
    import okr
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import Ridge
    from sklearn.multioutput import MultiOutputRegressor
    from sklearn.neural_network import MLPRegressor

    X, Y, Xt, Yt, kind = load(name)
    og = output_gamma(Y, kind)
    est, m = None, None
    if method == "okr-iokr":
        est = okr.IOKR(output_gamma=og)
    elif method == "okr-sisokr":
        est = okr.SISOKR(input_sketch="uniform:1500", output_sketch="gaussian:800", output_gamma=og, random_state=0)
    else:
        m = BASIS_HGB if method == "hgb" else BASIS
        regressor = {
            "ridge": lambda: Ridge(alpha=1.0),
            "mlp": lambda: MLPRegressor(hidden_layer_sizes=(512,), max_iter=60, random_state=0),
            "hgb": lambda: MultiOutputRegressor(HistGradientBoostingRegressor(max_iter=30, random_state=0)),
        }[method]()
        basis = okr.OutputEmbedding("sketch", n_components=m, output_gamma=og, random_state=0)
        est = okr.SurrogateRegressor(regressor, basis)
    t = time.perf_counter()
    est.fit(X, Y)
    fit_s = time.perf_counter() - t
    predict_s = 0.0
    if isinstance(est, okr.SurrogateRegressor):
        t = time.perf_counter()
        Z = est.predict_coordinates(Xt)
        predict_s = time.perf_counter() - t
        t = time.perf_counter()
        idx, _ = est.model_.decode(Z, 1)
        decode_s = time.perf_counter() - t
        P = est._outputs(idx[:, 0])
    else:
        t = time.perf_counter()
        P = est.predict(Xt)
        decode_s = time.perf_counter() - t
    P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
    name_m, value = metric(np.asarray(Yt, dtype=float), np.asarray(P, dtype=float), kind, og)
    out = {"method": method, "fit_s": fit_s, "predict_s": predict_s, "decode_s": decode_s, "metric": name_m,
           "value": value, "n_candidates": int(len(est.candidates_)), "output_gamma": og}
    if m is not None:
        out["basis"] = m
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")))
