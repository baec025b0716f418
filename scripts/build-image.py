#!/usr/bin/env python3
"""Builds Seedance's container image here, without pulling any base image and without a builder
(issue 44, item 4): seedancectl, stripped, and every shared library it loads (as `ldd` resolves
them, with the dynamic loader) on an empty root, written as

  OUT/layout/          an OCI image layout (oci-layout, index.json, blobs/sha256/...): one gzip
                       layer, the image config (linux/amd64, entrypoint /usr/bin/seedancectl,
                       user 65534, the layer's diff ID) and the manifest, tagged in index.json;
  OUT/seedance.oci.tar that layout as one archive, which `ctr -n k8s.io images import`,
                       `podman load` and `skopeo copy oci-archive:` read.

The layer is reproducible: entries sorted, owner root, times 0. The last line printed is the
image's name, localhost/seedance/seedancectl:<project version>, the name deploy/*.yaml use.

    python3 scripts/build-image.py [--binary build/bin/seedancectl] [--out build/image]
    python3 scripts/build-image.py --rootfs-only DIR     # just the root, for deploy/Containerfile
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]


def project_version() -> str:
    m = re.search(r"project\(seedance VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text())
    if not m:
        sys.exit("build-image: no project version in CMakeLists.txt")
    return m.group(1)


IMAGE = f"localhost/seedance/seedancectl:{project_version()}"


def shared_libraries(binary: pathlib.Path) -> list[pathlib.Path]:
    """Every library the dynamic loader maps for `binary`, and the loader itself."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            target = line.split("=>", 1)[1].strip().split(" (")[0].strip()
            if target == "not found":
                sys.exit(f"build-image: {binary} needs a library ldd cannot find: {line}")
            if target.startswith("/"):
                libs.append(pathlib.Path(target))
        elif line.startswith("/"):  # the loader: /lib64/ld-linux-x86-64.so.2 (0x...)
            libs.append(pathlib.Path(line.split(" (")[0]))
    return libs


def make_rootfs(binary: pathlib.Path, root: pathlib.Path) -> None:
    (root / "usr" / "bin").mkdir(parents=True, exist_ok=True)
    target = root / "usr" / "bin" / "seedancectl"
    subprocess.run(["strip", "--strip-unneeded", "-o", str(target), str(binary)], check=True)
    for lib in shared_libraries(binary):
        # Keep the path the binary's loader looks for (a link such as /lib64/ld-linux... is
        # copied as the file it points to).
        dest = root / str(lib).lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib.resolve(), dest)
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/:/sbin/nologin\n"
                                         "nobody:x:65534:65534:nobody:/:/sbin/nologin\n")
    (root / "etc" / "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    (root / "tmp").mkdir(exist_ok=True)
    os.chmod(root / "tmp", 0o1777)


def add_tree(tar: tarfile.TarFile, root: pathlib.Path) -> None:
    """Every file and directory under `root`, in name order, owned by root, dated 0: the same
    bytes from the same tree on any machine."""
    for path in sorted(root.rglob("*")):
        info = tar.gettarinfo(str(path), arcname=str(path.relative_to(root)))
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        if info.isfile():
            with open(path, "rb") as f:
                tar.addfile(info, f)
        else:
            tar.addfile(info)


def layer_tar(root: pathlib.Path) -> bytes:
    """The root as an uncompressed tar: sorted, owner 0, times 0 (reproducible)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        add_tree(tar, root)
    return buf.getvalue()


def write_blob(layout: pathlib.Path, data: bytes) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    blob = layout / "blobs" / "sha256" / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def write_layout(root: pathlib.Path, layout: pathlib.Path, name: str = IMAGE,
                 entrypoint: list[str] | None = None, user: str = "65534:65534") -> dict:
    """Any root as a one-layer image `name` (the tests make their pause and shell images so)."""
    if layout.exists():
        shutil.rmtree(layout)
    layout.mkdir(parents=True)
    raw = layer_tar(root)
    layer = write_blob(layout, gzip.compress(raw, compresslevel=6, mtime=0))
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": entrypoint or ["/usr/bin/seedancectl"], "User": user,
                   "Env": ["PATH=/usr/bin"], "WorkingDir": "/tmp",
                   "Labels": {"org.opencontainers.image.title": "seedance",
                              "org.opencontainers.image.version": project_version()}},
        "rootfs": {"type": "layers",
                   "diff_ids": [f"sha256:{hashlib.sha256(raw).hexdigest()}"]},
        "history": [{"created_by": "scripts/build-image.py"}],
    }
    config_blob = write_blob(layout, json.dumps(config, sort_keys=True).encode())
    manifest = {
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config_blob},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **layer}],
    }
    manifest_blob = write_blob(layout, json.dumps(manifest, sort_keys=True).encode())
    index = {
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       **manifest_blob,
                       "platform": {"architecture": "amd64", "os": "linux"},
                       "annotations": {"org.opencontainers.image.ref.name": name,
                                       "io.containerd.image.name": name}}],
    }
    (layout / "index.json").write_text(json.dumps(index, sort_keys=True))
    (layout / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    return {"manifest": manifest_blob, "layer": layer, "layer_bytes": len(raw)}


def write_archive(layout: pathlib.Path, archive: pathlib.Path) -> None:
    """The layout as one tar (an OCI archive), reproducibly."""
    with tarfile.open(archive, "w") as tar:
        add_tree(tar, layout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "seedancectl"))
    ap.add_argument("--out", default=str(REPO / "build" / "image"))
    ap.add_argument("--rootfs-only", metavar="DIR", help="write only the root into DIR")
    args = ap.parse_args()
    binary = pathlib.Path(args.binary)
    if not binary.is_file():
        sys.exit(f"build-image: {binary} not found: build first (scripts/dev.sh build)")
    if args.rootfs_only:
        make_rootfs(binary, pathlib.Path(args.rootfs_only))
        print(IMAGE)
        return 0
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "rootfs"
        make_rootfs(binary, root)
        made = write_layout(root, out / "layout")
    archive = out / "seedance.oci.tar"
    write_archive(out / "layout", archive)
    print(f"build-image: {out / 'layout'} and {archive}: manifest {made['manifest']['digest']}, "
          f"layer {made['layer']['size']:,} bytes compressed ({made['layer_bytes']:,} raw)",
          file=sys.stderr)
    print(IMAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
