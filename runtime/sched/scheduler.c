/* scheduler.c - HyPE's placement heuristics over abstract devices; see scheduler.h. */
#include "sched/scheduler.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const policy_names[COPROC__POLICY_COUNT] = {
    "wtar", "srt", "rr", "tbo", "pbo", "static", "fixed"};

const char *coproc__policy_name(coproc__policy p)
{
    return (unsigned)p < COPROC__POLICY_COUNT ? policy_names[p] : "?";
}

int coproc__policy_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < COPROC__POLICY_COUNT; i++)
        if (strcasecmp(name, policy_names[i]) == 0) return i;
    return -1;
}

coproc__sched_config coproc__sched_defaults(int devices)
{
    coproc__sched_config c;
    memset(&c, 0, sizeof c);
    c.policy = COPROC__POLICY_WTAR;
    c.devices = devices;
    c.training = COPROC__SCHED_TRAINING_DEFAULT;
    c.tbo_factor = 2.0;
    c.static_cpu_device = 0;
    c.static_gpu_device = devices > 1 ? 1 : 0;
    c.static_min_bytes = 10e6;
    c.static_ratio = 5.0;
    c.seed = 0x9e3779b97f4a7c15ull;
    return c;
}

int coproc__sched_init(coproc__sched *s, const coproc__sched_config *cfg)
{
    if (!s || !cfg || cfg->devices < 1 || cfg->devices > COPROC__SCHED_MAX_DEVICES ||
        (unsigned)cfg->policy >= COPROC__POLICY_COUNT)
        return -1;
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    if (s->cfg.training == 0) s->cfg.training = COPROC__SCHED_TRAINING_DEFAULT;
    if (s->cfg.tbo_factor <= 0) s->cfg.tbo_factor = 2.0;
    if (s->cfg.static_min_bytes <= 0) s->cfg.static_min_bytes = 10e6;
    if (s->cfg.static_ratio <= 0) s->cfg.static_ratio = 5.0;
    int n = s->cfg.devices;
    if (s->cfg.fixed_device < 0 || s->cfg.fixed_device >= n) s->cfg.fixed_device = 0;
    if (s->cfg.static_cpu_device < 0 || s->cfg.static_cpu_device >= n) s->cfg.static_cpu_device = 0;
    if (s->cfg.static_gpu_device < 0 || s->cfg.static_gpu_device >= n)
        s->cfg.static_gpu_device = n > 1 ? 1 : 0;
    s->rng = cfg->seed ? cfg->seed : 1;
    if (pthread_mutex_init(&s->lock, NULL) != 0) return -1;
    return 0;
}

void coproc__sched_destroy(coproc__sched *s)
{
    if (s) pthread_mutex_destroy(&s->lock);
}

