/* mpi_aggregate.c - coproc_mpi_aggregate under mpirun (tests/mpi_run.sh):
 * every rank holds its block of one synthetic table; each distributed
 * group-by (with and without keys; SUM, COUNT, MIN, MAX, AVG over integers and
 * floats; order-by and limit; ranks without rows; no rows at all) must equal
 * rank 0's one-process run of the same plan over the whole table, columns,
 * types and values. Then one rank groups by a column that does not exist:
 * every rank must return that error, naming the rank, and the next
 * aggregation must work again. coproc_mpi_partition's round-robin, hash and
 * block put every row where they say. Plain MPI program (not cmocka: every rank
 * checks, the exit status says): 0 passed, 1 failed, 77 no OpenCL device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "mpi_check.h"

#define N 20011

/* The table's rows [first, first + n): id, g1 (0..6), g2 (-1..1), v (int32, +-), f (float64). */
typedef struct data {
    int32_t *id, *g1, *v;
    int64_t *g2;
    double *f;
    coproc_column *cols[5];
    coproc_table *t;
} data;

static int make_data(coproc_runtime *rt, uint64_t first, uint64_t n, data *d)
{
    memset(d, 0, sizeof *d);
    d->id = malloc((n + 1) * sizeof *d->id), d->g1 = malloc((n + 1) * sizeof *d->g1);
    d->v = malloc((n + 1) * sizeof *d->v), d->g2 = malloc((n + 1) * sizeof *d->g2);
    d->f = malloc((n + 1) * sizeof *d->f);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = first + i, h = r * 0x9E3779B97F4A7C15ull;
        d->id[i] = (int32_t)r;
        d->g1[i] = (int32_t)(r % 7);
        d->g2[i] = (int64_t)((h >> 40) % 3) - 1;
        d->v[i] = (int32_t)((h >> 33) % 100000) - 50000;
        d->f[i] = 0.5 * (double)((h >> 20) % 1000);
    }
    coproc_status s = coproc_table_create(rt, &d->t);
    const char *names[5] = {"id", "g1", "g2", "v", "f"};
    const void *arrays[5] = {d->id, d->g1, d->g2, d->v, d->f};
    coproc_type types[5] = {COPROC_INT32, COPROC_INT32, COPROC_INT64, COPROC_INT32, COPROC_FLOAT64};
    for (int c = 0; c < 5 && s == COPROC_OK; c++) {
        s = coproc_column_wrap(rt, types[c], arrays[c], n, &d->cols[c]);
        if (s == COPROC_OK)
            s = coproc_table_add(d->t, names[c], d->cols[c]);
    }
    return s == COPROC_OK ? 0 : -1;
}

static void free_data(data *d)
{
    coproc_table_free(d->t);
    for (int c = 0; c < 5; c++)
        coproc_column_free(d->cols[c]);
    free(d->id), free(d->g1), free(d->v), free(d->g2), free(d->f);
}

/* One case: group by keys (nkeys), the aggregates below, rows with id < below. */
typedef struct tcase {
    const char *name;
    int nkeys;
    int norder;
    coproc_order_key order[3];
    uint64_t limit;
    int64_t below; /* filter id < below */
} tcase;

static coproc_node *input(coproc_plan *p, const coproc_table *t, int64_t below)
{
    coproc_node *n = coproc_plan_scan(p, t, "t");
    coproc_expr *pred = coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "id"),
                                            coproc_expr_int(p, below));
    return coproc_plan_filter(p, n, pred);
}

