/* open.c - open simulated devices from their profiles.
 *
 * Selection: sim:PATH[:option=value...], several separated by commas. PATH is
 * a calibration profile (docs/profile.md). Its optional "simulated_device"
 * object gives what a calibration does not record: "type" ("cpu", "gpu",
 * "accelerator"), "global_mem_bytes", "host_unified_memory", "fp64",
 * "compute_units", "noise"; without it the executor's own values stand in.
 * Options override both: type=cpu|gpu|accelerator, mem=BYTES (K/M/G/T,
 * core/parse.h; at least 1M), unified=0|1, fp64=0|1, noise=F (0..1, default 0.05), seed=N, and
 * models=empty (the device starts with no fitted operator model and learns
 * them from its runs; the default is the profile's models, as after a
 * calibration). */
#include "backend/sim/sim.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backend/opencl/device.h"
#include "core/cache.h"
#include "core/parse.h"
#include "core/runtime.h"
#include "cost/model.h"

#define SIM_PREFIX "sim:"
#define SIM_MAX_DEVICES 16

int coproc__sim_claims(const char *spec)
{
    if (!spec)
        return 0;
    while (isspace((unsigned char)*spec))
        spec++;
    return strncmp(spec, SIM_PREFIX, strlen(SIM_PREFIX)) == 0;
}

/* What one sim: entry asks for; negative numbers: not given. */
typedef struct sim_entry {
    char path[1024];
    int type;          /* coproc_device_type, or -1 */
    double mem;        /* bytes */
    int unified, fp64;
    int compute_units;
    double noise;
    long long seed;
    int empty_models;
} sim_entry;

static int parse_type(const char *s)
{
    if (strcmp(s, "cpu") == 0) return COPROC_DEVICE_CPU;
    if (strcmp(s, "gpu") == 0) return COPROC_DEVICE_GPU;
    if (strcmp(s, "accelerator") == 0) return COPROC_DEVICE_ACCELERATOR;
    return -1;
}

/* Parse one entry "sim:PATH[:k=v...]" (text[0..len)). */
static coproc_status parse_entry(coproc_runtime *rt, const char *text, size_t len, sim_entry *e)
{
    memset(e, 0, sizeof *e);
    e->type = e->unified = e->fp64 = e->compute_units = -1;
    e->mem = e->noise = -1;
    e->seed = -1;
    char buf[1200];
    if (len >= sizeof buf)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "device selection: a sim: entry "
                            "longer than %zu characters", sizeof buf - 1);
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (strncmp(buf, SIM_PREFIX, strlen(SIM_PREFIX)) != 0)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "device selection \"%s\": simulated "
                            "devices (sim:) cannot be mixed with OpenCL devices; every entry "
                            "must be sim:PROFILE.json", buf);
    char *save = NULL, *tok = strtok_r(buf + strlen(SIM_PREFIX), ":", &save);
    if (!tok || !*tok)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "device selection: \"sim:\" needs a "
                            "profile path (sim:PROFILE.json)");
    snprintf(e->path, sizeof e->path, "%s", tok);
    while ((tok = strtok_r(NULL, ":", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "sim:%s: option \"%s\" is not "
                                "name=value", e->path, tok);
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        char *end = NULL;
        int ok = 1;
        if (strcmp(k, "type") == 0)
            ok = (e->type = parse_type(v)) >= 0;
        else if (strcmp(k, "mem") == 0) {
            uint64_t bytes = 0;
            /* At least 1 MiB, as read_profile requires of any device's memory;
             * below 2^64 once a double (become() converts it back). */
            ok = coproc__parse_bytes(v, &bytes, NULL) == 0 && bytes >= (1u << 20) &&
                 (double)bytes < 0x1p64;
            e->mem = (double)bytes;
        }
        else if (strcmp(k, "unified") == 0 || strcmp(k, "fp64") == 0) {
            ok = (v[0] == '0' || v[0] == '1') && !v[1];
            *(strcmp(k, "unified") == 0 ? &e->unified : &e->fp64) = v[0] - '0';
        } else if (strcmp(k, "noise") == 0) {
            e->noise = strtod(v, &end);
            ok = end != v && !*end && e->noise >= 0 && e->noise <= 1;
        } else if (strcmp(k, "seed") == 0) {
            ok = coproc__parse_int(v, 0, LLONG_MAX, &e->seed, NULL) == 0;
        } else if (strcmp(k, "models") == 0) {
            ok = strcmp(v, "empty") == 0 || strcmp(v, "profile") == 0;
            e->empty_models = strcmp(v, "empty") == 0;
        } else
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "sim:%s: unknown option \"%s\" "
                                "(type, mem, unified, fp64, noise, seed, models)", e->path, k);
        if (!ok)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "sim:%s: bad value \"%s\" for "
                                "option %s", e->path, v, k);
    }
    return COPROC_OK;
}

