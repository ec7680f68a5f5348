#!/usr/bin/env bash
# Builds the browser demo (docs/web.md): the library, the scene generator and the demo's
# simulation compiled to WebAssembly with emscripten (Debian's `emscripten` package), plus the
# page, into OUTDIR (default build-web/), a folder any static web server serves:
#   scripts/build_web.sh && python3 -m http.server -d build-web 8000   # then http://localhost:8000/
# Objects are rebuilt only when a source or header is newer (two compilers at once), so a second
# run is quick. Environment: EMCC (default emcc), BP_WEB_OPT (default -O2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build-web}
emcc=${EMCC:-emcc}
read -r -a opt <<<"${BP_WEB_OPT:--O2}"   # words: e.g. BP_WEB_OPT="-O3 -msimd128"
command -v "$emcc" >/dev/null 2>&1 || { echo "build_web.sh: emcc not found (apt-get install emscripten)" >&2; exit 2; }
# Debian's emcc runs its JS optimizer (-O2) on the system's node modules (acorn).
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
mkdir -p "$out/obj"
out=$(cd "$out" && pwd)

sources=("$root"/src/*.c "$root/bench/scene.c" "$root/demo/demo_sim.c" "$root/web/web.c")
headers=("$root"/src/*.h "$root/include/broadphase.h" "$root/bench/scene.h" "$root/demo/demo_sim.h")
newest_header=$(ls -t "${headers[@]}" | head -1)
# -DBP_STATIC: no visibility attributes; workers stay 1 (no threads in the page), so pthreads
# are only linked, never started.
cflags=(-std=c17 "${opt[@]}" -Wall -Wextra -Wpedantic -ffp-contract=off -DBP_STATIC -DBP_BUILDING
        -I"$root/include" -I"$root/src" -I"$root/bench" -I"$root/demo")
# Objects made with other flags are all stale.
flags_changed=false
[ "$(cat "$out/obj/flags" 2>/dev/null)" = "${cflags[*]}" ] || flags_changed=true
stale=()
objects=()
for s in "${sources[@]}"; do
  o="$out/obj/$(basename "$(dirname "$s")")_$(basename "$s" .c).o"
  objects+=("$o")
  if $flags_changed || [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$newest_header" -nt "$o" ] || [ "$0" -nt "$o" ]; then
    stale+=("$s" "$o")
  fi
done
if [ ${#stale[@]} -gt 0 ]; then
  # Two compilers at once (flags through the environment: the paths hold no spaces).
  export BP_EMCC="$emcc" BP_CFLAGS="${cflags[*]}"
  printf '%s\n' "${stale[@]}" | xargs -d '\n' -n 2 -P 2 sh -c 'echo "emcc ${1##*/}" && $BP_EMCC $BP_CFLAGS -c "$1" -o "$2"' sh
  # Every object made, and newer than its source.
  for ((k = 1; k < ${#stale[@]}; k += 2)); do
    [ -f "${stale[k]}" ] && [ "${stale[k]}" -nt "${stale[k-1]}" ] || { echo "build_web.sh: compile failed" >&2; exit 1; }
  done
fi
printf '%s' "${cflags[*]}" >"$out/obj/flags"
"$emcc" "${opt[@]}" "${objects[@]}" -o "$out/broadphase.js" \
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sMODULARIZE=1 -sEXPORT_NAME=BroadphaseModule \
  -sEXPORTED_FUNCTIONS=_malloc,_free \
  -sEXPORTED_RUNTIME_METHODS=ccall,cwrap,UTF8ToString,HEAPF64,HEAPF32,HEAPU8
cp "$root/web/index.html" "$root/web/web.js" "$out/"
echo "build_web.sh: built $out (serve it: python3 -m http.server -d $out 8000)"
