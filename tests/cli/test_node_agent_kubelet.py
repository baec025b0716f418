"""The node agent under a real kubelet (issue 44, item 5): kubelet 1.20.2 built from the same
Debian source as the API server and scheduler (scripts/k8s-control-plane.sh build), Debian's
containerd and runc, and images made here the way scripts/build-image.py makes Seedance's: the
seedancectl image itself, a pause image (a static binary compiled here) and a shell image
(Debian's busybox-static). A pod asking for half a GPU under schedulerName seedance is placed by
kube-scheduler through the extender, allocated by the agent through kubelet's own device manager
(Register, ListAndWatch, GetPreferredAllocation, Allocate), and started; its container prints
its environment, read back from kubelet's log of it: exactly the assigned GPU. A second half-GPU
pod shares that GPU under best fit. The steps are the guide's walk-through (docs/guide/
kubernetes.md, "From an empty cluster to a pod on half a GPU"), run as written where this machine
allows and as the guide says where it does not.

Skipped where kubelet is not built or containers cannot run; every process is stopped by its
PID. kubelet 1.20 keeps its device-plugin directory at /var/lib/kubelet/device-plugins whatever
its root directory, so this test uses that directory and removes its own sockets after.

Settings this machine needs, each one what nested container hosts (kind, CI runners) set too:
containerd's restrict_oom_score_adj (the sandbox may not lower its OOM score), kubelet without
QoS cgroups or node-allocatable enforcement, host-network pods (no CNI plugin is installed),
and no disk-pressure eviction."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

grpc = pytest.importorskip("grpc")

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "sched"))
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from k8s_replay import Api, Extender, Plane, free_port, start_scheduler, wait_bound  # noqa: E402

NODE = "gpu-node-1"
PLUGINS = pathlib.Path("/var/lib/kubelet/device-plugins")
PAUSE_C = """#include <signal.h>
#include <unistd.h>
static void done(int s) { (void)s; _exit(0); }
int main(void) { signal(SIGINT, done); signal(SIGTERM, done); for (;;) pause(); }
"""


def build_image_module():
    spec = importlib.util.spec_from_file_location("build_image", REPO / "scripts" /
                                                  "build-image.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def prerequisites() -> str:
    """Why this test cannot run here, or ""."""
    if not Plane.built() or not (pathlib.Path(Plane.bin_dir()) / "kubelet").exists():
        return "kubelet 1.20.2 is not built (scripts/k8s-control-plane.sh build)"
    for tool in ("containerd", "ctr", "runc", "busybox", "gcc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install containerd runc busybox-static)"
    if os.geteuid() != 0:
        return "kubelet and containerd need root"
    for sock in PLUGINS.glob("*.sock") if PLUGINS.exists() else []:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(str(sock))
            return f"{PLUGINS} is in use by a running kubelet or plugin ({sock.name})"
        except OSError:
            sock.unlink()  # left by a kubelet that is gone
        finally:
            s.close()
    return ""


class Proc:
    def __init__(self, args: list[str], log: pathlib.Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(log, "w"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def wait(predicate, what: str, seconds: float = 120, log: pathlib.Path | None = None):
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise AssertionError(f"timed out waiting for {what}\n{tail}")
        time.sleep(0.5)


def make_images(work: pathlib.Path) -> dict[str, pathlib.Path]:
    """The pause image and the shell image, made as build-image.py makes Seedance's."""
    bi = build_image_module()
    subprocess.run(["gcc", "-static", "-O2", "-o", str(work / "pause"), "-x", "c", "-"],
                   input=PAUSE_C, text=True, check=True)
    archives = {}
    for name, files, entrypoint in (
            ("localhost/seedance/pause:test", {"pause": work / "pause"}, ["/pause"]),
            ("localhost/seedance/busybox:test", {"bin/busybox": shutil.which("busybox")},
             ["/bin/busybox"])):
        root = work / ("root-" + name.split("/")[-1].split(":")[0])
        for dest, src in files.items():
            (root / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / dest)
        layout = work / ("layout-" + root.name)
        bi.write_layout(root, layout, name=name, entrypoint=entrypoint, user="0:0")
        archives[name] = work / (root.name + ".tar")
        bi.write_archive(layout, archives[name])
    return archives


def containerd_config(work: pathlib.Path) -> pathlib.Path:
    text = subprocess.run(["containerd", "config", "default"], capture_output=True, text=True,
                          check=True).stdout
    replacements = {
        'root = "/var/lib/containerd"': f'root = "{work}/ctd-root"',
        'state = "/run/containerd"': f'state = "{work}/ctd-state"',
        'address = "/run/containerd/containerd.sock"': f'address = "{work}/ctd.sock"',
        "restrict_oom_score_adj = false": "restrict_oom_score_adj = true",
    }
    for old, new in replacements.items():
        assert old in text, f"containerd's default configuration has no '{old}'"
        text = text.replace(old, new, 1)
    lines = [('    sandbox_image = "localhost/seedance/pause:test"'
              if line.strip().startswith("sandbox_image =") else line)
             for line in text.splitlines()]
    path = work / "containerd.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def kubelet_config(work: pathlib.Path) -> pathlib.Path:
    path = work / "kubelet.yaml"
    path.write_text(f"""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {{enabled: true}}
  webhook: {{enabled: false}}
authorization: {{mode: AlwaysAllow}}
address: 127.0.0.1
port: {free_port()}
readOnlyPort: 0
healthzPort: 0
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
evictionHard: {{}}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
""")
    return path


