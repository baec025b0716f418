#!/usr/bin/env python3
"""GPU over-commit of shares and load redistribution, on small slices of the Alibaba 2023 cluster.

The event mode on the gpushare100 pod list (7,064 single-GPU shares, QoS tiers from the
trace) and a slice of the GPU node list (every K-th node, written to a temporary file), with
each share's utilization drawn uniform in [10, 60) % or in [50, 100) % (seeded; the traces
carry none, so this is a stated assumption — of unknown utilization a share is not
over-committed at all). For each slice and utilization: no over-commit, --overcommit, and
--overcommit --redistribute. Prints a Markdown table.

    .venv/bin/python bench/sched/overcommit.py [--every 200,400]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import random
import subprocess
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data"))
BIN = pathlib.Path(os.environ.get("SEEDANCE_BUILD_DIR", REPO / "build")) / "bin" / "seedancectl"
TRACE = DATA / "alibaba-gpu-2023"


def run(nodes: pathlib.Path, util: pathlib.Path, seeds: int, *extra: str) -> dict:
    args = [str(BIN), "simulate", "--protocol", "events", "--nodes", str(nodes), "--pods",
            str(TRACE / "openb_pod_list_gpushare100.csv"), "--policy", "fgd", "--seeds", str(seeds),
            "--tiers", "--job-util", str(util), *extra, "-o", "json"]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["policies"][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--every", default="200,400")
    ap.add_argument("--seed", type=int, default=7)
    # A heavily queued slice is chaotic: one tie drawn otherwise changes a run's tail a great deal,
    # so the table gives means over several scheduler seeds.
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    print("| nodes (GPUs) | utilization | mode | queue delay p50 / p90 / p99 | JCT p50 / p99 | "
          "preemptions | share time slowed | beyond margin | moves | run time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        utils = {}
        for lo, hi in ((10, 60), (50, 100)):
            utils[f"drawn {lo}-{hi}%"] = path = pathlib.Path(tmp) / f"util_{lo}.csv"
            rng = random.Random(a.seed)
            with open(TRACE / "openb_pod_list_gpushare100.csv", newline="") as f, \
                    open(path, "w", newline="") as out:
                w = csv.writer(out)
                w.writerow(["id", "gpu_util_pct"])
                for row in csv.DictReader(f):
                    w.writerow([row["name"], f"{rng.uniform(lo, hi):.2f}"])
        with open(TRACE / "openb_node_list_gpu_node.csv", newline="") as f:
            rows = list(csv.reader(f))
        for k in (int(x) for x in a.every.split(",")):
            nodes = pathlib.Path(tmp) / f"nodes_{k}.csv"
            picked = rows[1::k]
            with open(nodes, "w", newline="") as out:
                csv.writer(out).writerows([rows[0]] + picked)
            gpus = sum(int(r[3]) for r in picked)
            for label, u in utils.items():
                for mode in ([], ["--overcommit"], ["--overcommit", "--redistribute"]):
                    p = run(nodes, u, a.seeds, *mode)
                    q, j = p["queue_delay_s"], p["jct_s"]
                    oc = p.get("overcommit")
                    slowed = f"{oc['slowed_pct']:.1f}%" if oc else "—"
                    beyond = f"{oc['beyond_margin_pct']:.1f}%" if oc else "—"
                    print(f"| {len(picked)} ({gpus}) | {label} | {' '.join(mode) or 'none'} | "
                          f"{q['p50']:,.0f} / {q['p90']:,.0f} / {q['p99']:,.0f} s | "
                          f"{j['p50']:,.0f} / {j['p99']:,.0f} s | {p['preemptions']:,.0f} | "
                          f"{slowed} | {beyond} | {p['redistributions']:,.0f} | "
                          f"{p['runtime_ms'] / 1000:.2f} s |")


if __name__ == "__main__":
    main()
