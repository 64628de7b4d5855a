/* query_strings.c - strings and keys of several columns: city names
 * dictionary-encoded once, a predicate on them decided on the dictionary,
 * a join on two key columns, and the result's strings read back.
 *
 *   SELECT city, SUM(amount) AS total, COUNT(*) AS orders
 *   FROM orders JOIN stores ON (orders.store, orders.region) = (stores.id, stores.region)
 *   WHERE city LIKE 'San%' OR city = 'Boston'
 *   GROUP BY city ORDER BY city
 */
#include <stdio.h>
#include <stdlib.h>

#include <coproc.h>
#include <coproc/query.h>

#define ORDERS 100000
#define STORES 8

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

    /* Stores: a key of two columns (id, region) and a city name. */
    int32_t id[STORES] = {1, 2, 3, 1, 2, 3, 4, 4}, sregion[STORES] = {0, 0, 0, 1, 1, 1, 0, 1};
    const char *city[STORES] = {"Boston", "San Diego", "Denver", "San Jose",
                                "Austin", "Boston",    "Seattle", "Santa Fe"};
    /* Orders: which store (id and region) and an amount. */
    int32_t *store = malloc(ORDERS * sizeof *store), *oregion = malloc(ORDERS * sizeof *oregion);
    int64_t *amount = malloc(ORDERS * sizeof *amount);
    if (!store || !oregion || !amount)
        return 71;
    uint64_t x = 2026;
    for (int i = 0; i < ORDERS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        store[i] = 1 + (int32_t)((x >> 33) % 4);
        oregion[i] = (int32_t)((x >> 20) % 2);
        amount[i] = 1 + (int64_t)((x >> 40) % 100);
    }

    coproc_column *c_id, *c_sregion, *c_city, *c_store, *c_oregion, *c_amount;
    CHECK(coproc_column_wrap(rt, COPROC_INT32, id, STORES, &c_id));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, sregion, STORES, &c_sregion));
    /* -1: a host column; its dictionary is sorted, so "San%" is a range of codes */
    CHECK(coproc_column_encode_strings(rt, -1, city, STORES, &c_city));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, store, ORDERS, &c_store));
    CHECK(coproc_column_wrap(rt, COPROC_INT32, oregion, ORDERS, &c_oregion));
    CHECK(coproc_column_wrap(rt, COPROC_INT64, amount, ORDERS, &c_amount));
    coproc_table *stores, *orders;
    CHECK(coproc_table_create(rt, &stores));
    CHECK(coproc_table_add(stores, "id", c_id));
    CHECK(coproc_table_add(stores, "region", c_sregion));
    CHECK(coproc_table_add(stores, "city", c_city));
    CHECK(coproc_table_create(rt, &orders));
    CHECK(coproc_table_add(orders, "store", c_store));
    CHECK(coproc_table_add(orders, "oregion", c_oregion));
    CHECK(coproc_table_add(orders, "amount", c_amount));

    coproc_plan *p;
    CHECK(coproc_plan_create(rt, &p));
    coproc_node *st_f = coproc_plan_filter(
        p, coproc_plan_scan(p, stores, "stores"),
        coproc_expr_or(p, coproc_expr_prefix(p, coproc_expr_column(p, "city"), "San"),
                       coproc_expr_compare(p, COPROC_CMP_EQ, coproc_expr_column(p, "city"),
                                           coproc_expr_string(p, "Boston"))));
    const char *okeys[] = {"store", "oregion"}, *skeys[] = {"id", "region"};
    coproc_node *j = coproc_plan_join_keys(p, COPROC_JOIN_INNER, coproc_plan_scan(p, orders, "orders"),
                                           2, okeys, st_f, skeys);
    const char *gkeys[] = {"city"};
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, coproc_expr_column(p, "amount"), "total"},
                               {COPROC_AGG_COUNT, NULL, "orders"}};
    coproc_node *g = coproc_plan_group_by(p, j, 1, gkeys, 2, aggs);
    coproc_order_key order[] = {{"city", 0, 0}};
    coproc_node *root = coproc_plan_order_by(p, g, 1, order, 0);

    coproc_query_result r;
    CHECK(coproc_query_run(p, root, NULL, &r));

    /* The city column holds codes; its dictionary turns them back into names. */
    const coproc_column *rc = coproc_table_column(r.table, "city");
    const int32_t *codes = coproc_column_host_data(rc);
    const int64_t *total = coproc_column_host_data(coproc_table_column(r.table, "total"));
    const int64_t *cnt = coproc_column_host_data(coproc_table_column(r.table, "orders"));
    printf("city            total  orders\n");
    for (size_t i = 0; i < coproc_table_rows(r.table); i++)
        printf("%-12s %8lld %7lld\n", coproc_column_dictionary_value(rc, codes[i]),
               (long long)total[i], (long long)cnt[i]);
    if (r.note[0])
        printf("\n(%s)\n", r.note);

    coproc_query_result_free(&r);
    coproc_plan_free(p);
    coproc_table_free(stores);
    coproc_table_free(orders);
    coproc_column_free(c_id), coproc_column_free(c_sregion), coproc_column_free(c_city);
    coproc_column_free(c_store), coproc_column_free(c_oregion), coproc_column_free(c_amount);
    free(store), free(oregion), free(amount);
    coproc_close(rt);
    return 0;
}
