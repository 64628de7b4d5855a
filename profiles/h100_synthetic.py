#!/usr/bin/env python3
"""h100_synthetic.py - writes profiles/h100-synthetic.json, a coproc.profile
(schema_version 2, docs/profile.md) for an NVIDIA H100 built only from the
figures measured on that GPU in /work/shared/DESIGN.md ("Measured facts (H100
machine)"), and prints the derivation table of profiles/README.md.

    python3 profiles/h100_synthetic.py [OUT.json] [--table]

Every number below names the figure it comes from; the arithmetic is the
table's. Deterministic: the same inputs give the same file (created_unix is
fixed to the day the figures were turned into this profile).
"""
import json
import math
import sys

MiB = 1 << 20
KiB = 1 << 10

# ---------------------------------------------------------------- the figures
# DESIGN.md, "Measured facts (H100 machine, OpenCL, 2026-11)"
PINNED_RATES = [(1 * MiB, 30e9), (16 * MiB, 52e9), (256 * MiB, 55e9)]  # H2D and D2H each
PAGEABLE_H2D_RANGE = (7e9, 15e9)
BOTH_DIRECTIONS = 93e9
MEM_READ = 2.9e12          # OpenCL reduction, 256 MiB
MEM_COPY = 3.0e12          # device copy (bytes read + written)
LAUNCH_FINISH = 10e-6      # kernel launch + finish
LAUNCH_BACK_TO_BACK = 5.5e-6
BUILD_SOURCE_RANGE = (0.1, 0.5)
BUILD_CACHED_BELOW = 1e-3  # "~0 ms"
# Other runtimes on the same H100, 2^28 elements
PEER_N = 1 << 28
PEER_SUM_INT32 = 2.05e12       # B/s, cupy
PEER_SELECT_50 = 447e9         # input B/s, torch
PEER_SORT_KV = 19.4e9          # keys/s, torch, 32-bit key + 32-bit value
PEER_SORT_KEYS = 39e9          # keys/s, CUB, keys only (cross-check)
PEER_GROUP_BY_1024 = 19.1e9    # rows/s, sum over 1024 groups (int32 keys, int32 values)
PEER_JOIN_PROBE = 6.3e9        # probes/s, 2^28 probes into 2^24 keys, sorted search
PEER_JOIN_BUILD = 1 << 24

# ---------------------------------------------------------------- choices
PAGEABLE = (PAGEABLE_H2D_RANGE[0] + PAGEABLE_H2D_RANGE[1]) / 2  # 11 GB/s, the middle
BUILD_SOURCE = (BUILD_SOURCE_RANGE[0] + BUILD_SOURCE_RANGE[1]) / 2  # 0.3 s
BUILD_CACHED = BUILD_CACHED_BELOW / 2  # 0.5 ms: "~0 ms" is below 1 ms; 0 would read "unmeasured"
# Efficiency of coproc's streaming kernels against the measured copy rate, for
# the operators without a peer figure: the best peer streaming operator (cupy's
# sum, 2.05 TB/s) reached 2.05 / 2.9 = 0.71 of the read kernel's rate; 0.70.
ETA = 0.70
B_EFF = ETA * MEM_COPY        # 2.1e12 bytes of traffic (read + written) per second
SECTOR = 32                   # bytes of DRAM traffic per random access (one sector)
CREATED_UNIX = 1795478400.0   # 2026-11-24 00:00:00 UTC, the day this was derived


def fixed_cost(kernels, syncs):
    """c0 of an operator that enqueues `kernels` kernels and waits for the
    device `syncs` times (blocking reads, clFinish): each wait costs the
    launch + finish figure, each other kernel the back-to-back figure."""
    return syncs * LAUNCH_FINISH + (kernels - syncs) * LAUNCH_BACK_TO_BACK


