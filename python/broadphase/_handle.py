"""The life cycle shared by Context and World: one C object behind a lock, freed once."""

from __future__ import annotations

from typing import Any, TypeVar

from ._ffi import ffi

_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """Owns ``_ptr`` (a cffi pointer with a destructor attached by ``ffi.gc``) under ``_lock``.

    A subclass sets ``_ptr`` first thing in ``__init__`` (so a failed constructor is closed) and
    ``_lock`` once the object is made, and names itself in ``_noun`` for the closed error.
    """

    _ptr: Any
    _lock: Any
    _noun = "object"

    def _release(self) -> None:
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if self._ptr is not None:
                ffi.release(self._ptr)
                self._ptr = None
                self._released()

    def _released(self) -> None:
        """Called under the lock once the C object is freed."""

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._release()

    def _live(self) -> Any:
        if self._ptr is None:
            raise ValueError(f"the {self._noun} is closed")
        return self._ptr
