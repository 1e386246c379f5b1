"""`okr predict --output-format csv` read by pandas: the label names are the
columns and there is one row per input (issue 15's acceptance). Runs the
`okr` binary of this checkout (OKR_BIN, or target/debug or target/release,
which `cargo xtask test` builds before pytest)."""

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import okr

ROOT = Path(__file__).resolve().parents[3]


def _okr_bin():
    for p in [os.environ.get("OKR_BIN"), ROOT / "target/debug/okr", ROOT / "target/release/okr"]:
        if p and Path(p).is_file():
            return str(p)
    pytest.skip("no okr binary: run `cargo build -p okr-cli` (cargo xtask test builds it)")


def test_csv_predictions_load_in_pandas_with_label_names(tmp_path):
    okr_bin = _okr_bin()
    root = Path(okr.data_dir()) / "emotions"
    model, out = tmp_path / "e.okr", tmp_path / "p.csv"
    subprocess.run(
        [okr_bin, "fit", "--train", str(root / "emotions-train.arff"), "--label-count", "6", "-m", str(model)],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [okr_bin, "predict", "-m", str(model), "-i", str(root / "emotions-test.arff"),
         "--output-format", "csv", "--scores", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    df = pd.read_csv(out)
    names = ["amazed-suprised", "happy-pleased", "relaxing-calm", "quiet-still", "sad-lonely", "angry-aggresive"]
    assert list(df.columns) == names + [f"score:{n}" for n in names]
    assert df.shape == (202, 12)
    assert set(df[names].to_numpy().ravel()) <= {0, 1}
    assert df[[f"score:{n}" for n in names]].notna().all().all()
