/* clock.c - the simulated devices' time: every operator and copy is charged
 * to its device at the profile's cost times a noise factor; a task's time is
 * what was charged while it ran; tasks on one device follow each other (tasks
 * open at once share it: each charge moves the device's frontier, and a task
 * begins at the frontier and ends at the frontier when it ends, so that
 * concurrent queries never overlap on one device in virtual time), and
 * the runtime's clock is the latest task end a caller waited for. Work outside
 * any task (a column's upload or download) is the caller's own and moves the
 * clock at once; copies the prefetcher makes ahead of a task are that task's.
 * A copy and a kernel on the one queue follow each other; a copy enqueued on
 * the copy queue (copy_queued) runs on the device's copy engine beside its
 * kernels, from when the work enqueued before it is done, and a kernel that
 * waits for it (queue_waits) starts no earlier than it ends (issue 17: a
 * discrete device copies the next morsel while the current one runs).
 * Lock order: a device's, then the clock's. */
#include "backend/sim/sim.h"

#include <math.h>

#include "backend/opencl/device.h"
#include "core/runtime.h"
#include "cost/model.h"

/* splitmix64: the noise is a function of (seed, draw), so a run is repeatable. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* seconds times the next noise factor (st->lock held). */
static double noisy(coproc__sim_state *st, double seconds)
{
    double u = (double)(mix(st->seed ^ mix(st->draws++)) >> 11) * 0x1.0p-53 * 2 - 1;
    return seconds * (1 + st->noise * u);
}

/* Charge `seconds` (noiseless) of work to dev, or to its next task (ahead);
 * returns the noisy seconds charged. */
static double charge(coproc__device *dev, double seconds, int ahead)
{
    coproc__sim_state *st = dev->backend_state;
    if (!(seconds > 0) || !isfinite(seconds))
        return 0;
    pthread_mutex_lock(&st->lock);
    double t = noisy(st, seconds);
    if (ahead) {
        st->ahead += t;
        pthread_mutex_unlock(&st->lock);
        return t;
    }
    st->work += t;
    if (st->tasks_open > 0)
        st->frontier += t;
    if (st->tasks_open == 0) { /* the caller waits for it: a task of its own */
        pthread_mutex_lock(&st->clock->lock);
        double start = st->busy_until > st->clock->now ? st->busy_until : st->clock->now;
        st->busy_until = st->clock->now = start + t;
        pthread_mutex_unlock(&st->clock->lock);
    }
    pthread_mutex_unlock(&st->lock);
    return t;
}

static double sim_op_ran(coproc__device *dev, int kind, const double *x, double measured)
{
    coproc__sim_state *st = dev->backend_state;
    double t = -1;
    if (kind >= 0 && kind < COPROC__OP_KIND_COUNT)
        t = coproc__model_predict(&st->truth->ops[kind], x);
    if (!(t >= 0)) /* the profile has no curve for it: the executor's time stands in */
        t = measured > 0 ? measured : 0;
    return charge(dev, t, 0);
}

static double sim_copy_ran(coproc__device *dev, int to_device, int pinned, int ahead,
                           double bytes, double measured)
{
    (void)measured;
    coproc__sim_state *st = dev->backend_state;
    return charge(dev, coproc__profile_transfer_time(st->truth, to_device, pinned, bytes), ahead);
}

/* On the copy engine: from when it is free and the work charged so far is
 * done (the host enqueued the copy after waiting for that work), beside the
 * kernels. Outside a task the caller waits for it, as for any copy. */
static double sim_copy_queued(coproc__device *dev, int pinned, double bytes)
{
    coproc__sim_state *st = dev->backend_state;
    double seconds = coproc__profile_transfer_time(st->truth, 1, pinned, bytes);
    if (!(seconds > 0) || !isfinite(seconds))
        return -1;
    pthread_mutex_lock(&st->lock);
    if (st->tasks_open == 0) {
        pthread_mutex_unlock(&st->lock);
        charge(dev, seconds, 0);
        return -1;
    }
    double t = noisy(st, seconds);
    double start = st->copy_free > st->frontier ? st->copy_free : st->frontier;
    st->copy_free = start + t;
    st->work += t;
    double end = st->copy_free;
    pthread_mutex_unlock(&st->lock);
    return end;
}

