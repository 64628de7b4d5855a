/* sched_sim.c - discrete-event simulation of tasks on modelled devices, for
 * test_sched (policies against the oracle bound); see sched_sim.h. */
#include "sched_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state)
{
    return (double)(mix64(*state += 0x9e3779b97f4a7c15ull) >> 11) * (1.0 / 9007199254740992.0);
}

/* Fixed per (task, device), so the true cost is schedule-independent. */
static double noise_factor(const coproc__sim_device *dv, uint64_t seed, int j, int d)
{
    if (dv->noise <= 0) return 1.0;
    uint64_t h = mix64(seed ^ mix64((uint64_t)j * 0x100000001b3ull + (uint64_t)d + 1));
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    return 1.0 + dv->noise * u;
}

static double work_of(const coproc__sim_task *t)
{
    if (t->kind == COPROC__SIM_SORT) return t->rows * log2(t->rows > 2 ? t->rows : 2) / 16.0;
    return t->rows;
}

static double compute_of(const coproc__sim_device *dv, const coproc__sim_task *t)
{
    return dv->latency[t->kind] + work_of(t) / dv->throughput[t->kind];
}

static double xfer(const coproc__sim_device *dv, double bytes)
{
    return dv->host || bytes <= 0 ? 0 : dv->bus_latency + bytes / dv->bus_bandwidth;
}

/* Movement part of a task's cost on d: inputs not resident there, result back. */
static double movement(const coproc__sim_device *devs, int ndev, const coproc__sim_task *t, int d,
                       const int *resident, double *moved)
{
    double s = 0, m = 0;
    for (int i = 0; i < t->inputs; i++) {
        int r = resident[i];
        if (r >= 0 && r < ndev && devs[r].host) r = COPROC__SIM_HOST;
        if (r == d || (r == COPROC__SIM_HOST && devs[d].host)) continue;
        if (r != COPROC__SIM_HOST) s += xfer(&devs[r], t->in[i].bytes), m += t->in[i].bytes;
        if (!devs[d].host) s += xfer(&devs[d], t->in[i].bytes), m += t->in[i].bytes;
    }
    if (t->result_to_host && !devs[d].host) s += xfer(&devs[d], t->out_bytes), m += t->out_bytes;
    if (moved) *moved = m;
    return s;
}

double coproc__sim_true_cost(const coproc__sim_device *devs, int ndev, const coproc__sim_task *tasks,
                             int j, int d, const int *resident, uint64_t seed, double *moved)
{
    const coproc__sim_task *t = &tasks[j];
    return movement(devs, ndev, t, d, resident, moved) +
           compute_of(&devs[d], t) * noise_factor(&devs[d], seed, j, d);
}

double coproc__sim_expected_cost(const coproc__sim_device *devs, int ndev,
                                 const coproc__sim_task *t, int d, const int *resident)
{
    return movement(devs, ndev, t, d, resident, NULL) + compute_of(&devs[d], t);
}

void coproc__sim_workload(const coproc__sim_workload_config *cfg, coproc__sim_task *tasks)
{
    uint64_t rng = cfg->seed ? cfg->seed : 1;
    int streams = cfg->streams;
    double lo = log(cfg->min_rows > 1 ? cfg->min_rows : 1);
    double hi = log(cfg->max_rows > cfg->min_rows ? cfg->max_rows : cfg->min_rows + 1);
    for (int i = 0; i < cfg->tasks; i++) {
        coproc__sim_task *t = &tasks[i];
        memset(t, 0, sizeof *t);
        int prev = streams > 0 && i >= streams ? i - streams : -1;
        t->after = prev;
        t->in[0].src = t->in[1].src = -1;
        t->in[0].resident = t->in[1].resident = COPROC__SIM_HOST;
        t->result_to_host = 1;
        double rows = exp(lo + (hi - lo) * uniform01(&rng));
        double k = uniform01(&rng);
        t->kind = k < 0.3 ? COPROC__SIM_AGG : k < 0.6 ? COPROC__SIM_SELECT
                  : k < 0.8 ? COPROC__SIM_SORT : COPROC__SIM_JOIN;
        /* With no streams, "previous in the stream" is simply the previous task. */
        int chain_from = streams > 0 ? prev : i - 1;
        if (t->kind == COPROC__SIM_AGG && chain_from >= 0 &&
            tasks[chain_from].kind == COPROC__SIM_SELECT && uniform01(&rng) < cfg->chain_p) {
            /* aggregate the selection's output where it was made */
            coproc__sim_task *s = &tasks[chain_from];
            s->result_to_host = 0;
            t->inputs = 1;
            t->in[0].bytes = s->out_bytes;
            t->in[0].src = chain_from;
            t->rows = s->out_bytes / 4;
            t->out_bytes = 8 * 1024;
            continue;
        }
        switch (t->kind) {
        case COPROC__SIM_AGG:
            t->inputs = 1, t->rows = rows, t->in[0].bytes = 8 * rows, t->out_bytes = 8 * 1024;
            break;
        case COPROC__SIM_SELECT:
            t->inputs = 1, t->rows = rows, t->in[0].bytes = 4 * rows;
            t->out_bytes = 4 * rows * (0.1 + 0.4 * uniform01(&rng));
            break;
        case COPROC__SIM_SORT:
            t->inputs = 1, t->rows = rows, t->in[0].bytes = 12 * rows, t->out_bytes = 12 * rows;
            break;
        default: /* join: build side a quarter of the probe side */
            t->inputs = 2, t->rows = 1.25 * rows;
            t->in[0].bytes = 8 * rows / 4, t->in[1].bytes = 8 * rows;
            t->out_bytes = 8 * rows * 0.5;
            break;
        }
    }
}

