"""The seedance package: import, version, optimize, catalog, errors."""

from __future__ import annotations

import pathlib

import pytest

import seedance

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_version_is_the_cmake_project_version():
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert f"VERSION {seedance.__version__} " in cmake


def test_default_job_is_the_shipped_example():
    assert seedance.default_job_yaml() == (REPO / "examples" / "default-job.yaml").read_text()


def test_optimize_default_job():
    report = seedance.optimize()
    assert report["job"]["name"] == "llama-7b-pretrain"
    assert report["job"]["source"].startswith("built-in default")
    assert report["derived"]["parameters"] == 6_738_415_616
    assert report["derived"]["tokens_per_step"] == 512 * 4096
    assert list(report) == ["verdict", "job", "model", "training", "parallelism", "framework", "planning",
                            "hardware", "price", "derived", "time_model", "links",
                            "gpu_memory_bytes", "fragmentation", "before", "search", "fits",
                            "after", "recommendation", "saving", "reasons", "alternatives",
                            "pareto_front"]
    assert report["fits"] is True
    assert report["after"]["memory_bytes_per_gpu"] <= report["gpu_memory_bytes"]
    assert report["saving"]["step_time_pct"] > 0
    only = seedance.optimize(evaluate_only=True)
    assert only["before"] == report["before"] and "after" not in only


def test_optimize_from_path_and_dry_run(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(seedance.default_job_yaml().replace("nodes: 2", "nodes: 4"))
    report = seedance.optimize(job, dry_run=True, profile="prod")
    assert report["hardware"]["gpus_total"] == 32
    assert report["job"]["source"] == str(job)
    assert report["job"]["profile"] == "prod"
    assert "derived" not in report


def test_errors_carry_where_and_code(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(seedance.default_job_yaml().replace("  layers: 32", "  layers: -1"))
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.optimize(bad)
    assert info.value.where == f"{bad}:9: model.layers"
    assert info.value.code == "INVALID_ARGUMENT"
    assert isinstance(info.value, ValueError)
    with pytest.raises(seedance.SeedanceError) as info:
        seedance.optimize(tmp_path / "missing.yaml")
    assert info.value.code == "NOT_FOUND"  # as the CLI says it (base::Env)
    with pytest.raises(seedance.SeedanceError, match="expected dev or prod"):
        seedance.optimize(profile="fast")


def test_catalog_and_override(tmp_path):
    gpus = {g["id"]: g for g in seedance.gpu_catalog()}
    assert set(gpus) == {"V100", "A100-40GB", "A100-80GB", "H100-SXM", "H200", "L40S", "L4",
                         "A10", "MI300X"}
    assert gpus["H200"]["memory_gb"] == 141
    override = tmp_path / "catalog.yaml"
    override.write_text("gpus:\n  - id: H100-SXM\n    price_per_hour_usd: 2.0\n"
                        "    price_date: 2026-11-01\n    price_source: contract\n")
    report = seedance.optimize(catalog=override)
    assert report["price"]["per_gpu_hour_usd"] == 2.0
    assert report["price"]["origin"] == "catalog: contract, 2026-11-01"


def test_cuda_info_is_consistent():
    info = seedance.cuda_info()
    assert isinstance(info["compiled"], bool)
    assert info["device_count"] == len(info["devices"])
    assert bool(info["devices"]) != ("status" in info)  # a reason exactly when none is usable
