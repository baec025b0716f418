"""Shared by the tests that scrape an exporter: the exposition text must pass promtool."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def assert_promtool_accepts(metrics: str) -> None:
    """``promtool check metrics`` on the text; required under CI, skipped elsewhere if absent."""
    promtool = shutil.which("promtool")
    if promtool is None and os.environ.get("CI") == "true":
        pytest.fail("promtool missing under CI (Debian package prometheus)")
    if promtool is not None:
        check = subprocess.run([promtool, "check", "metrics"], input=metrics, text=True,
                               capture_output=True)
        assert check.returncode == 0, check.stdout + check.stderr
