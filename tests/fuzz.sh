#!/usr/bin/env bash
# tests/fuzz.sh [SECONDS] [BUILD_DIR] - run every libFuzzer target in fuzz/
# (docs/reliability.md, "Fuzzing") for SECONDS each (default 60).
# Builds BUILD_DIR (default build-fuzz) with clang and -DCOPROC_FUZZ=ON (the
# library instrumented for libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer), then runs each target fuzz_<name> over a copy of
# its seed corpus fuzz/corpus/<name>/ in BUILD_DIR/fuzz-run/<name>/ (new
# inputs go there, never into the source tree) and prints the inputs it ran.
# A crash, a sanitizer report, a leak or a timeout fails the script; the input
# that caused it is left as BUILD_DIR/fuzz-run/<name>/crash-* (or leak-*,
# timeout-*): replay it with BUILD_DIR/fuzz/fuzz_<name> FILE, and once fixed
# add it to fuzz/regressions/<name>/, which the normal test suite replays
# (replay_fuzz_<name>). CI runs this (.ci/run), about 4 minutes at 60 s each.
# Only PoCL is loaded (a private OCL_ICD_VENDORS), as in tests/sanitize.sh:
# other drivers' leaks at exit are not coproc's, nor PoCL's compiler's
# (fuzz/lsan.supp). Environment: JOBS,
# FUZZ_ARGS (more libFuzzer options, e.g. -jobs=2 -workers=2).
set -euo pipefail
src=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
case "${1:-}" in
-*)
    echo "usage: tests/fuzz.sh [SECONDS] [BUILD_DIR]" >&2
    exit 64
    ;;
esac
seconds=${1:-60}
build=${2:-$src/build-fuzz}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

CC=${CC:-clang} cmake -S "$src" -B "$build" -DCOPROC_FUZZ=ON -DCOPROC_BUILD_TESTS=OFF \
    -DCOPROC_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target coproc_fuzzers -j"$jobs"

. "$src/tests/pocl_only.sh"
export COPROC_CALIBRATE=off
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$src/fuzz/lsan.supp print_suppressions=0 ${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 ${UBSAN_OPTIONS:-}"

failed=()
for target in "$build"/fuzz/fuzz_*; do
    [ -x "$target" ] || continue
    name=${target##*/fuzz_}
    run=$build/fuzz-run/$name
    rm -rf "$run"
    mkdir -p "$run/corpus" "$run/tmp"
    cp -r "$src/fuzz/corpus/$name/." "$run/corpus/"
    log=$run/fuzz.log
    rc=0
    (cd "$run" && TMPDIR=$run/tmp "$target" -max_total_time="$seconds" -timeout=30 \
        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$run/" ${FUZZ_ARGS:-} \
        corpus >"$log" 2>&1) || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    corpus=$(ls "$run/corpus" | wc -l)
    if [ "$rc" -ne 0 ]; then
        failed+=("$name")
        echo "fuzz_$name: FAILED (exit $rc) after ${execs:-?} inputs; the last lines of $log:"
        tail -40 "$log" | sed 's/^/    /'
        ls "$run"/crash-* "$run"/leak-* "$run"/timeout-* "$run"/oom-* 2>/dev/null | sed 's/^/    input: /'
    else
        echo "fuzz_$name: ${execs:-?} inputs in ${seconds} s ($((${execs:-0} / seconds))/s), corpus $corpus, no crash"
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "tests/fuzz.sh: failed: ${failed[*]}" >&2
    exit 1
fi
