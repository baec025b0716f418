"""`pip install .` gives a working package in a fresh virtual environment.

A throw-away venv is made from the interpreter the tests run under, torch is installed into it
(the pinned version, as a user would have it), then the repository is installed by pip through its
PEP 517 back end (scikit-build-core, pyproject.toml). The installed package must import outside the
repository with no PYTHONPATH, carry its type information, and run a call into libseedance.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import venv

import seedance

REPO = pathlib.Path(__file__).resolve().parents[2]


def pinned(name: str) -> str:
    for line in (REPO / "requirements" / "dev.txt").read_text().splitlines():
        if line.split("==")[0].strip() == name:
            return line.strip()
    raise AssertionError(f"{name} is not pinned in requirements/dev.txt")


def run(cmd: list[str], cwd: pathlib.Path, timeout: int) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{' '.join(cmd)} failed:\n{out.stdout[-4000:]}\n{out.stderr[-4000:]}"
    return out.stdout


def test_pip_install_into_a_fresh_venv(tmp_path: pathlib.Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # (--no-compile: no bytecode for torch's files, which Python writes on import if it needs it)
    run([str(python), "-m", "pip", "install", "-q", "--no-input", "--no-compile", pinned("torch")],
        tmp_path, 900)
    # CUDA is compiled and tested by the dev build; the wheel here skips it, and builds with no
    # optimisation and no debug information (build type None), to keep CI short. The build
    # folder is inside the checkout (ignored by git, emptied first and afterwards) so that ccache,
    # when installed, finds the objects of an earlier run of this test, from any checkout: the
    # wheel's unity build #includes each source by its absolute path, so __FILE__ is mapped
    # relative to the checkout (as cmake/SeedanceCcache.cmake does for the test programs).
    build_dir = REPO / "build-pip"
    shutil.rmtree(build_dir, ignore_errors=True)
    try:
        run([str(python), "-m", "pip", "install", "-q", "--no-input",
             "-C", "cmake.define.SEEDANCE_CUDA=OFF", "-C", "cmake.build-type=None",
             "-C", f"cmake.define.CMAKE_CXX_FLAGS=-fmacro-prefix-map={REPO}/=",
             "-C", f"build-dir={build_dir}",
             str(REPO)], tmp_path, 1500)
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)
    probe = (
        "import json, pathlib, seedance, seedance.torch, torch\n"
        "pkg = pathlib.Path(seedance.__file__).parent\n"
        "print(json.dumps({'version': seedance.__version__, 'file': str(pkg),\n"
        "  'typed': (pkg / 'py.typed').exists(), 'stub': (pkg / '_core.pyi').exists(),\n"
        "  'scale': seedance.torch.GradScaler('cpu').get_scale(),\n"
        "  'params': seedance.optimize(dry_run=False)['derived']['parameters']}))\n")
    report = json.loads(run([str(python), "-c", probe], tmp_path, 300))
    assert pathlib.Path(report["file"]).is_relative_to(env_dir)
    assert report["version"] == seedance.__version__
    assert report["typed"] and report["stub"]
    assert report["scale"] == 65536.0
    assert report["params"] == 6_738_415_616
