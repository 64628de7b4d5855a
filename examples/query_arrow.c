/* query_arrow.c - a query over Arrow arrays (as pyarrow, DuckDB or Polars hand
 * them over): import each array as a column, name them in a table, run
 *   SELECT k, SUM(v), MAX(v) FROM t WHERE v > 0 GROUP BY k ORDER BY k
 * and hand a result column back as an Arrow array. */
#include <stdio.h>
#include <stdlib.h>

#include <coproc.h>
#include <coproc/arrow.h>
#include <coproc/query.h>

#define ROWS 16

/* The producer side: each array owns one malloc'd block. */
typedef struct block {
    const void *buffers[2];
    int32_t data[ROWS];
} block;

static void release_block(struct ArrowArray *a)
{
    free(a->private_data);
    a->release = NULL;
}
static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

/* An int32 Arrow array of ROWS values f(i). */
static struct ArrowArray make_array(int32_t (*f)(int))
{
    block *b = malloc(sizeof *b);
    if (!b)
        exit(71);
    for (int i = 0; i < ROWS; i++)
        b->data[i] = f(i);
    b->buffers[0] = NULL; /* no nulls */
    b->buffers[1] = b->data;
    return (struct ArrowArray){.length = ROWS, .n_buffers = 2, .buffers = b->buffers,
                               .release = release_block, .private_data = b};
}

static int32_t key_of(int i) { return i % 4; }
static int32_t value_of(int i) { return (i * 7) % 11 - 3; }

int main(void)
{
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(NULL, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return 69;
    }
    struct ArrowSchema schema = {.format = "i", .release = release_schema};
    struct ArrowArray ka = make_array(key_of), va = make_array(value_of);
    coproc_column *k = NULL, *v = NULL;
    coproc_table *t = NULL;
    coproc_plan *p = NULL;
    coproc_query_result r = {0};
    /* Import on device 0: the columns take the arrays over (release is theirs now). */
    s = coproc_column_import_arrow(rt, 0, &schema, &ka, &k);
    if (s == COPROC_OK)
        s = coproc_column_import_arrow(rt, 0, &schema, &va, &v);
    if (s == COPROC_OK)
        s = coproc_table_create(rt, &t);
    if (s == COPROC_OK)
        s = coproc_table_add(t, "k", k);
    if (s == COPROC_OK)
        s = coproc_table_add(t, "v", v);
    if (s == COPROC_OK)
        s = coproc_plan_create(rt, &p);
    if (s == COPROC_OK) {
        coproc_node *f = coproc_plan_filter(p, coproc_plan_scan(p, t, "t"),
                                            coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "v"),
                                                                coproc_expr_int(p, 0)));
        const char *keys[] = {"k"};
        coproc_aggregate aggs[] = {{COPROC_AGG_SUM, coproc_expr_column(p, "v"), "sum_v"},
                                   {COPROC_AGG_MAX, coproc_expr_column(p, "v"), "max_v"}};
        coproc_order_key order[] = {{"k", 0, 0}};
        coproc_node *root = coproc_plan_order_by(p, coproc_plan_group_by(p, f, 1, keys, 2, aggs), 1, order, 0);
        s = coproc_query_run(p, root, NULL, &r);
    }
    if (s == COPROC_OK) {
        const int32_t *kk = coproc_column_host_data(coproc_table_column(r.table, "k"));
        const int64_t *sum = coproc_column_host_data(coproc_table_column(r.table, "sum_v"));
        const int32_t *mx = coproc_column_host_data(coproc_table_column(r.table, "max_v"));
        printf(" k  sum_v  max_v\n");
        for (size_t i = 0; i < coproc_table_rows(r.table); i++)
            printf("%2d %6lld %6d\n", kk[i], (long long)sum[i], mx[i]);
        printf("ran on device %d\n", r.pipeline[r.pipelines - 1].device);
        /* Hand sum_v back as Arrow. */
        struct ArrowSchema out_schema;
        struct ArrowArray out;
        s = coproc_column_export_arrow(coproc_table_column(r.table, "sum_v"), &out_schema, &out);
        if (s == COPROC_OK) {
            printf("exported sum_v as Arrow: format \"%s\", %lld rows\n", out_schema.format, (long long)out.length);
            out.release(&out);
            out_schema.release(&out_schema);
        }
    }
    if (s != COPROC_OK)
        fprintf(stderr, "query_arrow: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
    if (ka.release)
        ka.release(&ka); /* not taken (an import failed) */
    if (va.release)
        va.release(&va);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
    coproc_table_free(t);
    coproc_column_free(k);
    coproc_column_free(v);
    coproc_close(rt);
    return s == COPROC_OK ? 0 : 1;
}
