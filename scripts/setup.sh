#!/usr/bin/env bash
# Installs what building and testing broadphase needs, on Debian 12 (bookworm), with apt-get,
# and only what is missing: fast and silent when everything is there, so the README and CI can
# run it every time. Works as root, or through sudo when not root; never prompts.
set -euo pipefail

# ---- Packages the build uses today -------------------------------------------------------------
packages=(
  build-essential   # C compiler, make
  cmake             # the build (3.16 or newer)
  pkg-config        # the install test's pkg-config consumer
)

packages+=(
  libsdl2-dev       # demo/ (BP_BUILD_DEMO finds SDL2; tests run it under SDL's dummy video driver)
  libstb-dev        # demo screenshots (stb_image_write)
  libchipmunk-dev   # benchmark peer: Chipmunk2D's spatial indexes
  libbox2d-dev      # benchmark peer: Box2D 2.4's dynamic tree
  libbullet-dev     # benchmark peer: Bullet's btDbvtBroadphase, btAxisSweep3
  libcgal-dev       # benchmark peer: CGAL's box_intersection_d
  g++               # the peers' adapters are C++
  gnuplot-nox       # broadphase bench --out: plots of the timing table
)

# ---- Optional packages: only with --full (the test command and .ci/run pass it) ----------------
# Heavy packages that only some tests and tools need (MPI, emscripten, chromium, Python's
# scientific stack, clang for fuzzing); the quick benchmark command does not install them. Each
# block says what uses it.
full=false
for arg in "$@"; do
  case "$arg" in
    --full) full=true ;;
    -h|--help) echo "usage: scripts/setup.sh [--full]   (--full: also the optional packages the whole test suite uses)"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
optional=()
optional+=(
  python3-numpy     # python/: the broadphase package's arrays (python/tests, python/bench.py)
  python3-cffi      # python/: loads libbroadphase_python (cffi ABI mode, no compiler at import)
  python3-pytest    # python/tests, run by CTest (tests/python.cmake)
  python3-venv      # tests/python_install.sh: `pip install ./python` into a fresh environment
  python3-pip       #   (pip itself; python3-setuptools and python3-wheel come with it)
  python3-setuptools
  python3-wheel
  python3-scipy     # python/bench.py: cKDTree.query_pairs, a peer
  python3-shapely   # python/bench.py: shapely's STRtree (Debian 12: shapely 1.8), a peer
  python3-rtree     # python/bench.py: rtree (libspatialindex), a peer
  emscripten        # scripts/build_web.sh: the browser demo (web/, test web.browser)
  chromium          # test web.browser: the demo in headless Chromium (playwright-core from npm)
)
# Issue #19, what adopters expect (one block of its own, so parallel work does not collide):
optional+=(
  dpkg-dev          # tests/debian_test.sh: dpkg-buildpackage builds debian/ (test debian.package)
  debhelper         #   (dh, debhelper-compat 13, as debian/control asks)
  groff-base        # tests/man_test.sh: the manual pages format without warnings (tests man.*)
  time              # tests/cli_test.sh unsorted_memory: GNU time's peak resident memory
)
# Issue #18, MPI past one machine:
optional+=(
  libopenmpi-dev    # mpi/: broadphase_mpi, broadphase-mpi-bench and tests/test_mpi (CMake finds MPI)
  openmpi-bin       #   mpirun, which runs the MPI tests with 1 to 4 ranks (tests/mpi.cmake)
)
# Issue #17, fuzzing:
optional+=(
  clang             # tests/fuzz/run.sh (.ci/run): the libFuzzer targets (-DBP_FUZZ=ON, clang only)
  libclang-rt-14-dev  #   and libFuzzer's and the sanitizers' runtimes for it (only recommended by clang)
)
# Issue #35, the source tree's structure:
optional+=(
  universal-ctags   # scripts/arch_check.py (test arch.limits): functions' lengths, who calls whom
)

if $full; then
  packages+=("${optional[@]}")
  # npm: test web.browser fetches playwright-core with it. Only when no npm is on the PATH: a
  # nodejs from NodeSource carries its own npm and conflicts with Debian's package.
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  # Not Debian: say what is needed and carry on if the tools are there anyway.
  for tool in cc cmake pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || {
      echo "setup.sh: not a Debian system and '$tool' is missing; install: ${packages[*]}" >&2
      exit 1
    }
  done
  echo "setup.sh: not a Debian system; cc, cmake and pkg-config found"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all packages present (${packages[*]})"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo -n)   # -n: fail rather than wait for a password nobody will type
else
  echo "setup.sh: missing ${missing[*]}, and neither root nor sudo to install them" >&2
  exit 1
fi

echo "setup.sh: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
