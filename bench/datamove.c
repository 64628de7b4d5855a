/* datamove.c - coproc-datamove: the data-movement figures of issue 7, each a
 * ratio measured in one run on one device:
 *  1. host->device bandwidth: pageable memory through coproc's pinned staging
 *     (coproc_column_write) vs a pinned source (mapped CL_MEM_ALLOC_HOST_PTR buffer)
 *     vs a raw pageable clEnqueueWriteBuffer;
 *  2. a SUM over host-resident int32 data larger than the device budget (so it
 *     streams, copying chunk k+1 while reducing chunk k) vs the pinned H2D
 *     bandwidth and vs copy-then-compute measured in the same run;
 *  3. a reduction and a sort over data 1.5x the budget vs the same operators
 *     over data that fits (rows/s), with the results checked;
 *  4. a repeated selection over the same host columns: bytes moved the first
 *     and the second time, and with zero-copy on a host-unified device.
 * Every result is checked against a C loop; a wrong or missing result exits 70.
 * --json prints one versioned JSON document on stdout (the text goes to stderr). */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include <jansson.h>

#include "coproc.h"
#include "coproc/inspect.h"
#include "coproc/opencl.h"

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

/* ---------------------------------------------------------------- options, output */

typedef struct options {
    const char *device;  /* NULL: all; else an index or kinds, as coproc_options.devices */
    uint64_t size;       /* 0: by device type */
    uint64_t budget;     /* part 3's budget; 0: size / 1.5 */
    int quick, json, reps;
} options;

/* One device's figures and checks. */
typedef struct report {
    FILE *out;           /* text lines */
    char dev_name[160];
    json_t *figures, *checks, *extra;
    int failures;
} report;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "name: value unit (r x of ref[; r2 x of ref2]) [target ...]"; ref NULL: no ratio. */
static void figure(report *r, const char *name, double value, const char *unit,
                   const char *ref, double ref_value, const char *ref2, double ref2_value,
                   double target)
{
    json_t *f = json_object(), *ratios = json_object();
    json_object_set_new(f, "name", json_string(name));
    json_object_set_new(f, "value", json_real(value));
    json_object_set_new(f, "unit", json_string(unit));
    fprintf(r->out, "[%s] %s: %.4g %s", r->dev_name, name, value, unit);
    const char *refs[2] = {ref, ref2};
    double vals[2] = {ref_value, ref2_value};
    int opened = 0;
    double first_ratio = -1;
    for (int i = 0; i < 2; i++) {
        if (!refs[i])
            continue;
        double ratio = vals[i] > 0 ? value / vals[i] : 0;
        if (i == 0)
            first_ratio = ratio;
        fprintf(r->out, "%s%.3f x of %s", opened ? "; " : " (", ratio, refs[i]);
        opened = 1;
        json_object_set_new(ratios, refs[i], json_real(ratio));
    }
    if (opened)
        fprintf(r->out, ")");
    json_object_set_new(f, "ratios", ratios);
    if (target > 0 && ref) {
        fprintf(r->out, "  [issue target on the H100: >= %.2f x of %s: %s here]", target, ref,
                first_ratio >= target ? "met" : "not met");
        json_t *t = json_object();
        json_object_set_new(t, "of", json_string(ref));
        json_object_set_new(t, "min_ratio", json_real(target));
        json_object_set_new(t, "met", json_boolean(first_ratio >= target));
        json_object_set_new(f, "target", t);
    }
    fputc('\n', r->out);
    json_array_append_new(r->figures, f);
}

static void check(report *r, const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void check(report *r, const char *name, int ok, const char *fmt, ...)
{
    char detail[512] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string(name));
    json_object_set_new(c, "ok", json_boolean(ok));
    json_object_set_new(c, "detail", json_string(detail));
    json_array_append_new(r->checks, c);
    if (!ok) {
        r->failures++;
        fprintf(r->out, "[%s] CHECK FAILED %s: %s\n", r->dev_name, name, detail);
    }
}

/* A failed library call: recorded as a failed check; returns 0. */
static int call_ok(report *r, coproc_runtime *rt, const char *what, coproc_status s)
{
    if (s == COPROC_OK)
        return 1;
    check(r, what, 0, "%s: %s", coproc_status_name(s), coproc_errmsg(rt));
    return 0;
}

static int cl_ok(report *r, const char *what, cl_int err)
{
    if (err == CL_SUCCESS)
        return 1;
    check(r, what, 0, "OpenCL error %d", (int)err);
    return 0;
}

