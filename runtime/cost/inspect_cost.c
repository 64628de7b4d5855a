/* inspect_cost.c - the cost half of coproc/inspect.h: profiles as handles
 * (load, copy, use, save, JSON, predictions), the live models' latest
 * observation, refitting a model form to given points, calibration and its
 * transfer check, and the memory-bandwidth measurement. Each call checks its
 * arguments and hands the work to cost/ and cost/calibration/. */
#include <stdlib.h>
#include <string.h>

#include "coproc/inspect.h"
#include "backend/backend.h"
#include "core/runtime.h"
#include "cost/bandwidth.h"
#include "cost/calibration/calibration.h"
#include "cost/model.h"
#include "cost/profile.h"

_Static_assert(COPROC_MODEL_MAX_FEATURES == COPROC__MODEL_MAX_FEATURES,
               "public and internal feature counts differ");
_Static_assert(COPROC_CHECK_MAX == COPROC__CHECK_MAX, "public and internal check sizes differ");
_Static_assert((int)COPROC_OP_KIND_COUNT == (int)COPROC__OP_KIND_COUNT,
               "public and internal operator kinds differ");

/* The caller's copy of a profile. */
struct coproc_profile {
    coproc__profile p;
};

/* The start of a call that makes a profile: rt and out checked, *out NULL,
 * the device checked (*dev) and a new, uninitialised handle in *p; else the
 * error, with its message on rt. */
static coproc_status profile_start(coproc_runtime *rt, const char *fn, int device,
                                   coproc_profile **out, coproc__device **dev, coproc_profile **p)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", fn);
    *out = NULL;
    if (!(*dev = coproc__device_at(rt, device)))
        return COPROC_INVALID_ARGUMENT;
    if (!(*p = malloc(sizeof **p)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "%s: out of host memory", fn);
    return COPROC_OK;
}

/* Its end: p handed over on success, else freed. */
static coproc_status profile_end(coproc_status s, coproc_profile *p, coproc_profile **out)
{
    if (s == COPROC_OK)
        *out = p;
    else
        free(p);
    return s;
}

/* p must have been made for dev (the same model and driver). */
static coproc_status same_device(coproc_runtime *rt, const char *fn, const coproc__device *dev,
                                 const coproc_profile *p)
{
    if (strcmp(p->p.fingerprint, dev->fingerprint) != 0)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: the profile is of %s, not of "
                            "device %d (%s)", fn, p->p.device_name, dev->index, dev->info.name);
    return COPROC_OK;
}

/* ---------------------------------------------------------------- profiles */

void coproc_profile_free(coproc_profile *p) { free(p); }

coproc_status coproc_profile_load(coproc_runtime *rt, int device, coproc_profile **out)
{
    coproc__device *dev = NULL;
    coproc_profile *p = NULL;
    coproc_status s = profile_start(rt, "coproc_profile_load", device, out, &dev, &p);
    return s != COPROC_OK ? s : profile_end(coproc__profile_load(rt, dev, &p->p), p, out);
}

coproc_status coproc_profile_current(coproc_runtime *rt, int device, coproc_profile **out)
{
    coproc__device *dev = NULL;
    coproc_profile *p = NULL;
    coproc_status s = profile_start(rt, "coproc_profile_current", device, out, &dev, &p);
    if (s != COPROC_OK)
        return s;
    pthread_mutex_lock(&dev->model_lock);
    p->p = *dev->profile;
    pthread_mutex_unlock(&dev->model_lock);
    return profile_end(COPROC_OK, p, out);
}

coproc_status coproc_profile_use(coproc_runtime *rt, int device, const coproc_profile *p)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!p)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_profile_use: profile is NULL");
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    coproc_status s = same_device(rt, "coproc_profile_use", dev, p);
    if (s != COPROC_OK)
        return s;
    pthread_mutex_lock(&dev->model_lock);
    *dev->profile = p->p;
    pthread_mutex_unlock(&dev->model_lock);
    return COPROC_OK;
}

coproc_status coproc_profile_save_device(coproc_runtime *rt, int device, const coproc_profile *p)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!p)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_profile_save_device: profile is "
                            "NULL");
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    coproc_status s = same_device(rt, "coproc_profile_save_device", dev, p);
    return s != COPROC_OK ? s : coproc__profile_save(rt, dev, &p->p);
}

char *coproc_profile_json(const coproc_profile *p)
{
    if (!p)
        return NULL;
    json_t *doc = coproc__profile_to_json(&p->p);
    if (!doc)
        return NULL;
    /* Sized first, then written into memory of our own malloc, so that the
     * caller's free() matches whatever allocator jansson was given. */
    const size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER;
    size_t len = json_dumpb(doc, NULL, 0, flags);
    char *text = len ? malloc(len + 1) : NULL;
    if (text && json_dumpb(doc, text, len, flags) == len) {
        text[len] = '\0';
    } else {
        free(text);
        text = NULL;
    }
    json_decref(doc);
    return text;
}

double coproc_profile_transfer_time(const coproc_profile *p, int to_device, int pinned,
                                    double bytes)
{
    return p ? coproc__profile_transfer_time(&p->p, to_device != 0, pinned != 0, bytes) : -1;
}

double coproc_profile_predict(const coproc_profile *p, coproc_op_kind k, const double *x)
{
    if (!p || !x || (unsigned)k >= COPROC_OP_KIND_COUNT)
        return -1;
    return coproc__model_predict(&p->p.ops[k], x);
}

/* ---------------------------------------------------------------- models */

