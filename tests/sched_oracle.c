/* sched_oracle.c - lower bound on the makespan (test_sched); see sched_oracle.h. */
#include "sched_oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ORACLE_ITERATIONS 400

int coproc__oracle_lower_bound(const coproc__sim_device *devs, int ndev,
                               const coproc__sim_task *tasks, int ntasks, uint64_t seed,
                               coproc__oracle_bound *out)
{
    if (!devs || ndev < 1 || ndev > COPROC__SCHED_MAX_DEVICES || ntasks < 0 || !out) return -1;
    memset(out, 0, sizeof *out);
    if (ntasks == 0) return 0;
    double *p = malloc((size_t)ntasks * (size_t)ndev * sizeof *p);
    double *finish = malloc((size_t)ntasks * sizeof *finish);
    if (!p || !finish) {
        free(p), free(finish);
        return -1;
    }
    for (int j = 0; j < ntasks; j++) {
        const coproc__sim_task *t = &tasks[j];
        double best = INFINITY;
        for (int d = 0; d < ndev; d++) {
            /* results of other tasks count as already on d: the cheapest case */
            int res[COPROC__SIM_MAX_INPUTS];
            for (int i = 0; i < t->inputs; i++) res[i] = t->in[i].src >= 0 ? d : t->in[i].resident;
            p[(size_t)j * ndev + d] = coproc__sim_true_cost(devs, ndev, tasks, j, d, res, seed, NULL);
            if (p[(size_t)j * ndev + d] < best) best = p[(size_t)j * ndev + d];
        }
        /* Dependencies point to earlier tasks, so one pass finds the longest chain. */
        double startt = t->arrival;
        if (t->after >= 0 && t->after < j && finish[t->after] > startt) startt = finish[t->after];
        for (int i = 0; i < t->inputs; i++)
            if (t->in[i].src >= 0 && t->in[i].src < j && finish[t->in[i].src] > startt)
                startt = finish[t->in[i].src];
        finish[j] = startt + best;
        if (finish[j] > out->critical_path) out->critical_path = finish[j];
    }

    /* Dual of the LP: maximise L(w) = sum_j min_d w_d p_jd over the simplex. */
    double w[COPROC__SCHED_MAX_DEVICES], g[COPROC__SCHED_MAX_DEVICES];
    for (int d = 0; d < ndev; d++) w[d] = 1.0 / ndev;
    double best_l = 0, step = 1.0;
    for (int it = 0; it < ORACLE_ITERATIONS; it++) {
        double l = 0;
        memset(g, 0, sizeof g);
        for (int j = 0; j < ntasks; j++) {
            const double *pj = &p[(size_t)j * ndev];
            int m = 0;
            for (int d = 1; d < ndev; d++)
                if (w[d] * pj[d] < w[m] * pj[m]) m = d;
            l += w[m] * pj[m];
            g[m] += pj[m]; /* subgradient: the load device m would get */
        }
        if (l > best_l) best_l = l;
        /* exponentiated ascent, gradient scaled by its mean so the step is unitless */
        double mean = 0;
        for (int d = 0; d < ndev; d++) mean += g[d];
        mean /= ndev;
        if (!(mean > 0)) break;
        double sum = 0;
        for (int d = 0; d < ndev; d++) {
            w[d] *= exp(step * (g[d] / mean - 1.0));
            sum += w[d];
        }
        for (int d = 0; d < ndev; d++) w[d] /= sum;
        step *= 0.985; /* diminishing steps so it settles */
    }
    out->lp = best_l;
    out->bound = out->lp > out->critical_path ? out->lp : out->critical_path;
    free(p), free(finish);
    return 0;
}
