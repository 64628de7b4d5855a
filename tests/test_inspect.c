/* test_inspect.c - the opt-in header coproc/inspect.h, through the public
 * headers only: policy names, estimates, bandwidth, column writes, profile
 * handles (load, current, use, save, JSON, predictions), the live models'
 * latest observation, refitting to given points, a quick calibration with its
 * progress lines, and the transfer check. Every NULL pointer, out-of-range
 * device and bad kind returns the documented status and, where there is a
 * runtime, leaves a fresh message (coproc_errmsg).
 *
 * One runtime over device 0 with calibration off, in a private cache
 * directory (mkdtemp) seeded with the kernel binaries of the test cache, so
 * that no program is compiled again and the user's cache is never touched.
 * One quick calibration (seconds on PoCL); the transfer check runs on that
 * profile cut down to its sweep up to 2 MiB, to keep it short. The tests run
 * in order and build on each other (the calibrated profile). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "testlib.h"

#include "coproc/inspect.h"

#define MiB (1024.0 * 1024.0)

static coproc_runtime *rt;
static coproc_device_info info;
static char *cache_dir;
static coproc_profile *cal; /* the quick calibration of device 0 (test_calibrate) */

/* ---------------------------------------------------------------- files */

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t n;
    while (out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            break;
    if (out)
        fclose(out);
    if (in)
        fclose(in);
}

/* Copy (or, with to NULL, delete) the plain files of directory `from`. */
static void each_file(const char *from, const char *to)
{
    DIR *d = opendir(from);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        if (to) {
            snprintf(b, sizeof b, "%s/%s", to, e->d_name);
            copy_file(a, b);
        } else {
            unlink(a);
        }
    }
    closedir(d);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

/* The one profile file of the private cache (<cache>/profiles/<hex>.json). */
static void profile_path(char *out, size_t size)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/profiles", cache_dir);
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("no directory %s", dir);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] != '.' && n == 21 && strcmp(e->d_name + 16, ".json") == 0) {
            snprintf(out, size, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    if (found != 1)
        fail_msg("%d profile files in %s, expected 1", found, dir);
}

/* ---------------------------------------------------------------- setup */

static int group_setup(void **state)
{
    (void)state;
    cache_dir = test_temp_dir("inspect");
    const char *shared = getenv("COPROC_CACHE_DIR");
    char from[1024], to[1024];
    snprintf(to, sizeof to, "%s/kernels", cache_dir);
    if (shared && *shared && mkdir(to, 0700) == 0) {
        snprintf(from, sizeof from, "%s/kernels", shared);
        each_file(from, to);
    }
    /* The environment overrides coproc_options.cache_dir. */
    setenv("COPROC_CACHE_DIR", cache_dir, 1);
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "0";
    o.calibration = COPROC_CALIBRATION_OFF;
    rt = test_open_with(&o);
    if (coproc_device_info_get(rt, 0, &info) != COPROC_OK)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    coproc_profile_free(cal);
    coproc_close(rt);
    char d[1024];
    const char *subs[] = {"kernels", "profiles"};
    for (int i = 0; i < 2; i++) {
        snprintf(d, sizeof d, "%s/%s", cache_dir, subs[i]);
        each_file(d, NULL);
        rmdir(d);
    }
    rmdir(cache_dir);
    free(cache_dir);
    return 0;
}

/* ---------------------------------------------------------------- error checks */

/* Leave a known message on rt (naming device 424242), so that a check can
 * tell that the call it makes next left one of its own. */
static void mark_message(void)
{
    coproc_column *c = NULL;
    assert_int_equal(coproc_column_alloc(rt, 424242, COPROC_INT32, 1, &c), COPROC_INVALID_ARGUMENT);
    assert_null(c);
    if (!strstr(coproc_errmsg(rt), "424242"))
        fail_msg("the marker message is '%s'", coproc_errmsg(rt));
}

/* expr must return `expected` and leave a new message that contains needle. */
#define expect_fail(expected, expr, needle)                                                  \
    do {                                                                                     \
        mark_message();                                                                      \
        coproc_status s_ = (expr);                                                           \
        if (s_ != (expected))                                                                \
            fail_msg("%s -> %s (%s), expected %s", #expr, coproc_status_name(s_),           \
                     coproc_errmsg(rt), coproc_status_name(expected));                       \
        const char *m_ = coproc_errmsg(rt);                                                  \
        if (!m_ || !m_[0] || strstr(m_, "424242") || !strstr(m_, (needle)))                  \
            fail_msg("%s: message '%s', expected a new one containing '%s'", #expr,         \
                     m_ ? m_ : "(null)", (needle));                                          \
    } while (0)

/* ---------------------------------------------------------------- JSON */

static json_t *parse_profile(const coproc_profile *p)
{
    char *text = coproc_profile_json(p);
    assert_non_null(text);
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    if (!doc)
        fail_msg("coproc_profile_json is not JSON: %s at %d: %.200s", err.text, err.position,
                 text);
    free(text);
    assert_true(json_is_object(doc));
    return doc;
}

static double num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        fail_msg("field %s is not a number", key);
    return json_number_value(v);
}

static const char *const xfer_kinds[4] = {"h2d_pinned", "d2h_pinned", "h2d_pageable",
                                          "d2h_pageable"};

