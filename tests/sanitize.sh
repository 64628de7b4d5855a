#!/usr/bin/env bash
# tests/sanitize.sh [address|thread] [BUILD_DIR] - the suite under a sanitizer.
#   address  AddressSanitizer + UndefinedBehaviorSanitizer (leaks included):
#            builds BUILD_DIR (default build-asan) with
#            -DCOPROC_SANITIZE=address,undefined and runs every PoCL test but
#            those below; any report fails its test. CI runs this one
#            (.ci/run), about 10 minutes on 2 cores.
#   thread   ThreadSanitizer (the default, for compatibility): builds
#            build-tsan with -DCOPROC_SANITIZE=thread and runs the concurrency
#            and budget tests with tests/tsan.supp; a report makes its test
#            exit 66. By hand (about 8 minutes, most of it test_submit_all).
# Only PoCL is loaded (a private OCL_ICD_VENDORS): other drivers' own leaks
# at exit are not coproc's. Environment: JOBS (default: number of cores),
# ASAN_OPTIONS / UBSAN_OPTIONS / TSAN_OPTIONS (appended to the defaults).
set -euo pipefail
src=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
mode=thread
case "${1:-}" in
address | thread)
    mode=$1
    shift
    ;;
-*)
    echo "usage: tests/sanitize.sh [address|thread] [BUILD_DIR]" >&2
    exit 64
    ;;
esac
flags=$([ "$mode" = address ] && echo address,undefined || echo thread)
build=${1:-$src/build-${mode:0:1}san}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

cmake -S "$src" -B "$build" -DCOPROC_SANITIZE=$flags -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$jobs"

. "$src/tests/pocl_only.sh"
cd "$build"
if [ "$mode" = address ]; then
    export ASAN_OPTIONS="detect_leaks=1 abort_on_error=0 ${ASAN_OPTIONS:-}"
    # PoCL's kernel compiler leaks at every build (tests/lsan.supp says which).
    export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp print_suppressions=0 ${LSAN_OPTIONS:-}"
    export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 ${UBSAN_OPTIONS:-}"
    # The tests labelled asan (tests/CMakeLists.txt says which and why). A
    # test run again once if it fails: LeakSanitizer's own tracer has crashed
    # at exit while PoCL's threads went down ("Tracer caught signal 11", once,
    # on test_select after all its tests passed); a real error fails twice.
    ctest -L asan -j"$jobs" --output-on-failure --repeat until-pass:2
else
    # The tests labelled tsan (tests/CMakeLists.txt).
    export TSAN_OPTIONS="suppressions=$src/tests/tsan.supp halt_on_error=0 second_deadlock_stack=1 print_suppressions=1 exitcode=66 ${TSAN_OPTIONS:-}"
    ctest -L tsan --output-on-failure
fi
