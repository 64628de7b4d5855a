#!/usr/bin/env bash
# The README's two commands, on a fresh Debian 12 machine (as root) or any machine that
# already has the dependencies:
#   ./build.sh demo   install what is missing, build, list devices, calibrate, run the
#                     Star Schema Benchmark (coproc-ssb) and draw its timeline
#   ./build.sh test   install what is missing, build, run the test suite (CTest), then
#                     the suite under ASan+UBSan and ThreadSanitizer and each fuzz target
#                     for 30 s (SANITIZE=0: the suite only; FUZZ_SECONDS)
# Environment: BUILD_DIR (default build), JOBS (default: number of cores),
# CMAKE_ARGS (extra arguments for cmake, e.g. -DCOPROC_SANITIZE=address,undefined),
# SSB_SF (the demo's scale factor).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

mode=${1:-}
case "$mode" in
demo | test | build) ;;
*)
    echo "usage: ./build.sh demo|test|build" >&2
    exit 64
    ;;
esac

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# ---- dependencies: check each by what it provides, so a machine that has them
# without Debian's package records (the GPU machine) installs nothing.
missing=()
need() { # need PACKAGE TEST-COMMAND...
    local pkg=$1
    shift
    "$@" >/dev/null 2>&1 || missing+=("$pkg")
}
have_file() { compgen -G "$1" >/dev/null; }
need gcc command -v cc
need make command -v make
need cmake command -v cmake
need pkg-config command -v pkg-config
need opencl-c-headers test -f /usr/include/CL/cl.h
need ocl-icd-opencl-dev pkg-config --exists OpenCL
need pocl-opencl-icd have_file '/etc/OpenCL/vendors/*pocl*.icd'
need libhwloc-dev pkg-config --exists hwloc
need libhwloc-plugins have_file '/usr/lib/*/hwloc/hwloc_pci.so'
need libjansson-dev pkg-config --exists jansson
if [ "$mode" = test ]; then
    need libcmocka-dev pkg-config --exists cmocka
    need libsqlite3-dev pkg-config --exists sqlite3
    need clang-14 command -v clang-14
    # tests/fuzz.sh (CI): clang and its libFuzzer and sanitizer runtimes (only recommended
    # by clang-14, so not installed with it here).
    need clang command -v clang
    need libclang-rt-14-dev have_file '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
    need python3 command -v python3 # test_profiles.sh reads the profiles with it
    # Two more OpenCL implementations the suite runs on (docs/portability.md):
    # Mesa's rusticl (RUSTICL_ENABLE=llvmpipe) and the Oclgrind simulator.
    need mesa-opencl-icd have_file '/etc/OpenCL/vendors/rusticl.icd'
    need oclgrind command -v oclgrind
    # coproc_mpi and its tests under mpirun (label mpi): Open MPI's headers and mpicc,
    # and mpirun.
    need libopenmpi-dev have_file '/usr/lib/*/openmpi/include/mpi.h'
    need openmpi-bin command -v mpirun
fi

if [ ${#missing[@]} -gt 0 ]; then
    line="apt-get install -y --no-install-recommends ${missing[*]}"
    if [ "$(id -u)" != 0 ]; then
        echo "build.sh: missing: ${missing[*]}" >&2
        echo "build.sh: as root, run: $line" >&2
        exit 69
    fi
    echo "build.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && $line >/dev/null; }; then
        # No package archive (e.g. the GPU machine): go on with what is there; the
        # build or a test will say precisely what is missing.
        echo "build.sh: warning: could not install ${missing[*]}; building anyway" >&2
    fi
fi

# ---- build
# The demo needs no test framework (cmocka, SQLite): it builds without the tests.
tests=ON
[ "$mode" = demo ] && tests=OFF
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOPROC_BUILD_TESTS=$tests ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

case "$mode" in
demo)
    echo "== devices (coproc-calibrate --list)"
    "$BUILD_DIR/coproc-calibrate" --list
    echo "== calibration (coproc-calibrate --quick; cached after the first run)"
    "$BUILD_DIR/coproc-calibrate" --quick
    # The Star Schema Benchmark at a scale that suits the machine: SF 1 on a
    # few cores, SF 10 with 8 cores and 32 GiB or more (SSB_SF overrides).
    # The data is generated once and kept in the cache directory.
    cores=$(nproc 2>/dev/null || echo 2)
    mem_gib=$(awk '/MemTotal/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 0)
    sf=1
    [ "$cores" -ge 8 ] && [ "$mem_gib" -ge 32 ] && sf=10
    sf=${SSB_SF:-$sf}
    echo "== SSB: the 13 queries at SF $sf, fused and one operator at a time, on every device"
    "$BUILD_DIR/bench/coproc-ssb" --sf "$sf" --repeat 3 --timeline "$BUILD_DIR/ssb-timeline.svg"
    echo "== where and when each pipeline ran: $BUILD_DIR/ssb-timeline.svg (open it in a browser)"
    ;;
test)
    (cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS")
    # Then the sanitizers (CTest labels asan, tsan) and the fuzz targets, each
    # in its own build directory; SANITIZE=0 skips them (a quick run).
    if [ "${SANITIZE:-1}" != 0 ]; then
        echo "== AddressSanitizer + UndefinedBehaviorSanitizer (tests/sanitize.sh address)"
        JOBS=$JOBS tests/sanitize.sh address
        echo "== ThreadSanitizer (tests/sanitize.sh thread)"
        JOBS=$JOBS tests/sanitize.sh thread
        echo "== fuzzing, ${FUZZ_SECONDS:-30} s a target (tests/fuzz.sh)"
        JOBS=$JOBS tests/fuzz.sh "${FUZZ_SECONDS:-30}"
    fi
    ;;
esac