/* The fields docs/profile.md lists; `measured`: calibration filled them. */
static void check_schema(json_t *doc, int measured)
{
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), "coproc.profile");
    assert_int_equal(json_integer_value(json_object_get(doc, "schema_version")), 2);
    assert_true(json_is_string(json_object_get(doc, "coproc_version")));
    const char *fp = json_string_value(json_object_get(doc, "fingerprint"));
    assert_non_null(fp);
    assert_non_null(strstr(fp, info.name)); /* the device name is part of it */
    assert_true(json_is_string(json_object_get(doc, "device")));
    assert_true(json_is_boolean(json_object_get(doc, "full")));
    assert_true(num(doc, "created_unix") >= 0);
    assert_true(num(doc, "calibration_seconds") >= 0);
    assert_true(num(doc, "both_directions_bytes_per_s") >= 0);
    assert_true(num(doc, "launch_latency_s") >= 0);
    json_t *t = json_object_get(doc, "transfer");
    assert_true(json_is_object(t));
    for (int k = 0; k < 4; k++) {
        json_t *x = json_object_get(t, xfer_kinds[k]);
        if (!json_is_object(x))
            fail_msg("transfer.%s missing", xfer_kinds[k]);
        assert_true(num(x, "latency_s") >= 0);
        json_t *pts = json_object_get(x, "points");
        assert_true(json_is_array(pts));
        if (measured) {
            assert_true(num(x, "bytes_per_s") > 0);
            assert_true(json_array_size(pts) >= 2);
        }
        double last = 0;
        for (size_t i = 0; i < json_array_size(pts); i++) {
            json_t *pt = json_array_get(pts, i);
            assert_int_equal(json_array_size(pt), 2);
            double b = json_number_value(json_array_get(pt, 0));
            double s = json_number_value(json_array_get(pt, 1));
            if (!(b > last) || !(s > 0))
                fail_msg("transfer.%s point %zu: [%g, %g] after %g bytes", xfer_kinds[k], i, b,
                         s, last);
            last = b;
        }
    }
    json_t *mem = json_object_get(doc, "memory"), *cmp = json_object_get(doc, "compute"),
           *bld = json_object_get(doc, "build");
    assert_true(json_is_object(mem) && json_is_object(cmp) && json_is_object(bld));
    double copy = num(mem, "copy_bytes_per_s"), read = num(mem, "read_bytes_per_s");
    double iops = num(cmp, "int_ops_per_s"), flops = num(cmp, "float_ops_per_s");
    double src = num(bld, "source_s"), cached = num(bld, "cached_s");
    if (measured) {
        assert_true(copy > 0 && read > 0 && iops > 0 && flops > 0 && src > 0 && cached > 0);
        assert_true(num(doc, "launch_latency_s") > 0);
        assert_false(json_is_true(json_object_get(doc, "full"))); /* the quick pass */
    } else {
        assert_true(copy == 0 && read == 0 && iops == 0 && flops == 0);
    }
    json_t *ops = json_object_get(doc, "operators");
    assert_true(json_is_object(ops));
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
        const char *name = coproc_op_kind_name((coproc_op_kind)k);
        json_t *m = json_object_get(ops, name);
        if (!json_is_object(m))
            fail_msg("operators.%s missing", name);
        json_int_t f = json_integer_value(json_object_get(m, "features"));
        assert_true(f >= 1 && f <= COPROC_MODEL_MAX_FEATURES);
        json_t *coef = json_object_get(m, "coef");
        assert_true(json_is_null(coef) || json_is_array(coef));
        if (json_is_array(coef))
            assert_true(json_array_size(coef) == (size_t)f + 1 ||
                        json_array_size(coef) == (size_t)f + 2);
        if (measured && !json_is_array(coef))
            fail_msg("operators.%s not fitted by calibration", name);
        assert_true(json_is_array(json_object_get(m, "points")));
        assert_true(json_is_integer(json_object_get(m, "observations")));
    }
}

/* ---------------------------------------------------------------- tests */

static void test_policy_names(void **state)
{
    (void)state;
    static const char *const names[] = {"wtar", "srt", "rr", "tbo", "pbo", "static", "fixed"};
    for (int p = COPROC_POLICY_WTAR; p <= COPROC_POLICY_FIXED; p++) {
        const char *n = coproc_policy_name((coproc_policy)p);
        assert_non_null(n);
        assert_string_equal(n, names[p]);
        assert_int_equal(coproc_policy_parse(n), p);
        char upper[16];
        size_t i = 0;
        for (; n[i] && i + 1 < sizeof upper; i++)
            upper[i] = (char)(n[i] >= 'a' && n[i] <= 'z' ? n[i] - 32 : n[i]);
        upper[i] = '\0';
        assert_int_equal(coproc_policy_parse(upper), p); /* any case */
    }
    assert_string_equal(coproc_policy_name((coproc_policy)-1), "invalid");
    assert_string_equal(coproc_policy_name((coproc_policy)(COPROC_POLICY_FIXED + 1)), "invalid");
    assert_string_equal(coproc_policy_name((coproc_policy)1000), "invalid");
    const char *bad[] = {"", "invalid", "fixed:2", "wtar ", " wtar", "round-robin", "w"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (coproc_policy_parse(bad[i]) != -1)
            fail_msg("coproc_policy_parse(\"%s\") = %d", bad[i], coproc_policy_parse(bad[i]));
    assert_int_equal(coproc_policy_parse(NULL), -1);
}

static void test_model_fit_points(void **state)
{
    (void)state;
    enum { N = 12 };
    double x[256][COPROC_MODEL_MAX_FEATURES], secs[256], pred[256];
    memset(x, 0, sizeof x);
    /* reduce: one feature (input bytes); points exactly on a line. */
    for (int i = 0; i < N; i++) {
        x[i][0] = 65536.0 * (1 << (i % 6)) * (1 + i / 6);
        secs[i] = 20e-6 + x[i][0] / 10e9;
    }
    assert_status(COPROC_OK, coproc_model_fit_points(COPROC_OP_REDUCE, N, x, secs, pred));
    for (int i = 0; i < N; i++)
        if (fabs(pred[i] - secs[i]) > 0.02 * secs[i])
            fail_msg("reduce point %d: predicted %g s, was %g s", i, pred[i], secs[i]);
    /* select: two features (input bytes, output rows). */
    for (int i = 0; i < N; i++) {
        x[i][0] = 4096.0 * (i + 1) * (i + 1);
        x[i][1] = (double)((i * 7919) % 1000) * 10;
        secs[i] = 5e-6 + x[i][0] / 20e9 + x[i][1] * 2e-9;
    }
    assert_status(COPROC_OK, coproc_model_fit_points(COPROC_OP_SELECT, N, x, secs, pred));
    for (int i = 0; i < N; i++)
        if (fabs(pred[i] - secs[i]) > 0.02 * secs[i])
            fail_msg("select point %d: predicted %g s, was %g s", i, pred[i], secs[i]);
    /* The most points it takes. */
    for (int i = 0; i < 256; i++) {
        x[i][0] = 4096.0 * (i + 1);
        x[i][1] = 0;
        secs[i] = 1e-5 + x[i][0] / 1e9;
    }
    assert_status(COPROC_OK, coproc_model_fit_points(COPROC_OP_MAP, 256, x, secs, pred));
    assert_true(pred[255] > pred[0]);

    /* Arguments: no runtime, so statuses only; predicted untouched on error. */
    for (int i = 0; i < 256; i++)
        pred[i] = -123;
    assert_status(COPROC_NULL_POINTER, coproc_model_fit_points(COPROC_OP_REDUCE, N, NULL, secs, pred));
    assert_status(COPROC_NULL_POINTER, coproc_model_fit_points(COPROC_OP_REDUCE, N, x, NULL, pred));
    assert_status(COPROC_NULL_POINTER, coproc_model_fit_points(COPROC_OP_REDUCE, N, x, secs, NULL));
    assert_status(COPROC_INVALID_ARGUMENT,
                  coproc_model_fit_points((coproc_op_kind)-1, N, x, secs, pred));
    assert_status(COPROC_INVALID_ARGUMENT,
                  coproc_model_fit_points(COPROC_OP_KIND_COUNT, N, x, secs, pred));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_fit_points(COPROC_OP_REDUCE, 0, x, secs, pred));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_fit_points(COPROC_OP_REDUCE, -3, x, secs, pred));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_fit_points(COPROC_OP_REDUCE, 257, x, secs, pred));
    /* Too few distinct points for the form: one point; then many copies of one. */
    assert_status(COPROC_UNSUPPORTED, coproc_model_fit_points(COPROC_OP_REDUCE, 1, x, secs, pred));
    for (int i = 0; i < N; i++) {
        x[i][0] = 1e6;
        x[i][1] = 10;
        secs[i] = 1e-3;
    }
    assert_status(COPROC_UNSUPPORTED, coproc_model_fit_points(COPROC_OP_SELECT, N, x, secs, pred));
    for (int i = 0; i < 256; i++)
        assert_true(pred[i] == -123);
}