/* ---------------------------------------------------------------- data */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t mix(uint64_t x)
{
    uint64_t s = x;
    return splitmix(&s);
}

static void fill_i32(int32_t *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int32_t)(uint32_t)splitmix(&seed);
}

static void fill_i64(int64_t *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int64_t)(splitmix(&seed) >> 22) - ((int64_t)1 << 41);
}

/* SUM as coproc computes it: into 64 bits, wrapping. */
static int64_t sum_rows(const void *v, coproc_type t, size_t n)
{
    uint64_t s = 0;
    if (t == COPROC_INT32)
        for (size_t i = 0; i < n; i++)
            s += (uint64_t)(int64_t)((const int32_t *)v)[i];
    else
        for (size_t i = 0; i < n; i++)
            s += (uint64_t)((const int64_t *)v)[i];
    return (int64_t)s;
}

static int64_t key_at(const void *v, coproc_type t, size_t i)
{
    return t == COPROC_INT32 ? ((const int32_t *)v)[i] : ((const int64_t *)v)[i];
}

/* An order-independent checksum of a multiset of keys. */
static uint64_t multiset_sum(const void *v, coproc_type t, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += mix((uint64_t)key_at(v, t, i));
    return s;
}

/* ---------------------------------------------------------------- runtimes */

static coproc_status open_one(int discovered, uint64_t budget, int disable_zero_copy,
                              coproc_runtime **rt)
{
    char sel[16];
    snprintf(sel, sizeof sel, "%d", discovered);
    coproc_options o;
    coproc_options_init(&o);
    o.devices = sel;
    o.calibration = COPROC_CALIBRATION_OFF; /* placement is forced; models are not needed */
    o.device_budget_bytes = budget;
    o.disable_zero_copy = disable_zero_copy;
    o.policy = COPROC_POLICY_FIXED;
    o.fixed_device = 0;
    *rt = NULL;
    return coproc_open(&o, rt);
}

static coproc_device_stats dstats(coproc_runtime *rt)
{
    coproc_device_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    coproc_device_stats_get(rt, 0, &s);
    return s;
}

/* Submit op on device 0 and wait; *seconds: wall time from submit to result. */
static coproc_status run_op(coproc_runtime *rt, coproc_op *op, coproc_result *res, double *seconds)
{
    op->device = 0;
    coproc_task *t = NULL;
    double t0 = now_s();
    coproc_status s = coproc_submit(rt, op, &t);
    if (s == COPROC_OK)
        s = coproc_wait(t, res);
    if (seconds)
        *seconds = now_s() - t0;
    return s;
}

/* Build the kernels a part uses, on tiny data, so that no timing includes it. */
static void warm_up(coproc_runtime *rt, int sort)
{
    int32_t v[4096];
    fill_i32(v, 4096, 7);
    coproc_column *c = NULL;
    if (coproc_column_wrap(rt, COPROC_INT32, v, 4096, &c) != COPROC_OK)
        return;
    coproc_op op;
    coproc_result r;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = c;
    if (run_op(rt, &op, &r, NULL) == COPROC_OK)
        coproc_result_free(&r);
    coproc_op_init(&op, COPROC_OP_SELECT);
    op.filter.first = (coproc_predicate){.col = c, .cmp = COPROC_CMP_GT, .a.i64 = 0};
    if (run_op(rt, &op, &r, NULL) == COPROC_OK)
        coproc_result_free(&r);
    if (sort) {
        coproc_op_init(&op, COPROC_OP_SORT);
        op.a = c;
        if (run_op(rt, &op, &r, NULL) == COPROC_OK)
            coproc_result_free(&r);
    }
    coproc_column_free(c);
}

static double gbs(uint64_t bytes, double s) { return s > 0 ? (double)bytes / s / 1e9 : 0; }

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t round_down(uint64_t x, uint64_t to) { return x / to * to; }

/* ---------------------------------------------------------------- 1. H2D bandwidth */

