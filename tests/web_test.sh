#!/usr/bin/env bash
# The browser demo's test (CTest `web.browser`, docs/web.md): builds web/ with emscripten into
# the build folder, computes the native pair count of the seed scene at frame K (the scene's
# boxes from bp_web_boxes, counted by the native `broadphase pairs`), and runs tests/web_test.js
# in headless Chromium through playwright-core. Skips (exit 77) when emcc, node or Chromium is
# missing, or when playwright-core is not installed and npm cannot fetch it (offline).
# usage: web_test.sh SOURCE_DIR BUILD_DIR BROADPHASE_TOOL BP_WEB_BOXES
set -euo pipefail
src=$1 build=$2 tool=$3 boxes=$4
skip() { echo "web.browser: skipped: $*"; exit 77; }
command -v emcc >/dev/null 2>&1 || skip "emcc not found (apt-get install emscripten; scripts/setup.sh --full)"
command -v node >/dev/null 2>&1 || skip "node not found"
chrome=""
# Debian's /usr/bin/chromium is a shell wrapper; the browser itself is under /usr/lib/chromium.
for c in /usr/lib/chromium/chromium "$(command -v chromium || true)" "$(command -v chromium-browser || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then chrome=$c; break; fi
done
[ -n "$chrome" ] || skip "chromium not found (apt-get install chromium; scripts/setup.sh --full)"

# playwright-core in web/node_modules (ignored by git), fetched from npm once.
pw=$src/web/node_modules
if [ ! -f "$pw/playwright-core/package.json" ]; then
  command -v npm >/dev/null 2>&1 || skip "playwright-core not installed and no npm"
  echo "web.browser: installing playwright-core from npm into $pw"
  timeout 120 npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$src/web" playwright-core >/dev/null 2>&1 ||
    skip "playwright-core not installed and npm could not fetch it (offline?)"
fi

"$src/scripts/build_web.sh" "$build/web"

scene=seed n=500 k=40
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$boxes" $scene $n 1 $k >"$tmp/boxes.txt"
"$tool" pairs "$tmp/boxes.txt" >"$tmp/pairs.txt"
expected=$(wc -l <"$tmp/pairs.txt")
[ "$expected" -gt 0 ] || { echo "web.browser: the native count is 0: no test" >&2; exit 1; }
echo "web.browser: native broadphase pairs: $expected at frame $k of $scene, N = $n"
node "$src/tests/web_test.js" "$pw" "$build/web" "$chrome" $scene $n $k "$expected" "$build/web_screenshot.png"
