/* workload_sched.c - the placement half of coproc-workload's "decision with
 * the cost estimates of a submit" figure: the estimates come from the caller
 * (workload_real.c asks the runtime through coproc/inspect.h); the WTAR
 * placement over 4 devices is the scheduler's own, which has no public API.
 * Built with workload.c, the scheduler simulator, into the part of
 * coproc-workload that reaches inside the runtime (bench/CMakeLists.txt). */
#include <stdlib.h>

#include "sched/scheduler.h" /* internal: the scheduler, driven with given estimates */
#include "workload.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double wl_submit_decision_time(int kind, wl_estimate_fn estimate, void *user)
{
    enum { SAMPLES = 2001, DEVS = 4 };
    coproc__sched_config cfg = coproc__sched_defaults(DEVS);
    cfg.training = -1;
    coproc__sched sched;
    double *samples = malloc(SAMPLES * sizeof *samples);
    if (!samples || coproc__sched_init(&sched, &cfg) != 0) {
        free(samples);
        return -1;
    }
    for (int i = 0; i < SAMPLES; i++) {
        double t0 = wl_now();
        coproc__sched_task st = {.kind = kind, .forced = -1};
        for (int d = 0; d < DEVS; d++)
            st.cost[d] = estimate(user, d, &st.transfer[d]);
        coproc__sched_ticket tk;
        coproc__sched_place(&sched, &st, t0, &tk);
        samples[i] = wl_now() - t0;
        coproc__sched_cancel(&sched, &tk);
    }
    coproc__sched_destroy(&sched);
    qsort(samples, SAMPLES, sizeof *samples, cmp_double);
    double median = samples[SAMPLES / 2];
    free(samples);
    return median;
}
