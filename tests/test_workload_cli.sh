#!/usr/bin/env bash
# test_workload_cli.sh BUILD_DIR SOURCE_DIR - coproc-workload runs a small
# mixed workload with every policy and every device alone and prints a
# versioned JSON document: first with --simulate on the simulated PoCL + H100
# devices of profiles/ (virtual times; the simulated H100 alone must beat the
# simulated CPU alone, as its profile says), then on the real devices (PoCL
# here). Every result equals the C reference. Usage errors exit 64. No OpenCL
# device: skipped (77).
set -u
w="$1/bench/coproc-workload"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$w" --policy nonsense >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad policy should exit 64"
"$w" --bogus >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad option should exit 64"
"$w" --scenario comparable >/dev/null 2>&1; [ $? -eq 64 ] || fail "--scenario (gone) should exit 64"
"$w" --help | grep -q -- "--bus-bound" || fail "--help does not describe --bus-bound"
"$w" --help | grep -q -- "--simulate" || fail "--help does not describe --simulate"

json=$("$w" --simulate --tasks 40 --max-rows 65536 --json --quiet 2>/tmp/coproc-wl-err.$$); rc=$?
err=$(cat /tmp/coproc-wl-err.$$); rm -f /tmp/coproc-wl-err.$$
if [ $rc -eq 69 ]; then echo "skipped: no OpenCL device to run simulated devices on: $err"; exit 77; fi
[ $rc -eq 0 ] || fail "simulated run exit $rc: $err"
if command -v python3 >/dev/null 2>&1; then
    echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "coproc.workload" and d["simulated"] is True, "simulated"
names = [x["name"] for x in d["devices"]]
assert names == ["sim pthread-haswell-AMD EPYC", "sim NVIDIA H100 PCIe (synthetic)"] or \
    (len(names) == 2 and names[1] == "sim NVIDIA H100 PCIe (synthetic)"), names
assert d["results_ok"] is True and d["mismatches"] == 0, "results"
cpu, gpu = d["single_devices"]
assert gpu["makespan_s"] < cpu["makespan_s"], ("the simulated H100 alone is slower", cpu, gpu)
assert sorted(d["policies"]) == sorted(["wtar", "srt", "rr", "tbo", "pbo", "static", "fixed"])
' || fail "simulated JSON: $json"
fi

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
assert d["submit_decision_time_median_s"] > 0, "decision time"
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
