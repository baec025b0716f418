"""Golden-behaviour tests of the seedancectl binary: output formats, help at
every level, and the `error: <what> (<where>)` contract with exit codes."""

from __future__ import annotations

import json
import pathlib
import subprocess

import pytest

import seedance

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_JOB = (REPO / "examples" / "default-job.yaml").read_text()

# Every command that reports, with the arguments it needs.
REPORTING = [["version"], ["optimize"], ["optimize", "--dry-run"], ["catalog", "list"],
             ["precision", "show", "1"], ["comm", "advise"], ["kv", "estimate"],
             ["cost", "tco"], ["cost", "power"], ["topo", "show"]]


def run(binary, *args, **kwargs):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=60, **kwargs)


@pytest.mark.parametrize("command", REPORTING, ids=" ".join)
def test_json_output_is_one_document(seedancectl, command):
    r = run(seedancectl, *command, "--output", "json")
    assert r.returncode == 0, r.stderr
    assert isinstance(json.loads(r.stdout), dict)
    assert r.stderr == ""


@pytest.mark.parametrize("command", REPORTING, ids=" ".join)
def test_table_output_is_the_default(seedancectl, command):
    r = run(seedancectl, *command)
    assert r.returncode == 0, r.stderr
    assert r.stdout == run(seedancectl, *command, "-o", "table").stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.stdout)


def _key_paths(value, prefix: str = "") -> set[str]:
    """Every key of a JSON document, alone and as a dotted path from the top and from the nearest
    list (a table's row)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else k
            out |= {k, path} | _key_paths(v, path)
    elif isinstance(value, list):
        for v in value:
            out |= _key_paths(v, prefix) | _key_paths(v)
    return out


# Columns that are not JSON keys, with the reason: precision show has one row per format where
# the JSON has a map keyed by the format's name.
PIVOTED = {"precision show 1": {"format"}}


@pytest.mark.parametrize("command", [c for c in REPORTING if c != ["topo", "show"]], ids=" ".join)
def test_table_columns_are_json_keys(seedancectl, command):
    """One report, two renderings: every column header of the wide table (`-o wide`, the whole
    report; the default table of some commands is a shorter view, tests/cli/test_first_screen.py)
    names a key of the JSON (upper case, `_` as a space; nested keys dotted). topo show is left
    out: its table is nvidia-smi's topology matrix, by design."""
    keys = _key_paths(json.loads(run(seedancectl, *command, "-o", "json").stdout))
    keys |= PIVOTED.get(" ".join(command), set())
    headers = [line for line in run(seedancectl, *command, "-o", "wide").stdout.splitlines()
               if line.startswith("  ") and line.strip() == line.strip().upper()
               and any(c.isalpha() for c in line)]
    for line in headers:
        for column in line.strip().split("  "):
            if column.strip():
                assert column.strip().lower().replace(" ", "_") in keys, (column, line)


@pytest.mark.parametrize("command", [[], ["version"], ["optimize"], ["catalog"], ["catalog", "list"],
                                     ["mem"], ["mem", "plan"], ["mem", "check"], ["precision"],
                                     ["precision", "show"], ["comm"], ["comm", "advise"],
                                     ["comm", "nccl-log"], ["cost"], ["cost", "compare"],
                                     ["cost", "pareto"], ["cost", "tco"], ["cost", "roi"],
                                     ["cost", "power"], ["cost", "power-fit"],
                                     ["cost", "breakdown"], ["cost", "report"], ["kv"],
                                     ["kv", "eval"], ["kv", "estimate"], ["kv", "serve-bench"],
                                     ["kv", "serve"], ["topo"], ["topo", "show"], ["topo", "check"],
                                     ["probe"], ["simulate"], ["doctor"], ["diagnose"],
                                     ["loadtest"]],
                         ids=lambda c: " ".join(c) or "top")
def test_help_at_every_level(seedancectl, command):
    r = run(seedancectl, *command, "--help")
    assert r.returncode == 0
    assert "Usage:" in r.stdout


def test_cli_report_equals_python_report(seedancectl):
    r = run(seedancectl, "optimize", "--output", "json")
    assert json.loads(r.stdout) == seedance.optimize()


def test_optimize_exit_code_when_the_job_does_not_fit(seedancectl, tmp_path):
    """3 means "does not fit" (a CI gate's answer), distinct from 1 (an error) and 2 (usage);
    the report still prints, with the smallest change that would make the job fit."""
    job = tmp_path / "big.yaml"
    job.write_text(DEFAULT_JOB.replace("gpu: H100-SXM", "gpu: L4").replace("nodes: 2", "nodes: 1")
                   .replace("gpus_per_node: 8", "gpus_per_node: 1")
                   .replace("global_batch: 512", "global_batch: 64")
                   .replace("intra_node: nvlink", "intra_node: pcie"))
    r = run(seedancectl, "optimize", job, "-o", "json")
    assert r.returncode == 3, r.stderr
    report = json.loads(r.stdout)
    assert report["fits"] is False and report["after"] is None
    assert report["does_not_fit"]["smallest_change"]["hardware.nodes"] > 1
    assert run(seedancectl, "optimize").returncode == 0
    assert "3 the job does not fit" in run(seedancectl, "optimize", "--help").stdout


