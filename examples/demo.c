/* demo.c - the main job: list every device, then run a small analytical query
 * on each one and check every step against plain C:
 *   SELECT key, SUM(price) FROM sales WHERE price < 500 GROUP BY key ORDER BY key
 * (selection -> gather -> group-by), plus a sum, a sort and a join. It prints
 * each operator's time beside what the device's learned cost model expected.
 * Then it submits a batch of operators over host columns and lets the runtime
 * spread them over all devices at once. Start here to see how coproc is used.
 * With COPROC_DEVICES=sim:profiles/pocl-ci.json,sim:profiles/h100-synthetic.json
 * it runs on simulated devices and reports their simulated times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <coproc.h>
#include <coproc/inspect.h> /* coproc_clock_seconds: wall, or simulated time */

#define ROWS (1u << 22)
#define KEYS 1000u

static int failures;

static void report(coproc_runtime *rt, int dev, const char *what, coproc_op_kind kind, double t,
                   int ok)
{
    coproc_model_stats m = {.struct_size = sizeof m};
    coproc_model_stats_get(rt, dev, kind, &m);
    printf("    %-34s %8.2f ms  %s", what, t * 1e3, ok ? "ok" : "MISMATCH");
    if (m.fitted && m.median_rel_error >= 0)
        printf("  (cost model: %llu runs seen, median prediction error %.0f %%)",
               (unsigned long long)m.observations,
               m.median_rel_error * 100);
    printf("\n");
    failures += !ok;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

#define CHECK(call)                                                                          \
    do {                                                                                     \
        coproc_status s_ = (call);                                                           \
        if (s_ != COPROC_OK) {                                                               \
            printf("    %s: %s: %s\n", #call, coproc_status_name(s_), coproc_errmsg(rt));    \
            failures++;                                                                      \
            goto next;                                                                       \
        }                                                                                    \
    } while (0)

/* Part two: the same host data as host columns, a batch of operators submitted
 * at once; the runtime places each on a device (WTAR by default: the one where
 * it would finish first, queues and transfers counted) and keeps the columns
 * cached there. */
static void all_devices_at_once(coproc_runtime *rt, const uint32_t *key, const int32_t *price,
                                const uint32_t *dim, int64_t total, uint64_t selected,
                                uint64_t want_pairs)
{
    enum { BATCH = 24 };
    coproc_column *ckey = NULL, *cprice = NULL, *cdim = NULL;
    coproc_task *tasks[BATCH] = {0};
    coproc_op ops[BATCH];
    printf("  all devices at once: %d operators over host columns\n", BATCH);
    if (coproc_column_wrap(rt, COPROC_UINT32, key, ROWS, &ckey) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_INT32, price, ROWS, &cprice) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_UINT32, dim, KEYS, &cdim) != COPROC_OK) {
        printf("    coproc_column_wrap: %s\n", coproc_errmsg(rt));
        failures++;
        goto out;
    }
    double t = coproc_clock_seconds(rt);
    for (int i = 0; i < BATCH; i++) {
        switch (i % 3) {
        case 0:
            coproc_op_init(&ops[i], COPROC_OP_REDUCE);
            ops[i].a = cprice;
            break;
        case 1:
            coproc_op_init(&ops[i], COPROC_OP_SELECT);
            ops[i].filter.first = (coproc_predicate){.col = cprice, .cmp = COPROC_CMP_LT,
                                                     .a = {.i64 = 500}};
            break;
        default:
            coproc_op_init(&ops[i], COPROC_OP_HASH_JOIN);
            ops[i].a = cdim;
            ops[i].b = ckey;
            break;
        }
        if (coproc_submit(rt, &ops[i], &tasks[i]) != COPROC_OK) {
            printf("    coproc_submit: %s\n", coproc_errmsg(rt));
            failures++;
            break;
        }
    }
    int ran_on[16] = {0}, wrong = 0;
    for (int i = 0; i < BATCH && tasks[i]; i++) {
        coproc_result r;
        if (coproc_wait(tasks[i], &r) != COPROC_OK) {
            printf("    task %d: %s\n", i, coproc_errmsg(rt));
            failures++;
            continue;
        }
        if (r.device >= 0 && r.device < 16)
            ran_on[r.device]++;
        wrong += i % 3 == 0 ? r.scalar.v.i64 != total
                 : i % 3 == 1 ? r.count != selected
                              : r.count != want_pairs;
        coproc_result_free(&r);
    }
    double wall = coproc_clock_seconds(rt) - t;
    failures += wrong;
    printf("    %d operators in %.1f ms, %s\n", BATCH, wall * 1e3,
           wrong ? "MISMATCH" : "all equal plain C");
    for (int d = 0; d < coproc_device_count(rt) && d < 16; d++) {
        coproc_device_stats ds = {.struct_size = sizeof ds};
        coproc_device_stats_get(rt, d, &ds);
        printf("    device %d: %2d operators, busy %5.1f %%, moved %.1f MB in / %.1f MB out, "
               "cache %llu hits / %llu misses\n",
               d, ran_on[d], wall > 0 ? 100 * ds.busy_seconds / wall : 0, ds.bytes_h2d / 1e6,
               ds.bytes_d2h / 1e6, (unsigned long long)ds.cache_hits,
               (unsigned long long)ds.cache_misses);
    }
out:
    coproc_column_free(ckey);
    coproc_column_free(cprice);
    coproc_column_free(cdim);
}

