/* mpi_exchange.c - coproc_mpi's exchanges past MPI's int counts (runtime/mpi/exchange.c)
 * under mpirun (tests/mpi_run.sh), without 2 GB: the splitting of a pair's bytes into
 * messages checked for sizes past 2^31 and 2^32 (every piece within the round and an int,
 * the pieces end to end covering the bytes exactly), then the round made small through the
 * internal test hook (5 bytes, 1 byte: pieces that cut values apart) and every exchange -
 * coproc_mpi_partition by each partitioning, coproc_mpi_aggregate gathered and shuffled,
 * coproc_mpi_hash_join - must give exactly what it gives in whole messages. Device
 * columns, mapped in place or staged through the handle's reused pinned buffers, partition
 * alike. Plain MPI
 * program: 0 passed, 1 failed, 77 no OpenCL device. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "mpi_check.h"
#include "../../runtime/mpi/mpi_internal.h" /* the exchange's pieces and test hook */

/* The pieces of `bytes` at `round` tile [0, bytes) in order, each 1..round bytes and an int. */
static void pieces(uint64_t bytes, uint64_t round)
{
    uint64_t n = coproc_mpi_pieces_(bytes, round), at = 0, want = (bytes + round - 1) / round;
    CHECK(n == want, "%llu bytes at %llu: %llu pieces, not %llu", (unsigned long long)bytes,
          (unsigned long long)round, (unsigned long long)n, (unsigned long long)want);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t off;
        int len;
        coproc_mpi_piece_(bytes, round, k, &off, &len);
        if (off != at || len < 1 || (uint64_t)len > round || len > INT_MAX) {
            CHECK(0, "%llu bytes at %llu: piece %llu at %llu, %d bytes (expected at %llu)",
                  (unsigned long long)bytes, (unsigned long long)round, (unsigned long long)k,
                  (unsigned long long)off, len, (unsigned long long)at);
            return;
        }
        at += (uint64_t)len;
    }
    CHECK(at == bytes, "%llu bytes at %llu: the pieces cover %llu", (unsigned long long)bytes,
          (unsigned long long)round, (unsigned long long)at);
}

static void splitting(coproc_mpi *m)
{
    const uint64_t sizes[] = {0,
                              1,
                              7,
                              8,
                              9,
                              (1ull << 30) - 1,
                              1ull << 30,
                              (1ull << 30) + 1,
                              INT_MAX,
                              1ull << 31,
                              (1ull << 31) + 1,
                              (1ull << 32) + 3,
                              3 * (1ull << 31) + 5,
                              1ull << 40};
    const uint64_t rounds[] = {1, 5, 8, 4096, COPROC_MPI_ROUND};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof rounds / sizeof *rounds; j++)
            if (sizes[i] / rounds[j] <= 1u << 20) /* enumerable */
                pieces(sizes[i], rounds[j]);
    CHECK(COPROC_MPI_ROUND <= INT_MAX, "the default round is not an int");
    CHECK(coproc_mpi_pieces_(1ull << 40, COPROC_MPI_ROUND) == 1024, "2^40 bytes: 1024 messages");
    /* the hook keeps a round MPI can send */
    coproc_mpi_set_round_(m, 0);
    CHECK(m->round == 1, "round 0 set: %llu", (unsigned long long)m->round);
    coproc_mpi_set_round_(m, 1ull << 40);
    CHECK(m->round == COPROC_MPI_ROUND, "round 2^40 set: %llu", (unsigned long long)m->round);
    /* requests reserved: a peer's 3 GiB out and 2^31 + 1 bytes in at 1 GiB a message */
    uint64_t *sc = calloc(size, sizeof *sc), *rc = calloc(size, sizeof *rc);
    for (int r = 0; r < size; r++)
        sc[r] = 3ull << 30, rc[r] = (1ull << 31) + 1;
    coproc_mpi_xchg x = {0};
    CHECK(coproc_mpi_xchg_reserve_(m, sc, rc, 2, &x) == 0 && x.cap == 2 * (size - 1) * (3 + 3),
          "requests for %d peers: %d", size - 1, x.cap);
    coproc_mpi_xchg_free_(&x);
    free(sc), free(rc);
}

#define N 301

typedef struct data {
    coproc_table *t;
    coproc_column *c[3];
} data;

/* This rank's rows (a different number on each, none on the last of 3 or more): k int32 keys
 * with duplicates and negatives, v int64, f float64. */
