"""The exception that libseedance errors become in Python."""

from __future__ import annotations

import os


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


def read_text(path: "os.PathLike[str] | str") -> str:
    """A UTF-8 text input file. Unreadable files and bytes that are not UTF-8 raise
    SeedanceError naming the file (and, for bad bytes, the line), as the CLI reports them."""
    where = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SeedanceError(f"cannot read: {e.strerror}", where, "IO_ERROR") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SeedanceError(f"not UTF-8 text (byte 0x{data[e.start]:02x})", f"{where}:{line}",
                            "INVALID_ARGUMENT") from e
