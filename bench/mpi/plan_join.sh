#!/usr/bin/env bash
# plan_join.sh BUILD_DIR [REPEAT] - a join inside a distributed plan (coproc-plan-join-mpi):
# the build side broadcast against both sides shuffled by key hash, on 2 and 4 ranks of this
# machine, a small build side (1 % of the probe side's rows) and a large one (half of them),
# its keys dense (0..n-1) or sparse (their range 3 times their number).
# Each run alternates the two methods REPEAT times and prints their ratio; one PoCL thread a
# rank, --bind-to none. docs/performance.md ("A join inside a distributed plan") has figures.
set -u
build=$1 repeat=${2:-5}
probe=${PLAN_JOIN_PROBE:-4000000}
export OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
for np in 2 4; do
    # the small build side; the large one with dense keys (0..n-1), shuffled by hash and by
    # key range; the large one with sparse keys (x 3)
    for cfg in "$((probe / 100)) 1" "$((probe / 2)) 1" "$((probe / 2)) 1 --range" "$((probe / 2)) 3"; do
        set -- $cfg
        POCL_MAX_PTHREAD_COUNT=1 timeout 600 mpirun "${root[@]}" --oversubscribe --bind-to none \
            -x POCL_MAX_PTHREAD_COUNT -x COPROC_CACHE_DIR -x COPROC_CALIBRATE -np "$np" \
            "$build/bench/coproc-plan-join-mpi" --probe "$probe" --build "$1" --stride "$2" \
            ${3:-} --repeat "$repeat" 2>&1 | grep -E '^(RESULT|RATIO|check)'
    done
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
