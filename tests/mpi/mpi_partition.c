/* mpi_partition.c - coproc_mpi_partition under mpirun (tests/mpi_run.sh):
 * RANGE over every integer type (uniform values, all equal, a few values,
 * one value on 70 % of the rows, the type's extremes), with ranks of equal,
 * uneven and no rows, checked on rank 0 against a plain C sort of the whole
 * table: each rank's rows, sorted, are the next piece of the sorted whole
 * (ranges ascending by rank, every row on exactly one rank), each rank's rows
 * in their source order with their payload columns, the ranks' row counts
 * near total / P (exactly, when every rank has at most 1024 rows). Then HASH
 * puts equal values of int32 and int64 columns on the same rank, and the
 * errors (a float column, a column one rank lacks) reach every rank. Plain MPI
 * program: 0 passed, 1 failed, 77 no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "mpi_check.h"

enum { UNIFORM, EQUAL, FEW, SKEW, EXTREMES, NDIST };
static const char *const dist_name[NDIST] = {"uniform", "all equal", "5 values", "70% one value",
                                             "extremes"};
static const coproc_type types[4] = {COPROC_INT32, COPROC_UINT32, COPROC_INT64, COPROC_UINT64};

/* Global row g's value: a signed type's as int64 in *sv, an unsigned one's in *uv. */
static void value(int dist, coproc_type t, uint64_t g, int64_t *sv, uint64_t *uv)
{
    int sgn = t == COPROC_INT32 || t == COPROC_INT64,
        wide = t == COPROC_INT64 || t == COPROC_UINT64;
    uint64_t h = mix(g * 31 + (uint64_t)dist);
    int64_t s = 0;
    uint64_t u = 0;
    switch (dist) {
    case UNIFORM:
        s = wide ? (int64_t)h : (int32_t)(uint32_t)h, u = wide ? h : (uint32_t)h;
        break;
    case EQUAL:
        s = -5, u = 5;
        break;
    case FEW:
        s = (int64_t)(h % 5) - 2, u = h % 5;
        break;
    case SKEW:
        s = h % 10 < 7 ? 42 : (int32_t)(uint32_t)h, u = h % 10 < 7 ? 42 : (uint32_t)h;
        break;
    default: { /* the type's extremes and their neighbours */
        int64_t smin = wide ? INT64_MIN : INT32_MIN, smax = wide ? INT64_MAX : INT32_MAX;
        uint64_t umax = wide ? UINT64_MAX : UINT32_MAX;
        int64_t sv6[6] = {smin, smax, 0, -1, smin + 1, smax - 1};
        uint64_t uv6[6] = {0, umax, 1, umax - 1, 2, umax / 2 + 1};
        s = sv6[h % 6], u = uv6[h % 6];
    }
    }
    *sv = sgn ? s : 0;
    *uv = sgn ? 0 : u;
}

/* The whole table's row g in the reference order: the value, then g. */
typedef struct ref {
    int64_t s;
    uint64_t u, g;
} ref;

static int ref_cmp(const void *pa, const void *pb)
{
    const ref *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->u != b->u)
        return a->u < b->u ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

/* Rows [first, first + n): "k" (type t), "g" (int64, the global row), "f" (float64, g / 2). */
static coproc_table *make_table(coproc_runtime *rt, int dist, coproc_type t, uint64_t first,
                                uint64_t n, coproc_column **cols)
{
    size_t w = coproc_type_size(t);
    coproc_table *tab = NULL;
    coproc_status s = coproc_table_create(rt, &tab);
    if (s == COPROC_OK)
        s = coproc_column_host_alloc(rt, t, n, &cols[0]);
    if (s == COPROC_OK)
        s = coproc_column_host_alloc(rt, COPROC_INT64, n, &cols[1]);
    if (s == COPROC_OK)
        s = coproc_column_host_alloc(rt, COPROC_FLOAT64, n, &cols[2]);
    if (s != COPROC_OK)
        return NULL;
    char *k = coproc_column_host_data(cols[0]);
    int64_t *g = coproc_column_host_data(cols[1]);
    double *f = coproc_column_host_data(cols[2]);
    for (uint64_t i = 0; i < n; i++) {
        int64_t sv;
        uint64_t uv;
        value(dist, t, first + i, &sv, &uv);
        int32_t s32 = (int32_t)sv;
        uint32_t u32 = (uint32_t)uv;
        memcpy(k + i * w,
               t == COPROC_INT32    ? (const void *)&s32
               : t == COPROC_UINT32 ? (const void *)&u32
               : t == COPROC_INT64  ? (const void *)&sv
                                    : (const void *)&uv,
               w);
        g[i] = (int64_t)(first + i);
        f[i] = 0.5 * (double)(first + i);
    }
    coproc_table_add(tab, "k", cols[0]);
    coproc_table_add(tab, "g", cols[1]);
    coproc_table_add(tab, "f", cols[2]);
    return tab;
}

