#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in BUILD_DIR and runs each for SECONDS seconds,
# seeded with the corpus topologies when ../shared/corpus exists (XML targets) and with the
# YAML policies of tests/data/config and examples (YAML targets).
set -euo pipefail
BUILD=${1:-build/fuzz}
SECONDS_PER_TARGET=${2:-20}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${WEFT_CORPUS_DIR:-$ROOT/../shared/corpus}
CC=clang CXX=clang++ cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WITH_CUDA=OFF \
  -DWEFT_BUILD_FUZZERS=ON -DWEFT_BUILD_BENCH=OFF -DWEFT_WITH_IB=OFF -DWEFT_WITH_OFI=OFF >/dev/null
targets=$(cmake --build "$BUILD" --target help | sed -n 's/^\(weft_fuzz_[a-z0-9_]*\):.*/\1/p' | sort -u)
if [ -z "$targets" ]; then echo "no fuzz targets"; exit 0; fi
for t in $targets; do
  cmake --build "$BUILD" --target "$t" >/dev/null
  seeds="$BUILD/seeds-$t"
  mkdir -p "$seeds"
  if [ -d "$ROOT/tests/fuzz/seeds/$t" ]; then cp -r "$ROOT/tests/fuzz/seeds/$t/." "$seeds/"; fi
  case "$t" in
    *xml*) if [ -d "$CORPUS/topologies" ]; then find "$CORPUS/topologies" -name '*.xml' -exec cp {} "$seeds/" \; ; fi ;;
    *yaml*) find "$ROOT/tests/data/config" "$ROOT/examples" -maxdepth 1 -name '*.yaml' -exec cp {} "$seeds/" \; ;;
  esac
  echo "fuzzing $t for ${SECONDS_PER_TARGET}s"
  "$BUILD/tests/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -artifact_prefix="$BUILD/" -print_final_stats=1 "$seeds" 2>&1 | tail -12
done
