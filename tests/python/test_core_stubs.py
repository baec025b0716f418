"""python/seedance/_core.pyi describes the built seedance._core.

Two independent checks: mypy's stubtest (every runtime name has a stub and every stub a runtime
name), and, since pybind11 functions carry no introspectable signature, each function's
pybind11-written docstring signature against the stub's parameter names and defaults.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import pytest

from seedance import _core

STUB = pathlib.Path(__file__).resolve().parents[2] / "python" / "seedance" / "_core.pyi"


def split_top_level(text: str) -> list[str]:
    """Splits "a: x[b, c], d = 1" at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def runtime_params(doc: str) -> list[tuple[str, str | None]]:
    """(name, default text or None) from pybind11's "name(a: T, b: U = 1) -> R" first line."""
    first = doc.splitlines()[0]
    inner = first[first.index("(") + 1:first.rindex(") ->")]
    out = []
    for part in split_top_level(inner):
        name = part.split(":")[0].strip()
        default = part.split("=", 1)[1].strip() if "=" in part else None
        if name != "self":
            out.append((name, default))
    return out


def stub_params(fn: ast.FunctionDef) -> list[tuple[str, str | None]]:
    args = [a for a in fn.args.args if a.arg != "self"]
    defaults = [None] * (len(args) - len(fn.args.defaults)) + [
        ast.unparse(d) for d in fn.args.defaults]
    return [(a.arg, d) for a, d in zip(args, defaults)]


def stub_functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(STUB.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                is_property = any(ast.unparse(d) == "property" for d in
                                  getattr(item, "decorator_list", []))
                if isinstance(item, ast.FunctionDef) and not is_property:
                    out[f"{node.name}.{item.name}"] = item
    return out


def runtime_functions() -> dict[str, object]:
    out = {}
    for name, obj in vars(_core).items():
        if name.startswith("__"):
            continue
        if isinstance(obj, type):
            for attr, member in vars(obj).items():
                if callable(member) and (attr == "__init__" or not attr.startswith("_")):
                    out[f"{name}.{attr}"] = member
        elif callable(obj):
            out[name] = obj
    return out


def normalise_default(text: str | None) -> str | None:
    return None if text is None else repr(ast.literal_eval(text))


def test_every_function_has_the_stubs_parameters() -> None:
    stubs, runtime = stub_functions(), runtime_functions()
    assert set(runtime) == set(stubs), (set(runtime) ^ set(stubs))
    for name, obj in runtime.items():
        doc = (obj.__func__ if isinstance(obj, staticmethod) else obj).__doc__
        want = [(n, normalise_default(d)) for n, d in runtime_params(doc)]
        got = [(n, normalise_default(d)) for n, d in stub_params(stubs[name])]
        assert got == want, name


def test_stubtest_finds_no_missing_or_extra_name(tmp_path: pathlib.Path) -> None:
    allow = tmp_path / "allow.txt"
    # pybind11 classes have their own metaclass, which a stub cannot name.
    classes = sorted(n for n in dir(_core) if isinstance(getattr(_core, n), type)
                     and not issubclass(getattr(_core, n), BaseException))
    assert {"LossScaler", "BatchScaler", "DecisionRecorder"} <= set(classes)
    allow.write_text("".join(f"seedance._core.{c}\n" for c in classes))
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(_core.__file__).parents[1]))
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "seedance._core", "--allowlist",
                          str(allow)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout


def test_split_keeps_bracketed_commas() -> None:
    assert split_top_level("a: x[b, c], d: tuple[int, int] = (1, 2)") == [
        "a: x[b, c]", "d: tuple[int, int] = (1, 2)"]
    with pytest.raises(ValueError):
        runtime_params("no signature here")