/* How many rows each rank holds. */
enum { SAME, FIRST_ONLY, LAST_ONLY, NONE, UNEVEN, NSIZES };
static const char *const sizes_name[NSIZES] = {"equal shares", "rank 0 only", "last rank only",
                                               "no rows", "rank r: r shares"};

static uint64_t rows_of(int pattern, int r, uint64_t share)
{
    switch (pattern) {
    case SAME:
        return share;
    case FIRST_ONLY:
        return r == 0 ? share * size : 0;
    case LAST_ONLY:
        return r == size - 1 ? share * size : 0;
    case NONE:
        return 0;
    default:
        return share * (uint64_t)r;
    }
}

/* One RANGE partition, checked on rank 0. */
static void range_case(coproc_mpi *m, int dist, coproc_type t, int pattern, uint64_t share)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    uint64_t first = 0, n = rows_of(pattern, rank, share), total = 0;
    for (int r = 0; r < size; r++) {
        if (r < rank)
            first += rows_of(pattern, r, share);
        total += rows_of(pattern, r, share);
    }
    coproc_column *cols[3] = {0};
    coproc_table *in = make_table(rt, dist, t, first, n, cols);
    CHECK(in, "the input table");
    coproc_mpi_table out;
    coproc_status s = coproc_mpi_partition(m, in, COPROC_MPI_RANGE, "k", &out);
    char what[160];
    snprintf(what, sizeof what, "range, %s, %s, %s, %llu a share", coproc_type_name(t),
             dist_name[dist], sizes_name[pattern], (unsigned long long)share);
    CHECK(s == COPROC_OK, "%s: %s: %s", what, coproc_status_name(s), coproc_mpi_errmsg(m));
    if (s != COPROC_OK)
        goto done;
    /* on this rank: the payload belongs to its row, rows in their source order */
    uint64_t got = coproc_table_rows(out.table);
    const char *k = coproc_column_host_data(coproc_table_column(out.table, "k"));
    const int64_t *g = coproc_column_host_data(coproc_table_column(out.table, "g"));
    const double *f = coproc_column_host_data(coproc_table_column(out.table, "f"));
    size_t w = coproc_type_size(t);
    ref *mine = malloc((got ? got : 1) * sizeof *mine);
    for (uint64_t i = 0; i < got; i++) {
        int64_t sv;
        uint64_t uv;
        value(dist, t, (uint64_t)g[i], &sv, &uv);
        const char *p = k + i * w;
        int64_t ks = t == COPROC_INT32   ? *(const int32_t *)p
                     : t == COPROC_INT64 ? *(const int64_t *)p
                                         : 0;
        uint64_t ku = t == COPROC_UINT32   ? *(const uint32_t *)p
                      : t == COPROC_UINT64 ? *(const uint64_t *)p
                                           : 0;
        CHECK(ks == sv && ku == uv && f[i] == 0.5 * (double)g[i] && (i == 0 || g[i] > g[i - 1]),
              "%s: row %llu (global %lld) out of place or its columns differ", what,
              (unsigned long long)i, (long long)g[i]);
        mine[i] = (ref){ks, ku, (uint64_t)g[i]};
        if (failures)
            break;
    }
    qsort(mine, got, sizeof *mine, ref_cmp);
    /* every rank's sorted rows to rank 0, in rank order */
    int bytes = (int)(got * sizeof *mine), *counts = calloc(size, sizeof *counts),
        *displs = calloc(size, sizeof *displs);
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int at = 0;
    for (int r = 0; r < size; r++)
        displs[r] = at, at += counts[r];
    ref *all = rank == 0 ? malloc(at ? (size_t)at : 1) : NULL;
    MPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK((uint64_t)at == total * sizeof *all, "%s: %llu rows out of %llu", what,
              (unsigned long long)(at / sizeof *all), (unsigned long long)total);
        ref *want = malloc((total ? total : 1) * sizeof *want);
        for (uint64_t i = 0; i < total; i++) {
            want[i].g = i;
            value(dist, t, i, &want[i].s, &want[i].u);
        }
        qsort(want, total, sizeof *want, ref_cmp);
        for (uint64_t i = 0; (uint64_t)at == total * sizeof *all && i < total; i++)
            if (ref_cmp(&all[i], &want[i]) != 0) {
                CHECK(0, "%s: sorted row %llu is global row %llu, the C sort says %llu", what,
                      (unsigned long long)i, (unsigned long long)all[i].g,
                      (unsigned long long)want[i].g);
                break;
            }
        /* balance: exact when every rank's rows were all sampled, else within a quarter */
        int exact = 1;
        for (int r = 0; r < size; r++)
            exact = exact && rows_of(pattern, r, share) <= 1024;
        for (int r = 0; r < size; r++) {
            uint64_t c = (uint64_t)counts[r] / sizeof *all;
            uint64_t lo = total * (uint64_t)r / size, hi = total * (uint64_t)(r + 1) / size;
            if (exact)
                CHECK(c == hi - lo, "%s: rank %d got %llu rows, want %llu", what, r,
                      (unsigned long long)c, (unsigned long long)(hi - lo));
            else
                CHECK(c <= (hi - lo) * 5 / 4 + 16, "%s: rank %d got %llu rows of %llu", what, r,
                      (unsigned long long)c, (unsigned long long)total);
        }
        free(want);
    }
    free(all), free(mine), free(counts), free(displs);