coproc_status coproc_model_last(coproc_runtime *rt, int device, coproc_op_kind k, double *x,
                                double *seconds, uint64_t *observations)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if ((unsigned)k >= COPROC_OP_KIND_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_model_last: unknown operator "
                            "kind %d", (int)k);
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    double fx[COPROC__MODEL_MAX_FEATURES], secs = 0;
    pthread_mutex_lock(&dev->model_lock);
    const coproc__model *m = &dev->profile->ops[k];
    uint64_t seen = m->observations;
    int have = seen > 0 && coproc__model_last(m, fx, &secs) == 0;
    int features = m->features;
    pthread_mutex_unlock(&dev->model_lock);
    if (observations)
        *observations = seen;
    if (have && x)
        memcpy(x, fx, (size_t)features * sizeof *x);
    if (have && seconds)
        *seconds = secs;
    return COPROC_OK;
}

coproc_status coproc_model_fit_points(coproc_op_kind k, int n,
                                      const double (*x)[COPROC_MODEL_MAX_FEATURES],
                                      const double *seconds, double *predicted)
{
    if (!x || !seconds || !predicted)
        return COPROC_NULL_POINTER;
    if ((unsigned)k >= COPROC_OP_KIND_COUNT || n < 1 || n > COPROC__MODEL_RING)
        return COPROC_INVALID_ARGUMENT;
    coproc__model *m = malloc(sizeof *m); /* its rings make it large for the stack */
    if (!m)
        return COPROC_HOST_OUT_OF_MEMORY;
    coproc__model_init(m, coproc__op_kind_features((coproc__op_kind)k));
    for (int i = 0; i < n; i++)
        coproc__model_observe(m, x[i], seconds[i]);
    coproc_status s = COPROC_UNSUPPORTED;
    if (coproc__model_fit(m) == 0) {
        for (int i = 0; i < n; i++)
            predicted[i] = coproc__model_predict(m, x[i]);
        s = COPROC_OK;
    }
    free(m);
    return s;
}

/* ---------------------------------------------------------------- calibration */

/* Measuring a simulated device would measure the host device its kernels run
 * on: refused, its profile is its calibration. */
static coproc_status measurable(coproc_runtime *rt, const coproc__device *dev, const char *what)
{
    if (dev->backend->calibrates)
        return COPROC_OK;
    return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: device %d is simulated (%s backend): "
                        "its profile is its calibration", what, dev->index, dev->backend->name);
}

coproc_status coproc_calibrate(coproc_runtime *rt, int device, int full,
                               coproc_progress_fn progress, void *user, coproc_profile **out)
{
    coproc__device *dev = NULL;
    coproc_profile *p = NULL;
    coproc_status s = profile_start(rt, "coproc_calibrate", device, out, &dev, &p);
    if (s == COPROC_OK && (s = measurable(rt, dev, "coproc_calibrate")) != COPROC_OK) {
        free(p);
        *out = NULL;
    }
    if (s != COPROC_OK)
        return s;
    return profile_end(coproc__calibrate_device(rt, dev, full, progress, user, &p->p), p, out);
}

coproc_status coproc_check_transfers(coproc_runtime *rt, int device, const coproc_profile *p,
                                     int pinned, int points, uint64_t seed,
                                     coproc_transfer_check *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!p || !out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_check_transfers: %s is NULL",
                            p ? "out" : "profile");
    if (out->struct_size < sizeof(size_t) || out->struct_size > sizeof *out)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_check_transfers: bad "
                            "struct_size");
    if (points < 1 || points > COPROC_CHECK_MAX)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_check_transfers: %d sizes; "
                            "1 to %d", points, COPROC_CHECK_MAX);
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    if (measurable(rt, dev, "coproc_check_transfers") != COPROC_OK)
        return COPROC_UNSUPPORTED;
    coproc__transfer_check *r = malloc(sizeof *r);
    if (!r)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_check_transfers: out of "
                            "host memory");
    coproc_status s = coproc__check_transfers(rt, dev, &p->p, pinned != 0, points, seed, r);
    if (s == COPROC_OK) {
        coproc_transfer_check c;
        memset(&c, 0, sizeof c);
        c.struct_size = out->struct_size;
        c.points = r->points;
        memcpy(c.bytes, r->bytes, sizeof c.bytes);
        memcpy(c.measured, r->measured, sizeof c.measured);
        memcpy(c.predicted, r->predicted, sizeof c.predicted);
        memcpy(c.drift, r->drift, sizeof c.drift);
        memcpy(c.interpolated, r->interpolated, sizeof c.interpolated);
        memcpy(c.live, r->live, sizeof c.live);
        memcpy(c.level, r->level, sizeof c.level);
        memcpy(out, &c, out->struct_size);
    }
    free(r);
    return s;
}

/* ---------------------------------------------------------------- measurements */

coproc_status coproc_measure_bandwidth(coproc_runtime *rt, int device, size_t bytes, int reps,
                                       double *bytes_per_s)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!bytes_per_s)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_measure_bandwidth: bytes_per_s "
                            "is NULL");
    *bytes_per_s = 0;
    if (bytes < 16 || reps < 1)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_measure_bandwidth: %zu bytes "
                            "%d times; at least 16 bytes once", bytes, reps);
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    if (measurable(rt, dev, "coproc_measure_bandwidth") != COPROC_OK)
        return COPROC_UNSUPPORTED;
    return coproc__copy_bandwidth(rt, dev, bytes, reps, bytes_per_s);
}

double coproc_clock_seconds(const coproc_runtime *crt)
{
    coproc_runtime *rt = (coproc_runtime *)crt;
    if (!rt || !rt->backend)
        return -1;
    return rt->backend->now(rt);
}