/* The calls with a NULL runtime or a NULL profile: statuses, never a crash. */
static void test_null_handles(void **state)
{
    (void)state;
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    double d = 7, t = 7, x[COPROC_MODEL_MAX_FEATURES] = {1e6, 1, 1};
    uint64_t obs = 7;
    coproc_profile *p = (coproc_profile *)&d; /* must be left alone */
    coproc_transfer_check chk;
    chk.struct_size = sizeof chk;
    assert_status(COPROC_NULL_POINTER, coproc_op_estimate(NULL, &op, 0, &d, &t));
    assert_status(COPROC_NULL_POINTER, coproc_measure_bandwidth(NULL, 0, 1 << 20, 1, &d));
    assert_status(COPROC_NULL_POINTER, coproc_column_write(NULL, 0, x, 1, 0));
    assert_status(COPROC_NULL_POINTER, coproc_profile_load(NULL, 0, &p));
    assert_status(COPROC_NULL_POINTER, coproc_profile_current(NULL, 0, &p));
    assert_status(COPROC_NULL_POINTER, coproc_profile_use(NULL, 0, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_profile_save_device(NULL, 0, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_model_last(NULL, 0, COPROC_OP_REDUCE, x, &d, &obs));
    assert_status(COPROC_NULL_POINTER, coproc_calibrate(NULL, 0, 0, NULL, NULL, &p));
    assert_status(COPROC_NULL_POINTER, coproc_check_transfers(NULL, 0, NULL, 1, 1, 1, &chk));
    assert_true(t == 7 && obs == 7 && x[0] == 1e6);
    coproc_profile_free(NULL);
    assert_null(coproc_profile_json(NULL));
    assert_true(coproc_profile_transfer_time(NULL, 1, 1, 1e6) < 0);
    assert_true(coproc_profile_predict(NULL, COPROC_OP_REDUCE, x) < 0);
}

/* Every call with a device index: -1 and one past the end are
 * INVALID_ARGUMENT with a message naming the index; NULL outputs and bad
 * kinds their own status and message. */
static void test_bad_arguments(void **state)
{
    (void)state;
    int n = coproc_device_count(rt);
    assert_int_equal(n, 1);
    int bad[2] = {-1, n};
    int32_t rows[4] = {1, 2, 3, 4};
    coproc_column *host = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, rows, 4, &host));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = host;
    double d = 0, x[COPROC_MODEL_MAX_FEATURES];
    uint64_t obs;
    coproc_transfer_check chk;
    chk.struct_size = sizeof chk;
    coproc_profile *p;
    coproc_profile *cur = NULL;
    assert_ok(rt, coproc_profile_current(rt, 0, &cur));
    for (int i = 0; i < 2; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "device index %d out of range", bad[i]);
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_op_estimate(rt, &op, bad[i], &d, NULL), needle);
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_measure_bandwidth(rt, bad[i], 1 << 20, 1, &d),
                    needle);
        p = (coproc_profile *)&d;
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_profile_load(rt, bad[i], &p), needle);
        assert_null(p); /* *out NULL on error */
        p = (coproc_profile *)&d;
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_profile_current(rt, bad[i], &p), needle);
        assert_null(p);
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_profile_use(rt, bad[i], cur), needle);
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_profile_save_device(rt, bad[i], cur), needle);
        expect_fail(COPROC_INVALID_ARGUMENT,
                    coproc_model_last(rt, bad[i], COPROC_OP_REDUCE, x, &d, &obs), needle);
        p = (coproc_profile *)&d;
        expect_fail(COPROC_INVALID_ARGUMENT, coproc_calibrate(rt, bad[i], 0, NULL, NULL, &p),
                    needle);
        assert_null(p);
        expect_fail(COPROC_INVALID_ARGUMENT,
                    coproc_check_transfers(rt, bad[i], cur, 1, 1, 1, &chk), needle);
    }
    /* NULL pointers. */
    expect_fail(COPROC_NULL_POINTER, coproc_op_estimate(rt, NULL, 0, &d, NULL), "op is NULL");
    expect_fail(COPROC_NULL_POINTER, coproc_measure_bandwidth(rt, 0, 1 << 20, 1, NULL),
                "bytes_per_s");
    expect_fail(COPROC_NULL_POINTER, coproc_profile_load(rt, 0, NULL), "coproc_profile_load");
    expect_fail(COPROC_NULL_POINTER, coproc_profile_current(rt, 0, NULL), "coproc_profile_current");
    expect_fail(COPROC_NULL_POINTER, coproc_profile_use(rt, 0, NULL), "coproc_profile_use");
    expect_fail(COPROC_NULL_POINTER, coproc_profile_save_device(rt, 0, NULL),
                "coproc_profile_save_device");
    expect_fail(COPROC_NULL_POINTER, coproc_calibrate(rt, 0, 0, NULL, NULL, NULL),
                "coproc_calibrate");
    expect_fail(COPROC_NULL_POINTER, coproc_check_transfers(rt, 0, NULL, 1, 1, 1, &chk),
                "profile is NULL");
    expect_fail(COPROC_NULL_POINTER, coproc_check_transfers(rt, 0, cur, 1, 1, 1, NULL),
                "out is NULL");
    /* Bad kinds; bad sizes. */
    expect_fail(COPROC_INVALID_ARGUMENT,
                coproc_model_last(rt, 0, (coproc_op_kind)-1, x, &d, &obs), "kind -1");
    expect_fail(COPROC_INVALID_ARGUMENT,
                coproc_model_last(rt, 0, COPROC_OP_KIND_COUNT, x, &d, &obs), "unknown operator");
    coproc_op bad_kind = op;
    bad_kind.kind = (coproc_op_kind)99;
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_op_estimate(rt, &bad_kind, 0, &d, NULL),
                "no variant");
    coproc_op uninit = op;
    uninit.struct_size = 0;
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_op_estimate(rt, &uninit, 0, &d, NULL),
                "coproc_op_init");
    coproc_op no_input;
    coproc_op_init(&no_input, COPROC_OP_REDUCE);
    expect_fail(COPROC_NULL_POINTER, coproc_op_estimate(rt, &no_input, 0, &d, NULL),
                "input 0 is NULL");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_measure_bandwidth(rt, 0, 15, 1, &d), "16 bytes");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_measure_bandwidth(rt, 0, 0, 1, &d), "16 bytes");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_measure_bandwidth(rt, 0, 1 << 20, 0, &d),
                "16 bytes");
    assert_true(d == 0); /* *bytes_per_s cleared on error */
    coproc_transfer_check small = chk;
    small.struct_size = 0;
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, cur, 1, 1, 1, &small),
                "struct_size");
    small.struct_size = sizeof small + 8;
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, cur, 1, 1, 1, &small),
                "struct_size");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, cur, 1, 0, 1, &chk),
                "0 sizes");
    expect_fail(COPROC_INVALID_ARGUMENT,
                coproc_check_transfers(rt, 0, cur, 1, COPROC_CHECK_MAX + 1, 1, &chk), "sizes");
    /* An uncalibrated profile has no sweep to check. */
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, cur, 1, 1, 1, &chk),
                "sweep");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, cur, 0, 1, 1, &chk),
                "sweep");
    /* Predictions with a bad kind or no features. */
    double fx[COPROC_MODEL_MAX_FEATURES] = {1e6, 0, 0};
    assert_true(coproc_profile_predict(cur, (coproc_op_kind)-1, fx) < 0);
    assert_true(coproc_profile_predict(cur, COPROC_OP_KIND_COUNT, fx) < 0);
    assert_true(coproc_profile_predict(cur, COPROC_OP_REDUCE, NULL) < 0);
    coproc_profile_free(cur);
    coproc_column_free(host);
}

