"""Regression tests for the Python findings of the hostile-input probe
(issue 35): each test is named after its finding (C2, C3, C6, C7, S1, S5,
S6, P5). Cases that used to abort the interpreter run in a child process
under an address-space limit, so that a regression fails the test instead
of killing pytest."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import okr

SUPERVISED = [
    okr.IOKR,
    okr.ReducedRankIOKR,
    okr.KDE,
    okr.SIOKR,
    okr.ISOKR,
    okr.SISOKR,
    okr.NystroemKRR,
    okr.NystroemReducedRankIOKR,
    okr.TraceNormSurrogate,
    okr.LEML,
]
UNSUPERVISED = [okr.KAE, okr.K2AE, okr.KPCA]

# The probe's limit: 4 GB of address space (the interpreter, numpy, scipy
# and sklearn take about 1 GB of it).
CHILD_LIMIT = 4 << 30

CHILD_PRELUDE = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np
    import scipy.sparse as sp
    import okr
    """
)


def run_child(body, timeout=120):
    """Runs ``body`` in a fresh interpreter under the address-space limit;
    returns its standard output (the test fails on an abort or a crash)."""
    script = CHILD_PRELUDE.format(limit=CHILD_LIMIT) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr[-3000:]}"
    return proc.stdout


def _labels(n=40, l=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, l)) < 0.4).astype(np.int64)


# ---------------------------------------------------------------- C2 ---


def _wide_csr(n_cols, n=40):
    """A CSR matrix of ``n`` rows declaring ``n_cols`` columns, 2 nonzeros a
    row (80 in all, as the probe's 1.6 KB matrix)."""
    rng = np.random.default_rng(0)
    indices = (np.arange(n)[:, None] * 2 + np.arange(2)).ravel() % 1000
    return sp.csr_matrix((rng.random(2 * n) + 0.5, indices, np.arange(0, 2 * n + 1, 2)), shape=(n, n_cols))


def test_c2_csr_declaring_2_31_columns_is_a_value_error_naming_the_width():
    # One child for all estimators (each used to abort the interpreter).
    names = [c.__name__ for c in SUPERVISED + UNSUPERVISED]
    out = run_child(
        f"""
        rng = np.random.default_rng(0)
        indices = (np.arange(40)[:, None] * 2 + np.arange(2)).ravel()
        X = sp.csr_matrix((rng.random(80) + 0.5, indices, np.arange(0, 81, 2)), shape=(40, 2**31))
        Y = (rng.random((40, 4)) < 0.4).astype(np.int64)
        for name in {names!r}:
            est = getattr(okr, name)()
            try:
                est.fit(X) if name in ("KAE", "K2AE", "KPCA") else est.fit(X, Y)
                print(name, "fitted")
            except ValueError as e:
                print(name, "ValueError:", e)
        """
    )
    lines = out.splitlines()
    assert len(lines) == len(names), out
    for name, line in zip(names, lines):
        assert line.startswith(f"{name} ValueError: the input declares 2147483648 columns"), line
        assert "at most 16777216" in line, line


def test_c2_kae_on_2_24_columns_is_a_value_error_not_a_panic():
    # 2^24 columns is okr's width limit itself: accepted as a width, but the
    # finite KAE densifies X (40 x 2^24 float64 = 5.4 GB): refused up front.
    out = run_child(
        """
        rng = np.random.default_rng(0)
        X = sp.csr_matrix((rng.random(40) + 0.5, rng.integers(0, 2**24, 40), np.arange(41)), shape=(40, 2**24))
        try:
            okr.KAE(max_iter=2).fit(X)
            print("fitted")
        except ValueError as e:
            print("ValueError:", e)
        """
    )
    assert "ValueError:" in out and "40 x 16777216" in out, out


def test_c2_width_limit_is_okr_s_one_limit():
    X = _wide_csr(2**24 + 1)
    with pytest.raises(ValueError, match=r"declares 16777217 columns: okr takes at most 16777216"):
        okr.IOKR().fit(X, _labels())
    with pytest.raises(ValueError, match=r"declares 16777217 labels"):
        okr.IOKR().fit(np.ones((40, 2)) * np.arange(40)[:, None], sp.csr_matrix((40, 2**24 + 1), dtype=np.int64))


# ---------------------------------------------------------------- C3 ---