static int make_aggs(coproc_plan *p, coproc_aggregate *a)
{
    a[0] = (coproc_aggregate){COPROC_AGG_SUM, coproc_expr_column(p, "v"), "s"};
    a[1] = (coproc_aggregate){COPROC_AGG_COUNT, NULL, "c"};
    a[2] = (coproc_aggregate){COPROC_AGG_MIN, coproc_expr_column(p, "v"), "mn"};
    a[3] = (coproc_aggregate){COPROC_AGG_MAX, coproc_expr_column(p, "v"), "mx"};
    a[4] = (coproc_aggregate){COPROC_AGG_AVG, coproc_expr_column(p, "v"), "av"};
    a[5] = (coproc_aggregate){COPROC_AGG_SUM, coproc_expr_column(p, "f"), "sf"};
    a[6] = (coproc_aggregate){COPROC_AGG_MIN, coproc_expr_column(p, "f"), "mnf"};
    a[7] = (coproc_aggregate){COPROC_AGG_AVG, coproc_expr_column(p, "f"), "avf"};
    return 8;
}

static const char *const keys[2] = {"g1", "g2"};

/* The same columns, types and values (AVG within 1e-12 relative; NaN equal to NaN). */
static void compare(const char *what, const coproc_table *got, const coproc_table *want)
{
    int nc = coproc_table_column_count(want);
    CHECK(coproc_table_column_count(got) == nc, "%s: %d columns, want %d", what,
          coproc_table_column_count(got), nc);
    CHECK(coproc_table_rows(got) == coproc_table_rows(want), "%s: %zu rows, want %zu", what,
          coproc_table_rows(got), coproc_table_rows(want));
    if (failures)
        return;
    for (int c = 0; c < nc; c++) {
        const coproc_column *a = coproc_table_column_at(got, c),
                            *b = coproc_table_column_at(want, c);
        const char *name = coproc_table_column_name(want, c);
        CHECK(strcmp(coproc_table_column_name(got, c), name) == 0, "%s: column %d %s, want %s",
              what, c, coproc_table_column_name(got, c), name);
        CHECK(coproc_column_type(a) == coproc_column_type(b), "%s: %s of type %s, want %s", what,
              name, coproc_type_name(coproc_column_type(a)),
              coproc_type_name(coproc_column_type(b)));
        if (failures)
            return;
        const void *pa = coproc_column_host_data(a), *pb = coproc_column_host_data(b);
        for (size_t r = 0; r < coproc_table_rows(want); r++) {
            double x, y;
            switch (coproc_column_type(b)) {
            case COPROC_INT32:
                x = ((const int32_t *)pa)[r], y = ((const int32_t *)pb)[r];
                break;
            case COPROC_INT64:
                CHECK(((const int64_t *)pa)[r] == ((const int64_t *)pb)[r],
                      "%s: %s row %zu: %lld, want %lld", what, name, r,
                      (long long)((const int64_t *)pa)[r], (long long)((const int64_t *)pb)[r]);
                continue;
            case COPROC_FLOAT64:
                x = ((const double *)pa)[r], y = ((const double *)pb)[r];
                break;
            default:
                CHECK(0, "%s: %s: unexpected type", what, name);
                return;
            }
            int same = x == y || (isnan(x) && isnan(y)) || fabs(x - y) <= 1e-12 * fabs(y);
            CHECK(same, "%s: %s row %zu: %.17g, want %.17g", what, name, r, x, y);
            if (!same)
                return;
        }
    }
}

static void run_case_ex(coproc_mpi *m, const data *mine, const data *whole, const tcase *tc,
                        coproc_mpi_exchange ex);

/* Each case with both exchanges. */
static void run_case(coproc_mpi *m, const data *mine, const data *whole, const tcase *tc)
{
    run_case_ex(m, mine, whole, tc, COPROC_MPI_GATHER);
    run_case_ex(m, mine, whole, tc, COPROC_MPI_SHUFFLE);
}

