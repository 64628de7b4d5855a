/* query_arrow.c - a query over Arrow arrays with nulls (as pyarrow, DuckDB or
 * Polars hand them over): import each array as a column, name them in a
 * table, run
 *   SELECT k, COUNT(*), COUNT(v), SUM(v), MAX(v) FROM t
 *   WHERE v > 0 OR k = 0 GROUP BY k ORDER BY k NULLS LAST
 * with SQL's nulls (a row whose v is null passes only where k = 0; the rows
 * whose k is null make one group) and hand a result column back as an Arrow
 * array, its nulls with it. */
#include <stdio.h>
#include <stdlib.h>

#include <coproc.h>
#include <coproc/arrow.h>
#include <coproc/query.h>

#define ROWS 16

/* The producer side: each array owns one malloc'd block. */
typedef struct block {
    const void *buffers[2];
    uint32_t valid[(ROWS + 31) / 32]; /* Arrow's validity: bit i set = row i not null */
    int32_t data[ROWS];
} block;

static void release_block(struct ArrowArray *a)
{
    free(a->private_data);
    a->release = NULL;
}
static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

/* An int32 Arrow array of ROWS values f(i), row i null where is_null(i). */
static struct ArrowArray make_array(int32_t (*f)(int), int (*is_null)(int))
{
    block *b = calloc(1, sizeof *b);
    if (!b)
        exit(71);
    int64_t nulls = 0;
    for (int i = 0; i < ROWS; i++) {
        b->data[i] = f(i);
        if (is_null(i))
            nulls++;
        else
            b->valid[i / 32] |= 1u << (i % 32);
    }
    b->buffers[0] = b->valid;
    b->buffers[1] = b->data;
    return (struct ArrowArray){.length = ROWS,
                               .null_count = nulls,
                               .n_buffers = 2,
                               .buffers = b->buffers,
                               .release = release_block,
                               .private_data = b};
}

static int32_t key_of(int i) { return i % 4; }
static int32_t value_of(int i) { return (i * 7) % 11 - 3; }
static int key_null(int i)
{
    return i == 7 || i == 14;
}
static int value_null(int i)
{
    return i % 5 == 4;
}

/* Row i of a result column: its value, or NULL. */
static void print_cell(const coproc_column *col, size_t i)
{
    const coproc_column *valid = coproc_column_validity(col);
    const uint32_t *bits = valid ? coproc_column_host_data(valid) : NULL;
    if (bits && !((bits[i / 32] >> (i % 32)) & 1u)) {
        printf(" %6s", "NULL");
        return;
    }
    if (coproc_column_type(col) == COPROC_INT64)
        printf(" %6lld", (long long)((const int64_t *)coproc_column_host_data(col))[i]);
    else
        printf(" %6d", ((const int32_t *)coproc_column_host_data(col))[i]);
}

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
    struct ArrowArray ka = make_array(key_of, key_null), va = make_array(value_of, value_null);
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
        coproc_expr *v_pos = coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "v"),
                                                 coproc_expr_int(p, 0));
        coproc_expr *k_zero = coproc_expr_compare(p, COPROC_CMP_EQ, coproc_expr_column(p, "k"),
                                                  coproc_expr_int(p, 0));
        coproc_node *f =
            coproc_plan_filter(p, coproc_plan_scan(p, t, "t"), coproc_expr_or(p, v_pos, k_zero));
        const char *keys[] = {"k"};
        coproc_aggregate aggs[] = {{COPROC_AGG_COUNT, NULL, "rows"},
                                   {COPROC_AGG_COUNT, coproc_expr_column(p, "v"), "count_v"},
                                   {COPROC_AGG_SUM, coproc_expr_column(p, "v"), "sum_v"},
                                   {COPROC_AGG_MAX, coproc_expr_column(p, "v"), "max_v"}};
        coproc_order_key order[] = {{"k", 0, 0}}; /* ascending, nulls last */
        coproc_node *root =
            coproc_plan_order_by(p, coproc_plan_group_by(p, f, 1, keys, 4, aggs), 1, order, 0);
        s = coproc_query_run(p, root, NULL, &r);
    }
    if (s == COPROC_OK) {
        printf("      k   rows count_v  sum_v  max_v\n");
        for (size_t i = 0; i < coproc_table_rows(r.table); i++) {
            for (int c = 0; c < coproc_table_column_count(r.table); c++)
                print_cell(coproc_table_column_at(r.table, c), i);
            printf("\n");
        }
        printf("ran on device %d%s%s\n", r.pipeline[r.pipelines - 1].device, r.note[0] ? ": " : "",
               r.note);
        /* Hand sum_v back as Arrow. */
        struct ArrowSchema out_schema;
        struct ArrowArray out;
        s = coproc_column_export_arrow(coproc_table_column(r.table, "sum_v"), &out_schema, &out);
        if (s == COPROC_OK) {
            printf("exported sum_v as Arrow: format \"%s\", %lld rows, %lld null\n",
                   out_schema.format, (long long)out.length, (long long)out.null_count);
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
