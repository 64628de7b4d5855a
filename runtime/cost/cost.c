/* cost.c - observe operator runs into cost models; predict operator cost. */
#include "cost/cost.h"

#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "cost/bandwidth.h"
#include "cost/model.h"
#include "core/runtime.h"
#include "backend/opencl/sync.h"

_Static_assert(COPROC__OP_KIND_COUNT <= COPROC__DEVICE_OP_KINDS,
               "coproc__device counts runs of every operator kind");

void coproc__op_timer_begin(coproc__device *dev, coproc__op_timer *t)
{
    t->start = NULL;
    t->timed = 1;
    t->programs_made = atomic_load(&dev->programs_made);
    t->wall_start = coproc__now();
    coproc__submit_begin(dev);
    if (clEnqueueMarkerWithWaitList(dev->queue, 0, NULL, &t->start) != CL_SUCCESS)
        t->start = NULL;
    coproc__submit_end(dev);
}

void coproc__op_timer_begin_sampled(coproc__device *dev, coproc__op_timer *t, coproc__op_kind k)
{
    unsigned run = atomic_fetch_add(&dev->op_runs[k], 1);
    unsigned every = atomic_load(&dev->op_settled[k]) ? COPROC__SETTLED_EVERY
                                                      : COPROC__UNSETTLED_EVERY;
    /* Long runs: the last two (one alone may be a hiccup of a loaded host). */
    int longer = atomic_load(&dev->op_last_us[k]) >= COPROC__TIMED_ALWAYS_US &&
                 atomic_load(&dev->op_prev_us[k]) >= COPROC__TIMED_ALWAYS_US;
    /* A simulated device's time is its profile's, free to read: every run. */
    if (!dev->backend->calibrates || run < COPROC__LEARN_RUNS || longer) {
        coproc__op_timer_begin(dev, t);
        return;
    }
    /* A short run sampled after the first ones is timed by the wall clock
     * alone (coproc__op_timer_seconds' fallback): two markers and a wait
     * would cost about as much as the run, and for a run this short what
     * the caller waits for is the cost worth learning. */
    t->start = NULL;
    t->timed = run % every == 0;
    t->programs_made = atomic_load(&dev->programs_made);
    t->wall_start = coproc__now();
}

/* Whether model m (locked) has settled: fitted and its recent median
 * relative error (over 8 or more runs) at most COPROC__SETTLED_ERROR; or
 * never fitted from half a ring of runs (too few distinct sizes: more of
 * the same teach nothing, a sampled new size still does). */
static int settled(const coproc__model *m)
{
    if (!m->fitted)
        return m->ring_len >= COPROC__LEARN_RUNS / 2;
    if (m->err_len < 8)
        return 0;
    double median;
    coproc__model_error(m, &median, NULL);
    return median >= 0 && median <= COPROC__SETTLED_ERROR;
}

/* Device-timeline seconds between the start marker and a new end marker; <0 if unknown. */
static double device_seconds(coproc__device *dev, cl_event start)
{
    cl_event end = NULL;
    double seconds = -1;
    if (!start)
        return -1;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueMarkerWithWaitList(dev->queue, 0, NULL, &end);
    coproc__submit_end(dev);
    if (err != CL_SUCCESS)
        return -1;
    if (coproc__wait_event(dev, end) == CL_SUCCESS)
        seconds = coproc__device_event_seconds(dev, start, end);
    clReleaseEvent(end);
    return seconds;
}

double coproc__op_timer_seconds(coproc__device *dev, coproc__op_timer *t)
{
    double seconds = device_seconds(dev, t->start);
    double wall = coproc__now() - t->wall_start;
    /* Markers can collapse to zero on drivers that skip empty commands: the
     * wall clock is the honest fallback for a synchronous operator. */
    if (!(seconds > 0) || seconds > wall * 1.5)
        seconds = wall;
    if (t->start)
        clReleaseEvent(t->start);
    t->start = NULL;
    return seconds;
}

