"""okr.dask on a LocalCluster (2 worker processes, 127.0.0.1): the
map-reduce fits of NystroemKRR, NystroemReducedRankIOKR, SIOKR and SISOKR
equal the single-machine
fits, survive a worker killed during the statistics, and report okr's errors
on the driver."""

import functools
import os
import sys
import uuid

import cloudpickle
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster
from sklearn.base import clone

import okr
import okr.dask

# The hooks below run on the workers, which cannot import this test module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def _data(seed=0, n=230, d=6, l=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, l)) + 0.5 * rng.normal(size=(n, l)) > 0.3).astype(np.int64)
    return X, Y


EST = okr.NystroemKRR(n_components=40, gamma=0.2, output_gamma=0.3, lam=1e-3, random_state=3)
ESTIMATORS = {
    "nystroem": EST,
    "nystroem_rr": okr.NystroemReducedRankIOKR(
        n_components=40, subset_size=60, rank=4, gamma=0.2, output_gamma=0.3, lam=1e-3, random_state=6
    ),
    "siokr": okr.SIOKR(input_sketch="uniform:40", gamma=0.2, output_gamma=0.3, lam=1e-3, random_state=4),
    "sisokr": okr.SISOKR(
        input_sketch="uniform:40", output_sketch="gaussian:20", gamma=0.2, output_gamma=0.3, lam=1e-3, random_state=5
    ),
}


