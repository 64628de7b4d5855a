#!/usr/bin/env bash
# test_profiles.sh BUILD_DIR SOURCE_DIR - the profiles shipped in profiles/
# (pocl-ci.json, h100-synthetic.json) load through the library's own profile
# loader and read back with their key figures.
#
# There is no public call that loads a profile from a path, so the test goes
# through coproc-calibrate's cache: a quick calibration of device 0 in a
# scratch cache directory gives the file name and fingerprint that device's
# profile must have; each shipped profile is written there under that
# fingerprint (the only field changed) and `coproc-calibrate --quick --json`
# must load it (no "ignoring its cached profile" warning, the same
# created_unix, every number read back) rather than calibrate again.
# Without a device only the documents' own checks run and the test is
# skipped (77).
set -u
build="$1"
src="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
cal="$build/coproc-calibrate"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
for f in pocl-ci.json h100-synthetic.json; do
    [ -s "$src/profiles/$f" ] || fail "profiles/$f is missing"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The documents themselves: schema 2, every field of docs/profile.md, and the
# H100 figures of /work/shared/DESIGN.md (55 GB/s pinned each way, 2.9 TB/s
# reduction, 3.0 TB/s copy, 93 GB/s both ways, 10 us launch).
python3 - "$src/profiles" <<'EOF' || fail "profile documents"
import json, math, sys
d = sys.argv[1]
KINDS = {"reduce": 1, "select": 2, "map": 2, "gather": 2, "scan": 2, "group_by": 2,
         "sort": 2, "hash_join": 2, "merge_join": 2, "semi_join": 2}
def check(name):
    p = json.load(open(f"{d}/{name}"))
    assert p["schema"] == "coproc.profile" and p["schema_version"] == 2, name
    assert p["full"] is True, f"{name}: not a full calibration"
    for k in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"):
        t = p["transfer"][k]
        assert t["bytes_per_s"] > 0 and t["latency_s"] >= 0, (name, k)
        b = [x[0] for x in t["points"]]
        assert 2 <= len(b) <= 32 and b == sorted(set(b)), (name, k, "points")
    for k, nf in KINDS.items():
        m = p["operators"][k]
        assert m["features"] == nf and m["coef"] is not None, (name, k)
        assert len(m["coef"]) == nf + 1 + (m["knot"] > 0), (name, k)
        assert all(c >= 0 and math.isfinite(c) for c in m["coef"]), (name, k)
        assert len(m["points"]) >= nf + 1, (name, k, "too few points")
    return p
check("pocl-ci.json")
h = check("h100-synthetic.json")
near = lambda a, b, tol: abs(a - b) <= tol * abs(b)
assert h["synthetic"] is True and "synthetic" in h["fingerprint"]
assert h["device"] == "NVIDIA H100 PCIe (synthetic)"
for k in ("h2d_pinned", "d2h_pinned"):
    t = h["transfer"][k]
    assert near(t["bytes_per_s"], 55e9, 0.01), (k, t["bytes_per_s"])
    for size, rate in ((1 << 20, 30e9), (16 << 20, 52e9), (256 << 20, 55e9)):
        line = size / (t["latency_s"] + size / t["bytes_per_s"])
        assert near(line, rate, 0.01), (k, size, line)
assert near(h["memory"]["read_bytes_per_s"], 2.9e12, 1e-9)
assert near(h["memory"]["copy_bytes_per_s"], 3.0e12, 1e-9)
assert near(h["both_directions_bytes_per_s"], 93e9, 1e-9)
assert near(h["launch_latency_s"], 10e-6, 1e-9)
assert 7e9 <= h["transfer"]["h2d_pageable"]["bytes_per_s"] <= 15e9
sd = h["simulated_device"]
assert sd["type"] == "gpu" and sd["host_unified_memory"] is False and sd["fp64"] is True
assert sd["global_mem_bytes"] == 78 << 30 and 0 <= sd["noise"] <= 1
# the operator models go through the peers' figures at 2^28 rows
n = 1 << 28
def t(kind, *x):
    c = h["operators"][kind]["coef"]
    return c[0] + sum(a * b for a, b in zip(c[1:], x))
