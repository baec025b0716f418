#!/usr/bin/env python3
"""The FGD protocol replayed through a real control plane (issue 22; docs/guide/kubernetes.md).

`seedancectl simulate --placements` records the simulator's arrivals (the shuffled, topped-up pod
order of one seed) and each policy's decisions. This replays the same arrivals on kube-apiserver +
kube-scheduler 1.20.2 (scripts/k8s-control-plane.sh) with `seedancectl scheduler serve` as the
extender: one Node object per node of the list (no kubelet), one Pod per arrival, created in order;
kube-scheduler's queue keeps that order (priority, then arrival; pods go in only once kube-scheduler
has bound a warm-up pod, as pods created while it syncs its caches can be taken out of order).
With no departures a pod that fits nowhere never fits later, so each pod's final state is its
decision at arrival; a pod found unschedulable is deleted, as the simulator drops it (left in
place kube-scheduler would retry each one every minute). The allocation ratio at every arrived mark is computed from the final bindings exactly as the simulator
computes it. Reported per policy: the marks beside the simulator's, the largest gap, how many pods
landed on a different node (or fit in one run and not the other), pods/s end to end, and the
extender's filter latency (p50/p99 from its histogram, interpolated as Prometheus'
histogram_quantile does).

`--kill-at 0.3,0.7` also replays with the extender SIGKILLed and restarted at those shares of the
arrivals: the pods before settle, the next one is created and 5 ms later, while kube-scheduler
works on it (filter, reservation or bind), the extender is SIGKILLed and started again (it
rebuilds from the pods' annotations); creation resumes once that pod is placed. The final
assignment is compared with the uninterrupted run's, and `seedancectl scheduler audit` must find
no GPU over 1000 milli. (One pod in flight, not a backlog: kube-scheduler 1.20 puts the pods an
extender error hit into its unschedulable queue and later flushes that queue in map order, so a
backlog comes back out of arrival order and the policy sees a different sequence.)

    .venv/bin/python bench/sched/k8s_replay.py --policies fgd,bestfit,seedance --kill-at 0.3,0.7

Needs the binaries built (scripts/k8s-control-plane.sh build). The tests import this module
(tests/cli/test_scheduler_extender.py).
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import math
import os
import pathlib
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "k8s-control-plane.sh"
DATA = pathlib.Path(os.environ.get("SEEDANCE_DATA_DIR", REPO.parent / "shared" / "data"))
NAMESPACE = "default"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    """The API server through the plane's token and CA, on one keep-alive connection (a plain
    HTTP client, as kubectl would be)."""

    def __init__(self, plane: pathlib.Path) -> None:
        server = urllib.parse.urlsplit((plane / "server").read_text().strip())
        self.host, self.port = server.hostname, server.port
        self.token = (plane / "tokens.csv").read_text().split(",")[0]
        self.ctx = ssl.create_default_context(cafile=str(plane / "ca.crt"))
        self.conn: http.client.HTTPSConnection | None = None

    def req(self, method: str, path: str, body=None, ctype: str = "application/json"):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": ctype}
        for attempt in range(2):  # once more on a connection the server closed
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                        timeout=120)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                payload = resp.read()
                return resp.status, json.loads(payload or b"{}")
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def must(self, method: str, path: str, body=None, ctype: str = "application/json",
             ok=(200, 201)):
        code, out = self.req(method, path, body, ctype)
        if code not in ok:
            raise RuntimeError(f"{method} {path}: HTTP {code}: {out}")
        return out

    def add_node(self, name: str, cpu_milli: int, memory_mib: int, gpus: int, model: str) -> None:
        res = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mib}Mi", "pods": "1000",
               "seedance.io/gpu-milli": str(1000 * gpus), "nvidia.com/gpu": str(gpus)}
        labels = {"seedance.io/gpu-model": model} if model else {}
        self.must("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady", "message": "no kubelet"}]}})
        # The TaintNodesByCondition admission plugin marks a new node not-ready; no kubelet will
        # clear it.
        self.must("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": None}},
                  "application/merge-patch+json")

    def add_pod(self, name: str, cpu_milli: int, memory_mib: int, num_gpu: int, milli: int,
                gpu_spec: str = "", annotations: dict | None = None,
                spec: dict | None = None) -> None:
        notes = {"seedance.io/num-gpu": str(num_gpu), "seedance.io/gpu-milli": str(milli)} \
            if num_gpu > 0 else {}
        if gpu_spec:
            notes["seedance.io/gpu-spec"] = gpu_spec
        notes.update(annotations or {})
        requests = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mib}Mi"}
        limits = {}
        if num_gpu > 0:
            requests["seedance.io/gpu-milli"] = limits["seedance.io/gpu-milli"] = \
                str(num_gpu * milli)
        self.must("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": notes},
            "spec": {"containers": [{"name": "c", "image": "none", "resources": {
                "requests": requests, "limits": limits}}], **(spec or {})}})

    def pods(self, selector: str = "") -> list[dict]:
        path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        if selector:
            path += "?fieldSelector=" + urllib.parse.quote(selector)
        return self.must("GET", path)["items"]

    def delete_pods(self, seconds: float = 600) -> None:
        """Deletes every pod of the namespace (a collection of ten thousand can outlast the API
        server's request timeout or etcd's deadline, 504 or 500: the call is repeated until none
        is left)."""
        deadline = time.time() + seconds
        while True:
            self.must("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods?gracePeriodSeconds=0",
                      ok=(200, 500, 504))
            if not self.pods():
                return
            if time.time() > deadline:
                raise TimeoutError(f"pods left after {seconds} s")
            time.sleep(0.5)


def unschedulable(pod: dict) -> bool:
    """kube-scheduler found no node for it: a FitError, "0/N nodes are available: ...". Not an
    error on the way (the extender down, a timeout), which 1.20 also reports with the reason
    Unschedulable but which a retry can cure."""
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               and c.get("reason") == "Unschedulable"
               and re.match(r"0/\d+ nodes are available", c.get("message", ""))
               for c in pod.get("status", {}).get("conditions") or [])


def wait_bound(api: Api, names: set[str], seconds: float = 60) -> dict[str, dict]:
    """Until every pod of `names` is bound; the bound pods by name."""
    deadline = time.time() + seconds
    while True:
        bound = {p["metadata"]["name"]: p for p in api.pods() if p["spec"].get("nodeName")}
        if names <= set(bound):
            return bound
        if time.time() > deadline:
            raise TimeoutError(f"not bound within {seconds} s: {sorted(names - set(bound))}")
        time.sleep(0.2)


def wait_resolved(api: Api, names: set[str], seconds: float) -> None:
    """Until every pod of `names` is bound, unschedulable or deleted."""
    deadline = time.time() + seconds
    while True:
        waiting = [p["metadata"]["name"] for p in api.pods("spec.nodeName=")
                   if p["metadata"]["name"] in names and not unschedulable(p)]
        if not waiting:
            return
        if time.time() > deadline:
            raise TimeoutError(f"{len(waiting)} pods neither bound nor unschedulable after "
                               f"{seconds} s, e.g. {sorted(waiting)[:5]}")
        time.sleep(0.5)


class Reaper(threading.Thread):
    """Deletes the pods kube-scheduler found unschedulable, as the simulator drops them, and
    records their names. Left in place, each would be tried again every minute (kube-scheduler
    1.20 flushes its unschedulable queue so), taking cycles from the arrivals behind it; with no
    departures it can never fit."""

    def __init__(self, plane: pathlib.Path) -> None:
        super().__init__(daemon=True)
        self.api = Api(plane)
        self.reaped: set[str] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for p in self.api.pods("spec.nodeName="):
                if unschedulable(p):
                    name = p["metadata"]["name"]
                    self.api.req("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"
                                 "?gracePeriodSeconds=0")
                    with self.lock:
                        self.reaped.add(name)
            self.done.wait(0.5)

    def names(self) -> set[str]:
        with self.lock:
            return set(self.reaped)

    def stop(self) -> None:
        self.done.set()
        self.join()


class Plane:
    """etcd + kube-apiserver started by the script, stopped by their PIDs."""

    def __init__(self, d: pathlib.Path) -> None:
        self.dir = d

    @staticmethod
    def built() -> bool:
        return subprocess.run(["bash", str(SCRIPT), "bin"], capture_output=True).returncode == 0

    @staticmethod
    def bin_dir() -> str:
        return subprocess.run(["bash", str(SCRIPT), "bin"], capture_output=True, text=True,
                              check=True).stdout.strip()

    def start(self) -> None:
        out = subprocess.run(["bash", str(SCRIPT), "start", str(self.dir)], capture_output=True,
                             text=True, timeout=180)
        if out.returncode != 0:
            raise RuntimeError("the control plane did not start: " + out.stderr)

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "stop", str(self.dir)], timeout=60)

    @property
    def kubeconfig(self) -> pathlib.Path:
        return self.dir / "kubeconfig"


class Extender:
    """`seedancectl scheduler serve`, started and stopped (or SIGKILLed) by its PID."""

    def __init__(self, seedancectl, plane: Plane, port: int, policy: str,
                 extra: list[str] | None = None) -> None:
        self.args = [str(seedancectl), "scheduler", "serve", "--listen", f"127.0.0.1:{port}",
                     "--kubeconfig", str(plane.kubeconfig), "--policy", policy] + (extra or [])
        self.log = plane.dir / f"extender-{port}.log"
        self.port = port
        self.proc: subprocess.Popen | None = None

    def start(self, seconds: float = 60) -> None:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "a"))
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the extender did not come up: " + self.log.read_text()[-2000:])

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as r:
            return r.read().decode()

    def kill(self, sig=signal.SIGTERM) -> None:
        if self.proc is not None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)
            self.proc = None


def start_scheduler(seedancectl, plane: Plane, extender_port: int,
                    extra: list[str] | None = None, qps: int = 0,
                    scheduler_name: str = "default-scheduler",
                    leader_elect: bool = False) -> tuple[subprocess.Popen, str]:
    """kube-scheduler with print-config's configuration, its own ports on 127.0.0.1; `qps`
    raises its API client's rate limit (1.20's default: 50 per second, bursts of 100). Returns
    the process and its /metrics URL."""
    # kube-scheduler 1.20.2 reads v1beta1; by default it replaces the default scheduler here,
    # one replica without a Lease.
    config = subprocess.run([str(seedancectl), "scheduler", "print-config", "--extender-url",
                             f"http://127.0.0.1:{extender_port}", "--kubeconfig",
                             str(plane.kubeconfig), "--v1beta1", "--scheduler-name",
                             scheduler_name] + ([] if leader_elect else ["--no-leader-elect"])
                            + (extra or []),
                            capture_output=True, text=True, check=True)
    text = config.stdout
    if qps:
        text = text.replace("clientConnection:\n",
                            f"clientConnection:\n  qps: {qps}\n  burst: {2 * qps}\n", 1)
    metrics_port = free_port()
    text += (f"healthzBindAddress: 127.0.0.1:{free_port()}\n"
             f"metricsBindAddress: 127.0.0.1:{metrics_port}\n")
    path = plane.dir / f"scheduler-{extender_port}.yaml"
    path.write_text(text)
    proc = subprocess.Popen([f"{Plane.bin_dir()}/kube-scheduler", "--config", str(path)],
                            stdout=subprocess.DEVNULL,
                            stderr=open(plane.dir / f"scheduler-{extender_port}.log", "w"))
    return proc, f"http://127.0.0.1:{metrics_port}/metrics"


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def wait_scheduling(api: Api, seconds: float = 120) -> None:
    """Until kube-scheduler binds pods: a pod requesting nothing, bound and then deleted. Pods
    created while kube-scheduler is still syncing its caches can be taken out of order."""
    api.add_pod("warm-up", 0, 0, 0, 0)
    deadline = time.time() + seconds
    while not any(p["spec"].get("nodeName") for p in api.pods("metadata.name=warm-up")):
        if time.time() > deadline:
            raise TimeoutError(f"kube-scheduler bound nothing within {seconds} s")
        time.sleep(0.2)
    api.must("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/warm-up?gracePeriodSeconds=0")
    while api.pods("metadata.name=warm-up"):
        time.sleep(0.1)


def nudge(api: Api, node: str) -> None:
    """A node label change, which makes kube-scheduler 1.20 move the pods in its unschedulable
    queue back to be tried (a pod an extender error hit waits there for up to a minute
    otherwise)."""
    api.must("PATCH", f"/api/v1/nodes/{node}",
             {"metadata": {"labels": {"seedance.io/replay-nudge": str(time.time_ns())}}},
             "application/merge-patch+json")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def read_csv(path: pathlib.Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def samples(metrics: str, name: str, want: dict[str, str]):
    """(labels, value) of each sample of `name` whose labels include `want` (text format)."""
    label = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    for line in metrics.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        rest = line[len(name):]
        labels = {}
        if rest.startswith("{"):
            body, rest = rest[1:].split("}", 1)
            labels = dict(label.findall(body))
        elif not rest.startswith(" "):
            continue  # a longer name
        if all(labels.get(k) == v for k, v in want.items()):
            yield labels, float(rest.split()[0])


def histogram_quantile(q: float, metrics: str, family: str, want: dict[str, str]) -> float:
    """Prometheus' histogram_quantile on one series of a text exposition: the bucket where the
    rank falls, linear within it (the lowest bucket from 0); the highest finite bound if the
    rank falls in +Inf."""
    buckets = sorted((math.inf if lb["le"] == "+Inf" else float(lb["le"]), v)
                     for lb, v in samples(metrics, family + "_bucket", want))
    if not buckets or buckets[-1][1] == 0:
        return math.nan
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / max(count - below, 1e-12)
        lower, below = bound, count
    return lower


def mean_of(metrics: str, family: str, want: dict[str, str]) -> float:
    """A histogram's sum / count."""
    total = sum(v for _, v in samples(metrics, family + "_sum", want))
    count = sum(v for _, v in samples(metrics, family + "_count", want))
    return total / count if count else math.nan


