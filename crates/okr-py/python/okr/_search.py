"""Model selection with okr's fast paths: the search of ``okr tune`` as a
scikit-learn meta-estimator."""

import json
import numbers

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _okr
from ._base import OkrSurrogate, _inputs, _json_ready

__all__ = ["SearchCV"]


def _refitted(name):
    def check(self):
        check_is_fitted(self, "best_estimator_")
        return hasattr(self.best_estimator_, name)

    return check


class SearchCV(MetaEstimatorMixin, BaseEstimator):
    """The Gaussian input width ``gamma`` and the ridge ``lam`` of a
    kernel-output estimator, chosen as ``okr tune`` chooses them (one search,
    in okr's library, for both doors).

    ``estimator`` is an okr kernel-output estimator (default :class:`IOKR`)
    with a Gaussian input kernel and ``lam`` and ``gamma`` unset: every other
    parameter is kept. ``cv`` is a fold count (K-fold, the estimator refitted
    per fold, width and ridge, except IOKR on label sets, which scores every
    ridge of a fold from one eigendecomposition), or for IOKR on label sets
    ``"loo"`` (closed-form leave-one-out F1), ``"loo-rkhs"`` or
    ``"gcv-rkhs"`` (closed-form errors in the output RKHS). ``lambdas``
    (default ``1e-8 .. 1e-1``) and ``widths`` (multipliers ``c`` of
    ``gamma = c / median squared distance``; default: a line search from the
    median heuristic, coarse to fine) are the grid. ``fit(X, y, groups=...)``
    keeps each group in one fold (scikit-learn's ``GroupKFold`` meaning).

    After ``fit``: ``cv_results_`` (shaped like ``GridSearchCV``'s:
    ``params``, ``param_gamma``, ``param_lam``, ``mean_test_score``,
    ``std_test_score``, ``split<i>_test_score``, ``rank_test_score``; scores
    are example-based F1 fractions, or negated errors for vector outputs and
    the RKHS criteria: higher is better), ``best_params_``, ``best_score_``,
    ``best_index_``, ``criterion_`` and, with ``refit=True``,
    ``best_estimator_`` (refitted on all rows) to which ``predict``,
    ``predict_topk``, ``rank_candidates``, ``decision_function`` and
    ``score`` delegate.
    """

    def __init__(self, estimator=None, *, cv=3, lambdas=None, widths=None, refit=True, n_jobs=None):
        self.estimator = estimator
        self.cv = cv
        self.lambdas = lambdas
        self.widths = widths
        self.refit = refit
        self.n_jobs = n_jobs

    def _base_estimator(self):
        from .estimators import IOKR

        est = IOKR() if self.estimator is None else self.estimator
        if not isinstance(est, OkrSurrogate) or not hasattr(est, "gamma") or not hasattr(est, "lam"):
            raise TypeError(
                f"SearchCV searches okr's kernel-output estimators (IOKR, ReducedRankIOKR, ...), not {type(est).__name__}"
            )
        return clone(est)

    def fit(self, X, y, groups=None):
        """Search on ``X`` and targets ``y`` (as the estimator's ``fit``
        takes them); ``groups``: a group label per row (K-fold only)."""
        est = self._base_estimator()
        Xc = _inputs(est, X, reset=True)
        Y, kind = est._targets(y)
        if isinstance(self.cv, numbers.Integral) and not isinstance(self.cv, bool):
            cv = str(int(self.cv))
        elif isinstance(self.cv, str):
            cv = self.cv
        else:
            raise ValueError(f"invalid cv = {self.cv!r}: expected a fold count (>= 2), 'loo', 'loo-rkhs' or 'gcv-rkhs'")
        group_ids = None
        if groups is not None:
            groups = np.asarray(groups)
            if groups.ndim != 1:
                raise ValueError(f"groups must be 1-D, one label per row, got shape {groups.shape}")
            _, group_ids = np.unique(groups, return_inverse=True)
            group_ids = [int(g) for g in group_ids]
        grid = [None if g is None else [float(v) for v in g] for g in (self.lambdas, self.widths)]
        recipe = json.dumps(_json_ready(est._recipe(kind)))
        report = json.loads(_okr.tune(recipe, cv, grid[0], grid[1], group_ids, Xc, Y, kind, self.n_jobs))
        self._set_results(report)
        self.n_features_in_ = est.n_features_in_
        if self.refit:
            chosen = report["chosen"]
            # On a precomputed Gram the input kernel is fixed: only the ridge is chosen.
            if str(getattr(est, "kernel", "")).lower() == "precomputed":
                best = clone(est).set_params(lam=chosen["lambda"])
            else:
                best = clone(est).set_params(lam=chosen["lambda"], gamma=chosen["gamma"])
            self.best_estimator_ = best.fit(X, y)
        return self

    def _set_results(self, report):
        cells = report["cells"]
        n_splits = len(cells[0]["fold_scores"]) if cells else 0
        mean = np.array([c["mean"] for c in cells], dtype=float)
        params = [{"gamma": c["gamma"], "lam": c["lambda"]} for c in cells]
        results = {
            "param_gamma": np.ma.MaskedArray([p["gamma"] for p in params], mask=False, dtype=object),
            "param_lam": np.ma.MaskedArray([p["lam"] for p in params], mask=False, dtype=object),
            "params": params,
        }
        for i in range(n_splits):
            results[f"split{i}_test_score"] = np.array([c["fold_scores"][i] for c in cells], dtype=float)
        results["mean_test_score"] = mean
        results["std_test_score"] = np.array([c["std"] for c in cells], dtype=float)
        # Ranks as scikit-learn's: 1 is best, ties share the lower rank, NaN last.
        order = np.where(np.isnan(mean), -np.inf, mean)
        results["rank_test_score"] = np.array([1 + int(np.sum(order > v)) for v in order], dtype=np.int32)
        self.cv_results_ = results
        chosen = report["chosen"]
        self.best_index_ = next(
            i for i, c in enumerate(cells) if c["lambda"] == chosen["lambda"] and c["gamma"] == chosen["gamma"]
        )
        self.best_params_ = params[self.best_index_]
        self.best_score_ = float(chosen["mean"])
        self.criterion_ = report["criterion"]
        self.coarse_results_ = report["coarse_cells"]
        self.n_splits_ = n_splits
        self.refit_recipe_ = report["refit"]

    @available_if(_refitted("predict"))
    def predict(self, X):
        """The best estimator's predictions."""
        return self.best_estimator_.predict(X)

    @available_if(_refitted("predict_topk"))
    def predict_topk(self, X, k=5, return_scores=False):
        """The best estimator's ``k`` best candidates."""
        return self.best_estimator_.predict_topk(X, k=k, return_scores=return_scores)

    @available_if(_refitted("rank_candidates"))
    def rank_candidates(self, X, candidates, groups=None, **kwargs):
        """The best estimator's ranking of per-row candidate sets."""
        return self.best_estimator_.rank_candidates(X, candidates, groups, **kwargs)

    @available_if(_refitted("decision_function"))
    def decision_function(self, X):
        """The best estimator's scores."""
        return self.best_estimator_.decision_function(X)

    @available_if(_refitted("score"))
    def score(self, X, y):
        """The best estimator's score."""
        return self.best_estimator_.score(X, y)
