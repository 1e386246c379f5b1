"""Combined input kernels: :class:`CombinedKernel`, the Python spelling of
``okr fit --input-kernels K1,K2,... --mkl uniform|alignf`` (the recipe's
``combined`` input side)."""

import numbers

from sklearn.base import BaseEstimator

__all__ = ["CombinedKernel"]

_WEIGHTINGS = ("uniform", "alignf")


class CombinedKernel(BaseEstimator):
    """Several of okr's feature kernels combined into one input kernel,
    ``k(x, x') = sum_m w_m k_m(x, x')``, passed as an estimator's ``kernel``:
    ``okr.IOKR(kernel=okr.CombinedKernel(["gaussian", "linear"],
    weighting="alignf"))``.

    ``kernels``: a list of kernel names (``"gaussian"``, ``"laplacian"``,
    ``"linear"``, ``"polynomial"``, ... as an estimator's ``kernel``), of
    ``"name:gamma"`` strings (``"gaussian:0.5"``, the CLI's spelling) or of
    dicts ``{"name": ..., "gamma": ..., "degree": ..., "coef0": ...}``. A
    Gaussian-type kernel without ``gamma`` gets okr's median heuristic on
    the training rows, as with a single kernel. ``weighting``:
    ``"uniform"`` (``1/p`` each) or ``"alignf"`` (the non-negative weights
    of unit norm that maximize the centred alignment of the combined
    training Gram with the output Gram, Cortes et al. 2012), computed by
    okr at ``fit`` on the training rows; ``weights``: fixed weights (one per
    kernel, finite and ``>= 0``) instead.

    The fitted estimator's ``kernel_weights_`` holds the weights used; they
    are stored in the model (``okr info`` shows them) and prediction applies
    the same combination. Being a scikit-learn object, its parameters are
    searchable from the estimator: ``GridSearchCV(okr.IOKR(kernel=ck),
    {"kernel__weighting": ["uniform", "alignf"], "lam": [...]})``; each
    fold recomputes the weights on its own training rows.
    """

    def __init__(self, kernels=("gaussian", "linear"), weighting="uniform", weights=None):
        self.kernels = kernels
        self.weighting = weighting
        self.weights = weights

    def _recipe(self):
        """The recipe's ``combined`` input side (checked by okr at fit)."""
        if isinstance(self.kernels, (str, dict)) or not hasattr(self.kernels, "__iter__"):
            raise ValueError(f"CombinedKernel kernels must be a list of kernels, got {self.kernels!r}")
        if self.weighting not in _WEIGHTINGS:
            raise ValueError(f"invalid weighting = {self.weighting!r}: expected one of {', '.join(_WEIGHTINGS)}")
        inputs = {
            "kind": "combined",
            "kernels": [_kernel(k) for k in self.kernels],
            "mkl": self.weighting,
            "standardize": "no",
        }
        if self.weights is not None:
            inputs["weights"] = [float(w) for w in self.weights]
        return inputs


def _kernel(k):
    """One kernel of a combination as a recipe's kernel (a dict)."""
    name = k.get("name") if isinstance(k, dict) else k.partition(":")[0] if isinstance(k, str) else None
    if str(name).lower() == "precomputed":
        raise ValueError(
            "CombinedKernel combines okr's feature kernels: precomputed Grams cannot be combined yet "
            "(one Gram: kernel='precomputed')"
        )
    if isinstance(k, str):
        name, sep, gamma = k.partition(":")
        if not sep:
            return {"name": name}
        try:
            return {"name": name, "gamma": float(gamma)}
        except ValueError:
            raise ValueError(f"invalid kernel {k!r}: expected NAME or NAME:GAMMA") from None
    if isinstance(k, dict):
        unknown = set(k) - {"name", "gamma", "degree", "coef0"}
        if "name" not in k or unknown:
            raise ValueError(f"invalid kernel {k!r}: expected keys name, gamma, degree, coef0")
        out = {"name": k["name"]}
        for key in ("gamma", "degree", "coef0"):
            if k.get(key) is not None:
                v = k[key]
                out[key] = int(v) if key == "degree" and isinstance(v, numbers.Integral) else v
        return out
    raise ValueError(f"invalid kernel {k!r}: expected a name, 'name:gamma' or a dict")


def _from_recipe(inputs):
    """The :class:`CombinedKernel` of a recipe's ``combined`` input side
    (its weights: those the fit recorded)."""
    kernels = []
    for k in inputs.get("kernels", []):
        kernels.append({key: k[key] for key in ("name", "gamma", "degree", "coef0") if key in k})
    return CombinedKernel(kernels, weighting=inputs.get("mkl", "uniform"), weights=inputs.get("weights"))