def marks_of(capacity: int, demands: list[int], placed: list[bool]) -> list[float]:
    """The allocation ratio (%) at arrived = 50, 60, ..., 130 % of capacity: as the simulator
    records it, the ratio before the first pod whose arrival passes the mark."""
    out, used, arrived, k = [], 0, 0, 0
    for demand, ok in zip(demands, placed):
        after = arrived + demand
        while k < 9 and after * 100 / capacity > 50 + 10 * k:
            out.append(used * 100 / capacity)
            k += 1
        arrived = after
        if ok:
            used += demand
    while k < 9:
        out.append(used * 100 / capacity)
        k += 1
    return out


def simulate(seedancectl, nodes_csv, pods_csv, policies, seed, ties, out: pathlib.Path) -> dict:
    subprocess.run([str(seedancectl), "simulate", "--nodes", str(nodes_csv), "--pods",
                    str(pods_csv), "--policy", ",".join(policies), "--seeds", "1", "--ties", ties,
                    "--placements", str(out), "-o", "json"],
                   capture_output=True, text=True, check=True)
    return json.loads(out.read_text())


class Replay:
    """One control plane holding the node list; replays run one after another on it."""

    def __init__(self, seedancectl, plane: Plane, nodes_csv, pods_csv, placements: dict,
                 ties: str, log=print, qps: int = 0) -> None:
        self.ctl, self.plane, self.log, self.qps = seedancectl, plane, log, qps
        self.kill_delay_s = 0.005  # from creating the pod in flight to the SIGKILL
        self.pods_csv = pods_csv
        self.placements = placements
        self.ties, self.seed = ties, placements["seed"]
        self.api = Api(plane.dir)
        self.node_rows = read_csv(nodes_csv)
        self.pod_rows = {r["name"]: r for r in read_csv(pods_csv)}

    def create_nodes(self) -> None:
        for r in self.node_rows:
            self.api.add_node(r["sn"], int(r["cpu_milli"]), int(r["memory_mib"]), int(r["gpu"]),
                              r["model"])

    def run(self, policy: str, kill_at: list[float] = (), resolve_s: float = 1800) -> dict:
        """Replays every arrival with `policy`; returns the pods' final nodes and GPUs, the
        marks and the timings. The pods are deleted afterwards."""
        arrivals = next(p for p in self.placements["policies"] if p["policy"] == policy)
        arrivals = arrivals["arrivals"]
        names = self.placements["pods"]
        port = free_port()
        ext = Extender(self.ctl, self.plane, port, policy,
                       ["--workload", str(self.pods_csv), "--ties", self.ties,
                        "--seed", str(self.seed)])
        ext.start()
        sched, sched_metrics = start_scheduler(self.ctl, self.plane, port, ["--all-pods"],
                                               qps=self.qps)
        wait_scheduling(self.api)
        kills = sorted({max(1, min(len(arrivals) - 1, int(f * len(arrivals)))) for f in kill_at})
        created: set[str] = set()
        reaper = Reaper(self.plane.dir)
        reaper.start()
        try:
            t0 = time.time()
            for i, (pod, _, _) in enumerate(arrivals):
                kill = bool(kills) and i == kills[0]
                if kill:  # the pods before it settle; it alone is in flight when the kill lands
                    kills.pop(0)
                    wait_resolved(self.api, created, resolve_s)
                row = self.pod_rows[names[pod]]
                name = f"a-{i:05d}"
                self.api.add_pod(name, int(row["cpu_milli"]), int(row["memory_mib"]),
                                 int(row["num_gpu"]), int(row["gpu_milli"]), row["gpu_spec"])
                created.add(name)
                if kill:
                    time.sleep(self.kill_delay_s)
                    ext.kill(signal.SIGKILL)
                    ext.start()
                    nudge(self.api, self.node_rows[0]["sn"])
                    wait_resolved(self.api, created, resolve_s)
                    self.log(f"  {policy}: extender SIGKILLed and restarted at arrival {i}")
            t_created = time.time() - t0
            wait_resolved(self.api, created, resolve_s)
            elapsed = time.time() - t0
            metrics = ext.metrics()
            kube_metrics = scrape(sched_metrics)
            bound = {}
            for p in self.api.pods():
                node = p["spec"].get("nodeName")
                if node:
                    a = p["metadata"].get("annotations", {}).get("seedance.io/gpu-assignment", "")
                    gpus = [int(g) for g in a.split(",")] if a else []
                    bound[p["metadata"]["name"]] = (node, gpus)
            audit = subprocess.run([str(self.ctl), "scheduler", "audit", "--kubeconfig",
                                    str(self.plane.kubeconfig), "-o", "json"],
                                   capture_output=True, text=True, timeout=300)
        finally:
            reaper.stop()
            stop(sched)
            ext.kill()
        self.api.delete_pods()
        return {"bound": bound, "created_s": t_created, "elapsed_s": elapsed,
                "filter_p50_s": histogram_quantile(0.5, metrics, "seedance_extender_request_seconds",
                                                   {"verb": "filter"}),
                "filter_p99_s": histogram_quantile(0.99, metrics,
                                                   "seedance_extender_request_seconds",
                                                   {"verb": "filter"}),
                "e2e_p50_s": histogram_quantile(0.5, kube_metrics,
                                                "scheduler_e2e_scheduling_duration_seconds",
                                                {"result": "scheduled"}),
                "e2e_p99_s": histogram_quantile(0.99, kube_metrics,
                                                "scheduler_e2e_scheduling_duration_seconds",
                                                {"result": "scheduled"}),
                "bind_mean_s": mean_of(metrics, "seedance_extender_request_seconds",
                                       {"verb": "bind"}),
                "unschedulable": len(reaper.names()),
                "audit_rc": audit.returncode, "audit": audit.stdout}

    def compare(self, policy: str, run: dict) -> dict:
        """The replay beside the simulator's decisions of the same arrivals."""
        sim = next(p for p in self.placements["policies"] if p["policy"] == policy)
        nodes, names = self.placements["nodes"], self.placements["pods"]
        demands, placed, moved, fit_differs = [], [], 0, 0
        for i, (pod, node, _) in enumerate(sim["arrivals"]):
            row = self.pod_rows[names[pod]]
            demands.append(int(row["num_gpu"]) * int(row["gpu_milli"]))
            got = run["bound"].get(f"a-{i:05d}")
            placed.append(got is not None)
            if (got is None) != (node < 0):
                fit_differs += 1
            elif got is not None and got[0] != nodes[node]:
                moved += 1
        capacity = self.placements["capacity_gpu_milli"]
        k8s = marks_of(capacity, demands, placed)
        sim_marks = sim["alloc_pct_at"]
        bound = sum(placed)
        return {"policy": policy, "arrivals": len(placed), "bound": bound,
                "sim_alloc_pct_at": [round(x, 2) for x in sim_marks],
                "k8s_alloc_pct_at": [round(x, 2) for x in k8s],
                "max_gap_points": round(max(abs(a - b) for a, b in zip(k8s, sim_marks)), 3),
                "other_node": moved, "fit_differs": fit_differs,
                "pods_per_s": round(len(placed) / run["elapsed_s"], 1),
                "bound_per_s": round(bound / run["elapsed_s"], 1),
                "elapsed_s": round(run["elapsed_s"], 1), "created_s": round(run["created_s"], 1),
                "unschedulable_deleted": run["unschedulable"],
                "filter_p50_ms": round(run["filter_p50_s"] * 1e3, 2),
                "filter_p99_ms": round(run["filter_p99_s"] * 1e3, 2),
                "bind_mean_ms": round(run["bind_mean_s"] * 1e3, 2),
                "kube_e2e_p50_ms": round(run["e2e_p50_s"] * 1e3, 1),
                "kube_e2e_p99_ms": round(run["e2e_p99_s"] * 1e3, 1),
                "audit_rc": run["audit_rc"]}


