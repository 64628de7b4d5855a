/* profile.c - a device's calibration profile: JSON form, validation, the file
 * in the cache directory, and the transfer-time line (docs/profile.md). */
#include "cost/profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cache.h"
#include "core/runtime.h"

static const char *const kind_names[COPROC__OP_KIND_COUNT] = {
    "reduce", "select", "map", "gather", "scan", "group_by", "sort", "hash_join",
    "merge_join", "semi_join"};
static const int kind_features[COPROC__OP_KIND_COUNT] = {1, 2, 2, 2, 2, 2, 2, 2, 2, 2};

/* The four transfer fits, in the order and under the names of the document. */
static const char *const transfer_names[4] = {"h2d_pinned", "d2h_pinned", "h2d_pageable",
                                              "d2h_pageable"};

static coproc__transfer_fit *transfer_at(coproc__profile *p, int i)
{
    coproc__transfer_fit *f[4] = {&p->h2d_pinned, &p->d2h_pinned, &p->h2d_pageable,
                                  &p->d2h_pageable};
    return f[i];
}

const char *coproc__op_kind_name(coproc__op_kind k)
{
    return (unsigned)k < COPROC__OP_KIND_COUNT ? kind_names[k] : "unknown";
}

int coproc__op_kind_features(coproc__op_kind k)
{
    return (unsigned)k < COPROC__OP_KIND_COUNT ? kind_features[k] : 1;
}

void coproc__profile_init(coproc__profile *p, const coproc__device *dev)
{
    memset(p, 0, sizeof *p);
    if (dev) {
        snprintf(p->fingerprint, sizeof p->fingerprint, "%s", dev->fingerprint);
        snprintf(p->device_name, sizeof p->device_name, "%s", dev->info.name);
    }
    for (int k = 0; k < COPROC__OP_KIND_COUNT; k++)
        coproc__model_init(&p->ops[k], kind_features[k]);
}

/* ------------------------------------------------------------------ to JSON */

/* JSON has no NaN or infinity (jansson refuses them): unmeasured is 0. */
static json_t *real(double v)
{
    return json_real(isfinite(v) ? v : 0.0);
}

static json_t *transfer_json(const coproc__transfer_fit *f)
{
    json_t *points = json_array();
    int n = f->points < 0 ? 0 : f->points > COPROC__SWEEP_MAX ? COPROC__SWEEP_MAX : f->points;
    for (int i = 0; i < n; i++)
        json_array_append_new(points, json_pack("[oo]", real(f->bytes[i]), real(f->seconds[i])));
    return json_pack("{s:o, s:o, s:o}", "latency_s", real(f->latency_s), "bytes_per_s",
                     real(f->bytes_per_s), "points", points);
}

json_t *coproc__profile_to_json(const coproc__profile *p)
{
    json_t *transfer = json_object();
    for (int i = 0; i < 4; i++)
        json_object_set_new(transfer, transfer_names[i],
                            transfer_json(transfer_at((coproc__profile *)p, i)));
    json_t *ops = json_object();
    for (int k = 0; k < COPROC__OP_KIND_COUNT; k++)
        json_object_set_new(ops, kind_names[k], coproc__model_to_json(&p->ops[k]));
    /* json_pack keeps the key order given here (jansson >= 2.8 preserves it). */
    return json_pack(
        "{s:s, s:i, s:s, s:s, s:s, s:o, s:b, s:o, s:o, s:o, s:{s:o, s:o}, s:{s:o, s:o}, s:o, "
        "s:{s:o, s:o}, s:o}",
        "schema", COPROC__PROFILE_SCHEMA, "schema_version", COPROC__PROFILE_VERSION,
        "coproc_version", coproc_version_string(), "fingerprint", p->fingerprint, "device",
        p->device_name, "created_unix", real(p->created_unix), "full", p->full != 0,
        "calibration_seconds", real(p->calibration_seconds), "transfer", transfer,
        "both_directions_bytes_per_s", real(p->both_directions_bytes_per_s), "memory",
        "copy_bytes_per_s", real(p->mem_copy_bytes_per_s), "read_bytes_per_s",
        real(p->mem_read_bytes_per_s), "compute", "int_ops_per_s", real(p->int_ops_per_s),
        "float_ops_per_s", real(p->float_ops_per_s), "launch_latency_s",
        real(p->launch_latency_s), "build", "source_s", real(p->build_source_s), "cached_s",
        real(p->build_cached_s), "operators", ops);
}

/* ------------------------------------------------------------------ from JSON */

/* Validation state: the first problem found is kept in why. */
typedef struct reader {
    char *why;
    size_t why_size;
    int bad;
} reader;