/* The host OpenCL device simulated devices run their kernels on: the first CPU, else the first. */
static coproc_status find_executor(coproc_runtime *rt, coproc__found_device *exec)
{
    coproc__found_device *found = NULL;
    int count = 0;
    coproc_status s = coproc__discover(rt, &found, &count);
    if (s != COPROC_OK)
        return coproc__fail(rt, s, "simulated devices run their kernels on a host OpenCL "
                            "device, and none answers: %s", rt->errmsg);
    int pick = -1;
    for (int i = 0; i < count && pick < 0; i++)
        if (found[i].info.type == COPROC_DEVICE_CPU)
            pick = i;
    if (pick < 0 && count > 0)
        pick = 0;
    if (pick >= 0)
        *exec = found[pick];
    free(found);
    if (pick < 0)
        return coproc__fail(rt, COPROC_NO_DEVICE, "simulated devices run their kernels on a "
                            "host OpenCL device, and none was found (install pocl-opencl-icd)");
    return COPROC_OK;
}

/* Read the profile and the "simulated_device" object of e->path. */
static coproc_status read_profile(coproc_runtime *rt, const sim_entry *e, coproc__profile *p,
                                  json_t **sim_section)
{
    /* Read through the cache's reader: a path that is not a regular file (a
     * FIFO nobody writes) is refused instead of blocking open. */
    unsigned char *text = NULL;
    size_t len = 0;
    int rd = coproc__read_file(e->path, &text, &len);
    if (rd != 0)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "sim:%s: cannot read the profile: %s",
                            e->path, rd == -2 ? "not a regular file" : "no such readable file");
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!doc)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "sim:%s: cannot read the profile: %s "
                            "(line %d)", e->path, jerr.text, jerr.line);
    char why[512];
    if (coproc__profile_from_json(p, doc, NULL, why, sizeof why) != 0) {
        json_decref(doc);
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "sim:%s: not a usable profile: %s",
                            e->path, why);
    }
    json_t *sec = json_object_get(doc, "simulated_device");
    *sim_section = sec && json_is_object(sec) ? json_incref(sec) : NULL;
    json_decref(doc);
    if (sec && !*sim_section)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "sim:%s: \"simulated_device\" is not "
                            "an object", e->path);
    return COPROC_OK;
}

/* A number or boolean field of the section, or `dflt`. */
static double section_num(const json_t *sec, const char *key, double dflt)
{
    const json_t *v = sec ? json_object_get(sec, key) : NULL;
    if (json_is_number(v))
        return json_number_value(v);
    if (json_is_boolean(v))
        return json_is_true(v);
    return dflt;
}

/* Make dev (already initialised on the executor) the simulated device e describes. */
static coproc_status become(coproc_runtime *rt, coproc__device *dev, const sim_entry *e,
                            coproc__profile *truth, const json_t *sec)
{
    coproc_device_info *in = &dev->info;
    int type = e->type;
    const json_t *ty = sec ? json_object_get(sec, "type") : NULL;
    if (type < 0 && json_is_string(ty) && (type = parse_type(json_string_value(ty))) < 0)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "sim:%s: simulated_device.type \"%s\" "
                            "is not cpu, gpu or accelerator", e->path, json_string_value(ty));
    if (type >= 0)
        in->type = (coproc_device_type)type;
    double mem = e->mem > 0 ? e->mem : section_num(sec, "global_mem_bytes", (double)in->global_mem_bytes);
    double unified = e->unified >= 0 ? e->unified
                                     : section_num(sec, "host_unified_memory", in->host_unified_memory);
    double fp64 = e->fp64 >= 0 ? e->fp64 : section_num(sec, "fp64", in->has_fp64);
    double cu = section_num(sec, "compute_units", in->compute_units);
    double noise = e->noise >= 0 ? e->noise : section_num(sec, "noise", 0.05);
    /* Each in its integer's range before it converts (NaN is in none): a
     * real out of range, 2^64 or 1e30 bytes, converts to nothing defined
     * (a device of 0 bytes, once). */
    const char *bad = !(mem >= 1 << 20 && mem < 0x1p64)  ? "global_mem_bytes"
                      : !(cu >= 1 && cu <= UINT_MAX)      ? "compute_units"
                      : !(noise >= 0 && noise <= 1)       ? "noise"
                      : !(unified == 0 || unified == 1)   ? "host_unified_memory"
                      : !(fp64 == 0 || fp64 == 1)         ? "fp64"
                                                          : NULL;
    if (bad)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "sim:%s: simulated_device has a bad "
                            "%s (global_mem_bytes: 1 MiB to 2^64 - 1 bytes; compute_units: "
                            "1 to %u; noise: 0 to 1; host_unified_memory, fp64: true, false, "
                            "1 or 0)", e->path, bad, UINT_MAX);
    if (fp64 && !in->has_fp64)
        coproc__log(rt, COPROC_LOG_WARN, "sim:%s: the executor has no fp64; the simulated "
                    "device has none either", e->path);

    char name[sizeof in->name];
    snprintf(name, sizeof name, "sim %.120s", truth->device_name);
    memcpy(in->name, name, sizeof in->name);
    snprintf(in->vendor, sizeof in->vendor, "coproc (simulated)");
    snprintf(in->platform, sizeof in->platform, "coproc simulated devices");
    in->global_mem_bytes = (uint64_t)mem;
    if (in->max_alloc_bytes > in->global_mem_bytes)
        in->max_alloc_bytes = in->global_mem_bytes;
    in->host_unified_memory = unified != 0;
    in->has_fp64 = fp64 && in->has_fp64;
    in->compute_units = (unsigned)cu;
    in->discovered_index = -1;
    in->same_hardware_as = -1;
    in->numa_node = -1;
    in->pci_bus_id[0] = in->nodeset[0] = in->cpuset[0] = '\0';

    /* The executor's fingerprint first: the program cache keys binaries by it. */
    char fp[sizeof dev->fingerprint];
    snprintf(fp, sizeof fp, "%.500s|sim|%.250s", dev->fingerprint, e->path);
    memcpy(dev->fingerprint, fp, sizeof fp);
    coproc__device_set_path(dev, in->type == COPROC_DEVICE_CPU);
    dev->budget_bytes = in->global_mem_bytes / 10 * 7;

    coproc__sim_state *st = calloc(1, sizeof *st);
    if (!st || !(dev->profile = malloc(sizeof *dev->profile))) {
        free(st);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    pthread_mutex_init(&st->lock, NULL);
    st->truth = truth;
    st->noise = noise;
    st->clock = rt->backend_state;
    st->seed = e->seed >= 0 ? (uint64_t)e->seed : (uint64_t)dev->index + 1;
    dev->backend = &coproc__backend_sim;
    dev->backend_state = st;

    /* What the runtime learns starts as the profile (as after a calibration)
     * or, with models=empty, with the bus figures only. */
    *dev->profile = *truth;
    snprintf(dev->profile->fingerprint, sizeof dev->profile->fingerprint, "%s", dev->fingerprint);
    if (e->empty_models)
        for (int k = 0; k < COPROC__OP_KIND_COUNT; k++)
            coproc__model_init(&dev->profile->ops[k], coproc__op_kind_features((coproc__op_kind)k));
    dev->profile_source = 1;
    return COPROC_OK;
}