@pytest.mark.parametrize("example", sorted((REPO / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_job_plans_to_a_fit(seedancectl, example):
    r = run(seedancectl, "optimize", example, "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["fits"] is True and report["after"]["fits"] is True


def test_optimize_file_argument_and_flags(seedancectl, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(DEFAULT_JOB)
    report = json.loads(run(seedancectl, "optimize", job, "--profile", "prod", "-o", "json").stdout)
    assert report["job"]["source"] == str(job)
    assert report["job"]["profile"] == "prod"
    assert report["derived"]["parameters"] == 6_738_415_616


def check_error(result, *parts):
    assert result.returncode != 0
    assert result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("error: "), line
    assert line.endswith(")"), line
    for part in parts:
        assert part in line, line


def test_unknown_key_names_key_and_line(seedancectl, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEFAULT_JOB.replace("  layers: 32", "  layerz: 32"))
    check_error(run(seedancectl, "optimize", bad), "unknown key 'model.layerz'",
                f"({bad}:9: model.layerz)")


def test_missing_file(seedancectl, tmp_path):
    check_error(run(seedancectl, "optimize", tmp_path / "nope.yaml"), "no such file",
                f"({tmp_path / 'nope.yaml'})")


def test_yaml_syntax_error_has_line_and_column(seedancectl, tmp_path):
    bad = tmp_path / "syntax.yaml"
    bad.write_text("name: x\nmodel: {layers: 2\n")
    check_error(run(seedancectl, "optimize", bad), "YAML syntax error", f"({bad}:")


@pytest.mark.parametrize("old,new,where", [
    ("  layers: 32", "  layers: thirty-two", ":9: model.layers"),
    ("nodes: 2", "nodes: -1", ":24: hardware.nodes"),
    ("gpu: H100-SXM", "gpu: RTX-9090", ":22: hardware.gpu"),
])
def test_wrong_type_negative_count_unknown_gpu(seedancectl, tmp_path, old, new, where):
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEFAULT_JOB.replace(old, new))
    check_error(run(seedancectl, "optimize", bad), f"({bad}{where})")


def test_usage_errors_exit_2(seedancectl):
    for args in (["frobnicate"], ["optimize", "--output", "xml"], ["optimize", "--profile", "x"],
                 ["catalog"]):
        r = run(seedancectl, *args)
        assert r.returncode == 2, args
        assert r.stderr.startswith("error: "), r.stderr


@pytest.mark.parametrize("args,message", [
    (["simulat"], "unknown command 'simulat'; did you mean 'simulate'? The commands: version, "),
    (["--catalog", "x.yaml", "catalg", "list"], "unknown command 'catalg'; did you mean 'catalog'?"),
    (["kv", "evl"], "unknown verb 'evl' for 'kv'; did you mean 'eval'? The verbs: eval, estimate, "
                    "serve-bench, serve (command line; see 'seedancectl kv --help')"),
    # Asking for help of a verb that does not exist is an error too, not the noun's help.
    (["kv", "nosuchverb", "--help"], "unknown verb 'nosuchverb' for 'kv'. The verbs: eval, "),
    (["mem"], "'mem' needs a verb: plan, check, replay (command line; "),
])
def test_unknown_or_missing_words_say_what_is_known(seedancectl, args, message):
    r = run(seedancectl, *args)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("error: " + message), r.stderr


def test_catalog_override_flag_and_env(seedancectl, tmp_path):
    cat = tmp_path / "cat.yaml"
    cat.write_text("gpus:\n  - id: L4\n    price_per_hour_usd: 0.5\n")
    for r in (run(seedancectl, "--catalog", cat, "catalog", "list", "-o", "json"),
              # a global option after the noun and verb works too
              run(seedancectl, "catalog", "list", "--catalog", cat, "-o", "json"),
              run(seedancectl, "catalog", "list", "-o", "json",
                  env={"SEEDANCE_GPU_CATALOG": str(cat), "PATH": "/usr/bin:/bin"})):
        gpus = {g["id"]: g for g in json.loads(r.stdout)["gpus"]}
        assert gpus["L4"]["price_per_hour_usd"] == 0.5
    cat.write_text("gpus:\n  - id: L4\n    tdp_watts: hot\n")
    check_error(run(seedancectl, "--catalog", cat, "catalog", "list"), f"({cat}:3: gpus[0].tdp_watts)")


def test_version_reports_cuda(seedancectl):
    info = json.loads(run(seedancectl, "version", "-o", "json").stdout)
    assert info["version"] == seedance.__version__
    assert set(info["cuda"]) >= {"compiled", "device_count"}
