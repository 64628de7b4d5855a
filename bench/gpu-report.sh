#!/usr/bin/env bash
# bench/gpu-report.sh - one command for a machine with a GPU: builds, runs the tests, calibrates
# every device (with the prediction check and the curves' plots), runs every benchmark program,
# and writes ONE results folder: each program's JSON, its log, and summary.md.
#
#   bench/gpu-report.sh [--quick] [RESULTS-DIR]
#
# RESULTS-DIR (or GPU_REPORT_DIR) defaults to results/gpu-report-<date> in the repository.
# --quick (or GPU_REPORT_QUICK=1): small sizes, one repeat, SSB at SF 0.1 - to try the script.
# GPU_REPORT_SF: the SSB scale factor (default SF 10 with 8 cores and 32 GiB or more, else SF 1).
# GPU_REPORT_STEP_TIMEOUT: seconds one step may run (default 1500).
# BUILD_DIR, JOBS, CMAKE_ARGS: as for build.sh.
#
# Without a GPU (as coproc-calibrate --list reports the devices) it runs the same steps on the
# devices there are (PoCL) and says so in the summary. Every step runs even when one before it
# failed; the failures are listed in the summary and the exit status is 1 if any step failed.
# Only the public programs are used; no network. On the lent H100 machine, begin with
# `. .device/setup.sh` (../shared/gpu-host/README.md); this script sources it when it is there
# and OCL_ICD_VENDORS is not set yet.
# Wall time on a loaded 2-core PoCL VM (no GPU): --quick 9.5 min, full 14.2 min (SSB SF 1);
# the tests take 5-6 minutes of either, the calibration check 2-3. Not yet timed on a GPU machine.
set -uo pipefail

quick=${GPU_REPORT_QUICK:-0}
[ "$quick" = 0 ] || quick=1
out=${GPU_REPORT_DIR:-}
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    -h | --help)
        sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "gpu-report: unknown option $1 (see --help)" >&2
        exit 64
        ;;
    *) out=$1 ;;
    esac
    shift
done

