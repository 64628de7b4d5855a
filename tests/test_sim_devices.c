/* test_sim_devices.c - simulated devices (COPROC_DEVICES=sim:PROFILE.json):
 * a runtime over a simulated PoCL CPU (profiles/pocl-ci.json) and a simulated
 * H100 (profiles/h100-synthetic.json) describes them as their profiles say,
 * keeps time on their virtual clock, places work as their costs say (a 1 GiB
 * host-resident reduce on the CPU, a sort of data resident on the GPU on the
 * GPU), its learned models converge to the profile's curves, and a copy
 * queued on a device's copy queue runs beside its kernels (copy_engine).
 * Results are checked against C. Bad selections and profiles whose sizes do
 * not fit their integers get clear statuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "coproc/inspect.h"
#include "backend/sim/sim.h"
#include "backend/opencl/device.h"
#include "core/runtime.h"

#define PROFILES COPROC_PROFILES_DIR
#define POCL PROFILES "/pocl-ci.json"
#define H100 PROFILES "/h100-synthetic.json"

static coproc_runtime *open_sim(const char *spec)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = spec;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE) {
        printf("skipped: no host OpenCL device to run simulated devices on: %s\n",
               coproc_errmsg(rt));
        coproc_close(rt);
        exit(TEST_SKIP);
    }
    if (s != COPROC_OK)
        fail_msg("coproc_open(%s): %s: %s", spec, coproc_status_name(s), coproc_errmsg(rt));
    return rt;
}

/* Submit op and wait; the device it ran on into *device, its seconds into *seconds. */
static coproc_result run(coproc_runtime *rt, const coproc_op *op)
{
    coproc_task *t = NULL;
    coproc_result r;
    assert_int_equal(coproc_submit(rt, op, &t), COPROC_OK);
    coproc_status s = coproc_wait(t, &r);
    if (s != COPROC_OK)
        fail_msg("%s: %s", coproc_status_name(s), coproc_errmsg(rt));
    return r;
}

static void describes_devices(void **state)
{
    (void)state;
    coproc_runtime *rt = open_sim("sim:" POCL ",sim:" H100 ":noise=0");
    assert_int_equal(coproc_device_count(rt), 2);
    coproc_device_info cpu, gpu;
    assert_int_equal(coproc_device_info_get(rt, 0, &cpu), COPROC_OK);
    assert_int_equal(coproc_device_info_get(rt, 1, &gpu), COPROC_OK);
    assert_string_equal(gpu.vendor, "coproc (simulated)");
    assert_string_equal(gpu.name, "sim NVIDIA H100 PCIe (synthetic)");
    assert_int_equal(gpu.type, COPROC_DEVICE_GPU);
    assert_int_equal(gpu.host_unified_memory, 0);
    assert_true(gpu.global_mem_bytes == (uint64_t)78 << 30);
    /* pocl-ci.json has no simulated_device object: the executor (PoCL's CPU) stands in. */
    assert_int_equal(cpu.type, COPROC_DEVICE_CPU);
    assert_int_equal(cpu.host_unified_memory, 1);

    /* Measuring a simulated device would measure the executor: refused. */
    coproc_profile *p = NULL;
    assert_int_equal(coproc_calibrate(rt, 1, 0, NULL, NULL, &p), COPROC_UNSUPPORTED);
    assert_null(p);
    assert_non_null(strstr(coproc_errmsg(rt), "simulated"));
    double bw = 1;
    assert_int_equal(coproc_measure_bandwidth(rt, 1, 1 << 20, 1, &bw), COPROC_UNSUPPORTED);

    /* The clock starts at 0 and an upload (no task) moves it by its copy time. */
    assert_true(coproc_clock_seconds(rt) == 0);
    enum { N = 1 << 20 };
    int32_t *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = i % 1000 - 500;
    coproc_column *c = NULL;
    assert_int_equal(coproc_column_upload(rt, 1, COPROC_INT32, v, N, &c), COPROC_OK);
    double t_upload = coproc_clock_seconds(rt);
    coproc_profile *h = NULL;
    assert_int_equal(coproc_profile_current(rt, 1, &h), COPROC_OK);
    double want = coproc_profile_transfer_time(h, 1, 0, (double)N * 4);
    assert_true(t_upload > 0.999 * want && t_upload < 1.001 * want);
    /* A synchronous reduce on the device column: the clock moves by the profile's curve. */
    coproc_scalar sum;
    assert_int_equal(coproc_reduce(rt, COPROC_REDUCE_SUM, c, &sum), COPROC_OK);
    int64_t ref = 0;
    for (int i = 0; i < N; i++)
        ref += v[i];
    assert_true(sum.v.i64 == ref);
    double x[1] = {(double)N * 4};
    double t_reduce = coproc_clock_seconds(rt) - t_upload;
    double curve = coproc_profile_predict(h, COPROC_OP_REDUCE, x);
    assert_true(curve > 0 && t_reduce > 0.999 * curve && t_reduce < 1.001 * curve);
    printf("sim H100: 4 MiB upload %.1f us, sum %.1f us on the virtual clock\n", t_upload * 1e6,
           t_reduce * 1e6);
    coproc_profile_free(h);
    coproc_column_free(c);
    free(v);
    coproc_close(rt);
}

