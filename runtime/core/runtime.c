/* runtime.c - open and close a runtime, options, errors, log, counters. */
#include "core/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "core/cache.h"
#include "core/parse.h"
#include "backend/backend.h"
#include "backend/opencl/cl_error.h"
#include "cost/profile.h"
#include "query/state.h"
#include "sched/scheduler.h"
#include "sched/task.h"
#include "backend/opencl/topology.h"

void coproc_options_init(coproc_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->log_level = COPROC_LOG_WARN;
}

static void vset_error(coproc_runtime *rt, const char *fmt, va_list ap)
{
    if (!rt)
        return;
    pthread_mutex_lock(&rt->err_lock);
    vsnprintf(rt->errmsg, sizeof rt->errmsg, fmt, ap);
    pthread_mutex_unlock(&rt->err_lock);
}

coproc_status coproc__fail(coproc_runtime *rt, coproc_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_error(rt, fmt, ap);
    va_end(ap);
    return s;
}

coproc_status coproc__status_from_cl(int cl_err)
{
    switch (cl_err) {
    case CL_SUCCESS: return COPROC_OK;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_INVALID_BUFFER_SIZE: return COPROC_DEVICE_OUT_OF_MEMORY;
    case CL_OUT_OF_HOST_MEMORY: return COPROC_HOST_OUT_OF_MEMORY;
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_DEVICE_NOT_FOUND:
    case CL_INVALID_DEVICE:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
    case COPROC__CL_NO_PROGRESS: return COPROC_DEVICE_LOST;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILER_NOT_AVAILABLE: return COPROC_BUILD_FAILED;
    case CL_PLATFORM_NOT_FOUND_KHR: return COPROC_NO_PLATFORM;
    default: return COPROC_DRIVER_ERROR;
    }
}

coproc_status coproc__fail_cl(coproc_runtime *rt, int cl_err, const char *fmt, ...)
{
    if (rt) {
        char what[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        coproc__fail(rt, COPROC_OK, "%s: %s (%d)", what, coproc__cl_error_name(cl_err), cl_err);
    }
    return coproc__status_from_cl(cl_err);
}

void coproc__log(coproc_runtime *rt, coproc_log_level level, const char *fmt, ...)
{
    if (rt && level > rt->log_level)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rt && rt->log) {
        rt->log(rt->log_user, level, msg);
        return;
    }
    static const char *const names[] = {"error", "warning", "info", "debug"};
    fprintf(stderr, "coproc: %s: %s\n", names[level], msg);
}

void coproc__errmsg_copy(coproc_runtime *rt, char *buf, size_t size)
{
    pthread_mutex_lock(&rt->err_lock);
    snprintf(buf, size, "%s", rt->errmsg);
    pthread_mutex_unlock(&rt->err_lock);
}

const char *coproc_errmsg(const coproc_runtime *rt)
{
    if (!rt)
        return "no runtime (NULL handle)";
    return rt->errmsg;
}

coproc__device *coproc__device_at(coproc_runtime *rt, int i)
{
    if (i < 0 || i >= rt->device_count) {
        coproc__fail(rt, COPROC_INVALID_ARGUMENT, "device index %d out of range (%d devices)", i,
                     rt->device_count);
        return NULL;
    }
    return &rt->devices[i];
}

static void calibration_progress(void *user, const char *what)
{
    coproc_runtime *rt = user;
    coproc__log(rt, COPROC_LOG_DEBUG, "calibrating: %s", what);
}

/* Give each device its profile: the cached one, else a fresh calibration.
 * Calibration trouble only costs the models their seed; it never fails open. */
static void load_profiles(coproc_runtime *rt, coproc_calibration mode)
{
    if (mode == COPROC_CALIBRATION_OFF)
        return;
    for (int i = 0; i < rt->device_count; i++) {
        coproc__device *dev = &rt->devices[i];
        if (!dev->backend->calibrates)
            continue; /* its profile came with it (a simulated device) */
        if (mode == COPROC_CALIBRATION_AUTO) {
            coproc_status s = coproc__profile_load(rt, dev, dev->profile);
            if (s == COPROC_OK) {
                dev->profile_source = 1;
                continue;
            }
            if (s == COPROC_CORRUPT_PROFILE)
                coproc__log(rt, COPROC_LOG_WARN, "device %d: ignoring its profile (%s); "
                            "recalibrating", i, rt->errmsg);
            coproc__profile_init(dev->profile, dev);
        }
        coproc__log(rt, COPROC_LOG_INFO, "device %d (%s): %s calibration", i, dev->info.name,
                    mode == COPROC_CALIBRATION_FULL ? "full" : "quick");
        coproc_status s = coproc__calibrate_device(rt, dev, mode == COPROC_CALIBRATION_FULL,
                                                   calibration_progress, rt, dev->profile);
        if (s != COPROC_OK) {
            coproc__log(rt, COPROC_LOG_WARN, "device %d: calibration failed (%s); its cost "
                        "models will learn from runs only", i, rt->errmsg);
            coproc__profile_init(dev->profile, dev);
            continue;
        }
        dev->profile_source = 2;
        if (coproc__profile_save(rt, dev, dev->profile) != COPROC_OK)
            coproc__log(rt, COPROC_LOG_WARN, "device %d: could not save its profile: %s", i,
                        rt->errmsg);
    }
    rt->errmsg[0] = '\0';
}

