#!/usr/bin/env bash
# test_workload_cli.sh BUILD_DIR SOURCE_DIR - coproc-workload --simulate prints a
# versioned JSON document whose policies carry speedup_vs_best_single and
# oracle_ratio (>= 1: the oracle is a lower bound); without --simulate it
# refuses (69) rather than pretending.
set -u
w="$1/bench/coproc-workload"
fail() { echo "FAIL: $*" >&2; exit 1; }
json=$("$w" --simulate --json --tasks 300 2>/dev/null) || fail "exit $?"
echo "$json" | grep -q '"schema": "coproc.workload"' || fail "schema"
[ "$(echo "$json" | grep -c '"speedup_vs_best_single"')" -eq 7 ] || fail "one entry per policy"
echo "$json" | grep '"oracle_ratio"' | awk '{ if ($2 + 0 < 0.999) bad = 1 } END { exit bad }' ||
    fail "an oracle_ratio below 1: the bound is not a lower bound"
"$w" --simulate --policy nonsense >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad policy should exit 64"
"$w" >/dev/null 2>&1; [ $? -eq 69 ] || fail "real-device run should exit 69 for now"
echo ok
