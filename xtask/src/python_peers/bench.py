"""One method of `cargo xtask reproduce python-vs-peers`, run in its own
process (so that its peak memory is its own): prints one JSON object with
fit and decode seconds, example-based F1 and the peak RSS.

    python bench.py METHOD DATA.npz

METHOD: okr-iokr, okr-sisokr (the okr package), numpy-iokr, numpy-sisokr
(the same computations written with numpy / scipy / scikit-learn, as a
careful user would), peer-iokr, peer-sisokr (structured-predictions'
IOKR and SISOKR), gemm (the DGEMM rate of numpy's BLAS, GFLOP/s).
Hyper-parameters are in the .npz (lam, gamma, output_gamma, sketch sizes).
"""

import json
import resource
import sys
import time

import numpy as np
import scipy.sparse as sp


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def f1_samples(Y, P):
    inter = (Y * P).sum(axis=1)
    size = Y.sum(axis=1) + P.sum(axis=1)
    return float(np.mean(np.divide(2.0 * inter, size, out=np.zeros(len(size)), where=size > 0)))


def distinct_rows(Y):
    """Distinct rows of Y in first-occurrence order (okr's candidates)."""
    _, first = np.unique(Y, axis=0, return_index=True)
    return Y[np.sort(first)]


def load(path):
    d = np.load(path, allow_pickle=False)
    X = sp.csr_matrix((d["x_data"], d["x_indices"], d["x_indptr"]), shape=tuple(d["x_shape"]))
    Xt = sp.csr_matrix((d["xt_data"], d["xt_indices"], d["xt_indptr"]), shape=tuple(d["xt_shape"]))
    p = {k: float(d[k]) for k in ("lam", "gamma", "output_gamma")}
    p.update({k: int(d[k]) for k in ("input_sketch", "output_sketch", "seed")})
    return X, d["y"].astype(np.float64), Xt, d["yt"].astype(np.float64), p


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


def rbf(gamma):
    from sklearn.metrics.pairwise import rbf_kernel

    return lambda A, B=None: rbf_kernel(A, B, gamma=gamma)


def okr_method(name, X, Y, Xt, Yt, p):
    import okr

    if name == "okr-iokr":
        est = okr.IOKR(lam=p["lam"], gamma=p["gamma"], output_gamma=p["output_gamma"])
    else:
        est = okr.SISOKR(
            input_sketch=f"uniform:{p['input_sketch']}",
            output_sketch=f"gaussian:{p['output_sketch']}",
            lam=p["lam"],
            gamma=p["gamma"],
            output_gamma=p["output_gamma"],
            random_state=p["seed"],
        )
    t = time.perf_counter()
    est.fit(X, Y)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    P = est.predict(Xt)
    return fit, time.perf_counter() - t, np.asarray(P, dtype=np.float64)


def numpy_iokr(X, Y, Xt, p):
    import scipy.linalg

    kx, ky = rbf(p["gamma"]), rbf(p["output_gamma"])
    t = time.perf_counter()
    n = X.shape[0]
    K = kx(X)
    K[np.diag_indices(n)] += n * p["lam"]
    chol = scipy.linalg.cho_factor(K, overwrite_a=True)
    cand = distinct_rows(Y)
    W = scipy.linalg.cho_solve(chol, ky(Y, cand))  # (K + n lam I)^-1 Ky(Y, C)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    scores = kx(Xt, X) @ W
    P = cand[np.argmax(scores, axis=1)]
    return fit, time.perf_counter() - t, P


def numpy_sisokr(X, Y, Xt, p):
    kx, ky = rbf(p["gamma"]), rbf(p["output_gamma"])
    rng = np.random.default_rng(p["seed"])
    n = X.shape[0]
    s_in, s_out = p["input_sketch"], p["output_sketch"]
    t = time.perf_counter()
    idx = rng.choice(n, size=s_in, replace=False)
    scale = np.sqrt(n / s_in)  # uniform sub-sampling sketch R = sqrt(n/s) rows of I
    KRt = kx(X, X[idx]) * scale
    B = KRt.T @ KRt + n * p["lam"] * (kx(X[idx]) * scale**2)
    M = np.linalg.solve(B + 1e-8 * np.eye(s_in), KRt.T)
    S = rng.normal(size=(s_out, n)) / np.sqrt(s_out)  # Gaussian output sketch
    Ky = ky(Y)
    KySt = Ky @ S.T
    SKySt = S @ KySt
    cand = distinct_rows(Y)
    SKyC = S @ ky(Y, cand)
    right = M @ KySt @ np.linalg.pinv(SKySt) @ SKyC
    fit = time.perf_counter() - t
    t = time.perf_counter()
    scores = (kx(Xt, X[idx]) * scale) @ right
    P = cand[np.argmax(scores, axis=1)]
    return fit, time.perf_counter() - t, P


def peer(name, X, Y, Xt, p):
    kx, ky = rbf(p["gamma"]), rbf(p["output_gamma"])
    if name == "peer-iokr":
        from stpredictions.models.IOKR.model import IOKR

        m = IOKR()
        t = time.perf_counter()
        m.fit(X, Y, p["lam"], input_kernel=kx)
        fit = time.perf_counter() - t
        cand = distinct_rows(Y)
        t = time.perf_counter()
        P = m.predict(Xt, cand, output_kernel=ky)
        return fit, time.perf_counter() - t, P
    from stpredictions.models.IOKR.Sketch import Gaussian, SubSample
    from stpredictions.models.IOKR.SketchedIOKR import SISOKR

    np.random.seed(p["seed"])
    n = X.shape[0]
    m = SISOKR()
    t = time.perf_counter()
    m.fit(X, Y, SubSample((p["input_sketch"], n)), Gaussian((p["output_sketch"], n)), p["lam"], kx, ky)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    P = m.predict(Xt, distinct_rows(Y))
    return fit, time.perf_counter() - t, P


def main():
    method, path = sys.argv[1], sys.argv[2]
    if method == "gemm":
        print(json.dumps({"method": method, **gemm()}))
        return
    X, Y, Xt, Yt, p = load(path)
    if method.startswith("okr-"):
        fit, dec, P = okr_method(method, X, Y, Xt, Yt, p)
    elif method == "numpy-iokr":
        fit, dec, P = numpy_iokr(X, Y, Xt, p)
    elif method == "numpy-sisokr":
        fit, dec, P = numpy_sisokr(X, Y, Xt, p)
    else:
        fit, dec, P = peer(method, X, Y, Xt, p)
    out = {"method": method, "fit_s": fit, "decode_s": dec, "f1": f1_samples(Yt, P), "peak_mb": peak_mb()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