static void expect_open_error(const char *spec, coproc_status want, const char *in_msg)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = spec;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s != want)
        fail_msg("%s: %s (%s), wanted %s", spec, coproc_status_name(s), coproc_errmsg(rt),
                 coproc_status_name(want));
    if (!strstr(coproc_errmsg(rt), in_msg))
        fail_msg("%s: message \"%s\" lacks \"%s\"", spec, coproc_errmsg(rt), in_msg);
    assert_int_equal(coproc_device_count(rt), 0);
    coproc_close(rt);
}

static void bad_selections(void **state)
{
    (void)state;
    char bad[] = "/tmp/coproc-sim-bad-XXXXXX";
    int fd = mkstemp(bad);
    assert_true(fd >= 0);
    assert_true(write(fd, "{\"schema\": \"coproc.profile\", \"schema_v", 37) == 37);
    close(fd);
    char spec[256];
    expect_open_error("sim:", COPROC_INVALID_ARGUMENT, "profile path");
    expect_open_error("sim:/nonexistent/x.json", COPROC_CORRUPT_PROFILE, "cannot read");
    snprintf(spec, sizeof spec, "sim:%s", bad);
    expect_open_error(spec, COPROC_CORRUPT_PROFILE, "cannot read");
    expect_open_error("sim:" H100 ",cpu", COPROC_INVALID_ARGUMENT, "cannot be mixed");
    expect_open_error("sim:" H100 ":noise=2", COPROC_INVALID_ARGUMENT, "noise");
    expect_open_error("sim:" H100 ":mem=lots", COPROC_INVALID_ARGUMENT, "mem");
    expect_open_error("sim:" H100 ":color=red", COPROC_INVALID_ARGUMENT, "unknown option");
    expect_open_error("sim:" H100 ":noise", COPROC_INVALID_ARGUMENT, "name=value");
    /* A document that is JSON but not a profile. */
    FILE *f = fopen(bad, "w");
    fputs("{\"schema\": \"something.else\"}", f);
    fclose(f);
    expect_open_error(spec, COPROC_CORRUPT_PROFILE, "not a usable profile");
    unlink(bad);
}

/* A profile like the H100's whose "simulated_device" object is `section`,
 * written to a temporary file named in path (the caller unlinks it). */
static void profile_with_section(const char *section, char *path, size_t size)
{
    FILE *f = fopen(H100, "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *sec = strstr(text, "\"simulated_device\"");
    assert_non_null(sec);
    *sec = '\0';
    snprintf(path, size, "/tmp/coproc-sim-section-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "%s\"simulated_device\": %s}\n", text, section);
    fclose(f);
}

/* Sizes in the "simulated_device" object that do not fit their integers (a
 * memory of 2^64 bytes or more became 0 bytes: the device opened and every
 * operator failed DEVICE_OUT_OF_MEMORY) are refused, as the too small ones
 * are; the largest memory that fits opens. */
