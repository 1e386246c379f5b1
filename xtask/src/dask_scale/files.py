"""One run of `cargo xtask reproduce dask-scale`: NystroemKRR on the
Bookmarks-shaped stand-in, in this process ("single") or through a 2-worker
LocalCluster ("dask", partitions read from the .npy files on the workers).
Prints one JSON line: fit / decode seconds, F1, peak memory, bytes shipped."""

import json
import os
import resource
import sys
import time

import numpy as np
import scipy.sparse as sp

import okr
import okr.dask


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_x(d, name, rows=None):
    data = np.load(os.path.join(d, f"{name}_data.npy"), mmap_mode="r")
    indices = np.load(os.path.join(d, f"{name}_indices.npy"), mmap_mode="r")
    indptr = np.load(os.path.join(d, f"{name}_indptr.npy"))
    shape = tuple(np.load(os.path.join(d, f"{name}_shape.npy")))
    lo, hi = rows if rows is not None else (0, shape[0])
    a, b = indptr[lo], indptr[hi]
    return sp.csr_matrix(
        (np.array(data[a:b]), np.array(indices[a:b]), indptr[lo : hi + 1] - a), shape=(hi - lo, shape[1])
    )


def load_y(d, name, rows=None):
    return load_x(d, name, rows).toarray().astype(np.int64)


def main():
    mode, d = sys.argv[1], sys.argv[2]
    cfg = json.load(open(os.path.join(d, "config.json")))
    est = okr.NystroemKRR(
        n_components=cfg["m"], lam=cfg["lam"], gamma=cfg["gamma"], output_gamma=cfg["output_gamma"], random_state=0
    )
    Yt = load_y(d, "ytest")
    out = {"mode": mode}
    # Both modes are timed from the .npy files: the workers read their
    # partitions inside the timed fit / decode, so the single process does too.
    if mode == "single":
        t = time.perf_counter()
        X, Y = load_x(d, "xtrain"), load_y(d, "ytrain")
        est.fit(X, Y)
        out["fit_s"] = time.perf_counter() - t
        t = time.perf_counter()
        pred = est.predict(load_x(d, "xtest"))
        out["decode_s"] = time.perf_counter() - t
        out["peak_mb"] = peak_mb()
    else:
        import dask
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
            memory_limit=0,
        )
        client = Client(cluster)
        n, parts_n = cfg["n_train"], cfg["partitions"]
        bounds = np.linspace(0, n, parts_n + 1).astype(int)
        parts = [
            (dask.delayed(load_x)(d, "xtrain", (a, b)), dask.delayed(load_y)(d, "ytrain", (a, b)))
            for a, b in zip(bounds[:-1], bounds[1:])
        ]
        t = time.perf_counter()
        okr.dask.fit(est, parts, None, client=client)
        out["fit_s"] = time.perf_counter() - t
        out.update(est.dask_report_)
        # Test rows read on the workers too, in blocks; the model scattered once.
        t = time.perf_counter()
        nt = int(np.load(os.path.join(d, "xtest_shape.npy"))[0])
        tb = np.linspace(0, nt, parts_n + 1).astype(int)
        blocks = [dask.delayed(load_x)(d, "xtest", (a, b)) for a, b in zip(tb[:-1], tb[1:])]
        pred = np.concatenate(client.gather(client.compute(okr.dask.predict(est, blocks, client=client))))
        out["decode_s"] = time.perf_counter() - t
        out["model_bytes"] = len(est.model_.to_bytes())
        out["worker_peak_mb"] = sorted(client.run(peak_mb).values())
        out["peak_mb"] = peak_mb()
        client.close()
        cluster.close()
    out["f1"] = okr.f1_samples(Yt, np.asarray(pred))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
