"""`seedancectl node agent`, kubelet's device plugin for seedance.io/gpu-milli (issue 44), driven
by a kubelet stand-in that speaks kubelet's own protobuf API (tests/fixtures/fake_kubelet.py:
stubs generated from api.proto in the Kubernetes 1.20.2 source) against the fake API server
(tests/fixtures/fake_kube.py), on a fake 8-GPU node (tests/fixtures/fake_node.py) whose GPUs
come from a fixture in the probe's format. Every process is started here and stopped by its PID.

What is checked, and against what:
- the agent's API file against kubelet's, message by message and field by field;
- registration, the device list (1,000 devices a GPU, NUMA node from `topo show`), the Node's
  labels (against `topo show`'s discovery);
- Allocate: the assigned GPU's UUID in the environment, oldest pending pod first, the IDs steered
  onto the assigned GPU by GetPreferredAllocation, refusals with their reasons, concurrent
  allocations taking distinct pods, an agent killed and restarted answering kubelet's retry the
  same and losing nothing, a kubelet restart answered by a new registration;
- health: a critical XID or new uncorrected ECC errors mark the GPU's devices Unhealthy and the
  Node's seedance.io/unhealthy-gpus; an application XID does not.
"""

from __future__ import annotations

import fcntl
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

grpc = pytest.importorskip("grpc")

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from fake_kube import FakeApiServer  # noqa: E402
from fake_kubelet import FakeKubelet, kubelet_api  # noqa: E402

NODE = "gpu-node-1"
RESOURCE = "seedance.io/gpu-milli"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """kubelet's device-plugin API, compiled from its source (downloaded once by
    scripts/k8s-control-plane.sh; a lock keeps parallel workers from downloading it twice)."""
    work = tmp_path_factory.mktemp("kubelet_api")
    lock_path = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "seedance-k8s-source.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return kubelet_api(work)
        except subprocess.CalledProcessError as e:
            if os.environ.get("CI"):
                raise
            pytest.skip(f"kubelet's api.proto could not be fetched: {e.stderr[-300:]}")


def topology(seedancectl, root: pathlib.Path) -> dict:
    out = subprocess.run([str(seedancectl), "topo", "show", "--root", str(root), "-o", "json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def gpu_fixture(path: pathlib.Path, topo: dict, xids=None, ecc=None) -> list[dict]:
    xids, ecc = xids or {}, ecc or {}
    gpus = []
    for i, g in enumerate(topo["gpus"]):
        gpus.append({"index": i, "name": "NVIDIA H100 80GB HBM3",
                     "uuid": f"GPU-5eedc0de-0000-4000-8000-{i:012d}",
                     "pci_address": g["pci_address"], "ecc_uncorrected_errors": ecc.get(i, 0),
                     "xid_errors": xids.get(i, [])})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"driver_version": "560.35.03", "gpus": gpus}))
    tmp.replace(path)  # the agent never reads half a file
    return gpus


def pod(name: str, milli: int, gpus: str | None, created: str, node: str = NODE,
        container: str = "main", phase: str = "Pending") -> dict:
    meta = {"name": name, "namespace": "default", "creationTimestamp": created,
            "annotations": {}}
    if gpus is not None:
        meta["annotations"]["seedance.io/gpu-assignment"] = gpus
    return {"metadata": meta,
            "spec": {"nodeName": node, "containers": [
                {"name": "sidecar", "resources": {}},
                {"name": container, "resources": {"requests": {RESOURCE: str(milli)},
                                                  "limits": {RESOURCE: str(milli)}}}]},
            "status": {"phase": phase}}


