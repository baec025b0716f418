"""`seedancectl simulate --protocol fgd` on the default Alibaba trace."""

from __future__ import annotations

import json
import subprocess

from conftest import DATA, require_data

TRACE = DATA / "alibaba-gpu-2023"


def test_bestfit_one_seed(seedancectl):
    require_data(TRACE)
    r = subprocess.run([str(seedancectl), "simulate", "--nodes",
                        str(TRACE / "openb_node_list_gpu_node.csv"), "--pods",
                        str(TRACE / "openb_pod_list_default.csv"), "--policy", "bestfit,random",
                        "--seeds", "1", "-o", "json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    by = {p["policy"]: p for p in out["policies"]}
    assert set(by) == {"bestfit", "random"}
    at = by["bestfit"]["alloc_ratio_pct_at"]
    assert list(at) == [str(k) for k in range(50, 131, 10)]
    assert abs(at["50"] - 50) < 0.5
    assert by["bestfit"]["unallocated_gpu_pct_at_130"] < by["random"]["unallocated_gpu_pct_at_130"]


def test_errors(seedancectl, tmp_path):
    require_data(TRACE)
    r = subprocess.run([str(seedancectl), "simulate", "--nodes", str(tmp_path / "none.csv"),
                        "--pods", str(TRACE / "openb_pod_list_default.csv")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "cannot read the node list" in r.stderr
    r = subprocess.run([str(seedancectl), "simulate", "--nodes",
                        str(TRACE / "openb_node_list_gpu_node.csv"), "--pods",
                        str(TRACE / "openb_pod_list_default.csv"), "--policy", "magic",
                        "--seeds", "1"], capture_output=True, text=True)
    assert r.returncode == 1 and "unknown policy 'magic'" in r.stderr
