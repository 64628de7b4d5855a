#!/usr/bin/env bash
# test_workload_cli.sh BUILD_DIR SOURCE_DIR - coproc-workload --simulate prints a
# versioned JSON document whose policies carry speedup_vs_best_single and
# oracle_ratio (>= 1: the oracle is a lower bound); without --simulate a small
# mixed workload runs on the real devices (PoCL here) with every policy and
# every device alone: the document carries speedup_vs_best_single for each
# policy and every result equals the C reference. No OpenCL device: skipped
# (77) after the simulator's checks.
set -u
w="$1/bench/coproc-workload"
fail() { echo "FAIL: $*" >&2; exit 1; }
json=$("$w" --simulate --json --tasks 300 2>/dev/null) || fail "exit $?"
echo "$json" | grep -q '"schema": "coproc.workload"' || fail "schema"
[ "$(echo "$json" | grep -c '"speedup_vs_best_single"')" -eq 7 ] || fail "one entry per policy"
echo "$json" | grep '"oracle_ratio"' | awk '{ if ($2 + 0 < 0.999) bad = 1 } END { exit bad }' ||
    fail "an oracle_ratio below 1: the bound is not a lower bound"
"$w" --simulate --policy nonsense >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad policy should exit 64"
"$w" --bogus >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad option should exit 64"
"$w" --simulate --streams 2 >/dev/null 2>&1; [ $? -eq 64 ] || fail "a real-device option with --simulate should exit 64"
"$w" --scenario comparable >/dev/null 2>&1; [ $? -eq 64 ] || fail "--scenario without --simulate should exit 64"
"$w" --help | grep -q -- "--bus-bound" || fail "--help does not describe --bus-bound"

# Real devices: a quick mixed workload (COPROC_CALIBRATE=off comes from CTest).
json=$("$w" --tasks 40 --max-rows 65536 --json --quiet 2>/tmp/coproc-wl-err.$$); rc=$?
err=$(cat /tmp/coproc-wl-err.$$); rm -f /tmp/coproc-wl-err.$$
if [ $rc -eq 69 ]; then echo "skipped: no OpenCL device: $err"; exit 77; fi
[ $rc -eq 0 ] || fail "real-device run exit $rc: $err"
[ -z "$err" ] || fail "--json --quiet wrote to stderr: $err"
[ "${json:0:1}" = "{" ] && [ "${json: -1}" = "}" ] || fail "stdout is not only JSON"
if command -v python3 >/dev/null 2>&1; then
    echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "coproc.workload" and d["schema_version"] == 1, "schema"
assert d["simulated"] is False, "simulated"
pol = d["policies"]
assert sorted(pol) == sorted(["wtar", "srt", "rr", "tbo", "pbo", "static", "fixed"]), sorted(pol)
ndev = len(d["devices"])
assert ndev >= 1 and len(d["single_devices"]) == ndev, "one run per device alone"
for name, p in list(pol.items()) + [("alone", s) for s in d["single_devices"]]:
    assert p["speedup_vs_best_single"] > 0, name
    assert p["oracle_ratio"] is None, name
    assert p["mismatches"] == 0 and p["failed"] == 0 and p["results_ok"] is True, name
    assert sum(p["tasks_per_device"]) == d["tasks"], name
    assert len(p["utilization"]) == ndev and all(0 <= u <= 1.5 for u in p["utilization"]), name
assert d["mismatches"] == 0 and d["results_ok"] is True, "results"
assert d["decision_time_median_s"] > 0, "decision time"
' || fail "real-device JSON: $json"
else
    [ "$(echo "$json" | grep -c '"speedup_vs_best_single"')" -ge 8 ] || fail "speedup per policy and device"
    echo "$json" | grep -q '"results_ok": true' || fail "results_ok"
    echo "$json" | grep '"mismatches"' | grep -qv '"mismatches": 0' && fail "a mismatch"
fi
# A wrong --fixed-device is a usage error, whatever the devices.
"$w" --tasks 4 --max-rows 4096 --fixed-device 15 --quiet >/dev/null 2>&1
[ $? -eq 64 ] || fail "--fixed-device 15 should exit 64"
echo ok
