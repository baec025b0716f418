"""`seedancectl loadtest` against `wrk` 4.1.0 (Debian) on the same nginx target (Debian), in one
run (feature COST-8). nginx serves a 512 KiB file at 8 MB/s per connection, about 55 ms a request,
so the server rather than either client sets the pace and both measure the same thing. At
each concurrency both clients run at the same time, each with its own connections. nginx is
started on 127.0.0.1 and stopped by its PID.

Prints one JSON object: per concurrency, wrk's and loadtest's requests/s and latency percentiles
(ms) and loadtest / wrk for each.

  .venv/bin/python bench/cost/loadtest_vs_wrk.py [--concurrency 2,8] [--seconds 4]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wrk_start(url: str, clients: int, seconds: int) -> subprocess.Popen:
    return subprocess.Popen(["wrk", "-t1", f"-c{clients}", f"-d{seconds}s", "--latency", url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wrk_finish(proc: subprocess.Popen, seconds: int) -> dict:
    """wrk's requests/s and latency percentiles (ms) from its --latency report."""
    out, err = proc.communicate(timeout=seconds + 60)
    if proc.returncode != 0:
        raise RuntimeError(f"wrk exited {proc.returncode}: {err}")
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    got = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}
    for p in ("50", "90", "99"):
        value, unit = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M).groups()
        got[f"p{p}"] = float(value) * scale[unit]
    return got


def start_nginx(workdir: pathlib.Path) -> tuple[subprocess.Popen, str]:
    (workdir / "blob").write_bytes(bytes(range(256)) * 2048)
    port = free_port()
    # Run as root, nginx's workers would drop to nobody, who may not read a private directory.
    user = "user root;" if os.geteuid() == 0 else ""
    conf = workdir / "nginx.conf"
    conf.write_text(f"""daemon off;
{user}
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {workdir}; proxy_temp_path {workdir}; fastcgi_temp_path {workdir};
  uwsgi_temp_path {workdir}; scgi_temp_path {workdir};
  server {{ listen 127.0.0.1:{port}; location /slow/ {{ alias {workdir}/; limit_rate 8m; }} }}
}}
""")
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(workdir)])
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/slow/blob"
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError((workdir / "error.log").read_text()) from None
            time.sleep(0.05)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("SEEDANCE_BUILD_DIR", str(ROOT / "build")))
    ap.add_argument("--concurrency", default="2,8")
    ap.add_argument("--seconds", type=int, default=4)
    a = ap.parse_args()
    ctl = pathlib.Path(a.build) / "bin" / "seedancectl"
    with tempfile.TemporaryDirectory() as tmp:
        nginx, url = start_nginx(pathlib.Path(tmp))
        try:
            rows = []
            for clients in map(int, a.concurrency.split(",")):
                # Both clients measure at once, on their own connections to the same server: a
                # burst from a neighbouring process lands on both, not on one of them. loadtest
                # warms up for 0.5 s first, so wrk runs a second longer and covers its window.
                reference = wrk_start(url, clients, a.seconds + 1)
                r = subprocess.run([str(ctl), "loadtest", "--url", url, "--concurrency",
                                    str(clients), "--warmup-s", "0.5", "--level-s", str(a.seconds),
                                    "--max-recalibrations", "1", "-o", "json"],
                                   capture_output=True, text=True, check=True)
                lv = json.loads(r.stdout)["levels"][0]
                reference = wrk_finish(reference, a.seconds + 1)
                ours = {"rps": lv["throughput_rps"], "errors": lv["errors"],
                        **{p: lv["latency_ms"][p]["estimate"] for p in ("p50", "p90", "p99")}}
                rows.append({"concurrency": clients, "wrk": reference, "loadtest": ours,
                             "ratio": {k: round(ours[k] / reference[k], 4) for k in reference}})
        finally:
            nginx.send_signal(signal.SIGTERM)
            nginx.wait(timeout=30)
    print(json.dumps({"target": "nginx, 512 KiB at 8 MB/s per connection",
                      "seconds": a.seconds, "levels": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
