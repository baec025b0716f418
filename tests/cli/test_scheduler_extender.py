"""`seedancectl scheduler serve` inside a real control plane: kube-apiserver and kube-scheduler
1.20.2 built from Debian 12's source package and Debian's etcd, on 127.0.0.1, started and
stopped by their PIDs (scripts/k8s-control-plane.sh). Nodes are Node objects (no kubelet), their
not-ready taint removed; pods are created and watched through the API.

Skipped when the binaries are not built (`scripts/k8s-control-plane.sh build`, about 12 minutes
on 2 cores, cached outside the repository)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "k8s-control-plane.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    """The API server, through its token and CA (a plain HTTP client, as kubectl would be)."""

    def __init__(self, d: pathlib.Path) -> None:
        self.server = (d / "server").read_text().strip()
        self.token = (d / "tokens.csv").read_text().split(",")[0]
        self.ctx = ssl.create_default_context(cafile=str(d / "ca.crt"))

    def req(self, method: str, path: str, body=None, ctype: str = "application/json"):
        data = None if body is None else json.dumps(body).encode()
        r = urllib.request.Request(self.server + path, data=data, method=method,
                                   headers={"Authorization": "Bearer " + self.token,
                                            "Content-Type": ctype})
        try:
            with urllib.request.urlopen(r, context=self.ctx, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def add_node(self, name: str, gpus: int, model: str = "V100") -> None:
        res = {"cpu": "64", "memory": "256Gi", "pods": "110",
               "seedance.io/gpu-milli": str(1000 * gpus), "nvidia.com/gpu": str(gpus)}
        code, body = self.req("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"seedance.io/gpu-model": model}},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady", "message": "no kubelet"}]}})
        assert code == 201, body
        # The TaintNodesByCondition admission plugin marks a new node not-ready; no kubelet will.
        code, body = self.req("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": None}},
                              "application/merge-patch+json")
        assert code == 200, body

    def add_pod(self, name: str, num_gpu: int, milli: int) -> None:
        total = str(num_gpu * milli)
        code, body = self.req("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"seedance.io/num-gpu": str(num_gpu),
                                                       "seedance.io/gpu-milli": str(milli)}},
            "spec": {"containers": [{"name": "c", "image": "none", "resources": {
                "requests": {"cpu": "1", "seedance.io/gpu-milli": total},
                "limits": {"seedance.io/gpu-milli": total}}}]}})
        assert code == 201, body

    def delete_pods(self) -> None:
        code, body = self.req("DELETE", "/api/v1/namespaces/default/pods?gracePeriodSeconds=0")
        assert code == 200, body

    def pods(self) -> list[dict]:
        code, body = self.req("GET", "/api/v1/namespaces/default/pods")
        assert code == 200, body
        return body["items"]

    def wait_bound(self, names: set[str], seconds: float = 60) -> dict[str, dict]:
        deadline = time.time() + seconds
        while time.time() < deadline:
            bound = {p["metadata"]["name"]: p for p in self.pods() if p["spec"].get("nodeName")}
            if names <= set(bound):
                return bound
            time.sleep(0.2)
        pytest.fail(f"not bound within {seconds} s: {sorted(names - set(bound))}")


def gpu_use(pods: list[dict]) -> dict[tuple[str, int], int]:
    """Milli-GPU per (node, GPU) from the pods' assignment annotations."""
    use: dict[tuple[str, int], int] = {}
    for p in pods:
        a = p["metadata"].get("annotations", {})
        if not p["spec"].get("nodeName") or "seedance.io/gpu-assignment" not in a:
            continue
        gpus = [int(g) for g in a["seedance.io/gpu-assignment"].split(",")]
        assert len(gpus) == len(set(gpus)) == int(a["seedance.io/num-gpu"])
        for g in gpus:
            key = (p["spec"]["nodeName"], g)
            use[key] = use.get(key, 0) + int(a["seedance.io/gpu-milli"])
    return use


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    if subprocess.run(["bash", str(SCRIPT), "bin"], capture_output=True).returncode != 0:
        pytest.skip("kube-apiserver and kube-scheduler 1.20.2 are not built "
                    "(scripts/k8s-control-plane.sh build: about 12 minutes on 2 cores)")
    d = tmp_path_factory.mktemp("plane")
    started = subprocess.run(["bash", str(SCRIPT), "start", str(d)], capture_output=True,
                             text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    yield d
    subprocess.run(["bash", str(SCRIPT), "stop", str(d)], timeout=60)


class Extender:
    def __init__(self, seedancectl, plane: pathlib.Path, port: int, policy: str) -> None:
        self.args = [str(seedancectl), "scheduler", "serve", "--listen", f"127.0.0.1:{port}",
                     "--kubeconfig", str(plane / "kubeconfig"), "--policy", policy]
        self.log = plane / f"extender-{port}.log"
        self.port = port
        self.proc = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "a"))
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        pytest.fail("the extender did not come up: " + self.log.read_text())

    def kill(self, sig=signal.SIGTERM) -> None:
        if self.proc is not None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
            self.proc = None