class Node:
    """A fake node: sysfs tree, GPU fixture, API server with its Node, kubelet, agent."""

    def __init__(self, seedancectl, api_mod, tmp: pathlib.Path) -> None:
        self.seedancectl, self.tmp = seedancectl, tmp
        self.root = tmp / "sys"
        subprocess.run([sys.executable, str(REPO / "tests" / "fixtures" / "fake_node.py"),
                        "server", str(self.root)], check=True, capture_output=True)
        self.topo = topology(seedancectl, self.root)
        self.fixture = tmp / "gpus.json"
        self.gpus = gpu_fixture(self.fixture, self.topo)
        self.apiserver = FakeApiServer().start()
        self.apiserver.add_node({"metadata": {"name": NODE, "labels": {"keep": "me"}},
                                 "status": {"allocatable": {RESOURCE: "8000"}}})
        self.kubeconfig = tmp / "kubeconfig"
        self.apiserver.write_kubeconfig(self.kubeconfig)
        # A Unix socket's path must fit in 108 bytes: pytest's temporary folders are too deep.
        self.plugins = pathlib.Path(tempfile.mkdtemp(prefix="dp-", dir="/tmp"))
        pb2, pb2_grpc, _ = api_mod
        self.kubelet = FakeKubelet(self.plugins, pb2, pb2_grpc)
        self.proc = None
        self.log = tmp / "agent.log"

    def start_agent(self, *extra: str) -> None:
        seen = len(self.kubelet.registrations)
        self.proc = subprocess.Popen(
            [str(self.seedancectl), "node", "agent", "--node", NODE,
             "--kubeconfig", str(self.kubeconfig), "--gpus-from", str(self.fixture),
             "--root", str(self.root), "--device-plugin-dir", str(self.plugins),
             "--health-interval", "0.1", "--watch-interval", "0.05", *extra],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "a"),
            env={**os.environ, "SEEDANCE_LOG_LEVEL": "info"})
        try:
            self.kubelet.wait(lambda: len(self.kubelet.registrations) > seen
                              and self.kubelet.updates > 0, what="the agent's registration")
        except AssertionError:
            raise AssertionError("agent did not register: " + self.log.read_text()[-2000:])

    def stop_agent(self, sig=signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=30)
        self.proc = None
        return rc

    def close(self) -> None:
        if self.proc is not None:
            self.stop_agent(signal.SIGKILL)
        self.kubelet.stop()
        self.apiserver.stop()
        shutil.rmtree(self.plugins, ignore_errors=True)

    def node_object(self) -> dict:
        with self.apiserver.lock:
            return json.loads(json.dumps(self.apiserver.nodes[NODE]))

    def pod_object(self, name: str) -> dict:
        with self.apiserver.lock:
            return json.loads(json.dumps(self.apiserver.pods[f"default/{name}"]))

    def wait_for(self, predicate, what: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; agent log: "
                                     + self.log.read_text()[-2000:])
            time.sleep(0.05)


@pytest.fixture
def node(seedancectl, api, tmp_path):
    n = Node(seedancectl, api, tmp_path)
    yield n
    n.close()


def gpu_of(device_id: str) -> str:
    return device_id.rsplit("::", 1)[0]


def test_the_agents_api_file_is_kubelets(api, tmp_path):
    """Same packages, services, methods, messages, field names, numbers, types and labels."""
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc

    def described(proto: pathlib.Path) -> dict:
        out = tmp_path / (proto.stem + ".pb")
        assert protoc.main(["protoc", f"-I{proto.parent}", f"--descriptor_set_out={out}",
                            str(proto)]) == 0
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
        f = fds.file[0]
        messages = {m.name: sorted((fl.name, fl.number, fl.type, fl.label, fl.type_name)
                                   for fl in m.field) for m in f.message_type}
        for m in f.message_type:  # map entries
            for nested in m.nested_type:
                messages[m.name + "." + nested.name] = sorted(
                    (fl.name, fl.number, fl.type, fl.label) for fl in nested.field)
        services = {s.name: sorted((m.name, m.input_type, m.output_type, m.server_streaming,
                                    m.client_streaming) for m in s.method) for s in f.service}
        return {"package": f.package, "messages": messages, "services": services}

    ours = described(REPO / "src" / "node" / "deviceplugin_v1beta1.proto")
    kubelets = described(api[2])
    assert ours == kubelets