def same_assignment(a: dict, b: dict) -> int:
    """How many pods differ (node or GPUs, or bound in one run only)."""
    return sum(1 for name in set(a) | set(b) if a.get(name) != b.get(name))


# The recorded session's cluster and pods (tests/fixtures/kube-1.20.2/): name, CPU milli,
# memory MiB, GPUs, model for the nodes; name, CPU milli, memory MiB, GPUs, milli-GPU each,
# allowed models for the pods, created one at a time in this order. The last fits kube-scheduler's
# own check (milli-GPU summed over the node) only on the T4 node, which the extender refuses it.
SESSION_NODES = [("n-0", 32000, 131072, 2, "V100"), ("n-1", 32000, 131072, 2, "V100"),
                 ("n-2", 64000, 262144, 4, "T4"), ("n-3", 16000, 65536, 0, "")]
SESSION_PODS = [("half-0", 1000, 2048, 1, 500, ""), ("half-1", 1000, 2048, 1, 500, ""),
                ("half-2", 1000, 2048, 1, 500, ""), ("pair", 4000, 8192, 2, 1000, ""),
                ("t4-only", 2000, 4096, 1, 1000, "T4"),
                ("third", 1000, 2048, 1, 300, ""), ("v100-share", 1000, 2048, 1, 600, "V100")]