def env_pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"seedance.io/num-gpu": "1",
                                                       "seedance.io/gpu-milli": "500"}},
            "spec": {"schedulerName": "seedance", "hostNetwork": True, "restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0,
                     "containers": [
                         {"name": "main", "image": "localhost/seedance/busybox:test",
                          "imagePullPolicy": "Never", "command": ["/bin/busybox", "env"],
                          "resources": {"requests": {"seedance.io/gpu-milli": "500"},
                                        "limits": {"seedance.io/gpu-milli": "500"}}},
                         {"name": "seedancectl", "image": "localhost/seedance/seedancectl:0.1.0",
                          "imagePullPolicy": "Never", "args": ["version"]}]}}


def walkthrough() -> list[str]:
    """The guide's walk-through: its shell lines, a here-document joined to its command."""
    text = (REPO / "docs" / "guide" / "kubernetes.md").read_text()
    start = text.index("<!-- walkthrough:")
    block = text[text.index("```sh\n", start) + 6:text.index("```\n", text.index("```sh\n", start) + 6)]
    commands, lines = [], block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "<<'" in line:
            tag = line.split("<<'")[1].split("'")[0]
            body = []
            while lines[i] != tag:
                body.append(lines[i])
                i += 1
            i += 1
            line = line + "\n" + "\n".join(body) + "\n" + tag
        commands.append(line)
    return commands


def container_output(pod: dict, container: str) -> str:
    ns, name, uid = (pod["metadata"][k] for k in ("namespace", "name", "uid"))
    log = pathlib.Path(f"/var/log/pods/{ns}_{name}_{uid}/{container}/0.log")
    # CRI log lines: "<time> stdout F <text>"
    return "\n".join(line.split(" ", 3)[3] for line in log.read_text().splitlines()
                     if line.count(" ") >= 3)