def test_c3_sparse_y_of_ten_million_labels_is_not_densified():
    # One child for the kernel-output estimators (each used to abort it: their
    # candidates were densified, 40 x 10^7 float64). LEML is left out: its
    # label factor H is (n_labels, rank) by construction (10 s and 1 GB here).
    names = [c.__name__ for c in SUPERVISED if c is not okr.LEML]
    out = run_child(
        f"""
        rng = np.random.default_rng(0)
        n, L = 40, 10**7
        X = rng.normal(size=(n, 3))
        Y = sp.csr_matrix((np.ones(n, dtype=np.int64), rng.integers(0, L, n), np.arange(n + 1)), shape=(n, L))
        small = dict(
            ReducedRankIOKR=dict(rank=2), KDE=dict(rank=2), TraceNormSurrogate=dict(rank=2),
            NystroemKRR=dict(n_components=10),
            NystroemReducedRankIOKR=dict(n_components=10, subset_size=20, rank=2),
        )
        for name in {names!r}:
            try:
                est = getattr(okr, name)(**small.get(name, {{}})).fit(X, Y)
            except ValueError as e:
                print(name, "ValueError:", e)
                continue
            P = est.predict(X[:3])
            assert sp.issparse(P) and P.shape == (3, L), (name, type(P), P.shape)
            print(name, "fitted")
        """,
        timeout=600,
    )
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == names, out
    assert all(line.endswith("fitted") for line in lines), out


def test_c3_sparse_candidates_stay_sparse_and_predict_like_dense():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    Y = _labels(50, 5, seed=2)
    dense = okr.IOKR(lam=1e-2).fit(X, Y)
    sparse = okr.IOKR(lam=1e-2).fit(X, sp.csr_matrix(Y))
    assert isinstance(dense.candidates_, np.ndarray) and sp.issparse(sparse.candidates_)
    np.testing.assert_array_equal(sparse.candidates_.toarray(), dense.candidates_)
    np.testing.assert_array_equal(sparse.predict(X).toarray(), dense.predict(X))
    np.testing.assert_array_equal(sparse.predict_topk(X, k=3), dense.predict_topk(X, k=3))
    classes = okr.IOKR(lam=1e-2).fit(X, Y[:, 0] + 2 * Y[:, 1])
    assert set(classes.predict(X)) <= {0, 1, 2, 3}


# ---------------------------------------------------------------- C6 ---


def _threads():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


def test_c6_n_jobs_pools_are_capped_at_the_cores_and_reused():
    cores = os.cpu_count() or 1
    X = np.random.default_rng(0).normal(size=(30, 3))
    Y = _labels(30, 3)
    okr.IOKR().fit(X, Y)  # rayon's global pool exists from here on
    before = _threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(1, 61):
            okr.IOKR(n_jobs=k).fit(X, Y)
    after = _threads()
    # At most one kept pool per size below the cores (size `cores` is the
    # global pool): 1 + 2 + ... + (cores - 1) threads.
    assert after - before <= cores * (cores - 1) // 2, (before, after, cores)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(1, 61):
            okr.IOKR(n_jobs=k).fit(X, Y)
    # Reused, not rebuilt ("<=": threads of earlier tests may still be ending).
    assert _threads() <= after


def test_c6_n_jobs_above_the_cores_warns_and_is_capped():
    cores = os.cpu_count() or 1
    X = np.random.default_rng(0).normal(size=(30, 3))
    Y = _labels(30, 3)
    with pytest.warns(UserWarning, match=rf"n_jobs = 1000000: 1000000 threads requested, more than the {cores} cores"):
        okr.IOKR(n_jobs=10**6).fit(X, Y)
    with pytest.warns(UserWarning, match="more than the"):
        okr.IOKR(n_jobs=10**30).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning within the cores
        okr.IOKR(n_jobs=cores).fit(X, Y)
        okr.IOKR(n_jobs=-10**30).fit(X, Y)
    for bad in [0, 2.5, "2", True]:
        with pytest.raises(ValueError, match="n_jobs"):
            okr.IOKR(n_jobs=bad).fit(X, Y)


# ---------------------------------------------------------------- C7 ---


# The private fit entry point: okr's recipe as JSON (what the estimators send).
IOKR_RECIPE = '{"estimator": {"name": "iokr", "lambda": 0.001}}'


def test_c7_private_fit_with_a_decreasing_indptr_is_a_value_error():
    X = np.random.default_rng(0).normal(size=(3, 2))
    bad_y = sp.csr_matrix((3, 4), dtype=np.int64)
    bad_y.indptr = np.array([0, 2, 1, 2], dtype=np.int32)
    bad_y.indices = np.array([0, 1], dtype=np.int32)
    bad_y.data = np.ones(2, dtype=np.int64)
    with pytest.raises(ValueError, match="indptr decreases at row 1"):
        okr._okr.fit_recipe(IOKR_RECIPE, X, bad_y, "labels")
    bad_x = sp.csr_matrix((3, 2))
    bad_x.indptr = np.array([0, 2, 1, 2], dtype=np.int32)
    bad_x.indices = np.array([0, 1], dtype=np.int32)
    bad_x.data = np.ones(2)
    good_y = sp.csr_matrix(np.eye(3, dtype=np.int64))
    with pytest.raises(ValueError, match="indptr decreases at row 1"):
        okr._okr.fit_recipe(IOKR_RECIPE, bad_x, good_y, "labels")


