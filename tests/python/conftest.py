import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "reports"))

import synth  # noqa: E402
from versus.load import load_file  # noqa: E402


@pytest.fixture
def make_run(tmp_path):
    """make_run(model, sizes, **kw) -> loaded Run (written to a temporary JSONL file)."""
    counter = [0]

    def _make(model, sizes, **kw):
        counter[0] += 1
        path = tmp_path / f"run{counter[0]}.jsonl"
        synth.write_run(path, model, sizes, **kw)
        return load_file(path)[0]
    return _make


@pytest.fixture
def data_dir():
    return os.path.join(HERE, "data")
