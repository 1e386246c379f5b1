"""The shared scikit-learn face of okr's kernel-output estimators."""

import json
import numbers
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.metrics import r2_score
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from . import _okr

__all__ = ["OkrSurrogate", "RankedCandidates", "f1_samples"]


def _inputs(est, X, reset):
    """X as okr reads it: a float64 array in C or F order (read in place by
    the Rust module, no copy when X already is one) or a CSR matrix with
    sorted, unique indices.

    Copies, and why: other dtypes are converted to float64 once (okr
    computes in f64); non-contiguous views (``X[:, ::2]``) are made
    C-contiguous once (okr's containers take contiguous memory); CSC, COO
    and other sparse formats become CSR, whose three arrays are then copied
    once into okr (its indices are ``usize``). NaN and infinity are left to
    okr, which rejects them with its own message.
    """
    X = validate_data(
        est,
        X,
        accept_sparse="csr",
        dtype=np.float64,
        ensure_all_finite=False,
        reset=reset,
    )
    if sp.issparse(X):
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    if not X.flags.aligned:  # e.g. np.frombuffer at an odd offset, a network frame
        X = X.copy()
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    return X


def _label_csr(Y, what="Y"):
    """A label indicator (dense or sparse) as a CSR matrix of its ones.

    Its values must be 0 and 1 (any numeric dtype) or booleans, dense and
    sparse alike, as scikit-learn's multilabel-indicator format: anything
    else (-1, 2, 0.5, NaN) is a ``ValueError`` naming the values, never a
    silent "nonzero means present".
    """
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y, copy=True)
        values = Y.data
    else:
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(f"{what} must be a 2-D label indicator, got {Y.ndim} dimension(s)")
        values = Y
    if values.dtype.kind not in "biuf":
        raise ValueError(f"{what} must be a 0/1 or boolean label indicator, got dtype {values.dtype}")
    ok = (values == 0) | (values == 1)
    if not np.all(ok):
        bad = np.unique(values[~ok])
        shown = ", ".join(str(v) for v in bad[:5]) + (", ..." if len(bad) > 5 else "")
        raise ValueError(f"{what} must be a 0/1 or boolean label indicator; it holds {shown}")
    Y = sp.csr_matrix(Y != 0) if not sp.issparse(Y) else Y
    Y.eliminate_zeros()
    Y.sort_indices()
    return Y


