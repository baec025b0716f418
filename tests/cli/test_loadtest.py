"""`seedancectl loadtest` (COST-8) against real endpoints: nginx from Debian measured by `wrk`
(Debian's 4.1.0) and by loadtest in the same run (bench/cost/loadtest_vs_wrk.py, which starts
nginx on 127.0.0.1 and stops it by its PID), and `seedancectl kv serve` streaming completions."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loadtest(seedancectl, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(seedancectl), "loadtest", *args, "-o", "json"],
                          capture_output=True, text=True, timeout=300)


# The tolerance, stated: requests/s, p50 and p90 within 5 %, p99 within 15 % of wrk's.
TOLERANCE = {"rps": 0.05, "p50": 0.05, "p90": 0.05, "p99": 0.15}


@pytest.mark.timing
def test_loadtest_agrees_with_wrk_on_nginx(seedancectl):
    if not (shutil.which("nginx") or pathlib.Path("/usr/sbin/nginx").exists()) or \
            not shutil.which("wrk"):
        pytest.skip("nginx and wrk (Debian packages) are not installed")
    # The two clients measure at the same time, and the README test command runs this test alone
    # (marker `timing`): beside the other pytest worker it missed in four CI runs of 2026-12-05,
    # even measured three times. A comparison outside the tolerance is still measured again, up
    # to three times.
    for attempt in range(3):
        r = subprocess.run([sys.executable, str(ROOT / "bench/cost/loadtest_vs_wrk.py"),
                            "--build", str(seedancectl.parent.parent), "--concurrency", "2,8"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        levels = json.loads(r.stdout)["levels"]
        outside = [(key, level) for level in levels for key, tolerance in TOLERANCE.items()
                   if abs(level["ratio"][key] - 1) > tolerance]
        if not outside:
            break
    for level in levels:
        assert level["loadtest"]["errors"] == 0
    assert not outside, outside


def test_loadtest_streams_completions_from_kv_serve(seedancectl, data_dir):
    tiny = pathlib.Path(data_dir) / "tiny-llama"
    if not (tiny / "aidreams260K.bin").exists():
        pytest.skip("the tiny Llama model is not in the data directory")
    server = subprocess.Popen([str(seedancectl), "kv", "serve", "--model",
                               str(tiny / "aidreams260K.bin"), "--tokenizer",
                               str(tiny / "tok512.bin"), "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)/v1", server.stderr.readline()).group(1))
        r = loadtest(seedancectl, "--url", f"http://127.0.0.1:{port}/v1", "--completions",
                     "--model", "aidreams260K", "--max-tokens", "24", "--concurrency", "1,4",
                     "--warmup-s", "0.5", "--level-s", "2", "--usd-per-hour", "2.5")
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        assert report["kind"] == "completions"
        for level in report["levels"]:
            assert level["errors"] == 0 and level["steady_requests"] > 10, level
            assert 0 < level["ttft_ms"]["p50"] < level["latency_ms"]["p50"]["estimate"]
            assert level["tpot_ms"]["p50"] > 0
            # 24 tokens a request: tokens/s is 24 x requests/s (the same steady window).
            assert level["tokens_per_s"] == pytest.approx(24 * level["throughput_rps"], rel=1e-9)
            assert level["usd_per_1k_requests"] == pytest.approx(
                2.5 / 3600 / level["throughput_rps"] * 1000)
            ci = level["latency_ms"]["p99"]
            assert ci["low"] <= ci["estimate"] <= ci["high"]
            assert level["recalibrations"] <= 2
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    assert server.returncode == 0


def test_loadtest_says_when_nothing_answers(seedancectl):
    r = loadtest(seedancectl, "--url", f"http://127.0.0.1:{free_port()}/", "--warmup-s", "0",
                 "--level-s", "1")
    assert r.returncode == 1
    assert "the first request failed" in r.stderr
    r = loadtest(seedancectl, "--url", "https://example.org/")
    assert r.returncode != 0 and "http://HOST:PORT/PATH" in r.stderr


class _Recorder:
    """A plain-HTTP target that records when each request arrived and answers it `delay` seconds
    later (a thread per connection: over one connection, its capacity is 1/delay per second)."""

    def __init__(self, delay: float) -> None:
        import threading
        import time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        arrivals = self.arrivals = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out apart: no delayed-ACK wait

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                arrivals.append(time.monotonic())
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.timing
def test_open_loop_arrivals_are_poisson_at_the_offered_rate(seedancectl):
    """Server-side arrival times: counts in half-second bins pass the Poisson dispersion test
    (sum (n - mean)^2 / mean against chi-square with bins - 1 degrees of freedom, SciPy as the
    reference), which a paced schedule (dispersion near 0) or a bursty one fails. Counts in bins,
    unlike the gaps between arrivals, barely move when a loaded machine delays the recorder by a
    few milliseconds: a KS test on the gaps failed that way beside the other pytest worker."""
    scipy_stats = pytest.importorskip("scipy.stats")
    target = _Recorder(0.0)
    try:
        r = loadtest(seedancectl, "--url", target.url, "--rate", "80", "--warmup-s", "0",
                     "--level-s", "6", "--max-recalibrations", "0", "--max-connections", "8")
    finally:
        target.stop()
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["arrivals"] == "open loop (Poisson)"
    level = report["levels"][0]
    assert level["offered_rps"] == 80 and level["errors"] == 0
    arrivals = target.arrivals[1:]  # the first is loadtest's own check that the target answers
    assert abs(len(arrivals) - 480) < 4 * 480 ** 0.5  # Poisson count: mean 480, sd ~22
    start = arrivals[0]  # the window is 6 s from the level's start: 11 whole bins after this
    counts = [0] * 11
    for t in arrivals:
        if t - start < 5.5:
            counts[int((t - start) / 0.5)] += 1
    mean = sum(counts) / len(counts)
    dispersion = sum((n - mean) ** 2 for n in counts) / mean
    chi2 = scipy_stats.chi2(len(counts) - 1)
    pvalue = 2 * min(chi2.cdf(dispersion), chi2.sf(dispersion))
    assert pvalue > 1e-3, (counts, dispersion)


@pytest.mark.timing
def test_open_loop_latency_counts_the_queue_a_closed_loop_hides(seedancectl):
    """A target that serves one request per 20 ms, offered 75 per second over one connection:
    the open loop's latencies grow with the queue; a closed loop of one client sees 20 ms."""
    target = _Recorder(0.02)
    try:
        closed = loadtest(seedancectl, "--url", target.url, "--concurrency", "1", "--warmup-s",
                          "0", "--level-s", "2", "--max-recalibrations", "0")
        opened = loadtest(seedancectl, "--url", target.url, "--rate", "75", "--warmup-s", "0",
                          "--level-s", "2", "--max-recalibrations", "0", "--max-connections", "1")
    finally:
        target.stop()
    assert closed.returncode == 0 and opened.returncode == 0, (closed.stderr, opened.stderr)
    closed_p50 = json.loads(closed.stdout)["levels"][0]["latency_ms"]["p50"]["estimate"]
    open_level = json.loads(opened.stdout)["levels"][0]
    assert 19 < closed_p50 < 40
    # ~150 arrivals for ~100 services in 2 s: the last ones waited about a second.
    assert open_level["latency_ms"]["p99"]["estimate"] > 10 * closed_p50
    assert open_level["throughput_rps"] < 55  # served at capacity (50/s), not at the offer