static void make_data(coproc_runtime *rt, data *d)
{
    uint64_t n = size > 2 && rank == size - 1 ? 0 : N + 17 * (uint64_t)rank, first = 0;
    for (int r = 0; r < rank; r++)
        first += N + 17 * (uint64_t)r;
    coproc_table_create(rt, &d->t);
    coproc_column_host_alloc(rt, COPROC_INT32, n, &d->c[0]);
    coproc_column_host_alloc(rt, COPROC_INT64, n, &d->c[1]);
    coproc_column_host_alloc(rt, COPROC_FLOAT64, n, &d->c[2]);
    int32_t *k = coproc_column_host_data(d->c[0]);
    int64_t *v = coproc_column_host_data(d->c[1]);
    double *f = coproc_column_host_data(d->c[2]);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = mix(first + i);
        k[i] = (int32_t)(h % 61) - 30;
        v[i] = (int64_t)(h >> 3);
        f[i] = (double)(h % 1000) / 8;
    }
    coproc_table_add(d->t, "k", d->c[0]);
    coproc_table_add(d->t, "v", d->c[1]);
    coproc_table_add(d->t, "f", d->c[2]);
}

/* Whether two tables hold the same columns, byte for byte. */
static int same_table(const coproc_table *a, const coproc_table *b)
{
    if (!a || !b || coproc_table_rows(a) != coproc_table_rows(b) ||
        coproc_table_column_count(a) != coproc_table_column_count(b))
        return 0;
    size_t n = coproc_table_rows(a);
    for (int c = 0; c < coproc_table_column_count(a); c++) {
        const coproc_column *x = coproc_table_column_at(a, c), *y = coproc_table_column_at(b, c);
        size_t w = coproc_type_size(coproc_column_type(x));
        if (coproc_column_type(x) != coproc_column_type(y) ||
            (n && memcmp(coproc_column_host_data(x), coproc_column_host_data(y), n * w) != 0))
            return 0;
    }
    return 1;
}

/* Every exchange at the handle's round; the results kept for comparing. */
typedef struct outcome {
    coproc_mpi_table part[5];
    coproc_mpi_result agg[2];
    uint64_t pairs;
} outcome;

static void run_all(coproc_mpi *m, const data *d, outcome *o)
{
    memset(o, 0, sizeof *o);
    for (int how = COPROC_MPI_ROUND_ROBIN; how <= COPROC_MPI_REPLICATE; how++) {
        coproc_status s =
            coproc_mpi_partition(m, d->t, (coproc_mpi_partitioning)how, "k", &o->part[how]);
        CHECK(s == COPROC_OK, "partition %d at round %llu: %s", how, (unsigned long long)m->round,
              coproc_mpi_errmsg(m));
    }
    for (int e = COPROC_MPI_GATHER; e <= COPROC_MPI_SHUFFLE; e++) {
        coproc_plan *p = NULL;
        coproc_plan_create(coproc_mpi_runtime(m), &p);
        coproc_node *in = coproc_plan_scan(p, d->t, "t");
        const char *keys[1] = {"k"};
        coproc_aggregate aggs[3] = {{COPROC_AGG_SUM, coproc_expr_column(p, "v"), "s"},
                                    {COPROC_AGG_COUNT, NULL, "c"},
                                    {COPROC_AGG_MAX, coproc_expr_column(p, "f"), "mx"}};
        coproc_order_key order[1] = {{"k", 0, 0}};
        coproc_mpi_query q = {.plan = p,
                              .input = in,
                              .nkeys = 1,
                              .keys = keys,
                              .naggs = 3,
                              .aggs = aggs,
                              .norder = 1,
                              .order = order,
                              .exchange = (coproc_mpi_exchange)e};
        coproc_status s = coproc_mpi_aggregate(m, &q, &o->agg[e]);
        CHECK(s == COPROC_OK, "aggregate %d at round %llu: %s", e, (unsigned long long)m->round,
              coproc_mpi_errmsg(m));
        coproc_plan_free(p);
    }
    coproc_mpi_join j;
    coproc_status s = coproc_mpi_hash_join(m, d->t, "k", d->t, "k", 0, &j);
    CHECK(s == COPROC_OK, "join at round %llu: %s", (unsigned long long)m->round,
          coproc_mpi_errmsg(m));
    o->pairs = s == COPROC_OK ? j.pairs : 0;
    coproc_mpi_join_free(&j);
}

