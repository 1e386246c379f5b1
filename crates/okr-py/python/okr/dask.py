"""okr on a Dask cluster: the streamed fits of NystroemKRR,
NystroemReducedRankIOKR, SIOKR and SISOKR as a map-reduce, prediction,
top-k ranking and decision functions mapped over partitions.

These fits need the data only through sums over training rows (see the Rust
docs of ``okr_estimators::partition``):

1. the driver draws the anchors / sketches from the estimator's seed (the
   single-machine draws), gathers the few rows they touch and builds a
   *plan* (bytes: the hyper-parameters, the anchors or the sketch with its
   support rows; for Nystroem reduced rank also the output projection
   learned on its subset), shipped once to every worker;
2. every partition computes its *statistics* on a worker (``A^T A`` and,
   with a sketch, ``R K R^T``: ``m x m`` each; ``A^T P``: one ``m``-column
   per distinct output of the partition, or ``A^T T`` ``(m, rank)`` for
   Nystroem reduced rank), the GIL released;
3. statistics are summed in a tree of merges (refused for statistics of
   another plan or overlapping rows);
4. the driver whitens, factorizes and solves once (``O(m^3)``).

The fitted estimator equals the single-machine fit of the same class up to
rounding (tested to 1e-10). Kernel widths must be given (their defaults are
medians over the whole data).

    from dask.distributed import Client
    import dask.array as da, okr, okr.dask
    client = Client(...)                                   # any Dask cluster
    X = da.from_zarr(...); Y = da.from_zarr(...)           # rows chunked alike
    est = okr.SIOKR(input_sketch="uniform:5000", gamma=1e-3, output_gamma=0.2, random_state=0)
    okr.dask.fit(est, X, Y, client=client)                 # an ordinary fitted estimator
    labels = okr.dask.predict(est, X_test, client=client).compute()
    top5 = okr.dask.predict_topk(est, X_test, k=5, client=client).compute()

``X`` may also be a list of ``(x, y)`` pairs of delayed partitions (for
example read from files on the workers), with ``Y=None``.

A failing task (a worker that dies) is retried by Dask; okr's errors (a NaN
in a partition) reach the driver as the ``ValueError`` okr raised.
"""

import json
import numbers
import time

import numpy as np
import scipy.sparse as sp

from . import _okr
from ._base import _fitted_candidates, _json_ready, _label_csr
from .estimators import SIOKR, SISOKR, NystroemKRR, NystroemReducedRankIOKR

__all__ = ["fit", "predict", "predict_topk", "decision_function"]

_ESTIMATORS = (NystroemKRR, NystroemReducedRankIOKR, SISOKR, SIOKR)


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as e:  # pragma: no cover - dask is a test requirement
        raise ImportError("okr.dask needs Dask: pip install 'dask[distributed]'") from e
    return dask, da


def _rows(x):
    if sp.issparse(x):
        x = sp.csr_matrix(x, dtype=np.float64)
        x.sum_duplicates()
        x.sort_indices()
        return x
    x = np.asarray(x, dtype=np.float64)
    # Arrays received over the network may be unaligned views of a frame.
    if not x.flags.aligned:
        return x.copy()
    return x if (x.flags.c_contiguous or x.flags.f_contiguous) else np.ascontiguousarray(x)


def _outputs(y, kind):
    return _label_csr(y) if kind == "labels" else np.ascontiguousarray(_rows(y))


def _worker_threads(default):
    """The thread count of the Dask worker running this task (``default``
    outside a worker): okr's rayon pool must not exceed it, or the worker
    processes of one machine oversubscribe its cores."""
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return default


def _partition_stats(plan, x, y, kind, first_row, hook):
    if hook is not None:
        hook()
    return _okr.stream_statistics(plan, _rows(x), _outputs(y, kind), kind, first_row, _worker_threads(1))


def _take(x, local):
    out = x[local]
    return sp.csr_matrix(out) if sp.issparse(out) else np.asarray(out)


def _persist(dask, client, nodes):
    """``nodes`` computed once and kept in the cluster's memory (the fit
    reads every partition three times: shapes, the plan's rows, statistics)."""
    nodes = list(nodes)
    return list(client.persist(nodes)) if client is not None else list(dask.persist(*nodes))


