"""`seedancectl cost compare|pareto` as a user runs them.

compare: on two Google Benchmark JSON files made here by a benchmark of this repository (9
repetitions each), every benchmark gets a verdict, and its p-value is the one google/benchmark's
compare.py reports: scipy.stats.mannwhitneyu(a, b, alternative="two-sided") on the
per-repetition times. Bad inputs exit 1 naming the file and the place.
"""

from __future__ import annotations

import json
import math
import subprocess

import pytest
from scipy import stats

from conftest import BUILD


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def bench_json(path, filt: str) -> dict:
    """Runs build/bench/pareto_bench with 9 repetitions into `path`."""
    r = subprocess.run([str(BUILD / "bench" / "pareto_bench"), f"--benchmark_filter={filt}",
                        "--benchmark_repetitions=9", "--benchmark_min_time=0.02",
                        f"--benchmark_out={path}", "--benchmark_out_format=json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text())


def repetitions(doc: dict, name: str, key: str) -> list[float]:
    return [b[key] for b in doc["benchmarks"]
            if b.get("run_type") == "iteration" and b["run_name"] == name]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench")
    filt = "BM_Sweep/n:10000/"
    return d / "a.json", bench_json(d / "a.json", filt), d / "b.json", bench_json(d / "b.json", filt)


@pytest.mark.parametrize("metric", ["real_time", "cpu_time"])
def test_compare_gives_a_verdict_per_benchmark_with_compare_py_p_values(seedancectl, two_runs,
                                                                         metric):
    a_path, a, b_path, b = two_runs
    r = run(seedancectl, "cost", "compare", a_path, b_path, "--metric", metric, "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    names = sorted({x["run_name"] for x in a["benchmarks"] if x.get("run_type") == "iteration"})
    assert sorted(row["name"] for row in report["benchmarks"]) == names
    for row in report["benchmarks"]:
        assert row["verdict"] in ("faster", "slower", "within noise")
        xa, xb = repetitions(a, row["name"], metric), repetitions(b, row["name"], metric)
        assert row["samples_a"] == len(xa) == 9
        want = stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue
        assert math.isclose(row["p_value"], want, rel_tol=1e-9), (row, want)
    assert report["warnings"] == []


def test_compare_table_and_few_repetitions_warning(seedancectl, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"copy": [10, 11, 12], "scan": [3, 3.1]}))
    b.write_text(json.dumps({"copy": [20, 21, 22], "scan": [3, 3.1]}))
    r = run(seedancectl, "cost", "compare", a, b)
    assert r.returncode == 0, r.stderr
    assert "within noise" in r.stdout and "fewer than 9 repetitions" in r.stdout


@pytest.mark.parametrize("text,where", [
    ("{\"benchmarks\": [", "malformed JSON"),
    ("", "the file is empty"),
    ("{\"x\": []}", ": x"),
    ("{\"x\": [1, \"fast\"]}", ": x[1]"),
    ("name,value\nx,1\nx,-\n", ":3: value"),
    ("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1}]}", "benchmarks[0].cpu_time"),
])
def test_compare_bad_inputs_exit_1_naming_the_place(seedancectl, tmp_path, text, where):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"x": [1, 2, 3]}))
    bad.write_text(text)
    r = run(seedancectl, "cost", "compare", good, bad)
    assert r.returncode == 1, r.stdout
    assert r.stderr.startswith("error: ") and str(bad) in r.stderr and where in r.stderr


def test_pareto_front_of_a_csv(seedancectl, tmp_path):
    points = tmp_path / "configs.csv"
    points.write_text("config,throughput,memory,power\n"
                      "tp8,100,60,700\ntp4,90,40,650\nzero3,80,30,600\nbad,70,70,720\n"
                      "tp4-copy,90,40,650\n")
    r = run(seedancectl, "cost", "pareto", "--input", points, "--objectives",
            "throughput:max,memory:min,power:min", "-o", "json")
    assert r.returncode == 0, r.stderr
    front = json.loads(r.stdout)["front"]
    assert [row["config"] for row in front] == ["tp8", "tp4", "zero3", "tp4-copy"]
    unique = run(seedancectl, "cost", "pareto", "--input", points, "--objectives",
                 "throughput:max,memory:min,power:min", "--unique", "-o", "json")
    assert [row["config"] for row in json.loads(unique.stdout)["front"]] == ["tp8", "tp4", "zero3"]
    bad = run(seedancectl, "cost", "pareto", "--input", points, "--objectives", "speed:max")
    assert bad.returncode == 1 and "no column 'speed'" in bad.stderr
    bad = run(seedancectl, "cost", "pareto", "--input", points, "--objectives", "memory:less")
    assert bad.returncode == 1 and "expected max or min" in bad.stderr
    points.write_text("config,throughput\na,1\nb,fast\n")
    bad = run(seedancectl, "cost", "pareto", "--input", points, "--objectives", "throughput:max")
    assert bad.returncode == 1 and f"{points}:3: throughput" in bad.stderr


