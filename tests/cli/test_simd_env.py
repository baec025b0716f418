"""SEEDANCE_SIMD as `seedancectl` reads it (port/simd.h): `version` reports the choice, a bad
value is a usage error naming the variable, and the commands that run vector kernels print the
same report with the scalar code as with the default."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import DATA, require_data

TIMES = ("runtime_ms", "solve_ms", "time_to_best_ms", "wall_s")


def run(binary, *args, simd=None):
    env = {k: v for k, v in os.environ.items() if k != "SEEDANCE_SIMD"}
    if simd is not None:
        env["SEEDANCE_SIMD"] = simd
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=env)


def without_times(value):
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def test_version_reports_the_choice(seedancectl):
    default = json.loads(run(seedancectl, "version", "-o", "json").stdout)["simd"]
    assert default["choice"] == "auto"
    assert default["active"] == ("avx2+f16c" if default["cpu_avx2_f16c"] else "scalar")
    scalar = json.loads(run(seedancectl, "version", "-o", "json", simd="scalar").stdout)["simd"]
    assert scalar == {"choice": "scalar", "active": "scalar",
                      "cpu_avx2_f16c": default["cpu_avx2_f16c"]}
    avx2 = run(seedancectl, "version", "-o", "json", simd="avx2")
    assert (avx2.returncode == 0) == default["cpu_avx2_f16c"]


@pytest.mark.parametrize("value", ["sse", "AVX2", "scalar "])
def test_a_bad_value_is_a_usage_error(seedancectl, value):
    r = run(seedancectl, "version", simd=value)
    assert r.returncode == 2
    assert "SEEDANCE_SIMD" in r.stderr and "auto, scalar or avx2" in r.stderr
    assert r.stdout == ""


def test_exact_plans_are_the_same_with_the_scalar_search(seedancectl):
    # The planner's exact search runs an AVX2 span loop; both paths must find the same plan.
    instance = DATA / "minimalloc" / "A.1048576.csv"
    require_data(instance)
    reports = []
    for simd in (None, "scalar"):
        r = run(seedancectl, "mem", "plan", "--input", instance, "--algo", "exact", "--threads",
                "1", "-o", "json", simd=simd)
        assert r.returncode == 0, r.stderr
        reports.append(without_times(json.loads(r.stdout)))
    assert reports[0] == reports[1]