def _row_partitions(X, Y, client):
    """(x, y) delayed pairs over the same row blocks (persisted), their row
    counts, n_features, output_dim, Y dtype, and what holds the persisted data."""
    dask, da = _dask()
    if Y is None:
        parts = list(X)
        if not parts:
            raise ValueError("no partitions")
        flat = _persist(dask, client, [p for pair in parts for p in pair])
        parts = list(zip(flat[0::2], flat[1::2]))
        # One small task per partition for its shape.
        shapes = dask.compute(*[dask.delayed(lambda x, y: (x.shape, y.shape, np.dtype(y.dtype)))(x, y) for x, y in parts])
        if any(xs[0] != ys[0] for xs, ys, _ in shapes):
            raise ValueError("a partition's x and y have different numbers of rows")
        sizes = [xs[0] for xs, _, _ in shapes]
        return parts, sizes, shapes[0][0][1], shapes[0][1][1], shapes[0][2], parts
    X = da.asarray(X)
    Y = da.asarray(Y)
    if Y.ndim != 2 or X.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(f"X {X.shape} and Y {Y.shape} must be 2-D with the same number of rows")
    X = X.rechunk({1: -1})
    Y = Y.rechunk({0: X.chunks[0], 1: -1})
    X, Y = _persist(dask, client, [X, Y])
    parts = list(zip(X.to_delayed().ravel(), Y.to_delayed().ravel()))
    # The persisted arrays hold the cluster's copies: the caller keeps them for the whole fit.
    return parts, list(X.chunks[0]), X.shape[1], Y.shape[1], np.dtype(Y.dtype), (X, Y)


def _gather(dask, parts, offsets, indices, side):
    """The rows at sorted global ``indices`` of the x (side 0) or y (side 1) partitions."""
    indices = np.asarray(indices, dtype=np.int64)
    pieces = []
    for p, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:])):
        local = indices[(indices >= lo) & (indices < hi)] - lo
        if len(local):
            pieces.append(dask.delayed(_take)(parts[p][side], local))
    if not pieces:
        return None
    pieces = dask.compute(*pieces)
    return sp.vstack(pieces, format="csr") if sp.issparse(pieces[0]) else np.concatenate(pieces, axis=0)


def _compute(dask, client, *nodes):
    if client is not None:
        return client.gather(client.compute(list(nodes)))
    return dask.compute(*nodes)