def test_registers_lists_every_milli_gpu_and_labels_the_node(node):
    node.start_agent()
    reg = node.kubelet.registrations[0]
    assert reg == {"version": "v1beta1", "endpoint": "seedance-gpu-milli.sock",
                   "resource_name": RESOURCE, "preferred": True}
    assert node.kubelet.options.get_preferred_allocation_available
    assert not node.kubelet.options.pre_start_required
    devices = node.kubelet.devices
    assert len(devices) == 8 * 1000
    assert all(h == "Healthy" for h in devices.values())
    assert max(len(i) for i in devices) <= 63  # the API's limit
    # The whole list, as kubelet receives it, fits gRPC's default 4 MiB receive cap many times.
    pb2 = node.kubelet.pb2
    message = pb2.ListAndWatchResponse(devices=[
        pb2.Device(ID=i, health=h, topology=pb2.TopologyInfo(
            nodes=[pb2.NUMANode(ID=n) for n in node.kubelet.topology[i]]))
        for i, h in devices.items()])
    assert message.ByteSize() < (1 << 20), message.ByteSize()
    per_gpu: dict[str, int] = {}
    for i in devices:
        per_gpu[gpu_of(i)] = per_gpu.get(gpu_of(i), 0) + 1
    assert per_gpu == {g["uuid"]: 1000 for g in node.gpus}
    # Each device carries its GPU's NUMA node as discovery reads it.
    numa = {g["uuid"]: t["numa_node"] for g, t in zip(node.gpus, node.topo["gpus"])}
    assert all(node.kubelet.topology[i] == [numa[gpu_of(i)]] for i in devices)

    rdma = sum(1 for n in node.topo["nics"] if n["kind"] in ("infiniband", "roce"))
    assert rdma > 0
    node.wait_for(lambda: "seedance.io/gpu-model" in node.node_object()["metadata"]["labels"],
                  "the Node's labels")
    labels = node.node_object()["metadata"]["labels"]
    assert labels == {"keep": "me", "seedance.io/gpu-model": "H100-80GB-HBM3",
                      "seedance.io/numa-nodes": str(len({t["numa_node"]
                                                         for t in node.topo["gpus"]})),
                      "seedance.io/rdma-nics": str(rdma)}
    assert "seedance.io/unhealthy-gpus" not in node.node_object()["metadata"].get(
        "annotations", {})
    assert node.stop_agent() == 0
    assert not (node.plugins / "seedance-gpu-milli.sock").exists()


def test_allocates_the_assigned_gpu_to_the_oldest_pending_pod(node):
    node.apiserver.add_pod(pod("b-younger", 500, "3", "2026-12-06T08:00:02Z"))
    node.apiserver.add_pod(pod("a-older", 500, "3", "2026-12-06T08:00:01Z"))
    node.apiserver.add_pod(pod("elsewhere", 500, "3", "2026-12-06T08:00:00Z", node="other"))
    node.apiserver.add_pod(pod("running", 500, "5", "2026-12-06T07:00:00Z", phase="Running"))
    node.start_agent()

    ids, answer = node.kubelet.admit(500)
    uuid3 = node.gpus[3]["uuid"]
    # GetPreferredAllocation steered kubelet's choice onto the assigned GPU.
    assert {gpu_of(i) for i in ids} == {uuid3}
    env = dict(answer.envs)
    assert env == {"NVIDIA_VISIBLE_DEVICES": uuid3, "CUDA_VISIBLE_DEVICES": uuid3,
                   "SEEDANCE_GPU_MILLI": "500", "SEEDANCE_GPU_ASSIGNMENT": "3"}
    marked = json.loads(node.pod_object("a-older")["metadata"]["annotations"]
                        ["seedance.io/gpu-allocated"])
    assert list(marked) == ["main"]
    assert "seedance.io/gpu-allocated" not in node.pod_object("b-younger")["metadata"][
        "annotations"]

    ids2, answer2 = node.kubelet.admit(500)
    assert {gpu_of(i) for i in ids2} == {uuid3} and not set(ids) & set(ids2)
    assert dict(answer2.envs)["NVIDIA_VISIBLE_DEVICES"] == uuid3
    assert "seedance.io/gpu-allocated" in node.pod_object("b-younger")["metadata"]["annotations"]

    # Nothing is left waiting: a third request is refused with the reason, not guessed.
    with pytest.raises(grpc.RpcError) as refused:
        node.kubelet.admit(500)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "no pod bound to node gpu-node-1 is waiting for 500" in refused.value.details()


