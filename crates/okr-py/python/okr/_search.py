"""Model selection with okr's fast paths: the search of ``okr tune`` as a
scikit-learn meta-estimator."""

import json
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _okr
from ._base import OkrSurrogate, _verbose, _inputs, _json_ready, _label_csr, _pool_rows

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
    keeps each group in one fold (scikit-learn's ``GroupKFold`` meaning);
    :meth:`split` gives the folds.

    ``scoring`` (default ``None``, the same as ``"decoded"``): what a cell's
    validation rows are scored by. ``"decoded"`` scores the decoded outputs
    (example-based F1, or the negated errors above). The retrieval scorings
    ``"top1"``, ``"top5"``, ``"top10"`` (any ``"topK"``) and ``"mean-rank"``
    rank each training row's own candidate set, given to :meth:`fit`, with
    the estimator refitted on the fold's training rows: ``topK`` is the
    fraction of the validation fold's queries whose true candidate ranks in
    the top K, ``mean-rank`` minus the mean rank of the true candidate
    (higher is better, as every score). Ties count against the true
    candidate: its rank is the pessimistic rank ``#{c : s_c <= s_true}``
    that :meth:`OkrSurrogate.rank_candidates` reports. These are the scores
    of ``okr tune --scoring ... --candidates-per-query FILE [--pool FILE]``,
    computed by the same code (``okr::tune::Scoring``); they take K-fold
    (``cv`` a fold count) and label-set targets.

    After ``fit``: ``cv_results_`` (shaped like ``GridSearchCV``'s:
    ``params``, ``param_gamma``, ``param_lam``, ``mean_test_score``,
    ``std_test_score``, ``split<i>_test_score``, ``rank_test_score``; scores
    are example-based F1 fractions, or negated errors for vector outputs and
    the RKHS criteria: higher is better), ``best_params_``, ``best_score_``,
    ``best_index_``, ``criterion_`` and, with ``refit=True``,
    ``best_estimator_`` (refitted on all rows) to which ``predict``,
    ``predict_topk``, ``rank_candidates``, ``decision_function`` and
    ``score`` delegate.

    ``verbose`` (scikit-learn's meaning) logs the search's fits on the
    ``logging`` logger ``"okr"`` at level INFO, as ``okr tune`` draws them:
    1 at most once a second, 2 every fit.
    """

    def __init__(
        self,
        estimator=None,
        *,
        cv=3,
        lambdas=None,
        widths=None,
        scoring=None,
        refit=True,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.cv = cv
        self.lambdas = lambdas
        self.widths = widths
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _base_estimator(self):
        from .estimators import IOKR

        est = IOKR() if self.estimator is None else self.estimator
        if not isinstance(est, OkrSurrogate) or not hasattr(est, "gamma") or not hasattr(est, "lam"):
            raise TypeError(
                f"SearchCV searches okr's kernel-output estimators (IOKR, ReducedRankIOKR, ...), not {type(est).__name__}"
            )
        return clone(est)

    def fit(self, X, y, groups=None, *, candidates=None, candidate_groups=None, true_candidates=None):
        """Search on ``X`` and targets ``y`` (as the estimator's ``fit``
        takes them); ``groups``: a group label per row (K-fold only).

        A retrieval ``scoring`` takes each training row's candidate set, in
        one of two forms (those of ``okr tune --candidates-per-query``):

        - inline: ``candidates`` is a list with one entry per row of ``X``,
          the row's candidate outputs as a 2-D 0/1 indicator (dense or
          sparse, ``(n_candidates, n_labels)``), or ``None`` for a row that
          is not a query;
        - pool: ``candidates`` is one 2-D 0/1 indicator array or sparse
          matrix (the pool) and ``candidate_groups[q]`` lists the pool rows
          of row ``q``'s candidates (``None`` or empty: not a query); without
          ``candidate_groups`` every row ranks the whole pool (as
          :meth:`OkrSurrogate.rank_candidates`).

        ``true_candidates[q]`` marks row ``q``'s true candidate: its position
        in ``candidates[q]`` (inline) or its pool row (pool), ``-1`` for none
        (the row is then not scored). Without ``true_candidates`` it is the
        first candidate equal to ``y[q]`` (none equal: not scored). Every
        validation fold needs a scored query.
        """
        est = self._base_estimator()
        Xc = _inputs(est, X, reset=True)
        Y, kind = est._targets(y)
        if isinstance(self.cv, numbers.Integral) and not isinstance(self.cv, bool):
            cv = str(int(self.cv))
        elif isinstance(self.cv, str):
            cv = self.cv
        else:
            raise ValueError(f"invalid cv = {self.cv!r}: expected a fold count (>= 2), 'loo', 'loo-rkhs' or 'gcv-rkhs'")
        scoring = "decoded" if self.scoring is None else self.scoring
        if not isinstance(scoring, str):
            raise ValueError(
                f"invalid scoring = {scoring!r}: expected None, 'decoded', 'top1', 'top5', 'top10' (any 'topK') "
                "or 'mean-rank'"
            )
        queries = None
        if candidates is not None:
            if kind != "labels":
                raise ValueError("candidates are label sets: retrieval scoring ranks label-set targets, not vectors")
            queries = _queries(Y, candidates, candidate_groups, true_candidates)
        elif candidate_groups is not None or true_candidates is not None:
            raise ValueError("candidate_groups and true_candidates apply with candidates only")
        group_ids = _group_ids(groups)
        grid = [None if g is None else [float(v) for v in g] for g in (self.lambdas, self.widths)]
        recipe = json.dumps(_json_ready(est._recipe(kind)))
        try:
            report = json.loads(
                _okr.tune(
                    recipe, cv, grid[0], grid[1], group_ids, Xc, Y, kind, self.n_jobs, scoring, queries, _verbose(self)
                )
            )
        except ValueError as e:
            raise ValueError(_python_names(str(e))) from None
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

    def split(self, X, y=None, groups=None):
        """The K folds (``cv`` a fold count) that :meth:`fit` cuts ``X``'s
        rows into, as a scikit-learn splitter yields them: ``(train, test)``
        index arrays per fold, grouped by ``groups`` when given. The same
        folds as ``okr tune`` on the same rows and seed (the estimator's
        ``random_state``), so that a fold's score can be recomputed."""
        est = self._base_estimator()
        if not (isinstance(self.cv, numbers.Integral) and not isinstance(self.cv, bool)):
            raise ValueError(f"split needs a fold count cv, not cv = {self.cv!r}")
        n = _num_samples(X)
        recipe = json.dumps(_json_ready(est._recipe("labels")))
        for train, test in _okr.cv_folds(recipe, int(self.cv), n, _group_ids(groups)):
            yield np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp)

    def get_n_splits(self, X=None, y=None, groups=None):
        """The fold count ``cv`` (a scikit-learn splitter's method)."""
        return int(self.cv)

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