static void outcome_free(outcome *o)
{
    for (int i = 0; i < 5; i++)
        coproc_mpi_table_free(&o->part[i]);
    for (int i = 0; i < 2; i++)
        coproc_mpi_result_free(&o->agg[i]);
}

/* The same rows as device columns (on device 0): mapped in place where the device is
 * host-unified, then downloaded into the reused pinned staging buffers, twice each (the second
 * call reuses them), they partition exactly as the host columns. */
static void device_columns(coproc_mpi *m, const data *d, const coproc_mpi_table *want)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    coproc_table *t = NULL;
    coproc_column *c[3] = {NULL, NULL, NULL};
    coproc_status s = coproc_table_create(rt, &t);
    for (int i = 0; i < 3 && s == COPROC_OK; i++) {
        const coproc_column *h = coproc_table_column_at(d->t, i);
        s = coproc_column_upload(rt, 0, coproc_column_type(h), coproc_column_host_data(h),
                                 coproc_column_length(h), &c[i]);
        if (s == COPROC_OK)
            s = coproc_table_add(t, coproc_table_column_name(d->t, i), c[i]);
    }
    CHECK(s == COPROC_OK, "device columns: %s", coproc_errmsg(rt));
    for (int k = 0; k < 4 && s == COPROC_OK; k++) {
        coproc_mpi_set_map_(m, k < 2); /* mapped in place (host-unified devices), downloaded */
        coproc_mpi_table out;
        coproc_status s2 = coproc_mpi_partition(m, t, COPROC_MPI_HASH, "k", &out);
        CHECK(s2 == COPROC_OK && same_table(out.table, want->table),
              "device columns, call %d (%s): %s: %s", k, k < 2 ? "mapped" : "downloaded",
              coproc_status_name(s2), coproc_mpi_errmsg(m));
        coproc_mpi_table_free(&out);
    }
    coproc_mpi_set_map_(m, 1);
    /* the columns are usable by coproc after a mapping (unmapped) */
    coproc_scalar sum;
    const int32_t *k = coproc_column_host_data(coproc_table_column_at(d->t, 0));
    int64_t want_sum = 0;
    for (size_t i = 0; i < coproc_column_length(c[0]); i++)
        want_sum += k[i];
    s = c[0] ? coproc_reduce(rt, COPROC_REDUCE_SUM, c[0], &sum) : COPROC_NULL_POINTER;
    CHECK(s == COPROC_OK && sum.v.i64 == want_sum, "a device column after the exchanges: %s",
          coproc_errmsg(rt));
    coproc_table_free(t);
    for (int i = 0; i < 3; i++)
        coproc_column_free(c[i]);
}

int main(int argc, char **argv)
{
    mpi_begin(&argc, &argv);
    coproc_mpi *m;
    coproc_status s = mpi_open_quiet(&m);
    if (s != COPROC_OK)
        return open_failed(m, s);
    splitting(m);
    data d;
    make_data(coproc_mpi_runtime(m), &d);
    outcome whole, small;
    coproc_mpi_set_round_(m, COPROC_MPI_ROUND);
    run_all(m, &d, &whole);
    CHECK(whole.pairs > 0 && coproc_table_rows(whole.part[COPROC_MPI_REPLICATE].table) > N,
          "the data make pairs and rows to move");
    device_columns(m, &d, &whole.part[COPROC_MPI_HASH]);
    const uint64_t rounds[2] = {5, 1};
    for (int i = 0; i < 2; i++) {
        coproc_mpi_set_round_(m, rounds[i]);
        run_all(m, &d, &small);
        for (int how = 0; how < 5; how++)
            CHECK(same_table(whole.part[how].table, small.part[how].table),
                  "partition %d: %llu-byte messages give other rows", how,
                  (unsigned long long)rounds[i]);
        for (int e = 0; rank == 0 && e < 2; e++)
            CHECK(same_table(whole.agg[e].table, small.agg[e].table),
                  "aggregate %d: %llu-byte messages give another result", e,
                  (unsigned long long)rounds[i]);
        CHECK(small.pairs == whole.pairs, "join: %llu pairs, %llu in whole messages",
              (unsigned long long)small.pairs, (unsigned long long)whole.pairs);
        outcome_free(&small);
    }
    outcome_free(&whole);
    coproc_table_free(d.t);
    for (int c = 0; c < 3; c++)
        coproc_column_free(d.c[c]);
    coproc_mpi_close(m);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_exchange: %d ranks: %s (%d failures)\n", size, total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
