"""`seedancectl scheduler serve` inside a real control plane: kube-apiserver and kube-scheduler
1.20.2 built from Debian 12's source package and Debian's etcd, on 127.0.0.1, started and
stopped by their PIDs (scripts/k8s-control-plane.sh). Nodes are Node objects (no kubelet), their
not-ready taint removed; pods are created and watched through the API.

Skipped when the binaries are not built (`scripts/k8s-control-plane.sh build`, about 12 minutes
on 2 cores, cached outside the repository)."""

from __future__ import annotations

import contextlib
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "sched"))
# The control plane, the API client and the processes are the replay benchmark's own.
from k8s_replay import (DATA, Api, Extender, Plane, Replay, free_port,  # noqa: E402
                        nudge, same_assignment, simulate, start_scheduler, wait_bound)


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
    if not Plane.built():
        pytest.skip("kube-apiserver and kube-scheduler 1.20.2 are not built "
                    "(scripts/k8s-control-plane.sh build: about 12 minutes on 2 cores)")
    p = Plane(tmp_path_factory.mktemp("plane"))
    p.start()
    yield p
    p.stop()


def test_real_kube_scheduler_binds_through_the_extender_and_survives_restarts(
        plane, seedancectl) -> None:
    api = Api(plane.dir)
    for i in range(3):
        api.add_node(f"node-{i}", 64000, 262144, 2, "V100")
    port = free_port()
    ext = Extender(seedancectl, plane, port, "bestfit")
    ext.start()
    scheduler, _ = start_scheduler(seedancectl, plane, port)
    try:
        names = set()
        for i in range(4):
            api.add_pod(f"half-{i}", 1000, 0, 1, 500)
            names.add(f"half-{i}")
        api.add_pod("pair", 1000, 0, 2, 1000)
        names.add("pair")
        bound = wait_bound(api, names)
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
            api.add_pod(f"after-{i}", 1000, 0, 1, 1000)
        bound = wait_bound(api, names | {"after-0", "after-1"})
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
                                str(plane.kubeconfig), "-o", "json"],
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
                                str(plane.kubeconfig), "-o", "json"],
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


def wait_event(api: Api, pod: str, text: str, seconds: float = 60) -> str:
    """The messages of the pod's events, once one of them contains `text` (or the time is up)."""
    deadline = time.time() + seconds
    message = ""
    while time.time() < deadline and text not in message:
        _, events = api.req("GET", "/api/v1/namespaces/default/events")
        message = " ".join(e.get("message", "") for e in events.get("items", [])
                           if e.get("involvedObject", {}).get("name") == pod)
        time.sleep(0.5)
    return message


def test_pods_wait_for_an_extender_that_is_down(plane, seedancectl) -> None:
    api = Api(plane.dir)
    api.add_node("node-spare", 64000, 262144, 1, "V100")
    port = free_port()
    scheduler, _ = start_scheduler(seedancectl, plane, port)  # the extender is not running yet
    ext = Extender(seedancectl, plane, port, "seedance")
    try:
        api.add_pod("waiting", 1000, 0, 1, 250)
        message = wait_event(api, "waiting", f"127.0.0.1:{port}")
        assert f"127.0.0.1:{port}" in message, message  # the event names the extender
        assert not any(p["spec"].get("nodeName") for p in api.pods()
                       if p["metadata"]["name"] == "waiting")
        ext.start()
        wait_bound(api, {"waiting"}, seconds=120)
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
        ext.kill()
        api.delete_pods()


