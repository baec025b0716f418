"""The exception that libseedance errors become in Python."""

from __future__ import annotations


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