/* Calibration off: nothing in the cache, the device's profile empty, no
 * model fitted, no observation. */
static void test_before_calibration(void **state)
{
    (void)state;
    coproc_profile *p = (coproc_profile *)&p;
    expect_fail(COPROC_IO_ERROR, coproc_profile_load(rt, 0, &p), "");
    assert_null(p);

    coproc_profile *cur = NULL;
    assert_ok(rt, coproc_profile_current(rt, 0, &cur));
    assert_non_null(cur);
    json_t *doc = parse_profile(cur);
    check_schema(doc, 0);
    json_decref(doc);
    for (int to = 0; to < 2; to++)
        for (int pinned = 0; pinned < 2; pinned++) {
            assert_true(coproc_profile_transfer_time(cur, to, pinned, MiB) < 0);
            assert_true(coproc_profile_transfer_time(cur, to, pinned, 0) == 0);
        }
    double x[COPROC_MODEL_MAX_FEATURES] = {MiB, 100, 100};
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
        assert_true(coproc_profile_predict(cur, (coproc_op_kind)k, x) < 0);
    coproc_profile_free(cur);

    x[0] = -5;
    double secs = -5;
    uint64_t obs = 99;
    assert_ok(rt, coproc_model_last(rt, 0, COPROC_OP_SORT, x, &secs, &obs));
    assert_int_equal(obs, 0);
    assert_true(x[0] == -5 && secs == -5); /* left alone */
    assert_ok(rt, coproc_model_last(rt, 0, COPROC_OP_SORT, NULL, NULL, NULL));

    /* Estimates: negative while the model is not fitted. */
    int32_t rows[1000];
    for (int i = 0; i < 1000; i++)
        rows[i] = i;
    coproc_column *host = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, rows, 1000, &host));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = host;
    double est = 0, tr = -1;
    assert_ok(rt, coproc_op_estimate(rt, &op, 0, &est, &tr));
    assert_true(est < 0);
    assert_true(tr >= 0);
    assert_ok(rt, coproc_op_estimate(rt, &op, 0, NULL, NULL));
    coproc_column_free(host);
}

