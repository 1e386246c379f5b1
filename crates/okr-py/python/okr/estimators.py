"""scikit-learn estimators over okr's kernel-output models.

One class per okr estimator; each only names its
hyper-parameters and the okr estimator behind it (see ``_base``).
"""

from ._base import OkrSurrogate, WeightedFit

_SHARED_PARAMETERS = """
Parameters shared by every estimator: ``kernel`` (input kernel:
``"gaussian"``/``"rbf"``, ``"linear"``, ``"laplacian"``,
``"polynomial"``, ``"tanimoto"``, ``"gaussian-tanimoto"``), ``gamma``
(its width; ``None``: ``1 / (2 median ||x - x'||^2)`` for the
Gaussian-type kernels, ``1 / n_features`` for the polynomial kernel),
``degree`` and ``coef0`` (polynomial only; ``None``: 3 and 1),
``output_kernel`` and ``output_gamma`` (the output kernel; ``None``:
``sigma^2 =`` the mean number of labels per sample for label sets, the
median heuristic for vectors), ``n_jobs`` (okr's threads: ``None`` or
``-1`` every core, ``k`` exactly ``k`` up to the cores: more is capped at
the cores with a ``UserWarning``), ``precision`` (decoding arithmetic:
``"f64"``, or ``"f32"``: candidate scores in single precision with each
row's best candidates re-scored in double precision before the choice,
so decisions differ from ``"f64"`` only at near-ties; docs/performance.md
measures 0.65x of the f64 decode time at best and 0.98x on Bibtex IOKR).
Every parameter left ``None`` takes okr's default (the table in
docs/recipes.md), resolved by the same library code as ``okr fit``:
``lam`` is 1e-3, except IOKR on label sets, where it is chosen by
closed-form leave-one-out F1. The fitted ``model_.recipe`` holds every
value used. Features are used as given (in scikit-learn, scaling is a
pipeline step).
``lam`` is okr's ridge ``lambda`` in ``(K + n lambda I)``, i.e.
scikit-learn's ``KernelRidge(alpha=n * lam)``.
"""


def _shared_parameters(cls):
    """Appends the parameters every kernel-output estimator shares to the
    class docstring (written once here instead of in each class)."""
    cls.__doc__ = cls.__doc__.rstrip() + "\n" + _SHARED_PARAMETERS
    return cls


__all__ = [
    "IOKR",
    "ReducedRankIOKR",
    "KDE",
    "SIOKR",
    "ISOKR",
    "SISOKR",
    "NystroemKRR",
    "NystroemReducedRankIOKR",
    "TraceNormSurrogate",
]