class SlowProxy:
    """Forwards kube-scheduler's POSTs to the extender after `delay` seconds: an extender slower
    than httpTimeout, as a congested network or an overloaded extender would be."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.delay = delay
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(proxy.delay)
                req = urllib.request.Request(f"http://127.0.0.1:{target_port}{self.path}",
                                             data=body,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        code, answer = r.status, r.read()
                except OSError:
                    return  # kube-scheduler gave up and closed the connection
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_pods_wait_for_an_extender_slower_than_its_timeout(plane, seedancectl) -> None:
    """httpTimeout 1 s, the extender answering after 3 s: the pod stays Pending with an event
    naming the extender's URL; once the extender is quick again the pod is bound, once (the
    reservation the late filter made is the one the retry gets)."""
    api = Api(plane.dir)
    api.add_node("node-slow", 64000, 262144, 1, "V100")
    ext = Extender(seedancectl, plane, free_port(), "bestfit")
    ext.start()
    proxy = SlowProxy(ext.port, delay=3.0)
    scheduler, _ = start_scheduler(seedancectl, plane, proxy.port, ["--http-timeout", "1"])
    try:
        api.add_pod("slow", 1000, 0, 1, 700)
        message = wait_event(api, "slow", f"127.0.0.1:{proxy.port}")
        assert f"127.0.0.1:{proxy.port}" in message, message
        assert "Timeout" in message or "deadline" in message, message
        assert not [p for p in api.pods() if p["spec"].get("nodeName")]
        proxy.delay = 0
        nudge(api, "node-slow")  # or wait for kube-scheduler's one-minute flush
        bound = wait_bound(api, {"slow"}, seconds=120)
        assert bound["slow"]["metadata"]["annotations"]["seedance.io/gpu-assignment"] == "0"
        metrics = ext.metrics()
        assert "seedance_extender_gpu_milli_used 700" in metrics, metrics
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
        proxy.stop()
        ext.kill()
        api.delete_pods()
        api.req("DELETE", "/api/v1/nodes/node-slow")


def test_a_replay_matches_the_simulator_and_survives_sigkills(plane, seedancectl, tmp_path) -> None:
    """The FGD protocol on 40 nodes of the Alibaba list (the pod list trimmed to 130% of their
    GPUs: 290 arrivals) replayed through kube-scheduler with the extender deciding: every pod
    lands where the simulator put it (same seed, ties broken by the same shuffled names). Again
    with the extender SIGKILLed at 30% and 70% of the arrivals, a pod in flight: the same
    assignment, and the auditor finds no GPU over 1000 milli."""
    trace = DATA / "alibaba-gpu-2023"
    if not trace.is_dir():
        pytest.skip(f"no Alibaba trace under {DATA}")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("".join((trace / "openb_node_list_gpu_node.csv").read_text()
                             .splitlines(keepends=True)[:41]))
    pods = trace / "openb_pod_list_default.csv"
    placements = simulate(seedancectl, nodes, pods, ["seedance"], 42, "shuffled-names",
                          tmp_path / "placements.json")
    replay = Replay(seedancectl, plane, nodes, pods, placements, "shuffled-names")
    for n in replay.api.must("GET", "/api/v1/nodes")["items"]:  # the other tests' nodes
        replay.api.must("DELETE", f"/api/v1/nodes/{n['metadata']['name']}")
    replay.create_nodes()
    try:
        run = replay.run("seedance")
        row = replay.compare("seedance", run)
        assert row["arrivals"] > 250, row
        assert (row["other_node"], row["fit_differs"]) == (0, 0), row
        assert row["k8s_alloc_pct_at"] == row["sim_alloc_pct_at"], row
        assert run["audit_rc"] == 0, run["audit"]
        killed = replay.run("seedance", kill_at=[0.3, 0.7])
        assert same_assignment(killed["bound"], run["bound"]) == 0
        assert killed["audit_rc"] == 0, killed["audit"]
        assert json.loads(killed["audit"])["findings"] == []
    finally:
        for n in replay.node_rows:
            replay.api.req("DELETE", f"/api/v1/nodes/{n['sn']}")


@contextlib.contextmanager
def bestfit_extender(seedancectl, plane, api: Api, extra: list[str] | None = None):
    """The extender (best fit) and kube-scheduler pointed at it; both stopped, and the pods
    deleted, on the way out."""
    port = free_port()
    ext = Extender(seedancectl, plane, port, "bestfit", extra)
    ext.start()
    scheduler, _ = start_scheduler(seedancectl, plane, port)
    try:
        yield ext
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
        ext.kill()
        api.delete_pods()


def add_priority_classes(api: Api) -> dict[str, int]:
    """deploy/priority-classes.yaml, created for real (the tests share one API server)."""
    import yaml  # PyYAML, in the project's environment
    values = {}
    for doc in yaml.safe_load_all((REPO / "deploy" / "priority-classes.yaml").read_text()):
        code, body = api.req("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", doc)
        assert code in (201, 409), body  # 409: an earlier test made it
        values[doc["metadata"]["name"]] = doc["value"]
    return values


def tiered_pod(api: Api, name: str, tier: str, milli: int, node: str = "") -> None:
    qos = {"gold": "Guaranteed", "silver": "Burstable", "bronze": "BE"}[tier]
    spec = {"priorityClassName": f"seedance-{tier}", "terminationGracePeriodSeconds": 0}
    api.add_pod(name, 100, 0, 1, milli, annotations={"seedance.io/qos": qos}, spec=spec)


def recorded_preempts(path: pathlib.Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [e for e in lines if e["verb"] == "preempt"]


def test_tiers_as_priority_classes_engage_kube_schedulers_preemption(
        plane, seedancectl, tmp_path) -> None:
    """Tiers as PriorityClasses (deploy/priority-classes.yaml) through the real kube-scheduler:
    a gold pod on a full node evicts the bronze pod, not the silver one, and takes its GPU; the
    extender follows (the audit is clean). kube-scheduler 1.20.2 never calls the preempt verb
    (kubernetes/kubernetes#102971, fixed after 1.20.2), so where its summed dry run finds room
    without victims (half GPUs used on each of two GPUs: 1000 milli free in sum, no whole GPU)
    the whole-GPU pod stays Pending, nominated to the node, with the extender's reason in its
    events — the case docs/guide/kubernetes.md describes."""
    api = Api(plane.dir)
    add_priority_classes(api)
    api.add_node("tiered", 64000, 262144, 2, "V100")
    record = tmp_path / "exchanges.jsonl"
    with bestfit_extender(seedancectl, plane, api, ["--record", str(record)]):
        tiered_pod(api, "bronze", "bronze", 1000)
        tiered_pod(api, "silver", "silver", 1000)
        bound = wait_bound(api, {"bronze", "silver"})
        bronze_gpu = bound["bronze"]["metadata"]["annotations"]["seedance.io/gpu-assignment"]
        tiered_pod(api, "gold", "gold", 1000)
        bound = wait_bound(api, {"gold", "silver"}, seconds=120)
        assert bound["gold"]["spec"]["nodeName"] == "tiered"
        assert bound["gold"]["metadata"]["annotations"]["seedance.io/gpu-assignment"] == \
            bronze_gpu
        assert "bronze" not in {p["metadata"]["name"] for p in api.pods()}
        assert not recorded_preempts(record)  # 1.20.2 does not call the verb
        audit = subprocess.run([str(seedancectl), "scheduler", "audit", "--kubeconfig",
                                str(plane.kubeconfig), "-o", "json"],
                               capture_output=True, text=True, timeout=60)
        assert audit.returncode == 0, audit.stdout + audit.stderr
        api.delete_pods()
        # Per GPU against in sum: the halves sit on different GPUs (placed by hand).
        for name, gpu in (("half-a", 0), ("half-b", 1)):
            code, body = api.req("POST", "/api/v1/namespaces/default/pods", {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "annotations": {
                    "seedance.io/num-gpu": "1", "seedance.io/gpu-milli": "500",
                    "seedance.io/qos": "BE", "seedance.io/gpu-assignment": str(gpu)}},
                "spec": {"nodeName": "tiered", "priorityClassName": "seedance-bronze",
                         "terminationGracePeriodSeconds": 0,
                         "containers": [{"name": "c", "image": "none", "resources": {
                             "requests": {"seedance.io/gpu-milli": "500"},
                             "limits": {"seedance.io/gpu-milli": "500"}}}]}})
            assert code == 201, body
        tiered_pod(api, "whole", "gold", 1000)
        message = wait_event(api, "whole", "0 whole GPUs free")
        assert "0 whole GPUs free, the pod needs 1" in message, message
        pods = {p["metadata"]["name"]: p for p in api.pods()}
        assert {"half-a", "half-b", "whole"} <= set(pods)  # no victim was taken
        assert not pods["whole"]["spec"].get("nodeName")


def test_a_gang_is_bound_whole_by_the_real_scheduler(plane, seedancectl) -> None:
    """Three 1-GPU members on two 2-GPU nodes, created one by one: none is bound before the last
    exists, then all are; a gang of two when one GPU is left stays Pending with the reason in its
    events and holds no reservation."""
    api = Api(plane.dir)
    for i in range(2):  # a model of their own: the module's other nodes stay out of it
        api.add_node(f"gang-{i}", 64000, 262144, 2, "H100")
    with bestfit_extender(seedancectl, plane, api) as ext:
        gang = {"seedance.io/gang": "job", "seedance.io/gang-size": "3"}
        for i in range(2):
            api.add_pod(f"w-{i}", 100, 0, 1, 1000, "H100", annotations=gang)
        message = wait_event(api, "w-0", "members seen")
        assert "gang default/job" in message, message
        assert not any(p["spec"].get("nodeName") for p in api.pods())
        api.add_pod("w-2", 100, 0, 1, 1000, "H100", annotations=gang)
        bound = wait_bound(api, {"w-0", "w-1", "w-2"}, seconds=120)
        use = gpu_use(list(bound.values()))
        assert sorted(use.values()) == [1000] * 3, use
        big = {"seedance.io/gang": "big", "seedance.io/gang-size": "2"}
        for i in range(2):
            api.add_pod(f"b-{i}", 100, 0, 1, 1000, "H100", annotations=big)
        # The second member's cycle sees both (the first one's saw itself only).
        message = wait_event(api, "b-1", "do not all fit")
        assert "do not all fit" in message, message
        assert not any(p["spec"].get("nodeName") for p in api.pods()
                       if p["metadata"]["name"].startswith("b-"))
        assert "seedance_extender_reservations 0" in ext.metrics()


def test_manifests_pass_a_server_side_dry_run(plane, seedancectl) -> None:
    """deploy/: the API server validates every object (schema, RBAC names, the DaemonSets and
    Deployments) without storing it; each ConfigMap's configuration is what print-config writes."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed")
    deploy = REPO / "deploy"
    files = ["scheduler.yaml", "extender.yaml", "probe.yaml", "priority-classes.yaml",
             "node-agent.yaml"]
    for name in files:  # one at a time: the two layouts name some objects alike
        out = subprocess.run([kubectl, "--kubeconfig", str(plane.kubeconfig), "apply",
                              "--dry-run=server", "-f", str(deploy / name)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, name + ": " + out.stdout + out.stderr
        expected = {
            "scheduler.yaml": ["deployment.apps/seedance-scheduler", "service/seedance-extender",
                               "role.rbac.authorization.k8s.io/seedance-scheduler-lease",
                               "configmap/seedance-scheduler-config"],
            "extender.yaml": ["serviceaccount/seedance-extender",
                              "clusterrole.rbac.authorization.k8s.io/seedance-extender",
                              "daemonset.apps/seedance-extender",
                              "configmap/seedance-scheduler-config"],
            "probe.yaml": ["daemonset.apps/seedance-probe", "service/seedance-probe"],
            "priority-classes.yaml": ["priorityclass.scheduling.k8s.io/seedance-bronze"],
            "node-agent.yaml": ["daemonset.apps/seedance-node-agent",
                                "clusterrole.rbac.authorization.k8s.io/seedance-node-agent"],
        }[name]
        for kind in expected:
            assert kind in out.stdout, name + ": " + out.stdout
    for name, args in (("scheduler.yaml", []),
                       ("extender.yaml", ["--scheduler-name", "default-scheduler",
                                          "--kubeconfig", "/etc/kubernetes/scheduler.conf"])):
        config = subprocess.run([str(seedancectl), "scheduler", "print-config", "--extender-url",
                                 "http://127.0.0.1:8888", *args],
                                capture_output=True, text=True, check=True).stdout
        text = (deploy / name).read_text()
        embedded = text[text.index("scheduler-config.yaml: |\n")
                        + len("scheduler-config.yaml: |\n"):]
        assert "".join(line[4:] + "\n" for line in embedded.splitlines()) == config, name
