#!/usr/bin/env bash
# Ghosts and bytes per frame against N and the rank count (docs/mpi.md): these do not depend on
# the machine's speed or load, so they can be measured with more ranks than cores.
# usage: scripts/mpi_ghosts.sh [build dir] > table.txt
set -euo pipefail
build=${1:-build}
bench=$build/mpi/broadphase-mpi-bench
echo "scene dim N ranks own ghosts bytes imbalance"
for dim in 2 3; do
  for scene in uniform clustered; do
    for n in 10000 100000 1000000; do
      for np in 2 4 8 16; do
        for own in region index; do
          [ "$own" = index ] && [ "$n" != 100000 ] && continue
          line=$(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np "$np" \
                 "$bench" --scene "$scene" --n "$n" --dim "$dim" --frames 3 --own "$own" --quiet | tail -1)
          ghosts=$(sed -E 's/.* ([0-9.]+) ghosts.*/\1/' <<<"$line")
          bytes=$(sed -E 's/.* ([0-9.]+) bytes.*/\1/' <<<"$line")
          imb=$(sed -E 's/.*imbalance ([0-9.]+).*/\1/' <<<"$line")
          echo "$scene $dim $n $np $own $ghosts $bytes $imb"
        done
      done
    done
  done
done
