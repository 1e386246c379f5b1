"""KAE, K2AE and KPCA: codes against closed forms, pickling, sparse input."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import okr


def _x(n=40, d=5, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_kpca_codes_match_numpy_eigendecomposition():
    X = _x()
    gamma = 0.3
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-gamma * sq)
    w, V = np.linalg.eigh(K)
    top = np.argsort(w)[::-1][:3]
    want = V[:, top] * np.sqrt(w[top])  # K V diag(1/sqrt(w)) = V diag(sqrt(w))
    est = okr.KPCA(n_components=3, gamma=gamma).fit(X)
    got = est.transform(X)
    # Eigenvectors are defined up to sign: compare column by column.
    for j in range(3):
        s = np.sign(got[:, j] @ want[:, j])
        np.testing.assert_allclose(s * got[:, j], want[:, j], atol=1e-8)
    np.testing.assert_allclose(est.embedding_, got, atol=1e-8)


def test_kpca_on_new_rows_uses_the_cross_kernel():
    X, Xt = _x(), _x(7, seed=1)
    gamma = 0.3
    est = okr.KPCA(n_components=2, gamma=gamma).fit(X)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    w, V = np.linalg.eigh(np.exp(-gamma * sq))
    top = np.argsort(w)[::-1][:2]
    cross = np.exp(-gamma * ((Xt[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    want = cross @ V[:, top] / np.sqrt(w[top])
    got = est.transform(Xt)
    for j in range(2):
        s = np.sign(got[:, j] @ want[:, j])
        np.testing.assert_allclose(s * got[:, j], want[:, j], atol=1e-8)


@pytest.mark.parametrize("cls", [okr.KAE, okr.K2AE])
def test_autoencoder_codes_of_the_training_rows_are_its_embedding(cls):
    X = _x()
    est = cls(hidden_dims=(4, 2), max_iter=40, random_state=0).fit(X)
    assert est.embedding_.shape == (40, 2)
    np.testing.assert_allclose(est.transform(X), est.embedding_, rtol=1e-9, atol=1e-9)
    assert est.n_iter_ >= 1 and np.isfinite(est.objective_)
    assert est.score(X) <= 0.0
    # A fixed random_state gives the same model.
    again = cls(hidden_dims=(4, 2), max_iter=40, random_state=0).fit(X)
    np.testing.assert_array_equal(again.embedding_, est.embedding_)


@pytest.mark.parametrize(
    "make",
    [
        lambda: okr.KAE(hidden_dims=(3,), max_iter=30, random_state=0),
        lambda: okr.K2AE(hidden_dims=(3,), kernel="laplacian", max_iter=30, random_state=0),
        lambda: okr.KPCA(n_components=3),
    ],
)
def test_code_models_pickle_through_okr_bytes(make):
    X, Xt = _x(), _x(6, seed=2)
    est = make().fit(X)
    state = est.__getstate__()
    assert state["model_"].dtype == np.uint8 and state["model_"].tobytes()[:8] == b"OKRMODEL"
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.transform(Xt), est.transform(Xt))


def test_sparse_input_gives_the_dense_codes():
    X = _x()
    X[np.abs(X) < 0.7] = 0.0
    for est in (okr.KPCA(n_components=2, gamma=0.2), okr.KAE(hidden_dims=(2,), max_iter=20, random_state=1)):
        dense = est.fit(X).transform(X)
        sparse = est.fit(sp.csr_matrix(X)).transform(sp.csr_matrix(X))
        np.testing.assert_allclose(sparse, dense, rtol=1e-9, atol=1e-9)


def test_bad_parameters_raise_okrs_message():
    X = _x()
    with pytest.raises(ValueError, match="hidden_dims"):
        okr.KAE(hidden_dims=()).fit(X)
    with pytest.raises(ValueError, match="KAE takes gaussian, linear or polynomial"):
        okr.KAE(kernel="tanimoto").fit(X)
    with pytest.raises(ValueError, match="max\\(n_samples = 40"):
        okr.KAE(hidden_dims=(100,)).fit(X)