/* Operators run on device columns teach the live model; the latest
 * observation is the last run's features. */
static void test_model_last_after_runs(void **state)
{
    (void)state;
    enum { N = 100003 };
    int32_t *rows = malloc(N * sizeof *rows);
    assert_non_null(rows);
    for (int i = 0; i < N; i++)
        rows[i] = i % 1000;
    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, rows, N, &col));
    free(rows);
    uint64_t before = 0, after = 0;
    assert_ok(rt, coproc_model_last(rt, 0, COPROC_OP_REDUCE, NULL, NULL, &before));
    coproc_scalar sum;
    for (int i = 0; i < 4; i++)
        assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum));
    assert_int_equal(sum.v.i64, (int64_t)(N / 1000) * 499500 + 2 * 3 / 2); /* 0+1+2 tail */
    double x[COPROC_MODEL_MAX_FEATURES] = {-1, -1, -1}, secs = -1;
    assert_ok(rt, coproc_model_last(rt, 0, COPROC_OP_REDUCE, x, &secs, &after));
    /* The first run may have built the program (not observed); the rest are. */
    if (after < before + 3)
        fail_msg("observations %llu -> %llu after 4 reductions", (unsigned long long)before,
                 (unsigned long long)after);
    assert_true(x[0] == (double)N * 4); /* reduce's feature: input bytes */
    assert_true(x[1] == -1);            /* one feature: the rest left alone */
    assert_true(secs > 0 && secs < 10);
    coproc_column_free(col);
}

static void test_measure_bandwidth(void **state)
{
    (void)state;
    double bw = -1;
    assert_ok(rt, coproc_measure_bandwidth(rt, 0, 8u << 20, 2, &bw));
    /* More than 10 MB/s and less than 100 TB/s, bytes read + written. */
    if (!(bw > 1e7 && bw < 1e14))
        fail_msg("copy bandwidth %g B/s", bw);
    bw = -1;
    assert_ok(rt, coproc_measure_bandwidth(rt, 0, 17, 1, &bw)); /* rounded down to 16 */
    assert_true(bw > 0);
}

typedef struct progress {
    int calls, empty;
    char last[256];
} progress;

static void on_progress(void *user, const char *what)
{
    progress *p = user;
    p->calls++;
    if (!what || !what[0])
        p->empty++;
    else
        snprintf(p->last, sizeof p->last, "%s", what);
}

static void test_calibrate(void **state)
{
    (void)state;
    progress pr = {0, 0, ""};
    double t0 = test_now();
    assert_ok(rt, coproc_calibrate(rt, 0, 0, on_progress, &pr, &cal));
    double took = test_now() - t0;
    print_message("quick calibration: %.2f s, %d progress lines (last \"%s\")\n", took, pr.calls,
                  pr.last);
    assert_non_null(cal);
    assert_true(pr.calls >= 5);
    assert_int_equal(pr.empty, 0);
    json_t *doc = parse_profile(cal);
    check_schema(doc, 1);
    assert_string_equal(json_string_value(json_object_get(doc, "device")), info.name);
    json_decref(doc);
    /* The device's own profile is not changed, nor anything saved. */
    coproc_profile *cur = NULL;
    assert_ok(rt, coproc_profile_current(rt, 0, &cur));
    assert_true(coproc_profile_transfer_time(cur, 1, 1, MiB) < 0);
    coproc_profile_free(cur);
    coproc_profile *p = (coproc_profile *)&p;
    expect_fail(COPROC_IO_ERROR, coproc_profile_load(rt, 0, &p), "");
    assert_null(p);
}

