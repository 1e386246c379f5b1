"""Benchmark data through okr's readers."""

import os

import scipy.sparse as sp

from . import _okr

__all__ = ["load_arff", "data_dir"]


def data_dir():
    """okr's data directory: ``OKR_DATA_DIR``, else ``../shared/data`` of a
    checkout, else the per-user data home ``$XDG_DATA_HOME/okr`` or
    ``~/.local/share/okr`` (as scikit-learn's ``get_data_home``)."""
    return os.fspath(_okr.data_dir())


def load_arff(path, n_labels):
    """Reads a Mulan ARFF file whose last ``n_labels`` attributes are labels.

    Returns ``(X, Y)``: ``X`` a float64 array (dense files) or a CSR matrix
    (sparse files), ``Y`` the label indicator as a CSR matrix of int64. Parse
    errors are ``ValueError`` naming the file and line.
    """
    x, (y_idx, y_ptr, y_shape) = _okr.read_arff(os.fspath(path), int(n_labels))
    if isinstance(x, tuple):
        data, indices, indptr, shape = x
        x = sp.csr_matrix((data, indices, indptr), shape=shape)
    y = sp.csr_matrix(
        (y_idx.astype("int64") * 0 + 1, y_idx, y_ptr), shape=y_shape, dtype="int64"
    )
    return x, y
