#!/usr/bin/env bash
# test_examples.sh BUILD_DIR SOURCE_DIR - the example programs users start
# from run to the end, and print what their query asks: the Arrow round
# trip, the query over arrays, over Arrow arrays with nulls and over strings (its
# four cities, Denver's store filtered out). The demo runs in build.sh demo.
set -u
ex="$1/examples"
fail() { echo "FAIL: $*" >&2; exit 1; }

run() { # run PROGRAM: its output, or skip (77) without a device
    local out rc
    out=$("$ex/$1" 2>&1); rc=$?
    if [ $rc -eq 69 ]; then echo "skipped: no OpenCL device: $out"; exit 77; fi
    [ $rc -eq 0 ] || fail "$1 exit $rc: $out"
    printf '%s\n' "$out"
}

run coproc-arrow-roundtrip >/dev/null
out=$(run coproc-query-arrays) || exit $?
echo "$out" | grep -q "category region" || fail "coproc-query-arrays: no result table"
out=$(run coproc-query-arrow) || exit $?
# SQL's nulls: key 0 keeps its row whose v is null (k = 0 holds), counted by
# COUNT(*) but not COUNT(v); the null keys make one group, last
echo "$out" | grep -Eq '^ +0 +4 +3 +-1 +4$' || fail "coproc-query-arrow: group 0 wrong: $out"
echo "$out" | grep -Eq '^ +NULL +1 +1 +2 +2$' || fail "coproc-query-arrow: no null-key group: $out"
out=$(run coproc-query-strings) || exit $?
for city in Boston "San Diego" "San Jose" "Santa Fe"; do
    echo "$out" | grep -q "^$city " || fail "coproc-query-strings: no row for $city: $out"
done
echo "$out" | grep -q "Denver\|Austin\|Seattle" && fail "coproc-query-strings: a city the filter drops"
# each (store, region) pair draws about 1/8 of the 100000 orders: Boston has two
boston=$(echo "$out" | awk '/^Boston /{print $3}')
[ "$boston" -gt 23000 ] && [ "$boston" -lt 27000 ] || fail "coproc-query-strings: Boston has $boston orders"
echo "ok"