/* Returns the pinned bandwidth (GB/s), 0 on failure. */
static double part_h2d(report *r, int discovered, uint64_t bytes, int reps)
{
    coproc_runtime *rt = NULL;
    if (!call_ok(r, rt, "h2d: coproc_open", open_one(discovered, 0, 1, &rt))) {
        coproc_close(rt);
        return 0;
    }
    coproc_device_info info;
    coproc_device_info_get(rt, 0, &info);
    cl_context ctx;
    cl_command_queue q;
    coproc_device_opencl(rt, 0, &ctx, NULL, &q);
    cl_int err;
    double pinned = 0;
    char *pageable = malloc(bytes), *back = malloc(bytes);
    coproc_column *dcol = NULL; /* the destination: bytes / 4 int32 rows */
    coproc_column_alloc(rt, 0, COPROC_INT32, bytes / 4, &dcol);
    cl_mem dst = coproc_column_opencl(dcol);
    cl_mem pin = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    void *pin_ptr = pin ? clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                                             &err)
                        : NULL;
    if (!pageable || !back || !dst || !pin || !pin_ptr) {
        check(r, "h2d: setup", 0, "could not allocate %" PRIu64 " bytes (host, device or pinned)",
              bytes);
        goto out;
    }
    fill_i32((int32_t *)pageable, bytes / 4, 1);
    memcpy(pin_ptr, pageable, bytes);

    /* method 0: coproc_column_write staged; 1: pinned source; 2: raw pageable */
    double best[3] = {1e30, 1e30, 1e30};
    for (int rep = -1; rep < reps; rep++) /* rep -1 warms up (page faults, first use) */
        for (int m = 0; m < 3; m++) {
            double t0 = now_s();
            if (m == 0) {
                if (!call_ok(r, rt, "h2d: coproc_column_write (staged)",
                             coproc_column_write(dcol, 0, pageable, bytes / 4, 0)))
                    goto out;
            } else if (!cl_ok(r, "h2d: clEnqueueWriteBuffer",
                              clEnqueueWriteBuffer(q, dst, CL_TRUE, 0, bytes,
                                                   m == 1 ? pin_ptr : pageable, 0, NULL, NULL)))
                goto out;
            double t = now_s() - t0;
            if (rep >= 0 && t < best[m])
                best[m] = t;
        }
    /* The staged path must deliver the bytes unchanged. */
    memset(back, 0, bytes);
    if (call_ok(r, rt, "h2d: coproc_column_write (staged)",
                coproc_column_write(dcol, 0, pageable, bytes / 4, 0)) &&
        cl_ok(r, "h2d: clEnqueueReadBuffer",
              clEnqueueReadBuffer(q, dst, CL_TRUE, 0, bytes, back, 0, NULL, NULL)))
        check(r, "h2d_staged_bytes_equal", memcmp(back, pageable, bytes) == 0,
              "%" PRIu64 " bytes through the staging buffers", bytes);
    pinned = gbs(bytes, best[1]);
    double staged = gbs(bytes, best[0]), raw = gbs(bytes, best[2]);
    figure(r, "h2d_pinned", pinned, "GB/s", NULL, 0, NULL, 0, 0);
    figure(r, "h2d_pageable_raw", raw, "GB/s", "h2d_pinned", pinned, NULL, 0, 0);
    figure(r, "h2d_pageable_staged", staged, "GB/s", "h2d_pinned", pinned, "h2d_pageable_raw", raw,
           0.8);
    if (info.host_unified_memory)
        fprintf(r->out, "[%s]   (host-unified device with zero-copy off: staging is a second "
                "memcpy here, measured as a GPU would run it)\n", r->dev_name);
out:
    if (pin_ptr)
        clEnqueueUnmapMemObject(q, pin, pin_ptr, 0, NULL, NULL);
    clFinish(q);
    if (pin)
        clReleaseMemObject(pin);
    coproc_column_free(dcol);
    free(pageable);
    free(back);
    coproc_close(rt);
    return pinned;
}

/* ---------------------------------------------------------------- 2. streamed reduce */

