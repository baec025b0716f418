"""`seedancectl probe`: sampling on this machine and on fake trees, findings,
and the /metrics exporter checked with promtool (Debian package prometheus)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
GPUS = FIXTURES / "gpu_h200.json"


def run(seedancectl, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(seedancectl), *args], capture_output=True, text=True, timeout=60)


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool missing under CI (Debian package prometheus)")
        pytest.skip("promtool not installed (Debian package prometheus)")
    return path


@pytest.fixture(scope="module")
def server_tree(tmp_path_factory) -> pathlib.Path:
    d = tmp_path_factory.mktemp("server")
    subprocess.run([sys.executable, str(FIXTURES / "fake_node.py"), "server", str(d)], check=True)
    return d


class Exporter:
    """seedancectl probe --listen 127.0.0.1:0 ... in the background."""

    def __init__(self, seedancectl, *args: str) -> None:
        self.proc = subprocess.Popen([str(seedancectl), "probe", "--listen", "127.0.0.1:0",
                                      "--sample-interval", "200ms", *args],
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        m = re.search(r"\(port (\d+)\)", line)
        assert m, f"no port in {line!r}"
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def get(self, path: str = "/metrics", method: str = "GET"):
        req = urllib.request.Request(self.url + path, method=method)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=10)


def test_once_on_this_machine(seedancectl):
    r = run(seedancectl, "probe", "--once", "--sample-interval", "200ms", "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    names = {v["metric"] for v in report["values"]}
    assert {"cpu.util", "cpu.iowait", "mem.used", "net.in_bytes"} <= names
    assert 0.15 < report["window_s"] < 2
    if not pathlib.Path("/proc/driver/nvidia").exists():
        assert any("no GPU metrics" in n for n in report["notes"])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process from /proc (fields 14 and 15 of its stat line)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_task_values_follow_a_busy_process(seedancectl):
    # The reference is the process's own CPU time around the probe's run, not "one core": on a
    # loaded machine (the test suite's other workers) a spinning loop gets less.
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        t0, c0 = time.monotonic(), cpu_seconds(busy.pid)
        r = run(seedancectl, "probe", "--once", "--sample-interval", "500ms", "--task-id",
                str(busy.pid), "--metrics", "task", "-o", "json")
        reference = (cpu_seconds(busy.pid) - c0) / (time.monotonic() - t0)
    finally:
        busy.kill()
    values = {v["metric"]: v for v in json.loads(r.stdout)["values"]}
    assert set(values) == {"task.cpu", "task.rss"}
    assert values["task.cpu"]["value"] > 0.1
    assert values["task.cpu"]["value"] == pytest.approx(reference, abs=0.3)
    assert values["task.rss"]["value"] > 1 << 20


def test_gpu_fixture_values_and_findings(seedancectl, server_tree):
    r = run(seedancectl, "probe", "--once", "--sample-interval", "100ms", "--root",
            str(server_tree), "--gpu-fixture", str(GPUS), "--metrics", "gpu", "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    v = {(x["metric"], x["labels"].get("gpu")): x["value"] for x in report["values"]}
    assert v[("gpu.util", "0")] == 97 and v[("gpu.mem_bw", "0")] == 94
    assert v[("gpu.mem_used", "1")] == pytest.approx(100 * 140e9 / 150754820096)
    # 150 GB per read over a window of about 0.1 s.
    assert v[("gpu.nvlink_tx", "0")] > 150e9
    rules = {(f["rule"], f["metric"]) for f in report["findings"]}
    assert ("gpu_mem_bw_high", "gpu.mem_bw{gpu=0}") in rules
    assert ("mixed_precision_candidate", "gpu.util{gpu=0}") in rules
    assert ("gpu_mem_pressure", "gpu.mem_used{gpu=1}") in rules
    assert ("gpu_underused", "gpu.util{gpu=1}") in rules


def test_power_samples_feed_the_power_fit(seedancectl, server_tree, tmp_path):
    """--power-samples writes one CSV row per window (GPU board power from the fixture: 655.2 +
    240 W; utilization 97% and 31%; limit 700 W) that `cost power-fit` reads."""
    out = tmp_path / "power.csv"
    r = run(seedancectl, "probe", "--count", "3", "--sample-interval", "100ms", "--root",
            str(server_tree), "--gpu-fixture", str(GPUS), "--metrics", "cpu",
            "--power-samples", str(out), "-o", "json")
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "watts,cpu_utilization_pct,gpu_utilization,gpus,gpu_tdp_watts"
    assert len(lines) == 4
    watts, _, util, gpus, tdp = lines[1].split(",")
    assert float(watts) == pytest.approx(895.2) and float(util) == pytest.approx(0.64)
    assert (gpus, tdp) == ("2", "700")
    fit = run(seedancectl, "cost", "power-fit", "--input", str(out), "-o", "json")
    assert fit.returncode == 0, fit.stderr
    assert json.loads(fit.stdout)["samples"] == 3
    none = run(seedancectl, "probe", "--count", "1", "--sample-interval", "100ms", "--root",
               str(server_tree), "--power-samples", str(tmp_path / "none.csv"))
    assert none.returncode == 0 and "no power reading" in none.stderr
    assert not (tmp_path / "none.csv").exists()


def test_table_output_and_count(seedancectl):
    r = run(seedancectl, "probe", "--count", "2", "--sample-interval", "100ms", "--metrics",
            "cpu.util,mem")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("cpu.util") == 2 and "mem.used" in r.stdout


@pytest.mark.parametrize("args,where", [
    (["--sample-interval", "5x"], "--sample-interval"),
    (["--sample-interval", "1ms"], "--sample-interval"),
    (["--metrics", "gpu.utilisation"], "--metrics"),
    (["--listen", "localhost"], "--listen"),
    (["--gpu-fixture", "/nonexistent.json"], "/nonexistent.json"),
])
def test_bad_flags_are_clear_errors(seedancectl, args, where):
    mode = [] if "--listen" in args else ["--once"]  # serving and printing windows exclude
    r = run(seedancectl, "probe", *mode, *args)
    assert r.returncode == (2 if "--listen" in args else 1)  # a malformed HOST:PORT is usage
    assert r.stderr.startswith("error: ") and where in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["--listen", "127.0.0.1:0", "--once"],
                                  ["--once", "--listen", "127.0.0.1:0"],
                                  ["--listen", "127.0.0.1:0", "--count", "2"]])
def test_listen_refuses_once_and_count(seedancectl, args):
    # Once ignored: the exporter served forever. Now a usage error before anything starts.
    r = run(seedancectl, "probe", *args)
    assert r.returncode == 2 and r.stdout == ""
    assert "excludes" in r.stderr and "--listen" in r.stderr, r.stderr


def test_bad_fixture_names_file_and_field(seedancectl, tmp_path):
    bad = tmp_path / "gpus.json"
    bad.write_text(json.dumps({"gpus": [{"index": 0, "gpu_util_pct": "high"}]}))
    r = run(seedancectl, "probe", "--once", "--gpu-fixture", str(bad))
    assert r.returncode == 1
    assert f"{bad}: gpus[0].gpu_util_pct" in r.stderr, r.stderr


def test_exporter_serves_valid_metrics(seedancectl, server_tree):
    tool = promtool()
    e = Exporter(seedancectl, "--root", str(server_tree), "--gpu-fixture", str(GPUS))
    try:
        status, headers, body = e.get()
        assert status == 200
        assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert "# TYPE seedance_gpu_energy_joules_total counter" in body
        assert 'seedance_gpu_utilization_ratio{gpu="0"' in body
        check = subprocess.run([tool, "check", "metrics"], input=body, capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        assert e.get("/nope")[0] == 404
        assert e.get("/metrics", "POST")[0] == 405
        assert e.get("/")[0] == 200
    finally:
        assert e.stop() == 0


def test_exporter_dcgm_naming(seedancectl, server_tree):
    tool = promtool()
    e = Exporter(seedancectl, "--root", str(server_tree), "--gpu-fixture", str(GPUS),
                 "--naming", "dcgm")
    try:
        time.sleep(0.5)  # a second sample, for the NVLink rate
        _, _, body = e.get()
    finally:
        e.stop()
    assert re.search(r'DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-5b0e6f2c-0000-0000-0000-000000000000",'
                     r'pci_bus_id="00000000:03:00.0",device="nvidia0",modelName="NVIDIA H200",'
                     r'Hostname="fake-node"\} 97\n', body), body
    assert re.search(r'DCGM_FI_DEV_FB_USED\{gpu="1".*\} 133514\n', body)  # 140e9 B in MiB
    assert "DCGM_FI_PROF_NVLINK_TX_BYTES{" in body
    assert "seedance_gpu_" not in body
    # DCGM's own names break two of promtool's style rules (camelCase labels, a
    # counter without _total): only those may be reported, never a parse error.
    check = subprocess.run([tool, "check", "metrics"], input=body, capture_output=True, text=True)
    assert check.returncode in (0, 3), check.stderr
    for line in (check.stdout + check.stderr).splitlines():
        assert ("camelCase" in line or '"_total" suffix' in line), line


def test_stuck_clients_do_not_block_scrapes(seedancectl):
    e = Exporter(seedancectl)
    stuck = []
    try:
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", e.port))
            s.sendall(b"GET /metr")  # and never finish the request
            stuck.append(s)
        start = time.monotonic()
        for _ in range(10):
            assert e.get()[0] == 200
        assert time.monotonic() - start < 5
    finally:
        for s in stuck:
            s.close()
        e.stop()


def test_port_in_use(seedancectl):
    e = Exporter(seedancectl)
    try:
        r = run(seedancectl, "probe", "--listen", f"127.0.0.1:{e.port}")
        assert r.returncode == 1 and "--listen" in r.stderr
    finally:
        e.stop()