def _json_ready(value):
    """``value`` with non-finite floats spelled as okr's recipes read them
    (``"NaN"``, ``"inf"``, ``"-inf"``: JSON has no such numbers), so that
    okr, not the JSON encoder, explains why the value is invalid."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _set_kernel_weights(est):
    """``kernel_weights_``: the weights of a combined input kernel, as the
    fit resolved and the model stores them (absent for a single kernel)."""
    recipe = est.model_.recipe
    inputs = json.loads(recipe).get("input", {}) if recipe else {}
    if inputs.get("kind") == "combined":
        est.kernel_weights_ = np.asarray(inputs["weights"], dtype=np.float64)
    elif hasattr(est, "kernel_weights_"):
        del est.kernel_weights_


def _fitted_candidates(est):
    """The fitted model's candidates as ``candidates_`` holds them: vectors
    as a float array; label sets as a 0/1 array when ``Y`` was dense (no
    larger than ``Y`` itself), else (sparse ``Y``, class labels) as a CSR
    matrix, so that a label space of millions costs its nonzeros only."""
    if est._mode == "vectors":
        return est.model_.candidates()
    indices, indptr, shape = est.model_.candidate_sets()
    C = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=shape)
    return C.toarray() if (est._mode == "labels" and not est._y_sparse) else C


def _candidate_classes(C):
    """The class index of each candidate of a class-label fit (one-hot rows,
    a CSR matrix or, in pickles of earlier versions, an array)."""
    return C.indices if sp.issparse(C) else np.argmax(C, axis=-1)


def _n_candidates(est):
    return est.candidates_.shape[0]


def _pool_rows(values, n_pool, what, unknown=None, check_range=True):
    """Pool row indices as int64: an integer array (or list) of values in
    ``[0, n_pool)`` (or ``unknown``), else a ``ValueError`` naming ``what``:
    floats are refused rather than truncated (an empty list is fine).
    Without ``check_range`` the range is left to okr (groups: its message
    names the query)."""
    a = np.asarray(values)
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{what} must hold integer pool row indices, got dtype {a.dtype}")
    a = a.ravel()
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{what} holds {a.max()}: expected pool rows in [0, {n_pool})")
    if not check_range:
        return a.astype(np.int64)
    bad = (a >= n_pool) | (a < 0)
    if unknown is not None:
        bad &= a != unknown
    if np.any(bad):
        allowed = f"in [0, {n_pool})" + ("" if unknown is None else f" or {unknown}")
        raise ValueError(f"{what} holds {a[bad][0]}: expected pool rows {allowed}")
    return a.astype(np.int64)


def f1_samples(Y_true, Y_pred):
    """Example-based F1: the mean over samples of ``2 |y & p| / (|y| + |p|)``,
    0 when both sets are empty (scikit-learn's ``f1_score(average='samples')``)."""
    t, p = _label_csr(Y_true, "Y_true"), _label_csr(Y_pred, "Y_pred")
    if t.shape != p.shape:
        raise ValueError(f"shape mismatch: Y_true {t.shape} vs Y_pred {p.shape}")
    inter = np.asarray(t.multiply(p).sum(axis=1)).ravel()
    size = np.asarray(t.sum(axis=1)).ravel() + np.asarray(p.sum(axis=1)).ravel()
    f1 = np.divide(2.0 * inter, size, out=np.zeros_like(size, dtype=float), where=size > 0)
    return float(f1.mean()) if len(f1) else 0.0



def _check_precision(est):
    """The estimator's decoding precision, ``"f64"`` (also for estimators
    without the parameter) or ``"f32"``; ``ValueError`` otherwise."""
    precision = getattr(est, "precision", "f64")
    if precision not in ("f64", "f32"):
        raise ValueError(f"invalid precision = {precision!r}: expected 'f64' or 'f32'")
    return precision


def _warm_model(est):
    """The fitted model a ``warm_start`` fit continues: ``model_`` when the
    estimator has ``warm_start=True`` and was fitted, else ``None`` (a fit
    from scratch, as scikit-learn's first ``fit`` with ``warm_start``).
    okr checks that the new data have the previous fit's shape (samples,
    features, labels) and refuses other data with a ``ValueError``."""
    warm = getattr(est, "warm_start", False)
    if not isinstance(warm, (bool, np.bool_)):
        raise ValueError(f"invalid warm_start = {warm!r}: expected True or False")
    return getattr(est, "model_", None) if warm else None


def _verbose(est):
    """The estimator's ``verbose`` (0 for estimators without it): 0 is
    silent; 1 logs the solver's progress (iterations, decode tiles) on the
    ``logging`` logger ``"okr"`` at level INFO at most once a second and at
    the last step; 2 and more log every step."""
    verbose = getattr(est, "verbose", 0)
    if isinstance(verbose, (bool, np.bool_)) or not isinstance(verbose, numbers.Integral) or verbose < 0:
        raise ValueError(f"invalid verbose = {verbose!r}: expected an integer >= 0")
    return int(verbose)


def _pickled_state(state):
    """``state`` with the fitted ``model_`` replaced by okr's model-file
    bytes, held in a ``uint8`` array: pickle protocol 5 (Dask, joblib,
    multiprocessing) ships an array's memory out of band instead of copying
    it into the stream as it does a ``bytes`` object."""
    if "model_" not in state:
        return state
    state = dict(state)
    state["model_"] = np.frombuffer(state["model_"].to_bytes(), dtype=np.uint8)
    return state


def _unpickled_state(state, from_bytes):
    """``state`` with ``model_`` decoded by ``from_bytes`` from the bytes of
    :func:`_pickled_state` (a ``uint8`` array, or ``bytes`` in pickles of
    earlier versions)."""
    model = state.get("model_")
    if isinstance(model, (bytes, bytearray)):
        model = bytes(model)
    elif isinstance(model, np.ndarray) and model.dtype == np.uint8 and model.ndim == 1:
        model = model.tobytes()
    else:
        return state
    state = dict(state)
    state["model_"] = from_bytes(model)
    return state

def _sample_weight(sample_weight, n_samples):
    """``sample_weight`` as a list of floats, one per sample (``None`` stays
    ``None``): array-likes (lists, pandas Series) are read as float64, a
    scalar weighs every sample the same, as scikit-learn's
    ``_check_sample_weight``. The values and their count are checked by
    okr (one per row, finite, ``> 0``), which raises ``ValueError`` with
    okr's message."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D, one weight per sample; got shape {w.shape}")
    return w.tolist()


class WeightedFit:
    """``fit(X, y, sample_weight=None)`` for the kernel-ridge estimators
    (IOKR, reduced rank, Nystroem KRR, SIOKR, ISOKR, SISOKR)."""

    def fit(self, X, y, sample_weight=None):
        """Fit on inputs ``X`` (array or sparse matrix) and targets ``y``.

        ``sample_weight`` (array-like ``(n_samples,)`` or a scalar, default
        ``None``: every sample weighs 1) fits the weighted ridge
        ``sum_i w_i ||h(x_i) - psi(y_i)||^2 + (sum_i w_i) lam ||h||^2``: okr's
        ``n lam`` with ``n`` replaced by the sum of the weights, so integer
        weights equal repeating the rows, unit weights change nothing and
        only the ratios of the weights matter. With a linear output kernel
        and vector outputs this is ``KernelRidge(alpha=lam * sum(w)).fit(X,
        Y, sample_weight=w)``. Every weight must be a finite number ``> 0``
        (drop a row instead of giving it weight 0); okr raises
        ``ValueError`` otherwise, and for a count other than ``n_samples``.
        The weights are not stored in the model. IOKR on label sets with
        ``lam=None`` takes the default ``lam`` (1e-3) with a warning: its
        leave-one-out choice of ``lam`` is unweighted.
        """
        return self._fit(X, y, sample_weight)


class OkrSurrogate(ClassifierMixin, MultiOutputMixin, BaseEstimator):
    """Base of the kernel-output estimators: fit ``h: X -> H_Y`` and decode
    ``argmin_c k(c, c) - 2 <h(x), psi(c)>`` over the distinct training
    outputs (ties to the first).

    Targets ``y``:

    - a 0/1 indicator matrix ``(n_samples, n_labels)``, dense or sparse: label
      sets (``predict`` returns an indicator of the same kind and dtype);
    - a 1-D array of class labels: each sample's label set is its class
      (``predict`` returns class labels, ``classes_`` lists them);
    - a 2-D float matrix that is not 0/1: vector outputs (``predict`` returns
      training output vectors, ``decision_function`` the kernel ridge
      prediction ``h(x)`` read with a linear output kernel).

    ``score`` is the example-based F1 for label sets (accuracy for class
    labels, which it equals there) and R^2 for vector outputs.
    """

    _okr_name = None
    # The Rust class of ``model_`` (what unpickling rebuilds from okr's bytes).
    _model_class = _okr.Model

    # The recipe parameters of the estimator's hyper-parameters (Python name
    # -> okr recipe name); only the ones the class has are read.
    _RECIPE_PARAMS = (
        ("lam", "lambda"),
        ("lam2", "lambda2"),
        ("rank", "rank"),
        ("centered", "centered"),
        ("solver", "solver"),
        ("input_sketch", "input_sketch"),
        ("output_sketch", "output_sketch"),
        ("n_components", "anchors"),
        ("subset_size", "subset"),
        ("max_iter", "max_iter"),
    )

    def _recipe(self, output_kind):
        """okr's recipe (a dict, JSON-ready) for this estimator's parameters:
        a translation of names only. Every ``None`` is left out, so the okr
        library resolves it exactly as ``okr fit`` does."""
        p = self.get_params(deep=False)
        estimator = {"name": getattr(self, "_recipe_name", None) or self._okr_name}
        for name, key in self._RECIPE_PARAMS:
            if p.get(name) is not None and name in p:
                estimator[key] = p[name]
        if "lambda2" in estimator and "lambda" in estimator:
            estimator["lambda1"] = estimator["lambda"]

        def kernel(name, gamma, degree, coef0):
            k = {"name": name}
            if gamma is not None:
                k["gamma"] = gamma
            # scikit-learn ignores degree and coef0 for other kernels; okr refuses them.
            if str(name).lower() in ("polynomial", "poly"):
                if degree is not None:
                    k["degree"] = degree
                if coef0 is not None:
                    k["coef0"] = coef0
            return k

        combined = getattr(p.get("kernel"), "_recipe", None)
        if combined is not None:  # okr.CombinedKernel
            for name in ("gamma", "degree", "coef0"):
                if p.get(name) is not None:
                    raise ValueError(
                        f"{name} applies to a single input kernel: with a CombinedKernel give it per kernel "
                        f"(a dict or 'name:gamma'), not {name} = {p[name]!r}"
                    )
            inputs = combined()
        elif str(p.get("kernel")).lower() == "precomputed":
            # scikit-learn's convention: X is K(train, train), then K(test, train).
            inputs = {"kind": "gram"}
        else:
            inputs = {
                "kind": "features",
                "kernel": kernel(p.get("kernel", "gaussian"), p.get("gamma"), p.get("degree"), p.get("coef0")),
                "standardize": "no",
            }
        return {
            "estimator": estimator,
            "input": inputs,
            "output": {
                "kind": "labels" if output_kind == "labels" else "vector",
                "kernel": kernel(p.get("output_kernel", "gaussian"), p.get("output_gamma"), None, None),
            },
            "seed": self._seed(),
        }

    def _seed(self):
        """okr's seed: drawn from ``random_state`` (scikit-learn's habit), the
        recipe's own seed for an estimator built by ``okr.from_recipe`` (as
        long as its ``random_state`` is unchanged), and 0 for estimators
        without randomness."""
        if not hasattr(self, "random_state"):
            return 0
        pinned = getattr(self, "_okr_seed", None)
        if pinned is not None and pinned[0] == self.random_state:
            return pinned[1]
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _params_for_okr(self):
        params = dict(self.get_params(deep=False))
        params.pop("random_state", None)
        params.pop("n_jobs", None)
        params.pop("precision", None)
        params["seed"] = self._seed()
        return params

    def _targets(self, y):
        """(okr output object, kind), setting the target attributes."""
        self._y_sparse = sp.issparse(y)
        if self._y_sparse:
            Y = _label_csr(y)
            self._mode, self._y_dtype = "labels", y.dtype
            return Y, "labels"
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1 and type_of_target(y) in ("binary", "multiclass"):
            y = column_or_1d(y, warn=True)
        if y.ndim == 1:
            if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
                raise ValueError("Input y contains NaN or infinity.")
            check_classification_targets(y)
            self.classes_, codes = np.unique(y, return_inverse=True)
            self._mode, self._y_dtype = "classes", y.dtype
            Y = sp.csr_matrix(
                (np.ones(len(codes)), codes.ravel(), np.arange(len(codes) + 1)),
                shape=(len(codes), len(self.classes_)),
            )
            return Y, "labels"
        if y.ndim != 2:
            raise ValueError(f"Y must be 1-D or 2-D, got {y.ndim} dimensions")
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("Input Y contains NaN or infinity.")
        self._y_dtype = y.dtype
        if type_of_target(y) == "multilabel-indicator":
            self._mode = "labels"
            return _label_csr(y), "labels"
        self._mode = "vectors"
        return np.ascontiguousarray(y, dtype=np.float64), "vectors"

    def fit(self, X, y):
        """Fit on inputs ``X`` (array or sparse matrix) and targets ``y``."""
        return self._fit(X, y)

    def _fit(self, X, y, sample_weight=None):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        _check_precision(self)
        X = _inputs(self, X, reset=True)
        weights = _sample_weight(sample_weight, X.shape[0])
        Y, kind = self._targets(y)
        recipe = json.dumps(_json_ready(self._recipe(kind)))
        previous = _warm_model(self)
        self.model_, notes = _okr.fit_recipe(
            recipe, X, Y, kind, self.n_jobs, previous, _verbose(self), sample_weight=weights
        )
        for note in notes:
            warnings.warn(f"okr: {note}", UserWarning, stacklevel=2)
        self.candidates_ = _fitted_candidates(self)
        self.n_outputs_ = self.model_.output_dim
        _set_kernel_weights(self)
        return self

    def save(self, path):
        """Writes the fitted model as an okr model file (atomically), which
        ``okr predict`` reads and :func:`okr.load` opens."""
        check_is_fitted(self, "model_")
        self.model_.save(str(path))

    def _decode(self, X, k):
        check_is_fitted(self, "model_")
        X = _inputs(self, X, reset=False)
        return self.model_.decode(X, k, self.n_jobs, _check_precision(self))

    def _outputs(self, idx):
        """Candidate rows as the targets looked at fit."""
        if self._mode == "classes":
            return self.classes_[_candidate_classes(self.candidates_)[idx]]
        out = self.candidates_[idx]
        if self._mode == "labels":
            out = out.astype(self._y_dtype)
            if self._y_sparse and out.ndim == 2:
                return sp.csr_matrix(out)
        return out

    def predict(self, X):
        """The best candidate for each row of ``X``."""
        idx, _ = self._decode(X, 1)
        return self._outputs(idx[:, 0])

    def predict_topk(self, X, k=5, return_scores=False):
        """The ``k`` best candidates per row, best first, ``(n, k, n_outputs)``
        (``(n, k)`` class labels for class targets). With ``return_scores``
        also their scores ``k(c, c) - 2 <h(x), psi(c)>`` (lower is better)."""
        if not (isinstance(k, numbers.Integral) and k >= 1):
            raise ValueError(f"invalid k = {k!r}: expected an integer >= 1")
        idx, scores = self._decode(X, int(min(k, _n_candidates(self))))
        if self._mode == "classes":
            out = self.classes_[_candidate_classes(self.candidates_)[idx]]
        elif sp.issparse(self.candidates_):
            out = self.candidates_[idx.ravel()].toarray().reshape(*idx.shape, -1).astype(self._y_dtype)
        else:
            out = self.candidates_[idx]
            if self._mode == "labels":
                out = out.astype(self._y_dtype)
        return (out, scores) if return_scores else out

    def _candidate_pool(self, candidates):
        """Candidate outputs as okr reads them, in the kind of the fit."""
        if self._mode == "classes":
            labels = np.asarray(candidates).ravel()
            codes = np.searchsorted(self.classes_, labels)
            codes = np.minimum(codes, len(self.classes_) - 1)
            if not np.all(self.classes_[codes] == labels):
                raise ValueError("candidates must be class labels seen at fit (classes_)")
            pool = sp.csr_matrix(
                (np.ones(len(codes)), codes, np.arange(len(codes) + 1)), shape=(len(codes), len(self.classes_))
            )
            return pool, "labels"
        if self._mode == "labels":
            pool = _label_csr(candidates)
        else:
            pool = np.ascontiguousarray(candidates, dtype=np.float64)
            if pool.ndim != 2 or not np.all(np.isfinite(pool)):
                raise ValueError("vector candidates must be a finite 2-D array")
        if pool.shape[1] != self.n_outputs_:
            raise ValueError(f"candidates have {pool.shape[1]} columns, the model {self.n_outputs_} outputs")
        return pool, self._mode

    def rank_candidates(self, X, candidates, groups=None, *, true_candidates=None, k=None, memory_budget=2**30):
        """Rank each row's own candidate set, as in molecule identification by
        retrieval (each spectrum against the database molecules of its
        formula).

        ``candidates`` is a pool of outputs in the kind of the fit (rows of a
        0/1 indicator, vectors, or class labels); ``groups[q]`` lists the pool
        rows that are test row ``q``'s candidates (``None``: the whole pool
        for every row). ``true_candidates[q]``, a pool row or ``-1``, marks
        row ``q``'s true output, whose rank is then reported. ``k`` keeps the
        ``k`` best per row (default: all); ``memory_budget`` bounds the
        decoder's working memory in bytes (the pool's atom products are
        cached when they fit in half of it).

        Scores are ``k(c, c) - 2 <h(x), psi(c)>`` (lower is better, ties to
        the earlier candidate of the group); they equal ``predict_topk``'s.
        Returns a :class:`RankedCandidates`.
        """
        check_is_fitted(self, "model_")
        X = self._rank_inputs(X)
        n = X.shape[0]
        pool, kind = self._candidate_pool(candidates)
        n_pool = pool.shape[0]
        indptr = indices = None  # the whole pool for every row, without an index list
        if groups is not None:
            if len(groups) != n:
                raise ValueError(f"{len(groups)} candidate groups for {n} rows of X")
            lists = [_pool_rows(g, n_pool, f"groups[{q}]", check_range=False) for q, g in enumerate(groups)]
            indptr = np.concatenate([[0], np.cumsum([len(g) for g in lists])]).astype(np.int64)
            indices = np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)
        truth = np.full(n, -1, dtype=np.int64)
        if true_candidates is not None:
            truth = _pool_rows(true_candidates, n_pool, "true_candidates", unknown=-1)
            if truth.shape != (n,):
                raise ValueError(f"true_candidates has {truth.size} entries for {n} rows of X")
        if k is not None and not (isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1):
            raise ValueError(f"invalid k = {k!r}: expected an integer >= 1 or None")
        if not (isinstance(memory_budget, numbers.Integral) and not isinstance(memory_budget, bool) and memory_budget >= 1):
            raise ValueError(f"invalid memory_budget = {memory_budget!r}: expected an integer >= 1 (bytes)")
        # Beyond 64 bits both mean "no limit".
        k = None if k is None else int(min(k, sys.maxsize))
        ids, scores, offsets, ranks = self._rank_per_query(
            X, pool, kind, indptr, indices, truth, k, int(min(memory_budget, sys.maxsize))
        )
        return RankedCandidates(ids, scores, offsets, ranks if true_candidates is not None else None)

    def _rank_inputs(self, X):
        """What ``rank_candidates`` scores: the checked inputs (a
        meta-estimator: the coordinates its regressor predicts)."""
        return _inputs(self, X, reset=False)

    def _rank_per_query(self, X, pool, kind, indptr, indices, truth, k, memory_budget):
        return _okr.rank_per_query(self.model_, X, pool, kind, indptr, indices, truth, k, memory_budget, self.n_jobs)

    def decision_function(self, X):
        """``h(x)`` read with a linear output kernel: label scores
        ``(n, n_labels)`` for label sets (``(n,)`` for two classes, positive
        for ``classes_[1]``), the kernel ridge prediction for vector outputs."""
        check_is_fitted(self, "model_")
        X = _inputs(self, X, reset=False)
        s = self.model_.label_scores(X, self.n_jobs)
        if self._mode == "classes" and s.shape[1] == 2:
            return s[:, 1] - s[:, 0]
        return s

    def score(self, X, y, sample_weight=None):
        """Example-based F1 (label sets; accuracy for class labels) or R^2
        (vector outputs) of ``predict(X)`` against ``y``."""
        pred = self.predict(X)
        if self._mode == "vectors":
            return r2_score(y, pred, sample_weight=sample_weight)
        if self._mode == "classes":
            return float(np.average(np.asarray(y).ravel() == pred, weights=sample_weight))
        if sample_weight is not None:
            raise ValueError("sample_weight is not supported by the example-based F1")
        return f1_samples(y, pred)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        precomputed = str(getattr(self, "kernel", "")).lower() == "precomputed"
        tags.input_tags.sparse = not precomputed
        # Cross-validation slices a precomputed Gram by rows and columns.
        tags.input_tags.pairwise = precomputed
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    # Pickling: the fitted model travels as okr's versioned model bytes.
    def __getstate__(self):
        return _pickled_state(super().__getstate__())

    def __setstate__(self, state):
        super().__setstate__(_unpickled_state(state, type(self)._model_class.from_bytes))


class RankedCandidates:
    """The per-row rankings of :meth:`OkrSurrogate.rank_candidates`.

    ``indices[q]`` are row ``q``'s candidates as pool rows, best first, and
    ``scores[q]`` their scores (lower is better); ``true_rank`` is ``(n, 2)``:
    the true candidate's optimistic rank (``1 + #`` strictly better) and
    pessimistic rank (``#`` better or tied), ``-1`` for rows without one, or
    ``None`` when no true candidates were given. :meth:`metrics` summarizes
    it as the metabolite-identification papers do.
    """

    def __init__(self, ids, scores, offsets, true_rank):
        self.indices = np.split(ids, offsets[1:-1])
        self.scores = np.split(scores, offsets[1:-1])
        self.true_rank = true_rank

    def __len__(self):
        return len(self.indices)

    def metrics(self):
        """Top-1/5/10/20 accuracy and mean / median rank of the true
        candidates, ties counted optimistically and pessimistically, over the
        rows with a true candidate: a dict ``{"n_queries", "optimistic":
        {...}, "pessimistic": {...}}``."""
        if self.true_rank is None:
            raise ValueError("no true candidates were given to rank_candidates")
        known = self.true_rank[self.true_rank[:, 0] >= 1]
        return _okr.retrieval_metrics(known[:, 0].tolist(), known[:, 1].tolist())
