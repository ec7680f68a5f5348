"""Library statuses as Python exceptions, with the library's own message.

Every exception the package raises for a library status derives from :class:`BroadphaseError`
(which carries ``status``, the C value, and ``status_name``, e.g. ``"BP_ERR_INVERTED_BOX"``) and
from the built-in class a Python user expects: bad input is a :class:`ValueError`, out of memory a
:class:`MemoryError`, a query before any boxes a :class:`RuntimeError`.
"""

from __future__ import annotations

from typing import NoReturn, Optional

from ._ffi import STATUS, STATUS_NAME, ffi, lib


class BroadphaseError(Exception):
    """A status returned by the C library.

    Attributes:
        status: the ``bp_status`` value (negative).
        status_name: its name in include/broadphase.h, e.g. ``"BP_ERR_NONFINITE"``.
        row: the first bad row of the input, when the error is about one (else None).
    """

    def __init__(self, message: str, status: int, row: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status
        self.status_name = STATUS_NAME.get(status, "unknown")
        self.row = row


class InvalidInputError(BroadphaseError, ValueError):
    """Bad input: NaN or infinite coordinates, min > max, a negative radius, too many boxes, a
    dimension that does not match, an argument out of range."""


class StaleIdError(InvalidInputError):
    """A world proxy id that was removed, never issued, or belongs to another world, or is 0 (the
    null id, status BP_ERR_NULL_PROXY)."""


class OutOfMemoryError(BroadphaseError, MemoryError):
    """The library could not allocate; the context or world is left usable."""


class NoBoxesError(BroadphaseError, RuntimeError):
    """A query on a context before any successful pair-finding call."""


class UnsupportedError(BroadphaseError, NotImplementedError):
    """The method is not built into this library."""


_CLASSES = {
    STATUS["BP_ERR_NOMEM"]: OutOfMemoryError,
    STATUS["BP_ERR_NO_BOXES"]: NoBoxesError,
    STATUS["BP_ERR_UNSUPPORTED"]: UnsupportedError,
    STATUS["BP_ERR_STALE"]: StaleIdError,
    STATUS["BP_ERR_NULL_PROXY"]: StaleIdError,
    STATUS["BP_ERR_DEF_NOT_INITIALISED"]: InvalidInputError,
    STATUS["BP_ERR_INVALID_ARG"]: InvalidInputError,
    STATUS["BP_ERR_NONFINITE"]: InvalidInputError,
    STATUS["BP_ERR_INVERTED_BOX"]: InvalidInputError,
    STATUS["BP_ERR_TOO_MANY"]: InvalidInputError,
    STATUS["BP_ERR_DIMENSION"]: InvalidInputError,
    STATUS["BP_ERR_NEGATIVE_RADIUS"]: InvalidInputError,
}

OK = STATUS["BP_OK"]


def status_message(status: int) -> str:
    """The library's message for a status (``bp_status_string``)."""
    return ffi.string(lib.bp_status_string(status)).decode()


def make_error(status: int, detail: str = "", row: Optional[int] = None) -> BroadphaseError:
    cls = _CLASSES.get(status, BroadphaseError)
    message = f"{status_message(status)} ({STATUS_NAME.get(status, status)})"
    if detail:
        message += f": {detail}"
    return cls(message, status, row)


def raise_status(status: int, detail: str = "", row: Optional[int] = None) -> NoReturn:
    raise make_error(status, detail, row)


def check(status: int, detail: str = "") -> None:
    """Raises for any status but BP_OK."""
    if status != OK:
        raise_status(status, detail)
