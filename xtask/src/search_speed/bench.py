"""`cargo xtask reproduce search-speed`, in one process: okr.SearchCV and
scikit-learn's GridSearchCV over the same grid and the same folds on one
label-set data set; prints one JSON object with both times and the largest
difference between their grid scores.

    python bench.py DATASET OUT_DIR

SearchCV runs okr tune's search (one eigendecomposition of the fold's Gram
per width scores every ridge); GridSearchCV refits okr.IOKR per cell and
fold and scores it with IOKR.score (example-based F1), serially
(``n_jobs=1``; okr's own threads run inside every fit, as inside SearchCV).
"""

import json
import os
import sys
import time

import numpy as np

WIDTHS = [0.5, 1.0, 2.0]  # multipliers c of gamma = c / median squared distance
N_LABELS = {"bibtex": 159, "corel5k": 374, "emotions": 6, "yeast": 14}


def main():
    import okr
    from sklearn.model_selection import GridSearchCV

    name = sys.argv[1]
    file = "Corel5k" if name == "corel5k" else name  # Mulan's spelling
    X, Y = okr.load_arff(os.path.join(okr.data_dir(), name, f"{file}-train.arff"), N_LABELS[name])
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    Y = (Y.toarray() if hasattr(Y, "toarray") else np.asarray(Y)).astype(np.int8)

    search = okr.SearchCV(okr.IOKR(), cv=3, widths=WIDTHS, refit=False)
    load_okr = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    search.fit(X, Y)
    okr_seconds, okr_cpu = time.perf_counter() - t, time.process_time() - c

    folds = list(search.split(X))
    res = search.cv_results_
    gammas = sorted({float(g) for g in res["param_gamma"]})
    lambdas = sorted({float(v) for v in res["param_lam"]})
    grid = GridSearchCV(okr.IOKR(), {"gamma": gammas, "lam": lambdas}, cv=folds, refit=False, n_jobs=1)
    load_sklearn = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    grid.fit(X, Y)
    sklearn_seconds, sklearn_cpu = time.perf_counter() - t, time.process_time() - c
    load_end = os.getloadavg()[0]

    ours = {(float(p["gamma"]), float(p["lam"])): s for p, s in zip(res["params"], res["mean_test_score"])}
    theirs = {
        (float(p["gamma"]), float(p["lam"])): s
        for p, s in zip(grid.cv_results_["params"], grid.cv_results_["mean_test_score"])
    }
    max_diff = max(abs(ours[k] - theirs[k]) for k in ours)
    # Largest difference per ridge: the two solvers (one eigendecomposition
    # per fold, a Cholesky factorisation per cell) round differently, most
    # where n * lambda is far below the Gram's spread.
    by_lambda = {
        repr(lam): float(max(abs(ours[k] - theirs[k]) for k in ours if k[1] == lam)) for lam in lambdas
    }
    best_sklearn = grid.cv_results_["params"][int(np.argmax(grid.cv_results_["mean_test_score"]))]
    print(
        json.dumps(
            {
                "dataset": name,
                "n": int(X.shape[0]),
                "d": int(X.shape[1]),
                "n_labels": int(Y.shape[1]),
                "folds": len(folds),
                "n_gammas": len(gammas),
                "n_lambdas": len(lambdas),
                "cells": len(ours),
                "okr_seconds": okr_seconds,
                "sklearn_seconds": sklearn_seconds,
                "max_score_diff": float(max_diff),
                "score_diff_by_lambda": by_lambda,
                "okr_cpu_seconds": okr_cpu,
                "sklearn_cpu_seconds": sklearn_cpu,
                "load_before_okr": load_okr,
                "load_before_sklearn": load_sklearn,
                "load_end": load_end,
                "okr_best": {"gamma": float(search.best_params_["gamma"]), "lam": float(search.best_params_["lam"])},
                "sklearn_best": {"gamma": float(best_sklearn["gamma"]), "lam": float(best_sklearn["lam"])},
                "okr_best_score": float(search.best_score_),
                "sklearn_best_score": float(np.max(grid.cv_results_["mean_test_score"])),
                "n_jobs_threads": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