static void test_profile_predictions(void **state)
{
    (void)state;
    if (!cal)
        fail_msg("no calibrated profile (test_calibrate failed)");
    json_t *doc = parse_profile(cal);
    for (int k = 0; k < 4; k++) {
        /* xfer_kinds order: h2d pinned, d2h pinned, h2d pageable, d2h pageable. */
        int to = k % 2 == 0, pinned = k < 2;
        json_t *x = json_object_get(json_object_get(doc, "transfer"), xfer_kinds[k]);
        double lat = num(x, "latency_s"), bw = num(x, "bytes_per_s");
        json_t *pts = json_object_get(x, "points");
        size_t n = json_array_size(pts);
        assert_true(n >= 2);
        double xs[64], ts[64];
        assert_true(n <= 64);
        for (size_t i = 0; i < n; i++) {
            xs[i] = json_number_value(json_array_get(json_array_get(pts, i), 0));
            ts[i] = json_number_value(json_array_get(json_array_get(pts, i), 1));
        }
#define T(b) coproc_profile_transfer_time(cal, to, pinned, (b))
#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * fabs(b))
        assert_true(T(0) == 0 && T(-4096) == 0);
        /* Below the sweep: the fitted line, rising. */
        double prev = 0;
        for (double b = 1; b < xs[0]; b *= 3) {
            double t = T(b);
            if (!NEAR(t, lat + b / bw) || !(t > prev))
                fail_msg("%s: %g bytes below the sweep take %g s (line %g s, %g s before)",
                         xfer_kinds[k], b, t, lat + b / bw, prev);
            prev = t;
        }
        /* Inside: through each measured point, and between two points within
         * them, rising where they rise (the points are medians: on a busy
         * machine a larger size can have measured faster). */
        int falls = 0;
        for (size_t i = 0; i < n; i++) {
            if (!NEAR(T(xs[i]), ts[i]))
                fail_msg("%s: %g bytes (a sweep point) take %g s, measured %g s", xfer_kinds[k],
                         xs[i], T(xs[i]), ts[i]);
            if (i + 1 == n)
                break;
            double lo = fmin(ts[i], ts[i + 1]), hi = fmax(ts[i], ts[i + 1]);
            falls += ts[i + 1] < ts[i];
            prev = ts[i];
            for (int j = 1; j < 8; j++) {
                double b = xs[i] + (xs[i + 1] - xs[i]) * j / 8, t = T(b);
                if (t < lo * (1 - 1e-9) || t > hi * (1 + 1e-9) ||
                    (ts[i + 1] >= ts[i] && t < prev) || (ts[i + 1] < ts[i] && t > prev))
                    fail_msg("%s: %g bytes take %g s, between points [%g, %g] and [%g, %g]",
                             xfer_kinds[k], b, t, xs[i], ts[i], xs[i + 1], ts[i + 1]);
                prev = t;
            }
        }
        if (falls)
            print_message("%s: %d of %zu sweep segments fall (noisy medians)\n", xfer_kinds[k],
                          falls, n - 1);
        /* Beyond: rising, along the last segment where it rises, else from the
         * last point at the fitted bandwidth. */
        prev = T(xs[n - 1]);
        for (double f = 1.5; f <= 64; f *= 2) {
            double b = xs[n - 1] * f, t = T(b);
            if (!(t > prev))
                fail_msg("%s: %g bytes beyond the sweep take %g s, after %g s", xfer_kinds[k], b,
                         t, prev);
            if (ts[n - 1] > ts[n - 2])
                assert_true(NEAR(t, ts[n - 1] + (b - xs[n - 1]) * (ts[n - 1] - ts[n - 2]) /
                                                    (xs[n - 1] - xs[n - 2])));
            else /* the last segment falls: on from the last point at the fitted rate */
                assert_true(NEAR(t, ts[n - 1] + (b - xs[n - 1]) / bw));
            prev = t;
        }
        /* 1 GiB at more than 100 TB/s or less than 10 MB/s is not a prediction. */
        double g = T(1024 * MiB);
        assert_true(g > 1024 * MiB / 1e14 && g < 1024 * MiB / 1e7);
#undef T
#undef NEAR
    }
    json_decref(doc);
    double x[COPROC_MODEL_MAX_FEATURES] = {4 * MiB, 0, 0};
    double small = coproc_profile_predict(cal, COPROC_OP_REDUCE, x);
    x[0] = 64 * MiB;
    double big = coproc_profile_predict(cal, COPROC_OP_REDUCE, x);
    assert_true(small > 0 && big >= small);
    double sx[COPROC_MODEL_MAX_FEATURES] = {4 * MiB, (double)(1 << 20) * log2(1 << 20), 0};
    assert_true(coproc_profile_predict(cal, COPROC_OP_SORT, sx) > 0);
    assert_true(coproc_profile_predict(cal, COPROC_OP_KIND_COUNT, x) < 0);
}

/* use, current, estimates from it, save_device, load; damaged files. */
static void test_profile_use_save_load(void **state)
{
    (void)state;
    if (!cal)
        fail_msg("no calibrated profile (test_calibrate failed)");
    assert_ok(rt, coproc_profile_use(rt, 0, cal));
    coproc_profile *cur = NULL;
    assert_ok(rt, coproc_profile_current(rt, 0, &cur));
    for (int to = 0; to < 2; to++)
        for (int pinned = 0; pinned < 2; pinned++)
            for (double b = 4096; b <= 256 * MiB; b *= 4)
                assert_true(coproc_profile_transfer_time(cur, to, pinned, b) ==
                            coproc_profile_transfer_time(cal, to, pinned, b));
    double x[COPROC_MODEL_MAX_FEATURES] = {4 * MiB, 0, 0};
    assert_true(coproc_profile_predict(cur, COPROC_OP_REDUCE, x) ==
                coproc_profile_predict(cal, COPROC_OP_REDUCE, x));
    json_t *doc = parse_profile(cur);
    check_schema(doc, 1);
    json_decref(doc);
    coproc_profile_free(cur);

    /* Estimates now come from the fitted model. */
    enum { SMALL = 1 << 16, BIG = 1 << 22 };
    int32_t *rows = calloc(BIG, sizeof *rows);
    assert_non_null(rows);
    coproc_column *a = NULL, *b = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, rows, SMALL, &a));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, rows, BIG, &b));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = a;
    double es = -1, ts = -1, eb = -1, tb = -1;
    assert_ok(rt, coproc_op_estimate(rt, &op, 0, &es, &ts));
    op.a = b;
    assert_ok(rt, coproc_op_estimate(rt, &op, 0, &eb, &tb));
    print_message("reduce estimate: %d rows %.3g s (transfer %.3g s), %d rows %.3g s (%.3g s)\n",
                  SMALL, es, ts, BIG, eb, tb);
    assert_true(es > 0 && ts >= 0 && ts <= es);
    assert_true(eb > es && tb >= ts && tb <= eb);
    if (info.host_unified_memory)
        assert_true(ts == 0 && tb == 0); /* zero-copy: nothing moves */
    else
        assert_true(tb > 0);
    /* float64 without fp64 cannot run. */
    if (!info.has_fp64) {
        coproc_column *f = NULL;
        assert_ok(rt, coproc_column_wrap(rt, COPROC_FLOAT64, rows, 16, &f));
        op.a = f;
        expect_fail(COPROC_UNSUPPORTED, coproc_op_estimate(rt, &op, 0, &es, NULL), "fp64");
        coproc_column_free(f);
    }
    coproc_column_free(a);
    coproc_column_free(b);
    free(rows);

    /* Save, then load what was saved. */
    assert_ok(rt, coproc_profile_save_device(rt, 0, cal));
    char path[1100];
    profile_path(path, sizeof path);
    coproc_profile *loaded = NULL;
    assert_ok(rt, coproc_profile_load(rt, 0, &loaded));
    assert_non_null(loaded);
    char *j1 = coproc_profile_json(cal), *j2 = coproc_profile_json(loaded);
    assert_non_null(j1);
    assert_non_null(j2);
    assert_string_equal(j1, j2);
    free(j2);
    /* The file holds that document. */
    json_error_t err;
    json_t *file = json_load_file(path, 0, &err);
    assert_non_null(file);
    json_t *mine = json_loads(j1, 0, &err);
    assert_true(json_equal(file, mine));
    json_decref(mine);
    free(j1);
    coproc_profile_free(loaded);

    /* Damaged files: CORRUPT_PROFILE, a message, *out NULL. */
    char *good = read_text(path);
    coproc_profile *p;
    const char *damaged[] = {"", "{", "not json", "[]"};
    for (size_t i = 0; i < sizeof damaged / sizeof *damaged; i++) {
        write_text(path, damaged[i]);
        p = (coproc_profile *)&p;
        expect_fail(COPROC_CORRUPT_PROFILE, coproc_profile_load(rt, 0, &p), "");
        assert_null(p);
    }
    /* Cut short. */
    char *cut = strdup(good);
    cut[strlen(cut) / 2] = '\0';
    write_text(path, cut);
    free(cut);
    p = (coproc_profile *)&p;
    expect_fail(COPROC_CORRUPT_PROFILE, coproc_profile_load(rt, 0, &p), "");
    assert_null(p);
    /* Another device's, and another version. */
    json_t *edit = json_loads(good, 0, &err);
    assert_non_null(edit);
    json_object_set_new(edit, "fingerprint", json_string("Other|1.0|Other device|1|OpenCL 3.0||x"));
    char *text = json_dumps(edit, JSON_COMPACT);
    write_text(path, text);
    free(text);
    p = (coproc_profile *)&p;
    expect_fail(COPROC_CORRUPT_PROFILE, coproc_profile_load(rt, 0, &p), "");
    assert_null(p);
    json_decref(edit);
    edit = json_loads(good, 0, &err);
    json_object_set_new(edit, "schema_version", json_integer(1));
    text = json_dumps(edit, JSON_COMPACT);
    write_text(path, text);
    free(text);
    json_decref(edit);
    expect_fail(COPROC_CORRUPT_PROFILE, coproc_profile_load(rt, 0, &p), "");
    /* A good file again loads. */
    write_text(path, good);
    free(good);
    assert_ok(rt, coproc_profile_load(rt, 0, &p));
    coproc_profile_free(p);
    json_decref(file);
}