# Kernels and waits per call, counted in runtime/ops/ (commit 49408c1) for the
# calibration's shapes.
LAUNCHES = {
    "reduce": (1, 1),      # reduce kernel; blocking read of the partials
    "select": (2, 2),      # filter; blocking read of counts; positions; clFinish
    "map": (1, 1),         # map kernel; clFinish
    "gather": (1, 1),      # gather kernel; blocking read of the bad-position flag
    "scan": (3, 2),        # sums; group scan; blocking read of the total; apply; clFinish
    "group_by": (10, 3),   # init, insert (+read overflow), aggregate, flags, flags->positions
                           # (3-kernel scan + read + scatter), keys, aggregates; clFinish
    "sort": (12, 2),       # digit counts of all passes (+read), 4 passes x (hist, scan,
                           # scatter) less the first hist; clFinish
    "hash_join": (10, 2),  # count, scan (3), place, match, scan (3) + read, pairs; clFinish
    "merge_join": (33, 6), # 2 x (copy, iota, sort 12 kernels 2 waits), count, scan (3) +
                           # read, pairs; clFinish
    "semi_join": (18, 4),  # copy, sort (12, 2 waits), search, flags->positions (4 + read);
                           # clFinish
}


def c0(kind):
    return fixed_cost(*LAUNCHES[kind])


# ---------------------------------------------------------------- transfers
def fit_line(points):
    """t = L + b / B through (bytes, seconds), least squares on relative error
    (weights 1/t^2, as bus.c fits), L >= 0."""
    # minimise sum ((L + b*s - t) / t)^2 over L, s = 1/B: 2x2 normal equations
    a11 = a12 = a22 = r1 = r2 = 0.0
    for b, t in points:
        w = 1.0 / (t * t)
        a11 += w
        a12 += w * b
        a22 += w * b * b
        r1 += w * t
        r2 += w * b * t
    det = a11 * a22 - a12 * a12
    L = (r1 * a22 - r2 * a12) / det
    s = (a11 * r2 - a12 * r1) / det
    if L < 0:
        L = 0.0
        s = r2 / a22
    return L, 1.0 / s


def sweep_sizes():
    """The full calibration's sweep (bus.c sweep_sizes): 4 KiB x4 to 1 MiB,
    then x sqrt(2) rounded to 4 KiB up to 256 MiB."""
    sizes = []
    b = 4 * KiB
    while b <= MiB:
        sizes.append(b)
        b *= 4
    e = 1
    while True:
        b = 4 * KiB * math.floor(MiB * 2 ** (0.5 * e) / (4 * KiB) + 0.5)
        if b > 256 * MiB * 1.0001:
            break
        sizes.append(int(b))
        e += 1
    return sizes


PINNED_POINTS = [(b, b / r) for b, r in PINNED_RATES]
PIN_L, PIN_B = fit_line(PINNED_POINTS)


def transfer(latency, bw):
    return {"latency_s": latency, "bytes_per_s": bw,
            "points": [[float(b), latency + b / bw] for b in sweep_sizes()]}


# ---------------------------------------------------------------- operators
def through(kind, total_s, fixed_other, x1):
    """c1 such that c0 + c1*x1 + fixed_other = total_s: the model passes
    through the peer's measured point."""
    return (total_s - c0(kind) - fixed_other) / x1


def expected_groups(g, n):
    return g * (1 - (1 - 1 / g) ** n)


N = PEER_N
MODELS = {}
DERIV = []  # rows of the derivation table


def row(field, value, source, arithmetic):
    DERIV.append((field, value, source, arithmetic))


# reduce: x = {input bytes}
T = 4 * N / PEER_SUM_INT32
c1 = through("reduce", T, 0, 4 * N)
MODELS["reduce"] = [c0("reduce"), c1]

# select: x = {input bytes, output rows}; the output term writes a 4-byte position
c2 = 4 / B_EFF
T = 4 * N / PEER_SELECT_50
c1 = through("select", T, c2 * N / 2, 4 * N)
MODELS["select"] = [c0("select"), c1, c2]

