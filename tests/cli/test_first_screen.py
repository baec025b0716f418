"""The first screen of every reporting command (issue 46): the default table opens with a verdict
of at most 10 lines, every line fits 100 columns, `-o wide` gives every column, and the verdict
is pinned by a golden test against the report's own figures (so it says what the JSON says)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import DATA, REPO, require_data

WIDTH = 100
GOLDEN = REPO / "tests" / "golden" / "first_screen"


def check_golden(name: str, block: list[str]) -> None:
    """The verdict block of a deterministic report, pinned (UPDATE_GOLDEN=1 rewrites it)."""
    text = "\n".join(block) + "\n"
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing golden {path}: run with UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"the verdict differs from {path}"


def run(binary, *args, timeout=600):
    r = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    return r


def verdict_block(table: str) -> list[str]:
    """The lines under VERDICT up to the first blank line."""
    lines = table.splitlines()
    assert lines[0] == "VERDICT", table[:500]
    block = []
    for line in lines[1:]:
        if not line.strip():
            break
        block.append(line)
    return block


def check_screen(table: str) -> list[str]:
    for line in table.splitlines():
        assert len(line) <= WIDTH, f"{len(line)} columns: {line}"
    block = verdict_block(table)
    assert 1 <= len(block) <= 10, block
    return block


def sentences(block: list[str]) -> list[str]:
    """The verdict's sentences, wrapped lines joined."""
    out: list[str] = []
    for line in block:
        if line.startswith("  - "):
            out.append(line[4:])
        else:
            out[-1] += " " + line.strip()
    return out


def test_optimize_first_screen(seedancectl):
    r = run(seedancectl, "optimize")
    assert r.returncode == 0, r.stderr
    check_golden("optimize", check_screen(r.stdout))
    said = sentences(check_screen(r.stdout))
    report = json.loads(run(seedancectl, "optimize", "-o", "json").stdout)
    assert report["verdict"] == said  # the JSON carries the same words, first
    assert list(report)[0] == "verdict"
    before, after, saving = report["before"], report["after"], report["saving"]
    assert said[0].startswith("Fits: the plan needs ")
    assert f"{before['step_time_s']:.3g} s → {after['step_time_s']:.3g} s" in said[1]
    assert f"{abs(saving['step_time_pct']):.0f}% faster" in said[1]
    lo, hi = saving["step_time_pct_interval"]
    assert f"(90% interval {lo:.0f} to {hi:.0f}%)" in said[1]
    assert said[2].startswith("Do: ")
    assert f"ZeRO-{after['parallelism']['zero_stage']}" in said[2]
    # The reasons where another value was possible first, in the planner's order.
    forced = "no other value makes a valid layout"
    ranked = ([x for x in report["reasons"] if forced not in x] +
              [x for x in report["reasons"] if forced in x])
    assert said[3:] == ["Why: " + x for x in ranked[:3]]
    # The spec echo and the derived figures are under --verbose; the table says so.
    assert "\nMODEL\n" not in r.stdout and "\nDERIVED\n" not in r.stdout
    assert "(--verbose adds " in r.stdout
    verbose = run(seedancectl, "optimize", "--verbose").stdout
    assert "\nMODEL\n" in verbose and "\nDERIVED\n" in verbose
    # Wide: every column of the alternatives, nothing left out.
    wide = run(seedancectl, "optimize", "-o", "wide").stdout
    assert "more column" not in wide
    assert max(len(l) for l in wide.splitlines()) > WIDTH
    # A constant axis is not a Pareto objective.
    front = report["pareto_front"]
    powers = {l["power_w"] for l in front["layouts"]}
    assert ("power_w min" in front["objectives"]) == (len(powers) > 1 or "same_for_every_layout"
                                                       not in front)


def test_optimize_does_not_fit_verdict(seedancectl, tmp_path):
    r = run(seedancectl, "optimize", "--set", "hardware.nodes=1", "--set", "hardware.gpus_per_node=1",
            "--set", "model.layers=80", "--set", "model.hidden_size=8192")
    assert r.returncode == 3, r.stderr
    said = sentences(check_screen(r.stdout))
    assert said[0].startswith("Does not fit: ")
    assert "Smallest change that fits" in said[0] or "neither" in said[0]