static void run_case_ex(coproc_mpi *m, const data *mine, const data *whole, const tcase *tc,
                        coproc_mpi_exchange ex)
{
    char name[128];
    snprintf(name, sizeof name, "%s (%s)", tc->name,
             ex == COPROC_MPI_GATHER ? "gather" : "shuffle");
    coproc_runtime *rt = coproc_mpi_runtime(m);
    coproc_plan *p;
    coproc_plan_create(rt, &p);
    coproc_aggregate aggs[8];
    int naggs = make_aggs(p, aggs);
    coproc_mpi_query q = {.plan = p,
                          .input = input(p, mine->t, tc->below),
                          .nkeys = tc->nkeys,
                          .keys = keys,
                          .naggs = naggs,
                          .aggs = aggs,
                          .norder = tc->norder,
                          .order = tc->order,
                          .limit = tc->limit,
                          .exchange = ex};
    coproc_mpi_result res;
    coproc_status s = coproc_mpi_aggregate(m, &q, &res);
    CHECK(s == COPROC_OK, "%s: %s: %s", name, coproc_status_name(s), coproc_mpi_errmsg(m));
    if (s == COPROC_OK && rank == 0) {
        /* the one-process run of the same plan over the whole table */
        coproc_plan *w;
        coproc_plan_create(rt, &w);
        coproc_aggregate wa[8];
        make_aggs(w, wa);
        coproc_node *n =
            coproc_plan_group_by(w, input(w, whole->t, tc->below), tc->nkeys, keys, naggs, wa);
        /* ties broken by every key ascending, as coproc_mpi_aggregate does */
        coproc_order_key order[5];
        int no = 0;
        for (int i = 0; i < tc->norder; i++)
            order[no++] = tc->order[i];
        for (int k = 0; k < tc->nkeys; k++)
            order[no++] = (coproc_order_key){keys[k], 0, 0};
        if (no)
            n = coproc_plan_order_by(w, n, no, order, tc->limit);
        coproc_query_result r;
        s = coproc_query_run(w, n, NULL, &r);
        CHECK(s == COPROC_OK, "%s: the one-process run: %s", name, coproc_errmsg(rt));
        if (s == COPROC_OK) {
            CHECK(res.table != NULL, "%s: no table on rank 0", name);
            if (res.table)
                compare(name, res.table, r.table);
            coproc_query_result_free(&r);
        }
        coproc_plan_free(w);
    } else if (s == COPROC_OK) {
        CHECK(res.table == NULL, "%s: a table on rank %d", name, rank);
    }
    coproc_mpi_result_free(&res);
    coproc_plan_free(p);
}

/* Rank bad groups by a column that does not exist: every rank returns its error. */
static void failing_rank(coproc_mpi *m, const data *mine, int bad)
{
    coproc_plan *p;
    coproc_plan_create(coproc_mpi_runtime(m), &p);
    coproc_aggregate aggs[8];
    int naggs = make_aggs(p, aggs);
    const char *badkeys[2] = {"g1", "no_such_column"};
    coproc_mpi_query q = {.plan = p,
                          .input = input(p, mine->t, N),
                          .nkeys = 2,
                          .keys = rank == bad ? badkeys : keys,
                          .naggs = naggs,
                          .aggs = aggs};
    coproc_mpi_result res;
    coproc_status s = coproc_mpi_aggregate(m, &q, &res);
    char want[32];
    snprintf(want, sizeof want, "rank %d: ", bad);
    CHECK(s == COPROC_INVALID_ARGUMENT, "failing rank %d: %s (want INVALID_ARGUMENT): %s", bad,
          coproc_status_name(s), coproc_mpi_errmsg(m));
    CHECK(strncmp(coproc_mpi_errmsg(m), want, strlen(want)) == 0 &&
              strstr(coproc_mpi_errmsg(m), "no_such_column"),
          "failing rank %d: message \"%s\"", bad, coproc_mpi_errmsg(m));
    CHECK(res.table == NULL && res.local.table == NULL, "failing rank: a result left");
    coproc_mpi_result_free(&res);
    coproc_plan_free(p);
    /* Shapes that differ between ranks are refused on every rank too. */
    coproc_plan_create(coproc_mpi_runtime(m), &p);
    naggs = make_aggs(p, aggs);
    coproc_mpi_query q2 = {.plan = p,
                           .input = input(p, mine->t, N),
                           .nkeys = 1,
                           .keys = keys,
                           .naggs = rank == bad ? 2 : naggs,
                           .aggs = aggs};
    s = coproc_mpi_aggregate(m, &q2, &res);
    CHECK(s == (size > 1 ? COPROC_INVALID_ARGUMENT : COPROC_OK), "different shapes: %s",
          coproc_status_name(s));
    coproc_mpi_result_free(&res);
    coproc_plan_free(p);
}