/* The environment variable that overrides a field, or NULL when the field
 * outranks it (coproc_options.over_env) or it is unset or empty. */
static const char *env_over(const coproc_options *o, unsigned field, const char *name)
{
    if (o->over_env & field)
        return NULL;
    const char *env = getenv(name);
    return env && *env ? env : NULL;
}

/* Budget, zero-copy and placement options, with their environment overrides.
 * An override that does not parse, or names a device the runtime does not
 * have, is ignored with a warning naming the variable: the option stands. */
static void apply_placement_options(coproc_runtime *rt, const coproc_options *o)
{
    uint64_t budget = o->device_budget_bytes;
    const char *env = env_over(o, COPROC_OPTION_BUDGET, "COPROC_BUDGET");
    if (env) {
        uint64_t b = 0;
        const char *why = NULL;
        char kept[64];
        if (budget)
            snprintf(kept, sizeof kept, "%llu bytes", (unsigned long long)budget);
        else
            snprintf(kept, sizeof kept, "70 %% of each device's memory");
        if (coproc__parse_bytes(env, &b, &why) != 0)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_BUDGET=%s ignored: %s (bytes, or with a "
                        "K/M/G/T suffix); the budget stays %s", env, why, kept);
        else if (b < COPROC__MIN_BUDGET)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_BUDGET=%s ignored: below the minimum of "
                        "%llu bytes (128K) that streaming needs; the budget stays %s", env,
                        (unsigned long long)COPROC__MIN_BUDGET, kept);
        else
            budget = b;
    }
    for (int i = 0; i < rt->device_count; i++) {
        if (budget)
            rt->devices[i].budget_bytes = budget;
        rt->devices[i].zero_copy = !o->disable_zero_copy;
    }
    rt->policy = o->policy;
    rt->fixed_device = o->fixed_device;
    if (o->policy == COPROC_POLICY_FIXED &&
        (o->fixed_device < 0 || o->fixed_device >= rt->device_count)) {
        coproc__log(rt, COPROC_LOG_WARN, "options.fixed_device %d out of range (%d devices); "
                    "the fixed policy uses device 0", o->fixed_device, rt->device_count);
        rt->fixed_device = 0;
    }
    rt->queue_depth = o->queue_depth > 0 ? o->queue_depth : 100;
    rt->watchdog_s = o->watchdog_seconds < 0   ? 0
                     : o->watchdog_seconds > 0 ? o->watchdog_seconds
                                               : 60;
    env = env_over(o, COPROC_OPTION_WATCHDOG, "COPROC_WATCHDOG");
    if (env) {
        double w = 0;
        const char *why = NULL;
        if (strcmp(env, "off") == 0)
            rt->watchdog_s = 0;
        else if (coproc__parse_seconds(env, &w, &why) != 0)
            coproc__log(rt, COPROC_LOG_WARN,
                        "COPROC_WATCHDOG=%s ignored: %s (seconds, e.g. "
                        "10 or 0.5, or off); the watchdog stays %s",
                        env, why, rt->watchdog_s > 0 ? "on" : "off");
        else
            rt->watchdog_s = w;
    }
    for (int i = 0; i < rt->device_count; i++) /* waits in callers' threads too (sync.h) */
        rt->devices[i].wait_bound_s = rt->watchdog_s;
    env = env_over(o, COPROC_OPTION_POLICY, "COPROC_POLICY");
    if (env) {
        static const char *const usage = "wtar, srt, rr, tbo, pbo, static, fixed or fixed:N";
        char name[32];
        const char *colon = strchr(env, ':');
        size_t len = colon ? (size_t)(colon - env) : strlen(env);
        int p = -1;
        if (len < sizeof name) {
            memcpy(name, env, len);
            name[len] = '\0';
            p = coproc__policy_parse(name);
        }
        long long dev = 0;
        const char *why = NULL;
        if (p < 0)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_POLICY=%s ignored: unknown policy (%s)",
                        env, usage);
        else if (colon && p != COPROC_POLICY_FIXED)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_POLICY=%s ignored: only fixed takes a "
                        "device (%s)", env, usage);
        else if (colon && coproc__parse_int(colon + 1, 0, rt->device_count - 1, &dev, &why) != 0)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_POLICY=%s ignored: device \"%s\" %s "
                        "(the runtime has %d device%s, 0 to %d)", env, colon + 1, why,
                        rt->device_count, rt->device_count == 1 ? "" : "s",
                        rt->device_count - 1);
        else {
            rt->policy = p;
            if (colon)
                rt->fixed_device = (int)dev;
        }
    }
}