/* splitmix64: tiny, seedable, good enough for PBO's draws. */
static double next_uniform(coproc__sched *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* Remaining estimated time of the running tasks plus the queued estimates.
 * Running tasks are summarised by sums, so an overrunning task's remaining time
 * is clamped for the device as a whole, not per task. */
static double load_locked(const coproc__sched *s, int d, double now)
{
    const coproc__sched_device_stats *v = &s->dev[d];
    double remaining = v->running_estimate - (v->running * now - s->running_start_sum[d]);
    if (remaining < 0 || v->running == 0) remaining = 0;
    return v->queued + remaining;
}

static int pick_rr(coproc__sched *s, uint32_t mask)
{
    int n = s->cfg.devices;
    for (int k = 0; k < n; k++) {
        int d = (int)((s->rr_next + (uint64_t)k) % (uint64_t)n);
        if (mask & (1u << d)) {
            s->rr_next = (uint64_t)d + 1;
            return d;
        }
    }
    return -1;
}

static int choose_locked(coproc__sched *s, const coproc__sched_task *t, double now,
                         uint32_t allowed, int *training)
{
    const coproc__sched_config *c = &s->cfg;
    int n = c->devices;
    *training = 0;

    if (c->policy == COPROC__POLICY_FIXED)
        return (allowed >> c->fixed_device) & 1u ? c->fixed_device : pick_rr(s, allowed);
    if (c->policy == COPROC__POLICY_RR) return pick_rr(s, allowed);
    if (c->policy == COPROC__POLICY_STATIC) {
        int gpu = c->static_gpu_device, cpu = c->static_cpu_device;
        double tr = t->transfer[gpu];
        if (tr < 0 && c->static_bus_bandwidth > 0) tr = t->input_bytes / c->static_bus_bandwidth;
        double compute = t->cost[gpu] - (tr > 0 ? tr : 0);
        int use_gpu = (allowed >> gpu) & 1u && t->input_bytes >= c->static_min_bytes &&
                      tr >= 0 && t->cost[gpu] >= 0 && compute > c->static_ratio * tr;
        if (use_gpu) return gpu;
        return (allowed >> cpu) & 1u ? cpu : pick_rr(s, allowed);
    }

    /* Training phase (HyPE): until a kind has been placed K times on each device,
     * send it to the allowed device that has seen it least, lowest index first,
     * which is round-robin over the devices still lacking observations. */
    if (c->training > 0 && t->kind >= 0 && t->kind < COPROC__SCHED_MAX_KINDS) {
        int best = -1;
        for (int d = 0; d < n; d++)
            if ((allowed >> d) & 1u && s->seen[t->kind][d] < c->training &&
                (best < 0 || s->seen[t->kind][d] < s->seen[t->kind][best]))
                best = d;
        if (best >= 0) {
            *training = 1;
            return best;
        }
    }

    /* Devices without a trusted estimate cannot be compared; leave them out. */
    uint32_t known = 0;
    for (int d = 0; d < n; d++)
        if ((allowed >> d) & 1u && t->cost[d] >= 0 && isfinite(t->cost[d])) known |= 1u << d;
    if (!known) return pick_rr(s, allowed);

    int best = -1;
    double best_v = 0;
    switch (c->policy) {
    case COPROC__POLICY_SRT:
        for (int d = 0; d < n; d++)
            if ((known >> d) & 1u && (best < 0 || t->cost[d] < best_v)) best = d, best_v = t->cost[d];
        return best;
    case COPROC__POLICY_WTAR:
        for (int d = 0; d < n; d++) {
            if (!((known >> d) & 1u)) continue;
            double v = load_locked(s, d, now) + t->cost[d];
            if (best < 0 || v < best_v) best = d, best_v = v;
        }
        return best;
    case COPROC__POLICY_TBO: {
        /* Fastest first; skip a device whose load is over the threshold. If all are
         * overloaded, the one finishing this task soonest (as WTAR would). */
        uint32_t left = known;
        int fallback = -1;
        double fallback_v = 0;
        while (left) {
            int f = -1;
            for (int d = 0; d < n; d++)
                if ((left >> d) & 1u && (f < 0 || t->cost[d] < t->cost[f])) f = d;
            left &= ~(1u << f);
            double load = load_locked(s, f, now);
            double thr = c->tbo_threshold > 0 ? c->tbo_threshold : c->tbo_factor * t->cost[f];
            if (load <= thr) return f;
            if (fallback < 0 || load + t->cost[f] < fallback_v) fallback = f, fallback_v = load + t->cost[f];
        }
        return fallback;
    }
    case COPROC__POLICY_PBO: {
        int m = 0;
        double sum = 0;
        for (int d = 0; d < n; d++)
            if ((known >> d) & 1u) m++, sum += t->cost[d], best = d;
        if (m == 1 || !(sum > 0)) return m == 1 ? best : pick_rr(s, known);
        double u = next_uniform(s), acc = 0;
        for (int d = 0; d < n; d++) {
            if (!((known >> d) & 1u)) continue;
            acc += (1.0 - t->cost[d] / sum) / (m - 1);
            if (u < acc) return d;
        }
        return best; /* rounding: the last known device */
    }
    default:
        return pick_rr(s, known);
    }
}

int coproc__sched_place(coproc__sched *s, const coproc__sched_task *t, double now,
                        coproc__sched_ticket *ticket)
{
    int n = s->cfg.devices;
    uint32_t all = n >= 32 ? 0xffffffffu : ((1u << n) - 1u);
    uint32_t allowed = t->allowed ? (t->allowed & all) : all;
    int training = 0, d;

    pthread_mutex_lock(&s->lock);
    if (t->forced >= 0 && t->forced < n)
        d = t->forced;
    else
        d = allowed ? choose_locked(s, t, now, allowed, &training) : -1;
    if (d >= 0) {
        double est = t->cost[d];
        if (!(est >= 0) || !isfinite(est)) est = -1;
        s->dev[d].placed++;
        s->dev[d].queued += est > 0 ? est : 0;
        if (t->kind >= 0 && t->kind < COPROC__SCHED_MAX_KINDS && s->seen[t->kind][d] < UINT16_MAX)
            s->seen[t->kind][d]++;
        if (ticket) {
            ticket->device = d;
            ticket->kind = t->kind;
            ticket->training = training;
            ticket->estimate = est;
            ticket->start = -1;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return d;
}

void coproc__sched_start(coproc__sched *s, coproc__sched_ticket *tk, double now)
{
    if (tk->device < 0 || tk->device >= s->cfg.devices) return;
    double est = tk->estimate > 0 ? tk->estimate : 0;
    pthread_mutex_lock(&s->lock);
    coproc__sched_device_stats *v = &s->dev[tk->device];
    v->queued -= est;
    if (v->queued < 1e-12) v->queued = 0; /* keep float drift from going negative */
    v->running++;
    v->running_estimate += est;
    s->running_start_sum[tk->device] += now;
    tk->start = now;
    pthread_mutex_unlock(&s->lock);
}

void coproc__sched_finish(coproc__sched *s, const coproc__sched_ticket *tk, double now,
                          double measured)
{
    if (tk->device < 0 || tk->device >= s->cfg.devices) return;
    double est = tk->estimate > 0 ? tk->estimate : 0;
    pthread_mutex_lock(&s->lock);
    coproc__sched_device_stats *v = &s->dev[tk->device];
    if (v->running > 0) {
        v->running--;
        v->running_estimate -= est;
        s->running_start_sum[tk->device] -= tk->start;
        if (v->running == 0) v->running_estimate = 0, s->running_start_sum[tk->device] = 0;
    }
    v->finished++;
    if (measured >= 0) {
        v->busy += measured;
        if (tk->estimate >= 0 && measured > 0) {
            v->rel_error_sum += fabs(tk->estimate - measured) / measured;
            v->rel_error_n++;
        }
    }
    pthread_mutex_unlock(&s->lock);
}

void coproc__sched_cancel(coproc__sched *s, const coproc__sched_ticket *tk)
{
    if (tk->device < 0 || tk->device >= s->cfg.devices) return;
    pthread_mutex_lock(&s->lock);
    coproc__sched_device_stats *v = &s->dev[tk->device];
    v->queued -= tk->estimate > 0 ? tk->estimate : 0;
    if (v->queued < 1e-12) v->queued = 0;
    pthread_mutex_unlock(&s->lock);
}

double coproc__sched_load(coproc__sched *s, int device, double now)
{
    if (device < 0 || device >= s->cfg.devices) return 0;
    pthread_mutex_lock(&s->lock);
    double l = load_locked(s, device, now);
    pthread_mutex_unlock(&s->lock);
    return l;
}

void coproc__sched_stats(coproc__sched *s, int device, coproc__sched_device_stats *out)
{
    memset(out, 0, sizeof *out);
    if (device < 0 || device >= s->cfg.devices) return;
    pthread_mutex_lock(&s->lock);
    *out = s->dev[device];
    pthread_mutex_unlock(&s->lock);
}