done:
    coproc_mpi_table_free(&out);
    coproc_table_free(in);
    for (int c = 0; c < 3; c++)
        coproc_column_free(cols[c]);
}

/* HASH: the same values as int32 and as int64 land on the same rank. */
static void hash_types(coproc_mpi *m)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    enum { V = 1000 };
    uint64_t first, n;
    coproc_mpi_block(m, V, &first, &n);
    coproc_column *c32[3] = {0}, *c64[3] = {0};
    coproc_table *t32 = make_table(rt, UNIFORM, COPROC_INT32, first, n, c32);
    coproc_table *t64 = make_table(rt, UNIFORM, COPROC_INT64, first, n, c64);
    /* the int64 column takes the int32 values */
    int64_t *k64 = coproc_column_host_data(c64[0]);
    const int32_t *k32 = coproc_column_host_data(c32[0]);
    for (uint64_t i = 0; i < n; i++)
        k64[i] = k32[i];
    coproc_mpi_table a, b;
    coproc_status s1 = coproc_mpi_partition(m, t32, COPROC_MPI_HASH, "k", &a);
    coproc_status s2 = coproc_mpi_partition(m, t64, COPROC_MPI_HASH, "k", &b);
    CHECK(s1 == COPROC_OK && s2 == COPROC_OK, "hash: %s", coproc_mpi_errmsg(m));
    if (s1 == COPROC_OK && s2 == COPROC_OK) {
        int where[V], all[V];
        for (int v = 0; v < V; v++)
            where[v] = 0;
        const int64_t *g = coproc_column_host_data(coproc_table_column(a.table, "g"));
        for (size_t i = 0; i < coproc_table_rows(a.table); i++)
            where[g[i]] = rank + 1;
        g = coproc_column_host_data(coproc_table_column(b.table, "g"));
        for (size_t i = 0; i < coproc_table_rows(b.table); i++)
            CHECK(where[g[i]] == rank + 1, "hash: row %lld as int64 here, as int32 elsewhere",
                  (long long)g[i]);
        MPI_Allreduce(where, all, V, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int v = 0; v < V; v++)
            CHECK(all[v] >= 1 && all[v] <= size, "hash: row %d on no rank or several", v);
    }
    coproc_mpi_table_free(&a);
    coproc_mpi_table_free(&b);
    /* errors on every rank: RANGE over a float column, over a column one rank lacks */
    coproc_status s = coproc_mpi_partition(m, t32, COPROC_MPI_RANGE, "f", &a);
    CHECK(s == COPROC_INVALID_ARGUMENT, "range over a float: %s", coproc_status_name(s));
    s = coproc_mpi_partition(m, t32, COPROC_MPI_RANGE, rank == size - 1 ? "nope" : "k", &a);
    CHECK(s == COPROC_INVALID_ARGUMENT && strstr(coproc_mpi_errmsg(m), "nope"),
          "range over a column the last rank lacks: %s: %s", coproc_status_name(s),
          coproc_mpi_errmsg(m));
    s = coproc_mpi_partition(m, t32, (coproc_mpi_partitioning)99, "k", &a);
    CHECK(s == COPROC_INVALID_ARGUMENT, "partitioning 99: %s", coproc_status_name(s));
    coproc_table_free(t32), coproc_table_free(t64);
    for (int c = 0; c < 3; c++)
        coproc_column_free(c32[c]), coproc_column_free(c64[c]);
}

