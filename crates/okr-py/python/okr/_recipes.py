"""Model files and recipes across front doors: :func:`load` opens a model
file that ``okr fit`` (or :meth:`OkrSurrogate.save`) wrote as the matching
fitted estimator; :func:`from_recipe` builds the estimator a recipe (okr's
JSON request, as ``okr info --json`` prints it) describes."""

import json

import numpy as np

from . import _okr
from . import estimators as _est
from ._base import _fitted_candidates, _set_kernel_weights
from ._kernels import _from_recipe as _combined_kernel

# okr's canonical estimator names (the recipe's) -> the Python classes.
_CLASSES = {
    "iokr": _est.IOKR,
    "reduced-rank": _est.ReducedRankIOKR,
    "kde": _est.KDE,
    "siokr": _est.SIOKR,
    "isokr": _est.ISOKR,
    "sisokr": _est.SISOKR,
    "nystroem": _est.NystroemKRR,
    "nystroem-reduced-rank": _est.NystroemReducedRankIOKR,
    "trace-norm": _est.TraceNormSurrogate,
}


def _params(cls, recipe):
    """The constructor parameters of ``cls`` that ``recipe`` sets."""
    names = cls().get_params(deep=False)
    est = recipe.get("estimator", {})
    params = {}
    for py, key in cls._RECIPE_PARAMS:
        if py in names and key in est:
            value = est[key]
            params[py] = value if not isinstance(value, list) else value
    inp = recipe.get("input", {"kind": "features"})
    if inp.get("kind") == "combined":
        params["kernel"] = _combined_kernel(inp)
    elif inp.get("kind") != "features":
        raise ValueError(f"the recipe's input is {inp.get('kind')!r}: the Python estimators take features")
    kernel = inp.get("kernel", {}) if inp.get("kind") == "features" else {}
    for py, key in (("kernel", "name"), ("gamma", "gamma"), ("degree", "degree"), ("coef0", "coef0")):
        if py in names and key in kernel:
            params[py] = kernel[key]
    out = (recipe.get("output") or {}).get("kernel") or {}
    for py, key in (("output_kernel", "name"), ("output_gamma", "gamma")):
        if py in names and key in out:
            params[py] = out[key]
    if "random_state" in names and "seed" in recipe:
        params["random_state"] = int(recipe["seed"])
    return params


def _pin_seed(est, recipe):
    """Makes ``est`` fit with the recipe's seed itself (a ``random_state``
    would seed a draw)."""
    if "random_state" in est.get_params(deep=False) and "seed" in recipe:
        est._okr_seed = (est.random_state, int(recipe["seed"]))
    return est


def from_recipe(recipe):
    """The (unfitted) estimator a recipe describes: a dict, or its JSON text."""
    if isinstance(recipe, str):
        recipe = json.loads(recipe)
    name = recipe.get("estimator", {}).get("name")
    cls = _CLASSES.get(name)
    if cls is None:
        raise ValueError(f"no Python estimator for the recipe's estimator {name!r} (expected one of {sorted(_CLASSES)})")
    return _pin_seed(cls(**_params(cls, recipe)), recipe)


def load(path):
    """The fitted estimator of a model file written by ``okr fit`` or
    :meth:`OkrSurrogate.save`: predictions equal ``okr predict``'s (the
    model's standardizer, when it has one, is applied to ``X``)."""
    model = _okr.Model.load(str(path))
    if model.recipe is not None:
        est = from_recipe(model.recipe)
    else:
        cls = _CLASSES.get(model.estimator)
        if cls is None:
            raise ValueError(f"{path}: a {model.estimator} model has no Python estimator")
        est = cls()
    est.model_ = model
    est.n_outputs_ = model.output_dim
    est.n_features_in_ = model.n_features
    est._y_sparse = False
    if model.output_kind == "vectors":
        est._mode, est._y_dtype = "vectors", np.dtype(np.float64)
    else:
        est._mode, est._y_dtype = "labels", np.dtype(np.int64)
    est.candidates_ = _fitted_candidates(est)
    _set_kernel_weights(est)
    if model.label_names:
        est.label_names_ = np.asarray(model.label_names, dtype=object)
    return est
