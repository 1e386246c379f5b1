"""Pickling goes through okr's model bytes (the format of `okr fit`'s
model files: versioned, checksummed), and a pickled model predicts exactly
as before, in this process and in a fresh one."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import okr

ESTIMATORS = [
    lambda: okr.IOKR(lam=1e-2),
    lambda: okr.ReducedRankIOKR(rank=3),
    lambda: okr.KDE(rank=3),
    lambda: okr.SISOKR(input_sketch="uniform:30", output_sketch="gaussian:4", random_state=0),
    lambda: okr.NystroemKRR(n_components=25, random_state=0),
    lambda: okr.NystroemReducedRankIOKR(n_components=25, subset_size=30, rank=3, random_state=0),
    lambda: okr.TraceNormSurrogate(rank=3, random_state=0),
    lambda: okr.LEML(rank=3, random_state=0),
]


def _data(seed=0, n=60, d=7, l=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, l)) + 0.3 * rng.normal(size=(n, l)) > 0.4).astype(int)
    return X, Y


def _outputs(est, X):
    out = {"predict": est.predict(X), "decision_function": est.decision_function(X)}
    pred = out["predict"]
    out["predict"] = pred.toarray() if sp.issparse(pred) else pred
    return out


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("targets", ["labels", "vectors"])
def test_pickled_model_predicts_identically(make, targets):
    X, Y = _data()
    est = make()
    if targets == "vectors":
        if isinstance(est, okr.LEML):
            pytest.skip("LEML predicts label scores only")
        Y = Y + np.linspace(0.1, 0.5, Y.shape[1])  # not 0/1: vector outputs
    est.fit(X[:45], Y[:45])
    blob = pickle.dumps(est)
    # The model travels as okr's bytes, not as an opaque Rust object.
    assert okr._okr.__name__ in sys.modules
    back = pickle.loads(blob)
    before, after = _outputs(est, X[45:]), _outputs(back, X[45:])
    for key in before:
        np.testing.assert_array_equal(before[key], after[key], err_msg=key)
    assert type(back.model_) is type(est.model_)


def test_pickle_holds_okr_model_bytes():
    X, Y = _data()
    est = okr.IOKR(lam=1e-2).fit(X, Y)
    state = est.__getstate__()
    held = state["model_"]
    assert isinstance(held, np.ndarray) and held.dtype == np.uint8 and held.tobytes()[:8] == b"OKRMODEL"
    # The same bytes as the model's own encoding; decoding them again gives the same bytes.
    assert held.tobytes() == est.model_.to_bytes()
    assert okr._okr.Model.from_bytes(held.tobytes()).to_bytes() == held.tobytes()
    # Pickles of earlier versions held the bytes as `bytes`: still read.
    old = dict(state, model_=held.tobytes())
    fresh = okr.IOKR.__new__(okr.IOKR)
    fresh.__setstate__(old)
    np.testing.assert_array_equal(fresh.decision_function(X), est.decision_function(X))


def test_pickle_protocol_5_ships_the_model_out_of_band():
    # Dask and multiprocessing pickle with a buffer callback: the model's
    # bytes must go out of band (no copy into the stream), in one buffer
    # (the other out-of-band buffers are the estimator's numpy attributes).
    X, Y = _data()
    est = okr.IOKR(lam=1e-2).fit(X, Y)
    size = len(est.model_.to_bytes())
    buffers = []
    stream = pickle.dumps(est, protocol=5, buffer_callback=buffers.append)
    sizes = [b.raw().nbytes for b in buffers]
    assert sizes.count(size) == 1 and sum(sizes) - size == est.candidates_.nbytes
    assert len(stream) < size
    back = pickle.loads(stream, buffers=buffers)
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_damaged_pickle_is_refused_with_okrs_message():
    X, Y = _data()
    est = okr.IOKR(lam=1e-2).fit(X, Y)
    state = est.__getstate__()
    raw = bytearray(state["model_"])
    raw[len(raw) // 2] ^= 0xFF
    state["model_"] = bytes(raw)
    fresh = okr.IOKR.__new__(okr.IOKR)
    with pytest.raises(ValueError, match="corrupt model file: checksum mismatch"):
        fresh.__setstate__(state)
    with pytest.raises(ValueError, match="expected a LEML model"):
        okr._okr.ScoreModel.from_bytes(est.model_.to_bytes())
    with pytest.raises(ValueError, match="not an okr model file"):
        okr._okr.Model.from_bytes(b"not a model")


def test_pickled_model_predicts_identically_in_a_fresh_process(tmp_path):
    X, Y = _data(seed=3)
    models = {
        "iokr": okr.IOKR(lam=1e-2).fit(X[:45], Y[:45]),
        "sisokr": okr.SISOKR(input_sketch="uniform:30", output_sketch="gaussian:4", random_state=1).fit(
            X[:45], Y[:45]
        ),
        "leml": okr.LEML(rank=3, random_state=0).fit(X[:45], Y[:45]),
    }
    for name, est in models.items():
        (tmp_path / f"{name}.pkl").write_bytes(pickle.dumps(est))
        np.save(tmp_path / f"{name}.npy", est.decision_function(X[45:]))
    np.save(tmp_path / "x.npy", X[45:])
    script = (
        "import pickle, sys, numpy as np\n"
        "d = sys.argv[1]\n"
        "x = np.load(d + '/x.npy')\n"
        "for name in ('iokr', 'sisokr', 'leml'):\n"
        "    est = pickle.load(open(d + '/' + name + '.pkl', 'rb'))\n"
        "    np.save(d + '/' + name + '.fresh.npy', est.decision_function(x))\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, env=dict(os.environ))
    for name in models:
        np.testing.assert_array_equal(np.load(tmp_path / f"{name}.npy"), np.load(tmp_path / f"{name}.fresh.npy"))