def test_refuses_what_it_cannot_match(node):
    node.apiserver.add_pod(pod("too-far", 250, "9", "2026-12-06T08:00:01Z"))
    node.start_agent("--mps-thread-percentage")
    with pytest.raises(grpc.RpcError) as refused:
        node.kubelet.admit(250)
    assert "assigned GPU 9, which this node does not have (8 GPUs)" in refused.value.details()
    node.apiserver.delete_pod("default", "too-far")

    # Two pods of 700 on GPU 0: the second would put 1,400 on it.
    node.apiserver.add_pod(pod("first", 700, "0", "2026-12-06T08:00:02Z"))
    node.apiserver.add_pod(pod("second", 700, "0", "2026-12-06T08:00:03Z"))
    _, answer = node.kubelet.admit(700)
    assert dict(answer.envs)["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "70"
    with pytest.raises(grpc.RpcError) as refused:
        node.kubelet.admit(700)
    assert ("pod default/second is assigned 700 milli-GPU on GPU 0, where pods already "
            "allocated hold 700 of 1000") in refused.value.details()
    # IDs of no GPU here.
    with pytest.raises(grpc.RpcError) as refused:
        node.kubelet.allocate(["GPU-nope::000"])
    assert "no GPU 'GPU-nope' on this node" in refused.value.details()


def test_concurrent_allocations_take_distinct_pods(node):
    for k in range(4):
        node.apiserver.add_pod(pod(f"quarter-{k}", 250, "1", f"2026-12-06T08:00:0{k}Z"))
    node.start_agent()
    uuid1 = node.gpus[1]["uuid"]
    chunks = [[f"{uuid1}::{s:03d}" for s in range(250 * k, 250 * (k + 1))] for k in range(4)]
    answers, errors = [None] * 4, []

    def run(k: int) -> None:
        try:
            answers[k] = node.kubelet.allocate(chunks[k])
        except grpc.RpcError as e:  # pragma: no cover - reported below
            errors.append(e.details())

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    fingerprints = {}
    for k in range(4):
        ann = node.pod_object(f"quarter-{k}")["metadata"]["annotations"]
        fingerprints[k] = json.loads(ann["seedance.io/gpu-allocated"])["main"]
    assert len(set(fingerprints.values())) == 4  # each pod taken once, by a different request


def test_an_agent_killed_mid_allocation_loses_nothing(node):
    node.apiserver.add_pod(pod("a", 500, "2", "2026-12-06T08:00:01Z"))
    node.apiserver.add_pod(pod("b", 500, "2", "2026-12-06T08:00:02Z"))
    node.start_agent()
    ids, answer = node.kubelet.admit(500)
    patches = len(node.apiserver.patches)
    node.stop_agent(signal.SIGKILL)  # no clean-up of any kind
    node.start_agent()
    # kubelet retries the Allocate it had no answer to: the same pod's answer, nothing written.
    again = node.kubelet.allocate(ids)
    assert dict(again.envs) == dict(answer.envs)
    assert len([p for p in node.apiserver.patches[patches:] if p[0] == "pods"]) == 0
    _, second = node.kubelet.admit(500)
    assert dict(second.envs)["NVIDIA_VISIBLE_DEVICES"] == node.gpus[2]["uuid"]
    assert "seedance.io/gpu-allocated" in node.pod_object("b")["metadata"]["annotations"]


def test_a_kubelet_restart_gets_a_new_registration(node):
    node.start_agent()
    node.kubelet.restart()
    node.kubelet.wait(lambda: len(node.kubelet.registrations) == 2, what="re-registration")
    updates = node.kubelet.updates
    node.kubelet.wait(lambda: node.kubelet.updates > updates or len(node.kubelet.devices) == 8000,
                      what="a new ListAndWatch")
    assert (node.plugins / "seedance-gpu-milli.sock").is_socket()
    assert len(node.kubelet.devices) == 8000


def test_xid_and_ecc_mark_a_gpu_unhealthy(node):
    node.start_agent()
    uuids = [g["uuid"] for g in node.gpus]

    def unhealthy() -> set[str]:
        with node.kubelet.lock:
            return {gpu_of(i) for i, h in node.kubelet.devices.items() if h != "Healthy"}

    gpu_fixture(node.fixture, node.topo, xids={1: [13, 43]})  # what an application causes
    time.sleep(0.5)
    assert unhealthy() == set()
    gpu_fixture(node.fixture, node.topo, xids={2: [79]})  # fell off the bus
    node.kubelet.wait(lambda: unhealthy() == {uuids[2]}, what="GPU 2 unhealthy")
    node.wait_for(lambda: node.node_object()["metadata"].get("annotations", {}).get(
        "seedance.io/unhealthy-gpus") == "2", "the Node's unhealthy-gpus annotation")
    # The XID mark stays after the event has passed; ECC errors add GPU 5.
    gpu_fixture(node.fixture, node.topo, ecc={5: 2})
    node.kubelet.wait(lambda: unhealthy() == {uuids[2], uuids[5]}, what="GPU 5 unhealthy")
    node.wait_for(lambda: node.node_object()["metadata"]["annotations"].get(
        "seedance.io/unhealthy-gpus") == "2,5", "the annotation naming 2 and 5")


def test_bad_invocations_exit_1_and_name_the_flag(seedancectl, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NODE_NAME"}
    r = subprocess.run([str(seedancectl), "node", "agent", "--gpus-from",
                        str(REPO / "tests" / "fixtures" / "gpu_h200.json")],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "--node" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpus": [{"index": 0, "xid_errors": "79"}]}')
    r = subprocess.run([str(seedancectl), "node", "agent", "--node", "n", "--gpus-from", str(bad)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert "xid_errors" in r.stderr and str(bad) in r.stderr


# --- End to end on a real control plane (skipped where it is not built) -----------------------

def test_end_to_end_under_the_second_scheduler(seedancectl, api, tmp_path):
    """kube-apiserver and kube-scheduler 1.20.2 (scripts/k8s-control-plane.sh), kube-scheduler
    as a second scheduler `seedance` with leader election, the extender, the agent and the
    kubelet stand-in: a pod asking for half a GPU under schedulerName seedance is bound by the
    extender and allocated by the agent, whose answer names exactly the assigned GPU; a second
    half-GPU pod shares that GPU under best fit; a pod for the default scheduler is left alone.
    The Node's labels come from the agent's discovery."""
    sys.path.insert(0, str(REPO / "bench" / "sched"))
    from k8s_replay import Api, Extender, Plane, free_port, start_scheduler, wait_bound
    if not Plane.built():
        pytest.skip("kube-apiserver and kube-scheduler 1.20.2 are not built "
                    "(scripts/k8s-control-plane.sh build: about 12 minutes on 2 cores)")
    plane = Plane(tmp_path / "plane")
    plane.start()
    n = Node(seedancectl, api, tmp_path)
    n.apiserver.stop()  # the real API server instead of the fake one
    n.kubeconfig = plane.kubeconfig
    kube = Api(plane.dir)
    kube.add_node(NODE, 64000, 262144, 8, "")
    port = free_port()
    ext = Extender(seedancectl, plane, port, "bestfit")
    ext.start()
    scheduler, _ = start_scheduler(seedancectl, plane, port, scheduler_name="seedance",
                                   leader_elect=True)
    try:
        n.start_agent()
        # Labels from discovery, on the real Node.
        def labels() -> dict:
            return kube.must("GET", f"/api/v1/nodes/{NODE}")["metadata"].get("labels", {})
        n.wait_for(lambda: labels().get("seedance.io/gpu-model") == "H100-80GB-HBM3",
                   "the agent's labels on the Node")
        assert labels()["seedance.io/numa-nodes"] == "2"
        kube.add_pod("left-alone", 100, 64, 1, 500)  # no schedulerName: the default scheduler's
        uuids = []
        for name in ("half-a", "half-b"):
            kube.add_pod(name, 100, 64, 1, 500, spec={"schedulerName": "seedance"})
            bound = wait_bound(kube, {name}, seconds=90)[name]
            gpus = bound["metadata"]["annotations"]["seedance.io/gpu-assignment"]
            ids, answer = n.kubelet.admit(500)
            env = dict(answer.envs)
            uuid = n.gpus[int(gpus)]["uuid"]
            assert env["NVIDIA_VISIBLE_DEVICES"] == env["CUDA_VISIBLE_DEVICES"] == uuid
            assert env["SEEDANCE_GPU_MILLI"] == "500"
            assert {gpu_of(i) for i in ids} == {uuid}
            pod_now = kube.must("GET", f"/api/v1/namespaces/default/pods/{name}")
            assert "seedance.io/gpu-allocated" in pod_now["metadata"]["annotations"]
            uuids.append(uuid)
        assert uuids[0] == uuids[1]  # best fit: the second half shares the first's GPU
        left = kube.must("GET", "/api/v1/namespaces/default/pods/left-alone")
        assert not left["spec"].get("nodeName")
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
        ext.kill()
        n.close()
        plane.stop()