static int parse_calibration(const char *s, coproc_calibration *out)
{
    if (strcmp(s, "auto") == 0) *out = COPROC_CALIBRATION_AUTO;
    else if (strcmp(s, "off") == 0) *out = COPROC_CALIBRATION_OFF;
    else if (strcmp(s, "full") == 0) *out = COPROC_CALIBRATION_FULL;
    else return -1;
    return 0;
}

/* A bad option refuses open before any runtime exists (coproc.h): the
 * message can only go to the log, at error level (the options' log, else
 * stderr). */
static coproc_status refuse(const coproc_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static coproc_status refuse(const coproc_options *o, const char *fmt, ...)
{
    char what[512] = "coproc_open: options.";
    size_t n = strlen(what);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what + n, sizeof what - n, fmt, ap);
    va_end(ap);
    if (o->log)
        o->log(o->log_user, COPROC_LOG_ERROR, what);
    else
        fprintf(stderr, "coproc: error: %s\n", what);
    return COPROC_INVALID_ARGUMENT;
}

coproc_status coproc_open(const coproc_options *opts, coproc_runtime **out)
{
    if (!out)
        return COPROC_NULL_POINTER;
    *out = NULL;
    coproc_options o;
    coproc_options_init(&o);
    if (opts) {
        if (opts->struct_size < offsetof(coproc_options, devices) + sizeof(opts->devices) ||
            opts->struct_size > sizeof o)
            return COPROC_INVALID_ARGUMENT; /* not initialised with coproc_options_init */
        memcpy(&o, opts, opts->struct_size);
        if ((unsigned)o.log_level > COPROC_LOG_DEBUG)
            return refuse(&o, "log_level %d (0 to %d)", (int)o.log_level, COPROC_LOG_DEBUG);
        if ((unsigned)o.calibration > COPROC_CALIBRATION_FULL)
            return refuse(&o, "calibration %d (0 to %d)", (int)o.calibration,
                          COPROC_CALIBRATION_FULL);
        if ((unsigned)o.policy > COPROC_POLICY_FIXED)
            return refuse(&o, "policy %d (0 to %d)", o.policy, COPROC_POLICY_FIXED);
        if (o.queue_depth < 0)
            return refuse(&o, "queue_depth %d (0: the default, else positive)", o.queue_depth);
        if (o.watchdog_seconds != o.watchdog_seconds || o.watchdog_seconds > 1e9)
            return refuse(&o, "watchdog_seconds %g (0: the default 60 s, negative: none)",
                          o.watchdog_seconds);
        if (o.over_env & ~(unsigned)COPROC_OPTION_ALL)
            return refuse(&o,
                          "over_env 0x%x names no field (an OR of coproc_option_field, "
                          "0x%x at most)",
                          o.over_env, (unsigned)COPROC_OPTION_ALL);
        if (o.device_budget_bytes && o.device_budget_bytes < COPROC__MIN_BUDGET)
            return refuse(&o, "device_budget_bytes %llu is below the minimum of %llu bytes "
                          "(128 KiB) that streaming needs (0: 70 %% of each device's memory)",
                          (unsigned long long)o.device_budget_bytes,
                          (unsigned long long)COPROC__MIN_BUDGET);
    }

    coproc_runtime *rt = calloc(1, sizeof *rt);
    if (!rt)
        return COPROC_HOST_OUT_OF_MEMORY;
    pthread_mutex_init(&rt->err_lock, NULL);
    pthread_mutex_init(&rt->tasks_lock, NULL);
    coproc__op_seen_init(&rt->seen);
    rt->query = coproc__query_state_new(); /* NULL: queries answer HOST_OUT_OF_MEMORY */
    rt->log = o.log;
    rt->log_user = o.log_user;
    rt->log_level = o.log_level;
    rt->disable_binary_cache = o.disable_binary_cache;
    *out = rt;

    const char *env_cache = env_over(&o, COPROC_OPTION_CACHE_DIR, "COPROC_CACHE_DIR");
    const char *cache = env_cache ? env_cache : o.cache_dir;
    if (coproc__cache_dir_resolve(cache, (o.over_env & COPROC_OPTION_CACHE_DIR) != 0, rt->cache_dir,
                                  sizeof rt->cache_dir) != 0) {
        coproc__log(rt, COPROC_LOG_WARN, "no usable cache directory (%s); kernels will be "
                    "compiled in every process", cache ? cache : "$HOME unset");
        rt->cache_dir[0] = '\0';
    }

    const char *env_devices = env_over(&o, COPROC_OPTION_DEVICES, "COPROC_DEVICES");
    const char *spec = env_devices ? env_devices : o.devices;
    rt->backend = coproc__backend_for(spec);
    coproc_status s = rt->backend->open(rt, spec);
    if (s != COPROC_OK)
        return s;
    apply_placement_options(rt, &o);
    coproc__query_state_configure(rt); /* COPROC_VERIFY */
    const char *env_cal = env_over(&o, COPROC_OPTION_CALIBRATION, "COPROC_CALIBRATE");
    if (env_cal && parse_calibration(env_cal, &o.calibration) != 0)
        coproc__log(rt, COPROC_LOG_WARN, "COPROC_CALIBRATE=%s ignored (auto, off or full)",
                    env_cal);
    load_profiles(rt, o.calibration);
    coproc__faults_read(rt);
    rt->errmsg[0] = '\0';
    return COPROC_OK;
}