static void part_stream(report *r, int discovered, uint64_t bytes, int reps, double pinned_gbs)
{
    uint64_t budget = bytes / 8;
    size_t n = bytes / 4;
    coproc_runtime *rt = NULL;
    coproc_column *pinned_col = NULL, *pageable_col = NULL, *dcol = NULL;
    int32_t *pageable = NULL;
    if (!call_ok(r, rt, "stream: coproc_open", open_one(discovered, budget, 1, &rt)))
        goto out;
    if (!call_ok(r, rt, "stream: coproc_column_host_alloc",
                 coproc_column_host_alloc(rt, COPROC_INT32, n, &pinned_col)))
        goto out;
    int32_t *pv = coproc_column_host_data(pinned_col);
    fill_i32(pv, n, 2);
    pageable = malloc(bytes);
    if (!pageable) {
        check(r, "stream: malloc", 0, "%" PRIu64 " bytes", bytes);
        goto out;
    }
    memcpy(pageable, pv, bytes);
    int64_t want = sum_rows(pv, COPROC_INT32, n);
    if (!call_ok(r, rt, "stream: coproc_column_wrap",
                 coproc_column_wrap(rt, COPROC_INT32, pageable, n, &pageable_col)) ||
        !call_ok(r, rt, "stream: coproc_column_alloc",
                 coproc_column_alloc(rt, 0, COPROC_INT32, n, &dcol)))
        goto out;
    warm_up(rt, 0);
    coproc_scalar sc;
    coproc_column_write(dcol, 0, pv, 1024, COPROC_WRITE_PINNED_SOURCE);
    coproc_reduce(rt, COPROC_REDUCE_SUM, dcol, &sc); /* builds the device-column path */

    const coproc_column *cols[2] = {pinned_col, pageable_col};
    const void *srcs[2] = {pv, pageable};
    const char *names[2] = {"pinned", "pageable"};
    double stream_best[2] = {1e30, 1e30}, serial_best[2] = {1e30, 1e30};
    int streamed[2] = {1, 1};
    for (int rep = -1; rep < reps; rep++) /* rep -1: untimed, first use of the buffers */
        for (int k = 0; k < 2; k++) {
            coproc_op op;
            coproc_result res;
            double t;
            coproc_op_init(&op, COPROC_OP_REDUCE);
            op.a = cols[k];
            op.reduce = COPROC_REDUCE_SUM;
            char what[64];
            snprintf(what, sizeof what, "stream_reduce_%s", names[k]);
            if (!call_ok(r, rt, what, run_op(rt, &op, &res, &t)))
                goto out;
            if (res.scalar.v.i64 != want) {
                check(r, what, 0, "sum %" PRId64 ", C loop %" PRId64, res.scalar.v.i64, want);
                goto out;
            }
            streamed[k] &= res.streamed;
            if (rep >= 0 && t < stream_best[k])
                stream_best[k] = t;
            /* serial: the whole input onto the device, then the reduction */
            snprintf(what, sizeof what, "serial_copy_reduce_%s", names[k]);
            double t0 = now_s();
            if (!call_ok(r, rt, what,
                         coproc_column_write(dcol, 0, srcs[k], n,
                                             k == 0 ? COPROC_WRITE_PINNED_SOURCE : 0)) ||
                !call_ok(r, rt, what, coproc_reduce(rt, COPROC_REDUCE_SUM, dcol, &sc)))
                goto out;
            t = now_s() - t0;
            if (sc.v.i64 != want) {
                check(r, what, 0, "sum %" PRId64 ", C loop %" PRId64, sc.v.i64, want);
                goto out;
            }
            if (rep >= 0 && t < serial_best[k])
                serial_best[k] = t;
        }
    check(r, "stream_reduce_sum", 1, "%zu rows, sum %" PRId64 " equals the C loop", n, want);
    check(r, "stream_reduce_streamed", streamed[0] && streamed[1],
          "input %" PRIu64 " bytes over a budget of %" PRIu64 ": result.streamed %d/%d", bytes,
          dstats(rt).budget_bytes, streamed[0], streamed[1]);
    for (int k = 0; k < 2; k++) {
        char sname[64], rname[64];
        snprintf(rname, sizeof rname, "serial_copy_reduce_%s", names[k]);
        snprintf(sname, sizeof sname, "stream_reduce_%s", names[k]);
        double serial = gbs(bytes, serial_best[k]);
        figure(r, rname, serial, "GB/s", "h2d_pinned", pinned_gbs, NULL, 0, 0);
        figure(r, sname, gbs(bytes, stream_best[k]), "GB/s", "h2d_pinned", pinned_gbs, rname,
               serial, 0.9);
    }
out:
    coproc_column_free(pinned_col);
    coproc_column_free(pageable_col);
    coproc_column_free(dcol);
    free(pageable);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- 3. over the budget */

typedef struct run_stats {
    double best_s;
    int streamed;
    int ok;
} run_stats;

/* Reduce (sort == 0) or sort n rows at v as a fresh host column (so each run
 * copies it: nothing is resident), reps times after `warm` untimed runs (the
 * first runs at a size allocate fresh device buffers); every result checked. */
static run_stats reduce_or_sort(report *r, coproc_runtime *rt, const char *what, coproc_type t,
                                const void *v, size_t n, int sort, int warm, int reps,
                                int64_t want_sum, uint64_t want_set)
{
    run_stats st = {1e30, 1, 0};
    for (int rep = -warm; rep < reps; rep++) {
        coproc_column *c = NULL;
        if (!call_ok(r, rt, what, coproc_column_wrap(rt, t, v, n, &c)))
            return st;
        coproc_op op;
        coproc_result res;
        double secs;
        coproc_op_init(&op, sort ? COPROC_OP_SORT : COPROC_OP_REDUCE);
        op.a = c;
        coproc_status s = run_op(rt, &op, &res, &secs);
        coproc_column_free(c);
        if (!call_ok(r, rt, what, s))
            return st;
        int good = 1;
        if (!sort) {
            if (res.scalar.v.i64 != want_sum) {
                check(r, what, 0, "sum %" PRId64 ", C loop %" PRId64, res.scalar.v.i64, want_sum);
                good = 0;
            }
        } else {
            const void *o = coproc_column_host_data(res.column);
            size_t len = coproc_column_length(res.column);
            if (len != n || (n && !o)) {
                check(r, what, 0, "%zu rows back of %zu", len, n);
                good = 0;
            } else {
                size_t bad = 0;
                for (size_t i = 1; i < n && !bad; i++)
                    if (key_at(o, t, i - 1) > key_at(o, t, i))
                        bad = i;
                uint64_t got = multiset_sum(o, t, n);
                if (bad || got != want_set) {
                    check(r, what, 0, "%s", bad ? "not sorted" : "checksum differs: rows lost "
                                                                 "or changed");
                    good = 0;
                }
            }
        }
        st.streamed &= res.streamed;
        coproc_result_free(&res);
        if (!good)
            return st;
        if (rep >= 0 && secs < st.best_s)
            st.best_s = secs;
    }
    st.ok = 1;
    return st;
}

static void part_over_budget(report *r, int discovered, uint64_t bytes, uint64_t budget,
                             int reps_small, int reps_big, int warm_big)
{
    coproc_type t = bytes / 4 <= UINT32_MAX ? COPROC_INT32 : COPROC_INT64;
    size_t es = coproc_type_size(t), n = bytes / es;
    size_t m = (size_t)(budget / 4 / es); /* fits: a sort needs about 3.5x its input */
    coproc_runtime *rt = NULL;
    void *v = malloc(n * es);
    if (!v) {
        check(r, "over_budget: malloc", 0, "%" PRIu64 " bytes", bytes);
        return;
    }
    if (!call_ok(r, rt, "over_budget: coproc_open", open_one(discovered, budget, 1, &rt)))
        goto out;
    if (t == COPROC_INT32)
        fill_i32(v, n, 3);
    else
        fill_i64(v, n, 3);
    json_object_set_new(r->extra, "over_budget_type", json_string(coproc_type_name(t)));
    json_object_set_new(r->extra, "over_budget_rows", json_integer((json_int_t)n));
    json_object_set_new(r->extra, "in_memory_rows", json_integer((json_int_t)m));
    json_object_set_new(r->extra, "over_budget_budget_bytes",
                        json_integer((json_int_t)dstats(rt).budget_bytes));
    fprintf(r->out, "[%s] over budget: %zu %s rows (%.1f MiB) through a budget of %.1f MiB; "
            "in-memory case %zu rows\n", r->dev_name, n, coproc_type_name(t),
            (double)bytes / MiB, (double)budget / MiB, m);
    warm_up(rt, 1);
    int64_t big_sum = sum_rows(v, t, n), small_sum = sum_rows(v, t, m);
    uint64_t big_set = multiset_sum(v, t, n), small_set = multiset_sum(v, t, m);
    static const char *opname[2] = {"reduce", "sort"};
    for (int sort = 0; sort < 2; sort++) {
        char nin[64], nover[64];
        snprintf(nin, sizeof nin, "in_memory_%s", opname[sort]);
        snprintf(nover, sizeof nover, "over_budget_%s", opname[sort]);
        run_stats in = reduce_or_sort(r, rt, nin, t, v, m, sort, 1, reps_small, small_sum,
                                      small_set);
        run_stats over = reduce_or_sort(r, rt, nover, t, v, n, sort, warm_big, reps_big, big_sum,
                                        big_set);
        if (in.ok)
            check(r, nin, !in.streamed, "%zu rows, result equals the C reference%s", m,
                  in.streamed ? ", but it streamed: the in-memory case is not in memory" : "");
        if (over.ok)
            check(r, nover, over.streamed, "%zu rows, %s%s", n,
                  sort ? "sorted, checksum equal" : "sum equals the C loop",
                  over.streamed ? "" : ", but result.streamed is 0: the budget did not apply");
        if (!in.ok || !over.ok)
            continue;
        double rin = (double)m / in.best_s, rover = (double)n / over.best_s;
        figure(r, nin, rin, "rows/s", NULL, 0, NULL, 0, 0);
        figure(r, nover, rover, "rows/s", nin, rin, NULL, 0, 0);
    }
out:
    free(v);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- 4. repeated query */

/* The same SELECT (a > 0 AND b < 0) twice; bytes moved each time. */
static void repeat_select(report *r, int discovered, int zero_copy, const int32_t *a,
                          const int32_t *b, size_t n)
{
    const char *tag = zero_copy ? "zero_copy" : "copying";
    uint64_t input = 2 * (uint64_t)n * 4;
    coproc_runtime *rt = NULL;
    coproc_column *ca = NULL, *cb = NULL;
    char what[96];
    snprintf(what, sizeof what, "repeat_select_%s", tag);
    if (!call_ok(r, rt, what, open_one(discovered, 0, !zero_copy, &rt)) ||
        !call_ok(r, rt, what, coproc_column_wrap(rt, COPROC_INT32, a, n, &ca)) ||
        !call_ok(r, rt, what, coproc_column_wrap(rt, COPROC_INT32, b, n, &cb)))
        goto out;
    warm_up(rt, 0);
    uint64_t want = 0;
    for (size_t i = 0; i < n; i++)
        want += a[i] > 0 && b[i] < 0;
    coproc_device_stats s[3];
    s[0] = dstats(rt);
    for (int k = 0; k < 2; k++) {
        coproc_op op;
        coproc_result res;
        coproc_op_init(&op, COPROC_OP_SELECT);
        op.filter.first = (coproc_predicate){.col = ca, .cmp = COPROC_CMP_GT, .a.i64 = 0};
        op.filter.logic = COPROC_LOGIC_AND;
        op.filter.second = (coproc_predicate){.col = cb, .cmp = COPROC_CMP_LT, .a.i64 = 0};
        if (!call_ok(r, rt, what, run_op(rt, &op, &res, NULL)))
            goto out;
        const uint32_t *pos = coproc_column_host_data(res.column);
        size_t bad = res.count != want || (want && !pos);
        for (size_t i = 0, j = 0; i < n && !bad; i++)
            if (a[i] > 0 && b[i] < 0 && pos[j++] != i)
                bad = 1;
        coproc_result_free(&res);
        if (bad) {
            check(r, what, 0, "run %d: %" PRIu64 " matches, C loop %" PRIu64 " (or positions "
                  "differ)", k + 1, res.count, want);
            goto out;
        }
        s[k + 1] = dstats(rt);
    }
    uint64_t h2d1 = s[1].bytes_h2d - s[0].bytes_h2d, h2d2 = s[2].bytes_h2d - s[1].bytes_h2d;
    uint64_t d2h1 = s[1].bytes_d2h - s[0].bytes_d2h, d2h2 = s[2].bytes_d2h - s[1].bytes_d2h;
    char name[96];
    if (!zero_copy) {
        figure(r, "repeat_select_first_h2d", (double)h2d1, "bytes", "input_bytes", (double)input,
               NULL, 0, 0);
        figure(r, "repeat_select_second_h2d", (double)h2d2, "bytes", "input_bytes",
               (double)input, NULL, 0, 0);
        figure(r, "repeat_select_first_d2h", (double)d2h1, "bytes", "input_bytes", (double)input,
               NULL, 0, 0);
        figure(r, "repeat_select_second_d2h", (double)d2h2, "bytes", "input_bytes",
               (double)input, NULL, 0, 0);
        check(r, "repeat_select_first_moves_input", h2d1 >= input,
              "%" PRIu64 " of %" PRIu64 " input bytes copied the first time", h2d1, input);
        check(r, "repeat_select_second_moves_nothing", h2d2 == 0,
              "%" PRIu64 " bytes copied to the device the second time (cache hits %" PRIu64 ")",
              h2d2, s[2].cache_hits - s[1].cache_hits);
    } else {
        snprintf(name, sizeof name, "zero_copy_select_bytes_moved");
        figure(r, name, (double)(h2d1 + h2d2 + d2h1 + d2h2), "bytes", "input_bytes",
               (double)input, NULL, 0, 0);
        check(r, "zero_copy_moves_nothing", h2d1 + h2d2 + d2h1 + d2h2 == 0,
              "h2d %" PRIu64 " + %" PRIu64 ", d2h %" PRIu64 " + %" PRIu64 " bytes over two runs",
              h2d1, h2d2, d2h1, d2h2);
    }
out:
    coproc_column_free(ca);
    coproc_column_free(cb);
    coproc_close(rt);
}

static void part_repeat(report *r, int discovered, int host_unified, uint64_t bytes)
{
    size_t n = bytes / 8; /* two int32 columns */
    int32_t *a = malloc(n * 4), *b = malloc(n * 4);
    if (!a || !b) {
        check(r, "repeat: malloc", 0, "%" PRIu64 " bytes", bytes);
    } else {
        fill_i32(a, n, 4);
        fill_i32(b, n, 5);
        repeat_select(r, discovered, 0, a, b, n);
        if (host_unified)
            repeat_select(r, discovered, 1, a, b, n);
        else
            fprintf(r->out, "[%s] zero_copy_select_bytes_moved: n/a (not a host-unified "
                    "device)\n", r->dev_name);
    }
    free(a);
    free(b);
}

/* ---------------------------------------------------------------- main */

static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    uint64_t mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1 << 10; end++; break;
    case 'm': case 'M': mul = MiB; end++; break;
    case 'g': case 'G': mul = GiB; end++; break;
    case 't': case 'T': mul = GiB << 10; end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (uint64_t)(v * (double)mul);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: coproc-datamove [--device N|cpu|gpu] [--size BYTES] [--budget BYTES] [--quick]\n"
            "                       [--reps R] [--json]\n"
            "  --size    data of the over-budget part (3); parts 1, 2 and 4 use up to 1, 2 and 1\n"
            "            GiB of it (default 256M on GPUs, 64M on CPUs; --quick: a quarter)\n"
            "  --budget  device budget of part 3 (default: size / 1.5); part 2 uses size / 8\n"
            "  BYTES takes K, M, G, T suffixes (binary). Exit 70 when a result is wrong.\n");
}

