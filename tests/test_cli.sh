#!/usr/bin/env bash
# test_cli.sh BUILD_DIR SOURCE_DIR - coproc-calibrate's command line: --help and
# --version exit 0, --list prints a table, --json a versioned document with the
# devices and their NUMA nodes, bad usage exits 64 (sysexits).
set -u
cal="$1/coproc-calibrate"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cal" --help | grep -q -- "--list" || fail "--help"
"$cal" --version | grep -q "coproc-calibrate [0-9]" || fail "--version"
"$cal" --bogus >/dev/null 2>&1; [ $? -eq 64 ] || fail "--bogus should exit 64"
"$cal" extra >/dev/null 2>&1; [ $? -eq 64 ] || fail "stray argument should exit 64"

out=$("$cal" --list 2>&1); rc=$?
if [ $rc -eq 69 ]; then echo "skipped: no OpenCL device: $out"; exit 77; fi
[ $rc -eq 0 ] || fail "--list exit $rc: $out"
echo "$out" | head -1 | grep -q "NUMA" || fail "--list table header"

json=$("$cal" --list --json 2>/dev/null) || fail "--json exit $?"
echo "$json" | grep -q '"schema": "coproc.devices"' || fail "json schema"
echo "$json" | grep -q '"schema_version": 1' || fail "json version"
echo "$json" | grep -q '"numa_node"' || fail "json numa_node"
echo "$json" | grep -q '"cpuset"' || fail "json cpuset"
# Nothing but the document on stdout: it starts with { and ends with }.
[ "${json:0:1}" = "{" ] && [ "${json: -1}" = "}" ] || fail "stdout is not only JSON"

# Selection errors: a device index that does not exist is EX_UNAVAILABLE.
"$cal" --device 99 --quiet >/dev/null 2>&1; [ $? -eq 69 ] || fail "--device 99 should exit 69"
"$cal" --device nonsense --quiet >/dev/null 2>&1; [ $? -eq 64 ] || fail "--device nonsense should exit 64"
echo "ok"
