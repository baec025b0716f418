"""The exception that libseedance errors become in Python."""

from __future__ import annotations

import operator
import os
from typing import Any, Union

__all__ = ["SeedanceError", "SeedanceTypeError", "check_int", "check_number", "check_type",
           "read_text"]


def __dir__() -> list[str]:
    return sorted(__all__)


class SeedanceError(ValueError):
    """An error reported by libseedance.

    Attributes:
        message: what went wrong.
        where: the place, e.g. ``"job.yaml:7: model.layers"`` (may be empty).
        code: the status code name, e.g. ``"INVALID_ARGUMENT"``.
    """

    def __init__(self, message: str, where: str = "", code: str = "INVALID_ARGUMENT") -> None:
        super().__init__(message, where, code)
        self.message = message
        self.where = where
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} ({self.where})" if self.where else self.message


class SeedanceTypeError(SeedanceError, TypeError):
    """An argument of the wrong type: a TypeError (as Python's own functions raise) that is also
    a SeedanceError naming the parameter in ``where``."""


def check_type(function: str, name: str, value: object, types: Union[type, tuple[type, ...]],
               expected: str) -> Any:
    """`value` if it is one of `types`, else SeedanceTypeError: "optimize(): job must be a path,
    YAML text or a dict, not int"."""
    if isinstance(value, types) and not (isinstance(value, bool) and bool not in
                                         (types if isinstance(types, tuple) else (types,))):
        return value
    raise SeedanceTypeError(f"{function}(): {name} must be {expected}, not "
                            f"{type(value).__name__}", name)


def read_text(path: "os.PathLike[str] | str") -> str:
    """A UTF-8 text input file, read as the CLI reads it (libseedance's Env: a regular file of at
    most 4 GiB; a FIFO, a device or a directory is an error, never a hang or an endless read).
    Unreadable files and bytes that are not UTF-8 raise SeedanceError naming the file (and, for
    bad bytes, the line), as the CLI reports them."""
    from seedance import _core  # here: _core raises this module's SeedanceError

    where = os.fsdecode(path)
    data = _core.read_file(os.fsencode(path))  # bytes: any file name, UTF-8 or not
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SeedanceError(f"not UTF-8 text (byte 0x{data[e.start]:02x})", f"{where}:{line}",
                            "INVALID_ARGUMENT") from e


def check_int(name: str, value: object, bits: int = 64) -> int:
    """`value` as an int that fits the setting's signed `bits`-bit field, or SeedanceError naming
    it (SeedanceTypeError, also a TypeError, for a value that is no integer at all): a bool, a float or an int past the field is refused here, where pybind11 would raise a
    TypeError about "incompatible function arguments" (or wrap it). The setting's own range is
    libseedance's, checked there."""
    if isinstance(value, bool):
        raise SeedanceTypeError(f"expected an integer, got {value!r}", name)
    try:
        value = operator.index(value)  # an int, or a NumPy integer
    except TypeError:
        raise SeedanceTypeError(f"expected an integer, got {value!r}", name) from None
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= value <= hi:
        raise SeedanceError(f"expected an integer of {bits} bits at most ({lo} to {hi}), "
                            f"got {value}", name)
    return value


def check_number(name: str, value: object) -> float:
    """`value` as a float, or SeedanceError naming it (NaN passes: the library's range refuses
    it with the setting's bounds)."""
    if isinstance(value, (bool, str, bytes)):
        raise SeedanceTypeError(f"expected a number, got {value!r}", name)
    try:
        return float(value)  # an int, a float, a NumPy scalar
    except OverflowError:
        raise SeedanceError(f"expected a number a double can hold, got {value}", name) from None
    except TypeError:
        raise SeedanceTypeError(f"expected a number, got {value!r}", name) from None
    except ValueError:
        raise SeedanceError(f"expected a number, got {value!r}", name) from None