# map: x = {input bytes, output bytes}; streaming, every byte once at ETA x copy rate
MODELS["map"] = [c0("map"), 1 / B_EFF, 1 / B_EFF]

# gather: x = {values + positions bytes, output bytes}; inputs as if streamed once,
# each 4-byte output value a random 32-byte sector, plus its write
MODELS["gather"] = [c0("gather"), 1 / B_EFF, (SECTOR / 4 + 1) / B_EFF]

# scan: x = {input bytes, output bytes}; reduce-then-scan reads the input twice
# (pass 1 sums, pass 3 apply) and writes the output once
MODELS["scan"] = [c0("scan"), 2 / B_EFF, 1 / B_EFF]

# group_by: x = {keys + values bytes, groups}; no figure varies the group count
T = N / PEER_GROUP_BY_1024
c1 = through("group_by", T, 0, 8 * N)
MODELS["group_by"] = [c0("group_by"), c1, 0.0]

# sort: x = {bytes moved, rows*log2(rows)}. Key+value and keys-only at the same
# n: the difference is per byte; what is left for the n log n term is < 0, so
# that coefficient is 0 (coefficients are >= 0) and the line goes through the
# key+value figure.
T_KV = N / PEER_SORT_KV
T_K = N / PEER_SORT_KEYS
c1_diff = (T_KV - T_K) / (4 * N)
c2_left = (T_K - c0("sort") - c1_diff * 4 * N) / (N * math.log2(N))
c1 = through("sort", T_KV, 0, 8 * N)
MODELS["sort"] = [c0("sort"), c1, 0.0]
SORT_PER_BYTE = c1

# hash_join: x = {bytes of both sides, pairs}; the probe figure, the build rows
# charged at the probe rate too; each pair writes two 4-byte positions
c2 = 8 / B_EFF
T = (N + PEER_JOIN_BUILD) / PEER_JOIN_PROBE
c1 = through("hash_join", T, c2 * N, 4 * (N + PEER_JOIN_BUILD))
MODELS["hash_join"] = [c0("hash_join"), c1, c2]

# merge_join (no peer figure): per row of either side a key copy (4 B read +
# 4 B written) and an iota (4 B written) at ETA x copy rate and a key+value
# sort (8 bytes moved, the sort model's rate); per left row a binary search at
# the sorted-search probe rate; the calibration's shape has left = 1/5 of all
# rows. Per pair: the two positions it pairs read (the sorted sides' row
# positions, in order) and written: 16 bytes.
per_row = 12 / B_EFF + 8 * SORT_PER_BYTE + 0.2 / PEER_JOIN_PROBE
MODELS["merge_join"] = [c0("merge_join"), per_row / 4, 16 / B_EFF]

# semi_join (no peer figure): the build side (1/5 of the rows) copied and
# sorted keys-only (4 bytes moved); each probe row (4/5) a binary search at the
# sorted-search probe rate plus its flag written and scanned (4 B written, read
# twice, the positions scatter reads it once more: 16 B); per output row a
# 4-byte position written.
per_row = 0.2 * (8 / B_EFF + 4 * SORT_PER_BYTE) + 0.8 * (1 / PEER_JOIN_PROBE + 16 / B_EFF)
MODELS["semi_join"] = [c0("semi_join"), per_row / 4, 4 / B_EFF]


