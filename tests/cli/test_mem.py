"""`seedancectl mem plan|check` on every allocation instance in the shared data,
with the independent checker run on every plan."""

from __future__ import annotations

import csv
import json
import pathlib
import subprocess

import pytest

from conftest import DATA, require_data, run_on_tty

MINIMALLOC = sorted((DATA / "minimalloc").glob("*.csv")) if (DATA / "minimalloc").exists() else []
IDEALLOC = sorted((DATA / "idealloc").glob("*.csv")) if (DATA / "idealloc").exists() else []


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def plan_and_check(seedancectl, tmp_path, instance, *plan_args):
    require_data(instance)
    plan_file = tmp_path / (instance.stem + ".plan.csv")
    r = run(seedancectl, "mem", "plan", "--input", instance, "--offsets-out", plan_file,
            "-o", "json", *plan_args)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    c = run(seedancectl, "mem", "check", "--input", instance, "--offsets", plan_file, "-o", "json")
    assert c.returncode == 0, c.stdout + c.stderr
    check = json.loads(c.stdout)
    assert check["valid"] is True
    assert check["peak_bytes"] == report["peak_bytes"]
    assert report["lower_bound_bytes"] <= report["peak_bytes"] <= report["greedy_peak_bytes"]
    assert report["ratio"] == pytest.approx(report["peak_bytes"] / report["lower_bound_bytes"])
    return report, plan_file


@pytest.mark.parametrize("instance", MINIMALLOC or [DATA / "minimalloc"], ids=lambda p: p.name)
def test_minimalloc_instances(seedancectl, tmp_path, instance):
    report, _ = plan_and_check(seedancectl, tmp_path, instance, "--time-limit", "0.3")
    if report["optimal"]:
        assert report["peak_bytes"] == report["lower_bound_bytes"] or report["algo"] == "exact"


@pytest.mark.parametrize("instance", IDEALLOC or [DATA / "idealloc"], ids=lambda p: p.name)
def test_idealloc_instances_greedy(seedancectl, tmp_path, instance):
    report, _ = plan_and_check(seedancectl, tmp_path, instance, "--algo", "greedy")
    assert report["algo"].startswith("greedy/")


def pairwise_valid(rows):
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if a["lower"] < b["upper"] and b["lower"] < a["upper"]:
                if a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]:
                    return False
    return True