def test_c7_no_panic_exception_reaches_python():
    # PanicException derives from BaseException: `except Exception` would
    # let it through. Hostile calls of the private module end in ValueError.
    X = np.random.default_rng(0).normal(size=(3, 2))
    Y = sp.csr_matrix(np.eye(3, dtype=np.int64))
    model, _ = okr._okr.fit_recipe(IOKR_RECIPE, X, Y, "labels")
    calls = [
        lambda: okr._okr.fit_recipe(IOKR_RECIPE, X, sp.csr_matrix((3, 3), dtype=np.int64), "labels"),
        lambda: okr._okr.fit_recipe(IOKR_RECIPE, X[:2], Y, "labels"),
        lambda: okr._okr.fit_recipe('{"estimator": {"name": "nope"}}', X, Y, "labels"),
        lambda: okr._okr.fit_recipe('{"estimator": {"name": "iokr"}, "input": {"kind": "features", "kernel": {"name": "polynomial", "degree": 1000000000000}}}', X, Y, "labels"),
        lambda: okr._okr.rank_per_query(model, X, Y, "labels", np.array([0, 1, 0, 1]), np.array([0]), np.full(3, -1)),
        lambda: okr._okr.rank_per_query(model, X, Y, "labels", None, None, np.full(3, 7)),
        lambda: okr._okr.fit_kpca({}, -1, X),
        lambda: okr._okr.fit_autoencoder("kae", {}, [-1], X),
        lambda: okr._okr.Model.from_bytes(b"\x00" * 64),
        lambda: model.decode(np.ones((2, 5))),
    ]
    for call in calls:
        try:
            call()
        except (ValueError, TypeError):
            pass
        except BaseException as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{type(e).__name__} escaped: {e}")


# ---------------------------------------------------------------- S1 ---


@pytest.mark.parametrize("values", [(-1, 1), (1, 2), (0, 2), (0.0, 0.5)])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_s1_label_indicators_other_than_0_1_are_refused_dense_and_sparse(values, layout):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = np.where(rng.random((30, 4)) < 0.5, values[0], values[1])
    if values == (0.0, 0.5):
        # Not integral: vector outputs when dense (scikit-learn's
        # continuous-multioutput); a sparse Y is always a label indicator.
        if layout == "dense":
            assert okr.IOKR().fit(X, Y)._mode == "vectors"
            return
    Y = sp.csr_matrix(Y) if layout == "sparse" else Y
    with pytest.raises(ValueError, match="must be a 0/1 or boolean label indicator"):
        okr.IOKR().fit(X, Y)
    with pytest.raises(ValueError, match="must be a 0/1 or boolean label indicator"):
        okr.LEML().fit(X, Y)


def test_s1_zero_one_and_boolean_indicators_are_accepted_alike():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = rng.random((30, 4)) < 0.5
    ref = okr.IOKR().fit(X, Y.astype(np.int64)).predict(X)
    for y in [Y, Y.astype(np.float32), sp.csr_matrix(Y), sp.csr_matrix(Y.astype(np.float64))]:
        got = okr.IOKR().fit(X, y).predict(X)
        np.testing.assert_array_equal(got.toarray() if sp.issparse(got) else got, ref)
    with pytest.raises(ValueError, match="Y_true must be a 0/1"):
        okr.f1_samples(np.where(Y, 1, -1), Y)


# ---------------------------------------------------------------- S5 ---


def test_s5_kpca_gives_n_components_columns_zero_padded_like_sklearn():
    from sklearn.decomposition import KernelPCA

    X = np.outer(np.arange(1.0, 7.0), [1.0, 2.0])  # rank 1 under the linear kernel
    for n_components, width in [(1, 1), (2, 2), (3, 3), (10, 6)]:
        model = okr.KPCA(n_components=n_components, kernel="linear").fit(X)
        ref = KernelPCA(n_components=n_components, kernel="linear").fit(X)
        assert model.embedding_.shape == ref.transform(X).shape == (6, width)
        assert model.transform(X[:2]).shape == (2, width)
        # Beyond the rank the codes are zero, as scikit-learn's.
        np.testing.assert_array_equal(model.transform(X[:2])[:, 1:], 0.0)
        # Uncentred: the first code is |x| scaled, up to sign.
        np.testing.assert_allclose(np.abs(model.embedding_[:, 0]), np.linalg.norm(X, axis=1), rtol=1e-10)


# ---------------------------------------------------------------- S6 ---


def _ranker():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = _labels(30, 4)
    return okr.IOKR(lam=1e-2).fit(X, Y), X[:3], Y[:6]


