"""seedance.topo and seedance.torch.numa_worker_init_fn: binding really moves
threads (checked with os.sched_getaffinity, the kernel's answer), and the
affinity report agrees with taskset."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD

REPO = pathlib.Path(__file__).resolve().parents[2]


def python(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def fake_gpu_machine(root: pathlib.Path, gpu_cpu: int) -> None:
    """Two nodes of one CPU each; one GPU local to CPU `gpu_cpu` (on node `gpu_cpu`)."""
    def write(path: str, text: str) -> None:
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    write("/sys/devices/system/cpu/online", "0-1\n")
    write("/sys/devices/system/node/online", "0-1\n")
    for n in (0, 1):
        write(f"/sys/devices/system/node/node{n}/cpulist", f"{n}\n")
    dev = root / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
    write(str(dev.relative_to(root)) + "/class", "0x030200\n")
    write(str(dev.relative_to(root)) + "/vendor", "0x10de\n")
    write(str(dev.relative_to(root)) + "/numa_node", f"{gpu_cpu}\n")
    write(str(dev.relative_to(root)) + "/local_cpulist", f"{gpu_cpu}\n")
    link = root / "sys/bus/pci/devices/0000:01:00.0"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0")


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs two CPUs")
def test_dataloader_workers_land_on_the_gpus_cpus(tmp_path):
    fake_gpu_machine(tmp_path, gpu_cpu=1)
    out = python(f"""
        import os, torch
        from torch.utils.data import DataLoader, Dataset
        import seedance.torch as st

        class Where(Dataset):
            def __len__(self): return 8
            def __getitem__(self, i): return torch.tensor(sorted(os.sched_getaffinity(0)))

        init = st.numa_worker_init_fn(gpu=0, root={str(tmp_path)!r})
        seen = set()
        for batch in DataLoader(Where(), batch_size=1, num_workers=2, worker_init_fn=init):
            seen.add(tuple(batch[0].tolist()))
        print(sorted(seen), sorted(os.sched_getaffinity(0)))
    """)
    workers, parent = out.split("] [")
    assert workers == "[(1,)"  # every worker pinned to CPU 1, the GPU's local CPU
    assert parent == "0, 1]"   # the training process itself is untouched


def test_placement_near_gpu_and_errors(tmp_path):
    fake_gpu_machine(tmp_path, gpu_cpu=0)
    import seedance.topo as topo
    from seedance.errors import SeedanceError
    assert topo.placement_near_gpu(0, root=tmp_path) == ([0], 0)
    with pytest.raises(SeedanceError, match="no GPU 3"):
        topo.placement_near_gpu(3, root=tmp_path)
    with pytest.raises(ValueError):
        import seedance.torch as st
        st.numa_worker_init_fn(memory="everywhere")


def test_bind_to_numa_node_moves_the_thread():
    out = python("""
        import os, seedance.topo as topo
        from seedance.errors import SeedanceError
        os.sched_setaffinity(0, {0})          # start somewhere narrow
        topo.bind_to_numa_node(0)
        print(topo.topology()["numa_nodes"][0]["cpus"])
        print(",".join(map(str, sorted(os.sched_getaffinity(0)))))
        try:
            topo.bind_to_numa_node(999)
        except SeedanceError as e:
            print("SeedanceError", e)
    """)
    node0, now, error = out.splitlines()
    lo, _, hi = node0.partition("-")
    want = list(range(int(lo), int(hi or lo) + 1))
    assert now == ",".join(map(str, want))   # node 0's CPUs, as the kernel reports them
    assert error.startswith("SeedanceError") and "999" in error


def test_check_affinity_matches_taskset():
    child = subprocess.Popen(["taskset", "-c", "0", "sleep", "30"])
    try:
        import time
        import seedance.topo as topo
        for _ in range(100):  # until taskset has exec'd sleep
            r = topo.check_affinity(child.pid)
            if r["command"] == "sleep":
                break
            time.sleep(0.02)
        assert r["allowed_cpus"] == "0"
        assert r["exit_code"] == 0 and r["command"] == "sleep"
    finally:
        child.kill()
