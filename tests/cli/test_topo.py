"""`seedancectl topo show|check` on fake machines (tests/fixtures/fake_node.py),
compared with golden outputs in tests/golden/topo/. Regenerate them after an
intended change with UPDATE_GOLDEN=1 and review the diff."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "topo"
FAKE = REPO / "tests" / "fixtures" / "fake_node.py"


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> dict[str, pathlib.Path]:
    out = {}
    for kind in ("server", "laptop", "garbage"):
        d = tmp_path_factory.mktemp(kind)
        subprocess.run([sys.executable, str(FAKE), kind, str(d)], check=True)
        out[kind] = d
    return out


def run(seedancectl, *args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(seedancectl), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing golden {path}: run with UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"output differs from {path}"


@pytest.mark.parametrize("kind,fmt", [("server", "table"), ("server", "json"),
                                      ("laptop", "table"), ("laptop", "json"),
                                      ("garbage", "table")])
def test_topo_show_golden(seedancectl, trees, kind, fmt):
    args = ["topo", "show", "--root", ".", "-o", fmt]
    if kind == "server":
        args += ["--nvlink-from", "nvidia-smi-topo.txt"]
    r = run(seedancectl, *args, cwd=trees[kind])
    assert r.returncode == 0, r.stderr
    check_golden(f"{kind}_show.{'txt' if fmt == 'table' else 'json'}", r.stdout)


def test_server_matrix_reads_like_nvidia_smi(seedancectl, trees):
    r = run(seedancectl, "topo", "show", "--root", ".", "--nvlink-from", "nvidia-smi-topo.txt",
            "-o", "json", cwd=trees["server"])
    t = json.loads(r.stdout)
    m = t["matrix"]
    assert len(t["gpus"]) == 8 and len(t["nics"]) == 4
    # Two NVLink groups of four.
    assert m["GPU0"]["GPU3"] == "NV12" and m["GPU4"]["GPU7"] == "NV12"
    assert m["GPU3"]["GPU4"] == "SYS"
    # GPU0 and mlx5_0 share a PCIe switch; GPU0 and mlx5_1 are on another host bridge of node 0.
    assert m["GPU0"]["NIC0"] == "PIX" and m["GPU0"]["NIC1"] == "NODE"
    assert m["GPU0"]["NIC2"] == "SYS"
    # Symmetric.
    for a in m:
        for b in m:
            assert m[a][b] == m[b][a]
    # The BMC's VGA controller is not a GPU; RoCE NICs carry their netdev.
    assert all(g["vendor"] == "nvidia" for g in t["gpus"])
    assert t["nics"][2]["kind"] == "roce" and t["nics"][2]["interface"] == "ens2f0np0"


@pytest.mark.parametrize("pid,code,verdict", [(4242, 3, "memory_not_local"), (4343, 2, "unbound"),
                                              (4444, 0, "consistent"), (4545, 0, "consistent")])
def test_topo_check_exit_codes(seedancectl, trees, pid, code, verdict):
    r = run(seedancectl, "topo", "check", "--root", str(trees["server"]), "--pid", str(pid),
            "-o", "json")
    assert r.returncode == code, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["verdict"] == verdict
    if pid == 4444:
        assert report["open_gpus"] == ["GPU4"] and report["open_nics"] == ["mlx5_2"]
    if pid == 4545:  # GPU5 sits on node 1, the process on node 0: a warning only
        assert [f["code"] for f in report["findings"]] == ["device_remote"]


def test_topo_check_golden_table(seedancectl, trees):
    r = run(seedancectl, "topo", "check", "--root", str(trees["server"]), "--pid", "4242")
    assert r.returncode == 3
    check_golden("server_check_4242.txt", r.stdout)


def test_topo_check_other_machines(seedancectl, trees):
    # One node: consistent whatever the mask.
    assert run(seedancectl, "topo", "check", "--root", str(trees["laptop"]), "--pid",
               "777").returncode == 0
    # Garbled node files: no usable NUMA information.
    r = run(seedancectl, "topo", "check", "--root", str(trees["garbage"]), "--pid", "888")
    assert r.returncode == 1, r.stdout
    # No /sys/devices/system/node at all.
    empty = trees["laptop"].parent / "empty"
    (empty / "proc" / "1").mkdir(parents=True, exist_ok=True)
    (empty / "proc" / "1" / "status").write_text("Name:\tinit\nCpus_allowed_list:\t0\n")
    assert run(seedancectl, "topo", "check", "--root", str(empty), "--pid", "1").returncode == 1
    # A process that does not exist is an error, not a verdict.
    r = run(seedancectl, "topo", "check", "--root", str(trees["laptop"]), "--pid", "99999")
    assert r.returncode == 1 and "no such process" in r.stderr


def test_topo_check_of_a_process_bound_with_taskset(seedancectl):
    # The real machine: a child pinned to CPU 0 is bound (one node here).
    r = subprocess.run(["taskset", "-c", "0", str(seedancectl), "topo", "check", "-o", "json"],
                       capture_output=True, text=True)
    report = json.loads(r.stdout)
    assert report["allowed_cpus"] == "0"
    assert r.returncode == 0


def test_topo_show_on_this_machine_lists_nodes_cpus_and_nic(seedancectl):
    r = run(seedancectl, "topo", "show", "-o", "json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)
    assert t["numa_info"] and len(t["numa_nodes"]) >= 1
    assert t["cpu_count"] == os.cpu_count()
    assert t["numa_nodes"][0]["cpus"]
    names = {n["device"] for n in t["nics"]}
    physical = {n for n in os.listdir("/sys/class/net")
                if "/virtual/" not in os.path.realpath(f"/sys/class/net/{n}")}
    assert physical <= names, (physical, names)


def test_nvlink_file_errors_name_the_line(seedancectl, trees, tmp_path):
    bad = tmp_path / "topo.txt"
    text = (trees["server"] / "nvidia-smi-topo.txt").read_text().replace("NV12", "NVx", 1)
    bad.write_text(text)
    r = run(seedancectl, "topo", "show", "--root", str(trees["server"]), "--nvlink-from", str(bad))
    assert r.returncode == 1
    assert f"({bad}:2)" in r.stderr, r.stderr
