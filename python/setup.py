"""Installs the broadphase Python package: `pip install ./python` from the repository root.

The package needs the C library as a shared object. This script builds it with CMake from the
repository this folder lives in (the target broadphase_python: the library's sources compiled as
a shared library exporting only the BP_API entry points) and puts it, with a copy of
include/broadphase.h, inside the package. Set BROADPHASE_LIBRARY to the path of a
libbroadphase_python.so already built (with broadphase.h beside it) to copy that one instead, and
BROADPHASE_SOURCE_DIR to the repository root when this folder was copied elsewhere.
See docs/python.md.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("BROADPHASE_SOURCE_DIR", HERE.parent)).resolve()
LIB_NAME = {"darwin": "libbroadphase_python.dylib", "win32": "broadphase_python.dll"}.get(
    sys.platform, "libbroadphase_python.so")


def _version() -> str:
    header = ROOT / "include" / "broadphase.h"
    if header.is_file():
        m = re.search(r'#define\s+BP_VERSION_STRING\s+"([^"]+)"', header.read_text(encoding="utf-8"))
        if m:
            return m.group(1)
    return "0.0.0"


def _build_library(build_temp: Path) -> Path:
    """Builds libbroadphase_python with CMake; returns its path (broadphase.h is beside it)."""
    if not (ROOT / "CMakeLists.txt").is_file() or not (ROOT / "include" / "broadphase.h").is_file():
        raise SystemExit(
            f"broadphase: the C sources are not at {ROOT}; run `pip install ./python` from the "
            "repository, or set BROADPHASE_SOURCE_DIR (or BROADPHASE_LIBRARY, a built library)")
    if shutil.which("cmake") is None:
        raise SystemExit("broadphase: cmake is needed to build the C library (scripts/setup.sh installs it)")
    out = build_temp / "cmake"
    cfg = ["cmake", "-S", str(ROOT), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release", "-DBP_BUILD_TOOLS=OFF",
           "-DBP_BUILD_TESTS=OFF", "-DBP_BUILD_DEMO=OFF", "-DBP_BUILD_PYTHON=ON"]
    subprocess.check_call(cfg)
    subprocess.check_call(["cmake", "--build", str(out), "--target", "broadphase_python", "--parallel", "2"])
    return out / "python" / LIB_NAME


class BuildPyWithLibrary(build_py):
    """build_py, then the shared library and its header into the package."""

    def run(self) -> None:
        super().run()
        prebuilt = os.environ.get("BROADPHASE_LIBRARY")
        if prebuilt:
            lib = Path(prebuilt).resolve()
            if lib.is_dir():
                lib = lib / LIB_NAME
        else:
            build_temp = Path(self.get_finalized_command("build").build_temp).resolve()
            lib = _build_library(build_temp)
        header = lib.parent / "broadphase.h"
        for f in (lib, header):
            if not f.is_file():
                raise SystemExit(f"broadphase: {f} is missing")
        dest = Path(self.build_lib) / "broadphase"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dest / LIB_NAME)
        shutil.copy2(header, dest / "broadphase.h")


class BinaryDistribution(Distribution):
    """The wheel carries a compiled library: platform-specific, installed as such."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    name="broadphase",
    version=_version(),
    description="Every overlapping pair among many boxes, from numpy arrays (broadphase C library)",
    long_description=(HERE.parent / "docs" / "python.md").read_text(encoding="utf-8")
    if (HERE.parent / "docs" / "python.md").is_file() else "",
    long_description_content_type="text/markdown",
    packages=["broadphase"],
    package_data={"broadphase": ["py.typed"]},
    python_requires=">=3.8",
    install_requires=["numpy", "cffi"],
    cmdclass={"build_py": BuildPyWithLibrary},
    distclass=BinaryDistribution,
    zip_safe=False,
)
