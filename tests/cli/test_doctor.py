"""`seedancectl doctor` (PROBE-5) on fake library trees made here, and on this machine."""

from __future__ import annotations

import json
import pathlib
import subprocess


def doctor(seedancectl, *args: str) -> tuple[int, dict, str]:
    r = subprocess.run([str(seedancectl), "doctor", *map(str, args), "-o", "json"],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else {}), r.stderr


def touch(path: pathlib.Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_machine(root: pathlib.Path, driver: str, cudnn: tuple[int, int, int]) -> pathlib.Path:
    """A driver, CUDA 12.4 libraries named with their versions, a cuDNN header, NCCL, and a
    virtual environment with a CUDA 12.4 build of torch, its cuDNN 9 wheel and Transformers."""
    touch(root / "proc/driver/nvidia/version",
          f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build\n")
    lib = root / "usr/local/cuda/lib64"
    for name in ("libcudart.so.12", "libcudart.so.12.4.127", "libcublas.so.12.4.5.8",
                 "libcublasLt.so.12.4.5.8"):
        touch(lib / name)
    touch(root / "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5")
    touch(root / "usr/include/cudnn_version.h",
          "#define CUDNN_MAJOR {}\n#define CUDNN_MINOR {}\n#define CUDNN_PATCHLEVEL {}\n"
          .format(*cudnn))
    touch(root / f"usr/lib/x86_64-linux-gnu/libcudnn.so.{cudnn[0]}")
    venv = root / "venv"
    sp = venv / "lib/python3.11/site-packages"
    touch(sp / "torch-2.5.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\n"
                                                 "Version: 2.5.1+cu124\n")
    touch(sp / "torch/version.py", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n")
    touch(sp / "nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA",
          "Name: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n")
    touch(sp / "transformers-4.46.0.dist-info/METADATA", "Name: transformers\nVersion: 4.46.0\n")
    return venv


def test_a_clean_fake_machine(seedancectl, tmp_path) -> None:
    venv = fake_machine(tmp_path, "550.54.14", (9, 1, 0))
    code, r, err = doctor(seedancectl, "--root", tmp_path, "--python-prefix", "/venv")
    assert code == 0, err
    found = {c["component"]: c["version"] for c in r["components"]}
    assert found == {"driver": "550.54.14", "cuda_runtime": "12.4.127", "cudnn": "9.1.0",
                     "cublas": "12.4.5.8", "nccl": "2.21.5", "torch": "2.5.1",
                     "torch_cuda": "12.4", "torch_cudnn": "9.1.0.70", "torch_nccl": "not found",
                     "transformers": "4.46.0"}
    assert r["driver_found"] is True and r["problems"] == []
    assert r["summary"] == ("No known problem matches; driver 550.54.14, CUDA runtime 12.4.127, "
                            "cuDNN 9.1.0, PyTorch 2.5.1"), r["summary"]
    assert venv.exists()


def test_planted_problems_are_named_with_the_fix(seedancectl, tmp_path) -> None:
    """A driver too old for CUDA 12 and a system cuDNN 8 in front of torch's cuDNN 9."""
    fake_machine(tmp_path, "470.199.02", (8, 9, 7))
    code, r, _ = doctor(seedancectl, "--root", tmp_path, "--python-prefix", "/venv")
    assert code == 1
    ids = [p["id"] for p in r["problems"]]
    assert ids == ["driver-too-old-for-cuda-12", "torch-cuda-12-driver-too-old",
                   "system-cudnn-shadows-torch-cudnn"], ids
    first = r["problems"][0]
    assert first["because"] == ["cuda_runtime 12.4.127 == 12", "driver 470.199.02 < 525"]
    assert "525" in first["fix"] and "docs.nvidia.com" in first["source"]
    assert r["summary"].startswith("3 known problems match")
    table = subprocess.run([str(seedancectl), "doctor", "--root", str(tmp_path),
                            "--python-prefix", "/venv"], capture_output=True, text=True)
    assert table.returncode == 1 and "system-cudnn-shadows-torch-cudnn" in table.stdout


def test_the_notes_matrix_row(seedancectl, tmp_path) -> None:
    fake_machine(tmp_path, "550.54.14", (8, 7, 0))
    code, r, _ = doctor(seedancectl, "--root", tmp_path)  # no Python environment looked at
    assert code == 1
    assert [p["id"] for p in r["problems"]] == ["notes-cudnn-8.7.0"]
    assert "compatibility matrix" in r["problems"][0]["source"]


def test_a_table_of_ones_own_and_its_errors(seedancectl, tmp_path) -> None:
    fake_machine(tmp_path, "550.54.14", (9, 1, 0))
    own = tmp_path / "table.yaml"
    own.write_text("problems:\n  - id: new-nccl\n    when: \"nccl >= 2.21 and torch.minor == 2.5\"\n"
                   "    symptom: s\n    fix: f\n    source: here\n")
    code, r, _ = doctor(seedancectl, "--root", tmp_path, "--python-prefix", "/venv",
                        "--table", own)
    assert code == 1 and [p["id"] for p in r["problems"]] == ["new-nccl"]
    own.write_text("problems:\n  - id: bad\n    when: \"nccl >> 2\"\n    symptom: s\n    fix: f\n"
                   "    source: here\n")
    bad = subprocess.run([str(seedancectl), "doctor", "--table", str(own)], capture_output=True,
                         text=True)
    assert bad.returncode == 1
    assert f"{own}:3: problems[0].when" in bad.stderr and ">>" in bad.stderr, bad.stderr


def test_this_machine(seedancectl) -> None:
    """Here there is no GPU stack, and the report says so plainly (on a GPU machine it lists
    the stack instead)."""
    code, r, err = doctor(seedancectl)
    assert code in (0, 1), err
    if not r["driver_found"]:
        assert not pathlib.Path("/proc/driver/nvidia/version").exists()
        said = r["summary"]
        assert ("no GPU software stack on this machine" in said if not r["cuda_libraries_found"]
                else "so no GPU program can run here" in said), said
        assert code == 0 and r["problems"] == []