static void reject(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reject(reader *r, const char *fmt, ...)
{
    if (r->bad++)
        return;
    if (!r->why || !r->why_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->why_size, fmt, ap);
    va_end(ap);
}

static const json_t *member(reader *r, const json_t *obj, const char *where, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        reject(r, "missing field \"%s%s\"", where, key);
    return v;
}

/* A finite number >= min (an integer is accepted where a real is expected). */
static double number(reader *r, const json_t *obj, const char *where, const char *key,
                     double min)
{
    const json_t *v = member(r, obj, where, key);
    if (!v)
        return 0;
    if (!json_is_number(v)) {
        reject(r, "field \"%s%s\" is not a number", where, key);
        return 0;
    }
    double d = json_number_value(v);
    if (!isfinite(d) || d < min) {
        reject(r, "field \"%s%s\" = %g is out of range (must be finite and >= %g)", where, key,
               d, min);
        return 0;
    }
    return d;
}

static const char *string(reader *r, const json_t *obj, const char *where, const char *key)
{
    const json_t *v = member(r, obj, where, key);
    if (v && !json_is_string(v)) {
        reject(r, "field \"%s%s\" is not a string", where, key);
        return NULL;
    }
    return v ? json_string_value(v) : NULL;
}

static const json_t *object(reader *r, const json_t *obj, const char *where, const char *key)
{
    const json_t *v = member(r, obj, where, key);
    if (v && !json_is_object(v)) {
        reject(r, "field \"%s%s\" is not an object", where, key);
        return NULL;
    }
    return v;
}

static void read_transfer(reader *r, const json_t *transfer, int i, coproc__transfer_fit *f)
{
    char where[64];
    snprintf(where, sizeof where, "transfer.%s.", transfer_names[i]);
    const json_t *t = object(r, transfer, "transfer.", transfer_names[i]);
    if (!t)
        return;
    f->latency_s = number(r, t, where, "latency_s", 0);
    f->bytes_per_s = number(r, t, where, "bytes_per_s", 0);
    if (!r->bad && !(f->bytes_per_s > 0))
        reject(r, "field \"%sbytes_per_s\" must be positive", where);
    const json_t *points = member(r, t, where, "points");
    if (!points)
        return;
    if (!json_is_array(points) || json_array_size(points) > COPROC__SWEEP_MAX) {
        reject(r, "field \"%spoints\" is not an array of at most %d points", where,
               COPROC__SWEEP_MAX);
        return;
    }
    f->points = (int)json_array_size(points);
    for (int j = 0; j < f->points; j++) {
        const json_t *pt = json_array_get(points, (size_t)j);
        const json_t *b = json_array_get(pt, 0), *s = json_array_get(pt, 1);
        if (!json_is_array(pt) || json_array_size(pt) != 2 || !json_is_number(b) ||
            !json_is_number(s) || !isfinite(json_number_value(b)) ||
            !isfinite(json_number_value(s)) || json_number_value(b) < 0 ||
            json_number_value(s) < 0) {
            reject(r, "field \"%spoints\"[%d] is not a pair [bytes, seconds] of finite "
                   "non-negative numbers", where, j);
            return;
        }
        f->bytes[j] = json_number_value(b);
        f->seconds[j] = json_number_value(s);
        if (j > 0 && !(f->bytes[j] > f->bytes[j - 1])) {
            reject(r, "field \"%spoints\" is not in increasing order of bytes", where);
            return;
        }
    }
}

int coproc__profile_from_json(coproc__profile *out, const json_t *doc,
                              const char *expected_fingerprint, char *why, size_t why_size)
{
    reader r = {why, why_size, 0};
    if (why && why_size)
        why[0] = '\0';
    if (!json_is_object(doc)) {
        reject(&r, "the document is not a JSON object");
        return -1;
    }
    /* Schema and version first: a document of another kind is named as such. */
    const char *schema = string(&r, doc, "", "schema");
    if (r.bad)
        return -1;
    if (strcmp(schema, COPROC__PROFILE_SCHEMA) != 0) {
        reject(&r, "schema is \"%s\", not \"%s\"", schema, COPROC__PROFILE_SCHEMA);
        return -1;
    }
    const json_t *version = member(&r, doc, "", "schema_version");
    if (r.bad)
        return -1;
    if (!json_is_integer(version) || json_integer_value(version) != COPROC__PROFILE_VERSION) {
        reject(&r, "schema_version is %s%" JSON_INTEGER_FORMAT ", this coproc reads %d",
               json_is_integer(version) ? "" : "not an integer: ",
               json_is_integer(version) ? json_integer_value(version) : 0,
               COPROC__PROFILE_VERSION);
        return -1;
    }
    const char *fingerprint = string(&r, doc, "", "fingerprint");
    if (r.bad)
        return -1;
    if (expected_fingerprint && strcmp(fingerprint, expected_fingerprint) != 0) {
        reject(&r, "it belongs to another device or driver or coproc version (fingerprint "
               "\"%s\", this device is \"%s\")", fingerprint, expected_fingerprint);
        return -1;
    }

    /* The profile struct is large (model rings): build it on the heap. */
    coproc__profile *p = malloc(sizeof *p);
    if (!p) {
        reject(&r, "out of host memory");
        return -1;
    }
    coproc__profile_init(p, NULL);
    if (strlen(fingerprint) >= sizeof p->fingerprint)
        reject(&r, "fingerprint is too long");
    else
        memcpy(p->fingerprint, fingerprint, strlen(fingerprint) + 1);
    string(&r, doc, "", "coproc_version");
    const char *device = string(&r, doc, "", "device");
    if (device)
        snprintf(p->device_name, sizeof p->device_name, "%s", device);
    p->created_unix = number(&r, doc, "", "created_unix", 0);
    const json_t *full = member(&r, doc, "", "full");
    if (full && !json_is_boolean(full))
        reject(&r, "field \"full\" is not a boolean");
    p->full = json_is_true(full);
    p->calibration_seconds = number(&r, doc, "", "calibration_seconds", 0);

    const json_t *transfer = object(&r, doc, "", "transfer");
    for (int i = 0; transfer && i < 4; i++)
        read_transfer(&r, transfer, i, transfer_at(p, i));
    p->both_directions_bytes_per_s = number(&r, doc, "", "both_directions_bytes_per_s", 0);
    const json_t *memory = object(&r, doc, "", "memory");
    if (memory) {
        p->mem_copy_bytes_per_s = number(&r, memory, "memory.", "copy_bytes_per_s", 0);
        p->mem_read_bytes_per_s = number(&r, memory, "memory.", "read_bytes_per_s", 0);
    }
    const json_t *compute = object(&r, doc, "", "compute");
    if (compute) {
        p->int_ops_per_s = number(&r, compute, "compute.", "int_ops_per_s", 0);
        p->float_ops_per_s = number(&r, compute, "compute.", "float_ops_per_s", 0);
    }
    p->launch_latency_s = number(&r, doc, "", "launch_latency_s", 0);
    const json_t *build = object(&r, doc, "", "build");
    if (build) {
        p->build_source_s = number(&r, build, "build.", "source_s", 0);
        p->build_cached_s = number(&r, build, "build.", "cached_s", 0);
    }
    const json_t *ops = object(&r, doc, "", "operators");
    for (int k = 0; ops && !r.bad && k < COPROC__OP_KIND_COUNT; k++) {
        const json_t *m = member(&r, ops, "operators.", kind_names[k]);
        if (m && coproc__model_from_json(&p->ops[k], kind_features[k], m) != 0)
            reject(&r, "field \"operators.%s\" is not a valid cost model", kind_names[k]);
        for (int c = 0; !r.bad && c <= p->ops[k].features; c++)
            if (!isfinite(p->ops[k].coef[c]))
                reject(&r, "field \"operators.%s\" has a non-finite coefficient",
                       kind_names[k]);
    }
    if (!r.bad)
        memcpy(out, p, sizeof *p);
    free(p);
    return r.bad ? -1 : 0;
}

/* ------------------------------------------------------------------ files */

int coproc__profile_path(const coproc_runtime *rt, const coproc__device *dev, char *out,
                         size_t size)
{
    if (!rt || !rt->cache_dir[0])
        return -1;
    char dir[1100];
    int n = snprintf(dir, sizeof dir, "%s/profiles", rt->cache_dir);
    if (n < 0 || (size_t)n >= sizeof dir || coproc__mkdirs(dir) != 0)
        return -1;
    uint64_t h = coproc__hash_str(COPROC__FNV_SEED, dev->fingerprint);
    n = snprintf(out, size, "%s/%016" PRIx64 ".json", dir, h);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

coproc_status coproc__profile_save(coproc_runtime *rt, const coproc__device *dev,
                                   const coproc__profile *p)
{
    char path[1200];
    if (coproc__profile_path(rt, dev, path, sizeof path) != 0)
        return coproc__fail(rt, COPROC_IO_ERROR, "no cache directory to save the profile of "
                            "device %d (%s) in", dev->index, dev->info.name);
    json_t *doc = coproc__profile_to_json(p);
    char *text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "profile of device %d: could not "
                            "make its JSON document", dev->index);
    size_t len = strlen(text);
    int rc = coproc__write_file_atomic(path, text, len);
    free(text);
    if (rc != 0)
        return coproc__fail(rt, COPROC_IO_ERROR, "could not write the profile %s", path);
    return COPROC_OK;
}

coproc_status coproc__profile_load(coproc_runtime *rt, const coproc__device *dev,
                                   coproc__profile *p)
{
    char path[1200];
    if (coproc__profile_path(rt, dev, path, sizeof path) != 0)
        return coproc__fail(rt, COPROC_IO_ERROR, "no cache directory to hold profiles");
    unsigned char *data = NULL;
    size_t len = 0;
    int rd = coproc__read_cache_file(rt, "profile", path, &data, &len);
    if (rd == -2)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "profile %s is not a regular file",
                            path);
    if (rd != 0)
        return coproc__fail(rt, COPROC_IO_ERROR, "no profile %s for device %d (%s)", path,
                            dev->index, dev->info.name);
    json_error_t jerr;
    json_t *doc = len ? json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(data);
    if (!doc)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "profile %s is not a whole JSON "
                            "document (%s%s, line %d)", path, len ? "" : "empty file",
                            len ? jerr.text : "", len ? jerr.line : 0);
    char why[1024];
    int rc = coproc__profile_from_json(p, doc, dev->fingerprint, why, sizeof why);
    json_decref(doc);
    if (rc != 0)
        return coproc__fail(rt, COPROC_CORRUPT_PROFILE, "profile %s rejected: %s", path, why);
    return COPROC_OK;
}

