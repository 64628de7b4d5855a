#!/usr/bin/env bash
# test_install.sh BUILD_DIR SOURCE_DIR - `cmake --install` gives a package that a
# user's project finds with find_package(coproc) and with pkg-config.
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/coproc.h"
test -f "$tmp/prefix/lib/pkgconfig/coproc.pc" || test -f "$tmp"/prefix/lib/*/pkgconfig/coproc.pc

mkdir -p "$tmp/user"
cat >"$tmp/user/main.c" <<'C'
#include <coproc.h>
#include <stdio.h>
int main(void) { printf("%s\n", coproc_version_string()); return coproc_version() == COPROC_VERSION_HEX ? 0 : 1; }
C
cat >"$tmp/user/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.20)
project(user C)
find_package(coproc REQUIRED)
add_executable(user main.c)
target_link_libraries(user PRIVATE coproc::coproc)
C
cmake -S "$tmp/user" -B "$tmp/user/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/user/build" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/user/build/user"

pcdir=$(dirname "$(find "$tmp/prefix" -name coproc.pc | head -1)")
PKG_CONFIG_PATH=$pcdir cc "$tmp/user/main.c" -o "$tmp/user/pc" $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs coproc)
LD_LIBRARY_PATH=$(dirname "$pcdir") "$tmp/user/pc"
echo ok
