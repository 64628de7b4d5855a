/* test_budget_admission.c - query chopping (runtime/data/admission.c): the 13
 * SSB queries (SF 0.01) submitted at once under budgets that hold a few
 * pipelines' columns, or not even one (they stream through in morsels), on
 * every device the runtime has (COPROC_DEVICES; copies forced on host-unified
 * devices, so that every budget counts): each result equals the scalar
 * reference, and on no device did the footprints admitted at once ever
 * exceed its budget; none is left admitted after. Placed, hybrid (two devices
 * or more) and each device forced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssb_plans.h"
#include "testlib.h"

/* Submit the 13 at once (device: -1 placed, else forced; hybrid), wait, check. */
static void all_at_once(coproc_runtime *rt, const ssb_tables *t, const ssb_db *db, int device,
                        int hybrid, const char *what)
{
    coproc_plan *p[SSB_NQUERIES];
    coproc_query_task *task[SSB_NQUERIES];
    for (int q = 0; q < SSB_NQUERIES; q++) {
        coproc_node *root;
        assert_int_equal(coproc_plan_create(rt, &p[q]), COPROC_OK);
        if (ssb_plan_build(p[q], t, q, &root) != COPROC_OK)
            fail_msg("%s: building: %s", ssb_query_name(q), coproc_plan_errmsg(p[q]));
        coproc_query_options o;
        coproc_query_options_init(&o);
        o.device = device;
        o.hybrid = hybrid;
        assert_ok(rt, coproc_query_submit(p[q], root, &o, &task[q]));
    }
    for (int q = 0; q < SSB_NQUERIES; q++) {
        coproc_query_result r;
        coproc_status s = coproc_query_wait(task[q], &r);
        if (s != COPROC_OK)
            fail_msg("%s (%s): %s: %s", ssb_query_name(q), what, coproc_status_name(s), coproc_errmsg(rt));
        ssb_result want, got;
        assert_int_equal(ssb_reference_run(db, q, &want), 0);
        assert_int_equal(ssb_result_from_table(r.table, q, &got), 0);
        char why[512];
        if (!ssb_result_equal(&got, &want, why, sizeof why))
            fail_msg("%s (%s): %s", ssb_query_name(q), what, why);
        ssb_result_free(&got);
        ssb_result_free(&want);
        coproc_query_result_free(&r);
        coproc_plan_free(p[q]);
    }
}

static void run_budget(const ssb_db *db, uint64_t budget)
{
    coproc_options o;
    coproc_options_init(&o);
    o.device_budget_bytes = budget;
    o.disable_zero_copy = 1;
    coproc_runtime *rt = test_open_with(&o);
    int ndev = coproc_device_count(rt);
    ssb_tables t;
    assert_ok(rt, ssb_tables_open(rt, db, -1, &t));
    char what[64];
    for (int rep = 0; rep < 2; rep++) { /* the second with what the first left cached */
        snprintf(what, sizeof what, "budget %llu, placed", (unsigned long long)budget);
        all_at_once(rt, &t, db, -1, 0, what);
        if (ndev > 1) {
            snprintf(what, sizeof what, "budget %llu, hybrid", (unsigned long long)budget);
            all_at_once(rt, &t, db, -1, 1, what);
        }
    }
    for (int d = 0; d < ndev; d++) {
        snprintf(what, sizeof what, "budget %llu, device %d", (unsigned long long)budget, d);
        all_at_once(rt, &t, db, d, 0, what);
    }
    for (int d = 0; d < ndev; d++) {
        coproc_device_stats ds = {.struct_size = sizeof ds};
        assert_ok(rt, coproc_device_stats_get(rt, d, &ds));
        printf("budget %llu, device %d: admitted at most %llu bytes, %llu waits, %llu evictions\n",
               (unsigned long long)budget, d, (unsigned long long)ds.admitted_peak_bytes,
               (unsigned long long)ds.admission_waits, (unsigned long long)ds.cache_evictions);
        assert_int_equal(ds.budget_bytes, budget);
        if (ds.admitted_peak_bytes > ds.budget_bytes)
            fail_msg("device %d admitted %llu bytes at once, over its budget of %llu", d,
                     (unsigned long long)ds.admitted_peak_bytes, (unsigned long long)ds.budget_bytes);
        assert_true(ds.admitted_peak_bytes > 0);
        assert_int_equal(ds.admitted_bytes, 0);
        assert_true(ds.resident_bytes <= ds.budget_bytes);
    }
    ssb_tables_close(&t);
    coproc_close(rt);
}

/* A lineorder column is 240 KB at SF 0.01, a query's pipeline over it four or
 * five of them: 4 MiB holds three or four such pipelines at once, 768 KiB not
 * one (they stream), 256 KiB a morsel of a few thousand rows. */
static void test_admission(void **state)
{
    (void)state;
    ssb_db db;
    assert_int_equal(ssb_generate(0.01, &db), 0);
    static const uint64_t budgets[] = {4u << 20, 768u << 10, 256u << 10};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++)
        run_budget(&db, budgets[i]);
    ssb_free(&db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
