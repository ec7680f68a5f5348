#!/usr/bin/env bash
# Line coverage by each fuzz target's corpus (issue #17): of the library (src/), and of the
# CLI's parsers for fuzz_parser. Builds the fuzz_replay_* executables with clang's source-based
# coverage (-fprofile-instr-generate -fcoverage-mapping, Debug) in build-cov/, replays
# tests/fuzz/corpus/<target>/ (or the directories given) and prints `llvm-cov report`.
#
#   tests/fuzz/coverage.sh [--portable|--avx2] [TARGET [DIR...]]     (default: context, world, parser)
#
# The SIMD loops are chosen at run time, so an AVX-512 machine runs only its own: --portable
# builds without the AVX2/AVX-512 loops (as .ci/run's portable build), in build-cov-portable/,
# to run the SSE2 and scalar ones; --avx2 without the AVX-512 loops, in build-cov-avx2/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

dir=build-cov
# The fuzz build's thresholds (CMakeLists.txt, BP_FUZZ), so that the world's parallel passes
# count as the fuzzer reaches them.
flags="-fprofile-instr-generate -fcoverage-mapping -DWORLD_PROBE_GRAIN=2 -DWORLD_PARALLEL_MIN=1"
if [ "${1:-}" = --portable ]; then
  dir=build-cov-portable
  flags="$flags -DBP_NO_AVX2 -DBP_NO_AVX512"
  shift
elif [ "${1:-}" = --avx2 ]; then
  dir=build-cov-avx2
  flags="$flags -DBP_NO_AVX512"
  shift
fi
targets=("${1:-context}")
[ $# -gt 0 ] || targets=(context world parser)
[ $# -gt 0 ] && shift
dirs=("$@")

for tool in clang llvm-profdata llvm-cov; do
  command -v $tool >/dev/null || { echo "coverage: $tool not found (scripts/setup.sh --full installs clang and llvm)"; exit 1; }
done

CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" -DBP_BUILD_TOOLS=OFF \
  -DBP_BUILD_DEMO=OFF -DBP_BUILD_PYTHON=OFF -DBP_BUILD_MPI=OFF >/dev/null
cmake --build "$dir" -j2 --target "${targets[@]/#/fuzz_replay_}" >/dev/null

for t in "${targets[@]}"; do
  in=("${dirs[@]}")
  [ ${#in[@]} -gt 0 ] || in=(tests/fuzz/corpus/"$t")
  rm -f "$dir"/cov-"$t".profraw
  LLVM_PROFILE_FILE="$dir/cov-$t.profraw" "$dir"/tests/fuzz_replay_"$t" "${in[@]}" >/dev/null
  llvm-profdata merge -sparse "$dir"/cov-"$t".profraw -o "$dir"/cov-"$t".profdata
  echo "coverage: fuzz_$t from ${in[*]} ($dir)"
  files=(src/*.c)
  [ "$t" != parser ] || files=(tools/input.c tools/world_script.c)  # the parser target's code under test
  llvm-cov report "$dir"/tests/fuzz_replay_"$t" -instr-profile="$dir"/cov-"$t".profdata "${files[@]}"
done