/* coproc_mpi_partition: rows dealt by round-robin, hash and block land where they should, none
 * lost; the aggregations over the hashed table still equal one process's. */
static void partitions(coproc_mpi *m, const data *mine, const data *whole, int size)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    data empty;
    CHECK(make_data(rt, 0, 0, &empty) == 0, "empty table");
    /* every rank's block, round-robin: row g (its id) to rank g mod P */
    coproc_mpi_table rr;
    coproc_status s = coproc_mpi_partition(m, mine->t, COPROC_MPI_ROUND_ROBIN, NULL, &rr);
    CHECK(s == COPROC_OK, "round-robin: %s", coproc_mpi_errmsg(m));
    if (s == COPROC_OK) {
        const int32_t *id = coproc_column_host_data(coproc_table_column(rr.table, "id"));
        uint64_t n = coproc_table_rows(rr.table), total = 0;
        for (uint64_t i = 0; i < n; i++)
            CHECK(id[i] % size == rank && (i == 0 || id[i] > id[i - 1]), "round-robin row %d",
                  id[i]);
        MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        CHECK(total == N, "round-robin: %llu rows", (unsigned long long)total);
    }
    coproc_mpi_table_free(&rr);
    /* rank 0's whole table in blocks: the rows coproc_mpi_block gives, in order */
    coproc_mpi_table blk;
    s = coproc_mpi_partition(m, rank == 0 ? whole->t : empty.t, COPROC_MPI_BLOCK, NULL, &blk);
    CHECK(s == COPROC_OK, "block: %s", coproc_mpi_errmsg(m));
    if (s == COPROC_OK) {
        uint64_t first, count;
        coproc_mpi_block(m, N, &first, &count);
        const int32_t *id = coproc_column_host_data(coproc_table_column(blk.table, "id"));
        const double *f = coproc_column_host_data(coproc_table_column(blk.table, "f"));
        CHECK(coproc_table_rows(blk.table) == count, "block: %zu rows, want %llu",
              coproc_table_rows(blk.table), (unsigned long long)count);
        for (uint64_t i = 0; i < count && !failures; i++)
            CHECK(id[i] == (int32_t)(first + i) && f[i] == mine->f[i], "block row %llu",
                  (unsigned long long)i);
    }
    coproc_mpi_table_free(&blk);
    /* rank 0's whole table hashed on g1: each value on one rank; aggregations unchanged */
    coproc_mpi_table h;
    s = coproc_mpi_partition(m, rank == 0 ? whole->t : empty.t, COPROC_MPI_HASH, "g1", &h);
    CHECK(s == COPROC_OK, "hash: %s", coproc_mpi_errmsg(m));
    if (s == COPROC_OK) {
        int here[7] = {0}, ranks[7];
        const int32_t *g1 = coproc_column_host_data(coproc_table_column(h.table, "g1"));
        for (size_t i = 0; i < coproc_table_rows(h.table); i++)
            here[g1[i]] = 1;
        MPI_Allreduce(here, ranks, 7, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int v = 0; v < 7; v++)
            CHECK(ranks[v] == 1, "hash: g1 = %d on %d ranks", v, ranks[v]);
        data hashed = {.t = h.table};
        tcase c = {"keys, over the hashed table", 2, 2, {{"g1", 0, 0}, {"g2", 1, 0}}, 0, N};
        run_case(m, &hashed, whole, &c);
    }
    coproc_mpi_table_free(&h);
    /* errors on every rank: a float hash column; tables that differ */
    s = coproc_mpi_partition(m, mine->t, COPROC_MPI_HASH, "f", &h);
    CHECK(s == COPROC_INVALID_ARGUMENT, "hash on a float: %s", coproc_status_name(s));
    coproc_table *other;
    coproc_table_create(rt, &other);
    coproc_table_add(other, rank == size - 1 ? "other" : "id", mine->cols[0]);
    s = coproc_mpi_partition(m, other, COPROC_MPI_BLOCK, NULL, &h);
    CHECK(s == (size > 1 ? COPROC_INVALID_ARGUMENT : COPROC_OK), "tables that differ: %s",
          coproc_status_name(s));
    coproc_mpi_table_free(&h);
    coproc_table_free(other);
    free_data(&empty);
}

