/* query_arrays.c - a query built by hand with the plan API over your own
 * arrays: wrap each array as a host column (nothing is copied), name them in
 * tables, build the plan, run it, print the result and where each pipeline ran.
 *
 *   SELECT category, region, SUM(price * quantity) AS revenue, COUNT(*) AS sales
 *   FROM sales JOIN products ON sales.product = products.id
 *   WHERE quantity BETWEEN 2 AND 10 AND region IN (1, 3)
 *   GROUP BY category, region ORDER BY revenue DESC LIMIT 5
 */
#include <stdio.h>
#include <stdlib.h>

#include <coproc.h>
#include <coproc/query.h>

#define SALES 1000000
#define PRODUCTS 500

/* Stop at the first error, with coproc's message. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        coproc_status s_ = (call);                                                                 \
        if (s_ != COPROC_OK) {                                                                     \
            fprintf(stderr, "%s: %s: %s\n", #call, coproc_status_name(s_), coproc_errmsg(rt));     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(void)
{
    coproc_runtime *rt = NULL;
    coproc_status st = coproc_open(NULL, &rt);
    if (st != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(st), coproc_errmsg(rt));
        coproc_close(rt);
        return 69;
    }

    /* Your data: plain C arrays. */
    int32_t *product = malloc(SALES * sizeof *product), *region = malloc(SALES * sizeof *region);
    int32_t *quantity = malloc(SALES * sizeof *quantity);
    double *price = malloc(SALES * sizeof *price);
    int32_t id[PRODUCTS], category[PRODUCTS];
    if (!product || !region || !quantity || !price)
        return 71;
    uint64_t x = 12345;
    for (int i = 0; i < SALES; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        product[i] = 1 + (int32_t)((x >> 33) % PRODUCTS);
        region[i] = (int32_t)((x >> 20) % 5);
        quantity[i] = 1 + (int32_t)((x >> 12) % 12);
        price[i] = 0.5 + (double)((x >> 40) % 1000) / 100.0;
    }
    for (int i = 0; i < PRODUCTS; i++) {
        id[i] = i + 1;
        category[i] = i % 7;
    }

    /* Columns over the arrays (borrowed), in named tables. */
    coproc_column *c_product, *c_region, *c_quantity, *c_price, *c_id, *c_category;
    CHECK(coproc_column_wrap(rt, COPROC_INT32, product, SALES, &c_product));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, region, SALES, &c_region));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, quantity, SALES, &c_quantity));
    CHECK(coproc_column_wrap(rt, COPROC_FLOAT64, price, SALES, &c_price));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, id, PRODUCTS, &c_id));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, category, PRODUCTS, &c_category));
    coproc_table *sales, *products;
    CHECK(coproc_table_create(rt, &sales));
    CHECK(coproc_table_add(sales, "product", c_product));
    CHECK(coproc_table_add(sales, "region", c_region));
    CHECK(coproc_table_add(sales, "quantity", c_quantity));
    CHECK(coproc_table_add(sales, "price", c_price));
    CHECK(coproc_table_create(rt, &products));
    CHECK(coproc_table_add(products, "id", c_id));
    CHECK(coproc_table_add(products, "category", c_category));

    /* The plan. Builders need no checks in between: the first error is kept
     * and coproc_query_run returns it, naming the node. */
    coproc_plan *p;
    CHECK(coproc_plan_create(rt, &p));
    coproc_expr *regions[] = {coproc_expr_int(p, 1), coproc_expr_int(p, 3)};
    coproc_node *s = coproc_plan_filter(
        p, coproc_plan_scan(p, sales, "sales"),
        coproc_expr_and(p,
                        coproc_expr_between(p, coproc_expr_column(p, "quantity"), coproc_expr_int(p, 2),
                                            coproc_expr_int(p, 10)),
                        coproc_expr_in(p, coproc_expr_column(p, "region"), 2, regions)));
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, s, "product",
                                      coproc_plan_scan(p, products, "products"), "id");
    const char *keys[] = {"category", "region"};
    coproc_aggregate aggs[] = {
        {COPROC_AGG_SUM,
         coproc_expr_arith(p, COPROC_ARITH_MUL, coproc_expr_column(p, "price"), coproc_expr_column(p, "quantity")),
         "revenue"},
        {COPROC_AGG_COUNT, NULL, "sales"},
    };
    coproc_node *g = coproc_plan_group_by(p, j, 2, keys, 2, aggs);
    coproc_order_key order[] = {{"revenue", 1, 0}};
    coproc_node *root = coproc_plan_order_by(p, g, 1, order, 5);

    coproc_query_result r;
    CHECK(coproc_query_run(p, root, NULL, &r));

    /* The result: host columns, named as the plan named them. */
    const int32_t *cat = coproc_column_host_data(coproc_table_column(r.table, "category"));
    const int32_t *reg = coproc_column_host_data(coproc_table_column(r.table, "region"));
    const double *rev = coproc_column_host_data(coproc_table_column(r.table, "revenue"));
    const int64_t *cnt = coproc_column_host_data(coproc_table_column(r.table, "sales"));
    printf("category region      revenue   sales\n");
    for (size_t i = 0; i < coproc_table_rows(r.table); i++)
        printf("%8d %6d %12.2f %7lld\n", cat[i], reg[i], rev[i], (long long)cnt[i]);
    printf("\n%d pipelines in %.2f ms:\n", r.pipelines, r.seconds * 1e3);
    for (int i = 0; i < r.pipelines; i++) {
        coproc_device_info info;
        coproc_device_info_get(rt, r.pipeline[i].device, &info);
        printf("  %-55s device %d (%s), %.2f ms\n", r.pipeline[i].what, r.pipeline[i].device, info.name,
               (r.pipeline[i].end_s - r.pipeline[i].start_s) * 1e3);
    }

    coproc_query_result_free(&r);
    coproc_plan_free(p);
    coproc_table_free(sales);
    coproc_table_free(products);
    coproc_column_free(c_product), coproc_column_free(c_region), coproc_column_free(c_quantity);
    coproc_column_free(c_price), coproc_column_free(c_id), coproc_column_free(c_category);
    free(product), free(region), free(quantity), free(price);
    coproc_close(rt);
    return 0;
}
