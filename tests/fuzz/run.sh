#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ (context, world, parser) for a bounded time each,
# from the repository's corpus, and fails on any finding (crash, sanitizer report, oracle
# mismatch, leak, timeout). Builds them first in build-fuzz/ with clang (warnings as errors: the
# one clang build of CI), -DBP_FUZZ=ON and
# AddressSanitizer + UndefinedBehaviorSanitizer. Without clang it says so and succeeds (the
# corpus still runs in every build as CTest fuzz.replay.*).
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 35 s; all three targets)
#
# New inputs go to a temporary directory: the corpus in the repository changes only by hand
# (a finding, once fixed, is added there as a regression input).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

secs=${1:-35}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(context world parser)

if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang not found; the libFuzzer targets are skipped (scripts/setup.sh --full installs clang)"
  exit 0
fi

probe=$(mktemp -d)
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe"/p.c
if ! clang -fsanitize=fuzzer,address "$probe"/p.c -o "$probe"/p >/dev/null 2>&1; then
  rm -rf "$probe"
  echo "fuzz: clang cannot link libFuzzer here (libclang-rt-14-dev missing?); the libFuzzer targets are skipped"
  exit 0
fi
rm -rf "$probe"

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBP_WERROR=ON -DBP_FUZZ=ON -DBP_SANITIZE=address,undefined \
  -DBP_BUILD_TOOLS=OFF -DBP_BUILD_DEMO=OFF -DBP_BUILD_PYTHON=OFF >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  echo "fuzz: $t for ${secs}s"
  if ! build-fuzz/tests/fuzz_"$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix=build-fuzz/fuzz-"$t"- "$work" tests/fuzz/corpus/"$t" >build-fuzz/fuzz-"$t".log 2>&1; then
    tail -n 40 build-fuzz/fuzz-"$t".log
    echo "fuzz: $t FOUND A DEFECT; the input is build-fuzz/fuzz-$t-* (replay: build/tests/fuzz_replay_$t FILE)"
    status=1
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' build-fuzz/fuzz-"$t".log | sed "s/^/fuzz: $t /"
  rm -rf "$work"
done
exit $status