static void test_column_write(void **state)
{
    (void)state;
    /* 3 MiB + a few rows, so that pageable copies go through the staging
     * buffers in chunks and copies of 1 MiB and more are timed. */
    enum { N = (3 << 20) / 4 + 37 };
    int32_t *src = malloc(N * sizeof *src), *back = malloc(N * sizeof *back);
    assert_non_null(src);
    assert_non_null(back);
    for (int i = 0; i < N; i++)
        src[i] = i * 7 - 1000;
    coproc_column *col = NULL, *pinned = NULL, *host = NULL;
    assert_ok(rt, coproc_column_alloc(rt, 0, COPROC_INT32, N, &col));
    coproc_device_stats st0, st1;
    st0.struct_size = st1.struct_size = sizeof st0;
    assert_ok(rt, coproc_device_stats_get(rt, 0, &st0));
    /* The whole column from pageable memory. */
    assert_ok(rt, coproc_column_write(col, 0, src, N, 0));
    assert_ok(rt, coproc_device_stats_get(rt, 0, &st1));
    assert_true(st1.bytes_h2d - st0.bytes_h2d == (uint64_t)N * 4);
    assert_true(st1.transfers_timed > st0.transfers_timed);
    assert_ok(rt, coproc_column_download(col, back, N));
    assert_memory_equal(back, src, N * sizeof *src);
    /* A range from pinned memory: only those rows change. */
    enum { FIRST = 1001, ROWS = 300000 };
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, ROWS, &pinned));
    int32_t *pin = coproc_column_host_data(pinned);
    assert_non_null(pin);
    for (int i = 0; i < ROWS; i++)
        pin[i] = -i;
    assert_ok(rt, coproc_column_write(col, FIRST, pin, ROWS, COPROC_WRITE_PINNED_SOURCE));
    assert_ok(rt, coproc_column_download(col, back, N));
    for (int i = 0; i < N; i++) {
        int32_t want = i >= FIRST && i < FIRST + ROWS ? -(i - FIRST) : src[i];
        if (back[i] != want)
            fail_msg("row %d: %d, expected %d", i, back[i], want);
    }
    /* The last row alone; nothing at the end. */
    int32_t one = 4242;
    assert_ok(rt, coproc_column_write(col, N - 1, &one, 1, 0));
    assert_ok(rt, coproc_column_write(col, N, NULL, 0, 0));
    assert_ok(rt, coproc_column_write(col, 5, NULL, 0, 0));
    assert_ok(rt, coproc_column_download(col, back, N));
    assert_int_equal(back[N - 1], 4242);

    /* Errors. */
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, src, 16, &host));
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_column_write(host, 0, src, 1, 0), "host column");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_column_write(col, 0, src, 1, 2u), "flags");
    expect_fail(COPROC_OUT_OF_RANGE, coproc_column_write(col, N, src, 1, 0), "rows");
    expect_fail(COPROC_OUT_OF_RANGE, coproc_column_write(col, N + 1, src, 0, 0), "rows");
    expect_fail(COPROC_OUT_OF_RANGE, coproc_column_write(col, 1, src, N, 0), "rows");
    expect_fail(COPROC_OUT_OF_RANGE, coproc_column_write(col, 1, src, SIZE_MAX, 0), "rows");
    expect_fail(COPROC_NULL_POINTER, coproc_column_write(col, 0, NULL, 1, 0), "src is NULL");
    assert_ok(rt, coproc_column_download(col, back, N)); /* none of them wrote */
    assert_int_equal(back[N - 1], 4242);
    assert_int_equal(back[0], src[0]);
    coproc_column_free(host);
    coproc_column_free(pinned);
    coproc_column_free(col);
    free(src);
    free(back);
}

/* The calibrated profile with each transfer sweep cut at `end` bytes (and,
 * with extra > 0, a last point at extra bytes, at the last point's rate),
 * written as the device's profile file and loaded back. */
