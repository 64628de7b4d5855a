/* test_query_hygiene.c - what a plan may hold and for how long (issue 34):
 * - a node or expression of another plan is refused by every builder and by
 *   coproc_query_run/submit (INVALID_ARGUMENT, naming it), so freeing that
 *   plan never leaves this one pointing into freed memory;
 * - a table freed by its caller before a run, or while a submitted one is in
 *   flight, lives on in the plans that scan it (a result table's columns too);
 * - coproc_drain and coproc_close wait for submitted queries: close with
 *   tasks never waited on, and close while they run, frees them and their
 *   results (ASan, LeakSanitizer and TSan check that nothing is left). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/query.h"
#include "testlib.h"

#define ROWS 4099 /* not a multiple of anything */
#define KEYS 7

static int32_t g_key[ROWS];
static int64_t g_val[ROWS];
static int64_t g_sum[KEYS]; /* SUM(val) by key */

static void make_data(void)
{
    test_rng r = {34};
    memset(g_sum, 0, sizeof g_sum);
    for (int i = 0; i < ROWS; i++) {
        g_key[i] = (int32_t)test_rand_below(&r, KEYS);
        g_val[i] = (int64_t)test_rand_below(&r, 2001) - 1000;
        g_sum[g_key[i]] += g_val[i];
    }
}

/* A table of (k int32, v int64) over the arrays; the columns in cols[2]. */
static coproc_table *make_table(coproc_runtime *rt, coproc_column **cols)
{
    coproc_table *t;
    assert_ok(rt, coproc_table_create(rt, &t));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, g_key, ROWS, &cols[0]));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT64, g_val, ROWS, &cols[1]));
    assert_ok(rt, coproc_table_add(t, "k", cols[0]));
    assert_ok(rt, coproc_table_add(t, "v", cols[1]));
    return t;
}

/* SELECT k, SUM(v) AS s FROM t GROUP BY k, into p. */
static coproc_node *sum_by_key(coproc_plan *p, const coproc_table *t)
{
    const char *keys[] = {"k"};
    coproc_aggregate agg = {COPROC_AGG_SUM, coproc_expr_column(p, "v"), "s"};
    coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, t, "t"), 1, keys, 1, &agg);
    if (!g)
        fail_msg("building the plan: %s", coproc_plan_errmsg(p));
    return g;
}

/* r's rows are the reference's (any order). */
static void check_sums(const coproc_query_result *r)
{
    assert_non_null(r->table);
    assert_int_equal(coproc_table_rows(r->table), KEYS);
    const int32_t *k = coproc_column_host_data(coproc_table_column(r->table, "k"));
    const int64_t *s = coproc_column_host_data(coproc_table_column(r->table, "s"));
    assert_non_null(k);
    assert_non_null(s);
    for (int i = 0; i < KEYS; i++) {
        assert_true(k[i] >= 0 && k[i] < KEYS);
        if (s[i] != g_sum[k[i]])
            fail_msg("key %d: sum %lld, want %lld", k[i], (long long)s[i],
                     (long long)g_sum[k[i]]);
    }
}

/* Fill the heap's recently freed blocks of small sizes with garbage, so a
 * use after free reads it even without AddressSanitizer. */
static void scribble(void)
{
    enum { N = 24 };
    void *b[N * 16];
    int n = 0;
    for (size_t size = 8; size <= 128; size += 8)
        for (int i = 0; i < N && n < N * 16; i++)
            if ((b[n] = malloc(size)))
                memset(b[n++], 0xA5, size);
    for (int i = 0; i < n; i++)
        free(b[i]);
}

/* ---------------------------------------------------------------- ownership */

/* p has recorded INVALID_ARGUMENT about something of another plan, naming it. */
static void expect_foreign(coproc_plan *p, const void *got, const char *what, const char *names)
{
    if (got)
        fail_msg("%s: a node or expression of another plan was accepted", what);
    if (coproc_plan_status(p) != COPROC_INVALID_ARGUMENT ||
        !strstr(coproc_plan_errmsg(p), "another plan") || !strstr(coproc_plan_errmsg(p), names))
        fail_msg("%s: status %s, message \"%s\" (wanted INVALID_ARGUMENT naming %s as another "
                 "plan's)", what, coproc_status_name(coproc_plan_status(p)),
                 coproc_plan_errmsg(p), names);
}