@pytest.mark.parametrize("verb,text,where", [
    ("tco", "price_per_gpu_hour_usd: -2\n", "f.yaml:1: price_per_gpu_hour_usd"),
    ("tco", "ownership: owned\nowned: {purchase_price_usd: 9000, life_years: 0}\n",
     "f.yaml:2: owned.life_years"),
    ("tco", "power: {coefficients: {pue: 0.95}}\n", "f.yaml:1: power.coefficients.pue"),
    ("power", "coefficients: {pue: 0.5}\n", "f.yaml:1: coefficients.pue"),
    ("roi", "optimization: {one_off_cost_usd: -1}\n", "f.yaml:1: optimization.one_off_cost_usd"),
    ("breakdown", "run: {steps: 10}\n", "f.yaml:1: run.step_time_s"),
    ("tco", "gpus: [8\n", "f.yaml:2:1"),
])
def test_model_bad_inputs_exit_1_naming_file_line_and_key(seedancectl, tmp_path, verb, text,
                                                          where):
    f = tmp_path / "f.yaml"
    f.write_text(text)
    r = run(seedancectl, "cost", verb, "--input", f)
    assert r.returncode == 1, r.stdout
    assert r.stderr.startswith("error: ") and f"{tmp_path}/{where}" in r.stderr, r.stderr


def test_tco_default_is_a_rented_gpu_at_the_catalog_price_with_its_kind(seedancectl):
    r = run(seedancectl, "cost", "tco", "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    catalog = json.loads(run(seedancectl, "catalog", "list", "-o", "json").stdout)
    h100 = next(g for g in catalog["gpus"] if g["id"] == "H100-SXM")
    assert report["inputs"]["price_per_gpu_hour_usd"] == h100["price_per_hour_usd"]
    assert report["inputs"]["price_kind"] == h100["price_kind"] == "on-demand"
    assert report["per_gpu_hour"]["total_usd"] == h100["price_per_hour_usd"]


def test_power_fit_agrees_with_numpy_least_squares(seedancectl, tmp_path):
    import numpy as np
    rng = np.random.default_rng(5)
    n = 200
    cpu, mem, util = rng.uniform(0, 100, n), rng.uniform(0, 300, n), rng.uniform(0, 1, n)
    watts = 300 + 0.8 * cpu + 0.2 * mem + 4 * 700 * (0.25 + 0.75 * util) + rng.normal(0, 3, n)
    f = tmp_path / "samples.csv"
    f.write_text("watts,cpu_utilization_pct,memory_bandwidth_gbytes_per_s,gpu_utilization,gpus,"
                 "gpu_tdp_watts\n" + "".join(
                     f"{w!r},{c!r},{m!r},{u!r},4,700\n"
                     for w, c, m, u in zip(watts.tolist(), cpu.tolist(), mem.tolist(), util.tolist())))
    r = run(seedancectl, "cost", "power-fit", "--input", f, "-o", "json")
    assert r.returncode == 0, r.stderr
    got = {c["term"]: c["value"] for c in json.loads(r.stdout)["coefficients"]}
    x = np.column_stack([np.ones(n), cpu, mem, 2800 * util])
    b, *_ = np.linalg.lstsq(x, watts, rcond=None)
    idle = 1 - b[3]
    assert math.isclose(got["cpu_watts_per_pct"], b[1], rel_tol=1e-9)
    assert math.isclose(got["memory_watts_per_gbytes_per_s"], b[2], rel_tol=1e-9)
    assert math.isclose(got["gpu_idle_fraction"], idle, rel_tol=1e-9)
    assert math.isclose(got["base_watts"], b[0] - idle * 2800, rel_tol=1e-9)


def test_html_report_is_self_contained_and_renders(seedancectl, tmp_path):
    """`cost report` writes one page with inline SVG and no external resources; headless
    Chromium, with every host name unresolvable, lays out the four sections."""
    from test_simulate import chromium
    browser = chromium()
    tco, roi, bd, pts = (tmp_path / n for n in ("tco.yaml", "roi.yaml", "bd.yaml", "pts.csv"))
    tco.write_text("gpu: H100-SXM\ngpus: 16\nutilization: 0.4\n")
    roi.write_text("optimization: {one_off_cost_usd: 30000, saving_fraction: 0.2}\n")
    bd.write_text("gpus: 16\nrun: {steps: 1000, step_time_s: 2}\n"
                  "scheduling: {restarts: 1, lost_s_per_restart: 600}\n")
    pts.write_text("config,throughput,memory\n" + "".join(
        f"c{i},{(i * 37) % 101},{(i * 53) % 97}\n" for i in range(200)))
    page = tmp_path / "cost.html"
    r = run(seedancectl, "cost", "report", "--tco", tco, "--roi", roi, "--breakdown", bd,
            "--pareto", pts, "--objectives", "throughput:max,memory:min", "--out", page, "-o",
            "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sections"] == ["tco", "breakdown", "roi", "pareto"]
    html = page.read_text()
    for forbidden in ("<script", "<link", "src=", "url(", "https://", "@import"):
        assert forbidden not in html, forbidden
    front = json.loads(run(seedancectl, "cost", "pareto", "--input", pts, "--objectives",
                           "throughput:max,memory:min", "-o", "json").stdout)
    cells = json.loads(run(seedancectl, "cost", "roi", "--input", roi, "-o", "json").stdout)
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu",
              "--host-resolver-rules=MAP * ~NOTFOUND", "--no-first-run"]
    dom = subprocess.run(common + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert dom.stdout.count("<svg") == 4
    assert dom.stdout.count('class="cell"') == len(cells["sensitivity"]) == 30
    assert dom.stdout.count('class="front"') == front["front_size"]
    assert dom.stdout.count('class="point"') == 200
    shot = tmp_path / "cost.png"
    subprocess.run(common + [f"--screenshot={shot}", "--window-size=1000,2200", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000
    # Errors: nothing to draw, or an output path in a missing directory, exit before any work.
    assert run(seedancectl, "cost", "report", "--out", page).returncode == 1
    bad = run(seedancectl, "cost", "report", "--tco", tco, "--out", tmp_path / "no" / "p.html")
    assert bad.returncode == 2
