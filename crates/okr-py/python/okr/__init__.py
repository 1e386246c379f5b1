"""okr: output kernel regression as scikit-learn estimators, backed by Rust.

Estimators (``fit(X, Y)`` with ``Y`` a 0/1 label indicator, dense or
sparse, class labels, or a float matrix of vector outputs; ``predict``,
``predict_topk``, ``rank_candidates`` (per-row candidate sets),
``decision_function``, ``score``):
:class:`IOKR`, :class:`ReducedRankIOKR`, :class:`KDE`, :class:`SIOKR`,
:class:`ISOKR`, :class:`SISOKR`, :class:`NystroemKRR`, :class:`NystroemReducedRankIOKR`,
:class:`TraceNormSurrogate`; label scores: :class:`LEML`; codes
(``fit(X)``, ``transform``): :class:`KAE`, :class:`K2AE`, :class:`KPCA`. Data: :func:`load_arff`, :func:`data_dir`. Model files of ``okr fit``:
:func:`load` (and ``est.save(path)``); recipes: :func:`from_recipe`. Model
selection with okr's fast paths (the search of ``okr tune``): :class:`SearchCV`.
Several input kernels combined (uniform or ALIGNF weights): :class:`CombinedKernel`.
"""

from . import _okr, estimators
from ._base import RankedCandidates, f1_samples
from ._codes import K2AE, KAE, KPCA
from ._kernels import CombinedKernel
from ._leml import LEML
from ._output_basis import OutputEmbedding, SurrogateRegressor
from ._recipes import from_recipe, load
from ._search import SearchCV
from .datasets import data_dir, load_arff
from .estimators import (
    IOKR,
    ISOKR,
    KDE,
    SIOKR,
    SISOKR,
    NystroemKRR,
    NystroemReducedRankIOKR,
    ReducedRankIOKR,
    TraceNormSurrogate,
)

__version__ = _okr.__version__

# The kernel-output estimators are listed once, in estimators.__all__.
__all__ = [
    *estimators.__all__,
    "LEML",
    "OutputEmbedding",
    "SurrogateRegressor",
    "KAE",
    "K2AE",
    "KPCA",
    "RankedCandidates",
    "f1_samples",
    "load_arff",
    "data_dir",
    "load",
    "from_recipe",
    "SearchCV",
    "CombinedKernel",
]
