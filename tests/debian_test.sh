#!/usr/bin/env bash
# The Debian package (debian/): debian_test.sh SOURCE_DIR WORK_DIR C_COMPILER
# Copies the source tree (without build folders and .git) into WORK_DIR, builds the binary
# packages with `dpkg-buildpackage -us -uc -b` (no tests inside: CI runs them; two jobs; no
# debug-symbol packages), unpacks them with `dpkg -x` into a temporary root, checks what each
# package holds, and builds programs against that root: through pkg-config (shared), against
# the static library, and through CMake's find_package; then runs them and the packaged tool.
# Exit 77 (skipped) when dpkg-dev or debhelper, or a build dependency, is missing.
set -u
SRC=$1 WORK=$2 CC=$3
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
skip() {
    echo "$*: skipped"
    exit 77
}
command -v dpkg-buildpackage >/dev/null 2>&1 || skip "dpkg-buildpackage not found (Debian package dpkg-dev)"
command -v dh >/dev/null 2>&1 || skip "dh not found (Debian package debhelper)"
(cd "$SRC" && dpkg-checkbuilddeps) || skip "build dependencies of debian/control missing"

rm -rf "$WORK"
mkdir -p "$WORK/src" "$WORK/root" || fail "cannot make $WORK"
# The working tree as it is (uncommitted changes included), without builds or git data.
tar -C "$SRC" --exclude='./build*' --exclude=./.git --exclude=./debian/tmp --exclude=./out --exclude=node_modules \
    --exclude=__pycache__ -cf - . | tar -C "$WORK/src" -xf - ||
    fail "copying the source tree"

start=$SECONDS
(cd "$WORK/src" && DEB_BUILD_OPTIONS="nocheck parallel=2 noddebs" dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 ||
    { tail -40 "$WORK/build.log" >&2; fail "dpkg-buildpackage failed (log: $WORK/build.log)"; }
echo "dpkg-buildpackage -us -uc -b: $((SECONDS - start)) s"

version=$(cd "$WORK/src" && dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for pkg in libbroadphase0 libbroadphase-dev broadphase-tools; do
    deb=$WORK/${pkg}_${version}_${arch}.deb
    [ -f "$deb" ] || fail "$pkg was not built ($deb)"
    dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's#^\./#/#' >"$WORK/$pkg.files"
    dpkg -x "$deb" "$WORK/root" || fail "dpkg -x $deb"
done
has() {  # has PACKAGE PATH
    grep -qx -- "$2" "$WORK/$1.files" || fail "$1 lacks $2"
}
lib=/usr/lib/$multiarch
has libbroadphase0 "$lib/libbroadphase.so.0"
has libbroadphase0 /usr/share/doc/libbroadphase0/copyright
has libbroadphase-dev /usr/include/broadphase.h
has libbroadphase-dev "$lib/libbroadphase.a"
has libbroadphase-dev "$lib/libbroadphase.so"
has libbroadphase-dev "$lib/pkgconfig/broadphase.pc"
has libbroadphase-dev "$lib/cmake/broadphase/broadphaseConfig.cmake"
has broadphase-tools /usr/bin/broadphase
has broadphase-tools /usr/share/man/man1/broadphase.1.gz
# Private headers never ship.
[ "$(grep -c '\.h$' "$WORK/libbroadphase-dev.files")" -eq 1 ] || fail "headers other than broadphase.h in libbroadphase-dev"
dpkg-deb -f "$WORK/libbroadphase-dev_${version}_${arch}.deb" Depends | grep -q "libbroadphase0 (= $version)" ||
    fail "libbroadphase-dev does not depend on libbroadphase0 (= $version)"
dpkg-deb -f "$WORK/broadphase-tools_${version}_${arch}.deb" Depends | grep -q "libbroadphase0" ||
    fail "broadphase-tools does not depend on libbroadphase0"

root=$WORK/root
export LD_LIBRARY_PATH="$root$lib"
consumer=$SRC/tests/install
# pkg-config: the .pc file finds its prefix from its own place, so the unpacked root works.
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH="$root$lib/pkgconfig" pkg-config --cflags --libs broadphase) || fail "pkg-config"
    case "$flags" in *"-I$root/"*) ;; *) fail "pkg-config gives '$flags', not the unpacked root" ;; esac
    # shellcheck disable=SC2086
    "$CC" -std=c17 "$consumer/main.c" -o "$WORK/consumer-pc" $flags || fail "compiling with pkg-config"
    "$WORK/consumer-pc" || fail "the pkg-config consumer"
    ldd "$WORK/consumer-pc" | grep -q "$root$lib/libbroadphase.so.0" || fail "the consumer did not load the packaged library"
else
    echo "pkg-config not found: the pkg-config consumer is not built"
fi
# The static library alone (what -static users and embedded builds take).
"$CC" -std=c17 -I"$root/usr/include" "$consumer/main.c" "$root$lib/libbroadphase.a" -lm -pthread -o "$WORK/consumer-static" ||
    fail "compiling against libbroadphase.a"
"$WORK/consumer-static" || fail "the static consumer"
ldd "$WORK/consumer-static" | grep -q libbroadphase && fail "the static consumer loads a shared libbroadphase"
# CMake: find_package(broadphase) from the unpacked root.
cmake -S "$consumer" -B "$WORK/consumer-cmake" -DCMAKE_PREFIX_PATH="$root/usr" -DCMAKE_C_COMPILER="$CC" >"$WORK/cmake.log" 2>&1 &&
    cmake --build "$WORK/consumer-cmake" >>"$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log" >&2; fail "the CMake consumer"; }
"$WORK/consumer-cmake/consumer" || fail "running the CMake consumer"
# The packaged tool runs on the packaged library.
got=$(printf '0 0 1 1\n1 1 2 2\n5 5 6 6\n' | "$root/usr/bin/broadphase" pairs) || fail "the packaged broadphase"
[ "$got" = "0 1" ] || fail "the packaged broadphase printed '$got', expected '0 1'"
"$root/usr/bin/broadphase" --version | grep -qF "${version%-*}" || fail "broadphase --version is not ${version%-*}"
echo "packages $version built, unpacked and used: pkg-config, static and CMake consumers, the tool"
exit 0