static coproc_profile *cut_profile(double end, double extra)
{
    char *text = coproc_profile_json(cal);
    assert_non_null(text);
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    free(text);
    assert_non_null(doc);
    json_t *t = json_object_get(doc, "transfer");
    for (int k = 0; k < 4; k++) {
        json_t *pts = json_object_get(json_object_get(t, xfer_kinds[k]), "points");
        while (json_array_size(pts) > 0 &&
               json_number_value(json_array_get(json_array_get(pts, json_array_size(pts) - 1),
                                                0)) > end)
            json_array_remove(pts, json_array_size(pts) - 1);
        assert_true(json_array_size(pts) >= 2);
        if (extra > 0) {
            json_t *last = json_array_get(pts, json_array_size(pts) - 1);
            double b = json_number_value(json_array_get(last, 0));
            double t = json_number_value(json_array_get(last, 1));
            json_array_append_new(pts, json_pack("[ff]", extra, t * extra / b));
        }
    }
    char path[1100];
    profile_path(path, sizeof path);
    text = json_dumps(doc, JSON_COMPACT);
    write_text(path, text);
    free(text);
    json_decref(doc);
    coproc_profile *p = NULL;
    assert_ok(rt, coproc_profile_load(rt, 0, &p));
    return p;
}

/* b is one of the sizes of p's host->device sweep from pinned or pageable memory. */
static int is_sweep_size(const coproc_profile *p, int pinned, double b)
{
    json_t *doc = parse_profile(p);
    json_t *pts = json_object_get(json_object_get(json_object_get(doc, "transfer"),
                                                  pinned ? "h2d_pinned" : "h2d_pageable"),
                                  "points");
    int found = 0;
    for (size_t i = 0; i < json_array_size(pts); i++)
        found |= json_number_value(json_array_get(json_array_get(pts, i), 0)) == b;
    json_decref(doc);
    return found;
}

static void test_check_transfers(void **state)
{
    (void)state;
    if (!cal)
        fail_msg("no calibrated profile (test_calibrate failed)");
    coproc_profile *p = cut_profile(2 * MiB, 0);
    for (int pinned = 1; pinned >= 0; pinned--) {
        coproc_transfer_check c;
        memset(&c, 0xff, sizeof c);
        c.struct_size = sizeof c;
        double t0 = test_now();
        assert_ok(rt, coproc_check_transfers(rt, 0, p, pinned, 2, 42 + pinned, &c));
        print_message("transfer check (%s, 2 sizes, sweep to 2 MiB): %.2f s\n",
                      pinned ? "pinned" : "pageable", test_now() - t0);
        assert_int_equal(c.struct_size, sizeof c);
        assert_int_equal(c.points, 2);
        for (int d = 0; d < 2; d++) {
            for (int k = 0; k < 2; k++) {
                double b = c.bytes[d][k];
                if (!(b >= MiB && b < 2 * MiB) || fmod(b, 4096) != 0 || is_sweep_size(p, pinned, b))
                    fail_msg("check size %g", b);
                assert_true(c.measured[d][k] > 0);
                assert_true(c.predicted[d][k] ==
                            coproc_profile_transfer_time(p, d == 0, pinned, b));
                assert_true(c.interpolated[d][k] > 0);
                assert_true(c.live[d][k] > 0);
                /* The ratio is printed, not bounded: a timing on a shared
                 * machine (CI ran a 20x bound once and a parallel test's
                 * load made the calibration's sweep 20x slow). */
                double r = c.measured[d][k] / c.predicted[d][k];
                if (!isfinite(r) || !(r > 0))
                    fail_msg("%g bytes: measured %g s, predicted %g s", b, c.measured[d][k],
                             c.predicted[d][k]);
                print_message("%s %s %g bytes: measured/predicted %.2f\n",
                              pinned ? "pinned" : "pageable", d == 0 ? "h2d" : "d2h", b, r);
            }
            assert_true(c.drift[d] > 0 && c.level[d] > 0);
            assert_true(c.bytes[d][0] == c.bytes[0][0]); /* the same sizes each way */
        }
        /* Nothing past the points measured is filled. */
        assert_true(c.measured[0][2] == 0 && c.bytes[1][5] == 0);
    }
    /* A caller's smaller struct: only its prefix is written. */
    coproc_transfer_check c2;
    memset(&c2, 0xab, sizeof c2);
    c2.struct_size = offsetof(coproc_transfer_check, drift);
    assert_ok(rt, coproc_check_transfers(rt, 0, p, 1, 1, 7, &c2));
    assert_int_equal(c2.points, 1);
    assert_true(c2.measured[0][0] > 0);
    const unsigned char *rest = (const unsigned char *)&c2 + offsetof(coproc_transfer_check, drift);
    for (size_t i = 0; i < sizeof c2 - offsetof(coproc_transfer_check, drift); i++)
        assert_int_equal(rest[i], 0xab);
    coproc_profile_free(p);

    /* A sweep that ends 4 KiB past 1 MiB leaves no size to draw (multiples
     * of 4 KiB from 1 MiB up, below its end, none a sweep size): refused, not
     * drawn for ever. */
    p = cut_profile(MiB, MiB + 4096);
    coproc_transfer_check c;
    c.struct_size = sizeof c;
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, p, 1, 1, 1, &c),
                "no size between 1 MiB");
    expect_fail(COPROC_INVALID_ARGUMENT, coproc_check_transfers(rt, 0, p, 0, 3, 9, &c),
                "no size between 1 MiB");
    coproc_profile_free(p);
    /* Restore the calibrated profile file. */
    assert_ok(rt, coproc_profile_save_device(rt, 0, cal));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_model_fit_points),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_before_calibration),
        cmocka_unit_test(test_model_last_after_runs),
        cmocka_unit_test(test_measure_bandwidth),
        cmocka_unit_test(test_calibrate),
        cmocka_unit_test(test_profile_predictions),
        cmocka_unit_test(test_profile_use_save_load),
        cmocka_unit_test(test_column_write),
        cmocka_unit_test(test_check_transfers),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
