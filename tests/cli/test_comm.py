"""`seedancectl comm advise` and `comm nccl-log`: files in, reports and errors out."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

FAKE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "fake_node.py"


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_advise_from_a_topology_file(seedancectl, tmp_path):
    topo = tmp_path / "topo.yaml"
    topo.write_text("topology:\n  nodes: 2\n  gpus_per_node: 8\n  nvlink: true\n"
                    "  gpu_nic_affinity: same-pcie-switch\n"
                    "  nics:\n    - {name: mlx5_0, type: infiniband, speed_gbits_per_s: 400}\n"
                    "    - {name: mlx5_1, type: infiniband, speed_gbits_per_s: 400, up: false}\n")
    r = run(seedancectl, "comm", "advise", "--topology", topo, "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    advice = {a["variable"]: a for a in report["advice"]}
    assert advice["NCCL_IB_HCA"]["value"] == "mlx5_0"
    assert advice["NCCL_NET_GDR_LEVEL"]["value"] == "PXB"
    assert advice["NCCL_P2P_LEVEL"]["value"] == "NVL"
    assert all(a["reason"] for a in report["advice"])
    env = run(seedancectl, "comm", "advise", "--topology", topo, "--env")
    assert "export NCCL_IB_HCA=mlx5_0" in env.stdout.splitlines()


def test_advise_detects_this_machine(seedancectl):
    r = run(seedancectl, "comm", "advise", "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["topology"]["source"] == "detected"


def test_advise_reads_the_node_as_topo_show_does(seedancectl, tmp_path):
    """On the fake server (8 NVIDIA GPUs, two per PCIe switch with one NIC each: mlx5_0 and
    mlx5_1 InfiniBand, mlx5_2 and mlx5_3 RoCE), the advisor's NICs are topo show's, NVLink comes
    from the saved nvidia-smi printout and every GPU has an HCA under its switch."""
    subprocess.run([sys.executable, str(FAKE), "server", str(tmp_path)], check=True)
    shown = json.loads(run(seedancectl, "topo", "show", "--root", tmp_path, "-o", "json").stdout)
    r = run(seedancectl, "comm", "advise", "--root", tmp_path, "--nvlink-from",
            tmp_path / "nvidia-smi-topo.txt", "--nodes", "4", "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    t = report["topology"]
    assert [n["name"] for n in t["nics"]] == [n["device"] for n in shown["nics"]
                                              if n["kind"] != "wireless"]
    assert [n["type"] for n in t["nics"]][:4] == ["infiniband", "infiniband", "roce", "roce"]
    assert t["gpus_per_node"] == 8 and t["nvlink"] is True and t["nodes"] == 4
    assert t["gpu_nic_affinity"] == "same-pcie-switch"
    advice = {a["variable"]: a["value"] for a in report["advice"]}
    assert advice["NCCL_IB_HCA"] == "mlx5_0,mlx5_1,mlx5_2,mlx5_3"
    assert advice["NCCL_NET_GDR_LEVEL"] == "PXB"
    assert advice["NCCL_P2P_LEVEL"] == "NVL"
    # A file and a tree exclude each other.
    r = run(seedancectl, "comm", "advise", "--root", tmp_path, "--topology", tmp_path / "x.yaml")
    assert r.returncode == 2 and "excludes" in r.stderr


def test_advise_errors(seedancectl, tmp_path):
    r = run(seedancectl, "comm", "advise", "--topology", tmp_path / "missing.yaml")
    assert r.returncode == 1 and r.stderr.startswith("error: cannot read the topology file")
    bad = tmp_path / "bad.yaml"
    bad.write_text("topology:\n  nics:\n    - {name: x, type: fibre}\n")
    r = run(seedancectl, "comm", "advise", "--topology", bad)
    assert r.returncode == 1
    assert r.stderr.strip().endswith(f"({bad}:3: topology.nics[0].type)")
    # The old, ambiguous spelling of the line rate is refused with the new one named.
    bad.write_text("topology:\n  nics:\n    - {name: x, type: ethernet, speed_gbps: 10}\n")
    r = run(seedancectl, "comm", "advise", "--topology", bad)
    assert r.returncode == 1 and "speed_gbits_per_s" in r.stderr


def test_nccl_log(seedancectl, tmp_path):
    log = tmp_path / "nccl.log"
    log.write_text(
        "h:1:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
        "h:1:2 [0] NCCL INFO Channel 00/01 :    0   1\n"
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[1000] -> 1[2000] via P2P/CUMEM\n"
        "h:1:2 [0] NCCL INFO AllGather: opCount 0 sendbuff 0x1 recvbuff 0x2 count 256 "
        "datatype 1 op 0 root 0 comm 0xab [nranks=2] stream 0x3\n")
    r = run(seedancectl, "comm", "nccl-log", "--input", log, "-o", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["channels"] == 1 and report["transports"] == {"P2P/CUMEM": 1}
    assert report["collectives"] == [{"op": "AllGather", "calls": 1, "bytes": 256}]
    other = tmp_path / "other.log"
    other.write_text("epoch 1 loss 0.3\n")
    r = run(seedancectl, "comm", "nccl-log", "--input", other)
    assert r.returncode == 1 and "NCCL_DEBUG=INFO" in r.stderr
