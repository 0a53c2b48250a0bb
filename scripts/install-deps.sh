#!/usr/bin/env bash
# Installs weft's build and test dependencies on Debian 12 (needs root or sudo).
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config ccache git
  libgtest-dev libgmock-dev libbenchmark-dev
  libpugixml-dev libyaml-cpp-dev libcli11-dev
  libhwloc-dev hwloc
  libfabric-dev libfabric-bin
  libibverbs-dev ibverbs-providers librdmacm-dev rdma-core
  clang libclang-rt-14-dev
  iperf3 iproute2 nftables pciutils valgrind
  graphviz
  openmpi-bin libopenmpi-dev libgloo-dev
  # PyTorch 1.13 (CPU) for the c10d backend in integrations/torch and its tests (Gloo inside)
  python3-dev python3-torch libtorch-dev pybind11-dev
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "all dependencies are installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
echo "installing: ${missing[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
