"""Bring your own input model: okr's output side as scikit-learn pieces.

:class:`OutputEmbedding` is a transformer on the *targets*: it fits an
orthonormal basis of the output RKHS from training outputs alone and maps
outputs to their coordinates. :class:`SurrogateRegressor` fits any
scikit-learn regressor on those coordinates and decodes its predictions with
okr's decoder (``argmin_c k(c, c) - 2 z(x)^T z(c)`` over candidates, ties to
the first), so that the regressor becomes a structured predictor with the
methods of okr's estimators.
"""

import json
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from . import _okr
from ._base import OkrSurrogate, _fitted_candidates, _json_ready, _label_csr, _pickled_state, _unpickled_state

__all__ = ["OutputEmbedding", "SurrogateRegressor"]


def _is_indicator(Y):
    """Whether ``Y`` (dense 2-D or sparse) holds only 0 and 1."""
    values = Y.data if sp.issparse(Y) else np.asarray(Y)
    if values.dtype.kind not in "biuf":
        return False
    return bool(np.all((values == 0) | (values == 1)))


def _embedding_recipe(est, kind):
    """okr's embedding recipe (JSON) for the parameters of ``est``: names
    only; every ``None`` is left to okr's defaults."""
    kernel = {"name": est.output_kernel}
    if est.output_gamma is not None:
        kernel["gamma"] = est.output_gamma
    recipe = {
        "output": {"kind": "labels" if kind == "labels" else "vector", "kernel": kernel},
        "basis": est.basis,
        "seed": int(check_random_state(est.random_state).randint(np.iinfo(np.int32).max)),
    }
    if est.n_components is not None:
        recipe["n_components"] = est.n_components
    if est.sketch is not None:
        recipe["sketch"] = est.sketch
    return json.dumps(_json_ready(recipe))


class OutputEmbedding(TransformerMixin, BaseEstimator):
    """An orthonormal basis ``e_1..e_r`` of the output RKHS fitted from
    outputs alone; ``transform(Y)`` gives the coordinates
    ``z(y)_j = <e_j, psi(y)>``, ``(n_samples, r)``.

    ``Y`` is a 0/1 label indicator (dense or sparse: label sets) or a float
    matrix (vector outputs); the kind is fixed at ``fit``.

    Parameters: ``basis`` (``"exact"``: kernel PCA of the output Gram over
    the distinct training outputs, at full rank ``Z Z^T = K_y``;
    ``"sketch"``: the span of a sketch of the outputs, SISOKR's output side
    and DSOKR's sub-sampled basis; ``"nystroem"``: the span of anchor
    outputs), ``n_components`` (exact: a cap on the rank, default all;
    sketch: the sketch size; nystroem: the anchors; default 1000, capped at
    the outputs), ``sketch`` (the sketch kind: ``"uniform"`` (default),
    ``"gaussian"``, ``"sjlt"``, ... or a whole ``"KIND:m"``),
    ``output_kernel`` and ``output_gamma`` (as okr's estimators; ``None``:
    ``sigma^2 =`` mean labels per sample for label sets, the median
    heuristic for vectors), ``random_state`` (seeds the draw as okr's
    sketched estimators do: the same ``random_state`` gives ISOKR's sketch),
    ``n_jobs``.

    Fitted: ``embedding_`` (okr's basis; pickles as okr's bytes, ``save``
    writes the file ``okr decode --basis`` reads), ``n_components_``,
    ``eigenvalues_``.
    """

    def __init__(
        self,
        basis="exact",
        *,
        n_components=None,
        sketch=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
    ):
        self.basis = basis
        self.n_components = n_components
        self.sketch = sketch
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _outputs(self, Y, reset):
        """``(okr outputs, kind)``; the kind is decided at fit."""
        Y = validate_data(self, Y, accept_sparse="csr", dtype="numeric", reset=reset)
        if reset:
            self._mode = "labels" if (sp.issparse(Y) or type_of_target(Y) == "multilabel-indicator") and _is_indicator(Y) else "vectors"
        if self._mode == "labels":
            return _label_csr(Y), "labels"
        if sp.issparse(Y):
            Y = Y.toarray()
        return np.ascontiguousarray(Y, dtype=np.float64), "vectors"

    def fit(self, Y, y=None):
        """Fit the basis on the outputs ``Y``."""
        if self.basis not in ("exact", "sketch", "nystroem"):
            raise ValueError(f"invalid basis = {self.basis!r}: expected 'exact', 'sketch' or 'nystroem'")
        n = self.n_components
        if n is not None and not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= 1):
            raise ValueError(f"invalid n_components = {n!r}: expected an integer >= 1 or None")
        out, kind = self._outputs(Y, reset=True)
        self.embedding_, _ = _okr.fit_embedding(_embedding_recipe(self, kind), out, kind, self.n_jobs)
        self.n_components_ = self.embedding_.n_components
        self.eigenvalues_ = self.embedding_.eigenvalues()
        return self

    def transform(self, Y):
        """The coordinates ``(n_samples, n_components_)`` of outputs ``Y``."""
        check_is_fitted(self, "embedding_")
        out, kind = self._outputs(Y, reset=False)
        return self.embedding_.transform(out, kind, self.n_jobs)

    def get_feature_names_out(self, input_features=None):
        """``outputembedding0``, ``outputembedding1``, ..."""
        check_is_fitted(self, "embedding_")
        return np.asarray([f"outputembedding{i}" for i in range(self.n_components_)], dtype=object)

    def save(self, path):
        """Writes the basis file (atomically) that ``okr decode --basis`` reads."""
        check_is_fitted(self, "embedding_")
        self.embedding_.save(str(path))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __getstate__(self):
        state = super().__getstate__()
        if "embedding_" not in state:
            return state
        state = dict(state)
        state["embedding_"] = np.frombuffer(state["embedding_"].to_bytes(), dtype=np.uint8)
        return state

    def __setstate__(self, state):
        emb = state.get("embedding_")
        if isinstance(emb, np.ndarray):
            state = dict(state)
            state["embedding_"] = _okr.Embedding.from_bytes(emb.tobytes())
        super().__setstate__(state)


