#!/usr/bin/env bash
# tests/reliability.sh [BUILD_DIR] - issue 18's figures in one run, as the
# tables of docs/reliability.md print them:
#   faults   test_faults on one PoCL device, two PoCL devices and two simulated
#            ones (PoCL + H100 profiles): per injected fault, operators right,
#            ended DEVICE_LOST (no device left), wrong, other, faults injected
#   stalls   test_watchdog on the same three: a device's run that hangs is
#            caught and its work moved (pass/fail)
#   load     coproc-load for 20 s, 8 threads, on one device, on two with a
#            stall, on two with 0.5 % of OpenCL calls failing at random, on one
#            with queries and 2 % (submitted, completed, wrong, lost, peak RSS)
# BUILD_DIR (default build) must be built. Fuzzing has its own command,
# tests/fuzz.sh SECONDS (a clang build). Exit 1 if anything failed.
set -u -o pipefail
src=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
export COPROC_CACHE_DIR=$build/test-cache COPROC_CALIBRATE=off
unset COPROC_DEVICES COPROC_FAULT COPROC_FAULT_STALL COPROC_WATCHDOG
sims="sim:$src/profiles/pocl-ci.json,sim:$src/profiles/h100-synthetic.json"
bad=0
# The three device sets, as environment assignments (one word each).
names=("one PoCL device" "two PoCL devices" "simulated PoCL + H100")
envs=("COPROC_UNUSED=" "POCL_DEVICES=pthread pthread" "COPROC_DEVICES=$sims")
echo "## faults (test_faults)"
echo "| devices | COPROC_FAULT | right | DEVICE_LOST | wrong | other | injected |"
echo "|---|---|---:|---:|---:|---:|---:|"
for i in 0 1 2; do
    out=$(env "${envs[$i]}" "$build/tests/test_faults" 2>&1) || bad=1
    echo "$out" | sed -n 's/^COPROC_FAULT=\([^ ]*\) on [0-9]* device(s): \([0-9]*\) right, \([0-9]*\) DEVICE_LOST, \([0-9]*\) wrong, \([0-9]*\) other; \([0-9]*\) faults injected$/| '"${names[$i]}"' | `\1` | \2 | \3 | \4 | \5 | \6 |/p'
done
echo
echo "## stalls (test_watchdog)"
for i in 0 1 2; do
    if out=$(env "${envs[$i]}" "$build/tests/test_watchdog" 2>&1); then
        run=$(echo "$out" | grep -c '^\[ RUN')
        ok=$(echo "$out" | grep -c '^\[       OK')
        skipped=""
        [ "$ok" -lt "$run" ] && skipped=", $((run - ok)) skipped (the two-device case)"
        echo "- ${names[$i]}: $ok of $run passed$skipped"
    else
        bad=1
        echo "- ${names[$i]}: FAILED"
        echo "$out" | tail -20
    fi
done
echo
echo "## load (coproc-load, 20 s, 8 threads)"
load=$build/bench/coproc-load
if [ -x "$load" ]; then
    echo "### one PoCL device"
    "$load" --seconds 20 --threads 8 2>&1 | tail -12 || bad=1
    echo "### two PoCL devices, device 1 stalls at its 3rd run (watchdog 2 s)"
    POCL_DEVICES="pthread pthread" COPROC_FAULT_STALL=1:3:60 COPROC_WATCHDOG=2 \
        "$load" --seconds 20 --threads 8 2>&1 | tail -12 || bad=1
    echo "### two PoCL devices, 0.5 % of OpenCL calls failing at random"
    POCL_DEVICES="pthread pthread" COPROC_FAULT=random:5:3 \
        "$load" --seconds 20 --threads 8 2>&1 | tail -12 || bad=1
    echo "### one PoCL device with queries, 2 % of OpenCL calls failing at random"
    COPROC_FAULT=random:20:5 "$load" --seconds 20 --threads 8 --queries 2>&1 | tail -12 || bad=1
else
    echo "(no $load: build the bench programs)"
fi
exit $bad
