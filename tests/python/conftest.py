"""The Python package's suite (ctest's Python.Pytest; PYTHONPATH=python:build/python).
Deterministic: Hypothesis runs derandomized with no example database, so a run's draws and its
verdict do not depend on the machine or on earlier runs."""
import os
import pathlib

import pytest
from hypothesis import settings

pytest_plugins = ["lmoracle.pytest_plugin", "pytester"]

settings.register_profile("lmoracle", derandomize=True, database=None, deadline=None,
                          print_blob=False)
settings.load_profile("lmoracle")

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def lmoracle_bin():
    """The command-line program of the same build (ctest sets LMO_BIN)."""
    path = os.environ.get("LMO_BIN", str(ROOT / "build" / "lmoracle"))
    if not os.path.exists(path):
        pytest.fail(f"the lmoracle program is not built: {path} (set LMO_BIN)")
    return path