def start_scheduler(plane: pathlib.Path, seedancectl, extender_port: int):
    config = subprocess.run([str(seedancectl), "scheduler", "print-config", "--extender-url",
                             f"http://127.0.0.1:{extender_port}", "--kubeconfig",
                             str(plane / "kubeconfig")], capture_output=True, text=True, check=True)
    # Keep kube-scheduler's own health and metrics ports on 127.0.0.1 and out of the way.
    text = config.stdout + (f"healthzBindAddress: 127.0.0.1:{free_port()}\n"
                            f"metricsBindAddress: 127.0.0.1:{free_port()}\n")
    path = plane / f"scheduler-{extender_port}.yaml"
    path.write_text(text)
    binary = subprocess.run(["bash", str(SCRIPT), "bin"], capture_output=True, text=True,
                            check=True).stdout.strip()
    return subprocess.Popen([f"{binary}/kube-scheduler", "--config", str(path)],
                            stdout=subprocess.DEVNULL,
                            stderr=open(plane / f"scheduler-{extender_port}.log", "w"))


def test_real_kube_scheduler_binds_through_the_extender_and_survives_restarts(
        plane, seedancectl) -> None:
    api = Api(plane)
    for i in range(3):
        api.add_node(f"node-{i}", gpus=2)
    port = free_port()
    ext = Extender(seedancectl, plane, port, "bestfit")
    ext.start()
    scheduler = start_scheduler(plane, seedancectl, port)
    try:
        names = set()
        for i in range(4):
            api.add_pod(f"half-{i}", 1, 500)
            names.add(f"half-{i}")
        api.add_pod("pair", 2, 1000)
        names.add("pair")
        bound = api.wait_bound(names)
        use = gpu_use(list(bound.values()))
        assert max(use.values()) <= 1000, use
        assert sum(use.values()) == 4 * 500 + 2000
        # Best fit packs the halves two to a GPU.
        assert sorted(v for v in use.values()) == [1000, 1000, 1000, 1000]
        # SIGKILL the extender and start it again: it rebuilds from the pods' annotations, so
        # new pods never land on a GPU already taken.
        ext.kill(signal.SIGKILL)
        ext.start()
        for i in range(2):
            api.add_pod(f"after-{i}", 1, 1000)
        bound = api.wait_bound(names | {"after-0", "after-1"})
        use = gpu_use(list(bound.values()))
        assert max(use.values()) <= 1000, use
        assert sum(use.values()) == 6000
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics") as r:
            metrics = r.read().decode()
        assert "seedance_extender_gpu_milli_used 6000" in metrics
        assert 'seedance_extender_requests_total{verb="bind",code="200"} 2' in metrics
        # The auditor, from the API server alone: clean; then a pod placed by hand on a GPU
        # already full is reported and the command exits 1.
        audit = subprocess.run([str(seedancectl), "scheduler", "audit", "--kubeconfig",
                                str(plane / "kubeconfig"), "-o", "json"],
                               capture_output=True, text=True, timeout=60)
        assert audit.returncode == 0, audit.stdout + audit.stderr
        report = json.loads(audit.stdout)
        assert report["gpus_in_use"] == 6 and report["gpu_milli_in_use"] == 6000
        assert report["findings"] == []
        node, gpu = next(iter(use))
        code, body = api.req("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "by-hand", "annotations": {
                "seedance.io/num-gpu": "1", "seedance.io/gpu-milli": "300",
                "seedance.io/gpu-assignment": str(gpu)}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "none",
                     "resources": {"requests": {"seedance.io/gpu-milli": "300"},
                                   "limits": {"seedance.io/gpu-milli": "300"}}}]}})
        assert code == 201, body
        audit = subprocess.run([str(seedancectl), "scheduler", "audit", "--kubeconfig",
                                str(plane / "kubeconfig"), "-o", "json"],
                               capture_output=True, text=True, timeout=60)
        assert audit.returncode == 1, audit.stdout + audit.stderr
        findings = json.loads(audit.stdout)["findings"]
        assert [(f["kind"], f["node"], f["gpu"]) for f in findings] == [("over", node, gpu)]
        assert "1300 milli-GPU" in findings[0]["detail"]
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
        ext.kill()
        api.delete_pods()


