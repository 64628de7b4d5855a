#!/usr/bin/env bash
# mpi_install.sh BUILD_DIR SOURCE_DIR - the installed CMake package gives
# coproc::coproc_mpi (find_package(coproc REQUIRED COMPONENTS mpi)) where coproc was
# built with MPI: a user's program links it and opens a runtime per rank under
# mpirun -np 2. 77 (skipped) where MPI was not found at configure time.
set -eu
build=$1
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cfg=$(find "$tmp/prefix" -name coprocMpiTargets.cmake | head -1)
[ -n "$cfg" ] || { echo "skipped: coproc was built without MPI (no coproc_mpi installed)"; exit 77; }
test -f "$tmp/prefix/include/coproc/mpi.h"

mkdir -p "$tmp/user"
cat >"$tmp/user/main.c" <<'C'
#include <coproc/mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    coproc_mpi *m = NULL;
    coproc_status s = coproc_mpi_open(MPI_COMM_WORLD, NULL, &m);
    int rc = s == COPROC_OK ? 0 : s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE ? 77 : 1;
    if (s == COPROC_OK)
        printf("rank %d of %d: %d device(s)\n", coproc_mpi_rank(m), coproc_mpi_size(m),
               coproc_device_count(coproc_mpi_runtime(m)));
    else
        printf("coproc_mpi_open: %s: %s\n", coproc_status_name(s), coproc_mpi_errmsg(m));
    coproc_mpi_close(m);
    MPI_Finalize();
    return rc;
}
C
cat >"$tmp/user/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.20)
project(user C)
find_package(coproc REQUIRED COMPONENTS mpi)
add_executable(user main.c)
target_link_libraries(user PRIVATE coproc::coproc_mpi coproc::coproc)
C
cmake -S "$tmp/user" -B "$tmp/user/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/user/build" >/dev/null

# Without the component, a package without MPI still configures (the component is optional).
sed -i 's/ COMPONENTS mpi//; s/coproc::coproc_mpi //; s/^add_executable.*/add_executable(user0 main0.c)/; s/(user PRIVATE/(user0 PRIVATE/' "$tmp/user/CMakeLists.txt"
echo 'int main(void) { return 0; }' >"$tmp/user/main0.c"
cmake -S "$tmp/user" -B "$tmp/user/build0" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null

export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 POCL_MAX_PTHREAD_COUNT=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
xs=()
for v in COPROC_CACHE_DIR COPROC_CALIBRATE POCL_MAX_PTHREAD_COUNT; do
    [ -n "${!v+x}" ] && xs+=(-x "$v")
done
LD_LIBRARY_PATH="$tmp/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 120 mpirun "${root[@]}" --oversubscribe -x LD_LIBRARY_PATH "${xs[@]}" \
    -np 2 "$tmp/user/build/user"
echo ok
