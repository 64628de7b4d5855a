/* test_profile.c - device profiles: the JSON round trip of a synthetic
 * profile, save and load through a temporary cache directory, corrupt,
 * truncated, empty, foreign and other-version files rejected with a clear
 * message (never a crash), concurrent saves leaving a whole file, and the
 * transfer-time arithmetic. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#include "core/cache.h"
#include "cost/profile.h"
#include "core/runtime.h"

#define FINGERPRINT "Test Platform|OpenCL 1.2|Test Device|1.0|OpenCL 1.2||coproc-test"

static void fill_fit(coproc__transfer_fit *f, double latency, double bw)
{
    f->latency_s = latency;
    f->bytes_per_s = bw;
    f->points = 0;
    for (double b = 4096; b <= 64.0 * 1048576; b *= 4) {
        f->bytes[f->points] = b;
        f->seconds[f->points] = latency + b / bw;
        f->points++;
    }
}

/* A profile with every field set and fitted models, as calibration makes one. */
static coproc__profile *synthetic(const char *fingerprint)
{
    coproc__profile *p = malloc(sizeof *p);
    assert_non_null(p);
    coproc__profile_init(p, NULL);
    snprintf(p->fingerprint, sizeof p->fingerprint, "%s", fingerprint);
    snprintf(p->device_name, sizeof p->device_name, "Test Device \"quoted\" ünïcode");
    p->created_unix = 1795000000.25;
    p->full = 1;
    p->calibration_seconds = 12.5;
    fill_fit(&p->h2d_pinned, 10e-6, 50e9);
    fill_fit(&p->d2h_pinned, 11e-6, 51e9);
    fill_fit(&p->h2d_pageable, 20e-6, 12e9);
    fill_fit(&p->d2h_pageable, 21e-6, 13e9);
    p->both_directions_bytes_per_s = 93e9;
    p->mem_copy_bytes_per_s = 3.0e12;
    p->mem_read_bytes_per_s = 2.9e12;
    p->int_ops_per_s = 2.5e13;
    p->float_ops_per_s = 5.1e13;
    p->launch_latency_s = 10e-6;
    p->build_source_s = 0.3;
    p->build_cached_s = 0.001;
    test_rng rng = {7};
    for (int k = 0; k < COPROC__OP_KIND_COUNT; k++) {
        coproc__model *m = &p->ops[k];
        assert_int_equal(m->features, coproc__op_kind_features((coproc__op_kind)k));
        for (int i = 0; i < 24; i++) {
            double x[COPROC__MODEL_MAX_FEATURES] = {0};
            for (int j = 0; j < m->features; j++)
                x[j] = (double)(1 + test_rand_below(&rng, 1u << 24));
            double t = 20e-6 + x[0] * 1e-11 + (m->features > 1 ? x[1] * 3e-10 : 0);
            coproc__model_observe(m, x, t);
        }
        if (k != COPROC__OP_SEMI_JOIN) /* one model left unfitted: that must round-trip too */
            assert_int_equal(coproc__model_fit(m), 0);
    }
    return p;
}

/* The document a profile makes, re-read from its text. */
static json_t *through_text(const coproc__profile *p)
{
    json_t *doc = coproc__profile_to_json(p);
    assert_non_null(doc);
    char *text = json_dumps(doc, JSON_INDENT(1));
    assert_non_null(text);
    json_decref(doc);
    json_error_t err;
    json_t *back = json_loads(text, 0, &err);
    free(text);
    assert_non_null(back);
    return back;
}