static void profile_sizes(void **state)
{
    (void)state;
    static const struct {
        const char *section, *field;
    } bad[] = {
        {"{\"global_mem_bytes\": 1e30}", "global_mem_bytes"},
        {"{\"global_mem_bytes\": 18446744073709551616.0}", "global_mem_bytes"}, /* 2^64 */
        {"{\"global_mem_bytes\": -1}", "global_mem_bytes"},
        {"{\"global_mem_bytes\": 1000}", "global_mem_bytes"},
        {"{\"compute_units\": 1e30}", "compute_units"},
        {"{\"compute_units\": 4294967296}", "compute_units"},
        {"{\"host_unified_memory\": 1e30}", "host_unified_memory"},
        {"{\"fp64\": -1e30}", "fp64"},
    };
    char path[64], spec[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        profile_with_section(bad[i].section, path, sizeof path);
        snprintf(spec, sizeof spec, "sim:%s", path);
        expect_open_error(spec, COPROC_CORRUPT_PROFILE, bad[i].field);
        unlink(path);
    }
    /* The option too: 2^64 - 1 bytes is 2^64 once a double. */
    expect_open_error("sim:" H100 ":mem=18446744073709551615", COPROC_INVALID_ARGUMENT, "mem");

    /* 2^64 - 2048, the largest double below 2^64, fits. */
    profile_with_section("{\"global_mem_bytes\": 18446744073709549568.0, \"compute_units\": 132, "
                         "\"host_unified_memory\": 0, \"fp64\": false}",
                         path, sizeof path);
    snprintf(spec, sizeof spec, "sim:%s", path);
    coproc_runtime *rt = open_sim(spec);
    coproc_device_info info;
    assert_int_equal(coproc_device_info_get(rt, 0, &info), COPROC_OK);
    assert_true(info.global_mem_bytes == UINT64_MAX - 2047);
    assert_int_equal(info.compute_units, 132);
    coproc_close(rt);
    unlink(path);
}

/* HyPE's training phase places each kind 3 times on every device before
 * estimates decide: run it on small inputs first. */
static void train(coproc_runtime *rt, coproc_op_kind kind, coproc_column *small)
{
    for (int i = 0; i < 3 * coproc_device_count(rt); i++) {
        coproc_op op;
        coproc_op_init(&op, kind);
        op.a = small;
        op.reduce = COPROC_REDUCE_SUM;
        coproc_result r = run(rt, &op);
        coproc_result_free(&r);
    }
}

static void places_by_cost(void **state)
{
    (void)state;
    coproc_runtime *rt = open_sim("sim:" POCL ":noise=0,sim:" H100 ":noise=0");
    enum { SMALL = 4096 };
    static uint32_t small[SMALL];
    for (int i = 0; i < SMALL; i++)
        small[i] = (uint32_t)(SMALL - i);
    coproc_column *cs = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_UINT32, small, SMALL, &cs), COPROC_OK);
    train(rt, COPROC_OP_REDUCE, cs);
    train(rt, COPROC_OP_SORT, cs);

    /* 1 GiB of host-resident int32 (pageable caller memory): the simulated
     * H100 would first move it over the bus at the pageable rate, which costs
     * more than PoCL's whole reduction in place. */
    size_t n = (size_t)1 << 28;
    int32_t *big = malloc(n * sizeof *big);
    assert_non_null(big);
    int64_t ref = 0;
    for (size_t i = 0; i < n; i++) {
        big[i] = (int32_t)(i % 2001) - 1000;
        ref += big[i];
    }
    coproc_column *cb = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, big, n, &cb), COPROC_OK);
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = cb;
    op.reduce = COPROC_REDUCE_SUM;
    double est[2], move[2];
    for (int d = 0; d < 2; d++)
        assert_int_equal(coproc_op_estimate(rt, &op, d, &est[d], &move[d]), COPROC_OK);
    printf("1 GiB reduce: estimate CPU %.1f ms, GPU %.1f ms (of which moving %.1f ms)\n",
           est[0] * 1e3, est[1] * 1e3, move[1] * 1e3);
    assert_true(est[0] < est[1] && move[0] == 0 && move[1] > 0);
    coproc_result r = run(rt, &op);
    assert_int_equal(r.device, 0);
    assert_true(r.scalar.v.i64 == ref);
    /* The task's time is the simulated CPU's curve (noise 0, nothing moved). */
    assert_true(r.seconds > 0.999 * est[0] && r.seconds < 1.001 * est[0]);
    coproc_result_free(&r);
    coproc_column_free(cb);
    free(big);

    /* A sort of 4 Mi keys whose copy is resident on the simulated GPU: its
     * 19 Gkeys/s beat PoCL's sort by far, and nothing needs moving. */
    size_t m = (size_t)1 << 22;
    uint32_t *keys = malloc(m * sizeof *keys);
    test_rng rng = {42};
    for (size_t i = 0; i < m; i++)
        keys[i] = (uint32_t)test_rand(&rng);
    coproc_column *ck = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_UINT32, keys, m, &ck), COPROC_OK);
    coproc_op warm;
    coproc_op_init(&warm, COPROC_OP_REDUCE);
    warm.a = ck;
    warm.reduce = COPROC_REDUCE_MAX;
    warm.device = 1; /* run below: leaves a cached copy on the GPU */
    coproc_op sort;
    coproc_op_init(&sort, COPROC_OP_SORT);
    sort.a = ck;
    double cold[2], cold_move[2];
    for (int d = 0; d < 2; d++)
        assert_int_equal(coproc_op_estimate(rt, &sort, d, &cold[d], &cold_move[d]), COPROC_OK);
    r = run(rt, &warm);
    coproc_result_free(&r);
    for (int d = 0; d < 2; d++)
        assert_int_equal(coproc_op_estimate(rt, &sort, d, &est[d], &move[d]), COPROC_OK);
    printf("4 Mi-key sort: estimate CPU %.1f ms, GPU %.3f ms (moving %.3f ms)\n", est[0] * 1e3,
           est[1] * 1e3, move[1] * 1e3);
    /* Resident: only the sorted result comes back (16 MiB, pageable, both times). */
    assert_true(move[1] < cold_move[1] / 1.9 && est[1] < est[0]);
    r = run(rt, &sort);
    assert_int_equal(r.device, 1);
    coproc_device_stats ds = {.struct_size = sizeof ds};
    assert_int_equal(coproc_device_stats_get(rt, 1, &ds), COPROC_OK);
    assert_true(ds.cache_hits >= 1);
    uint32_t *got = malloc(m * sizeof *got);
    assert_int_equal(coproc_column_download(r.column, got, m), COPROC_OK);
    for (size_t i = 1; i < m; i++)
        assert_true(got[i - 1] <= got[i]);
    uint64_t s_in = 0, s_out = 0;
    for (size_t i = 0; i < m; i++)
        s_in += keys[i], s_out += got[i];
    assert_true(s_in == s_out);
    coproc_result_free(&r);
    free(got);
    coproc_column_free(ck);
    free(keys);
    coproc_column_free(cs);
    coproc_close(rt);
}

