/* overhead.c - coproc-bench --overhead: what a small operator costs beyond its
 * kernel. Four forms of the same 1,000-row int32 sum on one device, on the
 * same device buffer, interleaved in rounds so that noise hits them alike:
 *   bare    clEnqueueNDRangeKernel + clFinish of a tiny reduction kernel built
 *           here through coproc/opencl.h (arguments set once)
 *   direct  coproc_reduce on the device column (synchronous)
 *   submit  coproc_submit + coproc_wait of the same sum (the task path)
 *   batch   100 such submits, then the 100 waits (a task loop, as StarPU's)
 * Each round times `per_round` calls of each form; the report gives, per
 * form, the median microseconds a call over rounds and their spread, and the
 * ratio to bare as the median (and range) of the per-round ratios. */
#include "overhead.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coproc/opencl.h"

/* One work-group strides over the rows, then a tree in local memory. */
static const char *const bare_source_text =
    "__kernel void bare_sum(__global const int *in, ulong n, __global long *out,\n"
    "                       __local long *scratch)\n"
    "{\n"
    "    size_t l = get_local_id(0), w = get_local_size(0);\n"
    "    long acc = 0;\n"
    "    for (ulong i = l; i < n; i += w)\n"
    "        acc += in[i];\n"
    "    scratch[l] = acc;\n"
    "    for (size_t s = w / 2; s > 0; s /= 2) {\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        if (l < s)\n"
    "            scratch[l] += scratch[l + s];\n"
    "    }\n"
    "    if (l == 0)\n"
    "        out[0] = scratch[0];\n"
    "}\n";

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct bare {
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem out;
    size_t local;
} bare;

static void bare_free(bare *b)
{
    if (b->out)
        clReleaseMemObject(b->out);
    if (b->kernel)
        clReleaseKernel(b->kernel);
    if (b->program)
        clReleaseProgram(b->program);
}

static int bare_init(bare *b, coproc_runtime *rt, int dev, const coproc_column *col, size_t n,
                     int is_cpu)
{
    memset(b, 0, sizeof *b);
    cl_context ctx;
    cl_device_id id;
    if (coproc_device_opencl(rt, dev, &ctx, &id, &b->queue) != COPROC_OK)
        return -1;
    cl_int err;
    const char *src = bare_source_text;
    b->program = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (!b->program || clBuildProgram(b->program, 1, &id, "-cl-std=CL1.2", NULL, NULL) != CL_SUCCESS)
        return -1;
    b->kernel = clCreateKernel(b->program, "bare_sum", &err);
    b->out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_long), NULL, &err);
    if (!b->kernel || !b->out)
        return -1;
    size_t maxwg = 1;
    clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
    b->local = is_cpu ? 1 : (maxwg < 256 ? maxwg : 256); /* as coproc's own geometry */
    cl_mem in = coproc_column_opencl(col);
    cl_ulong rows = n;
    err = clSetKernelArg(b->kernel, 0, sizeof in, &in);
    err |= clSetKernelArg(b->kernel, 1, sizeof rows, &rows);
    err |= clSetKernelArg(b->kernel, 2, sizeof b->out, &b->out);
    err |= clSetKernelArg(b->kernel, 3, b->local * sizeof(cl_long), NULL);
    return err == CL_SUCCESS ? 0 : -1;
}

static int bare_run(bare *b)
{
    return clEnqueueNDRangeKernel(b->queue, b->kernel, 1, NULL, &b->local, &b->local, 0, NULL,
                                  NULL) == CL_SUCCESS &&
                   clFinish(b->queue) == CL_SUCCESS
               ? 0
               : -1;
}

static int bare_result(bare *b, long long *v)
{
    cl_long r = 0;
    int ok = clEnqueueReadBuffer(b->queue, b->out, CL_TRUE, 0, sizeof r, &r, 0, NULL, NULL) ==
             CL_SUCCESS;
    *v = (long long)r;
    return ok ? 0 : -1;
}

