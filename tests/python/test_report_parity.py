"""One report, two faces: each reporting verb's `-o json` equals what the Python function of the
same name returns (one builder in the library), on the same inputs.

Run times (`runtime_ms`, `solve_ms`, `time_to_best_ms`, `ns_per_op`, `wall_s`, `kv eval`'s
`tokens_per_s`, the probe window's `timestamp_s` and `window_s`) are left out, as they differ from run to run; so is the `offsets` map `seedance.mem.plan` adds (the command writes
it to a file)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile

import pytest

import seedance
import seedance.comm
import seedance.cost
import seedance.kv
import seedance.mem
import seedance.precision
import seedance.probe
import seedance.sched
import seedance.topo
from conftest import BUILD, DATA, REPO, require_data

GPUS = REPO / "tests" / "fixtures" / "gpu_h200.json"

SECONDS = ("runtime_ms", "wall_s", "solve_ms", "time_to_best_ms", "ns_per_op", "tokens_per_s",
           "tokens_per_s_fp32", "timestamp_s", "window_s")


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in SECONDS}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def cli(*args) -> dict:
    r = subprocess.run([str(BUILD / "bin" / "seedancectl"), *map(str, args), "-o", "json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("server")
    subprocess.run([sys.executable, str(REPO / "tests" / "fixtures" / "fake_node.py"), "server",
                    str(root)], check=True)
    return root


@pytest.fixture(scope="module")
def lifetimes(tmp_path_factory) -> pathlib.Path:
    f = tmp_path_factory.mktemp("mem") / "lifetimes.csv"
    f.write_text("id,lower,upper,size\na,0,10,64\nb,5,15,32\nc,10,20,64\nd,15,25,32\n")
    return f


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    d = tmp_path_factory.mktemp("cost")
    a, b, points = d / "a.json", d / "b.csv", d / "points.csv"
    a.write_text(json.dumps({"copy": [10, 11, 12, 10.5, 11.5], "sort": [5, 5.1, 5.2, 5.3]}))
    b.write_text("name,value\n" + "".join(f"copy,{v}\n" for v in (8, 8.5, 9, 8.2, 8.7))
                 + "".join(f"sort,{v}\n" for v in (5, 5.2, 5.1, 5.3)))
    points.write_text("config,throughput,memory\na,10,4\nb,8,2\nc,7,5\nd,10,4\n")
    return a, b, points


@pytest.fixture(scope="module")
def cost_inputs(tmp_path_factory) -> dict[str, pathlib.Path]:
    d = tmp_path_factory.mktemp("cost-model")
    files = {
        "tco": "gpu: A100-80GB\ngpus: 16\nutilization: 0.4\nserving: {tokens_per_request: 600,"
               " tokens_per_s_per_gpu: 1200}\n",
        "roi": "optimization: {one_off_cost_usd: 30000, saving_fraction: 0.2}\n",
        "power": "gpus: 4\nload: {gpu_utilization: 0.6, cpu_utilization_pct: 40}\n",
        "breakdown": "gpus: 16\nrun: {steps: 1000, step_time_s: 2}\n",
        "power-fit": "watts,cpu_utilization_pct\n100,1\n102,2\n103.5,3\n106,4\n",
    }
    out = {}
    for verb, text in files.items():
        out[verb] = d / (verb + (".csv" if verb == "power-fit" else ".yaml"))
        out[verb].write_text(text)
    return out


def steady(window: dict) -> dict:
    """A probe window without its per-second rates."""
    window["values"] = [v for v in window["values"] if not v["unit"].endswith("/s")]
    return window


def cases(server: pathlib.Path, lifetimes: pathlib.Path, samples, cost_inputs):
    alibaba = DATA / "alibaba-gpu-2023"
    a, b, points = samples
    c = cost_inputs
    tiny = DATA / "tiny-llama"
    return {
        "comm advise": (lambda: cli("comm", "advise", "--root", server, "--nodes", 4),
                        lambda: seedance.comm.advise(root=server, nodes=4)),
        "kv estimate": (lambda: cli("kv", "estimate", "--tokens", 4096, "--bits", 5),
                        lambda: seedance.kv.estimate(tokens=4096, bits=5)),
        "kv eval": (lambda: cli("kv", "eval", "--model", tiny / "aidreams260K.bin", "--tokenizer",
                                tiny / "tok512.bin", "--bits", 4, "--window", 16),
                    lambda: seedance.kv.evaluate(tiny / "aidreams260K.bin",
                                                 tokenizer=tiny / "tok512.bin", bits="4",
                                                 window=16)),
        "kv eval (default window)": (
            lambda: cli("kv", "eval", "--model", tiny / "aidreams260K.bin", "--bits", 2),
            lambda: seedance.kv.evaluate(tiny / "aidreams260K.bin", bits="2")),
        "cost tco": (lambda: cli("cost", "tco", "--input", c["tco"]),
                     lambda: seedance.cost.tco(c["tco"])),
        "cost tco (defaults)": (lambda: cli("cost", "tco"), seedance.cost.tco),
        "cost roi": (lambda: cli("cost", "roi", "--input", c["roi"]),
                     lambda: seedance.cost.roi(c["roi"])),
        "cost power": (lambda: cli("cost", "power", "--input", c["power"]),
                       lambda: seedance.cost.power(c["power"])),
        "cost breakdown": (lambda: cli("cost", "breakdown", "--input", c["breakdown"]),
                           lambda: seedance.cost.breakdown(c["breakdown"])),
        "cost power-fit": (lambda: cli("cost", "power-fit", "--input", c["power-fit"]),
                           lambda: seedance.cost.power_fit(c["power-fit"])),
        "cost compare": (lambda: cli("cost", "compare", a, b, "--resamples", 2000),
                         lambda: seedance.cost.compare(a, b, resamples=2000)),
        "cost pareto": (lambda: cli("cost", "pareto", "--input", points, "--objectives",
                                    "throughput:max,memory:min"),
                        lambda: seedance.cost.pareto(points, "throughput:max,memory:min")),
        "version (cuda)": (lambda: cli("version")["cuda"], seedance.cuda_info),
        "version (simd)": (lambda: cli("version")["simd"], seedance.simd),
        "precision show": (lambda: cli("precision", "show", "1.5", "-inf", "nan", "65504"),
                           lambda: {"values": seedance.precision.show(1.5, "-inf", "nan", 65504)}),
        "catalog list": (lambda: cli("catalog", "list")["gpus"], seedance.gpu_catalog),
        "optimize": (lambda: cli("optimize"), seedance.optimize),
        "optimize --dry-run": (lambda: cli("optimize", "--dry-run"),
                               lambda: seedance.optimize(dry_run=True)),
        "optimize --emit": (lambda: cli("optimize", "--emit", "fsdp",
                                        pathlib.Path(tempfile.mkdtemp()) / "fsdp.json"),
                            lambda: seedance.optimize(emit="fsdp")),
        # A fake node (static counters) and a GPU fixture: the same readings in both faces, but
        # for rates of the fixture's counters, which depend on the window's measured length.
        "probe": (lambda: steady(cli("probe", "--once", "--sample-interval", "50ms", "--root",
                                     server, "--gpu-fixture", GPUS)),
                  lambda: steady(seedance.probe.sample(0.05, root=server, gpu_fixture=GPUS))),
        "topo show": (lambda: cli("topo", "show", "--root", server),
                      lambda: seedance.topo.topology(root=str(server))),
        # Python also returns the offsets, which the command writes with --offsets-out.
        "mem plan": (lambda: cli("mem", "plan", "--input", lifetimes),
                     lambda: {k: v for k, v in seedance.mem.plan(lifetimes).items()
                              if k != "offsets"}),
        "mem replay": (lambda: cli("mem", "replay", "--input", lifetimes),
                       lambda: seedance.mem.replay(lifetimes)),
        "simulate": (lambda: cli("simulate", "--nodes", alibaba / "openb_node_list_gpu_node.csv",
                                 "--pods", alibaba / "openb_pod_list_default.csv", "--policy",
                                 "bestfit", "--seeds", "1"),
                     lambda: seedance.sched.simulate(
                         alibaba / "openb_node_list_gpu_node.csv",
                         alibaba / "openb_pod_list_default.csv", policies=["bestfit"], seeds=1)),
    }


NAMES = ["comm advise", "kv estimate", "kv eval", "kv eval (default window)", "cost tco", "cost tco (defaults)", "cost roi", "cost power", "cost breakdown",
         "cost power-fit", "cost compare", "cost pareto", "version (cuda)", "version (simd)", "precision show", "catalog list", "optimize",
         "optimize --dry-run", "optimize --emit", "probe", "topo show", "mem plan", "mem replay", "simulate"]


@pytest.mark.parametrize("name", NAMES)
def test_cli_json_equals_the_python_result(name, server, lifetimes, samples, cost_inputs):
    if name == "simulate":
        require_data(DATA / "alibaba-gpu-2023")
    if name.startswith("kv eval"):
        require_data(DATA / "tiny-llama")
    from_cli, from_python = cases(server, lifetimes, samples, cost_inputs)[name]
    assert strip(from_cli()) == strip(from_python())


def test_every_case_is_listed(server, lifetimes, samples, cost_inputs):
    assert sorted(cases(server, lifetimes, samples, cost_inputs)) == sorted(NAMES)