static void test_names_and_features(void **state)
{
    (void)state;
    assert_string_equal(coproc__op_kind_name(COPROC__OP_REDUCE), "reduce");
    assert_string_equal(coproc__op_kind_name(COPROC__OP_SEMI_JOIN), "semi_join");
    assert_string_equal(coproc__op_kind_name(COPROC__OP_KIND_COUNT), "unknown");
    assert_int_equal(coproc__op_kind_features(COPROC__OP_REDUCE), 1);
    assert_int_equal(coproc__op_kind_features(COPROC__OP_SORT), 2);
    for (int k = 0; k < COPROC__OP_KIND_COUNT; k++) {
        int f = coproc__op_kind_features((coproc__op_kind)k);
        assert_true(f >= 1 && f <= COPROC__MODEL_MAX_FEATURES);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    coproc__profile *p = synthetic(FINGERPRINT);
    json_t *doc = through_text(p);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), "coproc.profile");
    assert_int_equal(json_integer_value(json_object_get(doc, "schema_version")),
                     COPROC__PROFILE_VERSION);

    coproc__profile *q = malloc(sizeof *q);
    char why[512] = "unchanged";
    assert_int_equal(coproc__profile_from_json(q, doc, FINGERPRINT, why, sizeof why), 0);
    assert_string_equal(why, "");
    assert_string_equal(q->fingerprint, p->fingerprint);
    assert_string_equal(q->device_name, p->device_name);
    assert_true(q->created_unix == p->created_unix);
    assert_int_equal(q->full, 1);
    assert_true(q->h2d_pinned.bytes_per_s == p->h2d_pinned.bytes_per_s);
    assert_true(q->d2h_pageable.latency_s == p->d2h_pageable.latency_s);
    assert_int_equal(q->h2d_pinned.points, p->h2d_pinned.points);
    for (int i = 0; i < p->h2d_pinned.points; i++)
        assert_true(q->h2d_pinned.seconds[i] == p->h2d_pinned.seconds[i]);
    assert_true(q->mem_read_bytes_per_s == p->mem_read_bytes_per_s);
    assert_true(q->float_ops_per_s == p->float_ops_per_s);
    assert_true(q->build_cached_s == p->build_cached_s);
    for (int k = 0; k < COPROC__OP_KIND_COUNT; k++) {
        assert_int_equal(q->ops[k].fitted, p->ops[k].fitted);
        for (int c = 0; c <= p->ops[k].features; c++)
            assert_true(fabs(q->ops[k].coef[c] - p->ops[k].coef[c]) <=
                        1e-12 * fabs(p->ops[k].coef[c]));
    }
    /* The re-read profile writes the same document. */
    json_t *again = coproc__profile_to_json(q);
    assert_true(json_equal(doc, again));
    /* Without an expected fingerprint any device's profile reads. */
    assert_int_equal(coproc__profile_from_json(q, doc, NULL, why, sizeof why), 0);
    json_decref(again);
    json_decref(doc);
    free(q);
    free(p);
}

/* from_json on doc must fail, leave *q untouched and name `expect` in why. */
static void expect_rejected(json_t *doc, const char *fingerprint, const char *expect)
{
    coproc__profile *q = malloc(sizeof *q);
    memset(q, 0xab, sizeof *q);
    char why[1024] = "";
    assert_int_equal(coproc__profile_from_json(q, doc, fingerprint, why, sizeof why), -1);
    if (!strstr(why, expect))
        fail_msg("rejection \"%s\" does not mention \"%s\"", why, expect);
    unsigned char *bytes = (unsigned char *)q;
    for (size_t i = 0; i < sizeof *q; i += 97)
        assert_int_equal(bytes[i], 0xab);
    free(q);
}