static int direct_run(coproc_runtime *rt, const coproc_column *col, long long *v)
{
    coproc_scalar s;
    if (coproc_reduce(rt, COPROC_REDUCE_SUM, col, &s) != COPROC_OK)
        return -1;
    *v = (long long)s.v.i64;
    return 0;
}

static int submit_run(coproc_runtime *rt, const coproc_column *col, long long *v)
{
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = col;
    op.reduce = COPROC_REDUCE_SUM;
    coproc_task *t;
    coproc_result r;
    if (coproc_submit(rt, &op, &t) != COPROC_OK || coproc_wait(t, &r) != COPROC_OK)
        return -1;
    *v = (long long)r.scalar.v.i64;
    coproc_result_free(&r);
    return 0;
}

/* `count` sums submitted at once, then waited for (as StarPU's task loops). */
static int batch_run(coproc_runtime *rt, const coproc_column *col, int count, long long *v)
{
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = col;
    op.reduce = COPROC_REDUCE_SUM;
    coproc_task *t[256];
    int rc = 0, n = count < 256 ? count : 256;
    for (int i = 0; i < n; i++)
        if (coproc_submit(rt, &op, &t[i]) != COPROC_OK)
            t[i] = NULL, rc = -1;
    for (int i = 0; i < n; i++) {
        coproc_result r;
        if (t[i] && coproc_wait(t[i], &r) == COPROC_OK) {
            *v = (long long)r.scalar.v.i64;
            coproc_result_free(&r);
        } else {
            rc = -1;
        }
    }
    return rc;
}

enum { BARE, DIRECT, SUBMIT, BATCH, FORMS };
static const char *const form_name[FORMS] = {"bare clEnqueueNDRange+clFinish",
                                             "coproc_reduce (device column)",
                                             "coproc_submit+coproc_wait",
                                             "100 submits, then 100 waits"};
static const char *const form_key[FORMS] = {"bare", "direct", "submit", "submit_all_then_wait"};

/* One form run `count` times; seconds a call, or < 0 on failure (*v: the last sum). */
static double time_form(int form, coproc_runtime *rt, bare *b, const coproc_column *col,
                        int count, long long *v)
{
    double t0 = bench_now_s();
    if (form == BATCH)
        return batch_run(rt, col, count, v) == 0 ? (bench_now_s() - t0) / count : -1;
    for (int i = 0; i < count; i++) {
        int rc = form == BARE ? bare_run(b) : form == DIRECT ? direct_run(rt, col, v)
                                                             : submit_run(rt, col, v);
        if (rc != 0)
            return -1;
    }
    return (bench_now_s() - t0) / count;
}