# The results folder, as given relative to where the script was started.
start_dir=$PWD
top=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
[ -n "$out" ] || out="$top/results/gpu-report-$(date +%Y-%m-%d-%H%M%S)"
case "$out" in /*) ;; *) out="$start_dir/$out" ;; esac
mkdir -p "$out/logs" || exit 73
out=$(cd "$out" && pwd)
cd "$top" || exit 1

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
export BUILD_DIR JOBS
case "$BUILD_DIR" in /*) bin=$BUILD_DIR ;; *) bin="$top/$BUILD_DIR" ;; esac
step_timeout=${GPU_REPORT_STEP_TIMEOUT:-1500}

if [ -f .device/setup.sh ] && [ -z "${OCL_ICD_VENDORS:-}" ]; then
    echo "gpu-report: sourcing .device/setup.sh (the lent GPU machine's OpenCL setup)" >&2
    # shellcheck disable=SC1091
    . .device/setup.sh
fi

steps="$out/steps.tsv"
printf 'step\trc\tseconds\tfiles\tcommand\n' >"$steps"
t_start=$(date +%s)
nsteps=0

# run_step NAME STDOUT-FILE COMMAND...: runs COMMAND with a time limit; its stdout goes to
# STDOUT-FILE (relative to the results folder; "-" joins it to the log), its stderr to
# logs/NAME.log; one line in steps.tsv with its exit status and wall time.
run_step() {
    local name=$1 stdout_file=$2
    shift 2
    local log="$out/logs/$name.log" dest t0 t1 rc
    nsteps=$((nsteps + 1))
    printf 'gpu-report: [%s] %s: %s\n' "$nsteps" "$name" "$*" >&2
    printf '$ %s\n' "$*" >"$log"
    if [ "$stdout_file" = - ]; then
        dest=$log
        stdout_file=logs/$name.log
    else
        dest="$out/$stdout_file"
        : >"$dest"
    fi
    t0=$(date +%s.%N)
    timeout -k 30 "$step_timeout" "$@" >>"$dest" 2>>"$log" </dev/null
    rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$secs" "$stdout_file" "$*" >>"$steps"
    if [ "$rc" = 0 ]; then
        printf 'gpu-report:     ok, %s s\n' "$secs" >&2
    else
        printf 'gpu-report:     FAILED (exit %s%s), %s s; see %s\n' "$rc" \
            "$([ "$rc" = 124 ] && echo ', timed out')" "$secs" "$log" >&2
    fi
    return "$rc"
}

# skip_step NAME WHY: a step not run, and why (not a failure).
skip_step() {
    printf '%s\tskipped\t0\t-\t%s\n' "$1" "$2" >>"$steps"
    printf 'gpu-report: skipped %s: %s\n' "$1" "$2" >&2
}

# ---- the machine
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) ($(uname -srm))"
    echo "os: $(awk -F= '$1 == "PRETTY_NAME" { gsub(/"/, "", $2); print $2 }' /etc/os-release 2>/dev/null)"
    echo "cores: $(nproc 2>/dev/null || echo ?)"
    echo "memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
    echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)"
    echo "commit: $(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "gnuplot: $(command -v gnuplot || echo absent)"
    echo "quick: $quick"
    if command -v nvidia-smi >/dev/null 2>&1; then
        echo "nvidia-smi -L:"
        nvidia-smi -L 2>&1 | sed 's/^/  /'
    fi
} >"$out/machine.txt"

# ---- build (the tests with it; if that fails, the programs alone)
if ! run_step build - ./build.sh build; then
    CMAKE_ARGS="${CMAKE_ARGS:-} -DCOPROC_BUILD_TESTS=OFF" run_step build-without-tests - ./build.sh build
fi

# ---- the devices, and whether one is a GPU (by coproc's own list, not nvidia-smi)
run_step devices devices.txt "$bin/coproc-calibrate" --list
run_step devices-json devices.json "$bin/coproc-calibrate" --list --json
gpus=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(x["index"]) for x in d.get("devices", []) if x.get("type") == "gpu"))
' "$out/devices.json" 2>/dev/null) ||
    gpus=$(awk 'NR > 1 && $2 == "gpu" { printf "%s ", $1 }' "$out/devices.txt" 2>/dev/null)
devices=$(python3 -c '
import json, sys
print(" ".join(str(x["index"]) for x in json.load(open(sys.argv[1])).get("devices", [])))
' "$out/devices.json" 2>/dev/null) ||
    devices=$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ { printf "%s ", $1 }' "$out/devices.txt" 2>/dev/null)
read -r -a gpu_list <<<"$gpus"
read -r -a device_list <<<"$devices"
echo "gpus: ${gpu_list[*]:-none}" >>"$out/machine.txt"
echo "devices: ${device_list[*]:-none}" >>"$out/machine.txt"
if [ ${#gpu_list[@]} -gt 0 ]; then
    echo "gpu-report: GPU device(s) ${gpu_list[*]}" >&2
else
    echo "gpu-report: no GPU found: the figures will be PoCL's (or whatever devices there are)" >&2
fi

# ---- sizes
cores=$(nproc 2>/dev/null || echo 2)
mem_gib=$(awk '/MemTotal/ { print int($2 / 1048576) }' /proc/meminfo 2>/dev/null || echo 0)
if [ "$quick" = 1 ]; then
    sf=0.1 repeat=1 bench_gpu_log2=24 bench_cpu_log2=22 calibrate_quick=(--quick)
    datamove_args=(--quick) workload_args=(--repeat 1)
else
    sf=1 repeat=3 bench_gpu_log2=28 bench_cpu_log2=24 calibrate_quick=()
    datamove_args=() workload_args=(--repeat 3)
    [ "$cores" -ge 8 ] && [ "$mem_gib" -ge 32 ] && sf=10
fi
sf=${GPU_REPORT_SF:-$sf}
{
    echo "ssb_sf: $sf"
    echo "repeat: $repeat"
} >>"$out/machine.txt"

# ---- tests
if [ -f "$bin/CTestTestfile.cmake" ]; then
    run_step tests - ctest --test-dir "$bin" --output-on-failure -j "$JOBS" --timeout 900 \
        --output-junit "$out/tests-junit.xml"
else
    skip_step tests "the build has no tests (see logs/build.log)"
fi

# ---- calibration, its check and its plots (PNGs only where gnuplot is installed)
run_step calibrate calibrate.json "$bin/coproc-calibrate" "${calibrate_quick[@]}" --force --check \
    --check-points "$out/calibrate-check-points.txt" --plot "$out/calibrate-plots" --json

# ---- operators: coproc-bench (data on the device)
if [ ${#gpu_list[@]} -gt 0 ]; then
    run_step bench-gpu bench-gpu.json "$bin/bench/coproc-bench" --device gpu \
        --max-log2 "$bench_gpu_log2" --json --quiet
else
    skip_step bench-gpu "no GPU"
fi
run_step bench-cpu bench-cpu.json "$bin/bench/coproc-bench" --device cpu \
    --max-log2 "$bench_cpu_log2" --json --quiet

# ---- cost-model error
run_step model-check model-check.json "$bin/bench/coproc-model-check" --json

# ---- placement: the HyPE-style workload, mixed and bus-bound
run_step workload workload.json "$bin/bench/coproc-workload" "${workload_args[@]}" --json --quiet
run_step workload-bus-bound workload-bus-bound.json "$bin/bench/coproc-workload" --bus-bound \
    --pinned "${workload_args[@]}" --json --quiet

# ---- data movement
run_step datamove datamove.json "$bin/bench/coproc-datamove" "${datamove_args[@]}" --json

# ---- the Star Schema Benchmark: host data on all devices (placement), each device alone,
# and the tables resident on the GPU (device 0 without one)
run_step ssb-host-all - "$bin/bench/coproc-ssb" --sf "$sf" --repeat "$repeat" \
    --json "$out/ssb-host-all.json" --timeline "$out/ssb-host-all.svg"
for d in "${device_list[@]}"; do
    run_step "ssb-host-dev$d" - "$bin/bench/coproc-ssb" --sf "$sf" --device "$d" --mode fused \
        --repeat "$repeat" --json "$out/ssb-host-dev$d.json"
done
resident=${gpu_list[0]:-0}
run_step "ssb-resident-dev$resident" - "$bin/bench/coproc-ssb" --sf "$sf" --device "$resident" \
    --resident --repeat "$repeat" --json "$out/ssb-resident-dev$resident.json"

# ---- summary.md
total_s=$(($(date +%s) - t_start))
summary_ok=1
python3 - "$out" "$total_s" "$quick" <<'PY' || summary_ok=0
import glob, json, math, os, re, sys
import xml.etree.ElementTree as ET

out, total_s, quick = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
lines = []
w = lines.append


def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception:
        return None


def fnum(x, fmt="{:.2f}", none="-"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return none
    return fmt.format(x)


def pct(x):
    return fnum(None if x is None else 100 * x, "{:.1f} %")


def geomean(xs):
    xs = [x for x in xs if isinstance(x, (int, float)) and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def table(head, rows):
    w("| " + " | ".join(head) + " |")
    w("|" + "|".join(" --- " if i == 0 else " ---: " for i in range(len(head))) + "|")
    for r in rows:
        w("| " + " | ".join(str(c) for c in r) + " |")
    w("")


machine = {}
try:
    for ln in open(os.path.join(out, "machine.txt")):
        if ": " in ln and not ln.startswith(" "):
            k, v = ln.rstrip("\n").split(": ", 1)
            machine.setdefault(k, v)
except OSError:
    pass

steps = []
try:
    with open(os.path.join(out, "steps.tsv")) as f:
        next(f)
        for ln in f:
            p = ln.rstrip("\n").split("\t")
            if len(p) >= 5:
                steps.append(p)
except OSError:
    pass
failed = [s for s in steps if s[1] not in ("0", "skipped")]

devs = (load("devices.json") or {}).get("devices", [])
gpus = [d for d in devs if d.get("type") == "gpu"]

w("# coproc GPU report")
w("")
w(f"{machine.get('date', '?')} on `{machine.get('host', '?')}`, {machine.get('os', '?')}, "
  f"{machine.get('cores', '?')} cores, {machine.get('memory', '?')} ({machine.get('cpu', '?')}); "
  f"commit `{machine.get('commit', '?')}`; {'quick run (`--quick`)' if quick else 'full run'}, "
  f"SSB at SF {machine.get('ssb_sf', '?')}, {machine.get('repeat', '?')} repeat(s); "
  f"wall time {total_s // 60} min {total_s % 60} s.")
w("")
if gpus:
    w("GPU found: " + ", ".join(f"device {d['index']} `{d['name']}`" for d in gpus) + ".")
else:
    w("**no GPU found: figures are PoCL's** (every device below is what OpenCL offers here).")
w("")
if failed:
    w("**Failed steps: " + ", ".join(f"{s[0]} (exit {s[1]}{', timed out' if s[1] == '124' else ''})"
                                     for s in failed) + "** - their logs are in `logs/`.")
else:
    w("All steps succeeded.")
w("")

w("## Devices (`coproc-calibrate --list`)")
w("")
if devs:
    table(["#", "type", "name", "platform / driver", "CUs", "memory GiB", "host-unified", "PCI", "NUMA"],
          [[d.get("index"), d.get("type"), d.get("name"), f"{d.get('platform')} {d.get('driver_version')}",
            d.get("compute_units"), fnum(d.get("global_mem_bytes", 0) / 2**30, "{:.1f}"),
            "yes" if d.get("host_unified_memory") else "no", d.get("pci_bus_id") or "-",
            d.get("numa_node")] for d in devs])
else:
    w("No device list (see `logs/devices.log`).")
    w("")
nv = [ln.strip() for ln in open(os.path.join(out, "machine.txt")) if ln.startswith("  GPU")] \
    if os.path.exists(os.path.join(out, "machine.txt")) else []
if nv:
    w("`nvidia-smi -L`: " + "; ".join(nv))
    w("")

w("## Steps")
w("")
table(["step", "result", "seconds", "output"],
      [[s[0], "ok" if s[1] == "0" else ("skipped: " + s[4] if s[1] == "skipped" else
                                       f"**FAILED** (exit {s[1]}{', timed out' if s[1] == '124' else ''})"),
        s[2], f"`{s[3]}`" if s[3] != "-" else "-"] for s in steps])

# ---- tests
w("## Tests (CTest)")
w("")
junit = os.path.join(out, "tests-junit.xml")
counts, case_skips = None, []
if os.path.exists(junit) and os.path.getsize(junit) > 0:
    try:
        root = ET.parse(junit).getroot()
        passed, fail, skipped = [], [], []
        for tc in root.iter("testcase"):
            name = tc.get("name")
            for so in tc.iter("system-out"):
                for case in re.findall(r"^\[  SKIPPED \] (test_\w+)\s*$", so.text or "", re.M):
                    case_skips.append(f"{name}: {case}")
            if tc.find("failure") is not None or tc.find("error") is not None or tc.get("status") == "fail":
                fail.append(name)
            elif tc.find("skipped") is not None or tc.get("status") in ("notrun", "disabled"):
                skipped.append(name)
            else:
                passed.append(name)
        counts = (passed, fail, skipped)
    except ET.ParseError:
        pass
if counts is None and os.path.exists(os.path.join(out, "logs/tests.log")):
    text = open(os.path.join(out, "logs/tests.log")).read()
    res = re.findall(r"Test\s+#\d+: (\S+) \.+\**\s*(Passed|Failed|Skipped|Not Run|Timeout|Exception|\S+)", text)
    if res:
        counts = ([n for n, r in res if r == "Passed"], [n for n, r in res if r not in ("Passed", "Skipped", "Not Run")],
                  [n for n, r in res if r in ("Skipped", "Not Run")])
if counts:
    passed, fail, skipped = counts
    w(f"{len(passed)} passed, {len(fail)} failed, {len(skipped)} skipped, of {sum(map(len, counts))}.")
    if fail:
        w("")
        w("Failed: " + ", ".join(f"`{n}`" for n in fail) + " (output in `logs/tests.log`).")
    if skipped:
        w("")
        w("Skipped: " + ", ".join(f"`{n}`" for n in skipped) + ".")
    if case_skips:
        w("")
        w(f"Inside tests that passed, {len(set(case_skips))} cmocka case(s) skipped themselves (a device "
          "or feature missing): " + ", ".join(f"`{c}`" for c in sorted(set(case_skips))) + ".")
else:
    w("Not run or no results (see `logs/tests.log`, `logs/build.log`).")
w("")

# ---- calibration
w("## Calibration (`coproc-calibrate --force --check --plot`)")
w("")
cal = load("calibrate.json")
if cal:
    rows = []
    for i, p in enumerate(cal.get("devices", [])):
        t = p.get("transfer", {})
        g = lambda k: fnum((t.get(k) or {}).get("bytes_per_s", 0) / 1e9, "{:.1f}")
        rows.append([f"{i} `{p.get('device')}`", "full" if p.get("full") else "quick",
                     fnum(p.get("calibration_seconds"), "{:.0f}"), g("h2d_pinned"), g("h2d_pageable"),
                     g("d2h_pinned"), g("d2h_pageable"),
                     fnum((p.get("both_directions_bytes_per_s") or 0) / 1e9, "{:.1f}"),
                     fnum((p.get("memory") or {}).get("copy_bytes_per_s", 0) / 1e9, "{:.1f}"),
                     fnum((p.get("launch_latency_s") or 0) * 1e6, "{:.1f}")])
    table(["device", "pass", "s", "H2D pinned GB/s", "H2D pageable", "D2H pinned", "D2H pageable",
           "both ways", "memory copy GB/s", "launch us"], rows)
    rows = []
    for c in cal.get("check", []):
        pin, pag = c.get("pinned", {}), c.get("pageable", {})
        ops, small = c.get("operators", {}), c.get("operators_small", {})
        rows.append([c.get("device"), pct(pin.get("median_rel_error")), pct(pin.get("live_median_rel_error")),
                     pct(pag.get("median_rel_error")), pct(pag.get("live_median_rel_error")),
                     f"{pct(ops.get('median_rel_error'))} / {pct(ops.get('p90_rel_error'))}",
                     f"{pct(small.get('median_rel_error'))} / {pct(small.get('p90_rel_error'))}",
                     f"{fnum(c.get('load_average_before'))} / {fnum(c.get('load_average_after'))}"])
    if rows:
        w("The check: median |predicted - measured| / measured at sizes not fitted on "
          "(transfers 1 MiB up, both directions; 'runtime' = the runtime's own prediction with its "
          "learned transfer level).")
        w("")
        table(["device", "pinned: profile", "pinned: runtime", "pageable: profile", "pageable: runtime",
               "operators 2^20-2^23 median / p90", "operators 2^14-2^20 median / p90", "load before / after"], rows)
        for c in cal.get("check", []):
            per = (c.get("operators") or {}).get("operators") or {}
            if per:
                w(f"Device {c.get('device')}, per operator (2^20-2^23): " + ", ".join(
                    f"{k} {pct(v.get('median_rel_error'))}" for k, v in per.items()) + ".")
                w("")
else:
    w("No calibration results (see `logs/calibrate.log`).")
    w("")
pngs = sorted(glob.glob(os.path.join(out, "calibrate-plots", "*.png")))
scripts = sorted(glob.glob(os.path.join(out, "calibrate-plots", "*.gnuplot")))
if pngs:
    w(f"Plots: {len(pngs)} PNGs in `calibrate-plots/`.")
elif scripts:
    w("Plots: **gnuplot is not installed here, so no PNGs**; the data files and gnuplot scripts are in "
      "`calibrate-plots/` (render elsewhere: `cd calibrate-plots && gnuplot device0.gnuplot`).")
else:
    w("Plots: none written.")
w("")

# ---- coproc-bench
w("## Operators (`coproc-bench`, data on the device, best of 3)")
w("")
# issue 4's H100 targets, where a figure maps onto one
targets = {"sum int32": ("of copy bandwidth", lambda r: r["ratio_to_memory_bandwidth"] >= 0.85, ">= 85 % of memory bandwidth"),
           "select 50% int32 -> positions": ("", lambda r: r["input_GBps"] >= 1500, ">= 1.5 TB/s"),
           "sort uint32 keys": ("", lambda r: r["grows_per_s"] >= 25, ">= 25 Gkeys/s"),
           "sort uint32 key/value": ("", lambda r: r["grows_per_s"] >= 20, ">= 20 Gkeys/s"),
           "group-by sum 1024 groups": ("", lambda r: r["grows_per_s"] >= 20, ">= 20 Grows/s"),
           "hash join probe (n into n/16)": ("", lambda r: r["grows_per_s"] >= 10, ">= 10 Gprobes/s")}
any_bench = False
for fname in ("bench-gpu.json", "bench-cpu.json"):
    b = load(fname)
    if not b:
        continue
    for d in b.get("devices", []):
        res = d.get("results", [])
        if not res:
            continue
        any_bench = True
        top = max(r["rows"] for r in res)
        is_gpu = d.get("type") == "gpu"
        w(f"Device {d.get('index')} `{d.get('name')}` ({d.get('type')}), copy kernel "
          f"{fnum(d.get('copy_bandwidth_GBps'), '{:.1f}')} GB/s; largest size 2^{int(math.log2(top))} rows "
          f"(`{fname}` has every size):")
        w("")
        rows = []
        for r in res:
            if r["rows"] != top:
                continue
            row = [r["operator"], fnum(r["seconds"] * 1e3, "{:.3f}"), fnum(r["grows_per_s"], "{:.3f}"),
                   fnum(r["input_GBps"], "{:.1f}"), pct(r["ratio_to_memory_bandwidth"])]
            if is_gpu:
                t = targets.get(r["operator"])
                row.append(f"{t[2]}: {'met' if t[1](r) else 'not met'}" if t else "-")
            else:
                row.append(f"{fnum(r.get('ratio_to_baseline'))}x {r.get('baseline')}" if r.get("baseline") else "-")
            rows.append(row)
        table(["operator", "ms", "Grows/s", "GB/s", "of copy bandwidth",
               "issue 4 target (H100)" if is_gpu else "vs C on the same cores"], rows)
if not any_bench:
    w("No results (see `logs/bench-*.log`).")
    w("")

# ---- model check
w("## Cost models (`coproc-model-check`)")
w("")
mc = load("model-check.json")
if mc and mc.get("devices"):
    opnames = list(mc["devices"][0].get("operators", {}).keys())
    table(["device"] + opnames,
          [[f"{i} `{d.get('name')}`"] + [f"{pct(d['operators'][o].get('median_rel_error'))} / "
                                         f"{pct(d['operators'][o].get('p90_rel_error'))}"
                                         if o in d.get("operators", {}) else "-" for o in opnames]
           for i, d in enumerate(mc["devices"])])
    w("Median / p90 relative error of the learned models' predictions.")
else:
    w("No results (see `logs/model-check.log`).")
w("")

# ---- workload
w("## Placement (`coproc-workload`)")
w("")
for fname, label in (("workload.json", "mixed workload, host data"),
                     ("workload-bus-bound.json", "bus-bound workload, pinned host data")):
    wl = load(fname)
    if not wl:
        w(f"{label}: no results (see `logs/{fname[:-5]}.log`).")
        w("")
        continue
    labels = {d["index"]: d.get("label", str(d["index"])) for d in wl.get("devices", [])}
    sd = wl.get("single_device_makespan_s", {})
    w(f"{label} ({wl.get('tasks')} operators, {wl.get('streams')} streams, median of "
      f"{wl.get('repeat')}); alone: " + ", ".join(f"{k} {fnum(v * 1e3, '{:.1f}')} ms" for k, v in sd.items())
      + f"; results {'correct' if wl.get('results_ok') else '**WRONG**'}.")
    w("")
    rows = []
    for name, p in (wl.get("policies") or {}).items():
        tpd = p.get("tasks_per_device") or []
        rows.append([name, fnum(p.get("makespan_s", 0) * 1e3, "{:.1f}"),
                     fnum(p.get("speedup_vs_best_single")),
                     " / ".join(f"{labels.get(i, i)} {n}" for i, n in enumerate(tpd)),
                     pct(p.get("estimation_error_median")), fnum(p.get("bytes_moved", 0) / 1e6, "{:.1f}")])
    table(["policy", "makespan ms", "vs best single device", "operators per device", "median estimate error",
           "MB moved"], rows)

# ---- datamove
w("## Data movement (`coproc-datamove`)")
w("")
dm = load("datamove.json")
if dm:
    for d in dm.get("devices", []):
        figs = {f["name"]: f for f in d.get("figures", [])}
        checks = d.get("checks", [])
        bad = [c["name"] for c in checks if not c.get("ok")]
        w(f"Device {d.get('index')} `{d.get('name')}` ({d.get('type')}, "
          f"{'host-unified' if d.get('host_unified_memory') else 'discrete'}): checks "
          f"{len(checks) - len(bad)} of {len(checks)} ok" + (f", failing: {', '.join(bad)}" if bad else "") + ".")
        w("")
        rows = []
        for f in figs.values():
            unit = f.get("unit")
            v = f.get("value")
            val = fnum(v, "{:.2f}") + " GB/s" if unit == "GB/s" else (
                fnum(v / 1e6, "{:.1f}") + " M rows/s" if unit == "rows/s" else fnum(v, "{:.0f}") + " " + unit)
            ratios = ", ".join(f"{fnum(x)} of {k}" for k, x in (f.get("ratios") or {}).items())
            t = f.get("target")
            tgt = f"{'met' if t.get('met') else '**not met**'} (>= {t.get('min_ratio')} of {t.get('of')})" if t else ""
            rows.append([f["name"], val, ratios or "-", tgt or "-"])
        table(["figure", "value", "ratios", "target"], rows)
else:
    w("No results (see `logs/datamove.log`).")
    w("")

# ---- SSB
w("## Star Schema Benchmark (`coproc-ssb`)")
w("")
runs = []
devnum = lambda p: re.search(r"dev(\d+)\.json$", p).group(1)
for fname, label in [("ssb-host-all.json", "host data, placed over all devices")] + \
        [(os.path.basename(p), "host data, device %s alone (fused)" % devnum(p))
         for p in sorted(glob.glob(os.path.join(out, "ssb-host-dev*.json")))] + \
        [(os.path.basename(p), "resident on device %s" % devnum(p))
         for p in sorted(glob.glob(os.path.join(out, "ssb-resident-dev*.json")))]:
    s = load(fname)
    if s:
        runs.append((label, fname, s))
if runs:
    rows = []
    for label, fname, s in runs:
        q = s.get("queries", [])
        rows.append([label, f"`{fname}`", "yes" if s.get("verified") else "**NO**",
                     fnum(sum(x["seconds"] for x in q if x.get("seconds")) * 1e3, "{:.1f}"),
                     fnum(geomean([x.get("bandwidth_bound_ratio") for x in q])),
                     fnum(max([x.get("bandwidth_bound_ratio") or 0 for x in q] or [0]) or None),
                     fnum(s.get("fused_vs_operators_geomean")),
                     fnum(geomean([x.get("speedup_vs_best_single_device") for x in q])),
                     fnum(geomean([x.get("speedup_vs_scalar_c") for x in q])),
                     fnum(sum(x.get("bytes_moved") or 0 for x in q) / 1e6, "{:.1f}")])
    w(f"SF {runs[0][2].get('sf')}, median of {runs[0][2].get('repeat')} run(s); geometric means over the 13 queries.")
    w("")
    table(["run", "file", "verified", "fused total ms", "fused / bandwidth bound", "worst query",
           "fused vs operators", "vs best single device", "vs scalar C", "MB moved"], rows)
    names = [x["name"] for x in runs[0][2].get("queries", [])]
    head, cols = ["query"], []
    for label, fname, s in runs:
        byname = {x["name"]: x for x in s.get("queries", [])}
        tag = fname[4:-5]
        head += [f"{tag} ms", f"{tag} / bound"]
        cols.append(byname)
    table(head, [[n] + sum(([fnum((c.get(n) or {}).get("seconds", 0) * 1e3, "{:.1f}") if c.get(n) and c[n].get("seconds") else "-",
                             fnum((c.get(n) or {}).get("bandwidth_bound_ratio"))] for c in cols), [])
                 for n in names])
    w("Targets (issue 14): fused >= 3x operator-at-a-time; on a GPU, SF 10 resident within 2x of the "
      "bandwidth bound and placement with host data at least as fast as the best single device.")
else:
    w("No results (see `logs/ssb-*.log`).")
w("")

with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(lines).rstrip("\n") + "\n")
PY

fails=$(awk -F'\t' 'NR > 1 && $2 != "0" && $2 != "skipped"' "$steps" | wc -l)
if [ "$summary_ok" = 0 ]; then
    echo "gpu-report: writing summary.md failed (the JSON files and logs are there)" >&2
    fails=$((fails + 1))
fi
echo "gpu-report: $out/summary.md ($(($(date +%s) - t_start)) s; $fails failed step(s))" >&2
[ "$fails" = 0 ]