# ---------------------------------------------------------------- curve points
def shapes(kind, n):
    """(x..., ) of the calibration's shapes (operators.c) at n rows."""
    m = n // 4
    if kind == "reduce":
        return [(4 * n,)]
    if kind == "select":
        return [(4 * n, round(n * p / 100)) for p in (10, 50, 90)]
    if kind == "map":
        return [(4 * n, 4 * n), (4 * n, 8 * n)]
    if kind == "gather":
        return [(4 * n + 4 * (n // q), 4 * (n // q)) for q in (1, 4)]
    if kind == "scan":
        return [(4 * n, 8 * n), (8 * n, 8 * n)]
    if kind == "group_by":
        return [(8 * n, round(expected_groups(g, n))) for g in (16, 1024, 65536)]
    if kind == "sort":
        return [(8 * n, n * math.log2(n)), (4 * n, n * math.log2(n))]
    if kind in ("hash_join", "merge_join", "semi_join"):
        return [(4 * (n + m), n), (4 * (n + m), n // 10)]
    raise KeyError(kind)


ROW_EXPONENTS = range(14, 29, 2)  # 2^14 .. 2^28 rows (the peer figures are at 2^28)


def predict(coef, x):
    return coef[0] + sum(c * v for c, v in zip(coef[1:], x))


def model_json(kind):
    coef = MODELS[kind]
    pts = []
    for e in ROW_EXPONENTS:
        for x in shapes(kind, 1 << e):
            pts.append([float(v) for v in x] + [predict(coef, x)])
    k = len(coef) - 1
    return {"points": pts, "features": k, "coef": coef, "knot": 0.0,
            "observations": len(pts), "refits": 1,
            "lo": [min(p[i] for p in pts) for i in range(k)],
            "hi": [max(p[i] for p in pts) for i in range(k)]}


KINDS = ["reduce", "select", "map", "gather", "scan", "group_by", "sort", "hash_join",
         "merge_join", "semi_join"]


def profile():
    return {
        "schema": "coproc.profile",
        "schema_version": 2,
        "coproc_version": "0.1.0",
        "fingerprint": "synthetic|NVIDIA H100 PCIe (synthetic)|figures of /work/shared/DESIGN.md"
                       " (H100 machine, 2026-11), see profiles/README.md|coproc-0.1.0",
        "device": "NVIDIA H100 PCIe (synthetic)",
        "synthetic": True,
        "created_unix": CREATED_UNIX,
        "full": True,
        "calibration_seconds": 0.0,
        "transfer": {
            "h2d_pinned": transfer(PIN_L, PIN_B),
            "d2h_pinned": transfer(PIN_L, PIN_B),
            "h2d_pageable": transfer(PIN_L, PAGEABLE),
            "d2h_pageable": transfer(PIN_L, PAGEABLE),
        },
        "both_directions_bytes_per_s": BOTH_DIRECTIONS,
        "memory": {"copy_bytes_per_s": MEM_COPY, "read_bytes_per_s": MEM_READ},
        "compute": {"int_ops_per_s": 0.0, "float_ops_per_s": 0.0},
        "launch_latency_s": LAUNCH_FINISH,
        "build": {"source_s": BUILD_SOURCE, "cached_s": BUILD_CACHED},
        "operators": {k: model_json(k) for k in KINDS},
        # What the simulated-device backend needs beyond a calibration
        # (runtime/backend/sim/open.c): a discrete GPU with its own memory
        # (~78 GiB usable, as the GPU host reports), fp64, 5 % noise.
        "simulated_device": {"type": "gpu", "global_mem_bytes": 78 << 30,
                             "host_unified_memory": False, "fp64": True, "noise": 0.05},
    }


def us(s):
    return f"{s * 1e6:.2f} µs"


def per_byte(c):
    return f"1 / {1 / c / 1e9:.1f} GB/s" if c > 0 else "0"


def table():
    out = []
    t = lambda *a: out.append("| " + " | ".join(a) + " |")
    t("field", "value", "source figure", "arithmetic")
    t("---", "---", "---", "---")
    fit_err = ", ".join(f"{b // MiB} MiB {b / (PIN_L + b / PIN_B) / 1e9:.1f} GB/s"
                        for b, _ in PINNED_RATES)
    t("transfer.h2d_pinned / d2h_pinned .latency_s", us(PIN_L),
      "55 GB/s at 256 MiB, 52 at 16 MiB, 30 at 1 MiB",
      "t = bytes / rate at each size (34.95 µs, 322.6 µs, 4880.6 µs); line fitted for relative "
      f"error (weights 1/t², as bus.c); the line gives back {fit_err}")
    t("transfer.h2d_pinned / d2h_pinned .bytes_per_s", f"{PIN_B / 1e9:.2f} GB/s", "same", "slope of that line")
    t("transfer.*_pinned.points", "21 points", "the line",
      "t = latency + bytes / bandwidth at the full sweep's sizes (4 KiB ... 256 MiB, bus.c)")
    t("transfer.h2d_pageable.bytes_per_s", f"{PAGEABLE / 1e9:.0f} GB/s", "pageable H2D 7–15 GB/s",
      "the middle of the range, (7 + 15) / 2; latency taken from the pinned line (no figure)")
    t("transfer.d2h_pageable", f"{PAGEABLE / 1e9:.0f} GB/s, {us(PIN_L)}", "none (assumed)",
      "no pageable D2H figure: taken equal to pageable H2D, as the pinned figures are symmetric")
    t("both_directions_bytes_per_s", "93 GB/s", "both directions at once, two queues, 93 GB/s", "as is")
    t("memory.read_bytes_per_s", "2.9 TB/s", "OpenCL reduction 256 MiB, 2.9 TB/s", "as is")
    t("memory.copy_bytes_per_s", "3.0 TB/s", "device copy 3.0 TB/s", "as is (read + written, as memory.c counts)")
    t("compute.int_ops_per_s, float_ops_per_s", "0 (unmeasured)", "none",
      "DESIGN.md has no compute figure; 0 is the format's \"not measured\"")
    t("launch_latency_s", "10 µs", "kernel launch + finish 10 µs", "as is")
    t("build.source_s", "0.3 s", "build from source 0.1–0.5 s", "the middle, (0.1 + 0.5) / 2")
    t("build.cached_s", "0.5 ms", "cached binary ~0 ms", "below 1 ms: half of it (0 would mean unmeasured)")
    t("(efficiency η)", f"{ETA:.2f}, B_eff = {B_EFF / 1e12:.1f} TB/s", "cupy sum 2.05 TB/s vs reduction 2.9 TB/s",
      "2.05 / 2.9 = 0.707 → 0.70; B_eff = 0.70 × 3.0 TB/s copy, bytes read + written")
    for k in KINDS:
        kern, syncs = LAUNCHES[k]
        t(f"operators.{k}.coef[0]", us(MODELS[k][0]), "launch + finish 10 µs, back to back 5.5 µs",
          f"{syncs} wait{'s' * (syncs != 1)} × 10 µs + {kern - syncs} more "
          f"kernel{'s' * (kern - syncs != 1)} × 5.5 µs (counted in runtime/ops/)")
    N28 = "2^28"
    t("operators.reduce.coef[1]", per_byte(MODELS["reduce"][1]), "sum int32 2.05 TB/s (cupy)",
      f"(2^30 B / 2.05 TB/s = {us(4 * N / PEER_SUM_INT32)} − c0) / 2^30 B: the model passes through the figure")
    t("operators.select.coef[2]", f"{MODELS['select'][2] * 1e12:.3f} ps / row",
      "copy 3.0 TB/s, η", "a 4-byte position written per output row: 4 B / 2.1 TB/s")
    t("operators.select.coef[1]", per_byte(MODELS["select"][1]), "50 % selection 447 GB/s (torch)",
      f"(2^30 B / 447 GB/s = {4 * N / PEER_SELECT_50 * 1e3:.3f} ms − c0 − coef[2] × 2^27 rows) / 2^30 B")
    t("operators.map.coef[1], coef[2]", f"{per_byte(MODELS['map'][1])} each", "copy 3.0 TB/s, η = 0.70 (no peer figure)",
      "every input byte read and output byte written once at B_eff")
    t("operators.gather.coef[1]", per_byte(MODELS["gather"][1]), "copy 3.0 TB/s, η (no peer figure)",
      "values and positions charged as if read once at B_eff (over-counts the values: conservative)")
    t("operators.gather.coef[2]", per_byte(MODELS["gather"][2]), "copy 3.0 TB/s, η",
      "per 4-byte output value a random 32-byte DRAM sector (8 B per output byte) + its write (1): 9 / B_eff")
    t("operators.scan.coef[1], coef[2]", f"{per_byte(MODELS['scan'][1])}, {per_byte(MODELS['scan'][2])}",
      "copy 3.0 TB/s, η (no peer figure)", "reduce-then-scan reads the input twice (2 / B_eff), writes the output once (1 / B_eff)")
    t("operators.group_by.coef[1]", per_byte(MODELS["group_by"][1]), "group-by sum, 1024 groups, 19.1 Grows/s",
      f"(2^28 rows / 19.1 G/s = {N / PEER_GROUP_BY_1024 * 1e3:.3f} ms − c0) / (8 B × 2^28) (keys + values)")
    t("operators.group_by.coef[2]", "0", "none", "no figure varies the group count; the cost is charged per input byte")
    t("operators.sort.coef[1]", per_byte(MODELS["sort"][1]), "sort key+value 19.4 Gkeys/s (torch)",
      f"(2^28 / 19.4 G/s = {T_KV * 1e3:.3f} ms − c0) / (8 B × 2^28) bytes moved")
    t("operators.sort.coef[2]", "0", "keys only 39 Gkeys/s (CUB)",
      f"key+value − keys only = {(T_KV - T_K) * 1e3:.3f} ms for 4 more bytes a key → {per_byte(c1_diff)}; "
      f"what keys-only leaves for the n·log2 n term is {c2_left * 1e12:.3f} ps < 0 → 0. The model gives keys only "
      f"{N / predict(MODELS['sort'], (4 * N, 0)) / 1e9:.1f} Gkeys/s (measured 39)")
    t("operators.hash_join.coef[2]", f"{MODELS['hash_join'][2] * 1e12:.3f} ps / pair", "copy 3.0 TB/s, η",
      "two 4-byte positions written per pair: 8 B / B_eff")
    t("operators.hash_join.coef[1]", per_byte(MODELS["hash_join"][1]), "join probe 2^28 into 2^24, 6.3 Gprobes/s",
      f"((2^28 + 2^24) rows / 6.3 G/s = {(N + PEER_JOIN_BUILD) / PEER_JOIN_PROBE * 1e3:.3f} ms − c0 − coef[2] × 2^28 pairs)"
      " / (4 B × (2^28 + 2^24)); build rows charged as probes (conservative)")
    t("operators.merge_join.coef[1]", per_byte(MODELS["merge_join"][1]), "sort 19.4 Gkeys/s, probe 6.3 G/s, copy, η (no peer figure)",
      "per row (4 input bytes): key copy + iota 12 B / B_eff + key+value sort 8 B × sort coef[1] + 0.2 binary searches / 6.3 G/s")
    t("operators.merge_join.coef[2]", per_byte(MODELS["merge_join"][2]), "copy 3.0 TB/s, η",
      "per pair: its two 4-byte positions read and written, 16 B / B_eff")
    t("operators.semi_join.coef[1]", per_byte(MODELS["semi_join"][1]), "sort, probe 6.3 G/s, copy, η (no peer figure)",
      "per row: 0.2 × (copy 8 B / B_eff + keys-only sort 4 B × sort coef[1]) + 0.8 × (1 / 6.3 G/s + flags 16 B / B_eff)")
    t("operators.semi_join.coef[2]", per_byte(MODELS["semi_join"][2]), "copy 3.0 TB/s, η", "a 4-byte position per output row")
    return "\n".join(out)


def main(argv):
    path = "profiles/h100-synthetic.json"
    args = [a for a in argv if not a.startswith("--")]
    if args:
        path = args[0]
    with open(path, "w") as f:
        json.dump(profile(), f, indent=1)
        f.write("\n")
    if "--table" in argv:
        print(table())


if __name__ == "__main__":
    main(sys.argv[1:])
