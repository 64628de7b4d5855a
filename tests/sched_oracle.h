/* sched_oracle.h - a lower bound on the makespan of any schedule of simulated tasks,
 * computed from their true costs (sim.h's noisy, schedule-independent ones).
 *
 * Let p[j][d] be task j's true time on device d when every input that is another
 * task's result is assumed already resident on d (host inputs and results the
 * host wants are paid for): no schedule can run j on d faster. The bound is the
 * largest of
 *  1. the critical path: over the dependency graph (stream order and data
 *     inputs), arrival + sum of min_d p[j][d] along the longest chain;
 *  2. the LP relaxation of unrelated-machine makespan (tasks split fractionally,
 *     dependencies ignored), via its dual: for any weights w >= 0 summing to 1,
 *     sum_j min_d w_d p[j][d] <= sum_d w_d load_d <= makespan, so every w gives a
 *     valid bound; the weights are improved by exponentiated subgradient ascent
 *     and the best value kept (an approximation of the LP optimum from below, so
 *     still a valid bound). With identical devices it is sum_j min_d p / N.
 * Each is a lower bound, so makespan / bound >= 1 and overstates the distance to
 * the optimum (it ignores integrality, queueing and the dependencies in 2). */
#ifndef COPROC_ORACLE_H
#define COPROC_ORACLE_H

#include "sched_sim.h"

typedef struct coproc__oracle_bound {
    double bound;           /* max of the two below */
    double critical_path;
    double lp;              /* dual value reached */
} coproc__oracle_bound;

/* 0 on success, -1 on bad arguments or memory. `seed` is the simulator's. */
int coproc__oracle_lower_bound(const coproc__sim_device *devs, int ndev,
                               const coproc__sim_task *tasks, int ntasks, uint64_t seed,
                               coproc__oracle_bound *out);

#endif