def test_pods_wait_for_an_extender_that_is_down(plane, seedancectl) -> None:
    api = Api(plane)
    api.add_node("node-spare", gpus=1)
    port = free_port()
    scheduler = start_scheduler(plane, seedancectl, port)  # the extender is not running yet
    ext = Extender(seedancectl, plane, port, "seedance")
    try:
        api.add_pod("waiting", 1, 250)
        deadline = time.time() + 60
        message = ""
        while time.time() < deadline and f"127.0.0.1:{port}" not in message:
            code, events = api.req("GET", "/api/v1/namespaces/default/events")
            message = " ".join(e.get("message", "") for e in events.get("items", [])
                               if e.get("involvedObject", {}).get("name") == "waiting")
            time.sleep(0.5)
        assert f"127.0.0.1:{port}" in message, message  # the event names the extender
        assert not any(p["spec"].get("nodeName") for p in api.pods()
                       if p["metadata"]["name"] == "waiting")
        ext.start()
        api.wait_bound({"waiting"}, seconds=120)
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
        ext.kill()
        api.delete_pods()


def test_manifests_pass_a_server_side_dry_run(plane, seedancectl) -> None:
    """deploy/: the API server validates every object (schema, RBAC names, the DaemonSet) without
    storing it; the ConfigMap's configuration is what print-config writes."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed")
    deploy = REPO / "deploy"
    out = subprocess.run([kubectl, "--kubeconfig", str(plane / "kubeconfig"), "apply",
                          "--dry-run=server", "-f", str(deploy / "extender.yaml"),
                          "-f", str(deploy / "probe.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    for kind in ["serviceaccount/seedance-extender", "clusterrole.rbac.authorization.k8s.io/"
                 "seedance-extender", "deployment.apps/seedance-extender",
                 "configmap/seedance-scheduler-config", "daemonset.apps/seedance-probe",
                 "service/seedance-probe"]:
        assert kind in out.stdout, out.stdout
    config = subprocess.run([str(seedancectl), "scheduler", "print-config", "--extender-url",
                             "http://seedance-extender.kube-system.svc:8888"],
                            capture_output=True, text=True, check=True).stdout
    text = (deploy / "extender.yaml").read_text()
    embedded = text[text.index("scheduler-config.yaml: |\n") + len("scheduler-config.yaml: |\n"):]
    assert "".join(line[4:] + "\n" for line in embedded.splitlines()) == config
