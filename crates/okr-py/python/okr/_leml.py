"""LEML: low-rank multi-label learning with explicit label scores."""

import json
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from . import _okr
from ._base import OkrSurrogate, _inputs, _json_ready, _verbose, _warm_model

__all__ = ["LEML"]


class LEML(OkrSurrogate):
    """LEML (Yu et al. 2014): label scores ``x^T W H`` with a rank-``rank``
    (capped at the number of labels, with a warning when given larger)
    factorization, fitted by alternating minimization of ``loss`` (``"sq"``
    squared, ``"lr"`` logistic, ``"sh"`` squared hinge) with penalty ``lam``
    for at most ``max_iter`` iterations; ``random_state`` seeds ``H``.
    ``None`` takes okr's default (``okr fit --estimator leml``'s): rank 10,
    ``lam`` 0.1, 10 iterations (see docs/recipes.md). With
    ``warm_start=True`` a second ``fit`` continues the previous one for
    ``max_iter`` more iterations from its ``W`` and ``H`` (the data must have
    the previous shape): ``k`` iterations then ``k`` more equal ``2k``.
    ``verbose`` logs the iterations on the ``logging`` logger ``"okr"`` (INFO):
    1 at most once a second, 2 every iteration.

    A label-score model: ``predict`` keeps the labels whose score exceeds
    the training encoding's midpoint (``threshold_``), ``decision_function``
    returns the scores, ``predict_topk`` the indicator of the ``k``
    best-scoring labels. Inputs are used as given (no kernel); dense inputs
    are compressed to one CSR copy (LEML's products run on sparse rows).
    Targets: a 0/1 indicator (dense or sparse) or class labels.
    """

    _model_class = _okr.ScoreModel

    _okr_name = "leml"

    def __init__(
        self,
        *,
        rank=None,
        lam=None,
        loss="sq",
        max_iter=None,
        warm_start=False,
        verbose=0,
        random_state=None,
        n_jobs=None,
    ):
        self.rank = rank
        self.lam = lam
        self.loss = loss
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.verbose = verbose
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit on inputs ``X`` and a label indicator or class labels ``y``."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X = _inputs(self, X, reset=True)
        Y, kind = self._targets(y)
        if kind != "labels":
            raise ValueError("LEML needs a 0/1 label indicator or class labels, not vector outputs")
        recipe = json.dumps(_json_ready(self._recipe()))
        self.model_, notes = _okr.fit_leml(recipe, X, Y, self.n_jobs, _warm_model(self), _verbose(self))
        for note in notes:
            warnings.warn(f"okr: {note}", UserWarning, stacklevel=2)
        self.threshold_ = self.model_.threshold
        self.n_iter_ = self.model_.n_iter
        self.n_outputs_ = self.model_.n_labels
        return self

    def _recipe(self, output_kind="labels"):
        """okr's recipe for LEML: names only, ``None`` left to okr."""
        p = self.get_params(deep=False)
        estimator = {"name": "leml"}
        for name, key in (("rank", "rank"), ("lam", "lambda"), ("loss", "loss"), ("max_iter", "max_iter")):
            if p[name] is not None:
                estimator[key] = p[name]
        return {"estimator": estimator, "seed": self._seed()}

    def _scores(self, X):
        check_is_fitted(self, "model_")
        return self.model_.scores(_inputs(self, X, reset=False), self.n_jobs)

    def _as_targets(self, ind):
        if self._mode == "classes":
            return self.classes_[np.argmax(ind, axis=-1)]
        ind = ind.astype(self._y_dtype)
        return sp.csr_matrix(ind) if self._y_sparse else ind

    def predict(self, X):
        """Labels scored above ``threshold_`` (the best class for class labels)."""
        s = self._scores(X)
        if self._mode == "classes":
            return self.classes_[np.argmax(s, axis=1)]
        return self._as_targets(s > self.threshold_)

    def predict_topk(self, X, k=5, return_scores=False):
        """Indicator of the ``k`` best-scoring labels per row (ties: lower label)."""
        s = self._scores(X)
        k = int(min(k, s.shape[1]))
        top = np.argsort(-s, axis=1, kind="stable")[:, :k]
        ind = np.zeros_like(s, dtype=bool)
        np.put_along_axis(ind, top, True, axis=1)
        out = self.classes_[top] if self._mode == "classes" else ind.astype(self._y_dtype)
        return (out, np.take_along_axis(s, top, axis=1)) if return_scores else out

    def decision_function(self, X):
        """Label scores ``(n, n_labels)`` (``(n,)`` for two classes)."""
        s = self._scores(X)
        if self._mode == "classes" and s.shape[1] == 2:
            return s[:, 1] - s[:, 0]
        return s
