"""okr on a Dask cluster: Nystroem KRR fitted as a map-reduce, prediction
mapped over partitions.

The fit needs the data only through sums over training rows (see the Rust
docs of ``okr_estimators::nystroem::NystroemStats``): the driver draws the
anchors (the single-machine draw) and gathers their rows; every partition
computes its statistics on a worker (``K_mp K_pm``, ``m x m``, and one
``m``-column per distinct output: ``m^2 + m k_p`` doubles shipped back);
statistics are summed in a tree; the driver factorizes and solves once. The
model equals the single-machine ``NystroemKRR`` fit up to rounding (tested
to 1e-10). Kernel widths must be given (their defaults are medians over the
whole data).

    from dask.distributed import Client
    import dask.array as da, okr, okr.dask
    client = Client(...)                                   # any Dask cluster
    X = da.from_zarr(...); Y = da.from_zarr(...)           # rows chunked alike
    est = okr.NystroemKRR(n_components=5000, gamma=1e-3, output_gamma=0.2, random_state=0)
    okr.dask.fit(est, X, Y)                                # an ordinary fitted estimator
    labels = okr.dask.predict(est, X_test).compute()

A failing task (a worker that dies) is retried by Dask; okr's errors (a NaN
in a partition) reach the driver as the ``ValueError`` okr raised.
"""

import numpy as np
import scipy.sparse as sp

from . import _okr
from ._base import _label_csr
from .estimators import NystroemKRR

__all__ = ["fit", "predict", "decision_function"]


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as e:  # pragma: no cover - dask is a test requirement
        raise ImportError("okr.dask needs Dask: pip install 'dask[distributed]'") from e
    return dask, da


def _rows(x):
    x = np.asarray(x, dtype=np.float64)
    # Arrays received over the network may be unaligned views of a frame.
    if not x.flags.aligned:
        return x.copy()
    return x if (x.flags.c_contiguous or x.flags.f_contiguous) else np.ascontiguousarray(x)


def _outputs(y, kind):
    return _label_csr(y) if kind == "labels" else np.ascontiguousarray(_rows(y))


def _partition_stats(params, anchors, anchor_indices, x, y, kind, n, hook):
    if hook is not None:
        hook()
    return _okr.nystroem_partition_stats(
        params, _rows(anchors), anchor_indices, _rows(x), _outputs(y, kind), kind, n, 1
    )


def _row_partitions(X, Y):
    """(x, y) delayed pairs over the same row blocks."""
    _, da = _dask()
    X = da.asarray(X)
    Y = da.asarray(Y)
    if Y.ndim != 2 or X.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(f"X {X.shape} and Y {Y.shape} must be 2-D with the same number of rows")
    X = X.rechunk({1: -1})
    Y = Y.rechunk({0: X.chunks[0], 1: -1})
    return list(zip(X.to_delayed().ravel(), Y.to_delayed().ravel())), X


def fit(estimator, X, Y, *, y_kind=None, client=None, partition_hook=None):
    """Fit ``estimator`` (a :class:`okr.NystroemKRR` with ``gamma`` and
    ``output_gamma`` set) on dask arrays ``X`` ``(n, d)`` and ``Y`` ``(n, p)``
    whose rows are chunked alike. ``Y`` is a 0/1 label indicator
    (``y_kind="labels"``, the default for integer or boolean ``Y``) or vector
    outputs (``"vectors"``, the default for float ``Y``). Runs on ``client``
    (default: the current Dask client or scheduler). ``partition_hook``, if
    given, is called on the worker before each partition (tests use it to
    kill a worker). Returns the fitted estimator."""
    dask, _ = _dask()
    if not isinstance(estimator, NystroemKRR):
        raise TypeError(f"okr.dask.fit fits NystroemKRR, not {type(estimator).__name__}")
    if estimator.gamma is None or estimator.output_gamma is None:
        raise ValueError("okr.dask needs gamma and output_gamma (their defaults are medians over the whole data)")
    parts, X = _row_partitions(X, Y)
    n, d = X.shape
    if y_kind is None:
        y_kind = "vectors" if np.dtype(Y.dtype).kind in "fc" else "labels"
    if y_kind not in ("labels", "vectors"):
        raise ValueError(f"invalid y_kind = {y_kind!r}: expected 'labels' or 'vectors'")
    params = estimator._params_for_okr()
    anchor_indices = _okr.nystroem_anchor_indices(params, n)
    anchors = _rows(X[np.asarray(anchor_indices)].compute())
    anchors_node = dask.delayed(anchors, pure=True)
    stats = [
        dask.delayed(_partition_stats, pure=False)(params, anchors_node, anchor_indices, x, y, y_kind, n, partition_hook)
        for x, y in parts
    ]
    while len(stats) > 1:  # a tree of pairwise sums, in row order
        stats = [
            dask.delayed(_okr.nystroem_merge, pure=False)(stats[i], stats[i + 1], y_kind) if i + 1 < len(stats) else stats[i]
            for i in range(0, len(stats), 2)
        ]
    merged = client.compute(stats[0]).result() if client is not None else stats[0].compute()
    output_dim = Y.shape[1]
    estimator.model_ = _okr.nystroem_finalize(params, anchors, merged, y_kind, output_dim, n, estimator.n_jobs)
    estimator.candidates_ = estimator.model_.candidates()
    estimator.n_outputs_ = estimator.model_.output_dim
    estimator.n_features_in_ = d
    estimator._mode = y_kind
    estimator._y_sparse = False
    estimator._y_dtype = np.dtype(Y.dtype)
    return estimator


def _apply(method, estimator, X, width):
    dask, da = _dask()
    X = da.asarray(X).rechunk({1: -1})
    # One graph node holds the model: shipped once to each worker that needs it.
    est = dask.delayed(estimator, pure=True)
    blocks = [
        da.from_delayed(dask.delayed(method)(est, b), shape=(rows, width), dtype=np.float64)
        for b, rows in zip(X.to_delayed().ravel(), X.chunks[0])
    ]
    return da.concatenate(blocks, axis=0)


def _predict_block(est, x):
    out = est.predict(x)
    return out.toarray() if sp.issparse(out) else np.asarray(out, dtype=np.float64)


def _decision_block(est, x):
    return est.decision_function(x)


def predict(estimator, X):
    """``estimator.predict`` over the row blocks of the dask array ``X``
    (a lazy dask array, float64)."""
    return _apply(_predict_block, estimator, X, estimator.n_outputs_)


def decision_function(estimator, X):
    """``estimator.decision_function`` over the row blocks of ``X`` (lazy)."""
    return _apply(_decision_block, estimator, X, estimator.n_outputs_)