def test_small_plans_pass_an_independent_pairwise_check(seedancectl, tmp_path):
    """The C++ checker is itself checked: a plain O(n^2) Python comparison."""
    instance = require_data(DATA / "minimalloc" / "A.1048576.csv")
    _, plan_file = plan_and_check(seedancectl, tmp_path, instance, "--time-limit", "0.2")
    with open(plan_file, newline="") as f:
        rows = [{k: (int(v) if k != "id" else v) for k, v in row.items()} for row in csv.DictReader(f)]
    assert pairwise_valid(rows)
    # Move one buffer onto a conflicting one: both checkers must object.
    a = rows[0]
    victim = next(b for b in rows[1:] if a["lower"] < b["upper"] and b["lower"] < a["upper"])
    victim["offset"] = a["offset"]
    assert not pairwise_valid(rows)
    bad = tmp_path / "bad.plan.csv"
    with open(bad, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    r = run(seedancectl, "mem", "check", "--input", instance, "--offsets", bad)
    assert r.returncode == 1
    assert "overlap" in r.stdout
    assert r.stderr.startswith("error: ")


def test_capacity_question(seedancectl, tmp_path):
    """--capacity asks "does a plan fit?": a fit is written and checked; no fit
    writes nothing and exits 1, saying whether it was proven."""
    src = tmp_path / "x.csv"
    # a and b live together (10 + 7); c fits beside b above a's end.
    src.write_text("id,lower,upper,size\na,0,4,10\nb,2,6,7\nc,5,9,3\n")
    plan = tmp_path / "x.plan.csv"
    r = run(seedancectl, "mem", "plan", "--input", src, "--capacity", "17",
            "--offsets-out", plan, "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["capacity_bytes"] == 17 and report["peak_bytes"] <= 17
    assert run(seedancectl, "mem", "check", "--input", src, "--offsets", plan).returncode == 0
    plan.unlink()
    r = run(seedancectl, "mem", "plan", "--input", src, "--capacity", "16", "--offsets-out", plan)
    assert r.returncode == 1
    assert "no plan fits in 16 bytes: proven impossible" in r.stderr
    assert not plan.exists()
    r = run(seedancectl, "mem", "plan", "--input", src, "--capacity", "0")
    assert r.returncode == 2  # not a positive number


def test_minimalloc_capacity_question(seedancectl, tmp_path):
    """MiniMalloc's own run: capacity 1,048,576 (the number in the file name)."""
    instance = require_data(DATA / "minimalloc" / "K.1048576.csv")
    report, _ = plan_and_check(seedancectl, tmp_path, instance, "--capacity", "1048576",
                               "--time-limit", "60")
    assert report["peak_bytes"] <= 1048576


def test_alignment_and_bad_input(seedancectl, tmp_path):
    src = tmp_path / "x.csv"
    src.write_text("id,lower,upper,size\na,0,4,10\nb,2,6,7\nc,5,9,3\n")
    plan = tmp_path / "x.plan.csv"
    r = run(seedancectl, "mem", "plan", "--input", src, "--alignment", "16", "--offsets-out", plan,
            "-o", "json")
    assert r.returncode == 0, r.stderr
    c = run(seedancectl, "mem", "check", "--input", src, "--offsets", plan, "--alignment", "16")
    assert c.returncode == 0, c.stdout
    src.write_text("id,lower,upper,size\na,0,4,10\na,2,6,7\n")
    r = run(seedancectl, "mem", "plan", "--input", src)
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: duplicate id 'a' (first on line 2) ({src}:3: id)"
    r = run(seedancectl, "mem", "plan", "--input", tmp_path / "none.csv")
    assert r.returncode == 1 and "no such file" in r.stderr
    r = run(seedancectl, "mem", "plan", "--input", src, "--algo", "magic")
    assert r.returncode == 2


POLICIES = ["seedance", "seedance-stitch", "best-fit", "first-fit", "caching-2mib"]


@pytest.mark.parametrize("instance", IDEALLOC or [DATA / "idealloc"], ids=lambda p: p.name)
def test_replay_every_policy(seedancectl, instance):
    require_data(instance)
    reserved = {}
    for policy in POLICIES:
        r = run(seedancectl, "mem", "replay", "--input", instance, "--policy", policy, "-o", "json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["policy"] == policy
        assert out["ops"] == 2 * sum(1 for _ in open(instance)) - 2  # two events per buffer
        assert out["reserved_peak_bytes"] >= out["allocated_peak_bytes"] >= out["lower_bound_bytes"]
        assert 0 <= out["fragmentation"] < 1
        reserved[policy] = out["reserved_peak_bytes"]
    # Stitching reclaims stranded pages: never worse than PyTorch's rules here.
    assert reserved["seedance-stitch"] <= reserved["caching-2mib"]


def test_replay_check_mode_and_errors(seedancectl, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("id,lower,upper,size\na,0,4,3000000\nb,1,3,100\nc,2,6,5000000\n")
    r = run(seedancectl, "mem", "replay", "--input", src, "--policy", "seedance-stitch", "--check",
            "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["lower_bound_bytes"] == 8000100
    r = run(seedancectl, "mem", "replay", "--input", src, "--policy", "tcmalloc")
    assert r.returncode == 2


def test_empty_lifetime_file(seedancectl, tmp_path):
    src = tmp_path / "empty.csv"
    src.write_text("id,lower,upper,size\n")
    plan = tmp_path / "empty.plan.csv"
    r = run(seedancectl, "mem", "plan", "--input", src, "--offsets-out", plan, "-o", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["peak_bytes"] == 0
    assert run(seedancectl, "mem", "check", "--input", src, "--offsets", plan).returncode == 0


def test_exact_search_shows_its_clock_on_a_terminal_only(seedancectl):
    """A search that runs to its time limit (idealloc's S_1 under the exact search) shows the
    seconds spent against the limit when stderr is a terminal, and nothing on a pipe."""
    instance = require_data(DATA / "idealloc" / "S_1.csv")
    args = [str(seedancectl), "mem", "plan", "--input", str(instance), "--algo", "exact",
            "--time-limit", "2", "-o", "json"]
    on_tty, text = run_on_tty(args)
    assert on_tty.returncode == 0
    assert "mem plan: exact search: 1 s of a 2 s limit" in text, text
    piped = subprocess.run(args, capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == b""