assert near(4 * n / t("reduce", 4 * n), 2.05e12, 1e-6)
assert near(4 * n / t("select", 4 * n, n / 2), 447e9, 1e-6)
assert near(n / t("sort", 8 * n, n * 28), 19.4e9, 1e-6)
assert near(n / t("sort", 4 * n, n * 28), 39e9, 0.02)
assert near(n / t("group_by", 8 * n, 1024), 19.1e9, 1e-6)
assert near((n + (1 << 24)) / t("hash_join", 4 * (n + (1 << 24)), n), 6.3e9, 1e-6)
print("profile documents: schema, fields and the H100 figures check")
EOF

# 2. Through the loader.
out=$("$cal" --list 2>&1); rc=$?
if [ $rc -eq 69 ]; then echo "skipped: no OpenCL device to load the profiles for: $out"; exit 77; fi
[ $rc -eq 0 ] || fail "--list exit $rc: $out"
mkdir -p "$tmp/cache"
if [ -n "${COPROC_CACHE_DIR:-}" ] && [ -d "$COPROC_CACHE_DIR/kernels" ]; then
    cp -r "$COPROC_CACHE_DIR/kernels" "$tmp/cache/"
fi
export COPROC_CACHE_DIR="$tmp/cache"
unset COPROC_CALIBRATE
"$cal" --quick --quiet --json --device 0 >"$tmp/own.json" ||
    fail "quick calibration of device 0 (to learn its profile's name): exit $?"
own=$(ls "$tmp/cache/profiles/"*.json 2>/dev/null)
[ "$(echo "$own" | wc -l)" -eq 1 ] && [ -s "$own" ] || fail "no single profile saved: $own"

for f in pocl-ci.json h100-synthetic.json; do
    python3 - "$src/profiles/$f" "$own" <<'EOF' || fail "$f: could not place it"
import json, sys
p = json.load(open(sys.argv[1]))
p["fingerprint"] = json.load(open(sys.argv[2]))["fingerprint"]
json.dump(p, open(sys.argv[2], "w"), indent=1)
EOF
    "$cal" --quick --json --device 0 >"$tmp/$f.out" 2>"$tmp/$f.err" ||
        fail "$f: coproc-calibrate exit $?: $(cat "$tmp/$f.err")"
    grep -q "ignoring its cached profile" "$tmp/$f.err" &&
        fail "$f: the loader rejected it: $(cat "$tmp/$f.err")"
    python3 - "$src/profiles/$f" "$tmp/$f.out" <<'EOF' || fail "$f: did not read back"
import json, math, sys
want = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))["devices"][0]
assert got["created_unix"] == want["created_unix"], "calibrated again instead of loading"
def same(a, b, where):
    if isinstance(b, dict):
        for k in b:
            if k in ("fingerprint", "coproc_version", "synthetic", "simulated_device"):
                continue  # rewritten here / the writer's / not in the struct / the
                          # simulated-device backend's (tests/test_sim_devices.c)
            assert k in a, f"{where}{k} not read back"
            same(a[k], b[k], f"{where}{k}.")
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), f"{where} length"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}].")
    elif isinstance(b, (int, float)) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"
same(got, want, "")
print(f"{sys.argv[1].split('/')[-1]}: loaded by the library; every field reads back "
      f"(h2d pinned {got['transfer']['h2d_pinned']['bytes_per_s'] / 1e9:.2f} GB/s, "
      f"memory read {got['memory']['read_bytes_per_s'] / 1e9:.1f} GB/s, "
      f"launch {got['launch_latency_s'] * 1e6:.1f} us)")
EOF
done

# The table of the loaded H100 profile (the last one placed) shows its figures.
table=$("$cal" --quick --device 0 2>&1) || fail "table run exit $?"
for key in "loaded from the cache" "2.90 TB/s" "54.96 GB/s" "93.00 GB/s" "10.0 µs"; do
    echo "$table" | grep -q -- "$key" || fail "the loaded H100 table lacks '$key': $table"
done
echo "test_profiles: both shipped profiles load"