static coproc_status open_one(coproc_runtime *rt, const coproc__found_device *exec,
                              const sim_entry *e)
{
    coproc__profile *truth = malloc(sizeof *truth);
    if (!truth)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    json_t *sec = NULL;
    coproc_status s = read_profile(rt, e, truth, &sec);
    if (s != COPROC_OK) {
        free(truth);
        return s;
    }
    coproc__device *dev = &rt->devices[rt->device_count];
    s = coproc__device_init(rt, dev, exec, rt->device_count);
    if (s == COPROC_OK)
        s = become(rt, dev, e, truth, sec);
    json_decref(sec);
    if (s != COPROC_OK) {
        if (dev->backend_state)
            coproc__sim_release_device(dev); /* frees truth */
        else {
            free(truth);
            coproc__device_release(dev);
        }
        return s;
    }
    rt->device_count++;
    return COPROC_OK;
}

coproc_status coproc__sim_open(coproc_runtime *rt, const char *spec)
{
    coproc__sim_clock *clk = calloc(1, sizeof *clk);
    if (!clk)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    pthread_mutex_init(&clk->lock, NULL);
    rt->backend_state = clk;

    sim_entry entries[SIM_MAX_DEVICES];
    int n = 0;
    const char *p = spec, *start;
    size_t len;
    while (coproc__selection_next(&p, &start, &len)) {
        if (n == SIM_MAX_DEVICES)
            return coproc__fail(rt, COPROC_UNSUPPORTED, "more than %d simulated devices",
                                SIM_MAX_DEVICES);
        coproc_status s = parse_entry(rt, start, len, &entries[n]);
        if (s != COPROC_OK)
            return s;
        n++;
    }
    coproc__found_device exec;
    coproc_status s = find_executor(rt, &exec);
    if (s != COPROC_OK)
        return s;
    if (!(rt->devices = calloc((size_t)n, sizeof *rt->devices)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < n && s == COPROC_OK; i++)
        s = open_one(rt, &exec, &entries[i]);
    if (s == COPROC_OK)
        coproc__log(rt, COPROC_LOG_INFO, "%d simulated device(s), kernels on %s", n,
                    exec.info.name);
    return s;
}

void coproc__sim_release_device(coproc__device *dev)
{
    coproc__sim_state *st = dev->backend_state;
    if (st) {
        pthread_mutex_destroy(&st->lock);
        free(st->truth);
        free(st);
    }
    dev->backend_state = NULL;
    coproc__device_release(dev);
}

void coproc__sim_close(coproc_runtime *rt)
{
    coproc__sim_clock *clk = rt->backend_state;
    if (clk) {
        pthread_mutex_destroy(&clk->lock);
        free(clk);
    }
    rt->backend_state = NULL;
}
