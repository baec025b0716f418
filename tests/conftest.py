"""Shared pytest set-up: find the build tree and the shared data sets.

SEEDANCE_BUILD_DIR (default: build/ in the repository) holds bin/seedancectl
and python/seedance; SEEDANCE_DATA_DIR (default: ../shared/data) holds the
public data sets. A missing data set skips its test, except under CI=true,
where it fails.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("SEEDANCE_BUILD_DIR", REPO / "build")).resolve()
DATA = pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data")).resolve()

sys.path.insert(0, str(BUILD / "python"))


@pytest.fixture(scope="session")
def seedancectl() -> pathlib.Path:
    path = BUILD / "bin" / "seedancectl"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (cmake --preset dev && cmake --build build)")
    return path


@pytest.fixture(scope="session")
def data_dir() -> pathlib.Path:
    return DATA


def require_data(path: pathlib.Path) -> pathlib.Path:
    """Returns path, or skips (fails under CI=true) when it does not exist."""
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"data set missing under CI: {path}")
        pytest.skip(f"data set not found: {path}")
    return path
