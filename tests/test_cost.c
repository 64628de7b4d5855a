/* test_cost.c - every operator run feeds its device's cost model: counts,
 * refits, error statistics through coproc_model_stats, and refined models
 * saved with coproc_profile_save come back in the next runtime. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static coproc_runtime *open_in(const char *dir, coproc_calibration cal)
{
    coproc_options o;
    coproc_options_init(&o);
    o.cache_dir = dir;
    o.devices = "0";
    o.calibration = cal;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE)
        exit(TEST_SKIP);
    assert_int_equal(s, COPROC_OK);
    return rt;
}

/* Uploads and downloads of 1 MiB and more teach device 0's transfer level
 * when it has a profile (calibrated); smaller ones, or no profile, do not. */
static void check_transfer_level(coproc_runtime *rt, int calibrated)
{
    enum { BIG = 1 << 19, SMALL = 1 << 12 }; /* rows of 4 bytes: 2 MiB, 16 KiB */
    int32_t *x = calloc(BIG, sizeof *x);
    assert_non_null(x);
    coproc_device_stats before = {.struct_size = sizeof before}, after = before;
    assert_ok(rt, coproc_device_stats_get(rt, 0, &before));
    for (int r = 0; r < 4; r++) {
        coproc_column *big = NULL, *small = NULL;
        assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, BIG, &big));
        assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, SMALL, &small));
        assert_ok(rt, coproc_column_download(big, x, BIG));
        coproc_column_free(big);
        coproc_column_free(small);
    }
    assert_ok(rt, coproc_device_stats_get(rt, 0, &after));
    /* every copy is counted, timed or not */
    assert_true(after.bytes_h2d - before.bytes_h2d == 4 * (uint64_t)(BIG + SMALL) * 4);
    assert_true(after.bytes_d2h - before.bytes_d2h == 4 * (uint64_t)BIG * 4);
    assert_int_equal(after.transfers_timed - before.transfers_timed, calibrated ? 8 : 0);
    for (int d = 0; d < 2; d++)
        for (int pinned = 0; pinned < 2; pinned++) {
            double level = after.transfer_level[d][pinned];
            assert_true(isfinite(level) && level > 0);
            if (!calibrated || pinned)
                assert_true(level == 1); /* nothing taught it */
        }
    free(x);
}

static void test_runs_feed_models(void **state)
{
    (void)state;
    unsetenv("COPROC_CACHE_DIR");
    unsetenv("COPROC_CALIBRATE");
    char *dir = test_temp_dir("cost");
    /* Without calibration a model starts empty. */
    coproc_runtime *rt = open_in(dir, COPROC_CALIBRATION_OFF);
    coproc_model_stats m = {.struct_size = sizeof m};
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &m));
    assert_int_equal(m.observations, 0);
    assert_false(m.fitted);
    /* Nothing calibrated, nothing saved: a profile without measurements would be refused. */
    assert_ok(rt, coproc_profile_save(rt));
    check_transfer_level(rt, 0);
    coproc_close(rt);

    /* The quick calibration seeds the models. */
    rt = open_in(dir, COPROC_CALIBRATION_AUTO);
    check_transfer_level(rt, 1);
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &m));
    assert_true(m.fitted);
    uint64_t seeded = m.observations;
    assert_true(seeded >= 2);

    enum { RUNS = 150 };
    int32_t *x = calloc(1 << 16, sizeof *x);
    for (int r = 0; r < RUNS; r++) {
        size_t n = 1000 + (size_t)r * 400;
        coproc_column *col = NULL;
        coproc_scalar out;
        assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, n, &col));
        assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &out));
        coproc_column_free(col);
    }
    /* A failed operator teaches nothing. */
    coproc_scalar out;
    assert_status(COPROC_NULL_POINTER, coproc_reduce(rt, COPROC_REDUCE_SUM, NULL, &out));

    /* Every run while the model learns (the first 64 since open), then one
     * in 32 or 16, or every one after a run of 0.5 ms or more (cost.h). */
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &m));
    uint64_t observed = m.observations - seeded;
    assert_true(observed >= 64 + (RUNS - 64) / 32 && observed <= RUNS);
    assert_true(m.fitted);
    assert_int_equal(m.features, 1);
    assert_true(m.refits >= 1 + (observed >= 100)); /* the seed fit, then every 100 runs */
    assert_true(m.median_rel_error >= 0 && m.p90_rel_error >= m.median_rel_error);
    assert_true(m.coef[0] >= 0 && m.coef[1] >= 0);

    /* Other kinds untouched by reduce runs. */
    coproc_model_stats sort_before = {.struct_size = sizeof sort_before};
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_SORT, &sort_before));
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_SORT, &m));
    assert_int_equal(m.observations, sort_before.observations);

    /* Bad arguments. */
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_stats_get(rt, 0, COPROC_OP_KIND_COUNT, &m));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_stats_get(rt, 7, COPROC_OP_REDUCE, &m));
    assert_status(COPROC_NULL_POINTER, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, NULL));
    coproc_model_stats tiny = {.struct_size = 1};
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &tiny));
    assert_string_equal(coproc_op_kind_name(COPROC_OP_HASH_JOIN), "hash_join");
    assert_string_equal(coproc_op_kind_name((coproc_op_kind)99), "invalid");

    /* Refined models saved into the profile come back with the next runtime. */
    assert_ok(rt, coproc_profile_save(rt));
    coproc_close(rt);
    rt = open_in(dir, COPROC_CALIBRATION_AUTO);
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &m));
    assert_true(m.fitted);
    assert_int_equal(m.observations, seeded + observed);
    coproc_close(rt);
    free(x);
    free(dir); /* the directory is left for inspection under $TMPDIR */
}

/* A run that had to build (or load) its kernel program first is not a sample
 * of the operator's cost: the model skips it and learns from the next. */
static void test_build_is_not_cost(void **state)
{
    (void)state;
    unsetenv("COPROC_CACHE_DIR");
    unsetenv("COPROC_CALIBRATE");
    char *dir = test_temp_dir("cost-build");
    coproc_runtime *rt = open_in(dir, COPROC_CALIBRATION_OFF);
    int32_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = i;
    coproc_column *c;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, v, 1000, &c));
    coproc_scalar sum;
    coproc_model_stats m = {.struct_size = sizeof m};
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, c, &sum)); /* builds the program */
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &m));
    assert_int_equal(m.observations, 0);
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, c, &sum));
    assert_ok(rt, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &m));
    assert_int_equal(m.observations, 1);
    assert_int_equal(sum.v.i64, 999 * 1000 / 2);
    coproc_column_free(c);
    coproc_close(rt);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_runs_feed_models),
                                       cmocka_unit_test(test_build_is_not_cost)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