@_shared_parameters
class IOKR(WeightedFit, OkrSurrogate):
    """Input Output Kernel Regression: vector-valued kernel ridge regression into the output RKHS, decoded over the distinct training outputs."""

    _okr_name = "iokr"

    def __init__(
        self,
        *,
        lam=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        n_jobs=None,
        precision="f64",
    ):
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class ReducedRankIOKR(WeightedFit, OkrSurrogate):
    """Reduced-rank IOKR (Brogat-Motte et al. 2022): IOKR projected on a learned rank-``rank`` output subspace (``lam`` for the ridge, ``lam2`` for the projection, default ``lam``)."""

    _okr_name = "reduced_rank"

    def __init__(
        self,
        *,
        rank=None,
        lam=None,
        lam2=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        n_jobs=None,
        precision="f64",
    ):
        self.rank = rank
        self.lam = lam
        self.lam2 = lam2
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class KDE(OkrSurrogate):
    """Kernel dependency estimation (Weston et al. 2003): ridge regression onto the top-``rank`` output kernel PCA directions (uncentred unless ``centered``)."""

    _okr_name = "kde"

    def __init__(
        self,
        *,
        rank=None,
        lam=None,
        centered=False,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        n_jobs=None,
        precision="f64",
    ):
        self.rank = rank
        self.lam = lam
        self.centered = centered
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class SIOKR(WeightedFit, OkrSurrogate):
    """Sketched-input IOKR: the input side solved on an ``input_sketch`` (``KIND:m``, e.g. ``uniform:1000``, ``gaussian:200``; ``m`` is capped at the number of samples); ``random_state`` seeds the sketch."""

    _okr_name = "sketched"
    _recipe_name = "siokr"

    output_sketch = None

    def __init__(
        self,
        *,
        input_sketch="uniform:1000",
        lam=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
        precision="f64",
    ):
        self.input_sketch = input_sketch
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class ISOKR(WeightedFit, OkrSurrogate):
    """Sketched-output IOKR: atoms from an ``output_sketch`` (``KIND:m``); ``random_state`` seeds the sketch."""

    _okr_name = "sketched"
    _recipe_name = "isokr"

    input_sketch = None

    def __init__(
        self,
        *,
        output_sketch="gaussian:100",
        lam=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
        precision="f64",
    ):
        self.output_sketch = output_sketch
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class SISOKR(WeightedFit, OkrSurrogate):
    """Sketched input and output IOKR (El Ahmad et al.): both sides sketched; ``random_state`` seeds the sketches."""

    _okr_name = "sketched"
    _recipe_name = "sisokr"

    def __init__(
        self,
        *,
        input_sketch="uniform:1000",
        output_sketch="gaussian:100",
        lam=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
        precision="f64",
    ):
        self.input_sketch = input_sketch
        self.output_sketch = output_sketch
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class NystroemKRR(WeightedFit, OkrSurrogate):
    """Nystroem kernel ridge regression into the output RKHS on ``n_components`` uniform anchors (capped at the number of samples); ``random_state`` draws them."""

    _okr_name = "nystroem"

    def __init__(
        self,
        *,
        n_components=None,
        lam=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
        precision="f64",
    ):
        self.n_components = n_components
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class NystroemReducedRankIOKR(OkrSurrogate):
    """Reduced-rank IOKR at scale (Brogat-Motte et al. 2022, Nystroem version): the output projection of rank ``rank`` is learned on ``subset_size`` uniformly drawn training points (``lam`` for that ridge), then Nystroem kernel ridge regression on ``n_components`` uniform anchors (``lam2``, default ``lam``) predicts its ``rank`` coordinates; decoding scores candidates through the ``rank`` atoms, so it costs ``rank`` instead of the number of distinct outputs per candidate. Anchors and subset are capped at the number of samples; ``random_state`` draws both. :func:`okr.dask.fit` fits it over row partitions."""

    _okr_name = "nystroem_rr"

    def __init__(
        self,
        *,
        n_components=None,
        subset_size=None,
        rank=None,
        lam=None,
        lam2=None,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
        precision="f64",
    ):
        self.n_components = n_components
        self.subset_size = subset_size
        self.rank = rank
        self.lam = lam
        self.lam2 = lam2
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.precision = precision


@_shared_parameters
class TraceNormSurrogate(OkrSurrogate):
    """Trace-norm regularized surrogate (LR-SELF, Luise et al. 2019) of rank ``rank``; ``solver`` is ``gd`` (factorized gradient descent), ``als`` or ``convex``; ``random_state`` seeds the initialization. A ``rank`` above the number of training samples is capped at it. ``max_iter`` is the solver's iteration budget (``None``: 10000, stopping early at a relative change of 1e-8). With ``warm_start=True`` a second ``fit`` continues the previous one for ``max_iter`` more iterations from its factors (``gd`` and ``als``; the data must have the previous shape): ``k`` iterations then ``k`` more equal ``2k`` in one fit. ``verbose`` (scikit-learn's meaning) logs the iterations on the ``logging`` logger ``"okr"`` at level INFO: 1 at most once a second, 2 every iteration."""

    _okr_name = "trace_norm"

    def __init__(
        self,
        *,
        rank=None,
        lam=None,
        solver=None,
        max_iter=None,
        warm_start=False,
        verbose=0,
        kernel="gaussian",
        gamma=None,
        degree=None,
        coef0=None,
        output_kernel="gaussian",
        output_gamma=None,
        random_state=None,
        n_jobs=None,
        precision="f64",
    ):
        self.rank = rank
        self.lam = lam
        self.solver = solver
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.verbose = verbose
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.output_kernel = output_kernel
        self.output_gamma = output_gamma
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.precision = precision

    def fit(self, X, y):
        """Fit (or, with ``warm_start``, continue) on ``X`` and ``y``; sets
        ``n_iter_``, the solver's iterations over every continued fit."""
        super().fit(X, y)
        self.n_iter_ = self.model_.n_iter
        return self
