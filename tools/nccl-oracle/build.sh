#!/usr/bin/env bash
# Builds nccl-oracle: NCCL's own topology, path and search code (src/graph/{xml,topo,paths,search}.cc
# of an NCCL 2.28.9 source tree you provide) linked with this folder's driver and shims, run on
# the CPU with no GPU. Nothing of NCCL is kept in weft; see README.md.
#   usage: tools/nccl-oracle/build.sh NCCL_SRC [OUT_DIR]     (OUT_DIR defaults to build/nccl-oracle)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NCCL_SRC=${1:?usage: build.sh NCCL_SRC [OUT_DIR] (an NVIDIA/nccl checkout at v2.28.9)}
OUT=${2:-build/nccl-oracle}
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
for f in src/graph/xml.cc src/graph/topo.cc src/graph/paths.cc src/graph/search.cc src/graph/topo.h \
         src/graph/xml.h src/include/graph.h src/include/plugin/nccl_net.h src/include/plugin/net/net_v11.h; do
  [ -f "$NCCL_SRC/$f" ] || { echo "build.sh: $NCCL_SRC/$f not found: NCCL_SRC must be an NCCL source tree" >&2; exit 2; }
done
[ -f "$CUDA_INC/nccl.h" ] || [ -f "$NCCL_SRC/build/include/nccl.h" ] ||
  { echo "build.sh: no nccl.h in $CUDA_INC (set CUDA_INC) nor in $NCCL_SRC/build/include" >&2; exit 2; }
mkdir -p "$OUT/src" "$OUT/inc/plugin/net" "$OUT/obj"
cp "$NCCL_SRC"/src/graph/{xml.cc,topo.cc,paths.cc,search.cc,topo.h,xml.h} "$OUT/src/"
cp "$NCCL_SRC/src/include/graph.h" "$OUT/inc/"
cp "$NCCL_SRC/src/include/plugin/nccl_net.h" "$OUT/inc/plugin/"
cp "$NCCL_SRC/src/include/plugin/net/net_v11.h" "$OUT/inc/plugin/net/"
cp "$HERE"/inc/*.h "$OUT/inc/"
# NCCL's connect phase (ORACLE_CONNECT=1, connect_driver.cc) when the tree has its three files.
CONNECT=1
for f in connect.cc trees.cc rings.cc; do [ -f "$NCCL_SRC/src/graph/$f" ] || CONNECT=0; done
rm -f "$OUT"/obj/{connect,trees,rings,connect_driver}.o
[ $CONNECT = 1 ] && cp "$NCCL_SRC"/src/graph/{connect.cc,trees.cc,rings.cc} "$OUT/src/"
# NCCL's tuning model (ORACLE_TUNE=1, tune_driver.cc) when the tree also has tuning.cc and the tuner
# plugin's v5 types; the shim sees the latter and gives the communicator the tuning fields.
TUNING=$CONNECT
for f in src/graph/tuning.cc src/include/plugin/tuner/tuner_v5.h; do [ -f "$NCCL_SRC/$f" ] || TUNING=0; done
rm -rf "$OUT/inc/plugin/tuner" "$OUT"/obj/{tuning,tune_driver}.o
if [ $TUNING = 1 ]; then
  mkdir -p "$OUT/inc/plugin/tuner"
  cp "$NCCL_SRC/src/graph/tuning.cc" "$OUT/src/"
  cp "$NCCL_SRC/src/include/plugin/tuner/tuner_v5.h" "$OUT/inc/plugin/tuner/"
fi
# Every internal header the graph code includes resolves to the shim.
for h in core comm net channel transport device nvmlwrap coll_net cpuset bootstrap debug checks alloc param \
         env nccl_tuner trees rings utils; do
  echo '#include "shim.h"' > "$OUT/inc/$h.h"
done
python3 "$HERE/patch.py" "$OUT"
# -O3, as NCCL's release build (makefiles/common.mk), so that the bench can time it fairly.
FLAGS=(-std=c++17 -O3 -g -w -I"$OUT/inc" -I"$OUT/src" -I"$CUDA_INC")
[ -f "$NCCL_SRC/build/include/nccl.h" ] && FLAGS+=(-I"$NCCL_SRC/build/include")
for f in xml topo paths search; do
  echo "compiling $f.cc"
  g++ "${FLAGS[@]}" -c "$OUT/src/$f.cc" -o "$OUT/obj/$f.o"
done
if [ $CONNECT = 1 ]; then
  for f in connect trees rings; do
    echo "compiling $f.cc"
    g++ "${FLAGS[@]}" -c "$OUT/src/$f.cc" -o "$OUT/obj/$f.o"
  done
  if [ $TUNING = 1 ]; then
    echo "compiling tuning.cc"
    g++ "${FLAGS[@]}" -c "$OUT/src/tuning.cc" -o "$OUT/obj/tuning.o"
  else
    echo "no src/graph/tuning.cc or src/include/plugin/tuner/tuner_v5.h in $NCCL_SRC: built without ORACLE_TUNE"
  fi
  FLAGS+=(-DORACLE_WITH_CONNECT)
  g++ "${FLAGS[@]}" -c "$HERE/connect_driver.cc" -o "$OUT/obj/connect_driver.o"
  g++ "${FLAGS[@]}" -c "$HERE/tune_driver.cc" -o "$OUT/obj/tune_driver.o"
else
  echo "no src/graph/{connect,trees,rings}.cc in $NCCL_SRC: built without ORACLE_CONNECT"
fi
g++ "${FLAGS[@]}" -c "$HERE/driver.cc" -o "$OUT/obj/driver.o"
g++ -o "$OUT/nccl-oracle" "$OUT"/obj/*.o
echo "built $OUT/nccl-oracle"
