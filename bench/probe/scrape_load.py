#!/usr/bin/env python3
"""Load test of `seedancectl probe --listen` (feature PROBE-2).

Starts the exporter with a 5 s sampling interval, then
  1. scrapes /metrics N times back to back over one keep-alive connection (as
     Prometheus does) and N/5 times on fresh connections: latency p50/p99/max;
  2. measures the exporter's own CPU time (utime + stime from /proc/PID/stat)
     over a steady window with one scrape per sampling interval, as a share of
     one core; and over the burst.

    .venv/bin/python bench/probe/scrape_load.py [--scrapes 1000] [--steady-seconds 30]

Prints one JSON object. Targets (issue 8): p99 < 10 ms, steady CPU < 1 % of a core.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import re
import signal
import statistics
import subprocess
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def percentile(xs: list[float], p: float) -> float:
    """The project's one quantile (include/seedance/base/quantile.h; NumPy's default): linear
    interpolation at rank (n - 1) p / 100."""
    xs = sorted(xs)
    h = (len(xs) - 1) * p / 100
    lo = int(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seedancectl", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--scrapes", type=int, default=1000)
    ap.add_argument("--steady-seconds", type=float, default=30)
    ap.add_argument("--interval-s", type=float, default=5)
    ap.add_argument("--naming", default="seedance")
    a = ap.parse_args()

    proc = subprocess.Popen([a.seedancectl, "probe", "--listen", "127.0.0.1:0", "--naming",
                             a.naming, "--sample-interval", f"{a.interval_s}s"],
                            stderr=subprocess.PIPE, text=True)
    port = int(re.search(r"\(port (\d+)\)", proc.stderr.readline()).group(1))
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)

        def scrape(c: http.client.HTTPConnection) -> tuple[float, int]:
            t0 = time.perf_counter()
            c.request("GET", "/metrics")
            r = c.getresponse()
            body = r.read()
            assert r.status == 200
            return time.perf_counter() - t0, len(body)

        for _ in range(20):  # warm up
            scrape(conn)
        cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        keep_alive = []
        size = 0
        for _ in range(a.scrapes):
            dt, size = scrape(conn)
            keep_alive.append(dt * 1e3)
        burst_wall = time.perf_counter() - t0
        burst_cpu = cpu_seconds(proc.pid) - cpu0
        fresh = []
        for _ in range(max(1, a.scrapes // 5)):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            dt, _ = scrape(c)
            c.close()
            fresh.append(dt * 1e3)
        # Steady state: one scrape per sampling interval.
        cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        next_scrape = t0
        while time.perf_counter() - t0 < a.steady_seconds:
            if time.perf_counter() >= next_scrape:
                # The exporter closes connections idle for over a second, so
                # a scraper at this interval reconnects every time.
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                scrape(c)
                c.close()
                next_scrape += a.interval_s
            time.sleep(0.05)
        steady_wall = time.perf_counter() - t0
        steady_cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    print(json.dumps({
        "scrapes": a.scrapes,
        "body_bytes": size,
        "naming": a.naming,
        "keep_alive_latency_ms": {"p50": round(statistics.median(keep_alive), 3),
                                  "p99": round(percentile(keep_alive, 99), 3),
                                  "max": round(max(keep_alive), 3)},
        "fresh_connection_latency_ms": {"p50": round(statistics.median(fresh), 3),
                                        "p99": round(percentile(fresh, 99), 3),
                                        "max": round(max(fresh), 3)},
        "burst_scrapes_per_s": round(a.scrapes / burst_wall, 1),
        "burst_cpu_cores": round(burst_cpu / burst_wall, 4),
        "steady_seconds": round(steady_wall, 1),
        "sampling_interval_s": a.interval_s,
        "steady_cpu_pct_of_core": round(100 * steady_cpu / steady_wall, 3),
        "cpu_clock_ticks_per_s": TICKS,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