double coproc__profile_transfer_time(const coproc__profile *p, int to_device, int pinned,
                                     double bytes)
{
    const coproc__transfer_fit *f = to_device ? (pinned ? &p->h2d_pinned : &p->h2d_pageable)
                                              : (pinned ? &p->d2h_pinned : &p->d2h_pageable);
    if (!(bytes > 0))
        return 0; /* nothing to move costs nothing */
    if (!(f->bytes_per_s > 0))
        return -1; /* not calibrated */
    int n = f->points < COPROC__SWEEP_MAX ? f->points : COPROC__SWEEP_MAX;
    if (n < 2 || bytes < f->bytes[0])
        return f->latency_s + bytes / f->bytes_per_s;
    /* Inside the sweep the measured points win over the line: where caches
     * bend the curve (CPU devices) no line fits every size. Interpolate in
     * log-log space, which follows both a latency floor and a bandwidth slope. */
    for (int i = 0; i + 1 < n; i++) {
        double x0 = f->bytes[i], x1 = f->bytes[i + 1], t0 = f->seconds[i], t1 = f->seconds[i + 1];
        if (bytes > x1)
            continue;
        if (!(x0 > 0) || !(x1 > x0) || !(t0 > 0) || !(t1 > 0))
            break; /* no log-log line (a point at 0 bytes: log 0): the fitted line */
        double u = log(bytes / x0) / log(x1 / x0);
        return exp(log(t0) + u * log(t1 / t0));
    }
    /* Beyond it: the last point plus the rest at the bandwidth of the last
     * segment (the large-transfer rate), else (that segment falls: noisy
     * medians) at the fitted bandwidth, so a larger transfer never costs
     * less than the last point. */
    double x0 = f->bytes[n - 2], x1 = f->bytes[n - 1], t0 = f->seconds[n - 2],
           t1 = f->seconds[n - 1];
    if (!(bytes > x1) || !(x1 > x0) || !(t1 > 0))
        return f->latency_s + bytes / f->bytes_per_s;
    if (!(t1 > t0))
        return t1 + (bytes - x1) / f->bytes_per_s;
    return t1 + (bytes - x1) * (t1 - t0) / (x1 - x0);
}

double coproc__profile_transfer_now(const coproc__profile *p, int to_device, int pinned,
                                    double bytes)
{
    double t = coproc__profile_transfer_time(p, to_device, pinned, bytes);
    return t > 0 ? t * coproc__drift_factor(&p->drift[to_device != 0][pinned != 0]) : t;
}

void coproc__profile_transfer_observe(coproc__profile *p, int to_device, int pinned,
                                      double bytes, double seconds)
{
    if (!(bytes >= COPROC__DRIFT_MIN_BYTES))
        return;
    coproc__drift_observe(&p->drift[to_device != 0][pinned != 0], seconds,
                          coproc__profile_transfer_time(p, to_device, pinned, bytes));
}
