"""Loading the C library: cffi in ABI mode, declarations read from the library's own header.

The shared library (libbroadphase_python.so) and a copy of include/broadphase.h sit side by side:
in the package folder once installed (``pip install ./python`` puts them there), or in the build
tree's python/ folder, named by the environment variable BROADPHASE_LIBRARY (what the tests use).
The header is parsed at import, so the struct layouts cffi uses are always the ones the library
was built with; nothing is declared twice.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import cffi

_LIB_NAMES = {
    "darwin": "libbroadphase_python.dylib",
    "win32": "broadphase_python.dll",
}
LIB_NAME = _LIB_NAMES.get(sys.platform, "libbroadphase_python.so")
HEADER_NAME = "broadphase.h"


def _locate() -> Path:
    env = os.environ.get("BROADPHASE_LIBRARY")
    if env:
        path = Path(env)
        if path.is_dir():
            path = path / LIB_NAME
        if not path.is_file():
            raise ImportError(f"broadphase: BROADPHASE_LIBRARY={env!r} names no library file")
        return path
    path = Path(__file__).resolve().parent / LIB_NAME
    if not path.is_file():
        raise ImportError(
            f"broadphase: {LIB_NAME} is not in {path.parent}: install the package with "
            "`pip install ./python` (which builds it), or build the CMake target broadphase_python "
            "and set BROADPHASE_LIBRARY to the library's path (docs/python.md)"
        )
    return path


def _declarations(header: str) -> str:
    """The header as cffi's cdef accepts it: directives dropped, C++ guards skipped, BP_API gone,
    `static inline` helpers dropped (they have no symbol in the library to call)."""
    out = []
    skipping = []  # one flag per open #if: True inside `#ifdef __cplusplus`
    depth = 0  # braces open in a `static inline` definition being dropped
    for line in header.splitlines():
        s = line.strip()
        if s.startswith("#"):
            directive = s[1:].strip()
            if directive.startswith("if"):
                skipping.append("__cplusplus" in directive)
            elif directive.startswith("endif"):
                skipping.pop()
            continue
        if any(skipping):
            continue
        if depth or s.startswith("static inline"):
            depth += s.count("{") - s.count("}")
            continue
        out.append(re.sub(r"\bBP_API\b", "", line))
    return "\n".join(out)


def _max_boxes(header: str) -> int:
    m = re.search(r"#define\s+BP_MAX_BOXES\s+\(\(size_t\)1\s*<<\s*(\d+)\)", header)
    if not m:
        raise ImportError("broadphase: BP_MAX_BOXES not found in the header")
    return 1 << int(m.group(1))


LIB_PATH = _locate()
_header_path = LIB_PATH.parent / HEADER_NAME
if not _header_path.is_file():
    raise ImportError(f"broadphase: {HEADER_NAME} is missing beside {LIB_PATH}")
_header = _header_path.read_text(encoding="utf-8")

ffi = cffi.FFI()
ffi.cdef(_declarations(_header))
# Calls through cffi release the GIL for their duration: other Python threads run meanwhile.
lib = ffi.dlopen(str(LIB_PATH))

MAX_BOXES = _max_boxes(_header)
VERSION = re.search(r'#define\s+BP_VERSION_STRING\s+"([^"]+)"', _header).group(1)  # type: ignore[union-attr]

# Status values by name (BP_OK, BP_ERR_NOMEM, ...) and back, from the header's enum.
STATUS = dict(ffi.typeof("bp_status").relements)
STATUS_NAME = {v: k for k, v in STATUS.items()}


def has_symbol(name: str) -> bool:
    """Whether the loaded library defines `name` (a library older than the header may not)."""
    try:
        getattr(lib, name)
    except AttributeError:
        return False
    return True