void coproc__op_timer_end(coproc__device *dev, coproc__op_timer *t, coproc__op_kind k,
                          const double *x, int ok)
{
    double wall_us = (coproc__now() - t->wall_start) * 1e6;
    atomic_store(
        &dev->op_prev_us[k],
        atomic_exchange(&dev->op_last_us[k], wall_us < 4e9 ? (unsigned)wall_us : 4000000000u));
    if (ok && !t->timed) {
        dev->backend->op_ran(dev, (int)k, x, coproc__now() - t->wall_start);
    } else if (ok) {
        int built = atomic_load(&dev->programs_made) != t->programs_made;
        /* The backend says what the run took on dev (a simulated device: its profile). */
        double seconds = dev->backend->op_ran(dev, (int)k, x, coproc__op_timer_seconds(dev, t));
        if (!built) {
            pthread_mutex_lock(&dev->model_lock);
            coproc__model *m = &dev->profile->ops[k];
            coproc__model_observe(m, x, seconds);
            atomic_store(&dev->op_settled[k], settled(m));
            pthread_mutex_unlock(&dev->model_lock);
        }
    }
    if (t->start)
        clReleaseEvent(t->start);
    t->start = NULL;
}

double coproc__predict_cost(coproc__device *dev, coproc__op_kind k, const double *x,
                            double in_bytes, double out_bytes)
{
    pthread_mutex_lock(&dev->model_lock);
    double compute = coproc__model_predict(&dev->profile->ops[k], x);
    double move = 0;
    if (in_bytes > 0)
        move += coproc__profile_transfer_now(dev->profile, 1, 0, in_bytes);
    if (out_bytes > 0)
        move += coproc__profile_transfer_now(dev->profile, 0, 0, out_bytes);
    pthread_mutex_unlock(&dev->model_lock);
    if (compute < 0)
        return -1;
    return compute + move;
}

/* ---- public accessors of the cost models */

_Static_assert((int)COPROC_OP_KIND_COUNT == (int)COPROC__OP_KIND_COUNT,
               "public and internal operator kinds must match");

const char *coproc_op_kind_name(coproc_op_kind k)
{
    return (unsigned)k < COPROC_OP_KIND_COUNT ? coproc__op_kind_name((coproc__op_kind)k)
                                              : "invalid";
}

coproc_status coproc_model_stats_get(const coproc_runtime *crt, int device, coproc_op_kind k,
                                     coproc_model_stats *out)
{
    coproc_runtime *rt = (coproc_runtime *)crt;
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", "coproc_model_stats_get");
    if (out->struct_size < sizeof(size_t) || out->struct_size > sizeof *out)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_model_stats: bad struct_size");
    if ((unsigned)k >= COPROC_OP_KIND_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "unknown operator kind %d", (int)k);
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    coproc_model_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = out->struct_size;
    pthread_mutex_lock(&dev->model_lock);
    const coproc__model *m = &dev->profile->ops[k];
    s.fitted = m->fitted;
    s.features = m->features;
    for (int i = 0; i <= m->features && i < 4; i++)
        s.coef[i] = m->coef[i];
    s.observations = m->observations;
    s.refits = m->refits;
    coproc__model_error(m, &s.median_rel_error, &s.p90_rel_error);
    pthread_mutex_unlock(&dev->model_lock);
    memcpy(out, &s, out->struct_size);
    return COPROC_OK;
}

coproc_status coproc_profile_save(coproc_runtime *rt)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    for (int i = 0; i < rt->device_count; i++) {
        coproc__device *dev = &rt->devices[i];
        if (dev->profile_source == 0)
            continue; /* never calibrated: a profile without measurements is not kept */
        pthread_mutex_lock(&dev->model_lock);
        coproc_status s = coproc__profile_save(rt, dev, dev->profile);
        pthread_mutex_unlock(&dev->model_lock);
        if (s != COPROC_OK)
            return s;
    }
    return COPROC_OK;
}