int main(void)
{
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(NULL, &rt); /* loads each device's profile, or calibrates */
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return 69; /* EX_UNAVAILABLE */
    }

    /* sales(key, price): host data and the answers plain C gives. */
    uint32_t *key = malloc(ROWS * sizeof *key), *sorted = malloc(ROWS * sizeof *sorted);
    int32_t *price = malloc(ROWS * sizeof *price);
    int64_t *want_sum = calloc(KEYS, sizeof *want_sum);
    uint32_t *dim = malloc(KEYS * sizeof *dim);
    if (!key || !sorted || !price || !want_sum || !dim)
        return 71;
    int64_t total = 0;
    uint64_t selected = 0;
    unsigned seed = 42;
    for (size_t i = 0; i < ROWS; i++) {
        seed = seed * 1103515245u + 12345u;
        key[i] = (seed >> 8) % KEYS;
        seed = seed * 1103515245u + 12345u;
        price[i] = (int32_t)((seed >> 8) % 1000);
        total += price[i];
        if (price[i] < 500) {
            selected++;
            want_sum[key[i]] += price[i];
        }
    }
    for (uint32_t k = 0; k < KEYS; k++)
        dim[k] = k * 2; /* a dimension table holding the even keys */
    memcpy(sorted, key, ROWS * sizeof *key);
    qsort(sorted, ROWS, sizeof *sorted, cmp_u32);

    printf("coproc %s: %d device(s)\n", coproc_version_string(), coproc_device_count(rt));
    for (int i = 0; i < coproc_device_count(rt); i++) {
        coproc_device_info d;
        coproc_device_info_get(rt, i, &d);
        printf("  [%d] %-4s %s (%s, driver %s), %u CUs, %llu MiB, PCI %s, NUMA node %d, cores %s\n",
               i, coproc_device_type_name(d.type), d.name, d.platform, d.driver_version,
               d.compute_units, (unsigned long long)(d.global_mem_bytes >> 20),
               d.pci_bus_id[0] ? d.pci_bus_id : "-", d.numa_node, d.cpuset);
    }
    for (int dev = 0; dev < coproc_device_count(rt); dev++) {
        printf("  device %d, %u rows:\n", dev, ROWS);
        coproc_column *ckey = NULL, *cprice = NULL, *pos = NULL, *skey = NULL, *sprice = NULL;
        coproc_column *cdim = NULL, *copy = NULL;
        coproc_group_result g = {0};
        coproc_join_result j = {0};
        int64_t *got_sum = NULL;
        uint32_t *got_keys = NULL, *got_sorted = NULL;
        CHECK(coproc_column_upload(rt, dev, COPROC_UINT32, key, ROWS, &ckey));
        CHECK(coproc_column_upload(rt, dev, COPROC_INT32, price, ROWS, &cprice));
        CHECK(coproc_column_upload(rt, dev, COPROC_UINT32, dim, KEYS, &cdim));

        coproc_scalar sum;
        double t = coproc_clock_seconds(rt);
        CHECK(coproc_reduce(rt, COPROC_REDUCE_SUM, cprice, &sum));
        report(rt, dev, "sum(price)", COPROC_OP_REDUCE, coproc_clock_seconds(rt) - t, sum.v.i64 == total);

        coproc_filter f = {.first = {.col = cprice, .cmp = COPROC_CMP_LT, .a = {.i64 = 500}}};
        uint64_t count = 0;
        t = coproc_clock_seconds(rt);
        CHECK(coproc_select(rt, &f, &pos, &count));
        report(rt, dev, "where price < 500", COPROC_OP_SELECT, coproc_clock_seconds(rt) - t, count == selected);

        t = coproc_clock_seconds(rt);
        CHECK(coproc_gather(rt, ckey, pos, &skey));
        CHECK(coproc_gather(rt, cprice, pos, &sprice));
        double tg = coproc_clock_seconds(rt) - t;
        report(rt, dev, "gather key, price of those rows", COPROC_OP_GATHER, tg,
               coproc_column_length(skey) == selected);

        t = coproc_clock_seconds(rt);
        CHECK(coproc_group_by(rt, skey, sprice, 1, &g));
        double tgb = coproc_clock_seconds(rt) - t;
        got_sum = malloc(g.groups * sizeof *got_sum);
        got_keys = malloc(g.groups * sizeof *got_keys);
        int ok = got_sum && got_keys && g.groups == KEYS;
        if (ok) {
            CHECK(coproc_column_download(g.sum, got_sum, g.groups));
            CHECK(coproc_column_download(g.keys, got_keys, g.groups));
            for (size_t k = 0; k < g.groups; k++)
                ok &= got_keys[k] == k && got_sum[k] == want_sum[k];
        }
        report(rt, dev, "group by key, sum(price), sorted", COPROC_OP_GROUP_BY, tgb, ok);

        CHECK(coproc_map_const(rt, COPROC_ARITH_ADD, ckey, (coproc_value){.u64 = 0}, &copy));
        t = coproc_clock_seconds(rt);
        CHECK(coproc_sort(rt, copy, NULL));
        double ts = coproc_clock_seconds(rt) - t;
        got_sorted = malloc(ROWS * sizeof *got_sorted);
        ok = got_sorted != NULL;
        if (ok) {
            CHECK(coproc_column_download(copy, got_sorted, ROWS));
            ok = memcmp(got_sorted, sorted, ROWS * sizeof *sorted) == 0;
        }
        report(rt, dev, "sort key", COPROC_OP_SORT, ts, ok);

        t = coproc_clock_seconds(rt);
        CHECK(coproc_hash_join(rt, cdim, ckey, &j));
        uint64_t want_pairs = 0;
        for (size_t i = 0; i < ROWS; i++)
            want_pairs += key[i] % 2 == 0;
        report(rt, dev, "join key with the even keys", COPROC_OP_HASH_JOIN, coproc_clock_seconds(rt) - t,
               j.count == want_pairs);
    next:
        free(got_sum);
        free(got_keys);
        free(got_sorted);
        coproc_join_result_free(&j);
        coproc_group_result_free(&g);
        coproc_column_free(copy);
        coproc_column_free(cdim);
        coproc_column_free(sprice);
        coproc_column_free(skey);
        coproc_column_free(pos);
        coproc_column_free(cprice);
        coproc_column_free(ckey);
    }
    uint64_t want_pairs = 0;
    for (size_t i = 0; i < ROWS; i++)
        want_pairs += key[i] % 2 == 0;
    all_devices_at_once(rt, key, price, dim, total, selected, want_pairs);
    free(key);
    free(sorted);
    free(price);
    free(want_sum);
    free(dim);
    coproc_close(rt);
    printf("%s\n", failures ? "FAILED" : "all results equal plain C");
    return failures ? 1 : 0;
}