static void test_foreign_nodes_and_exprs(void **state)
{
    (void)state;
    make_data();
    coproc_runtime *rt = test_open(NULL);
    coproc_column *cols[2];
    coproc_table *t = make_table(rt, cols);

    /* q: the other plan, whose node and expressions p's builders are given. */
    coproc_plan *q;
    assert_ok(rt, coproc_plan_create(rt, &q));
    coproc_node *qscan = coproc_plan_scan(q, t, "theirs");
    coproc_expr *qcol = coproc_expr_column(q, "v");
    coproc_expr *qint = coproc_expr_int(q, 1);
    coproc_expr *qpred = coproc_expr_compare(q, COPROC_CMP_GT, coproc_expr_column(q, "v"), qint);
    assert_non_null(qscan);
    assert_non_null(qpred);

    enum {
        FILTER_IN, FILTER_PRED, PROJECT_IN, PROJECT_EXPR, JOIN_PROBE, JOIN_BUILD, JOIN_KEYS_BUILD,
        GROUP_IN, GROUP_ARG, ORDER_IN, ARITH, COMPARE, BETWEEN, IN_X, IN_LIST, PREFIX, AND, OR,
        NOT, CASES
    };
    for (int c = 0; c < CASES; c++) {
        coproc_plan *p;
        assert_ok(rt, coproc_plan_create(rt, &p));
        coproc_node *s = coproc_plan_scan(p, t, "mine");
        coproc_expr *v = coproc_expr_column(p, "v"), *one = coproc_expr_int(p, 1);
        coproc_expr *pred = coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "v"),
                                                coproc_expr_int(p, 0));
        assert_non_null(s);
        assert_non_null(pred);
        const char *k[] = {"k"}, *kk[] = {"k"}, *names[] = {"a", "b"};
        coproc_order_key ok = {"k", 0, 0};
        char what[32];
        snprintf(what, sizeof what, "case %d", c);
        switch (c) {
        case FILTER_IN:
            expect_foreign(p, coproc_plan_filter(p, qscan, pred), what, "scan#1 theirs");
            break;
        case FILTER_PRED:
            expect_foreign(p, coproc_plan_filter(p, s, qpred), what, "the predicate");
            break;
        case PROJECT_IN:
            expect_foreign(p, coproc_plan_project(p, qscan, 1, names, &v), what, "scan#1 theirs");
            break;
        case PROJECT_EXPR:
            expect_foreign(p, coproc_plan_project(p, s, 2, names, (coproc_expr *[]){v, qcol}),
                           what, "expression 1");
            break;
        case JOIN_PROBE:
            expect_foreign(p, coproc_plan_join(p, COPROC_JOIN_SEMI, qscan, "k", s, "k"), what,
                           "probe node (scan#1 theirs)");
            break;
        case JOIN_BUILD:
            expect_foreign(p, coproc_plan_join(p, COPROC_JOIN_SEMI, s, "k", qscan, "k"), what,
                           "build node (scan#1 theirs)");
            break;
        case JOIN_KEYS_BUILD:
            expect_foreign(p, coproc_plan_join_keys(p, COPROC_JOIN_SEMI, s, 1, k, qscan, kk),
                           what, "build node (scan#1 theirs)");
            break;
        case GROUP_IN:
            expect_foreign(p, coproc_plan_group_by(p, qscan, 1, k, 1,
                                                   (coproc_aggregate[]){{COPROC_AGG_SUM, v, "s"}}),
                           what, "scan#1 theirs");
            break;
        case GROUP_ARG:
            expect_foreign(p, coproc_plan_group_by(p, s, 1, k, 2,
                                                   (coproc_aggregate[]){{COPROC_AGG_SUM, v, "s"},
                                                                        {COPROC_AGG_MAX, qcol, "m"}}),
                           what, "the argument of aggregate 1");
            break;
        case ORDER_IN:
            expect_foreign(p, coproc_plan_order_by(p, qscan, 1, &ok, 0), what, "scan#1 theirs");
            break;
        case ARITH:
            expect_foreign(p, coproc_expr_arith(p, COPROC_ARITH_ADD, v, qint), what, "operand 2");
            break;
        case COMPARE:
            expect_foreign(p, coproc_expr_compare(p, COPROC_CMP_EQ, qcol, one), what, "operand 1");
            break;
        case BETWEEN:
            expect_foreign(p, coproc_expr_between(p, v, one, qint), what, "operand 3");
            break;
        case IN_X:
            expect_foreign(p, coproc_expr_in(p, qcol, 1, &one), what, "operand 1");
            break;
        case IN_LIST:
            expect_foreign(p, coproc_expr_in(p, v, 2, (coproc_expr *[]){one, qint}), what,
                           "list item 1");
            break;
        case PREFIX:
            expect_foreign(p, coproc_expr_prefix(p, qcol, "x"), what, "operand 1");
            break;
        case AND:
            expect_foreign(p, coproc_expr_and(p, pred, qpred), what, "operand 2");
            break;
        case OR:
            expect_foreign(p, coproc_expr_or(p, qpred, pred), what, "operand 1");
            break;
        case NOT:
            expect_foreign(p, coproc_expr_not(p, qpred), what, "operand 1");
            break;
        }
        /* The run returns the recorded error; nothing of q is read after q goes. */
        coproc_query_result r;
        assert_status(COPROC_INVALID_ARGUMENT, coproc_query_run(p, s, NULL, &r));
        assert_null(r.table);
        assert_non_null(strstr(coproc_errmsg(rt), "another plan"));
        coproc_plan_free(p);
    }

    /* A root of another plan: refused by run and submit, naming it. */
    coproc_plan *p;
    assert_ok(rt, coproc_plan_create(rt, &p));
    coproc_node *mine = sum_by_key(p, t);
    coproc_query_result r;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_query_run(p, qscan, NULL, &r));
    assert_non_null(strstr(coproc_errmsg(rt), "scan#1 theirs"));
    coproc_query_task *task = (coproc_query_task *)1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_query_submit(p, qscan, NULL, &task));
    assert_null(task);
    assert_non_null(strstr(coproc_errmsg(rt), "scan#1 theirs"));
    assert_int_equal(coproc_plan_status(p), COPROC_OK); /* the plan itself is fine */

    /* With q gone, p (which never took q's parts) runs as before. */
    coproc_plan_free(q);
    scribble();
    assert_ok(rt, coproc_query_run(p, mine, NULL, &r));
    check_sums(&r);
    coproc_query_result_free(&r);
    coproc_plan_free(p);

    coproc_table_free(t);
    coproc_column_free(cols[0]);
    coproc_column_free(cols[1]);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- table lifetime */

