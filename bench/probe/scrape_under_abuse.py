#!/usr/bin/env python3
"""A well-behaved scraper's latency while other clients misbehave (issue 17, finding 6).

Starts `seedancectl probe --listen`, then measures `--scrapes` scrapes, each on a fresh
connection as Prometheus makes them at its usual intervals (the exporter closes connections idle
for a second), twice: alone, and while a second process runs these clients against the same port:
  - `--idle` sockets that connect and send nothing (reconnecting when closed);
  - `--slowloris` sockets that send a request one byte every 100 ms (reconnecting when closed);
  - one client pipelining 1,000 GETs and never reading;
  - one client sending a head of 10^6 fields, over and over.
Prints one JSON object: latency p50/p99/max for both runs, failed scrapes, the exporter's peak
resident memory (VmHWM) and its open file descriptors once the abusers are connected.

    .venv/bin/python bench/probe/scrape_under_abuse.py [--scrapes 500] [--idle 200] [--slowloris 50]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import pathlib
import re
import selectors
import signal
import socket
import statistics
import subprocess
import time

from scrape_load import percentile  # the project's one quantile definition, as the load test

REPO = pathlib.Path(__file__).resolve().parents[2]
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def vm_hwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def abuse(port: int, idle: int, slowloris: int, stop: mp.Event) -> None:
    """Runs every misbehaving client in one process with one selector loop."""
    sel = selectors.DefaultSelector()
    progress: dict[socket.socket, tuple[str, int]] = {}

    def connect(kind: str) -> None:
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        progress[s] = (kind, 0)
        sel.register(s, selectors.EVENT_READ)

    def drop(s: socket.socket) -> None:
        kind, _ = progress.pop(s)
        sel.unregister(s)
        s.close()
        if not stop.is_set():
            connect(kind)

    for _ in range(idle):
        connect("idle")
    for _ in range(slowloris):
        connect("slow")
    connect("pipeline")
    connect("headers")
    flood = b"GET /metrics HTTP/1.1\r\nHost: h\r\n" + b"X-A: b\r\n" * 1_000_000
    next_drip = time.monotonic()
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.02):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            kind, _ = progress.get(s, ("", 0))
            if not data and s in progress:
                drop(s)
            elif kind == "pipeline":
                pass  # reads nothing on purpose: the kernel buffer fills
        if time.monotonic() >= next_drip:
            next_drip += 0.1
            for s, (kind, sent) in list(progress.items()):
                try:
                    if kind == "slow":
                        s.send(REQUEST[sent % len(REQUEST):sent % len(REQUEST) + 1])
                        progress[s] = (kind, sent + 1)
                    elif kind == "pipeline" and sent == 0:
                        s.setblocking(True)
                        s.settimeout(0.5)
                        try:
                            s.sendall(REQUEST * 1000)
                        except (socket.timeout, OSError):
                            pass
                        s.setblocking(False)
                        progress[s] = (kind, 1)
                    elif kind == "headers" and sent < len(flood):
                        n = s.send(flood[sent:sent + 262144])
                        progress[s] = (kind, sent + n)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    if s in progress:
                        drop(s)
    for s in list(progress):
        s.close()


def scrape_series(port: int, n: int) -> tuple[list[float], int]:
    lat, failed = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/metrics")
            r = c.getresponse()
            r.read()
            c.close()
            if r.status != 200:
                failed += 1
                continue
        except OSError:
            failed += 1
            continue
        lat.append((time.perf_counter() - t0) * 1e3)
        time.sleep(0.01)
    return lat, failed


def summary(lat: list[float], failed: int) -> dict:
    if not lat:
        return {"ok": 0, "failed": failed}
    return {"ok": len(lat), "failed": failed, "p50_ms": round(statistics.median(lat), 3),
            "p99_ms": round(percentile(lat, 99), 3), "max_ms": round(max(lat), 3)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seedancectl", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--scrapes", type=int, default=500)
    ap.add_argument("--idle", type=int, default=200)
    ap.add_argument("--slowloris", type=int, default=50)
    a = ap.parse_args()

    proc = subprocess.Popen([a.seedancectl, "probe", "--listen", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    port = int(re.search(r"\(port (\d+)\)", proc.stderr.readline()).group(1))
    try:
        scrape_series(port, 20)  # warm up
        alone = scrape_series(port, a.scrapes)
        rss_alone = vm_hwm_kib(proc.pid)
        stop = mp.Event()
        p = mp.Process(target=abuse, args=(port, a.idle, a.slowloris, stop))
        p.start()
        time.sleep(2.0)  # let the abusers connect and the slow ones reach their deadlines
        fds = len(list(pathlib.Path(f"/proc/{proc.pid}/fd").iterdir()))
        abused = scrape_series(port, a.scrapes)
        stop.set()
        p.join(timeout=10)
        rss_abused = vm_hwm_kib(proc.pid)
        alive = proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    print(json.dumps({
        "scrapes_per_run": a.scrapes,
        "abusers": {"idle": a.idle, "slowloris": a.slowloris, "pipeline_1000_unread": 1,
                    "head_of_1e6_fields": 1},
        "alone": summary(*alone),
        "under_abuse": summary(*abused),
        "exporter_peak_rss_mib": {"alone": round(rss_alone / 1024, 1),
                                  "after_abuse": round(rss_abused / 1024, 1)},
        "exporter_open_fds_under_abuse": fds,
        "exporter_survived": alive,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