int main(int argc, char **argv)
{
    mpi_begin(&argc, &argv);
    coproc_options o;
    coproc_options_init(&o);
    o.log = quiet_log;
    coproc_mpi *m;
    /* Each rank's share reaches coproc_open as an option over the variable: the
     * environment is read, never changed. */
    const char *env = getenv("COPROC_DEVICES");
    char *env_before = env ? strdup(env) : NULL;
    coproc_status s = coproc_mpi_open(MPI_COMM_WORLD, &o, &m);
    env = getenv("COPROC_DEVICES");
    CHECK((!env && !env_before) || (env && env_before && strcmp(env, env_before) == 0),
          "coproc_mpi_open changed COPROC_DEVICES from %s to %s",
          env_before ? env_before : "(unset)", env ? env : "(unset)");
    free(env_before);
    if (s != COPROC_OK)
        return open_failed(m, s);
    CHECK(coproc_mpi_rank(m) == rank && coproc_mpi_size(m) == size, "rank/size");
    CHECK(coproc_mpi_local_size(m) >= 1 && coproc_mpi_local_rank(m) < coproc_mpi_local_size(m),
          "local rank %d of %d", coproc_mpi_local_rank(m), coproc_mpi_local_size(m));
    /* the block partition covers 0..N once */
    uint64_t first, count, sum = 0;
    coproc_mpi_block(m, N, &first, &count);
    MPI_Allreduce(&count, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == N, "blocks cover %llu rows of %d", (unsigned long long)sum, N);

    coproc_runtime *rt = coproc_mpi_runtime(m);
    data mine, whole;
    memset(&whole, 0, sizeof whole);
    CHECK(make_data(rt, first, count, &mine) == 0, "data: %s", coproc_errmsg(rt));
    if (rank == 0)
        CHECK(make_data(rt, 0, N, &whole) == 0, "whole data: %s", coproc_errmsg(rt));
    int64_t only_rank0 = (int64_t)(N / size / 2); /* rows on rank 0 only: the others have none */
    tcase cases[] = {
        {"keys, ordered", 2, 2, {{"g1", 0, 0}, {"g2", 1, 0}}, 0, N},
        {"no keys", 0, 0, {{0}}, 0, N},
        {"keys, by sum desc, limit 5", 2, 1, {{"s", 1, 0}}, 5, N},
        {"keys, rows on rank 0 only", 2, 1, {{"mn", 0, 0}}, 0, only_rank0},
        {"no keys, rows on rank 0 only", 0, 0, {{0}}, 0, only_rank0},
        {"keys, no rows", 2, 0, {{0}}, 0, -1},
        {"no keys, no rows", 0, 0, {{0}}, 0, -1},
        {"one key, by avg", 1, 1, {{"av", 0, 0}}, 0, N},
    };
    int ok_data = failures == 0, all_ok;
    MPI_Allreduce(&ok_data, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    for (size_t i = 0; all_ok && i < sizeof cases / sizeof *cases; i++)
        run_case(m, &mine, &whole, &cases[i]);
    if (all_ok) {
        failing_rank(m, &mine, size - 1);
        run_case(m, &mine, &whole, &cases[0]); /* works again after an error */
        partitions(m, &mine, &whole, size);
    }
    free_data(&mine);
    if (rank == 0)
        free_data(&whole);
    coproc_mpi_close(m);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_aggregate: %d ranks: %s (%d failures)\n", size, total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
