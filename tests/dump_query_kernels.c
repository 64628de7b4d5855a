/* dump_query_kernels.c - write the OpenCL C that the fused engine generates
 * for every pipeline of the 13 SSB queries (and a plan with every kind of
 * expression) into a directory, one file per pipeline, so that
 * test_kernels_offline.sh compiles them for NVIDIA, AMD and SPIR like the
 * hand-written kernels. Usage: dump_query_kernels DIR. Exit 77 without a device. */
#include <stdio.h>
#include <stdlib.h>

#include "query/pipeline.h"
#include "ssb_plans.h"

static int dump(const char *dir, const char *name, coproc_runtime *rt, coproc_node *root)
{
    coproc__qprog prog;
    if (coproc__lower(rt, root, &prog) != COPROC_OK) {
        fprintf(stderr, "%s: lowering failed: %s\n", name, coproc_errmsg(rt));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < prog.n; i++) {
        if (!prog.p[i].src)
            continue; /* reads an earlier pipeline's output: known only when run */
        coproc__qkernel k;
        if (coproc__codegen(&prog, i, 1, &k) != 0) {
            fprintf(stderr, "%s pipeline %d: %s\n", name, i, k.why);
            bad = 1;
        } else {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s-p%d.cl", dir, name, i);
            FILE *f = fopen(path, "w");
            if (!f || fwrite(k.src.s, 1, k.src.len, f) != k.src.len)
                bad = 1;
            if (f)
                fclose(f);
        }
        coproc__qkernel_free(&k);
    }
    coproc__qprog_free(&prog);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dump_query_kernels DIR\n");
        return 64;
    }
    coproc_runtime *rt = NULL;
    if (coproc_open(NULL, &rt) != COPROC_OK) {
        coproc_close(rt);
        return 77;
    }
    ssb_db db;
    ssb_tables t;
    if (ssb_generate(0.01, &db) != 0 || ssb_tables_open(rt, &db, -1, &t) != COPROC_OK)
        return 1;
    int bad = 0;
    for (int q = 0; q < SSB_NQUERIES; q++) {
        coproc_plan *p;
        coproc_node *root;
        coproc_plan_create(rt, &p);
        if (ssb_plan_build(p, &t, q, &root) != COPROC_OK) {
            bad = 1;
        } else {
            char name[16];
            snprintf(name, sizeof name, "ssb-%s", ssb_query_name(q));
            bad |= dump(argv[1], name, rt, root);
        }
        coproc_plan_free(p);
    }
    /* Every expression kind, float and int64 arithmetic, a materialising sink. */
    coproc_plan *p;
    coproc_plan_create(rt, &p);
    coproc_node *lo = coproc_plan_scan(p, t.t[SSB_LINEORDER], "lineorder");
    coproc_expr *list[] = {coproc_expr_int(p, 1), coproc_expr_float(p, 2.5)};
    coproc_expr *pred = coproc_expr_or(
        p, coproc_expr_not(p, coproc_expr_in(p, coproc_expr_column(p, "lo_discount"), 2, list)),
        coproc_expr_between(p, coproc_expr_column(p, "lo_tax"), coproc_expr_int(p, INT64_MIN), coproc_expr_float(p, 1e300)));
    const char *names[] = {"q", "r"};
    coproc_expr *ex[] = {
        coproc_expr_arith(p, COPROC_ARITH_DIV, coproc_expr_column(p, "lo_revenue"), coproc_expr_column(p, "lo_tax")),
        coproc_expr_arith(p, COPROC_ARITH_SUB, coproc_expr_float(p, 1.0 / 3), coproc_expr_column(p, "lo_quantity")),
    };
    coproc_node *pr = coproc_plan_project(p, coproc_plan_filter(p, lo, pred), 2, names, ex);
    bad |= dump(argv[1], "expressions", rt, pr);
    coproc_plan_free(p);
    /* Joins on two key columns (packed in the kernels): inner, grouped by a
     * build-side column, and semi. */
    for (int semi = 0; semi < 2; semi++) {
        coproc_plan_create(rt, &p);
        const char *pk[] = {"lo_partkey", "lo_quantity"}, *bk[] = {"p_partkey", "p_mfgr"};
        coproc_node *j = coproc_plan_join_keys(p, semi ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER,
                                               coproc_plan_scan(p, t.t[SSB_LINEORDER], "lineorder"), 2,
                                               pk, coproc_plan_scan(p, t.t[SSB_PART], "part"), bk);
        const char *gk[] = {"p_brand1"};
        coproc_aggregate ag[] = {{COPROC_AGG_SUM, coproc_expr_column(p, "lo_revenue"), "revenue"}};
        coproc_node *g = coproc_plan_group_by(p, j, semi ? 0 : 1, semi ? NULL : gk, 1, ag);
        bad |= dump(argv[1], semi ? "semi-two-keys" : "join-two-keys", rt, g);
        coproc_plan_free(p);
    }
    ssb_tables_close(&t);
    ssb_free(&db);
    coproc_close(rt);
    return bad;
}