def record_session(seedancectl, plane: Plane, out: pathlib.Path, mode: str,
                   policy: str = "bestfit") -> None:
    """Records kube-scheduler 1.20.2 talking to the extender (`serve --record`) on a small
    cluster, with print-config's configuration (only GPU pods reach the extender; the warm-up pod
    does not): writes out/nodes.json (the nodes as the API server lists them) and
    out/MODE.jsonl (every exchange, requests exactly as kube-scheduler sent them). The fake
    kube-scheduler tests replay these against a fresh extender."""
    api = Api(plane.dir)
    out.mkdir(parents=True, exist_ok=True)
    if not api.pods() and not api.must("GET", "/api/v1/nodes")["items"]:
        for n in SESSION_NODES:
            api.add_node(*n)
    nodes = api.must("GET", "/api/v1/nodes")["items"]
    (out / "nodes.json").write_text(json.dumps({"items": nodes}, indent=1, sort_keys=True) + "\n")
    record = out / f"{mode}.jsonl"
    record.unlink(missing_ok=True)
    port = free_port()
    ext = Extender(seedancectl, plane, port, policy, ["--mode", mode, "--record", str(record)])
    ext.start()
    sched, _ = start_scheduler(seedancectl, plane, port)
    try:
        wait_scheduling(api)
        for name, cpu, mem, gpus, milli, spec in SESSION_PODS:
            api.add_pod(name, cpu, mem, gpus, milli, spec)
            wait_resolved(api, {name}, 60)
    finally:
        stop(sched)
        ext.kill()
        api.delete_pods()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seedancectl", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--nodes", default=str(DATA / "alibaba-gpu-2023" / "openb_node_list_gpu_node.csv"))
    ap.add_argument("--pods", default=str(DATA / "alibaba-gpu-2023" / "openb_pod_list_default.csv"))
    ap.add_argument("--policies", default="fgd,bestfit,seedance")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--ties", default="shuffled-names", choices=["name", "shuffled-names"])
    ap.add_argument("--kill-at", default="", help="shares of the arrivals, e.g. 0.3,0.7")
    ap.add_argument("--kill-policy", default="", help="the policy of the kill run (default: first)")
    ap.add_argument("--kube-qps", type=int, default=0,
                    help="kube-scheduler's API rate limit (default: its own, 50/s)")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--record-session", metavar="DIR",
                    help="instead: record kube-scheduler's exchanges with the extender on a small "
                         "cluster (decide and cooperative) into DIR, for the fake-scheduler tests")
    args = ap.parse_args()
    if args.record_session:
        if not Plane.built():
            print("not built: scripts/k8s-control-plane.sh build", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix="seedance-record-") as tmp:
            plane = Plane(pathlib.Path(tmp) / "plane")
            plane.start()
            try:
                for mode in ("decide", "cooperative"):
                    record_session(args.seedancectl, plane, pathlib.Path(args.record_session), mode)
            finally:
                plane.stop()
        return 0
    if not Plane.built():
        print("kube-apiserver and kube-scheduler are not built: scripts/k8s-control-plane.sh build",
              file=sys.stderr)
        return 2
    policies = args.policies.split(",")
    with tempfile.TemporaryDirectory(prefix="seedance-replay-") as tmp:
        tmp = pathlib.Path(tmp)
        placements = simulate(args.seedancectl, args.nodes, args.pods, policies, args.seed,
                              args.ties, tmp / "placements.json")
        plane = Plane(tmp / "plane")
        plane.start()
        try:
            replay = Replay(args.seedancectl, plane, args.nodes, args.pods, placements, args.ties,
                            log=lambda s: print(s, file=sys.stderr, flush=True),
                            qps=args.kube_qps)
            t = time.time()
            replay.create_nodes()
            print(f"{len(replay.node_rows)} nodes created in {time.time() - t:.1f} s",
                  file=sys.stderr, flush=True)
            rows, runs = [], {}
            for policy in policies:
                runs[policy] = replay.run(policy)
                rows.append(replay.compare(policy, runs[policy]))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            result = {"nodes": args.nodes, "pods": args.pods, "seed": args.seed,
                      "ties": args.ties, "policies": rows}
            if args.kill_at:
                policy = args.kill_policy or policies[0]
                shares = [float(x) for x in args.kill_at.split(",")]
                killed = replay.run(policy, kill_at=shares)
                row = replay.compare(policy, killed)
                row["kill_at"] = shares
                row["differs_from_uninterrupted"] = same_assignment(killed["bound"],
                                                                    runs[policy]["bound"]) \
                    if policy in runs else None
                result["killed"] = row
                print(json.dumps(row), file=sys.stderr, flush=True)
        finally:
            plane.stop()
    text = json.dumps(result, indent=1)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
