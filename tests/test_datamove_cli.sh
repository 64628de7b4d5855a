#!/usr/bin/env bash
# test_datamove_cli.sh BUILD_DIR SOURCE_DIR - coproc-datamove --quick --json on a
# small size prints one versioned JSON document whose every check passed
# (results equal the C reference, the repeated query moves nothing the second
# time, zero-copy moves nothing) and carries the figures of issue 7; usage
# errors exit 64. No OpenCL device: skipped (77).
set -u
d="$1/bench/coproc-datamove"
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$d" --quick --json --size 8M >"$out" 2>"$err"
rc=$?
[ $rc -eq 69 ] && { cat "$err" >&2; exit 77; }
[ $rc -eq 0 ] || { cat "$err" >&2; fail "exit $rc"; }
if command -v python3 >/dev/null 2>&1; then
    python3 - "$out" <<'PY' || fail "JSON document"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "coproc.datamove" and doc["schema_version"] == 1, "schema"
assert doc["ok"] is True and doc["correct"] is True, "ok/correct"
assert doc["devices"], "no device"
for d in doc["devices"]:
    assert d["correct"] is True, d["name"]
    bad = [c for c in d["checks"] if not c["ok"]]
    assert not bad, bad
    f = {x["name"]: x for x in d["figures"]}
    for name in ("h2d_pinned", "h2d_pageable_staged", "h2d_pageable_raw",
                 "stream_reduce_pinned", "serial_copy_reduce_pinned", "stream_reduce_pageable",
                 "in_memory_reduce", "over_budget_reduce", "in_memory_sort", "over_budget_sort",
                 "repeat_select_first_h2d", "repeat_select_second_h2d"):
        assert name in f, "missing figure " + name
        assert f[name]["value"] >= 0, name
    assert f["h2d_pinned"]["value"] > 0
    assert "h2d_pinned" in f["h2d_pageable_staged"]["ratios"]
    assert "serial_copy_reduce_pinned" in f["stream_reduce_pinned"]["ratios"]
    assert "in_memory_sort" in f["over_budget_sort"]["ratios"]
    assert f["repeat_select_second_h2d"]["value"] == 0
    assert f["repeat_select_first_h2d"]["value"] > 0
    if d["host_unified_memory"]:
        assert f["zero_copy_select_bytes_moved"]["value"] == 0
print("json ok")
PY
else
    grep -q '"schema": "coproc.datamove"' "$out" || fail "schema"
    grep -q '"ok": true' "$out" || fail "ok"
    grep -q '"correct": false' "$out" && fail "a device reports a wrong result"
    grep -q '"ok": false' "$out" && fail "a failed check"
fi
"$d" --size nonsense >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad --size should exit 64"
"$d" --bogus >/dev/null 2>&1; [ $? -eq 64 ] || fail "bad option should exit 64"
echo ok