class SurrogateRegressor(OkrSurrogate):
    """Any scikit-learn regressor as a structured predictor: fit
    ``output_basis`` (an :class:`OutputEmbedding`, default
    ``OutputEmbedding()``) on the targets, fit ``regressor`` on ``(X, its
    coordinates)``, and decode the regressor's predicted coordinates with
    okr's decoder over the distinct training outputs (``predict``,
    ``predict_topk``) or given candidates (``rank_candidates``).

    Targets as okr's estimators take them: a 0/1 indicator (label sets),
    class labels, or a float matrix (vector outputs). Scores are
    ``k(c, c) - 2 z(x)^T z(c)``, lower is better, ties to the earlier
    candidate; with ``KernelRidge(kernel="rbf", alpha=n * lam)`` and the
    exact basis at full rank they are :class:`okr.IOKR`'s. A regressor
    without multi-output support goes through
    ``sklearn.multioutput.MultiOutputRegressor``. ``X`` is the regressor's
    business: anything it takes (text through a pipeline, images) works.

    Parameters: ``regressor``, ``output_basis``, ``n_jobs`` (okr's threads
    for the basis and the decoding), ``precision`` (``"f64"`` or ``"f32"``,
    as okr's estimators). Fitted: ``regressor_``, ``output_basis_``,
    ``candidates_``.
    """

    _model_class = _okr.Embedding

    def __init__(self, regressor=None, output_basis=None, *, n_jobs=None, precision="f64"):
        self.regressor = regressor
        self.output_basis = output_basis
        self.n_jobs = n_jobs
        self.precision = precision

    def fit(self, X, y, **fit_params):
        """Fit the basis on ``y``, then the regressor on ``X`` and the
        coordinates of ``y``; ``fit_params`` go to the regressor."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        if self.regressor is None:
            raise ValueError("SurrogateRegressor needs a regressor (e.g. sklearn.linear_model.Ridge())")
        if self.precision not in ("f64", "f32"):
            raise ValueError(f"invalid precision = {self.precision!r}: expected 'f64' or 'f32'")
        Y, kind = self._targets(y)
        if _num_samples(X) != Y.shape[0]:
            raise ValueError(f"X has {_num_samples(X)} samples, y has {Y.shape[0]}")
        basis = clone(self.output_basis) if self.output_basis is not None else OutputEmbedding()
        if basis.n_jobs is None and self.n_jobs is not None:
            basis.set_params(n_jobs=self.n_jobs)
        basis.fit(Y)
        Z = basis.transform(Y)
        self.output_basis_ = basis
        self.model_ = basis.embedding_
        self.regressor_ = clone(self.regressor).fit(X, Z, **fit_params)
        if hasattr(self.regressor_, "n_features_in_"):
            self.n_features_in_ = self.regressor_.n_features_in_
        if hasattr(self.regressor_, "feature_names_in_"):
            self.feature_names_in_ = self.regressor_.feature_names_in_
        self.candidates_ = _fitted_candidates(self)
        self.n_outputs_ = self.model_.output_dim
        return self

    def predict_coordinates(self, X):
        """The regressor's coordinates ``(n_samples, n_components)`` for ``X``."""
        check_is_fitted(self, "regressor_")
        Z = np.asarray(self.regressor_.predict(X), dtype=np.float64)
        if Z.ndim == 1:
            Z = Z.reshape(-1, 1)
        return np.ascontiguousarray(Z)

    def _decode(self, X, k):
        Z = self.predict_coordinates(X)
        return self.model_.decode(Z, k, None, "labels", self.n_jobs, self.precision)

    def _rank_inputs(self, X):
        return self.predict_coordinates(X)

    def _rank_per_query(self, Z, pool, kind, indptr, indices, truth, k, memory_budget):
        return self.model_.rank_per_query(Z, pool, kind, indptr, indices, truth, k, memory_budget, self.n_jobs)

    @available_if(lambda est: False)
    def decision_function(self, X):
        """Not available: the coordinates (``predict_coordinates``) are the scores."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __getstate__(self):
        return _pickled_state(BaseEstimator.__getstate__(self))

    def __setstate__(self, state):
        BaseEstimator.__setstate__(self, _unpickled_state(state, _okr.Embedding.from_bytes))
        if "output_basis_" in self.__dict__:
            # One basis, not two copies: the basis' own pickle is restored first.
            self.output_basis_.embedding_ = self.model_
