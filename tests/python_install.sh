#!/usr/bin/env bash
# `pip install` of the Python package into a fresh virtual environment, then a use of it from
# elsewhere, as a user would. usage: python_install.sh PYTHON SOURCE_DIR WORK_DIR [LIBRARY]
# With LIBRARY, setup.py copies that libbroadphase_python; without, it builds it with CMake.
set -euo pipefail
py=$1 src=$2 work=$3 lib=${4:-}
rm -rf "$work"
mkdir -p "$work"
# A copy of python/: pip builds in the package's own folder (build/, *.egg-info beside setup.py),
# and a test must not write into the source tree. BROADPHASE_SOURCE_DIR says where the C sources are.
cp -r "$src/python" "$work/python"
rm -rf "$work/python/build" "$work/python/"*.egg-info
"$py" -m venv --system-site-packages "$work/venv"
unset BROADPHASE_LIBRARY PYTHONPATH
export BROADPHASE_SOURCE_DIR=$src
if [ -n "$lib" ]; then
  BROADPHASE_LIBRARY=$lib "$work/venv/bin/python" -m pip install -q --no-index --no-build-isolation "$work/python"
else
  "$work/venv/bin/python" -m pip install -q --no-index --no-build-isolation "$work/python"
fi
unset BROADPHASE_SOURCE_DIR
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import pathlib, sys
import numpy as np
import broadphase

venv = pathlib.Path(sys.argv[1]).resolve()
pkg = pathlib.Path(broadphase.__file__).resolve().parent
assert venv in pkg.parents, f"imported from {pkg}, not from the virtual environment"
for name in ("py.typed", "broadphase.h", "libbroadphase_python.so"):
    assert (pkg / name).is_file(), f"{name} not installed"
boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]])
assert broadphase.pairs(boxes).tolist() == [[0, 1]]
assert broadphase.circle_pairs(np.array([[0.0, 0.0], [2.0, 0.0]]), 1.0).tolist() == [[0, 1]]
print(f"broadphase {broadphase.__version__} installed in {pkg}: ok")
PY