def test_optimize_set_overrides_and_example(seedancectl, tmp_path):
    example = run(seedancectl, "optimize", "--example")
    assert example.returncode == 0
    job = tmp_path / "job.yaml"
    job.write_text(example.stdout)
    assert run(seedancectl, "optimize", job, "--dry-run").returncode == 0
    r = run(seedancectl, "optimize", job, "--dry-run", "-o", "json", "--set", "hardware.gpu=H200",
            "--set", "hardware.nodes=4")
    assert r.returncode == 0, r.stderr
    spec = json.loads(r.stdout)
    assert spec["hardware"]["gpu"] == "H200" and spec["hardware"]["gpus_total"] == 32
    bad = run(seedancectl, "optimize", "--set", "hardware.gpu")
    assert bad.returncode == 1 and "KEY=VALUE" in bad.stderr and "--set" in bad.stderr
    through = run(seedancectl, "optimize", "--set", "model.layers.x=1")
    assert through.returncode == 1 and "--set model.layers.x" in through.stderr


def test_simulate_first_screen(seedancectl):
    nodes = require_data(DATA / "alibaba-gpu-2023" / "openb_node_list_gpu_node.csv")
    pods = require_data(DATA / "alibaba-gpu-2023" / "openb_pod_list_default.csv")
    args = ["simulate", "--nodes", nodes, "--pods", pods, "--policy", "fgd,bestfit,seedance",
            "--seeds", "3", "--threads", "2"]
    r = run(seedancectl, *args)
    assert r.returncode == 0, r.stderr
    check_golden("simulate", check_screen(r.stdout))
    said = sentences(check_screen(r.stdout))
    report = json.loads(run(seedancectl, *args, "-o", "json").stdout)
    assert report["verdict"] == said
    assert str(nodes) not in r.stdout  # file names, not full paths
    means = {p["policy"]: p["seed_spread"]["unallocated_gpu_pct_at_130"] for p in
             report["policies"]}
    best = min(means, key=lambda k: means[k]["mean"])
    lo, hi = means[best]["interval_95"]
    assert said[0] == (f"Best on GPUs unallocated at 130% arrived: {best}, "
                       f"{means[best]['mean']:.2f}% (95% CI {lo:.2f} to {hi:.2f}) over 3 seeds.")
    compared = [c for c in report["comparisons"] if c["metric"] == "unallocated_gpu_pct_at_130"]
    assert [s.split(" vs ")[0] for s in said[1:]] == [c["policy"] for c in compared]
    assert all(c["baseline"] == "fgd" for c in compared)


@pytest.mark.parametrize("verb", ["tco", "roi", "power", "breakdown"])
def test_cost_examples_round_trip(seedancectl, tmp_path, verb):
    example = run(seedancectl, "cost", verb, "--example")
    assert example.returncode == 0 and example.stdout.startswith("# seedancectl cost " + verb)
    path = tmp_path / f"{verb}.yaml"
    path.write_text(example.stdout)
    r = run(seedancectl, "cost", verb, "--input", path, "-o", "json")
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)
    both = run(seedancectl, "cost", verb, "--example", "--input", path)
    assert both.returncode == 2  # one or the other


def test_cost_tco_first_screen(seedancectl, tmp_path):
    path = tmp_path / "tco.yaml"
    path.write_text(run(seedancectl, "cost", "tco", "--example").stdout)
    r = run(seedancectl, "cost", "tco", "--input", path)
    assert r.returncode == 0, r.stderr
    check_golden("cost_tco", check_screen(r.stdout))
    said = sentences(check_screen(r.stdout))
    report = json.loads(run(seedancectl, "cost", "tco", "--input", path, "-o", "json").stdout)
    assert report["verdict"] == said
    total = report["per_gpu_hour"]["total_usd"]
    assert said[0].startswith(f"Owned H100-SXM: ${total:.2f} per GPU-hour")
    # Owned: no term is silently 0, each says what it rests on.
    for term in ("host", "network", "storage", "colocation", "power", "operations"):
        assert report["per_gpu_hour"][f"{term}_usd"] > 0, term
        assert report["basis"][term]
    parts = sum(v for k, v in report["per_gpu_hour"].items() if k != "total_usd")
    assert parts == pytest.approx(total, rel=1e-12)


def test_owned_tco_needs_operations(seedancectl, tmp_path):
    path = tmp_path / "tco.yaml"
    path.write_text("ownership: owned\nowned: {purchase_price_usd: 25000, life_years: 5}\n")
    r = run(seedancectl, "cost", "tco", "--input", path)
    assert r.returncode == 1
    assert "other_usd_per_gpu_hour.operations" in r.stderr and str(path) in r.stderr