int main(int argc, char **argv)
{
    options o = {.reps = 0};
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'}, {"size", required_argument, NULL, 's'},
        {"budget", required_argument, NULL, 'b'}, {"quick", no_argument, NULL, 'q'},
        {"reps", required_argument, NULL, 'r'},   {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "d:s:b:qr:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': o.device = optarg; break;
        case 's':
            if (parse_bytes(optarg, &o.size) || o.size < 64 * 1024) {
                fprintf(stderr, "coproc-datamove: --size must be at least 64K\n");
                return EX_USAGE;
            }
            break;
        case 'b':
            if (parse_bytes(optarg, &o.budget) || o.budget < 64 * 1024) {
                fprintf(stderr, "coproc-datamove: --budget must be at least 64K\n");
                return EX_USAGE;
            }
            break;
        case 'q': o.quick = 1; break;
        case 'r': o.reps = atoi(optarg); break;
        case 'j': o.json = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (optind < argc || o.reps < 0) {
        usage(stderr);
        return EX_USAGE;
    }
    if (o.budget && o.size && o.budget >= o.size)
        fprintf(stderr, "coproc-datamove: warning: --budget >= --size: part 3 will not exceed "
                        "the budget\n");
    int reps = o.reps ? o.reps : o.quick ? 1 : 5;
    int reps_big = o.reps ? o.reps : o.quick ? 1 : 2;
    FILE *out = o.json ? stderr : stdout;

    /* This program sets each runtime's budget and device itself. */
    if (getenv("COPROC_BUDGET")) {
        fprintf(stderr, "coproc-datamove: ignoring COPROC_BUDGET (budgets are part of the "
                        "measurement)\n");
        unsetenv("COPROC_BUDGET");
    }
    coproc_options lo;
    coproc_options_init(&lo);
    lo.devices = o.device;
    lo.calibration = COPROC_CALIBRATION_OFF;
    coproc_runtime *all = NULL;
    coproc_status s = coproc_open(&lo, &all);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-datamove: %s: %s\n", coproc_status_name(s), coproc_errmsg(all));
        coproc_close(all);
        return s == COPROC_NO_DEVICE || s == COPROC_NO_PLATFORM ? EX_UNAVAILABLE : EX_SOFTWARE;
    }
    int ndev = coproc_device_count(all);
    coproc_device_info *infos = calloc((size_t)ndev, sizeof *infos);
    for (int i = 0; i < ndev; i++)
        coproc_device_info_get(all, i, &infos[i]);
    coproc_close(all);
    unsetenv("COPROC_DEVICES"); /* it selected the devices above; each part opens one */

    char date[32], command[1024] = "";
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    for (int i = 0; i < argc; i++) {
        strncat(command, i ? " " : "", sizeof command - strlen(command) - 1);
        strncat(command, argv[i], sizeof command - strlen(command) - 1);
    }
    json_t *jdevs = json_array();
    int failures = 0;
    double t_start = now_s();
    for (int i = 0; i < ndev; i++) {
        const coproc_device_info *info = &infos[i];
        report r = {.out = out, .figures = json_array(), .checks = json_array(),
                    .extra = json_object()};
        snprintf(r.dev_name, sizeof r.dev_name, "%d %s", info->discovered_index, info->name);
        int gpu = info->type == COPROC_DEVICE_GPU;
        uint64_t size = o.size ? o.size : (gpu ? 256 * MiB : 64 * MiB) / (o.quick ? 4 : 1);
        size = round_down(size, 4096);
        uint64_t budget = o.budget ? o.budget : round_down(size / 3 * 2, 4096);
        uint64_t cap = info->max_alloc_bytes ? info->max_alloc_bytes / 2 : GiB;
        uint64_t s1 = round_down(min_u64(min_u64(size, GiB), cap), 4096);
        uint64_t s2 = round_down(min_u64(min_u64(size, 2 * GiB), cap), 4096);
        uint64_t s4 = round_down(min_u64(size, GiB), 4096);
        fprintf(out, "device %s (%s, %s, %s memory %.1f GiB): h2d %.0f MiB, streamed reduce %.0f "
                "MiB over a %.0f MiB budget, over-budget %.0f MiB over %.0f MiB, repeat %.0f MiB\n",
                r.dev_name, coproc_device_type_name(info->type), info->platform,
                info->host_unified_memory ? "host-unified" : "discrete",
                (double)info->global_mem_bytes / GiB, (double)s1 / MiB, (double)s2 / MiB,
                (double)(s2 / 8) / MiB, (double)size / MiB, (double)budget / MiB,
                (double)s4 / MiB);
        double pinned = part_h2d(&r, info->discovered_index, s1, reps);
        part_stream(&r, info->discovered_index, s2, reps, pinned);
        /* Huge inputs (the 24 GiB H100 run): one timed run each, no warm-up run. */
        int huge = size > 2 * GiB && !o.reps;
        part_over_budget(&r, info->discovered_index, size, budget, reps, huge ? 1 : reps_big,
                         !o.quick && !huge);
        part_repeat(&r, info->discovered_index, info->host_unified_memory, s4);
        failures += r.failures;

        json_t *d = json_object(), *sizes = json_object();
        json_object_set_new(d, "index", json_integer(info->discovered_index));
        json_object_set_new(d, "name", json_string(info->name));
        json_object_set_new(d, "type", json_string(coproc_device_type_name(info->type)));
        json_object_set_new(d, "platform", json_string(info->platform));
        json_object_set_new(d, "driver_version", json_string(info->driver_version));
        json_object_set_new(d, "host_unified_memory", json_boolean(info->host_unified_memory));
        json_object_set_new(sizes, "h2d_bytes", json_integer((json_int_t)s1));
        json_object_set_new(sizes, "stream_bytes", json_integer((json_int_t)s2));
        json_object_set_new(sizes, "stream_budget_bytes", json_integer((json_int_t)(s2 / 8)));
        json_object_set_new(sizes, "over_budget_bytes", json_integer((json_int_t)size));
        json_object_set_new(sizes, "over_budget_budget_bytes", json_integer((json_int_t)budget));
        json_object_set_new(sizes, "repeat_bytes", json_integer((json_int_t)s4));
        json_object_update(sizes, r.extra);
        json_decref(r.extra);
        json_object_set_new(d, "sizes", sizes);
        json_object_set_new(d, "figures", r.figures);
        json_object_set_new(d, "checks", r.checks);
        json_object_set_new(d, "correct", json_boolean(r.failures == 0));
        json_array_append_new(jdevs, d);
    }
    double wall = now_s() - t_start;
    fprintf(out, "%s in %.1f s\n", failures ? "FAILED" : "all results correct", wall);
    if (o.json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string("coproc.datamove"));
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_object_set_new(doc, "coproc_version", json_string(coproc_version_string()));
        json_object_set_new(doc, "date", json_string(date));
        json_object_set_new(doc, "command", json_string(command));
        json_object_set_new(doc, "quick", json_boolean(o.quick));
        json_object_set_new(doc, "reps", json_integer(reps));
        json_object_set_new(doc, "units", json_string("GB/s = 1e9 bytes/s; MiB/GiB binary"));
        json_object_set_new(doc, "devices", jdevs);
        json_object_set_new(doc, "wall_s", json_real(wall));
        json_object_set_new(doc, "correct", json_boolean(failures == 0));
        json_object_set_new(doc, "ok", json_boolean(failures == 0 && ndev > 0));
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(jdevs);
    }
    free(infos);
    return failures ? EX_SOFTWARE : 0;
}