/* A device that starts without models (models=empty) learns them from its
 * runs; with 5 % noise they come within 10 % of the profile's curves. */
static void models_converge(void **state)
{
    (void)state;
    coproc_runtime *truth_rt = open_sim("sim:" H100);
    coproc_profile *truth = NULL;
    assert_int_equal(coproc_profile_current(truth_rt, 0, &truth), COPROC_OK);
    coproc_close(truth_rt);

    coproc_runtime *rt = open_sim("sim:" H100 ":models=empty:noise=0.05:seed=7");
    coproc_profile *before = NULL;
    assert_int_equal(coproc_profile_current(rt, 0, &before), COPROC_OK);
    double x1[1] = {4.0 * (1 << 20)};
    assert_true(coproc_profile_predict(before, COPROC_OP_REDUCE, x1) < 0); /* no model yet */
    coproc_profile_free(before);

    /* Sizes up to 64 MiB, where the curve's slope outweighs its 10 us launch;
     * more than COPROC__MODEL_REFIT_EVERY (100, HyPE's cadence) runs, so the
     * model refits on them. */
    enum { SIZES = 15, ROUNDS = 8 };
    size_t max = (size_t)1 << 24;
    int32_t *v = malloc(max * sizeof *v);
    for (size_t i = 0; i < max; i++)
        v[i] = (int32_t)(i & 1023);
    coproc_column *cols[SIZES];
    for (int k = 0; k < SIZES; k++)
        assert_int_equal(coproc_column_upload(rt, 0, COPROC_INT32, v, (size_t)1024 << k, &cols[k]),
                         COPROC_OK);
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < SIZES; k++) {
            size_t n = (size_t)1024 << k;
            coproc_scalar s;
            assert_int_equal(coproc_reduce(rt, COPROC_REDUCE_SUM, cols[k], &s), COPROC_OK);
            assert_true(s.v.i64 == (int64_t)(n / 1024) * (1023 * 1024 / 2));
        }
    for (int k = 0; k < SIZES; k++)
        coproc_column_free(cols[k]);
    free(v);
    coproc_profile *learned = NULL;
    assert_int_equal(coproc_profile_current(rt, 0, &learned), COPROC_OK);
    for (size_t n = 1 << 12; n <= max; n <<= 2) {
        double x[1] = {4.0 * (double)n};
        double want = coproc_profile_predict(truth, COPROC_OP_REDUCE, x);
        double got = coproc_profile_predict(learned, COPROC_OP_REDUCE, x);
        printf("reduce of %zu rows: profile %.2f us, learned %.2f us\n", n, want * 1e6,
               got * 1e6);
        assert_true(want > 0 && got > 0.9 * want && got < 1.1 * want);
    }
    coproc_profile_free(learned);
    coproc_profile_free(truth);
    coproc_close(rt);
}