@pytest.mark.parametrize("kind", ["labels", "vectors"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_distributed_fit_equals_the_single_machine_fit(client, kind, name):
    X, Y = _data()
    if kind == "vectors":
        Y = Y + np.linspace(0.1, 0.4, Y.shape[1])
    Xt = _data(seed=9)[0][:50]
    single = clone(ESTIMATORS[name]).fit(X, Y)
    dist = okr.dask.fit(
        clone(ESTIMATORS[name]), da.from_array(X, chunks=(37, 6)), da.from_array(Y, chunks=(37, 5)), client=client
    )
    assert type(dist) is type(single)
    assert dist.dask_report_["partitions"] == 7
    np.testing.assert_array_equal(dist.candidates_, single.candidates_)
    a, b = single.decision_function(Xt), dist.decision_function(Xt)
    assert np.max(np.abs(a - b)) <= 1e-10 * (1 + np.max(np.abs(a)))
    np.testing.assert_array_equal(single.predict(Xt), dist.predict(Xt))
    # Prediction mapped over partitions with the model shipped once.
    lazy = okr.dask.predict(dist, da.from_array(Xt, chunks=(20, 6)), client=client)
    np.testing.assert_array_equal(client.compute(lazy).result(), np.asarray(single.predict(Xt), dtype=float))
    lazy = okr.dask.decision_function(dist, da.from_array(Xt, chunks=(20, 6)))
    np.testing.assert_allclose(client.compute(lazy).result(), a, rtol=1e-9, atol=1e-10)


def _kill_once(marker):
    """Kills the worker process the first time any partition starts."""
    if not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write("killed")
        os._exit(1)


def test_a_worker_killed_during_the_statistics_is_retried(client, tmp_path):
    X, Y = _data(seed=1)
    Xt = _data(seed=8)[0][:30]
    est = ESTIMATORS["sisokr"]
    single = clone(est).fit(X, Y)
    marker = str(tmp_path / "killed")
    dist = okr.dask.fit(
        clone(est),
        da.from_array(X, chunks=(60, 6)),
        da.from_array(Y, chunks=(60, 5)),
        client=client,
        partition_hook=functools.partial(_kill_once, marker),
    )
    assert os.path.exists(marker), "the hook ran and killed a worker"
    a, b = single.decision_function(Xt), dist.decision_function(Xt)
    assert np.max(np.abs(a - b)) <= 1e-10 * (1 + np.max(np.abs(a)))


@pytest.mark.parametrize("name", ["nystroem", "siokr"])
def test_a_bad_row_raises_okrs_error_on_the_driver(client, name):
    X, Y = _data(seed=2)
    X[150, 2] = np.nan
    with pytest.raises(ValueError, match=r"non-finite value \(NaN or infinity\) at row"):
        okr.dask.fit(
            clone(ESTIMATORS[name]), da.from_array(X, chunks=(50, 6)), da.from_array(Y, chunks=(50, 5)), client=client
        )


def test_delayed_partitions_fit_as_arrays_do(client):
    import dask

    X, Y = _data(seed=4)
    est = ESTIMATORS["siokr"]
    single = clone(est).fit(X, Y)
    bounds = [0, 70, 71, 160, 230]
    parts = [(dask.delayed(X[a:b]), dask.delayed(Y[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
    dist = okr.dask.fit(clone(est), parts, None, client=client)
    Xt = _data(seed=7)[0][:20]
    a, b = single.decision_function(Xt), dist.decision_function(Xt)
    assert np.max(np.abs(a - b)) <= 1e-10 * (1 + np.max(np.abs(a)))
    # Prediction over delayed blocks, dense and sparse.
    import scipy.sparse as sp

    blocks = [dask.delayed(Xt[:8]), dask.delayed(sp.csr_matrix(Xt[8:]))]
    preds = client.gather(client.compute(okr.dask.predict(dist, blocks, client=client)))
    np.testing.assert_array_equal(np.concatenate(preds), np.asarray(single.predict(Xt), dtype=float))


def _load_counted(X, lo, hi, log_dir):
    """Rows lo..hi of X, leaving one file in log_dir per call."""
    with open(os.path.join(log_dir, f"{lo}-{uuid.uuid4().hex}"), "w"):
        pass
    return X[lo:hi]


def test_each_delayed_partition_is_read_once(client, tmp_path):
    import dask

    X, Y = _data(seed=5)
    bounds = [0, 100, 230]
    parts = [
        (dask.delayed(_load_counted)(X, a, b, str(tmp_path)), dask.delayed(Y[a:b])) for a, b in zip(bounds[:-1], bounds[1:])
    ]
    dist = okr.dask.fit(clone(EST), parts, None, client=client)
    # Shapes, the anchors' rows and the statistics all read the persisted partitions.
    assert sorted(p.name.split("-")[0] for p in tmp_path.iterdir()) == ["0", "100"]
    report = dist.dask_report_
    assert all(report[k] >= 0.0 for k in ("plan_s", "statistics_s", "finalize_s"))


def test_tasks_use_the_worker_thread_count(client):
    # Two single-threaded workers on one machine must not each start a pool of all its cores.
    assert client.submit(okr.dask._worker_threads, None, pure=False).result() == 1
    assert okr.dask._worker_threads(7) == 7  # on the driver: the default


def test_other_estimators_and_leverage_sketches_are_refused():
    X, Y = _data()
    Xd, Yd = da.from_array(X, chunks=(100, 6)), da.from_array(Y, chunks=(100, 5))
    with pytest.raises(TypeError, match="NystroemReducedRankIOKR, SIOKR and SISOKR"):
        okr.dask.fit(okr.IOKR(gamma=0.2, output_gamma=0.3), Xd, Yd)
    est = okr.SIOKR(input_sketch="leverage:20", gamma=0.2, output_gamma=0.3)
    with pytest.raises(ValueError, match="leverage scores need all rows"):
        okr.dask.fit(est, Xd, Yd)


def test_widths_must_be_given():
    X, Y = _data()
    est = okr.NystroemKRR(n_components=10, random_state=0)
    with pytest.raises(ValueError, match="needs gamma and output_gamma"):
        okr.dask.fit(est, da.from_array(X, chunks=(100, 6)), da.from_array(Y, chunks=(100, 5)))


@pytest.mark.parametrize("name", ["nystroem", "nystroem_rr"])
def test_predict_topk_mapped_over_blocks_equals_the_single_machine_ranking(client, name):
    X, Y = _data(seed=5)
    Xt = _data(seed=6)[0][:45]
    est = clone(ESTIMATORS[name]).fit(X, Y)
    out, scores = est.predict_topk(Xt, k=4, return_scores=True)
    lazy_out, lazy_scores = okr.dask.predict_topk(
        est, da.from_array(Xt, chunks=(20, 6)), k=4, return_scores=True, client=client
    )
    got_out, got_scores = client.compute([lazy_out, lazy_scores], sync=True)
    assert got_out.shape == (45, 4, Y.shape[1]) and got_out.dtype == out.dtype
    np.testing.assert_array_equal(got_out, out)
    np.testing.assert_allclose(got_scores, scores, rtol=1e-12, atol=1e-12)
    # Without return_scores: the candidates only; k beyond the candidates is capped.
    lazy = okr.dask.predict_topk(est, da.from_array(Xt, chunks=(30, 6)), k=10**6, client=client)
    np.testing.assert_array_equal(client.compute(lazy).result(), est.predict_topk(Xt, k=10**6))
    # Delayed blocks give delayed (candidates, scores) pairs.
    import dask

    pairs = okr.dask.predict_topk(est, [dask.delayed(Xt[:10]), dask.delayed(Xt[10:])], k=2, client=client)
    got = client.gather(client.compute(pairs))
    np.testing.assert_array_equal(np.concatenate([g[0] for g in got]), est.predict_topk(Xt, k=2))
    with pytest.raises(ValueError, match="invalid k"):
        okr.dask.predict_topk(est, da.from_array(Xt, chunks=(20, 6)), k=0, client=client)