def _python_names(text):
    """okr's message with the library's words for the candidate sets as
    ``fit`` names them (the message is okr's; only the names change)."""
    for words, names in (
        ("give the queries (a candidate file)", "give them to fit(X, y, candidates=...)"),
        ("queries apply to a retrieval scoring", "candidates apply to a retrieval scoring"),
    ):
        text = text.replace(words, names)
    return text


def _group_ids(groups):
    """A group label per row as integer ids (only equality matters), or None."""
    if groups is None:
        return None
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(f"groups must be 1-D, one label per row, got shape {groups.shape}")
    _, ids = np.unique(groups, return_inverse=True)
    return [int(g) for g in ids]


def _num_samples(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _first_equal(C, y_row):
    """Position of the first row of CSR ``C`` with the labels of CSR row
    ``y_row``, or -1."""
    target = np.sort(y_row.indices)
    for i in range(C.shape[0]):
        if np.array_equal(np.sort(C.indices[C.indptr[i] : C.indptr[i + 1]]), target):
            return i
    return -1


def _queries(Y, candidates, candidate_groups, true_candidates):
    """The training rows' candidate sets (``SearchCV.fit``'s ``candidates``,
    ``candidate_groups`` and ``true_candidates``) flattened as okr's binding
    reads them: per query its training row, its candidates as rows of one
    CSR indicator (inline: every query's own, stacked; pool: the pool), and
    the position of its true candidate in its list (-1: none)."""
    n, n_labels = Y.shape
    pool_mode = sp.issparse(candidates) or isinstance(candidates, np.ndarray) or candidate_groups is not None
    if pool_mode:
        pool = _label_csr(candidates, "candidates")
        if pool.ndim != 2:
            raise ValueError("a candidate pool must be a 2-D 0/1 indicator")
        if candidate_groups is None:
            lists = [np.arange(pool.shape[0], dtype=np.int64)] * n
        else:
            if len(candidate_groups) != n:
                raise ValueError(f"{len(candidate_groups)} candidate groups for {n} rows of X")
            lists = [
                np.zeros(0, dtype=np.int64) if g is None else _pool_rows(g, pool.shape[0], f"candidate_groups[{q}]")
                for q, g in enumerate(candidate_groups)
            ]
        stacked = pool
    else:
        if len(candidates) != n:
            raise ValueError(f"{len(candidates)} candidate sets for {n} rows of X")
        blocks, lists, start = [], [], 0
        for q, c in enumerate(candidates):
            if c is None:
                lists.append(np.zeros(0, dtype=np.int64))
                continue
            block = _label_csr(c, f"candidates[{q}]")
            if block.shape[1] != n_labels:
                raise ValueError(f"candidates[{q}] has {block.shape[1]} columns, y {n_labels} labels")
            blocks.append(block)
            lists.append(np.arange(start, start + block.shape[0], dtype=np.int64))
            start += block.shape[0]
        stacked = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, n_labels))
    if stacked.shape[1] != n_labels:
        raise ValueError(f"candidates have {stacked.shape[1]} columns, y {n_labels} labels")
    if true_candidates is not None:
        marks = _pool_rows(true_candidates, stacked.shape[0], "true_candidates", check_range=False)
        if marks.shape != (n,):
            raise ValueError(f"true_candidates has {marks.size} entries for {n} rows of X")
    rows, truth, indptr = [], [], [0]
    for q, lst in enumerate(lists):
        if lst.size == 0:
            continue
        if true_candidates is None:
            t = _first_equal(stacked[lst], Y[q])
        elif marks[q] < 0:
            t = -1
        elif pool_mode:
            hit = np.flatnonzero(lst == marks[q])
            if hit.size == 0:
                raise ValueError(f"true_candidates[{q}] = {marks[q]} is not among row {q}'s candidate pool rows")
            t = int(hit[0])
        else:
            if marks[q] >= lst.size:
                raise ValueError(f"true_candidates[{q}] = {marks[q]}: row {q} has {lst.size} candidates")
            t = int(marks[q])
        rows.append(q)
        truth.append(t)
        indptr.append(indptr[-1] + lst.size)
    indices = np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)
    return {
        "candidates": _sorted_csr(stacked),
        "inline": not pool_mode,
        "rows": rows,
        "indptr": indptr,
        "indices": [int(i) for i in indices],
        "truth": truth,
    }


def _sorted_csr(C):
    C = sp.csr_matrix(C, dtype=np.float64)
    C.sort_indices()
    return C