/* a and b equal within rounding (virtual seconds). */
static void assert_near(double a, double b)
{
    if (!(fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1e-6)))
        fail_msg("%.12g != %.12g", a, b);
}

/* The simulated H100's copy engine (clock.c), noise 0: two copies queued
 * beside the kernels follow each other on the engine and leave the kernel
 * queue where it was; a kernel waiting for the first starts when it ends,
 * runs beside the second, and the task ends with the second: two copies and
 * a kernel in the time of the two copies. Outside a task a queued copy is
 * the caller's, as a copy on one queue: it moves the runtime's clock. */
static void copy_engine(void **state)
{
    (void)state;
    coproc_runtime *rt = open_sim("sim:" H100 ":noise=0");
    coproc__device *dev = &rt->devices[0];
    const coproc__backend *b = dev->backend;
    const coproc__profile *truth = ((coproc__sim_state *)dev->backend_state)->truth;
    double bytes = 64 << 20, rows = 16 << 20;
    double c = coproc__profile_transfer_time(truth, 1, 0, bytes);
    assert_true(c > 0);
    coproc__task_clock tc = {.submitted = b->now(rt)};
    b->task_begin(rt, dev, &tc);
    double at1 = b->copy_queued(dev, 0, bytes), at2 = b->copy_queued(dev, 0, bytes);
    assert_near(at1, tc.start + c);
    assert_near(at2, tc.start + 2 * c);
    assert_near(b->task_elapsed(rt, dev, &tc), 0);
    b->queue_waits(dev, at1);
    assert_near(b->task_elapsed(rt, dev, &tc), c);
    double k = b->pipeline_ran(dev, bytes, rows, 2, -1);
    assert_true(k > 0 && k < c); /* the H100 reads far faster than the bus brings */
    assert_near(b->task_elapsed(rt, dev, &tc), c + k);
    b->queue_waits(dev, at2);
    assert_near(b->task_elapsed(rt, dev, &tc), 2 * c);
    b->queue_waits(dev, at1); /* already past: no move */
    assert_near(b->task_elapsed(rt, dev, &tc), 2 * c);
    b->task_end(rt, dev, &tc);
    b->task_waited(rt, &tc);
    assert_near(tc.seconds, 2 * c);
    /* On the one queue, as ever: a copy and a kernel one after the other. */
    coproc__task_clock one = {.submitted = b->now(rt)};
    b->task_begin(rt, dev, &one);
    double c1 = b->copy_ran(dev, 1, 0, 0, bytes, -1);
    assert_near(c1, c);
    b->pipeline_ran(dev, bytes, rows, 2, -1);
    b->task_end(rt, dev, &one);
    b->task_waited(rt, &one);
    assert_near(one.seconds, c + k);
    double before = b->now(rt);
    assert_true(b->copy_queued(dev, 0, bytes) < 0);
    assert_near(b->now(rt), before + c);
    coproc_close(rt);
}

int main(void)
{
    /* COPROC_DEVICES replaces coproc_options.devices, and so every selection
     * this test makes (the simulated devices are its subject, and they run
     * on the first host OpenCL device whatever it names): another selection
     * there (the rusticl run's platform=rusticl) leaves nothing to test. */
    const char *env = getenv("COPROC_DEVICES");
    if (env && *env) {
        printf("skipped: COPROC_DEVICES=%s would replace the simulated devices this test "
               "selects\n", env);
        return TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(describes_devices), cmocka_unit_test(bad_selections),
        cmocka_unit_test(places_by_cost),    cmocka_unit_test(models_converge),
        cmocka_unit_test(copy_engine),       cmocka_unit_test(profile_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
