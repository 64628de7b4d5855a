#!/usr/bin/env bash
# mpi_run.sh BUILD_DIR SOURCE_DIR NP WHAT - the coproc_mpi tests (CTest label mpi) under
# mpirun -np NP on this machine; 77 (skipped) where MPI or the programs are missing.
#   aggregate  tests/mpi/mpi_aggregate: distributed group-bys equal one process's, a
#              failing rank's error returned on every rank
#   partition  tests/mpi/mpi_partition: RANGE over every integer type and value shape, ranks
#              with and without rows, against a C sort; HASH across key types; errors
#   join-pairs tests/mpi/mpi_join: coproc_mpi_hash_join's pairs (global row numbers) equal a
#              C nested loop's, every key type, ranks without rows; errors on every rank
#   plan-join  tests/mpi/mpi_plan_join: a join inside a distributed plan (build side
#              broadcast, both sides shuffled, AUTO), inner and semi, grouped after the
#              join, equal to a C nested loop; skew, empty sides, a rank with no rows;
#              errors on every rank
#   exchange   tests/mpi/mpi_exchange: the exchanges past MPI's int counts - the splitting
#              into messages past 2^31 bytes, then every exchange in 5- and 1-byte
#              messages (a test hook) equal to the same in whole ones
#   ssb        coproc-ssb-mpi: the 13 queries distributed equal the reference and one
#              process's run (the program checks, exit 0); at SF 0.01 under 2 ranks (tiny,
#              uneven slices; Q3.2-Q3.4 and Q4.3 find no rows there), the groups gathered;
#              SF 0.3 under 4 (every query finds rows), the groups shuffled by key
#   ssb-cli    the same through `coproc-ssb --mpi` (SF 0.01, results checked by the program)
#   join       coproc-join-mpi --pairs: coproc_mpi_hash_join of two 200k-row sides, the pairs
#              made per rank on its device, each checked, their number equal to the C count
#   plan-join-bench  coproc-plan-join-mpi: a join in a plan, broadcast and shuffled,
#              every run's groups equal to a C pass (the program checks, exit 0)
#   ssb-fail   coproc-ssb-mpi --fail-rank NP-1: every rank reports that rank's error and
#              exits 1; none hangs (the timeout below, and CTest's)
#   ssb-fault  the same with a driver error instead: the last rank alone runs with
#              COPROC_FAULT=launch:0:every:1 (every kernel launch fails there)
# 4 ranks share 2 cores: one PoCL thread a rank, and ranks waiting in MPI yield the core.
set -u
build=$1 np=$3 what=$4
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
case $what in
aggregate) prog=$build/tests/mpi_aggregate; args=() ;;
partition) prog=$build/tests/mpi_partition; args=() ;;
join-pairs) prog=$build/tests/mpi_join; args=() ;;
plan-join) prog=$build/tests/mpi_plan_join; args=() ;;
exchange) prog=$build/tests/mpi_exchange; args=() ;;
ssb) prog=$build/bench/ssb/coproc-ssb-mpi
    args=(--sf 0.01 --repeat 1)
    [ "$np" -ge 4 ] && args=(--sf 0.3 --repeat 1 --exchange shuffle) ;;
ssb-cli) prog=$build/bench/coproc-ssb; args=(--mpi --sf 0.01 --repeat 1) ;;
join) prog=$build/bench/coproc-join-mpi; args=(--strong 200000 --repeat 1 --pairs) ;;
plan-join-bench) prog=$build/bench/coproc-plan-join-mpi; args=(--probe 200000 --build 100000 --stride 3 --repeat 2) ;;
ssb-fail) prog=$build/bench/ssb/coproc-ssb-mpi; args=(--sf 0.01 --repeat 1 --no-check --queries q1.1,q2.1 --fail-rank $((np - 1))) ;;
ssb-fault) prog=$build/bench/ssb/coproc-ssb-mpi; args=(--sf 0.01 --repeat 1 --no-check --queries q1.1,q2.1) ;;
*) echo "mpi_run.sh: unknown test $what" >&2; exit 64 ;;
esac
[ -x "$prog" ] || { echo "skipped: $prog not built (MPI not found at configure time)"; exit 77; }

export OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1 POCL_MAX_PTHREAD_COUNT=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
bad=$((np - 1))
ranks=(-np "$np" "$prog" "${args[@]}")
# MPMD: the last rank its own app context, with the fault
[ "$what" = ssb-fault ] && ranks=(-np "$bad" "$prog" "${args[@]}" : -np 1 -x COPROC_FAULT=launch:0:every:1 "$prog" "${args[@]}")
xs=()
for v in COPROC_CACHE_DIR COPROC_CALIBRATE POCL_MAX_PTHREAD_COUNT OMPI_MCA_mpi_yield_when_idle; do
    [ -n "${!v+x}" ] && xs+=(-x "$v")
done
out=$(timeout 300 mpirun "${root[@]}" --oversubscribe "${xs[@]}" "${ranks[@]}" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 124 ] && { echo "FAIL: mpirun -np $np $what did not end in 300 s (a rank hangs)"; exit 1; }
if [ "$what" = ssb-fail ] || [ "$what" = ssb-fault ]; then
    [ $rc -ne 0 ] || { echo "FAIL: a failing rank, yet exit 0"; exit 1; }
    want="q1.1: COPROC_INVALID_ARGUMENT: rank $bad: .*no_such_column"
    [ "$what" = ssb-fault ] && want="q1.1: COPROC_[A-Z_]*: rank $bad: .*CL_OUT_OF_RESOURCES"
    for r in $(seq 0 $((np - 1))); do
        echo "$out" | grep -q "rank $r: $want" ||
            { echo "FAIL: rank $r did not return rank $bad's error"; exit 1; }
    done
    echo "ok: every rank returned rank $bad's error"
    exit 0
fi
# Every rank skipping (no device) makes mpirun exit 77 too.
exit $rc