void coproc_close(coproc_runtime *rt)
{
    if (!rt)
        return;
    /* Query tasks first: their runs may still submit operators to the workers. */
    coproc__query_tasks_close(rt);
    if (coproc__tasks_stop(rt)) {
        /* Freeing would pull memory from under a thread that may yet come back. */
        coproc__log(rt, COPROC_LOG_ERROR,
                    "coproc_close: a lost device's thread is still inside "
                    "its driver; the runtime is left allocated (leaked), not freed under it");
        return;
    }
    coproc__query_state_free(rt->query);
    for (int i = 0; i < rt->device_count; i++)
        rt->devices[i].backend->release_device(&rt->devices[i]);
    free(rt->devices);
    if (rt->backend)
        rt->backend->close(rt);
    pthread_mutex_destroy(&rt->err_lock);
    pthread_mutex_destroy(&rt->tasks_lock);
    coproc__op_seen_destroy(&rt->seen);
    free(rt);
}

int coproc_device_count(const coproc_runtime *rt)
{
    return rt ? rt->device_count : 0;
}

coproc_status coproc_device_info_get(const coproc_runtime *rt, int i, coproc_device_info *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail((coproc_runtime *)rt, COPROC_NULL_POINTER,
                            "coproc_device_info_get: out is NULL");
    if (i < 0 || i >= rt->device_count)
        return coproc__fail((coproc_runtime *)rt, COPROC_INVALID_ARGUMENT,
                            "device index %d out of range (%d devices)", i, rt->device_count);
    *out = rt->devices[i].info;
    return COPROC_OK;
}

coproc_status coproc_stats_get(const coproc_runtime *rt, coproc_stats *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail((coproc_runtime *)rt, COPROC_NULL_POINTER,
                            "coproc_stats_get: out is NULL");
    if (out->struct_size < sizeof(size_t) || out->struct_size > sizeof *out)
        return coproc__fail((coproc_runtime *)rt, COPROC_INVALID_ARGUMENT, "coproc_stats_get: "
                            "struct_size %zu (set it to sizeof(coproc_stats), %zu)",
                            out->struct_size, sizeof *out);
    coproc_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = out->struct_size;
    s.programs_built = atomic_load(&((coproc_runtime *)rt)->programs_built);
    s.programs_from_cache = atomic_load(&((coproc_runtime *)rt)->programs_from_cache);
    s.program_cache_writes = atomic_load(&((coproc_runtime *)rt)->program_cache_writes);
    s.faults_injected = atomic_load(&((coproc_runtime *)rt)->faults.injected);
    memcpy(out, &s, out->struct_size);
    return COPROC_OK;
}
