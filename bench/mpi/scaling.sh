#!/usr/bin/env bash
# scaling.sh BUILD_DIR [ROUNDS] - strong and weak scaling over 1, 2 and 4 MPI ranks on
# this machine, interleaved (every round runs each configuration once), for SSB
# (coproc-ssb --mpi, the sum of the 13 queries' medians) and the shuffle-heavy join
# (coproc-join-mpi). One PoCL thread a rank beyond 1 rank (2 cores), --bind-to none.
# Prints one line a run; docs/performance.md ("Scale-out over MPI ranks") has the figures.
set -u
build=$1 rounds=${2:-3}
ssb_strong=${SSB_STRONG_SF:-0.5} ssb_weak=${SSB_WEAK_SF:-0.25}
join_strong=${JOIN_STRONG:-2000000} join_weak=${JOIN_WEAK:-500000}
export OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
run() { # np, then the program and its arguments
    local np=$1
    shift
    POCL_MAX_PTHREAD_COUNT=$((np >= 2 ? 1 : 2)) timeout 300 mpirun "${root[@]}" --oversubscribe \
        --bind-to none -x POCL_MAX_PTHREAD_COUNT -x COPROC_CACHE_DIR -x COPROC_CALIBRATE \
        -np "$np" "$@" 2>&1
}
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
    for np in 1 2 4; do
        run "$np" "$build/bench/coproc-join-mpi" --strong "$join_strong" --repeat 5 |
            sed -n "s/^RESULT /round=$round join /p"
        run "$np" "$build/bench/coproc-join-mpi" --weak "$join_weak" --repeat 5 |
            sed -n "s/^RESULT /round=$round join /p"
        sf=$ssb_strong
        run "$np" "$build/bench/coproc-ssb" --mpi --sf "$sf" --repeat 3 --no-check |
            awk -v r="$round" -v np="$np" -v sf="$sf" '$1 == "all" {
                printf "round=%s ssb mode=strong ranks=%s sf=%s total=%s compute=%s imbal=%s comm=%s merge=%s cpu=%s\n",
                       r, np, sf, $2, $3, $4, $5, $6, $7 }'
        sf=$(awk -v a="$ssb_weak" -v n="$np" 'BEGIN { print a * n }')
        run "$np" "$build/bench/coproc-ssb" --mpi --sf "$sf" --repeat 3 --no-check |
            awk -v r="$round" -v np="$np" -v sf="$sf" '$1 == "all" {
                printf "round=%s ssb mode=weak ranks=%s sf=%s total=%s compute=%s imbal=%s comm=%s merge=%s cpu=%s\n",
                       r, np, sf, $2, $3, $4, $5, $6, $7 }'
    done
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
