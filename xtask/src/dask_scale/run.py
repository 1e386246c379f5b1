"""`cargo xtask reproduce dask-scale`: Nystroem KRR on the Bookmarks-shaped
stand-in, fitted in one process and through okr.dask on a LocalCluster of
two single-threaded worker processes (127.0.0.1), in one run.

    python run.py TRAIN.arff TEST.arff N_LABELS ANCHORS PARTITIONS OUT.json
"""

import json
import sys
import time

import numpy as np


def f1_samples(Y, P):
    inter = (Y * P).sum(axis=1)
    size = Y.sum(axis=1) + P.sum(axis=1)
    return float(np.mean(np.divide(2.0 * inter, size, out=np.zeros(len(size)), where=size > 0)))


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    train, test, n_labels, m, parts, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    import dask.array as da
    from distributed import Client, LocalCluster
    from sklearn.base import clone

    import okr
    import okr.dask

    X, Y = okr.load_arff(train, n_labels)
    Xt, Yt = okr.load_arff(test, n_labels)
    X, Xt = X.toarray(), Xt.toarray()
    Y, Yt = Y.toarray().astype(np.int64), Yt.toarray()
    n = X.shape[0]
    from sklearn.metrics.pairwise import euclidean_distances

    sq = euclidean_distances(X[:500], squared=True)
    gamma = 1.0 / (2.0 * np.median(sq[np.triu_indices(500, 1)]))
    output_gamma = 1.0 / (2.0 * max(Y.sum(1).mean(), 1.0))
    est = okr.NystroemKRR(n_components=m, gamma=gamma, output_gamma=output_gamma, lam=1e-4, random_state=0, n_jobs=2)

    _reset_peak()  # the peak of the single fit + decode only, not of loading
    t = time.perf_counter()
    single = clone(est).fit(X, Y)
    single_fit = time.perf_counter() - t
    t = time.perf_counter()
    p_single = single.predict(Xt)
    single_decode = time.perf_counter() - t
    single_rss = _peak_mb()

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None)
    client = Client(cluster)
    try:
        rows = -(-n // parts)
        dX, dY = da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(Y, chunks=(rows, Y.shape[1]))
        dX, dY = client.persist(dX), client.persist(dY)  # the data live on the workers
        client.wait_for_workers(2)
        # Forked workers inherit the driver's peak RSS: reset it (Linux, clear_refs 5).
        client.run(_reset_peak)
        t = time.perf_counter()
        dist = okr.dask.fit(clone(est).set_params(n_jobs=1), dX, dY, client=client)
        dist_fit = time.perf_counter() - t
        t = time.perf_counter()
        p_dist = client.compute(okr.dask.predict(dist, client.persist(da.from_array(Xt, chunks=(-(-len(Xt) // parts), Xt.shape[1]))))).result()
        dist_decode = time.perf_counter() - t
        worker_rss = client.run(_peak_mb)
    finally:
        client.close()
        cluster.close()
    k_total = single.model_.n_atoms
    stat_bytes = [8 * (m * m + m * min(k_total, rows) + rows) for _ in range(parts)]
    gemm = 2000
    a, b = np.random.default_rng(0).normal(size=(2, gemm, gemm))
    a @ b
    t = time.perf_counter()
    a @ b
    gflops = 2 * gemm**3 / (time.perf_counter() - t) / 1e9
    result = {
        "n_train": n,
        "n_test": len(Xt),
        "anchors": m,
        "partitions": parts,
        "single": {"fit_s": single_fit, "decode_s": single_decode, "f1": f1_samples(Yt, p_single), "peak_mb": single_rss},
        "dask": {
            "fit_s": dist_fit,
            "decode_s": dist_decode,
            "f1": f1_samples(Yt, p_dist),
            "worker_peak_mb": sorted(worker_rss.values()),
            "statistics_bytes_upper_bound": int(sum(stat_bytes)),
            "anchor_rows_bytes": 8 * m * X.shape[1],
        },
        "max_abs_decision_diff": float(np.max(np.abs(single.decision_function(Xt[:200]) - dist.decision_function(Xt[:200])))),
        "dgemm_gflops_numpy": gflops,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