def test_s6_rank_candidates_refuses_float_groups_bad_truths_and_pools():
    model, Xt, pool = _ranker()
    groups = [[0, 1], [2, 3], [4, 5]]
    ok = model.rank_candidates(Xt, pool, groups, true_candidates=[0, -1, 5])
    assert [len(i) for i in ok.indices] == [2, 2, 2]
    with pytest.raises(ValueError, match=r"groups\[0\] must hold integer pool row indices"):
        model.rank_candidates(Xt, pool, [[0.5, 1.7], [2, 3], [4, 5]])
    with pytest.raises(ValueError, match=r"pool index 6 out of range"):
        model.rank_candidates(Xt, pool, [[0], [6], [4]])
    with pytest.raises(ValueError, match=r"groups\[2\] holds 18446744073709551615"):
        model.rank_candidates(Xt, pool, [[0], [1], np.array([2**64 - 1], dtype=np.uint64)])
    with pytest.raises(ValueError, match=r"true_candidates holds -2: expected pool rows in \[0, 6\) or -1"):
        model.rank_candidates(Xt, pool, groups, true_candidates=[0, -2, 5])
    with pytest.raises(ValueError, match="true_candidates must hold integer"):
        model.rank_candidates(Xt, pool, groups, true_candidates=[0.0, 2.0, 5.0])
    for v in [2, -1, np.nan]:
        bad = pool.astype(np.float64)
        bad[1, 1] = v
        with pytest.raises(ValueError, match="must be a 0/1 or boolean label indicator"):
            model.rank_candidates(Xt, bad, groups)
    for k in [0, 2.5, True]:
        with pytest.raises(ValueError, match="invalid k"):
            model.rank_candidates(Xt, pool, groups, k=k)
    with pytest.raises(ValueError, match="invalid memory_budget"):
        model.rank_candidates(Xt, pool, groups, memory_budget=-1)
    big = model.rank_candidates(Xt, pool, groups, k=10**30, memory_budget=10**30)
    assert [len(i) for i in big.indices] == [2, 2, 2]


# ---------------------------------------------------------------- P5 ---


def test_p5_out_of_range_integers_name_the_parameter():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    Y = _labels(20, 3)
    with pytest.raises(ValueError, match=r"^invalid kernel parameter degree = 1000000000000: an integer in 1..=i32::MAX$"):
        okr.IOKR(kernel="polynomial", degree=10**12).fit(X, Y)
    with pytest.raises(ValueError, match=r"invalid kernel parameter degree = 1000000000000"):
        okr.KAE(kernel="polynomial", degree=10**12).fit(X)
    with pytest.raises(ValueError, match=r"invalid parameter degree = 10{30}"):
        okr.IOKR(kernel="polynomial", degree=10**30).fit(X, Y)
    with pytest.raises(ValueError, match=r"^invalid parameter n_components = -1: expected an integer >= 1$"):
        okr.KPCA(n_components=-1).fit(X)
    with pytest.raises(ValueError, match=r"^invalid parameter n_components = 0: expected an integer >= 1$"):
        okr.KPCA(n_components=0).fit(X)
    with pytest.raises(ValueError, match=r"invalid parameter hidden_dims"):
        okr.KAE(hidden_dims=(-1,)).fit(X)
    with pytest.raises(ValueError, match=r"invalid parameter rank = -3: expected an integer >= 0"):
        okr.ReducedRankIOKR(rank=-3).fit(X, Y)


# ---------------------------------------------------------------- S4 ---


MEDIAN_OVERFLOW = (
    r"^the median squared distance between training inputs is inf: "
    r"scale the features or set gamma \(--input-gamma\)$"
)


def test_s4_overflowing_median_width_is_okr_s_one_message_everywhere():
    # Features near 1e154: the squared distances overflow. Every estimator
    # whose default width is the median heuristic (the supervised ones
    # through okr's recipe layer, K2AE and KPCA through the same check)
    # raises okr's message, not "gamma = 0" or a model fitted with it.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3)) * 3e154
    Y = _labels(12, 3)
    with pytest.raises(ValueError, match=MEDIAN_OVERFLOW):
        okr.IOKR(lam=1e-3).fit(X, Y)
    for make in (lambda: okr.K2AE(max_iter=5), lambda: okr.KPCA(n_components=2)):
        with pytest.raises(ValueError, match=MEDIAN_OVERFLOW):
            make().fit(X)
    # A finite median is used as before.
    small = X / 3e154
    np.testing.assert_allclose(
        okr.KPCA(n_components=2).fit(small).embedding_,
        okr.KPCA(n_components=2, gamma=_median_gamma(small)).fit(small).embedding_,
    )


def _median_gamma(X):
    """okr's median heuristic on at most 2000 rows: 1 / (2 median squared
    distance), the upper median of the pairwise squared distances."""
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    pairs = np.sort(d[np.triu_indices(len(X), 1)])
    return 1.0 / (2.0 * pairs[len(pairs) // 2])