static void test_rejections(void **state)
{
    (void)state;
    coproc__profile *p = synthetic(FINGERPRINT);
    json_t *good = coproc__profile_to_json(p);
    free(p);

    json_t *d = json_string("not an object");
    expect_rejected(d, FINGERPRINT, "not a JSON object");
    json_decref(d);
#define MUTATE(code, expect)                                                                  \
    do {                                                                                      \
        d = json_deep_copy(good);                                                             \
        code;                                                                                 \
        expect_rejected(d, FINGERPRINT, expect);                                              \
        json_decref(d);                                                                       \
    } while (0)
    MUTATE(json_object_set_new(d, "schema", json_string("coproc.devices")), "schema");
    MUTATE(json_object_set_new(d, "schema_version", json_integer(1)), "schema_version is 1");
    MUTATE(json_object_set_new(d, "schema_version", json_integer(3)), "schema_version is 3");
    MUTATE(json_object_set_new(d, "schema_version", json_string("1")), "schema_version");
    MUTATE(json_object_set_new(d, "fingerprint", json_string("Other|GPU")), "another device");
    MUTATE(json_object_del(d, "launch_latency_s"), "missing field \"launch_latency_s\"");
    MUTATE(json_object_del(json_object_get(d, "memory"), "read_bytes_per_s"),
           "memory.read_bytes_per_s");
    MUTATE(json_object_set_new(d, "launch_latency_s", json_string("fast")), "not a number");
    MUTATE(json_object_set_new(d, "launch_latency_s", json_real(-1)), "out of range");
    MUTATE(json_object_set_new(d, "full", json_integer(1)), "\"full\" is not a boolean");
    MUTATE(json_object_set_new(json_object_get(json_object_get(d, "transfer"), "h2d_pinned"),
                               "bytes_per_s", json_real(0)),
           "transfer.h2d_pinned.bytes_per_s");
    MUTATE(json_object_set_new(json_object_get(json_object_get(d, "transfer"), "d2h_pageable"),
                               "points", json_pack("[[ff][ff]]", 8.0, 1.0, 4.0, 2.0)),
           "increasing order");
    MUTATE(json_object_set_new(json_object_get(json_object_get(d, "transfer"), "d2h_pageable"),
                               "points", json_pack("[[f]]", 8.0)),
           "transfer.d2h_pageable.points");
    MUTATE(json_object_del(json_object_get(d, "operators"), "sort"), "operators.sort");
    MUTATE(json_object_set_new(json_object_get(d, "operators"), "reduce", json_string("x")),
           "operators.reduce");
    MUTATE(json_object_set_new(d, "transfer", json_array()), "\"transfer\" is not an object");
#undef MUTATE
    json_decref(good);
}

static void test_transfer_time(void **state)
{
    (void)state;
    coproc__profile *p = malloc(sizeof *p);
    coproc__profile_init(p, NULL);
    /* Never calibrated: negative; nothing to move: 0. */
    assert_true(coproc__profile_transfer_time(p, 1, 1, 1e6) < 0);
    assert_true(coproc__profile_transfer_time(p, 1, 1, 0) == 0);
    /* A line without points. */
    p->h2d_pageable.latency_s = 20e-6;
    p->h2d_pageable.bytes_per_s = 10e9;
    assert_true(fabs(coproc__profile_transfer_time(p, 1, 0, 1e9) - (20e-6 + 0.1)) < 1e-12);
    assert_true(coproc__profile_transfer_time(p, 0, 0, 1e9) < 0); /* d2h pageable unset */
    /* Points of an exact line: interpolation stays near the line, and is exact
     * at the points. */
    fill_fit(&p->h2d_pinned, 10e-6, 50e9);
    for (int i = 0; i < p->h2d_pinned.points; i++)
        assert_true(fabs(coproc__profile_transfer_time(p, 1, 1, p->h2d_pinned.bytes[i]) -
                         p->h2d_pinned.seconds[i]) < 1e-15);
    for (double b = 5000; b < 64.0 * 1048576; b *= 1.7) {
        double line = 10e-6 + b / 50e9, t = coproc__profile_transfer_time(p, 1, 1, b);
        assert_true(fabs(t - line) / line < 0.10);
    }
    /* Beyond the sweep: the last segment's rate; below it: the line. */
    double big = 1024.0 * 1048576;
    assert_true(fabs(coproc__profile_transfer_time(p, 1, 1, big) - (10e-6 + big / 50e9)) < 1e-9);
    assert_true(fabs(coproc__profile_transfer_time(p, 1, 1, 100) - (10e-6 + 100 / 50e9)) < 1e-15);
    /* A bent curve (caches): the points are followed, not the line. */
    coproc__transfer_fit *f = &p->d2h_pinned;
    f->latency_s = 1e-5;
    f->bytes_per_s = 20e9;
    f->points = 3;
    f->bytes[0] = 1 << 20; f->seconds[0] = 50e-6;  /* 21 GB/s in cache */
    f->bytes[1] = 4 << 20; f->seconds[1] = 200e-6;
    f->bytes[2] = 16 << 20; f->seconds[2] = 4e-3;  /* 4 GB/s from memory */
    double mid = coproc__profile_transfer_time(p, 0, 1, 8 << 20);
    assert_true(fabs(mid - sqrt(200e-6 * 4e-3)) < 1e-12); /* log-log midpoint */
    double beyond = coproc__profile_transfer_time(p, 0, 1, 32 << 20);
    assert_true(fabs(beyond - (4e-3 + (16 << 20) * (4e-3 - 200e-6) / (12 << 20))) < 1e-12);
    /* A last segment that falls (noisy medians): beyond it, on from the last
     * point at the fitted rate, never below it. */
    f->seconds[2] = 150e-6;
    beyond = coproc__profile_transfer_time(p, 0, 1, 32 << 20);
    assert_true(fabs(beyond - (150e-6 + (16 << 20) / 20e9)) < 1e-12);
    assert_true(beyond > coproc__profile_transfer_time(p, 0, 1, 16 << 20));
    free(p);
}