int bench_overhead(coproc_runtime *rt, int dev, int is_cpu, size_t rows, int iterations,
                   FILE *out, json_t *jdev)
{
    int per_round = 100, rounds = iterations / per_round;
    if (rounds < 3)
        rounds = 3;
    int32_t *host = malloc(rows * sizeof *host);
    double *t[FORMS], *ratio[FORMS];
    for (int f = 0; f < FORMS; f++) {
        t[f] = calloc((size_t)rounds, sizeof **t);
        ratio[f] = calloc((size_t)rounds, sizeof **ratio);
    }
    coproc_column *col = NULL;
    bare b;
    memset(&b, 0, sizeof b);
    int rc = -1;
    if (!host || !t[FORMS - 1] || !ratio[FORMS - 1])
        goto done;
    long long expect = 0;
    for (size_t i = 0; i < rows; i++) {
        host[i] = (int32_t)(i * 2654435761u % 2001) - 1000;
        expect += host[i];
    }
    if (coproc_column_upload(rt, dev, COPROC_INT32, host, rows, &col) != COPROC_OK) {
        fprintf(out, "overhead: upload failed: %s\n", coproc_errmsg(rt));
        goto done;
    }
    if (bare_init(&b, rt, dev, col, rows, is_cpu) != 0) {
        fprintf(out, "overhead: the bare kernel did not build or run\n");
        goto done;
    }
    long long v[FORMS] = {0, 0, 0, 0};
    for (int f = 0; f < FORMS; f++) /* warm-up: programs built, threads started */
        if (time_form(f, rt, &b, col, per_round, &v[f]) < 0) {
            fprintf(out, "overhead: %s failed: %s\n", form_name[f], coproc_errmsg(rt));
            goto done;
        }
    if (bare_result(&b, &v[BARE]) != 0 || v[BARE] != expect || v[DIRECT] != expect ||
        v[SUBMIT] != expect || v[BATCH] != expect) {
        fprintf(out, "MISMATCH overhead: expected %lld, bare %lld, direct %lld, submit %lld, "
                "batch %lld\n", expect, v[BARE], v[DIRECT], v[SUBMIT], v[BATCH]);
        goto done;
    }
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < FORMS; k++) {
            int f = (r + k) % FORMS; /* rotate the order: no form always goes first */
            if ((t[f][r] = time_form(f, rt, &b, col, per_round, &v[f])) < 0)
                goto done;
        }
        for (int f = 0; f < FORMS; f++)
            ratio[f][r] = t[f][r] / t[BARE][r];
    }
    fprintf(out, "\n-- overhead: %zu-row int32 sum, %d rounds x %d calls a form, interleaved\n",
            rows, rounds, per_round);
    fprintf(out, "%-32s %10s %17s %8s %15s\n", "form", "us/call", "(min-max rounds)", "vs bare",
            "(min-max)");
    json_t *jo = json_object();
    json_object_set_new(jo, "rows", json_integer((json_int_t)rows));
    json_object_set_new(jo, "rounds", json_integer(rounds));
    json_object_set_new(jo, "calls_per_round", json_integer(per_round));
    for (int f = 0; f < FORMS; f++) {
        double lo = 1e30, hi = 0, rlo = 1e30, rhi = 0;
        for (int r = 0; r < rounds; r++) {
            lo = t[f][r] < lo ? t[f][r] : lo;
            hi = t[f][r] > hi ? t[f][r] : hi;
            rlo = ratio[f][r] < rlo ? ratio[f][r] : rlo;
            rhi = ratio[f][r] > rhi ? ratio[f][r] : rhi;
        }
        double med = median(t[f], rounds), rmed = median(ratio[f], rounds);
        fprintf(out, "%-32s %10.1f %8.1f-%-8.1f %7.2fx %7.2f-%-7.2f\n", form_name[f], med * 1e6,
                lo * 1e6, hi * 1e6, rmed, rlo, rhi);
        json_t *j = json_object();
        json_object_set_new(j, "us_per_call_median", json_real(med * 1e6));
        json_object_set_new(j, "us_per_call_min", json_real(lo * 1e6));
        json_object_set_new(j, "us_per_call_max", json_real(hi * 1e6));
        json_object_set_new(j, "ratio_to_bare_median", json_real(rmed));
        json_object_set_new(j, "ratio_to_bare_min", json_real(rlo));
        json_object_set_new(j, "ratio_to_bare_max", json_real(rhi));
        json_object_set_new(jo, form_key[f], j);
    }
    /* How many of the runs the reduce model timed (the others cost no marker). */
    coproc_model_stats m = {.struct_size = sizeof m};
    if (coproc_model_stats_get(rt, dev, COPROC_OP_REDUCE, &m) == COPROC_OK) {
        fprintf(out, "reduce model: %llu observations, %s, median error %.0f %%\n",
                (unsigned long long)m.observations, m.fitted ? "fitted" : "not fitted",
                m.median_rel_error * 100);
        json_object_set_new(jo, "model_observations", json_integer((json_int_t)m.observations));
        json_object_set_new(jo, "model_median_rel_error", json_real(m.median_rel_error));
    }
    json_object_set_new(jdev, "overhead", jo);
    rc = 0;
done:
    bare_free(&b);
    coproc_column_free(col);
    for (int f = 0; f < FORMS; f++) {
        free(t[f]);
        free(ratio[f]);
    }
    free(host);
    return rc;
}
