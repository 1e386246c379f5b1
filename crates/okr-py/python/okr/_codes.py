"""Unsupervised okr models as scikit-learn transformers: the kernel
autoencoders KAE and K2AE (Laforgue, Clemencon and d'Alche-Buc 2019) and
(uncentred) kernel PCA."""

import json

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _okr
from ._base import _json_ready, _pickled_state, _unpickled_state, _verbose, _warm_model


def _plain(value):
    """A numpy scalar as the Python number JSON takes (anything else as given:
    okr's recipe reader refuses it with the parameter's name)."""
    return value.item() if isinstance(value, np.generic) else value

__all__ = ["KAE", "K2AE", "KPCA"]


def _rows(est, X, reset):
    X = validate_data(est, X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False, reset=reset)
    if hasattr(X, "indptr"):
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    if not X.flags.aligned:
        X = X.copy()
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    return X


class _CodeBase(TransformerMixin, BaseEstimator):
    """Fit on ``X`` (``y`` is ignored), ``transform`` gives each row's code;
    the fitted model pickles as okr's model bytes."""

    def _okr_params(self):
        params = dict(self.get_params(deep=False))
        params.pop("n_jobs", None)
        params.pop("random_state", None)
        params["seed"] = int(check_random_state(getattr(self, "random_state", None)).randint(np.iinfo(np.int32).max))
        return params

    def transform(self, X):
        """The code of each row of ``X``, ``(n_samples, code width)``."""
        check_is_fitted(self, "model_")
        return self.model_.transform(_rows(self, X, reset=False), self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __getstate__(self):
        return _pickled_state(super().__getstate__())

    def __setstate__(self, state):
        super().__setstate__(_unpickled_state(state, lambda data: self._model_from_bytes(data, state)))

    def _model_from_bytes(self, data, state):
        return _okr.CodeModel.from_bytes(data)


class _Autoencoder(_CodeBase):
    _kind = None

    def __init__(
        self,
        *,
        hidden_dims=(2,),
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        lam=None,
        max_iter=None,
        warm_start=False,
        verbose=0,
        random_state=None,
        n_jobs=None,
    ):
        self.hidden_dims = hidden_dims
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.lam = lam
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.verbose = verbose
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Fit the autoencoder on ``X``; sets ``embedding_`` (training codes),
        ``n_iter_`` and ``objective_``. With ``warm_start=True`` a fitted
        autoencoder continues for ``max_iter`` more Adam steps from its
        coefficients and optimizer state (``X`` must have the previous
        shape): ``k`` steps then ``k`` more equal ``2k``. ``verbose`` logs the
        steps on the ``logging`` logger ``"okr"`` (INFO): 1 at most once a
        second, 2 every step."""
        X = _rows(self, X, reset=True)
        recipe = json.dumps(_json_ready(self._recipe()))
        self.model_ = _okr.fit_autoencoder(recipe, X, self.n_jobs, _warm_model(self), _verbose(self))
        self.embedding_ = self.model_.train_codes()
        self.n_iter_ = self.model_.n_iter
        self.objective_ = self.model_.objective
        return self

    def _recipe(self):
        """okr's recipe: names only; ``None`` is okr's default (okr checks
        every value, with a ``ValueError`` naming it)."""
        p = self.get_params(deep=False)
        dims = p["hidden_dims"]
        dims = [dims] if np.ndim(dims) == 0 else list(dims)
        estimator = {"name": self._kind, "hidden_dims": [_plain(d) for d in dims]}
        for name, key in (("lam", "lambda"), ("max_iter", "max_iter")):
            if p[name] is not None:
                estimator[key] = _plain(p[name])
        kernel = {"name": p["kernel"]}
        if p["gamma"] is not None:
            kernel["gamma"] = _plain(p["gamma"])
        # scikit-learn ignores degree and coef0 for other kernels; okr refuses them.
        if str(p["kernel"]).lower() in ("polynomial", "poly"):
            for name in ("degree", "coef0"):
                if p[name] is not None:
                    kernel[name] = _plain(p[name])
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        return {
            "estimator": estimator,
            "input": {"kind": "features", "kernel": kernel, "standardize": "no"},
            "seed": seed,
        }

    def score(self, X, y=None):
        """Minus the mean squared reconstruction error of ``X`` (higher is better)."""
        check_is_fitted(self, "model_")
        return -self.model_.reconstruction_error(_rows(self, X, reset=False), self.n_jobs)


class KAE(_Autoencoder):
    """Finite kernel autoencoder: layers ``x -> Phi_l^T k_l(x_l, X_l)`` of
    widths ``hidden_dims`` (the code is the last inner layer) trained by Adam
    for at most ``max_iter`` steps with ridge ``lam``; the first layer's
    kernel is ``kernel`` (``"gaussian"`` with ``gamma``, ``None``: median
    heuristic; ``"linear"``; ``"polynomial"`` with ``degree``, ``gamma``,
    ``coef0``), the others Gaussian with the median heuristic. Sparse input
    is densified once (the finite KAE works on dense rows)."""

    _kind = "kae"


class K2AE(_Autoencoder):
    """K2AE: the kernel autoencoder on an input kernel's Gram matrix, for
    inputs given only through a kernel (any of okr's: ``"gaussian"``,
    ``"linear"``, ``"laplacian"``, ``"polynomial"``, ``"tanimoto"``,
    ``"gaussian-tanimoto"``); otherwise as :class:`KAE`."""

    _kind = "k2ae"


class KPCA(_CodeBase):
    """Uncentred kernel PCA: codes ``k(x, X) V diag(1 / sqrt(eigenvalues))``
    from the top ``n_components`` eigenpairs of the Gram matrix of ``kernel``
    (``gamma``, ``degree``, ``coef0`` as for the other estimators). Keeps
    ``X_fit_`` (new rows are compared with it), as scikit-learn's
    ``KernelPCA`` does.

    Codes have ``min(n_components, n_samples)`` columns, as scikit-learn's
    ``KernelPCA`` (``remove_zero_eig=False``) gives: components beyond the
    Gram's numerical rank (eigenvalues below ``1e-12`` times the largest)
    are zero columns."""

    def __init__(self, n_components=2, *, kernel="gaussian", gamma=None, degree=3, coef0=1.0, n_jobs=None):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_jobs = n_jobs

    def _okr_params(self):
        params = super()._okr_params()
        params.pop("n_components")
        return params

    def fit(self, X, y=None):
        """Eigendecompose the Gram matrix of ``X``; sets ``embedding_``."""
        X = _rows(self, X, reset=True)
        # okr checks n_components (an integer >= 1, ValueError naming it).
        self.model_ = _okr.fit_kpca(self._okr_params(), self.n_components, X, self.n_jobs)
        self.X_fit_ = X
        self.embedding_ = self._padded(self.model_.train_codes())
        return self

    def _padded(self, codes):
        """``codes`` with zero columns up to ``min(n_components, n_samples)``
        (components of zero eigenvalue, as scikit-learn's ``KernelPCA``)."""
        width = min(int(self.n_components), self.X_fit_.shape[0])
        if codes.shape[1] >= width:
            return codes
        return np.hstack([codes, np.zeros((codes.shape[0], width - codes.shape[1]))])

    def transform(self, X):
        """The code of each row of ``X``, ``(n_samples, min(n_components, n_samples_fit))``."""
        return self._padded(super().transform(X))

    def _model_from_bytes(self, data, state):
        params = {k: state[k] for k in ("kernel", "gamma", "degree", "coef0")}
        return _okr.CodeModel.from_kpca_bytes(data, params, state["X_fit_"])