def test_the_guides_walkthrough_under_a_real_kubelet(seedancectl, tmp_path):
    why = prerequisites()
    if why:
        pytest.skip(why)
    work = pathlib.Path(os.path.realpath(tmp_path))
    steps = walkthrough()
    assert [c.split()[0] for c in steps] == ["python3", "ctr", "kubectl", "kubectl", "kubectl",
                                             "kubectl", "kubectl"], steps
    archives = make_images(work)
    procs: list[Proc] = []
    plane = Plane(work / "plane")
    plane.start()
    kube = Api(plane.dir)
    ctd_sock = work / "ctd.sock"
    cwd = work / "cluster-admin"  # where the guide's commands run: scripts/ and deploy/ at hand
    cwd.mkdir()
    for link in ("scripts", "deploy"):
        (cwd / link).symlink_to(REPO / link)
    prelude = (f'kubectl() {{ command kubectl --kubeconfig "{plane.kubeconfig}" "$@"; }}; '
               f'ctr() {{ command ctr -a "{ctd_sock}" "$@"; }}; set -e; ')

    def sh(line: str) -> str:
        r = subprocess.run(["bash", "-c", prelude + line], cwd=cwd, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
        return r.stdout

    try:
        procs.append(Proc(["containerd", "--config", str(containerd_config(work))],
                          work / "containerd.log"))
        wait(lambda: ctd_sock.exists(), "containerd", 30, work / "containerd.log")
        for archive in archives.values():  # Seedance's own image comes from the guide's step 1
            sh(f"ctr -n k8s.io images import {archive}")
        procs.append(Proc([f"{Plane.bin_dir()}/kubelet", "--config", str(kubelet_config(work)),
                           "--kubeconfig", str(plane.kubeconfig), "--root-dir",
                           str(work / "kubelet"), "--cert-dir", str(work / "kubelet-pki"),
                           "--container-runtime", "remote", "--container-runtime-endpoint",
                           f"unix://{ctd_sock}", "--hostname-override", NODE],
                          work / "kubelet.log"))
        wait(lambda: any(n["metadata"]["name"] == NODE
                         for n in kube.must("GET", "/api/v1/nodes")["items"]),
             "kubelet's Node", 120, work / "kubelet.log")
        # No controller manager runs here to lift the not-ready taint the API server puts on a
        # new Node (the node is NotReady for want of a CNI plugin; host-network pods need none).
        kube.must("PATCH", f"/api/v1/nodes/{NODE}", {"spec": {"taints": None}},
                  "application/merge-patch+json")

        # Steps 1 and 2, as written (the image built from the binary under test).
        image = sh(steps[0] + f" --binary {seedancectl} --out build/image").strip().splitlines()
        assert image[-1] == "localhost/seedance/seedancectl:0.1.0"
        sh(steps[1])
        sh(steps[2])
        sh(steps[3])
        node = kube.must("GET", f"/api/v1/nodes/{NODE}")
        assert node["metadata"]["labels"]["seedance.io/gpu-node"] == "true"
        secret = kube.must("GET", "/api/v1/namespaces/kube-system/secrets/"
                                  "seedance-extender-token")
        token_file = work / "token"
        token_file.write_bytes(__import__("base64").b64decode(secret["data"]["token"]))
        # Step 3: the API server's dry run; then what the DaemonSet and Deployment would run.
        applied = sh(steps[4].replace("kubectl apply ", "kubectl apply --dry-run=server ", 1))
        assert "daemonset.apps/seedance-node-agent" in applied
        assert "deployment.apps/seedance-scheduler" in applied
        root = work / "sys"  # eight fake GPUs on a fake two-socket node
        subprocess.run([sys.executable, str(REPO / "tests" / "fixtures" / "fake_node.py"),
                        "server", str(root)], check=True, capture_output=True)
        topo = json.loads(subprocess.run([str(seedancectl), "topo", "show", "--root", str(root),
                                          "-o", "json"], capture_output=True, text=True,
                                         check=True).stdout)
        gpus = [{"index": i, "name": "NVIDIA H100 80GB HBM3",
                 "uuid": f"GPU-5eedc0de-0000-4000-8000-{i:012d}",
                 "pci_address": g["pci_address"]} for i, g in enumerate(topo["gpus"])]
        (work / "gpus.json").write_text(json.dumps({"gpus": gpus}))
        procs.append(Proc([str(seedancectl), "node", "agent", "--node", NODE, "--kubeconfig",
                           str(plane.kubeconfig), "--gpus-from", str(work / "gpus.json"),
                           "--root", str(root), "--device-plugin-dir", str(PLUGINS)],
                          work / "agent.log"))

        def allocatable():
            node = kube.must("GET", f"/api/v1/nodes/{NODE}")
            value = node["status"].get("allocatable", {}).get("seedance.io/gpu-milli")
            return None if value in (None, "0") else value  # "0": kubelet's checkpoint only
        assert wait(allocatable, "kubelet to list the agent's devices", 60,
                    work / "agent.log") in ("8k", "8000")
        port = free_port()
        ext = Extender(seedancectl, plane, port, "bestfit", ["--token-file", str(token_file)])
        ext.start()
        scheduler, _ = start_scheduler(seedancectl, plane, port, scheduler_name="seedance",
                                       leader_elect=True)
        try:
            # Step 4, the pod as written but on the host's network (no CNI plugin here).
            assert "  restartPolicy: Never" in steps[5]
            sh(steps[5].replace("  restartPolicy: Never",
                                "  hostNetwork: true\n  restartPolicy: Never", 1))
            seen = []
            for name in ("half-gpu", "half-b"):
                if name != "half-gpu":
                    kube.must("POST", "/api/v1/namespaces/default/pods", env_pod(name))
                bound = wait_bound(kube, {name}, seconds=120)[name]
                gpu = int(bound["metadata"]["annotations"]["seedance.io/gpu-assignment"])

                def finished():
                    p = kube.must("GET", f"/api/v1/namespaces/default/pods/{name}")
                    return p if p["status"].get("phase") in ("Succeeded", "Failed") else None
                pod = wait(finished, f"{name} to run", 180, work / "kubelet.log")
                assert pod["status"]["phase"] == "Succeeded", pod["status"]
                # What `kubectl logs` shows (steps[6]), from kubelet's log of the container.
                env = dict(line.split("=", 1) for line in
                           container_output(pod, "main").splitlines() if "=" in line)
                assert env["NVIDIA_VISIBLE_DEVICES"] == gpus[gpu]["uuid"]
                assert env["CUDA_VISIBLE_DEVICES"] == gpus[gpu]["uuid"]
                assert env["SEEDANCE_GPU_MILLI"] == "500"
                assert env["SEEDANCE_GPU_ASSIGNMENT"] == str(gpu)
                if name == "half-b":
                    assert "version" in container_output(pod, "seedancectl")  # the image runs
                seen.append(gpu)
            assert seen[0] == seen[1]  # best fit: the halves share one GPU
        finally:
            scheduler.terminate()
            scheduler.wait(timeout=30)
            ext.kill()
        for name in ("half-gpu", "half-b"):
            kube.req("DELETE", f"/api/v1/namespaces/default/pods/{name}?gracePeriodSeconds=0")
        wait(lambda: not subprocess.run(["ctr", "-a", str(ctd_sock), "-n", "k8s.io", "tasks",
                                         "ls", "-q"], capture_output=True,
                                        text=True).stdout.strip(),
             "kubelet to stop the pods' containers", 120, work / "kubelet.log")
    finally:
        for p in reversed(procs):
            p.stop()
        # kubelet mounts its root directory onto itself (shared) and the pods' volumes in it.
        subprocess.run(["umount", "--recursive", "--lazy", str(work / "kubelet")],
                       capture_output=True)
        plane.stop()
        for sock in ("kubelet.sock", "seedance-gpu-milli.sock"):
            (PLUGINS / sock).unlink(missing_ok=True)
