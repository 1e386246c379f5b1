"""The installed wheel, as a user without Rust gets it (`cargo xtask test`
runs this in a fresh virtual environment with no cargo on PATH; see
xtask/src/wheel.rs).

Checks, in order: no Rust toolchain is reachable and okr is imported from
the environment's site-packages (not from the source tree); the README's
Python example runs as written (skipped, with a line saying so, when the
Bibtex files are absent); a fitted model survives a pickle round trip with
identical predictions; one okr.dask fit on a LocalCluster (127.0.0.1, two
worker processes that import the installed okr) equals the single-machine
fit. Prints one line per check; exits non-zero on the first failure.

Usage: python check_wheel.py README.md
"""

import os
import pickle
import re
import shutil
import sys

import numpy as np


def say(msg):
    print(f"installed wheel: {msg}", flush=True)


def no_toolchain():
    for tool in ("cargo", "rustc", "maturin"):
        found = shutil.which(tool)
        assert found is None, f"{tool} is reachable at {found}: the check must run without a Rust toolchain"
    import okr

    where = os.path.realpath(okr.__file__)
    prefix = os.path.realpath(sys.prefix)
    assert where.startswith(prefix), f"okr was imported from {where}, not from the environment {prefix}"
    say(f"okr {okr.__version__} imported from {os.path.dirname(where)}; no cargo, rustc or maturin on PATH")


def readme_example(readme):
    text = open(readme, encoding="utf-8").read()
    section = text[text.index("\n## Python\n") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README's Python section has no python block"
    code = match.group(1)
    import okr

    bibtex = os.path.join(okr.data_dir(), "bibtex", "bibtex-train.arff")
    if not os.path.exists(bibtex):
        say(f"README example skipped: {bibtex} is absent (set OKR_DATA_DIR)")
        return
    namespace = {}
    exec(compile(code, f"{readme} (Python example)", "exec"), namespace)
    f1 = namespace["model"].score(namespace["Xt"], namespace["Yt"])
    assert 0.3 < f1 < 0.6, f"README example: IOKR's F1 on Bibtex is {f1}"
    assert namespace["top3"].shape == (5, 3, 159)
    say(f"README example ran as written (IOKR F1 on Bibtex {100 * f1:.2f})")


def data(seed=0, n=200, d=6, labels=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, labels)) + 0.5 * rng.normal(size=(n, labels)) > 0.3).astype(np.int64)
    return X, Y


def pickle_round_trip():
    import okr

    X, Y = data()
    model = okr.IOKR(lam=1e-3, gamma=0.2, output_gamma=0.3).fit(X, Y)
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(model.predict(X), again.predict(X))
    assert np.array_equal(model.decision_function(X), again.decision_function(X))
    say("pickle round trip: identical predictions and label scores")


def dask_fit():
    import dask.array as da
    from distributed import Client, LocalCluster

    import okr
    import okr.dask

    X, Y = data(1, n=230)
    est = okr.NystroemKRR(n_components=40, gamma=0.2, output_gamma=0.3, lam=1e-3, random_state=3)
    single = okr.NystroemKRR(**est.get_params()).fit(X, Y)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster, Client(cluster) as client:
        fitted = okr.dask.fit(est, da.from_array(X, chunks=(60, 6)), da.from_array(Y, chunks=(60, 5)), client=client)
    a = single.decision_function(X)
    gap = np.abs(fitted.decision_function(X) - a).max()
    assert gap <= 1e-10 * (1 + np.abs(a).max()), f"dask fit differs from the single-machine fit by {gap}"
    assert np.array_equal(fitted.predict(X), single.predict(X))
    say(f"okr.dask fit on a 2-worker LocalCluster equals the single-machine fit (max gap {gap:.1e})")


if __name__ == "__main__":
    no_toolchain()
    readme_example(sys.argv[1])
    pickle_round_trip()
    dask_fit()
    say("all checks passed")
