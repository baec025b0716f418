#!/usr/bin/env python3
"""How `seedancectl simulate` grows with the cluster (issue 17, finding 11).

Builds k copies of a real trace side by side in a temporary folder (names suffixed "-c<i>", so
copy i is its own set of nodes and pods or VCs and jobs) and times one run at each k:
  fgd:    the FGD protocol (policy fgd, one seed) on k x the Alibaba 2023 GPU node list
          (1,213 nodes) with k x the default pod list (8,152 pods);
  events: event mode (policy bestfit, 2 GPUs per node, one seed) on k x the Philly VCs with
          k x the Philly job list (82,247 jobs).
Prints one JSON object per protocol: for each k the nodes, pods or jobs, wall seconds and peak
RSS, and the growth exponent between consecutive sizes, log(t2/t1) / log(n2/n1) (1 is linear,
2 quadratic).

    .venv/bin/python bench/sched/scale.py [--fgd-k 1,2,4,8] [--events-k 1,4,13]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import pathlib
import subprocess
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data"))


def replicate(src: pathlib.Path, dst: pathlib.Path, k: int, renamed: list[str]) -> int:
    """Writes k copies of src's rows with the `renamed` columns suffixed; returns the row count."""
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    cols = [header.index(c) for c in renamed]
    with open(dst, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for copy in range(k):
            for r in body:
                r = list(r)
                for c in cols:
                    r[c] = f"{r[c]}-c{copy}"
                w.writerow(r)
    return k * len(body)


def timed(cmd: list[str]) -> tuple[float, float, dict, float, float]:
    """Wall seconds, peak RSS (MiB), the JSON report, user and kernel CPU seconds of one run."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errs:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errs, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)  # reaps it, with its own resource usage
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            errs.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {errs.read()}")
    return wall, usage.ru_maxrss / 1024, json.loads(out), usage.ru_utime, usage.ru_stime


def growth(points: list[dict], size_key: str) -> None:
    # Of wall time, and of user CPU time alone: on some virtual machines first-touch page faults
    # get far dearer past a GB or two of fresh memory, which shows as kernel time.
    for a, b in zip(points, points[1:]):
        size = math.log(b[size_key] / a[size_key])
        b["growth_exponent"] = round(math.log(b["seconds"] / a["seconds"]) / size, 2)
        b["user_growth_exponent"] = round(math.log(b["user_s"] / a["user_s"]) / size, 2)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seedancectl", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--fgd-k", default="1,2,4,8")
    ap.add_argument("--events-k", default="1,4,13")
    a = ap.parse_args()
    ali = DATA / "alibaba-gpu-2023"
    philly = DATA / "philly"
    result: dict[str, list[dict]] = {"fgd": [], "events": []}
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        for k in [int(x) for x in a.fgd_k.split(",") if x]:
            nodes = replicate(ali / "openb_node_list_gpu_node.csv", d / "nodes.csv", k, ["sn"])
            pods = replicate(ali / "openb_pod_list_default.csv", d / "pods.csv", k, ["name"])
            wall, rss, _, user, kernel = timed([a.seedancectl, "simulate", "--nodes",
                                                str(d / "nodes.csv"),
                                  "--pods", str(d / "pods.csv"), "--policy", "fgd", "--seeds",
                                  "1", "-o", "json"])
            result["fgd"].append({"k": k, "nodes": nodes, "pods": pods,
                                  "seconds": round(wall, 2), "user_s": round(user, 2),
                                  "kernel_s": round(kernel, 2), "peak_rss_mib": round(rss, 1)})
        for k in [int(x) for x in a.events_k.split(",") if x]:
            replicate(philly / "philly_vc_nodes.csv", d / "vcs.csv", k, ["vc"])
            jobs = replicate(philly / "philly_jobs_pollux.csv", d / "jobs.csv", k, ["cluster"])
            wall, rss, _, user, kernel = timed([a.seedancectl, "simulate", "--protocol", "events",
                                                "--nodes",
                                  str(d / "vcs.csv"), "--pods", str(d / "jobs.csv"), "--policy",
                                  "bestfit", "--seeds", "1", "--gpus-per-node", "2", "-o", "json"])
            result["events"].append({"k": k, "jobs": jobs, "seconds": round(wall, 2),
                                     "user_s": round(user, 2), "kernel_s": round(kernel, 2),
                                     "peak_rss_mib": round(rss, 1)})
    growth(result["fgd"], "nodes")
    growth(result["events"], "jobs")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