/* The kernel queue idles until the copy it waits for ends. */
static void sim_queue_waits(coproc__device *dev, double at)
{
    coproc__sim_state *st = dev->backend_state;
    pthread_mutex_lock(&st->lock);
    if (st->tasks_open > 0 && at > st->frontier)
        st->frontier = at;
    pthread_mutex_unlock(&st->lock);
}

/* The profile's roofline, as the fused engine estimates a pipeline (fused.c). */
static double sim_pipeline_ran(coproc__device *dev, double bytes, double rows, double work,
                               double measured)
{
    (void)measured;
    const coproc__profile *p = ((coproc__sim_state *)dev->backend_state)->truth;
    double bw = p->mem_read_bytes_per_s > 0 ? p->mem_read_bytes_per_s : 10e9;
    /* No integer rate in the profile (a synthetic one): memory-bound only. */
    double compute = p->int_ops_per_s > 0 ? rows * work / p->int_ops_per_s : 0;
    double launch = p->launch_latency_s > 0 ? p->launch_latency_s : 20e-6;
    return charge(dev, launch + fmax(bytes / bw, compute), 0);
}

static double sim_now(coproc_runtime *rt)
{
    coproc__sim_clock *c = rt->backend_state;
    pthread_mutex_lock(&c->lock);
    double now = c->now;
    pthread_mutex_unlock(&c->lock);
    return now;
}

static void sim_task_begin(coproc_runtime *rt, coproc__device *dev, coproc__task_clock *c)
{
    (void)rt;
    coproc__sim_state *st = dev->backend_state;
    pthread_mutex_lock(&st->lock);
    st->tasks_open++;
    c->mark = st->work;
    double from = st->busy_until > c->submitted ? st->busy_until : c->submitted;
    st->frontier = st->frontier > from ? st->frontier : from;
    c->start = st->frontier;
    st->work += st->ahead; /* its inputs, copied while the task before ran */
    st->frontier += st->ahead;
    st->ahead = 0;
    pthread_mutex_unlock(&st->lock);
}

static void sim_task_end(coproc_runtime *rt, coproc__device *dev, coproc__task_clock *c)
{
    (void)rt;
    coproc__sim_state *st = dev->backend_state;
    pthread_mutex_lock(&st->lock);
    st->tasks_open--;
    c->end = st->frontier;
    c->seconds = c->end - c->start;
    if (c->end > st->busy_until)
        st->busy_until = c->end;
    pthread_mutex_unlock(&st->lock);
}

static double sim_task_elapsed(coproc_runtime *rt, coproc__device *dev,
                               const coproc__task_clock *c)
{
    (void)rt;
    coproc__sim_state *st = dev->backend_state;
    pthread_mutex_lock(&st->lock);
    double t = st->frontier - c->start;
    pthread_mutex_unlock(&st->lock);
    return t;
}

static void sim_task_waited(coproc_runtime *rt, const coproc__task_clock *c)
{
    coproc__sim_clock *clk = rt->backend_state;
    pthread_mutex_lock(&clk->lock);
    if (c->end > clk->now)
        clk->now = c->end;
    pthread_mutex_unlock(&clk->lock);
}

const coproc__backend coproc__backend_sim = {
    .version = COPROC__BACKEND_VERSION,
    .name = "sim",
    .claims = coproc__sim_claims,
    .open = coproc__sim_open,
    .release_device = coproc__sim_release_device,
    .close = coproc__sim_close,
    .calibrates = 0,
    .op_ran = sim_op_ran,
    .copy_ran = sim_copy_ran,
    .copy_queued = sim_copy_queued,
    .queue_waits = sim_queue_waits,
    .pipeline_ran = sim_pipeline_ran,
    .now = sim_now,
    .task_begin = sim_task_begin,
    .task_end = sim_task_end,
    .task_elapsed = sim_task_elapsed,
    .task_waited = sim_task_waited,
};