/* Online least squares of compute seconds on work, per (kind, device). */
typedef struct line_fit {
    double n, sx, sy, sxx, sxy;
} line_fit;

static double line_predict(const line_fit *f, double x)
{
    if (f->n < 2) return -1;
    double den = f->n * f->sxx - f->sx * f->sx;
    if (den > 1e-12 * f->n * f->sxx) {
        double b = (f->n * f->sxy - f->sx * f->sy) / den;
        double a = (f->sy - b * f->sx) / f->n;
        if (a >= 0 && b >= 0) return a + b * x;
    }
    return f->sxx > 0 ? f->sxy / f->sxx * x : -1; /* through the origin */
}

int coproc__sim_run(const coproc__sim_device *devs, int ndev, const coproc__sim_task *tasks,
                    int ntasks, const coproc__sched_config *cfg, coproc__sim_estimates estm,
                    uint64_t seed, coproc__sim_result *out)
{
    if (!devs || ndev < 1 || ndev > COPROC__SCHED_MAX_DEVICES || !cfg || cfg->devices != ndev ||
        ntasks < 0 || !out)
        return -1;
    memset(out, 0, sizeof *out);
    coproc__sched *s = malloc(sizeof *s);
    if (!s || coproc__sched_init(s, cfg) != 0) {
        free(s);
        return -1;
    }
    size_t n = (size_t)(ntasks > 0 ? ntasks : 1);
    int *pending = calloc(n, sizeof *pending);        /* unmet dependencies */
    int *child_start = calloc(n + 1, sizeof *child_start);
    int *children = calloc(3 * n, sizeof *children);
    int *result_dev = malloc(n * sizeof *result_dev);
    int *ready = malloc(n * sizeof *ready);            /* issued, not placed */
    int *queue = malloc((size_t)ndev * n * sizeof *queue);
    double *est = malloc(n * sizeof *est);
    coproc__sched_ticket *tk = malloc(n * sizeof *tk);
    line_fit *fit = calloc((size_t)COPROC__SIM_KINDS * (size_t)ndev, sizeof *fit);
    int rc = -1;
    if (!pending || !child_start || !children || !result_dev || !ready || !queue || !est ||
        !tk || !fit)
        goto done;

    /* Dependency graph in CSR form: stream order and data inputs. */
    for (int j = 0; j < ntasks; j++) {
        const coproc__sim_task *t = &tasks[j];
        if (t->after >= 0 && t->after < j) child_start[t->after + 1]++, pending[j]++;
        for (int i = 0; i < t->inputs; i++)
            if (t->in[i].src >= 0 && t->in[i].src < j) child_start[t->in[i].src + 1]++, pending[j]++;
    }
    for (size_t j = 0; j < n; j++) child_start[j + 1] += child_start[j];
    {
        int *fill = calloc(n, sizeof *fill);
        if (!fill) goto done;
        for (int j = 0; j < ntasks; j++) {
            const coproc__sim_task *t = &tasks[j];
            if (t->after >= 0 && t->after < j)
                children[child_start[t->after] + fill[t->after]++] = j;
            for (int i = 0; i < t->inputs; i++) {
                int p = t->in[i].src;
                if (p >= 0 && p < j) children[child_start[p] + fill[p]++] = j;
            }
        }
        free(fill);
    }

    int nready = 0, rhead = 0, finished = 0;
    int qhead[COPROC__SCHED_MAX_DEVICES] = {0}, qtail[COPROC__SCHED_MAX_DEVICES] = {0};
    int running[COPROC__SCHED_MAX_DEVICES];
    double fin[COPROC__SCHED_MAX_DEVICES], comp[COPROC__SCHED_MAX_DEVICES];
    for (int d = 0; d < ndev; d++) running[d] = -1;
    for (int j = 0; j < ntasks; j++)
        if (!pending[j]) ready[nready++] = j;
    double now = 0, err_sum = 0;
    int err_n = 0;

    while (finished < ntasks) {
        /* Place every issued task whose arrival time has come, in issue order. */
        int keep = rhead;
        double next_arrival = INFINITY;
        for (int r = rhead; r < nready; r++) {
            int j = ready[r];
            const coproc__sim_task *t = &tasks[j];
            if (t->arrival > now) {
                if (t->arrival < next_arrival) next_arrival = t->arrival;
                ready[keep++] = j;
                continue;
            }
            int res[COPROC__SIM_MAX_INPUTS];
            for (int i = 0; i < t->inputs; i++) res[i] = t->in[i].src >= 0 ? result_dev[t->in[i].src] : t->in[i].resident;
            coproc__sched_task st;
            memset(&st, 0, sizeof st);
            st.kind = t->kind;
            st.forced = -1;
            for (int i = 0; i < t->inputs; i++) st.input_bytes += t->in[i].bytes;
            for (int d = 0; d < ndev; d++) {
                double mv = movement(devs, ndev, t, d, res, NULL);
                st.transfer[d] = mv;
                if (estm == COPROC__SIM_EST_LEARNED) {
                    double c = line_predict(&fit[t->kind * ndev + d], work_of(t));
                    st.cost[d] = c < 0 ? -1 : mv + c;
                } else {
                    st.cost[d] = mv + compute_of(&devs[d], t);
                }
            }
            int d = coproc__sched_place(s, &st, now, &tk[j]);
            if (d < 0) goto done;
            est[j] = st.cost[d];
            queue[(size_t)d * n + (size_t)qtail[d]++] = j;
        }
        nready = keep;
        /* Start idle devices. */
        for (int d = 0; d < ndev; d++) {
            if (running[d] >= 0 || qhead[d] == qtail[d]) continue;
            int j = queue[(size_t)d * n + (size_t)qhead[d]++];
            const coproc__sim_task *t = &tasks[j];
            int res[COPROC__SIM_MAX_INPUTS];
            for (int i = 0; i < t->inputs; i++) res[i] = t->in[i].src >= 0 ? result_dev[t->in[i].src] : t->in[i].resident;
            double moved = 0;
            double cost = coproc__sim_true_cost(devs, ndev, tasks, j, d, res, seed, &moved);
            comp[d] = cost - movement(devs, ndev, t, d, res, NULL);
            out->bytes_moved += moved;
            coproc__sched_start(s, &tk[j], now);
            running[d] = j;
            fin[d] = now + cost;
        }
        /* Advance the clock to the next completion or arrival. */
        double next = next_arrival;
        for (int d = 0; d < ndev; d++)
            if (running[d] >= 0 && fin[d] < next) next = fin[d];
        if (!isfinite(next)) goto done; /* stuck: a dependency cycle or bad input */
        now = next;
        for (int d = 0; d < ndev; d++) {
            if (running[d] < 0 || fin[d] > now) continue;
            int j = running[d];
            double measured = now - tk[j].start;
            coproc__sched_finish(s, &tk[j], now, measured);
            if (est[j] >= 0 && measured > 0) err_sum += fabs(est[j] - measured) / measured, err_n++;
            line_fit *f = &fit[tasks[j].kind * ndev + d];
            double x = work_of(&tasks[j]);
            f->n += 1, f->sx += x, f->sy += comp[d], f->sxx += x * x, f->sxy += x * comp[d];
            out->busy[d] += measured;
            out->tasks_on[d]++;
            result_dev[j] = devs[d].host ? COPROC__SIM_HOST : d;
            running[d] = -1;
            finished++;
            for (int c = child_start[j]; c < child_start[j + 1]; c++)
                if (--pending[children[c]] == 0) ready[nready++] = children[c];
        }
    }
    out->makespan = now;
    for (int d = 0; d < ndev; d++) out->utilization[d] = now > 0 ? out->busy[d] / now : 0;
    out->est_error = err_n ? err_sum / err_n : 0;
    rc = 0;
done:
    free(pending), free(child_start), free(children), free(result_dev), free(ready);
    free(queue), free(est), free(tk), free(fit);
    coproc__sched_destroy(s);
    free(s);
    return rc;
}