class _Echo(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_loadtest_first_screen(seedancectl):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        args = ["loadtest", "--url", url, "--concurrency", "1,2", "--warmup-s", "0.2",
                "--level-s", "1", "--usd-per-hour", "10"]
        r = run(seedancectl, *args)
        assert r.returncode == 0, r.stderr
        said = sentences(check_screen(r.stdout))
        assert said[0].startswith("Highest throughput: ")
        assert "more column" not in r.stdout  # the levels table fits
        wide = run(seedancectl, *args, "-o", "wide")
        assert "LATENCY MS.P99.ESTIMATE" in wide.stdout
    finally:
        server.shutdown()
        server.server_close()


def test_kv_serve_bench_first_screen(seedancectl):
    model = require_data(DATA / "tiny-llama" / "aidreams260K.bin")
    r = run(seedancectl, "kv", "serve-bench", "--model", model, "--rate", "20", "--duration", "1",
            "--gen-tokens", "4")
    assert r.returncode == 0, r.stderr
    said = sentences(check_screen(r.stdout))
    report = json.loads(run(seedancectl, "kv", "serve-bench", "--model", model, "--rate", "20",
                            "--duration", "1", "--gen-tokens", "4", "-o", "json").stdout)
    assert said[0].startswith("Dynamic batching: ")
    assert report["verdict"][2].startswith("Completed ")


def test_cost_report_one_price_basis(seedancectl, tmp_path):
    tco = tmp_path / "tco.yaml"
    tco.write_text(run(seedancectl, "cost", "tco", "--example").stdout)
    total = json.loads(run(seedancectl, "cost", "tco", "--input", tco, "-o",
                           "json").stdout)["per_gpu_hour"]["total_usd"]
    roi = tmp_path / "roi.yaml"
    roi.write_text("optimization: {one_off_cost_usd: 20000, saving_fraction: 0.15}\n"
                   "baseline: {gpu: H100-SXM, gpus: 64}\n")
    page = tmp_path / "page.html"
    r = run(seedancectl, "cost", "report", "--tco", tco, "--roi", roi, "--out", page)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    assert f"prices a H100-SXM GPU-hour at ${total:.4g} (the TCO&#39;s owned total)" in html or \
        f"prices a H100-SXM GPU-hour at ${total:.4g} (the TCO's owned total)" in html
    # The ROI's own, different price beside an owned TCO: refused, naming the file.
    roi.write_text("optimization: {one_off_cost_usd: 20000, saving_fraction: 0.15}\n"
                   "baseline: {gpu: H100-SXM, gpus: 64, usd_per_gpu_hour: 2.5}\n")
    r = run(seedancectl, "cost", "report", "--tco", tco, "--roi", roi, "--out", page)
    assert r.returncode == 1 and "one price basis" in r.stderr and f"({roi})" in r.stderr


def test_cost_report_basis_is_the_stated_price_whatever_the_order(seedancectl, tmp_path):
    """Without a TCO, a price one part states is the page's basis and the part that states none
    takes it, whichever file would come first; the same price written as printed is accepted."""
    roi = tmp_path / "roi.yaml"
    roi.write_text("optimization: {one_off_cost_usd: 20000, saving_fraction: 0.15}\n"
                   "baseline: {gpu: H100-SXM, gpus: 64, usd_per_gpu_hour: 2.5}\n")
    breakdown = tmp_path / "run.yaml"
    breakdown.write_text("gpu: H100-SXM\ngpus: 64\nrun: {steps: 1000, step_time_s: 1.3}\n")
    page = tmp_path / "page.html"
    r = run(seedancectl, "cost", "report", "--breakdown", breakdown, "--roi", roi, "--out", page)
    assert r.returncode == 0, r.stderr
    assert "GPU-hour at $2.5 (ROI&#39;s own price)" in page.read_text()
    breakdown.write_text("gpu: H100-SXM\ngpus: 64\nusd_per_gpu_hour: 2.5\n"
                         "run: {steps: 1000, step_time_s: 1.3}\n")
    r = run(seedancectl, "cost", "report", "--breakdown", breakdown, "--roi", roi, "--out", page)
    assert r.returncode == 0, r.stderr
