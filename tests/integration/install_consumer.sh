#!/usr/bin/env bash
# The install tree serves an embedding project from anywhere: `cmake --install` to a fresh
# prefix, then a consumer in a fresh directory builds and runs against it twice, through
# find_package(weft) with CMAKE_PREFIX_PATH and through pkg-config with PKG_CONFIG_PATH.
# Usage: install_consumer.sh CMAKE BUILD_DIR VERSION
set -euo pipefail
CMAKE=$1
BUILD=$2
VERSION=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
"$CMAKE" --install "$BUILD" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

mkdir -p "$work/consumer"
cat > "$work/consumer/main.c" <<'C'
#include <stdio.h>
#include <weft/weft.h>
int main(void) {
  printf("weft %s %d\n", weft_version_string(), weft_version_code());
  return 0;
}
C
cat > "$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(weft_consumer C)
find_package(weft REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE weft::weft)
CM

# 1. CMake package
"$CMAKE" -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "find_package(weft) with CMAKE_PREFIX_PATH"; }
"$CMAKE" --build "$work/consumer/build" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the CMake consumer"; }
out=$("$work/consumer/build/consumer")
[[ $out == "weft $VERSION "* ]] || fail "CMake consumer printed '$out'"

# 2. pkg-config: every path it gives lies under the new prefix
# Without pkg-config the test reports itself skipped (exit 77, ctest's SKIP_RETURN_CODE), never
# passed: CI installs it (scripts/install-deps.sh) and checks that it is there.
if ! command -v pkg-config > /dev/null; then
  echo "SKIP: pkg-config is not installed: the pkg-config way is not checked"
  exit 77
fi
export PKG_CONFIG_PATH="$(ls -d "$prefix"/lib*/pkgconfig | head -1)"
real=$(realpath "$prefix")
[ "$(pkg-config --modversion weft)" = "$VERSION" ] || fail "pkg-config --modversion: $(pkg-config --modversion weft)"
[ "$(pkg-config --variable=prefix weft)" = "$prefix" ] || fail "pkg-config prefix is $(pkg-config --variable=prefix weft), not $prefix"
for var in prefix libdir includedir; do
  dir=$(pkg-config --variable=$var weft)
  case "$(realpath "$dir")" in "$real"*) ;; *) fail "pkg-config $var is $dir, not under $prefix" ;; esac
done
# A second install from the same build to another prefix names that prefix (nothing stale).
"$CMAKE" --install "$BUILD" --prefix "$work/prefix2" > "$work/install2.log" || { cat "$work/install2.log"; fail "cmake --install (second prefix)"; }
p2=$(PKG_CONFIG_PATH="$(ls -d "$work/prefix2"/lib*/pkgconfig | head -1)" pkg-config --variable=prefix weft)
[ "$p2" = "$work/prefix2" ] || fail "after a second install, pkg-config prefix is $p2, not $work/prefix2"
libdir=$(pkg-config --variable=libdir weft)
# shellcheck disable=SC2046  # pkg-config's flags are meant to be split
cc "$work/consumer/main.c" $(pkg-config --cflags --libs weft) -o "$work/consumer/pc-consumer" ||
  fail "building with pkg-config --cflags --libs weft"
out=$(LD_LIBRARY_PATH="$libdir" "$work/consumer/pc-consumer")
[[ $out == "weft $VERSION "* ]] || fail "pkg-config consumer printed '$out'"
echo "PASS"
