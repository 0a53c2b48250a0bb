#!/usr/bin/env bash
# compile_with_nvcc.sh NVCC NCCL_HOME MPI_INCLUDE MPI_LIB OUTDIR: builds NCCL's two documented
# program shapes (examples/*.cu, device buffers) with nvcc against weft's nccl.h and links them
# with weft's libnccl.so, as `nvcc -I$NCCL_HOME/include -L$NCCL_HOME/lib -lnccl` would.
set -euo pipefail
nvcc=$1 home=$2 mpi_inc=$3 mpi_lib=$4 out=$5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# One architecture keeps this quick; the programs have no kernels of their own.
"$nvcc" -arch=sm_80 -I"$home/include" -L"$home/lib" -Xlinker -rpath -Xlinker "$home/lib" \
  "$here/one_process_many_devices.cu" -lnccl -o "$out/one_process_many_devices"
"$nvcc" -arch=sm_80 -I"$home/include" -I"$mpi_inc" -L"$home/lib" -Xlinker -rpath -Xlinker "$home/lib" \
  "$here/one_device_per_process.cu" -lnccl "$mpi_lib" -o "$out/one_device_per_process"
# They must have been compiled against weft's header: it defines WEFT_NCCL.
printf '#include <nccl.h>\n#ifndef WEFT_NCCL\n#error not weft nccl.h\n#endif\n' > "$out/which.cu"
"$nvcc" -I"$home/include" -E "$out/which.cu" -o /dev/null
for p in one_process_many_devices one_device_per_process; do
  if ! readelf -d "$out/$p" | grep -q 'libnccl.so.2'; then
    echo "FAIL: $p does not need libnccl.so.2" >&2
    exit 1
  fi
done
echo "OK: both programs compiled with $("$nvcc" --version | tail -1) against $home/include/nccl.h and linked with its libnccl"
