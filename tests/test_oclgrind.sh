#!/usr/bin/env bash
# test_oclgrind.sh BUILD_DIR SOURCE_DIR - kernels under Oclgrind, the OpenCL
# device simulator, with --data-races --uninitialized --check-api (through its
# environment variables, as Oclgrind is loaded as an ICD from a private
# OCL_ICD_VENDORS directory), on both kernel paths; any report fails the test.
# Oclgrind runs kernels about 1000x slower than PoCL: small sizes only.
# Checked: the casts of map.cl (test_portable's NaN cases), the generated
# query kernels (test_query, tables up to 777 rows), every operator at small
# sizes and the calibration kernels (test_portable test_ops_small), the fold
# of composite keys (test_composite_keys, up to 33 rows, with and without
# nulls), the null paths of every operator (test_nulls, quick), the fused query
# kernels over nulls (test_query_fused_nulls, quick, up to 33 rows), the
# streamed scatter (test_budget_scatter,
# up to 20000 rows). The Oclgrind
# quirks coproc applies (backend/opencl/quirks.c) are what make that possible:
# fill-by-write, write-new-buffers, context-per-thread.
set -u
build=$1
lib=/usr/lib/oclgrind/liboclgrind-rt-icd.so
[ -e "$lib" ] || lib=$(dpkg -L oclgrind 2>/dev/null | grep 'liboclgrind-rt-icd.so$' | head -1)
if [ -z "$lib" ] || [ ! -e "$lib" ]; then
    echo "skipped: Oclgrind is not installed (apt-get install oclgrind)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vendors"
echo "$lib" >"$tmp/vendors/oclgrind.icd"

export OCL_ICD_VENDORS=$tmp/vendors
export OCLGRIND_DATA_RACES=1 OCLGRIND_UNINITIALIZED=1 OCLGRIND_CHECK_API=1
# hwloc's OpenCL component probes vendor device queries (AMD, NVIDIA) that
# Oclgrind rightly answers CL_INVALID_VALUE: not coproc's calls, left out.
export HWLOC_COMPONENTS=-opencl
export COPROC_CALIBRATE=off COPROC_CACHE_DIR=$tmp/cache
unset COPROC_DEVICES RUSTICL_ENABLE COPROC_TEST_SKIP

failures=0
run() { # run PATH TEST-FILTER [PROGRAM]
    local prog=${3:-test_portable}
    local log=$tmp/$1-$prog-$2.log start=$SECONDS
    if ! COPROC_KERNEL_PATH=$1 COPROC_TEST_FILTER=$2 "$build/tests/$prog" >"$log" 2>&1; then
        echo "FAIL: $prog $2 on the $1 path:"
        tail -30 "$log"
        failures=$((failures + 1))
    elif grep -q 'Oclgrind\|data race\|Uninitialized\|Invalid \(read\|write\)\|divergence' "$log"; then
        echo "FAIL: Oclgrind reports for $2 on the $1 path:"
        grep -B2 -A8 'Oclgrind\|data race\|Uninitialized\|Invalid \(read\|write\)\|divergence' "$log" | head -40
        failures=$((failures + 1))
    else
        echo "ok: $prog $2 on the $1 path ($((SECONDS - start)) s)"
    fi
}
for path in cpu gpu; do
    run "$path" test_nan_casts
done
# Every query plan of test_query, both modes, tables up to 777 rows, in
# work-groups of 16 and chunks of 16 rows; its queries run on coproc's threads
# (submit, the scheduler's workers), each holding a context of its own there
# (quirk context-per-thread).
export COPROC_TEST_MAX_ROWS=777 COPROC_QUIRKS=max_work_group=16,max_rows_per_item=16
for path in cpu gpu; do
    run "$path" "" test_query
done
unset COPROC_TEST_MAX_ROWS
# Every operator, type and cast at sizes 1, one group, one more, several groups
# plus an odd tail, then the calibration kernels (test_portable test_ops_small),
# in groups and chunks of 16.
for path in cpu gpu; do
    run "$path" test_ops_small
done
# The fold of composite keys (cl/composite.cl) and the operators under it, on
# device columns of up to 33 rows, without and with nulls in the keys (half
# the rows null).
for path in cpu gpu; do
    COPROC_TEST_MAX_ROWS=33 run "$path" test_device_columns test_composite_keys
    COPROC_TEST_MAX_ROWS=33 COPROC_TEST_QUICK=1 run "$path" test_null_keys_device test_composite_keys
done
# Nulls (test_nulls): every operator's null path once (COPROC_TEST_QUICK: device
# columns, int32 and float64, half the rows null) at sizes up to 40, in groups
# and chunks of 16: cl/nulls.cl, the validity reads of select, reduce and scan,
# and the composed operators' moves (kernel copies, which Oclgrind follows),
# and scatter with nulls (cl/gather.cl scatter_owner, scatter_nulls_*,
# scatter_nulls_bits: duplicate positions, yet no two work-items write one word),
# and gather with UINT64 positions (gather_p64_*, nulls_gather_p64).
for path in cpu gpu; do
    COPROC_TEST_MAX_ROWS=40 COPROC_TEST_QUICK=1 run "$path" "" test_nulls
done
# Nulls in the fused query engine (test_query_fused_nulls): the generated
# kernels' validity reads (filters, probes, builds, group slots, results) over
# tables of up to 33 rows, half null, in groups and chunks of 16.
for path in cpu gpu; do
    COPROC_TEST_MAX_ROWS=33 COPROC_TEST_QUICK=1 COPROC_QUIRKS=max_work_group=16,max_rows_per_item=16 \
        run "$path" "" test_query_fused_nulls
done
# The dense group-by kernels' own null handling (cl/group_by.cl; CPU path:
# validity words, runs of null and valid keys, a validity word split across
# work-items; GPU path: null keys) at 64 and 65 rows, 30 % nulls.
for path in cpu gpu; do
    COPROC_TEST_MAX_ROWS=65 COPROC_TEST_QUICK=1 run "$path" test_nulls_group_by_dense test_nulls
done
# The scatter streamed through windows of dst (cl/gather.cl scatter_window)
# at the smallest budget: up to 20000 rows, 8-byte rows in 3 windows;
# distinct positions only (duplicates race by design: one writer wins).
for path in cpu gpu; do
    COPROC_TEST_MAX_ROWS=20000 COPROC_TEST_DISTINCT=1 run "$path" "" test_budget_scatter
done
unset COPROC_QUIRKS
[ "$failures" -eq 0 ]