/* REPLICATE: every rank ends with every rank's rows, in rank order; for
 * each row-count pattern, checked on every rank against the rows made here. */
static void replicate_cases(coproc_mpi *m)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    for (int pattern = 0; pattern < NSIZES; pattern++) {
        uint64_t share = 77, first = 0, n = rows_of(pattern, rank, share), total = 0;
        for (int r = 0; r < size; r++) {
            if (r < rank)
                first += rows_of(pattern, r, share);
            total += rows_of(pattern, r, share);
        }
        coproc_column *cols[3] = {0};
        coproc_table *t = make_table(rt, UNIFORM, COPROC_INT32, first, n, cols);
        coproc_mpi_table out;
        coproc_status s = coproc_mpi_partition(m, t, COPROC_MPI_REPLICATE, NULL, &out);
        CHECK(s == COPROC_OK, "replicate (%s): %s", sizes_name[pattern], coproc_mpi_errmsg(m));
        if (s == COPROC_OK) {
            CHECK(coproc_table_rows(out.table) == total, "replicate (%s): %zu rows, want %llu",
                  sizes_name[pattern], coproc_table_rows(out.table), (unsigned long long)total);
            const int64_t *g = coproc_column_host_data(coproc_table_column(out.table, "g"));
            const double *f = coproc_column_host_data(coproc_table_column(out.table, "f"));
            const int32_t *k = coproc_column_host_data(coproc_table_column(out.table, "k"));
            for (uint64_t i = 0; i < total && i < coproc_table_rows(out.table); i++) {
                int64_t sv;
                uint64_t uv;
                value(UNIFORM, COPROC_INT32, i, &sv, &uv);
                CHECK(g[i] == (int64_t)i && f[i] == 0.5 * (double)i && k[i] == (int32_t)sv,
                      "replicate (%s): row %llu", sizes_name[pattern], (unsigned long long)i);
            }
            coproc_mpi_table_free(&out);
        }
        coproc_table_free(t);
        for (int c = 0; c < 3; c++)
            coproc_column_free(cols[c]);
    }
}

int main(int argc, char **argv)
{
    mpi_begin(&argc, &argv);
    coproc_mpi *m;
    coproc_status s = mpi_open_quiet(&m);
    if (s != COPROC_OK)
        return open_failed(m, s);
    int cases = 0;
    const uint64_t shares[2] = {300, 5000}; /* every row sampled; sampled 1 in ~5 to 20 */
    for (int ti = 0; ti < 4; ti++)
        for (int d = 0; d < NDIST; d++)
            for (int p = 0; p < NSIZES; p++)
                for (int si = 0; si < 2; si++, cases++)
                    range_case(m, d, types[ti], p, shares[si]);
    hash_types(m);
    replicate_cases(m);
    coproc_mpi_close(m);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_partition: %d ranks, %d range cases: %s (%d failures)\n", size, cases,
               total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