def fit(estimator, X, Y, *, y_kind=None, client=None, partition_hook=None):
    """Fit ``estimator`` (:class:`okr.NystroemKRR`,
    :class:`okr.NystroemReducedRankIOKR`, :class:`okr.SIOKR` or
    :class:`okr.SISOKR`, with ``gamma`` and ``output_gamma`` set) on dask
    arrays ``X`` ``(n, d)`` and ``Y`` ``(n, p)`` (rows chunked alike; ``Y`` is
    rechunked to ``X``'s rows), or on a list of ``(x, y)`` delayed partitions
    (``Y=None``). ``Y`` is a 0/1 label indicator (``y_kind="labels"``, the
    default for integer or boolean ``Y``) or vector outputs (``"vectors"``,
    the default for float ``Y``). Runs on ``client`` (default: the current
    Dask scheduler). ``partition_hook``, if given, is called on the worker
    before each partition's statistics (tests use it to kill a worker).

    Returns the estimator, fitted (the same class and attributes as a
    single-machine fit), with ``dask_report_``: the bytes of the plan, of the
    partition statistics and of the merged statistics, the partition count,
    and the wall seconds of the plan, statistics (with merges) and finalize
    steps.
    """
    dask, _ = _dask()
    if type(estimator) not in _ESTIMATORS:
        raise TypeError(
            "okr.dask.fit fits NystroemKRR, NystroemReducedRankIOKR, SIOKR and SISOKR, "
            f"not {type(estimator).__name__}"
        )
    if estimator.gamma is None or estimator.output_gamma is None:
        raise ValueError("okr.dask needs gamma and output_gamma (their defaults are medians over the whole data)")
    started = time.perf_counter()
    parts, sizes, d, output_dim, y_dtype, persisted = _row_partitions(X, Y, client)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(offsets[-1])
    if y_kind is None:
        y_kind = "vectors" if y_dtype.kind in "fc" else "labels"
    if y_kind not in ("labels", "vectors"):
        raise ValueError(f"invalid y_kind = {y_kind!r}: expected 'labels' or 'vectors'")
    # The recipe the single-machine fit would use: okr's defaults and checks.
    recipe = json.dumps(_json_ready(estimator._recipe(y_kind)))
    x_idx, y_idx = _okr.stream_plan_rows(recipe, n, d, y_kind, output_dim)
    x_rows = _gather(dask, parts, offsets, x_idx, 0)
    y_rows = _gather(dask, parts, offsets, y_idx, 1)
    if y_rows is None:
        y_rows = np.zeros((0, output_dim))
    plan = _okr.stream_plan(recipe, n, x_idx, _rows(x_rows), y_idx, _outputs(y_rows, y_kind), y_kind, output_dim)
    planned = time.perf_counter()
    # One graph node holds the plan: shipped once to each worker that needs it.
    plan_node = dask.delayed(plan, pure=True)
    stats = [
        dask.delayed(_partition_stats, pure=False)(plan_node, x, y, y_kind, int(lo), partition_hook)
        for (x, y), lo in zip(parts, offsets[:-1])
    ]
    sizes_node = dask.delayed(lambda *s: [len(b) for b in s])(*stats)
    level = stats
    while len(level) > 1:  # a tree of pairwise sums
        level = [
            dask.delayed(_okr.stream_merge, pure=False)(level[i], level[i + 1], y_kind) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    merged, stat_sizes = _compute(dask, client, level[0], sizes_node)
    del persisted  # the partitions' copies on the cluster can go
    reduced = time.perf_counter()
    estimator.model_ = _okr.stream_finalize(plan, merged, y_kind, estimator.n_jobs)
    finalized = time.perf_counter()
    estimator.n_outputs_ = estimator.model_.output_dim
    estimator.n_features_in_ = d
    estimator._mode = y_kind
    estimator._y_sparse = False
    estimator._y_dtype = y_dtype
    estimator.candidates_ = _fitted_candidates(estimator)
    estimator.dask_report_ = {
        "partitions": len(parts),
        "plan_bytes": len(plan),
        "statistics_bytes": int(sum(stat_sizes)),
        "merged_bytes": len(merged),
        # Driver wall seconds of each step: the plan (shapes, gathered rows),
        # statistics and merges on the cluster, the finalize.
        "plan_s": planned - started,
        "statistics_s": reduced - planned,
        "finalize_s": finalized - reduced,
    }
    return estimator


def _apply(method, estimator, X, width, client):
    dask, da = _dask()
    # The model is shipped once: scattered to every worker, or one graph node.
    est = client.scatter(estimator, broadcast=True) if client is not None else dask.delayed(estimator, pure=True)
    if isinstance(X, (list, tuple)):
        # Delayed blocks (dense or sparse, e.g. read on the workers): one delayed result each.
        return [dask.delayed(method)(est, b) for b in X]
    X = da.asarray(X).rechunk({1: -1})
    blocks = [
        da.from_delayed(dask.delayed(method)(est, b), shape=(rows, width), dtype=np.float64)
        for b, rows in zip(X.to_delayed().ravel(), X.chunks[0])
    ]
    return da.concatenate(blocks, axis=0)


def _on_worker_threads(est):
    """``est`` (a shallow copy sharing the fitted model) decoding with the
    worker's threads."""
    threads = _worker_threads(None)
    if threads is None or threads == est.n_jobs:
        return est
    # A shallow copy by hand: copy.copy would go through __reduce__, which
    # serializes the whole fitted model (0.6 s for a 150 MB model).
    shallow = object.__new__(type(est))
    shallow.__dict__.update(est.__dict__)
    shallow.n_jobs = threads
    return shallow


def _predict_block(est, x):
    out = _on_worker_threads(est).predict(x)
    return out.toarray() if sp.issparse(out) else np.asarray(out, dtype=np.float64)


def _decision_block(est, x):
    return _on_worker_threads(est).decision_function(x)


def predict(estimator, X, client=None):
    """``estimator.predict`` over the row blocks of the dask array ``X``
    (a lazy dask array, float64), the model scattered once to the workers
    of ``client`` (or one graph node without a client). ``X`` may also be a
    list of delayed blocks (dense or sparse): a list of delayed predictions
    is returned."""
    return _apply(_predict_block, estimator, X, estimator.n_outputs_, client)


def decision_function(estimator, X, client=None):
    """``estimator.decision_function`` over the row blocks of ``X`` (lazy)."""
    return _apply(_decision_block, estimator, X, estimator.n_outputs_, client)


def _topk_block(est, x, k):
    out, scores = _on_worker_threads(est).predict_topk(x, k=k, return_scores=True)
    return np.asarray(out), scores


def predict_topk(estimator, X, k=5, return_scores=False, client=None):
    """``estimator.predict_topk`` over the row blocks of ``X``: the ``k`` best
    candidates per row, best first, as a lazy dask array ``(n, k, n_outputs)``
    (``(n, k)`` class labels for class targets), and with ``return_scores``
    also their scores ``(n, k)`` (lower is better), both from one decode per
    block. ``X`` may also be a list of delayed blocks: a list of delayed
    ``(candidates, scores)`` pairs is returned."""
    if not (isinstance(k, numbers.Integral) and k >= 1):
        raise ValueError(f"invalid k = {k!r}: expected an integer >= 1")
    dask, da = _dask()
    k = int(min(k, estimator.candidates_.shape[0]))
    est = client.scatter(estimator, broadcast=True) if client is not None else dask.delayed(estimator, pure=True)
    if isinstance(X, (list, tuple)):
        return [dask.delayed(_topk_block)(est, b, k) for b in X]
    X = da.asarray(X).rechunk({1: -1})
    classes = getattr(estimator, "_mode", None) == "classes"
    tail = () if classes else (estimator.n_outputs_,)
    dtype = estimator.classes_.dtype if classes else (
        np.float64 if estimator._mode == "vectors" else np.dtype(estimator._y_dtype)
    )
    outs, scores = [], []
    for b, rows in zip(X.to_delayed().ravel(), X.chunks[0]):
        pair = dask.delayed(_topk_block)(est, b, k)  # one node: decoded once
        outs.append(da.from_delayed(pair[0], shape=(rows, k, *tail), dtype=dtype))
        scores.append(da.from_delayed(pair[1], shape=(rows, k), dtype=np.float64))
    out = da.concatenate(outs, axis=0)
    return (out, da.concatenate(scores, axis=0)) if return_scores else out
