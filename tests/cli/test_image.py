"""The container image (issue 44, item 4): scripts/build-image.py writes an OCI layout and archive
with no base image and no builder. Checked with a reader written here from the OCI image spec
(every blob's sha256 and size, the layer's diff ID, the config), by running the image's own
binary in a chroot of its layer (nothing from the host), and against the manifests, which must
name the image the script prints."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def image(seedancectl, tmp_path_factory):
    out = tmp_path_factory.mktemp("image")
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "build-image.py"), "--binary",
                        str(seedancectl), "--out", str(out)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return out, r.stdout.strip().splitlines()[-1]


def blob(layout: pathlib.Path, descriptor: dict) -> bytes:
    algo, digest = descriptor["digest"].split(":")
    assert algo == "sha256"
    data = (layout / "blobs" / "sha256" / digest).read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest
    assert len(data) == descriptor["size"]
    return data


def test_the_layout_is_a_valid_oci_image(image):
    out, name = image
    assert re.fullmatch(r"localhost/seedance/seedancectl:\d+\.\d+\.\d+", name)
    layout = out / "layout"
    assert json.loads((layout / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((layout / "index.json").read_text())
    [entry] = index["manifests"]
    assert entry["annotations"]["org.opencontainers.image.ref.name"] == name
    manifest = json.loads(blob(layout, entry))
    assert manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    config = json.loads(blob(layout, manifest["config"]))
    assert (config["os"], config["architecture"]) == ("linux", "amd64")
    assert config["config"]["Entrypoint"] == ["/usr/bin/seedancectl"]
    assert config["config"]["User"] == "65534:65534"
    [layer] = manifest["layers"]
    assert layer["mediaType"].endswith("tar+gzip")
    raw = gzip.decompress(blob(layout, layer))
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(raw).hexdigest()]
    names = tarfile.open(fileobj=io.BytesIO(raw)).getnames()
    assert "usr/bin/seedancectl" in names
    assert not any(n.startswith(("bin/sh", "usr/bin/sh", "usr/bin/bash")) for n in names)
    # The archive holds the same layout.
    with tarfile.open(out / "seedance.oci.tar") as tar:
        assert json.load(tar.extractfile("index.json")) == index


def test_the_images_binary_runs_on_the_image_alone(image, tmp_path):
    out, _ = image
    layout = out / "layout"
    index = json.loads((layout / "index.json").read_text())
    manifest = json.loads(blob(layout, index["manifests"][0]))
    root = tmp_path / "root"
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(layout, manifest["layers"][0])))) \
            as tar:
        tar.extractall(root)
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    r = subprocess.run(["chroot", str(root), "/usr/bin/seedancectl", "version"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 and "Operation not permitted" in r.stderr:
        pytest.skip("chroot is not permitted here")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^version\s+\d+\.\d+\.\d+$", r.stdout, flags=re.M), r.stdout
    r = subprocess.run(["chroot", str(root), "/usr/bin/seedancectl", "node", "agent", "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "device plugin" in r.stdout, r.stderr


def test_the_build_is_reproducible(image, seedancectl, tmp_path):
    out, _ = image
    again = tmp_path / "again"
    subprocess.run([sys.executable, str(REPO / "scripts" / "build-image.py"), "--binary",
                    str(seedancectl), "--out", str(again)], check=True, capture_output=True,
                   timeout=600)
    first = json.loads((out / "layout" / "index.json").read_text())["manifests"][0]["digest"]
    second = json.loads((again / "layout" / "index.json").read_text())["manifests"][0]["digest"]
    assert first == second


def test_the_manifests_name_the_image_the_script_prints(image):
    _, name = image
    images = set()
    for f in sorted((REPO / "deploy").glob("*.yaml")):
        images |= set(re.findall(r"^\s*image: (\S+)$", f.read_text(), flags=re.M))
    assert images == {name, "KUBE_SCHEDULER_IMAGE"}