/* ------------------------------------------------------------ with a device */

typedef struct fixture {
    char *dir;
    coproc_runtime *rt;
    coproc__device *dev;
    char path[1200];
} fixture;

static void quiet_log(void *user, coproc_log_level level, const char *msg)
{
    (void)user; (void)level; (void)msg;
}

static int setup_device(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->dir = test_temp_dir("profile");
    setenv("COPROC_CACHE_DIR", fx->dir, 1);
    unsetenv("COPROC_CALIBRATE");
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "0";
    o.calibration = COPROC_CALIBRATION_OFF;
    o.log = quiet_log;
    coproc_status s = coproc_open(&o, &fx->rt);
    *state = fx;
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE) {
        fprintf(stderr, "no device, file tests skipped: %s\n", coproc_errmsg(fx->rt));
        coproc_close(fx->rt);
        fx->rt = NULL;
        return 0;
    }
    assert_int_equal(s, COPROC_OK);
    fx->dev = &fx->rt->devices[0];
    assert_int_equal(coproc__profile_path(fx->rt, fx->dev, fx->path, sizeof fx->path), 0);
    return 0;
}

static int teardown_device(void **state)
{
    fixture *fx = *state;
    coproc_close(fx->rt);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

static void test_path(void **state)
{
    fixture *fx = *state;
    if (!fx->rt)
        skip();
    char expect[1200];
    snprintf(expect, sizeof expect, "%s/profiles/%016llx.json", fx->dir,
             (unsigned long long)coproc__hash_str(COPROC__FNV_SEED, fx->dev->fingerprint));
    assert_string_equal(fx->path, expect);
    assert_int_equal(access(fx->dir, F_OK), 0);
}

static void test_save_load(void **state)
{
    fixture *fx = *state;
    if (!fx->rt)
        skip();
    unlink(fx->path);
    coproc__profile *q = malloc(sizeof *q);
    assert_int_equal(coproc__profile_load(fx->rt, fx->dev, q), COPROC_IO_ERROR); /* none yet */
    coproc__profile *p = synthetic(fx->dev->fingerprint);
    assert_ok(fx->rt, coproc__profile_save(fx->rt, fx->dev, p));
    assert_ok(fx->rt, coproc__profile_load(fx->rt, fx->dev, q));
    json_t *a = coproc__profile_to_json(p), *b = coproc__profile_to_json(q);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    free(p);
    free(q);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* load must say CORRUPT_PROFILE with `expect` and the path in the message. */
static void expect_corrupt(fixture *fx, const char *expect)
{
    coproc__profile *q = malloc(sizeof *q);
    coproc_status s = coproc__profile_load(fx->rt, fx->dev, q);
    if (s != COPROC_CORRUPT_PROFILE)
        fail_msg("load gave %s: %s", coproc_status_name(s), coproc_errmsg(fx->rt));
    const char *msg = coproc_errmsg(fx->rt);
    if (!strstr(msg, expect) || !strstr(msg, fx->path))
        fail_msg("message \"%s\" lacks \"%s\" or the path", msg, expect);
    free(q);
}

static void test_corrupt_files(void **state)
{
    fixture *fx = *state;
    if (!fx->rt)
        skip();
    coproc__profile *p = synthetic(fx->dev->fingerprint);
    json_t *doc = coproc__profile_to_json(p);
    char *text = json_dumps(doc, JSON_INDENT(1));
    size_t len = strlen(text);

    write_bytes(fx->path, "\x7f" "ELF garbage \x01\x02\xff", 17);
    expect_corrupt(fx, "not a whole JSON document");
    write_bytes(fx->path, text, len / 2); /* truncated: a crash while writing */
    expect_corrupt(fx, "not a whole JSON document");
    write_bytes(fx->path, "", 0);
    expect_corrupt(fx, "empty file");
    write_bytes(fx->path, "[1, 2, 3]", 9);
    expect_corrupt(fx, "not a JSON object");

    json_object_set_new(doc, "schema_version", json_integer(99));
    free(text);
    text = json_dumps(doc, 0);
    write_bytes(fx->path, text, strlen(text));
    expect_corrupt(fx, "schema_version is 99");

    json_object_set_new(doc, "schema_version", json_integer(COPROC__PROFILE_VERSION));
    json_object_set_new(doc, "fingerprint", json_string("Another Platform|Another GPU"));
    free(text);
    text = json_dumps(doc, 0);
    write_bytes(fx->path, text, strlen(text));
    expect_corrupt(fx, "another device");

    /* A good save replaces the bad file. */
    assert_ok(fx->rt, coproc__profile_save(fx->rt, fx->dev, p));
    coproc__profile *q = malloc(sizeof *q);
    assert_ok(fx->rt, coproc__profile_load(fx->rt, fx->dev, q));
    free(q);
    free(text);
    json_decref(doc);
    free(p);
}

typedef struct saver {
    fixture *fx;
    coproc__profile *p;
    int failures;
} saver;

static void *save_many(void *arg)
{
    saver *s = arg;
    for (int i = 0; i < 40; i++) {
        s->p->created_unix += 1;
        if (coproc__profile_save(s->fx->rt, s->fx->dev, s->p) != COPROC_OK)
            s->failures++;
    }
    return NULL;
}

static void test_concurrent_saves(void **state)
{
    fixture *fx = *state;
    if (!fx->rt)
        skip();
    saver s[2] = {{fx, synthetic(fx->dev->fingerprint), 0},
                  {fx, synthetic(fx->dev->fingerprint), 0}};
    s[1].p->full = 0; /* the two writers write different documents */
    s[1].p->created_unix = 1e9;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, save_many, &s[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(s[0].failures + s[1].failures, 0);
    coproc__profile *q = malloc(sizeof *q);
    assert_ok(fx->rt, coproc__profile_load(fx->rt, fx->dev, q));
    /* One writer's last document, whole. */
    assert_true(q->created_unix == s[0].p->created_unix || q->created_unix == s[1].p->created_unix);
    free(q);
    free(s[0].p);
    free(s[1].p);
}

int main(void)
{
    const struct CMUnitTest offline[] = {
        cmocka_unit_test(test_names_and_features),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_transfer_time),
    };
    const struct CMUnitTest with_device[] = {
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_save_load),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_concurrent_saves),
    };
    int failed = cmocka_run_group_tests_name("profile", offline, NULL, NULL);
    failed += cmocka_run_group_tests_name("profile files", with_device, setup_device,
                                          teardown_device);
    return failed;
}
