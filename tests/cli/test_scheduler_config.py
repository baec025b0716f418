"""`seedancectl scheduler print-config`: the KubeSchedulerConfiguration, read back as YAML (PyYAML)
and checked field by field against what kube-scheduler's HTTPExtender needs."""

from __future__ import annotations

import subprocess

import yaml


def config(seedancectl, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(seedancectl), "scheduler", "print-config", *args],
                          capture_output=True, text=True, timeout=30)


def test_print_config_fields(seedancectl) -> None:
    out = config(seedancectl, "--extender-url", "http://ext.example:8888/", "--kubeconfig",
                 "/etc/k/scheduler.conf", "--weight", "5", "--http-timeout", "9")
    assert out.returncode == 0, out.stderr
    c = yaml.safe_load(out.stdout)
    assert c["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert c["kind"] == "KubeSchedulerConfiguration"
    # A second scheduler by default, with a Lease of its own.
    assert c["profiles"] == [{"schedulerName": "seedance"}]
    assert c["leaderElection"] == {"leaderElect": True, "resourceLock": "leases",
                                   "resourceName": "seedance-scheduler",
                                   "resourceNamespace": "kube-system"}
    assert c["percentageOfNodesToScore"] == 100
    assert c["clientConnection"]["kubeconfig"] == "/etc/k/scheduler.conf"
    [e] = c["extenders"]
    assert e["urlPrefix"] == "http://ext.example:8888"  # the trailing slash dropped
    assert (e["filterVerb"], e["prioritizeVerb"], e["bindVerb"], e["preemptVerb"]) == \
        ("filter", "prioritize", "bind", "preempt")
    assert (e["weight"], e["httpTimeout"], e["nodeCacheCapable"], e["ignorable"]) == \
        (5, "9s", True, False)
    assert e["enableHTTPS"] is False
    assert e["managedResources"] == [{"name": "seedance.io/gpu-milli",
                                      "ignoredByScheduler": False}]
    assert "request seedance.io/gpu-milli" in out.stdout.splitlines()[1]


def test_all_pods_v1_and_https(seedancectl) -> None:
    out = config(seedancectl, "--extender-url", "https://ext:8443", "--all-pods", "--v1")
    assert out.returncode == 0, out.stderr
    c = yaml.safe_load(out.stdout)
    assert c["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    [e] = c["extenders"]
    assert "managedResources" not in e  # every pod goes through the extender
    assert e["enableHTTPS"] is True
    assert "every pod" in out.stdout.splitlines()[1]


def test_bad_values_are_refused(seedancectl) -> None:
    for args, needle in [(["--extender-url", "ext:8888"], "--extender-url"),
                         (["--extender-url", "http://e", "--weight", "0"], "--weight"),
                         (["--extender-url", "http://e", "--http-timeout", "0"], "--http-timeout"),
                         ([], "--extender-url")]:
        out = config(seedancectl, *args)
        assert out.returncode != 0, args
        assert needle in out.stderr, (args, out.stderr)
        assert out.stdout == ""


def test_v1beta1_and_replacing_the_default_scheduler(seedancectl) -> None:
    out = config(seedancectl, "--extender-url", "http://ext:8888", "--v1beta1",
                 "--scheduler-name", "default-scheduler")
    assert out.returncode == 0, out.stderr
    c = yaml.safe_load(out.stdout)
    assert c["apiVersion"] == "kubescheduler.config.k8s.io/v1beta1"
    assert c["profiles"] == [{"schedulerName": "default-scheduler"}]
    assert c["leaderElection"]["resourceName"] == "kube-scheduler"  # the default one's Lease
    out = config(seedancectl, "--extender-url", "http://ext:8888", "--no-leader-elect")
    assert yaml.safe_load(out.stdout)["leaderElection"] == {"leaderElect": False}


def test_a_scheduler_name_that_is_no_dns_label_is_refused(seedancectl) -> None:
    out = config(seedancectl, "--extender-url", "http://ext:8888", "--scheduler-name", "My_Sched")
    assert out.returncode == 1
    assert "--scheduler-name" in out.stderr and "My_Sched" in out.stderr
