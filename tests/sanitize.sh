#!/usr/bin/env bash
# tests/sanitize.sh [BUILD_DIR] - ThreadSanitizer run of the concurrency and
# budget tests: configures and builds BUILD_DIR (default build-tsan) with
# -DCOPROC_SANITIZE=thread, then runs the tests below through CTest with
# tests/tsan.supp. Exit status is CTest's: a TSan report makes its test exit 66
# and fail. By hand only (too slow for CI: about 8 minutes on 2 cores, most
# of it test_submit_all). Environment: JOBS (default: number of cores),
# TSAN_OPTIONS (appended to the defaults below).
set -euo pipefail
src=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
build=${1:-$src/build-tsan}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

tests='test_async|test_budget_submit|test_budget_stream|test_budget_residency'
tests+='|test_budget_outofcore|test_multi_device|test_isolation|test_submit_all'
tests+='|test_sim_devices|sim_test_budget_stream|sim_test_multi_device'   # simulated devices' clock

cmake -S "$src" -B "$build" -DCOPROC_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$jobs"

export TSAN_OPTIONS="suppressions=$src/tests/tsan.supp halt_on_error=0 second_deadlock_stack=1 print_suppressions=1 ${TSAN_OPTIONS:-}"
cd "$build"
ctest -R "^($tests)\$" --output-on-failure