static void test_table_freed_before_and_during_runs(void **state)
{
    (void)state;
    make_data();
    coproc_runtime *rt = test_open(NULL);
    coproc_column *cols[2];

    /* Freed by its caller once scanned, before the plan runs (twice, both modes). */
    coproc_table *t = make_table(rt, cols);
    coproc_plan *p;
    assert_ok(rt, coproc_plan_create(rt, &p));
    coproc_node *root = sum_by_key(p, t);
    coproc_table_free(t);
    scribble();
    for (int mode = 0; mode < 2; mode++) {
        coproc_query_options o;
        coproc_query_options_init(&o);
        o.mode = mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
        coproc_query_result r;
        assert_ok(rt, coproc_query_run(p, root, &o, &r));
        check_sums(&r);
        coproc_query_result_free(&r);
    }

    /* Freed while submitted runs are in flight. */
    coproc_plan *p2;
    assert_ok(rt, coproc_plan_create(rt, &p2));
    coproc_column *cols2[2]; /* new columns: cols[] stay p's */
    t = make_table(rt, cols2);
    coproc_node *root2 = sum_by_key(p2, t);
    enum { N = 3 };
    coproc_query_task *task[N];
    for (int i = 0; i < N; i++)
        assert_ok(rt, coproc_query_submit(p2, root2, NULL, &task[i]));
    coproc_table_free(t);
    scribble();
    for (int i = 0; i < N; i++) {
        coproc_query_result r;
        assert_ok(rt, coproc_query_wait(task[i], &r));
        check_sums(&r);
        coproc_query_result_free(&r);
    }
    coproc_plan_free(p2); /* the table goes here */
    coproc_column_free(cols2[0]);
    coproc_column_free(cols2[1]);

    /* A result table scanned by the next plan, its result freed first: the
     * columns it owns live on in that plan. */
    coproc_query_result r1;
    assert_ok(rt, coproc_query_run(p, root, NULL, &r1));
    coproc_plan *p3;
    assert_ok(rt, coproc_plan_create(rt, &p3));
    const char *keys[] = {"k"};
    coproc_aggregate agg = {COPROC_AGG_SUM, coproc_expr_column(p3, "s"), "s"};
    coproc_node *root3 =
        coproc_plan_group_by(p3, coproc_plan_scan(p3, r1.table, "r1"), 1, keys, 1, &agg);
    assert_non_null(root3);
    coproc_query_result_free(&r1);
    scribble();
    coproc_query_result r3;
    assert_ok(rt, coproc_query_run(p3, root3, NULL, &r3));
    check_sums(&r3);
    coproc_query_result_free(&r3);
    coproc_plan_free(p3);

    coproc_plan_free(p); /* and the first table here */
    coproc_column_free(cols[0]);
    coproc_column_free(cols[1]);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- close */

/* Shutting down as coproc.h says - drain, free the columns, close - with
 * queries never waited on: drain returns once their runs have ended, close
 * frees them and their results. */
static void test_drain_then_close(void **state)
{
    (void)state;
    make_data();
    coproc_runtime *rt = test_open(NULL);
    coproc_column *cols[2];
    coproc_table *t = make_table(rt, cols);
    coproc_plan *p;
    assert_ok(rt, coproc_plan_create(rt, &p));
    coproc_node *root = sum_by_key(p, t);
    coproc_table_free(t);
    enum { N = 6 };
    coproc_query_task *task[N];
    for (int i = 0; i < N; i++)
        assert_ok(rt, coproc_query_submit(p, root, NULL, &task[i]));
    for (int i = 0; i < N; i += 3) { /* two waited on, four never */
        coproc_query_result r;
        assert_ok(rt, coproc_query_wait(task[i], &r));
        check_sums(&r);
        coproc_query_result_free(&r);
    }
    coproc_drain(rt);
    coproc_plan_free(p);
    coproc_column_free(cols[0]);
    coproc_column_free(cols[1]);
    scribble();
    coproc_close(rt);
}

/* Kept here, not freed: the runs read them until close has waited for them,
 * and a column cannot be freed after its runtime. Rows enough that the runs
 * are still going when close is called. */
#define BIG (1 << 21)
static int32_t *g_big_key;
static int64_t *g_big_val;
static coproc_column *g_cols[2];

/* Close at once after submitting: close waits for the runs still going. */
static void test_close_while_running(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    g_big_key = malloc(BIG * sizeof *g_big_key);
    g_big_val = malloc(BIG * sizeof *g_big_val);
    assert_non_null(g_big_key);
    assert_non_null(g_big_val);
    for (int i = 0; i < BIG; i++)
        g_big_key[i] = i % KEYS, g_big_val[i] = i;
    coproc_table *t;
    assert_ok(rt, coproc_table_create(rt, &t));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, g_big_key, BIG, &g_cols[0]));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT64, g_big_val, BIG, &g_cols[1]));
    assert_ok(rt, coproc_table_add(t, "k", g_cols[0]));
    assert_ok(rt, coproc_table_add(t, "v", g_cols[1]));
    coproc_plan *p;
    assert_ok(rt, coproc_plan_create(rt, &p));
    coproc_node *root = sum_by_key(p, t);
    enum { N = 4 };
    coproc_query_task *task[N];
    for (int i = 0; i < N; i++) {
        coproc_query_options o;
        coproc_query_options_init(&o);
        o.mode = i % 2 ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
        assert_ok(rt, coproc_query_submit(p, root, &o, &task[i]));
    }
    double t0 = test_now();
    coproc_close(rt);
    printf("close with %d queries just submitted: %.3f s\n", N, test_now() - t0);
    /* The plan could not go before its runs ended; it, and a table of
     * borrowed columns, hold nothing of the runtime's (coproc/query.h). */
    coproc_plan_free(p);
    coproc_table_free(t);
    /* A run close had not waited for would now read freed memory. */
    scribble();
    test_sleep(0.3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_nodes_and_exprs),
        cmocka_unit_test(test_table_freed_before_and_during_runs),
        cmocka_unit_test(test_drain_then_close),
        cmocka_unit_test(test_close_while_running),
    };
    /* COPROC_TEST_FILTER picks tests by name (glob), as in test_query. */
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
