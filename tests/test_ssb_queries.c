/* test_ssb_queries.c - the 13 SSB queries as plans (bench/ssb/ssb_plans.c)
 * equal the scalar reference (which test_ssb_reference checks against SQLite
 * on the same data) in both modes and on both kernel paths: at SF 0.01, and
 * at SF 0.3 for the four queries that select nothing at SF 0.01. A repeated
 * query builds no kernel. With two devices or more, all 13 again split
 * across them (hybrid). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssb_plans.h"
#include "testlib.h"

static const int big_sf_queries[] = {SSB_Q3_2, SSB_Q3_3, SSB_Q3_4, SSB_Q4_3};

static void check_query_as(coproc_runtime *rt, const ssb_tables *t, const ssb_db *db, int q,
                           coproc_query_mode mode, const char *path, int hybrid)
{
    ssb_result want;
    assert_int_equal(ssb_reference_run(db, q, &want), 0);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *root;
    coproc_status s = ssb_plan_build(p, t, q, &root);
    if (s != COPROC_OK)
        fail_msg("%s: building: %s", ssb_query_name(q), coproc_plan_errmsg(p));
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = mode;
    o.hybrid = hybrid;
    for (int rep = 0; rep < (mode == COPROC_QUERY_FUSED ? 2 : 1); rep++) {
        coproc_query_result r;
        s = coproc_query_run(p, root, &o, &r);
        if (s != COPROC_OK)
            fail_msg("%s (%s, mode %d): %s: %s", ssb_query_name(q), path, mode, coproc_status_name(s),
                     coproc_errmsg(rt));
        if (mode == COPROC_QUERY_FUSED && r.note[0])
            fail_msg("%s (%s): fell back to operators: %s", ssb_query_name(q), path, r.note);
        if (rep == 1 && r.kernels_built)
            fail_msg("%s (%s): the repeated query built %llu kernels", ssb_query_name(q), path,
                     (unsigned long long)r.kernels_built);
        ssb_result got;
        assert_int_equal(ssb_result_from_table(r.table, q, &got), 0);
        char why[512];
        if (!ssb_result_equal(&got, &want, why, sizeof why))
            fail_msg("%s (%s, mode %d, sf %g): %s", ssb_query_name(q), path, mode, db->sf, why);
        ssb_result_free(&got);
        coproc_query_result_free(&r);
    }
    ssb_result_free(&want);
    coproc_plan_free(p);
}

static void check_query(coproc_runtime *rt, const ssb_tables *t, const ssb_db *db, int q,
                        coproc_query_mode mode, const char *path)
{
    check_query_as(rt, t, db, q, mode, path, 0);
}

typedef struct run_args {
    const ssb_db *small, *big;
} run_args;

static void each(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)device;
    const run_args *a = user;
    ssb_tables t;
    assert_int_equal(ssb_tables_open(rt, a->small, -1, &t), COPROC_OK);
    for (int mode = 0; mode < 2; mode++)
        for (int q = 0; q < SSB_NQUERIES; q++)
            check_query(rt, &t, a->small, q, mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED, path);
    ssb_tables_close(&t);
    assert_int_equal(ssb_tables_open(rt, a->big, -1, &t), COPROC_OK);
    for (size_t i = 0; i < sizeof big_sf_queries / sizeof big_sf_queries[0]; i++)
        check_query(rt, &t, a->big, big_sf_queries[i], COPROC_QUERY_FUSED, path);
    /* Operator at a time on one path only: the same operators either way. */
    if (strcmp(path, "cpu-path") == 0)
        for (size_t i = 0; i < sizeof big_sf_queries / sizeof big_sf_queries[0]; i++)
            check_query(rt, &t, a->big, big_sf_queries[i], COPROC_QUERY_OPERATORS, path);
    ssb_tables_close(&t);
}

static void test_ssb_plans(void **state)
{
    (void)state;
    ssb_db small, big;
    assert_int_equal(ssb_generate(0.01, &small), 0);
    assert_int_equal(ssb_generate(0.3, &big), 0);
    run_args a = {&small, &big};
    test_each_device_path(each, &a);
    ssb_free(&small);
    ssb_free(&big);
}

/* The string columns as strings (dictionary-encoded, dbgen's values) and
 * the queries comparing strings: the same answers, fused without falling
 * back, and one operator at a time; host columns, and resident on the CPU
 * path. */
static void each_strings(coproc_runtime *rt, int device, const char *path, void *user)
{
    const ssb_db *db = user;
    ssb_tables t;
    assert_int_equal(ssb_tables_open_strings(rt, db, -1, &t), COPROC_OK);
    for (int mode = 0; mode < 2; mode++)
        for (int q = 0; q < SSB_NQUERIES; q++)
            check_query(rt, &t, db, q, mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED, path);
    ssb_tables_close(&t);
    if (strcmp(path, "cpu-path") == 0) {
        assert_int_equal(ssb_tables_open_strings(rt, db, device, &t), COPROC_OK);
        for (int q = 0; q < SSB_NQUERIES; q++)
            check_query(rt, &t, db, q, COPROC_QUERY_FUSED, path);
        ssb_tables_close(&t);
    }
}

static void test_ssb_strings(void **state)
{
    (void)state;
    ssb_db db;
    assert_int_equal(ssb_generate(0.01, &db), 0);
    test_each_device_path(each_strings, &db);
    ssb_free(&db);
}

/* Resident data: the tables uploaded to the device, the same answers. */
static void test_ssb_resident(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    ssb_db db;
    assert_int_equal(ssb_generate(0.01, &db), 0);
    ssb_tables t;
    assert_int_equal(ssb_tables_open(rt, &db, 0, &t), COPROC_OK);
    for (int q = 0; q < SSB_NQUERIES; q++)
        check_query(rt, &t, &db, q, COPROC_QUERY_FUSED, "resident");
    ssb_tables_close(&t);
    ssb_free(&db);
    coproc_close(rt);
}

/* Every device at once: the lineorder group-bys split into morsels. */
static void test_ssb_hybrid(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    if (coproc_device_count(rt) < 2) {
        coproc_close(rt);
        printf("test_ssb_queries: one device: no hybrid runs\n");
        skip();
    }
    test_force_path(rt, 1, 0);
    static const double sfs[] = {0.01, 0.3};
    for (int i = 0; i < 2; i++) {
        ssb_db db;
        assert_int_equal(ssb_generate(sfs[i], &db), 0);
        ssb_tables t;
        assert_int_equal(ssb_tables_open(rt, &db, -1, &t), COPROC_OK);
        for (int q = 0; q < SSB_NQUERIES; q++)
            check_query_as(rt, &t, &db, q, COPROC_QUERY_FUSED, "hybrid", 1);
        ssb_tables_close(&t);
        ssb_free(&db);
    }
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ssb_resident),
        cmocka_unit_test(test_ssb_plans),
        cmocka_unit_test(test_ssb_hybrid),
        cmocka_unit_test(test_ssb_strings),
    };
    /* COPROC_TEST_HYBRID_ONLY: the hybrid runs alone (the two-device suite). */
    if (getenv("COPROC_TEST_HYBRID_ONLY"))
        return _cmocka_run_group_tests("hybrid", tests + 2, 1, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
