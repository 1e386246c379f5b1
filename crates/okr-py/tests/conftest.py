import os

import pytest

import okr


@pytest.fixture(scope="session")
def emotions():
    """Mulan emotions (72 features, 6 labels) from OKR_DATA_DIR."""
    root = okr.data_dir()
    path = os.path.join(root, "emotions", "emotions-train.arff")
    if not os.path.exists(path):
        pytest.fail(f"emotions not found at {path}: set OKR_DATA_DIR (see shared/data/README)")
    X, Y = okr.load_arff(path, 6)
    Xt, Yt = okr.load_arff(os.path.join(root, "emotions", "emotions-test.arff"), 6)
    return X, Y.toarray(), Xt, Yt.toarray()
