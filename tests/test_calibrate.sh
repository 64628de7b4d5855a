#!/usr/bin/env bash
# test_calibrate.sh BUILD_DIR SOURCE_DIR - coproc-calibrate's calibration:
# `--quick --json` with a fresh profile directory prints a coproc.calibration
# document of versioned profiles and saves them; a second run loads them from
# the cache (much faster; both times printed); the table has units; --plot
# writes data and a gnuplot script; a garbage profile is replaced, not fatal.
set -u
cal="$1/coproc-calibrate"
fail() { echo "FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }

out=$("$cal" --list 2>&1); rc=$?
if [ $rc -eq 69 ]; then echo "skipped: no OpenCL device: $out"; exit 77; fi
[ $rc -eq 0 ] || fail "--list exit $rc: $out"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A fresh profile directory, but the kernel binaries of the test cache, so
# the run measures calibration rather than compiling every program.
mkdir -p "$tmp/cache"
if [ -n "${COPROC_CACHE_DIR:-}" ] && [ -d "$COPROC_CACHE_DIR/kernels" ]; then
    cp -r "$COPROC_CACHE_DIR/kernels" "$tmp/cache/"
fi
export COPROC_CACHE_DIR="$tmp/cache"
unset COPROC_CALIBRATE

t0=$(now)
"$cal" --quick --json >"$tmp/first.json" 2>"$tmp/first.err" ||
    fail "first run exit $?: $(cat "$tmp/first.err")"
t1=$(now)
"$cal" --quick --json >"$tmp/second.json" 2>"$tmp/second.err" ||
    fail "second run exit $?: $(cat "$tmp/second.err")"
t2=$(now)
first=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
second=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
awk -v a="$first" -v b="$second" 'BEGIN { printf "quick calibration (whole program): %.3f s; " \
    "second run, profile from the cache: %.3f s (%.0fx faster)\n", a, b, a / b }'

json=$(cat "$tmp/first.json")
[ "${json:0:1}" = "{" ] && [ "${json: -1}" = "}" ] || fail "stdout is not only JSON"
grep -q '"schema": "coproc.calibration"' "$tmp/first.json" || fail "calibration schema"
grep -q '"schema": "coproc.profile"' "$tmp/first.json" || fail "profile schema"
grep -q '"schema_version": 1' "$tmp/first.json" || fail "schema_version"
for key in h2d_pinned d2h_pinned h2d_pageable d2h_pageable both_directions_bytes_per_s \
    copy_bytes_per_s read_bytes_per_s int_ops_per_s float_ops_per_s launch_latency_s \
    source_s cached_s '"reduce"' '"semi_join"' '"full": false'; do
    grep -q -- "$key" "$tmp/first.json" || fail "document lacks $key"
done
ls "$tmp/cache/profiles/"*.json >/dev/null 2>&1 || fail "no profile saved in $tmp/cache/profiles"

# The second run read the saved profiles: the same documents, creation time included.
cmp -s "$tmp/first.json" "$tmp/second.json" || fail "second run did not load the cached profile"
# Both runs pay for process start and OpenCL set-up (a large share on GPU
# drivers), so only "faster" is asserted; the ratio is printed above.
awk -v a="$first" -v b="$second" 'BEGIN { exit !(b < a) }' ||
    fail "loading ($second s) is not faster than calibrating ($first s)"

# The table: units, models, and where the profile came from.
table=$("$cal" --quick 2>&1) || fail "table run exit $?"
for key in "GB/s" "µs" "op/s" "flop/s" "host->dev pinned" "both directions" \
    "loaded from the cache" "reduce" "sort"; do
    echo "$table" | grep -q -- "$key" || fail "table lacks '$key': $table"
done

# --plot: data files and the script (and PNGs where gnuplot is installed).
"$cal" --quick --quiet --plot "$tmp/plots" >/dev/null || fail "--plot exit $?"
for f in device0.gnuplot device0-transfer-h2d_pinned.dat device0-transfer-d2h_pageable.dat \
    device0-op-reduce.dat device0-op-sort.dat; do
    [ -s "$tmp/plots/$f" ] || fail "--plot did not write $f"
done
if command -v gnuplot >/dev/null; then
    [ -s "$tmp/plots/device0-transfer.png" ] || fail "gnuplot is installed but no PNG"
    echo "plots rendered: $(ls "$tmp/plots"/*.png | wc -l) PNGs"
fi
"$cal" --quick --quiet --plot /proc/no-such-dir >/dev/null 2>&1
[ $? -eq 74 ] || fail "--plot into an unwritable directory should exit 74"

# A garbage profile is ignored with a warning and replaced by a new one.
for p in "$tmp/cache/profiles/"*.json; do printf 'garbage{"schema"' >"$p"; done
"$cal" --quick --json >"$tmp/third.json" 2>"$tmp/third.err" || fail "garbage profile: exit $?"
grep -q "ignoring its cached profile" "$tmp/third.err" || fail "no warning: $(cat "$tmp/third.err")"
grep -q '"schema": "coproc.profile"' "$tmp/third.json" || fail "no profile after garbage"
for p in "$tmp/cache/profiles/"*.json; do
    grep -q '"schema": "coproc.profile"' "$p" || fail "garbage profile not replaced: $p"
done
echo "ok"
